r"""Validated spec + delimiter DFAs -> the region automaton.

In: a `TemplateSpec`. Out: a `RegionAutomaton`: every delimiter compiled (a DFA, or a `regex`
fallback with the reason), the home region (the implicit field, or a null sink) and one region per
explicit field, each with its watch set in priority order and the characters that can start a
watched delimiter. Guarantee: the watch sets are the reference's `_watchlist`: in the home region
every explicit open plus the implicit close, in an explicit region only its own close.

It also finds what a template author should hear about before a model does (warnings, emitted as
comments in the module and printed by the CLI): a close that can match the empty string, or a
field whose open and close can both match the empty string.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..frontend.regex_ast import Alternation, Concat, Group, Repeat, nodes
from ..frontend.regex_parse import RegexError, UnsupportedRegex, parse_regex, parse_relaxed
from ..frontend.spec import DelimiterSpec, FieldSpec, TemplateSpec
from ..frontend.symbolic_charclass import SymbolicCharSet
from ..limits import MAX_TEMPLATE_DFA_STATES
from .determinize import DEAD, STATES_BUILT, DeterminizedDfa, StateMeter, after_start, determinize
from .nfa import build_nfa
from .trailing_lookahead import TrailingLookahead, trailing_lookahead


@dataclass(frozen=True)
class CompiledDelimiter:
    """One open, close or start-anchor pattern, as a DFA or as a `regex` fallback."""

    spec: DelimiterSpec
    dfa: DeterminizedDfa | None
    fallback_reason: str | None  # why a DFA cannot express it (look-around, back-reference, ...)
    # The delimiter as it is after buffer position 0 (`after_start_form`): its `^` and `\A` can
    # no longer hold, so the DFA is the one of its other ways to match.
    after_start: bool = False
    # A fallback whose only unsupported constructs are look-aheads at its end: the DFA of the
    # pattern without them (`relax`), which every match and every live run of the pattern is
    # also a match or a live run of; else None, and `relaxed_refused` says why when the pattern
    # had a look-ahead.
    relaxed: DeterminizedDfa | None = None
    relaxed_refused: str | None = None
    # A relaxed fallback whose look-ahead is its last item and starts with a loop over a class
    # (`(?=\s*\[)`): that class, over which an attempt that got through the relaxed pattern
    # stays pending (`lookahead_wait`); else None.
    waits: SymbolicCharSet | None = None
    # A fallback whose look-aheads a DFA runs after all (compiler/automata/trailing_lookahead.py): each
    # ends a top-level alternative. The module declares that DFA, not `regex`; every plan still
    # reads the delimiter as the fallback above (its relaxed DFA), which holds for any engine
    # that gives the pattern's matches.
    lookahead: TrailingLookahead | None = None

    @property
    def nullable(self) -> bool:
        """Whether the delimiter can match the empty string (fallbacks: assume it can)."""
        return self.dfa.nullable_starts if self.dfa is not None else True


@dataclass(frozen=True)
class WatchSpec:
    kind: str  # "open" | "close"
    field: str
    delimiter: CompiledDelimiter


@dataclass(frozen=True)
class RegionSpec:
    field: str | None  # None: the null sink of a template without an implicit field
    watch: tuple[WatchSpec, ...]  # in priority order: opens before closes, then field name
    # The same region from buffer position 1 on, when a watched delimiter starts differently at
    # position 0 (`^`): it watches the delimiters' `after_start_form`s (one that can no longer
    # match is left out), which are plain DFAs and literals, so the fast path and the runtime's
    # finders apply there. The runtime moves to it once nothing is held past position 0.
    after_start: RegionSpec | None = None


@dataclass(frozen=True)
class RegionAutomaton:
    spec: TemplateSpec
    start_anchor: CompiledDelimiter
    delimiters: dict[tuple[str, str], CompiledDelimiter]  # (field, "open"|"close") -> delimiter
    home: RegionSpec
    regions: tuple[RegionSpec, ...]  # one per explicit field, in source order
    warnings: tuple[str, ...]

    def dump(self) -> str:
        lines = [f"start anchor: {_describe(self.start_anchor)}"]
        for region in (self.home, *self.regions):
            label = region.field if region.field is not None else "(null sink)"
            if region is self.home and region.field is not None:
                label += " (implicit)"
            lines.append(f"region {label}:")
            for watch in region.watch:
                lines.append(f"  {watch.kind} {watch.field}: {_describe(watch.delimiter)}")
            if region.after_start is not None:
                lines.append("  from position 1 on, where `^` cannot match:")
                for watch in region.after_start.watch:
                    lines.append(f"    {watch.kind} {watch.field}: {_describe(watch.delimiter)}")
        lines.extend(f"warning: {warning}" for warning in self.warnings)
        return "\n".join(lines)


def _describe(delimiter: CompiledDelimiter) -> str:
    if delimiter.dfa is not None:
        how = f"{len(delimiter.dfa.rows)} states"
    elif delimiter.lookahead is not None:
        how = f"{len(delimiter.lookahead.dfa.rows)} states, through trailing look-aheads"
    else:
        how = f"fallback ({delimiter.fallback_reason})"
    return f"{delimiter.spec.describe()} -> {how}"


def compile_dfa(pattern: str) -> DeterminizedDfa:
    """Pattern text -> AST -> NFA -> minimal DFA; UnsupportedRegex when a DFA cannot express it."""
    return determinize(build_nfa(parse_regex(pattern)))


def compile_delimiter(spec: DelimiterSpec) -> CompiledDelimiter:
    try:
        return CompiledDelimiter(spec, compile_dfa(spec.pattern), None)
    except UnsupportedRegex as unsupported:
        relaxed, refused = relax(spec.pattern)
        return CompiledDelimiter(
            spec,
            None,
            unsupported.construct,
            relaxed=relaxed,
            relaxed_refused=refused,
            waits=lookahead_wait(spec.pattern) if relaxed is not None else None,
            lookahead=trailing_lookahead(spec.pattern),
        )


def lookahead_wait(pattern: str) -> SymbolicCharSet | None:
    """For a relaxed pattern (`relax`) that ends with one look-ahead, `(?=B)` or `(?!B)`: the
    chars on which B's DFA stays in its start state without a match, when there are any. While
    the text after a match of the pattern without its look-ahead holds only such chars, B is
    undecided, so an attempt there is pending whatever `regex` would say (phi4_mini's
    `\\s*functools(?=\\s*\\[)` after `functools` and spaces): the runtime need not ask again
    for each chunk of a long run of them, which would read the run each time."""
    try:
        node, dropped = parse_relaxed(pattern)
    except RegexError:
        return None
    items = node.items if isinstance(node, Concat) else (node,)
    if len(dropped) != 1 or items[-1] is not dropped[0]:
        return None
    start, end = dropped[0].span
    if pattern[start : start + 3] not in ("(?=", "(?!") or pattern[end - 1] != ")":
        return None
    try:
        body = compile_dfa(pattern[start + 3 : end - 1])
    except RegexError:
        return None
    if len(set(body.starts)) != 1 or body.starts[0] == DEAD:
        return None
    first = body.starts[0]
    if body.ends[first] is not None:
        return None
    stay = SymbolicCharSet()
    for class_id, target in body.rows[first].items():
        if target == first:
            stay = stay | body.classes[class_id - 1]
    return stay if stay else None


def relax(pattern: str) -> tuple[DeterminizedDfa | None, str | None]:
    """(the DFA of `pattern` with its look-aheads read as empty, None), when look-aheads are its
    only unsupported constructs and all of them sit at its end (the last items of its top-level
    concatenation or of a branch of a top-level alternation, `ends_every_path`, or inside one of
    those), and its loops are greedy; else (None, why, or None
    when the pattern has another unsupported construct or no look-ahead).

    Why at its end: a run of the relaxed pattern that has not reached its end yet has not
    reached a look-ahead either, so the pattern's own run is alive exactly as long (`regex`
    reports a partial match at the end of the text) and holds as much text; only a run that got
    through to the end of the relaxed pattern, a match of it, can differ. A look-ahead before
    other items could kill a run earlier than the relaxed one dies: the fast path would hold
    text the general path sends. Why no lazy loop: on one, `regex`'s partial attempt is pending
    where no text could complete it (`\\s*?x(?=y)` on " f"), so the general path would hold text
    the relaxed run has let go. tests/test_regex_parse.py checks this against `regex`."""
    try:
        node, dropped = parse_relaxed(pattern)
    except RegexError:  # another unsupported construct (or a body the grammar cannot read)
        return None, None
    if not dropped:
        return None, None
    trailing = [empty for empty in dropped if ends_every_path(node, empty, dropped)]
    for empty in dropped:
        start, end = empty.span
        if not any(outer.span[0] <= start and end <= outer.span[1] for outer in trailing):
            return None, "it has a look-ahead before its end"
    if _has_lazy_loop(node):
        return None, "it has a lazy loop (`regex` reports partial matches no text completes)"
    try:
        return determinize(build_nfa(node)), None
    except UnsupportedRegex as unsupported:  # too large for a DFA
        return None, unsupported.construct


def ends_every_path(node, target, lookaheads=()) -> bool:
    """Whether `target` is read after everything else on every path through `node` that reads it
    (other `lookaheads` may follow it): an item of the run of look-aheads that ends the
    top-level concatenation, or a branch of a top-level alternation
    (`</think>|<tool_call>(?=\\s*<function=)`), through groups. A look-ahead there reads no
    text of the match, so what `relax` says about one at the end holds for it."""
    if node is target:
        return True
    if isinstance(node, Group):
        return ends_every_path(node.item, target, lookaheads)
    if isinstance(node, Alternation):
        return any(ends_every_path(branch, target, lookaheads) for branch in node.items)
    if isinstance(node, Concat):
        for item in reversed(node.items):
            if ends_every_path(item, target, lookaheads):
                return True
            if not any(item is other for other in lookaheads):
                return False
    return False


def _has_lazy_loop(node) -> bool:
    return any(
        isinstance(inner, Repeat) and not inner.greedy and inner.max != inner.min
        for inner in nodes(node)
    )


def _priority(watch: WatchSpec) -> tuple[int, str]:
    return (0 if watch.kind == "open" else 1, watch.field)


def after_start_form(delimiter: CompiledDelimiter) -> CompiledDelimiter | None:
    """`delimiter` as it is after buffer position 0, where `^` and `\\A` cannot hold (its DFA
    from the start state of every later position, `dfa.after_start`); None when it starts there
    as at position 0. Its DFA starts DEAD when only position 0 lets it match.

    A `regex` fallback has one only in that last case, read from its relaxed DFA (`relax`):
    every match of the pattern is a match of that DFA over the same span, so when the DFA can
    match nothing after position 0, neither can the pattern (`^(?=\\[NAME\\()`, a pythonic call
    list that is the whole reply), and the region stops watching it there."""
    if delimiter.dfa is None:
        if delimiter.relaxed is None:
            return None
        never = after_start(delimiter.relaxed)
        if never is None or never.starts[0] != DEAD:
            return None
        return CompiledDelimiter(delimiter.spec, never, None, after_start=True)
    later = after_start(delimiter.dfa)
    if later is None:
        return None
    return CompiledDelimiter(delimiter.spec, later, None, after_start=True)


def _region(
    field: FieldSpec | None,
    watch: list[WatchSpec],
    later: dict[int, CompiledDelimiter | None] | None = None,
) -> RegionSpec:
    ordered = tuple(sorted(watch, key=_priority))
    name = field.name if field is not None else None
    after = None
    if later is not None and any(later[id(w.delimiter)] is not None for w in ordered):
        after_watch: list[WatchSpec] = []
        for w in ordered:
            form = later[id(w.delimiter)]
            if form is None:
                after_watch.append(w)
            elif form.dfa is not None and form.dfa.starts[0] != DEAD:
                after_watch.append(WatchSpec(w.kind, w.field, form))
        after = _region(field, after_watch)
    return RegionSpec(name, ordered, after)


def build_regions(spec: TemplateSpec) -> RegionAutomaton:
    delimiters: dict[tuple[str, str], CompiledDelimiter] = {}
    meter = StateMeter()
    token = STATES_BUILT.set(meter)
    try:
        for field in spec.fields:
            for role, delimiter in (("open", field.open), ("close", field.close)):
                if delimiter is not None:
                    delimiters[field.name, role] = compile_delimiter(delimiter)
                    _check_budget(meter, delimiter)
        start_anchor = compile_delimiter(spec.start_anchor)
        _check_budget(meter, spec.start_anchor)
    finally:
        STATES_BUILT.reset(token)

    # One after-start form per delimiter object, so every region that watches it shares it.
    later = {id(d): after_start_form(d) for d in delimiters.values()}
    implicit = spec.field(spec.implicit) if spec.implicit is not None else None
    home_watch = [
        WatchSpec("open", field.name, delimiters[field.name, "open"])
        for field in spec.fields
        if field.open is not None
    ]
    if implicit is not None and implicit.close is not None:
        home_watch.append(WatchSpec("close", implicit.name, delimiters[implicit.name, "close"]))
    regions = tuple(
        _region(
            field,
            (
                [WatchSpec("close", field.name, delimiters[field.name, "close"])]
                if field.close is not None
                else []
            ),
            later,
        )
        for field in spec.fields
        if field.open is not None
    )
    return RegionAutomaton(
        spec=spec,
        start_anchor=start_anchor,
        delimiters=delimiters,
        home=_region(implicit, home_watch, later),
        regions=regions,
        warnings=tuple(_warnings(spec, delimiters)),
    )


def _check_budget(meter: StateMeter, spec: DelimiterSpec) -> None:
    """Refuse the template once its delimiters have built more than `MAX_TEMPLATE_DFA_STATES`
    DFA states (limits.py), naming the delimiter that crossed it. Every later stage works per
    state (analysis, fast-path plans, a printed row each), and a pattern of 20 chars can need
    thousands (`<(?:a|b)*a(?:a|b){9}>`); one that passes a DFA limit falls back to `regex` after
    building as many, so it is counted too."""
    if meter.built <= MAX_TEMPLATE_DFA_STATES:
        return
    scope = f"Field {spec.field!r}" if spec.role != "start_anchor" else "response_template"
    raise ValueError(
        f"{scope}: {spec.key!r} brings the template's delimiters to {meter.built:,} DFA states, "
        f"over chatparse's limit of {MAX_TEMPLATE_DFA_STATES:,} in all (MAX_TEMPLATE_DFA_STATES, "
        "chatparse/compiler/limits.py): compiling a template costs time with its states"
    )


def _warnings(spec: TemplateSpec, delimiters: dict[tuple[str, str], CompiledDelimiter]):
    for field in spec.fields:
        close = delimiters.get((field.name, "close"))
        open_ = delimiters.get((field.name, "open"))
        if field.implicit and close is not None and close.nullable:
            yield (
                f"field {field.name!r}: {close.spec.describe()} can match the empty string; where it "
                "does on an empty region the reference stops reading, and so does chatparse"
            )
        if open_ is not None and close is not None and open_.nullable and close.nullable:
            yield (
                f"field {field.name!r}: open and close can both match the empty string; where both "
                "do at one position the reference loops forever, chatparse raises ValueError"
            )
        if field.content_args_error is not None:
            yield (
                f"{field.content_args_error}; as in the reference, parsing a value of the field "
                "raises AttributeError"
            )
