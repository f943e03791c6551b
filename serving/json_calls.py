"""Tool calls read while their region's body arrives: which ones stream, and their argument text.

In:  a tool-call field's template entry (`plan_for`), then the raw body text of each of its
     regions (the parser's `region_chunk` texts) fed to a `JsonCalls`.
Out: `CallPlan` (None when the field cannot stream: see below), and per region a list of
     `Slot`s, one per call the body is building: its name once final, the json.dumps text of its
     arguments so far, and whether that text is complete.
Guaranteed: a slot's `name` is set only from a completed JSON string at the name's path, and its
`text` only grows, each piece final (see `json_reader`): for a body json.loads accepts with no
repeated key on the way to the arguments, `text` is a prefix of `json.dumps` of the call's final
arguments, and equal to it once `complete`. A member of the arguments that `tools=` typing could
change (its key has schema types for the call's tool) is held until its value is complete, then
written as the coerced value. A repeated key inside the arguments is written where it comes, so
json.loads of the text still gives the final value; a repeat of a key on the path to the
arguments or of the name sets `conflict`, and the slot writes no more (the caller then sends the
rest from the region's final value if it can).

A field streams when its content parser is `json`, with no dialect or one `json_dialect` rewrites
as it arrives (one pair of custom string quotes starting with a character JSON text cannot hold
outside a string, as Gemma's `<|"|>` and `<escape>`; `unquoted_keys`), never with `allow_non_json`
(a failed parse makes the value the raw text, after its JSON went out), and its transform
is exactly `{"type": "function", "function": {"name": P, "arguments": Q}}` with whole
placeholders: Q into the body (`{content}`, `{content.arguments}`, or with `transform_each` an
element key such as `{parameters}`), P into the body or a capture of the open that the close
pattern has no group of the same name for (5.24: a close capture beats the open's). Or exactly
`{"type": "function", "function": F}` with F one whole placeholder of a JSON object in the body
(`{content}` as in transformers' docs and `transformers serve`'s fallbacks, `{content.call}`; with
`transform_each` an element key such as `{function}`): the call's name and arguments are then that
object's `name` and `arguments` members (its other members are in the message, not on the wire).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from json.encoder import encode_basestring_ascii

from .json_dialect import DialectReader, dialect_for
from .json_reader import JsonReader

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_PLACEHOLDER = re.compile(r"\{(\w+(?:\.\w+)*)\}")


@dataclass(frozen=True)
class CallPlan:
    """Where a streamable field's calls take their name and arguments from."""

    each: bool  # transform_each: the body is a list, one call per element
    args_path: tuple[str, ...]  # inside the body (or the element, with `each`)
    name_path: tuple[str, ...] | None  # inside the body or element; None: from `name_capture`
    name_capture: str | None
    # A json dialect's (custom quote pair or None, unquoted_keys): see json_dialect.
    dialect: tuple[tuple[str, str] | None, bool] | None = None


def _placeholder(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, str):
        return None
    match = _PLACEHOLDER.fullmatch(value)
    return tuple(match.group(1).split(".")) if match else None


def close_captures(spec: dict) -> frozenset[str] | None:
    """The named groups of a field's `close_pattern` (none for a literal close), or None when it
    does not compile. 5.24: they join the transform's scope at the close and beat the open's, so a
    name taken from such a capture of the open is not final at the open."""
    pattern = spec.get("close_pattern")
    if pattern is None:
        return frozenset()
    try:
        import regex

        return frozenset(regex.compile(pattern, regex.DOTALL).groupindex)
    except Exception:  # noqa: BLE001 (not a str, or invalid: the parser raises its own error)
        return None


def name_capture_is_final(spec: dict, name: str) -> bool:
    """Whether the capture `name` of the open is the call's name when its region closes."""
    overriding = close_captures(spec)
    return overriding is not None and name not in overriding


def plan_for(spec: dict) -> CallPlan | None:
    """The plan for a tool-call field's template entry, or None if its calls go out whole."""
    if spec.get("content", "text") != "json":
        return None
    args = spec.get("content_args") or {}
    if not isinstance(args, dict) or args.get("allow_non_json"):
        return None
    if "value_parser_by" in args:
        return None  # json ignores it, but 5.25 then skips tool-call coercion: whole at close
    dialect = None
    if args.get("unquoted_keys", False) is not False or args.get("string_delims", []) != []:
        dialect = dialect_for(args)
        if dialect is None:
            return None
    plan = _call_plan(spec)
    return plan if plan is None or dialect is None else replace(plan, dialect=dialect)


def _call_plan(spec: dict) -> CallPlan | None:
    """Where the transform takes a call's name and arguments from (`plan_for` without dialect)."""
    transform = spec.get("transform")
    if not isinstance(transform, dict) or set(transform) != {"type", "function"}:
        return None
    function = transform["function"]
    if transform["type"] != "function":
        return None
    each = bool(spec.get("transform_each"))
    whole = _placeholder(function)
    if whole is not None:
        # `"function": "{content}"` (transformers' docs, `transformers serve`'s Qwen fallback):
        # the function is a JSON object of the body (or of the element, with `transform_each`),
        # and the call's name and arguments are its `name` and `arguments` members.
        if whole[0] == "content" and not each:
            return CallPlan(False, whole[1:] + ("arguments",), whole[1:] + ("name",), None)
        if whole[0] != "content" and each:
            return CallPlan(True, whole + ("arguments",), whole + ("name",), None)
        return None
    if not isinstance(function, dict) or set(function) != {"name", "arguments"}:
        return None
    name, arguments = _placeholder(function["name"]), _placeholder(function["arguments"])
    if name is None or arguments is None:
        return None
    if each:  # an element's keys come first in its scope
        return CallPlan(True, arguments, name, None)
    if arguments[0] != "content":
        return None
    if name[0] == "content":
        return CallPlan(False, arguments[1:], name[1:], None)
    if len(name) != 1 or not name_capture_is_final(spec, name[0]):
        return None
    return CallPlan(False, arguments[1:], None, name[0])


class Slot:
    """One call being read: its name once final, its argument text so far.

    The text is the list `pieces` (a JSON body's reader spells the arguments straight into it:
    `JsonReader.spell`), and `sent` counts the pieces `take_unsent` has returned, so that a call
    whose arguments arrive in thousands of pieces costs time linear in their length: no string is
    rebuilt per piece."""

    __slots__ = ("name", "pieces", "sent", "complete", "conflict", "stopped", "closed")

    def __init__(self, name: str | None = None) -> None:
        self.name = name
        self.pieces: list[str] = []  # json.dumps text of the arguments so far, in pieces
        self.sent = 0  # how many of `pieces` went out
        self.complete = False  # the text is the whole arguments value
        self.conflict = False  # a repeated key changed the name or the arguments
        self.stopped = False  # no more text will be added (held for the final value)
        self.closed = False  # the element (with `each`) or the region is over

    @property
    def streaming(self) -> bool:
        return not (self.conflict or self.stopped)

    @property
    def text(self) -> str:
        """The argument text so far."""
        return "".join(self.pieces)

    def add(self, text: str) -> None:
        self.pieces.append(text)

    def add_sent(self, text: str) -> None:
        """`text` extends the arguments and has gone out already (a reader's `take_plain`), as
        all of the text before it has."""
        self.pieces.append(text)
        self.sent = len(self.pieces)

    def take_unsent(self) -> str:
        """The text added since the last call (all of it, the first time)."""
        pieces, sent = self.pieces, self.sent
        self.sent = len(pieces)
        return "".join(pieces[sent:] if sent else pieces)


class JsonCalls:
    """Reads one region's JSON body into `slots` (a sink for `JsonReader`, which spells each
    call's arguments into its slot).

    `typed(name, key)`: True if `tools=` typing could change the member `key` of `name`'s
    arguments, None when it depends on a name not known yet. `coerce(name, key, value)`: that
    member's value after typing."""

    def __init__(
        self,
        plan: CallPlan,
        name: str | None,
        typed: Callable[[str | None, str], bool | None],
        coerce: Callable[[str, str, Any], Any],
    ) -> None:
        self.plan = plan
        self.typed = typed
        self.coerce = coerce
        self.reader: JsonReader | DialectReader
        if plan.dialect is None:
            self.reader = self._json = JsonReader(self)
        else:
            self.reader = DialectReader(self, *plan.dialect)
            self._json = self.reader.json  # the JsonReader under the dialect's rewrite
        self.slots: list[Slot] = [] if plan.each else [Slot(name)]
        self._hold: list[str] | None = None  # a typed member's spelling, held
        self._hold_key = ""
        self._name_chars: list[str] | None = None

    def feed(self, text: str) -> None:
        self.reader.feed(text)

    def finish(self) -> None:
        self.reader.finish()

    def plain_target(
        self,
    ) -> tuple[Callable[[str], Any] | None, Callable[[str], None], bool] | None:
        """Where a chunk of `PLAIN_ASCII` characters would go by itself, or None: inside a string
        (a key's or a value's, no escape begun) the reader reads such a run as one run of that
        string and changes no other state, so the chunk can skip the reader's loop.
        (stops, take, sends): it can where `stops(chunk)` finds nothing (a dialect's reader: no
        char that may begin a quote of the dialect; None: always); `take(chunk)` reads it; `sends` is True
        inside a string of the arguments being spelled (not a member held for typing), where
        json.dumps spells the run as it is and the slot's text grows by it, as sent (the caller
        sends it), False elsewhere (a key, the name, a string outside the arguments, a held
        member: nothing becomes final)."""
        reader = self.reader
        run = reader.plain_run
        if run is None:
            return None
        stops = reader.plain_stops if isinstance(reader, DialectReader) else None
        if run == "value" and self._json.spelled is not None and self._hold is None:
            slot = self.slots[-1]  # (spelling its arguments: it streams)
            return stops, slot.add_sent, True
        return stops, reader.take_plain, False

    # --- where a token belongs ----------------------------------------------------------------

    def _slot_path(self) -> tuple[Slot | None, tuple]:
        path = tuple(self._json.path)
        if not self.plan.each:
            return self.slots[0], path
        if not path or not isinstance(path[0], int) or path[0] >= len(self.slots):
            return None, path
        return self.slots[path[0]], path[1:]

    def _is_element(self) -> bool:
        path = self._json.path
        return len(path) == 1 and isinstance(path[0], int)

    # --- the sink: tokens outside the arguments -----------------------------------------------

    def begin(self, kind: str) -> None:
        if self.plan.each and kind == "object" and self._is_element():
            self.slots.append(Slot())
        slot, path = self._slot_path()
        if slot is None:
            return
        if path == self.plan.args_path and slot.streaming:
            if slot.pieces or slot.complete:  # a repeated key on the way to the arguments
                slot.conflict = True
                return
            self._json.spell(slot.pieces)
        elif path == self.plan.name_path and kind == "string":
            self._name_chars = []

    def key(self, name: str) -> None:
        pass  # a key outside the arguments counts only in the reader's path

    def piece(self, chars: str) -> None:
        if self._name_chars is not None:
            self._name_chars.append(chars)

    def end(self, kind: str) -> None:
        if self._name_chars is not None and kind == "string":
            slot, _ = self._slot_path()
            name, self._name_chars = "".join(self._name_chars), None
            if slot is not None:
                if slot.name is None:
                    slot.name = name
                elif slot.name != name:
                    slot.conflict = True
            return
        if self.plan.each and kind == "object" and self._is_element():
            slot, _ = self._slot_path()
            if slot is not None:
                slot.closed = True

    def scalar(self, value: Any) -> None:
        slot, path = self._slot_path()
        if slot is not None and path == self.plan.args_path and slot.streaming:
            if slot.pieces or slot.complete:
                slot.conflict = True
                return
            slot.add(json.dumps(value))
            slot.complete = True
        elif slot is not None and path == self.plan.name_path and slot.name is not None:
            slot.conflict = True  # a repeated name key whose value is not a string

    def fail(self) -> None:
        for slot in self.slots:
            slot.stopped = True

    # --- the sink: the arguments, spelled into the last slot ----------------------------------

    def spelled_key(self, name: str, separator: str) -> None:
        """A key of the arguments' own members: written, and the member's value held apart when
        `tools=` typing could change it; the call stops streaming (it goes out from its final
        value) when that depends on a tool not known yet."""
        slot = self.slots[-1]
        typed = self.typed(slot.name, name)
        if typed is None:
            slot.stopped = True
            self._json.stop_spelling()
            return
        slot.pieces.append(separator + encode_basestring_ascii(name) + ": ")
        if typed:
            self._hold, self._hold_key = [], name
            self._json.spelled = self._hold
            self._json.watch_members = True

    def member_end(self) -> None:
        """The held member's value is complete (the reader watches members only while one is
        held): written as typing makes it, and the spelling goes back to the slot."""
        slot, held = self.slots[-1], self._hold
        assert held is not None and slot.name is not None
        self._hold = None
        value = json.loads("".join(held))
        slot.pieces.append(json.dumps(self.coerce(slot.name, self._hold_key, value)))
        self._json.spelled = slot.pieces
        self._json.watch_members = False

    def spelled_end(self) -> None:
        self.slots[-1].complete = True


__all__ = ["CallPlan", "JsonCalls", "Slot", "plan_for"]
