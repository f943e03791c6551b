"""An incremental reader of one JSON text, writing json.dumps's spelling of a value on request.

In:  the text of one JSON document in chunks (`JsonReader.feed`), as a structured region's
     raw body arrives; a `sink` object that receives the document's tokens.
Out: calls on the sink, each as soon as the piece it reports is final:

    begin(kind)        a value starts: "object", "array" or "string" (the reader's `path` is its path)
    key(name)          an object member's key is complete (`path` is the object's path)
    piece(chars)       decoded characters of the open string (escapes resolved)
    end(kind)          the open object, array or string ends
    scalar(value)      a number or literal is complete (the Python value json.loads gives it)
    fail()             the text is not one json.loads accepts; nothing more is reported

Guaranteed: the grammar is json.loads's (strict mode, the `json` module's own dialect): the
whitespace " \\t\\n\\r", `NaN`, `Infinity`, `-Infinity`, the number syntax and escapes of RFC 8259,
no raw control character inside a string, nothing but whitespace after the root value, escaped
surrogate pairs combined. A token is reported only once no later text can change it (a number
when a character that cannot continue it arrives, a key when its closing quote does), so every
report holds whenever the whole text parses; a text json.loads rejects ends in `fail()` at the
first character it cannot accept, or at `finish()`. Each character is examined a bounded number
of times (runs of plain string characters are taken by one regex match): linear time.

Spelling. In `begin`, the sink may call `spell(out)`: the value beginning is then written to the
list `out` as json.dumps writes it (", " and ": " separators, ASCII escapes, `repr` floats), piece
by piece as its tokens become final, instead of being reported token by token, so the pieces
concatenate to `json.dumps` of the value json.loads gives it, as long as no object repeats a key
(json.loads keeps the first position and the last value; the members are written as they come, so
json.loads of the text still gives the same value). While a value is spelled the sink hears only:

    spelled_key(name, separator)   a key of the spelled object's own members is complete: the
                                   sink writes it (after `separator`, "" or ", ") or stops
    member_end()                   a member's value of the spelled object ended (only while
                                   `watch_members`)
    spelled_end()                  the spelled value ended: spelling is over
    fail()

`spelled` is where the writing goes, and the sink may point it elsewhere between tokens (a
member held apart); `stop_spelling()` goes back to reporting tokens. Spelling in the reader
itself, not in a sink of its tokens, is what makes a JSON call body cheap to stream: a token
inside the arguments costs one append, not a chain of calls.
"""

from __future__ import annotations

import json
import re
from json.encoder import encode_basestring_ascii

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_WHITESPACE = " \t\n\r"
_PLAIN = re.compile(r'[^"\\\x00-\x1f]+')  # string characters that need no decoding
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_NUMBER_CHARS = frozenset("0123456789+-.eE")
_LITERALS = {"true": True, "false": False, "null": None, "NaN": float("nan")}
_LITERALS.update({"Infinity": float("inf"), "-Infinity": float("-inf")})
_LITERAL_PREFIXES = frozenset(word[:i] for word in _LITERALS for i in range(1, len(word) + 1))
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX = frozenset("0123456789abcdefABCDEF")

# String characters that json.dumps (ensure_ascii) writes as they are: printable ASCII but the
# quote and the backslash. A run of them inside a string is its own decoding and its own spelling.
PLAIN_ASCII = re.compile(r"[ !#-\[\]-~]+")


def is_plain_ascii(text: str) -> bool:
    """`PLAIN_ASCII.fullmatch(text)`, by str methods (three times faster than the regex)."""
    return (
        bool(text)
        and text.isascii()
        and text.isprintable()
        and '"' not in text
        and "\\" not in text
    )


# Where the reader is between tokens.
_VALUE = 0  # a value must come next (the root, after ":" or after "," in an array)
_VALUE_OR_CLOSE = 1  # just after "[": a value or "]"
_KEY_OR_CLOSE = 2  # just after "{": a key or "}"
_KEY = 3  # after "," in an object: a key
_COLON = 4  # after a key
_AFTER_VALUE = 5  # after a member or element: "," or the container's close
_DONE = 6  # after the root value: whitespace only
_FAILED = 7


class JsonReader:
    """Reads one JSON text incrementally and reports its tokens to `sink`, or spells the values
    the sink asks for (see the module)."""

    def __init__(self, sink: Any) -> None:
        self.sink = sink
        # The path of the value being read: object keys and array indices, outermost first.
        self.path: list[str | int] = []
        self._containers: list[str] = []  # "o" or "a", outermost first
        self._state = _VALUE
        self._string: list[str] | None = None  # a key being read, else None
        self._in_string = False
        self._escape: str | None = None  # "" after a backslash, then the hex digits of \\u
        self._high = ""  # an escaped high surrogate waiting for its pair
        self._token = ""  # a number or literal being read
        # Spelling: where the spelled value's pieces go (None: tokens go to the sink), how many
        # containers were open outside it, and a "," read in it whose ", " is not written yet.
        self.spelled: list[str] | None = None
        self._base = 0
        self._comma = False
        self.watch_members = False  # call the sink's `member_end` (see the module)

    @property
    def failed(self) -> bool:
        return self._state == _FAILED

    @property
    def done(self) -> bool:
        """The root value is complete (only whitespace may follow)."""
        return self._state == _DONE

    @property
    def in_string(self) -> bool:
        """Inside a string (a key or a value)."""
        return self._in_string and self._state != _FAILED

    @property
    def expects_key(self) -> bool:
        """Just after `{` or after `,` in an object (whitespace may follow): a key may come."""
        return self._state in (_KEY_OR_CLOSE, _KEY) and not self._in_string

    def fail(self) -> None:
        """The text is not one json.loads accepts, as a reader above this one found (a dialect's
        rewrite that cannot be followed): report `fail()` and read no more."""
        self._fail()

    def spell(self, out: list[str]) -> None:
        """Called in the sink's `begin`: spell the value beginning into `out` (see the module)."""
        self.spelled, self._base, self._comma = out, len(self._containers), False

    def stop_spelling(self) -> None:
        """Report the rest of the value being spelled token by token, as if it were not."""
        self.spelled, self.watch_members = None, False

    @property
    def plain_run(self) -> str | None:
        """Where a run of plain string characters (`PLAIN_ASCII`) would go, read now: "key" or
        "value" inside a string, a key's or a value's, with no escape begun (the run then only
        extends that string, as it is: `take_plain`), else None."""
        if not self._in_string or self._escape is not None or self._high or self._state == _FAILED:
            return None
        return "value" if self._string is None else "key"

    def take_plain(self, chars: str) -> None:
        """Read `chars`, plain string characters arriving while `plain_run` is not None, as
        `feed` reads them (one run: a key's characters, one spelled piece, or one `piece`),
        without matching them again."""
        if self._string is not None:
            self._string.append(chars)
        elif self.spelled is not None:
            self.spelled.append(chars)  # its own spelling
        else:
            self.sink.piece(chars)

    def feed(self, text: str) -> None:
        if self._state == _FAILED:
            return
        i, n = 0, len(text)
        while i < n:
            if self._in_string:
                if self._escape is not None:
                    i = self._escape_char(text, i)
                    if self._state == _FAILED:
                        return
                    continue
                plain = _PLAIN.match(text, i)  # string characters that need no decoding
                if plain is not None:
                    if self._high:
                        self._flush_high()
                    if self._string is not None:
                        self._string.append(plain.group())
                    elif self.spelled is not None:
                        self.spelled.append(encode_basestring_ascii(plain.group())[1:-1])
                    else:
                        self.sink.piece(plain.group())
                    i = plain.end()
                    if i == n:
                        return
                # A quote, a backslash or a raw control character.
                ch = text[i]
                i += 1
                if ch == '"':
                    if self._high:
                        self._flush_high()
                    self._end_string()
                elif ch == "\\":
                    self._escape = ""
                else:
                    self._fail()
                    return
                continue
            ch = text[i]
            if self._token:
                if ch in _NUMBER_CHARS or (self._token + ch) in _LITERAL_PREFIXES:
                    self._token += ch
                    i += 1
                    continue
                if not self._end_token():
                    return
            i += 1
            if ch in _WHITESPACE:
                continue
            self._structure(ch)
            if self._state == _FAILED:
                return

    def finish(self) -> None:
        """The text is complete: end a trailing number; fail unless the root value is complete."""
        if self._token and self._state != _FAILED:
            self._end_token()
        if self._state not in (_DONE, _FAILED):
            self._fail()

    # --- between tokens -----------------------------------------------------------------------

    def _structure(self, ch: str) -> None:
        state = self._state
        if state == _AFTER_VALUE:  # the commonest first
            kind = self._containers[-1]
            if ch == ",":
                last = self.path.pop()
                if kind == "a":
                    assert isinstance(last, int)
                    self.path.append(last + 1)
                    self._state = _VALUE
                else:
                    self._state = _KEY
                if self.spelled is not None:
                    self._comma = True  # written before the next element or key
            elif ch == ("]" if kind == "a" else "}"):
                self.path.pop()
                self._close(kind)
            else:
                self._fail()
        elif state in (_KEY_OR_CLOSE, _KEY):
            if ch == '"':
                self._in_string, self._string = True, []
            elif ch == "}" and state == _KEY_OR_CLOSE:
                self._close("o")
            else:
                self._fail()
        elif state == _COLON:
            if ch == ":":
                self._state = _VALUE
            else:
                self._fail()
        elif state in (_VALUE, _VALUE_OR_CLOSE):
            if ch == "]" and state == _VALUE_OR_CLOSE:
                self._close("a")
            else:
                self._value(ch)
        else:  # _DONE: anything but whitespace is extra data
            self._fail()

    def _separator(self) -> str:
        """What the spelling writes before a value or key: ", " after a "," of the spelled value."""
        if self._comma:
            self._comma = False
            return ", "
        return ""

    def _value(self, ch: str) -> None:
        # A value's begin goes to the sink unless it is spelled; the sink may start spelling in
        # `begin`, and then the value's first token is written already.
        if ch == "{":
            if self.spelled is None:
                self.sink.begin("object")
            if self.spelled is not None:
                self.spelled.append(self._separator() + "{")
            self._containers.append("o")
            self._state = _KEY_OR_CLOSE
        elif ch == "[":
            if self.spelled is None:
                self.sink.begin("array")
            if self.spelled is not None:
                self.spelled.append(self._separator() + "[")
            self._containers.append("a")
            self.path.append(0)
            self._state = _VALUE_OR_CLOSE
        elif ch == '"':
            if self.spelled is None:
                self.sink.begin("string")
            if self.spelled is not None:
                self.spelled.append(self._separator() + '"')
            self._in_string = True
        elif ch in _NUMBER_CHARS or ch in _LITERAL_PREFIXES:
            self._token = ch
        else:
            self._fail()

    def _close(self, kind: str) -> None:
        """The open container ends (its own path is current again)."""
        self._containers.pop()
        if kind == "a" and self._state == _VALUE_OR_CLOSE:
            self.path.pop()  # the empty array's pending index 0
        if self.spelled is not None:
            self.spelled.append("]" if kind == "a" else "}")
        else:
            self.sink.end("array" if kind == "a" else "object")
        self._after_value()

    def _after_value(self) -> None:
        self._state = _AFTER_VALUE if self._containers else _DONE
        if self.spelled is not None:
            depth = len(self._containers)
            if depth == self._base:
                self.spelled, self.watch_members = None, False
                self.sink.spelled_end()
            elif depth == self._base + 1 and self.watch_members:
                self.sink.member_end()

    def _end_token(self) -> bool:
        token, self._token = self._token, ""
        if token in _LITERALS:
            value = _LITERALS[token]
        elif _NUMBER.fullmatch(token):
            try:
                value = json.loads(token)
            except ValueError:  # an integer longer than int() accepts: json.loads fails too
                self._fail()
                return False
        else:
            self._fail()
            return False
        if self.spelled is not None:
            self.spelled.append(self._separator() + json.dumps(value))
        else:
            self.sink.scalar(value)
        self._after_value()
        return True

    # --- inside a string ----------------------------------------------------------------------

    def _escape_char(self, text: str, i: int) -> int:
        ch = text[i]
        escape = self._escape
        assert escape is not None
        if escape == "":
            if ch == "u":
                self._escape = "u"
            elif ch in _ESCAPES:
                self._escape = None
                self._flush_high()
                self._chars(_ESCAPES[ch])
            else:
                self._fail()
            return i + 1
        if ch not in _HEX:
            self._fail()
            return i + 1
        escape += ch
        if len(escape) < 5:
            self._escape = escape
            return i + 1
        self._escape = None
        code = int(escape[1:], 16)
        if self._high and 0xDC00 <= code <= 0xDFFF:
            high, self._high = self._high, ""
            self._chars(chr(0x10000 + ((ord(high) - 0xD800) << 10) + (code - 0xDC00)))
        else:
            self._flush_high()
            if 0xD800 <= code <= 0xDBFF:
                self._high = chr(code)  # json.loads pairs it with an escaped low surrogate next
            else:
                self._chars(chr(code))
        return i + 1

    def _flush_high(self) -> None:
        if self._high:
            high, self._high = self._high, ""
            self._chars(high)

    def _chars(self, chars: str) -> None:
        if self._string is not None:
            self._string.append(chars)
        elif self.spelled is not None:
            self.spelled.append(encode_basestring_ascii(chars)[1:-1])
        else:
            self.sink.piece(chars)

    def _end_string(self) -> None:
        self._in_string = False
        if self._string is not None:
            key, self._string = "".join(self._string), None
            if self.spelled is None:
                self.sink.key(key)
            elif len(self._containers) == self._base + 1:
                self.sink.spelled_key(key, self._separator())
            else:
                self.spelled.append(self._separator() + encode_basestring_ascii(key) + ": ")
            self.path.append(key)
            self._state = _COLON
        else:
            if self.spelled is not None:
                self.spelled.append('"')
            else:
                self.sink.end("string")
            self._after_value()

    def _fail(self) -> None:
        if self._state != _FAILED:
            self._state = _FAILED
            self.spelled, self.watch_members = None, False
            self.sink.fail()


__all__ = ["PLAIN_ASCII", "JsonReader", "is_plain_ascii"]
