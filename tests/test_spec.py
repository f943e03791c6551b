"""Tests for compiler/frontend/spec.py: template dict -> TemplateSpec.

Every rejection is checked twice: our class and message fragments (field, key, offending value),
and the reference's `load_response_template` raising the same class. Accepted templates are
compared field by field with what the reference builds. A hypothesis test throws random
template-shaped dicts at both and asserts they agree on accept/reject and on the error class.
"""

from __future__ import annotations

import copy
import dataclasses

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatparse.compiler.frontend.spec import (
    FIELD_KEYS,
    TEMPLATE_KEYS,
    DelimiterSpec,
    FieldSpec,
    TemplateSpec,
    load_spec,
)
from chatparse.runtime.transform import check_transform_strings

pytest.importorskip(
    "transformers", reason="needs the reference, transformers 5.25.0 (.ci/install-oracle)"
)
from transformers.utils.chat_parsing import content_parsers as ref_content
from transformers.utils.chat_parsing.response_parser import parse_response as ref_parse_response
from transformers.utils.chat_parsing.response_templates import load_response_template


def outcome(load, template):
    """("ok", result) or ("error", exception class, message)."""
    try:
        return ("ok", load(template))
    except Exception as exc:  # noqa: BLE001 - comparing classes is the point
        return ("error", type(exc), str(exc))


def anchored(fields, **top):
    """A template with a start anchor, so only the fields under test can fail."""
    return {"start_anchor": "<|assistant|>", "fields": fields, **top}


def one_field(**field):
    return anchored({"c": field})


# --- rejections ------------------------------------------------------------------------------

# (id, template, expected class, fragments that must all appear in our message)
INVALID = [
    ("not-a-dict", ["fields"], ValueError, ["response_template", "list"]),
    ("not-a-dict-none", None, ValueError, ["response_template", "NoneType"]),
    ("version-2", anchored({"c": {}}, version=2), ValueError, ["version", "2"]),
    ("version-none", anchored({"c": {}}, version=None), ValueError, ["version", "null"]),
    ("version-string", anchored({"c": {}}, version="1"), ValueError, ["version", '"1"']),
    ("unknown-top-key", anchored({"c": {}}, feilds={}), ValueError, ["unknown keys", "feilds"]),
    ("defaults-not-dict", anchored({"c": {}}, defaults="x"), ValueError, ["defaults", '"x"']),
    ("defaults-none", anchored({"c": {}}, defaults=None), ValueError, ["defaults", "NoneType"]),
    ("fields-missing", {"start_anchor": "A"}, ValueError, ["fields", "non-empty"]),
    ("fields-empty", anchored({}), ValueError, ["fields", "{}"]),
    ("fields-list", anchored([{"open": "a"}]), ValueError, ["fields", "list"]),
    ("field-not-dict", anchored({"c": "text"}), ValueError, ["Field 'c'", '"text"', "dict"]),
    ("field-none", anchored({"c": None}), ValueError, ["Field 'c'", "NoneType"]),
    ("unknown-field-key", one_field(opne="<a>"), ValueError, ["Field 'c'", "opne"]),
    ("unknown-content", one_field(content="yaml"), ValueError, ["Field 'c'", "content", "yaml"]),
    ("content-none", one_field(content=None), ValueError, ["Field 'c'", "content", "null"]),
    ("content-int", one_field(content=1), ValueError, ["Field 'c'", "content", "1"]),
    (
        "both-open",
        one_field(open="<a>", open_pattern="<a>"),
        ValueError,
        ["Field 'c'", "'open'", "'open_pattern'", "<a>"],
    ),
    (
        "both-close",
        one_field(close="</a>", close_pattern="</a>"),
        ValueError,
        ["Field 'c'", "'close'", "'close_pattern'"],
    ),
    (
        "both-start-anchor",
        {"fields": {"c": {}}, "start_anchor": "A", "start_anchor_pattern": "A"},
        ValueError,
        ["response_template", "'start_anchor'", "'start_anchor_pattern'"],
    ),
    ("open-int", one_field(open=5), ValueError, ["Field 'c'", "'open'", "int 5"]),
    ("open-none", one_field(open=None), ValueError, ["Field 'c'", "'open'", "NoneType"]),
    ("open-dict", one_field(open={"a": 1}), ValueError, ["Field 'c'", "'open'", "dict"]),
    ("open-tuple-is-not-a-list", one_field(open=("a",)), ValueError, ["'open'", "tuple"]),
    ("open-empty-list", one_field(open=[]), ValueError, ["Field 'c'", "'open'", "empty list"]),
    (
        "open-list-non-str",
        one_field(open=["<a>", 3]),
        ValueError,
        ["Field 'c'", "'open'", "int 3", "index 1"],
    ),
    ("open-empty-literal", one_field(open=""), ValueError, ["Field 'c'", "'open'", "''"]),
    ("open-list-empty-literal", one_field(open=["<a>", ""]), ValueError, ["'open'", "''"]),
    ("close-empty-list", one_field(open="<a>", close=[]), ValueError, ["Field 'c'", "'close'"]),
    (
        "start-anchor-empty-list",
        {"fields": {"c": {}}, "start_anchor": []},
        ValueError,
        ["response_template", "'start_anchor'", "empty list"],
    ),
    (
        "start-anchor-none",
        {"fields": {"c": {}}, "start_anchor": None},
        ValueError,
        ["response_template", "'start_anchor'", "NoneType"],
    ),
    (
        "start-anchor-empty",
        {"fields": {"c": {}}, "start_anchor": ""},
        ValueError,
        ["'start_anchor'", "''"],
    ),
    (
        "open-pattern-invalid",
        one_field(open_pattern="(<a>"),
        ValueError,
        ["Field 'c'", "'open_pattern'", "/(<a>/"],
    ),
    (
        "close-pattern-invalid",
        one_field(close_pattern="[a"),
        ValueError,
        ["Field 'c'", "'close_pattern'", "/[a/"],
    ),
    (
        "close-pattern-bad-property",
        one_field(close_pattern=r"\p{Nope}"),
        ValueError,
        ["'close_pattern'", r"/\p{Nope}/"],
    ),
    (
        "start-anchor-pattern-invalid",
        {"fields": {"c": {}}, "start_anchor_pattern": "(?P<"},
        ValueError,
        ["response_template", "'start_anchor_pattern'", "(?P<"],
    ),
    ("join-not-str", one_field(repeats=True, join=5), ValueError, ["Field 'c'", "'join'", "int 5"]),
    ("join-list", one_field(repeats=True, join=["\n"]), ValueError, ["'join'", "list"]),
    (
        "join-without-repeats",
        one_field(join="\n"),
        ValueError,
        ["Field 'c'", "'join'", "no 'repeats'"],
    ),
    ("join-repeats-false", one_field(join="", repeats=False), ValueError, ["'join'", "false"]),
    (
        "transform-each-int",
        one_field(transform_each=1, transform="{content}"),
        ValueError,
        ["Field 'c'", "'transform_each'", "int 1"],
    ),
    (
        "transform-each-none",
        one_field(transform_each=None),
        ValueError,
        ["'transform_each'", "NoneType"],
    ),
    (
        "transform-each-string",
        one_field(transform_each="true", transform={}),
        ValueError,
        ["'transform_each'", '"true"'],
    ),
    (
        "transform-each-without-transform",
        one_field(transform_each=True),
        ValueError,
        ["Field 'c'", "'transform_each'", "'transform'"],
    ),
    (
        "transform-each-transform-none",
        one_field(transform_each=True, transform=None),
        ValueError,
        ["Field 'c'", "'transform_each'"],
    ),
    (
        "transform-mixed-placeholder",
        one_field(transform={"id": "call-{content}"}),
        ValueError,
        ["Field 'c'", "call-{content}"],
    ),
    (
        "transform-mixed-nested",
        one_field(transform={"a": [1, {"b": "{x.y} tail"}]}),
        ValueError,
        ["Field 'c'", "{x.y} tail"],
    ),
    (
        "transform-mixed-bare-string",
        one_field(transform="<{content}>"),
        ValueError,
        ["Field 'c'", "<{content}>"],
    ),
    (
        "groups-without-transform-open",
        one_field(open_pattern=r"<(?P<name>\w+)>"),
        ValueError,
        ["Field 'c'", "name", "'transform'", "open_pattern"],
    ),
    (
        "groups-without-transform-close",
        one_field(open="<a>", close_pattern=r"</(?P<tag>a)>"),
        ValueError,
        ["Field 'c'", "tag", "close_pattern"],
    ),
    (
        "two-implicit-fields",
        anchored({"a": {}, "b": {"close": "x"}}),
        ValueError,
        ["'a'", "'b'", "open"],
    ),
    ("missing-start-anchor", {"fields": {"c": {}}}, ValueError, ["start_anchor"]),
    # Classes other than ValueError, where the reference's own operations fail.
    (
        "quirk-content-unhashable-list",
        one_field(content=["text"]),
        TypeError,
        ["Field 'c'", "content", "list"],
    ),
    ("quirk-content-unhashable-dict", one_field(content={}), TypeError, ["Field 'c'", "content"]),
    (
        "quirk-open-pattern-int",
        one_field(open_pattern=5),
        TypeError,
        ["Field 'c'", "'open_pattern'", "int 5"],
    ),
    ("quirk-open-pattern-none", one_field(open_pattern=None), TypeError, ["'open_pattern'"]),
    (
        "quirk-close-pattern-list",
        one_field(close_pattern=["a"]),
        TypeError,
        ["Field 'c'", "'close_pattern'", "list"],
    ),
    (
        "quirk-start-anchor-pattern-bool",
        {"fields": {"c": {}}, "start_anchor_pattern": True},
        TypeError,
        ["response_template", "'start_anchor_pattern'", "bool"],
    ),
    (
        "quirk-flag-clash-is-plain-valueerror",
        one_field(open_pattern="(?a)(?u)x"),
        ValueError,
        ["Field 'c'", "'open_pattern'", "(?a)(?u)x"],
    ),
    (
        "quirk-unsortable-unknown-top-keys",
        {**anchored({"c": {}}), "x": 1, 1: 2},
        TypeError,
        ["response_template", "unknown keys", "'x'"],
    ),
    (
        "quirk-unsortable-unknown-field-keys",
        anchored({"c": {"x": 1, 2: 3}}),
        TypeError,
        ["Field 'c'", "unknown keys"],
    ),
    ("quirk-two-implicit-int-names", anchored({1: {}, 2: {}}), TypeError, ["open", "1"]),
    ("quirk-two-implicit-one-int-name", anchored({"a": {}, 2: {}}), TypeError, ["open", "2"]),
    # The first failing check decides, in the reference's order.
    (
        "order-version-before-unknown-keys",
        anchored({"c": {}}, version=2, junk=1),
        ValueError,
        ["version"],
    ),
    (
        "order-unknown-keys-before-defaults",
        anchored({"c": {}}, junk=1, defaults=[]),
        ValueError,
        ["junk"],
    ),
    ("order-defaults-before-fields", {"defaults": [], "fields": []}, ValueError, ["defaults"]),
    (
        "order-field-before-start-anchor",
        {"fields": {"c": {"content": "yaml"}}},
        ValueError,
        ["yaml"],
    ),
    (
        "order-fields-in-source-order",
        anchored({"b": {"content": "yaml"}, "a": {"open": 5}}),
        ValueError,
        ["Field 'b'", "yaml"],
    ),
    (
        "order-unknown-key-before-unhashable-content",
        one_field(content=[], bogus=1),
        ValueError,
        ["bogus"],
    ),
    ("order-content-before-open", one_field(content="yaml", open=5), ValueError, ["yaml"]),
    ("order-unhashable-content-before-open", one_field(content=[], open=5), TypeError, ["content"]),
    ("order-open-before-close", one_field(open=[], close_pattern=5), ValueError, ["'open'"]),
    ("order-close-before-join", one_field(open="a", close=5, join=5), ValueError, ["'close'"]),
    (
        "order-both-keys-before-literal-type",
        one_field(open=5, open_pattern=6),
        ValueError,
        ["'open_pattern'"],
    ),
    ("open-list-only-empty-literal", one_field(open=[""]), ValueError, ["''"]),
    ("order-member-types-before-empty-literal", one_field(open=["", 1]), ValueError, ["int 1"]),
    ("order-join-type-before-repeats", one_field(join=5), ValueError, ["'join'", "int 5"]),
    (
        "order-join-before-transform-each",
        one_field(join="x", transform_each=1),
        ValueError,
        ["'repeats'"],
    ),
    (
        "order-transform-each-before-placeholders",
        one_field(transform_each="y", transform="a{content}"),
        ValueError,
        ["'transform_each'"],
    ),
    (
        "order-transform-present-skips-groups-check",
        one_field(open_pattern="(?P<g>a)", transform="{g}!"),
        ValueError,
        ["{g}!"],
    ),
    (
        "order-fields-before-implicit-rule",
        anchored({"a": {}, "b": {}, "c": {"open": 1}}),
        ValueError,
        ["Field 'c'"],
    ),
    (
        "order-implicit-rule-before-start-anchor",
        {"fields": {"a": {}, "b": {}}},
        ValueError,
        ["'a'", "'b'"],
    ),
    (
        "order-start-anchor-before-defaults-copy",
        {"fields": {"c": {}}, "start_anchor": 1},
        ValueError,
        ["'start_anchor'", "int 1"],
    ),
]


@pytest.mark.parametrize(
    "template, error, fragments", [case[1:] for case in INVALID], ids=[case[0] for case in INVALID]
)
def test_invalid_template_is_rejected_like_the_reference(template, error, fragments):
    with pytest.raises(Exception) as ours:
        load_spec(copy.deepcopy(template))
    assert type(ours.value) is error, f"{type(ours.value).__name__}: {ours.value}"
    for fragment in fragments:
        assert fragment in str(ours.value), f"{fragment!r} not in {str(ours.value)!r}"
    reference = outcome(load_response_template, copy.deepcopy(template))
    assert reference[0] == "error" and reference[1] is error, reference


def test_placeholder_rule_is_the_shared_runtime_check():
    """load_spec rejects a transform exactly when check_transform_strings does, with its class."""
    transforms = [
        "{content}",
        "plain",
        "{content.args}",
        "x{content}",
        "{content}{content}",
        "{ content }",
        "{}",
        {"a": ["{b}", {"c": "d{e}"}]},
        [1, None, True, "{ok}"],
        {"k": "{a-b}"},
    ]
    for transform in transforms:
        shared = outcome(lambda t: check_transform_strings("Field 'c'", t), transform)
        ours = outcome(load_spec, one_field(transform=transform))
        reference = outcome(load_response_template, one_field(transform=transform))
        assert ours[0] == shared[0] == reference[0], (transform, ours, shared, reference)
        if ours[0] == "error":
            assert ours[1] is shared[1] is reference[1]
            assert "Field 'c'" in ours[2]


# --- accepted templates ----------------------------------------------------------------------

SMOLLM_LIKE = {
    "start_anchor": "<|im_start|>assistant\n",
    "defaults": {"role": "assistant"},
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "content": {"close_pattern": r"\s*<\|im_end\|>"},
        "tool_calls": {
            "open_pattern": r"\s*<tool_call>",
            "close": "</tool_call>",
            "content": "json",
            "repeats": True,
            "transform": {"type": "function", "function": "{content}"},
        },
    },
}


def test_smollm_like_template_builds_the_expected_spec():
    spec = load_spec(SMOLLM_LIKE)
    assert [f.name for f in spec.fields] == ["reasoning_content", "content", "tool_calls"]
    assert spec.implicit == "content"
    assert [f.implicit for f in spec.fields] == [False, True, False]
    assert spec.start_anchor.role == "start_anchor" and spec.start_anchor.field is None
    assert spec.start_anchor.literals == ("<|im_start|>assistant\n",)
    assert spec.start_anchor.describe() == r'start_anchor "<|im_start|>assistant\n"'
    think = spec.field("reasoning_content")
    assert think.open.describe() == 'open "<think>"'
    assert (think.open.role, think.open.key, think.open.field) == (
        "open",
        "open",
        "reasoning_content",
    )
    assert spec.field("content").close.describe() == r"close_pattern /\s*<\|im_end\|>/"
    tools = spec.field("tool_calls")
    assert tools.repeats is True and tools.dirty is True and think.dirty is False
    assert tools.transform == {"type": "function", "function": "{content}"}
    assert spec.defaults == {"role": "assistant"}
    assert spec.source == SMOLLM_LIKE


def test_dump_lists_every_field_and_delimiter():
    dump = load_spec(SMOLLM_LIKE).dump()
    assert dump.splitlines() == [
        r'start anchor: start_anchor "<|im_start|>assistant\n"',
        'defaults: {"role": "assistant"}',
        "implicit: content",
        "field reasoning_content: content=text optional",
        '  open "<think>"',
        '  close "</think>"',
        "field content (implicit): content=text optional",
        r"  close_pattern /\s*<\|im_end\|>/",
        "field tool_calls: content=json optional repeats dirty",
        r"  open_pattern /\s*<tool_call>/",
        '  close "</tool_call>"',
        '  transform {"type": "function", "function": "{content}"}',
    ]


def test_literals_are_deduplicated_then_sorted_longest_first_stably():
    literals = ["<a>", "xyz", "<abc>", "<a>", "<ab>", "xyz"]
    spec = load_spec(one_field(open=literals))
    open_ = spec.field("c").open
    assert open_.literals == ("<a>", "xyz", "<abc>", "<ab>")
    # Equal lengths ("<a>", "xyz") keep their first-seen order.
    expected_order = ["<abc>", "<ab>", "<a>", "xyz"]
    assert open_.pattern == "|".join(regex.escape(s) for s in expected_order)
    reference = load_response_template(one_field(open=literals)).fields["c"]
    assert open_.pattern == reference.open_re.pattern
    assert list(open_.literals) == reference.open_literals
    assert open_.describe() == 'open ["<a>", "xyz", "<abc>", "<ab>"]'


@pytest.mark.parametrize(
    "value, can_extend",
    [
        ("<a>", False),
        (["<a>", "<b>"], False),
        (["<t", "<tool>"], True),
        (["<tool>", "<t"], True),
        (["ab", "ab"], False),  # duplicates are not a strict prefix
        (["x", "y", "xy"], True),
    ],
)
def test_can_extend_means_one_literal_strictly_prefixes_another(value, can_extend):
    ours = load_spec(one_field(open=value)).field("c").open
    reference = load_response_template(one_field(open=value)).fields["c"]
    assert ours.can_extend is can_extend is reference.open_literal_can_extend


def test_pattern_delimiter_keeps_source_and_sorted_group_names():
    template = one_field(
        open_pattern=r"<(?P<zeta>\w+) (?P<alpha>\d+)>",
        close_pattern=r"</(?P<tag>\w+)>",
        transform={"name": "{zeta}", "n": "{alpha}", "tag": "{tag}", "body": "{content}"},
    )
    field = load_spec(template).field("c")
    assert field.open.literals is None and field.open.can_extend is False
    assert field.open.pattern == r"<(?P<zeta>\w+) (?P<alpha>\d+)>"
    assert field.open.group_names == ("alpha", "zeta")
    assert field.close.group_names == ("tag",)
    assert field.group_names == ("alpha", "tag", "zeta")
    assert field.open.compile().flags & regex.DOTALL


def test_start_anchor_pattern_and_implicit_absent():
    spec = load_spec({"fields": {"c": {"open": "<c>"}}, "start_anchor_pattern": "(?P<r>a)|b"})
    assert spec.implicit is None
    assert spec.start_anchor.key == "start_anchor_pattern"
    assert spec.start_anchor.group_names == ("r",)  # no rule against captures in the anchor
    assert load_response_template(copy.deepcopy(spec.source)).implicit is None


def test_quirk_repeats_and_optional_are_reduced_to_truthiness():
    """The reference stores repeats/optional raw and tests them for truthiness later."""
    cases = [("yes", True), (1, True), ([0], True), (0, False), ("", False), (None, False)]
    for raw, truthy in cases:
        template = one_field(open="<a>", repeats=raw, optional=raw)
        field = load_spec(template).field("c")
        reference = load_response_template(template).fields["c"]
        assert field.repeats is truthy and bool(reference.repeats) is truthy
        assert field.optional is truthy and bool(reference.optional) is truthy
    defaults = load_spec(one_field(open="<a>")).field("c")
    assert defaults.repeats is False and defaults.optional is True


def test_quirk_join_accepts_any_truthy_repeats():
    field = load_spec(one_field(open="<a>", repeats="no", join="\n")).field("c")
    assert field.join == "\n" and field.repeats is True


@pytest.mark.parametrize("content_args", [None, [1, 2], "strip", 0])
def test_quirk_non_dict_content_args_is_accepted_and_only_fails_at_parse_time(content_args):
    template = one_field(content_args=content_args)
    assert load_spec(template).field("c").content_args == content_args
    load_response_template(template)  # accepted by the reference too ...
    with pytest.raises(AttributeError):  # ... which only fails once it parses content
        ref_parse_response("hello", template, prefix="")


@pytest.mark.parametrize("version", [1, 1.0, True])
def test_quirk_version_is_compared_by_equality(version):
    """`True == 1`, so the reference accepts version true (and 1.0)."""
    template = anchored({"c": {}}, version=version)
    assert load_spec(template).implicit == "c"
    assert load_response_template(template).implicit == "c"


def test_quirk_bytes_pattern_is_accepted_like_the_reference():
    """regex compiles bytes too; JSON cannot produce them, but the reference accepts them."""
    template = one_field(open_pattern=b"<x>")
    assert load_spec(template).field("c").open.pattern == b"<x>"
    assert load_response_template(template).fields["c"].open_re.pattern == b"<x>"


def test_quirk_non_string_field_names_are_accepted():
    template = anchored({1: {"open": "<a>"}, "b": {}})
    spec = load_spec(template)
    assert [f.name for f in spec.fields] == [1, "b"] and spec.implicit == "b"
    assert list(load_response_template(template).fields) == [1, "b"]


def test_explicit_none_transform_is_no_transform():
    field = load_spec(one_field(transform=None)).field("c")
    assert field.transform is None and field.transform_each is False


def test_dirty_marks_the_structured_content_parsers():
    expected_dirty = {"json", "xml-inline", "kv-lines"}
    for name in ["text", "int", "float", "bool", "json", "xml-inline", "kv-lines"]:
        field = load_spec(one_field(content=name)).field("c")
        assert field.dirty is (name in expected_dirty)
        assert field.dirty is (name not in ref_content.STREAMABLE_PARSERS)


def test_spec_is_frozen_and_independent_of_the_input():
    template = copy.deepcopy(SMOLLM_LIKE)
    template["fields"]["tool_calls"]["content_args"] = {"unquoted_keys": True}
    template["fields"]["reasoning_content"]["open"] = ["<think>", "<thought>"]
    spec = load_spec(template)
    snapshot = spec.dump(), copy.deepcopy(spec.source)
    template["defaults"]["role"] = "user"
    template["fields"]["tool_calls"]["transform"]["type"] = "changed"
    template["fields"]["tool_calls"]["content_args"]["unquoted_keys"] = False
    template["fields"]["reasoning_content"]["open"].append("<x>")
    del template["fields"]["content"]
    assert (spec.dump(), spec.source) == snapshot
    assert spec.defaults == {"role": "assistant"}
    assert spec.field("tool_calls").content_args == {"unquoted_keys": True}
    assert isinstance(spec.fields, tuple)
    assert isinstance(spec.field("reasoning_content").open.literals, tuple)
    for obj, attr in [
        (spec, "implicit"),
        (spec.fields[0], "repeats"),
        (spec.start_anchor, "pattern"),
    ]:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, attr, None)


def test_field_lookup_by_name():
    spec = load_spec(SMOLLM_LIKE)
    assert spec.field("tool_calls") is spec.fields[2]
    with pytest.raises(KeyError, match="nope"):
        spec.field("nope")


def test_long_offending_values_are_shortened_in_messages():
    with pytest.raises(ValueError) as error:
        load_spec(one_field(open={"k": "x" * 1000}))
    assert "'open'" in str(error.value) and '{"k": "xxx' in str(error.value)
    assert len(str(error.value)) < 200


# --- differential property test --------------------------------------------------------------

# Each key draws mostly from values of the right shape (GOOD), sometimes from values of the right
# shape that a check rejects (BAD), and sometimes from JUNK of any shape, so that both verdicts
# and every check are reached.
LITERAL = st.sampled_from(["<a>", "<ab>", "<a", "a", "\n", "{content}", "<|end|>"])
# Rejected as a literal ("") or as a transform string ("x{content}").
BAD_STRING = st.sampled_from(["", "x{content}"])
GOOD_LITERALS = LITERAL | st.lists(LITERAL, min_size=1, max_size=3)
BAD_LITERALS = (
    BAD_STRING
    | st.lists(LITERAL | BAD_STRING | st.integers(0, 1), max_size=3)
    | st.sampled_from([("a",), 3])
)
GOOD_PATTERN = st.sampled_from(
    [r"\s*<a>", "<a>|<ab>", "(?P<name>\\w+):", "(?P<n>a)(?P<m>b)?", r"\p{L}+", ".*?", "(?i)END"]
)
BAD_PATTERN = st.sampled_from(["(", "[a", "(?a)(?u)x", "a{2,1}", "(?P<1>a)"])
JUNK = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-2, 3)
    | st.sampled_from([1.0, 0.5])
    | LITERAL
    | BAD_STRING,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(LITERAL, inner, max_size=3),
    max_leaves=6,
)
TRANSFORM = st.recursive(
    LITERAL | st.sampled_from(["{n}", "{name}", "{content.x}"]) | st.integers(0, 2) | st.none(),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from("abc"), inner, max_size=3),
    max_leaves=5,
)
BAD_TRANSFORM = st.sampled_from(["id-{n}", {"a": ["{content} x"]}])
FIELD_VALUES = {  # key: (GOOD, BAD)
    "open": (GOOD_LITERALS, BAD_LITERALS),
    "close": (GOOD_LITERALS, BAD_LITERALS),
    "open_pattern": (GOOD_PATTERN, BAD_PATTERN),
    "close_pattern": (GOOD_PATTERN, BAD_PATTERN),
    "content": (
        st.sampled_from(["text", "json", "kv-lines", "int"]),
        st.sampled_from(["yaml", "Text"]),
    ),
    "content_args": (st.dictionaries(st.sampled_from(["strip", "kv_sep"]), JUNK, max_size=2), JUNK),
    "repeats": (st.booleans() | st.sampled_from([0, 1, "", "yes", None]), JUNK),
    "join": (st.sampled_from(["\n", "", ", "]), st.integers(0, 1)),
    "optional": (st.booleans() | st.sampled_from([0, None]), JUNK),
    "transform": (TRANSFORM, BAD_TRANSFORM),
    "transform_each": (st.booleans(), st.sampled_from([0, 1, None, "true"])),
    "opne": (JUNK, JUNK),
    7: (JUNK, JUNK),
}
DELIMITER_KEYS = [("open", "open_pattern"), ("close", "close_pattern")]
OTHER_FIELD_KEYS = [
    key for key in FIELD_VALUES if key not in {k for pair in DELIMITER_KEYS for k in pair}
]
TOP_VALUES = {
    "start_anchor": (GOOD_LITERALS, BAD_LITERALS),
    "start_anchor_pattern": (GOOD_PATTERN, BAD_PATTERN),
    "defaults": (st.dictionaries(st.sampled_from(["role", "content"]), JUNK, max_size=2), JUNK),
    "version": (st.sampled_from([1, 1.0, True]), st.sampled_from([2, "1", None, 0])),
    "junk": (JUNK, JUNK),
    7: (JUNK, JUNK),
}
# Keys that should appear rarely: each one makes a template (or field) invalid on its own.
RARE_KEYS = {"opne", 7, "junk"}


def _chance(draw, times, out_of):
    """True about `times` out of `out_of`. Hypothesis favours the first element, so the rare
    outcome sits at the end."""
    return draw(st.sampled_from(range(out_of))) >= out_of - times


def _pick_keys(draw, keys, common=(1, 4)):
    return [key for key in keys if _chance(draw, *((1, 60) if key in RARE_KEYS else common))]


def _value_for(draw, table, key):
    good, bad = table[key]
    roll = draw(st.sampled_from(range(50)))
    if roll >= 48:
        return draw(JUNK)
    if roll >= 43:
        return draw(bad)
    return draw(good)


@st.composite
def field_dicts(draw):
    if _chance(draw, 1, 40):
        return draw(JUNK)  # sometimes not a dict at all
    keys = []
    for literal_key, pattern_key in DELIMITER_KEYS:
        # Absent, literal, pattern, or (rarely) both.
        kinds = (
            [()] * 3 + [(literal_key,)] * 4 + [(pattern_key,)] * 3 + [(literal_key, pattern_key)]
        )
        keys += draw(st.sampled_from(kinds))
    keys += _pick_keys(draw, OTHER_FIELD_KEYS)
    if "join" in keys and not _chance(draw, 1, 4):
        keys.append("repeats")  # mostly with repeats, so later checks are reached
    return {key: _value_for(draw, FIELD_VALUES, key) for key in dict.fromkeys(keys)}


@st.composite
def template_dicts(draw):
    if _chance(draw, 1, 50):
        return draw(JUNK)
    anchors = [("start_anchor",)] * 6 + [("start_anchor_pattern",)] * 3
    anchors += [(), ("start_anchor", "start_anchor_pattern")]  # rarely none, or both
    keys = list(draw(st.sampled_from(anchors)))
    keys += _pick_keys(draw, ["defaults", "version", "junk", 7], (1, 3))
    template = {key: _value_for(draw, TOP_VALUES, key) for key in keys}
    if not _chance(draw, 1, 25):
        names = st.sampled_from(["content", "reasoning", "tool_calls", "extra", 3])
        template["fields"] = draw(st.dictionaries(names, field_dicts(), min_size=1, max_size=3))
    elif draw(st.booleans()):
        template["fields"] = draw(JUNK)
    return template


def assert_same_spec(spec: TemplateSpec, reference) -> None:
    """Everything the reference builds, compared with the spec."""
    assert [f.name for f in spec.fields] == list(reference.fields)
    assert spec.implicit == reference.implicit
    assert spec.defaults == reference.defaults
    assert_same_delimiter(
        spec.start_anchor, reference.start_anchor_re, reference.start_anchor_literals, None
    )
    for field in spec.fields:
        ref = reference.fields[field.name]
        assert isinstance(field, FieldSpec)
        assert_same_delimiter(
            field.open, ref.open_re, ref.open_literals, ref.open_literal_can_extend
        )
        assert_same_delimiter(
            field.close, ref.close_re, ref.close_literals, ref.close_literal_can_extend
        )
        assert field.content == ref.content
        assert field.content_args == ref.content_args
        assert field.repeats is bool(ref.repeats)
        assert field.optional is bool(ref.optional)
        assert field.join == ref.join
        assert field.transform == ref.transform
        assert field.transform_each is ref.transform_each
        assert field.implicit is (ref.open_re is None)
        assert field.dirty is (ref.content not in ref_content.STREAMABLE_PARSERS)


def assert_same_delimiter(ours: DelimiterSpec | None, ref_re, ref_literals, ref_can_extend) -> None:
    if ref_re is None:
        assert ours is None
        return
    assert ours.pattern == ref_re.pattern
    assert ours.group_names == tuple(sorted(ref_re.groupindex))
    assert ours.compile().flags == ref_re.flags
    if ref_literals is None:
        assert ours.literals is None
    else:
        assert list(ours.literals) == ref_literals
    if ref_can_extend is not None:
        assert ours.can_extend is ref_can_extend


@settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(template_dicts())
def test_random_templates_get_the_reference_verdict(template):
    ours = outcome(load_spec, copy.deepcopy(template))
    reference = outcome(load_response_template, copy.deepcopy(template))
    assert ours[0] == reference[0], (ours, reference)
    if ours[0] == "error":
        assert ours[1] is reference[1], (ours, reference)
    else:
        assert_same_spec(ours[1], reference[1])
        assert ours[1].source == template


def test_the_random_templates_reach_both_verdicts_and_many_checks():
    """Guards the generator above: it must produce accepted templates and varied rejections."""
    seen_messages, accepted = set(), 0

    @settings(
        max_examples=300,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(template_dicts())
    def collect(template):
        nonlocal accepted
        result = outcome(load_response_template, copy.deepcopy(template))
        if result[0] == "ok":
            accepted += 1
        else:
            # The reference's message with the specifics cut off names the check that failed.
            seen_messages.add(
                (
                    result[1].__name__,
                    result[2].split(":")[1][:25] if ":" in result[2] else result[2][:25],
                )
            )

    collect()
    assert accepted >= 15, accepted
    assert len(seen_messages) >= 15, sorted(seen_messages)


def test_the_random_templates_use_every_allowed_key():
    """If a key is ever added to the spec, the generator must learn to produce it."""
    assert FIELD_KEYS <= set(FIELD_VALUES)
    assert TEMPLATE_KEYS <= set(TOP_VALUES) | {"fields"}
