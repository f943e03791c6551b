r"""Delimiter pattern -> where its one named group lies in a match, found by `str` methods.

In: a delimiter pattern with named groups (an open such as `\s*<function=(?P<name>[^>\n]+)>`).
Out: `group_slice(pattern)`, a `GroupSliceModel` the module declares as `GroupSlice(...)`
(runtime/group_slice.py), or None: the groups are then read by one `re`/`regex` match on the span
the DFA found, as before. Guarantee: for every match of the pattern, the group that `regex`
reports is the slice `GroupSlice.read` cuts out of the match, or `read` says None (a non-ASCII
char at a boundary, which the installed tables may put in a run) and `regex`'s reading is used.

The shape, over the top-level items of the pattern:

    R HEAD [W-run] (?P<name>B-run) [V-run] [TAIL [U-run]]

HEAD and TAIL are literal strings (HEAD not empty), each run a repeat of one class (B at least
once), and no other named group nor any assertion anywhere. The match splits one way only:

  - HEAD ends where its first occurrence in the match ends: no string of R HEAD[:-1] contains
    HEAD (checked on the DFA of R HEAD[:-1], stepped with the KMP automaton of HEAD), so an
    earlier occurrence would lie in R HEAD;
  - the W-run after it is the longest run of W chars there, since B's first char is no W char
    (W and B are disjoint under every table);
  - from the end: the U-run is the longest run of U chars (TAIL's last char is no U char), TAIL
    stands before it, and the V-run before TAIL is the longest run of V chars (B's last char is
    no V char); with no TAIL, a V-run ends the match.

So whatever way `regex` backtracks, its group is the text between: there is no other split of
the match into these parts. A run's chars are tested in ASCII only (`str.strip` of its ASCII
members): where a strip stops at a non-ASCII char the installed tables might count in the run, so
`read` gives up.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..automata.determinize import DEAD, DeterminizedDfa, determinize
from ..automata.nfa import build_nfa
from ..frontend.regex_ast import (
    Assertion,
    CharClass,
    Concat,
    Group,
    Literal,
    RegexNode,
    Repeat,
    nodes,
)
from ..frontend.regex_parse import RegexError, parse_regex
from ..frontend.symbolic_charclass import CELL_SIZE, CELLS, SymbolicCharSet

# The product of the DFA of R HEAD[:-1] and HEAD's KMP automaton is explored up to this many
# (state, progress) pairs; past it the pattern keeps its regex reading (bounded compile time).
PRODUCT_PAIRS_MAX = 100_000


@dataclass(frozen=True)
class GroupSliceModel:
    """What `GroupSlice` is declared with: the group's name, HEAD, the ASCII chars of the W-run
    after it ("" for none), of the V-run before TAIL, TAIL, and of the U-run after TAIL."""

    name: str
    head: str
    skip: str
    before_tail: str
    tail: str
    after_tail: str


def group_slice(pattern: str) -> GroupSliceModel | None:
    """See the module docstring."""
    try:
        node = parse_regex(pattern)
    except RegexError:
        return None
    items = node.items if isinstance(node, Concat) else (node,)
    named = [
        index
        for index, item in enumerate(items)
        if isinstance(item, Group) and item.capturing and item.name is not None
    ]
    if len(named) != 1 or _named_groups(node) != 1 or _has_assertion(node):
        return None
    at = named[0]
    group = items[at]
    assert isinstance(group, Group) and group.name is not None
    value = _run(group.item)
    if value is None or value[1] < 1:
        return None
    value_chars = value[0]
    before = list(items[:at])
    skip_run = _run(before[-1]) if before else None
    if skip_run is not None:
        before.pop()
        if skip_run[0] & value_chars:
            return None  # B may begin with a W char: where W ends depends on backtracking
    head_length = 0
    while head_length < len(before) and isinstance(before[len(before) - 1 - head_length], Literal):
        head_length += 1
    if not head_length:
        return None
    head = "".join(item.char for item in before[len(before) - head_length :])  # type: ignore[attr-defined]
    rest = before[: len(before) - head_length]
    if rest and _may_contain(rest, head):
        return None
    tail_parts = _tail(list(items[at + 1 :]), value_chars)
    if tail_parts is None:
        return None
    before_tail, tail, after_tail = tail_parts
    skip = _ascii(skip_run[0]) if skip_run is not None else ""
    if skip_run is not None and not skip:
        return None  # a run without ASCII chars: `read` could not tell it is there
    return GroupSliceModel(
        group.name,
        head,
        skip,
        _ascii(before_tail) if before_tail else "",
        tail,
        _ascii(after_tail) if after_tail else "",
    )


def _tail(
    items: list[RegexNode], value_chars: SymbolicCharSet
) -> tuple[SymbolicCharSet | None, str, SymbolicCharSet | None] | None:
    """(the V-run's chars, TAIL, the U-run's chars) of the items after the group, or None when
    they are not `[V-run] [TAIL [U-run]]` with the conditions of the module docstring."""
    last = _run(items[-1]) if items else None
    after_tail = last[0] if last is not None else None
    if last is not None:
        items.pop()
    tail = ""
    while items and isinstance(items[-1], Literal):
        tail = items.pop().char + tail  # type: ignore[attr-defined]
    before_tail = None
    if items:
        run = _run(items.pop())
        if run is None or items:
            return None
        before_tail = run[0]
    if after_tail is not None and not tail:
        if before_tail is not None:
            return None  # two runs side by side
        before_tail, after_tail = after_tail, None  # the items were one run: a V-run
    if after_tail is not None and (_may_hold(after_tail, tail[-1]) or not _ascii(after_tail)):
        return None  # TAIL may end in a U char: where U begins depends on backtracking
    if before_tail is not None and (before_tail & value_chars or not _ascii(before_tail)):
        return None  # B may end in a V char
    return before_tail, tail, after_tail


def _run(node: RegexNode) -> tuple[SymbolicCharSet, int] | None:
    """(its chars, its least count) when `node` is a repeat of one char or class with no upper
    bound, else None."""
    if not isinstance(node, Repeat) or node.max is not None:
        return None
    item = node.item
    if isinstance(item, CharClass):
        return item.charset, node.min
    if isinstance(item, Literal):
        return SymbolicCharSet.chars(item.char), node.min
    return None


def _ascii(chars: SymbolicCharSet) -> str:
    members, _ = chars.components()
    return "".join(chr(cp) for lo, hi in members.ranges for cp in range(lo, hi + 1))


def _may_hold(chars: SymbolicCharSet, ch: str) -> bool:
    """Whether `ch` is in `chars` under some table (a non-ASCII char in any cell)."""
    if ch < "\x80":
        return ch in chars
    return any(cell * CELL_SIZE + ord(ch) in chars for cell in range(len(CELLS)))


def _named_groups(node: RegexNode) -> int:
    return sum(
        1
        for inner in nodes(node)
        if isinstance(inner, Group) and inner.capturing and inner.name is not None
    )


def _has_assertion(node: RegexNode) -> bool:
    return any(isinstance(inner, Assertion) for inner in nodes(node))


def _may_contain(prefix: list[RegexNode], head: str) -> bool:
    """Whether some string of `prefix` then HEAD[:-1] may contain HEAD (True also when that is
    not worked out within `PRODUCT_PAIRS_MAX` pairs, or the DFA is refused)."""
    node = Concat(tuple(prefix) + tuple(Literal(ch) for ch in head[:-1]))
    try:
        dfa = determinize(build_nfa(node))
    except RegexError:
        return True
    return _reaches(dfa, head)


def _reaches(dfa: DeterminizedDfa, head: str) -> bool:
    """Whether a run of `dfa` from its start can read HEAD: its product with HEAD's KMP automaton
    reaches the full-match progress. A class steps by each HEAD char it may hold under some
    table, and by any other char (progress back to 0), whether or not it holds one."""
    failure = [0] * (len(head) + 1)
    k = 0
    for i in range(1, len(head)):
        while k and head[i] != head[k]:
            k = failure[k]
        if head[i] == head[k]:
            k += 1
        failure[i + 1] = k

    def advance(progress: int, ch: str) -> int:
        while progress and head[progress] != ch:
            progress = failure[progress]
        return progress + 1 if head[progress] == ch else 0

    holds = [[ch for ch in dict.fromkeys(head) if _may_hold(c, ch)] for c in dfa.classes]
    start = (dfa.starts[0], 0)
    seen = {start}
    stack = [start]
    while stack:
        state, progress = stack.pop()
        for class_id, target in dfa.rows[state].items():
            if target == DEAD:
                continue
            for following in {0, *(advance(progress, ch) for ch in holds[class_id - 1])}:
                if following == len(head):
                    return True
                pair = (target, following)
                if pair not in seen:
                    if len(seen) >= PRODUCT_PAIRS_MAX:
                        return True
                    seen.add(pair)
                    stack.append(pair)
    return False
