"""Tool calls of a python-call-list body, read while the body arrives.

In:  a tool-call field's template entry (`pycall_plan_for`), then the raw body text of each of its
     regions (the parser's `region_chunk` texts) fed to a `PythonCalls`.
Out: per region, one `Slot` (json_calls) per call: its name once its `(` is read, and the
     json.dumps text of its arguments so far, built member by member.
Guaranteed: `text` only grows, and for a body the reference accepts it is a prefix of `json.dumps`
of the call's final arguments, and equal to it once the call's `)` is read. When a piece is final:
- a keyword argument's key once its `=` is read;
- a string value as it arrives (an escape once it is decided: `\\uD83D` waits for the low half),
  unless `tools=` typing could change it (then when it ends, coerced);
- any other value (number, constant, list, dict) when it is complete, read by the parser itself
  (runtime/python_call_list.py) so it is the value the message gets, then coerced;
- the closing "}" at the call's `)`.
Anything the grammar refuses stops the reading (the region then raises, or is malformed in
lenient mode); what went out stays, and the rest of the calls goes out from the final value.

A field streams when its content parser is `python-call-list` with `transform_each` and the
transform is exactly `{"type": "function", "function": {"name": "{name}", "arguments":
"{arguments}"}}`, and its `content_args` is a dict without `value_parser_by` (which would turn
`tools=` typing off). Time: linear; a string's plain run and a list's or dict's text are taken a
run at a time, and what is kept between feeds is an escape's few chars, a name or a number, or
the pieces of an unfinished list or dict.
"""

from __future__ import annotations

import json
import re
from json.encoder import encode_basestring_ascii

from ..runtime.python_call_list import parse_python_call_list
from .json_calls import Slot, _placeholder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_WHITESPACE = " \t\n\r"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[-.][A-Za-z0-9_]+)*")
_NAME_CHARS = re.compile(r"[A-Za-z0-9_.\-]*")  # a run that may still be a name
_SCALAR_CHARS = re.compile(r"[A-Za-z0-9_.+\-]*")  # a run that may still be a number or constant
# Inside a string: the chars that end a plain run (its quote, an escape, what makes it invalid).
_STRING_STOPS = {
    "'": re.compile(r"['\\\n\r\ud800-\udfff]"),
    '"': re.compile(r'["\\\n\r\ud800-\udfff]'),
}
_CONTAINER_STOPS = re.compile(r"[\[\]{}'\"\\]")  # what changes a list's or dict's nesting
_HEX = frozenset("0123456789abcdefABCDEF")


def pycall_plan_for(spec: dict) -> bool:
    """Whether a tool-call field's calls stream through `PythonCalls` (see the module)."""
    if spec.get("content", "text") != "python-call-list" or not spec.get("transform_each"):
        return False
    args = spec.get("content_args", {})
    if not isinstance(args, dict) or "value_parser_by" in args:
        return False
    transform = spec.get("transform")
    if not isinstance(transform, dict) or set(transform) != {"type", "function"}:
        return False
    function = transform["function"]
    if transform["type"] != "function" or not isinstance(function, dict):
        return False
    if set(function) != {"name", "arguments"}:
        return False
    return _placeholder(function["name"]) == ("name",) and _placeholder(function["arguments"]) == (
        "arguments",
    )


def _value_of(text: str) -> tuple[bool, Any]:
    """(True, value) for the text of one argument value as the parser reads it, else (False, None)."""
    try:
        return True, parse_python_call_list(f"[f(a={text})]", {})[0]["arguments"]["a"]
    except ValueError:
        return False, None


class PythonCalls:
    """Reads one python-call-list region's body into `slots`, one per call (see the module).

    `typed(name, key)`: whether `tools=` typing could change the str value of `key`;
    `coerce(name, key, value)`: that value after typing."""

    def __init__(
        self,
        typed: Callable[[str | None, str], bool | None],
        coerce: Callable[[str, str, Any], Any],
    ) -> None:
        self.typed = typed
        self.coerce = coerce
        self.slots: list[Slot] = []
        self.state = "list"  # what the next non-space char must be (see `_step`)
        self.token: list[str] = []  # a name, number or constant read so far
        self.name = ""  # the current call's function name
        self.key = ""  # the argument being read
        self.members = 0  # arguments written in the current call
        self.quote = ""  # in a string: its quote
        self.escape = ""  # in a string: an escape not yet decided
        self.held: list[str] | None = None  # a string written whole at its end
        self.raw: list[str] = []  # a list's or dict's text so far
        self.depth = 0  # its open brackets
        self.in_string = ""  # inside it: the quote of a string it holds
        self.escaped = False  # inside that string: the last char taken was a backslash
        self.failed = False

    # --- output -------------------------------------------------------------------------------

    def _out(self, text: str) -> None:
        self.slots[-1].add(text)

    def _member_value(self, value: Any) -> None:
        slot = self.slots[-1]
        assert slot.name is not None
        self._out(json.dumps(self.coerce(slot.name, self.key, value)))

    def _fail(self) -> None:
        self.failed = True
        if self.slots and not self.slots[-1].closed:
            self.slots[-1].stopped = True

    # --- input --------------------------------------------------------------------------------

    def feed(self, text: str) -> None:
        position = 0
        while position < len(text) and not self.failed:
            position = self._step(text, position)

    def finish(self) -> None:
        """The body is complete: nothing to add (a call not closed by now is malformed)."""

    def _step(self, text: str, position: int) -> int:
        """Read from `position` on; return where reading goes on."""
        state = self.state
        if state == "string":
            return self._string(text, position)
        if state == "container":
            return self._container(text, position)
        if state in ("name", "key", "scalar"):
            run = (_SCALAR_CHARS if state == "scalar" else _NAME_CHARS).match(text, position)
            assert run is not None  # a `*` run: it matches, maybe empty
            self.token.append(run.group())
            if run.end() == len(text):
                return run.end()  # the run may go on in the next feed
            token, self.token = "".join(self.token), []
            self._token_done(token)
            return run.end()
        char = text[position]
        if char in _WHITESPACE:
            return position + 1
        self._char(char)
        return position + 1

    def _token_done(self, token: str) -> None:
        state = self.state
        if state == "scalar":
            ok, value = _value_of(token)
            if not ok:
                return self._fail()
            self._member_value(value)
            self.state = "after value"
        elif _NAME.fullmatch(token) is None:
            self._fail()
        elif state == "name":
            self.name, self.state = token, "("
        else:
            self.key, self.state = token, "="

    def _char(self, char: str) -> None:
        """A char outside any token, string, list or dict, in state `self.state`."""
        state = self.state
        if state == "list":
            self.state = "first call" if char == "[" else "failed"
        elif state == "first call" and char == "]":
            self.state = "end"
        elif state in ("first call", "call"):
            self.state = "name"
            self.token = [char]  # checked with the rest of the name when it ends
            return
        elif state == "(" and char == "(":
            self.slots.append(Slot(self.name))
            self.members = 0
            self.state = "first argument"
        elif state == "first argument" and char == ")":
            self._close_call()
        elif state in ("first argument", "argument"):
            self.state = "key"
            self.token = [char]
            return
        elif state == "=" and char == "=":
            self._out(
                ("{" if not self.members else ", ") + encode_basestring_ascii(self.key) + ": "
            )
            self.members += 1
            self.state = "value"
        elif state == "value":
            self._value_start(char)
            return
        elif state == "after value" and char in ",)":
            if char == ")":
                self._close_call()
            else:
                self.state = "argument"
        elif state == "after call" and char in ",]":
            self.state = "call" if char == "," else "end"
        else:
            self.state = "failed"
        if self.state == "failed":
            self._fail()

    def _close_call(self) -> None:
        slot = self.slots[-1]
        self._out("}" if self.members else "{}")
        slot.complete = slot.closed = True
        self.state = "after call"

    def _value_start(self, char: str) -> None:
        if char in "'\"":
            self.quote, self.escape = char, ""
            assert self.slots[-1].name is not None
            typed = self.typed(self.slots[-1].name, self.key)
            self.held = [] if typed is None or typed else None
            if self.held is None:
                self._out('"')
            self.state = "string"
        elif char in "[{":
            self.raw, self.depth, self.in_string, self.escaped = [char], 1, "", False
            self.state = "container"
        else:
            self.token = [char]
            self.state = "scalar"

    def _string(self, text: str, position: int) -> int:
        if self.escape:
            self.escape += text[position]
            self._decide_escape()
            return position + 1
        stop = _STRING_STOPS[self.quote].search(text, position)
        end = stop.start() if stop is not None else len(text)
        if end > position:
            self._piece(text[position:end])
        if stop is None:
            return end
        char = text[end]
        if char == self.quote:
            self._string_done()
        elif char == "\\":
            self.escape = "\\"
        else:  # a line break or a lone surrogate: the string is invalid
            self._fail()
        return end + 1

    def _decide_escape(self) -> None:
        """Decode the escape once no later char can change how it reads."""
        escape = self.escape
        if escape[1] == "u":
            digits = escape[2:6]
            if not set(digits) <= _HEX:
                return self._fail()
            if len(escape) < 6:
                return
            if 0xD800 <= int(digits, 16) <= 0xDBFF and len(escape) < 12:
                return  # a high surrogate: its low half must follow
        ok, value = _value_of(self.quote + escape + self.quote)
        if not ok:
            return self._fail()
        self.escape = ""
        self._piece(value)

    def _piece(self, chars: str) -> None:
        if self.held is not None:
            self.held.append(chars)
        else:
            self._out(encode_basestring_ascii(chars)[1:-1])

    def _string_done(self) -> None:
        if self.held is not None:
            value, self.held = "".join(self.held), None
            self._member_value(value)
        else:
            self._out('"')
        self.state = "after value"

    def _container(self, text: str, position: int) -> int:
        """Take a list's or dict's text up to its closing bracket, then read it whole."""
        while position < len(text):
            if self.escaped:  # the char a backslash at the end of the last feed escapes
                self.raw.append(text[position])
                position += 1
                self.escaped = False
                continue
            stop = _CONTAINER_STOPS.search(text, position)
            end = stop.start() if stop is not None else len(text)
            self.raw.append(text[position:end])
            if stop is None:
                return end
            char = text[end]
            self.raw.append(char)
            position = end + 1
            if self.in_string:
                if char == "\\":
                    self.escaped = True
                elif char == self.in_string:
                    self.in_string = ""
                continue
            if char in "'\"":
                self.in_string = char
            elif char in "[{":
                self.depth += 1
            elif char in "]}":
                self.depth -= 1
                if self.depth == 0:
                    ok, value = _value_of("".join(self.raw))
                    self.raw = []
                    if not ok:
                        self._fail()
                        return position
                    self._member_value(value)
                    self.state = "after value"
                    return position
        return position
