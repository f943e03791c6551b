"""serving/reasoning_split.py: an output split into its reasoning and the rest of its raw text, which a
tool parser downstream (SGLang's, after its reasoning parser) reads as the whole message.

Oracle: `parse_response` of prefix + output (held to transformers 5.25 by the rest of the suite).
For every built-in sample and several chunkings, the reasoning pieces concatenate to the
message's `reasoning_content` and the rest, parsed with `prefix=""`, gives the rest of the message;
for outputs cut anywhere, the same holds for the reasoning and the split never raises.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from chatparse.serving.reasoning_split import ReasoningSplit

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = sorted(path.stem for path in (ROOT / "samples").glob("*.json"))


def _sample(family: str):
    data = json.loads((ROOT / "samples" / f"{family}.json").read_text())
    return importlib.import_module(f"chatparse.generated.{family}"), data


def split(module, prefix: str, pieces: list[str]) -> tuple[list[str], str]:
    """(the reasoning pieces, the rest of the text) of one run."""
    splitter = ReasoningSplit(module, prefix)
    reasoning, rest = [], []
    for piece in pieces:
        thought, text = splitter.feed(piece)
        reasoning.append(thought)
        rest.append(text)
    thought, text = splitter.finish()
    return [*reasoning, thought], "".join(rest) + text


def _chunkings(text: str) -> list[list[str]]:
    return [[text], list(text)] + [
        [text[i : i + n] for i in range(0, len(text), n)] for n in (3, 7)
    ]


@pytest.mark.parametrize("family", FAMILIES)
def test_reasoning_and_the_rest_give_the_message(family):
    module, sample = _sample(family)
    tools = sample.get("tools")
    message = module.parse_response(sample["text"], prefix=sample["prefix"], tools=tools)
    expected_rest = {key: value for key, value in message.items() if key != "reasoning_content"}
    rests = set()
    for pieces in _chunkings(sample["text"]):
        reasoning, rest = split(module, sample["prefix"], pieces)
        assert "".join(reasoning) == (message.get("reasoning_content") or ""), pieces
        assert module.parse_response(rest, prefix="", tools=tools) == expected_rest
        rests.add(rest)
    assert len(rests) == 1  # the same text whatever the chunking
    if message.get("reasoning_content"):
        reasoning, _ = split(module, sample["prefix"], list(sample["text"]))
        assert sum(1 for piece in reasoning if piece) > 3  # it streams, piece by piece


@pytest.mark.parametrize("family", ["qwen3", "qwen3_thinking_2507", "gpt_oss", "deepseek_v4"])
def test_cut_off_outputs(family):
    """Cut anywhere (max_tokens): the reasoning so far is the message's, a cut call never raises,
    and the rest does not depend on the chunking."""
    module, sample = _sample(family)
    text = sample["text"]
    for cut in range(0, len(text) + 1, 3):
        output = text[:cut]
        parser = module.ResponseParser(sample["prefix"], malformed="event")
        parser.feed(output)
        message = parser.finalize()[0]
        runs = [split(module, sample["prefix"], pieces) for pieces in ([output], list(output))]
        for reasoning, _ in runs:
            assert "".join(reasoning) == (message.get("reasoning_content") or ""), cut
        assert runs[0][1] == runs[1][1], cut
        assert runs[0][1] in output  # nothing of the prompt, and nothing added


def test_text_between_regions_and_around_them_is_kept():
    """The rest is the output with each reasoning region cut out whole: delimiters of other
    regions and text between regions stay."""
    module, _ = _sample("qwen3")
    output = 'Hi <think>a</think> there<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    _, rest = split(module, "", list(output))
    assert rest == 'Hi  there<tool_call>{"name": "f", "arguments": {}}</tool_call>'


def test_split_is_linear_time():
    from test_linear_time import BOUND, growth

    module, sample = _sample("qwen3")

    def runner(n):
        output = (
            "<think>"
            + "r " * n
            + "</think>"
            + "c <b>" * n
            + '<tool_call>{"a": 1}</tool_call>' * (n // 50)
        )
        pieces = [output[i : i + 2] for i in range(0, len(output), 2)]

        def run():
            split(module, "", pieces)
            split(module, "", [output])

        return run

    ratio, how = growth(runner)
    assert ratio < BOUND, how
