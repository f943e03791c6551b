r"""The live runs of a region as one state: a lazily built DFA over run sets, read by char or
by chunk.

In: a region's lazy product DFA (`regions.LazyProductDfa`: one run's step over every watched
delimiter) and its fresh state tuple (the state every run starts in: one start state per
delimiter, as `Heads` delimiters have). Out: `RunSets.step(config, ch)`, the run set after one
char, with what changed for the engine to apply to its runs' starts and match ends; and
`RunSets.read(config, text, candidate)`, the same over a whole chunk (a `Reading`).

A *run set* (a config) is the tuple of (product states, matched) of the live runs, in start
order, after the streaming engine's pruning rule (`surviving`): a run that has
recorded a match drops every later one, a dead run without a match is dropped, and of two runs
without a match in the same states the later one goes. So one char steps every live run, starts a
new run there (while no run has a match: an earlier start always wins) and prunes, whatever the
number of runs, in one dict lookup: `\n```` inside a DeepSeek call keeps three runs alive (each
backtick may start the close), and `<｜tool▁call▁begin｜>` two. Configs are numbered in the order
the text reaches them; `EMPTY` (0) is no run at all. A chunk of up to `CHUNK_MAX` chars read from
a config is remembered with its reading: a server's tokens recur (a call's header, a close tag,
a tool's name), and one read before costs one lookup, not one per char.

Guarantee: stepping a run set is what stepping each run, starting one and pruning do, char by
char, and a reading is those steps over the chunk (tests/test_run_sets.py holds both to the
per-run loop, the differential tests the engine to the reference). Memory is bounded: past
`CONFIG_CAP` configs or `STEP_CAP` remembered steps (text built to reach ever new run sets) the
tables start over, and past `CHUNK_CAP` remembered chunks those are forgotten. A config's number
is only a handle for the next step, valid until the tables start over: the engine keeps its runs'
starts and ends by position in the config, never by number.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from .regions import LazyProductDfa

EMPTY = 0  # the config without runs
# The state of a `regex` fallback delimiter whose attempt is still open (the per-run loop of
# streaming_engine.py): such a run depends on its start, so it is never merged with another.
FALLBACK_PENDING = -1
CONFIG_CAP = 4096  # configs numbered per region before the tables start over
STEP_CAP = 16384  # steps remembered per region before the tables start over
CHUNK_MAX = 64  # the longest chunk whose reading is remembered: about a token's worth
CHUNK_CAP = 4096  # chunk readings remembered per region before they are forgotten

# A run set: per live run in start order, (its product states, whether it has a match).
Config = tuple[tuple[tuple[int, ...], bool], ...]
# What the runs of a config did over a chunk (`RunSets.read`): the config after it, how many of
# its chars were read (all, or up to the one on which a run is decided), and per live run after
# it, where it comes from (an index of the config's runs, or -1 - k for a run started on the
# chunk's char k) and the match ends it recorded, each as (delimiter index, offset from the
# chunk's start; an end k chars before the chunk is -k).
Reading = tuple[int, int, tuple[tuple[int, tuple[tuple[int, int], ...]], ...]]
# What a step changed, or None when the runs are the same ones with nothing recorded and none is
# decided: per run after the step, the index of the run it was (-1: started on this char; the
# whole tuple is None when they are the same runs), and the match ends it reported on this char
# ((delimiter index, k): the match ends k chars before the char stepped, -1 when it includes it).
Change = tuple[tuple[int, ...] | None, tuple[tuple[tuple[int, int], ...], ...]]


def surviving(runs: Iterable[tuple[tuple[int, ...], bool]]) -> list[int]:
    """The indices of the runs, given in start order as (states, matched), that can still matter:
    up to and with the first one that has a match (the first key of `regions.winner`: an earlier
    start always wins), none that is dead, and of two without a match in the same states only the
    earlier (they behave the same from here on), but a pending `regex` attempt always. The one
    pruning rule of both streaming loops (`RunSets.step`, `StreamingEngine._prune`)."""
    kept: list[int] = []
    seen: set[tuple[int, ...]] = set()
    for index, (states, matched) in enumerate(runs):
        if matched:
            kept.append(index)
            break  # an earlier start always wins: later runs can never matter
        if not any(states):
            continue
        if FALLBACK_PENDING in states:
            kept.append(index)  # a regex attempt depends on its start: never merged
        elif states not in seen:
            seen.add(states)
            kept.append(index)
    return kept


class RunSets:
    """The run sets of one region, numbered as the text reaches them (see the module docstring).

    `rows[config]` maps a char to (the next config, its `Change` or None); `decided[config]` is
    whether its first run has a match and every delimiter of it is dead, so the engine commits
    it; `configs[config]` is the run set itself.
    """

    __slots__ = (
        "product",
        "fresh",
        "fresh_at_start",
        "begin",
        "configs",
        "rows",
        "decided",
        "chunks",
        "_ids",
        "_steps",
        "_chunk_count",
        "generation",
    )

    def __init__(
        self,
        product: LazyProductDfa,
        fresh: tuple[int, ...],
        fresh_at_start: tuple[int, ...] | None = None,
    ) -> None:
        self.product = product
        self.fresh = fresh
        # The states a run at buffer position 0 starts in, when they differ from `fresh` (a
        # delimiter only that position lets match, `^`): read from config `begin`, the run set
        # before the first char, whose new run takes them; else None.
        self.fresh_at_start = fresh_at_start
        self.begin: int | None = None
        self.generation = 0
        self._start_over()

    def _start_over(self) -> None:
        self.configs: list[Config] = []
        self.rows: list[dict[str, tuple[int, Change | None]]] = []
        self.decided: list[bool] = []
        self.chunks: list[dict[str, Reading]] = []
        self._ids: dict[Config, int] = {}
        self._steps = 0
        self._chunk_count = 0
        self.generation += 1
        self.number(())
        if self.fresh_at_start is not None:
            # Not numbered by its runs (it has none, as EMPTY): a config of its own.
            self.begin = len(self.configs)
            self.configs.append(())
            self.rows.append({})
            self.chunks.append({})
            self.decided.append(False)

    def number(self, config: Config) -> int:
        """The number of `config`, numbered now when it is new (see the module docstring)."""
        found = self._ids.get(config)
        if found is not None:
            return found
        if len(self.configs) >= CONFIG_CAP:
            self._start_over()
        found = self._ids[config] = len(self.configs)
        self.configs.append(config)
        self.rows.append({})
        self.chunks.append({})
        self.decided.append(bool(config) and config[0][1] and not any(config[0][0]))
        return found

    def step(self, config: int, ch: str) -> tuple[int, Change | None]:
        """The config after `ch` and what changed (see `Change`); remembered in `rows`."""
        generation = self.generation
        runs = self.configs[config]
        product = self.product
        transitions = product.transitions
        stepped: list[tuple[int, tuple[int, ...], bool, tuple]] = []
        for index, (states, matched) in enumerate(runs):
            following, reports = transitions.get((states, ch)) or product.step(states, ch)
            stepped.append((index, following, matched or bool(reports), reports))
        if not any(matched for _, matched in runs):  # a new run starts on this char
            fresh = self.fresh_at_start if config == self.begin else self.fresh
            assert fresh is not None
            following, reports = transitions.get((fresh, ch)) or product.step(fresh, ch)
            stepped.append((-1, following, bool(reports), reports))
        kept = [
            stepped[i] for i in surviving((states, matched) for _, states, matched, _ in stepped)
        ]
        if self._steps >= STEP_CAP:
            self._start_over()
        following_config = self.number(tuple((states, matched) for _, states, matched, _ in kept))
        sources: tuple[int, ...] | None = tuple(index for index, _, _, _ in kept)
        if sources == tuple(range(len(runs))):
            sources = None
        change: Change | None = None
        # A step into a decided config always says so (`read` looks for one only on a change).
        if sources is not None or any(entry[3] for entry in kept) or self.decided[following_config]:
            change = (sources, tuple(entry[3] for entry in kept))
        step = (following_config, change)
        if generation == self.generation:  # (else the tables started over: `config` is gone)
            self.rows[config][ch] = step
            self._steps += 1
        return step

    def read(
        self, config: int, text: str, candidate: Callable[[str, int], int], start: int = 0
    ) -> Reading:
        """The runs of `config` over `text` from `start`, char by char, up to its end or to the
        char on which a run is decided: a `Reading` (offsets count from `text[0]`), remembered
        per config for a chunk of at most `CHUNK_MAX` chars, whole or the end of `text` from
        `start` (a server's tokens come back: a call's header, a close tag). With no run alive,
        `candidate` (the region's finder) skips in C to where one may start. A text read from
        `start` is not copied from there: a chunk of many delimiters is read once, commit after
        commit (only a rest of at most `CHUNK_MAX` chars is sliced off, to be looked up)."""
        if not start:
            remembered = self.chunks[config].get(text)
            if remembered is not None:
                return remembered
        elif len(text) - start <= CHUNK_MAX:
            # A chunk after text the runs hold (a call's header read token by token): its reading
            # from `config` is the chunk's own, remembered as above, moved by `start`.
            found, read, runs = self.read(config, text[start:], candidate)
            return (
                found,
                start + read,
                tuple(
                    (
                        origin if origin >= 0 else origin - start,
                        tuple((k, offset + start) for k, offset in ends),
                    )
                    for origin, ends in runs
                ),
            )
        generation = self.generation
        started = config
        rows, decided = self.rows, self.decided
        # Per live run: where it comes from (an index of `config`'s runs, or -1 - the offset of
        # the char it started on) and the match ends it recorded ({delimiter index: offset}).
        live: list[tuple[int, dict[int, int]]] = [(i, {}) for i in range(len(self.configs[config]))]
        index = start
        length = len(text)
        while index < length:
            if config == EMPTY:
                index = candidate(text, index)
                if index < 0:
                    index = length
                    break
            step = rows[config].get(text[index])
            if step is None:
                step = self.step(config, text[index])
                rows, decided = self.rows, self.decided
            config, change = step
            index += 1
            if change is not None:  # runs started or ended, recorded an end, or are decided
                sources, reports = change
                if sources is not None:
                    live = [live[s] if s >= 0 else (-index, {}) for s in sources]
                for (_, ends), reported in zip(live, reports):
                    for k, offset in reported:
                        ends[k] = index - 1 - offset
                if decided[config]:
                    break
        reading = (
            config,
            index,
            tuple((origin, tuple(ends.items())) for origin, ends in live),
        )
        if not start and length <= CHUNK_MAX and generation == self.generation:
            if self._chunk_count >= CHUNK_CAP:
                for remembered_chunks in self.chunks:
                    remembered_chunks.clear()
                self._chunk_count = 0
            self.chunks[started][text] = reading
            self._chunk_count += 1
        return reading


__all__ = ["EMPTY", "FALLBACK_PENDING", "RunSets", "surviving"]
