"""A region's literal delimiters searched together in whole-text parsing (runtime/whole.py
`LiteralScan`, declared where compiler/planning/literal_scan.py finds it sound).

Three checks: where the compiler declares the scan and where it refuses; on random texts made of
the literals' pieces, the scan gives what each watched delimiter's own search and `winner` give
(an oracle in other code: the per-delimiter searches the bulk engine used before); and the
reference's one-shot message for templates built to stress the scan's tie rules (a literal that
another watch's literal begins, a literal in two watches, a lead run, a trail run, alternatives
tried shortest first), whole and streamed.
"""

from __future__ import annotations

import random

import pytest
from support import (
    FAMILIES,
    chatparse_bulk_outcome,
    chatparse_outcome,
    chunkings,
    exec_module,
    generated_module,
    needs_reference,
    reference_one_shot,
    same_outcome,
    without_events,
)

import chatparse
from chatparse.runtime.regions import winner
from chatparse.runtime.whole import LiteralScan

# Tie rules: "</s>" and "</s>!x" (content's close list, tried shortest first) against "</s>!"
# (open of a); "<e>" in two watches (open of b, content's close); a lead run (`\s*<t>`).
TIES = {
    "start_anchor": "<s>",
    "fields": {
        "content": {"close": ["</s>", "</s>!x"]},
        "a": {"open": "</s>!", "close": "</a>"},
        "b": {"open": "<e>", "close": "</b>"},
        "t": {"open_pattern": r"\s*<t>", "close_pattern": r"</t>\s*"},
        "u": {"open": "<e>", "close": "</u>"},
    },
}
# A trail run against a longer literal: `<t>\s*` opens t, "<t>x" closes content.
TRAIL = {
    "start_anchor": "<s>",
    "fields": {
        "content": {"close_pattern": r"\s*(?:<t>x|<end>)"},
        "t": {"open_pattern": r"<t>\s*", "close": "</t>"},
    },
}
STRESS = {"ties": TIES, "trail": TRAIL}

PIECES = {
    "ties": ["</s>", "</s>!", "</s>!x", "!", "x", "<e>", "</a>", "</b>", "</u>", "<t>", "</t>"],
    "trail": ["<t>", "<t>x", "<end>", "</t>", "x", "<", "t>"],
}


def _module(template: dict):
    namespace = exec_module(chatparse.compile_template(template))
    return namespace["ResponseParser"]


def _regions(parser_class) -> list:
    regions = [parser_class.home, *parser_class.regions.values()]
    regions += [r.after_start for r in regions if r.after_start is not None]
    return regions


def _scanned(parser_class) -> list:
    return [r for r in _regions(parser_class) if r.scan is not None]


# --- where the compiler declares it -----------------------------------------------------------


def test_declared_for_literal_regions():
    home = _module(TIES).home
    assert home.scan is not None  # literals, a literal list and a lead run, all literal forms
    assert _module(TRAIL).home.scan is not None


@pytest.mark.parametrize(
    "why, fields",
    [
        (
            "a literal begins with a lead char of `\\s*<t>`",
            {"content": {"close": "\n<end>"}, "t": {"open_pattern": r"\s*<t>", "close": "</t>"}},
        ),
        (
            "a Dfa is watched",
            {
                "content": {"close": "<end>"},
                "t": {"open_pattern": r"<t [a-z]+>", "close": "</t>"},
                "u": {"open": "<u>", "close": "</u>"},
            },
        ),
        (
            "a literal longer than the stream finder spells",
            {"content": {"close": "<" + "e" * 70 + ">"}, "t": {"open": "<t>", "close": "</t>"}},
        ),
    ],
)
def test_refused(why, fields):
    parser_class = _module({"start_anchor": "<s>", "fields": fields})
    assert parser_class.home.scan is None, why


# --- the scan is each search, then the winner ---------------------------------------------------


def _each_search(region, text: str, pos: int):
    matches = []
    for watch in region.watch:
        span = watch.delimiter.search(text, pos)
        if span is not None:
            matches.append((watch, *span))
    return winner(matches)


def _texts(pieces: list[str], seed: int, count: int = 300):
    rng = random.Random(seed)
    filler = [" ", "\n", "a", "<", ">", "/"]
    for _ in range(count):
        yield "".join(rng.choice(pieces + filler) for _ in range(rng.randint(0, 12)))


def _check_scans(parser_class, pieces: list[str], seed: int) -> int:
    checked = 0
    for region in _scanned(parser_class):
        scan = LiteralScan(region.watch)
        for text in _texts(pieces, seed):
            for pos in range(len(text) + 1):
                assert scan.first(text, pos) == _each_search(region, text, pos), (text, pos)
                checked += 1
    return checked


@pytest.mark.parametrize("name", sorted(STRESS))
def test_scan_is_each_search_then_winner_stress(name):
    assert _check_scans(_module(STRESS[name]), PIECES[name], seed=len(name)) > 1000


def test_scan_is_each_search_then_winner_builtins():
    checked = 0
    for family in FAMILIES:
        parser_class = generated_module(family).ResponseParser
        literals = [
            literal
            for region in _scanned(parser_class)
            for watch in region.watch
            for literal in watch.delimiter.alternatives
        ]
        if literals:
            pieces = literals + [literal[: len(literal) // 2] for literal in literals]
            checked += _check_scans(parser_class, pieces, seed=len(family))
    assert checked > 10000  # most built-ins declare a scan (hermes, qwen3, ...)


# --- the reference's message --------------------------------------------------------------------


@needs_reference
@pytest.mark.parametrize("name", sorted(STRESS))
def test_reference_message_whole_and_streamed(name):
    template = STRESS[name]
    for text in _texts(PIECES[name], seed=7 + len(name), count=200):
        expected = reference_one_shot(template, text, "")
        assert same_outcome(
            without_events(expected), chatparse_bulk_outcome(template, text, "")
        ), text
        for chunks in chunkings(text, seed=len(text), random_splits=1):
            assert same_outcome(expected, chatparse_outcome(template, chunks, "")), chunks
