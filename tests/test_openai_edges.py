"""chatparse.openai at a server's edges (issue 21): the finish reason before the end, call ids
without a clock, bytes fed by mistake, and a prompt that lacks the template's start anchor.

Oracles: the reference (`transformers.utils.chat_parsing`, live) for the error class of bytes and
for what an anchorless prefix gives when the check is opted out of; the templates' own
`start_anchor` strings; OpenAI's id format (`call_` then letters and digits).
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

from chatparse.openai import DeltaStream

ROOT = Path(__file__).resolve().parent.parent
FAMILIES = sorted(p.stem for p in (ROOT / "templates").glob("*.json"))
SAMPLE = json.loads((ROOT / "samples" / "qwen3.json").read_text())


def test_finish_reason_is_none_until_the_stream_is_finished():
    stream = DeltaStream("qwen3", SAMPLE["prefix"])
    assert stream.finish_reason is None
    stream.feed(SAMPLE["text"])
    assert stream.finish_reason is None  # the text is all there, but the stream has not ended
    stream.finish()
    assert stream.finish_reason == "tool_calls"
    plain = DeltaStream("qwen3", "")
    plain.feed("Hello!")
    assert plain.finish_reason is None
    plain.finish()
    assert plain.finish_reason == "stop"


def test_default_call_ids_are_unique_without_a_clock(monkeypatch):
    """Every stream started in the same clock tick (time frozen) still gets its own ids, in
    OpenAI's format: "call_" and 24 random hex digits."""
    import time

    monkeypatch.setattr(time, "time_ns", lambda: 1_700_000_000_000_000_000)
    monkeypatch.setattr(time, "time", lambda: 1_700_000_000.0)
    call = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    text = call + call + "<|im_end|>"
    ids = []
    for _ in range(500):
        stream = DeltaStream("qwen3", "")
        deltas = stream.feed(text) + stream.finish()
        ids += [f["id"] for d in deltas for f in d.get("tool_calls", []) if "id" in f]
    assert len(ids) == 1000
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"call_[0-9a-f]{24}", i) for i in ids), ids[:3]


def test_bytes_are_refused_with_the_types_the_right_way_round():
    """The reference raises TypeError for bytes (its class is kept); the message names what was
    given (bytes) and what is expected (str)."""
    reference = pytest.importorskip("transformers.utils.chat_parsing")
    from chatparse import load_template

    with pytest.raises(TypeError):
        reference.ResponseParser(load_template("qwen3"), prefix="").feed(b"Hello")
    stream = DeltaStream("qwen3", "")
    with pytest.raises(TypeError) as caught:
        stream.feed(b"Hello")
    message = str(caught.value)
    assert re.search(r"expects str\b.*\bgot bytes", message), message
    assert "bytes-like object is required" not in message
    assert stream.feed("Hello") == [{"role": "assistant", "content": "Hello"}]


# --- a prompt without the template's start anchor ------------------------------------------------

LEAKY = "<|im_start|>system\nSECRET system prompt<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n"


def test_a_prompt_without_the_generation_prompt_is_refused_not_streamed_back():
    """The issue's reproduction: the generation prompt forgotten, the reference streams the system
    prompt back as content; the serving layer refuses, unless told to parse as the reference."""
    reference = pytest.importorskip("transformers.utils.chat_parsing")
    from chatparse import load_template

    with pytest.raises(ValueError, match="start anchor"):
        DeltaStream("qwen3", LEAKY)
    leaked = reference.parse_response("Hello!", load_template("qwen3"), prefix=LEAKY)
    assert "SECRET" in leaked["content"]  # what the opt-out gives: the reference's reading
    stream = DeltaStream("qwen3", LEAKY, require_start_anchor=False)
    deltas = stream.feed("Hello!") + stream.finish()
    assert "".join(d.get("content", "") for d in deltas) == leaked["content"]
    assert stream.message == leaked
    # The prompt as sent (with the generation prompt), and prefix="" (the output is the whole
    # message), are accepted.
    for prefix in (LEAKY + "<|im_start|>assistant\n", ""):
        stream = DeltaStream("qwen3", prefix)
        assert stream.feed("Hello!") + stream.finish() == [
            {"role": "assistant", "content": "Hello!"}
        ]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_built_in_refuses_an_anchorless_prompt(family):
    template = json.loads((ROOT / "templates" / f"{family}.json").read_text())
    anchors = template["start_anchor"]
    anchors = anchors if isinstance(anchors, list) else [anchors]
    sample = json.loads((ROOT / "samples" / f"{family}.json").read_text())
    assert any(anchor in sample["prefix"] for anchor in anchors)
    DeltaStream(family, sample["prefix"])  # the bundled prompt has its anchor
    prompt = "SECRET system prompt\nUser: hi\n"
    assert not any(anchor in prompt for anchor in anchors)
    with pytest.raises(ValueError, match="start anchor"):
        DeltaStream(family, prompt)
    module = importlib.import_module(f"chatparse.generated.{family}")
    DeltaStream(module, prompt, require_start_anchor=False)
