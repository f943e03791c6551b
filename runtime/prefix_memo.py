"""The parser's state after a prefix, remembered per template class and prefix tail.

In: a parser just constructed (its truncated prefix processed, `initial_events` built). Out, for
the next parser of the same class, options and truncated prefix: that state again, copied, without
running the prefix engine.

Why: a server constructs one parser per message, and the truncated prefix (what the chat template
writes after the start anchor: "", "<think>\\n") is the same for almost every message of a
template. Processing it costs more than a short turn's whole parse for templates whose prefix
opens a region (the edge rule searches every watched delimiter).

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


def _fresh(value: Any) -> Any:
    """A copy of `value` that shares no list or dict with it (events hold captures dicts)."""
    kind = type(value)
    if kind is list:
        return [_fresh(item) for item in value]
    if kind is dict:
        return {key: _fresh(item) for key, item in value.items()}
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
    return _fresh


def _copy_events(events: list[dict]) -> list[dict]:
    return [event.copy() for event in events]


class PrefixMemo:
    """The remembered states of one parser class, keyed by (truncated prefix, options)."""

    __slots__ = ("_states",)

    def __init__(self) -> None:
        # key -> (the state, (name, copier) of each attribute that holds a list or dict)
        self._states: dict[tuple, tuple[dict[str, Any], tuple[tuple[str, Callable], ...]]] = {}

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

    def remember(self, parser: Any, key: tuple, defaults: dict[str, Any]) -> None:
        """Keep `parser`'s state under `key` when it depends on nothing but the key."""
        if len(self._states) >= ENTRIES_MAX or len(key[0]) > TAIL_MAX:
            return
        if parser._runs or parser._output != defaults:
            return
        state = {
            name: _fresh(value) for name, value in parser.__dict__.items() if name != "_tool_params"
        }
        containers = tuple(
            (name, _copier(value)) for name, value in state.items() if type(value) in (list, dict)
        )
        self._states[key] = (state, containers)
