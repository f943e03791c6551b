"""Templates nested hundreds or thousands of levels deep (`transform`, `defaults`, `content_args`).

The reference is the oracle, including where it fails: it deep-copies `defaults` and walks a
`transform` recursively (RecursionError at about 500 and 1,000 levels on CPython's default
limit), and keeps `content_args` as it is, however deep. chatparse must give the same message or
error class, and a module it writes must import (CPython's parser refuses more than 200 nested
brackets in one literal).
"""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import (
    chatparse_outcome,
    exec_module,
    needs_reference,
    nested,
    reference_one_shot,
    same_outcome,
)

from chatparse import compile_template
from chatparse.compiler.nested import copy_json, dumps, height


def deep_template(where: str, depth: int) -> dict:
    x = {"open": "<x>", "close": "</x>"}
    template = {"start_anchor": "<A>", "fields": {"x": x, "content": {}}}
    if where == "transform":
        x["transform"] = {"v": nested(depth - 1, "{content}")}
    elif where == "transform_each":
        x.update(content="json", transform=nested(depth, "{a}"), transform_each=True)
    elif where == "defaults":
        template["defaults"] = {"role": "assistant", "d": nested(depth - 1, 1)}
    else:
        x["content_args"] = {"strip": False, "d": nested(depth - 1, "a")}
    return template


TEXTS = ['say <x>[{"a": 1}]</x> done', "no field at all"]


@needs_reference
@pytest.mark.parametrize("depth", [40, 300, 1000])
@pytest.mark.parametrize("where", ["transform", "transform_each", "defaults", "content_args"])
def test_deep_template_agrees_with_reference(where, depth):
    template = deep_template(where, depth)
    for text in TEXTS:
        expected = reference_one_shot(template, text, "")
        for chunks in ([text], [text[:5], text[5:]]):
            got = chatparse_outcome(template, chunks, "")
            assert same_outcome(got, expected), (where, depth, text, got[:2], expected[:2])


def test_content_args_deeper_than_any_recursion_limit_compiles_and_imports():
    # The reference stores content_args and only calls .get on it: 2,500 levels work there.
    template = deep_template("content_args", 2500)
    source = compile_template(template)
    namespace = exec_module(source, "<deep>")
    assert dumps(namespace["TEMPLATE"]) == dumps(template)  # == itself would recurse too deep
    assert namespace["parse_response"]("<x> v </x>", prefix="") == {"x": " v "}
    # The deep value is printed once, in parts that each fit on a line.
    parts = [line for line in source.splitlines() if line.startswith("_TEMPLATE_PART_")]
    assert len(parts) >= 2500 // 8 and max(map(len, parts)) <= 100
    assert 'X_ARGS = TEMPLATE["fields"]["x"]["content_args"]' in source


def test_shallow_template_prints_as_one_literal():
    template = deep_template("transform", 20)
    source = compile_template(template)
    assert "_PART_" not in source and "apply_transform" not in source


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(alphabet='a"\\\x00\u00e9\ud800\U0001f600'),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(value=JSON_VALUES, ascii_only=st.booleans())
def test_flat_json_writer_writes_json_dumps_text(value, ascii_only):
    from chatparse.compiler.nested import _dumps_flat

    for separators in ((",", ":"), None):
        assert _dumps_flat(value, ensure_ascii=ascii_only, separators=separators) == json.dumps(
            value, ensure_ascii=ascii_only, separators=separators
        )
    copied = copy_json(value)
    assert json.dumps(copied) == json.dumps(value)


def test_deep_values_hash_and_copy_without_recursion():
    value = nested(20000, "x")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(50000)  # so that json.dumps itself can write the expected text
    try:
        expected = json.dumps(value, separators=(",", ":"))
    finally:
        sys.setrecursionlimit(limit)
    assert dumps(value, separators=(",", ":")) == expected
    copied = copy_json(value)
    assert copied is not value and height(copied) == 20000
    assert dumps(copied, separators=(",", ":")) == expected
