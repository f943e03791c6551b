"""The SGLang plugin (plugins/sglang_*.py) driven by SGLang's own `FunctionCallParser`.

Runs only where SGLang is installed (`.ci/engine-tests sglang` builds that venv from
.ci/engines/sglang-0.5.23.txt); elsewhere it is skipped. `load_plugins()` finds chatparse's entry
point; each output goes through `FunctionCallParser.parse_stream_chunk` in 4-character chunks,
then `parse_stream_end`, as SGLang's chat serving calls them. Oracle: `chatparse.parse_response`
on the whole output (held to transformers 5.25 by the main suite); SGLang hands a tool detector no
prompt, so the output is the whole message.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("sglang")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from served_templates import GREET_CALL, GREET_TOOLS, served_template  # noqa: E402

import chatparse  # noqa: E402

FAMILIES = sorted(p.stem for p in (ROOT / "samples").glob("*.json"))


@pytest.fixture(scope="module")
def function_call_parser(monkeypatch_module=None):
    from sglang.srt.plugins import load_plugins

    load_plugins()
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    return FunctionCallParser, Tool


def sample(family):
    data = json.loads((ROOT / "samples" / f"{family}.json").read_text())
    return data["text"], data.get("tools")


def stream(parsers, family, text, tools, parser_name=None):
    """(content, calls as [name, argument text], argument fragments per call) as SGLang's
    serving loop accumulates them."""
    parser_class, tool_class = parsers
    declared = [tool_class(**tool) for tool in tools or []]
    parser = parser_class(declared, parser_name or f"chatparse-{family}")
    content, calls, fragments = [], {}, {}
    pieces = [text[i : i + 4] for i in range(0, len(text), 4)]
    results = [parser.parse_stream_chunk(piece) for piece in pieces]
    results.append(parser.parse_stream_end())
    for normal, items in results:
        content.append(normal)
        for item in items:
            call = calls.setdefault(item.tool_index, [None, ""])
            if item.name:
                assert call[0] is None, "a name on a later fragment"
                call[0] = item.name
            call[1] += item.parameters
            if item.parameters:
                fragments.setdefault(item.tool_index, []).append(item.parameters)
    detector = parser.detector
    assert detector.streamed_args_for_tool == [calls[i][1] for i in sorted(calls)]
    return "".join(content), [calls[i] for i in sorted(calls)], fragments


def expected_of(text, family, tools):
    message = chatparse.parse_response(text, family, prefix="", tools=tools)
    calls = message.get("tool_calls") or []
    flat = [c for group in calls for c in (group if isinstance(group, list) else [group])]
    return message.get("content") or "", [
        [c["function"]["name"], c["function"]["arguments"]] for c in flat
    ]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_sample_streams_the_message(function_call_parser, family):
    text, tools = sample(family)
    try:
        content, calls = expected_of(text, family, tools)
    except ValueError:
        pytest.skip("the sample needs its prompt (SGLang gives a tool detector none)")
    got_content, got_calls, _ = stream(function_call_parser, family, text, tools)
    assert got_content == content
    assert [[name, json.loads(arguments)] for name, arguments in got_calls] == calls


@pytest.mark.parametrize("family", ["hermes", "qwen3_coder", "deepseek_v3"])
def test_arguments_arrive_in_several_fragments(function_call_parser, family):
    text, tools = sample(family)
    # SGLang's reasoning parser takes the think block before the tool parser sees the text.
    text = text.split("</think>", 1)[-1]
    _, _, fragments = stream(function_call_parser, family, text, tools)
    assert fragments and all(len(pieces) >= 3 for pieces in fragments.values()), fragments


def test_held_text_is_flushed_at_the_end(function_call_parser):
    content, calls, _ = stream(function_call_parser, "hermes", "if a < b use <tool", None)
    assert (content, calls) == ("if a < b use <tool", [])


def test_cut_off_call_is_not_finished_and_never_fails(function_call_parser):
    text, tools = sample("hermes")
    cut = text.index('"Paris"') + 3
    content, calls, _ = stream(function_call_parser, "hermes", text[:cut], tools)
    assert content == expected_of(text, "hermes", tools)[0]
    assert len(calls) == 1 and calls[0][0] == "get_weather"
    with pytest.raises(ValueError):
        json.loads(calls[0][1])  # what went out stays, and is not a finished call


def test_non_streaming_parse(function_call_parser):
    parser_class, tool_class = function_call_parser
    text, tools = sample("qwen3_coder")
    parser = parser_class([tool_class(**tool) for tool in tools], "chatparse-qwen3_coder")
    normal, items = parser.parse_non_stream(text)
    content, calls = expected_of(text, "qwen3_coder", tools)
    assert normal == content
    assert [[item.name, json.loads(item.parameters)] for item in items] == calls
    assert parser.has_tool_call(text) and not parser.has_tool_call("no call here")


def test_registration_end_to_end(function_call_parser):
    from importlib.metadata import entry_points

    from sglang.srt.server_args import _tool_call_parser_choices

    parser_class, _ = function_call_parser
    (entry,) = [e for e in entry_points(group="sglang.srt.plugins") if e.name == "chatparse"]
    assert entry.value == "chatparse.plugins.sglang_registration:register"
    choices = _tool_call_parser_choices()
    for name in ("chatparse", "chatparse-qwen3", "chatparse-qwen3_coder"):
        assert name in choices
        assert parser_class.ToolCallParserEnum[name].parser_name == name


@pytest.mark.parametrize("which", ["docs", "serve_qwen3"])
def test_the_docs_templates_stream_their_arguments(
    function_call_parser, monkeypatch, tmp_path, which
):
    """`--tool-call-parser chatparse` with CHATPARSE_TEMPLATE naming the docs' template (or
    `transformers serve`'s Qwen3 fallback, from the engine's own transformers): the calls are
    `parse_response`'s, and the arguments arrive in several fragments."""
    template = served_template(which)
    path = tmp_path / "template.json"
    path.write_text(json.dumps(template))
    monkeypatch.setenv("CHATPARSE_TEMPLATE", str(path))
    # (SGLang's reasoning parser takes a think block before the tool parser sees the text.)
    text = "Sure.\n" + GREET_CALL
    message = chatparse.parse_response(text, template, prefix="", tools=GREET_TOOLS)
    expected = [[c["function"]["name"], c["function"]["arguments"]] for c in message["tool_calls"]]
    assert expected[0][0] == "greet_user"
    content, calls, fragments = stream(
        function_call_parser, "", text, GREET_TOOLS, parser_name="chatparse"
    )
    assert content == message.get("content", "")
    assert [[name, json.loads(arguments)] for name, arguments in calls] == expected
    assert fragments and all(len(pieces) >= 3 for pieces in fragments.values()), fragments


# --- the reasoning detector: `--reasoning-parser chatparse` -------------------------------------


def reasoning_then_tools(family, text, prefix, tools, request=None, parser_name=None):
    """(reasoning, content, calls as [name, argument text, argument fragments]) as SGLang's chat
    serving streams an output: each 4-character chunk through the reasoning parser, its normal
    text on through the tool-call parser, then both parsers' ends."""
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    name = parser_name or f"chatparse-{family}"
    options = {"request": request} if request is not None else {"prefix": prefix}
    reasoning_parser = ReasoningParser(
        name, stream_reasoning=True, tool_call_parser_active=True, **options
    )
    tool_parser = FunctionCallParser([Tool(**tool) for tool in tools or []], name)
    reasoning, content, calls = [], [], {}

    def tool_results(normal):
        results = [tool_parser.parse_stream_chunk(normal)] if normal else []
        return results

    results = []
    for piece in [text[i : i + 4] for i in range(0, len(text), 4)]:
        thought, normal = reasoning_parser.parse_stream_chunk(piece)
        reasoning.append(thought or "")
        results += tool_results(normal)
    thought, normal = reasoning_parser.parse_stream_end()
    reasoning.append(thought or "")
    results += tool_results(normal)
    results.append(tool_parser.parse_stream_end())
    for normal, items in results:
        content.append(normal)
        for item in items:
            call = calls.setdefault(item.tool_index, [None, "", 0])
            call[0] = call[0] or item.name
            call[1] += item.parameters
            call[2] += bool(item.parameters)
    return "".join(reasoning), "".join(content), [calls[i] for i in sorted(calls)]


@pytest.mark.parametrize("family", FAMILIES)
def test_reasoning_and_tool_parsers_give_the_message(function_call_parser, family):
    """Every sample, with its prompt (SGLang gives it to the reasoning parser): reasoning, content
    and calls are `parse_response`'s message, and each call's arguments arrive in several
    fragments."""
    data = json.loads((ROOT / "samples" / f"{family}.json").read_text())
    tools = data.get("tools")
    message = chatparse.parse_response(data["text"], family, prefix=data["prefix"], tools=tools)
    reasoning, content, calls = reasoning_then_tools(family, data["text"], data["prefix"], tools)
    assert reasoning == (message.get("reasoning_content") or "")
    assert content == (message.get("content") or "")
    flat = message.get("tool_calls") or []
    flat = [c for group in flat for c in (group if isinstance(group, list) else [group])]
    expected = [[c["function"]["name"], c["function"]["arguments"]] for c in flat]
    assert [[name, json.loads(arguments)] for name, arguments, _ in calls] == expected
    assert all(fragments >= 3 for _, _, fragments in calls), calls


def test_the_prompt_comes_from_the_request(function_call_parser):
    """In serving, SGLang builds the reasoning parser from the request, whose rendered prefill it
    keeps in `_response_parser_prefix` (given only to response-template detectors): a thinking
    model whose chat template opened `<think>` streams its reasoning."""
    from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest

    data = json.loads((ROOT / "samples" / "qwen3_thinking_2507.json").read_text())
    assert data["prefix"].endswith("<think>\n")
    request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}])
    request._response_parser_prefix = data["prefix"]
    message = chatparse.parse_response(data["text"], "qwen3_thinking_2507", prefix=data["prefix"])
    reasoning, content, _ = reasoning_then_tools(
        "qwen3_thinking_2507", data["text"], None, data.get("tools"), request=request
    )
    assert reasoning == message["reasoning_content"] and content == (message.get("content") or "")


def test_reasoning_registration_end_to_end(function_call_parser):
    from sglang.srt.parser.reasoning_parser import ReasoningParser
    from sglang.srt.server_args import _reasoning_parser_choices

    choices = _reasoning_parser_choices()
    for name in ("chatparse", "chatparse-qwen3", "chatparse-gpt_oss"):
        assert name in choices
        assert ReasoningParser.DetectorMap[name].parser_name == name


@pytest.mark.parametrize("family", ["qwen3", "qwen3_thinking_2507", "gpt_oss", "deepseek_v4"])
def test_reasoning_non_streaming(function_call_parser, family):
    """`parse_non_stream` (a request that does not stream): the reasoning parser's normal text,
    read by the tool parser's `parse_non_stream`, gives the message."""
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    parser_class, _ = function_call_parser
    data = json.loads((ROOT / "samples" / f"{family}.json").read_text())
    tools = data.get("tools")
    message = chatparse.parse_response(data["text"], family, prefix=data["prefix"], tools=tools)
    name = f"chatparse-{family}"
    reasoning_parser = ReasoningParser(name, prefix=data["prefix"], tool_call_parser_active=True)
    reasoning, normal = reasoning_parser.parse_non_stream(data["text"])
    content, items = parser_class([Tool(**tool) for tool in tools or []], name).parse_non_stream(
        normal
    )
    assert (reasoning or "") == (message.get("reasoning_content") or "")
    assert content == (message.get("content") or "")
    calls = [[item.name, json.loads(item.parameters)] for item in items]
    flat = message.get("tool_calls") or []
    assert calls == [[c["function"]["name"], c["function"]["arguments"]] for c in flat]


def test_a_prompt_without_the_start_anchor_is_an_error(function_call_parser):
    """A prompt in which the template's start anchor never occurs would be parsed as part of the
    message (the reference's reading), its reasoning streamed back to the client: refused."""
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    prompt = "<|im_start|>system\nSECRET<think>plan</think><|im_end|>\n<|im_start|>user\nhi"
    with pytest.raises(ValueError, match="start anchor"):
        ReasoningParser("chatparse-qwen3", prefix=prompt)
    ReasoningParser("chatparse-qwen3", prefix=prompt + "<|im_end|>\n<|im_start|>assistant\n")


def test_reasoning_not_streamed_goes_out_once_complete(function_call_parser):
    """`stream_reasoning=False` (a request's `stream_reasoning`): the reasoning in one piece, in
    the chunk where the text after it begins."""
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    data = json.loads((ROOT / "samples" / "qwen3.json").read_text())
    message = chatparse.parse_response(data["text"], "qwen3", prefix=data["prefix"])
    parser = ReasoningParser("chatparse-qwen3", stream_reasoning=False, prefix=data["prefix"])
    text = data["text"]
    results = [parser.parse_stream_chunk(text[i : i + 4]) for i in range(0, len(text), 4)]
    results.append(parser.parse_stream_end())
    pieces = [(reasoning, normal) for reasoning, normal in results if reasoning]
    assert len(pieces) == 1 and pieces[0][0] == message["reasoning_content"]
    assert pieces[0][1]  # with the first text after it


# Where each sample's first call begins (the output before it holds no call).
FIRST_CALL = {
    "kimi_vl": None,
    "qwen3_thinking_2507": "\n\n<tool_call>",
    "deepseek_r1": "\n\n<｜tool",
}


@pytest.mark.parametrize("family", sorted(FIRST_CALL))
def test_without_a_tool_parser_the_normal_text_is_the_content(function_call_parser, family):
    """No tool parser runs (`tool_call_parser_active` False: no tools, or tool_choice "none"):
    SGLang sends the normal text to the client as content, so it is the message's content."""
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    data = json.loads((ROOT / "samples" / f"{family}.json").read_text())
    text, prefix = data["text"], data["prefix"]
    if FIRST_CALL[family]:  # a model told to call no tool writes none: the output before it
        text = text[: text.index(FIRST_CALL[family])] + " Done."
    message = chatparse.parse_response(text, family, prefix=prefix)
    assert message.get("content") and message.get("reasoning_content")
    reasoning_parser = ReasoningParser(f"chatparse-{family}", prefix=prefix)
    results = [reasoning_parser.parse_stream_chunk(text[i : i + 4]) for i in range(0, len(text), 4)]
    results.append(reasoning_parser.parse_stream_end())
    assert "".join(r or "" for r, _ in results) == message["reasoning_content"]
    assert "".join(n or "" for _, n in results) == message["content"]
