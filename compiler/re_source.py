"""Regex AST -> a pattern the standard `re` module reads exactly as `regex` reads the original.

In: a `RegexNode` from regex_parse (it means what `regex` means: VERSION0, DOTALL, no flags).
Out: `re_source(node)`, a pattern string for `re.compile(source)` (no flags).

Why: a delimiter with named groups is matched by its DFA, which finds the span but not the groups;
one backtracking match over that span reads them. `regex` takes 4x longer than `re` for the
`.*?` of an xml-inline tag, and the groups are all it is needed for. Both engines are
backtracking, leftmost-first, with the same greedy and lazy repeats, so what can differ is only
what a class or an assertion means. Here every class is spelled out code point by code point from
the set `regex` gave it (`\\s` leaves out `\\x1c`-`\\x1f` in `regex`, not in `re`), `.` is the
whole range (DOTALL), and word boundaries become look-arounds over `regex`'s word set. What is
left (`^`, `$`, `\\Z`, groups, alternation, repeats) means the same in both.

Guaranteed: the runtime still checks that the `re` match ends where the DFA's does; the tests
compare the groups of both engines on generated patterns and texts.
"""

from __future__ import annotations

from chatparse.runtime.charclass import WORD, CharSet

from .regex_ast import (
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

_SPECIAL = set(r"\.^$*+?{}[]|()-#&~ ")  # escaped outside and inside classes, to be safe
_NAMED_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


class NotForRe(ValueError):
    """A pattern `re` cannot take as it is: a group name used twice (`regex` allows that)."""


def re_source(node: RegexNode) -> str:
    """The pattern for `re`. Raises NotForRe when `re` cannot take it, TypeError for a node this
    printer does not know."""
    names = [n.name for n in _walk(node) if isinstance(n, Group) and n.name is not None]
    if len(names) != len(set(names)):
        raise NotForRe(f"group names used twice: {sorted({n for n in names if names.count(n) > 1})}")
    return _source(node)


def _walk(node: RegexNode):
    yield node
    for child in getattr(node, "items", ()):
        yield from _walk(child)
    if isinstance(node, (Repeat, Group)):
        yield from _walk(node.item)


def _source(node: RegexNode) -> str:
    if isinstance(node, Empty):
        return "(?:)"
    if isinstance(node, Literal):
        return _char(node.char)
    if isinstance(node, CharClass):
        return _class(node.charset)
    if isinstance(node, Concat):
        return "".join(_atom(item) if isinstance(item, Alternation) else _source(item) for item in node.items)
    if isinstance(node, Alternation):
        return "|".join(_source(item) for item in node.items)
    if isinstance(node, Repeat):
        return _atom(node.item) + _quantifier(node)
    if isinstance(node, Group):
        inner = _source(node.item)
        if not node.capturing:
            return f"(?:{inner})"
        if node.name is not None:
            return f"(?P<{node.name}>{inner})"
        return f"({inner})"
    if isinstance(node, Assertion):
        return _ASSERTIONS[node.kind]
    raise TypeError(f"re_source: unknown node {type(node).__name__}")


def _atom(node: RegexNode) -> str:
    """`node` as one unit that a quantifier or a neighbour cannot split."""
    if isinstance(node, (Literal, CharClass, Group)):
        return _source(node)
    return f"(?:{_source(node)})"


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


def _class(charset: CharSet) -> str:
    if not charset.ranges:
        return "[^\\x00-\\U0010ffff]"  # matches nothing
    body = "".join(_char(chr(lo)) if lo == hi else f"{_char(chr(lo))}-{_char(chr(hi))}" for lo, hi in charset.ranges)
    return f"[{body}]"


_WORD = _class(WORD)
_ASSERTIONS = {
    "begin": "^",  # without MULTILINE: the start of the string only, in both
    "end": "$",  # the end, or before a final newline, in both
    "end_z": "\\Z",
    "word_boundary": f"(?:(?<={_WORD})(?!{_WORD})|(?<!{_WORD})(?={_WORD}))",
    "not_word_boundary": f"(?:(?<={_WORD})(?={_WORD})|(?<!{_WORD})(?!{_WORD}))",
}
