"""An xml-inline `tag_pattern` `HEAD(?P<value>.*?)TAIL` with a literal TAIL, whose whole DFA has no
`re` spelling proved linear, is found by its halves (`HalvedTagPattern`, runtime/halved_tag.py):
HEAD's search, then the first TAIL after it, and the whole tag's own search from HEAD's start when
no TAIL follows. It gives what `regex.finditer` gives, and stays linear where a TAIL never comes.
"""

from __future__ import annotations

import pytest
from support import FAMILIES, generated_module
from test_linear_time import _assert_linear, growth
from test_spelled_tag import _expected, _texts, module_of

from chatparse.runtime import HalvedTagPattern

GLM_EXAMPLES = [
    "<arg_key>city</arg_key><arg_value>Paris</arg_value>",
    "<arg_key> k e y </arg_key>\\n\n<arg_value>a</arg_key><arg_value>b</arg_value>",
    "<arg_key>x</arg_key> <arg_value>",
    "</arg_value>",
]


def test_the_built_ins_found_by_halves_are_glm_s() -> None:
    halved = [
        family
        for family in FAMILIES
        if isinstance(
            getattr(generated_module(family), "TOOL_CALLS_TAG_FINDER", None), HalvedTagPattern
        )
    ]
    assert halved == ["glm45", "glm47"]


@pytest.mark.parametrize("family", ["glm45", "glm47"])
def test_a_glm_tag_reads_as_regex_does(family: str) -> None:
    module = generated_module(family)
    finder = module.TOOL_CALLS_TAG_FINDER
    pattern = module.TOOL_CALLS_ARGS["tag_pattern"]
    texts = _texts(GLM_EXAMPLES, seed=len(family), count=2000)
    assert sum(1 for text in texts if _expected(pattern, text)) > 150
    for text in texts:
        assert list(finder.groupdicts(text)) == _expected(pattern, text), text


# HEAD's first way is not always the one that ends first: `x+` takes every x, and in `<t xxx!`
# only a shorter key leaves the `x!` TAIL behind it, which the whole tag's search finds.
MADE_UP_TAGS = {
    r"<t (?P<key>x+)(?P<value>.*?)x!": ["<t xxx!", "<t x!", "<t xxy x!", "x!", "<t "],
    r"<a\s+(?P<key>\w+)>\s*(?P<value>.*?)</a>": ["<a k> v </a>", "<a\x1cé>", "</a>", "<a  k_1>"],
}


@pytest.mark.parametrize("pattern", list(MADE_UP_TAGS))
def test_a_made_up_tag_found_by_halves_reads_as_regex_does(pattern: str) -> None:
    finder = module_of(pattern)["TOOL_CALLS_TAG_FINDER"]
    assert isinstance(finder, HalvedTagPattern)
    texts = _texts(MADE_UP_TAGS[pattern], seed=len(pattern), count=2000)
    assert sum(1 for text in texts if _expected(pattern, text)) > 150
    for text in texts:
        assert list(finder.groupdicts(text)) == _expected(pattern, text), text


def test_a_shorter_way_of_head_before_the_only_tail_is_found() -> None:
    """The fallback's own case, checked by itself (the random texts hold it too)."""
    finder = module_of(r"<t (?P<key>x+)(?P<value>.*?)x!")["TOOL_CALLS_TAG_FINDER"]
    text = "<t xxx!"
    assert list(finder.groupdicts(text)) == [{"key": "xx", "value": ""}]
    assert _expected(r"<t (?P<key>x+)(?P<value>.*?)x!", text) == list(finder.groupdicts(text))


def test_heads_without_a_tail_are_read_in_linear_time() -> None:
    """Many HEADs and no TAIL: one HEAD's search and one TAIL search, then the whole tag's search
    once from the first HEAD (a search for TAIL from every HEAD would be quadratic, and
    `regex.finditer` backtracks over the rest of the text for every way of every key: cubic).
    `test_linear_time.py` shows that the measurement finds a quadratic matcher."""
    finder = generated_module("glm47").TOOL_CALLS_TAG_FINDER

    def run_at(n: int):
        text = "<arg_key>k</arg_key><arg_value>v " * (8 * n)
        return lambda: list(finder.groupdicts(text))

    _assert_linear({"heads": growth(run_at)})
