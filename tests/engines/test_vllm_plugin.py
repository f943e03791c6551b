"""The vLLM plugin (plugins/vllm_*.py) driven by vLLM's own serving code.

Runs only where vLLM is installed (`.ci/engine-tests` builds that venv from
.ci/engines/vllm-0.34.0.txt); elsewhere it is skipped. The parser pair comes from vLLM's
`ParserManager` after `load_general_plugins()` found chatparse's entry point, and each output goes
through vLLM's `ChatStreamProcessor` in 4-character deltas, as a chat-completion stream does. The
chunks are accumulated by the `openai` package's own `ChatCompletionStreamState`. Oracles: the
message of `chatparse.parse_response` (held to transformers 5.25 by the main suite) and of
`DeltaStream` with the same malformed policy for cut-off outputs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("vllm")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from openai_oracle import accumulate, as_chatparse, openai_view  # noqa: E402
from served_templates import GREET_CALL, GREET_TOOLS, served_template  # noqa: E402

import chatparse  # noqa: E402
from chatparse.openai import DeltaStream  # noqa: E402

FAMILIES = sorted(p.stem for p in (ROOT / "samples").glob("*.json"))
# vLLM runs gpt-oss models through its own HarmonyParser whatever the flags say.
SERVED = [family for family in FAMILIES if family != "gpt_oss"]


@pytest.fixture(scope="module")
def vllm_parsers():
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
    from vllm.parser.parser_manager import ParserManager

    return ParserManager, ChatCompletionRequest, ChatStreamProcessor


def stand_in_tokenizer(*texts: str):
    """A byte-level BPE tokenizer trained on `texts` in the test (no download), whose special
    tokens are the chat markers, wrapped as transformers wraps a fast tokenizer."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.BpeTrainer(vocab_size=400, initial_alphabet=alphabet, show_progress=False)
    tokenizer.train_from_iterator(texts, trainer)
    specials = ["<|im_start|>", "<|im_end|>", "<|endoftext|>"]
    tokenizer.add_special_tokens([AddedToken(token, special=True) for token in specials])
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer)


def engine_steps(tokenizer, ids, per_step=2):
    """What vLLM's serving loop hands a parser per engine step: `per_step` new token ids and the
    text they add, decoded incrementally with special tokens kept (the plugin's request)."""
    from tokenizers.decoders import DecodeStream

    decoder = DecodeStream(skip_special_tokens=False)
    backend = tokenizer.backend_tokenizer
    steps = []
    for start in range(0, len(ids), per_step):
        chunk = ids[start : start + per_step]
        steps.append(("".join(decoder.step(backend, i) or "" for i in chunk), chunk))
    return steps or [("", [])]


def serve(
    vllm_parsers,
    family,
    text,
    prefix,
    tools,
    *,
    engine_finish="stop",
    reasoning=True,
    tool=True,
    tokenizer=None,
    ids=None,
    stop=None,
    parser_name=None,
):
    """The chat.completion.chunk dicts vLLM streams for `text` (or for the output `ids`), and the
    deltas' argument fragments per call index."""
    manager, request_class, processor_class = vllm_parsers
    tokenizer = tokenizer or stand_in_tokenizer(prefix, text)
    if ids is None:
        ids = tokenizer.encode(text, add_special_tokens=False)
    steps = engine_steps(tokenizer, ids)
    assert "".join(piece for piece, _ in steps) == tokenizer.decode(ids, skip_special_tokens=False)
    name = parser_name or f"chatparse-{family}"
    parser_class = manager.get_parser(
        tool_parser_name=name if tool else None,
        reasoning_parser_name=name if reasoning else None,
        enable_auto_tools=True,
        model_name="stand-in",
        tokenizer=tokenizer,
    )
    request = request_class(
        model="stand-in",
        messages=[{"role": "user", "content": "hi"}],
        tools=tools,
        stream=True,
        stop=stop,
    )
    parser = parser_class(tokenizer, request.tools)
    request = parser.adjust_request(request)
    processor = processor_class(request, parser, enable_auto_tools=True, parser_cls=parser_class)
    prompt_ids = tokenizer.encode(prefix, add_special_tokens=False)
    assert tokenizer.decode(prompt_ids, skip_special_tokens=False) == prefix
    # vLLM's serving layer sends the role in a first chunk of its own, before any parsed delta.
    first = {"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}
    chunks = [
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "stand-in",
            "choices": [first],
        }
    ]
    fragments: dict = {}
    for number, (piece, piece_ids) in enumerate(steps):
        last = number == len(steps) - 1
        step = processor.step(piece, piece_ids, engine_finish if last else None, prompt_ids)
        delta = step.delta.model_dump(exclude_none=True) if step.delta is not None else {}
        for call in delta.get("tool_calls", []):
            if call.get("function", {}).get("arguments"):
                fragments.setdefault(call["index"], []).append(call["function"]["arguments"])
        if delta or step.finish_reason:
            choice = {"index": 0, "delta": delta, "finish_reason": step.finish_reason}
            chunks.append(
                {
                    "id": "c",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": "stand-in",
                    "choices": [choice],
                }
            )
    return chunks, fragments


def sample(family):
    data = json.loads((ROOT / "samples" / f"{family}.json").read_text())
    return data["text"], data["prefix"], data.get("tools")


def direct_fragments(family, text, prefix, tools):
    """Argument fragments per call when chatparse's DeltaStream is fed the same engine steps'
    ids (the plugin reads ids through the stand-in fast tokenizer)."""
    tokenizer = stand_in_tokenizer(prefix, text)
    stream = DeltaStream(
        family,
        tokenizer.encode(prefix, add_special_tokens=False),
        tools=tools,
        reasoning_key="reasoning",
        malformed="drop",
        tokenizer=tokenizer,
    )
    steps = engine_steps(tokenizer, tokenizer.encode(text, add_special_tokens=False))
    fragments = {}
    deltas = [d for _, ids in steps for d in stream.feed(ids)]
    for delta in deltas + stream.finish():
        for call in delta.get("tool_calls", []):
            if call.get("function", {}).get("arguments"):
                fragments.setdefault(call["index"], []).append(call["function"]["arguments"])
    return fragments


@pytest.mark.parametrize("family", SERVED)
def test_every_sample_accumulates_to_the_message(vllm_parsers, family):
    text, prefix, tools = sample(family)
    expected = openai_view(chatparse.parse_response(text, family, prefix=prefix, tools=tools))
    chunks, fragments = serve(vllm_parsers, family, text, prefix, tools)
    client = accumulate(chunks)
    assert as_chatparse(client, "reasoning") == expected
    assert client["_finish_reason"] == ("tool_calls" if expected.get("tool_calls") else "stop")
    # The plugin keeps chatparse's streaming: the same argument fragments as DeltaStream alone,
    # several per call (every built-in format streams its arguments before the call closes).
    assert fragments == direct_fragments(family, text, prefix, tools)
    assert all(len(pieces) >= 3 for pieces in fragments.values()), fragments


@pytest.mark.parametrize("family", ["hermes", "qwen3_coder", "deepseek_v3", "qwen3"])
def test_arguments_arrive_in_several_fragments(vllm_parsers, family):
    text, prefix, tools = sample(family)
    _, fragments = serve(vllm_parsers, family, text, prefix, tools)
    assert fragments and all(len(pieces) >= 3 for pieces in fragments.values()), fragments


@pytest.mark.parametrize("family", ["hermes", "qwen3_coder", "mistral", "kimi_k2"])
def test_cut_off_outputs(vllm_parsers, family):
    """Cut inside the first call (max_tokens): vLLM's client gets what DeltaStream's "drop"
    policy gives, and the stream never fails."""
    text, prefix, tools = sample(family)
    message = chatparse.parse_response(text, family, prefix=prefix, tools=tools)
    first = openai_view(message)["tool_calls"][0]["function"]
    value = next(v for v in first["arguments"].values() if isinstance(v, str) and v)
    cut = text.index(value, text.index(first["name"])) + len(value) // 2
    stream = DeltaStream(family, prefix, tools=tools, malformed="drop")
    stream.feed(text[:cut])
    stream.finish()
    chunks, _ = serve(vllm_parsers, family, text[:cut], prefix, tools, engine_finish="length")
    client = accumulate(chunks)
    # The cut call's fragments that went out stay with the client (a delta is never retracted),
    # as a server's partial call does; everything else is the message.
    calls = client.pop("tool_calls", [])
    assert as_chatparse(client, "reasoning") == openai_view(stream.message)
    assert [c["function"]["name"] for c in calls] == [first["name"]]
    assert client["_finish_reason"] == "length"


def test_held_text_is_flushed_at_the_end(vllm_parsers):
    """A trailing `<tool` that the output ends on is text: finish_streaming sends it (vLLM's own
    hermes parser loses it)."""
    prefix = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    text = "if a < b use <tool"
    chunks, _ = serve(vllm_parsers, "hermes", text, prefix, None)
    assert accumulate(chunks)["content"] == text


def test_tool_parser_alone_reads_the_output_as_the_message(vllm_parsers):
    text, prefix, tools = sample("hermes")
    chunks, _ = serve(vllm_parsers, "hermes", text, prefix, tools, reasoning=False)
    expected = openai_view(chatparse.parse_response(text, "hermes", prefix="", tools=tools))
    assert as_chatparse(accumulate(chunks), "reasoning") == expected


@pytest.mark.parametrize("family", ["qwen3", "kimi_vl", "qwen3_thinking_2507"])
def test_reasoning_parser_alone_streams_reasoning_and_content(vllm_parsers, family):
    """`--reasoning-parser chatparse` without a tool parser: the message's reasoning and content,
    and a call the model writes as its raw text (no tool parser takes it; it is not dropped)."""
    text, prefix, tools = sample(family)
    message = chatparse.parse_response(text, family, prefix=prefix, tools=tools)
    chunks, _ = serve(vllm_parsers, family, text, prefix, tools, tool=False)
    client = accumulate(chunks)
    assert client.get("reasoning") == message.get("reasoning_content")
    assert not client.get("tool_calls")
    content = message.get("content") or ""
    if message.get("tool_calls"):  # its region's raw text, from its open to its close
        start = text.index("<tool_call>")
        start = len(text[:start].rstrip())  # (the open `\s*<tool_call>` takes the newline)
        content += text[start : text.rindex("</tool_call>") + len("</tool_call>")]
    assert (client.get("content") or "") == content


def test_non_streaming_parse(vllm_parsers):
    manager, request_class, _ = vllm_parsers
    text, prefix, tools = sample("qwen3_coder")
    tokenizer = stand_in_tokenizer(prefix, text)
    parser_class = manager.get_parser(
        tool_parser_name="chatparse-qwen3_coder",
        reasoning_parser_name="chatparse-qwen3_coder",
        enable_auto_tools=True,
        model_name="stand-in",
        tokenizer=tokenizer,
    )
    request = request_class(
        model="stand-in", messages=[{"role": "user", "content": "hi"}], tools=tools
    )
    parser = parser_class(tokenizer, request.tools)
    parser.set_prompt_token_ids(tokenizer.encode(prefix, add_special_tokens=False))
    streams = []
    from chatparse.plugins import vllm_parsers as plugin

    original = plugin._Session.new_stream

    def counted(session, tools):
        streams.append(tools)
        return original(session, tools)

    plugin._Session.new_stream = counted
    try:
        reasoning, content, calls = parser.parse(text, request, enable_auto_tools=True)
    finally:
        plugin._Session.new_stream = original
    assert len(streams) == 1 and streams[0]  # one parse, with the tools, for both parsers
    expected = chatparse.parse_response(text, "qwen3_coder", prefix=prefix, tools=tools)
    assert reasoning == expected.get("reasoning_content")
    assert content == expected.get("content")
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        (c["function"]["name"], c["function"]["arguments"])
        for c in openai_view(expected)["tool_calls"]
    ]


def test_registration_end_to_end(vllm_parsers):
    from argparse import Namespace
    from importlib.metadata import entry_points

    from vllm.entrypoints.common.cli_args import validate_api_server_args
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    (entry,) = [e for e in entry_points(group="vllm.general_plugins") if e.name == "chatparse"]
    assert entry.value == "chatparse.plugins.vllm_registration:register"
    for name in ("chatparse", "chatparse-qwen3", "chatparse-qwen3_coder"):
        assert name in ToolParserManager.list_registered()
        assert name in ReasoningParserManager.list_registered()
    for name in ("chatparse", "chatparse-qwen3"):
        # What `vllm serve --enable-auto-tool-choice --tool-call-parser NAME --reasoning-parser
        # NAME` checks of those flags (its full argument parser needs packages the lock leaves
        # out: llguidance).
        args = Namespace(
            enable_auto_tool_choice=True,
            tool_call_parser=name,
            structured_outputs_config=Namespace(reasoning_parser=name),
        )
        validate_api_server_args(args)
    with pytest.raises(KeyError, match="invalid tool call parser"):
        validate_api_server_args(
            Namespace(
                enable_auto_tool_choice=True,
                tool_call_parser="chatparse-nope",
                structured_outputs_config=Namespace(reasoning_parser=None),
            )
        )
    # Registering imported no parser class: chatparse's parsers load when a name is selected.
    assert "chatparse.plugins.vllm_parsers" in sys.modules  # (the tests above selected them)


def test_a_prompt_without_the_start_anchor_is_an_error(vllm_parsers):
    """The generation prompt forgotten: the plugin refuses rather than stream the prompt back."""
    text, _, tools = sample("hermes")
    prefix = "<|im_start|>system\nSECRET system prompt<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n"
    with pytest.raises(ValueError, match="start anchor"):
        serve(vllm_parsers, "hermes", text, prefix, tools)


def control_token_tokenizer():
    """The stand-in tokenizer with hermes' call tags as added tokens (not special) that its chat
    template writes, so transformers 5.25's rule counts them as control tokens."""
    prefix = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    tokenizer = stand_in_tokenizer(prefix, 'Write <tool_call> tags. {"name": "f"}')
    tokenizer.add_tokens(["<tool_call>", "</tool_call>"])
    tokenizer.chat_template = (
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
        "{% if tools %}Calls go in <tool_call></tool_call> tags.{% endif %}"
    )
    return tokenizer, prefix


def spelled_and_real_call(tokenizer):
    """Output ids: content that quotes `<tool_call>` with ordinary tokens, then a call written with
    the tags' own ids."""
    # (Encoded in two halves: an added token that is not special is matched whole otherwise.)
    spelled = tokenizer.encode("Write <tool", add_special_tokens=False)
    spelled += tokenizer.encode("_call> tags.", add_special_tokens=False)
    assert tokenizer.decode(spelled) == "Write <tool_call> tags."
    body = tokenizer.encode('\n{"name": "f", "arguments": {"x": "1"}}\n', add_special_tokens=False)
    tag, end_tag = tokenizer.convert_tokens_to_ids(["<tool_call>", "</tool_call>"])
    return spelled + [tag] + body + [end_tag]


def test_a_spelled_out_control_token_never_opens_a_call(vllm_parsers, monkeypatch):
    """vLLM's token ids go through transformers 5.25's token-id input: the `<tool_call>` the model
    spelled out with ordinary tokens is content, the one written as its id opens the call. Read
    as text (CHATPARSE_TOKEN_IDS=0), the spelled-out tag would open a call."""
    tokenizer, prefix = control_token_tokenizer()
    ids = spelled_and_real_call(tokenizer)
    prefix_ids = tokenizer.encode(prefix, add_special_tokens=False)
    parameters = {"type": "object", "properties": {"x": {"type": "string"}}}
    tools = [{"type": "function", "function": {"name": "f", "parameters": parameters}}]
    expected = openai_view(
        chatparse.parse_response(ids, "hermes", prefix=prefix_ids, tools=tools, tokenizer=tokenizer)
    )
    assert expected["content"] == "Write <tool_call> tags."
    assert [call["function"]["name"] for call in expected["tool_calls"]] == ["f"]
    served = {}
    for setting in ("1", "0"):
        monkeypatch.setenv("CHATPARSE_TOKEN_IDS", setting)
        chunks, _ = serve(vllm_parsers, "hermes", "", prefix, tools, tokenizer=tokenizer, ids=ids)
        served[setting] = as_chatparse(accumulate(chunks), "reasoning")
    assert served["1"] == expected
    assert served["0"] != expected


def test_stop_strings_read_text(vllm_parsers):
    """vLLM cuts a stop string out of the text, not out of the ids: such a request reads text."""
    from chatparse.plugins import vllm_parsers as plugin

    reads = []  # per piece the stream was fed: whether it was token ids
    original = plugin.DeltaStream.feed

    def recording(stream, piece):
        reads.append(not isinstance(piece, str))
        return original(stream, piece)

    text, prefix, tools = sample("hermes")
    plugin.DeltaStream.feed = recording
    try:
        for stop in (None, ["Observation:"]):
            reads.clear()
            chunks, _ = serve(vllm_parsers, "hermes", text, prefix, tools, stop=stop)
            assert reads and set(reads) == {stop is None}
            expected = chatparse.parse_response(text, "hermes", prefix=prefix, tools=tools)
            assert as_chatparse(accumulate(chunks), "reasoning") == openai_view(expected)
    finally:
        plugin.DeltaStream.feed = original


def test_requests_with_tools_keep_special_tokens(vllm_parsers):
    """A template's delimiters may be special tokens: with tools the request keeps them in the
    output text (vLLM's default leaves them out), as vLLM's own parsers ask."""
    manager, request_class, _ = vllm_parsers
    text, prefix, tools = sample("hermes")
    tokenizer = stand_in_tokenizer(prefix, text)
    parser_class = manager.get_parser(
        tool_parser_name="chatparse-hermes",
        reasoning_parser_name=None,
        enable_auto_tools=True,
        model_name="stand-in",
        tokenizer=tokenizer,
    )
    for listed, choice, kept in (
        (tools, "auto", True),
        (tools, "none", False),
        (None, None, False),
    ):
        options = {"tool_choice": choice} if choice else {}
        request = request_class(
            model="stand-in", messages=[{"role": "user", "content": "hi"}], tools=listed, **options
        )
        assert request.skip_special_tokens is not False  # (vLLM's default: None, then True)
        request = parser_class(tokenizer, request.tools).adjust_request(request)
        assert (request.skip_special_tokens is False) is kept


@pytest.mark.parametrize("which", ["docs", "serve_qwen3"])
def test_the_docs_templates_stream_their_arguments(vllm_parsers, monkeypatch, tmp_path, which):
    """`--tool-call-parser chatparse` with CHATPARSE_TEMPLATE naming the docs' template (or
    `transformers serve`'s Qwen3 fallback): the client's message is `parse_response`'s, and the
    arguments arrive in several fragments."""
    template = served_template(which)
    path = tmp_path / "template.json"
    path.write_text(json.dumps(template))
    monkeypatch.setenv("CHATPARSE_TEMPLATE", str(path))
    prefix = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    text = "<think>\nGreet them.\n</think>\nSure.\n" + GREET_CALL
    chunks, fragments = serve(vllm_parsers, "", text, prefix, GREET_TOOLS, parser_name="chatparse")
    expected = chatparse.parse_response(text, template, prefix=prefix, tools=GREET_TOOLS)
    assert expected["tool_calls"][0]["function"]["name"] == "greet_user"
    client = accumulate(chunks)
    assert as_chatparse(client, "reasoning") == openai_view(expected)
    assert client["_finish_reason"] == "tool_calls"
    assert fragments and all(len(pieces) >= 3 for pieces in fragments.values()), fragments


def test_deltas_are_built_without_vllms_logging_validator(vllm_parsers):
    """The plugin builds each `DeltaMessage` without the validator vLLM wraps around its models to
    log unknown keys (`plugins/engine_models.py`): with vLLM's own models the shortcut holds,
    and gives the models vLLM's validator gives, as the JSON the server sends."""
    from vllm.entrypoints.generate.base.protocol import DeltaMessage

    from chatparse.plugins import vllm_parsers as plugin

    assert plugin._delta != DeltaMessage.__pydantic_validator__.validate_python
    first = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f"}}
    for fields in (
        {
            "content": None,
            "reasoning": None,
            "tool_calls": [{"index": 0, "function": {"arguments": '{"a'}}],
        },
        {"content": "x", "reasoning": "y", "tool_calls": [first]},
        {"content": None, "reasoning": "y"},
    ):
        made, expected = plugin._delta(fields), DeltaMessage(**fields)
        assert made == expected
        assert made.model_dump_json(exclude_unset=True) == expected.model_dump_json(
            exclude_unset=True
        )
