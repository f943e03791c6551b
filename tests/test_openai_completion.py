"""chatparse.openai.chat_completion: parse_response's message as a non-streamed `chat.completion`.

Oracles: the `openai` client's own types (`ChatCompletion.model_validate`, what
`client.chat.completions.create` returns), parse_response's message (checked against the
reference elsewhere) for what the choice must hold, with each call's `arguments` json.loads'd;
and the openai package's stream accumulator over DeltaStream's chunks: the non-streamed message
equals what a streaming client of the same output ends up with (call ids aside).
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest
from openai_oracle import accumulate, openai_view, real_openai

from chatparse.openai import ChunkWriter, DeltaStream, chat_completion

ROOT = Path(__file__).resolve().parent.parent


def _cases():
    for path in sorted((ROOT / "samples").glob("*.json")):
        yield path.stem, "sample", json.loads(path.read_text())
    for path in sorted((ROOT / "tests" / "fixtures" / "catalogue").glob("*.json")):
        fixture = json.loads(path.read_text())
        for case in fixture["cases"]:
            yield fixture["family"], case["name"], case


CASES = [(family, case) for family, _, case in _cases()]
IDS = [f"{family}/{name}" for family, name, _ in _cases()]


def validate(completion: dict):
    real_openai()
    from openai.types.chat import ChatCompletion

    return ChatCompletion.model_validate(completion)


@pytest.mark.parametrize("family, case", CASES, ids=IDS)
def test_the_message_is_a_valid_chat_completion(family, case):
    module = importlib.import_module(f"chatparse.generated.{family}")
    prefix, tools, text = case["prefix"], case.get("tools"), case["text"]
    try:
        message = module.parse_response(text, prefix=prefix, tools=tools)
    except ValueError:
        return  # nothing to send (the output itself is refused)
    completion = validate(chat_completion(message, id="chatcmpl-1", model=family, created=0))
    choice = completion.choices[0]
    view = openai_view(message)
    calls = view.get("tool_calls") or []
    assert choice.finish_reason == ("tool_calls" if calls else "stop")
    assert choice.message.role == "assistant"
    assert choice.message.content == view.get("content")
    got = choice.message.tool_calls or []
    assert [(c.type, c.function.name, json.loads(c.function.arguments)) for c in got] == [
        (c["type"], c["function"]["name"], c["function"]["arguments"]) for c in calls
    ]
    ids = [c.id for c in got]
    assert len(set(ids)) == len(ids) and all(re.fullmatch(r"call_[0-9a-f]{24}", i) for i in ids)
    extra = choice.message.model_extra or {}
    assert extra.get("reasoning_content") == view.get("reasoning_content")

    # A streaming client of the same output holds the same message (ids aside): the openai
    # accumulator over DeltaStream's chunks, the output fed whole (the engine says "stop").
    stream = DeltaStream(module, prefix, tools=tools)
    deltas = stream.feed(text) + stream.finish("stop")
    writer = ChunkWriter(id="chatcmpl-1", model=family, created=0)
    streamed = accumulate(writer.chunks(deltas) + [writer.final(stream.finish_reason)])
    whole = choice.message.model_dump(exclude_none=True)
    whole.update(extra)
    for message_ in (streamed, whole):
        for call in message_.get("tool_calls", []):
            call.pop("id")
            call.pop("index", None)  # a streamed call's position, which a whole message has not
    assert streamed.pop("_finish_reason") == choice.finish_reason
    streamed = {k: v for k, v in streamed.items() if k not in ("refusal", "parsed", "annotations")}
    assert {k: v for k, v in whole.items() if k != "annotations"} == streamed


def test_a_cut_off_call_is_length_and_not_in_the_choice():
    """Non-streamed, the text of issue 21's reproduction goes through DeltaStream in one piece: its
    message (drop) and finish_reason make the completion."""
    sample = json.loads((ROOT / "samples" / "qwen3_coder.json").read_text())
    text = sample["text"]
    cut = text[: text.index("</parameter>") + len("</parameter>")]
    stream = DeltaStream("qwen3_coder", sample["prefix"], malformed="drop")
    stream.feed(cut)
    stream.finish()
    completion = validate(
        chat_completion(stream.message, id="c", model="m", finish_reason=stream.finish_reason)
    )
    assert completion.choices[0].finish_reason == "length"
    assert completion.choices[0].message.tool_calls is None


def test_call_ids_and_the_reasoning_key_can_be_chosen():
    message = {
        "role": "assistant",
        "reasoning_content": "hm",
        "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}],
    }
    ids = iter(["call_a"])
    completion = chat_completion(
        message, id="c", model="m", call_id=lambda: next(ids), reasoning_key="reasoning"
    )
    choice = validate(completion).choices[0]
    assert choice.message.tool_calls[0].id == "call_a"
    assert choice.message.tool_calls[0].function.arguments == '{"a": 1}'
    assert choice.message.content is None
    assert (choice.message.model_extra or {}).get("reasoning") == "hm"
