"""Building an engine's pydantic response models at the cost of their fields alone.

An engine's parser returns one pydantic model per delta (vLLM's `DeltaMessage` with its
`DeltaToolCall`s), built from the dicts chatparse's `DeltaStream` gives. vLLM wraps a validator
written in Python around each of its request and response models
(`OpenAIBaseModel.__log_extra_fields__`): it lets pydantic-core validate, then logs the keys the
data has that the model does not declare. Run twice a delta (the message, its call), it was half
of what building a delta cost (a fragment of one call: 4.9 -> 2.6 us, CPU time on the slow
machine of 2026-12-06), and the plugin's dicts never have such keys. `unwrapped_validator` builds
the same model's validator with that wrapper left out, from the model's own core schema.

It is checked where it is made: each sample the caller gives is validated both ways, and the
results must be equal, as models and as the JSON an engine sends (`exclude_unset`, which reads
the fields set). Where they differ, or the schema cannot be rebuilt (another pydantic or engine
version), the model's own validator is used: the shortcut may be lost, never the behaviour.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

LOGGING_WRAPPER = "__log_extra_fields__"  # vLLM's OpenAIBaseModel validator that only logs


def unwrapped_validator(
    model: type, wrapper_name: str, samples: list[dict]
) -> Callable[[dict], Any]:
    """`model.__pydantic_validator__.validate_python`, without the wrap validators named
    `wrapper_name` (on the model and the models inside it), when that gives the same models for
    every sample; else the model's own."""
    own = model.__pydantic_validator__.validate_python  # type: ignore[attr-defined]
    try:
        from pydantic_core import SchemaValidator

        schema = _without_wrapper(model.__pydantic_core_schema__, wrapper_name)  # type: ignore[attr-defined]
        unwrapped = SchemaValidator(schema).validate_python
        if all(_same(unwrapped(sample), own(sample)) for sample in samples):
            return unwrapped
    except Exception:  # noqa: BLE001 (any failure keeps the model's own validator)
        pass
    return own


def _without_wrapper(node: Any, wrapper_name: str) -> Any:
    """A copy of the core schema `node` where each `function-wrap` node whose function is named
    `wrapper_name` is replaced by the schema it wraps (keeping its `ref`, which other nodes may
    point to)."""
    if isinstance(node, list):
        return [_without_wrapper(item, wrapper_name) for item in node]
    if not isinstance(node, dict):
        return node
    if node.get("type") == "function-wrap":
        function = node.get("function", {}).get("function")
        if getattr(function, "__name__", None) == wrapper_name:
            inner = _without_wrapper(node["schema"], wrapper_name)
            if "ref" in node and "ref" not in inner:
                inner = {**inner, "ref": node["ref"]}
            return inner
    return {
        key: (
            value if key in ("metadata", "serialization") else _without_wrapper(value, wrapper_name)
        )
        for key, value in node.items()
    }


def _same(made: Any, expected: Any) -> bool:
    return (
        type(made) is type(expected)
        and made == expected
        and made.model_dump_json(exclude_unset=True) == expected.model_dump_json(exclude_unset=True)
    )
