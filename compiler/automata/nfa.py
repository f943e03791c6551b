"""Regex AST -> Thompson NFA whose epsilon edges are ordered by priority.

In:  a RegexNode (regex_ast.py).
Out: `Nfa`: numbered states of four kinds, reachable from `start`, numbered in
     depth-first order (so the same pattern always gives the same NFA):
       CHAR(charset) -> next      consume one char of the set
       SPLIT(t1, t2, ...)         try t1 first, then t2, ...: the order encodes
                                  alternation order and greedy (body first) vs
                                  lazy (exit first) repeats
       ASSERT(kind) -> next       zero-width test (regex_ast.ASSERTION_KINDS)
       MATCH
       AHEAD(i)                   the match of top-level alternative i, which ends in a
                                  positive look-ahead, read as consuming its text: the
                                  match itself ends where the look-ahead began
                                  (`build_lookahead_nfa`, compiler/automata/trailing_lookahead.py)
Guaranteed: a backtracking walk of the NFA in priority order (skipping a state
     already tried at the same position) finds the match `regex` finds. Captures are
     not tracked: the runtime reads groups with `regex` on the span the DFA finds.
     More than MAX_NFA_STATES states raises UnsupportedRegex.

The one subtle rule is how `regex` stops a repeat whose body can match empty.
Once the minimum count is reached, an iteration that consumed nothing ends the
loop: the match continues *after* the loop from there, with that iteration's
priority. RE2 instead drops such a path. The two differ:

    (?:a*|b)*  on "b":  regex -> "" (a* matched empty, so the loop ended);
                        RE2's rule -> "b".

So inside a loop with a nullable body we compile the body twice, "clean" (nothing
consumed since this iteration started) and "dirty"; a CHAR always leads into the
dirty copy, the clean copy's end leaves the loop and the dirty copy's end loops.
Hash-consing shares every state the two copies have in common (all states after
the first CHAR), so the cost is the body's zero-width prefix, not the whole body.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..frontend.regex_ast import (
    Alternation,
    Assertion,
    CharClass,
    Concat,
    Empty,
    Group,
    Literal,
    RegexNode,
    Repeat,
)
from ..frontend.regex_parse import UnsupportedRegex
from ..frontend.symbolic_charclass import SymbolicCharSet, format_charset
from ..limits import MAX_NFA_STATES

CHAR, SPLIT, ASSERT, MATCH, AHEAD = "char", "split", "assert", "match", "ahead"


@dataclass(frozen=True)
class NfaState:
    kind: str
    charset: SymbolicCharSet | None = None
    targets: tuple[int, ...] = ()
    assertion: str | None = None
    alternative: int | None = None  # AHEAD: the top-level alternative it ends

    @property
    def next(self) -> int:
        """The one successor of a CHAR or ASSERT state."""
        (target,) = self.targets
        return target


@dataclass(frozen=True)
class Nfa:
    states: tuple[NfaState, ...]
    start: int
    span: tuple[int, int] = field(default=(0, 0), compare=False)  # of the source pattern

    def assertion_kinds(self) -> frozenset[str]:
        return frozenset(s.assertion for s in self.states if s.assertion is not None)  # ASSERTs

    def charsets(self) -> list[SymbolicCharSet]:
        """The distinct char sets of the CHAR states, in state order."""
        return list(dict.fromkeys(s.charset for s in self.states if s.charset is not None))

    def dump(self) -> str:
        lines = [f"start {self.start}"]
        for number, state in enumerate(self.states):
            if state.kind == CHAR:
                text = f"char {format_charset(state.charset)} -> {state.next}"
            elif state.kind == SPLIT:
                text = "split -> " + ", ".join(map(str, state.targets))
            elif state.kind == ASSERT:
                text = f"assert {state.assertion} -> {state.next}"
            elif state.kind == AHEAD:
                text = f"ahead {state.alternative}"
            else:
                text = "match"
            lines.append(f"{number}: {text}")
        return "\n".join(lines)


def nullable(node: RegexNode) -> bool:
    """Whether `node` can match without consuming (assertions count as empty)."""
    if isinstance(node, (Empty, Assertion)):
        return True
    if isinstance(node, (Literal, CharClass)):
        return False
    if isinstance(node, Group):
        return nullable(node.item)
    if isinstance(node, Concat):
        return all(nullable(item) for item in node.items)
    if isinstance(node, Alternation):
        return any(nullable(item) for item in node.items)
    if isinstance(node, Repeat):
        return node.min == 0 or nullable(node.item)
    raise TypeError(f"not a regex node: {node!r}")


class _Builder:
    """Continuation-passing Thompson construction with hash-consed states.

    `compile(node, clean, dirty)` returns `(entry_clean, entry_dirty)`: where to
    enter `node` when nothing / something was consumed since the innermost nullable
    loop iteration began, given that after `node` the walk goes on at `clean` if
    still nothing was consumed and at `dirty` otherwise. Outside such loops the two
    continuations are the same state and so are the two entries.
    """

    def __init__(self, pattern_span: tuple[int, int]) -> None:
        # [kind, charset, targets, assertion, alternative]; patched for loops
        self.states: list[list] = []
        self.interned: dict[tuple, int] = {}
        self.pattern_span = pattern_span

    def _new(
        self, kind, charset=None, targets=(), assertion=None, intern=True, alternative=None
    ) -> int:
        key = (kind, charset, targets, assertion, alternative)
        if intern and key in self.interned:
            return self.interned[key]
        if len(self.states) >= MAX_NFA_STATES:
            raise UnsupportedRegex(
                f"pattern too large for a DFA (over {MAX_NFA_STATES} NFA states)", self.pattern_span
            )
        self.states.append([kind, charset, targets, assertion, alternative])
        number = len(self.states) - 1
        if intern:
            self.interned[key] = number
        return number

    def match(self) -> int:
        return self._new(MATCH)

    def split(self, targets: tuple[int, ...]) -> int:
        return self._new(SPLIT, targets=targets)

    def compile(self, node: RegexNode, clean: int, dirty: int) -> tuple[int, int]:
        if isinstance(node, Empty):
            return clean, dirty
        if isinstance(node, (Literal, CharClass)):
            charset = (
                SymbolicCharSet.chars(node.char) if isinstance(node, Literal) else node.charset
            )
            state = self._new(CHAR, charset=charset, targets=(dirty,))
            return state, state
        if isinstance(node, Assertion):
            return (
                self._new(ASSERT, targets=(clean,), assertion=node.kind),
                self._new(ASSERT, targets=(dirty,), assertion=node.kind),
            )
        if isinstance(node, Group):
            return self.compile(node.item, clean, dirty)
        if isinstance(node, Concat):
            for item in reversed(node.items):
                clean, dirty = self.compile(item, clean, dirty)
            return clean, dirty
        if isinstance(node, Alternation):
            entries = [self.compile(item, clean, dirty) for item in node.items]
            return (
                self.split(tuple(entry[0] for entry in entries)),
                self.split(tuple(entry[1] for entry in entries)),
            )
        if isinstance(node, Repeat):
            return _Loop(self, node, clean, dirty).entries()
        raise TypeError(f"not a regex node: {node!r}")


class _Loop:
    """One Repeat, unrolled as `regex` runs it (see the module docstring).

    After j completed iterations the walk is at decision point A(j, outer, last):
    `outer` says whether anything was consumed since the enclosing context's clean
    point (the loop was entered dirty, or an iteration consumed); `last` is the
    previous iteration: None (no iteration yet), "empty" or "consumed". Then:
      j < min                      -> iterate
      j == max, or last == "empty" -> exit
      otherwise                    -> SPLIT(iterate, exit), or (exit, iterate) if lazy
    With no max, all j >= min share one decision point per (outer, last).
    """

    def __init__(self, builder: _Builder, node: Repeat, clean: int, dirty: int) -> None:
        self.builder = builder
        self.node = node
        self.exits = {"clean": clean, "dirty": dirty}
        # Whether the clean/dirty split matters for what follows the loop.
        self.outer_matters = clean != dirty
        self.body_nullable = nullable(node.item)
        self.points: dict[tuple, int] = {}

    def entries(self) -> tuple[int, int]:
        # Build the decision points from the last count down, so that each one only
        # refers to points that already exist (no deep recursion for a{5000}).
        node = self.node
        top = node.min if node.max is None else node.max
        for count in range(top, -1, -1):
            self.point(count, "dirty", "consumed")
            if count < node.min or count == 0:
                self.point(count, "clean", None)
                self.point(count, "dirty", None)
        return self.point(0, "clean", None), self.point(0, "dirty", None)

    def point(self, count: int, outer: str, last: str | None) -> int:
        node = self.node
        if not self.outer_matters:
            outer = "dirty"
        if count >= node.min and (count == node.max or last == "empty"):
            return self.exits[outer]
        if node.max is None and count > node.min:
            count = node.min  # every count past the minimum behaves the same
        # What remains depends on (count, outer) only: below the minimum the next
        # iteration is due whatever the last one did; above it, "none yet" and
        # "consumed" both offer another iteration.
        key = (count, outer)
        if key in self.points:
            return self.points[key]
        if count < node.min:
            state = self.points[key] = self.iterate(count, outer)
            return state
        # A placeholder split, patched once the body (which may loop back here) exists.
        state = self.builder._new(SPLIT, intern=False)
        self.points[key] = state
        iterate = self.iterate(count, outer)
        leave = self.exits[outer]
        targets = (iterate, leave) if node.greedy else (leave, iterate)
        self.builder.states[state][2] = targets
        return state

    def iterate(self, count: int, outer: str) -> int:
        """Enter iteration count+1 (clean: nothing consumed in it yet)."""
        after_consumed = self.point(count + 1, "dirty", "consumed")
        after_empty = (
            self.point(count + 1, outer, "empty") if self.body_nullable else after_consumed
        )
        entry_clean, _ = self.builder.compile(self.node.item, after_empty, after_consumed)
        return entry_clean


def _renumber(states: list[list], start: int, span: tuple[int, int]) -> Nfa:
    """Keep the states reachable from `start`, numbered in depth-first priority order."""
    order: dict[int, int] = {}
    stack = [start]
    while stack:
        state = stack.pop()
        if state in order:
            continue
        order[state] = len(order)
        stack.extend(reversed(states[state][2]))
    renumbered = []
    for old in order:  # in the order of the new numbers
        kind, charset, targets, assertion, alternative = states[old]
        renumbered.append(
            NfaState(kind, charset, tuple(order[t] for t in targets), assertion, alternative)
        )
    return Nfa(tuple(renumbered), 0, span)


def build_nfa(node: RegexNode) -> Nfa:
    """The Thompson NFA of `node` (see the module docstring)."""
    builder = _Builder(node.span)
    match = builder.match()
    start, _ = builder.compile(node, match, match)
    return _renumber(builder.states, start, node.span)


def build_lookahead_nfa(
    alternatives: tuple[tuple[RegexNode, int | None], ...], span: tuple[int, int]
) -> Nfa:
    """The NFA of a top-level alternation whose alternative i, when it ends in a positive
    look-ahead, is given as (its text before the look-ahead, then the look-ahead's body; i) and
    ends in AHEAD(i) instead of MATCH; (the alternative, None) for the others. In priority
    order, as `Alternation` compiles them."""
    builder = _Builder(span)
    match = builder.match()
    entries = []
    for node, alternative in alternatives:
        end = match if alternative is None else builder._new(AHEAD, alternative=alternative)
        entries.append(builder.compile(node, end, end)[0])
    start = entries[0] if len(entries) == 1 else builder.split(tuple(entries))
    return _renumber(builder.states, start, span)
