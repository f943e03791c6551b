"""Delimiter DFA -> what a whole-text run crosses at once, per state: literal stretches and
self-loops.

In: a delimiter's minimised `DeterminizedDfa` (determinize.py). Out: `literal_stretches`,
{state: {literal: the state after it}}, and `self_loops`, {state: the chars it stays in}, which the
module declares (`Dfa(stretches=..., loops=...)`) and the runtime's whole-text run
(`DfaTables.run_from`, `search.py`) uses instead of one Python step per char: a loop is crossed by
one C search for the next char outside it (`DfaTables.loop_exits`), and in a state with stretches,
a text that holds one of them at the run's position moves the run to that stretch's state in one
C comparison (`str.startswith`, or one `re` of the fixed alternatives where the stretches branch:
`<|channel|>` then `analysis` or `commentary`).

Guarantee: stepping a stretch's chars one by one from its state takes exactly the edges it lists
and reports no match end on the way, so the jump lands where stepping would, with the same
report. Where the text leaves a stretch (another edge out of a state on it), no stretch matches
and the run steps that char as usual. A loop's chars are those whose class goes back to the state
without a match end reported on it, so crossing them changes nothing a run records. The compiler
checks both against the tables the runtime builds (`check_crossings`).

The stretches of a state form a trie: from the state, every edge whose class is one char is
followed to a higher-numbered state (states are numbered breadth-first from the start, so edges
back into a loop, the other way out of `</parameter>` inside `.*?`, go to lower numbers; they are
left to the text, as above), through states that report nothing, have no self-loop (there the
loop's exits take over: a stretch through a loop would hold only for an empty loop) and no edge on
a wider class that moves forward. A state's one edge is followed wherever it goes
(`commentary`'s `y` joins `analysis` in a state numbered before it). A "one char" class is judged
by the union of the classes of one state's edges to one target: `｜` is two classes for the
compiler, as a space and as no space under Unicode tables it does not know, but one char to a run
that takes either. Bounded: `_LEAVES` stretches of `_DEPTH` chars from a state.
"""

from __future__ import annotations

from collections import defaultdict

from ..automata.determinize import DeterminizedDfa
from ..frontend.symbolic_charclass import SymbolicCharSet

_LEAVES = 32  # most stretches from one state: a template's delimiters are short
_DEPTH = 256  # longest stretch


def literal_stretches(dfa: DeterminizedDfa) -> dict[int, dict[str, int]]:
    """{state: {literal: state after it}} for the states with a stretch of two chars or more
    that lie inside no other state's stretch: a run reaches an inner state only by leaving a
    stretch there, and then it steps (the module declares a few entries, not one per char)."""
    found = {}
    inner: set[int] = set()
    for state in range(1, len(dfa.rows)):
        if state in inner:
            continue  # (states are numbered breadth-first: a stretch's root comes first)
        stretches, passed = _stretches_from(dfa, state)
        if stretches:
            found[state] = stretches
            inner |= passed
    return {state: stretches for state, stretches in found.items() if state not in inner}


def _edges(dfa: DeterminizedDfa, state: int) -> list[tuple[str | None, int]]:
    """The edges out of `state` by target: (the one char they take, or None for wider, target)."""
    by_target: dict[int, SymbolicCharSet] = defaultdict(SymbolicCharSet)
    for class_id, target in dfa.rows[state].items():
        by_target[target] = by_target[target] | dfa.classes[class_id - 1]
    edges = []
    for target, charset in sorted(by_target.items()):
        real = charset.literal()
        single = chr(real.first) if real is not None and len(real) == 1 else None
        edges.append((single, target))
    return edges


def _stretches_from(dfa: DeterminizedDfa, root: int) -> tuple[dict[str, int], set[int]]:
    """The stretches from `root`, and the states strictly inside them."""
    if dfa.ends[root] is not None:
        return {}, set()  # a jump from a reporting state would skip its report
    found: dict[str, int] = {}
    passed: set[int] = set()
    pending = [("", root)]
    while pending:
        chars, current = pending.pop()
        forward: list[tuple[str, int]] = []
        if len(chars) < _DEPTH and (
            not chars or (dfa.ends[current] is None and current not in dfa.rows[current].values())
        ):
            edges = _edges(dfa, current)
            for single, target in edges:
                if target <= current and len(edges) > 1:
                    continue  # back into a loop: the text decides
                if single is not None:
                    forward.append((chars + single, target))
                elif chars:
                    forward = []  # a wider class moves on from here (`[^\s<]+` after `=`)
                    break
        if forward and len(found) + len(pending) + len(forward) <= _LEAVES:
            pending.extend(forward)
            if chars:
                passed.add(current)
        elif chars:
            found[chars] = current
    kept = {chars: after for chars, after in sorted(found.items()) if len(chars) >= 2}
    return kept, passed if kept else set()


def self_loops(dfa: DeterminizedDfa) -> dict[int, SymbolicCharSet]:
    """{state: the chars on which it goes back to itself without reporting a match end} for the
    states that have such chars (the `.*?` of a tag, the lead run of `\\s*<tool_call>`)."""
    found = {}
    for state in range(1, len(dfa.rows)):
        report = dfa.ends[state]
        if isinstance(report, int):
            continue  # it reports on every char
        stay = SymbolicCharSet()
        for class_id, target in dfa.rows[state].items():
            if target == state and not (report and class_id in report):
                stay = stay | dfa.classes[class_id - 1]
        if stay:
            found[state] = stay
    return found


class CrossingMismatch(AssertionError):
    """A declared stretch or loop that the runtime's tables do not step along (a compiler bug)."""


def check_crossings(delimiter) -> None:
    """Raise CrossingMismatch unless, in the runtime `delimiter`'s tables, stepping each declared
    stretch char by char from its state reaches the state it names with no match end reported on
    the way (what `run_from` assumes when it jumps), and each declared loop is exactly the union
    of the classes that go back to its state without a report (what `loop_exits` crosses)."""
    for state in range(1, len(delimiter.rows)):
        report = delimiter.ends.get(state)
        stay = None
        if not isinstance(report, int):
            for class_id, target in delimiter.rows[state].items():
                if target == state and not (report and class_id in report):
                    charset = delimiter.classes[class_id - 1]
                    stay = charset if stay is None else stay | charset
        if delimiter.loops.get(state) != stay:
            raise CrossingMismatch(f"{delimiter!r}: loop of state {state}")
    for state, by_literal in delimiter.stretches.items():
        for literal, after in by_literal.items():
            current = state
            for ch in literal:
                if current == 0 or delimiter.end_offset(current, ch) is not None:
                    raise CrossingMismatch(f"{delimiter!r}: stretch {literal!r} from {state}")
                current = delimiter.next_state(current, ch)
            if current != after:
                raise CrossingMismatch(f"{delimiter!r}: stretch {literal!r} ends in {current}")
