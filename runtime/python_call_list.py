"""The `python-call-list` content parser: pythonic tool calls such as `[f(city="Paris", days=3)]`.

In:  a region's body text (the content args are ignored, as by the reference).
Out: `[{"name": str, "arguments": dict}, ...]`, one entry per call, in order.
Guaranteed: the value, or the ValueError and its exact message, of the reference's
`content_parsers._python_call_list` (transformers 5.24 and 5.25), in time linear in the text,
whatever the text: nesting stops at the reference's limit with its error, and strings (ten
megabytes, unterminated, full of escapes) are read in one pass.

The grammar, which the reference's docs call deliberately strict so that other implementations
can match it exactly:

    call-list := "[" [call ("," call)*] "]"           whitespace is " \\t\\n\\r", anywhere between
    call      := NAME "(" [argument ("," argument)*] ")"          tokens; no trailing commas
    argument  := NAME "=" value                                   keyword arguments only
    value     := string | number | list | dict | True | False | None | true | false | null
    list      := "[" [value ("," value)*] "]"         lists and dicts nest at most 100 deep
    dict      := "{" [string ":" value ("," string ":" value)*] "}"      string keys only
    NAME      := [A-Za-z_][A-Za-z0-9_]* ([-.][A-Za-z0-9_]+)*
    number    := the JSON number; an integer must lie within +-(2^53 - 1), a float be finite
    string    := '...' or "..." on one line; escapes \\\\ \\' \\" \\/ \\b \\f \\n \\r \\t \\uXXXX
                 (a surrogate pair as two \\u escapes); no lone surrogate, raw or escaped

An error is `python-call-list: <what> at position <n>.` then the content's repr on the next line.
Where the reference reports it decides <n>, and this reader keeps to it: after the whitespace
in front of the token it wanted; at the opening quote for anything wrong inside a string; at the
`[` or `{` one level too deep; at the first char of a number out of range; just past the `)` or
`}` for a repeated name (the reference checks names once the call or dict is complete, so an
error further inside it is reported first). Inside a string, an unterminated string beats a raw
lone surrogate, which beats the first bad escape.

Alternatives considered: `ast.parse` reports its own errors at its own positions, recurses per
nesting level (and fails earlier than depth 100 on some inputs), and builds a tree for text that
is then mostly rejected. A recursive descent parser mirrors the grammar but puts the nesting
limit on the Python stack. So the reader is a loop over an explicit stack of open containers,
with `re` for the token shapes (all of them unambiguous, so each match is linear) and one pass
per string.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from typing import Any, NoReturn

MAX_DEPTH = 100  # lists and dicts that may enclose a value
MAX_INTEGER = 2**53 - 1  # JSON's interoperable integers (RFC 8259 section 6)
# An integer literal longer than this (sign included) is out of range without reading it, so a
# megabyte of digits never reaches `int()`.
_MAX_INTEGER_CHARS = len(str(-MAX_INTEGER))

# Only these four chars are whitespace: not \f, \v or the Unicode spaces `str.isspace` knows.
_TOKEN = re.compile(r"[^ \t\n\r]")  # where the whitespace in front of the next token ends
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[-.][A-Za-z0-9_]+)*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_CONSTANTS = {
    "True": True,
    "true": True,
    "False": False,
    "false": False,
    "None": None,
    "null": None,
}
# Inside a string, only these chars end a run of plain text: its quote, a backslash (which takes
# the next char with it, whatever it is), and the line breaks that make the string invalid.
_STRING_STOPS = {"'": re.compile(r"['\\\n\r]"), '"': re.compile(r'["\\\n\r]')}
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_SIMPLE_ESCAPES = {
    "\\": "\\",
    "'": "'",
    '"': '"',
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}

_VALUE_EXPECTED = "expected a string, number, list, dict, True, False or None"
_ARGUMENT = "a keyword argument (positional arguments and trailing commas are not supported)"

# The four containers; each closes with its char and holds items of one kind.
_CALLS, _ARGUMENTS, _LIST, _DICT = range(4)
_CLOSE = {_CALLS: "]", _ARGUMENTS: ")", _LIST: "]", _DICT: "}"}


class _Container:
    """One open `[`, `(` or `{`: what it holds so far."""

    __slots__ = ("kind", "items", "key", "repeated", "name")

    def __init__(self, kind: int, name: str | None = None) -> None:
        self.kind = kind
        self.items: Any = {} if kind in (_ARGUMENTS, _DICT) else []
        self.key: str | None = None  # the name or key whose value is being read
        self.repeated: str | None = None  # the first name seen twice, reported at the close
        self.name = name  # a call's function name

    def add(self, value: Any) -> None:
        if self.kind in (_CALLS, _LIST):
            self.items.append(value)
        elif self.key in self.items:
            if self.repeated is None:
                self.repeated = self.key
        else:
            self.items[self.key] = value


class _Reader:
    __slots__ = ("text", "position")

    def __init__(self, text: str) -> None:
        self.text = text
        self.position = 0

    def fail(self, what: str, position: int | None = None) -> NoReturn:
        at = self.position if position is None else position
        raise ValueError(f"python-call-list: {what} at position {at}.\nContent: {self.text!r}")

    def skip(self) -> str:
        """Skip whitespace; the char there ("" at the end)."""
        found = _TOKEN.search(self.text, self.position)
        if found is None:
            self.position = len(self.text)
            return ""
        self.position = found.start()
        return found.group()

    def name(self, what: str) -> str:
        self.skip()
        found = _NAME.match(self.text, self.position)
        if found is None:
            self.fail(f"expected {what}")
        self.position = found.end()
        return found.group()

    def expect(self, char: str) -> None:
        if self.skip() != char:
            self.fail(f"expected {char!r}")
        self.position += 1

    def read(self) -> list[dict]:
        self.expect("[")
        stack = [_Container(_CALLS)]
        depth = 0  # lists and dicts on the stack
        # After an opening char the container may close at once; after a value it closes or a
        # comma follows; after a comma comes the next item (so a trailing comma fails there).
        first = True
        while True:
            top = stack[-1]
            if first:
                at_close = self.skip() == _CLOSE[top.kind]
            else:
                char = self.skip()
                at_close = char == _CLOSE[top.kind]
                if not at_close:
                    if char != ",":
                        self.fail("expected ','")
                    self.position += 1
            first = False
            if at_close:
                self.position += 1
                stack.pop()
                value = self.closed(top)
                if not stack:
                    break
                if top.kind in (_LIST, _DICT):
                    depth -= 1
                stack[-1].add(value)
                continue
            # The next item of `top`: a call, an argument's name and `=`, a dict key and `:`, or
            # nothing before a list element; then a value, unless it is a call.
            if top.kind == _CALLS:
                function = self.name("a function name")
                self.expect("(")
                stack.append(_Container(_ARGUMENTS, function))
                first = True
                continue
            if top.kind == _ARGUMENTS:
                top.key = self.name(_ARGUMENT)
                if self.skip() != "=":
                    self.fail("expected '=' (positional arguments are not supported)")
                self.position += 1
            elif top.kind == _DICT:
                if self.skip() not in ("'", '"'):
                    self.fail("dict keys must be strings")
                top.key = self.string()
                self.expect(":")
            char = self.skip()
            if char == "[" or char == "{":
                if depth >= MAX_DEPTH:
                    self.fail(f"lists and dicts nested more than {MAX_DEPTH} levels deep")
                self.position += 1
                depth += 1
                stack.append(_Container(_LIST if char == "[" else _DICT))
                first = True
            else:
                top.add(self.scalar(char))
        if self.skip():
            self.fail("unexpected content after the closing ']'")
        return value

    def closed(self, container: _Container) -> Any:
        """The value of a container whose closing char was just read."""
        if container.repeated is not None:
            self.fail(f"repeated name {container.repeated!r}")
        if container.kind == _ARGUMENTS:
            return {"name": container.name, "arguments": container.items}
        return container.items

    def scalar(self, char: str) -> Any:
        """A string, number or constant starting at `char` (whitespace skipped)."""
        if char == "'" or char == '"':
            return self.string()
        text, start = self.text, self.position
        if char == "-" or "0" <= char <= "9":
            found = _NUMBER.match(text, start)
            if found is not None:
                literal = found.group()
                if found.group(1) is None and found.group(2) is None:
                    if len(literal) > _MAX_INTEGER_CHARS or abs(int(literal)) > MAX_INTEGER:
                        self.fail("integer outside the range of -(2^53 - 1) to 2^53 - 1")
                    value: Any = int(literal)
                else:
                    value = float(literal)
                    if value in (float("inf"), float("-inf")):
                        self.fail("number too large")
                self.position = found.end()
                return value
        found = _NAME.match(text, start)
        # A name that merely starts with a constant (`None_`, `True.x`, `null-1`) is no value.
        if found is not None and found.group() in _CONSTANTS:
            self.position = found.end()
            return _CONSTANTS[found.group()]
        self.fail(_VALUE_EXPECTED)

    def string(self) -> str:
        """The string whose quote is at the position; the position moves past its close."""
        text, start = self.text, self.position
        stops = _STRING_STOPS[text[start]]
        pieces: list[str] = []
        bad_escape: str | None = None  # the first, reported once the string is known to end
        position = start + 1
        while True:
            found = stops.search(text, position)
            if found is None:
                self.fail("invalid string")
            stop = found.start()
            char = text[stop]
            if char == text[start]:
                break
            if char != "\\" or stop + 1 == len(text):
                self.fail("invalid string")
            pieces.append(text[position:stop])
            decoded, position = self.escape(stop)
            if decoded is None:
                bad_escape = bad_escape or f"unsupported escape {text[stop : stop + 2]!r}"
            elif decoded == "":
                bad_escape = bad_escape or "lone surrogate escape"
            else:
                pieces.append(decoded)
        if _SURROGATE.search(text, start + 1, stop) is not None:
            self.fail("lone surrogate in the string starting")
        if bad_escape is not None:
            self.fail(f"{bad_escape} in the string starting")
        self.position = stop + 1
        if not pieces:
            return text[start + 1 : stop]
        pieces.append(text[position:stop])
        return "".join(pieces)

    def escape(self, backslash: int) -> tuple[str | None, int]:
        """The escape at `backslash` (its next char exists): (its text, where it ends). The text
        is None for an unsupported escape and "" for a lone surrogate; either way the string goes
        on after the backslash and the char it takes, or after the \\uXXXX escape."""
        text = self.text
        char = text[backslash + 1]
        simple = _SIMPLE_ESCAPES.get(char)
        if simple is not None:
            return simple, backslash + 2
        digits = _HEX4.match(text, backslash + 2) if char == "u" else None
        if digits is None:
            return None, backslash + 2
        code, end = int(digits.group(), 16), digits.end()
        if 0xD800 <= code <= 0xDBFF and text.startswith("\\u", end):
            low = _HEX4.match(text, end + 2)
            if low is not None and 0xDC00 <= int(low.group(), 16) <= 0xDFFF:
                return chr(0x10000 + ((code - 0xD800) << 10) + int(low.group(), 16) - 0xDC00), (
                    low.end()
                )
        if 0xD800 <= code <= 0xDFFF:
            return "", end
        return chr(code), end


# --- flat call lists, read in C ---------------------------------------------------------------
# Most call lists a model writes are flat: every argument a string without escapes, a short
# number or a constant (`[get_weather(city='Paris', days=3)]`). Those are matched whole by one
# `re` and read with a second, in C; anything else (a list or dict argument, an escape, a long
# number, a repeated name, an error) goes to `_Reader`, which gives the same value for a flat one.
# No text is matched two ways (see `_FLAT_CALL`), and the fast path is only tried on texts of at
# most `_FLAT_MAX` chars, so its cost is linear there and bounded whatever the text.
_FLAT_MAX = 4096
_WS = r"[ \t\n\r]*"
_FLAT_NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:[-.][A-Za-z0-9_]+)*"
# Strings without a backslash, a line break or a surrogate; integers and decimals of at most 15
# digits before the point (within 2^53 - 1, and finite), no exponent; the six constants.
_FLAT_VALUE = (
    r"'[^'\\\n\r\ud800-\udfff]*'"
    r'|"[^"\\\n\r\ud800-\udfff]*"'
    r"|-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]+)?"
    r"|True|False|None|true|false|null"
)
_FLAT_ARGUMENT = f"{_FLAT_NAME}{_WS}={_WS}(?:{_FLAT_VALUE})"
# Each blank run sits between two tokens, never beside another blank run that could share its
# chars: so no text is matched two ways, and a failing match gives each char back once.
_FLAT_CALL = (
    f"{_FLAT_NAME}{_WS}\\({_WS}(?:{_FLAT_ARGUMENT}(?:{_WS},{_WS}{_FLAT_ARGUMENT})*{_WS})?\\)"
)
_FLAT_LIST = re.compile(f"{_WS}\\[{_WS}(?:{_FLAT_CALL}(?:{_WS},{_WS}{_FLAT_CALL})*{_WS})?\\]{_WS}")
# Within a flat list, left to right: a call's name and `(`, or an argument's name and value (a
# call's value group is empty: no value is). Nothing between them (blanks, `,`, `)`, `]`) can
# start one, and a string value is read whole with its argument, so the tokens are the list's,
# in order. The name is matched once, then what follows it says which token it is.
_FLAT_TOKENS = re.compile(f"({_FLAT_NAME}){_WS}(?:\\(|={_WS}({_FLAT_VALUE}))")


def _flat_value(literal: str) -> Any:
    first = literal[0]
    if first == "'" or first == '"':
        return literal[1:-1]
    if first == "-" or "0" <= first <= "9":
        return float(literal) if "." in literal else int(literal)
    return _CONSTANTS[literal]


def _flat_calls(text: str) -> list[dict] | None:
    """The value of a flat call list (see above), or None when `text` is not one."""
    if len(text) > _FLAT_MAX or _FLAT_LIST.fullmatch(text) is None:
        return None
    calls = []
    arguments: dict[str, Any] = {}
    for name, value in _FLAT_TOKENS.findall(text):
        if not value:
            arguments = {}
            calls.append({"name": name, "arguments": arguments})
        elif name in arguments:
            return None  # a repeated name: the reader reports it
        else:
            arguments[name] = _flat_value(value)
    return calls


def parse_python_call_list(text: str, args: dict) -> list[dict]:
    """`[name(keyword=value, ...), ...]` -> `[{"name": ..., "arguments": {...}}, ...]`.

    `args` is not read: the parser has no options (a `content_args` that is not even a dict
    does not fail here, unlike every other parser's)."""
    calls = _flat_calls(text)
    return calls if calls is not None else _Reader(text).read()


__all__ = ["MAX_DEPTH", "MAX_INTEGER", "parse_python_call_list"]
