"""What a module declares a Dfa's whole-text runs cross at once (compiler/planning/run_crossings.py).

What a run does with them (a jump lands where stepping would) is held to `regex` by
tests/test_scan.py over patterns built to exercise them; here: which states get literal stretches
and self-loops, and that the compiler's own check refuses ones the tables do not step along.
"""

from __future__ import annotations

import pytest

import chatparse
from chatparse.compiler.automata.region_automaton import compile_dfa
from chatparse.compiler.planning.run_crossings import (
    CrossingMismatch,
    check_crossings,
    literal_stretches,
    self_loops,
)

GLM_TAG = r"<arg_key>\s*(?P<key>.*?)\s*</arg_key>(?:\\n|\s)*<arg_value>(?P<value>.*?)</arg_value>"


def _stretches(pattern: str) -> list[str]:
    return sorted(
        literal for by in literal_stretches(compile_dfa(pattern)).values() for literal in by
    )


def test_one_entry_per_place_a_run_arrives_not_per_char():
    """A run arrives at the start, at a stretch's end and after a loop's exit char; the states
    inside a stretch get no entry of their own (a run there left the stretch and steps)."""
    assert _stretches(GLM_TAG) == ["/arg_key>", "/arg_value>", "<arg_key>", "<arg_value>"]


def test_a_stretch_stops_at_a_loop_and_at_a_report():
    assert _stretches(r"ab\s*cd") == ["ab", "cd"]  # `\s*` loops after `ab`
    assert _stretches(r"abc|abcde") == ["abc"]  # `abc` reports: no jump past it
    assert _stretches(r"a[xy]bc") == ["bc"]  # a wider class: the text decides there


def test_branches_of_one_state_are_one_entry():
    stretches = literal_stretches(compile_dfa(r"<c>(?:left|right)!"))
    assert [sorted(by) for by in stretches.values()] == [["<c>left!", "<c>right!"]]


def _module_delimiter(pattern: str):
    template = {"start_anchor": "@", "fields": {"x": {"open_pattern": pattern, "close": "#"}}}
    return chatparse.load_module(template).X_OPEN


def test_a_loop_is_the_chars_that_stay_without_a_report():
    dfa = compile_dfa(r"<a>[^<]*</a>\s*")
    loops = sorted(repr(stay) for stay in self_loops(dfa).values())
    # `[^<]*` stays off `<`; the trailing `\s*` reports on every char, so it is no loop to cross
    assert loops == ['ANY - CharSet.chars("<")']


def test_the_compiler_refuses_a_stretch_the_tables_do_not_step_along():
    delimiter = _module_delimiter(r"<c>(?:left|right)!\s*(?:\w+)")
    check_crossings(delimiter)  # as compiled
    state, by_literal = next(iter(delimiter.stretches.items()))
    literal, after = next(iter(by_literal.items()))
    delimiter.stretches[state] = {literal: after + 1}  # the wrong state after it
    with pytest.raises(CrossingMismatch):
        check_crossings(delimiter)
    delimiter.stretches[state] = {literal[:-1] + "?": after}  # a char the tables do not take
    with pytest.raises(CrossingMismatch):
        check_crossings(delimiter)


def test_the_compiler_refuses_a_loop_the_tables_do_not_have():
    from chatparse.runtime.charclass import CharSet

    delimiter = _module_delimiter(r"<c>[^<]*</c>")
    check_crossings(delimiter)
    state, stay = next(iter(delimiter.loops.items()))
    delimiter.loops[state] = stay | CharSet.chars("<")  # a char that leaves the loop
    with pytest.raises(CrossingMismatch):
        check_crossings(delimiter)
    del delimiter.loops[state]  # a loop left out
    with pytest.raises(CrossingMismatch):
        check_crossings(delimiter)
