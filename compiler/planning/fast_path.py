r"""Region automaton -> one fast-path plan per region: what the generated `ResponseParser.feed`
may decide about a chunk without the runtime's general path.

In: a `RegionAutomaton` (the watched delimiters of each region, as DFAs). Out: `plan_region`, a
`FastPathPlan` per region, printed into the generated class by the templates and shown by
`dump()`. Guarantee: when the parser holds nothing (no text waiting on a delimiter run, see
`RegionParser._idle`), the region is open and a chunk passes the plan's test, the general path
would route the whole chunk to the region as one `region_chunk` event; when a chunk is a key of
`whole`, the general path would commit that delimiter over exactly the chunk. Everything else goes
to the general path, so a plan can only be too cautious, never wrong.

The test, from the DFAs. A run of delimiter d starts at every position, in d's one start state.
Its *lead states* are the start state and, through a named class (`\s` of `\s*<tool_call>`), the
states that loop on such classes; every other class leaving a lead state goes to the *stoppers*,
explicit chars ("<"). A chunk without stoppers keeps every run in lead states or kills it, and no
lead state reports a match. A run is dead at the end of the chunk when its last char leaves every
lead state for DEAD: chunks whose last char could keep a lead run alive (`tail_lead`, and the
non-ASCII members of `tail_keeps`, a symbolic set the runtime asks the installed tables about per
char, runtime/chunk_ends.py) hold that run, or go to the general path, which holds it.

Assumptions, each checked here (a region where one fails gets no plan, and the reason is printed
as a comment in the generated module):
  - every watched delimiter is a DFA, or a `regex` fallback whose only unsupported constructs are
    look-aheads at its end and whose loops are greedy (`\s*functools(?=\s*\[)`), planned from
    its *relaxed* DFA, the pattern with each look-ahead read as empty (compiler/automata/region_automaton.py
    `relax`; a fallback that looks behind or back is refused). A look-ahead only restricts
    matches, so every match of the pattern, and every attempt pending at the end of a text, is
    a match or a live run of the relaxed pattern from the same start: the test below, which
    rules out relaxed runs, rules out the pattern's. A relaxed run that has not got through the
    relaxed pattern has met no look-ahead, so it is alive exactly when the pattern's attempt is
    pending: the held tail is the same. One that has got through holds a relaxed match, so one
    of the literals every relaxed match begins with, and `HeldTail.cut` sends the chunk to the
    general path, which asks `regex`. Such a region has no `whole` chunks (a look-ahead may
    still be reading past the chunk), unless a DFA runs each of its look-aheads
    (compiler/automata/trailing_lookahead.py: `_whole_chunks` reads that DFA). The DFA (or
    relaxed DFA) has one start state (no `\b`: its start does not depend on the char before),
    no assertion at all (`$`, `\Z` ...), and does not match the empty string. A region whose delimiters start differently only at buffer
    position 0 (`^`, `\A`) is planned in its after-start form (`RegionSpec.after_start`), where
    that branch is gone, and the runtime runs the plan from position 1 on;
  - the stoppers are a few explicit chars (not a named class, whose non-ASCII members the
    installed `regex` decides), and lead states report nothing;
  - the region has a field (the null sink drops its text: nothing to stream).

`whole`: a chunk that is exactly a match of one delimiter, found from its literal paths: the
match is settled (the DFA has no way on), every other watched delimiter dies inside the chunk
with no match as long, so the run from the chunk's start is decided when the chunk is stepped,
and it wins (earliest start). Servers send special tokens such as `<think>` whole. A delimiter
with named groups has no such entries (its captures are read when it is committed), and a
non-ASCII char of a literal counts only where every table puts it in the same DFA class, so the
plan is the same under every `regex` release.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from chatparse.runtime import charclass as runtime
from chatparse.runtime.held import HELD_MAX

from ..automata.determinize import DEAD, DeterminizedDfa, build_dfa
from ..automata.region_automaton import CompiledDelimiter, RegionSpec
from ..frontend.regex_ast import Assertion, nodes
from ..frontend.regex_parse import RegexError, parse_regex, parse_relaxed
from ..frontend.symbolic_charclass import ANY, CELL_SIZE, CELLS, SymbolicCharSet
from ..limits import (
    PATH_CLASS_MAX,
    WHOLE_MAX_COUNT,
    WHOLE_MAX_LENGTH,
    WHOLE_MAX_STEPS,
    WHOLE_RIVAL_STEPS,
)
from .analysis import (
    DFA,
    LITERAL_FORMS,
    LITERAL_THEN_RUN,
    DelimiterAnalysis,
    analyse,
    possible_chars,
)
from .tag_halves import consume_final_lookaheads

# More stoppers than this and the test would cost more than it saves (`[^<]` starts a delimiter).
_STOPPERS_MAX = 8


@dataclass(frozen=True)
class FastPathPlan:
    """What the generated fast path of one region tests. `refused` says why there is none."""

    field: str | None  # the region's field (None: the null sink)
    refused: str | None = None
    stoppers: str = ""  # a chunk holding one of these chars goes to the general path
    # Per stopper char, the watches (indices into `watch`) whose delimiter can start with it:
    # the generated test names them, so an edit of one delimiter touches only its own lines.
    stopper_watches: tuple[tuple[int, ...], ...] = ()
    tail_lead: str = ""  # ... and one ending in one of these (ASCII) chars
    tail_ascii: bool = False  # ... and one ending in a non-ASCII char of `tail_keeps`
    # The chars that may keep a lead run alive (or start a delimiter): a chunk ending in a
    # non-ASCII one goes to the general path. Symbolic (`\s`'s non-ASCII members are the
    # installed `regex`'s), so the runtime answers it per char; None where no named class runs.
    tail_keeps: SymbolicCharSet | None = None
    whole: tuple[tuple[str, int], ...] = ()  # chunk -> index in the region's watch (priority order)
    watch: tuple[str, ...] = ()  # what each watched delimiter does, e.g. "open reasoning_content"
    # The held tail (runtime/held.py): per watched delimiter, its lead run's ASCII chars ("" for
    # none) when it has a literal form (`watch_held`), else None; the region holds a tail when
    # none is None, else `held_refused` says why.
    held: tuple[str | None, ...] = ()
    held_refused: str | None = None
    # The one lead run the region holds at the end of a chunk without stoppers, when the held
    # tail comes down to it (`_lead_run`); "" when `HeldTail.cut` must decide.
    lead_run: str = ""
    # Planned on the region's after-start form (`RegionSpec.after_start`): the fast path runs
    # from buffer position 1 on, where a `^` of a watched delimiter can no longer hold.
    after_start: bool = False
    # Per watched `regex` fallback planned from its relaxed DFA: what the plan says about it.
    relaxed: tuple[str, ...] = ()
    # The null sink: the chars without which a chunk may wait unstepped (`sink_match_ends`).
    match_ends: str | None = None

    def dump(self) -> str:
        label = self.field if self.field is not None else "(null sink)"
        if self.refused is not None:
            line = f"{label}: no fast path: {self.refused}"
            if self.match_ends is not None:
                line += (
                    f"\n  chunks without {self.match_ends!r} wait unstepped while no match waits to"
                    "\n    be decided: no watched delimiter can report a match on their chars"
                )
            for literal, index in self.whole:
                line += f"\n  chunk {literal!r}: {self.watch[index]}"
            return line
        ends = []
        if self.tail_lead:
            ends.append(repr(self.tail_lead))
        if self.tail_ascii:
            ends.append(f"a non-ASCII char of {self.tail_keeps!r}")
        conditions = [f"not ending in {' or in '.join(ends)}"] if ends else []
        where = " (from position 1 on, where `^` cannot match)" if self.after_start else ""
        lines = [f"{label}{where}: chunks {', '.join([*conditions, 'without'])}"]
        for char, watches in zip(self.stoppers, self.stopper_watches, strict=True):
            lines.append(f"    {char!r} ({', '.join(self.watch[i] for i in watches)})")
        if self.lead_run:
            lines.append(
                f"  {label} holds a trailing run of {self.lead_run!r} (a lead run a delimiter may"
                " still use), until the next chunk"
            )
        if self.held_refused is None:
            lines.append(
                f"  {label} holds the tail a delimiter may still use, until the next chunk"
            )
        else:
            lines.append(f"  {label} holds no tail: {self.held_refused}")
        lines.extend(f"  {line}" for line in self.relaxed)
        for literal, index in self.whole:
            lines.append(f"  chunk {literal!r}: {self.watch[index]}")
        return "\n".join(lines)


class _Refused(Exception):
    pass


def plan_regions(home: RegionSpec, regions: tuple[RegionSpec, ...]) -> tuple[FastPathPlan, ...]:
    """The plans of the home region and then of each explicit region, in that order. A region
    with an after-start form is planned in that form: the runtime runs no fast path at buffer
    position 0, where a `^` could still match, and moves to that form after it."""
    return tuple(plan_region(region) for region in (home, *regions))


def plan_region(region: RegionSpec) -> FastPathPlan:
    planned = region.after_start or region
    try:
        plan = _plan(planned)
    except _Refused as refused:
        # The null sink streams nothing, but a chunk that is exactly a delimiter is committed
        # there as in any region (`RegionParser.fast_sink`).
        return FastPathPlan(
            region.field,
            refused=str(refused),
            match_ends=sink_match_ends(planned),
            whole=tuple(_whole_chunks(planned)) if region.field is None else (),
            watch=tuple(f"{w.kind} {w.field}" for w in planned.watch),
            after_start=planned is not region,
        )
    return replace(plan, after_start=planned is not region)


def _plan(region: RegionSpec) -> FastPathPlan:
    if region.field is None:
        raise _Refused("the null sink drops its text, there is nothing to stream")
    for watch in region.watch:
        try:
            _check_delimiter(watch.delimiter)
        except _Refused as refused:  # named by its watch, so the line belongs to that field
            raise _Refused(f"{watch.kind} {watch.field}: {refused}") from None
    heads = SymbolicCharSet()
    stoppers = runtime.CharSet()
    starts: list[runtime.CharSet] = []  # per watch, the stoppers its delimiter can start with
    tail = ANY
    for watch in region.watch:
        dfa = planning_dfa(watch.delimiter)
        assert dfa is not None  # _check_delimiter
        label = f"{watch.kind} {watch.field}: {watch.delimiter.spec.describe()}"
        found, chars, dies = _lead_analysis(label, dfa)
        heads = heads | found
        stoppers = stoppers | chars
        starts.append(chars)
        tail = tail & dies
    if len(stoppers) > _STOPPERS_MAX:
        raise _Refused(f"a watched delimiter can start with any of {len(stoppers)} chars")
    stopper_chars = "".join(chr(cp) for lo, hi in stoppers.ranges for cp in range(lo, hi + 1))
    ends = tail | heads
    ascii_tail, per_cell = ends.components()
    every_ascii, every_cell = ANY.components()
    tail_lead = "".join(chr(cp) for cp in range(0x80) if chr(cp) not in ascii_tail)
    held, held_refused = _held(region)
    lead_run = _lead_run(region, held, held_refused, stopper_chars, tail_lead)
    relaxed = tuple(
        f"{w.kind} {w.field}: {_relaxed_note(w.delimiter)}"
        for w in region.watch
        if w.delimiter.dfa is None
    )
    return FastPathPlan(
        region.field,
        held=held,
        held_refused=held_refused,
        lead_run=lead_run,
        relaxed=relaxed,
        stoppers=stopper_chars,
        stopper_watches=tuple(
            tuple(i for i, chars in enumerate(starts) if char in chars) for char in stopper_chars
        ),
        tail_lead=tail_lead,
        tail_ascii=per_cell != every_cell,
        tail_keeps=~ends if per_cell != every_cell else None,
        whole=tuple(_whole_chunks(region)),
        watch=tuple(f"{w.kind} {w.field}" for w in region.watch),
    )


_ANALYSES: dict[int, tuple[CompiledDelimiter, DelimiterAnalysis]] = {}
_RELAXED: dict[int, tuple[CompiledDelimiter, DelimiterAnalysis]] = {}


def planning_dfa(delimiter: CompiledDelimiter) -> DeterminizedDfa | None:
    r"""The DFA a plan reads: the delimiter's own, or a fallback's relaxed one (or None). A
    relaxed DFA that matches the empty string (`(?=<function_call>)|<\|endoftext\|>` without
    its look-ahead) says nothing about where matches start: then the fallback's consuming form
    is read, whose final look-aheads consume their text (`tag_halves.consume_final_lookaheads`).
    Its runs start and stay alive exactly where the fallback's attempts are pending or match,
    which is all a plan reads; whole chunks are never taken from it (`_whole_chunks` reads only
    the delimiters' own DFAs and those that run trailing look-aheads), since its matches end
    later than the fallback's."""
    if delimiter.dfa is not None:
        return delimiter.dfa
    relaxed = delimiter.relaxed
    if relaxed is None or not relaxed.nullable_starts:
        return relaxed
    return _consuming_dfa(delimiter)


_CONSUMING: dict[int, tuple[CompiledDelimiter, DeterminizedDfa | None]] = {}


def _consuming_dfa(delimiter: CompiledDelimiter) -> DeterminizedDfa | None:
    found = _CONSUMING.get(id(delimiter))
    if found is None or found[0] is not delimiter:
        consumed = consume_final_lookaheads(delimiter.spec.pattern)
        dfa = None
        if consumed is not None:
            try:
                dfa = build_dfa(consumed)
            except RegexError:  # UnsupportedRegex too: beyond a DFA or a size limit
                dfa = None
        if len(_CONSUMING) > 4096:
            _CONSUMING.clear()
        found = _CONSUMING[id(delimiter)] = (delimiter, dfa)
    return found[1]


def relaxed_analysis(delimiter: CompiledDelimiter) -> DelimiterAnalysis | None:
    """`analyse` of a fallback's relaxed DFA (see the module docstring), once per delimiter; None
    for a delimiter with a DFA of its own or without a relaxed one."""
    if delimiter.dfa is not None or delimiter.relaxed is None:
        return None
    found = _RELAXED.get(id(delimiter))
    if found is None or found[0] is not delimiter:
        spec = delimiter.spec
        dfa = planning_dfa(delimiter)
        if dfa is None:
            return None
        form = analyse(dfa, None, forms=not spec.group_names)
        if len(_RELAXED) > 4096:
            _RELAXED.clear()
        found = _RELAXED[id(delimiter)] = (delimiter, form)
    return found[1]


def _relaxed_note(delimiter: CompiledDelimiter) -> str:
    form = relaxed_analysis(delimiter)
    assert form is not None  # a fallback in a planned region has a relaxed DFA
    if form.heads is None:
        begins = ""
    else:
        lead, literals = form.heads
        shown = " or ".join(repr(text) for text in literals)
        more = ", then more" if form.kind == DFA else ""
        begins = f" ({'lead chars, then ' if lead else ''}{shown}{more})"
    if delimiter.relaxed is not None and delimiter.relaxed.nullable_starts:
        return (
            f"planned with its final look-ahead read as consuming{begins}, which starts and"
            " waits where it does; a chunk holding a match of that goes to the general path"
            " (`regex`)"
        )
    return (
        f"planned without its look-ahead{begins}, which only restricts matches; a chunk"
        " holding a match of that goes to the general path (`regex`)"
    )


def delimiter_analysis(delimiter: CompiledDelimiter) -> DelimiterAnalysis:
    """`analyse` of the delimiter (as codemodel prints it), once per delimiter object: it builds
    and compares DFAs, and every region watching the delimiter asks."""
    found = _ANALYSES.get(id(delimiter))
    if found is None or found[0] is not delimiter:
        spec = delimiter.spec
        form = analyse(delimiter.dfa, spec.literals, forms=not spec.group_names)
        if len(_ANALYSES) > 4096:
            _ANALYSES.clear()
        found = _ANALYSES[id(delimiter)] = (delimiter, form)
    return found[1]


def watch_held(delimiter: CompiledDelimiter) -> tuple[str | None, str]:
    """(the ASCII chars of the delimiter's lead run, "" for none, when it has a literal form, else
    None; why not). A run of a literal form is alive exactly over lead chars then a proper prefix
    of one of its literals (runtime/held.py); another form (a Dfa, named groups) has no such
    description. Decided from the delimiter alone, so an edit elsewhere leaves it be."""
    spec = delimiter.spec
    name = spec.describe()
    dfa = planning_dfa(delimiter)
    if dfa is None:
        return None, f"{name} falls back to `regex`"
    relaxed = relaxed_analysis(delimiter)
    form = relaxed if relaxed is not None else delimiter_analysis(delimiter)
    if form.kind == DFA:
        return _dfa_held(name, dfa, form.heads)
    if form.kind not in LITERAL_FORMS:
        return None, f"{name} has no literal form ({form.kind})"
    if not form.literals or not all(form.literals):
        return None, f"{name} has an empty literal"
    if max(map(len, form.literals)) > HELD_MAX:
        # A longer cut-off literal is a tail past HELD_MAX, which the fast path never holds;
        # and `HeldTail` lists every proper prefix of every literal (its size is their square).
        return None, f"{name} has a literal longer than {HELD_MAX} chars"
    if form.lead is None:
        return "", ""
    ascii_members, _ = form.lead.components()
    lead = "".join(chr(cp) for lo, hi in ascii_members.ranges for cp in range(lo, hi + 1))
    if not lead:
        return None, f"{name} has a lead run without ASCII chars"
    if any(ch in lead for literal in form.literals for ch in literal):
        return None, f"{name} has a lead char inside a literal"
    return lead, ""


def _dfa_held(name: str, dfa: DeterminizedDfa, heads) -> tuple[str | None, str]:
    """A DeterminizedDfa whose matches all begin with lead chars then one of some literals (its `heads`,
    `\\s*<tool_call>\\s*(?P<name>...)`): its runs are alive at the end of a text exactly as a
    literal form's are (lead chars, then a proper prefix of a literal), when every ASCII lead char
    keeps a lead state in the lead states and every proper prefix of every literal stays alive
    from each of them without reporting a match. Checked here on the DFA."""
    if heads is None:
        return None, f"{name} has no heads (lead chars, then literals)"
    lead_set, literals = heads
    if len(set(dfa.starts)) != 1 or not literals or not all(literals):
        return None, f"{name} has no single start or an empty literal"
    ascii_members, _ = lead_set.components()
    lead = "".join(chr(cp) for lo, hi in ascii_members.ranges for cp in range(lo, hi + 1))
    if any(ch in lead for literal in literals for ch in literal):
        return None, f"{name} has a lead char inside a literal"
    states = {dfa.starts[0]}
    frontier = [dfa.starts[0]]
    while frontier:
        state = frontier.pop()
        if dfa.ends[state] is not None:
            return None, f"{name} can match after lead chars alone"
        for ch in lead:
            target = dfa.rows[state].get(_class_of(dfa, ch) or 0, DEAD)
            if target == DEAD:
                return None, f"{name} ends its lead run before a literal"
            if target not in states:
                states.add(target)
                frontier.append(target)
    for state in states:
        for literal in literals:
            current = state
            for ch in literal[:-1]:
                step = _step(dfa, current, ch)
                if step is None:
                    return None, f"{name} has a literal char the tables decide"
                current, report = step
                if report is not None:
                    return None, f"{name} matches inside a literal"
                if current == DEAD or dfa.ends[current] is not None:
                    return None, f"{name} has a literal that dies after some lead chars"
    return lead, ""


def watch_trail(delimiter: CompiledDelimiter) -> str | None:
    """For a literal then a run (`</tool_call>\\s*`) with a literal form: the run's ASCII chars,
    which `HeldTail.settled` steps over to find where a match ends (a non-ASCII char after them
    goes to the general path); else None."""
    if delimiter.dfa is None or watch_held(delimiter)[0] is None:
        return None
    form = delimiter_analysis(delimiter)
    if form.kind != LITERAL_THEN_RUN or form.trail is None or len(form.literals) != 1:
        return None
    ascii_members, _ = form.trail.components()
    trail = "".join(chr(cp) for lo, hi in ascii_members.ranges for cp in range(lo, hi + 1))
    if not trail or any(ch in trail for ch in form.literals[0]):
        return None
    return trail


def held_tail_plan(
    runs: tuple[tuple[str, tuple[str, ...]], ...], exact: tuple[bool, ...], trail: str | None
) -> tuple[tuple[str | None, ...], str | None]:
    """What each watch of a region with a held tail declares beyond its lead chars (runtime/held.py):
    per watch, the lead chars a held tail may be before a chunk that is exactly one of its
    literals for the two to be one match (`HeldTail.leads_into`; None: never), and the region's
    trail.

    `runs`: per watched delimiter, in the region's order, (its `watch_held` lead chars, the
    literals its module declares as heads, shortest kept: runtime/search.py
    `shortest_literals`); `exact`: whether it is a literal form (its match is exactly lead chars
    then a literal, then trail chars: a Dfa's may need more than the literal); `trail`:
    `watch_trail` of the first.

    A held tail and a whole chunk of literal L are one match when the tail is lead chars of L's
    delimiter, which is a literal form and the only one with L, and none of them is a char a
    watched literal starts with (a run of that literal could start inside the tail and win). The
    trail is kept for a region of one delimiter of one literal: with one delimiter watched, no
    run that starts earlier can be alive where its match is (it would be a match of the same
    literal, earlier)."""
    starts = {literal[0] for _, literals in runs for literal in literals}
    owners: dict[str, int] = {}
    for _, literals in runs:
        for literal in dict.fromkeys(literals):
            owners[literal] = owners.get(literal, 0) + 1
    joins = tuple(
        (
            "".join(ch for ch in lead if ch not in starts)
            if is_exact and lead and all(owners[literal] == 1 for literal in literals)
            else None
        )
        for (lead, literals), is_exact in zip(runs, exact, strict=True)
    )
    one = len(runs) == 1 and len(runs[0][1]) == 1
    return joins, trail if one else None


def _held(region: RegionSpec) -> tuple[tuple[str | None, ...], str | None]:
    held = []
    refused = None
    for watch in region.watch:
        lead, why = watch_held(watch.delimiter)
        held.append(lead)
        if lead is None and refused is None:
            refused = f"{watch.kind} {watch.field}: {why}"
    return tuple(held), refused


def _lead_run(
    region: RegionSpec,
    held: tuple[str | None, ...],
    held_refused: str | None,
    stoppers: str,
    tail_lead: str,
) -> str:
    r"""The lead run a chunk without stoppers holds at its end, when `HeldTail.cut` of such a
    chunk comes down to `len(chunk.rstrip(lead))`: the region holds a tail, its delimiters with a
    lead run all have this one (`\s*<tool_call>` and `\s*<|im_end|>`), every char a chunk may
    end in and keep a run alive is one of them, and every literal after the lead begins with a
    stopper (so no proper prefix of one is in the chunk). "" otherwise."""
    if held_refused is not None:
        return ""
    leads = {lead for lead in held if lead}
    if len(leads) != 1:
        return ""
    (lead,) = leads
    if not set(tail_lead) <= set(lead):
        return ""
    for watch in region.watch:
        relaxed = relaxed_analysis(watch.delimiter)
        form = relaxed if relaxed is not None else delimiter_analysis(watch.delimiter)
        literals = form.heads[1] if form.heads is not None else form.literals
        if not literals or any(not literal or literal[0] not in stoppers for literal in literals):
            return ""
    return lead


def sink_match_ends(region: RegionSpec) -> str | None:
    r"""The null sink's chars on which a watched delimiter can report a match: a char that ends
    one (entering a settled state) or that one waits to see (a match reported k chars back).
    Stepping a chunk without them reports nothing and, with no match waiting, decides nothing,
    and the sink sends no text: the runtime may leave the chunk unstepped until one with such a
    char arrives (`RegionParser._feed`). None for a region with a field, a `regex` fallback, an
    empty match, or when those chars are not a few explicit ones (`</x>\s*` reports on any)."""
    if region.field is not None or not region.watch:
        return None
    reporting = SymbolicCharSet()
    for watch in region.watch:
        dfa = watch.delimiter.dfa
        if dfa is None or dfa.nullable_starts:
            return None
        for state, row in enumerate(dfa.rows):
            if _settled(dfa, state):
                continue  # reported on entering it; a run never waits there
            for class_id, charset in enumerate(dfa.classes, 1):
                target = row.get(class_id, DEAD)
                ends_one = target != DEAD and _settled(dfa, target)
                if ends_one or dfa.end_for(state, class_id) is not None:
                    reporting = reporting | charset
    chars = _possible(reporting)
    if chars is None:
        return None
    return "".join(chr(cp) for lo, hi in chars.ranges for cp in range(lo, hi + 1))


def _check_delimiter(delimiter: CompiledDelimiter) -> None:
    spec = delimiter.spec
    name = spec.describe()
    dfa = planning_dfa(delimiter)
    if dfa is None:
        why = f"; not relaxed: {delimiter.relaxed_refused}" if delimiter.relaxed_refused else ""
        raise _Refused(f"{name} falls back to `regex` ({delimiter.fallback_reason}{why})")
    if delimiter.dfa is None:
        name += " without its look-ahead"
    if len(set(dfa.starts)) != 1:
        raise _Refused(f"{name} starts differently after some chars (^ or \\b)")
    # After buffer position 0 (`regions.after_start_form`) `^` and `\A` cannot hold: the DFA
    # has no trace of them, whatever the pattern says.
    ignored = ("begin",) if delimiter.after_start else ()
    node = (
        parse_regex(spec.pattern) if delimiter.dfa is not None else parse_relaxed(spec.pattern)[0]
    )
    assertion = _first_assertion(node, ignored)
    if assertion is not None:
        raise _Refused(f"{name} holds an assertion ({assertion})")
    if dfa.nullable_starts:
        raise _Refused(f"{name} can match the empty string")


def _first_assertion(node, ignored: tuple[str, ...] = ()) -> str | None:
    return next(
        (
            inner.kind
            for inner in nodes(node)
            if isinstance(inner, Assertion) and inner.kind not in ignored
        ),
        None,
    )


def _possible(charset: SymbolicCharSet) -> runtime.CharSet | None:
    """The real code points `charset` may hold under some tables, when they are few."""
    chars = possible_chars(charset)
    return chars if len(chars) <= _STOPPERS_MAX else None


def _lead_analysis(
    name: str, dfa: DeterminizedDfa
) -> tuple[SymbolicCharSet, runtime.CharSet, SymbolicCharSet]:
    """(the classes that leave the lead states, their real chars, the chars that kill a run in
    any lead state)."""
    start = dfa.starts[0]
    lead = {start}
    heads = SymbolicCharSet()
    chars = runtime.CharSet()
    frontier = [start]
    while frontier:
        state = frontier.pop()
        for class_id, target in sorted(dfa.rows[state].items()):
            charset = dfa.classes[class_id - 1]
            if target in lead:
                continue
            possible = _possible(charset)
            if possible is None:
                possible = charset.literal()  # many explicit chars: counted, then refused
            if possible is not None:
                heads = heads | charset
                chars = chars | possible
            else:  # a named class: its target is a lead state too, or nothing can be ruled out
                lead.add(target)
                frontier.append(target)
    for state in lead:
        if dfa.ends[state] is not None:
            raise _Refused(f"{name} can match after a named class alone")
    kills = SymbolicCharSet()
    for class_id, charset in enumerate(dfa.classes, 1):
        if charset & heads:
            continue
        if all(dfa.rows[state].get(class_id, DEAD) == DEAD for state in lead):
            kills = kills | charset
        elif any(dfa.rows[state].get(class_id, DEAD) not in (DEAD, *lead) for state in lead):
            raise _Refused(f"{name} leaves its lead run on a named class")
    return heads, chars, kills


def _settled(dfa: DeterminizedDfa, state: int) -> bool:
    return not dfa.rows[state] and dfa.ends[state] == 0


def _class_of(dfa: DeterminizedDfa, ch: str) -> int | None:
    """The class of `ch` under every table (None: it depends on whether `ch` is \\w, \\s...).
    Kept per DFA object and char: the whole-chunk search asks for the same few chars again and
    again, and each answer scans the classes."""
    found = _CLASSES.get(id(dfa))
    if found is None or found[0] is not dfa:
        if len(_CLASSES) > 4096:
            _CLASSES.clear()
        found = _CLASSES[id(dfa)] = (dfa, {})
    known = found[1]
    if ch not in known:
        known[ch] = _scan_class(dfa, ch)
    return known[ch]


_CLASSES: dict[int, tuple[DeterminizedDfa, dict[str, int | None]]] = {}


def _step(dfa: DeterminizedDfa, state: int, ch: str) -> tuple[int, int | None] | None:
    """(the state after `ch` from `state`, the match it reports or None), when every table gives
    the same; None when that depends on the tables. A non-ASCII char sits in the class of the cell
    the installed `regex` puts it in (`｜` of DeepSeek's tokens is \\S, but a table could make it
    \\s): the step is table-independent when every cell's class takes `state` to one target with
    one report (in a literal's middle, `｜` goes on whatever its cell; at a `\\s*` it does not)."""
    class_id = _class_of(dfa, ch)
    if class_id is not None:
        return dfa.rows[state].get(class_id, DEAD), dfa.end_for(state, class_id)
    outcomes = {(dfa.rows[state].get(k, DEAD), dfa.end_for(state, k)) for k in _classes_of(dfa, ch)}
    return outcomes.pop() if len(outcomes) == 1 else None


def _classes_of(dfa: DeterminizedDfa, ch: str) -> set[int]:
    """Every class `ch` may be in, one per cell (0: in none of the DFA's classes, so DEAD)."""
    cp = ord(ch)
    return {
        next((k for k, charset in enumerate(dfa.classes, 1) if e in charset), 0)
        for e in (cell * CELL_SIZE + cp for cell in range(len(CELLS)))
    }


def _scan_class(dfa: DeterminizedDfa, ch: str) -> int | None:
    cp = ord(ch)
    if cp < 0x80:  # an ASCII char sits in its own cell under every table
        return next(k for k, charset in enumerate(dfa.classes, 1) if ch in charset)
    found = _classes_of(dfa, ch) - {0}  # the cells in which `ch` is in some class
    return found.pop() if len(found) == 1 else None


def _literal_paths(dfa: DeterminizedDfa):
    """The strings that take `dfa` from its start to a settled state over classes of one char,
    or of a few chars that no table decides (`<\\|eo[mt]_id\\|>`: both tokens, each sent whole)."""
    found: list[str] = []
    single: dict[int, str] = {}  # class id -> its chars under every table, when it has few
    stack = [(dfa.starts[0], "")]
    steps = 0
    while stack and len(found) < WHOLE_MAX_COUNT and steps < WHOLE_MAX_STEPS:
        steps += 1
        state, text = stack.pop()
        if _settled(dfa, state):
            found.append(text)
            continue
        if len(text) >= WHOLE_MAX_LENGTH:
            continue
        for class_id, target in sorted(dfa.rows[state].items(), reverse=True):
            if class_id not in single:
                single[class_id] = _path_chars(dfa.classes[class_id - 1])
            for ch in single[class_id]:
                stack.append((target, text + ch))
    return sorted(found)


def _path_chars(charset: SymbolicCharSet) -> str:
    """The chars a literal path may take through `charset`: its one possible char, or its
    members when the tables decide none of them and they are at most `PATH_CLASS_MAX`; else
    none."""
    exact = _possible(charset)
    if exact is not None and len(exact) == 1:
        return chr(exact.first)
    real = charset.literal()
    if real is None or len(real) > PATH_CLASS_MAX:
        return ""
    return "".join(real)


def _run(dfa: DeterminizedDfa, text: str) -> tuple[int, int] | None:
    """(the state after stepping `text` from the start, the end of its last match or -1);
    a settled state counts as DEAD with its match. None when that depends on the tables."""
    state = dfa.starts[0]
    last = -1
    for position, ch in enumerate(text):
        step = _step(dfa, state, ch)
        if step is None:
            return None
        state, report = step
        if report is not None:
            last = position - report
        if state == DEAD:
            return DEAD, last
        if _settled(dfa, state):
            return DEAD, position + 1
    return state, last


class _Rivals:
    """The runs of every watched DFA of a region over the prefixes of its whole-chunk literals,
    memoised by prefix: literals share their first chars (`<f1>`, `<f12>`), and a DFA dies within
    a few chars of another's literal, so each step is taken once and only by the DFAs still alive.
    (Running every other DFA over every literal costs the square of the delimiters: 16 s at 400
    fields.) At most `WHOLE_RIVAL_STEPS` steps in all (limits.py); None once they are spent."""

    def __init__(self, dfas: list[DeterminizedDfa]):
        self.dfas = dfas
        self.steps = 0
        # prefix -> (the DFAs alive after it, with their states; the DFAs that settled on its last
        # char; the DFAs whose step depended on the tables)
        everyone = tuple((k, dfa.starts[0]) for k, dfa in enumerate(dfas))
        self.memo: dict[str, tuple[tuple[tuple[int, int], ...], frozenset, frozenset]] = {
            "": (everyone, frozenset(), frozenset())
        }

    def after(self, text: str):
        known = self.memo.get(text)
        if known is not None:
            return known
        before = self.after(text[:-1])
        if before is None:
            return None
        alive, _, undecided = before
        if self.steps + len(alive) > WHOLE_RIVAL_STEPS:
            return None
        self.steps += len(alive)
        ch = text[-1]
        still: list[tuple[int, int]] = []
        settled = []
        unknown = set(undecided)
        for k, state in alive:
            dfa = self.dfas[k]
            step = _step(dfa, state, ch)
            if step is None:
                unknown.add(k)
                continue
            target = step[0]
            if target == DEAD:
                continue
            if _settled(dfa, target):
                settled.append(k)
            else:
                still.append((k, target))
        found = self.memo[text] = (tuple(still), frozenset(settled), frozenset(unknown))
        return found

    def beaten(self, literal: str, index: int) -> bool | None:
        """Whether every DFA but `index` dies inside `literal` with no match as long (as `_run`
        says for each: DEAD, with its last match ending before the literal's end); None once the
        budget is spent. A run that dies reports nothing past where it died, and one that settles
        before the last char matches a shorter text."""
        found = self.after(literal)
        if found is None:
            return None
        alive, settled, unknown = found
        return all(k == index for k, _ in alive) and settled <= {index} and unknown <= {index}


def _whole_dfa(delimiter: CompiledDelimiter) -> tuple[DeterminizedDfa, frozenset[int]] | None:
    """The DFA whole chunks are read from, with its states that report a match through a
    look-ahead: the delimiter's own (none), or the one that runs its trailing look-aheads
    (compiler/automata/trailing_lookahead.py), whose run reads S of `R(?=S)` and reports there,
    though the match ends with R. None for a `regex` fallback."""
    if delimiter.dfa is not None:
        return delimiter.dfa, frozenset()
    if delimiter.lookahead is not None:
        return delimiter.lookahead.dfa, frozenset(delimiter.lookahead.reports)
    return None


def _meets(dfa: DeterminizedDfa, literal: str, states: frozenset[int]) -> bool:
    """Whether the run of `dfa` over `literal` from its start enters one of `states`."""
    state = dfa.starts[0]
    for ch in literal:
        step = _step(dfa, state, ch)
        if step is None or step[0] == DEAD:
            return False
        state = step[0]
        if state in states:
            return True
    return False


def _whole_chunks(region: RegionSpec):
    r"""The whole chunks of a region (module docstring). A delimiter with trailing look-aheads
    (`</think>|<tool_call>(?=\s*<function=)`) takes part through the DFA that runs them: its
    literal paths that meet no look-ahead report are plain matches (`</think>`), settled where
    they end; as a rival, a run that dies inside the literal has no match and no pending attempt
    there (R failed, or S did), and one alive or settled at its end beats it (`_Rivals.beaten`)."""
    dfas: list[DeterminizedDfa] = []
    through_lookahead: list[frozenset[int]] = []
    for watch in region.watch:
        found = _whole_dfa(watch.delimiter)
        if found is None:
            return  # a relaxed fallback (see the module docstring): its match may be pending
        dfas.append(found[0])
        through_lookahead.append(found[1])
    rivals = _Rivals(dfas)
    taken: set[str] = set()
    for index, watch in enumerate(region.watch):
        dfa = dfas[index]
        if watch.delimiter.spec.group_names:
            continue
        for literal in _literal_paths(dfa):
            if literal in taken or _run(dfa, literal) != (DEAD, len(literal)):
                continue
            if through_lookahead[index] and _meets(dfa, literal, through_lookahead[index]):
                continue  # a match through a look-ahead: it ends before the literal does
            beaten = rivals.beaten(literal, index)
            if beaten is None:
                return  # the budget is spent: the rest take the general path
            if beaten:
                taken.add(literal)
                yield literal, index
