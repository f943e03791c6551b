"""Matching is linear in the output length, whatever the delimiter patterns.

Work is counted, not timed: the number of DFA steps per character must stay flat between a 2k and a
16k adversarial output (a generous bound on the ratio, so a noisy machine cannot fail it). The
reference needs quadratic time for `\\s*<tool_call>` after a long whitespace run and exponential
time for `(a+)+$`.
"""

from __future__ import annotations

import time

import pytest

import chatparse
from chatparse.runtime.scan import Delimiter

CATASTROPHIC = {
    "start_anchor": "@",
    "fields": {
        "x": {"open_pattern": r"(a|a)*b", "close_pattern": r"(a+)+$"},
        "tool_calls": {"open_pattern": r"\s*<tool_call>", "close": "</tool_call>"},
        "content": {"close_pattern": r"\s*(?:x+x+)+y"},
    },
}


class _Forgetful(dict):
    """A memo table that never remembers, so every step goes through `Delimiter.next_state`."""

    def get(self, key, default=None):
        return default

    def __setitem__(self, key, value):
        pass


class StepCounter:
    """Counts Delimiter.next_state calls (one per delimiter per character stepped, once the memo
    tables that would skip it are made to forget) and the chars each single run covers."""

    def __init__(self, monkeypatch, template=CATASTROPHIC):
        self.steps = 0
        original = Delimiter.next_state

        def counting(delimiter, state, ch):
            self.steps += 1
            return original(delimiter, state, ch)

        monkeypatch.setattr(Delimiter, "next_state", counting)
        # A single anchored run (`parse_response`'s searches) crosses loops and literal stretches
        # in C: count every char it covers.
        original_run = Delimiter._run_from

        def counting_run(delimiter, text, start):
            end, stop = original_run(delimiter, text, start)
            self.steps += stop - start + 1
            return end, stop

        monkeypatch.setattr(Delimiter, "_run_from", counting_run)
        module = chatparse.load_module(template)
        for value in vars(module).values():
            if isinstance(value, Delimiter):
                monkeypatch.setattr(value, "_next", [_Forgetful() for _ in value._next])
        parser = module.ResponseParser
        for region in (parser.home, *parser.regions.values()):
            monkeypatch.setattr(region, "transitions", _Forgetful())


def adversarial(n: int) -> str:
    # Long runs that keep every pattern alive without ever completing it.
    quarter = n // 4
    return "a" * quarter + " " * quarter + "x" * quarter + "b<tool_call>" + "a" * quarter


@pytest.mark.parametrize("chunked", [False, True], ids=["whole", "chunked"])
def test_steps_per_character_stay_flat(monkeypatch, chunked):
    counter = StepCounter(monkeypatch)
    per_char = []
    for n in (2_000, 16_000):
        counter.steps = 0
        text = adversarial(n)
        parser = chatparse.ResponseParser(CATASTROPHIC, prefix="")
        if chunked:
            for i in range(0, len(text), 7):
                parser.feed(text[i : i + 7])
        else:
            parser.feed(text)
        parser.finalize()
        per_char.append(counter.steps / len(text))
    assert per_char[1] < 1.5 * per_char[0] + 1, per_char


OVERLAPPING = {
    "start_anchor": "@",
    "fields": {"x": {"open_pattern": r"<a[^>]*>", "close": "#"}, "content": {}},
}


@pytest.mark.parametrize(
    "template, text_of",
    [(CATASTROPHIC, adversarial), (OVERLAPPING, lambda n: "<a" * (n // 2))],
    ids=["catastrophic", "overlapping-candidates"],
)
def test_whole_text_steps_per_character_stay_flat(monkeypatch, template, text_of):
    """`parse_response` searches each delimiter over the whole text, one run per candidate start
    while their spans do not overlap. `<a[^>]*>` over `<a<a<a...` puts every candidate inside the
    first run's span: from there every start must be stepped together, or it is quadratic."""
    counter = StepCounter(monkeypatch, template)
    per_char = []
    for n in (2_000, 16_000):
        counter.steps = 0
        text = text_of(n)
        chatparse.parse_response(text, template, prefix="")
        per_char.append(counter.steps / len(text))
    assert per_char[1] < 1.5 * per_char[0] + 1, per_char


def test_100k_adversarial_output_parses(monkeypatch):
    text = adversarial(100_000)
    started = time.perf_counter()
    message = chatparse.parse_response(text, CATASTROPHIC, prefix="")
    # A very loose sanity bound (the reference does not finish this in minutes); the real check is
    # the flat step count above.
    assert time.perf_counter() - started < 60
    assert "x" in message or "content" in message


def test_held_text_is_not_recopied_per_chunk(monkeypatch):
    """While a run holds a long stretch (spaces before `\\s*<tool_call>`), chunks are appended to a
    list and joined once: the characters copied per character received stay flat."""
    from chatparse.runtime.stream import RegionParser

    copied = {"chars": 0}
    original = RegionParser._joined

    def counting(parser):
        if parser._tail:
            copied["chars"] += len(parser._text) + sum(map(len, parser._tail))
        return original(parser)

    monkeypatch.setattr(RegionParser, "_joined", counting)
    per_char = []
    for n in (20_000, 160_000):
        copied["chars"] = 0
        text = "hi" + " " * n + '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
        parser = chatparse.ResponseParser(CATASTROPHIC, prefix="")
        for i in range(0, len(text), 5):
            parser.feed(text[i : i + 5])
        parser.finalize()
        per_char.append(copied["chars"] / len(text))
    assert per_char[1] < 1.5 * per_char[0] + 1, per_char


def test_prefix_steps_per_character_stay_flat(monkeypatch):
    """The text after the last start anchor in the prefix is scanned with whole-string searches
    (the reference's edge rule); those are linear too."""
    counter = StepCounter(monkeypatch)
    per_char = []
    for n in (2_000, 16_000):
        counter.steps = 0
        prefix = "@" + adversarial(n)
        parser = chatparse.ResponseParser(CATASTROPHIC, prefix=prefix)
        parser.feed("tail")
        parser.finalize()
        per_char.append(counter.steps / len(prefix))
    assert per_char[1] < 1.5 * per_char[0] + 1, per_char
