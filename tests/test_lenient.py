"""Lenient mode, `malformed="event"` (an extension; the default stays the reference's).

Oracles: the reference's one-shot result on the same text (when nothing is malformed, lenient
mode must not change a thing), and on the text with the malformed body replaced by a valid one
(lenient mode keeps everything else that parsed, exactly as the reference would have).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import chunkings, merge_chunks

import chatparse

reference = pytest.importorskip("transformers.utils.chat_parsing")

SMOLLM3 = chatparse.load_template("smollm3")
GOOD_CALL = '{"name": "g", "arguments": {"y": [1, 2.5, true, null]}}'
PLACEHOLDER_CALL = '{"name": "placeholder", "arguments": {}}'


def call(body: str) -> str:
    return f"<tool_call>{body}</tool_call>"


def feed_all(parser, pieces):
    events = list(parser.initial_events)
    for piece in pieces:
        events += parser.feed(piece)
    message, final = parser.finalize()
    return message, events + final


def reference_one_shot(text: str, template=SMOLLM3):
    parser = reference.ResponseParser(template, prefix="")
    events = parser.feed(text)
    message, final = parser.finalize()
    return message, merge_chunks(events + final)


def test_the_default_raises_as_the_reference():
    text = "Hi" + call('{"name": "f"')
    with pytest.raises(ValueError):
        reference.parse_response(text, SMOLLM3, prefix="")
    with pytest.raises(ValueError):
        chatparse.parse_response(text, SMOLLM3, prefix="")
    parser = chatparse.ResponseParser(SMOLLM3, "")
    parser.feed(text)
    with pytest.raises(ValueError):
        parser.finalize()


def test_an_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="malformed must be one of"):
        chatparse.ResponseParser(SMOLLM3, "", malformed="ignore")


BODIES = [
    '{"name": "f", "arguments": {"x": 1}',  # cut off
    '{"name": "f", arguments: {}}',  # not JSON
    "",  # empty
    '{"arguments": {}}',  # valid JSON, no name: the transform raises
]


@pytest.mark.parametrize("body", BODIES)
def test_a_malformed_call_keeps_everything_else(body):
    def text_with(middle: str) -> str:
        return "Hi" + call(GOOD_CALL) + "mid" + call(middle) + "end" + call(GOOD_CALL)

    text = text_with(body)
    expected_message, expected_events = reference_one_shot(text_with(PLACEHOLDER_CALL))
    expected_message = {
        **expected_message,
        "tool_calls": [
            c for c in expected_message["tool_calls"] if c["function"]["name"] != "placeholder"
        ],
    }
    for pieces in chunkings(text):
        parser = chatparse.ResponseParser(SMOLLM3, "", malformed="event")
        message, events = feed_all(parser, pieces)
        assert message == expected_message
        (malformed,) = [e for e in events if e["type"] == "region_malformed"]
        assert malformed["field"] == "tool_calls" and malformed["text"] == body
        assert malformed["error"]
        # The events around it are the reference's, the placeholder's close replaced.
        # (Chunks of the calls are left out: the bodies differ.)
        shape = [(e["type"], e["field"]) for e in merge_chunks(events) if not is_call_chunk(e)]
        expected_shape = [
            (
                "region_malformed" if e.get("value") == _placeholder_value() else e["type"],
                e["field"],
            )
            for e in expected_events
            if not is_call_chunk(e)
        ]
        assert shape == expected_shape
    assert chatparse.parse_response(text, SMOLLM3, prefix="", malformed="event") == expected_message


def is_call_chunk(event) -> bool:
    return event["type"] == "region_chunk" and event["field"] == "tool_calls"


def _placeholder_value():
    return {"type": "function", "function": {"name": "placeholder", "arguments": {}}}


def test_a_call_cut_off_by_max_tokens_never_raises():
    whole = "Thinking done." + call(GOOD_CALL) + "More." + call(GOOD_CALL)
    for length in range(len(whole) + 1):
        text = whole[:length]
        try:
            strict = reference.parse_response(text, SMOLLM3, prefix="")
        except ValueError:
            strict = None
        for pieces in chunkings(text, seed=length) if text else [[]]:
            parser = chatparse.ResponseParser(SMOLLM3, "", malformed="event")
            message, events = feed_all(parser, pieces)
            if strict is not None:
                assert message == strict
                assert not [e for e in events if e["type"] == "region_malformed"]
            else:
                assert [e["type"] for e in events].count("region_malformed") == 1
                assert message == strict_before_last_call(text)


def strict_before_last_call(text: str):
    """The reference's message for `text` with its last, unterminated call cut away."""
    cut = text.rindex("<tool_call>")
    return reference.parse_response(text[:cut], SMOLLM3, prefix="")


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    family=st.sampled_from(["hermes", "qwen3", "smollm3", "gpt_oss", "qwen3_coder"]),
    seed=st.integers(0, 10_000),
)
def test_when_nothing_is_malformed_lenient_mode_changes_nothing(family, seed):
    sample = json.loads((chatparse.catalogue.sample_path(family)).read_text(encoding="utf-8"))
    template = chatparse.load_template(family)
    text, prefix, tools = sample["text"], sample.get("prefix") or "", sample.get("tools")
    for pieces in chunkings(text, seed):
        strict = feed_all(chatparse.ResponseParser(template, prefix, tools=tools), pieces)
        lenient = feed_all(
            chatparse.ResponseParser(template, prefix, tools=tools, malformed="event"), pieces
        )
        assert lenient == strict
    assert chatparse.parse_response(
        text, template, prefix=prefix, tools=tools, malformed="event"
    ) == reference.parse_response(text, template, prefix=prefix, tools=tools)


@pytest.mark.parametrize("family", ["gpt_oss", "kimi_k2", "deepseek_v31"])
def test_captures_on_region_open_name_each_call_before_it_closes(family):
    """`captures=True`: each explicit region_open carries the open's named groups; for these
    families the call's name is a capture, so it must be the name the message gives the call."""
    sample = json.loads((chatparse.catalogue.sample_path(family)).read_text(encoding="utf-8"))
    template = chatparse.load_template(family)
    expected = reference.parse_response(
        sample["text"], template, prefix=sample["prefix"], tools=sample.get("tools")
    )
    for pieces in chunkings(sample["text"]):
        parser = chatparse.ResponseParser(
            template, sample["prefix"], tools=sample.get("tools"), captures=True
        )
        message, events = feed_all(parser, pieces)
        opens = [e for e in events if e["type"] == "region_open" and e["field"] == "tool_calls"]
        names = [e["captures"].get("name") or e["captures"].get("func_name") for e in opens]
        calls = expected["tool_calls"]
        assert names == [c["function"]["name"] for c in calls]
        assert message == expected
        # Without the option the events are the reference's: no `captures` key anywhere.
        plain = feed_all(chatparse.ResponseParser(template, sample["prefix"]), pieces)[1]
        assert not any("captures" in e for e in plain)


def test_a_missing_required_field_still_raises_in_lenient_mode():
    """Lenient mode is about malformed or cut-off regions; a required field the output never
    opened is the message's problem, and transformers' main branch raises for it as 5.23 does."""
    template = {
        "start_anchor": "<|assistant|>",
        "fields": {"content": {"open": "<answer>", "close": "</answer>", "optional": False}},
    }
    for chunks in chunkings("no answer here"):
        parser = chatparse.ResponseParser(template, "", malformed="event")
        with pytest.raises(ValueError, match=r"Required response_template fields missing.*content"):
            for chunk in chunks:
                parser.feed(chunk)
            parser.finalize()
