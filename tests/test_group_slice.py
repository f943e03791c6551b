"""A delimiter's one named group, cut out of its match by `str` methods (`GroupSlice`,
runtime/group_slice.py) where compiler/planning/group_slices.py proved where it lies: for every
match, the group `regex` reads, or None (a non-ASCII char at a run's end: `regex` reads it then).
Shapes where a match splits more than one way keep the regex reading.
"""

from __future__ import annotations

import json
import re

import pytest
import regex
from support import FAMILIES, REPO, generated_module
from test_spelled_tag import _texts

from chatparse.compiler.planning.group_slices import group_slice
from chatparse.runtime import GroupSlice
from chatparse.runtime.delimiter import Delimiter


def _slices(pattern: str, found: GroupSlice, texts: list[str]) -> int:
    """Check `found` against `regex` on every match of `pattern` in `texts` (at every start);
    how many it read itself."""
    compiled = regex.compile(pattern, regex.DOTALL)
    read = 0
    for text in texts:
        for start in range(len(text)):
            match = compiled.match(text, start)
            if match is None:
                continue
            expected = {k: v for k, v in match.groupdict().items() if v is not None}
            mine = found.read(match.group())
            if mine is not None:
                assert mine == expected, (pattern, match.group())
                read += 1
    return read


def _built_in_slices() -> list[tuple[str, Delimiter]]:
    return [
        (family, delimiter)
        for family in FAMILIES
        for delimiter in vars(generated_module(family)).values()
        if isinstance(delimiter, Delimiter) and getattr(delimiter, "group_slice", None)
    ]


def test_the_built_ins_with_a_group_slice() -> None:
    families = sorted({family for family, _ in _built_in_slices()})
    assert families == [
        "deepseek_r1",
        "deepseek_v3",
        "deepseek_v31",
        "deepseek_v32",
        "deepseek_v4",
        "functionary_v31",
        "functiongemma",
        "gemma4",
        "glm45",
        "glm47",
        "qwen3_coder",
        "seed_oss",
        "step3",
    ]


@pytest.mark.parametrize(
    "family, delimiter", _built_in_slices(), ids=lambda item: getattr(item, "source", item)
)
def test_a_built_in_group_slice_reads_what_regex_reads(family: str, delimiter: Delimiter) -> None:
    sample = json.loads((REPO / "samples" / f"{family}.json").read_text(encoding="utf-8"))["text"]
    found = regex.compile(delimiter.pattern, regex.DOTALL).search(sample)
    assert found is not None  # the sample opens a call
    examples = [found.group(), sample[max(0, found.start() - 20) : found.end() + 20]]
    texts = _texts(examples, seed=len(family), count=600)
    assert _slices(delimiter.pattern, delimiter.group_slice, texts) > 100


# Made-up patterns the analysis takes: every part of the shape, ASCII and not.
TAKEN = {
    r"<f=(?P<n>[^>]+)>": ["<f=a b>", "<f=>", "<f=<f=x>"],
    r"\s*(?:<t>\s*)?<f=(?P<n>[^>\n]+)>": [" <t> <f=x>", "<t><f=<t>>", "\n<f=é>"],
    r"<a>\s*(?P<n>[^\s<]+)\s*<b>\s*": ["<a> x <b> ", "<a>\u3000x\u3000<b>", "<a>x<b>\x85"],
    r"x*xy(?P<n>[a-z]+)": ["xxxyab", "xyxyz", "xy"],
    r"<(?P<n>\w+):\d+": ["<ab:12", "<a1:2", "<é:٣"],
    r"<c (?P<n>[^\s]+)\s+": ["<c ab  x", "<c a\u3000 ", "<c \x85a "],
}


@pytest.mark.parametrize("pattern", list(TAKEN))
def test_a_made_up_group_slice_reads_what_regex_reads(pattern: str) -> None:
    model = group_slice(pattern)
    assert model is not None
    found = GroupSlice(
        model.name,
        head=model.head,
        skip=model.skip,
        before_tail=model.before_tail,
        tail=model.tail,
        after_tail=model.after_tail,
    )
    texts = _texts(TAKEN[pattern], seed=len(pattern), count=2000)
    assert _slices(pattern, found, texts) > 100


# Each splits some match another way than the slice would: the analysis refuses it.
REFUSED = {
    r"(?:<ab)?<a(?P<n>b+)>": "R HEAD[:-1] holds HEAD: <ab<abb> is <ab, <a, bb",
    r"<a>\s*(?P<n>[^>]+)>": "B may begin with a W char",
    r"<a>(?P<n>[a-z ]+) *>": "B may end with a V char",
    r"<(?P<n>[0-9]+)a[a-z]*": "TAIL ends with a U char",
    r"<(?P<n>x+)>|<y>": "an alternation at the top",
    r"<(?P<n>x+)(?P<m>y)": "two named groups",
    r"\b<(?P<n>x+)>": "an assertion",
    r"<(?P<n>x*)>": "B may be empty",
    r"<(?P<n>x+) *\s*>": "two runs side by side",
}


@pytest.mark.parametrize("pattern", list(REFUSED))
def test_a_group_that_may_lie_elsewhere_keeps_the_regex_reading(pattern: str) -> None:
    assert group_slice(pattern) is None, REFUSED[pattern]


def test_the_split_a_refused_pattern_would_get_wrong() -> None:
    """Why the first refusal matters: the first HEAD is not where `regex` puts it."""
    pattern = r"(?:<ab)?<a(?P<n>b+)>"
    assert regex.match(pattern, "<ab<abb>").group("n") == "bb"
    assert GroupSlice("n", head="<a", tail=">").read("<ab<abb>") == {"n": "b<abb"}


def test_a_run_that_ends_at_a_char_the_tables_decide_gives_up() -> None:
    found = GroupSlice("n", head="<a>", skip=" \t\n", before_tail=" ", tail="<b>", after_tail=" ")
    assert found.read("<a> x <b> ") == {"n": "x"}
    assert found.read("<a>\u3000x <b>") is None  # \u3000 may be a W char (it is under \s)
    assert found.read("<a> x\u3000<b>") is None
    assert found.read("<a> x <b>\u3000") is None


def test_the_module_says_where_a_group_lies() -> None:
    source = (REPO / "generated" / "functionary_v31.py").read_text(encoding="utf-8")
    assert re.search(
        r'group_slice=GroupSlice\(\n\s+"name",\n\s+head="<function=",\n\s+tail=">",\n\s+\),',
        source,
    )
