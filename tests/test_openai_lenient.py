"""`DeltaStream(..., malformed="drop" | "content")`: a call cut off by max_tokens (or not
parseable) never raises; what went out stays, the rest of the stream is the reference's; with
"content" the malformed call's body goes out as content. And a truncation sweep: every built-in's
bundled sample cut at every position, through ResponseParser(malformed="event") and DeltaStream.

Oracles: the reference's message for the text with the unfinished call cut away (or its body
replaced by a valid one and that call removed), the `openai` package's stream accumulator, and
the uncut output's call (a cut-off call's partial arguments must be a prefix of the canonical
arguments it would have had). In the sweep: the reference wherever it does not raise on the cut;
where it does, chatparse's own lenient one-shot message (itself checked against the reference in
tests/test_lenient.py), which streaming in any pieces and DeltaStream must reproduce.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import openai_oracle
import pytest

from chatparse.openai import ChunkWriter, DeltaStream

reference = pytest.importorskip("transformers.utils.chat_parsing")

FAMILY = "smollm3"
ARGS = {"city": "Paris", "days": [1, 2.5], "hot": True, "note": None}
WHOLE = (
    "Let me check."
    + f'<tool_call>{{"name": "first", "arguments": {json.dumps(ARGS)}}}</tool_call>'
    + f'<tool_call>{{"name": "second", "arguments": {json.dumps(ARGS)}}}</tool_call>'
)


def run(text: str, pieces: list[str], policy: str = "drop"):
    stream = DeltaStream(FAMILY, "", malformed=policy, call_id=lambda: "call_x")
    writer = ChunkWriter(id="c", model="m", created=0)
    chunks = []
    for piece in pieces:
        chunks += writer.chunks(stream.feed(piece))
    chunks += writer.chunks(stream.finish())
    chunks.append(writer.final(stream.finish_reason))
    return stream, openai_oracle.accumulate(chunks)


def reference_message(text: str) -> tuple[dict, bool]:
    """The reference's message, and whether `text` ends inside a call (then the call is cut)."""
    try:
        return reference.parse_response(text, reference_template(), prefix=""), False
    except ValueError:
        cut = text.rindex("<tool_call>")
        return reference.parse_response(text[:cut], reference_template(), prefix=""), True


def reference_template():
    from chatparse import load_template

    return load_template(FAMILY)


@pytest.mark.parametrize("length", range(0, len(WHOLE) + 1, 3))
def test_a_call_cut_off_at_any_point_never_raises(length):
    text = WHOLE[:length]
    expected, cut_off = reference_message(text)
    for pieces in ([text], list(text)):
        stream, accumulated = run(text, pieces)
        assert stream.message == expected
        assert stream.finish_reason == (
            "length" if cut_off else ("tool_calls" if expected.get("tool_calls") else "stop")
        )
        assert bool(stream.malformed) == cut_off
        calls = accumulated.get("tool_calls", [])
        finished = expected.get("tool_calls", [])
        # The finished calls arrive whole and equal the message's ...
        for got, want in zip(calls, finished):
            assert got["function"]["name"] == want["function"]["name"]
            assert json.loads(got["function"]["arguments"]) == want["function"]["arguments"]
        # ... and at most one more, the cut-off call, with what had gone out of it: a prefix of
        # the canonical arguments the uncut output gives it.
        assert len(calls) - len(finished) in (0, 1)
        if len(calls) > len(finished):
            assert cut_off
            partial = calls[-1]["function"]
            name = partial["name"]
            assert name in ("first", "second")
            assert json.dumps(ARGS).startswith(partial["arguments"])


def test_an_unparseable_call_is_dropped_and_the_stream_goes_on():
    text = 'A<tool_call>{"name": "bad", arguments}</tool_call>B' + WHOLE
    stream, accumulated = run(text, list(text))
    assert [m["text"] for m in stream.malformed] == ['{"name": "bad", arguments}']
    assert stream.finish_reason == "tool_calls"
    calls = accumulated["tool_calls"]
    # The bad call's name was final (a complete JSON string) before the body broke, so it went
    # out, and stays: with no arguments, since none of them was ever final.
    assert [c["function"]["name"] for c in calls] == ["bad", "first", "second"]
    assert calls[0]["function"]["arguments"] == ""
    assert [json.loads(c["function"]["arguments"]) for c in calls[1:]] == [ARGS, ARGS]
    assert (
        stream.message["tool_calls"]
        == reference.parse_response(WHOLE, reference_template(), prefix="")["tool_calls"]
    )


def test_the_default_still_raises():
    stream = DeltaStream(FAMILY, "")
    stream.feed(WHOLE[:40])
    with pytest.raises(ValueError):
        stream.finish()


def test_an_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="malformed must be one of"):
        DeltaStream(FAMILY, "", malformed="keep")


# --- malformed="content": the malformed call's body is kept as content --------------------------

BAD = '{"name": "bad", arguments}'
KEPT = "A<tool_call>" + BAD + "</tool_call>B" + WHOLE


def _finished_calls(accumulated: dict, count: int) -> list[dict]:
    """The client's first `count` calls in parse_response's shape (their arguments json.loads'd)."""
    calls = accumulated.get("tool_calls", [])[:count]
    return openai_oracle.as_chatparse({"tool_calls": calls})["tool_calls"]


def test_an_unparseable_call_is_kept_as_content():
    """The reference's message for the text with the bad body replaced by a valid one, that call
    removed (lenient mode's own oracle, tests/test_lenient.py) and the bad body inserted into the
    content where the content before the region ended. The openai accumulator gives
    `stream.message`."""
    valid = reference.parse_response(
        KEPT.replace(BAD, '{"name": "ok", "arguments": {}}'), reference_template(), prefix=""
    )
    dropped = {**valid, "tool_calls": valid["tool_calls"][1:]}
    before = reference.parse_response(
        KEPT[: KEPT.index("<tool_call>")], reference_template(), prefix=""
    )
    head = before.get("content", "")
    assert dropped["content"].startswith(head)
    content = head + BAD + dropped["content"][len(head) :]
    for pieces in ([KEPT], list(KEPT), [KEPT[i : i + 5] for i in range(0, len(KEPT), 5)]):
        stream, accumulated = run(KEPT, pieces, "content")
        assert accumulated["content"] == content
        assert stream.message == {**dropped, "content": content}
        # The bad call's name goes out when a feed ends after its JSON string closes and before
        # the char that breaks the body (one char at a time, it does): it stays, with no
        # arguments, as under "drop". The other calls are the reference's.
        calls = accumulated["tool_calls"]
        bad = [c for c in calls if c["function"]["name"] == "bad"]
        assert len(bad) == (pieces == list(KEPT)) and all(
            c["function"]["arguments"] == "" for c in bad
        )
        kept = [c for c in accumulated["tool_calls"] if c["function"]["name"] != "bad"]
        assert _finished_calls({"tool_calls": kept}, len(kept)) == dropped["tool_calls"]
        assert stream.finish_reason == "tool_calls"
        assert [m["text"] for m in stream.malformed] == [BAD]


@pytest.mark.parametrize("length", range(len(WHOLE) - 60, len(WHOLE), 7))
def test_a_cut_off_call_is_kept_as_content(length):
    """Cut inside the second call: its body so far is the content's tail, finish_reason "length"."""
    text = WHOLE[:length]
    cut = text.rindex("<tool_call>")
    expected = reference.parse_response(text[:cut], reference_template(), prefix="")
    body = text[cut + len("<tool_call>") :]
    for pieces in ([text], list(text)):
        stream, accumulated = run(text, pieces, "content")
        assert stream.finish_reason == "length" == accumulated["_finish_reason"]
        assert accumulated["content"] == expected.get("content", "") + body
        assert stream.message == {**expected, "content": expected.get("content", "") + body}
        finished = expected["tool_calls"]
        assert _finished_calls(accumulated, len(finished)) == finished


# --- truncation sweep: every built-in's bundled sample cut at every position -------------------

ROOT = Path(__file__).resolve().parent.parent
SWEEP_FAMILIES = sorted(p.stem for p in (ROOT / "samples").glob("*.json"))
# the families whose format has tool calls (kimi_vl has reasoning and content only)
CALL_FAMILIES = [
    family
    for family in SWEEP_FAMILIES
    if "tool_calls" in json.loads((ROOT / "templates" / f"{family}.json").read_text())["fields"]
]


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _local_accumulate(deltas: list[dict]) -> dict:
    """What a client builds from the deltas (the openai accumulator's rules, restated for speed:
    it is run on every tenth cut): texts appended, calls by index, name from the first fragment."""
    out: dict = {}
    calls: dict[int, dict] = {}
    for delta in deltas:
        for key, value in delta.items():
            if key == "tool_calls":
                for fragment in value:
                    call = calls.setdefault(fragment["index"], {"name": None, "arguments": ""})
                    function = fragment["function"]
                    if "name" in function:
                        call["name"] = function["name"]
                    call["arguments"] += function.get("arguments", "")
            elif key != "role":
                out[key] = out.get(key, "") + value
    out["tool_calls"] = [calls[i] for i in sorted(calls)]
    return out


@pytest.mark.parametrize("family", SWEEP_FAMILIES)
def test_truncation_sweep_never_raises(family):
    """Each cut of the sample (every position): with malformed="event" the parser gives events and
    a message, streamed in 7-char pieces or one-shot alike; where the reference does not raise on
    the cut, that message is the reference's. DeltaStream (at every cut of a sample up to 200
    chars, else at 200 evenly spaced ones; policies "drop" and "content" by turns) never raises: its message is the lenient one-shot message (with "content", the
    malformed bodies in the content), the client's texts are the message's, its first calls are
    the message's calls and the one more it may hold is the cut-off call, with `finish_reason`
    "length"."""
    from chatparse import load_template

    module = importlib.import_module(f"chatparse.generated.{family}")
    sample = json.loads((ROOT / "samples" / f"{family}.json").read_text())
    template = load_template(family)
    prefix, tools, whole = sample["prefix"], sample.get("tools"), sample["text"]
    stride = -(-len(whole) // 200)  # DeltaStream: every cut up to 200 chars, then a dense sample
    for length in range(len(whole) + 1):
        text = whole[:length]
        lenient = module.ResponseParser.parse(text, prefix=prefix, tools=tools, malformed="event")
        parser = module.ResponseParser(prefix, tools=tools, malformed="event")
        events = list(parser.initial_events)
        for piece in _pieces(text, 7):
            events += parser.feed(piece)
        message, final = parser.finalize()
        events += final
        assert message == lenient
        malformed = [e for e in events if e["type"] == "region_malformed"]
        try:
            expected = reference.parse_response(text, template, prefix=prefix, tools=tools)
        except ValueError:
            expected = None
        if expected is not None:
            assert lenient == expected and not malformed

        if length % stride and length != len(whole):
            continue
        policy = ("drop", "content")[(length // stride) % 2]
        stream = DeltaStream(module, prefix, tools=tools, malformed=policy)
        deltas = [d for piece in _pieces(text, 5) for d in stream.feed(piece)] + stream.finish()
        client = _local_accumulate(deltas)
        # A call the cut leaves without its close is dropped as malformed, even where the parser
        # still gives it a value (test_no_cut_off_call_is_reported_finished): the stream's calls
        # are the lenient message's first ones.
        view = openai_oracle.openai_view(stream.message)
        lenient_calls = openai_oracle.openai_view(lenient).get("tool_calls") or []
        assert lenient_calls[: len(view.get("tool_calls") or [])] == (view.get("tool_calls") or [])
        others = {k: v for k, v in lenient.items() if k != "tool_calls"}
        if policy == "content" and stream.malformed:
            others["content"] = client.get("content", "")
        assert {k: v for k, v in stream.message.items() if k != "tool_calls"} == others
        for key in ("content", "reasoning_content"):
            assert client.get(key, "") == openai_oracle.openai_view(stream.message).get(
                key, ""
            ) or (key not in stream.message and key not in client)
        calls = view.get("tool_calls") or []
        got = client["tool_calls"]
        # The extra calls are the ones the cut-off region had sent (with transform_each, every
        # call of its list): the region is malformed, so none of them is in the message.
        assert len(got) - len(calls) == sum(m["sent"] for m in stream.malformed), (length, got)
        # An xml-inline call cut inside a parameter whose key went out: the message's call lacks
        # that parameter (the reference's value for the cut text), the client's holds its start.
        assert stream.diverged in ([], [len(calls) - 1]), stream.diverged
        for index, (sent, call) in enumerate(zip(got, calls)):
            assert sent["name"] == call["function"]["name"]
            if index not in stream.diverged:
                assert json.loads(sent["arguments"]) == call["function"]["arguments"]
        assert stream.finish_reason in ("length", "tool_calls" if got else "stop")
        assert (stream.finish_reason == "length") == bool(stream.malformed and not stream.diverged)
        if (
            length // stride
        ) % 10 == 0:  # the openai package's accumulator agrees with the local one
            writer = ChunkWriter(id="c", model="m", created=0)
            real = openai_oracle.accumulate(
                writer.chunks(deltas) + [writer.final(stream.finish_reason)]
            )
            assert real.get("content", "") == client.get("content", "")
            assert [c["function"]["arguments"] for c in real.get("tool_calls", [])] == [
                c["arguments"] for c in got
            ]


# --- a call cut before its close is never reported as finished ---------------------------------


def _delimiter(spec: dict, role: str):
    """The template's own open or close of a field, compiled by `regex` (DOTALL), as the reference
    compiles it: a pattern as written, a literal (or a list, longest first) escaped."""
    import regex

    pattern = spec.get(f"{role}_pattern")
    if pattern is None:
        literals = spec[role] if isinstance(spec[role], list) else [spec[role]]
        ordered = sorted(literals, key=len, reverse=True)
        pattern = "|".join(regex.escape(literal) for literal in ordered)
    return regex.compile(pattern, regex.DOTALL)


def _call_regions(spec: dict, text: str) -> list[tuple[int, int]]:
    """(open start, close start) of each tool-call region of the whole text, by the template's
    regexes: an open, then the first close after it."""
    opener, closer = _delimiter(spec, "open"), _delimiter(spec, "close")
    regions, pos = [], 0
    while (found := opener.search(text, pos)) is not None:
        close = closer.search(text, found.end())
        assert close is not None, "the bundled sample closes every call"
        regions.append((found.start(), close.start()))
        pos = close.end()
    return regions


@pytest.mark.parametrize("family", CALL_FAMILIES)
def test_no_cut_off_call_is_reported_finished(family):
    """The bundled sample cut at every position, streamed (in one piece, and in 5-char pieces at
    every fifth cut) with malformed="drop", "content" and "raise": a call whose close delimiter is not
    complete in the cut text is never in the message, `finish_reason` is "length" exactly when
    the cut falls inside a call (its open complete, its close not), and "raise" raises exactly
    then. Oracles: the template's own open and close regexes over the uncut text (where each call
    region starts and where its close starts), and the reference's calls for the text cut right
    after the last complete close."""
    from chatparse import load_template

    sample = json.loads((ROOT / "samples" / f"{family}.json").read_text())
    template = load_template(family)
    spec = template["fields"]["tool_calls"]
    prefix, tools, whole = sample["prefix"], sample.get("tools"), sample["text"]
    regions = _call_regions(spec, whole)
    opener, closer = _delimiter(spec, "open"), _delimiter(spec, "close")
    expected_message = reference.parse_response(whole, template, prefix=prefix, tools=tools)
    calls = expected_message["tool_calls"]
    assert len(regions) == (len(calls) if spec.get("repeats") else 1)
    finished_calls: dict[int, list] = {0: []}
    for length in range(len(whole) + 1):
        finished, end = 0, 0
        for _open_start, close_start in regions:
            close = closer.match(whole, close_start, length)
            if close is None:
                break
            finished, end = finished + 1, close.end()
        inside = finished < len(regions) and (
            opener.match(whole, regions[finished][0], length) is not None
        )
        if end not in finished_calls:
            cut = reference.parse_response(whole[:end], template, prefix=prefix, tools=tools)
            finished_calls[end] = openai_oracle.openai_view(cut).get("tool_calls", [])
        text = whole[:length]
        runs = [("drop", [text]), ("content", [text])]
        if length % 5 == 0:
            runs.append(("drop", _pieces(text, 5)))
        for policy, pieces in runs:
            stream = DeltaStream(module_of(family), prefix, tools=tools, malformed=policy)
            for piece in pieces:
                stream.feed(piece)
            stream.finish()
            got = openai_oracle.openai_view(stream.message).get("tool_calls", [])
            assert got == finished_calls[end], (length, got)
            want = "length" if inside else ("tool_calls" if finished else "stop")
            assert stream.finish_reason == want, (length, text[-40:])
            assert bool(stream.incomplete) == (inside and bool(stream.malformed[-1]["sent"]))
        stream = DeltaStream(module_of(family), prefix, tools=tools)
        stream.feed(text)
        if inside:
            with pytest.raises(ValueError):
                stream.finish()
        else:
            stream.finish()
            assert stream.finish_reason == ("tool_calls" if finished else "stop")


def module_of(family: str):
    return importlib.import_module(f"chatparse.generated.{family}")
