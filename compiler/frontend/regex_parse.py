"""Parse a delimiter pattern into the regex AST, or say why the DFA cannot take it.

In:  a pattern string that `regex.compile(pattern, regex.DOTALL)` accepts (the spec
     validator compiles every pattern with `regex` first).
Out: `parse_regex(pattern) -> RegexNode` (regex_ast.py), with source spans; and
     `parse_relaxed`, the same with each look-ahead read as Empty (compiler/automata/region_automaton.py
     `relax` uses it to plan a fast path for a look-ahead fallback).
Errors:
  - `UnsupportedRegex(construct, span)`: valid `regex` syntax the DFA does not
    implement (lookaround, backreferences, atomic groups, possessive quantifiers,
    inline flags, \\p{..}, fuzzy matching, ...). The compiler then matches that one
    delimiter with `regex` at run time. Raised as soon as the construct is lexed.
  - `InvalidRegex(message, span)`: text the grammar cannot parse. For patterns that
    `regex` accepts this is a bug in regex.lark; tests/test_regex_parse.py generates
    patterns to show it does not happen.
Guaranteed: the AST means what `regex` means (VERSION0, DOTALL, no other flags). In
     particular each bracket class is checked against what `regex` itself matches
     with it on every code point, and a class where the two differ is unsupported.
"""

from __future__ import annotations

import functools
import pathlib
import re

import lark
from lark import Lark, Token, Transformer, v_args

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
    Span,
)
from .symbolic_charclass import ANY, DIGIT, SPACE, WORD, SymbolicCharSet, concrete, regex_charset

GRAMMAR_PATH = pathlib.Path(__file__).with_name("regex.lark")


class RegexError(ValueError):
    """A pattern the DFA pipeline does not take; `span` is the offending slice."""

    def __init__(self, message: str, span: Span, pattern: str | None = None) -> None:
        self.span = span
        self.pattern = pattern
        where = f" at {span[0]}..{span[1]}"
        if pattern is not None:
            where += f" ({pattern[span[0]:span[1]]!r} in {pattern!r})"
        super().__init__(message + where)


class UnsupportedRegex(RegexError):
    """Valid `regex` syntax that the DFA does not implement; fall back to `regex`."""

    def __init__(self, construct: str, span: Span, pattern: str | None = None) -> None:
        self.construct = construct
        super().__init__(f"unsupported regex construct: {construct}", span, pattern)


class InvalidRegex(RegexError):
    """Text the delimiter-regex grammar cannot parse."""


# --- escapes -------------------------------------------------------------------------

_CHAR_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_CLASS_ESCAPES = {
    "d": DIGIT,
    "D": ~DIGIT,
    "s": SPACE,
    "S": ~SPACE,
    "w": WORD,
    "W": ~WORD,
}
_ASSERTION_ESCAPES = {
    "A": "begin",
    "b": "word_boundary",
    "B": "not_word_boundary",
    "Z": "end_z",
    "z": "end_z",
}
_UNSUPPORTED_ESCAPES = {
    "g": "group reference \\g",
    "G": "search anchor \\G",
    "L": "named list \\L",
    "N": "named char \\N",
    "p": "Unicode property \\p",
    "P": "Unicode property \\P",
    "R": "line break \\R",
    "X": "grapheme cluster \\X",
    "K": "keep \\K",
    "m": "start of word \\m",
    "M": "end of word \\M",
    "h": "blank class \\h",
}


def _escaped_char(text: str) -> str:
    """The char an escape such as `\\x41`, `\\012`, `\\n` or `\\.` stands for."""
    body = text[1:]
    kind = body[0]
    if kind in "xuU" and len(body) > 1:
        code = int(body[1:], 16)
        if code > 0x10FFFF:
            raise ValueError(f"escape {text} is past the last code point")
        return chr(code)
    if kind.isdigit():
        # regex masks 3-digit octal escapes to 9 bits; \777 is the largest anyway.
        return chr(int(body, 8) & 0x1FF)
    if kind in _CHAR_ESCAPES:
        return _CHAR_ESCAPES[kind]
    return kind


_CLASS_MEMBER = r"\\(?:x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[0-7]{1,3}|.)|."
_RANGE = re.compile(f"({_CLASS_MEMBER})-({_CLASS_MEMBER})", re.DOTALL)


def _class_member(text: str) -> str:
    return _escaped_char(text) if text.startswith("\\") else text


def _describe_group(pattern: str, start: int) -> str:
    """Name the `(?...` construct that starts at `start`."""
    rest = pattern[start + 2 : start + 4]
    for prefix, name in (
        ("<=", "lookbehind"),
        ("<!", "negative lookbehind"),
        ("=", "lookahead"),
        ("!", "negative lookahead"),
        (">", "atomic group"),
        ("#", "comment group"),
        ("|", "branch reset group"),
        ("(", "conditional group"),
        ("P=", "named backreference"),
        ("P>", "group call"),
        ("&", "group call"),
        ("R", "recursion"),
    ):
        if rest.startswith(prefix):
            return name
    if rest[:1].isdigit() or (rest[:1] in ("+", "-") and rest[1:2].isdigit()):
        return "group call"
    return "inline flags"


class _Unsupported(Exception):
    """Raised from a lexer callback; parse_regex turns it into UnsupportedRegex."""

    def __init__(self, construct: str | None, token: Token) -> None:
        self.construct = construct
        self.token = token


def _unsupported_token(token: Token) -> Token:
    raise _Unsupported(None, token)


def _check_quantifier(token: Token) -> Token:
    if len(token) > 1 and token.endswith("+"):
        raise _Unsupported("possessive quantifier", token)
    return token


_UNSUPPORTED_TERMINALS = (
    "UNSUPPORTED_ESCAPE",
    "UNSUPPORTED_GROUP",
    "UNSUPPORTED_VERB",
    "UNSUPPORTED_FUZZY",
    "UNSUPPORTED_CLASS_ESCAPE",
    "UNSUPPORTED_POSIX_CLASS",
)


@functools.cache
def _parser(debug: bool = False, lookahead: bool = False) -> Lark:
    """The LALR parser; with debug=True lark logs any shift/reduce conflict (a test
    asserts there are none, so no reading is left to lark's shift preference). A
    look-ahead is unsupported as soon as it is lexed, but with `lookahead` (the relaxed
    mode of `parse_relaxed`) it is parsed as a group."""
    callbacks = {name: _unsupported_token for name in _UNSUPPORTED_TERMINALS}
    if not lookahead:
        callbacks["LOOKAHEAD_OPEN"] = _unsupported_token
    callbacks["QUANTIFIER"] = _check_quantifier
    return Lark(
        GRAMMAR_PATH.read_text(encoding="utf-8"),
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        lexer_callbacks=callbacks,
        debug=debug,
    )


def _describe_token(token: Token, pattern: str) -> str:
    if token.type in ("UNSUPPORTED_GROUP", "LOOKAHEAD_OPEN"):
        return _describe_group(pattern, _span(token)[0])
    if token.type == "UNSUPPORTED_VERB":
        return "backtracking verb (*...)"
    if token.type == "UNSUPPORTED_FUZZY":
        return "fuzzy constraint ('{' followed by a letter or digit that is not a quantifier)"
    if token.type == "UNSUPPORTED_POSIX_CLASS":
        return "POSIX class [:...:]"
    if token.type == "UNSUPPORTED_ESCAPE" and token[1].isdigit():
        return f"backreference {token}"
    return _UNSUPPORTED_ESCAPES.get(token[1], f"escape {token}")


# --- tree -> AST ---------------------------------------------------------------------


# An empty alternative before its parent has placed it.
_UNPLACED = Empty(span=(-1, -1))


def _span(meta) -> Span:
    """The (start, end) of a tree's meta or of a token (lark types them optional)."""
    return (meta.start_pos, meta.end_pos)


@v_args(meta=True)
class _ToAst(Transformer):
    """Lark tree -> RegexNode; one method per alias in regex.lark."""

    def __init__(self, pattern: str) -> None:
        super().__init__()
        self.pattern = pattern
        self.dropped: list[Empty] = []  # the relaxed mode's look-aheads, each read as Empty

    # -- structure ----------------------------------------------------------------

    def alternation(self, meta, children):
        # children: concat, BAR, concat, BAR, ...; an empty alternative stands
        # right after the bar before it (or right before the first bar).
        items = []
        for index in range(0, len(children), 2):
            item = children[index]
            if item is _UNPLACED:
                bar = children[index - 1] if index else children[1]
                position = bar.end_pos if index else bar.start_pos
                item = Empty(span=(position, position))
            items.append(item)
        return Alternation(tuple(items), span=_span(meta))

    def concat(self, meta, children):
        if not children:
            return _UNPLACED  # lark has no position for nothing; the parent knows it
        if len(children) == 1:
            return children[0]
        return Concat(tuple(children), span=_span(meta))

    def repeat(self, meta, children):
        item, token = children
        greedy = not token.endswith("?") or token == "?"
        text = token[:-1] if len(token) > 1 and token[-1] in "?+" else str(token)
        if text == "*":
            low, high = 0, None
        elif text == "+":
            low, high = 1, None
        elif text == "?":
            low, high = 0, 1
        else:
            first, comma, last = text[1:-1].partition(",")
            low = int(first or 0)
            high = (int(last) if last else None) if comma else low
        return Repeat(item, low, high, greedy, span=_span(meta))

    def group(self, meta, children):
        opener, item = children[0], children[1]
        if item is _UNPLACED:
            item = Empty(span=(opener.end_pos, opener.end_pos))
        if opener == "(":
            return Group(item, None, True, span=_span(meta))
        if opener == "(?:":
            return Group(item, None, False, span=_span(meta))
        name = opener[opener.index("<") + 1 : -1]
        return Group(item, name, True, span=_span(meta))

    def lookahead(self, meta, children):
        # Only the relaxed mode gets here (otherwise the lexer raised on the opener).
        node = Empty(span=_span(meta))
        self.dropped.append(node)
        return node

    # -- atoms --------------------------------------------------------------------

    def literal(self, meta, children):
        (token,) = children
        char = _escaped_char(token) if token.startswith("\\") else str(token)
        return Literal(char, span=_span(meta))

    def assertion(self, meta, children):
        (token,) = children
        kind = {"^": "begin", "$": "end"}.get(token) or _ASSERTION_ESCAPES[token[1]]
        return Assertion(kind, span=_span(meta))

    def char_class(self, meta, children):
        first = children[0]
        if first.type == "ANY_CHAR":
            return CharClass(ANY, span=_span(meta))
        if first.type == "CLASS_ESCAPE":
            return CharClass(_CLASS_ESCAPES[first[1]], span=_span(meta))
        # A bracket class: CLASS_OPEN, members..., "]" (the closing bracket is filtered).
        charset = SymbolicCharSet()
        for member in children[1:]:
            charset = charset | member
        if first == "[^":
            charset = ~charset
        span = _span(meta)
        self._check_with_regex(charset, span)
        return CharClass(charset, span=span)

    def _check_with_regex(self, charset: SymbolicCharSet, span: Span) -> None:
        """Fall back where `regex` reads the class differently from its documentation. The
        answer depends on the class's text alone (it spells `charset`) and costs a `regex` scan
        of every code point, so it is kept per text: a template repeats its classes."""
        text = self.pattern[span[0] : span[1]]
        agrees = _CLASS_AGREES.get(text)
        if agrees is None:
            agrees = regex_charset(text) == concrete(charset)
            _remember(_CLASS_AGREES, text, text, agrees)
        if not agrees:
            raise UnsupportedRegex(
                "class that regex matches differently from its members "
                "(e.g. [^\\s\\S] matches every char in regex)",
                span,
                self.pattern,
            )

    # -- class members (each returns a SymbolicCharSet) -------------------------------------

    def class_char(self, meta, children):
        (token,) = children
        return SymbolicCharSet.chars(_class_member(token))

    def class_bracket(self, meta, children):
        return SymbolicCharSet.chars("]")

    def class_escape(self, meta, children):
        (token,) = children
        return _CLASS_ESCAPES[token[1]]

    def class_range(self, meta, children):
        (token,) = children
        match = _RANGE.fullmatch(token)
        assert match is not None  # the grammar's range token is this pattern
        first, last = match.groups()
        lo, hi = ord(_class_member(first)), ord(_class_member(last))
        if lo > hi:
            raise InvalidRegex("bad class range", (token.start_pos, token.end_pos), self.pattern)
        return SymbolicCharSet.ranges((lo, hi))

    def unsupported(self, meta, children):  # pragma: no cover - the lexer raises first
        raise _Unsupported(None, children[0])


def parse_regex(pattern: str) -> RegexNode:
    """The AST of `pattern` (see the module docstring for the errors)."""
    return _parse(pattern, False)[0]


# Every stage that reads a delimiter's tree asks for it again (its DFA, its fast-path checks):
# trees are frozen, so each pattern is parsed once per mode. Bounded by the chars of the texts
# they hold (a tree takes memory with its pattern's length): cleared when full.
_MEMO_CHARS = 1_000_000
_PARSED: dict[tuple[str, bool], tuple[RegexNode, tuple[Empty, ...]]] = {}
_CLASS_AGREES: dict[str, bool] = {}
_memo_chars = 0


def _remember(memo: dict, key, text: str, value) -> None:
    global _memo_chars
    if _memo_chars + len(text) > _MEMO_CHARS:
        _PARSED.clear()
        _CLASS_AGREES.clear()
        _memo_chars = 0
    _memo_chars += len(text)
    memo[key] = value


def parse_relaxed(pattern: str) -> tuple[RegexNode, tuple[Empty, ...]]:
    """The AST of `pattern` *relaxed*: each look-ahead group, `(?=...)` or `(?!...)`, read as
    Empty (its body is parsed, and must be supported, but is then left out), and those Empty
    nodes (an inner one before the one around it). A look-ahead only restricts where a match may end, so every match of
    `pattern` is a match of the relaxed one, over the same span; the relaxed pattern has no
    look-ahead left, so it has a DFA unless some other construct is unsupported, which raises
    UnsupportedRegex as in `parse_regex`. Look-behind is not relaxed (it reads text before the
    start, which the fast path does not keep)."""
    return _parse(pattern, True)


def _parse(pattern: str, lookahead: bool) -> tuple[RegexNode, tuple[Empty, ...]]:
    parsed = _PARSED.get((pattern, lookahead))
    if parsed is None:
        parsed = _parse_once(pattern, lookahead)
        _remember(_PARSED, (pattern, lookahead), pattern, parsed)
    return parsed


def _parse_once(pattern: str, lookahead: bool) -> tuple[RegexNode, tuple[Empty, ...]]:
    try:
        tree = _parser(lookahead=lookahead).parse(pattern)
    except _Unsupported as unsupported:
        token = unsupported.token
        construct = unsupported.construct or _describe_token(token, pattern)
        raise UnsupportedRegex(construct, _span(token), pattern) from None
    except lark.exceptions.UnexpectedInput as error:
        position = getattr(error, "pos_in_stream", None)
        if position is None or not 0 <= position < len(pattern):
            position = len(pattern)  # the pattern ended too early
        end = min(position + 1, len(pattern))
        raise InvalidRegex(
            "the delimiter-regex grammar cannot parse this pattern", (position, end), pattern
        ) from None
    builder = _ToAst(pattern)
    try:
        ast = builder.transform(tree)
    except lark.exceptions.VisitError as error:
        if isinstance(error.orig_exc, RegexError):
            raise error.orig_exc from None
        # A bad escape value (\U00110000): `regex` rejects it too.
        if isinstance(error.obj, Token):
            span = _span(error.obj)
        elif not error.obj.meta.empty:
            span = _span(error.obj.meta)
        else:
            span = (0, len(pattern))
        raise InvalidRegex(str(error.orig_exc), span, pattern) from None
    return (Empty(span=(0, 0)) if ast is _UNPLACED else ast), tuple(builder.dropped)
