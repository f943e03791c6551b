"""serving/reasoning_split.py: an output split into its reasoning and the rest, which SGLang hands to a
tool parser (rest="message": chatparse's tool detector reads it as the whole message) or to the
client (rest="content").

Oracle: `parse_response` of prefix + output (held to transformers 5.25 by the rest of the suite).
For every built-in sample, several chunkings, outputs cut anywhere and random outputs built from a
template's delimiters and its sample's pieces: the reasoning pieces concatenate to the message's
`reasoning_content`; the rest is the same for every chunking; with rest="message" its parse with
`prefix=""` gives the message's other fields; with rest="content" it is the message's content.
"""

from __future__ import annotations

import importlib
import json
import random
from pathlib import Path

import pytest

from chatparse.serving.reasoning_split import ReasoningSplit

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = sorted(path.stem for path in (ROOT / "samples").glob("*.json"))


def _sample(family: str):
    data = json.loads((ROOT / "samples" / f"{family}.json").read_text())
    return importlib.import_module(f"chatparse.generated.{family}"), data


def split(module, prefix: str, pieces: list[str], rest: str = "message") -> tuple[list[str], str]:
    """(the reasoning pieces, the rest) of one run."""
    splitter = ReasoningSplit(module, prefix, rest)
    reasoning, texts = [], []
    for piece in pieces:
        thought, text = splitter.feed(piece)
        reasoning.append(thought)
        texts.append(text)
    thought, text = splitter.finish()
    return [*reasoning, thought], "".join(texts) + text


def _chunkings(text: str) -> list[list[str]]:
    return [[text], list(text)] + [
        [text[i : i + n] for i in range(0, len(text), n)] for n in (3, 7)
    ]


def _lenient(module, prefix, output, tools=None):
    """(the message, whether every region parsed): lenient mode for a cut or random output."""
    parser = module.ResponseParser(prefix, tools=tools, malformed="event")
    events = parser.feed(output)
    message, final = parser.finalize()
    return message, not any(e["type"] == "region_malformed" for e in events + final)


def _without_reasoning(message: dict) -> dict:
    return {key: value for key, value in message.items() if key != "reasoning_content"}


@pytest.mark.parametrize("family", FAMILIES)
def test_reasoning_and_the_rest_give_the_message(family):
    module, sample = _sample(family)
    tools = sample.get("tools")
    message = module.parse_response(sample["text"], prefix=sample["prefix"], tools=tools)
    rests = set()
    for pieces in _chunkings(sample["text"]):
        reasoning, rest = split(module, sample["prefix"], pieces)
        assert "".join(reasoning) == (message.get("reasoning_content") or ""), pieces
        parsed = module.parse_response(rest, prefix="", tools=tools)
        assert _without_reasoning(parsed) == _without_reasoning(message)
        rests.add(rest)
    assert len(rests) == 1  # the same text whatever the chunking
    if message.get("reasoning_content"):
        reasoning, _ = split(module, sample["prefix"], list(sample["text"]))
        assert sum(1 for piece in reasoning if piece) > 3  # it streams, piece by piece


def _literals(template: dict) -> list[str]:
    found: set[str] = set()
    for spec in template["fields"].values():
        for key in ("open", "close"):
            value = spec.get(key)
            found.update([value] if isinstance(value, str) else value or ())
    return sorted(found)


@pytest.mark.parametrize(
    "family", ["qwen3", "qwen3_thinking_2507", "gpt_oss", "deepseek_v4", "kimi_k2", "glm45"]
)
def test_random_outputs(family):
    """Outputs made of the template's literal delimiters, `<think>`, `</think>` and pieces of its
    sample, in any order: reasoning inside content, a close with no open, a `^` open, prompts that
    opened a region. Wherever the reference parses the output, so does the rest."""
    module, sample = _sample(family)
    text, prefix, tools = sample["text"], sample["prefix"], sample.get("tools")
    rng = random.Random(family)
    cuts = sorted(rng.sample(range(1, len(text)), 16))
    alphabet = _literals(module.TEMPLATE) + ["<think>", "</think>", "\n", " ", "hi"]
    alphabet += [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    parsed = 0
    for _ in range(80):
        output = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 8)))
        message, whole = _lenient(module, prefix, output, tools)
        runs = [split(module, prefix, pieces) for pieces in ([output], list(output))]
        assert runs[0][1] == runs[1][1], output
        for reasoning, _ in runs:
            assert "".join(reasoning) == (message.get("reasoning_content") or ""), output
        if whole:
            parsed += 1
            rest = module.parse_response(runs[0][1], prefix="", tools=tools)
            assert _without_reasoning(rest) == _without_reasoning(message), output
    assert parsed > 20


@pytest.mark.parametrize("family", ["qwen3", "qwen3_thinking_2507", "gpt_oss", "deepseek_v4"])
def test_cut_off_outputs(family):
    """Cut anywhere (max_tokens): the reasoning so far is the message's, a cut call never raises,
    and the rest, the same for every chunking, gives the message's other fields."""
    module, sample = _sample(family)
    text, prefix = sample["text"], sample["prefix"]
    for cut in range(0, len(text) + 1, 3):
        output = text[:cut]
        message, whole = _lenient(module, prefix, output)
        runs = [split(module, prefix, pieces) for pieces in ([output], list(output))]
        for reasoning, _ in runs:
            assert "".join(reasoning) == (message.get("reasoning_content") or ""), cut
        assert runs[0][1] == runs[1][1], cut
        if whole:
            rest = module.parse_response(runs[0][1], prefix="")
            assert _without_reasoning(rest) == _without_reasoning(message), cut


def test_the_rest_keeps_every_char_but_the_reasoning_bodies():
    module, _ = _sample("qwen3")
    output = 'Hi <think>a</think> there<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    _, rest = split(module, "", list(output))
    assert rest == 'Hi <think></think> there<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    # The prompt's tail (from its last start anchor on) goes out with the first chunk's rest.
    module, _ = _sample("qwen3_thinking_2507")
    reasoning, rest = split(module, "<|im_start|>assistant\n<think>\n", ["plan</think>Hi."])
    assert (reasoning[0], rest) == ("plan", "<think></think>Hi.")


def test_rest_for_the_client_is_the_content():
    """rest="content" (no tool parser runs): the message's content as DeltaStream streams it, and a
    call's raw text where the call was (no tool parser takes it, and it is not dropped)."""
    module, sample = _sample("kimi_vl")  # reasoning and content, no calls in the format
    message = module.parse_response(sample["text"], prefix=sample["prefix"])
    for pieces in _chunkings(sample["text"]):
        reasoning, rest = split(module, sample["prefix"], pieces, rest="content")
        assert "".join(reasoning) == message["reasoning_content"]
        assert rest == message["content"]
    module, _ = _sample("qwen3")
    output = 'Hi <think>a</think> there <tool_call>{"name": "f", "arguments": {}}</tool_call>'
    message = module.parse_response(output, prefix="")
    assert message["content"] == "Hi\n\nthere"
    _, rest = split(module, "", list(output), rest="content")
    # (qwen3's call opens on `\s*<tool_call>`: the space before it is the call's)
    assert rest == 'Hi\n\nthere <tool_call>{"name": "f", "arguments": {}}</tool_call>'


def test_split_is_linear_time():
    from test_linear_time import BOUND, growth

    module, _ = _sample("qwen3")

    def runner(n):
        output = "<think>" + "r " * n + "</think>" + "c <b>" * n
        output += '<tool_call>{"a": 1}</tool_call>' * (n // 50)
        pieces = [output[i : i + 2] for i in range(0, len(output), 2)]

        def run():
            for rest in ("message", "content"):
                split(module, "", pieces, rest)
                split(module, "", [output], rest)

        return run

    ratio, how = growth(runner)
    assert ratio < BOUND, how
