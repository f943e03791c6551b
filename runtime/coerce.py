"""Tool-argument coercion, and the final message's empty-value rule.

In:  `tools` as `apply_chat_template` accepts them (JSON-schema dicts, with or without
     the {"type": "function", "function": ...} wrapper, or Python functions/methods),
     and closed region values that may be tool calls.
Out: `tool_parameters(tools)` -> {tool name: its `parameters.properties`};
     `coerce_tool_calls(value, tool_params)` -> the value, with each string argument
     of a known tool cast to its schema type where the text allows it;
     `drop_empty(output, defaults)` -> the message without empty non-default keys.
Guaranteed: the reference's results (transformers 5.25.0 `ResponseParser.__init__`'s
`tools` handling, `_coerce_tool_calls`, `_coerce`, `_schema_types`, and `finalize`),
including mutation in place: a tool call's `arguments` dict is updated, not copied.

A tool call is any dict {"function": {"name": str, "arguments": dict}}; a list is
coerced element by element (this is what `transform_each` produces). Only str values
are cast (and str elements of a list argument whose schema is not an array, which is
what `merge_duplicates` produces); values a content parser already typed are final.
"""

from __future__ import annotations

from collections.abc import Callable
from types import FunctionType, MethodType

from .content import json_loads

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from typing import Any


def tool_parameters(tools: list[dict | Callable] | None) -> dict[str, dict]:
    """{tool name: its parameter `properties`} for every usable tool in `tools`.

    Entries without a string `function.name` are skipped; a tool whose `parameters`
    has no `properties` dict maps to {}. A later tool with the same name wins.
    Callables go through `json_schema_for`, whose errors propagate."""
    parameters_by_name: dict[str, dict] = {}
    for tool in tools or []:
        if type(tool) is dict:  # the common case, in fewer steps: a JSON-schema dict
            function = tool.get("function", tool)
            if type(function) is dict:
                name = function.get("name")
                parameters = function.get("parameters")
                if type(name) is str and type(parameters) is dict:
                    properties = parameters.get("properties")
                    if type(properties) is dict:
                        parameters_by_name[name] = properties
                        continue
        if isinstance(tool, (FunctionType, MethodType)):  # inspect.isfunction / ismethod
            from .schema import json_schema_for  # imported on first use: it needs `inspect`

            tool = json_schema_for(tool)
        function = tool.get("function", tool) if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            continue
        parameters = function.get("parameters")
        properties = parameters.get("properties") if isinstance(parameters, dict) else None
        parameters_by_name[function["name"]] = properties if isinstance(properties, dict) else {}
    return parameters_by_name


def schema_types(schema: Any) -> tuple[str, ...]:
    """Candidate JSON types of one parameter schema, in the order casts are tried.

    Reads `type` (a name or a list), then `anyOf` and `oneOf` members recursively;
    `nullable` (how `get_json_schema` marks Optional) adds "null". Not a dict: ()."""
    if not isinstance(schema, dict):
        return ()
    declared = schema.get("type")
    if (
        type(declared) is str
        and "anyOf" not in schema
        and "oneOf" not in schema
        and not schema.get("nullable")
    ):
        return (declared,)  # {"type": "integer", ...}: what the rest would give, sooner
    if isinstance(declared, str):
        types = [declared]
    elif isinstance(declared, list):
        types = [name for name in declared if isinstance(name, str)]
    else:
        types = []
    for union_key in ("anyOf", "oneOf"):
        for member in schema.get(union_key) or []:
            types.extend(schema_types(member))
    if schema.get("nullable") and "null" not in types:
        types.append("null")
    return tuple(types)


_JSON_CONTAINERS = {"object": dict, "array": list}
_STRING_ONLY = ("string",)


def _cast(raw: str, type_name: str) -> tuple[bool, Any]:
    """(True, value) if `raw` reads as `type_name`, else (False, None).

    Raises ValueError for text that does not parse at all; the caller treats that
    like (False, None)."""
    if type_name == "integer":
        try:
            return True, int(raw)
        except ValueError:
            # JSON Schema integers include whole numbers written as floats ("3.0", "1e3").
            number = float(raw)
            return (True, int(number)) if number.is_integer() else (False, None)
    if type_name == "number":
        number = float(raw)
        if number != number or number in (float("inf"), float("-inf")):
            return False, None  # NaN and infinities are not JSON numbers
        # Text without a "." keeps an int ("7", "1e3"); "7.0" stays a float.
        return True, int(number) if number.is_integer() and "." not in raw else number
    if type_name == "boolean":
        word = raw.strip().lower()
        if word in ("true", "1", "false", "0"):
            return True, word in ("true", "1")
        return False, None
    if type_name == "null":
        return (True, None) if raw.strip() in ("null", "None") else (False, None)
    if type_name in _JSON_CONTAINERS:
        decoded = json_loads(raw)  # (json.loads's value or error, without its Python layers)
        if isinstance(decoded, _JSON_CONTAINERS[type_name]):
            return True, decoded
    return False, None


def coerce_argument(raw: str, types: tuple[str, ...]) -> Any:
    """The first successful cast of `raw` over `types`, else `raw` unchanged.

    "string" and unknown type names never cast, so a union containing "string" still
    casts when another member matches first in order (e.g. ["integer", "string"])."""
    for type_name in types:
        try:
            cast, value = _cast(raw, type_name)
        except ValueError:
            continue
        if cast:
            return value
    return raw


def _coerce_arguments(arguments: dict, properties: dict, typed: bool) -> None:
    for key, argument in arguments.items():
        schema = properties.get(key)
        if type(schema) is not dict and not isinstance(schema, dict):
            continue  # no types (a schema of None has none either)
        declared = schema.get("type")
        if (
            type(declared) is str
            and "anyOf" not in schema
            and "oneOf" not in schema
            and not schema.get("nullable")
        ):
            # `schema_types`'s common case, inline. A string never casts, so a parameter that is
            # a string and nothing else keeps every value as it is (most parameters are).
            if declared == "string":
                continue
            types: tuple[str, ...] = (declared,)
        else:
            types = schema_types(schema)
            if not types or types == _STRING_ONLY or (typed and "string" in types):
                continue
        if isinstance(argument, str):
            arguments[key] = coerce_argument(argument, types)
        elif isinstance(argument, list) and "array" not in types:
            arguments[key] = [
                coerce_argument(item, types) if isinstance(item, str) else item for item in argument
            ]


def coerce_tool_calls(value: Any, tool_params: dict[str, dict], *, typed: bool = False) -> Any:
    """Cast the string arguments of the tool call(s) in `value`, in place.

    Returns `value` itself, except that a list comes back as a new list of the same
    (coerced) elements. With no tools (`tool_params` empty) nothing is touched, as
    the reference skips coercion entirely then. `typed` (a parser of
    content.TYPED_STRUCTURED_PARSERS made the value, 5.25): a parameter whose schema allows
    "string" keeps what the parser gave, since its syntax already told strings apart."""
    if not tool_params:
        return value
    return coerce_tool_call(value, tool_params, typed)


def coerce_tool_call(value: Any, tool_params: dict[str, dict], typed: bool) -> Any:
    """`coerce_tool_calls(value, tool_params, typed=typed)` for tools given (`tool_params` not
    empty): one call, or a list of them (recursively). A call of plain dicts, what a structured
    content parser gives, is read in fewer steps (the message store calls this per value)."""
    if type(value) is dict:
        function = value.get("function")
    elif isinstance(value, list):
        return [coerce_tool_call(item, tool_params, typed) for item in value]
    else:
        function = value.get("function") if isinstance(value, dict) else None
    if type(function) is not dict and not isinstance(function, dict):
        return value
    name, arguments = function.get("name"), function.get("arguments")
    if not isinstance(name, str) or not isinstance(arguments, dict):
        return value
    properties = tool_params.get(name)
    if properties:
        _coerce_arguments(arguments, properties, typed)
    return value


def drop_empty(output: dict, defaults: dict) -> dict:
    """The final message: keys from `defaults` always stay; any other key is dropped
    when its value is None or an empty str, list or dict (0 and False stay)."""
    # A true value is not empty; of the false ones, only the numbers and False stay.
    return {
        key: value
        for key, value in output.items()
        if value
        or key in defaults
        or (value is not None and not isinstance(value, (list, dict, str)))
    }


__all__ = [
    "coerce_argument",
    "coerce_tool_call",
    "coerce_tool_calls",
    "drop_empty",
    "schema_types",
    "tool_parameters",
]
