"""chatparse.openai streams the arguments of templates shaped like transformers' own, not only the
built-ins': a transform whose `function` is the body itself (`"function": "{content}"`, as in
transformers' response-parsing docs and `transformers serve`'s Qwen fallback), a nested path to
it, and `transform_each` over a list of such objects.

Oracles: `parse_response` on the whole text for the message, the `openai` package's stream
accumulator for what a client holds (`check_stream`), and the text itself for when each argument
piece may go out (while the model is still writing the call, before its close).
"""

from __future__ import annotations

import json

import pytest
from test_openai_deltas import check_stream, chunkings, run_stream

import chatparse
from chatparse.openai import DeltaStream

CLOSE = r"\s*(?:<\|im_end\|>|<\|endoftext\|>|<\|eot_id\|>)"


def _docs_shaped(transform: dict, *, each: bool = False) -> dict:
    """A SmolLM3/Qwen-style template (think block, JSON calls in <tool_call>) with `transform`."""
    call = {
        "open_pattern": r"\s*<tool_call>",
        "close": "</tool_call>",
        "repeats": True,
        "content": "json",
        "transform": transform,
    }
    if each:
        call["transform_each"] = True
    return {
        "defaults": {"role": "assistant"},
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "reasoning_content": {"open": "<think>", "close": "</think>", "content": "text"},
            "tool_calls": call,
            "content": {"close_pattern": CLOSE, "content": "text"},
        },
    }


def _serve_fallback() -> dict:
    """`transformers serve`'s fallback template for Qwen2/Qwen3, from the installed reference."""
    utils = pytest.importorskip("transformers.cli.serving.utils")
    for families, template in utils._RESPONSE_TEMPLATE_FALLBACKS.items():
        if "qwen3" in families:
            return template
    pytest.skip("transformers serve has no Qwen3 fallback template")


WHOLE = _docs_shaped({"type": "function", "function": "{content}"})
NESTED = _docs_shaped({"type": "function", "function": "{content.call}"})
EACH = _docs_shaped({"type": "function", "function": "{function}"}, each=True)

GREET = '{"name": "greet_user", "arguments": {"greeting": "Hi there, how are you doing today?"}}'
WEATHER = '{"name": "get_weather", "arguments": {"city": "Paris", "days": 3, "units": ["c", "f"]}}'
CASES = {
    "issue": (WHOLE, f"<tool_call>{GREET}</tool_call><|im_end|>"),
    "think and two calls": (
        WHOLE,
        f"<think>\nFirst greet.\n</think>\nOK.\n<tool_call>\n{GREET}\n</tool_call>\n"
        f"<tool_call>\n{WEATHER}\n</tool_call><|im_end|>",
    ),
    "extra members": (
        WHOLE,
        '<tool_call>{"id": "x1", "name": "f", "arguments": {"a": "long text here"}, "n": 1}'
        "</tool_call><|im_end|>",
    ),
    "nested": (
        NESTED,
        '<tool_call>{"call": {"name": "search", "arguments": {"q": "some words to find"}}}'
        "</tool_call><|im_end|>",
    ),
    "arguments before the name": (
        WHOLE,
        '<tool_call>{"arguments": {"q": "some words to find"}, "name": "search"}'
        "</tool_call><|im_end|>",
    ),
    "each": (
        EACH,
        f'<tool_call>[{{"function": {GREET}}}, {{"function": {WEATHER}}}]</tool_call><|im_end|>',
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("chunking", ["whole", "chars", "random", "server"])
def test_arguments_accumulate_to_the_message(name, chunking):
    template, text = CASES[name]
    expected = chatparse.parse_response(text, template, prefix="")
    stream, batches = run_stream(template, "", None, chunkings(text, seed=7)[chunking])
    client = check_stream(stream, batches, expected) if name != "extra members" else None
    if client is None:  # the function dict has members a chat completion has no place for
        assert stream.message == expected
        assert stream.diverged == []


def _fragments_before_close(template: dict, text: str, prefix: str = "") -> list[int]:
    """Per call, how many non-empty argument fragments went out before the text of its close
    (`</tool_call>`) was fed, feeding 4 characters at a time."""
    stream = DeltaStream(template, prefix)
    counts: dict[int, int] = {}
    closed: set[int] = set()
    position = 0
    for start in range(0, len(text), 4):
        piece = text[start : start + 4]
        for delta in stream.feed(piece):
            for fragment in delta.get("tool_calls", []):
                if fragment["index"] not in closed and fragment["function"].get("arguments"):
                    counts[fragment["index"]] = counts.get(fragment["index"], 0) + 1
        # Calls whose close tag has been fed completely by now count no more fragments.
        while True:
            found = text.find("</tool_call>", position)
            if found < 0 or found + len("</tool_call>") > start + len(piece):
                break
            closed.add(len(closed))
            position = found + 1
    stream.finish()
    return [counts.get(index, 0) for index in range(len(closed))]


@pytest.mark.parametrize("name", sorted(CASES))
def test_arguments_stream_before_the_call_closes(name):
    """Each call's arguments are on the wire in several fragments while the model writes them
    (before this change a `"function": "{content}"` call went out whole at its close)."""
    template, text = CASES[name]
    if name == "arguments before the name":
        pytest.skip("a call's first fragment carries its name: its arguments wait for it")
    counts = _fragments_before_close(template, text)
    assert counts and all(count >= 3 for count in counts), counts


def test_transformers_serve_fallback_streams():
    template = _serve_fallback()
    text = f"<think>\nGreet.\n</think>\n\n<tool_call>\n{GREET}\n</tool_call><|im_end|>"
    prefix = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    expected = chatparse.parse_response(text, template, prefix=prefix)
    for pieces in chunkings(text, seed=3).values():
        stream, batches = run_stream(template, prefix, None, pieces)
        check_stream(stream, batches, expected)
    assert all(count >= 3 for count in _fragments_before_close(template, text, prefix))


@pytest.mark.parametrize(
    "body",
    [
        '{"arguments": {"a": 1}}',  # no name: the function dict has none
        '{"name": "f", "arguments": "{\\"a\\": 1}"}',  # arguments as a JSON string
        '{"name": "f"}',  # no arguments
        "[1, 2]",  # not an object
        '{"name": "f", "name": "g", "arguments": {}}',  # the name repeated
        '{"name": "f", "arguments": {"a": 1}, "arguments": {"b": 2}}',  # the arguments repeated
    ],
)
def test_odd_bodies_give_the_message(body):
    """Bodies the docs' shape allows but a chat completion cannot hold as is: the stream's message
    is parse_response's in every chunking, and a call whose name or arguments a repeated key
    changed is reported in `diverged`, as for the built-ins' shape."""
    text = f"<tool_call>{body}</tool_call><|im_end|>"
    expected = chatparse.parse_response(text, WHOLE, prefix="")
    final = json.loads(body) if body.startswith("{") else None
    for pieces in chunkings(text, seed=5).values():
        stream, _ = run_stream(WHOLE, "", None, pieces)
        assert stream.message == expected
        if final is not None and '"name": "f", "name"' not in body and body.count("arguments") < 2:
            assert stream.diverged == []
