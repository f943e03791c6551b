"""Where transformers 5.24 and 5.25 answer differently from 5.23, against the live reference (5.25).

Each case runs every path chatparse has and compares it with the reference's one-shot outcome
(the whole text fed at once after the prefix): `ResponseParser` fed whole, one char at a time and
in seeded random chunks; `parse_response` (the bulk engine); and a module written by
`compile_template` and executed as a file would be, streamed and in bulk. The README's list of
differences from 5.23 names these tests.

- `unquoted_keys` (5.24): whitespace around a bare key; key-like text inside a string value;
- `merge_duplicates` (5.24): a first value that is a list is wrapped, not extended;
- close captures (5.24): a close pattern's named groups join the transform's scope, and beat the
  open's;
- the edge rule (5.24): a pattern's match that ends before the edge of the prefix is final only if
  it survives the text going on (`$` before a trailing newline, `\\Z` in a look-ahead, a longer
  alternative that one more char completes, captures that change);
- typed coercion (5.25, `TYPED_STRUCTURED_PARSERS`): with `tools=`, a parameter whose schema allows
  "string" keeps what the json parser gave;
- two defects (5.23 and 5.25 alike): a closeless explicit region opened at the end of the prefix
  streams its text as it comes (it was held until `finalize`), and a field named "" with json
  content streams `dirty: True`.
"""

from __future__ import annotations

import json

import pytest
from support import (
    ReferenceParser,
    chatparse_bulk_outcome,
    chatparse_outcome,
    chunkings,
    exec_module,
    needs_reference,
    reference_one_shot,
    run_parser,
    same_outcome,
    without_events,
)

import chatparse

pytestmark = needs_reference


def _tools(properties: dict) -> list[dict]:
    return [
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {"type": "object", "properties": properties},
            },
        }
    ]


def _json_calls(**content_args) -> dict:
    field = {
        "open": "<tool_call>",
        "close": "</tool_call>",
        "repeats": True,
        "content": "json",
        "transform": {"type": "function", "function": "{content}"},
    }
    if content_args:
        field["content_args"] = content_args
    return {"start_anchor": "@@", "fields": {"content": {}, "tool_calls": field}}


def _xml_merge(value_parser: str = "json") -> dict:
    return {
        "start_anchor": "@@",
        "fields": {
            "content": {},
            "args": {
                "open": "<args>",
                "close": "</args>",
                "content": "xml-inline",
                "content_args": {
                    "tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>",
                    "value_parser": {"name": value_parser},
                    "merge_duplicates": True,
                },
            },
        },
    }


def _close_groups(open_: dict, close_pattern: str, transform, implicit: dict | None = None) -> dict:
    fields = {"content": implicit or {}}
    fields["x"] = {**open_, "close_pattern": close_pattern, "transform": transform}
    return {"start_anchor": "@@", "fields": fields}


_TYPED_TOOLS = _tools(
    {
        "u": {"type": ["integer", "string"]},  # integer-or-string
        "o": {"type": "string", "nullable": True},  # Optional[str], as get_json_schema gives it
        "s": {"anyOf": [{"type": "string"}, {"type": "boolean"}]},
        "n": {"type": "integer"},  # no string: still coerced
        "b": {"type": "boolean"},
        "m": {"type": "number"},
    }
)

# (id, template, prefix, text, tools)
CASES = [
    # --- unquoted_keys ------------------------------------------------------------------------
    (
        "unquoted-keys-string-value",
        _json_calls(unquoted_keys=True),
        "",
        'hi <tool_call>{name: "f", arguments: {a: 1, b: "c,d:e"}}</tool_call>',
        None,
    ),
    (
        "unquoted-keys-whitespace",
        _json_calls(unquoted_keys=True),
        "",
        '<tool_call>{ name : "f",\n  arguments : {\ta :1 , b\n: [1, {c : 2}]}}</tool_call>',
        None,
    ),
    (
        "unquoted-keys-still-not-after-colon",
        _json_calls(unquoted_keys=True),
        "",
        "<tool_call>{name: x: 1}</tool_call>",
        None,
    ),
    (
        "gemma4-spaces-and-strings",
        "gemma4",
        "",
        '<|tool_call>call:get_weather{ city :<|"|>Paris, FR<|"|>, note: "a,b:c", days : 3}'
        "<tool_call|>",
        None,
    ),
    # --- merge_duplicates ---------------------------------------------------------------------
    ("merge-first-list", _xml_merge(), "", "<args><a>[1]</a><a>2</a></args>", None),
    (
        "merge-lists",
        _xml_merge(),
        "",
        "<args><a>[1, 2]</a><a>3</a><b>1</b><b>2</b><a>[4]</a><c>[]</c></args>",
        None,
    ),
    # --- close captures -----------------------------------------------------------------------
    (
        "close-captures",
        _close_groups({"open": "<x>"}, r"</x (?P<id>\w+)>", {"id": "{id}", "c": "{content}"}),
        "",
        "hi <x>body</x abc> after",
        None,
    ),
    (
        "close-beats-open",
        _close_groups(
            {"open_pattern": r"<x (?P<id>\w+)>"},
            r"</x(?: (?P<id>\w+))?>",
            {"id": "{id}", "c": "{content}"},
        ),
        "",
        "<x one>first</x two> <x three>second</x>",  # the second close's group takes no part
        None,
    ),
    (
        "close-captures-repeats-and-the-end",
        {
            "start_anchor": "@@",
            "fields": {
                "x": {
                    "open": "<x>",
                    "close_pattern": r"</x(?P<n>\d)>|$",
                    "repeats": True,
                    "transform": {"n": "{n}"},
                },
            },
        },
        "",
        "<x>a</x1>\n<x>b</x2>",
        None,
    ),
    (
        "close-captures-implicit",
        {
            "start_anchor": "@@",
            "fields": {
                "content": {
                    "close_pattern": r"<end (?P<why>\w+)>",
                    "transform": {"text": "{content}", "why": "{why}"},
                },
                "r": {"open": "<r>", "close": "</r>"},
            },
        },
        "",
        "hello <end stop>",
        None,
    ),
    (
        "close-captures-transform-each",
        {
            "start_anchor": "@@",
            "fields": {
                "calls": {
                    "open": "<calls>",
                    "close_pattern": r"</calls (?P<id>\w+)>",
                    "content": "json",
                    "transform": {"id": "{id}", "name": "{name}"},
                    "transform_each": True,
                },
            },
        },
        "",
        '<calls>[{"name": "a"}, {"name": "b", "id": "own"}]</calls c7>',
        None,
    ),
    (
        "close-captures-in-the-prefix",
        _close_groups({"open": "<x>"}, r"</x (?P<id>\w+)>", {"id": "{id}", "c": "{content}"}),
        "@@<x>body</x abc>",
        " tail",
        None,
    ),
    # --- the edge rule ------------------------------------------------------------------------
    (
        "edge-dollar-before-prefix-newline",
        {"start_anchor": "@", "fields": {"content": {"close_pattern": "$"}}},
        "@abc\n",
        "def",
        None,
    ),
    (
        "edge-dollar-no-text",
        {"start_anchor": "@", "fields": {"content": {"close_pattern": "$"}}},
        "@abc\n",
        "",
        None,
    ),
    (
        "edge-lookahead-end",
        {
            "start_anchor": "@",
            "fields": {"content": {}, "r": {"open_pattern": r"<r>(?=\n?\Z)", "close": "</r>"}},
        },
        "@hi <r>\n",
        "x</r> <r>\nyz",
        None,
    ),
    (
        "edge-longer-alternative",
        {"start_anchor": "@", "fields": {"content": {}, "t": {"open_pattern": "<t>..|<t>"}}},
        "@<t>x",
        "yz",
        None,
    ),
    (
        "edge-captures-change",
        {
            "start_anchor": "@",
            "fields": {
                "content": {},
                "a": {
                    "open_pattern": r"a(?:(?P<n>)(?=\n\Z))?",
                    "close": ";",
                    "transform": {"c": "{content}", "n": "{n}"},
                },
            },
        },
        "@a\n",  # 5.23 committed the open with n = "" here; 5.25 opens on "a\nb", where n is unset
        "b;",
        None,
    ),
    (
        "edge-dollar-close-of-explicit",
        {
            "start_anchor": "@",
            "fields": {"content": {}, "r": {"open": "<r>", "close_pattern": "x$"}},
        },
        "@<r>ax\n",
        "bx",
        None,
    ),
    # --- typed coercion -----------------------------------------------------------------------
    (
        "typed-json",
        _json_calls(),
        "",
        '<tool_call>{"name": "f", "arguments": {"u": "007", "o": "null", "s": "true", "n": "5",'
        ' "b": "false", "m": "2.50"}}</tool_call>',
        _TYPED_TOOLS,
    ),
    (
        "typed-json-typed-values",
        _json_calls(),
        "",
        '<tool_call>{"name": "f", "arguments": {"u": 7, "o": null, "s": false, "n": 5}}</tool_call>',
        _TYPED_TOOLS,
    ),
    (
        "typed-json-hermes",
        "hermes",
        "",
        '<tool_call>\n{"name": "f", "arguments": {"u": "0x1", "o": "None", "n": "3.0"}}\n</tool_call>',
        _TYPED_TOOLS,
    ),
    (
        "typed-xml-inline-still-coerces",
        "qwen3_coder",
        "",
        "<tool_call>\n<function=f>\n<parameter=u>\n007\n</parameter>\n<parameter=o>\nnull\n"
        "</parameter>\n</function>\n</tool_call>",
        _TYPED_TOOLS,
    ),
    # --- the defects --------------------------------------------------------------------------
    (
        "closeless-open-at-prefix-end",
        {
            "start_anchor": "@@",
            "fields": {
                "a": {
                    "open_pattern": r"<\|channel\|>(?P<ch>final|answer)<\|message\|>",
                    "transform": "{content}",
                }
            },
        },
        "<|channel|>final<|message|>",
        "st",
        None,
    ),
    (
        "empty-field-name-json",
        {"start_anchor": "@", "fields": {"": {"content": "json"}}},
        "",
        '{"a": [1, "x"]}',
        None,
    ),
    (
        "empty-field-name-json-explicit",
        {"start_anchor": "@", "fields": {"content": {}, "": {"open": "<j>", "content": "json"}}},
        "",
        'hi <j>{"a": 1}',
        None,
    ),
]


def _template(source) -> dict:
    return chatparse.load_template(source) if isinstance(source, str) else source


def _compiled(template: dict):
    """The module `compile_template` writes, executed from its source text."""
    namespace = exec_module(chatparse.compile_template(template), "<test_changes_5_25>")
    return namespace


@pytest.mark.parametrize(
    "template, prefix, text, tools", [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_every_path_gives_the_reference_one_shot_result(template, prefix, text, tools):
    template = _template(template)
    expected = reference_one_shot(template, text, prefix, tools)
    for chunks in chunkings(text, seed=len(text)):
        got = chatparse_outcome(template, chunks, prefix, tools)
        assert same_outcome(got, expected), (chunks, got, expected)
    bulk = chatparse_bulk_outcome(template, text, prefix, tools)
    assert same_outcome(bulk, without_events(expected)), (bulk, expected)

    module = _compiled(template)
    for chunks in ([text], list(text)):
        got = run_parser(lambda: module["ResponseParser"](prefix, tools=tools), chunks)
        assert same_outcome(got, expected), ("compiled module", chunks, got, expected)
    try:
        compiled_bulk = ("ok", module["parse_response"](text, prefix=prefix, tools=tools))
    except Exception as error:  # noqa: BLE001 - the class is what is compared
        compiled_bulk = ("error", type(error).__name__)
    assert same_outcome(compiled_bulk, without_events(expected))


def _outcome_of(case_id: str) -> tuple:
    (case,) = [case for case in CASES if case[0] == case_id]
    _, template, prefix, text, tools = case
    return reference_one_shot(_template(template), text, prefix, tools)


def test_the_cases_show_what_5_25_changed():
    """The values the issue names, as 5.25 gives them (each differs from 5.23's answer)."""
    message = _outcome_of("unquoted-keys-string-value")[1]
    assert message["tool_calls"][0]["function"]["arguments"] == {"a": 1, "b": "c,d:e"}
    arguments = _outcome_of("typed-json")[1]["tool_calls"][0]["function"]["arguments"]
    assert (arguments["u"], arguments["o"], arguments["s"]) == ("007", "null", "true")
    assert (arguments["n"], arguments["b"], arguments["m"]) == (5, False, 2.5)  # no "string"
    arguments = _outcome_of("typed-xml-inline-still-coerces")[1]["tool_calls"][0]["function"]
    assert arguments["arguments"] == {"u": 7, "o": None}  # not a typed parser: 5.23's casts
    assert _outcome_of("merge-first-list")[1]["args"] == {"a": [[1], 2]}
    assert _outcome_of("close-captures")[1]["x"] == {"id": "abc", "c": "body"}
    assert _outcome_of("close-beats-open")[1]["x"] == {"id": "three", "c": "second"}
    assert _outcome_of("edge-dollar-before-prefix-newline")[1]["content"] == "abc\ndef"
    assert _outcome_of("edge-longer-alternative")[1]["t"] == "z"
    assert _outcome_of("edge-captures-change") == ("error", "KeyError")
    assert _outcome_of("close-captures-repeats-and-the-end")[1]["x"] == [{"n": "1"}, {"n": "2"}]
    chunk = [e for e in _outcome_of("empty-field-name-json")[2] if e["type"] == "region_chunk"]
    assert chunk[0]["dirty"] is True


def _per_call(make, pieces: list[str]) -> list[list[dict]]:
    """The events of each call: initial_events, each feed, finalize."""
    parser = make()
    calls = [list(parser.initial_events)]
    calls += [parser.feed(piece) for piece in pieces]
    calls.append(parser.finalize()[1])
    return calls


@pytest.mark.parametrize(
    "open_",
    [
        {
            "open_pattern": r"<\|channel\|>(?P<ch>final|answer)<\|message\|>",
            "transform": "{content}",
        },
        {"open_pattern": r"<\|channel\|>(?:final|answer)<\|message\|>"},
        {"open_pattern": r"<\|channel\|>final<\|message\|>", "close": "<|end|>"},
    ],
)
def test_a_region_opened_at_the_end_of_the_prefix_streams_as_the_reference_does(open_):
    """The issue's defect: the region's text was held until `finalize`. The reference holds the
    open (a pattern's match at the edge may grow) and opens it on the first feed; each call's
    events are the reference's, not only their merged stream."""
    template = {"start_anchor": "@@", "fields": {"a": open_}}
    prefix, pieces = "<|channel|>final<|message|>", ["s", "t", " more"]
    expected = _per_call(lambda: ReferenceParser(template, prefix), pieces)
    assert expected[1][:1] == [{"type": "region_open", "field": "a"}]
    assert chatparse.ResponseParser(template, prefix=prefix).feed("s") == expected[1]
    got = _per_call(lambda: chatparse.ResponseParser(template, prefix=prefix), pieces)
    assert got == expected
    module = _compiled(template)
    assert _per_call(lambda: module["ResponseParser"](prefix), pieces) == expected


def test_typed_json_arguments_stream_as_the_reference_types_them():
    """`chatparse.openai.DeltaStream`: the string parameters of a json call are sent as the json
    parser gave them (5.25), and the deltas accumulate to the reference's message."""
    from test_openai_deltas import check_stream, run_stream

    template = _template("hermes")
    text = (
        '<tool_call>\n{"name": "f", "arguments": {"u": "007", "o": "null", "s": "yes", "n": "5"}}'
        "\n</tool_call>"
    )
    expected = reference_one_shot(template, text, "", _TYPED_TOOLS)[1]
    assert expected["tool_calls"][0]["function"]["arguments"] == {
        "u": "007",
        "o": "null",
        "s": "yes",
        "n": 5,
    }
    for pieces in (list(text), [text], [text[:30], text[30:60], text[60:]]):
        stream, batches = run_stream("hermes", "", _TYPED_TOOLS, pieces)
        check_stream(stream, batches, expected)
    sent = "".join(
        fragment["function"].get("arguments", "")
        for batch in run_stream("hermes", "", _TYPED_TOOLS, list(text))[1]
        for delta in batch
        for fragment in delta.get("tool_calls", [])
    )
    assert json.loads(sent) == expected["tool_calls"][0]["function"]["arguments"]


@pytest.mark.parametrize(
    "content, body",
    [
        ("json", '{"a": 1, "b": "x"}'),
        ("xml-inline", "<p=a>1</p><p=b>x</p>"),
    ],
)
@pytest.mark.parametrize("close_name", [" g", ""])
def test_a_call_name_a_close_capture_overrides_streams_from_the_final_value(
    content, body, close_name
):
    """`chatparse.openai.DeltaStream`: a call named by a capture of the open sent its name at the
    open. When the close pattern has a group of that name (5.24: it beats the open's), the name is
    known only at the close, so the call goes out whole then, and the deltas accumulate to the
    reference's message whether or not the close's group takes part."""
    from test_openai_deltas import check_stream, run_stream

    field = {
        "open_pattern": r"<call (?P<name>\w+)>",
        "close_pattern": r"</call(?: (?P<name>\w+))?>",
        "repeats": True,
        "content": content,
        "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
    }
    if content == "xml-inline":
        field["content_args"] = {"tag_pattern": r"<p=(?P<key>\w+)>(?P<value>.*?)</p>"}
    template = {
        "defaults": {"role": "assistant"},
        "start_anchor": "@@",
        "fields": {"content": {}, "tool_calls": field},
    }
    text = f"hi <call f>{body}</call{close_name}>"
    expected = reference_one_shot(template, text, "")[1]
    assert expected["tool_calls"][0]["function"]["name"] == ("g" if close_name else "f")
    for pieces in ([text], list(text)):
        stream, batches = run_stream(template, "", None, pieces)
        check_stream(stream, batches, expected)
