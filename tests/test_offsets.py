"""`offsets=True` (an extension; transformers' main branch has it): `start`/`end` on open, close
and malformed events.

The semantics are main's (read in the copy of its response_parser.py that SGLang vendors,
sgl-project/sglang@106b75103b17 python/sglang/srt/parser/chat_parsing/response_parser.py): the
span of the parser's input text (the prefix after start-anchor truncation, then the output) that
the event consumed. An explicit open is its open delimiter's match; a close by a close delimiter
is that match; a region closed by another region's open, or by the end of the input, closes on
an empty span there; the implicit region opens on an empty span where its first text starts; a
malformed region has the span its close would have had. Keys: type, field, start, end, then the
event's own keys.

Oracles, none of them the code under test:
- `OffsetReference`: the reference (5.25), with the span of each event read from the match it
  committed (its `_scan`) and its `_pos`, exactly where main reads them, and main's
  `region_malformed` in place of the exception;
- the input text itself: an open or close span is where the reference template's own compiled
  regex, searched from the span's start over the whole input, matches; the chunks between an
  open and its close tile the text between their spans.
Offsets are the same for every chunking, whole-chunk delimiters included. With offsets=True the
generated fast path is off (runtime/region_parser.py `_set_idle`): the general path builds every event.
"""

from __future__ import annotations

import importlib
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import FIXTURE_DIR, REPO, builtin_template, chunkings, merge_chunks
from test_stream_properties import chunked, templates, texts

import chatparse
from chatparse.runtime.region_parser import RegionParser

reference = pytest.importorskip("transformers.utils.chat_parsing")
ReferenceParser = reference.ResponseParser
load_response_template = pytest.importorskip(
    "transformers.utils.chat_parsing.response_templates"
).load_response_template

MALFORMED_ERRORS = (ValueError, KeyError, TypeError, IndexError)
FAMILIES = [
    "gpt_oss",
    "hermes",
    "kimi_k2",
    "mistral",
    "qwen3",
    "qwen3_coder",
    "smollm3",
    "deepseek_v31",
]


def with_span(event: dict, start: int, end: int) -> dict:
    """`event` with start and end right after field, as main orders the keys."""
    head = {"type": event["type"], "field": event["field"], "start": start, "end": end}
    return {**head, **{k: v for k, v in event.items() if k not in head}}


class OffsetReference(ReferenceParser):
    """The reference, adding main's offsets (and main's lenient close) to its own events."""

    _best = None

    def _scan(self, watch, eos):
        best, hold_start = super()._scan(watch, eos)
        self._best = best  # what `_process` commits next, if anything
        return best, hold_start

    def _accumulate(self, events, text):
        count, start = len(events), self._pos  # `_pos` is where `text` starts
        super()._accumulate(events, text)
        if len(events) > count and events[count]["type"] == "region_open":
            events[count] = with_span(events[count], start, start)

    def _open_explicit(self, events, field, m):
        super()._open_explicit(events, field, m)
        events[-1] = {**with_span(events[-1], m.start(), m.end()), "captures": dict(self._captures)}

    def _close_current(self, events):
        if self._best is None:  # the end of the input: `_pos` is the buffer's end
            start = end = self._pos
        else:
            kind, _, m = self._best
            start, end = (m.start(), m.start()) if kind == "open" else m.span()
        count, field, body = len(events), self._current, self._body
        try:
            super()._close_current(events)
        except MALFORMED_ERRORS as error:
            event = {"type": "region_malformed", "field": field, "error": str(error), "text": body}
            events.append(with_span(event, start, end))
            self._reset_to_implicit()
            return
        if len(events) > count:
            events[-1] = with_span(events[-1], start, end)


def input_text(template: dict, prefix: str, text: str) -> str:
    """The reference's buffer once everything is fed: the truncated prefix, then the output."""
    return (
        load_response_template(template).truncate_past_last_anchor(prefix) if prefix else ""
    ) + text


def run(parser, chunks: list[str]) -> tuple[dict, list[dict]]:
    events = list(parser.initial_events)
    for chunk in chunks:
        events += parser.feed(chunk)
    message, final = parser.finalize()
    return message, events + final


def oracle(template: dict, prefix: str, text: str, tools=None) -> list[dict]:
    parser = OffsetReference(template, prefix=prefix, tools=tools)
    return merge_chunks(run(parser, [text])[1])


def cases() -> list[tuple[str, dict, str, str, list | None]]:
    """Each family's bundled sample and catalogue fixtures: (id, template, prefix, text, tools)."""
    found = []
    for family in FAMILIES:
        template = builtin_template(family)
        sample = json.loads((REPO / "samples" / f"{family}.json").read_text(encoding="utf-8"))
        found.append(
            (f"{family}/sample", template, sample["prefix"], sample["text"], sample.get("tools"))
        )
        path = FIXTURE_DIR / "catalogue" / f"{family}.json"
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"] if path.exists() else []:
            if isinstance(case.get("text"), str):
                found.append(
                    (
                        f"{family}/{case['name']}",
                        template,
                        case["prefix"] or "",
                        case["text"],
                        case.get("tools"),
                    )
                )
    return found


CASES = cases()


def delimiter_chunks(events: list[dict], text_start: int, text: str, seed: int) -> list[str]:
    """`text` with every non-empty event span inside it as one chunk (a delimiter arriving whole,
    as a server sends a special token), the rest in pieces of 1 to 6 chars."""
    rng = random.Random(seed)
    cuts = sorted(
        {
            (e["start"] - text_start, e["end"] - text_start)
            for e in events
            if "start" in e and e["end"] > e["start"]
        }
    )
    chunks, last = [], 0
    for start, end in [*cuts, (len(text), len(text))]:
        if start < last:
            continue  # a span of the prefix, or inside one already cut
        while last < start:
            step = rng.randint(1, 6)
            chunks.append(text[last : min(start, last + step)])
            last = min(start, last + step)
        if end > start:
            chunks.append(text[start:end])
            last = end
    return chunks


def check_against_the_text(template: dict, whole: str, events: list[dict]) -> None:
    """Spans index `whole`: a non-empty one is its delimiter's regex match there, the chunks of a
    region tile the text between its open and close, and spans never go backwards."""
    fields = load_response_template(template).fields
    position = 0
    body: list[str] | None = None
    opened_at = 0
    for event in events:
        kind = event["type"]
        if kind == "region_chunk":
            assert body is not None, event
            body.append(event["text"])
            continue
        start, end = event["start"], event["end"]
        assert position <= start <= end <= len(whole), (event, position)
        position = end
        if start < end:
            field = fields[event["field"]]
            pattern = field.open_re if kind == "region_open" else field.close_re
            found = pattern.search(whole, start)
            assert found is not None and found.span() == (start, end), (event, whole[start:end])
        if kind == "region_open":
            body, opened_at = [], end
        else:
            assert body is not None, event
            assert "".join(body) == whole[opened_at:start], event
            body = None


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_offsets_are_mains_for_every_chunking(case, monkeypatch):
    name, template, prefix, text, tools = case
    expected = oracle(template, prefix, text, tools)
    whole = input_text(template, prefix, text)
    check_against_the_text(template, whole, expected)
    assert any(e["type"] == "region_close" for e in expected), name
    text_start = len(whole) - len(text)
    module = chatparse.load_module(template)
    general = type("GeneralOnly", (module.ResponseParser,), {"feed": RegionParser.feed})
    commits = []
    original = RegionParser._commit_whole

    def counting(self, index, chunk):
        commits.append(chunk)
        return original(self, index, chunk)

    monkeypatch.setattr(RegionParser, "_commit_whole", counting)
    for number, chunks in enumerate(
        [*chunkings(text), delimiter_chunks(expected, text_start, text, 0)]
    ):
        for parser_class in (module.ResponseParser, general):
            parser = parser_class(prefix, tools=tools, offsets=True, captures=True)
            _, events = run(parser, chunks)
            assert merge_chunks(events) == expected, (name, number, parser_class.__name__)
    assert not commits, (name, "offsets=True must not take the fast path's whole-chunk commit")


def test_whole_chunk_delimiters_get_their_offsets_and_skip_the_fast_path(monkeypatch):
    # Written from the format: "</think>" closes the reasoning and "<tool_call>" opens a call;
    # each arrives whole while its region is open and nothing is held (the fast path's case,
    # which offsets=True turns off).
    from chatparse.generated import smollm3

    chunks = [
        "<think>",
        "plan",
        "</think>",
        "Hello.",
        "<tool_call>",
        '{"name": "f", "arguments": {}}',
    ]
    chunks += ["</tool_call>", "ok"]
    text = "".join(chunks)
    commits = []
    original = RegionParser._commit_whole

    def counting(self, index, chunk):
        commits.append(chunk)
        return original(self, index, chunk)

    monkeypatch.setattr(RegionParser, "_commit_whole", counting)
    parser = smollm3.ResponseParser("", offsets=True)
    _, events = run(parser, chunks)
    assert not commits, "offsets=True took the fast path's whole-chunk commit"
    assert parser.fast_feed is RegionParser.feed  # the general path, never a fast one
    spans = [(e["type"], e["field"], e["start"], e["end"]) for e in events if "start" in e]
    think, think_end = text.index("<think>"), text.index("</think>")
    call, call_end = text.index("<tool_call>"), text.index("</tool_call>")
    hello, ok = think_end + len("</think>"), call_end + len("</tool_call>")
    assert spans == [
        ("region_open", "reasoning_content", think, think + len("<think>")),
        ("region_close", "reasoning_content", think_end, hello),
        ("region_open", "content", hello, hello),
        ("region_close", "content", call, call),
        ("region_open", "tool_calls", call, call + len("<tool_call>")),
        ("region_close", "tool_calls", call_end, ok),
        ("region_open", "content", ok, ok),
        ("region_close", "content", len(text), len(text)),
    ]


def test_offsets_count_from_the_truncated_prefix():
    # Written from the format: the start anchor "<|im_start|>assistant\n" ends the prompt's
    # history, and "<think>\n" after it opens the reasoning in the prefix.
    template = chatparse.load_template("qwen3")
    prefix = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n"
    parser = chatparse.ResponseParser(template, prefix, offsets=True)
    _, events = run(parser, ["plan", "</think>", "Hi"])
    tail = "<think>\n"  # what follows the last anchor: offsets count from its first char
    assert parser.initial_events[0]["start"] == 0
    whole = tail + "plan</think>Hi"
    close = next(e for e in events if e["type"] == "region_close")
    assert whole[close["start"] : close["end"]] == "</think>"
    assert [e["type"] for e in events].count("region_open") == 2


@pytest.mark.parametrize(
    "text",
    [
        'Hi<tool_call>{"name": "f"</tool_call>after',  # broken JSON, closed
        'Hi<tool_call>{"name": "f", "argu',  # cut off by max_tokens
        'a<tool_call>{]</tool_call>b<tool_call>{"name": "g", "arguments": {}}</tool_call>',
    ],
)
def test_malformed_regions_have_the_span_their_close_would_have(text):
    template = chatparse.load_template("smollm3")
    expected = oracle(template, "", text)
    assert any(e["type"] == "region_malformed" for e in expected)
    check_against_the_text(template, text, expected)
    for chunks in chunkings(text):
        parser = chatparse.ResponseParser(
            template, "", malformed="event", offsets=True, captures=True
        )
        _, events = run(parser, chunks)
        assert merge_chunks(events) == expected, chunks
    malformed = next(e for e in expected if e["type"] == "region_malformed")
    close = text.find("</tool_call>", text.index("<tool_call>"))
    assert (malformed["start"], malformed["end"]) == (
        (close, close + len("</tool_call>")) if close >= 0 else (len(text), len(text))
    )


def test_default_events_are_unchanged():
    template = chatparse.load_template("qwen3")
    text = '<think>x</think>Hi<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    for options in ({}, {"captures": True}, {"malformed": "event"}):
        _, events = run(chatparse.ResponseParser(template, "", **options), [text])
        assert not any("start" in e or "end" in e for e in events)
    ref = reference.ResponseParser(template, prefix="")
    expected = ref.feed(text) + ref.finalize()[1]
    assert run(chatparse.ResponseParser(template, ""), [text])[1] == expected
    module = importlib.import_module("chatparse.generated.qwen3")
    assert run(module.ResponseParser(""), [text])[1] == expected


def without_errors(events: list[dict]) -> list[dict]:
    """Events without the malformed error's text (the offsets are what is compared here)."""
    return [{k: v for k, v in e.items() if k != "error"} for e in events]


@settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    template=templates(),
    text=texts(),
    prefix=st.sampled_from(["", "@@", "x@@<a>", "@@<t"]),
    data=st.data(),
)
def test_offsets_are_mains_on_random_templates(template, text, prefix, data):
    try:
        module = chatparse.load_module(template)
        expected = oracle(template, prefix, text)
    except Exception:
        return  # refused at compile time, or an error that is not the region's value
    check_against_the_text(template, input_text(template, prefix, text), expected)
    for chunks in ([text], list(text), data.draw(chunked(text))):
        parser = module.ResponseParser(prefix, malformed="event", offsets=True, captures=True)
        try:
            events = run(parser, chunks)[1]
        except Exception:
            continue  # a required field missing: the events are not the point here
        assert without_errors(merge_chunks(events)) == without_errors(expected), chunks
