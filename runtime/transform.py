"""Transforms: reshape a parsed region value into the field's output value.

In:  a field's `transform` template (JSON: dicts, lists, strings, scalars), and a
     scope of names: the open/close pattern's named captures plus `content` (the
     content parser's value), or, with `transform_each`, the keys of one list element.
Out: a new structure of the template's shape in which every string that is exactly
     one `{name}` or `{name.key.key}` placeholder is replaced by the looked-up value.
Guaranteed: the reference's results and errors (`content_parsers._apply_transform`,
`validate_transform_strings`, `process_field`): KeyError for an undefined root name,
ValueError for a missing key or for indexing into a non-dict, each naming the
placeholder. Looked-up values are inserted as they are, not copied, so two
placeholders for the same name share one object (as in the reference).

Only whole-string placeholders exist; a string that mixes a placeholder with other
text is rejected when the template is loaded (`check_transform_strings`), so at parse
time such strings cannot occur. Placeholder names use the `regex` module's `\\w`.
"""

from __future__ import annotations

from ._lazy import compiled
from .content import TagFinder, parse_content, parse_xml_inline

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

PLACEHOLDER = r"\{(\w+(?:\.\w+)*)\}"  # `regex`'s \w, as the reference


def __getattr__(name: str):
    if name == "PLACEHOLDER_RE":  # compiled on first use: importing `regex` is not free
        return compiled(PLACEHOLDER)
    raise AttributeError(name)


def lookup_placeholder(scope: dict, path: str) -> Any:
    """The value of the dotted placeholder `path` ("content.args") in `scope`."""
    root, *keys = path.split(".")
    if root not in scope:
        raise KeyError(
            f"transform placeholder '{{{path}}}' is not defined. Available: {sorted(scope)}"
        )
    value = scope[root]
    for key in keys:
        if not isinstance(value, dict):
            raise ValueError(
                f"transform placeholder '{{{path}}}' cannot index into "
                f"{type(value).__name__} at '{key}'"
            )
        if key not in value:
            raise ValueError(
                f"transform placeholder '{{{path}}}' is missing key '{key}'. "
                f"Available: {sorted(value)}"
            )
        value = value[key]
    return value


def apply_transform(transform: Any, scope: dict) -> Any:
    """Fill the transform template from `scope`; dict keys are never substituted."""
    if isinstance(transform, dict):
        return {key: apply_transform(item, scope) for key, item in transform.items()}
    if isinstance(transform, list):
        return [apply_transform(item, scope) for item in transform]
    if isinstance(transform, str):
        placeholder = compiled(PLACEHOLDER).fullmatch(transform)
        if placeholder is not None:
            return lookup_placeholder(scope, placeholder.group(1))
    return transform


def check_transform_strings(scope: str, transform: Any) -> None:
    """Load-time check: reject any string that holds a placeholder plus other text.

    `scope` prefixes the error message (e.g. "Field 'tool_calls'")."""
    if isinstance(transform, dict):
        for item in transform.values():
            check_transform_strings(scope, item)
    elif isinstance(transform, list):
        for item in transform:
            check_transform_strings(scope, item)
    elif isinstance(transform, str):
        placeholder_re = compiled(PLACEHOLDER)
        if placeholder_re.search(transform) and not placeholder_re.fullmatch(transform):
            raise ValueError(
                f"{scope}: transform string {transform!r} mixes a {{placeholder}} with literal "
                'text. Use either a whole-string placeholder (e.g. "{content}") or a plain '
                "literal; string interpolation is not supported."
            )


def process_field(
    field: str,
    body: str,
    captures: dict,
    *,
    content: str,
    content_args: dict,
    transform: Any,
    transform_each: bool,
    tag_finder: TagFinder | None = None,
) -> Any:
    """A closed region's value: its body through the content parser, then the transform.

    `field` is the field's name (for messages). With `transform_each`, the parsed
    value must be a list of dicts; each element's keys join the captures in scope
    (an element key shadows a capture of the same name) and the result is a list.
    `tag_finder` replaces the regex search of a top-level xml-inline `tag_pattern`.
    """
    if content == "xml-inline" and tag_finder is not None:
        value = parse_xml_inline(body, content_args, tag_finder=tag_finder)
    else:
        value = parse_content(content, body, content_args)
    if transform is None:
        return value
    if not transform_each:
        return apply_transform(transform, {**captures, "content": value})
    return [apply_transform(transform, scope) for scope in each_scope(field, value, captures)]


def each_scope(field: str, value: Any, captures: dict) -> Iterator[dict]:
    """With `transform_each`: the scope for each element of the parsed list, in order (its keys
    join the captures and shadow a capture of the same name). Each element is checked when its
    turn comes, after the earlier ones are filled in, as the reference does."""
    if not isinstance(value, list):
        raise ValueError(
            f"Field '{field}': transform_each requires the parsed content to be a list, "
            f"got {type(value).__name__}."
        )
    for item in value:
        if not isinstance(item, dict):
            raise ValueError(
                f"Field '{field}': transform_each requires each list element to be a dict, "
                f"got {type(item).__name__}."
            )
        yield {**captures, **item}


__all__ = [
    "PLACEHOLDER",
    "apply_transform",
    "each_scope",
    "check_transform_strings",
    "lookup_placeholder",
    "process_field",
]
