"""chatparse.openai: the delta stream's guarantees, checked with the real `openai` client code.

The oracle for "what a client ends up with" is the `openai` package's own stream accumulator
(`ChatCompletionStreamState`, tests/openai_oracle.py); the oracle for the message is
`parse_response` on the whole text (itself checked against transformers elsewhere); the oracle for
argument text is `json.dumps` of the message's arguments and `json.loads` (never the code under
test). Each guarantee of the module docstring is one check in `check_stream`, run on every
built-in family's fixtures and bundled sample in four chunkings, and on generated arguments.
"""

from __future__ import annotations

import importlib
import json
import random
from pathlib import Path

import pytest
import regex
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from openai_oracle import accumulate, as_chatparse, openai_view, real_openai
from support import SpellingSink, reader_growth

from chatparse.openai import ChunkWriter, DeltaStream, ResponsesEvents
from chatparse.serving.json_reader import JsonReader

ROOT = Path(__file__).resolve().parent.parent
FAMILIES = sorted(p.stem for p in (ROOT / "templates").glob("*.json"))


def _module(family: str):
    return importlib.import_module(f"chatparse.generated.{family}")


def _cases():
    for path in sorted((ROOT / "tests" / "fixtures" / "catalogue").glob("*.json")):
        fixture = json.loads(path.read_text())
        for case in fixture["cases"]:
            yield fixture["family"], case["name"], case
    for path in sorted((ROOT / "samples").glob("*.json")):
        yield path.stem, "sample", json.loads(path.read_text())


CASES = [(family, case) for family, _, case in _cases()]
CASE_IDS = [f"{family}/{name}" for family, name, _ in _cases()]


def chunkings(text: str, seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    pieces, i = [], 0
    while i < len(text):
        step = rng.randint(1, 9)
        pieces.append(text[i : i + step])
        i += step
    # Server-like: mostly token-sized pieces (1 to 4 characters), now and then a burst.
    server, i = [], 0
    while i < len(text):
        step = rng.choice((1, 2, 3, 4, 4, 3, 2, 40))
        server.append(text[i : i + step])
        i += step
    return {"whole": [text], "chars": list(text), "random": pieces, "server": server}


def run_stream(source, prefix, tools, pieces, engine_reason=None, **options):
    """(stream, per-feed delta lists) for `pieces` fed one by one, then finish."""
    stream = DeltaStream(source, prefix, tools=tools, **options)
    batches = [stream.feed(piece) for piece in pieces]
    batches.append(stream.finish(engine_reason))
    return stream, batches


def check_stream(stream, batches, expected, reasoning_key="reasoning_content"):
    """Every guarantee of chatparse.openai for one run; returns the client's message."""
    deltas = [delta for batch in batches for delta in batch]
    assert stream.message == expected
    assert stream.diverged == []
    assert deltas and deltas[0].get("role") == expected.get("role", "assistant")
    assert all("role" not in delta for delta in deltas[1:])

    # The openai package's accumulator gives parse_response's message.
    writer = ChunkWriter(id="chatcmpl-test", model="test", created=0)
    chunks = writer.chunks(deltas) + [writer.final(stream.finish_reason)]
    client = accumulate(chunks)
    assert as_chatparse(client, reasoning_key) == openai_view(expected)
    calls = openai_view(expected).get("tool_calls") or []
    assert stream.finish_reason == ("tool_calls" if calls else "stop")
    assert client["_finish_reason"] == stream.finish_reason

    # Call fragments: indices dense from 0, one call's fragments contiguous, id/type/name only
    # on the first, arguments concatenating to json.dumps of the final arguments.
    fragments = [f for delta in deltas for f in delta.get("tool_calls", [])]
    order = [f["index"] for f in fragments]
    assert sorted(set(order)) == list(range(len(calls)))
    assert order == sorted(order), "a call's fragments are not contiguous"
    seen: set[int] = set()
    texts = [""] * len(calls)
    for fragment in fragments:
        first = fragment["index"] not in seen
        seen.add(fragment["index"])
        for key in ("id", "type"):
            assert (key in fragment) == first, (key, fragment)
        assert ("name" in fragment["function"]) == first, fragment
        texts[fragment["index"]] += fragment["function"].get("arguments", "")
    for text, call in zip(texts, calls):
        assert text == json.dumps(call["function"]["arguments"])

    # Nothing is retracted: every text the client holds after each feed is a prefix of its
    # final value, and a call's name never changes once sent.
    final = {k: v for k, v in client.items() if isinstance(v, str)}
    sofar: dict[str, str] = {}
    for batch in batches:
        for delta in batch:
            for key, value in delta.items():
                if isinstance(value, str) and key != "role":
                    sofar[key] = sofar.get(key, "") + value
        for key, value in sofar.items():
            assert final[key].startswith(value), key
    return client


@pytest.mark.parametrize("family, case", CASES, ids=CASE_IDS)
def test_catalogue_deltas_accumulate_to_the_message(family, case):
    """Every case is a whole turn: the engine says "stop", so a call the end of the output closes
    (mistral, granite and phi4 calls end with the end-of-turn token, left out of some recordings)
    is finished, as the reference reads it. Without the engine's word such a call is cut off
    (tests/test_openai_lenient.py)."""
    module = _module(family)
    prefix, tools, text = case["prefix"], case.get("tools"), case["text"]
    try:
        expected = module.parse_response(text, prefix=prefix, tools=tools)
    except ValueError:
        for pieces in chunkings(text, 0).values():
            with pytest.raises(ValueError):
                run_stream(module, prefix, tools, pieces)
        return
    for name, pieces in chunkings(text, len(case.get("name", ""))).items():
        stream, batches = run_stream(module, prefix, tools, pieces, "stop")
        check_stream(stream, batches, expected)


def test_every_source_kind_and_the_reasoning_key():
    sample = json.loads((ROOT / "samples" / "qwen3.json").read_text())
    expected = _module("qwen3").parse_response(sample["text"], prefix=sample["prefix"])
    template = json.loads((ROOT / "templates" / "qwen3.json").read_text())
    for source in ("qwen3", template, _module("qwen3")):
        stream, batches = run_stream(source, sample["prefix"], None, list(sample["text"]))
        check_stream(stream, batches, expected)
    stream, batches = run_stream(
        "qwen3", sample["prefix"], None, [sample["text"]], reasoning_key="reasoning"
    )
    client = check_stream(stream, batches, expected, reasoning_key="reasoning")
    assert client["reasoning"] == expected["reasoning_content"]
    ids = iter(["a", "b", "c"])
    stream, batches = run_stream(
        "qwen3", sample["prefix"], None, [sample["text"]], call_id=lambda: next(ids)
    )
    assert [f["id"] for b in batches for d in b for f in d.get("tool_calls", []) if "id" in f] == [
        "a"
    ]


# --- generated arguments ------------------------------------------------------------------------

_text = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12
) | st.sampled_from(["", '"', "\\", "\n", "\u2028", "😀", "a\\u0041", "<tool"])
_scalar = (
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(allow_nan=False) | _text
)
_json = st.recursive(
    _scalar,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=12,
)
_arguments = st.dictionaries(_text, _json, max_size=5)
_spelling = st.sampled_from(
    [
        {},
        {"separators": (",", ":")},
        {"ensure_ascii": False},
        {"indent": 2},
        {"indent": "\t", "ensure_ascii": False},
    ]
)


def _pieces(data, text: str) -> list[str]:
    cuts = sorted(data.draw(st.sets(st.integers(0, len(text)), max_size=12)))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]


def _parse_or_skip(module, text, tools=None):
    try:
        return module.parse_response(text, prefix="", tools=tools)
    except ValueError:  # a generated string that holds the region's close delimiter
        assume(False)


def _safe_name(name: str) -> str:
    return "".join(c for c in name if c.isalnum()) or "f"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), arguments=_arguments, spelling=_spelling, name=_text)
def test_generated_arguments_stream_exactly(data, arguments, spelling, name):
    """qwen3 ({content.name}/{content.arguments}): any arguments, any JSON spelling, any chunking."""
    name = _safe_name(name)
    body = json.dumps({"name": name, "arguments": arguments}, **spelling)
    text = f"Sure.\n<tool_call>\n{body}\n</tool_call><|im_end|>"
    module = _module("qwen3")
    expected = _parse_or_skip(module, text)
    stream, batches = run_stream(module, "", None, _pieces(data, text))
    check_stream(stream, batches, expected)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), calls=st.lists(_arguments, min_size=1, max_size=3), spelling=_spelling)
def test_generated_calls_of_one_array_stream_in_order(data, calls, spelling):
    """mistral (transform_each over one array): several calls, each contiguous, dense indices."""
    body = json.dumps([{"name": f"f{i}", "arguments": a} for i, a in enumerate(calls)], **spelling)
    text = f"[TOOL_CALLS]{body}</s>"
    module = _module("mistral")
    expected = _parse_or_skip(module, text)
    stream, batches = run_stream(module, "", None, _pieces(data, text))
    check_stream(stream, batches, expected)


_DIALECT_QUOTES = {"gemma4": '<|"|>', "functiongemma": "<escape>"}
_DIALECT_CALLS = {"gemma4": ("<|tool_call>call:", "<tool_call|>"), "functiongemma": ("<start_function_call>call:", "<end_function_call>")}  # fmt: skip


def _dialect_spelling(value, quote: str, draw) -> str:
    """`value` as Gemma writes it: bare keys where they are words, strings in custom quotes or
    standard ones (drawn), whitespace drawn around keys and separators."""
    space = lambda: draw(st.sampled_from(["", "", " ", "\n "]))  # noqa: E731
    if isinstance(value, dict):
        members = []
        for key, member in value.items():
            bare = regex.fullmatch(r"\w+", key) is not None and draw(st.booleans())
            spelled = key if bare else _dialect_spelling(key, quote, draw)
            members.append(
                space() + spelled + space() + ":" + space() + _dialect_spelling(member, quote, draw)
            )
        return "{" + ",".join(members) + space() + "}"
    if isinstance(value, list):
        return (
            "[" + ",".join(space() + _dialect_spelling(item, quote, draw) for item in value) + "]"
        )
    if isinstance(value, str) and quote not in value and draw(st.booleans()):
        return quote + value + quote
    return json.dumps(value)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), family=st.sampled_from(sorted(_DIALECT_QUOTES)), arguments=_arguments)
def test_generated_dialect_arguments_stream_exactly(data, family, arguments):
    """gemma4 and functiongemma (json dialects: bare keys, custom-quoted strings): any arguments,
    spelled as the models spell them, any chunking."""
    body = _dialect_spelling(arguments, _DIALECT_QUOTES[family], data.draw)
    head, close = _DIALECT_CALLS[family]
    text = f"{head}get_weather{body}{close}"
    module = _module(family)
    expected = _parse_or_skip(module, text)
    pieces = _pieces(data, text)
    stream, batches = run_stream(module, "", None, pieces, call_id=_numbered())
    check_stream(stream, batches, expected)
    # Plain chunks taken unread (inside a standard or custom-quoted string, a key's or a
    # value's) give the deltas of the stream that reads every chunk.
    with pytest.MonkeyPatch.context() as patch:
        _without_shortcut(patch)
        assert run_stream(module, "", None, pieces, call_id=_numbered())[1] == batches


def test_a_custom_quote_inside_a_standard_string_sends_the_call_from_its_final_value():
    """`"v<escape>, 1, <escape>w"` is three values to the rewrite (the custom quotes pair up
    across the standard string), which a reader of the standard string cannot know before the
    second quote: the call goes out whole from there, also when the quote arrives within a run of
    plain characters (which otherwise go out unread)."""
    text = '<start_function_call>call:f{a: ["v<escape>, 1, <escape>w"]}<end_function_call>'
    module = _module("functiongemma")
    expected = module.parse_response(text, prefix="")
    assert expected["tool_calls"][0]["function"]["arguments"] == {"a": ["v", 1, "w"]}
    head = text.index("v<")
    for pieces in ([text[:head], text[head : head + 23], text[head + 23 :]], list(text)):
        stream, batches = run_stream(module, "", None, pieces)
        check_stream(stream, batches, expected)


_SCHEMA_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {
                    "n": {"type": "integer"},
                    "flag": {"type": "boolean"},
                    "items": {"type": "number"},
                    "s": {"type": "string"},
                },
            },
        },
    }
]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    n=st.sampled_from(["5", "5.0", "x", 7, "1e3"]),
    flag=st.sampled_from(["true", "0", "maybe", True]),
    items=st.lists(st.sampled_from(["1.5", "2", "y"]), max_size=3),
    s=_text,
)
def test_typed_members_are_sent_as_coerced(data, n, flag, items, s):
    """With tools=, a member whose schema can retype it is held until complete, then sent coerced
    (the message's value); an untyped one streams."""
    arguments = {"s": s, "n": n, "flag": flag, "items": items}
    text = "<tool_call>" + json.dumps({"name": "f", "arguments": arguments}) + "</tool_call>"
    module = _module("qwen3")
    expected = module.parse_response(text, prefix="", tools=_SCHEMA_TOOLS)
    stream, batches = run_stream(module, "", _SCHEMA_TOOLS, _pieces(data, text))
    check_stream(stream, batches, expected)


def test_repeated_keys():
    """json.loads keeps a repeated key's first position and last value. Inside the arguments the
    stream writes both members as they come (canonically spelled), so the client's json.loads
    gives the message; a repeated `arguments` key after streaming began is a divergence, flagged."""
    module = _module("qwen3")
    text = '<tool_call>{"name": "f", "arguments": {"a": "x", "b": 1, "a": "y"}}</tool_call>'
    expected = module.parse_response(text, prefix="")
    stream, batches = run_stream(module, "", None, list(text))
    sent = "".join(
        f["function"].get("arguments", "")
        for b in batches
        for d in b
        for f in d.get("tool_calls", [])
    )
    assert sent == '{"a": "x", "b": 1, "a": "y"}'
    assert (
        json.loads(sent) == expected["tool_calls"][0]["function"]["arguments"] == {"a": "y", "b": 1}
    )
    assert stream.diverged == []

    text = '<tool_call>{"name": "f", "arguments": {"a": 1}, "arguments": {"b": 2}}</tool_call>'
    stream, batches = run_stream(module, "", None, list(text))
    assert stream.message == module.parse_response(text, prefix="")
    assert stream.diverged == [0]  # documented: the only case the client's call differs
    # In one feed the repeat is read before anything of the call is sent: it goes out whole.
    stream, batches = run_stream(module, "", None, [text])
    check_stream(stream, batches, module.parse_response(text, prefix=""))


# --- how early arguments go out -----------------------------------------------------------------

# How early each built-in family's first call streams its arguments, for its bundled sample fed
# one character at a time: "json", the whole argument text is out before the feed that closes the
# region; "inline", all of it but the closing "}" (the end of the body decides it); "close", none of
# it before that feed. The reason is the format's.
HOW_EARLY = {
    **{family: ("json", "a JSON body, named in the JSON") for family in (
        "cohere_command_a", "ernie45", "granite3", "granite32", "granite4", "hermes", "hunyuan",
        "granite_20b_fc", "internlm", "jamba", "mistral", "nemotron_nano_v2", "phi4_mini", "qwen3",
        "qwen3_thinking_2507", "smollm3")},
    **{family: ("json", "a JSON body, named by a capture of the open (region_open's captures)")
       for family in ("deepseek_r1", "deepseek_v3", "deepseek_v31", "functionary_v31", "kimi_k2", "gpt_oss")},
    **{family: ("inline", "xml-inline: each key once its tag's head matched, string values as they arrive")
       for family in ("deepseek_v32", "deepseek_v4", "glm45", "glm47", "minimax_m2", "qwen3_coder", "seed_oss", "step3")},
    **{family: ("json", "python-call-list: each key at its `=`, strings as they arrive, `}` at the call's `)`")
       for family in ("lfm2", "llama3_pythonic", "llama4_pythonic")},
    "functiongemma": ("json", "a json dialect (unquoted_keys, <escape> strings), rewritten as it arrives"),
    "gemma4": ("json", 'a json dialect (unquoted_keys, <|"|> strings), rewritten as it arrives'),
    "kimi_vl": ("none", "no tool calls in the format: reasoning and content only"),
}  # fmt: skip
STREAMING = {family for family, (kind, _) in HOW_EARLY.items() if kind in ("json", "inline")}


def test_how_early_covers_every_family():
    assert sorted(HOW_EARLY) == FAMILIES


def _arguments_timeline(family: str) -> tuple[str, int, int, int]:
    """For the family's bundled sample fed one character at a time: (the first call's json.dumps
    arguments, how much of it went out before the feed that closes its region, the raw offset
    after which its first non-empty arguments fragment went out, the raw offset after which the
    region closed)."""
    sample = json.loads((ROOT / "samples" / f"{family}.json").read_text())
    module = _module(family)
    parser = module.ResponseParser(sample["prefix"], tools=sample.get("tools"))
    stream = DeltaStream(module, sample["prefix"], tools=sample.get("tools"))
    sent, before_close, first, closed = "", None, None, None
    for offset, ch in enumerate(sample["text"], 1):
        events = parser.feed(ch)
        if closed is None and any(
            e["type"] == "region_close" and e["field"] == "tool_calls" for e in events
        ):
            before_close, closed = sent, offset  # what was sent before the feed that closes it
        for delta in stream.feed(ch):
            for f in delta.get("tool_calls", []):
                if f["index"] == 0 and f["function"].get("arguments"):
                    sent += f["function"]["arguments"]
                    first = offset if first is None else first
    length = len(sample["text"]) + 1
    for delta in stream.finish():
        for f in delta.get("tool_calls", []):
            if f["index"] == 0 and f["function"].get("arguments"):
                sent += f["function"]["arguments"]
                first = length if first is None else first
    calls = openai_view(stream.message).get("tool_calls") or []
    target = json.dumps(calls[0]["function"]["arguments"])
    assert sent == target
    if closed is None:  # closed by finalize
        before_close, closed = sent, length
    return target, len(before_close), first, closed


@pytest.mark.parametrize("family", FAMILIES)
def test_how_early_arguments_stream(family):
    kind, reason = HOW_EARLY[family]
    if kind == "none":
        assert (
            "tool_calls"
            not in json.loads((ROOT / "templates" / f"{family}.json").read_text())["fields"]
        )
        return
    target, before, first, closed = _arguments_timeline(family)
    if kind == "json":
        assert before == len(target) and first < closed, (before, first, closed)
    elif kind == "inline":
        assert target.endswith("}") and before == len(target) - 1 and first < closed, (
            before,
            first,
            closed,
        )
    else:
        assert before == 0 and first == closed, (before, first, closed)


@pytest.mark.parametrize("family", sorted(STREAMING))
def test_streaming_families_send_arguments_before_the_body_ends(family):
    """The first call's arguments are on the wire while the model is still writing them: at the
    middle of the body's argument text, the client already holds a non-empty prefix."""
    sample = json.loads((ROOT / "samples" / f"{family}.json").read_text())
    module = _module(family)
    expected = module.parse_response(
        sample["text"], prefix=sample["prefix"], tools=sample.get("tools")
    )
    call = openai_view(expected)["tool_calls"][0]
    target = json.dumps(call["function"]["arguments"])
    stream = DeltaStream(module, sample["prefix"], tools=sample.get("tools"))
    sent = ""
    text = sample["text"]
    # Feed until the last character of the first argument string value in the text.
    values = [v for v in call["function"]["arguments"].values() if isinstance(v, str) and v]
    assert values, "the sample's first call has a string argument"
    parser = module.ResponseParser(sample["prefix"], tools=sample.get("tools"))
    opened = next(
        offset
        for offset, ch in enumerate(text, 1)
        if any(e["type"] == "region_open" and e["field"] == "tool_calls" for e in parser.feed(ch))
    )
    spelled = json.dumps(values[-1])[1:-1]
    stop = text.index(spelled, opened) + len(spelled)
    for ch in text[:stop]:
        for delta in stream.feed(ch):
            for f in delta.get("tool_calls", []):
                if f["index"] == 0:
                    sent += f["function"].get("arguments", "")
    assert sent and target.startswith(sent) and len(sent) < len(target), (sent, target)


# --- the JSON reader ----------------------------------------------------------------------------


def _read(pieces):
    sink = SpellingSink()
    reader = sink.reader = JsonReader(sink)
    for piece in pieces:
        reader.feed(piece)
    reader.finish()
    return sink


_near_json = st.one_of(
    _json.map(json.dumps),
    st.text(alphabet='{}[]",:0123456789.eE+- \\ntrufalsNIiy\t\x01u', max_size=20),
    _json.map(json.dumps).map(lambda s: s[: len(s) // 2]),
    st.sampled_from(
        ["-Infinity", "NaN", "01", "1.", '"\\ud83d\\ude00"', '"\\ud83d"', '"\\u00e9\\/"', "[1,]",
         '{"a":1,}', '{"a" 1}', "1 2", '"\x01"', "-", "[]", "{}", " 3 ", "1e5", '"\\x"', "tru"]
    ),
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(data=st.data(), text=_near_json)
def test_reader_accepts_what_json_loads_accepts_and_spells_json_dumps(data, text):
    try:
        value = json.loads(text)
    except ValueError:
        value = ValueError
    sink = _read(_pieces(data, text))
    if value is ValueError:
        assert sink.failed, text
    else:
        assert not sink.failed, text
        spelled = sink.text
        assert json.loads(spelled) == value or spelled == json.dumps(value)
        # No repeated keys: exactly json.dumps's text.
        if _no_repeats(text):
            assert spelled == json.dumps(value)


def _no_repeats(text: str) -> bool:
    repeated = False

    def pairs(items):
        nonlocal repeated
        keys = [k for k, _ in items]
        repeated |= len(keys) != len(set(keys))
        return dict(items)

    json.loads(text, object_pairs_hook=pairs)
    return not repeated


def test_reader_is_linear_time():
    from test_linear_time import BOUND

    def texts(n):
        body = json.dumps(
            {"s": "x\\u00e9" * n, "many": [{"k": i, "v": [True, None, 1.5]} for i in range(n // 8)]}
        )
        nested = "[" * (n // 4) + "]" * (n // 4)
        return [[body[i : i + 3] for i in range(0, len(body), 3)], [nested]]

    def reader():
        sink = SpellingSink()
        sink.reader = JsonReader(sink)
        return sink.reader

    ratio, how = reader_growth(reader, texts)
    assert ratio < BOUND, how


# --- Responses API events ----------------------------------------------------------------------


@pytest.mark.parametrize("family", ["qwen3", "mistral", "gpt_oss", "glm45"])
def test_responses_events_are_valid_and_rebuild_the_message(family):
    real_openai()
    from openai.types.responses import ResponseStreamEvent
    from pydantic import TypeAdapter

    adapter = TypeAdapter(ResponseStreamEvent)
    sample = json.loads((ROOT / "samples" / f"{family}.json").read_text())
    stream = DeltaStream(family, sample["prefix"], tools=sample.get("tools"))
    responses = ResponsesEvents()
    events = []
    for ch in sample["text"]:
        events += responses.feed(stream.feed(ch))
    events += responses.feed(stream.finish()) + responses.close()
    for event in events:
        adapter.validate_python(event)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    message = openai_view(stream.message)
    text = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    reasoning = "".join(e["delta"] for e in events if e["type"] == "response.reasoning_text.delta")
    assert text == message.get("content", "")
    assert reasoning == message.get("reasoning_content", "")
    done = [e for e in events if e["type"] == "response.function_call_arguments.done"]
    calls = message.get("tool_calls") or []
    assert [json.loads(e["arguments"]) for e in done] == [c["function"]["arguments"] for c in calls]
    items = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert [i["name"] for i in items if i["type"] == "function_call"] == [
        c["function"]["name"] for c in calls
    ]
    added = [e["output_index"] for e in events if e["type"] == "response.output_item.added"]
    assert added == list(range(len(added))) == [i for i, _ in enumerate(items)]


# --- xml-inline and kv-lines arguments ----------------------------------------------------------

# How each xml-inline family writes a call: (the sample's text before its first call starts, the
# call's opening, one parameter, the call's closing, what ends the output). The sample's lead keeps
# the prefix's state (reasoning closed) as the bundled sample has it.
XML_FORMATS = {
    "qwen3_coder": ("<tool_call>", "<tool_call>\n<function={name}>\n", "<parameter={key}>\n{value}\n</parameter>\n",
                    "</function>\n</tool_call>", "<|im_end|>"),
    "seed_oss": ("<seed:tool_call>", "<seed:tool_call>\n<function={name}>\n", "<parameter={key}>\n{value}\n</parameter>\n",
                 "</function>\n</seed:tool_call>", "<seed:eos>"),
    "minimax_m2": ("<minimax:tool_call>", '<minimax:tool_call>\n<invoke name="{name}">\n',
                   '<parameter name="{key}">{value}</parameter>\n', "</invoke>\n</minimax:tool_call>", "[e~["),
    "glm45": ("<tool_call>", "<tool_call>{name}\n", "<arg_key>{key}</arg_key>\n<arg_value>{value}</arg_value>\n",
              "</tool_call>", "<|observation|>"),
    "step3": ("<｜tool_calls_begin｜>", '<｜tool_calls_begin｜>\n<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="{name}">',
              '<steptml:parameter name="{key}">{value}</steptml:parameter>', "</steptml:invoke><｜tool_call_end｜>\n<｜tool_calls_end｜>",
              "<|EOT|>"),
    "deepseek_v32": ("<｜DSML｜function_calls>", '<｜DSML｜function_calls>\n<｜DSML｜invoke name="{name}">\n',
                     '<｜DSML｜parameter name="{key}" string="true">{value}</｜DSML｜parameter>\n',
                     "</｜DSML｜invoke>\n</｜DSML｜function_calls>", "<｜end▁of▁sentence｜>"),
}  # fmt: skip

# "<parameter=X>" opens another parameter inside a value, under a key `_xml_key` never draws, so
# the body's keys differ from the arguments' and the example is skipped; with a drawn key ("x") it
# repeated that key, whose streamed text keeps both members as written (DeltaStream._finish_call:
# the client's json.loads gives the message's value, not json.dumps's text).
_xml_value = st.lists(
    st.sampled_from(
        ["a", "Z", " ", "\n", "\t", "<", ">", "/", "=", '"', "'", "\\", "é", "😀", "\u2028", "</parameter",
         "\n</param", "</arg_value", "<parameter=X>", "</steptml:parameter", "</｜DSML｜parameter", "  \n"]
    ),
    max_size=8,
).map("".join)  # fmt: skip
_xml_key = st.from_regex(r"[a-z_]{1,5}", fullmatch=True)


def _xml_call(family: str, name: str, arguments: dict) -> tuple[str, str]:
    """(prefix, text) of `family`'s sample with its calls replaced by one call of `arguments`."""
    sample = json.loads((ROOT / "samples" / f"{family}.json").read_text())
    lead, opening, parameter, closing, end = XML_FORMATS[family]
    text = sample["text"]
    body = "".join(parameter.format(key=k, value=v) for k, v in arguments.items())
    return (
        sample["prefix"],
        text[: text.index(lead)] + opening.format(name=name) + body + closing + end,
    )


def _arguments_of(message: dict) -> list[dict]:
    return [c["function"]["arguments"] for c in openai_view(message).get("tool_calls") or []]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    family=st.sampled_from(sorted(XML_FORMATS)),
    arguments=st.dictionaries(_xml_key, _xml_value, max_size=4),
)
def test_generated_xml_arguments_stream_exactly(data, family, arguments):
    """Any string values (close-tag fragments, newlines, spaces, escapes), any chunking: the
    client's text is json.dumps of the message's arguments, and it streams."""
    prefix, text = _xml_call(family, "f", arguments)
    module = _module(family)
    expected = _parse_or_skip_prefix(module, text, prefix)
    # Only bodies whose every tag closed on its own key (a value that holds a close tag or the
    # region's close makes another body; test_an_unclosed_parameter_diverges covers the rest).
    assume([list(a) for a in _arguments_of(expected)] == [list(arguments)])
    stream, batches = run_stream(module, prefix, None, _pieces(data, text))
    check_stream(stream, batches, expected)


# Tags whose halves make a lone run's `advance` stop for each reason: a state that reports a match
# end and goes on (`>` then an optional `\n\n`), a char that may begin a match inside a run
# (`<` in a key), a char that settles the run (qwen3_coder's `>\n`), and TAIL's LEAD.
ADVANCE_TAGS = {
    r"<p (?P<key>\w+)>(?:\n\n)?(?P<value>.*?)</p>": ["<p k>\n\nv</p>", "<p é>\nx</p>", "<p k>"],
    r"<(?P<key>[a-z<]+)>(?P<value>.*?)\n?(?:</x>|\Z)": ["<a<b>v\n</x>", "<ab<", "<<a>\n"],
    r"<parameter=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?(?:</parameter>|(?=<parameter=)|\Z)": [
        "<parameter=a>\nv\n</parameter>",
        "<parameter=a<parameter=b>\n",
    ],
}


def _stepped(runs, text: str, advancing: bool):
    """Where a half's runs decide over `text`, and the runs then (or at its end): char by char as
    `InlineCalls._xml_feed` steps them, with or without `_Runs.advance` before each char."""
    position, prev = 0, ""
    while position < len(text):
        if advancing and len(runs.runs) == 1:
            reached = runs.advance(text, position, len(text))
            if reached > position:
                position, prev = reached, text[reached - 1]
                if position == len(text):
                    break
        ch = text[position]
        runs.step(position, ch, prev)
        prev, position = ch, position + 1
        if runs.match is not None:
            break
    return position, runs.runs, runs.match


@pytest.mark.parametrize("pattern", list(ADVANCE_TAGS))
def test_a_lone_tag_run_advances_as_its_steps_would(pattern):
    """`_Runs.advance` crosses a lone run over the chars where a step would only change its state:
    the runs, and where and what they decide, are those of stepping every char."""
    import types

    from test_spelled_tag import _texts, module_of

    from chatparse.serving.inline_calls import _Runs, tag_halves

    head, tail, _, begins = tag_halves(types.SimpleNamespace(**module_of(pattern)), "tool_calls")
    texts = _texts(ADVANCE_TAGS[pattern], seed=len(pattern), count=1500)
    advanced = 0
    for text in texts:
        for dfa, where in ((head, head.candidates), (tail, begins)):
            stepped = _stepped(_Runs(dfa, where), text, advancing=False)
            runs = _Runs(dfa, where)
            assert _stepped(runs, text, advancing=True) == stepped, (text, dfa.pattern)
            advanced += stepped[2] is not None
    assert advanced > 500


def test_a_value_is_crossed_up_to_where_its_tail_may_begin(monkeypatch):
    """qwen3_coder's TAIL `\\n?(?:</parameter>|(?=<parameter=)|\\Z)` matches empty only at the
    end of the text: its module declares the chars its other matches begin with, and the serving
    reader steps a value's runs only from those chars on (a long value without them costs one
    search). A TAIL that may match empty anywhere declares none. Written from the patterns."""
    import chatparse
    from chatparse.serving import inline_calls

    starts = _module("qwen3_coder").TAG_HALVES["tool_calls"][3]
    assert starts is not None
    assert all(ch in starts for ch in "\n<") and not any(ch in starts for ch in "a /=>")
    template = json.loads((ROOT / "templates" / "qwen3_coder.json").read_text())
    tool_calls = template["fields"]["tool_calls"]
    tool_calls["content_args"]["tag_pattern"] = r"<parameter=(?P<key>[^>]+)>(?P<value>.*?)(?:x)?"
    assert chatparse.load_module(template).TAG_HALVES["tool_calls"][3] is None

    steps = [0]
    step = inline_calls._Runs.step

    def counted(self, position, ch, prev):
        steps[0] += 1
        return step(self, position, ch, prev)

    monkeypatch.setattr(inline_calls._Runs, "step", counted)
    value = "the quick brown fox, " * 150  # 3,150 chars, no "\n" or "<"
    prefix, text = _xml_call("qwen3_coder", "f", {"code": value})
    module = _module("qwen3_coder")
    expected = module.parse_response(text, prefix=prefix)
    stream, batches = run_stream(
        module, prefix, None, [text[i : i + 4] for i in range(0, len(text), 4)]
    )
    check_stream(stream, batches, expected)
    assert steps[0] < 200  # the tags' chars, not the value's


def _parse_or_skip_prefix(module, text, prefix, tools=None):
    try:
        return module.parse_response(text, prefix=prefix, tools=tools)
    except ValueError:
        assume(False)


_XML_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {
                    "n": {"type": "integer"},
                    "flag": {"type": "boolean"},
                    "s": {"type": "string"},
                    "o": {"type": "object"},
                    "u": {"type": ["string", "null"]},
                },
            },
        },
    }
]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    family=st.sampled_from(["qwen3_coder", "minimax_m2", "glm45"]),
    values=st.fixed_dictionaries(
        {},
        optional={
            key: st.sampled_from(
                ["5", "5.0", "x", " 7 ", "true", "0", "null", '{"a": 1}', "[1]", "", "1e3"]
            )
            for key in ("n", "flag", "s", "o", "u", "other")
        },
    ),
)
def test_xml_typed_values_are_sent_as_coerced(data, family, values):
    """With tools=, a value the schema can retype waits for its tag, then goes out coerced; a
    string-only or unknown key streams as text."""
    prefix, text = _xml_call(family, "f", values)
    module = _module(family)
    expected = _parse_or_skip_prefix(module, text, prefix, _XML_TOOLS)
    assume([list(a) for a in _arguments_of(expected)] == [list(values)])
    stream, batches = run_stream(module, prefix, _XML_TOOLS, _pieces(data, text))
    check_stream(stream, batches, expected)


def test_xml_repeated_key_and_unclosed_parameter():
    """A repeated key is written twice (json.loads keeps its first position and last value, as the
    message does); a parameter whose tag never closes before the region does is left out of the
    message, after its key and value went out: the call is flagged in `diverged`."""
    module = _module("qwen3_coder")
    prefix, text = _xml_call("qwen3_coder", "f", {"a": "x", "b": "1"})
    text = text.replace("</function>", "<parameter=a>\ny\n</parameter>\n</function>")
    expected = module.parse_response(text, prefix=prefix)
    for pieces in (list(text), [text]):
        stream, batches = run_stream(module, prefix, None, pieces)
        sent = "".join(
            f["function"].get("arguments", "")
            for b in batches
            for d in b
            for f in d.get("tool_calls", [])
        )
        assert sent == '{"a": "x", "b": "1", "a": "y"}'
        assert json.loads(sent) == _arguments_of(expected)[0] == {"a": "y", "b": "1"}
        assert stream.diverged == [] and stream.message == expected

    # minimax_m2's value ends at its close tag or at the next tag's head, as vLLM's, not at the
    # end of the body: a last parameter left open is not read.
    minimax = _module("minimax_m2")
    prefix, text = _xml_call("minimax_m2", "f", {"a": "x"})
    text = text.replace("</invoke>", '<parameter name="b">lost</invoke>')
    expected = minimax.parse_response(text, prefix=prefix)
    assert _arguments_of(expected) == [{"a": "x"}]
    stream, batches = run_stream(minimax, prefix, None, list(text))
    assert stream.message == expected and stream.diverged == [0]


@pytest.mark.parametrize("family", ["qwen3_coder", "seed_oss", "minimax_m2"])
def test_xml_unclosed_parameter_ends_at_the_next_one_and_streams(family):
    """A parameter left unclosed ends where the next parameter's tag starts (the tag pattern's
    final look-ahead, `(?=<parameter=)`, as vLLM's): both values reach the message, and the
    arguments stream as they arrive, each key as its head is read, for every chunking."""
    module = _module(family)
    prefix, text = _xml_call(family, "f", {"a": "first", "b": "second"})
    close = "</parameter>\n" if family != "minimax_m2" else "</parameter>"
    cut = text.index(close)  # the first parameter's close tag, dropped
    text = text[:cut] + text[cut + len(close) :]
    expected = module.parse_response(text, prefix=prefix)
    assert _arguments_of(expected) == [{"a": "first", "b": "second"}]
    for pieces in (list(text), [text], [text[i : i + 3] for i in range(0, len(text), 3)]):
        stream, batches = run_stream(module, prefix, None, pieces)
        check_stream(stream, batches, expected)
        assert stream.diverged == []
    sent, before_b = "", None
    stream = DeltaStream(module, prefix)
    for offset, ch in enumerate(text):
        for delta in stream.feed(ch):
            for call in delta.get("tool_calls", []):
                sent += call["function"].get("arguments", "")
        if before_b is None and "<parameter" in text[offset - 10 : offset + 1] and offset > cut:
            before_b = sent
    assert before_b is not None and before_b.startswith('{"a": "first')


def _kv_template(args: dict) -> dict:
    template = json.loads((ROOT / "templates" / "qwen3_coder.json").read_text())
    template["fields"]["tool_calls"].update(
        {
            "open_pattern": r"\s*<call name=(?P<name>\w+)>",
            "close_pattern": r"</call>",
            "content": "kv-lines",
            "content_args": args,
        }
    )
    template["fields"]["tool_calls"].pop("close", None)
    return template


_KV_ARGS = [
    {},
    {"kv_sep": "=", "line_sep": ";"},
    {"kv_sep": ": ", "strip": False},
    {"kv_sep": "::", "line_sep": "\r\n"},
    {"value_parser": {"name": "text"}},
]
_kv_modules: dict[int, object] = {}


def _kv_module(index: int):
    if index not in _kv_modules:
        from chatparse import load_module

        _kv_modules[index] = load_module(_kv_template(_KV_ARGS[index]))
    return _kv_modules[index]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    index=st.integers(0, len(_KV_ARGS) - 1),
    arguments=st.dictionaries(
        _xml_key,
        st.lists(
            st.sampled_from(["a", " ", "\t", ":", "=", ";", "\r", "é", "x y"]), max_size=6
        ).map("".join),
        max_size=4,
    ),
    junk=st.lists(st.sampled_from(["", "  ", "no separator", "\t"]), max_size=2),
    tools=st.booleans(),
)
def test_generated_kv_lines_arguments_stream_exactly(data, index, arguments, junk, tools):
    """kv-lines (a template of this test: no built-in uses it for calls), several separator and
    strip settings: the same guarantees as the other bodies."""
    args = _KV_ARGS[index]
    line_sep, kv_sep = args.get("line_sep", "\n"), args.get("kv_sep", ":")
    lines = [f" {k}{kv_sep}{v}" for k, v in arguments.items()] + junk
    text = f"Sure.<call name=f>{line_sep}{line_sep.join(lines)}</call><|im_end|>"
    module = _kv_module(index)
    schema = _XML_TOOLS if tools else None
    expected = _parse_or_skip_prefix(module, text, "", schema)
    calls = _arguments_of(expected)
    assume(
        len(calls) == 1
        and len(calls[0])
        == len([k for k in arguments if (k if not args.get("strip", True) else k.strip())])
    )
    stream, batches = run_stream(module, "", schema, _pieces(data, text))
    check_stream(stream, batches, expected)
    assert stream._inline is not None  # it streamed (not whole at close)


def test_inline_readers_are_linear_time():
    """xml-inline (a held `\\n?</parameter>` and a held `\\s*</parameter>`) and kv-lines, on long
    values, long whitespace runs (held until a non-space char or the tag's end decides them),
    long lines without a separator and many members, fed 3 chars at a time."""
    from test_linear_time import BOUND, growth

    from chatparse.serving.inline_calls import InlineCalls, inline_plan_for

    def spec(family):
        return json.loads((ROOT / "templates" / f"{family}.json").read_text())["fields"][
            "tool_calls"
        ]

    plans = {
        "qwen3_coder": inline_plan_for(spec("qwen3_coder"), _module("qwen3_coder")),
        "minimax_m2": inline_plan_for(spec("minimax_m2"), _module("minimax_m2")),
        "kv": inline_plan_for(_kv_template({})["fields"]["tool_calls"], None),
    }
    assert all(plans.values())

    def body(kind, n):
        value = "x<" * n + " " * (4 * n) + "\n" * n + "y"
        if kind == "qwen3_coder":
            return f"<parameter=a>\n{value}\n</parameter>" + "<parameter=k>\nv\n</parameter>\n" * (
                n // 4
            )
        if kind == "minimax_m2":
            return (
                f'<parameter name="a">{value}  </parameter>'
                + '<parameter name="k"> v </parameter>' * (n // 4)
            )
        return "junk " * n + "\n" + "a: " + "x " * n + " " * (4 * n) + "y\n" + "k: v\n" * (n // 4)

    def runner(n):
        texts = {kind: body(kind, n) for kind in plans}
        pieces = {kind: [t[i : i + 3] for i in range(0, len(t), 3)] for kind, t in texts.items()}

        def run():
            for kind, plan in plans.items():
                reader = InlineCalls(
                    plan, "f", lambda name, key: False, lambda name, key, value: value
                )
                for piece in pieces[kind]:
                    reader.feed(piece)
                reader.finish()
                assert reader.slot.complete

        return run

    ratio, how = growth(runner)
    assert ratio < BOUND, how


def test_xml_value_parser_and_merge_duplicates():
    """A `value_parser` value waits for its tag and goes out parsed (then coerced); with
    `merge_duplicates` a repeat turns a value into a list, so those calls go out whole."""
    from chatparse import load_module
    from chatparse.serving.inline_calls import inline_plan_for

    template = json.loads((ROOT / "templates" / "qwen3_coder.json").read_text())
    args = template["fields"]["tool_calls"]["content_args"]
    args["value_parser"] = {"name": "json", "args": {"allow_non_json": True}}
    module = load_module(template)
    body = "<parameter=a>\n[1, 2]\n</parameter>\n<parameter=b>\n text \n</parameter>\n<parameter=n>\n7\n</parameter>\n"
    text = f"Sure.<tool_call>\n<function=f>\n{body}</function>\n</tool_call><|im_end|>"
    for tools in (None, _XML_TOOLS):
        expected = module.parse_response(text, prefix="<|im_start|>assistant\n", tools=tools)
        assert _arguments_of(expected)[0]["a"] == [1, 2]
        for pieces in chunkings(text, 3).values():
            stream, batches = run_stream(module, "<|im_start|>assistant\n", tools, pieces)
            check_stream(stream, batches, expected)
    spec = dict(template["fields"]["tool_calls"], content_args={**args, "merge_duplicates": True})
    assert inline_plan_for(spec, module) is None


# --- the plain-characters shortcut --------------------------------------------------------------


def test_is_plain_ascii_is_the_regex():
    """`is_plain_ascii` (str methods) accepts exactly what PLAIN_ASCII.fullmatch does, and what it
    accepts json.dumps writes as it is."""
    from json.encoder import encode_basestring_ascii

    from chatparse.serving.json_reader import PLAIN_ASCII, is_plain_ascii

    for code in range(0x3000):
        char = chr(code)
        assert is_plain_ascii(char) == (PLAIN_ASCII.fullmatch(char) is not None), hex(code)
        if is_plain_ascii(char):
            assert encode_basestring_ascii(char) == f'"{char}"'
    for text in ("", "ab c", 'a"b', "a\\b", "a\x7fb", "a\tb", "abé", "~!#[]"):
        assert is_plain_ascii(text) == (PLAIN_ASCII.fullmatch(text) is not None), text


def _without_shortcut(monkeypatch):
    monkeypatch.setattr(DeltaStream, "_plain_call", lambda self: None)


def _numbered():
    """Call ids that two runs give alike (the default ones are random)."""
    numbers = iter(range(100))
    return lambda: f"call_{next(numbers)}"


_plainish = st.lists(
    # "\ud800", a lone surrogate, is spelled as an escape that waits for a low one.
    st.sampled_from(["ab", " ", "~#", "word ", '"', "\\", "é", "\n", "😀", "\\u00e9", "\ud800"]),
    max_size=12,
).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    values=st.lists(_plainish, min_size=1, max_size=3),
    typed=st.booleans(),
    name=st.sampled_from(["f", "get_the_weather_now"]),
    key=_plainish.filter(bool),
)
def test_plain_chunks_go_out_as_the_reader_would_send_them(data, values, typed, name, key):
    """A chunk of plain characters inside a string goes out unread (DeltaStream.feed's shortcut):
    in a string argument as it is, in a key, the name or a string outside the arguments sending
    nothing; per feed, the deltas equal those of the stream that reads every chunk, on arguments
    mixing plain runs with quotes, escapes, non-ASCII and typed members, in calls of one region
    and in an array of calls."""
    tools = _SCHEMA_TOOLS if typed else None
    arguments = {"s": values[0], "n": "5", "items": values[1:], key: values[-1]}
    call = {"name": name, "arguments": arguments, "note": values[0]}
    body = json.dumps(call, ensure_ascii=data.draw(st.booleans()))
    array = json.dumps([{"name": name, "arguments": {"s": v, key: v}} for v in values])
    for module, text in (
        (_module("qwen3"), f"<tool_call>\n{body}\n</tool_call><|im_end|>"),
        (_module("mistral"), f"[TOOL_CALLS]{array}</s>"),
    ):
        expected = _parse_or_skip(module, text, tools)
        # Fixed sizes cut after every kind of character (a backslash, a quote, half an escape).
        for pieces in [_pieces(data, text)] + [
            [text[i : i + size] for i in range(0, len(text), size)] for size in (2, 3, 5)
        ]:
            stream, batches = run_stream(module, "", tools, pieces, call_id=_numbered())
            check_stream(stream, batches, expected)
            with pytest.MonkeyPatch.context() as patch:
                _without_shortcut(patch)
                assert run_stream(module, "", tools, pieces, call_id=_numbered())[1] == batches


def test_the_shortcut_is_taken_for_a_long_string_argument(monkeypatch):
    """The measured case (benchmarks' 3,000-character argument in 4-character pieces): most of
    its chunks go out without the JSON reader, and the deltas are the reading stream's."""
    from chatparse.serving.json_calls import JsonCalls

    value = "the quick brown fox jumps over the lazy dog " * 20
    text = '<tool_call>\n{"name": "f", "arguments": {"s": "' + value + '"}}\n</tool_call>'
    pieces = [text[i : i + 4] for i in range(0, len(text), 4)]
    reads = []
    feed = JsonCalls.feed
    monkeypatch.setattr(
        JsonCalls, "feed", lambda self, chunk: (reads.append(chunk), feed(self, chunk))
    )
    stream, batches = run_stream(_module("qwen3"), "", None, pieces, call_id=_numbered())
    check_stream(stream, batches, _module("qwen3").parse_response(text, prefix=""))
    assert len(reads) < 20 < len(pieces)
    _without_shortcut(monkeypatch)
    assert run_stream(_module("qwen3"), "", None, pieces, call_id=_numbered())[1] == batches


_xml_plainish = st.lists(
    st.sampled_from(["ab ", "word", " ", "~#", "\n", "<", "</parameter", "é", '"', "\\", "\n</p"]),
    max_size=10,
).map("".join)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    family=st.sampled_from(sorted(XML_FORMATS)),
    arguments=st.dictionaries(_xml_key, _xml_plainish, min_size=1, max_size=3),
    typed=st.booleans(),
)
def test_xml_plain_chunks_go_out_as_the_reader_would_send_them(data, family, arguments, typed):
    """A chunk of plain characters inside a streamed xml-inline value, with no char its TAIL may
    begin with, goes out unread (InlineCalls.take_plain); per feed, the deltas equal those of the
    stream that reads every chunk, in fixed-size pieces (cut after every kind of char) and random
    ones, with and without tools= typing."""
    tools = _XML_TOOLS if typed else None
    prefix, text = _xml_call(family, "f", arguments)
    module = _module(family)
    expected = _parse_or_skip_prefix(module, text, prefix, tools)
    assume([list(a) for a in _arguments_of(expected)] == [list(arguments)])
    for pieces in [_pieces(data, text)] + [
        [text[i : i + size] for i in range(0, len(text), size)] for size in (2, 3, 5)
    ]:
        stream, batches = run_stream(module, prefix, tools, pieces, call_id=_numbered())
        check_stream(stream, batches, expected)
        with pytest.MonkeyPatch.context() as patch:
            _without_shortcut(patch)
            assert run_stream(module, prefix, tools, pieces, call_id=_numbered())[1] == batches


def test_the_shortcut_is_taken_for_a_long_xml_value(monkeypatch):
    """The measured case for xml-inline (a 3,000-character parameter in 4-character pieces): most
    chunks go out without the tag reader, and the deltas are the reading stream's."""
    from chatparse.serving.inline_calls import InlineCalls

    value = "the quick brown fox jumps over the lazy dog " * 20
    prefix, text = _xml_call("qwen3_coder", "f", {"code": value})
    pieces = [text[i : i + 4] for i in range(0, len(text), 4)]
    reads = []
    feed = InlineCalls.feed
    monkeypatch.setattr(
        InlineCalls, "feed", lambda self, chunk: (reads.append(chunk), feed(self, chunk))
    )
    module = _module("qwen3_coder")
    stream, batches = run_stream(module, prefix, None, pieces, call_id=_numbered())
    check_stream(stream, batches, module.parse_response(text, prefix=prefix))
    assert len(reads) < 30 < len(pieces)
    _without_shortcut(monkeypatch)
    assert run_stream(module, prefix, None, pieces, call_id=_numbered())[1] == batches


def test_a_value_taken_unread_leaves_the_char_before_the_tail_to_its_runs():
    """A TAIL that reads the char before it (`\\b`): after chunks taken unread, the run that
    starts at the next `<` sees the last of them, so the stream sends what the reading stream
    sends (values whose chars before and after a chunk differ in being word chars)."""
    import chatparse

    template = json.loads((ROOT / "templates" / "qwen3_coder.json").read_text())
    template["fields"]["tool_calls"]["content_args"][
        "tag_pattern"
    ] = r"<parameter=(?P<key>[^>]+)>\n(?P<value>.*?)\b\n?</parameter>"
    module = chatparse.load_module(template)
    for value in (" xy", "..word", "a-b", "word.", "x..yz", "ab cd"):
        text = f"<tool_call>\n<function=f>\n<parameter=k>\n{value}</parameter>\n</function>\n</tool_call>"
        expected = module.parse_response(text, prefix="")
        for size in (1, 2, 3):
            pieces = [text[i : i + size] for i in range(0, len(text), size)]
            stream, batches = run_stream(module, "", None, pieces, call_id=_numbered())
            assert stream.message == expected
            with pytest.MonkeyPatch.context() as patch:
                _without_shortcut(patch)
                assert run_stream(module, "", None, pieces, call_id=_numbered())[1] == batches
