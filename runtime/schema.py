"""Tool schemas from Python callables: type hints + Google-style docstring -> JSON schema.

In:  a function or method whose parameters all have type hints and whose docstring
     has a description, an `Args:` block describing every parameter, and optionally a
     `Returns:` block.
Out: {"type": "function", "function": {"name", "description", "parameters", ["return"]}},
     the format `tools=` accepts.
Guaranteed: the same dict (keys in the same order) as transformers 5.25.0
`get_json_schema`, and the same exception class names where it refuses a callable
(`DocstringParsingException`, `TypeHintParsingException`, or the underlying Python
error). chatparse uses it only to find parameter types for tool-argument coercion.

Docstring reading, as the reference does it (its regexes, restated):
- description: everything before the first "Args:", "Returns:" or "Raises:" (even
  inside a word), stripped;
- `Args:` block: starts after the first "Args:" + line break that begins a line (only
  whitespace, including a line break, before it) and ends before the next "Returns:"
  or "Raises:"; blank lines are dropped;
- an entry is a line `<indent><\\w+>:`, or (5.24) `<indent><\\w+> (<type>):` with a type
  that holds no parenthesis or line break; its text runs until the next line of the same
  form that is not indented deeper (by one more space or tab) than the entry. Quirk: the
  whitespace after the colon is skipped across a line break, so an entry with nothing
  after its colon takes the next line as its text, even when that line is `name: ...`;
  (5.23 read a typed entry such as `x (int): ...` as text of the one before it);
- an entry's text has every line break (with its surrounding whitespace) turned into
  one space; a trailing "(choices: [...])" becomes the JSON "enum";
- `Returns:` block: after the first line-starting "Returns:" + line break, up to the next
  "Raises:", stripped (line breaks kept).
"""

from __future__ import annotations

import inspect
import json
import re
import sys
import types
from collections.abc import Callable
from enum import Enum
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

# Docstring patterns use the standard `re` module, like the reference's docstring
# parser; its `\s` is exactly `str.isspace`, so `strip()` agrees with it.
# An entry's head: indent, name, then (5.24) an optional "(type)" before the colon.
_ENTRY_HEAD = re.compile(r"([ \t]*)(\w+)(?:[ \t]*\([^()\n]*\))?:")
_WHITESPACE_RUN = re.compile(r"\s+")
_CHOICES_MARKER = re.compile(r"\(choices:", re.IGNORECASE)

_NONE_TYPE = type(None)
# Python types whose values are JSON scalars, with their JSON schema type names.
_SCALAR_TYPE_NAMES = {
    int: "integer",
    float: "number",
    str: "string",
    bool: "boolean",
    _NONE_TYPE: "null",
}


class TypeHintParsingException(Exception):
    """A parameter has no type hint, or one that has no JSON schema equivalent."""


class DocstringParsingException(Exception):
    """The docstring is missing, or does not describe every parameter."""


# --- docstring -------------------------------------------------------------------


def _first_index(text: str, words: tuple[str, ...], start: int = 0) -> int:
    """Index of the earliest occurrence of any of `words` at or after `start`, else len."""
    found = [at for at in (text.find(word, start) for word in words) if at >= 0]
    return min(found, default=len(text))


def _section_body_start(doc: str, header: str) -> int | None:
    """Index just after the first `header` whose preceding whitespace holds a line break."""
    at = doc.find(header)
    while at >= 0:
        before = doc[:at]
        if "\n" in before[len(before.rstrip()) :]:
            return at + len(header)
        at = doc.find(header, at + 1)
    return None


def _join_lines(text: str) -> str:
    """Turn each whitespace run that contains a line break into one space."""
    return _WHITESPACE_RUN.sub(lambda run: " " if "\n" in run.group() else run.group(), text)


def _starts_next_entry(line: str, indent: str) -> bool:
    deeper = line.startswith(indent + " ") or line.startswith(indent + "\t")
    return not deeper and _ENTRY_HEAD.match(line) is not None


def _argument_descriptions(block: str) -> dict[str, str]:
    lines = [line for line in block.split("\n") if line.strip()]
    descriptions: dict[str, str] = {}
    index = 0
    while index < len(lines):
        head = _ENTRY_HEAD.match(lines[index])
        if head is None:
            index += 1
            continue
        indent, name = head.group(1), head.group(2)
        after_colon = lines[index][head.end() :]
        if after_colon.strip():
            text_line, first = index, after_colon.lstrip()
        elif index + 1 < len(lines):
            text_line, first = index + 1, lines[index + 1].lstrip()
        else:
            descriptions[name] = ""
            break
        end = text_line + 1
        while end < len(lines) and not _starts_next_entry(lines[end], indent):
            end += 1
        text = "\n".join([first, *lines[text_line + 1 : end]]).strip()
        descriptions[name] = _join_lines(text)
        index = end
    return descriptions


def _read_docstring(doc: str) -> tuple[str, dict[str, str], str | None]:
    """(description, {argument: description}, returns description or None)."""
    description = doc[: _first_index(doc, ("Args:", "Returns:", "Raises:"))].strip()
    args_start = _section_body_start(doc, "Args:\n")
    if args_start is None:
        arguments = {}
    else:
        args_end = _first_index(doc, ("Returns:", "Raises:"), args_start)
        arguments = _argument_descriptions(doc[args_start:args_end].rstrip())
    returns_start = _section_body_start(doc, "Returns:\n")
    returns = None
    if returns_start is not None:
        returns = doc[returns_start : _first_index(doc, ("Raises:",), returns_start)].strip()
    return description, arguments, returns


def _split_choices(description: str) -> tuple[str, Any] | None:
    """(description without the marker, decoded choices) for a trailing "(choices: ...)".

    The marker is the first "(choices:" (any case) and the choices run to the closing
    parenthesis that ends the description."""
    marker = _CHOICES_MARKER.search(description)
    trimmed = description.rstrip()
    if marker is None or not trimmed.endswith(")"):
        return None
    choices_text = trimmed[marker.end() : -1].lstrip()
    return description[: marker.start()].strip(), json.loads(choices_text)


# --- type hints ------------------------------------------------------------------


def _media_type_schemas() -> dict:
    # The reference maps PIL images and torch tensors when those libraries are
    # installed; a hint can only be one of those classes if its module is loaded.
    schemas = {}
    pil_image = sys.modules.get("PIL.Image")
    if pil_image is not None:
        schemas[pil_image.Image] = {"type": "image"}
    torch = sys.modules.get("torch")
    if torch is not None:
        schemas[torch.Tensor] = {"type": "audio"}
    return schemas


def _plain_type_schema(hint: Any) -> dict | None:
    schemas = {
        int: {"type": "integer"},
        float: {"type": "number"},
        str: {"type": "string"},
        bool: {"type": "boolean"},
        _NONE_TYPE: {"type": "null"},
        list: {"type": "array"},
        tuple: {"type": "array"},
        dict: {"type": "object"},
        Any: {},
        **_media_type_schemas(),
    }
    return schemas.get(hint)


def _enum_schema(values: list) -> dict:
    type_names = list(dict.fromkeys(_SCALAR_TYPE_NAMES[type(value)] for value in values))
    return {"type": type_names[0] if len(type_names) == 1 else type_names, "enum": values}


def _enum_class_schema(enum_class: type[Enum]) -> dict:
    values = [member.value for member in enum_class]
    if not values:
        raise TypeHintParsingException(
            f"Enum {enum_class.__name__} has no members, so no value can match it."
        )
    if any(type(value) not in _SCALAR_TYPE_NAMES for value in values):
        raise TypeHintParsingException(
            f"Enum {enum_class.__name__} has member values that are not JSON scalars "
            f"(int, float, str, bool or None): {values}"
        )
    return _enum_schema(values)


def _union_schema(args: tuple) -> dict:
    members = [_hint_schema(arg) for arg in args if arg is not _NONE_TYPE]
    if len(members) == 1:
        schema = members[0]
    elif all(member.keys() == {"type"} and isinstance(member["type"], str) for member in members):
        # Plain types merge into one "type" list (sorted, without duplicates); members
        # with more keys (items, enum, ...) would lose them, so those use anyOf.
        names = sorted({member["type"] for member in members})
        schema = {"type": names[0] if len(names) == 1 else names}
    else:
        schema = {"anyOf": members}
    if _NONE_TYPE in args:
        schema["nullable"] = True
    return schema


def _tuple_schema(hint: Any, args: tuple) -> dict:
    if not args:
        return {"type": "array"}
    if len(args) == 1:
        raise TypeHintParsingException(
            f"Type hint {str(hint).replace('typing.', '')} is a one-element tuple; use the "
            "element type itself, or list[...] for a variable number of elements."
        )
    if ... in args:
        raise TypeHintParsingException(
            f"Type hint {str(hint).replace('typing.', '')} uses '...'; use list[...] for a "
            "variable number of elements."
        )
    return {"type": "array", "prefixItems": [_hint_schema(arg) for arg in args]}


def _hint_schema(hint: Any) -> dict:
    """The JSON schema of one type hint (a fresh dict the caller may extend)."""
    origin, args = get_origin(hint), get_args(hint)
    if origin is None:
        if isinstance(hint, type) and issubclass(hint, Enum):
            return _enum_class_schema(hint)
        schema = _plain_type_schema(hint)
        if schema is None:
            raise TypeHintParsingException(
                f"Cannot convert type hint {hint!r} to a JSON schema: only int, float, str, "
                "bool, None, Any, Enum classes, Literal, and list/tuple/dict/Union of those "
                "are supported. For anything else, pass a hand-written JSON schema instead."
            )
        return schema
    if origin is Union or origin is types.UnionType:
        return _union_schema(args)
    if origin is Literal and args:
        if any(type(arg) not in _SCALAR_TYPE_NAMES for arg in args):
            raise TypeHintParsingException(
                f"Literal values must be int, float, str, bool or None, got {hint!r}"
            )
        return _enum_schema(list(args))
    if origin is list:
        return {"type": "array", "items": _hint_schema(args[0])} if args else {"type": "array"}
    if origin is tuple:
        return _tuple_schema(hint, args)
    if origin is dict:
        schema = {"type": "object"}
        if len(args) == 2:
            schema["additionalProperties"] = _hint_schema(args[1])
        return schema
    raise TypeHintParsingException(f"Cannot convert type hint {hint!r} to a JSON schema.")


def _parameters_schema(func: Callable, func_name: str) -> dict:
    hints = get_type_hints(func)
    signature = inspect.signature(func)
    # An unannotated first `self`/`cls` is the method's receiver, not a tool argument.
    first = next(iter(signature.parameters), None)
    receiver = None
    if (
        first in ("self", "cls")
        and signature.parameters[first].annotation == inspect.Parameter.empty
    ):
        receiver = first
    required = []
    for name, parameter in signature.parameters.items():
        if name == receiver:
            continue
        if parameter.annotation == inspect.Parameter.empty:
            raise TypeHintParsingException(
                f"Argument {name} of function {func_name} has no type hint"
            )
        if parameter.default == inspect.Parameter.empty:
            required.append(name)

    properties = {}
    for name, hint in hints.items():
        if name == receiver:
            continue
        if name == "return":
            # The model never writes the return value, so an unsupported return hint
            # is left out of the schema instead of refusing the tool.
            try:
                properties[name] = _hint_schema(hint)
            except TypeHintParsingException:
                pass
        else:
            properties[name] = _hint_schema(hint)
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def json_schema_for(func: Callable) -> dict:
    """The tool schema of `func` (see the module docstring for what it reads)."""
    doc = inspect.getdoc(func)
    func_name = getattr(func, "__name__", "operation")
    if not doc:
        raise DocstringParsingException(
            f"Cannot generate a JSON schema for {func_name}: it has no docstring."
        )
    description, argument_docs, returns_doc = _read_docstring(doc.strip())

    parameters = _parameters_schema(func, func_name)
    return_schema = parameters["properties"].pop("return", None)
    if return_schema is not None and returns_doc is not None:
        return_schema["description"] = returns_doc
    for name, schema in parameters["properties"].items():
        if name not in argument_docs:
            raise DocstringParsingException(
                f"Cannot generate a JSON schema for {func_name}: the docstring's Args block "
                f"has no description for the argument '{name}'."
            )
        argument_doc = argument_docs[name]
        choices = _split_choices(argument_doc)
        if choices is not None:
            argument_doc, values = choices
            schema["enum"] = [
                value.strip() if isinstance(value, str) else value for value in values
            ]
        schema["description"] = argument_doc

    function = {"name": func_name, "description": description, "parameters": parameters}
    if return_schema is not None:
        function["return"] = return_schema
    return {"type": "function", "function": function}


__all__ = ["DocstringParsingException", "TypeHintParsingException", "json_schema_for"]
