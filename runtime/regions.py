r"""Regions: the fields of a template, the delimiters each region watches, and the lazy product
DFA that steps them together.

In: what a generated module declares: one `Field` per template field, and per state of the region
automaton a `Region` with its `Watch` set (the reference's `_watchlist`: in the implicit region
every explicit open plus the implicit close; in an explicit region its own close). Out: for the
engines, where a watched delimiter may start (`Region.candidate`, `Region.prefilter`), the product
step of every watched DFA at once (`Region.step`, memoised in `Region.transitions`), the shortcuts
read off it (literal stretches, silent self-loops), and `winner`, the reference's tie-break.
"""

from __future__ import annotations

from .dfa_tables import DEAD, MEMO_CAP
from .held import HeldTail
from .run_sets import RunSets
from .search import text_end_finder

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from .delimiter import Delimiter

UNBUILT: Any = object()  # a region's finders before their first use


class Field:
    """What the parser needs to know about one template field."""

    __slots__ = (
        "name",
        "open",
        "close",
        "repeats",
        "join",
        "optional",
        "dirty",
        "value",
        "typed",
        "coerce",
    )

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
        typed: bool = False,
        coerce: bool | str = True,
    ) -> None:
        self.name = name
        self.open = open
        self.close = close
        self.repeats = repeats
        self.join = join
        self.optional = optional
        self.dirty = dirty
        self.value = value
        # Schema coercion of the value when tools are given (the compiler decides both, from the
        # content parser and `content_args`): `typed` leaves string-typed parameters alone
        # (content.TYPED_STRUCTURED_PARSERS); `coerce` False skips coercion (a `value_parser_by`),
        # and a str is the TypeError the reference raises there (FieldSpec.coerce).
        self.typed = typed
        self.coerce = coerce

    def __repr__(self) -> str:
        return f"Field({self.name!r})"


class Watch:
    """One watched delimiter of a region: which field it opens or closes."""

    __slots__ = ("kind", "field", "delimiter", "priority", "whole", "held", "joins", "trail")

    def __init__(
        self,
        kind: str,
        field: Field,
        delimiter: Delimiter,
        *,
        whole: tuple[str, ...] = (),
        held: str | None = None,
        joins: str | None = None,
        trail: str | None = None,
    ) -> None:
        self.kind = kind
        self.field = field
        self.delimiter = delimiter
        # For a generated fast path (compiler/planning/fast_path.py decides them): `whole`, the
        # chunks that are exactly a match of this delimiter that the general path would commit at
        # once; `held`, the ASCII chars of its lead run ("" when it has none) when its runs are
        # lead chars then a proper prefix of one of its `heads` literals, so runtime/held.py may
        # hold them (None otherwise); `joins`, the lead chars a held tail may be before a chunk
        # that is exactly one of its literals for the two to be one match (None: never);
        # `trail`, for a region's one literal then a run (`</tool_call>\s*`), the run's ASCII
        # chars.
        self.whole = whole
        self.held = held
        self.joins = joins
        self.trail = trail
        # Ties at one start and length go to opens before closes, then to the field name.
        self.priority = (0 if kind == "open" else 1, field.name)


def _literals(delimiter: Delimiter) -> tuple[str, ...]:
    heads = delimiter.heads
    assert heads is not None  # the compiler gives `held` only to a delimiter with heads
    return heads.literals


def winner(matches: Iterable[tuple[Watch, int, int]]) -> tuple[Watch, int, int] | None:
    """The reference's tie-break across a region's watch set (its `_scan` key), for matches given
    as (watch, start, end): the earliest start, then the longest, then open before close, then the
    field name (`Watch.priority`). None when there is no match.

    Every engine decides with it: the bulk and prefix engines over one search per delimiter, the
    streaming engine over the ends one run recorded (one start). The streaming engine's run
    pruning (`StreamingEngine._prune`) is its first key on runs: a run with a match beats every
    run that starts later.
    """
    best = None
    best_key = None
    for match in matches:
        watch, start, end = match
        key = (start, start - end, watch.priority)
        if best_key is None or key < best_key:
            best, best_key = match, key
    return best


class LazyProductDfa:
    """The product of a region's watched delimiter DFAs, built lazily (regex-automata's `hybrid`
    DFA): a state is the tuple of every delimiter's state, and `transitions` maps (state tuple,
    char) to (next state tuple, end reports), filled in the first time a run takes that step and
    capped at `MEMO_CAP` entries. An end report is (delimiter index, k): a match ends k chars
    before the position stepped, or -1 for a settled state, whose match includes the char.

    Only the tuples the text reaches are built, so the compiler emits one table per delimiter
    and no table per combination. The run sets of a region (runtime/run_sets.py) step over it.
    """

    __slots__ = ("delimiters", "has_fallback", "transitions")

    def __init__(self, delimiters: tuple[Delimiter, ...]) -> None:
        self.delimiters = delimiters
        self.has_fallback = any(d.fallback for d in delimiters)
        self.transitions: dict[tuple[tuple[int, ...], str], tuple[tuple[int, ...], tuple]] = {}

    def step(self, states: tuple[int, ...], ch: str) -> tuple[tuple[int, ...], tuple]:
        """One character for every live delimiter of a run; memoised in `transitions`."""
        following: list[int] = []
        reports: list[tuple[int, int]] = []
        for delimiter, state in zip(self.delimiters, states):
            if state > 0:
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


class Region(LazyProductDfa):
    """A state of the region automaton: the field text goes to, the delimiters watched there, and
    their lazy product DFA (the base class).

    `field` is None for the null sink (a template without an implicit field drops text outside
    explicit regions). Plain text is skipped in C by a prefilter, built on first use. When every
    watched delimiter has `Heads` (all but a `^`, empty-matching or look-behind one do; a
    look-ahead one when the compiler declares them, see `RegexFallback`), it finds
    their literals, a literal cut off by the end of the text, or lead chars ending it, and a
    candidate is moved back over the lead chars before it: `\\s*<tool_call>` costs nothing in
    prose full of double spaces. That finder is one compiled `re` of fixed-length alternatives,
    which never backtracks. Without it, every position is a candidate.
    """

    __slots__ = (
        "field",
        "watch",
        "prefilter",
        "candidate",
        "fresh",
        "keeps_history",
        "name",
        "dirty",
        "whole",
        "whole_chunks",
        "held",
        "after_start",
        "match_ends",
        "run_sets",
        "start_only",
        "later_candidate",
        "fresh_at_start",
        "run_candidate",
        "scan",
    )

    def __init__(
        self,
        field: Field | None,
        watch: tuple[Watch, ...],
        *,
        after_start: Region | None = None,
        match_ends: str | None = None,
        literal_scan: bool = False,
    ) -> None:
        self.field = field
        # The null sink's chars on which a watched delimiter can report a match (the compiler's
        # `fast_path.sink_match_ends`): a chunk without them may wait unstepped (`_feed`).
        self.match_ends = frozenset(match_ends) if match_ends else None
        # The same region from buffer position 1 on, when a watched delimiter starts differently
        # at position 0 (`^`): the compiler's after-start forms of its delimiters, which the
        # parser watches from there on (`ParserState._entered`; `RegionParser._set_idle`).
        self.after_start = after_start
        self.name = field.name if field is not None else None
        self.dirty = field.dirty if field is not None else False
        self.watch = tuple(sorted(watch, key=lambda w: w.priority))
        # The watches that only buffer position 0 lets match (`^(?=\[NAME\()`): the compiler
        # leaves them out of the after-start form. Past position 0 no run attempts them, and
        # `later_candidate` (the after-start form's finder, built with this one's) says where
        # the others may start.
        later = {(w.kind, w.field.name) for w in after_start.watch} if after_start else set()
        self.start_only = frozenset(
            index
            for index, w in enumerate(self.watch)
            if after_start is not None and (w.kind, w.field.name) not in later
        )
        self.later_candidate: Callable[[str, int], int] | None = None
        # A generated fast path's tables (see `Watch`): chunk -> the index of the watch it
        # commits, and the region's `HeldTail` when the compiler gave every watch its `held`.
        self.whole = {chunk: index for index, w in enumerate(self.watch) for chunk in w.whole}
        # The same chunks as a tuple, for `str.startswith`/`endswith` to test them all in C.
        self.whole_chunks = tuple(self.whole)
        self.held: HeldTail | None = None
        if self.watch and all(w.held is not None for w in self.watch):
            self.held = HeldTail(
                *((w.held or "", _literals(w.delimiter), w.joins) for w in self.watch),
                trail=self.watch[0].trail,
            )
        super().__init__(tuple(w.delimiter for w in self.watch))
        # Built on first use (`build_finders`): `prefilter`, one compiled `re` that finds whether
        # a watched delimiter may start in a text (None: anywhere), and `candidate(text, pos)`,
        # the first position >= pos where one may start (or be cut off by the end of `text`), -1
        # when there is none.
        self.prefilter = UNBUILT
        self.candidate: Callable[[str, int], int] = self._first_candidate
        self.fresh: tuple[int, ...] | None = None
        # The states a run at buffer position 0 starts in, when they are not `fresh`
        # (`_start_only_run_sets`), and where a run of the run sets may start.
        self.fresh_at_start: tuple[int, ...] | None = None
        self.run_candidate: Callable[[str, int], int] = self._first_candidate
        # With `fresh`, the live runs step as one state (runtime/run_sets.py), built lazily too.
        self.run_sets: RunSets | None = None
        self.keeps_history = any(w.delimiter.needs_history for w in watch)
        # Whole-text search (runtime/whole.py): where the compiler declares `literal_scan` (its
        # watches are all literal forms that may be searched together), the region's
        # `whole.LiteralScan`, built on first use; None: each watch is searched on its own.
        self.scan: Any = UNBUILT if literal_scan else None

    def build_finders(self) -> Any:
        """Set `prefilter` and `candidate`: from the delimiters' `Heads` when all of them have
        one, else every position. Returns `prefilter`."""
        built = _heads_finders(self.watch)
        # Where a new run starts (Heads delimiters have one start state each), or None.
        # A `regex` fallback with `Heads` (RegexFallback(lead=, literals=)) has no start state:
        # its run starts by an attempt (`StreamingEngine._spawn`).
        self.fresh = (
            tuple(w.delimiter.starts[0] for w in self.watch)
            if built is not None and not self.has_fallback
            else None
        )
        if self.fresh is not None:
            self.run_sets = RunSets(self, self.fresh)
        if built is None:
            built = (None, _every_position)
        self.prefilter, self.candidate = built
        self.run_candidate = self.candidate
        if self.after_start is not None:
            self.after_start.build_finders()
            self.later_candidate = self.after_start.candidate
            self._start_only_run_sets()
        return self.prefilter

    def _start_only_run_sets(self) -> None:
        """Run sets for a region whose watches that only buffer position 0 lets match
        (`start_only`: `^(?=\\[NAME\\()`) have no heads, when its other watches step as one
        state from position 1 on (its after-start form's run sets): a run started at
        position 0 takes every delimiter's start state (`fresh_at_start`, the `RunSets`
        begin config), a later one only the others' (`fresh`, the start-only ones DEAD), and
        a run starts where the after-start form's finder says (`run_candidate`)."""
        later = self.after_start
        if (
            self.run_sets is not None
            or later is None
            or later.run_sets is None
            or not self.start_only
            or self.has_fallback
            or any(
                len(set(w.delimiter.starts)) != 1  # (a run starts in one state anywhere)
                for k, w in enumerate(self.watch)
                if k not in self.start_only
            )
        ):
            return
        starts = [w.delimiter.starts for w in self.watch]
        self.fresh = tuple(
            DEAD if k in self.start_only else first for k, (first, _, _) in enumerate(starts)
        )
        self.fresh_at_start = tuple(first for first, _, _ in starts)
        self.run_sets = RunSets(self, self.fresh, self.fresh_at_start)
        self.run_candidate = later.candidate

    def _first_candidate(self, text: str, pos: int) -> int:
        self.build_finders()
        return self.candidate(text, pos)


def _heads_finders(watch: tuple[Watch, ...]) -> tuple[Any, Callable[[str, int], int]] | None:
    """A region's prefilter and candidate finder from its delimiters' `Heads` (see
    `search.text_end_finder`), or None when one of them has none."""
    heads = [h for h in (w.delimiter.heads for w in watch) if h is not None]
    if not heads or len(heads) != len(watch):
        return None
    return text_end_finder(heads)


def _every_position(text: str, pos: int) -> int:
    return pos if pos < len(text) else -1
