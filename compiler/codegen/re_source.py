"""Regex AST -> a pattern the standard `re` module reads exactly as `regex` reads the original.

In: a `RegexNode` from regex_parse (it means what `regex` means: VERSION0, DOTALL, no flags).
Out: `re_parts(node)`, the pattern for `re.compile` (no flags) in pieces: source text, and the
classes whose non-ASCII members the installed `regex`'s tables decide, left as their sets for the
runtime to spell (`Dfa(anchored=)`, `Dfa(groups_parts=)`); with the group renames it needs.

Why: a delimiter with named groups is matched by its DFA, which finds the span but not the groups;
one backtracking match over that span reads them, and a whole-text search may match at a
candidate start with `re` where the compiler proved that linear. `regex` takes 4x longer than `re`
for the `.*?` of an xml-inline tag. Both engines are backtracking, leftmost-first, with the same
greedy and lazy repeats, so what can differ is only what a class or an assertion means. Here every
class is spelled out code point by code point (`\\s` leaves out `\\x1c`-`\\x1f` in `regex`, not in
`re`), `.` is the whole range (DOTALL), and a class of the tables (`\\s`, `[^\\s<]`) is a piece of
its own; word boundaries keep `regex`. What is left (`^`, `$`, `\\Z`, groups, alternation,
repeats) means the same in both.

Guaranteed: the runtime still checks that the `re` match ends where the DFA's does; the tests
compare the groups of both engines on generated patterns and texts.
"""

from __future__ import annotations

from typing import cast

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
from ..frontend.symbolic_charclass import SymbolicCharSet

_SPECIAL = set(r"\.^$*+?{}[]|()-#&~ ")  # escaped outside and inside classes, to be safe
_NAMED_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


class NotForRe(ValueError):
    """A pattern `re` cannot take as it is: a group name used twice where both groups can take
    part in one match (`regex` then keeps the later capture)."""


def _renames(node: RegexNode) -> tuple[dict[int, str], dict[str, str]]:
    """{id(group): its new name} and {new name: name}; raises NotForRe.

    `regex` lets one name stand for several groups; `re` does not. Where the groups of one name
    sit in different branches of an alternation, at most one of them takes part in a match, so
    each after the first gets a fresh name and the reader maps it back (harmony's two ways into
    a tool call both capture `name`). Anywhere else raises NotForRe.
    """
    groups = [
        (path, n) for path, n in walk_paths(node, ()) if isinstance(n, Group) and n.name is not None
    ]
    taken = {n.name for _, n in groups}
    renames: dict[int, str] = {}  # id(group) -> its new name
    aliases: dict[str, str] = {}
    by_name: dict[str, list] = {}
    for path, group in groups:
        by_name.setdefault(cast(str, group.name), []).append((path, group))  # named ones only
    for name, members in by_name.items():
        for i, (path, group) in enumerate(members):
            for other_path, _ in members[:i]:
                if not _exclusive(path, other_path):
                    raise NotForRe(
                        f"group name {name!r} is used twice where both can take part in one match"
                    )
            if i:
                fresh = f"{name}_{i}"
                while fresh in taken:
                    fresh += "_"
                taken.add(fresh)
                renames[id(group)] = fresh
                aliases[fresh] = name
    return renames, aliases


# Where `re_parts` puts a class that depends on the tables, before splitting there: a char the
# spelling never holds as it is (`_char` escapes every unprintable char).
_TABLE_CLASS = "\x00"


def re_parts(
    node: RegexNode, lookaheads: dict[int, tuple[str, RegexNode]] | None = None
) -> tuple[tuple[str | SymbolicCharSet, ...], dict[str, str]]:
    """The pattern for `re` with each class that depends on `regex`'s Unicode tables left as its
    set (`\\s`, `[^\\s<]`): the runtime spells those from the tables it measures, so the
    pattern reads any text, and its groups, exactly as `regex` does. With {new name: name} for
    the groups renamed (see `_renames`, which raises NotForRe).

    `lookaheads` puts back the look-aheads of a relaxed AST (`parse_relaxed`, which reads each as
    an Empty node): {id(that Empty): ("(?=" or "(?!", the AST of its body)}. A body holds no named
    group (the caller checks), so the renames are the node's own."""
    renames, aliases = _renames(node)
    tables: list = []
    source = _source(node, renames, tables, lookaheads or {})
    pieces = source.split(_TABLE_CLASS)
    parts: list[str | SymbolicCharSet] = []
    for index, piece in enumerate(pieces):
        if piece:
            parts.append(piece)
        if index < len(tables):
            parts.append(tables[index])
    return tuple(parts), aliases


def walk_paths(node: RegexNode, path: tuple):
    """(path, node) for every node; a path is the (node, child index) steps from the root."""
    yield path, node
    children = getattr(node, "items", None)
    if children is None and isinstance(node, (Repeat, Group)):
        children = (node.item,)
    for index, child in enumerate(children or ()):
        yield from walk_paths(child, path + ((node, index),))


def _exclusive(path: tuple, other: tuple) -> bool:
    """Whether at most one of two nodes can take part in a match: they lie in different branches
    of one alternation (their first fork) that no repeat encloses (`(?:(a)|(b))+` takes both)."""
    for (node, index), (other_node, other_index) in zip(path, other):
        if node is not other_node:
            return False
        if isinstance(node, Repeat) and node.max != 1:
            return False
        if index != other_index:
            return isinstance(node, Alternation)
    return False


def _source(node: RegexNode, renames: dict[int, str], tables: list, lookaheads: dict) -> str:
    if isinstance(node, Empty):
        found = lookaheads.get(id(node))
        if found is not None:
            opener, body = found
            return f"{opener}{_source(body, renames, tables, lookaheads)})"
        return "(?:)"
    if isinstance(node, Literal):
        return _char(node.char)
    if isinstance(node, CharClass):
        return _class(node.charset, tables)
    if isinstance(node, Concat):
        return "".join(
            (
                _atom(item, renames, tables, lookaheads)
                if isinstance(item, Alternation)
                else _source(item, renames, tables, lookaheads)
            )
            for item in node.items
        )
    if isinstance(node, Alternation):
        return "|".join(_source(item, renames, tables, lookaheads) for item in node.items)
    if isinstance(node, Repeat):
        return _atom(node.item, renames, tables, lookaheads) + _quantifier(node)
    if isinstance(node, Group):
        inner = _source(node.item, renames, tables, lookaheads)
        if not node.capturing:
            return f"(?:{inner})"
        if node.name is not None:
            return f"(?P<{renames.get(id(node), node.name)}>{inner})"
        return f"({inner})"
    if isinstance(node, Assertion):
        return _assertion(node.kind)
    raise TypeError(f"re_source: unknown node {type(node).__name__}")


def _atom(node: RegexNode, renames: dict[int, str], tables: list, lookaheads: dict) -> str:
    """`node` as one unit that a quantifier or a neighbour cannot split."""
    if isinstance(node, (Literal, CharClass, Group)):
        return _source(node, renames, tables, lookaheads)
    return f"(?:{_source(node, renames, tables, lookaheads)})"


def _quantifier(node: Repeat) -> str:
    lazy = "" if node.greedy else "?"
    shorthand = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((node.min, node.max))
    if shorthand:
        return shorthand + lazy
    if node.max == node.min:
        return f"{{{node.min}}}{lazy}"
    upper = "" if node.max is None else str(node.max)
    return f"{{{node.min},{upper}}}{lazy}"


def _char(ch: str) -> str:
    """One char, escaped where `re` could read it as syntax (or where it is not printable)."""
    code = ord(ch)
    if ch in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[ch]
    if ch in _SPECIAL:
        return "\\" + ch
    if "!" <= ch <= "~":
        return ch
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _class(charset: SymbolicCharSet, tables: list) -> str:
    real = charset.literal()
    if real is None:
        # `\\s`, `[^\\s<]`: which non-ASCII chars they hold is the installed `regex`'s to say,
        # so the runtime spells it (`re_parts`).
        tables.append(charset)
        return _TABLE_CLASS
    if not real.ranges:
        return "[^\\x00-\\U0010ffff]"  # matches nothing
    body = "".join(
        _char(chr(lo)) if lo == hi else f"{_char(chr(lo))}-{_char(chr(hi))}"
        for lo, hi in real.ranges
    )
    return f"[{body}]"


_ASSERTIONS = {
    "begin": "^",  # without MULTILINE: the start of the string only, in both
    "end": "$",  # the end, or before a final newline, in both
    "end_z": "\\Z",
}


def _assertion(kind: str) -> str:
    if kind not in _ASSERTIONS:
        # `\b` and `\B` ask whether a char is in `\w`: the installed `regex`'s tables again.
        raise NotForRe(f"assertion {kind} depends on regex's Unicode tables")
    return _ASSERTIONS[kind]
