r"""The streaming region parser that every generated module subclasses.

In: a region automaton (fields, the watch set of each region, the start anchor) that a generated
module declares as class attributes, then the prefix and text chunks. Out: the reference's events
(`region_open`, `region_chunk`, `region_close`) and, at `finalize`, its message dict.

Events are plain dicts with the reference's keys in the reference's order (`events.py` documents
them as TypedDicts; building them inline keeps `typing` out of the import path).

Guarantee: for every way of splitting the text into chunks, the message and the event stream (with
consecutive `region_chunk`s of one field merged) equal the reference's *one-shot* result: the whole
text fed at once after the prefix. Text is held exactly while a delimiter run that starts at or
before it is still alive, and emitted as soon as every such run is dead.

## How one region is scanned

The parser sits in one region: the implicit field's (or a null sink when the template has none)
or an explicit field's. The region's *watch set* is what the reference's `_watchlist` returns: in
the implicit region every explicit open plus the implicit close; in an explicit region its own
close. A *run* is one anchored attempt of every watched delimiter from one start position; each
character steps every live run. The winner is the reference's `_scan` key: earliest start, then
longest, then open before close, then field name. In run terms:

- Runs are kept in start order. A run that has recorded a match makes every later run irrelevant
  (an earlier start always wins), so later runs are dropped and no new ones start.
- Two runs without a match that sit in the same states behave the same from now on, so only the
  earlier one is kept. That bounds the live runs by the number of state tuples, which keeps the
  time per character constant: `\s*<tool_call>` after a long run of spaces stays linear, where the
  reference's re-search from every space is quadratic.
- The first run is committed when it has a match and none of its delimiters can still change: the
  match start is then the earliest possible and every length at that start is final.
- Text before the first live run can never be part of a delimiter: it goes to the region now.

When the whole text is known and the input has ended (`parse`, behind every `parse_response`),
no run has to wait for input, so each region instead takes one leftmost-first
`Delimiter.search` per watched delimiter, as the reference's one-shot pass does: in C up to each
delimiter's literals, one anchored run from each candidate, the earliest-start winner committed.
The streaming path reaches the same message; the tests hold both to the reference.

Alternatives considered: re-running `regex.search(partial=True)` per chunk (the reference: quadratic
and chunking-dependent), one product DFA per region (faster, but the state tuples would be emitted
for every combination of delimiters), and a Pike VM with per-thread starts (the same bound, more
work per character). Runs over per-delimiter DFAs keep the emitted tables one per delimiter.
"""

from __future__ import annotations

import re
from copy import deepcopy

from .charclass import CharSet
from .coerce import coerce_tool_calls, drop_empty, tool_parameters
from .scan import END_OF_INPUT, MEMO_CAP, Delimiter, class_source, text_end_finder

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

MALFORMED_POLICIES = ("raise", "event")
# What a region's value can raise because of the model's output (bad JSON, a missing key, a wrong
# type). A template error the compiler cannot see (a `content_args` that is not a dict raises
# AttributeError) still raises in lenient mode.
MALFORMED_ERRORS = (ValueError, KeyError, TypeError, IndexError)
_FALLBACK_PENDING = -1  # the state of a fallback (regex) delimiter whose outcome is still open
_UNBUILT = object()  # a region's finders before their first use
_IMMUTABLE = (str, int, float, bool, type(None))
_UNSEARCHED = object()  # a delimiter `_advance_whole` has not searched yet
FAST_BODY_PIECES = 32  # a generated fast path calls `_compact_body` past this many pieces


class Field:
    """What the parser needs to know about one template field."""

    __slots__ = ("name", "open", "close", "repeats", "join", "optional", "dirty", "value")

    def __init__(
        self,
        name: str,
        *,
        open: Delimiter | None = None,
        close: Delimiter | None = None,
        repeats: bool = False,
        join: str | None = None,
        optional: bool = True,
        dirty: bool = False,
        value: Callable[[str, dict[str, str]], Any],
    ) -> None:
        self.name = name
        self.open = open
        self.close = close
        self.repeats = repeats
        self.join = join
        self.optional = optional
        self.dirty = dirty
        self.value = value

    def __repr__(self) -> str:
        return f"Field({self.name!r})"


class Watch:
    """One watched delimiter of a region: which field it opens or closes."""

    __slots__ = ("kind", "field", "delimiter", "priority")

    def __init__(self, kind: str, field: Field, delimiter: Delimiter) -> None:
        self.kind = kind
        self.field = field
        self.delimiter = delimiter
        # Ties at one start and length go to opens before closes, then to the field name.
        self.priority = (0 if kind == "open" else 1, field.name)


class Region:
    """A state of the region automaton: the field text goes to, and the delimiters watched there.

    `field` is None for the null sink (a template without an implicit field drops text outside
    explicit regions). Plain text is skipped in C by a prefilter, built on first use. When every
    watched delimiter has `Heads` (all but a `^`, look-ahead or empty-matching one do), it finds
    their literals, a literal cut off by the end of the text, or lead chars ending it, and a
    candidate is moved back over the lead chars before it: `\\s*<tool_call>` costs nothing in
    prose full of double spaces. Otherwise it is built from `pairs`, which the compiler derived
    from the delimiter DFAs: the (first, second) characters a watched delimiter can start with and
    survive (second None: any), where a last character that fits a first set is a candidate too,
    since the next chunk decides. Without either, every position is a candidate. Both are one
    compiled `re` of fixed-length alternatives, which never backtracks.
    """

    __slots__ = (
        "field",
        "watch",
        "delimiters",
        "prefilter",
        "candidate",
        "fresh",
        "_pairs",
        "keeps_history",
        "has_fallback",
        "name",
        "dirty",
        "_skips",
        "_chains",
        "transitions",
    )

    def __init__(
        self,
        field: Field | None,
        watch: tuple[Watch, ...],
        pairs: tuple[tuple[CharSet, CharSet | None], ...] | None = None,
    ) -> None:
        self.field = field
        self.name = field.name if field is not None else None
        self.dirty = field.dirty if field is not None else False
        self.watch = tuple(sorted(watch, key=lambda w: w.priority))
        self.delimiters = tuple(w.delimiter for w in self.watch)
        self._pairs = pairs if watch else None
        # Built on first use (`build_finders`): `prefilter`, one compiled `re` that finds whether
        # a watched delimiter may start in a text (None: anywhere), and `candidate(text, pos)`,
        # the first position >= pos where one may start (or be cut off by the end of `text`), -1
        # when there is none.
        self.prefilter = _UNBUILT
        self.candidate = self._first_candidate
        self.fresh = None
        self.keeps_history = any(w.delimiter.needs_history for w in watch)
        self.has_fallback = any(w.delimiter.fallback for w in watch)
        self._skips: dict[tuple[tuple[int, ...], bool], Any] = {}
        self._chains: dict[tuple[int, ...], tuple[tuple[str, tuple[int, ...], bool], ...]] = {}
        # The product of the watched DFAs, built lazily: (states, char) -> (next states, end
        # reports as (delimiter index, k) pairs, the end being k characters before the position
        # stepped; -1 for a settled state, whose match includes the character).
        self.transitions: dict[tuple[tuple[int, ...], str], tuple[tuple[int, ...], tuple]] = {}

    def build_finders(self) -> Any:
        """Set `prefilter` and `candidate`: from the delimiters' `Heads` when all of them have
        one, else from the compiler's pairs, else every position. Returns `prefilter`."""
        built = _heads_finders(self.watch)
        # Where a new run starts (Heads delimiters have one start state each), or None.
        self.fresh = tuple(w.delimiter.starts[0] for w in self.watch) if built is not None else None
        if built is None:
            prefilter = _compile_prefilter(self._pairs) if self._pairs is not None else None
            built = (
                prefilter,
                _pairs_finder(prefilter) if prefilter is not None else _every_position,
            )
        self.prefilter, self.candidate = built
        return self.prefilter

    def _first_candidate(self, text: str, pos: int) -> int:
        self.build_finders()
        return self.candidate(text, pos)

    def step(self, states: tuple[int, ...], ch: str) -> tuple[tuple[int, ...], tuple]:
        """One character for every live delimiter of a run; memoised in `transitions`."""
        following = []
        reports = []
        for watch, state in zip(self.watch, states):
            if state > 0:
                delimiter = watch.delimiter
                offset = delimiter.end_offset(state, ch)
                if offset is not None:
                    reports.append((len(following), offset))
                state = delimiter.next_state(state, ch)
                if state in delimiter.settled:
                    reports.append((len(following), -1))
                    state = 0
            following.append(state)
        step = (tuple(following), tuple(reports))
        if len(self.transitions) < MEMO_CAP:
            self.transitions[states, ch] = step
        return step

    def literal_chains(
        self, states: tuple[int, ...]
    ) -> tuple[tuple[str, tuple[int, ...], bool], ...]:
        """The literal stretches ahead of a run in `states`: (chars, states after them, whether
        no new run needs to start inside them), one per live delimiter that sits in a stretch.

        `<|channel|>` while a harmony list and pattern are both alive, then `ommentary` for one
        and `ommentary<|message|>` for the other: stepping every live delimiter over the chars
        gives the returned states, with no match end on the way and some delimiter alive, so text
        that holds the chars may jump there. A run that would start inside the stretch does not
        matter when, over the rest of it, it dies or reaches the same states (the earlier run
        then wins): `spawn_safe`.
        """
        if states in self._chains:
            return self._chains[states]
        chains = []
        # A fallback attempt has no tables to walk, and one may have to start anywhere.
        if not self.has_fallback and all(state >= 0 for state in states):
            seen = set()
            for index, state in enumerate(states):
                found = self.watch[index].delimiter.literal_chain(state) if state else None
                if found is None:
                    continue
                literal, after = self._walk(states, found[0])
                if len(literal) >= 2 and literal not in seen:
                    seen.add(literal)
                    chains.append((literal, after, self._spawn_safe(literal, after)))
        chains = tuple(chains)
        self._chains[states] = chains
        return chains

    def _walk(self, states: tuple[int, ...], chars: str) -> tuple[str, tuple[int, ...]]:
        """The longest prefix of `chars` a run in `states` steps with no match end and some
        delimiter alive, and the states after it."""
        taken = 0
        for ch in chars:
            following, reports = self.transitions.get((states, ch)) or self.step(states, ch)
            if reports or not any(following):
                break
            states = following
            taken += 1
        return chars[:taken], states

    def _spawn_safe(self, literal: str, after: tuple[int, ...]) -> bool:
        delimiters = [w.delimiter for w in self.watch]
        if any(len(set(d.starts)) != 1 for d in delimiters):
            return False  # the start state depends on the char before (\b, ^)
        fresh = tuple(d.starts[0] for d in delimiters)
        for offset in range(len(literal)):
            states = fresh
            for ch in literal[offset:]:
                states, reports = self.transitions.get((states, ch)) or self.step(states, ch)
                if reports:
                    return False
                if not any(states):
                    break
            else:
                if states != after:
                    return False
        return True

    def skip_pattern(self, states: tuple[int, ...], spawning: bool) -> Any:
        """Where a lone run in `states` can next change: a compiled class of the characters that
        are not silent self-loops of every live delimiter, or None when nothing can be skipped.

        `\\s*<tool_call>` after a long run of spaces sits in its start state; each space leaves
        the run where it is and reports nothing, and a run started on a space (`spawning`) would
        either die at once or land in the same states, so all of them are skipped in C. The
        prefilter's pairs cannot do this: two spaces in a row are a candidate pair.
        """
        key = (states, spawning)
        if key in self._skips:
            return self._skips[key]
        pattern = None
        if self.has_fallback:
            self._skips[key] = None  # a `regex` attempt has no tables to read silence from
            return None
        delimiters = [w.delimiter for w in self.watch]
        prefilter = self.prefilter if self.prefilter is not _UNBUILT else self.build_finders()
        if not spawning or (
            prefilter is not None and all(len(set(d.starts)) == 1 for d in delimiters)
        ):
            stay = ~CharSet()
            for delimiter, state in zip(delimiters, states):
                if state:
                    stay = stay & _silent_to(delimiter, state, state)
            if spawning:
                fresh_same = ~CharSet()
                fresh_dead = ~CharSet()
                for delimiter, state in zip(delimiters, states):
                    start = delimiter.starts[0]
                    fresh_same = fresh_same & _silent_to(delimiter, start, state)
                    fresh_dead = fresh_dead & _silent_to(delimiter, start, 0)
                stay = stay & (fresh_same | fresh_dead)
            if stay.deferred or stay:
                pattern = re.compile(class_source(~stay))
        self._skips[key] = pattern
        return pattern


def _silent_to(delimiter: Delimiter, state: int, target: int) -> CharSet:
    """The characters on which `state` goes to `target` without reporting a match end."""
    report = delimiter.ends.get(state)
    if isinstance(report, int):
        return CharSet()
    found = CharSet()
    row = delimiter.rows[state]
    for class_id, charset in enumerate(delimiter.classes, 1):
        if row.get(class_id, 0) == target and not (report and class_id in report):
            found = found | charset
    return found


def _heads_finders(watch: tuple[Watch, ...]) -> tuple[Any, Callable[[str, int], int]] | None:
    """A region's prefilter and candidate finder from its delimiters' `Heads` (see
    `scan.text_end_finder`), or None when one of them has none."""
    heads = [w.delimiter.heads for w in watch]
    if not heads or None in heads:
        return None
    return text_end_finder(heads)


def _pairs_finder(prefilter: Any) -> Callable[[str, int], int]:
    search = prefilter.search

    def candidate(text: str, pos: int) -> int:
        found = search(text, pos)
        return found.start() if found is not None else -1

    return candidate


def _every_position(text: str, pos: int) -> int:
    return pos if pos < len(text) else -1


def _compile_prefilter(pairs: tuple[tuple[CharSet, CharSet | None], ...]) -> Any:
    alternatives = []
    last = CharSet()
    for first, second in pairs:
        alternatives.append(class_source(first) + ("" if second is None else class_source(second)))
        last = last | first
    alternatives.append(class_source(last) + r"\Z")
    return re.compile("|".join(alternatives))


class _Shape:
    """What `RegionParser` derives from the class attributes of a generated module."""

    __slots__ = ("flat_defaults", "keep_history", "context_dependent")

    def __init__(self, parser: type[RegionParser]) -> None:
        defaults = parser.template.get("defaults", {})
        self.flat_defaults = all(type(value) in _IMMUTABLE for value in defaults.values())
        self.keep_history = any(r.keeps_history for r in (parser.home, *parser.regions.values()))
        delimiters = [d for f in parser.fields for d in (f.open, f.close) if d is not None]
        self.context_dependent = any(len(set(d.starts)) != 1 for d in delimiters)


class _Run:
    """One anchored attempt of every watched delimiter from `start`."""

    __slots__ = ("start", "states", "ends", "matched")

    def __init__(self, start: int, states: list[int], ends: list[int], matched: bool) -> None:
        self.start = start
        self.states = states
        self.ends = ends
        self.matched = matched


class RegionParser:
    """The reference's `ResponseParser` protocol; a generated module sets the class attributes.

    `feed` here is the general path. A generated `ResponseParser` may override it with a fast
    path (compiler/fast_path.py decides what it may take) that reads and writes only this hook:

    - `_idle`: the field of the current region while nothing is held (no run, no text waiting),
      the region is open (its `region_open` was sent) and the parser can take text; else None.
      The general path sets it on the way out of `__init__`, `feed` and `_commit_whole`.
    - A chunk the fast path takes goes to the region: appended to `_body` (then
      `_compact_body()` once it has more than `FAST_BODY_PIECES` pieces), and that is all. The
      positions and `_before` lag until the general path next runs and catches up
      (`_catch_up`: the body has grown past `_idle_body`, its length when `_idle` was set).
    - `_commit_whole(index, text)`: `text`, with nothing held, is exactly a match of watched
      delimiter `index` (in `Region.watch` order) that the general path would commit at once.
    """

    template: dict
    start_anchor: Delimiter
    fields: tuple[Field, ...]
    home: Region  # the implicit field's region, or the null sink
    regions: dict[str, Region]  # explicit field name -> its region

    def __init__(
        self,
        prefix: str | None = None,
        *,
        tools: list | None = None,
        malformed: str = "raise",
        captures: bool = False,
    ) -> None:
        if malformed not in MALFORMED_POLICIES:
            raise ValueError(f"malformed must be one of {MALFORMED_POLICIES}, got {malformed!r}")
        # "event" is the lenient mode (an extension; the default is the reference's "raise"): a
        # structured region whose value does not parse becomes a `region_malformed` event.
        self._malformed_event = malformed == "event"
        # `captures=True` (an extension, as transformers' main branch): region_open events carry
        # the open's named groups, so a client can use a call's name before its region closes.
        self._event_captures = captures
        if prefix is None:
            raise ValueError(
                "ResponseParser/parse_response requires `prefix`: the chat prompt sent to the model "
                "before generation. Chat templates often pre-write part of the assistant message "
                "(an opening <think>, say) that the parser must see. If the text already holds the "
                'whole message, pass prefix="" to opt out explicitly.'
            )
        self._tool_params = tool_parameters(tools)
        shape = self._shape()
        defaults = self.template.get("defaults", {})
        # {"role": "assistant"} needs no deepcopy.
        self._output: dict[str, Any] = dict(defaults) if shape.flat_defaults else deepcopy(defaults)
        # The text not yet routed: `_text[0]` is absolute position `_base`; positions count from the
        # start of the truncated prefix, which is where the reference's buffer starts (so `^` and
        # `\A` match there).
        self._text = ""
        # Chunks received after `_text`, not yet joined: while a run holds text (a long run of
        # spaces before `\s*<tool_call>`, say) the held text grows by appending here, and it is
        # joined once, when it is routed or a delimiter is committed, never once per chunk.
        self._tail: list[str] = []
        self._end = 0  # absolute end of the text received so far
        self._base = 0
        self._pos = 0  # everything before `_pos` is routed to a region or consumed as a delimiter
        self._before = ""  # the character just before `_base` (for `\b`), "" at the start
        self._scan = 0  # the next position to step
        self._runs: list[_Run] = []
        self._attempted_at = -2  # where `_spawn` last attempted every delimiter (see `_spawn`)
        # (run start, delimiter index) -> how far a pending fallback attempt is lead chars only.
        self._lead_checked: dict[tuple[int, int], int] = {}
        self._region = self.home
        self._opened = False
        self._body: list[str] = []
        self._captures: dict[str, str] = {}
        self._finalized = False
        # After a zero-width close of an empty region the reference stops reading (its `_process`
        # breaks out for good), so the rest of the text never reaches the message. Copied on purpose.
        self._stopped = False
        self._zero_width_close_at = -1
        self._keep_history = shape.keep_history
        self._idle: str | None = None  # see the class docstring
        self._idle_body = 0
        self.initial_events: list[dict] = []
        if prefix:
            cut = self.start_anchor.last_match_end(prefix)
            if cut is None:
                import logging  # only on this rare path: importing logging is not free

                logging.getLogger("chatparse").info(
                    "start anchor %s not found in the prefix; parsing the whole prefix",
                    self.start_anchor.source,
                )
                cut = 0
            if cut < len(prefix):
                self._text = prefix[cut:]
                self._end = len(self._text)
                self._advance_prefix(self.initial_events)
        self._set_idle()

    # --- the public protocol ---------------------------------------------------------------------

    def feed(self, text: str) -> list[dict]:
        if self._idle is not None:
            self._catch_up()
        events = self._feed(text)
        self._set_idle()
        return events

    # --- the hook of a generated fast path (see the class docstring) ------------------------------

    def _set_idle(self) -> None:
        self._idle = (
            self._region.name
            if self._opened
            and not self._runs
            and not self._tail
            and not self._text
            and self._pos == self._end
            and not self._keep_history
            and not self._stopped
            and not self._finalized
            else None
        )
        if self._idle is not None:
            self._idle_body = sum(map(len, self._body))

    def _catch_up(self) -> None:
        """Bring the positions up to the chunks the fast path took (it grows the body only)."""
        taken = sum(map(len, self._body)) - self._idle_body
        if taken:
            self._end += taken
            self._pos = self._base = self._scan = self._end
            self._before = self._body[-1][-1]

    def _compact_body(self) -> None:
        """Merge the fast path's newest pieces of `_body` into one, as `_add_to_body` would."""
        body = self._body
        newest = "".join(body[-FAST_BODY_PIECES // 2 :])
        del body[-FAST_BODY_PIECES // 2 :]
        self._add_to_body(newest)

    def _commit_whole(self, index: int, text: str) -> list[dict]:
        self._catch_up()
        start = self._end
        self._tail.append(text)
        self._end = start + len(text)
        events: list[dict] = []
        if self._commit_match(events, self._region.watch[index], start, self._end):
            self._stopped = True
        self._set_idle()
        return events

    # --- the general path ------------------------------------------------------------------------

    def _feed(self, text: str) -> list[dict]:
        if self._finalized:
            raise RuntimeError("ResponseParser already finalized")
        if not text or self._stopped:
            return []
        region = self._region
        if not self._runs and not self._text and not self._tail and not self._keep_history:
            # Nothing is held: if no watched delimiter can start in this chunk, all of it goes to
            # the region at once (the common case while a model writes prose).
            prefilter = region.prefilter
            if prefilter is _UNBUILT:
                prefilter = region.build_finders()
            found = prefilter.search(text) if prefilter is not None and region.watch else None
            if found is not None and region.fresh is not None:
                # Often the only place a delimiter may start is the spaces that end the chunk
                # (`\s*<tool_call>`): route what is before them and hold them in one run.
                held = self._hold_trailing_run(region, text)
                if held is not None:
                    return held
            if not region.watch or (prefilter is not None and found is None):
                end = self._pos + len(text)
                self._pos = self._base = self._scan = self._end = end
                self._before = text[-1]
                name = region.name
                if name is None:
                    return []
                self._add_to_body(text)
                chunk = {"type": "region_chunk", "field": name, "text": text, "dirty": region.dirty}
                if self._opened:
                    return [chunk]
                self._opened = True
                return [{"type": "region_open", "field": name}, chunk]
        runs = self._runs
        if len(runs) == 1 and not runs[0].matched and not self._keep_history:
            # One run holds the end of the last chunk (spaces that `\s*<tool_call>` may still
            # use). If this chunk's first char ends it without a match and no delimiter can start
            # in the chunk, the held text and the chunk both go to the region: what stepping
            # would do, without stepping.
            step = region.transitions.get((runs[0].states, text[0]))
            if step is not None and not step[1] and not any(step[0]):
                prefilter = region.prefilter
                if (
                    prefilter is not None
                    and prefilter is not _UNBUILT
                    and prefilter.search(text) is None
                ):
                    self._runs = []
                    self._tail.append(text)
                    self._end += len(text)
                    self._scan = self._end
                    events = []
                    self._route(events, self._end)
                    return events
        events = []
        self._tail.append(text)
        self._end += len(text)
        self._advance(events, eos=False)
        return events

    def _hold_trailing_run(self, region: Region, text: str) -> list[dict] | None:
        """With nothing held, when the first candidate in `text` starts a run that reads to its end
        (with every later start merging into it or dying at once, as `_prune` would have it),
        route the text before it and hold the rest in that run: what `_advance` does, from the
        memoised transitions alone. None when a step is not memoised yet or anything else happens
        (a match end, a second run), and `_advance` does it."""
        start = region.candidate(text, 0)
        if start < 0:
            return None
        transitions = region.transitions
        fresh = region.fresh
        states = fresh
        for offset, ch in enumerate(text[start:]):
            step = transitions.get((states, ch))
            if step is None or step[1] or not any(step[0]):
                return None
            if offset:  # a run started here too: it must die at once or merge
                spawned = transitions.get((fresh, ch))
                if spawned is None or spawned[1] or (any(spawned[0]) and spawned[0] != step[0]):
                    return None
            states = step[0]
        self._tail.append(text)
        self._end += len(text)
        events: list[dict] = []
        self._route(events, self._pos + start)
        self._runs = [_Run(self._pos, states, [-1] * len(states), False)]
        self._scan = self._end
        return events

    def finalize(self) -> tuple[dict, list[dict]]:
        return self._finish(whole=False)

    def _finish(self, whole: bool) -> tuple[dict, list[dict]]:
        if self._finalized:
            raise RuntimeError("ResponseParser already finalized")
        if self._idle is not None:
            self._catch_up()
            self._idle = None
        events: list[dict] = []
        if whole:
            self._advance_whole(None)  # `parse` returns the message only: build no events
        else:
            self._advance(events, eos=True)
        missing = [f.name for f in self.fields if not f.optional and f.name not in self._output]
        if missing:
            raise ValueError(
                f"Required response_template fields missing from parsed output: {missing}"
            )
        self._output = drop_empty(self._output, self.template.get("defaults", {}))
        self._finalized = True
        return self._output, events

    @classmethod
    def parse(
        cls,
        text: str,
        *,
        prefix: str | None = None,
        tools: list | None = None,
        malformed: str = "raise",
    ) -> dict:
        parser = cls(prefix, tools=tools, malformed=malformed)
        parser._idle = None  # no fast path ran: `_finish` must not catch up
        if text and not parser._stopped:
            parser._tail.append(text)
            parser._end += len(text)
        message, _ = parser._finish(whole=True)
        return message

    # --- the prefix: the reference's edge rule ---------------------------------------------------------

    def _advance_prefix(self, events: list[dict]) -> None:
        """Process the truncated prefix exactly as the reference does, edge included.

        The end of the prefix is a chunk boundary the reference cannot avoid, and there its
        partial-match search decides: per delimiter, a complete match anywhere (the input treated
        as ended) beats a partial one that starts earlier, and a complete match at the edge is
        held only if it could grow (`ResponseParser._can_grow`: a regex or an extendable literal
        list). Reproducing that here makes `initial_events` and the message equal the reference's
        `parse_response(text, prefix=...)`; from the first held position on, the ordinary run
        scanner continues, which gives the one-shot result for the text that follows.
        """
        text = self._text  # the whole truncated prefix; positions are absolute here (base 0)
        length = len(text)
        # Each delimiter's last answers, as in `_advance_whole`: a search result (and the leftmost
        # pending start, when there is no match) stays the answer while it is at or after `_pos`,
        # and "none" stays the answer for good. So a prefix of many commits (closes of a
        # repeating field) searches each delimiter again only when a commit passed its answer.
        found_at: dict[Delimiter, tuple[int, int] | None] = {}
        pending_at: dict[Delimiter, int | None] = {}
        keep_history = self._keep_history
        self._keep_history = True  # route and consume move `_pos` only: no slicing per commit
        try:
            while True:
                best = None
                best_key = None
                hold = length
                position = self._pos
                for watch in self._region.watch:
                    delimiter = watch.delimiter
                    found = found_at.get(delimiter, _UNSEARCHED)
                    if found is _UNSEARCHED or (found is not None and found[0] < position):
                        found = found_at[delimiter] = delimiter.search(text, position)
                    if found is None:
                        pending = pending_at.get(delimiter, _UNSEARCHED)
                        if pending is _UNSEARCHED or (pending is not None and pending < position):
                            pending = delimiter.leftmost_pending(text, position)
                            pending_at[delimiter] = pending
                        if pending is not None:
                            hold = min(hold, pending)
                        continue
                    start, end = found
                    if end == length and (start == end or delimiter.grows_at_edge):
                        hold = min(hold, start)
                        continue
                    key = (start, start - end, watch.priority)
                    if best_key is None or key < best_key:
                        best, best_key = (watch, start, end), key
                if best is None or best[1] >= hold:
                    self._route(events, hold)
                    break
                watch, start, end = best
                if self._commit_match(events, watch, start, end):
                    break  # the reference's `_process` stops here; the next feed scans again
        finally:
            self._keep_history = keep_history
        if not keep_history and self._pos > self._base:
            self._before = text[self._pos - 1]
            self._text = text[self._pos :]
            self._base = self._pos
        self._scan = self._pos
        self._runs = []
        self._attempted_at = -2

    # --- the whole text at once ---------------------------------------------------------------------

    def _advance_whole(self, events: list[dict] | None) -> None:
        """Read the rest of the text when all of it is here and the input has ended (`parse`).

        No run needs to wait for more input, so each region's next delimiter is found as the
        reference's one-shot pass finds it: one leftmost-first search per watched delimiter over
        the whole text, the winner by (earliest start, longest, priority). Searches run in C up to
        a delimiter's literal (`scan.Heads`), and a search result stays valid until the text
        before its start is consumed, so a delimiter that is not in the text is searched once.
        The streaming path reaches the same message; the differential tests hold both to it.
        """
        text = self._joined()
        offset = self._base  # absolute position of text[0]
        if offset and self._before and self._shape().context_dependent:
            # Searches must see the char before `_base` (`\b`, `^`): one copy, then positions
            # are shifted by the extra char. A search never starts at that char.
            text = self._before + text
            offset -= 1
        keep_history = self._keep_history
        self._keep_history = True  # route and consume move `_pos` only: no slicing per commit
        # Each delimiter's last search result. `_pos` only grows, so a span stays the answer while
        # it starts at or after `_pos`, and "none" stays the answer for good.
        found: dict[Delimiter, tuple[int, int] | None] = {}
        try:
            while not self._stopped:
                position = self._pos
                best = None
                best_start = best_length = 0
                for watch in self._region.watch:  # in priority order: ties keep the first
                    delimiter = watch.delimiter
                    span = found.get(delimiter, _UNSEARCHED)
                    if span is _UNSEARCHED or (span is not None and span[0] < position):
                        span = delimiter.search(text, position - offset)
                        if span is not None and offset:
                            span = (span[0] + offset, span[1] + offset)
                        found[delimiter] = span
                    if span is None or span[0] == self._end:
                        continue  # the reference commits no match at the end of its buffer
                    start = span[0]
                    length = span[1] - start
                    if (
                        best is None
                        or start < best_start
                        or (start == best_start and length > best_length)
                    ):
                        best, best_start, best_length = watch, start, length
                if best is None:
                    self._route(events, self._end)
                    self._close_current(events)
                    break
                if self._commit_match(events, best, best_start, best_start + best_length):
                    self._stopped = True
        finally:
            self._keep_history = keep_history
        self._text = ""
        self._tail = []

    @classmethod
    def _shape(cls) -> _Shape:
        """Facts about the template every parser of it needs, worked out once per class."""
        shape = cls.__dict__.get("_shape_of_template")
        if shape is None:
            shape = cls._shape_of_template = _Shape(cls)
        return shape

    # --- scanning ----------------------------------------------------------------------------------

    def _advance(self, events: list[dict], eos: bool) -> None:
        """Step every live run over the unread text; commit, route and hold as the runs decide."""
        while not self._stopped:
            winner = self._step_to_end(eos)
            if winner is not None:
                self._commit(events, winner)
                continue
            if eos:
                self._route(events, self._end)
                self._close_current(events)
                return
            hold = self._runs[0].start if self._runs else self._end
            self._route(events, hold)
            return
        if eos:
            self._text = ""
            self._tail = []

    def _step_to_end(self, eos: bool) -> _Run | None:
        """Step runs up to the end of the known text (and EOI when `eos`); return a decided winner."""
        region = self._region
        watch = region.watch
        delimiters = region.delimiters
        runs = self._runs
        scan = self._scan
        end = self._end
        tail = self._tail
        if tail and scan >= end - len(tail[-1]) and not self._keep_history:
            # Everything before the newest chunk has been stepped already: scan just that chunk.
            text = tail[-1]
            base = end - len(text)
            before = (
                tail[-2][-1] if len(tail) > 1 else self._text[-1] if self._text else self._before
            )
        else:
            text = self._joined()
            base = self._base
            before = self._before
        candidate = region.candidate
        fresh = region.fresh
        transitions = region.transitions
        dead = (0,) * len(watch)
        next_candidate = (
            -1
        )  # the next position the prefilter accepts (spawning anywhere else is futile)
        while scan < end:
            if not runs:
                if not watch:
                    scan = end
                    break
                found = candidate(text, scan - base)
                if found < 0:
                    scan = end
                    break
                scan = base + found
            elif len(runs) == 1 and not self._keep_history:
                skip = region.skip_pattern(runs[0].states, not runs[0].matched)
                if skip is not None:
                    found = skip.search(text, scan - base)
                    if found is None:
                        scan = end
                        break
                    scan = base + found.start()
                jumped = False
                for literal, after, spawn_safe in region.literal_chains(runs[0].states):
                    if not text.startswith(literal, scan - base):
                        continue
                    # A literal stretch the text holds: jump over it, unless a new run would
                    # have to start inside it.
                    stretch_end = scan + len(literal)
                    if not (runs[0].matched or spawn_safe):
                        if next_candidate < scan:
                            found = candidate(text, scan - base)
                            next_candidate = base + found if found >= 0 else end
                        if next_candidate < stretch_end:
                            break
                    runs[0].states = after
                    scan = stretch_end
                    jumped = True
                    break
                if jumped:
                    continue
            ch = text[scan - base]
            if not (runs and runs[-1].matched):
                if next_candidate < scan:
                    found = candidate(text, scan - base)
                    next_candidate = base + found if found >= 0 else end
                if next_candidate == scan:
                    if fresh is not None:  # one start state per delimiter, none of them a match
                        runs.append(_Run(scan, fresh, [-1] * len(fresh), False))
                    else:
                        self._spawn(runs, delimiters, scan, text, base, before, eos)
            for run in runs:
                step = transitions.get((run.states, ch))
                if step is None:
                    step = region.step(run.states, ch)
                run.states, reports = step
                if reports:
                    ends = run.ends
                    for k, offset in reports:
                        ends[k] = scan - offset
                    run.matched = True
            scan += 1
            if len(runs) == 1:  # the common case, without building a new list
                if runs[0].states == dead:
                    if not runs[0].matched:
                        runs = []
                    else:
                        self._runs = runs
                        self._scan = scan
                        return runs[0]
                continue
            runs = self._prune(runs)
            if runs and runs[0].matched and self._is_decided(runs[0]):
                self._runs = runs
                self._scan = scan
                return runs[0]
        self._scan = scan
        if any(state == _FALLBACK_PENDING for run in runs for state in run.states):
            self._settle_fallbacks(runs, delimiters, eos, text, base)
            runs = self._prune(runs)
        if eos:
            # No run starts at the end of the input: the reference never commits a match that
            # starts at the end of its buffer (an empty open there opens nothing).
            for run in runs:
                for k, state in enumerate(run.states):
                    if state > 0:
                        offset = delimiters[k].end_offset(state, END_OF_INPUT)
                        if offset is not None:
                            run.ends[k] = end - offset
                            run.matched = True
                run.states = (0,) * len(run.states)
            runs = self._prune(runs)
        self._runs = runs
        if runs and runs[0].matched and self._is_decided(runs[0]):
            return runs[0]
        return None

    def _spawn(self, runs, delimiters, position, text, base, before, eos) -> None:
        prev = text[position - base - 1] if position > base else before
        at_begin = position == 0
        states = []
        ends = []
        matched = False
        # A fallback attempt that follows an attempt on a lead char is decided by it (`lead`).
        follows_attempt = self._attempted_at == position - 1
        self._attempted_at = position
        for delimiter in delimiters:
            if delimiter.fallback:
                if follows_attempt and delimiter.dominated_after(prev):
                    states.append(0)
                    ends.append(-1)
                    continue
                outcome, end = self._attempt(delimiter, position, eos)
                if outcome == "match":
                    states.append(0)
                    ends.append(end)
                    matched = True
                else:
                    states.append(_FALLBACK_PENDING if outcome == "pending" else 0)
                    ends.append(-1)
                continue
            state = delimiter.start_state(at_begin, prev)
            if state in delimiter.settled:
                ends.append(position)
                matched = True
                state = 0
            else:
                ends.append(-1)
            states.append(state)
        if matched or any(states):
            runs.append(_Run(position, tuple(states), ends, matched))

    def _settle_fallbacks(self, runs, delimiters, eos, text, base) -> None:
        """Ask `regex` again about the runs' pending fallback attempts, in start order, up to the
        first run that stays pending: while it is, no later run can be committed or change what
        is held, so asking about them on every chunk would only repeat work."""
        for run in runs:
            states = list(run.states)
            for k, state in enumerate(states):
                if state == _FALLBACK_PENDING:
                    delimiter = delimiters[k]
                    key = (run.start, k)
                    if not eos and self._lead_only(delimiter, key, text, base):
                        continue  # lead chars only from the start to the end: pending (`lead`)
                    outcome, end = self._attempt(delimiter, run.start, eos)
                    if outcome != "pending":
                        self._lead_checked.pop(key, None)
                    if outcome == "match":
                        run.ends[k] = end
                        run.matched = True
                    if outcome != "pending":
                        states[k] = 0
            run.states = tuple(states)
            if _FALLBACK_PENDING in run.states:
                return

    def _lead_only(self, delimiter: Delimiter, key: tuple[int, int], text: str, base: int) -> bool:
        """Whether the text from the start of a pending fallback attempt to the end is lead chars
        only (`Delimiter.lead_run_end`). How far that is known is kept (-1: a char that is not
        lead came), so each char is looked at once; `text` from absolute `base` is what was
        just stepped and ends the text received."""
        checked = self._lead_checked.get(key, key[0])
        if checked < 0 or not delimiter.waits_on_lead:
            return False
        if checked < base:
            text, base = self._joined(), self._base
        found = delimiter.lead_run_end(text, checked - base)
        if found < 0:
            return False
        lead_only = found == len(text)
        self._lead_checked[key] = found + base if lead_only else -1
        return lead_only

    def _attempt(self, delimiter: Delimiter, start: int, eos: bool) -> tuple[str, int]:
        """One `regex` attempt of a fallback delimiter at absolute `start`, over the text held
        and the char before it (all of the output when the delimiter `needs_history`); the end
        of a match is absolute."""
        text = self._joined()
        offset = self._base
        if offset and start == offset:
            text = self._before + text  # `\b` and `^` see the char before the attempt
            offset -= 1
        outcome, end = delimiter.match_at(text, start - offset, final=eos)
        return outcome, end + offset if outcome == "match" else end

    @staticmethod
    def _prune(runs: list[_Run]) -> list[_Run]:
        kept: list[_Run] = []
        seen: set[tuple[int, ...]] = set()
        for run in runs:
            if run.matched:
                kept.append(run)
                break  # an earlier start always wins: later runs can never matter
            if not any(run.states):
                continue
            if _FALLBACK_PENDING in run.states:
                kept.append(run)  # a regex attempt depends on its start: never merged
                continue
            key = run.states
            if key not in seen:
                seen.add(key)
                kept.append(run)
        return kept

    @staticmethod
    def _is_decided(run: _Run) -> bool:
        return not any(run.states)

    # --- committing a delimiter -------------------------------------------------------------------

    def _commit(self, events: list[dict], run: _Run) -> None:
        watch = self._region.watch
        best = -1
        best_length = -1
        for k, end in enumerate(run.ends):
            if end >= 0 and end - run.start > best_length:
                best, best_length = k, end - run.start
        if self._commit_match(events, watch[best], run.start, run.ends[best]):
            self._stopped = True

    def _commit_match(self, events: list[dict] | None, chosen: Watch, start: int, end: int) -> bool:
        """Route the text before the match, then open or close. True when the reference would stop
        reading here: a zero-width close of a region that received nothing."""
        self._route(events, start)
        captures = (
            self._read_captures(chosen.delimiter, start, end) if chosen.delimiter.has_groups else {}
        )
        self._consume(end)
        zero_width = start == end
        if chosen.kind == "open":
            if zero_width and self._zero_width_close_at == start:
                raise ValueError(
                    f"Field '{chosen.field.name}': its open delimiter {chosen.delimiter.source} and a "
                    f"close delimiter both match the empty string at position {start}, so the "
                    "region would open and close forever (the reference parser hangs here)."
                )
            self._close_current(events)
            self._open(events, chosen.field, captures)
            self._zero_width_close_at = -1
            return False
        had_content = self._opened
        explicit = self._region is not self.home
        self._close_current(events)
        self._zero_width_close_at = start if (zero_width and explicit) else -1
        return zero_width and not had_content

    def _read_captures(self, delimiter: Delimiter, start: int, end: int) -> dict[str, str]:
        """Named groups, read by one match on the span the DFA found (`Delimiter.groups`)."""
        text = self._joined()
        if self._base == 0 or start > self._base:
            context, offset = text, self._base
        else:
            context, offset = self._before + text, self._base - 1
        found = delimiter.groups_reader(context, start - offset, end - offset).match(
            context, start - offset
        )
        if found is None or found.end() != end - offset:
            raise AssertionError(
                f"{delimiter.source}: regex disagrees with the DFA at {start}-{end}"
            )
        return {
            name: value
            for name, value in delimiter.group_values(found).items()
            if value is not None
        }

    def _consume(self, position: int) -> None:
        """Drop everything before `position`: it is routed or consumed. Runs restart from there."""
        if position > self._base and not self._keep_history:
            text = self._joined()
            cut = position - self._base
            self._before = text[cut - 1]
            self._text = text[cut:]
            self._base = position
        self._pos = position
        self._scan = position
        self._runs = []
        self._attempted_at = -2
        self._lead_checked.clear()

    def _joined(self) -> str:
        """The text from `_base` to the end, as one string (joining the tail once)."""
        if self._tail:
            if not self._text and len(self._tail) == 1:
                self._text = self._tail[0]  # `parse`'s whole text: no copy
            else:
                self._text = "".join((self._text, *self._tail))
            self._tail = []
        return self._text

    # --- regions -----------------------------------------------------------------------------------

    def _route(self, events: list[dict] | None, until: int) -> None:
        """Send the text from `_pos` to `until` to the current region (dropped in the null sink)."""
        if until <= self._pos:
            return
        text = self._joined()
        chunk = text[self._pos - self._base : until - self._base]
        self._pos = until
        if not self._keep_history:
            self._before = chunk[-1]
            self._text = text[until - self._base :]
            self._base = until
        field = self._region.field
        if field is None:
            return
        if not self._opened:
            if events is not None:
                events.append({"type": "region_open", "field": field.name})
            self._opened = True
        self._add_to_body(chunk)
        if events is not None:
            events.append(
                {"type": "region_chunk", "field": field.name, "text": chunk, "dirty": field.dirty}
            )

    def _add_to_body(self, chunk: str) -> None:
        """Append to the region's text. The pieces get shorter from the first to the last: the
        last two are merged while the last is as long as the one before, so a region streamed in
        4-char chunks is a few long strings (one string per chunk would cost some 50 bytes each)
        and each char is copied O(log n) times."""
        body = self._body
        body.append(chunk)
        while len(body) > 1 and len(body[-1]) >= len(body[-2]):
            last = body.pop()
            body[-1] += last

    def _open(self, events: list[dict] | None, field: Field, captures: dict[str, str]) -> None:
        self._region = self.regions[field.name]
        self._captures = captures
        self._body = []
        self._opened = True
        if events is not None:
            if self._event_captures:
                events.append(
                    {"type": "region_open", "field": field.name, "captures": dict(captures)}
                )
            else:
                events.append({"type": "region_open", "field": field.name})

    def _close_current(self, events: list[dict] | None) -> None:
        field = self._region.field
        if field is not None and self._opened:
            body = "".join(self._body)
            if self._malformed_event:
                try:
                    self._store_value(events, field, body)
                except MALFORMED_ERRORS as exc:
                    # Lenient mode: the region's value is left out of the message; the event
                    # carries the error text and the raw body, and parsing goes on.
                    if events is not None:
                        events.append(
                            {
                                "type": "region_malformed",
                                "field": field.name,
                                "error": str(exc),
                                "text": body,
                            }
                        )
            else:
                self._store_value(events, field, body)
        self._region = self.home
        self._captures = {}
        self._body = []
        self._opened = False

    def _store_value(self, events: list[dict] | None, field: Field, body: str) -> None:
        """Parse the closed region's body into its value and put it in the message."""
        value = field.value(body, self._captures)
        if self._tool_params:
            value = coerce_tool_calls(value, self._tool_params)
        if field.join is not None:
            if not isinstance(value, str):
                raise ValueError(
                    f"Field '{field.name}': 'join' requires each match to parse to a string, "
                    f"got {type(value).__name__}."
                )
            previous = self._output.get(field.name)
            self._output[field.name] = value if previous is None else previous + field.join + value
        elif field.repeats:
            self._output.setdefault(field.name, []).append(value)
        else:
            self._output[field.name] = value
        if events is not None:
            events.append({"type": "region_close", "field": field.name, "value": value})
