"""The shared comparison helpers tell apart what the contract tells apart."""

from __future__ import annotations

import pytest
from support import merge_chunks, nested, same_outcome, typed


@pytest.mark.parametrize(
    "a, b",
    [
        (1, 1.0),
        (1, True),
        (0, False),
        (None, False),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),  # key order counts
        ([1, [2]], [[1], 2]),  # same scalars, other nesting
        ([1, 2], (1, 2)),
        ({"a": [1]}, {"a": 1}),
        ("1", 1),
    ],
)
def test_typed_tells_apart_values_that_compare_equal_or_nest_differently(a, b):
    assert typed(a) != typed(b)
    assert typed(a) == typed(a) and typed(b) == typed(b)


def test_typed_compares_nan_and_values_deeper_than_the_recursion_limit():
    assert typed([float("nan")]) == typed([float("nan")])
    assert typed(nested(5000, "x")) == typed(nested(5000, "x"))
    assert typed(nested(5000, "x")) != typed(nested(5000, "y"))


def test_merge_chunks_joins_consecutive_chunks_of_one_field_only():
    def chunk(field, text):
        return {"type": "region_chunk", "field": field, "text": text, "dirty": False}

    events = [
        chunk("a", "x"),
        chunk("a", "y"),
        chunk("b", "z"),
        {"type": "region_close", "field": "b"},
        chunk("b", "w"),
    ]
    assert merge_chunks(events) == [
        chunk("a", "xy"),
        chunk("b", "z"),
        {"type": "region_close", "field": "b"},
        chunk("b", "w"),
    ]
    with pytest.raises(AssertionError, match="dirty"):
        merge_chunks([chunk("a", "x"), {**chunk("a", "y"), "dirty": True}])


def test_same_outcome_compares_messages_with_types():
    assert same_outcome(("ok", {"n": 1}, []), ("ok", {"n": 1}, []))
    assert not same_outcome(("ok", {"n": 1}, []), ("ok", {"n": 1.0}, []))
    assert not same_outcome(("error", "ValueError"), ("error", "KeyError"))
