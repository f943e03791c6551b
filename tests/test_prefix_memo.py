"""The state after a prefix is remembered per class and truncated prefix (runtime/prefix_memo.py):
a parser restored from it must behave exactly as one that processed its prefix, share nothing
with it, and a prefix whose state depends on `tools` must not be remembered."""

from __future__ import annotations

import json
import logging

import pytest
from support import (
    FAMILIES,
    REPO,
    builtin_template,
    generated_module,
    needs_reference,
    reference_one_shot,
    run_parser,
    short_chunks,
)


def _sample(family: str) -> dict:
    return json.loads((REPO / "samples" / f"{family}.json").read_text(encoding="utf-8"))


def _forget(parser_class) -> None:
    parser_class._prefix_states.clear()


@pytest.mark.parametrize("family", FAMILIES)
def test_restored_parser_is_the_processed_one(family):
    module = generated_module(family)
    sample = _sample(family)
    prefix, tools, text = sample["prefix"], sample.get("tools"), sample["text"]
    _forget(module.ResponseParser)
    processed = module.ResponseParser(prefix, tools=tools)
    restored = module.ResponseParser(prefix, tools=tools)
    assert module.ResponseParser._prefix_states._states, "the sample's prefix was not remembered"
    assert restored.__dict__ == processed.__dict__
    # Nothing is shared: changing the first parser's events, body and message leaves the second.
    for event in processed.initial_events:
        event["field"] = "changed"
    processed.initial_events.append({"type": "changed"})
    processed.region_body.append("changed")
    processed._output["changed"] = True
    chunks = short_chunks(text, seed=1)
    fresh = run_parser(lambda: module.ResponseParser(prefix, tools=tools), chunks)
    _forget(module.ResponseParser)
    unremembered = run_parser(lambda: module.ResponseParser(prefix, tools=tools), chunks)
    assert fresh == unremembered


@needs_reference
def test_prefix_that_stores_a_value_is_processed_each_time():
    # A call closed inside the prefix is coerced with `tools`: the state depends on them, so two
    # parsers after the same prefix with different tools must give different (reference) values.
    template = builtin_template("hermes")
    prefix = (
        '<|im_start|>assistant\n<tool_call>\n{"name": "f", "arguments": {"n": "7"}}\n'
        "</tool_call>\n"
    )
    as_int = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
            },
        }
    ]
    as_str = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {"type": "object", "properties": {"n": {"type": "string"}}},
            },
        }
    ]
    module = generated_module("hermes")
    for tools in (as_int, as_str, as_int):
        got = run_parser(lambda: module.ResponseParser(prefix, tools=tools), ["done<|im_end|>"])
        assert got == reference_one_shot(template, "done<|im_end|>", prefix, tools)
    # the two tool sets give different values: the test can tell a shared state
    first = run_parser(lambda: module.ResponseParser(prefix, tools=as_int), [""])
    second = run_parser(lambda: module.ResponseParser(prefix, tools=as_str), [""])
    assert first != second


@pytest.mark.parametrize("family", FAMILIES)
def test_parse_starts_from_the_remembered_state(family, monkeypatch):
    # `parse` restores only what its engine reads (prefix_memo.PARSE_ATTRIBUTES) into a bare
    # parser: the message must be the one of a parser that processed the prefix.
    module = generated_module(family)
    sample = _sample(family)
    prefix, tools, text = sample["prefix"], sample.get("tools"), sample["text"]
    _forget(module.ResponseParser)
    processed = module.parse_response(text, prefix=prefix, tools=tools)

    def no_prefix_engine(self, events):
        raise AssertionError("the remembered state was not used")

    monkeypatch.setattr(module.ResponseParser, "_advance_prefix", no_prefix_engine)
    assert module.parse_response(text, prefix=prefix, tools=tools) == processed
    streamed = module.ResponseParser(prefix, tools=tools)
    for chunk in short_chunks(text, seed=2):
        streamed.feed(chunk)
    assert streamed.finalize()[0] == processed


def test_a_prefix_without_its_anchor_is_logged_once(caplog):
    # `parse` truncates the prefix itself before it looks for a remembered state; a prefix
    # without the start anchor is still reported once per parser, not once per step.
    module = generated_module("qwen3")
    prefix = "no anchor here " * 40  # too long to be remembered: processed every time
    with caplog.at_level(logging.INFO, logger="chatparse"):
        module.parse_response("hi", prefix=prefix)
        module.ResponseParser(prefix)
    notes = [r for r in caplog.records if "not found in the prefix" in r.getMessage()]
    assert len(notes) == 2


def _per_call(make, chunks: list[str]) -> tuple:
    """The message and the events of each call, unmerged (the first chunk's events included as
    they come), or the error's class."""
    try:
        parser = make()
        calls = [list(parser.initial_events)]
        for chunk in chunks:
            calls.append(parser.feed(chunk))
        message, final = parser.finalize()
    except Exception as error:  # the class is the comparable part
        return ("error", type(error).__name__)
    return ("ok", message, [*calls, final])


# After the anchor, text the prefix engine holds (a pattern's match at the end of the buffer,
# which the reference's edge rule holds): `<think>` before DeepSeek's `\s*<think>`, `</think>`
# before its content close, spaces before a `\s*` open.
HELD_TAILS = ["", "<think>", "</think>", "<think>\n", " ", "\n\n", "<tool_call>", "<|python_tag|>"]


@pytest.mark.parametrize("family", FAMILIES)
def test_the_first_chunk_commits_held_prefix_text_as_stepping_it_would(family, monkeypatch):
    """Where the prefix engine leaves text held and stepping it alone leaves no run alive, the
    first chunk restores the state after that step (`_committed_prefix`, remembered once): the
    same events per call and message as stepping the held text with the first chunk, whether the
    state is worked out then, restored, or the memo was cleared in between."""
    module = generated_module(family)
    parser_class = module.ResponseParser
    sample = _sample(family)
    tools, text = sample.get("tools"), sample["text"]
    for tail in HELD_TAILS:
        prefix = sample["prefix"] + tail
        # (the first chunk ending inside a delimiter: the fast path holds its tail)
        cut = text.find("<") + 2
        for chunks in (
            [text],
            short_chunks(text, seed=len(tail)),
            ["", text[:1], text[1:]],
            [text[:cut], text[cut:]],
        ):
            _forget(parser_class)
            computed = _per_call(lambda: parser_class(prefix, tools=tools), chunks)
            restored = _per_call(lambda: parser_class(prefix, tools=tools), chunks)
            parser = parser_class(prefix, tools=tools)
            _forget(parser_class)  # cleared before the first chunk
            cleared = _per_call(lambda: parser, chunks)
            with monkeypatch.context() as patch:
                patch.setattr(parser_class, "_committed_prefix", lambda *args: None)
                _forget(parser_class)
                stepped = _per_call(lambda: parser_class(prefix, tools=tools), chunks)
            assert computed == restored == cleared == stepped, (tail, chunks)
    _forget(parser_class)


def test_held_prefix_text_is_committed_once_for_deepseek():
    for family, tail in (("deepseek_v31", "</think>"), ("deepseek_v32", "<think>")):
        parser_class = generated_module(family).ResponseParser
        _forget(parser_class)
        prefix = _sample(family)["prefix"]
        assert prefix.endswith(tail)
        parser_class(prefix)
        parser = parser_class(prefix)
        assert parser._prefix_unstepped and parser._prefix_commit is not None
        _forget(parser_class)
