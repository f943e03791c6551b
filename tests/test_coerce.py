"""Differential tests: chatparse.runtime.coerce against the reference ResponseParser.

The reference is transformers 5.25.0 `chat_parsing.response_parser`: `_schema_types`,
`_coerce`, `ResponseParser._coerce_tool_calls` (with its 5.25 `typed`), the `tools` handling of
`ResponseParser.__init__` (`_tool_params`), and `finalize`'s empty-value rule.
Values are compared with exact types (1, 1.0 and True differ) and key order.
"""

from __future__ import annotations

import copy
import functools
from typing import Literal

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support import outcome as _outcome
from support import typed

from chatparse.runtime import coerce

pytest.importorskip(
    "transformers", reason="needs the reference, transformers 5.25.0 (.ci/install-oracle)"
)
from transformers.utils.chat_parsing import ResponseParser
from transformers.utils.chat_parsing.response_parser import _coerce, _schema_types

SETTINGS = settings(max_examples=200, derandomize=True, deadline=None)

# Errors are compared by class: chatparse's messages are its own.
outcome = functools.partial(_outcome, message_chars=0)

TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|a|>",
    "fields": {"content": {"content": "text"}},
}


def ref_tool_params(tools):
    return ResponseParser(TEMPLATE, prefix="", tools=tools)._tool_params


def ref_coerce_tool_calls(value, tools, typed_parser=False):
    parser = ResponseParser(TEMPLATE, prefix="", tools=tools)
    # As in `_close_current`: coercion only runs when some tool was usable. `typed` (5.25): the
    # value came from a parser of TYPED_STRUCTURED_PARSERS.
    return parser._coerce_tool_calls(value, typed=typed_parser) if parser._tool_params else value


def set_alarm_tools(**properties):
    return [
        {
            "type": "function",
            "function": {
                "name": "set_alarm",
                "parameters": {"type": "object", "properties": properties},
            },
        }
    ]


SET_ALARM_TOOLS = set_alarm_tools(
    hour={"type": "integer"}, enabled={"type": "boolean"}, label={"type": "string"}
)


def assert_coerce_calls_match(value, tools, typed_parser=False):
    """Same result, and the same in-place mutation of the input, as the reference."""
    mine_input, ref_input = copy.deepcopy(value), copy.deepcopy(value)
    mine = outcome(
        coerce.coerce_tool_calls, mine_input, coerce.tool_parameters(tools), typed=typed_parser
    )
    ref = outcome(ref_coerce_tool_calls, ref_input, tools, typed_parser)
    assert mine == ref
    assert typed(mine_input) == typed(ref_input)
    # The message store's entry (`coerce_tool_call`, for tools given): the same, in place too.
    params = coerce.tool_parameters(tools)
    if params:
        store_input = copy.deepcopy(value)
        assert outcome(coerce.coerce_tool_call, store_input, params, typed_parser) == ref
        assert typed(store_input) == typed(ref_input)


# --- corpus from the reference test file -----------------------------------------------


def test_casts_declared_types_in_place():
    tools = set_alarm_tools(
        count={"type": "integer"},
        ratio={"type": "number"},
        enabled={"type": "boolean"},
        tags={"type": "array"},
        note={"type": "string"},
    )
    arguments = {
        "count": "3",
        "ratio": "1.5",
        "enabled": "true",
        "tags": '["a", "b"]',
        "note": "hello",
        "already_typed": 7,
        "extra": "unscheduled",
    }
    call = {"type": "function", "function": {"name": "set_alarm", "arguments": arguments}}
    assert_coerce_calls_match(call, tools)
    assert coerce.coerce_tool_calls(call, coerce.tool_parameters(tools)) is call
    assert call["function"]["arguments"] is arguments
    assert arguments == {
        "count": 3,
        "ratio": 1.5,
        "enabled": True,
        "tags": ["a", "b"],
        "note": "hello",
        "already_typed": 7,
        "extra": "unscheduled",
    }


def test_single_call_list_of_calls_and_non_calls():
    calls = [{"type": "function", "function": {"name": "set_alarm", "arguments": {"hour": "9"}}}]
    for value in (
        calls[0],
        calls,
        [calls, "x"],
        "hello",
        {"function": "x"},
        None,
        3,
        {"function": {"name": ["set_alarm"], "arguments": {"hour": "7"}}},
        {"function": {"name": "set_alarm", "arguments": [["hour", "7"]]}},
        {"function": {"name": "other", "arguments": {"hour": "7"}}},
    ):
        assert_coerce_calls_match(value, SET_ALARM_TOOLS)


def test_merge_duplicates_lists_are_cast_element_wise():
    call = {
        "type": "function",
        "function": {"name": "set_alarm", "arguments": {"hour": ["7", "x", 9]}},
    }
    assert_coerce_calls_match(call, SET_ALARM_TOOLS)
    coerce.coerce_tool_calls(call, coerce.tool_parameters(SET_ALARM_TOOLS))
    assert call["function"]["arguments"] == {"hour": [7, "x", 9]}
    # An array-typed parameter keeps its list as is.
    tools = set_alarm_tools(hour={"type": ["array", "integer"]})
    assert_coerce_calls_match(
        {"function": {"name": "set_alarm", "arguments": {"hour": ["7"]}}}, tools
    )


def test_union_with_string_keeps_scalar_text_but_decodes_objects():
    union = set_alarm_tools(label={"anyOf": [{"type": "string"}, {"type": "object"}]})
    for raw in ("1.50", '{"a": 1}', "[1]"):
        assert_coerce_calls_match(
            {"function": {"name": "set_alarm", "arguments": {"label": raw}}}, union
        )


def test_coerce_argument_reference_cases():
    cases = [
        ("not-a-number", ("integer",)),
        ("5", ("integer", "null")),
        ("null", ("integer", "null")),
        ("true", ("boolean",)),
        ("True", ("boolean",)),
        ("1", ("boolean",)),
        ("false", ("boolean",)),
        ("0", ("boolean",)),
        ("maybe", ("boolean",)),
        ("[1, 2]", ("object",)),
        ('{"a": 1}', ("array",)),
        ('{"a": 1}', ("object",)),
        ("NaN", ("number",)),
        ("inf", ("number",)),
        ("3.0", ("integer",)),
        ("3.5", ("integer",)),
        ("1e3", ("integer",)),
        ("1e3", ("number",)),
        ("7.0", ("number",)),
        ("-0", ("number",)),
        ("1e400", ("integer", "number")),
        (" 7 ", ("integer",)),
        ("1_000", ("number",)),
        ("\u0663", ("integer",)),
        ("None", ("null",)),
        (" null ", ("null",)),
        ("x", ("string", "integer")),
        ("12345678901234567890.0", ("integer",)),
        ("1" * 5000, ("integer", "number")),
    ]
    for raw, types in cases:
        assert outcome(coerce.coerce_argument, raw, types) == outcome(_coerce, raw, types), (
            raw,
            types,
        )


def test_schema_types_reference_cases():
    for schema in (
        {"type": "integer"},
        {"type": ["integer", "string"]},
        {"anyOf": [{"type": "boolean"}, {"type": "string"}]},
        {"type": "integer", "nullable": True},
        {"description": "no type"},
        "integer",
        None,
        {"type": "null", "nullable": True},
        {"oneOf": [{"type": "integer"}], "anyOf": {"type": "x"}},
        {"type": [1, "number", None]},
        {"anyOf": 5},
    ):
        assert outcome(coerce.schema_types, schema) == outcome(_schema_types, schema)


def test_callable_tools_are_converted_to_schemas():
    def set_alarm(hour: int, enabled: bool, label: str | None = None):
        """
        Set an alarm.

        Args:
            hour: The hour the alarm should ring at.
            enabled: Whether the alarm starts out enabled.
            label: An optional label for the alarm.
        """

    class Clock:
        def snooze(self, minutes: float, mode: Literal["soft", "hard"] = "soft") -> None:
            """Snooze.

            Args:
                minutes: How long.
                mode: How.
            """

    tools = [set_alarm, Clock().snooze, Clock.snooze]
    assert typed(coerce.tool_parameters(tools)) == typed(ref_tool_params(tools))
    call = {
        "function": {
            "name": "set_alarm",
            "arguments": {"hour": "7", "enabled": "true", "label": "null"},
        }
    }
    assert_coerce_calls_match(call, tools)
    assert_coerce_calls_match(
        {"function": {"name": "snooze", "arguments": {"minutes": "2", "mode": "1"}}}, tools
    )


def test_callable_without_docstring_fails_like_reference():
    def undocumented(x: int):
        return x

    mine, ref = outcome(coerce.tool_parameters, [undocumented]), outcome(
        ref_tool_params, [undocumented]
    )
    assert mine == ref and mine[:2] == ("raise", "DocstringParsingException")


def test_no_usable_tool_means_no_coercion():
    value = [{"function": {"name": "f", "arguments": {"a": "1"}}}]
    assert coerce.coerce_tool_calls(value, {}) is value
    assert_coerce_calls_match(value, [{"name": 3}, "junk"])


def test_drop_empty_reference_cases():
    output = {
        "role": "",
        "content": "",
        "thinking": None,
        "tool_calls": [],
        "meta": {},
        "n": 0,
        "b": False,
        "t": (),
        "s": " ",
        "x": [None],
    }
    for defaults in ({"role": "assistant"}, {}, {"content": "x", "n": 1}):
        assert typed(coerce.drop_empty(output, defaults)) == typed(ref_finalize(output, defaults))


def ref_finalize(output, defaults):
    parser = ResponseParser(TEMPLATE, prefix="")
    parser._output = dict(output)
    parser._spec.defaults = defaults
    message, _ = parser.finalize()
    return message


# --- property tests ----------------------------------------------------------------

RAW_TOKENS = [
    "1",
    "0",
    "7",
    "-",
    "+",
    ".",
    "e",
    "E",
    "_",
    " ",
    "\n",
    "inf",
    "nan",
    "NaN",
    "Infinity",
    "true",
    "True",
    "false",
    "null",
    "None",
    "[",
    "]",
    "{",
    "}",
    '"',
    ":",
    ",",
    "a",
    "\u0663",
    "1e400",
    "x",
]
raws = st.one_of(
    st.lists(st.sampled_from(RAW_TOKENS), max_size=8).map("".join),
    st.text(max_size=6),
    st.integers(-(10**20), 10**20).map(str),
    st.floats().map(repr),
    st.floats(allow_nan=False).map(lambda f: f"{f:e}"),
    st.sampled_from(
        [
            "true",
            " False ",
            "1",
            "0",
            "null",
            "None",
            "[1, 2]",
            '{"a": 1}',
            "[]",
            "{}",
            "7.0",
            "3.5",
        ]
    ),
)
TYPE_NAMES = ["integer", "number", "boolean", "null", "object", "array", "string", "mystery"]
type_tuples = st.lists(st.sampled_from(TYPE_NAMES), max_size=4).map(tuple)

schemas = st.recursive(
    st.one_of(
        st.fixed_dictionaries(
            {},
            optional={
                "type": st.one_of(
                    st.sampled_from(TYPE_NAMES),
                    st.lists(
                        st.one_of(st.sampled_from(TYPE_NAMES), st.none(), st.integers()), max_size=3
                    ),
                    st.none(),
                ),
                "nullable": st.one_of(st.booleans(), st.none(), st.just(1)),
                "description": st.just("d"),
            },
        ),
        st.sampled_from(["integer", None, 3]),
    ),
    lambda inner: st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(TYPE_NAMES),
            "anyOf": st.one_of(st.lists(inner, max_size=3), st.none(), st.just([])),
            "oneOf": st.lists(inner, max_size=2),
            "nullable": st.booleans(),
        },
    ),
    max_leaves=6,
)


@SETTINGS
@given(raw=raws, types=type_tuples)
@example(raw="3.0", types=("integer",))
@example(raw="1e3", types=("number",))
def test_coerce_argument_matches_reference(raw, types):
    assert outcome(coerce.coerce_argument, raw, types) == outcome(_coerce, raw, types)


@SETTINGS
@given(schema=schemas)
def test_schema_types_matches_reference(schema):
    assert outcome(coerce.schema_types, schema) == outcome(_schema_types, schema)


names = st.sampled_from(["set_alarm", "search", "none"])
useful_schemas = st.sampled_from(
    [
        {"type": "integer"},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "object"},
        {"type": "array"},
        {"type": ["integer", "null"]},
        {"type": "number", "nullable": True},
        {"type": "string"},
        {"anyOf": [{"type": "array"}, {"type": "string"}]},
        {"oneOf": [{"type": "boolean"}, {"type": "integer"}]},
    ]
)
properties = st.dictionaries(
    st.sampled_from(["hour", "q", "flag", "tags"]), st.one_of(useful_schemas, schemas), max_size=4
)
tool_entries = st.one_of(
    st.builds(
        lambda n, p: {
            "type": "function",
            "function": {"name": n, "parameters": {"type": "object", "properties": p}},
        },
        names,
        properties,
    ),
    st.builds(lambda n, p: {"name": n, "parameters": {"properties": p}}, names, properties),
    st.builds(lambda n: {"function": {"name": n}}, names),
    st.builds(lambda n: {"function": {"name": n, "parameters": {"properties": ["x"]}}}, names),
    st.builds(lambda n: {"function": {"name": n, "parameters": "p"}}, names),
    st.sampled_from(
        [{"function": {"name": 3}}, {"function": "f"}, "tool", None, 7, {}, {"name": None}]
    ),
)
rich_tools = st.builds(
    lambda p: {
        "type": "function",
        "function": {"name": "set_alarm", "parameters": {"properties": p}},
    },
    st.fixed_dictionaries({key: useful_schemas for key in ("hour", "q", "flag", "tags")}),
)
tool_lists = st.one_of(
    st.lists(tool_entries, max_size=3),
    st.tuples(st.lists(tool_entries, max_size=2), rich_tools).map(lambda pair: [*pair[0], pair[1]]),
)
argument_values = st.one_of(
    raws, st.lists(st.one_of(raws, st.integers(0, 3)), max_size=3), st.integers(0, 3), st.none()
)
calls = st.one_of(
    st.builds(
        lambda a: {"type": "function", "function": {"name": "set_alarm", "arguments": a}},
        st.dictionaries(
            st.sampled_from(["hour", "q", "flag", "tags", "extra"]),
            argument_values,
            min_size=1,
            max_size=4,
        ),
    ),
    st.builds(
        lambda n, a: {"type": "function", "function": {"name": n, "arguments": a}},
        names,
        st.dictionaries(st.sampled_from(["hour", "q", "extra"]), argument_values, max_size=3),
    ),
    st.builds(
        lambda n, a: {"function": {"name": n, "arguments": a}},
        st.one_of(names, st.integers()),
        raws,
    ),
    st.sampled_from(["text", None, 1, {"function": None}]),
)
values = st.one_of(calls, st.lists(st.one_of(calls, st.lists(calls, max_size=2)), max_size=3))


@SETTINGS
@given(tools=st.one_of(tool_lists, st.none()))
def test_tool_parameters_matches_reference(tools):
    assert outcome(coerce.tool_parameters, tools) == outcome(ref_tool_params, tools)


@SETTINGS
@given(value=values, tools=tool_lists, typed_parser=st.booleans())
def test_coerce_tool_calls_matches_reference(value, tools, typed_parser):
    assert_coerce_calls_match(value, tools, typed_parser)


empties = st.sampled_from([None, "", [], {}, 0, False, (), " ", "x", [None], {"a": None}, 0.0])


@SETTINGS
@given(
    output=st.dictionaries(
        st.sampled_from(["role", "content", "thinking", "tool_calls", "x"]), empties, max_size=5
    ),
    defaults=st.dictionaries(st.sampled_from(["role", "content", "y"]), empties, max_size=2),
)
def test_drop_empty_matches_reference(output, defaults):
    assert typed(coerce.drop_empty(output, defaults)) == typed(ref_finalize(output, defaults))


set_alarm_calls = st.builds(
    lambda a: {"type": "function", "function": {"name": "set_alarm", "arguments": a}},
    st.dictionaries(
        st.sampled_from(["hour", "q", "flag", "tags", "extra"]),
        argument_values,
        min_size=1,
        max_size=5,
    ),
)


@SETTINGS
@given(
    value=st.one_of(set_alarm_calls, st.lists(set_alarm_calls, max_size=3)),
    tool=rich_tools,
    typed_parser=st.booleans(),
)
def test_coerce_calls_of_a_known_tool_match_reference(value, tool, typed_parser):
    assert_coerce_calls_match(value, [tool], typed_parser)


def test_typed_parsers_keep_string_typed_parameters():
    """5.25: for a json (or python-call-list) value, a parameter whose schema allows "string"
    keeps the parser's value; one that does not is still cast."""
    tools = set_alarm_tools(
        code={"type": ["integer", "string"]},
        note={"type": "string", "nullable": True},
        hour={"type": "integer"},
        tags={"anyOf": [{"type": "string"}, {"type": "array"}]},
    )
    arguments = {"code": "007", "note": "null", "hour": "7", "tags": '["a"]'}
    call = {"type": "function", "function": {"name": "set_alarm", "arguments": arguments}}
    for typed_parser in (False, True):
        assert_coerce_calls_match(call, tools, typed_parser)
    coerce.coerce_tool_calls(call, coerce.tool_parameters(tools), typed=True)
    assert call["function"]["arguments"] == {
        "code": "007",
        "note": "null",
        "hour": 7,
        "tags": '["a"]',
    }
