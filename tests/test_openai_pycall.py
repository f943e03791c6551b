"""chatparse.openai on python-call-list bodies: arguments stream as canonical JSON while the model
writes them, and the deltas rebuild `parse_response`'s message for every chunking.

The oracles are test_openai_deltas's `check_stream` (the openai package's stream accumulator,
json.dumps of the message's arguments, nothing retracted) and `parse_response` on the whole text
(itself checked against transformers 5.25 in test_python_call_list.py).
"""

from __future__ import annotations

import json
import random
import time

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_openai_deltas import check_stream, run_stream
from test_python_call_list import LFM2_LIKE, WHITESPACE, joined, values

import chatparse
from chatparse.openai import DeltaStream
from chatparse.serving.python_calls import pycall_plan_for

TEMPLATE = {**LFM2_LIKE, "defaults": {"role": "assistant"}}
OPEN, CLOSE = "<|tool_call_start|>", "<|tool_call_end|>"
KEYS = ["city", "days", "code", "note", "flags", "on", "extra"]
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
                    "code": {"type": ["integer", "string"]},
                    "note": {"type": "string", "nullable": True},
                    "flags": {"type": "boolean"},
                    "on": {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
                },
            },
        },
    }
]


def pieces_of(text: str, seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    cut, i = [], 0
    while i < len(text):
        step = rng.randint(1, 7)
        cut.append(text[i : i + step])
        i += step
    return {"whole": [text], "chars": list(text), "random": cut}


def assert_streams_to_the_message(text: str, tools, seed: int = 0) -> None:
    try:
        expected = chatparse.parse_response(text, TEMPLATE, prefix="", tools=tools)
    except ValueError:
        return  # the body does not parse: the region raises, under DeltaStream too
    for pieces in pieces_of(text, seed).values():
        stream, batches = run_stream(TEMPLATE, "", tools, pieces)
        check_stream(stream, batches, expected)


@st.composite
def calls_text(draw) -> str:
    calls = []
    for _ in range(draw(st.integers(0, 3))):
        keys = draw(st.lists(st.sampled_from(KEYS), unique=True, max_size=4))
        arguments = [f"{key}{draw(WHITESPACE)}={draw(WHITESPACE)}{draw(values())}" for key in keys]
        name = draw(st.sampled_from(["get_weather", "other", "get_weather"]))
        calls.append(name + draw(WHITESPACE) + joined(draw, arguments, "(", ")"))
    return OPEN + draw(WHITESPACE) + joined(draw, calls, "[", "]") + draw(WHITESPACE) + CLOSE


PROPERTY = settings(
    max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@PROPERTY
@given(calls_text(), st.booleans(), st.integers(0, 2**16))
@example(
    OPEN + "[get_weather(city='Pa\\u00e9\\ud83d\\ude00', days='3', code='007')]" + CLOSE, True, 0
)
@example(
    OPEN + "[get_weather(flags=['true', 'x'], on='null', note=None, days=[1, {'k': 2}])]" + CLOSE,
    True,
    0,
)
def test_deltas_rebuild_the_message_in_every_chunking(text, with_tools, seed):
    assert_streams_to_the_message(text, TOOLS if with_tools else None, seed)


def test_the_generated_texts_mostly_parse():
    """The property above compares streams, not only errors: most drawn texts parse."""
    parsed = 0

    @settings(max_examples=60, derandomize=True, deadline=None)
    @given(calls_text())
    def count(text):
        nonlocal parsed
        try:
            chatparse.parse_response(text, TEMPLATE, prefix="")
            parsed += 1
        except ValueError:
            pass

    count()
    assert parsed >= 30


def _arguments_sent(stream: DeltaStream, text: str) -> str:
    sent = []
    for ch in text:
        for delta in stream.feed(ch):
            sent.extend(f["function"].get("arguments", "") for f in delta.get("tool_calls", []))
    return "".join(sent)


def test_arguments_stream_as_the_model_writes_them():
    """Each key once its `=` is read, a string as it arrives (an escape once decided), other
    values once complete, "}" at the `)`; a member `tools=` typing can change waits for its end."""
    text = OPEN + "[get_weather(city='Par\\u00e9is', days=3, code='007', flags='true')]" + CLOSE
    stream = DeltaStream(TEMPLATE, "", tools=TOOLS)
    steps = [
        ("[get_weather(", ""),
        ("city=", '{"city": '),
        ("'Par", '{"city": "Par'),
        ("\\u00", '{"city": "Par'),
        ("e9is'", '{"city": "Par\\u00e9is"'),
        (", days=", '{"city": "Par\\u00e9is", "days": '),
        ("3", '{"city": "Par\\u00e9is", "days": '),  # 3 could be 31
        (", code='00", '{"city": "Par\\u00e9is", "days": 3, "code": "00'),  # allows "string"
        ("7', flags='tr", '{"city": "Par\\u00e9is", "days": 3, "code": "007", "flags": '),
        ("ue')", '{"city": "Par\\u00e9is", "days": 3, "code": "007", "flags": true}'),
    ]
    sent, fed = "", OPEN
    stream.feed(OPEN)
    for piece, expected in steps:
        sent += _arguments_sent(stream, piece)
        fed += piece
        assert sent == expected, (piece, sent)
    stream.feed(text[len(fed) :])
    stream.finish()
    assert stream.message["tool_calls"][0]["function"]["arguments"] == json.loads(sent)


def test_a_bad_body_stops_streaming_and_raises_at_the_close():
    stream = DeltaStream(TEMPLATE, "")
    sent = _arguments_sent(stream, OPEN + "[get_weather(city='x', 3)]")
    assert sent == '{"city": "x"'
    with pytest.raises(ValueError, match="python-call-list: expected a keyword argument"):
        stream.feed(CLOSE)
        stream.finish()


@pytest.mark.parametrize(
    "spec",
    [
        {"content": "python-call-list"},
        {"content": "python-call-list", "transform": {"name": "{name}"}, "transform_each": True},
        {**LFM2_LIKE["fields"]["tool_calls"], "content_args": {"value_parser_by": {}}},
        {**LFM2_LIKE["fields"]["tool_calls"], "content_args": []},
    ],
)
def test_other_shapes_go_out_whole(spec):
    assert not pycall_plan_for(spec)


def test_reading_is_linear_time():
    """A long string, a long list and many calls, fed in 4-char pieces: 8x the text, not far
    from 8x the time (the reader keeps no text it has read past, and scans each char once)."""
    from test_linear_time import BOUND, growth

    shapes = {
        "string": lambda n: "[get_weather(city='" + "ab\\n" * (300 * n) + "')]",
        "list": lambda n: "[get_weather(flags=[" + "'x', 1, {'k': [2]}, " * (60 * n) + "0])]",
        "calls": lambda n: "[" + ", ".join(["f(a='x', b=1)"] * (60 * n)) + "]",
        "name": lambda n: "[get_weather(" + "a" * (1000 * n) + "=1)]",
    }
    for shape, body_at in shapes.items():

        def runner_at(n, body_at=body_at):
            text = OPEN + body_at(n) + CLOSE
            pieces = [text[i : i + 4] for i in range(0, len(text), 4)]

            def run():
                stream = DeltaStream(TEMPLATE, "")
                for piece in pieces:
                    stream.feed(piece)
                stream.finish()

            return run

        ratio, how = growth(runner_at)
        assert ratio < BOUND, f"{shape}: 8x the text took {ratio:.1f}x the CPU time ({how})"
