r"""Trailing positive look-aheads, run by a DFA: `R(?=S)` at the end of a top-level alternative.

In: a delimiter pattern that `parse_regex` refuses. Out: `trailing_lookahead(pattern)`, a
`TrailingLookahead` when the pattern's only constructs a DFA cannot run are positive look-aheads,
each the last item of a top-level alternative, and the text before each one matches in one way
from a given start (its language is prefix-free); else None, and the pattern stays a `regex`
fallback. The built-ins that need it: `\s*functools(?=\s*\[)`, `</think>|<tool_call>(?=\s*<function=)`,
`(?=<function_call>)|<\|endoftext\|>`, `^(?=\[[A-Za-z]\w*\()`.

How. Alternative i, `R(?=S)`, is read as `RS` that ends in its own match state (`nfa.AHEAD`), and
the DFA reports it as k = -1 - i (compiler/automata/determinize.py): the run reads S as `regex` does, and
the report says "alternative i matched through its look-ahead". The match itself ends where R
ends, which is where R's own DFA, run from the match's start, reports (`before`). That end is
unique because R's language is prefix-free: no match of R from a start is a prefix of another, so
`regex`, backtracking into R when S fails, finds no other end to try, and a DFA run that read RS
has only one place where R ended. When S matches, the look-ahead is decided (`regex` tries it
once), so the alternative's other threads, which could only report that same end again, are cut
(`_Determinizer.closure`): the run dies as soon as the one-shot answer is known.

Out in detail: `dfa`, with every such report written as k = 0 (the end of S: what every compile-
time analysis reads, as for the consuming form `tag_halves.consume_final_lookaheads` builds), and
`reports`, the states whose report is alternative i's (one alternative per state, or the pattern
is refused); `before`, per look-ahead alternative in order, the pattern of R (None when R can only
match empty: the match ends where it starts). The runtime (`DfaTables.lookahead_ends`) runs R from
the start of a match it records in such a state.

Refused (None): a negative look-ahead, a look-ahead anywhere else (inside a group, before other
items, in another look-ahead), `$` in a look-ahead alternative (its one-char delay would need a
second kind of report), R not prefix-free (`a*(?=ab)`: `regex` backtracks into R), a state that
reports for two alternatives, or any other construct a DFA cannot run.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..frontend.regex_ast import Alternation, Assertion, Concat, Group, RegexNode, Repeat, nodes
from ..frontend.regex_parse import RegexError, UnsupportedRegex, parse_regex, parse_relaxed
from ..frontend.symbolic_charclass import partition
from ..limits import MAX_DFA_STATES, MAX_TABLE_CELLS
from .determinize import DeterminizedDfa, determinize
from .nfa import ASSERT, CHAR, MATCH, SPLIT, Nfa, build_lookahead_nfa, build_nfa


@dataclass(frozen=True)
class TrailingLookahead:
    """See the module docstring."""

    dfa: DeterminizedDfa  # reports through a look-ahead written as k = 0
    reports: dict[int, int]  # state -> the look-ahead alternative (0, 1, ...) it reports
    before: tuple[str | None, ...]  # per look-ahead alternative: the pattern of R, or None


def trailing_lookahead(pattern: str) -> TrailingLookahead | None:
    """The pattern as a DFA with look-ahead reports (module docstring), or None."""
    try:
        node, dropped = parse_relaxed(pattern)
    except RegexError:
        return None
    if not dropped:
        return None
    items = node.items if isinstance(node, Alternation) else (node,)
    found = 0
    parts: list[tuple[RegexNode, int | None]] = []
    before: list[str | None] = []
    for item in items:
        sequence = item.items if isinstance(item, Concat) else (item,)
        last = sequence[-1]
        if not any(last is empty for empty in dropped):
            parts.append((item, None))
            continue
        start, end = last.span
        if not pattern.startswith("(?=", start):
            return None  # a negative look-ahead: no DFA report says "S does not match"
        try:
            body = parse_regex(pattern[start + 3 : end - 1])
        except RegexError:
            return None  # a look-ahead inside it, or another construct
        found += 1
        for head in _unambiguous_heads(sequence[:-1]):
            if head is None or _has_end_assertion(body):
                return None
            parts.append((Concat((*head, body), span=item.span), len(before)))
            before.append(_source(pattern, head) if _consumes(head) else None)
    if found != len(dropped):
        return None  # a look-ahead that is not the last item of its alternative
    try:
        dfa = determinize(build_lookahead_nfa(tuple(parts), node.span))
    except UnsupportedRegex:
        return None
    return _split_reports(dfa, tuple(before))


def _split_reports(
    dfa: DeterminizedDfa, before: tuple[str | None, ...]
) -> TrailingLookahead | None:
    """Write each look-ahead report (k = -1 - i) as k = 0 and note its alternative per state."""
    ends = []
    reports: dict[int, int] = {}
    for state, report in enumerate(dfa.ends):
        values: set[int] = (
            set(report.values())
            if isinstance(report, dict)
            else set() if report is None else {report}
        )
        through = {k for k in values if k < 0}
        if not through:
            ends.append(report)
            continue
        if len(values) != 1:
            return None  # two alternatives, or one and a plain match, by the next char
        (k,) = through
        reports[state] = -1 - k
        ends.append(dict.fromkeys(report, 0) if isinstance(report, dict) else 0)
    return TrailingLookahead(replace(dfa, ends=tuple(ends)), reports, before)


EXPANDED_MAX = 8  # alternatives one look-ahead alternative may be split into


def _unambiguous_heads(head: tuple[RegexNode, ...]) -> list[tuple[RegexNode, ...] | None]:
    r"""R as one or more sequences, tried in this order, each prefix-free (no `$` either); a
    None in the list refuses the pattern. `^(?:<\|python_start\|>)?` is not prefix-free ("" and
    the token), but it is `^<\|python_start\|>` then `^`: an optional (or a group of branches)
    after fixed items only is split into the ways it can go, in `regex`'s order (greedy: with it
    first), each then read on its own, which is the order backtracking tries them in."""
    if _has_end_assertion_in(head):
        return [None]
    if _prefix_free(head):
        return [head]
    for index, item in enumerate(head):
        inner = item.item if isinstance(item, Group) and not item.capturing else item
        if isinstance(inner, Repeat) and inner.min == 0 and inner.max == 1:
            ways = [(inner.item,), ()] if inner.greedy else [(), (inner.item,)]
        elif isinstance(inner, Alternation):
            ways = [(branch,) for branch in inner.items]
        else:
            if not _fixed(item):
                return [None]  # a choice before: splitting later would reorder the tries
            continue
        expanded: list[tuple[RegexNode, ...] | None] = []
        for way in ways:
            expanded += _unambiguous_heads((*head[:index], *way, *head[index + 1 :]))
        return expanded if len(expanded) <= EXPANDED_MAX else [None]
    return [None]


def _fixed(node: RegexNode) -> bool:
    """Whether `node` reads the same way wherever it matches (no choice in it)."""
    if isinstance(node, Group):
        return _fixed(node.item)
    if isinstance(node, Concat):
        return all(_fixed(item) for item in node.items)
    return not isinstance(node, (Repeat, Alternation))


def _source(pattern: str, head: tuple[RegexNode, ...]) -> str:
    """The pattern text of R: the source of its items, joined (each is a whole item or branch,
    with no `|` of its own at its top level, so the join reads as their sequence)."""
    return "".join(pattern[node.span[0] : node.span[1]] for node in head)


def _has_end_assertion_in(nodes: tuple[RegexNode, ...]) -> bool:
    return any(_has_end_assertion(node) for node in nodes)


def _has_end_assertion(node: RegexNode) -> bool:
    return any(isinstance(inner, Assertion) and inner.kind == "end" for inner in nodes(node))


def _consumes(head: tuple[RegexNode, ...]) -> bool:
    """Whether R can read a char (else it matches the empty string only, where it starts)."""
    nfa = build_nfa(Concat(head) if len(head) != 1 else head[0]) if head else None
    return nfa is not None and any(state.kind == CHAR for state in nfa.states)


def _prefix_free(head: tuple[RegexNode, ...]) -> bool:
    """Whether no match of R is a proper prefix of another (assertions read as always holding,
    which only adds matches): a subset construction, priorities ignored, bounded as the
    determinizer is (MAX_DFA_STATES subsets, MAX_TABLE_CELLS subsets times classes; past either
    the pattern is refused, so an untrusted template costs bounded time here)."""
    if not head:
        return True
    node = head[0] if len(head) == 1 else Concat(head)
    try:
        nfa = build_nfa(node)
    except UnsupportedRegex:
        return False
    classes = partition(nfa.charsets())
    if len(nfa.states) * len(classes) > MAX_TABLE_CELLS:
        return False
    accepts = {
        number: [i for i, charset in enumerate(classes) if charset.first in state.charset]
        for number, state in enumerate(nfa.states)
        if state.kind == CHAR and state.charset is not None
    }

    def closure(states: frozenset[int]) -> frozenset[int]:
        seen = set(states)
        stack = list(states)
        while stack:
            state = nfa.states[stack.pop()]
            if state.kind in (SPLIT, ASSERT):
                for target in state.targets:
                    if target not in seen:
                        seen.add(target)
                        stack.append(target)
        return frozenset(seen)

    start = closure(frozenset({nfa.start}))
    successors: dict[frozenset[int], set[frozenset[int]]] = {}
    frontier = [start]
    successors[start] = set()
    while frontier:
        subset = frontier.pop()
        for symbol in range(len(classes)):
            moved = frozenset(nfa.states[s].next for s in subset if symbol in accepts.get(s, ()))
            if not moved:
                continue
            target = closure(moved)
            successors[subset].add(target)
            if target not in successors:
                if len(successors) > MAX_DFA_STATES or len(successors) * len(classes) > (
                    MAX_TABLE_CELLS
                ):
                    return False
                successors[target] = set()
                frontier.append(target)
    accepting = {subset for subset in successors if _matches(nfa, subset)}
    # The subsets from which one char or more lead to a match: back from the matches, once each.
    predecessors: dict[frozenset[int], list[frozenset[int]]] = {}
    for subset, targets in successors.items():
        for target in targets:
            predecessors.setdefault(target, []).append(subset)
    reaches: set[frozenset[int]] = set()
    frontier = list(accepting)
    while frontier:
        for before in predecessors.get(frontier.pop(), ()):
            if before not in reaches:
                reaches.add(before)
                frontier.append(before)
    # A match followed by one or more chars and a match again: not prefix-free.
    return not (accepting & reaches)


def _matches(nfa: Nfa, subset: frozenset[int]) -> bool:
    return any(nfa.states[s].kind == MATCH for s in subset)


__all__ = ["TrailingLookahead", "trailing_lookahead"]
