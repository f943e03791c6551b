r"""Regex AST -> whether one backtracking attempt at a fixed start runs in linear time.

In: a `RegexNode` (regex_ast.py). Out: `backtracks_linearly(node)`, True only when it is proved.

Why: a whole-text search runs one anchored attempt at each place a match can start (search.py).
The DFA steps such an attempt in Python, a few hundred nanoseconds a char; the standard `re`
module does it in C. A backtracking engine may take exponential time (`(a|a)*b`) or polynomial
time (`\s*\s*x`, `a*a*a*b`) on one attempt, so the runtime hands an attempt to `re` only for
patterns proved safe here; the others stay on the DFA.

How: a backtracking attempt walks the paths of the pattern's position automaton (Glushkov: a
state per char or class occurrence, no empty moves) over prefixes of the text, one step a char.
If the automaton is *finitely ambiguous* (no text has more than a fixed number of paths from the
start), each prefix of the text has boundedly many paths, so the attempt takes time linear in the
chars it reads. Finite ambiguity is decided on the automaton squared: a pair of positions that two
paths over the same text reach together. Two different paths that run side by side for ever would
go round a cycle of pairs with different positions (an exponential or a polynomial degree of
ambiguity, Weideman et al., "Analyzing matching time behavior of backtracking regular expression
matchers by using ambiguity of NFA", 2016, EDA and IDA); so the pattern is accepted when no pair of
different positions reachable from the start lies on a cycle. Classes intersect symbolically
(symbolic_charclass.py: "may share a char under some Unicode tables"), and assertions are read as
always passing, which only adds paths: both err on the side of refusing.

Refused besides: a repeat whose body can match empty (`regex` and `re` end such a loop by rules
of their own; the DFA path keeps `regex`'s), and patterns past the size caps below.
"""

from __future__ import annotations

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
    nodes,
)
from ..frontend.symbolic_charclass import SymbolicCharSet

# Positions (counted repeats are written out) and pairs past which a pattern is not analysed:
# it then stays on the DFA, whose cost these caps keep bounded for an untrusted template.
MAX_POSITIONS = 600
MAX_PAIRS = 40_000
MAX_CHECKS = 400_000  # pairs of successors looked at


class _TooLarge(Exception):
    pass


class _Refused(Exception):
    pass


class _Glushkov:
    """The position automaton: `charsets[p]` is what position p reads (position 0 is the start
    and reads nothing), `follow[p]` the positions a path can take next."""

    def __init__(self) -> None:
        self.charsets: list[SymbolicCharSet | None] = [None]
        self.follow: list[set[int]] = [set()]

    def position(self, charset: SymbolicCharSet) -> int:
        if len(self.charsets) > MAX_POSITIONS:
            raise _TooLarge
        self.charsets.append(charset)
        self.follow.append(set())
        return len(self.charsets) - 1

    def build(self, node: RegexNode) -> tuple[bool, set[int], set[int]]:
        """(nullable, first positions, last positions) of a fresh copy of `node`."""
        if isinstance(node, (Empty, Assertion)):
            return True, set(), set()
        if isinstance(node, Literal):
            p = self.position(SymbolicCharSet.chars(node.char))
            return False, {p}, {p}
        if isinstance(node, CharClass):
            p = self.position(node.charset)
            return False, {p}, {p}
        if isinstance(node, Group):
            return self.build(node.item)
        if isinstance(node, Concat):
            return self._sequence([lambda item=item: self.build(item) for item in node.items])
        if isinstance(node, Alternation):
            nullable = False
            first: set[int] = set()
            last: set[int] = set()
            for item in node.items:
                n, f, la = self.build(item)
                nullable, first, last = nullable or n, first | f, last | la
            return nullable, first, last
        if isinstance(node, Repeat):
            return self._repeat(node)
        raise _Refused(type(node).__name__)

    def _sequence(self, parts) -> tuple[bool, set[int], set[int]]:
        nullable = True
        first: set[int] = set()
        last: set[int] = set()
        for part in parts:
            n, f, la = part()
            for p in last:
                self.follow[p] |= f
            if nullable:
                first |= f
            last = last | la if n else la
            nullable = nullable and n
        return nullable, first, last

    def _repeat(self, node: Repeat) -> tuple[bool, set[int], set[int]]:
        item = node.item

        def copy():
            nullable, first, last = self.build(item)
            if nullable:
                raise _Refused("a repeat whose body can match empty")
            return nullable, first, last

        def star():
            _, first, last = copy()
            for p in last:
                self.follow[p] |= first
            return True, first, last

        parts = [copy] * node.min
        upper = node.max
        if upper is None:
            parts.append(star)
        elif upper > node.min:
            parts.append(lambda: self._optional(copy, upper - node.min))
        return self._sequence(parts)

    def _optional(self, copy, count: int) -> tuple[bool, set[int], set[int]]:
        """`count` optional copies, each only after the one before: (x(x(x)?)?)?, as an engine
        counts them (built in a loop: a count of hundreds must not recurse)."""
        first: set[int] = set()
        last: set[int] = set()
        previous: set[int] | None = None
        for _ in range(count):
            _, copy_first, copy_last = copy()  # never nullable (`copy` refuses that)
            if previous is None:
                first = copy_first
            else:
                for p in previous:
                    self.follow[p] |= copy_first
            last = last | copy_last
            previous = copy_last
        return True, first, last


def backtracks_linearly(node: RegexNode) -> bool:
    """Whether one backtracking attempt of `node` at a fixed start takes time linear in the
    chars it reads (see the module docstring); False when not proved."""
    automaton = _Glushkov()
    try:
        _, first, _ = automaton.build(node)
    except (_Refused, _TooLarge, RecursionError):  # RecursionError: groups nested too deep
        return False
    automaton.follow[0] = first
    return _finitely_ambiguous(automaton)


def _finitely_ambiguous(automaton: _Glushkov) -> bool:
    """Whether the number of paths over a text from the start is bounded: no EDA (a cycle of
    pairs through a pair of equal positions and one of different ones) and no IDA (a pair of
    different positions p, q on a cycle of pairs, reached from (p, p)), Weber and Seidl's
    criteria, on the pairs two paths over one text reach together."""
    charsets, follow = automaton.charsets, automaton.follow
    meets: dict[tuple[int, int], bool] = {}

    def may_meet(p: int, q: int) -> bool:
        key = (p, q) if p < q else (q, p)
        found = meets.get(key)
        if found is None:
            a, b = charsets[p], charsets[q]
            found = meets[key] = a is not None and b is not None and bool(a & b)
        return found

    edges: dict[tuple[int, int], list[tuple[int, int]]] = {}
    stack = [(0, 0)]
    edges[(0, 0)] = []
    checks = 0
    while stack:
        pair = stack.pop()
        p, q = pair
        checks += len(follow[p]) * len(follow[q])
        if checks > MAX_CHECKS:
            return False
        successors = [
            (a, b) for a in sorted(follow[p]) for b in sorted(follow[q]) if a == b or may_meet(a, b)
        ]
        edges[pair] = successors
        for successor in successors:
            if successor not in edges:
                if len(edges) >= MAX_PAIRS:
                    return False
                edges[successor] = []
                stack.append(successor)
    components = _components(edges)
    cyclic: set[tuple[int, int]] = set()
    for component in components:
        if len(component) > 1 or component[0] in edges[component[0]]:
            if any(a == b for a, b in component) and any(a != b for a, b in component):
                return False  # EDA: two different cycles through one position, one label
            cyclic.update(pair for pair in component if pair[0] != pair[1])
    # IDA: p -> p, p -> q and q -> q over one text, p != q; then (p, q) is on a cycle of pairs
    # and reached from (p, p). Each such pair is asked (the graph holds both orders of a pair),
    # and where it is, the triples say whether one text does all three (`_one_text_does_all`):
    # `\s*(?:\S.*?\S)?\s*<` reaches (the `.` loop, the second `\s` loop) from the `.` loop
    # itself, over a text that ends in spaces, but the `.` loop gets to that `\s` loop only over
    # a char that is not a space, which the `\s` loop cannot read.
    budget = [MAX_CHECKS - checks]
    for p, q in sorted(cyclic):
        if (p, p) in edges and (p, q) in _reachable(edges, (p, p)):
            if _one_text_does_all(automaton, p, q, budget):
                return False
    return True


def _one_text_does_all(automaton: _Glushkov, p: int, q: int, budget: list[int]) -> bool:
    """Whether one text takes paths p -> p, p -> q and q -> q (an IDA): (q, q) reached from
    (p, q) on the triples of positions three paths over one text reach together, from (p, p, q)
    to (p, q, q). True (refusing) when the search runs past `budget` (what is left of
    MAX_CHECKS, shared by the pairs asked)."""
    charsets, follow = automaton.charsets, automaton.follow
    start, goal = (p, p, q), (p, q, q)
    seen = {start}
    stack = [start]
    while stack:
        a, b, c = stack.pop()
        for x in follow[a]:
            for y in follow[b]:
                budget[0] -= len(follow[c])
                if budget[0] < 0:
                    return True
                shared = charsets[x] & charsets[y]  # type: ignore[operator]
                if not shared:
                    continue
                for z in follow[c]:
                    triple = (x, y, z)
                    if triple in seen or not (shared & charsets[z]):  # type: ignore[operator]
                        continue
                    if triple == goal:
                        return True
                    if len(seen) >= MAX_PAIRS:
                        return True
                    seen.add(triple)
                    stack.append(triple)
    return False


def _reachable(edges: dict, root: tuple[int, int]) -> set[tuple[int, int]]:
    seen = {root}
    stack = [root]
    while stack:
        for successor in edges[stack.pop()]:
            if successor not in seen:
                seen.add(successor)
                stack.append(successor)
    return seen


def _components(edges: dict[tuple[int, int], list[tuple[int, int]]]) -> list[list[tuple[int, int]]]:
    """Strongly connected components, iteratively (a long literal makes a long chain)."""
    index: dict = {}
    low: dict = {}
    on_stack: set = set()
    stack: list = []
    components: list = []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(edges[successor])))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(component)
    return components


def linear_spelling(node: RegexNode) -> RegexNode | None:
    """`node`, or a spelling of it that one `re` attempt reads with the same result, when one
    backtracking attempt of that spelling is proved linear; None otherwise.

    Two rewrites, each of runs that are polynomial on their own as written:

    - `C* (?:A)? C* REST` -> `C* (?:A C*)? REST` (kimi_k2's `\\s*(?:<|section|>)?
      \\s*<|call|>...`). It gives the same first success when no char of C can begin A or REST,
      A and REST match no empty text and A holds no group: an attempt either takes A where the
      first run ends (the same steps in both) or goes on to REST there; every attempt after that
      starts A or REST inside the run, on a char of C, and fails at once, in both spellings, and
      REST from one position gives one result, whatever came before it.
    - `X+ Y* REST` -> `X+ (?:D Y*)? REST`, where X is a subset of Y and D is Y less X (gpt_oss's
      `(?P<name>[^\\s<]+)[^<]*<|constrain|>...`), also in each alternative of a pattern that is
      an alternation. It gives the same first success, groups included, when REST is empty or
      matches no empty text and no char of X can begin it: the greedy X run takes every char of
      X, and the char after it is not in X, so where the original's Y run goes on it is a char
      of D, then Y's; REST cannot start inside the X run (on a char of X), so an attempt that
      gives back chars of the X run fails in both spellings, and the first success of both is
      the X run whole, then the same Y run and REST.
    - `A* (?P<v>X*?) A* REST` -> `A* (?:(?P<v>)|(?P<v>D(?:X*?D)??)A*) REST`, D = X less A (xml-inline
      tags: `>\\s*(?P<value>.*?)\\s*</parameter>`); see `trim_runs_around_a_lazy_group`.
    """
    if backtracks_linearly(node):
        return node
    for rewrite in (
        _merge_runs_around_an_optional,
        _split_run_before_a_wider_run,
        trim_runs_around_a_lazy_group,
    ):
        rewritten = rewrite(node)
        if rewritten is not node and backtracks_linearly(rewritten):
            return rewritten
    return None


def _merge_runs_around_an_optional(node: RegexNode) -> RegexNode:
    if not isinstance(node, Concat):
        return node
    items = list(node.items)
    changed = False
    i = 0
    while i + 3 < len(items):
        run, optional, again = items[i], items[i + 1], items[i + 2]
        chars = _run_chars(run)
        rest = Concat(tuple(items[i + 3 :]))
        if (
            chars is not None
            and again == run
            and isinstance(optional, Repeat)
            and (optional.min, optional.max, optional.greedy) == (0, 1, True)
            and not _holds_a_group(optional.item)
            and _begins_outside(optional.item, chars)
            and _begins_outside(rest, chars)
        ):
            merged = Repeat(Concat((optional.item, again)), 0, 1, True)
            items[i + 1 : i + 3] = [merged]
            changed = True
        i += 1
    return Concat(tuple(items), span=node.span) if changed else node


def _split_run_before_a_wider_run(node: RegexNode) -> RegexNode:
    """`X+ Y* REST` -> `X+ (?:D Y*)? REST` (see `linear_spelling`), in a concatenation or in
    each alternative of an alternation that is the whole pattern."""
    if isinstance(node, Alternation):
        items = tuple(_split_in_sequence(item) for item in node.items)
        if all(new is old for new, old in zip(items, node.items, strict=True)):
            return node
        return Alternation(items, span=node.span)
    return _split_in_sequence(node)


def _split_in_sequence(node: RegexNode) -> RegexNode:
    if not isinstance(node, Concat):
        return node
    items = list(node.items)
    changed = False
    for i in range(len(items) - 1):
        narrow = _greedy_run_chars(items[i])
        wide = _run_chars(items[i + 1])
        if narrow is None or wide is None or narrow - wide:  # X is not within Y
            continue
        extra = wide - narrow
        rest = items[i + 2 :]
        if not extra or (rest and not _begins_outside(Concat(tuple(rest)), narrow)):
            continue
        items[i + 1] = Repeat(Concat((CharClass(extra), items[i + 1])), 0, 1, True)
        changed = True
    return Concat(tuple(items), span=node.span) if changed else node


def _greedy_run_chars(node: RegexNode) -> SymbolicCharSet | None:
    """The class of a greedy unbounded run `X+` or `X*`, in a group or not, else None."""
    while isinstance(node, Group):
        node = node.item
    if (
        isinstance(node, Repeat)
        and node.max is None
        and node.greedy
        and isinstance(node.item, CharClass)
    ):
        return node.item.charset
    return None


def _run_chars(node: RegexNode) -> SymbolicCharSet | None:
    """The class of a greedy run `C*`, else None."""
    if (
        isinstance(node, Repeat)
        and (node.min, node.max, node.greedy) == (0, None, True)
        and isinstance(node.item, CharClass)
    ):
        return node.item.charset
    return None


def _holds_a_group(node: RegexNode) -> bool:
    return any(isinstance(inner, Group) and inner.capturing for inner in nodes(node))


def _begins_outside(node: RegexNode, charset: SymbolicCharSet) -> bool:
    """Whether `node` matches no empty text and no char of `charset` can begin a match of it."""
    automaton = _Glushkov()
    try:
        nullable, first, _ = automaton.build(node)
    except (_Refused, _TooLarge, RecursionError):
        return False
    if nullable:
        return False
    return not any(bool(automaton.charsets[p] & charset) for p in first)  # type: ignore[operator]


def _lazy_values_between_runs(items: tuple[RegexNode, ...] | list[RegexNode]):
    """(i, A, the value's group or None, the lazy `X*?`) for each `A* (?P<v>X*?) A*` at items[i:i+3]:
    a greedy run of one class A, a lazy repeat of one class (in a group, or bare), the same run."""
    for i, (before, value, after) in enumerate(zip(items, items[1:], items[2:])):
        run = _run_chars(before)
        if run is None or after != before:
            continue
        group: Group | None = None
        lazy = value
        if isinstance(value, Group):
            group, lazy = value, value.item
        if (
            isinstance(lazy, Repeat)
            and (lazy.min, lazy.max, lazy.greedy) == (0, None, False)
            and isinstance(lazy.item, CharClass)
        ):
            yield i, run, group, lazy


def has_a_lazy_value_between_runs(node: RegexNode) -> bool:
    """Whether `node` (a concatenation) holds `A* (?P<v>X*?) A*` with X sharing chars with A, the
    shape whose backtracking is quadratic over a long run of A's chars, whatever follows: the
    shape `trim_runs_around_a_lazy_group` rewrites where what follows lets it."""
    if not isinstance(node, Concat):
        return False
    return any(
        bool(lazy.item.charset & run) for _, run, _, lazy in _lazy_values_between_runs(node.items)
    )


def trim_runs_around_a_lazy_group(node: RegexNode) -> RegexNode:
    """`A* (?P<v>X*?) A* REST` -> `A* (?:(?P<v>)|(?P<v>D(?:X*?D)??)A*) REST`, D = X less A, in a
    concatenation (the group may also be non-capturing, or absent): the value lazily between two
    greedy runs of one class A, where REST matches no empty text and no char of A can begin it.

    The same first success, groups included. Lazily, the written value tries every length from
    0 up, each followed by the same `A* REST`; the rewrite tries the same lengths in the same
    order but skips values that begin or end with a char of A, and none of those can be the
    first success. One that ends with such a char c: the value without c, then c taken by the
    second run, is a success one length earlier. One that begins with it: the first run is
    greedy, so the value begins where that run ended, on a char outside A, unless the attempt
    with the whole first run failed for every value; then any success with a shorter first run
    gives one with the whole run (drop the value's chars that run would take, or, if the value
    and the second run lie inside it, REST would begin on a char of A, which it cannot). The
    written form backtracks in quadratic time on a value of many chars of A (`<t>a` + 10,000
    spaces + `b</t>`: every length of the value runs the second `A*` over the spaces again);
    in the rewrite only a value that ends outside A runs it, and the empty value is one branch,
    so the two runs never read one text both ways.
    """
    if not isinstance(node, Concat):
        return node
    items = list(node.items)
    for i, run, group, lazy in _lazy_values_between_runs(items):
        if i + 3 >= len(items):
            continue  # no REST
        if group is not None and group.capturing and group.name is None:
            continue  # a numbered group: a second copy would renumber the groups after it
        after = items[i + 2]
        inner = lazy.item.charset - run
        if not inner or not _begins_outside(Concat(tuple(items[i + 3 :])), run):
            continue
        ends = CharClass(inner)
        longer = Concat((ends, Repeat(Concat((lazy, ends)), 0, 1, False)))
        name = group.name if group is not None and group.capturing else None
        empty: RegexNode = Empty() if name is None else Group(Empty(), name=name)
        filled: RegexNode = longer if name is None else Group(longer, name=name)
        items[i + 1 : i + 3] = [
            Group(Alternation((empty, Concat((filled, after)))), capturing=False)
        ]
        return Concat(tuple(items), span=node.span)
    return node
