"""xml-inline's `value_parser_by` (transformers 5.25) against the reference: the content parser on
its own, a DeepSeek V3.2 DSML template whole and streamed, and the tool-call coercion it turns off.

Values are compared with exact types, errors by class and whole message.
"""

from __future__ import annotations

import pytest
from support import typed
from test_python_call_list import assert_template_matches_reference

from chatparse.runtime import content

pytest.importorskip(
    "transformers", reason="needs the reference, transformers>=5.25 (the test extra)"
)
from transformers.utils.chat_parsing import content_parsers as ref_cp  # noqa: E402

if "value_parser_by" not in (ref_cp._xml_inline.__doc__ or ""):
    pytest.skip(
        "the installed transformers predates value_parser_by (5.25)", allow_module_level=True
    )


def full_outcome(parse) -> tuple:
    try:
        return ("ok", typed(parse()))
    except Exception as error:  # noqa: BLE001 - the class and message are what is compared
        return ("raise", type(error).__name__, str(error))


def assert_same(text: str, args) -> None:
    mine = full_outcome(lambda: content.parse_content("xml-inline", text, args))
    ref = full_outcome(lambda: ref_cp.parse_content(text, "xml-inline", args))
    if ref[:2] == ("raise", "KeyError"):
        # An unknown parser name: the reference's message is the bare name, chatparse's says more
        # (test_content.py's rule).
        mine, ref = mine[:2], ref[:2]
    assert mine == ref


DSML_TAG = (
    r'<｜DSML｜parameter name="(?P<key>[^"]+)" string="(?P<string>true|false)">'
    r"(?P<value>.*?)</｜DSML｜parameter>"
)
BY_STRING = {
    "group": "string",
    "parsers": {"false": {"name": "json", "args": {"allow_non_json": True}}},
}
DSML_ARGS = {"tag_pattern": DSML_TAG, "value_parser_by": BY_STRING}


def dsml(name: str, string: str, value: str) -> str:
    return f'<｜DSML｜parameter name="{name}" string="{string}">{value}</｜DSML｜parameter>'


DSML_BODY = (
    dsml("city", "true", "Paris")
    + dsml("days", "false", "3")
    + dsml("code", "true", "007")
    + dsml("opts", "false", '{"unit": "C", "hours": [1, 2]}')
    + dsml("raw", "false", "not json")
    + dsml("flag", "false", "true")
    + dsml("none", "false", "null")
)

CONTENT_CASES = [
    (DSML_BODY, DSML_ARGS),
    ("", DSML_ARGS),
    # the per-tag parser, with `value_parser` for the captures without an entry
    (DSML_BODY, {**DSML_ARGS, "value_parser": {"name": "text"}}),
    (DSML_BODY, {**DSML_ARGS, "value_parser": {"name": "int"}}),
    (
        DSML_BODY,
        {
            "tag_pattern": DSML_TAG,
            "value_parser_by": {
                "group": "string",
                "parsers": {"true": None, "false": {"name": "float"}},
            },
            "value_parser": {"name": "json"},
        },
    ),
    # a group that does not take part falls back to `value_parser`
    (
        "<a t=1>2</a><b>3</b>",
        {
            "tag_pattern": r"<(?P<key>\w+)(?: t=(?P<t>\d))?>(?P<value>[^<]*)</\w+>",
            "value_parser_by": {"group": "t", "parsers": {"1": {"name": "int"}}},
            "value_parser": {"name": "float"},
        },
    ),
    # entries of every kind: a parser name where a dict belongs fails on `.get`
    (
        DSML_BODY,
        {
            "tag_pattern": DSML_TAG,
            "value_parser_by": {"group": "string", "parsers": {"true": "json"}},
        },
    ),
    (DSML_BODY, {"tag_pattern": DSML_TAG, "value_parser_by": {"group": "string", "parsers": {}}}),
    (
        DSML_BODY,
        {
            "tag_pattern": DSML_TAG,
            "value_parser_by": {"group": "string", "parsers": {"false": {"name": "nope"}}},
        },
    ),
    # a group tag_pattern does not define: an error at the first tag, none without tags
    (DSML_BODY, {"tag_pattern": DSML_TAG, "value_parser_by": {"group": "typ", "parsers": {}}}),
    ("no tags", {"tag_pattern": DSML_TAG, "value_parser_by": {"group": "typ", "parsers": {}}}),
    # a bad shape: an error before any tag is read
    ("", {"tag_pattern": DSML_TAG, "value_parser_by": {"group": 1, "parsers": {}}}),
    (DSML_BODY, {"tag_pattern": DSML_TAG, "value_parser_by": {"group": "string", "parsers": []}}),
    (DSML_BODY, {"tag_pattern": DSML_TAG, "value_parser_by": {"parsers": {}}}),
    (DSML_BODY, {"tag_pattern": DSML_TAG, "value_parser_by": {}}),
    (DSML_BODY, {"tag_pattern": DSML_TAG, "value_parser_by": ["string"]}),
    (DSML_BODY, {"tag_pattern": DSML_TAG, "value_parser_by": "string"}),
    (DSML_BODY, {"tag_pattern": DSML_TAG, "value_parser_by": None}),
    # the checks come in the reference's order: tag_pattern first, then value_parser_by
    ("", {"value_parser_by": {"group": 1}}),
    (
        "<a>1</a>",
        {
            "tag_pattern": r"<(?P<k>a)>(?P<value>.)</a>",
            "value_parser_by": {"group": "k", "parsers": {}},
        },
    ),
    # nested: a value parser that is itself xml-inline with value_parser_by
    (
        "<p><q n=1>7</q><q n=2>8</q></p>",
        {
            "tag_pattern": r"<(?P<key>p)>(?P<value>.*?)</p>",
            "value_parser": {
                "name": "xml-inline",
                "args": {
                    "tag_pattern": r"<q n=(?P<key>\d)>(?P<value>\d)</q>",
                    "value_parser_by": {"group": "key", "parsers": {"1": {"name": "int"}}},
                },
            },
        },
    ),
]


@pytest.mark.parametrize("text, args", CONTENT_CASES)
def test_content_parser_matches_the_reference(text, args):
    assert_same(text, args)


# --- a DSML template, whole and streamed ---------------------------------------------------------

DSML_TEMPLATE = {
    "version": 1,
    "defaults": {"role": "assistant"},
    "start_anchor": ["<｜Assistant｜>", "</function_results>"],
    "fields": {
        "reasoning_content": {"open_pattern": r"\s*<think>", "close": "</think>"},
        "tool_calls": {
            "open_pattern": r'\s*(?:<｜DSML｜function_calls>\s*)?<｜DSML｜invoke name="(?P<name>[^"]+)">',
            "close_pattern": r"\s*</｜DSML｜invoke>",
            "repeats": True,
            "content": "xml-inline",
            "content_args": DSML_ARGS,
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
        "content": {
            "close_pattern": r"\s*(?:<｜end▁of▁sentence｜>|</think>|</｜DSML｜function_calls>)",
            "repeats": True,
            "join": "\n\n",
        },
    },
}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "code": {"type": "integer"},
                    "raw": {"type": "integer"},
                    "flag": {"type": "boolean"},
                },
            },
        },
    }
]


def invoke(name: str, body: str) -> str:
    return f'<｜DSML｜invoke name="{name}">\n{body}\n</｜DSML｜invoke>'


TEMPLATE_TEXTS = [
    "<think>plan</think>Sure.\n\n<｜DSML｜function_calls>\n"
    + invoke("get_weather", DSML_BODY)
    + "\n"
    + invoke("other", dsml("q", "true", "x") + dsml("n", "false", "[1, 2.5]"))
    + "\n</｜DSML｜function_calls><｜end▁of▁sentence｜>",
    "<｜DSML｜function_calls>"
    + invoke("get_weather", dsml("code", "true", "007") + dsml("days", "true", "3")),
    invoke("get_weather", dsml("days", "false", "3") + dsml("days", "true", "4")),
    invoke("get_weather", ""),
    invoke("get_weather", dsml("city", "true", "Par")),
]


@pytest.mark.parametrize("text", TEMPLATE_TEXTS, ids=[str(i) for i in range(len(TEMPLATE_TEXTS))])
@pytest.mark.parametrize("tools", [None, TOOLS], ids=["no-tools", "tools"])
def test_dsml_template_matches_the_reference(text, tools):
    assert_template_matches_reference(
        DSML_TEMPLATE, text, prefix="<｜Assistant｜>", tools=tools, seed=len(text)
    )


def test_value_parser_by_turns_tool_call_coercion_off():
    """With tools, 5.25 leaves a `value_parser_by` field's values as the per-tag parsers gave them
    (`string="true"` "007" for an integer parameter stays "007"); the same field without it casts.
    """
    text = "<｜DSML｜function_calls>" + invoke("get_weather", dsml("code", "true", "007"))
    expected = assert_template_matches_reference(DSML_TEMPLATE, text, prefix="", tools=TOOLS)
    call = {"type": "function", "function": {"name": "get_weather", "arguments": {"code": "007"}}}
    assert expected[1] == typed({"role": "assistant", "tool_calls": [call]})
    plain_args = {"tag_pattern": DSML_TAG}
    plain = {
        **DSML_TEMPLATE,
        "fields": {
            **DSML_TEMPLATE["fields"],
            "tool_calls": {**DSML_TEMPLATE["fields"]["tool_calls"], "content_args": plain_args},
        },
    }
    cast = assert_template_matches_reference(plain, text, prefix="", tools=TOOLS)
    assert cast[1] != expected[1]


@pytest.mark.parametrize("content", ["json", "kv-lines"])
def test_any_field_naming_value_parser_by_skips_coercion(content):
    """The reference tests the key in `content_args`, whatever the parser: a json field with a
    `value_parser_by` entry (which json ignores) is not coerced either."""
    template = {
        "start_anchor": "@",
        "fields": {
            "tool_calls": {
                "open": "<c>",
                "close": "</c>",
                "content": content,
                "content_args": {"value_parser_by": {"group": "g", "parsers": {}}},
                "transform": {
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": "{content}"},
                },
            },
            "content": {},
        },
    }
    text = '<c>{"code": "7"}</c>' if content == "json" else "<c>code: 7</c>"
    for tools in (None, TOOLS):
        assert_template_matches_reference(template, text, tools=tools)


def test_generated_module_turns_coercion_off_at_compile_time():
    from chatparse import compile_template

    source = compile_template(DSML_TEMPLATE)
    assert "coerce=False" in source
    assert "tag_finder=TOOL_CALLS_TAG.groupdicts" in source  # the tag pattern is compiled too


# --- chatparse.openai: a DSML body streams with the per-tag parsers, uncoerced -------------------

STREAM_TEXTS = [text for text in TEMPLATE_TEXTS if text.count('name="days"') < 2]  # no repeated key


@pytest.mark.parametrize("text", STREAM_TEXTS, ids=[str(i) for i in range(len(STREAM_TEXTS))])
@pytest.mark.parametrize("tools", [None, TOOLS], ids=["no-tools", "tools"])
def test_delta_stream_accumulates_to_the_message(text, tools):
    """Every chunking's deltas give `parse_response`'s message (checked by test_openai_deltas's
    `check_stream`, with the openai package's accumulator)."""
    from support import chunkings
    from test_openai_deltas import check_stream, run_stream

    import chatparse

    prefix = "<｜Assistant｜>"
    try:
        expected = chatparse.parse_response(text, DSML_TEMPLATE, prefix=prefix, tools=tools)
    except ValueError:
        pytest.skip("the text does not parse (an unclosed tag): nothing to stream")
    for pieces in chunkings(text, seed=len(text)):
        stream, batches = run_stream(DSML_TEMPLATE, prefix, tools, pieces)
        check_stream(stream, batches, expected)


def test_delta_stream_sends_a_string_parameter_before_its_tag_closes():
    """The per-tag parser is known at the tag's head: a `string="true"` value (no parser, and no
    coercion with value_parser_by even where the tool's schema says integer) goes out as it
    arrives; a `string="false"` one when its tag closes, parsed."""
    from chatparse.openai import DeltaStream

    text = invoke("get_weather", dsml("code", "true", "0071234") + dsml("days", "false", "3"))
    stream = DeltaStream(DSML_TEMPLATE, "<｜Assistant｜>", tools=TOOLS)
    sent = []
    for ch in text[: text.index("1234") + 4]:
        for delta in stream.feed(ch):
            sent.extend(f["function"].get("arguments", "") for f in delta.get("tool_calls", []))
    assert "".join(sent) == '{"code": "0071234'
    for ch in text[text.index("1234") + 4 :]:
        for delta in stream.feed(ch):
            sent.extend(f["function"].get("arguments", "") for f in delta.get("tool_calls", []))
    stream.finish()
    assert "".join(sent) == '{"code": "0071234", "days": 3}'
