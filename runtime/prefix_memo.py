"""The parser's state after a prefix, remembered per template class and prefix tail.

In: a parser just constructed (its truncated prefix processed, `initial_events` built). Out, for
the next parser of the same class, options and truncated prefix: that state again, copied, without
running the prefix engine.

Why: a server constructs one parser per message, and the truncated prefix (what the chat template
writes after the start anchor: "", "<think>\\n") is the same for almost every message of a
template. Processing it costs more than a short turn's whole parse for templates whose prefix
opens a region (the edge rule searches every watched delimiter).

`parse` (the bulk engine) restores only the part of that state its engine reads
(`PARSE_ATTRIBUTES`) into a bare instance: a message parsed whole needs no fast path, no run,
no events.

Guarantee: a restored parser equals a freshly constructed one. The state after the prefix is a
function of the class, the options and the truncated prefix, and of `tools` only through values
stored in the message (coercion): a state is remembered only when the prefix stored none (the
message holds the template's defaults alone) and no run is alive (the prefix engine ends with
none). Containers are copied on the way in and out, so no parser shares one with the memo.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# Truncated prefixes longer than this are processed each time: a prompt that ends without its
# generation prompt (the anchor far back) is rare, and its state would be costly to keep.
TAIL_MAX = 256
ENTRIES_MAX = 64  # per class; past it, states are no longer added (the first ones stay)

# What the bulk engine reads and writes of a parser after its prefix (`WholeTextEngines.
# _advance_whole`, `MessageAssembly`'s closing and storing, `_message`): all a bare instance for
# `parse` is given (`restore_for_parse`), with `_tool_params` set by the caller.
PARSE_ATTRIBUTES = (
    "_text",
    "_tail",
    "_end",
    "_base",
    "_pos",
    "_before",
    "_region",
    "region_opened",
    "region_body",
    "_captures",
    "_output",
    "_malformed_event",
    "_event_offsets",
    "_stopped",
    "_zero_width_close_at",
)


def fresh_copy(value: Any) -> Any:
    """A copy of `value` that shares no list or dict with it (events hold captures dicts)."""
    kind = type(value)
    if kind is list:
        return [fresh_copy(item) for item in value]
    if kind is dict:
        return {key: fresh_copy(item) for key, item in value.items()}
    return value


def _flat(value: list | dict) -> bool:
    """Whether `value` holds no list or dict: a shallow copy then shares nothing mutable."""
    items = value.values() if type(value) is dict else value
    return not any(type(item) in (list, dict) for item in items)


def _copier(value: list | dict) -> Callable[[Any], Any]:
    """The cheapest copy of `value` that shares no container with it."""
    if _flat(value):
        return list.copy if type(value) is list else dict.copy
    if type(value) is list and all(type(item) is dict and _flat(item) for item in value):
        return _copy_events  # the events of a prefix without captures
    return fresh_copy


def _copy_events(events: list[dict]) -> list[dict]:
    return [event.copy() for event in events]


class PrefixMemo:
    """The remembered states of one parser class, keyed by (truncated prefix, options)."""

    __slots__ = ("_states", "_parse_states")

    def __init__(self) -> None:
        # key -> (the state, (name, copier) of each attribute that holds a list or dict)
        self._states: dict[tuple, tuple[dict[str, Any], tuple[tuple[str, Callable], ...]]] = {}
        # the same, of `PARSE_ATTRIBUTES` only
        self._parse_states: dict[tuple, tuple[dict[str, Any], tuple[tuple[str, Callable], ...]]] = (
            {}
        )

    def restore(self, parser: Any, key: tuple) -> bool:
        """Give `parser` the state remembered under `key`; False when there is none."""
        found = self._states.get(key)
        if found is None:
            return False
        state, containers = found
        attributes = parser.__dict__
        attributes.update(state)
        for name, copy in containers:
            attributes[name] = copy(state[name])
        return True

    def clear(self) -> None:
        """Forget every remembered state."""
        self._states.clear()
        self._parse_states.clear()

    def restore_for_parse(self, parser_class: type, key: tuple) -> Any:
        """A bare instance of `parser_class` given the part of the state under `key` that `parse`
        reads (`PARSE_ATTRIBUTES`); None when there is none."""
        found = self._parse_states.get(key)
        if found is None:
            return None
        state, containers = found
        parser: Any = object.__new__(parser_class)
        attributes = parser.__dict__
        attributes.update(state)
        for name, copy in containers:
            attributes[name] = copy(state[name])
        return parser

    def has_room(self, key: tuple, states: int = 1) -> bool:
        """Whether `states` more states of a prefix tail `key[0]` would be kept."""
        return len(self._states) + states <= ENTRIES_MAX and len(key[0]) <= TAIL_MAX

    def remember(self, parser: Any, key: tuple, defaults: dict[str, Any]) -> bool:
        """Keep `parser`'s state under `key` when it depends on nothing but the key; whether
        it is kept."""
        if not self.has_room(key):
            return False
        if parser._runs or parser._output != defaults:
            return False
        state = {
            name: fresh_copy(value)
            for name, value in parser.__dict__.items()
            if name != "_tool_params"
        }
        containers = tuple(
            (name, _copier(value)) for name, value in state.items() if type(value) in (list, dict)
        )
        self._states[key] = (state, containers)
        parse_state = {name: state[name] for name in PARSE_ATTRIBUTES}
        self._parse_states[key] = (
            parse_state,
            tuple((name, copy) for name, copy in containers if name in parse_state),
        )
        return True
