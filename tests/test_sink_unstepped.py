"""The null sink leaves a chunk unstepped when no watched delimiter can report a match on its chars
(`Region.match_ends`, compiler/planning/fast_path.py `sink_match_ends`).

The property: every feed returns exactly the events of a parser that steps every chunk at once
(the same module with `match_ends` off), so no event comes later; the chunks are really left
unstepped (harmony's header pieces cost an append); and the compiler only declares the chars for
a null sink whose delimiters all report on a few explicit chars.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import chunkings, generated_module, short_chunks
from test_fast_path import outcome  # events kept per feed call, unmerged

from chatparse.compiler.planning.fast_path import sink_match_ends
from chatparse.compiler.automata.region_automaton import build_regions
from chatparse.compiler.frontend.spec import load_spec
from chatparse.runtime.region_parser import RegionParser
from chatparse.runtime.streaming_engine import StreamingEngine

ROOT = Path(__file__).resolve().parent.parent
SINK_FAMILIES = ("gpt_oss", "cohere_command_a")


def sink_of(fields: dict) -> str | None:
    automaton = build_regions(load_spec({"start_anchor": "@@", "fields": fields}))
    return sink_match_ends(automaton.home)


@pytest.mark.parametrize(
    "fields, expected",
    [
        # Written from the rule: a literal reports on its last char; `</a>\s*` reports on the
        # first char after its run, which can be any; a field's region sends text, never waits.
        ({"a": {"open": "<a>", "close": "</a>"}}, ">"),
        ({"a": {"open": "<a>", "close": "</a>"}, "b": {"open": "[b]", "close": "[/b]"}}, ">]"),
        ({"a": {"open_pattern": r"<a>\s*", "close": "</a>"}}, None),
        ({"a": {"open_pattern": r"<a(?=b)", "close": "</a>"}}, None),  # a `regex` fallback
        ({"a": {"open_pattern": r"<a\b", "close": "</a>"}}, None),  # reports on any non-word char
        ({"a": {"open": "<a>"}, "content": {"close": "<end>"}}, None),  # no null sink here
    ],
)
def test_the_compiler_declares_the_sinks_reporting_chars(fields, expected):
    found = sink_of(fields)
    assert (set(found) if found else None) == (set(expected) if expected else None)


def test_harmony_and_cohere_sinks_are_declared():
    for family in SINK_FAMILIES:
        assert generated_module(family).ResponseParser.home.match_ends == frozenset(">")


def sample(family: str) -> tuple[str, str]:
    data = json.loads((ROOT / "samples" / f"{family}.json").read_text(encoding="utf-8"))
    return data["prefix"], data["text"]


@pytest.mark.parametrize("family", SINK_FAMILIES)
def test_leaving_chunks_unstepped_changes_no_event_of_any_feed(family, monkeypatch):
    parser_class = generated_module(family).ResponseParser
    prefix, text = sample(family)
    text = text + " trailing <|start|>assistant to=functions.g <|channel|>commentary x"
    cases = chunkings(text, 7) + [short_chunks(text, seed) for seed in range(5)]
    with_waiting = [outcome(parser_class, prefix, chunks) for chunks in cases]
    monkeypatch.setattr(parser_class.home, "match_ends", None)
    stepping = [outcome(parser_class, prefix, chunks) for chunks in cases]
    assert with_waiting == stepping


def test_harmony_header_pieces_are_not_stepped(monkeypatch):
    # Written from the format: after `<|start|>` the header comes in pieces; none of them holds
    # ">", so none can end an open; `<|channel|>` does and is stepped with the pieces before it.
    module = generated_module("gpt_oss")
    parser = module.ResponseParser("<|start|>assistant")
    parser.feed("<|channel|>final<|message|>Hi<|end|>")
    reads = []  # how many chars the region's run sets read at a time
    original = StreamingEngine._read_runs

    def counting(self, text, at, start=0):
        reads.append(len(text) - start)
        return original(self, text, at, start)

    monkeypatch.setattr(StreamingEngine, "_read_runs", counting)
    for piece in ["<|start|>", "assis", "tant", " to", "=functions", ".get_", "weather "]:
        assert parser.feed(piece) == []
    assert reads == [len("<|start|>")]  # `<|start|>` holds ">": stepped; the rest waits
    events = parser.feed("<|channel|>")
    assert reads[-1] == len("assistant to=functions.get_weather <|channel|>")
    assert events == []
    events = parser.feed("commentary<|message|>")
    assert [e["type"] for e in events] == ["region_open"]
    assert events[0]["field"] == "tool_calls"
    parser.feed('{"city": "Paris"}<|call|>')
    message, _ = parser.finalize()
    assert message["tool_calls"][0]["function"]["name"] == "get_weather"


def test_harmony_header_pieces_skip_the_general_path(monkeypatch):
    # While the sink's runs wait, `feed` hands a piece without ">" to `waiting_sink_feed`,
    # which appends it: the general path (`_feed`, and `_set_idle` after it) never runs for it.
    # A piece with ">" is read by the run sets with the pieces before it, not by `_feed` either,
    # and so is the first (`<|start|>`, read while no run is alive).
    module = generated_module("gpt_oss")
    parser = module.ResponseParser("<|start|>assistant")
    parser.feed("<|channel|>final<|message|>Hi<|end|>")
    fed, read = [], []
    original, reading = RegionParser._feed, RegionParser._read_by_run_sets

    def counting(self, text):
        fed.append(text)
        return original(self, text)

    def counting_reads(self, text):
        read.append(text)
        return reading(self, text)

    monkeypatch.setattr(RegionParser, "_feed", counting)
    monkeypatch.setattr(RegionParser, "_read_by_run_sets", counting_reads)
    assert parser.feed("<|start|>") == []
    assert fed == [] and read == ["<|start|>"]
    for piece in ["assis", "tant", " to", "=functions", ".get_", "weather "]:
        assert parser.feed(piece) == []
    assert fed == [] and read == ["<|start|>"]
    assert parser.feed("<|channel|>commentary<|message|>")[0]["type"] == "region_open"
    assert fed == [] and read == ["<|start|>", "<|channel|>commentary<|message|>"]


def test_a_match_waiting_to_be_decided_is_stepped_on_any_char(monkeypatch):
    # Written from the tie-break: after "<a>" the open of `a` has matched, but the longer open of
    # `b` is still alive; "x" (no ">") kills it and decides `a` at once, so it is stepped then.
    import chatparse

    template = {
        "start_anchor": "@@",
        "fields": {
            "a": {"open": "<a>", "close": "</a>"},
            "b": {"open": "<a>bc>", "close": "</b>"},
        },
    }
    parser_class = chatparse.load_module(template).ResponseParser
    assert parser_class.home.match_ends == frozenset(">")
    parser = parser_class("")
    assert parser.feed("<a>") == []
    assert parser.feed("x") == [
        {"type": "region_open", "field": "a"},
        {"type": "region_chunk", "field": "a", "text": "x", "dirty": False},
    ]
    for text in ["<a>xy</a>", "<a>bc>x</b>", "<a>b<a>bc>x</b>", "zz<a>by</a>"]:
        cases = chunkings(text, 3) + [short_chunks(text, seed) for seed in range(3)]
        with_waiting = [outcome(parser_class, "", chunks) for chunks in cases]
        monkeypatch.setattr(parser_class.home, "match_ends", None)
        stepping = [outcome(parser_class, "", chunks) for chunks in cases]
        monkeypatch.undo()
        assert with_waiting == stepping, text
