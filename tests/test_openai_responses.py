"""chatparse.openai.ResponsesEvents: a whole Responses API stream, as openai's own client reads it.

Oracle: the `openai` package's `ResponseStreamState` (what `client.responses.stream(...)` runs on
the server's events), fed every event after pydantic validation against openai's
`ResponseStreamEvent` union; the message it must rebuild is parse_response's (checked against the
reference elsewhere); where a call is cut, the template's own open and close regexes say where
(tests/test_openai_lenient.py). Sequence numbers and lifecycle order are OpenAI's: the real API
streams `response.created` with sequence_number 0, then `response.in_progress` with 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai_oracle import openai_view, real_openai

from chatparse.openai import DeltaStream, ResponsesEvents

ROOT = Path(__file__).resolve().parent.parent
FAMILIES = sorted(p.stem for p in (ROOT / "samples").glob("*.json"))
# the families whose format has tool calls (kimi_vl has reasoning and content only)
CALL_FAMILIES = [
    family
    for family in FAMILIES
    if "tool_calls" in json.loads((ROOT / "templates" / f"{family}.json").read_text())["fields"]
]


def replay(events: list[dict]) -> list:
    """openai's ResponseStreamState over the events; returns the events it fires (it raises on a
    stream it does not accept)."""
    real_openai()
    from openai.lib.streaming.responses import ResponseStreamState
    from openai.types.responses import ResponseStreamEvent
    from pydantic import TypeAdapter

    from openai import omit

    adapter = TypeAdapter(ResponseStreamEvent)
    state = ResponseStreamState(input_tools=omit, text_format=omit)
    fired = []
    for event in events:
        fired += state.handle_event(adapter.validate_python(event))
    return fired


def stream_events(family: str, text: str, pieces: list[str], **options) -> tuple:
    sample = json.loads((ROOT / "samples" / f"{family}.json").read_text())
    stream = DeltaStream(family, sample["prefix"], tools=sample.get("tools"), **options)
    responses = ResponsesEvents(stream, model=family)
    events = []
    for piece in pieces:
        events += responses.feed(stream.feed(piece))
    events += responses.feed(stream.finish()) + responses.close()
    return stream, events


def _lifecycle(events: list[dict], last: str) -> None:
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert [e["type"] for e in events[:2]] == ["response.created", "response.in_progress"]
    assert events[-1]["type"] == last
    assert [e["type"] for e in events].count(last) == 1
    assert all(e["response"]["status"] == "in_progress" for e in events[:2])


@pytest.mark.parametrize("family", FAMILIES)
def test_openais_stream_state_accepts_every_sample(family):
    sample = json.loads((ROOT / "samples" / f"{family}.json").read_text())
    text = sample["text"]
    for pieces in (list(text), [text]):
        stream, events = stream_events(family, text, pieces)
        _lifecycle(events, "response.completed")
        fired = replay(events)
        response = fired[-1].response  # the client's final ParsedResponse
        assert response.status == "completed" and response.id == events[0]["response"]["id"]
        message = openai_view(stream.message)
        items = response.output
        assert all(item.status == "completed" for item in items)
        texts = [part.text for item in items if item.type == "message" for part in item.content]
        assert "".join(texts) == message.get("content", "")
        thoughts = [
            part.text for item in items if item.type == "reasoning" for part in item.content
        ]
        assert "".join(thoughts) == message.get("reasoning_content", "")
        calls = [(i.name, json.loads(i.arguments)) for i in items if i.type == "function_call"]
        expected = [
            (c["function"]["name"], c["function"]["arguments"])
            for c in message.get("tool_calls", [])
        ]
        assert calls == expected
        call_ids = [item.call_id for item in items if item.type == "function_call"]
        assert len(set(call_ids)) == len(call_ids)


@pytest.mark.parametrize("family", CALL_FAMILIES)
@pytest.mark.parametrize("policy", ["drop", "content"])
def test_a_cut_off_call_ends_an_incomplete_response(family, policy):
    """The sample cut in the middle of its first call's body (a max_tokens stop): the stream ends
    with `response.incomplete` (reason max_output_tokens), openai's state accepts it, and no item
    of the cut call is closed with status "completed"."""
    from test_openai_lenient import _call_regions, _delimiter

    from chatparse import load_template

    sample = json.loads((ROOT / "samples" / f"{family}.json").read_text())
    spec = load_template(family)["fields"]["tool_calls"]
    open_start, close_start = _call_regions(spec, sample["text"])[0]
    open_end = _delimiter(spec, "open").match(sample["text"], open_start).end()
    cut = sample["text"][: (open_end + close_start) // 2 + 1]
    for pieces in (list(cut), [cut]):
        stream, events = stream_events(family, cut, pieces, malformed=policy)
        assert stream.finish_reason == "length"
        _lifecycle(events, "response.incomplete")
        fired = replay(events)
        response = fired[-1].response
        assert response.status == "incomplete"
        assert response.incomplete_details.reason == "max_output_tokens"
        calls = [item for item in response.output if item.type == "function_call"]
        finished = openai_view(stream.message).get("tool_calls") or []
        assert [c.status for c in calls] == ["completed"] * len(finished) + ["incomplete"] * (
            len(calls) - len(finished)
        )
        # The output ended inside its last item.
        assert response.output[-1].status == "incomplete"
        done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
        assert [i["status"] for i in done] == [i.status for i in response.output]


def test_a_malformed_call_mid_stream_is_incomplete_not_completed():
    """Under "content" a call whose body breaks goes out as content after its name went out: its
    function_call item is done "incomplete" when the content item begins (the stream says so),
    and the response itself completes."""
    text = 'A<tool_call>{"name": "bad", arguments}</tool_call>B<tool_call>{"name": "ok", "arguments": {}}</tool_call>'
    stream = DeltaStream("smollm3", "", malformed="content")
    responses = ResponsesEvents(stream)
    events = []
    for ch in text:
        events += responses.feed(stream.feed(ch))
    events += responses.feed(stream.finish()) + responses.close()
    _lifecycle(events, "response.completed")
    response = replay(events)[-1].response
    calls = {item.name: item.status for item in response.output if item.type == "function_call"}
    assert calls == {"bad": "incomplete", "ok": "completed"}
