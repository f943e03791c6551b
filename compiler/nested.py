"""Template data nested to any depth: copied, written as JSON and printed as Python, without recursion.

In:  JSON-like values from a template (`content_args`, `transform`, the template itself), which
     the reference stores or walks as they are, however deep (`content_args` nested 10,000 levels
     is accepted and works there).
Out: `copy_json` (a deep copy), `dumps` (`json.dumps`'s exact text), `height` (the nesting depth)
     and `split_parts` (a value cut into module-level parts that each nest at most `limit` deep).
Guarantee: none of these recurses per level of the value, so no `RecursionError` comes from
them; where the reference itself recurses per level (`deepcopy` of `defaults`, walking a
`transform`), chatparse keeps that recursion in the same place on purpose, so both fail alike.

Why parts: CPython's parser refuses more than 200 nested brackets in one expression ("too many
nested parentheses"), and black and jinja recurse per bracket. A value nested deeper than
`LITERAL_MAX_DEPTH` is written as assignments, innermost first, each a plain literal that refers
to the previous one by name; ordinary templates, far shallower, print as one literal as before.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from dataclasses import dataclass
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any, TypeVar

_T = TypeVar("_T")

# Deepest nesting printed as one literal: well below the parser's 200 brackets and black's
# recursion (the built-in templates nest at most 6 deep). A deeper value is cut into parts that
# nest at most PART_DEPTH deep, short enough for one line each (black's time grows with lines).
LITERAL_MAX_DEPTH = 32
PART_DEPTH = 8

_SCALARS = (str, int, float, bool, type(None))


def _children(value: Any) -> Iterable[tuple[Any, Any]]:
    """The (key, item) pairs of a dict, the (index, item) pairs of a list or tuple."""
    return value.items() if isinstance(value, dict) else enumerate(value)


def copy_json(value: _T) -> _T:
    """A deep copy of dicts and lists (key order kept, shared and cyclic parts kept shared and
    cyclic, as `copy.deepcopy` keeps them); other leaves go through `copy.deepcopy`."""
    if not isinstance(value, (dict, list)):
        return value if isinstance(value, _SCALARS) else copy.deepcopy(value)
    memo: dict[int, object] = {}
    root: Any = {} if isinstance(value, dict) else []
    memo[id(value)] = root
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        for key, item in _children(source):
            if isinstance(item, (dict, list)):
                copied = memo.get(id(item))
                if copied is None:
                    copied = memo[id(item)] = {} if isinstance(item, dict) else []
                    stack.append((item, copied))
            else:
                copied = item if isinstance(item, _SCALARS) else copy.deepcopy(item)
            if isinstance(target, dict):
                target[key] = copied
            else:
                target.append(copied)
    return root


def height(value: object) -> int:
    """How deep dicts and lists nest in `value`: 0 for a scalar, 1 for a flat dict or list."""
    best = 0
    stack = [(value, 1)]
    seen: set[int] = set()
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, (dict, list)) or id(item) in seen:
            continue
        seen.add(id(item))  # a cycle counts once
        best = max(best, depth)
        stack.extend((child, depth + 1) for _, child in _children(item))
    return best


def dumps(value: object, **options) -> str:
    """`json.dumps(value, **options)`, the same text for values nested deeper than its C encoder's
    recursion allows. Options: `ensure_ascii`, `separators`, `default` (others are not needed)."""
    try:
        return json.dumps(value, **options)
    except RecursionError:
        return _dumps_flat(value, **options)


class _Text(str):
    """Text ready for the output (as opposed to a value still to encode)."""


class _Leave:
    """Marks the end of a container on the work stack, for the circular-reference check."""

    def __init__(self, key: int) -> None:
        self.key = key


def _float_text(number: float) -> str:
    if number != number:
        return "NaN"
    if number in (float("inf"), float("-inf")):
        return "Infinity" if number > 0 else "-Infinity"
    return float.__repr__(number)


def _key_text(key: object) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float_text(key)
    if key is True or key is False or key is None:
        return {True: "true", False: "false", None: "null"}[key]
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _dumps_flat(value, *, ensure_ascii=True, separators=None, default=None) -> str:
    """`json.dumps` with an explicit work stack in place of the C encoder's recursion."""
    item_separator, key_separator = separators or (", ", ": ")
    encode = encode_basestring_ascii if ensure_ascii else encode_basestring
    out: list[str] = []
    active: set[int] = set()  # containers being written, as json's check_circular
    work: list[object] = [value]
    while work:
        item = work.pop()
        if isinstance(item, _Text):
            out.append(item)
        elif isinstance(item, _Leave):
            active.discard(item.key)
        elif isinstance(item, str):
            out.append(encode(item))
        elif item is None or item is True or item is False:
            out.append({None: "null", True: "true", False: "false"}[item])
        elif isinstance(item, int):
            out.append(int.__repr__(item))
        elif isinstance(item, float):
            out.append(_float_text(item))
        elif isinstance(item, (list, tuple, dict)):
            if id(item) in active:
                raise ValueError("Circular reference detected")
            is_dict = isinstance(item, dict)
            if not item:
                out.append("{}" if is_dict else "[]")
                continue
            active.add(id(item))
            pieces: list[object] = [_Text("{" if is_dict else "[")]
            for index, (key, child) in enumerate(_children(item)):
                if index:
                    pieces.append(_Text(item_separator))
                if is_dict:
                    pieces.append(_Text(encode(_key_text(key)) + key_separator))
                pieces.append(child)
            pieces += [_Text("}" if is_dict else "]"), _Leave(id(item))]
            work.extend(reversed(pieces))
        elif default is not None:
            work.append(default(item))
        else:
            raise TypeError(f"Object of type {type(item).__name__} is not JSON serializable")
    return "".join(out)


@dataclass(frozen=True)
class Ref:
    """A module-level name standing for a part of a deep literal; `py_literal` prints the name."""

    name: str


def split_parts(name: str, value: object, limit: int = PART_DEPTH):
    """`value` as `(parts, root)`: `parts` is a tuple of (part name, literal) pairs, innermost
    first, and `root` the value to assign to `name`; in each literal a `Ref` stands for an
    earlier part and dicts and lists nest at most `limit` deep. A value that nests no deeper than
    LITERAL_MAX_DEPTH comes back as `((), value)`, one literal."""
    if height(value) <= LITERAL_MAX_DEPTH:
        return (), value
    parts: list[tuple[str, object]] = []
    # Post-order walk: a container is rebuilt once its children are; one whose rebuilt form
    # reaches `limit` levels becomes a part, and its parent sees a name (0 levels).
    rebuilt: dict[int, tuple[object, int]] = {}
    stack = [(value, False)]
    while stack:
        item, children_done = stack.pop()
        if id(item) in rebuilt:
            continue
        if not children_done:
            stack.append((item, True))
            stack.extend(
                (child, False) for _, child in _children(item) if isinstance(child, (dict, list))
            )
            continue
        deepest = 0
        copied: dict | list = {} if isinstance(item, dict) else []
        for key, child in _children(item):
            if isinstance(child, (dict, list)):
                child, child_height = rebuilt[id(child)]
                deepest = max(deepest, child_height)
            if isinstance(copied, dict):
                copied[key] = child
            else:
                copied.append(child)
        item_height = deepest + 1
        if item_height >= limit and item is not value:
            part_name = f"_{name}_PART_{len(parts) + 1}"
            parts.append((part_name, copied))
            rebuilt[id(item)] = (Ref(part_name), 0)
        else:
            rebuilt[id(item)] = (copied, item_height)
    return tuple(parts), rebuilt[id(value)][0]
