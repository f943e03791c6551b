"""A whole-text search hands one anchored attempt to the standard `re` only where one backtracking
attempt of the pattern is proved linear (compiler/planning/linear_backtracking.py), spelled so that it
matches as `regex` does on any text.

Checked here: which patterns are proved and which are refused; that the refused ones really
backtrack in more than linear time in `re` (so the refusal is what keeps the search linear, and the
measurement can fail); that the proved ones stay linear on runs that keep every path alive; that the
spelling (`re_parts`, its table classes spelled from the installed `regex`) gives `regex`'s span
from every start, on ASCII and other text; and that the runtime's search with it equals
`regex.search`.
"""

from __future__ import annotations

import itertools
import re
import time

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from support import generated_module
from test_linear_time import BOUND, growth
from test_regex_parse import PATTERNS

from chatparse.compiler.planning.linear_backtracking import (
    backtracks_linearly,
    linear_spelling,
    trim_runs_around_a_lazy_group,
)
from chatparse.compiler.codegen.re_source import NotForRe, re_parts
from chatparse.compiler.frontend.regex_parse import UnsupportedRegex, parse_regex
from chatparse.compiler.frontend.symbolic_charclass import concrete
from chatparse.runtime.dfa_tables import class_source

PROVED = [
    r"\s*<tool_call>",
    r"</tool_call>\s*",
    # deepseek_v3's open: `\s*` twice, but a literal between them
    r"\s*(?:<｜tool▁calls▁begin｜>\s*)?<｜tool▁call▁begin｜>function<｜tool▁sep｜>"
    r"(?P<name>[^\s<]+)\s*```json\s*",
    r"\s*```\s*<｜tool▁call▁end｜>",
    r"<parameter=(?P<n>[^>]+)>\n?(?P<v>.*?)\n?</parameter>",  # the lazy loop ends at a literal
    r"(?:a|ab)*c",  # "ab" reads one way only
    r"[^<]*<[^<]*x",
    r"a{0,5}b",
    r"(?:ab){2,4}",
]

# Each refused pattern with a text on which one `re` attempt takes more than linear time.
REFUSED = {
    r"\s*\s*x": lambda n: " " * n,  # two loops over the same chars: quadratic
    r"a*b?a*c": lambda n: "a" * n,
    r"<t>\s*(?P<v>.*?)\s*</t>": lambda n: "<t>" + " " * n,  # xml-inline tags stay on the DFA
    r"(?P<name>[^\s<]+)[^<]*<x>": lambda n: "a" * n,  # gpt_oss's name, then any text
}
# ... and with exponential time: 6 more chars, 64x the time.
EXPONENTIAL = {r"(?:a|a)*b": "a", r"(?:\w+\s?)*$": "a"}


@pytest.mark.parametrize("pattern", PROVED)
def test_proved_patterns(pattern):
    assert backtracks_linearly(parse_regex(pattern))


@pytest.mark.parametrize("pattern", sorted(REFUSED) + sorted(EXPONENTIAL))
def test_refused_patterns(pattern):
    assert not backtracks_linearly(parse_regex(pattern))


def test_a_repeat_whose_body_can_match_empty_is_refused():
    # `re` and `regex` each end such a loop by a rule of their own: the DFA keeps `regex`'s.
    assert not backtracks_linearly(parse_regex(r"(?:a?)*b"))
    assert not backtracks_linearly(parse_regex(r"(?:a|)+b"))


def _spelled(pattern: str) -> re.Pattern:
    """`re_parts` joined as the runtime joins them, each table class spelled from the tables of
    the installed `regex`."""
    parts, _ = re_parts(parse_regex(pattern))
    return re.compile(
        "".join(part if isinstance(part, str) else class_source(concrete(part)) for part in parts)
    )


@pytest.mark.parametrize("pattern", sorted(REFUSED))
def test_refused_patterns_backtrack_superlinearly_in_re(pattern):
    """The measurement the proof stands in for can fail: one `re` attempt of each refused pattern
    takes more than linear time on its text."""
    spelled = _spelled(pattern) if "?P<" not in pattern else re.compile(pattern)
    build = REFUSED[pattern]

    def at(n):
        text = build(n)
        return lambda: spelled.match(text, 0)

    ratio, how = growth(at)
    assert ratio >= BOUND, how


@pytest.mark.parametrize("pattern", sorted(EXPONENTIAL))
def test_exponential_patterns_backtrack_exponentially_in_re(pattern):
    spelled = re.compile(pattern)
    unit = EXPONENTIAL[pattern]

    def seconds(repeats: int) -> float:
        text = unit * repeats + "!"
        best = float("inf")
        for _ in range(3):
            began = time.process_time()
            spelled.match(text, 0)
            best = min(best, time.process_time() - began)
        return best

    base = 12
    assert seconds(base + 6) >= BOUND * seconds(base)


def _alive_runs(pattern: str, n: int) -> list[str]:
    """Texts that keep paths of `pattern` alive for long: every prefix of a match, then a run of
    one char of the pattern's (or a space, a letter, `<`)."""
    sample = {
        r"\s*<tool_call>": "  <tool_call>",
        r"</tool_call>\s*": "</tool_call>  ",
        PROVED[2]: " <｜tool▁calls▁begin｜> <｜tool▁call▁begin｜>function<｜tool▁sep｜>f ```json ",
        PROVED[3]: " ``` <｜tool▁call▁end｜>",
        PROVED[4]: "<parameter=k>\nv\n</parameter>",
        r"(?:a|ab)*c": "ababc",
        r"[^<]*<[^<]*x": "ab<cx",
        r"a{0,5}b": "aaab",
        r"(?:ab){2,4}": "ababab",
    }[pattern]
    chars = sorted(set(sample) | {" ", "a", "<", "\n"})
    return [sample[:cut] + ch * n for cut in range(len(sample)) for ch in chars]


@pytest.mark.parametrize("pattern", PROVED)
def test_proved_patterns_stay_linear_in_re(pattern):
    spelled = _spelled(pattern)

    def at(n):
        texts = _alive_runs(pattern, n)
        return lambda: [spelled.match(text, 0) for text in texts]

    ratio, how = growth(at)
    assert ratio < BOUND, how


TRICKY = ["a", " ", "\n", "<", "\x1c", "\u3000", "\xa0", "é", "٣", "助"]


@settings(
    derandomize=True, max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(PATTERNS)
def test_the_spelling_matches_as_regex_on_any_text(pattern):
    try:
        original = regex.compile(pattern, regex.DOTALL)
        node = parse_regex(pattern)
        if not backtracks_linearly(node):
            return
        spelled = _spelled(pattern)
        _, aliases = re_parts(node)
    except (regex.error, UnsupportedRegex, NotForRe):
        return
    letters = [ch for ch in "<t/>-]}{é" if ch in pattern][:3] + TRICKY[:7]
    for length in range(4):
        for chars in itertools.product(letters, repeat=length):
            text = "".join(chars)
            for pos in range(len(text) + 1):
                a, b = original.match(text, pos), spelled.match(text, pos)
                assert (a and a.span()) == (b and b.span()), (pattern, text, pos)
                if a is not None and not aliases:
                    assert a.groupdict() == b.groupdict(), (pattern, text, pos)


@pytest.mark.parametrize(
    "text",
    [
        "hi <｜tool▁call▁begin｜>function<｜tool▁sep｜>get_x\n```json\n{}",
        "hi\u3000<｜tool▁calls▁begin｜>\u3000<｜tool▁call▁begin｜>function<｜tool▁sep｜>查询\u3000```json",
        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>a\u3000b ```json",  # `\u3000` ends the name
        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>a<b ```json <｜tool▁call▁begin｜>function"
        "<｜tool▁sep｜>ok```json",
        "   " * 50 + "<｜tool▁call▁begin｜>function<｜tool▁sep｜>x",
    ],
)
def test_the_runtime_search_and_groups_with_re_equal_regex(text):
    delimiter = generated_module("deepseek_v3").TOOL_CALLS_OPEN
    assert delimiter.anchored_parts
    compiled = regex.compile(delimiter.pattern, regex.DOTALL)
    for pos in range(len(text) + 1):
        expected = compiled.search(text, pos)
        assert delimiter.search(text, pos) == (expected and expected.span()), (text, pos)
        if expected is not None:
            start, end = expected.span()
            found = delimiter.groups_reader(text, start, end).match(text, start)
            assert found.span() == (start, end)
            assert delimiter.group_values(found) == expected.groupdict(), (text, pos)


MANY_CALLS = {
    "seed_oss": (
        "<seed:tool_call>\n",
        "<function=f>\n<parameter=city>\nParis\n</parameter>\n</function>\n",
        "</seed:tool_call>",
    ),
    "deepseek_v3": (
        "<｜tool▁calls▁begin｜>",
        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n```<｜tool▁call▁end｜>",
        "<｜tool▁calls▁end｜>",
    ),
}


@pytest.mark.parametrize("family", sorted(MANY_CALLS))
def test_a_whole_text_of_many_calls_stays_linear(family):
    """A text of many calls, whose searches are `re` attempts, parses in linear time: each
    commit searches on from where the last one ended, and a value's tags are searched in its
    body only."""
    module = generated_module(family)
    opening, call, closing = MANY_CALLS[family]

    def at(n):
        text = opening + call * n + closing + "é"  # not ASCII: the measured spelling
        return lambda: module.parse_response(text, prefix="")

    ratio, how = growth(at)
    assert ratio < BOUND, how


def test_counted_repeats_are_written_out_without_recursion_and_within_the_size_cap():
    assert backtracks_linearly(parse_regex(r"a{0,400}b"))  # 400 optional copies, one loop
    assert backtracks_linearly(parse_regex(r"a{0,3}a{0,3}b"))  # ambiguous, but boundedly
    assert not backtracks_linearly(parse_regex(r"(?:ab){0,300}c"))  # 600 positions: refused


KIMI_OPEN = (
    r"\s*(?:<\|tool_calls_section_begin\|>)?\s*<\|tool_call_begin\|>\s*(?:functions\.)?"
    r"(?P<name>[\w.\-]+):\d+\s*<\|tool_call_argument_begin\|>"
)
MERGED = [KIMI_OPEN, r"\s*(?:<a>)?\s*<b>x", r"\s*(?:ab)?\s*a(?P<n>b?)", r"[xy]*(?:<a>y?)?[xy]*<b>"]
NOT_MERGED = [
    r"\s*(?: a)?\s*<b>",  # A may begin with a char of the runs
    r"\s*(?:<a>)?\s*\s<b>",  # ... and so may what follows
    r"\s*(?P<g><a>)?\s*<b>",  # a group in A
    r"\s*(?:<a>)??\s*<b>",  # a lazy optional
]


def _linear_spelled(pattern: str) -> re.Pattern:
    spelling = linear_spelling(parse_regex(pattern))
    assert spelling is not None
    parts, _ = re_parts(spelling)
    return re.compile(
        "".join(part if isinstance(part, str) else class_source(concrete(part)) for part in parts)
    )


@pytest.mark.parametrize("pattern", MERGED)
def test_two_runs_around_an_optional_are_merged_into_a_linear_spelling(pattern):
    assert not backtracks_linearly(parse_regex(pattern))  # polynomial as written
    assert linear_spelling(parse_regex(pattern)) is not None


@pytest.mark.parametrize("pattern", NOT_MERGED)
def test_runs_around_an_optional_stay_on_the_dfa_unless_the_rewrite_is_exact(pattern):
    assert linear_spelling(parse_regex(pattern)) is None


@pytest.mark.parametrize("pattern", MERGED)
def test_the_merged_spelling_matches_as_regex_from_every_start(pattern):
    original = regex.compile(pattern, regex.DOTALL)
    spelled = _linear_spelled(pattern)
    pieces = [" ", "\n", "\u3000", "<a>", "<b>", "a", "b", "x", "y", "<|tool_calls_section_begin|>"]
    pieces += ["<|tool_call_begin|>", "functions.", "f", ":1", "<|tool_call_argument_begin|>"]
    compared = 0
    for length in range(5):
        for chosen in itertools.product(pieces, repeat=length):
            text = "".join(chosen)
            for pos in range(len(text) + 1):
                a, b = original.match(text, pos), spelled.match(text, pos)
                assert (a and (a.span(), a.groupdict())) == (b and (b.span(), b.groupdict())), (
                    pattern,
                    text,
                    pos,
                )
                compared += a is not None
    assert compared  # some texts match


def test_the_merged_kimi_open_stays_linear_in_re_where_the_written_one_is_quadratic():
    written = re.compile(KIMI_OPEN)
    spelled = _linear_spelled(KIMI_OPEN)

    def at(pattern):
        def runner(n):
            text = " " * n + "<|tool_call_begin|>f" + "!"
            return lambda: pattern.match(text, 0)

        return runner

    assert growth(at(written))[0] >= BOUND
    ratio, how = growth(at(spelled))
    assert ratio < BOUND, how


GPT_OSS_OPEN = (
    r"<\|channel\|>(?:commentary|analysis)\s+to=functions\.(?P<name>[^\s<]+)[^<]*"
    r"(?:<\|constrain\|>[^<]*)?<\|message\|>|(?:<\|start\|>assistant)?\s*to=functions\."
    r"(?P<name>[^\s<]+)\s*<\|channel\|>(?:commentary|analysis)[^<]*(?:<\|constrain\|>[^<]*)?"
    r"<\|message\|>"
)
SPLIT = [GPT_OSS_OPEN, r"a(?P<n>[^\s<]+)[^<]*<b>", r"[a-z]+\w*!", r"x[ab]*[abc]*"]
NOT_SPLIT = [
    r"[a-z]+\w*[a-z]!",  # what follows may begin with a char of X
    r"[a-z]+[0-9a-y]*!",  # X is not within Y
    r"[a-z]+?\w*!",  # a lazy X run
    r"[a-z]+\w*!?",  # what follows may match empty
]


@pytest.mark.parametrize("pattern", SPLIT)
def test_a_run_before_a_wider_run_is_split_into_a_linear_spelling(pattern):
    assert not backtracks_linearly(parse_regex(pattern))  # polynomial as written
    assert linear_spelling(parse_regex(pattern)) is not None


@pytest.mark.parametrize("pattern", NOT_SPLIT)
def test_a_run_before_a_wider_run_stays_on_the_dfa_unless_the_rewrite_is_exact(pattern):
    assert linear_spelling(parse_regex(pattern)) is None


@pytest.mark.parametrize("pattern", SPLIT)
def test_the_split_spelling_matches_as_regex_from_every_start(pattern):
    original = regex.compile(pattern, regex.DOTALL)
    spelled = _linear_spelled(pattern)
    _, aliases = re_parts(linear_spelling(parse_regex(pattern)))
    pieces = [" ", "<b>", "a", "b", "c", "x", "!", "<|channel|>commentary", "<|start|>assistant"]
    pieces += [" to=functions.", "f", "<|constrain|>", "<|message|>", "é"]
    compared = 0
    for length in range(5):
        for chosen in itertools.product(pieces, repeat=length):
            text = "".join(chosen)
            if not text.isascii():
                continue  # the runtime asks `re` about ASCII texts only (`anchored_parts`)
            for pos in range(len(text) + 1):
                a, b = original.match(text, pos), spelled.match(text, pos)
                assert (a and a.span()) == (b and b.span()), (pattern, text, pos)
                if a is not None and not aliases:
                    assert a.groupdict() == b.groupdict(), (pattern, text, pos)
                compared += a is not None
    assert compared  # some texts match


def test_the_split_gpt_oss_open_stays_linear_in_re_where_the_written_one_is_quadratic():
    written = re.compile(GPT_OSS_OPEN.replace("(?P<name>", "(?:", 1))  # `re`: one name a group
    spelled = _linear_spelled(GPT_OSS_OPEN)

    def at(pattern):
        def runner(n):
            text = "<|channel|>commentary to=functions." + "x" * n + "!"
            return lambda: pattern.match(text, 0)

        return runner

    assert growth(at(written))[0] >= BOUND
    ratio, how = growth(at(spelled))
    assert ratio < BOUND, how


STEP3_TAG = r'<steptml:parameter name="(?P<key>[^"]+)">\s*(?P<value>.*?)\s*</steptml:parameter>'
TRIMMED = [
    STEP3_TAG,
    r"<t>\s*(?P<v>.*?)\s*</t>",
    r"<t>\s*(?:.*?)\s*</t>x?",
    r"<t>\s*.*?\s*<(?P<n>u)",
]
NOT_TRIMMED = [
    r"<t>\s*(?P<v>.*?)\s*\s</t>",  # what follows may begin with a char of the runs
    r"<t>\s*(?P<v>.*?)[ \t]*</t>",  # two runs of different classes
    r"<t>\s*(.*?)\s*</t>",  # a numbered group: a copy would renumber the groups after it
    r"<t>\s*(?P<v>.*)\s*</t>",  # a greedy value
    r"<t>\s*(?P<v>\s*?)\s*</t>",  # a value of the runs' chars only
]


@pytest.mark.parametrize("pattern", TRIMMED)
def test_a_lazy_value_between_two_runs_is_trimmed_into_a_linear_spelling(pattern):
    assert not backtracks_linearly(parse_regex(pattern))  # polynomial as written
    assert linear_spelling(parse_regex(pattern)) is not None


@pytest.mark.parametrize("pattern", NOT_TRIMMED)
def test_a_lazy_value_stays_as_written_unless_the_trim_is_exact(pattern):
    node = parse_regex(pattern)
    assert trim_runs_around_a_lazy_group(node) is node
    assert linear_spelling(node) is None


@pytest.mark.parametrize("pattern", TRIMMED)
def test_the_trimmed_spelling_matches_as_regex_from_every_start(pattern):
    original = regex.compile(pattern, regex.DOTALL)
    spelled = _linear_spelled(pattern)
    _, aliases = re_parts(linear_spelling(parse_regex(pattern)))
    pieces = [" ", "\n", "\u3000", "a", "é", "<t>", "</t>", "<", "x", "<u", "\u3000</t>"]
    pieces += ['<steptml:parameter name="k">', "</steptml:parameter>"]
    compared = 0
    for length in range(5):
        for chosen in itertools.product(pieces, repeat=length):
            text = "".join(chosen)
            for pos in range(len(text) + 1):
                a, b = original.match(text, pos), spelled.match(text, pos)
                got = None
                if b is not None:
                    values: dict = {}
                    for name, value in b.groupdict().items():
                        name = aliases.get(name, name)
                        if value is not None or name not in values:
                            values[name] = value
                    got = (b.span(), values)
                assert (a and (a.span(), a.groupdict())) == got, (pattern, text, pos)
                compared += a is not None
    assert compared  # some texts match


@pytest.mark.parametrize(
    "text_of",
    [
        lambda n: "<t>a" + " " * n + "b</t>",  # a match: every length of the value ran the run
        lambda n: "<t>" + " " * n + "b",  # no match: every split of the spaces between the runs
        lambda n: "<t>a" + " " * n,
    ],
)
def test_the_trimmed_tag_stays_linear_in_re_where_the_written_one_is_quadratic(text_of):
    pattern = r"<t>\s*(?P<v>.*?)\s*</t>"
    written = re.compile(pattern, re.DOTALL)
    spelled = _linear_spelled(pattern)

    def at(compiled):
        def runner(n):
            text = text_of(n)
            return lambda: compiled.match(text, 0)

        return runner

    assert growth(at(written))[0] >= BOUND
    ratio, how = growth(at(spelled))
    assert ratio < BOUND, how


def test_a_cycle_of_two_loops_no_one_text_takes_both_ways_is_proved():
    """The `.` loop of a trimmed value and the run after it read a run of spaces side by side,
    but only a char outside the run leads from the one to the other: finitely ambiguous (no
    text takes p -> p, p -> q and q -> q), which the triples decide."""
    assert backtracks_linearly(parse_regex(r"<t>\s*(?:(?P<v>)|(?P<w>\S(?:.*?\S)??)\s*)</t>"))
    # ... where one text does take all three ways, it stays refused
    assert not backtracks_linearly(parse_regex(r"<t>(?:.*?\s)??\s*</t>"))
