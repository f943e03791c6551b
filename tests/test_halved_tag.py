"""An xml-inline `tag_pattern` `HEAD(?P<value>.*?)TAIL` is found by its halves (`HalvedTagPattern`,
runtime/halved_tag.py) where TAIL is a literal and the whole DFA has no `re` spelling proved linear,
or where a look-ahead keeps the tag off the DFA and TAIL is an optional char then branches
(`SpelledTagTail`): HEAD's search, then the first TAIL after it, and the whole tag's own finder
from HEAD's start when no TAIL follows. It gives what `regex.finditer` gives, and stays linear
where a TAIL never comes.
"""

from __future__ import annotations

import pytest
import regex
from support import FAMILIES, generated_module
from test_linear_time import _assert_linear, growth
from test_spelled_tag import EXAMPLES, _expected, _texts, module_of

from chatparse.runtime import HalvedTagPattern, SpelledTagPattern, SpelledTagTail

GLM_EXAMPLES = [
    "<arg_key>city</arg_key><arg_value>Paris</arg_value>",
    "<arg_key> k e y </arg_key>\\n\n<arg_value>a</arg_key><arg_value>b</arg_value>",
    "<arg_key>x</arg_key> <arg_value>",
    "</arg_value>",
]


SPELLED_HALVES = ["deepseek_v32", "deepseek_v4", "qwen3_coder", "seed_oss"]


def test_the_built_ins_found_by_halves() -> None:
    """glm's TAIL is a literal; DSML's and qwen3_coder's (and seed_oss's, the same) have a
    look-ahead, TAIL an optional char then branches."""
    halved = {
        family: type(finder.tail).__name__
        for family in FAMILIES
        if isinstance(
            finder := getattr(generated_module(family), "TOOL_CALLS_TAG_FINDER", None),
            HalvedTagPattern,
        )
    }
    assert halved == {
        "glm45": "str",
        "glm47": "str",
        **{family: "SpelledTagTail" for family in SPELLED_HALVES},
    }


@pytest.mark.parametrize("family", SPELLED_HALVES)
def test_a_spelled_tag_found_by_halves_reads_as_regex_does(family: str) -> None:
    module = generated_module(family)
    finder = module.TOOL_CALLS_TAG_FINDER
    assert isinstance(finder.tag, SpelledTagPattern)
    pattern = module.TOOL_CALLS_ARGS["tag_pattern"]
    texts = _texts(EXAMPLES[family], seed=len(family) + 1, count=2000)
    assert sum(1 for text in texts if _expected(pattern, text)) > 150
    assert any(not text.isascii() and _expected(pattern, text) for text in texts)
    for text in texts:
        assert list(finder.by_halves(text)) == _expected(pattern, text), text
        assert list(finder.groupdicts(text)) == _expected(pattern, text), text


def test_a_spelled_tag_reads_a_text_of_short_values_itself_and_long_ones_by_halves(
    monkeypatch,
) -> None:
    """Both give regex's groupdicts; the halves cost more a tag than `re`'s reading of a short
    value, less than its reading of a long one (35 ns a char)."""
    module = generated_module("qwen3_coder")
    finder = module.TOOL_CALLS_TAG_FINDER
    pattern = module.TOOL_CALLS_ARGS["tag_pattern"]
    halves = []
    by_halves = HalvedTagPattern.by_halves
    monkeypatch.setattr(
        HalvedTagPattern,
        "by_halves",
        lambda self, text: halves.append(text) or by_halves(self, text),
    )
    short = "<parameter=a>\n1\n</parameter>\n<parameter=b>\nx\n</parameter>\n"
    long = "<parameter=code>\n" + "x = [a < b]\n" * 40 + "</parameter>\n" + short
    for text in (short, long):
        assert list(finder.groupdicts(text)) == _expected(pattern, text)
    assert halves == [long]


# The value's end one LEAD before CORE, or at CORE, or at the end of the text; a value that
# begins with LEAD right after HEAD's own optional one (the step back must stay inside the value).
QWEN_CORNERS = [
    "<parameter=a>\n</parameter>",
    "<parameter=a>\n\n</parameter>",
    "<parameter=a>\nx\n",
    "<parameter=a>x\n\n<parameter=b>\n",
    "<parameter=a><parameter=b>",
    "<parameter=a>\n",
    "<parameter=a>",
    "<parameter=a>x</parameter\n</parameter>",
    "<parameter=a>\n\n\n<parameter=",
]


@pytest.mark.parametrize("text", [t.replace("\\n", "\n") for t in QWEN_CORNERS])
def test_a_qwen3_coder_value_ends_where_regex_ends_it(text: str) -> None:
    module = generated_module("qwen3_coder")
    pattern = module.TOOL_CALLS_ARGS["tag_pattern"]
    assert list(module.TOOL_CALLS_TAG_FINDER.by_halves(text)) == _expected(pattern, text)


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


# Made-up tags with a look-ahead in TAIL: a LEAD and `\\Z`; no `\\Z` (where no TAIL follows a
# HEAD, the spelled tag reads the rest); one branch, without a group; HEAD's first way not the one
# a TAIL follows (`x+` then `x!`); a CORE that begins with two chars.
SPELLED_MADE_UP_TAGS = {
    r"<p=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?(?:</p>|(?=<p=)|\Z)": ["<p=k>\nv\n</p>", "<p=é>x\n"],
    r"<a\s+k=\"(?P<key>\w+)\"\s*>(?P<value>.*?)(?:</a>|(?=<a\s))": [
        '<a k="x_1" >v</a>',
        '<a\tk="é">',
    ],
    r"<b (?P<key>\w+)>(?P<value>.*?) ?(?=</b>)": ["<b k>v </b>", "<b é> </b>"],
    r"<t (?P<key>x+)(?P<value>.*?)(?:x!|(?=;))": ["<t xxx!", "<t x;", "<t xxy x!", "x!"],
    r"<c (?P<key>\w)>(?P<value>.*?)\n?(?:;;|\]|(?=\[c ))": ["<c k>v\n;;", "<c z>]", "[c <c y>\n["],
}


@pytest.mark.parametrize("pattern", list(SPELLED_MADE_UP_TAGS))
def test_a_made_up_spelled_tag_found_by_halves_reads_as_regex_does(pattern: str) -> None:
    namespace = module_of(pattern)
    finder = namespace["TOOL_CALLS_TAG_FINDER"]
    assert isinstance(finder, HalvedTagPattern) and isinstance(finder.tail, SpelledTagTail)
    texts = _texts(SPELLED_MADE_UP_TAGS[pattern], seed=len(pattern), count=2000)
    assert sum(1 for text in texts if _expected(pattern, text)) > 150
    for text in texts:
        assert list(finder.by_halves(text)) == _expected(pattern, text), text


@pytest.mark.parametrize("pattern", list(SPELLED_MADE_UP_TAGS))
def test_a_tail_is_found_where_regex_finds_it(pattern: str) -> None:
    """`SpelledTagTail.find` from every place in the texts: the span of `regex`'s search for TAIL
    from there (a value's end is the start of that span)."""
    namespace = module_of(pattern)
    tail = namespace["TOOL_CALLS_TAG_FINDER"].tail
    compiled = regex.compile(tail.pattern, regex.DOTALL)
    texts = _texts(SPELLED_MADE_UP_TAGS[pattern], seed=len(pattern) + 2, count=300)
    found = 0
    for text in texts:
        for at in range(len(text) + 1):
            expected = compiled.search(text, at)
            span = expected.span() if expected is not None else None
            found += span is not None and span[0] > at
            assert tail.find(text, at, text.isascii()) == span, (text, at)
    assert found > 300


@pytest.mark.parametrize(
    "pattern",
    [
        # LEAD `<` could begin CORE: where TAIL first matches is not read off CORE's first match
        r"<p (?P<key>\w)>(?P<value>.*?)<?(?:<a>|(?=<b))",
        # CORE begins with any letter: no few chars to find it by
        r"<p (?P<key>\w)>(?P<value>.*?)(?:[a-z]!|(?=;))",
        # CORE may match empty (not only at the end)
        r"<p (?P<key>\w)>(?P<value>.*?)(?:x|(?=;)|)",
    ],
)
def test_a_spelled_tag_whose_tail_is_not_searched_alone_keeps_its_spelling(pattern: str) -> None:
    namespace = module_of(pattern)
    assert isinstance(namespace["TOOL_CALLS_TAG"], SpelledTagPattern)
    assert "TOOL_CALLS_TAG_FINDER" not in namespace


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


def test_a_long_value_of_many_lines_is_read_in_linear_time() -> None:
    """qwen3_coder's value of code: a LEAD `\\n` on every line and `<` in comparisons, none of
    them a TAIL; then many parameters, each ended by the next one's look-ahead."""
    finder = generated_module("qwen3_coder").TOOL_CALLS_TAG_FINDER

    def value_at(n: int):
        text = "<parameter=code>\n" + "if a < b:\n    x = [a<b]\n" * (40 * n)
        return lambda: list(finder.by_halves(text))

    def parameters_at(n: int):
        text = "<parameter=k>\nv\n" * (40 * n)
        return lambda: list(finder.by_halves(text))

    _assert_linear({"value": growth(value_at), "parameters": growth(parameters_at)})
