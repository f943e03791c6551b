"""`re_source` spells a delimiter pattern for the standard `re` so that it matches exactly as `regex`
does: same span and same named groups, from every start, on texts of the pattern's own chars plus
the ones where the two modules' classes differ (`\\x1c` is `\\s` in `re`, not in `regex`).
"""

from __future__ import annotations

import itertools
import re

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from test_regex_parse import PATTERNS

from chatparse.compiler.codegen.re_source import (
    NotForRe,
    depends_on_tables,
    re_parts,
    re_source,
    re_spelling,
)
from chatparse.compiler.frontend.symbolic_charclass import concrete
from chatparse.compiler.planning.linear_backtracking import trim_runs_around_a_lazy_group
from chatparse.compiler.frontend.regex_parse import UnsupportedRegex, parse_regex
from chatparse.runtime import Delimiter

TRICKY = [
    "x",
    " ",
    "\n",
    "\x1c",
    "é",
    "_",
    "٣",
]  # `\w`/`\s`/`\d` disagree between re and regex here


def same_matches(pattern: str, texts) -> None:
    """The spelling matches as `regex` does, from every start; and the runtime's reader of a
    match's groups, with the spelling the compiler declares for it (`Dfa(groups_parts=)`: a lazy
    value between two runs trimmed, each class of the tables spelled from them where a span is
    not ASCII), reads every match's groups as `regex` does."""
    original = regex.compile(pattern, regex.DOTALL)
    node = parse_regex(pattern)
    source, _ = re_spelling(node)
    ascii_only = depends_on_tables(node)
    spelled = re.compile(source)
    parts, aliases = re_parts(trim_runs_around_a_lazy_group(node))
    reader = Delimiter(
        "test",
        pattern,
        fallback=True,
        has_groups=True,
        groups_parts=tuple(part if isinstance(part, str) else concrete(part) for part in parts),
        groups_aliases=aliases,
    )
    compared = 0
    for text in texts:
        for pos in range(len(text) + 1):
            a, b = original.match(text, pos), spelled.match(text, pos)
            assert a or not b, (pattern, text, pos)
            compared += 1
            if a is None:
                continue
            found = reader.groups_reader(text, a.start(), a.end()).match(text, pos)
            assert (found.span(), reader.group_values(found)) == (a.span(), a.groupdict()), (
                pattern,
                text,
                pos,
            )
            if not (ascii_only and not text[a.start() : a.end()].isascii()):
                assert b is not None and b.span() == a.span(), (pattern, text, pos)
    assert compared


@settings(
    derandomize=True, max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(PATTERNS)
def test_generated_patterns_match_alike_in_re(pattern: str) -> None:
    try:
        regex.compile(pattern, regex.DOTALL)
        re_spelling(parse_regex(pattern))
    except (regex.error, UnsupportedRegex, NotForRe):
        return
    letters = [ch for ch in "<t/>-]}{é" if ch in pattern][:3] + TRICKY[:5]
    texts = [
        "".join(chars) for length in range(4) for chars in itertools.product(letters, repeat=length)
    ]
    same_matches(pattern, texts)


@pytest.mark.parametrize(
    "pattern, texts",
    [
        (
            r"<parameter=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?</parameter>",
            ["<parameter=a>\nx\n</parameter>", "<parameter=a>x"],
        ),
        (
            r"\s*<tool_call>\s*<function=(?P<name>[^>\n]+)>",
            [" \x1c<tool_call>\n<function=f>", "\n<tool_call><function=g h>"],
        ),
        (r"(?P<w>\w+)(?P<d>\d*)\s", ["é_٣ x", "a\x1cb ", "ab12 ", "a١ "]),
        (r"(?P<a>a|ab)(?P<b>c|bcd)(?P<c>d*)", ["abcd", "abcdd"]),
        (r"[-&~\]\\^|]+(?P<e>)|(?:)z", ["&~-]^|\\z", "z"]),
    ],
)
def test_catalogue_shapes_match_alike_in_re(pattern, texts):
    same_matches(pattern, texts)


HARMONY_OPEN = (
    r"<\|channel\|>(?:commentary|analysis)\s+to=functions\.(?P<name>[^\s<]+)[^<]*(?:<\|constrain\|>[^<]*)?<\|message\|>"
    r"|(?:<\|start\|>assistant)?\s*to=functions\.(?P<name>[^\s<]+)\s*<\|channel\|>(?:commentary|analysis)[^<]*"
    r"(?:<\|constrain\|>[^<]*)?<\|message\|>"
)


def test_a_name_shared_by_exclusive_branches_is_renamed_and_read_back():
    source, aliases = re_spelling(parse_regex(HARMONY_OPEN))
    assert aliases == {"name_1": "name"}
    same_matches(
        HARMONY_OPEN,
        [
            "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>",
            "<|start|>assistant to=functions.f<|channel|>analysis<|message|>",
            " to=functions.g <|channel|>commentary x<|message|>",
        ],
    )


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?P<n>a)(?P<n>b)",  # both take part: regex keeps the later capture
        r"(?:(?P<n>a)|b)(?P<n>c)",
        r"(?:(?P<n>a)|(?P<n>b))+",  # exclusive branches, but a repeat takes both
    ],
)
def test_a_name_two_groups_of_one_match_share_stays_with_regex(pattern):
    with pytest.raises(NotForRe, match="'n'"):
        re_source(parse_regex(pattern))
    with pytest.raises(NotForRe):
        re_spelling(parse_regex(pattern))


def test_a_renamed_group_does_not_take_an_existing_name():
    source, aliases = re_spelling(parse_regex(r"(?P<n>a)|(?P<n>b)|(?P<n_1>c)"))
    assert aliases == {"n_1_": "n"} and "(?P<n_1>c)" in source
    same_matches(r"(?P<n>a)|(?P<n>b)|(?P<n_1>c)", ["a", "b", "c", "x"])


def test_a_word_boundary_stays_with_regex():
    """`\\b` looks at chars outside the span, whose class only the installed `regex` knows."""
    with pytest.raises(NotForRe, match="word_boundary"):
        re_spelling(parse_regex(r"\b(?P<n>\w+)"))


def test_a_class_of_the_tables_is_spelled_for_ascii_only():
    node = parse_regex(r"(?P<n>[^\s<]+)")
    assert depends_on_tables(node) and not depends_on_tables(parse_regex(r"(?P<n>[^<\n]+)"))
    source = re_source(node)
    assert re.fullmatch(source, "ab") and not re.fullmatch(source, "é")
