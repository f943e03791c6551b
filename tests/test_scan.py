"""The runtime's whole-string search (xml-inline tags, the prefix) equals `regex.search`.

`Delimiter.search` jumps over stretches in C (the next char that can start a match, the next char
that leaves a loop, a literal stretch compared with `str.startswith`); each jump must land where
stepping char by char would. The patterns are built so that every jump is exercised, and texts
are drawn from the chars the pattern mentions plus one it does not.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace
from unittest import mock

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from support import exec_module

import chatparse
from chatparse.compiler.automata import region_automaton

PATTERNS = [
    r"<parameter=[^>\n]+>\n?.*?\n?</parameter>",  # Qwen3-Coder's tag: literal stretch, lazy loop
    r"<p=\w+>.*?</p>",
    r"<ab>|<abc>",
    r"ab(?:cd|ce)f",
    r"abab",  # a stretch whose chars can also start a match
    r"x.*?yyy",
    r"\bfoo\b",
    r"<a>(?:b|bc)*?</a>",
    # Heads: a lead loop, then literals (found in C, then moved back over the lead).
    r"\s*<tool_call>",
    r"\s*(?:<a>\s*)?<ab>",
    r"<c>x[^<]*<m>|\s*to=f\s*<c>",  # harmony's two ways in: one lead state reached over `\s`
    r"\s*</f>\s*</t>",
    r"<a[^>]*>",  # candidates inside a failed run's span
    # hunyuan's close: a literal that begins with a non-ASCII char, which the compiler's symbolic
    # classes cannot rule out of `\s` (each such char begins a literal of the heads).
    r"\s*(?:<answer>|</answer>|助手：|<\|eos\|>)",
    # gpt-oss's call header (its template's open): `<|start|>assistant` and `<|channel|>analysis`
    # begin a match only before a space (or `to=`), which the whole-text search looks ahead for
    # (`Dfa(follows=)`); `<x>\s+y`: a look-ahead for a class of Unicode tables.
    r"<\|channel\|>(?:commentary|analysis)\s+to=functions\.[^\s<]+[^<]*"
    r"(?:<\|constrain\|>[^<]*)?<\|message\|>|(?:<\|start\|>assistant)?\s*to=functions\."
    r"[^\s<]+\s*<\|channel\|>(?:commentary|analysis)[^<]*(?:<\|constrain\|>[^<]*)?"
    r"<\|message\|>",
    r"<x>\s+y|<x>z",
    # Literal stretches that branch (compiler/planning/run_crossings.py): after `<|c|>`, `commentary`
    # or `analysis`; `</k>` inside a lazy loop, then `xz` or `yz`; `｜`, two classes for the
    # compiler (it cannot rule it out of `\s`), one char to a run.
    r"<\|c\|>(?:commentary|analysis)\s+to=f\.[^\s<]+",
    r"<k>.*?</k>(?:xz|yz)",
    r"\s*```\s*<｜end｜>",
]


def module_for(pattern: str):
    template = {"start_anchor": "@", "fields": {"x": {"open_pattern": pattern, "close": "#"}}}
    return chatparse.load_module(template)


def alphabet(pattern: str) -> str:
    return (
        "".join(sorted(set(regex.sub(r"\\[a-zA-Z]", "", pattern)) - set("()?:*+[]|^\\"))) + "zq\n "
    )


@settings(max_examples=1000, deadline=None)
@given(st.data())
def test_search_equals_regex(data):
    pattern = data.draw(st.sampled_from(PATTERNS))
    delimiter = module_for(pattern).X_OPEN
    pieces = st.sampled_from(
        list(alphabet(pattern))
        + [
            "<parameter=",
            "</parameter>",
            "<p=",
            "</p>",
            "abab",
            "yyy",
            "<tool_call>",
            "to=f",
            "</f>",
            "<a",
        ]
        + ["助手：", "助", "手", "\u3000", "<|eos|>"]
        + ["<|c|>", "commentary", "analysis", "to=f.", "<k>", "</k>", "```", "<｜end｜>", "｜"]
        + ["<|channel|>", "<|start|>assistant", "to=functions.", "<|message|>", "<|constrain|>"]
        + ["<x>", "\u2003"]
    )
    text = "".join(data.draw(st.lists(pieces, max_size=30)))
    pos = data.draw(st.integers(0, len(text)))
    expected = regex.compile(pattern, regex.DOTALL).search(text, pos)
    assert delimiter.search(text, pos) == (expected.span() if expected else None), (text, pos)


@pytest.mark.parametrize(
    "pattern, text, pos",
    [
        (r"\s*<tool_call>", "hi \n <tool_call>", 0),  # the lead run before the literal
        (r"\s*<tool_call>", "hi \n <tool_call>", 4),  # ... cut where the search starts
        (r"\s*(?:<a>\s*)?<ab>", "x <a> \n<ab>", 0),  # the first literal of two
        (r"\s*(?:<a>\s*)?<ab>", "x <a> z <ab>", 0),  # the first fails, the second matches
        (r"<c>x[^<]*<m>|\s*to=f\s*<c>", "a  to=f <c>x <m>", 0),  # lead over a second state
        (r"<c>x[^<]*<m>|\s*to=f\s*<c>", "<c>x to=f <c>x<m>", 0),  # a start inside a failed run
        (r"<a[^>]*>", "<a<a<a>", 0),
        (r"\s*(?:<answer>|助手：)", "x 助 \u3000助手：", 0),  # a non-ASCII lead, a false start
        (r"\s*(?:<answer>|助手：)", "助手助手：", 1),
    ],
)
def test_heads_find_the_leftmost_start(pattern, text, pos):
    delimiter = module_for(pattern).X_OPEN
    assert delimiter.heads is not None  # these patterns are the ones Heads is for
    expected = regex.compile(pattern, regex.DOTALL).search(text, pos)
    assert delimiter.search(text, pos) == expected.span()


def test_literal_stretch_is_compared_whole():
    delimiter = module_for(PATTERNS[0]).X_OPEN
    text = "a <parameter=k>v</parameter> <parameter=k2>\nline\n</parameter>"
    assert delimiter.search(text) == (2, 28)
    assert delimiter.search(text, 3) == (29, len(text))
    assert delimiter.search("<parameter=k>v</parameter", 0) is None
    restart = "<parameter<parameter=k>v</parameter>"  # the stretch fails at the second `<`
    assert delimiter.search(restart) == (10, len(restart))


# The declared literal forms search with `str.find` or one `re` of plain alternatives, then walk
# a lead or trail run (runtime/delimiter_forms.py); each must give `regex.search`'s span. Texts mix the
# literals with ASCII and non-ASCII lead chars (U+3000 and U+2028 are \s, U+FF5C is not).
LITERAL_FORMS = [
    ({"open": "<ab>"}, "Literal"),
    ({"open": ["<abc>", "<ab>", "b>"]}, "Literals"),
    ({"open_pattern": r"\s*<ab>"}, "LeadRunThenLiterals"),
    ({"open_pattern": r"\s*(?:<abc>|<ab>|b>)"}, "LeadRunThenLiterals"),
    ({"open_pattern": r"<ab>\s*"}, "LiteralThenRun"),
]


@pytest.mark.parametrize("spec, form", LITERAL_FORMS, ids=[f for _, f in LITERAL_FORMS])
@settings(max_examples=300, deadline=None)
@given(st.data())
def test_literal_forms_search_equals_regex(spec, form, data):
    template = {"start_anchor": "@", "fields": {"x": {**spec, "close": "#"}}}
    delimiter = chatparse.load_module(template).X_OPEN
    assert type(delimiter).__name__ == form  # the form whose search is under test
    pieces = st.sampled_from(
        ["<ab>", "<abc>", "<a", "b>", "＜ab", " ", "\n", "\u3000", "\u2028", "\uff5c", "x"]
    )
    text = "".join(data.draw(st.lists(pieces, max_size=20)))
    pos = data.draw(st.integers(0, len(text)))
    expected = delimiter.compiled.search(text, pos)
    assert delimiter.search(text, pos) == (expected.span() if expected else None), (text, pos)


def pending_by_retrying(delimiter, text: str, pos: int):
    """What `leftmost_pending` must equal: one anchored attempt per start, leftmost first."""
    for start in range(pos, len(text) + 1):
        if delimiter.match_at(text, start, final=False)[0] == "pending":
            return start
    return None


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_leftmost_pending_equals_one_attempt_per_start(data):
    pattern = data.draw(st.sampled_from(PATTERNS + [r"\s*<tool_call>", r"a+b", r"<t>|<tool>"]))
    delimiter = module_for(pattern).X_OPEN
    pieces = st.sampled_from(list(alphabet(pattern)) + [" ", "<tool_call", "<parameter=k>", "ab"])
    text = "".join(data.draw(st.lists(pieces, max_size=20)))
    pos = data.draw(st.integers(0, len(text)))
    assert delimiter.leftmost_pending(text, pos) == pending_by_retrying(delimiter, text, pos)


@functools.cache
def fallback_module_for(pattern: str):
    """`module_for`, with every look-ahead on the `regex` fallback: the ones that end the pattern
    run on a DFA (compiler/automata/trailing_lookahead.py), so the fallback's own paths are tested with
    the compiler told not to."""
    template = {"start_anchor": "@", "fields": {"x": {"open_pattern": pattern, "close": "#"}}}
    with mock.patch.object(region_automaton, "trailing_lookahead", lambda pattern: None):
        source = chatparse.compile_template(template)
    return SimpleNamespace(**exec_module(source))


# Fallback opens (look-around): `C*L...` with a literal after the loop, its first char outside
# `C` (`fallback.pending_by_literal`), including a literal that overlaps itself and a `+` loop;
# and lead-dominated ones without such a literal, and one that is not lead-dominated.
FALLBACK_PATTERNS = {
    r"\s*functools(?=\s*\[)": "functools",
    r"\s*abab(?=!)": "abab",
    r"[ \t]+f(?=\d)": "f",
    r"\s*?x(?=\s\sy)": None,  # lazy: `regex` reports partial attempts no text completes
    r"\s*call(?!x)": "call",
    r"\s*ab(?=c|$)": "ab",
    r"\s*[xy]+(?=z)": None,
    r"\s*a(?=b)|c": None,
}


@settings(max_examples=600, deadline=None)
@given(st.data())
def test_leftmost_pending_on_the_fallback_equals_one_attempt_per_start(data):
    pattern = data.draw(st.sampled_from(sorted(FALLBACK_PATTERNS)))
    delimiter = fallback_module_for(pattern).X_OPEN
    assert delimiter.fallback
    literal = FALLBACK_PATTERNS[pattern]
    assert (delimiter.lead[3] if delimiter.lead is not None else None) == literal
    pieces = list(" \t\nfabxyz[!2c") + ["functools", "fun", "call", "abab", "aba"]
    text = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=24)))
    pos = data.draw(st.integers(0, len(text)))
    got = delimiter.leftmost_pending(text, pos)
    assert got == pending_by_retrying(delimiter, text, pos), (text, pos)
    compiled = regex.compile(pattern, regex.DOTALL)
    if compiled.search(text, pos) is None:
        # Where no match completes, the reference's partial search says the same.
        found = compiled.search(text, pos, partial=True)
        assert got == (found.start() if found is not None else None), (text, pos)


@pytest.mark.parametrize(
    "text",
    [
        "hi" + " " * 50,  # a whitespace run to the end
        "hi" + " " * 50 + "funct",  # ... then the literal cut off
        "hi" + " " * 50 + "functools" + " " * 9,  # ... then the literal, the look-ahead pending
        "hi" + " " * 50 + "functools [",  # a complete match before the edge
        "hi  functools x" + " " * 50 + "f",
        "f" * 60,
        "functools" * 7 + "functool",
    ],
)
@pytest.mark.parametrize("pos", [0, 3, 30])
def test_leftmost_pending_at_the_edge_of_a_prefix(text, pos):
    """The shapes phi4_mini's open meets at the end of a prefix, each start checked."""
    for delimiter in (
        fallback_module_for(r"\s*functools(?=\s*\[)").X_OPEN,
        module_for(r"\s*functools(?=\s*\[)").X_OPEN,  # on its DFA
    ):
        assert delimiter.leftmost_pending(text, pos) == pending_by_retrying(delimiter, text, pos)


def test_leftmost_pending_is_linear(monkeypatch):
    r"""Before `\s*<tool_call>`, a long whitespace run that ends in another char keeps a run alive
    from every start until that char kills them all; one attempt per start would step each of them
    to that char (quadratic)."""
    from chatparse.runtime import Delimiter

    delimiter = module_for(r"\s*<tool_call>").X_OPEN
    steps = []
    original = Delimiter.next_state

    def counting(self, state, ch):
        steps.append(1)
        return original(self, state, ch)

    monkeypatch.setattr(Delimiter, "next_state", counting)
    per_char = []
    for n in (2_000, 16_000):
        steps.clear()
        text = " " * n + "x"
        assert delimiter.leftmost_pending(text, 0) == len(text)  # only the empty run at the end
        per_char.append(len(steps) / n)
    assert per_char[1] < 1.5 * per_char[0] + 1, per_char


def test_branching_stretches_are_one_jump_each():
    """From the start a run jumps over `<|c|>commentary` or `<|c|>analysis` at once (one `re` of
    the two, as the module declares them), and the match is `regex`'s whichever branch the text
    takes."""
    delimiter = module_for(PATTERNS[-3]).X_OPEN
    start = delimiter.start_state(True, "")
    assert sorted(delimiter.stretches[start]) == ["<|c|>analysis", "<|c|>commentary"]
    for text in ("x<|c|>analysis to=f.get<", "<|c|>analysis<|c|>commentary to=f.g", "<|c|>comment"):
        expected = regex.compile(PATTERNS[-3], regex.DOTALL).search(text)
        assert delimiter.search(text) == (expected.span() if expected else None)


def test_a_stretch_crosses_a_char_the_compiler_cannot_place():
    """`｜` is a space under some Unicode tables for all the compiler knows, so it is two classes;
    both go to one state, so the stretch runs through it, declared in the module."""
    pattern = r"\s*```\s*<｜end｜>"
    template = {"start_anchor": "@", "fields": {"x": {"open_pattern": pattern, "close": "#"}}}
    assert "stretches={" in chatparse.compile_template(template)
    delimiter = module_for(pattern).X_OPEN
    assert sorted(literal for by in delimiter.stretches.values() for literal in by) == [
        "<｜end｜>",
        "```",
    ]
    text = "a ```json\n```<｜end｜>"
    assert delimiter.search(text) == regex.compile(pattern, regex.DOTALL).search(text).span()


def test_a_failed_run_rules_out_the_rest_of_its_lead_run(monkeypatch):
    """`\\s*```\\s*<end>` on "\\n```json": the run from the newline dies at `j`, and so would a
    run from the "```" after it (the same state there), so the search looks for the next "```"
    instead of stepping runs over the failed span; the span stays `regex`'s."""
    from chatparse.runtime import search

    pattern = r"\s*```\s*<end>"
    delimiter = module_for(pattern).X_OPEN
    text = "intro\n```json\n{}\n```\n" * 20 + "done\n```<end>"
    stepped = []
    real = search.search_runs
    monkeypatch.setattr(search, "search_runs", lambda *args: stepped.append(args[2]) or real(*args))
    assert delimiter.search(text) == regex.compile(pattern, regex.DOTALL).search(text).span()
    assert stepped == []


# A start anchor's list of literals: where no two occurrences can overlap, its last match is
# found from the right (`Literals.last_match_end`); `regex.finditer` is the oracle, overlapping
# lists included (they keep the left-to-right search).
ANCHOR_LISTS = [
    ("<|im_end|>", "[/INST]"),  # apart
    ("<a>", "<b>", "<c>"),  # apart
    ("ab", "ba"),  # one ends where the other begins
    ("abc", "b"),  # one holds the other
    ("aa", "b"),  # one overlaps itself
]


@pytest.mark.parametrize("literals", ANCHOR_LISTS)
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_literal_list_last_match_end_is_finditer(literals, data):
    from chatparse.runtime import Literals

    anchor = Literals(*literals)
    alphabet = sorted(set("".join(literals)) | {"x"})
    pieces = list(literals) + alphabet
    text = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=12)))
    pattern = "|".join(regex.escape(literal) for literal in literals)
    ends = [found.end() for found in regex.finditer(pattern, text)]
    assert anchor.last_match_end(text) == (ends[-1] if ends else None)


# The prefix a parser starts from: what follows the start anchor's last match. A one-literal anchor
# no two matches of which overlap is found by `str.rfind` (`RegionParser._truncated`); one that
# overlaps itself keeps the left-to-right search. `regex.finditer` is the oracle.
@pytest.mark.parametrize("anchor", ["<|im_start|>assistant\n", "aa", "aba", "<a>"])
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_the_prefix_is_cut_after_the_last_anchor(anchor, data):
    template = {"start_anchor": anchor, "fields": {"content": {"close": "<end>"}}}
    parser_class = type(chatparse.ResponseParser(template, prefix=""))
    pieces = [anchor, anchor[:-1], anchor[1:], *sorted(set(anchor)), "x"]
    prefix = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=10)))
    ends = [found.end() for found in regex.finditer(regex.escape(anchor), prefix)]
    expected = prefix[ends[-1] :] if ends else prefix
    assert parser_class._truncated(prefix) == expected
    message = chatparse.parse_response("hi<end>", template, prefix=prefix)
    assert message["content"] == (expected + "hi").strip()  # a text value is stripped


def test_a_literal_no_match_continues_from_is_passed_over():
    """gpt-oss's sample: its reasoning open and the next message's `<|start|>assistant` hold
    literals of the call header's heads, but neither is followed by what a header needs there
    (`Dfa(follows=)`), so the first place a header may start is the header itself."""
    from chatparse.generated import gpt_oss

    text = (
        "<|channel|>analysis<|message|>Sunny.<|end|><|start|>assistant<|channel|>commentary "
        'to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>'
    )
    header = text.index("<|channel|>commentary")
    delimiter = gpt_oss.TOOL_CALLS_OPEN
    assert delimiter.heads.first_start(text, 0) == header
    expected = regex.compile(delimiter.pattern, regex.DOTALL).search(text)
    assert delimiter.search(text) == expected.span() == (header, text.index("{"))


def test_a_prefilter_class_is_spelled_alike_before_and_after_its_set_is_measured():
    """A prefilter class (a loop's exits, where a run may start) holds its set whether or not
    `regex`'s tables were measured for it, and is spelled the same either way: its spelling once
    depended on it, and after one module measured `\\w` another's `\\w*` exits were written out
    as hundreds of ranges, which `re` reads range by range (llama3_pythonic's sample parsed in
    30 us instead of 18 after kimi_k2's)."""
    from chatparse.runtime.charclass import SPACE, WORD, CharSet
    from chatparse.runtime.dfa_tables import class_pattern, prefilter_class_source

    for fresh in (
        lambda: WORD - CharSet.chars("q"),
        lambda: ~(WORD | CharSet.chars("-")),
        lambda: SPACE | CharSet.chars("<"),
        lambda: CharSet.chars("ab\u00e9"),
    ):
        deferred, measured = fresh(), fresh()
        measured.ranges  # noqa: B018 (measures it)
        assert prefilter_class_source(deferred) == prefilter_class_source(measured)
        compiled = class_pattern(measured)
        for char in "aq_-< \t\u00e9\u4e2d\u0301\u00b2\U0001d400\x1c":
            if char in measured:
                assert compiled.fullmatch(char), (char, compiled.pattern)
    # An ASCII set is spelled exactly.
    assert class_pattern(CharSet.chars("ab")).fullmatch("c") is None
