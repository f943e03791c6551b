"""runtime/literal_trie.py: the trie-shaped `re` finds what a brute-force scan of the literals finds."""

from __future__ import annotations

import random
import re
import sys

import pytest

from chatparse.runtime.literal_trie import NESTING_MAX, trie_source
from chatparse.runtime.search import CUT_OFF_MAX


def _first(literals: list[str], text: str, pos: int, cut_off: bool) -> tuple[int, int] | None:
    """The brute-force answer: the first position >= pos where a literal begins (its longest
    one's span) or, with `cut_off`, where a proper prefix of one ends the text."""
    for start in range(pos, len(text) + 1):
        found = [lit for lit in literals if text.startswith(lit, start)]
        if found:
            return start, start + max(map(len, found))
        rest = text[start:]
        if cut_off and rest and any(lit.startswith(rest) and lit != rest for lit in literals):
            return start, len(text)
    return None


@pytest.mark.parametrize("cut_off", [False, True])
def test_the_trie_finds_what_a_scan_of_the_literals_finds(cut_off: bool) -> None:
    rng = random.Random(7)
    for _ in range(1500):
        alphabet = "ab<|>"[: rng.randint(2, 5)]
        literals = sorted(
            {
                "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7)))
                for _ in range(rng.randint(1, 6))
            }
        )
        pattern = re.compile(trie_source(literals, cut_off=cut_off))
        for _ in range(20):
            text = "".join(rng.choice(alphabet + "x") for _ in range(rng.randint(0, 12)))
            pos = rng.randint(0, len(text))
            found = pattern.search(text, pos)
            expected = _first(literals, text, pos, cut_off)
            got = None if found is None else found.span()
            if cut_off and got is not None and expected is not None:
                # With `cut_off` only the start is meant (a prefix cut off may be longer).
                got, expected = got[0], expected[0]
            assert got == expected, (literals, cut_off, text, pos)


def test_a_chain_of_nested_literals_goes_flat_rather_than_nest_past_the_limit() -> None:
    literals = ["a" * k for k in range(1, 3 * NESTING_MAX)]
    source = trie_source(literals)
    assert "(?:" not in source  # flat: no nesting at all
    assert re.compile(source).search("xx" + "a" * 10).span() == (2, 12)


def test_a_long_literal_nests_nothing() -> None:
    literal = "<" * 20_000 + ">"
    assert "(?:" not in trie_source([literal])
    assert re.compile(trie_source([literal])).search("x" + literal).start() == 1


def test_cut_off_literals_of_the_streaming_bound_compile_within_the_stack() -> None:
    # runtime/search.py cuts literals to CUT_OFF_MAX chars: a trie that deep stays a trie, and
    # compiles even with little stack left.
    literals = [
        "".join(random.Random(k).choice("<|>ab") for _ in range(CUT_OFF_MAX)) for k in range(50)
    ]
    source = trie_source(literals, cut_off=True)
    assert "(?:" in source  # nested as a trie, not gone flat (CUT_OFF_MAX <= NESTING_MAX + 1)
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(400)
        re.compile(source)
    finally:
        sys.setrecursionlimit(limit)
