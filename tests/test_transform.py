"""Differential tests: chatparse.runtime.transform against the reference transform code.

The reference is transformers 5.25.0 `chat_parsing.content_parsers` (`_apply_transform`,
`validate_transform_strings`, `process_field`). Values are compared with exact types and
key order; errors by class and the start of the message.
"""

from __future__ import annotations

import json
from functools import lru_cache
from types import SimpleNamespace

import pytest
import regex
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support import outcome

from chatparse.runtime import transform

pytest.importorskip(
    "transformers", reason="needs the reference, transformers 5.25.0 (.ci/install-oracle)"
)
from transformers.utils.chat_parsing import content_parsers as ref_cp

SETTINGS = settings(max_examples=200, derandomize=True, deadline=None)


def ref_process_field(field, body, captures, *, content, content_args, transform, transform_each):
    spec_field = SimpleNamespace(
        name=field,
        content=content,
        content_args=content_args,
        transform=transform,
        transform_each=transform_each,
    )
    return ref_cp.process_field(body, spec_field, captures)


# --- corpus from the reference test file -----------------------------------------------


TOOL_CALL = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
DOTTED = {"type": "function", "function": {"name": "{content.name}", "arguments": "{content.args}"}}
COHERE_EACH = {"type": "function", "function": {"name": "{tool_name}", "arguments": "{parameters}"}}

PROCESS_CORPUS = [
    # (field, body, captures, content, content_args, transform, transform_each)
    (
        "tool_calls",
        '{"location": "San Francisco, CA"}',
        {"name": "get_current_weather"},
        "json",
        {},
        TOOL_CALL,
        False,
    ),
    (
        "tool_calls",
        '{"name": "get_weather", "args": {"city": {"id": 7}}}',
        {},
        "json",
        {},
        DOTTED,
        False,
    ),
    (
        "tool_calls",
        '[{"tool_call_id": "0", "tool_name": "simple_tool", "parameters": {"a": 1}}]',
        {},
        "json",
        {},
        COHERE_EACH,
        True,
    ),
    (
        "tool_calls",
        '[{"fn": {"name": "a", "args": {"x": 1}}}, {"fn": {"name": "b", "args": {}}}]',
        {},
        "json",
        {},
        {"type": "function", "function": {"name": "{fn.name}", "arguments": "{fn.args}"}},
        True,
    ),
    (
        "tool_calls",
        '{"name": "n", "arguments": {}}',
        {},
        "json",
        {},
        {"type": "function", "function": "{content}"},
        False,
    ),
    ("x", '{"name": "n"}', {}, "json", {}, {"a": "{content.args}"}, False),
    ("x", '{"name": "n"}', {}, "json", {}, {"a": "{content.name.x}"}, False),
    ("x", "{}", {}, "json", {}, {"a": "{missing}"}, False),
    ("x", '{"a": 1}', {}, "json", {}, {"a": "{content}"}, True),
    ("x", '[{"a": 1}, 2]', {}, "json", {}, {"a": "{a}"}, True),
    ("x", "[]", {"name": "n"}, "json", {}, {"a": "{name}"}, True),
    ("x", '[{"name": "from item"}]', {"name": "from capture"}, "json", {}, {"n": "{name}"}, True),
    ("thinking", " plain text ", {}, "text", {}, None, False),
    (
        "citation",
        "<label>1.50</label><hour>7</hour>",
        {"name": "set_alarm"},
        "xml-inline",
        {
            "tag_pattern": r"<(?P<key>\w+)>\s*(?P<value>.*?)\s*</\1>",
            "value_parser": {"name": "json", "args": {"allow_non_json": True}},
        },
        {"source": "{name}", "fields": "{content}"},
        False,
    ),
]


@pytest.mark.parametrize("case", PROCESS_CORPUS)
def test_process_field_reference_corpus(case):
    field, body, captures, content, content_args, template, each = case
    kwargs = dict(
        content=content, content_args=content_args, transform=template, transform_each=each
    )
    mine = outcome(transform.process_field, field, body, captures, **kwargs)
    assert mine == outcome(ref_process_field, field, body, captures, **kwargs)


def test_transform_errors_name_the_placeholder():
    with pytest.raises(ValueError, match=r"'\{content.args\}' is missing key 'args'"):
        transform.apply_transform({"a": "{content.args}"}, {"content": {"name": "n"}})
    with pytest.raises(ValueError, match=r"'\{content.name.x\}' cannot index into str at 'x'"):
        transform.apply_transform({"a": "{content.name.x}"}, {"content": {"name": "n"}})
    with pytest.raises(KeyError, match=r"'\{missing\}' is not defined"):
        transform.apply_transform("{missing}", {"content": 1})


def test_transform_each_errors_name_the_field_and_type():
    kwargs = dict(content="json", content_args={}, transform={"a": "{a}"}, transform_each=True)
    with pytest.raises(ValueError, match="Field 'calls': transform_each .* list, got dict"):
        transform.process_field("calls", '{"a": 1}', {}, **kwargs)
    with pytest.raises(ValueError, match="Field 'calls': transform_each .* dict, got int"):
        transform.process_field("calls", "[1]", {}, **kwargs)


def test_mixed_placeholder_string_rejected_at_load_like_reference():
    for template in (
        {"v": "pre {content.args}"},
        {"label": "name: {content}"},
        ["{a} {b}"],
        "x{content}",
    ):
        mine = outcome(transform.check_transform_strings, "Field 'x'", template)
        assert mine == outcome(ref_cp.validate_transform_strings, "Field 'x'", template)
        assert mine[:2] == ("raise", "ValueError")
    with pytest.raises(ValueError, match=r"Field 'tool'.*'name: \{content\}'.*interpolation"):
        transform.check_transform_strings("Field 'tool'", {"label": "name: {content}"})


def test_placeholder_values_are_shared_not_copied():
    """As in the reference, two placeholders for one name give the same object, so a
    later in-place change (tool-argument coercion) shows through both."""
    scope = {"content": {"k": [1]}}
    template = {"a": "{content}", "b": ["{content.k}"]}
    mine = transform.apply_transform(template, scope)
    ref = ref_cp._apply_transform(template, scope)
    assert (mine["a"] is scope["content"]) == (ref["a"] is scope["content"]) is True
    assert (mine["b"][0] is scope["content"]["k"]) == (ref["b"][0] is scope["content"]["k"]) is True


def test_quirk_placeholder_names_use_regex_word_class():
    # U+0301 is a word character for `regex` (placeholder) but not for `re`; U+00B2 the reverse.
    scope = {"e\u0301": 1, "x\u00b2": 2}
    for template in ("{e\u0301}", "{x\u00b2}", "a {e\u0301}", "a {x\u00b2}"):
        assert outcome(transform.apply_transform, template, scope) == outcome(
            ref_cp._apply_transform, template, scope
        )
        assert outcome(transform.check_transform_strings, "s", template) == outcome(
            ref_cp.validate_transform_strings, "s", template
        )
    assert transform.apply_transform("{e\u0301}", scope) == 1
    assert transform.apply_transform("{x\u00b2}", scope) == "{x\u00b2}"
    assert transform.PLACEHOLDER_RE.pattern == ref_cp._PLACEHOLDER.pattern
    assert isinstance(transform.PLACEHOLDER_RE, regex.Pattern)


def test_tag_finder_reaches_top_level_xml_inline_only():
    seen = []

    def finder(body):
        seen.append(body)
        yield {"key": "k", "value": "[1]"}

    args = {"tag_pattern": r"<(?P<key>\w+)>", "value_parser": {"name": "json"}}
    value = transform.process_field(
        "f",
        "<ignored>",
        {"name": "n"},
        content="xml-inline",
        content_args=args,
        transform={"name": "{name}", "arguments": "{content}"},
        transform_each=False,
        tag_finder=finder,
    )
    assert value == {"name": "n", "arguments": {"k": [1]}}
    assert seen == ["<ignored>"]
    # Other content parsers ignore it.
    assert (
        transform.process_field(
            "f",
            " t ",
            {},
            content="text",
            content_args={},
            transform=None,
            transform_each=False,
            tag_finder=finder,
        )
        == "t"
    )
    assert seen == ["<ignored>"]


# --- property tests ----------------------------------------------------------------

NAMES = ["content", "name", "args", "id", "e\u0301", "x\u00b2"]
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from([1.0, 0.5, "s", ""])
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "name", "args", "id"]), inner, max_size=3),
    ),
    max_leaves=10,
)
scopes = st.one_of(
    st.dictionaries(st.sampled_from(NAMES), values, max_size=4),
    st.fixed_dictionaries(
        {"content": st.dictionaries(st.sampled_from(["a", "b", "name"]), values, max_size=3)},
        optional={"name": values, "args": values},
    ),
)
PLACEHOLDER_STRINGS = [
    "{content}",
    "{content.a}",
    "{content.a.b}",
    "{content.name}",
    "{name}",
    "{args.id}",
    "{missing}",
    "{e\u0301}",
    "{x\u00b2}",
    "{content.}",
    "{.a}",
    "{}",
    "{ content }",
    "{{content}}",
    "pre {content}",
    "{content} post",
    "{a}{b}",
    "literal",
    "",
    "{content.a}.b",
    "{a-b}",
    "{id}",
]
template_leaves = st.one_of(st.sampled_from(PLACEHOLDER_STRINGS), scalars)
templates = st.recursive(
    template_leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["type", "function", "name", "arguments", "{content}"]),
            inner,
            max_size=3,
        ),
    ),
    max_leaves=8,
)


@SETTINGS
@given(template=templates, scope=scopes)
@example(template={"a": "{content.a.b}"}, scope={"content": {"a": [1]}})
@example(template=["{content.a}"], scope={"content": {"b": 1, "a": {}}})
def test_apply_transform_matches_reference(template, scope):
    assert outcome(transform.apply_transform, template, scope) == outcome(
        ref_cp._apply_transform, template, scope
    )


@SETTINGS
@given(template=templates)
def test_check_transform_strings_matches_reference(template):
    assert outcome(transform.check_transform_strings, "Field 'f'", template) == outcome(
        ref_cp.validate_transform_strings, "Field 'f'", template
    )


list_of_dicts = st.lists(
    st.one_of(
        st.dictionaries(st.sampled_from(["name", "args", "id", "a"]), values, max_size=3), values
    ),
    max_size=3,
)
bodies = st.one_of(
    values.map(json.dumps), list_of_dicts.map(json.dumps), st.sampled_from(["not json", " x ", ""])
)
content_choices = st.sampled_from(
    [
        ("json", {}),
        ("json", {"allow_non_json": True}),
        ("text", {}),
        ("kv-lines", {}),
        ("xml-inline", {"tag_pattern": r'"(?P<key>\w+)": (?P<value>[^,}\]]*)'}),
    ]
)


@SETTINGS
@given(
    body=bodies,
    captures=st.dictionaries(
        st.sampled_from(["name", "id", "content"]), st.sampled_from(["n", "7"]), max_size=2
    ),
    parser=content_choices,
    template=st.one_of(st.none(), templates),
    each=st.booleans(),
)
def test_process_field_matches_reference(body, captures, parser, template, each):
    content, content_args = parser
    kwargs = dict(
        content=content, content_args=content_args, transform=template, transform_each=each
    )
    mine = outcome(transform.process_field, "f", body, captures, **kwargs)
    assert mine == outcome(ref_process_field, "f", body, captures, **kwargs)


# --- the generated value functions -------------------------------------------------------------
# A generated module spells a transform out and reads the parsed value and the captures directly,
# falling back to `lookup_placeholder` for the error (compiler/codegen/templates/module.py.j2, `direct`):
# it must give what the reference's `process_field` gives, value or error, for every body.

GENERATED_TRANSFORMS = [
    TOOL_CALL,
    DOTTED,
    COHERE_EACH,
    {"type": "function", "function": "{content}"},
    {"a": ["{content.a.b}", "{name}", 3, None], "b": "{content}"},
    {"n": "{name}", "deep": {"x": "{content.name.x}"}},
    {"content": "{content}", "id": "{id}"},
]


@lru_cache(maxsize=None)
def _generated_value(transform_json: str, each: bool):
    from support import exec_module

    import chatparse

    field = {
        "open_pattern": r"<f(?: (?P<name>\w+))?(?: (?P<id>\d+))?>",
        "close": "</f>",
        "content": "json",
        "transform": json.loads(transform_json),
    }
    if each:
        field["transform_each"] = True
    template = {"start_anchor": "<a>", "fields": {"f": field, "content": {}}}
    return exec_module(chatparse.compile_template(template))["f_value"]


@settings(max_examples=300, derandomize=True, deadline=None)
@given(
    transform_index=st.integers(0, len(GENERATED_TRANSFORMS) - 1),
    each=st.booleans(),
    body=bodies,
    captures=st.fixed_dictionaries(
        {}, optional={"name": st.sampled_from(["n", None]), "id": st.just("7")}
    ),
)
@example(transform_index=0, each=False, body='{"a": 1}', captures={})  # no capture "name"
@example(transform_index=1, each=False, body='{"name": "n"}', captures={})  # no key "args"
@example(transform_index=1, each=False, body='["name"]', captures={})  # a list, not a dict
@example(transform_index=5, each=False, body='{"name": "s"}', captures={"name": "n"})  # a str
@example(transform_index=2, each=True, body='[{"tool_name": "t"}, 3]', captures={})
def test_generated_value_functions_match_reference(transform_index, each, body, captures):
    template = GENERATED_TRANSFORMS[transform_index]
    generated = _generated_value(json.dumps(template), each)
    kwargs = dict(content="json", content_args={}, transform=template, transform_each=each)
    expected = outcome(ref_process_field, "f", body, captures, **kwargs)
    assert outcome(generated, body, captures) == expected
