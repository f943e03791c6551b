r"""Delimiter DFA -> what kind of delimiter it is, and what its matches begin with.

In: a delimiter's minimised `DeterminizedDfa` (determinize.py), or None for a `regex` fallback. Out: a frozen
`DelimiterAnalysis`: its kind, the literals (in the order they are tried), the lead run, the trail
run, the chars a match can begin with and the `Heads` (lead, literals) the runtime's literal
search uses. Guarantee: a kind other than "dfa" and "fallback" is *checked*: the DFA that the
declared form means (the form written as a regex tree, compiled by the same nfa.py/dfa.py
pipeline) is equal to the delimiter's own minimised DFA, so the form has the same language and the
same leftmost-first ends; `check_runtime` then checks that the tables the runtime builds from the
form step like that DFA on every class. Everything here is a pure function of the DFA.

The kinds (the forms of runtime/delimiter_forms.py):

    literal                  <think>                 one literal
    literals                 <|end|> | <|return|>    alternatives, longest first
    lead_run_then_literals   \s*(?:A|B)              a greedy run of lead chars, then a literal
    literal_then_run         </tool_call>\s*         a literal, then a greedy run of trail chars
    dfa                      anything else a DFA expresses
    fallback                 what it cannot (look-around, back-references): `regex` runs it

Alternatives considered: deciding the kind from the pattern text (`\s*<x>` read as "spaces, then
a literal"). The text has many spellings of one language (`(?:\s)*`, `[\s]*<x>`, `\s*<(?:x)>`), and
the DFA has one: reading the DFA finds the form whatever the spelling, and comparing DFAs checks
it.
"""

from __future__ import annotations

from dataclasses import dataclass

from chatparse.runtime import charclass as runtime_charclass

from ..automata.determinize import DEAD, EOI, DeterminizedDfa, determinize, first_chars
from ..automata.nfa import build_nfa
from ..frontend.regex_ast import (
    Alternation,
    CharClass,
    Concat,
    Group,
    Literal,
    RegexNode,
    Repeat,
)
from ..frontend.regex_parse import RegexError, parse_regex
from ..frontend.symbolic_charclass import SymbolicCharSet

LITERAL = "literal"
LITERALS = "literals"
LEAD_RUN_THEN_LITERALS = "lead_run_then_literals"
LITERAL_THEN_RUN = "literal_then_run"
DFA = "dfa"
FALLBACK = "fallback"
# The literal forms: every match is exactly lead chars, then one of the literals, then trail chars.
LITERAL_FORMS = (LITERAL, LITERALS, LEAD_RUN_THEN_LITERALS, LITERAL_THEN_RUN)

_MAX_LITERALS = 16  # most alternatives a literal form lists (past that: a dfa)

# How far `find_heads` reads a DFA for the `Heads` (runtime/search.py) a module declares.
_HEAD_DEPTH = 24  # longest literal
_HEAD_COUNT = 32  # most literals; past that the trie stops growing where it is
_HEAD_FANOUT = 4  # widest class that still branches the literal trie (`["']`)
_HEAD_LEAD = 4096  # widest lead worth walking back over (`\s` has 25 chars)
_HEAD_LEAD_ASCII = 32  # the same for a lead not measured yet, counted in ASCII members


@dataclass(frozen=True)
class DelimiterAnalysis:
    kind: str
    literals: tuple[str, ...] = ()  # literal kinds: the alternatives, in the order tried
    lead: SymbolicCharSet | None = None  # lead_run_then_literals: the lead run's chars
    trail: SymbolicCharSet | None = None  # literal_then_run: the trail run's chars
    first_chars: SymbolicCharSet | None = (
        None  # None: a match can begin anywhere (empty match, fallback)
    )
    heads: tuple[SymbolicCharSet, tuple[str, ...]] | None = (
        None  # every match: lead chars, then a literal
    )

    def dump(self) -> str:
        lines = [f"kind: {self.kind}"]
        if self.literals:
            lines.append("literals: " + " ".join(repr(text) for text in self.literals))
        if self.lead is not None:
            lines.append(f"lead: {self.lead!r}")
        if self.trail is not None:
            lines.append(f"trail: {self.trail!r}")
        lines.append(
            f"first chars: {'any' if self.first_chars is None else repr(self.first_chars)}"
        )
        if self.heads is None:
            lines.append("heads: none")
        else:
            lead, literals = self.heads
            shown = " ".join(repr(text) for text in literals)
            lines.append(f"heads: {lead!r} then one of {shown}")
        return "\n".join(lines)


def analyse(
    dfa: DeterminizedDfa | None, preferred: tuple[str, ...] | None = None, *, forms: bool = True
) -> DelimiterAnalysis:
    """The analysis of one delimiter. `preferred`: the template's literal list, whose order (longest
    first, ties in template order) a literals form keeps when it means the same DFA. `forms`
    False: only a dfa (a pattern whose named groups are read from its match)."""
    if dfa is None:
        return DelimiterAnalysis(FALLBACK)
    first = None if dfa.nullable_starts else first_chars(dfa)
    heads = find_heads(dfa)
    for form in _candidate_forms(dfa, preferred) if forms else ():
        if form_dfa(form) == dfa:
            return DelimiterAnalysis(
                form.kind,
                literals=form.literals,
                lead=form.lead,
                trail=form.trail,
                first_chars=first,
                heads=_form_heads(form),
            )
    return DelimiterAnalysis(DFA, first_chars=first, heads=heads)


def literal_alternatives(pattern: str) -> tuple[str, ...] | None:
    """The alternatives of a pattern that is only literal text (`abc`, `(?:<a>|<bc>)`, the
    pattern of a template's literal list), in the order `regex` tries them; None for any other
    pattern (a capturing group, a class, a repeat, an assertion, a flag, an empty branch).

    Read off the AST, without a DFA: for a literal past the DFA table limits (limits.py), whose
    literal form (`Literal`, `Literals`: tried in this order, as an alternation is) the runtime
    builds in linear time."""
    try:
        node = parse_regex(pattern)
    except RegexError:
        return None

    def inner(node: RegexNode) -> RegexNode:
        while isinstance(node, Group) and not node.capturing:
            node = node.item
        return node

    node = inner(node)
    found: list[str] = []
    for branch in node.items if isinstance(node, Alternation) else (node,):
        branch = inner(branch)
        chars = branch.items if isinstance(branch, Concat) else (branch,)
        if not chars or not all(isinstance(char, Literal) for char in chars):
            return None
        found.append("".join(char.char for char in chars))  # type: ignore[attr-defined]
    return tuple(found)


def _form_heads(form: DelimiterAnalysis) -> tuple[SymbolicCharSet, tuple[str, ...]]:
    return (form.lead if form.lead is not None else SymbolicCharSet(), form.literals)


# --- the forms ------------------------------------------------------------------------------------


def _single_char(charset: SymbolicCharSet) -> str | None:
    real = charset.literal()
    if real is None or real.deferred or len(real) != 1:
        return None
    return chr(real.first)


def _literal_paths(dfa: DeterminizedDfa, root: int) -> list[str] | None:
    """The strings that lead from `root` to a state reporting a plain match (k = 0 for every
    symbol), over single-char edges only, when the states reachable from `root` (but for its own
    self-loops) form an acyclic graph whose only reports are those; else None.

    Depth-first with a stack of its own, and the path kept as a set and a list of chars: a
    literal of thousands of chars is that deep, and copying the path at each step would cost its
    length squared."""
    found: list[str] = []
    chars: list[str] = []
    on_path = {root}

    def edges_of(state: int) -> list[tuple[str, int]] | None:
        """The single-char edges to follow from `state`, or None when the walk fails there."""
        report = dfa.ends[state]
        if state != root or chars:
            if report is not None:
                if report != 0 or isinstance(report, dict):
                    return None
                found.append("".join(chars))
        elif report is not None:
            return None  # the empty match
        if len(found) > _MAX_LITERALS:
            return None
        edges: list[tuple[str, int]] = []
        for class_id, target in sorted(dfa.rows[state].items()):
            if state == root and target == root:
                continue  # the lead run, judged by the caller
            real = dfa.classes[class_id - 1].literal()
            if real is None or len(real) > _MAX_LITERALS or target in on_path:
                return None
            edges.extend((chr(cp), target) for lo, hi in real.ranges for cp in range(lo, hi + 1))
        return edges

    first = edges_of(root)
    if first is None:
        return None
    stack = [(root, iter(first))]
    while stack:
        state, pending = stack[-1]
        step = next(pending, None)
        if step is None:
            stack.pop()
            if stack:
                chars.pop()
                on_path.discard(state)
            continue
        ch, target = step
        chars.append(ch)
        on_path.add(target)
        edges = edges_of(target)
        if edges is None:
            return None
        stack.append((target, iter(edges)))
    return found


def _ordered(literals: list[str], preferred: tuple[str, ...] | None) -> tuple[str, ...]:
    """Longest first (a literal list is leftmost-longest); ties in template order, else sorted."""
    if preferred is not None and sorted(set(preferred)) == sorted(literals):
        ranked = list(dict.fromkeys(preferred))
    else:
        ranked = sorted(literals)
    return tuple(sorted(ranked, key=len, reverse=True))


def _candidate_forms(dfa: DeterminizedDfa, preferred: tuple[str, ...] | None):
    """The forms the DFA has the shape of (each still to be checked by `form_dfa`)."""
    if len(set(dfa.starts)) != 1 or dfa.starts[0] != 1 or dfa.nullable_starts:
        return
    loop = SymbolicCharSet()
    for class_id, target in dfa.rows[1].items():
        if target == 1:
            loop = loop | dfa.classes[class_id - 1]
    paths = _literal_paths(dfa, 1)
    if paths:
        literals = _ordered(paths, preferred)
        chars = SymbolicCharSet.chars("".join(literals))
        if not loop:
            kind = LITERAL if len(literals) == 1 else LITERALS
            yield DelimiterAnalysis(kind, literals=literals)
        elif not loop & chars:
            yield DelimiterAnalysis(LEAD_RUN_THEN_LITERALS, literals=literals, lead=loop)
    if not loop:
        chain = _trailing_chain(dfa)
        if chain is not None:
            literal, trail = chain
            if not trail & SymbolicCharSet.chars(literal):
                yield DelimiterAnalysis(LITERAL_THEN_RUN, literals=(literal,), trail=trail)


def _trailing_chain(dfa: DeterminizedDfa) -> tuple[str, SymbolicCharSet] | None:
    """(literal, trail) when the DFA spells a literal over single-char edges into a state that
    reports a plain match and only loops on itself."""
    chars = []
    state = 1
    while True:
        row = dfa.rows[state]
        report = dfa.ends[state]
        if report is not None:
            break
        if len(row) != 1:
            return None
        ((class_id, target),) = row.items()
        ch = _single_char(dfa.classes[class_id - 1])
        if ch is None or target <= state:
            return None
        chars.append(ch)
        state = target
    if report != 0 or isinstance(report, dict) or not chars:
        return None
    trail = SymbolicCharSet()
    for class_id, target in dfa.rows[state].items():
        if target != state:
            return None
        trail = trail | dfa.classes[class_id - 1]
    if not trail:
        return None
    return "".join(chars), trail


def form_node(form: DelimiterAnalysis) -> RegexNode:
    """The declared form as a regex tree: what the form means, written without the pattern."""

    def literal(text: str) -> RegexNode:
        chars = tuple(Literal(ch) for ch in text)
        return chars[0] if len(chars) == 1 else Concat(chars)

    alternatives = tuple(literal(text) for text in form.literals)
    body = alternatives[0] if len(alternatives) == 1 else Alternation(alternatives)
    if form.kind == LEAD_RUN_THEN_LITERALS:
        assert form.lead is not None
        return Concat((Repeat(CharClass(form.lead), 0, None), body))
    if form.kind == LITERAL_THEN_RUN:
        assert form.trail is not None
        return Concat((body, Repeat(CharClass(form.trail), 0, None)))
    return body


def form_dfa(form: DelimiterAnalysis) -> DeterminizedDfa:
    """The minimised DFA of the declared form (the pipeline every pattern goes through)."""
    return determinize(build_nfa(form_node(form)))


# --- heads ----------------------------------------------------------------------------------------


def possible_chars(charset: SymbolicCharSet) -> runtime_charclass.CharSet:
    """The real code points `charset` may hold under some Unicode tables: its own when it holds
    no table-dependent cell, else its ASCII members and every code point of its cells (`助 if
    a space`, a class of hunyuan's `\\s*(?:...|助手：)`, may hold only 助)."""
    real = charset.literal()
    if real is not None:
        return real
    ascii_members, per_cell = charset.components()
    for component in per_cell:
        ascii_members = ascii_members | component
    return ascii_members


def _wide_lead(charset: SymbolicCharSet) -> bool:
    """Whether an edge out of a lead state keeps a lead: more than `_HEAD_FANOUT` chars under
    some tables (`\\s`). A table-dependent class of a few chars (`助 if a space`) begins a
    literal instead, one per char, which the installed tables may never take: a superset of the
    real heads still finds every match. Past the first char, such a class ends the literal."""
    return len(possible_chars(charset)) > _HEAD_FANOUT


def _wider_than_lead(charset: SymbolicCharSet) -> bool:
    real = charset.literal()
    if real is None:
        ascii_members, _ = charset.components()
        return len(ascii_members) > _HEAD_LEAD_ASCII
    return len(real) > _HEAD_LEAD


def _chars(charset: SymbolicCharSet) -> list[str]:
    real = possible_chars(charset)  # called on narrow sets: a few chars under every table
    return [chr(cp) for lo, hi in real.ranges for cp in range(lo, hi + 1)]


def find_heads(dfa: DeterminizedDfa) -> tuple[SymbolicCharSet, tuple[str, ...]] | None:
    """What every match begins with: chars of a lead, then one of some literals (runtime/search.py
    `Heads`), read off the DFA, or None. The generated module declares it; the runtime only uses it.

    The lead states are the start and every state it reaches over wide classes (more than
    `_HEAD_FANOUT` chars, or depending on the Unicode tables); none may report a match end. Every
    other edge out of them begins a literal, followed over narrow edges until a state reports, loops
    or meets a wide class, or the literals grow too many or too long.
    """
    if len(set(dfa.starts)) != 1 or dfa.starts[0] == DEAD:
        return None
    lead_states = _lead_states(dfa)
    if any(dfa.ends[state] is not None for state in lead_states):
        return None
    lead = SymbolicCharSet()
    narrow: list[tuple[str, int]] = []
    for state in sorted(lead_states):
        for class_id, target in sorted(dfa.rows[state].items()):
            charset = dfa.classes[class_id - 1]
            if target in lead_states or _wide_lead(charset):
                lead = lead | charset
            else:
                narrow.extend((ch, target) for ch in _chars(charset))
    if not narrow or _wider_than_lead(lead):
        return None
    literals: list[str] = []

    def extend(prefix: str, state: int, path: frozenset) -> None:
        row = dfa.rows[state]
        edges: list[tuple[str, int]] = []
        settled = dfa.ends[state] == 0 and not row
        stop = (
            settled
            or dfa.ends[state] is not None
            or state in path
            or len(prefix) >= _HEAD_DEPTH
            or not row
        )
        if not stop:
            for class_id, target in sorted(row.items()):
                charset = dfa.classes[class_id - 1]
                # A table-dependent class of a few chars (`｜ if a space`, which no release
                # makes one) goes on with each char it may hold: still a superset of the heads.
                if _wide_lead(charset):
                    stop = True
                    break
                edges.extend((ch, target) for ch in _chars(charset))
        if stop or len(literals) + len(edges) > _HEAD_COUNT:
            literals.append(prefix)
            return
        for ch, target in edges:
            extend(prefix + ch, target, path | {state})

    for ch, target in sorted(narrow):
        extend(ch, target, frozenset(lead_states))
    # A literal that extends another adds nothing to the filter: keep the shortest ones (as Heads).
    kept: list[str] = []
    for literal in sorted(set(literals), key=lambda text: (len(text), text)):
        if not any(literal.startswith(shorter) for shorter in kept):
            kept.append(literal)
    return lead, tuple(sorted(kept))


def _lead_states(dfa: DeterminizedDfa) -> set[int]:
    """The start state and every state it reaches over wide classes (`find_heads`)."""
    start = dfa.starts[0]
    lead_states = {start}
    pending = [start]
    while pending:
        state = pending.pop()
        for class_id, target in dfa.rows[state].items():
            if _wide_lead(dfa.classes[class_id - 1]) and target not in lead_states:
                lead_states.add(target)
                pending.append(target)
    return lead_states


def head_follows(
    dfa: DeterminizedDfa, heads: tuple[SymbolicCharSet, tuple[str, ...]]
) -> tuple[SymbolicCharSet | None, ...]:
    """For each of `heads`' literals (`find_heads`), the chars that may come right after it in a
    match; None where a match may end with it, so that nothing need follow. The runtime's
    whole-text search passes over a literal followed by any other char (`search.Heads`): no match
    uses it there (harmony's `<|start|>assistant` before `<|channel|>`, where a call's header
    needs a space or `to=`).

    A match is lead chars, then a literal that begins where they end, in one of the lead states:
    so the state after the literal is one that reading it from a lead state reaches (over every
    class that may hold each char, under any Unicode tables: a superset), and the next char of the
    match is in that state's row.
    """
    lead_states = _lead_states(dfa)
    follows: list[SymbolicCharSet | None] = []
    for literal in heads[1]:
        states = set(lead_states)
        for ch in literal:
            states = {
                target
                for state in states
                for class_id, target in dfa.rows[state].items()
                if _may_hold(dfa.classes[class_id - 1], ch)
            }
        if not states or any(dfa.ends[state] is not None for state in states):
            follows.append(None)
            continue
        follow = SymbolicCharSet()
        for state in states:
            for class_id in dfa.rows[state]:
                follow = follow | dfa.classes[class_id - 1]
        follows.append(follow)
    return tuple(follows)


def _may_hold(charset: SymbolicCharSet, ch: str) -> bool:
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in possible_chars(charset).ranges)


# --- the runtime's tables, checked ----------------------------------------------------------------

_RUNTIME_NAMES = {
    "CharSet": runtime_charclass.CharSet,
    **runtime_charclass.NAMED_SETS,
}


def eval_runtime(expression: str) -> runtime_charclass.CharSet:
    """The runtime set a printed expression builds, evaluated as a module evaluates it (the
    expression is the compiler's own spelling of a set, never template text)."""
    return eval(expression, {"__builtins__": {}}, dict(_RUNTIME_NAMES))  # noqa: S307


def to_runtime(charset: SymbolicCharSet) -> runtime_charclass.CharSet:
    """The runtime set a compiler set stands for."""
    return eval_runtime(repr(charset))


class FormMismatch(AssertionError):
    """The runtime's tables for a declared form do not step like the compiler's DFA."""


def check_runtime(delimiter, dfa: DeterminizedDfa) -> None:
    """Raise FormMismatch unless the runtime `delimiter` (built from a declared form) steps like
    `dfa`: every runtime state reachable from a start stands for one state of the (minimal) DFA,
    with the same next state and the same match report for every char, checked once per pair of
    (compiler class, runtime class) that share a char under the installed tables, and settles
    where it does. The runtime's tables may be larger (a trie of literals shares no suffixes)."""
    compiler_sets = [to_runtime(c) for c in dfa.classes]
    pairs = []
    for i, ours_set in enumerate(compiler_sets, 1):
        inside = 0
        for j, theirs_set in enumerate(delimiter.classes, 1):
            common = ours_set & theirs_set
            if common:
                pairs.append((i, j, chr(common.first)))
                inside += len(common)
        if inside != len(ours_set):
            raise FormMismatch(f"{delimiter!r}: its classes are not a partition of the code points")
    stands_for: dict[int, int] = {}  # runtime state -> DFA state
    queue = []
    for ours, theirs in zip(dfa.starts, delimiter.starts):
        if (ours == DEAD) != (theirs == DEAD):
            raise FormMismatch(f"{delimiter!r}: start states differ")
        if ours != DEAD:
            queue.append((ours, theirs))
    end_of_input = runtime_end_of_input()
    done: set[int] = set()
    while queue:
        ours, theirs = queue.pop()
        if stands_for.setdefault(theirs, ours) != ours:
            raise FormMismatch(f"{delimiter!r}: runtime state {theirs} stands for two states")
        if theirs in done:
            continue
        done.add(theirs)
        settled_ours = dfa.ends[ours] == 0 and not dfa.rows[ours]
        if settled_ours != (theirs in delimiter.settled):
            raise FormMismatch(f"{delimiter!r}: state {ours} settles on one side only")
        if dfa.end_for(ours, EOI) != delimiter.end_offset(theirs, end_of_input):
            raise FormMismatch(f"{delimiter!r}: state {ours} reports another end at the end")
        for i, j, ch in pairs:
            if dfa.end_for(ours, i) != delimiter.end_offset(theirs, ch):
                raise FormMismatch(f"{delimiter!r}: state {ours} reports another end on {ch!r}")
            target = dfa.rows[ours].get(i, DEAD)
            other = delimiter.rows[theirs].get(j, 0)
            if (target == DEAD) != (other == 0):
                raise FormMismatch(f"{delimiter!r}: state {ours} on {ch!r}: dead on one side only")
            if target != DEAD:
                if stands_for.get(other, target) != target:
                    raise FormMismatch(f"{delimiter!r}: state {ours} on {ch!r}: another state")
                if other not in done:
                    queue.append((target, other))


def runtime_end_of_input():
    from chatparse.runtime.dfa_tables import END_OF_INPUT

    return END_OF_INPUT
