"""`re_parts` spells a delimiter pattern for the standard `re` so that it matches exactly as `regex`
does: same span and same named groups, from every start, on texts of the pattern's own chars plus
the ones where the two modules' classes differ (`\\x1c` is `\\s` in `re`, not in `regex`), each
class of the tables spelled from the installed ones as the runtime spells it.
"""

from __future__ import annotations

import itertools
import re

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from test_regex_parse import PATTERNS

from chatparse.compiler.codegen.re_source import NotForRe, re_parts
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


def _pieces(parts) -> tuple:
    """`re_parts` as a generated module declares them: each class of the tables a runtime set."""
    return tuple(part if isinstance(part, str) else concrete(part) for part in parts)


def _reader(pattern: str, parts, aliases) -> Delimiter:
    return Delimiter(
        "test",
        pattern,
        fallback=True,
        has_groups=True,
        groups_parts=_pieces(parts),
        groups_aliases=aliases,
    )


def same_matches(pattern: str, texts) -> None:
    """The spelling matches as `regex` does, from every start, with the same groups (a renamed
    group read back under its name); and the runtime's reader of a match's groups, with the
    spelling the compiler declares for it (`Dfa(groups_parts=)`: a lazy value between two runs
    trimmed; a span of ASCII text read without measuring the tables), reads every match's groups
    as `regex` does."""
    original = regex.compile(pattern, regex.DOTALL)
    node = parse_regex(pattern)
    parts, aliases = re_parts(node)
    whole = _reader(pattern, parts, aliases)
    spelled = whole.groups_reader("é", 0, 1)  # every class spelled from the tables
    reader = _reader(pattern, *re_parts(trim_runs_around_a_lazy_group(node)))
    compared = 0
    for text in texts:
        for pos in range(len(text) + 1):
            a, b = original.match(text, pos), spelled.match(text, pos)
            expected = a and (a.span(), a.groupdict())
            assert (b and (b.span(), whole.group_values(b))) == expected, (pattern, text, pos)
            compared += 1
            if a is None:
                continue
            found = reader.groups_reader(text, a.start(), a.end()).match(text, pos)
            assert (found.span(), reader.group_values(found)) == expected, (pattern, text, pos)
    assert compared


@settings(
    derandomize=True, max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(PATTERNS)
def test_generated_patterns_match_alike_in_re(pattern: str) -> None:
    try:
        regex.compile(pattern, regex.DOTALL)
        re_parts(parse_regex(pattern))
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
    _, aliases = re_parts(parse_regex(HARMONY_OPEN))
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
        re_parts(parse_regex(pattern))


def test_a_renamed_group_does_not_take_an_existing_name():
    parts, aliases = re_parts(parse_regex(r"(?P<n>a)|(?P<n>b)|(?P<n_1>c)"))
    assert aliases == {"n_1_": "n"} and "(?P<n_1>c)" in "".join(parts)
    same_matches(r"(?P<n>a)|(?P<n>b)|(?P<n_1>c)", ["a", "b", "c", "x"])


def test_a_word_boundary_stays_with_regex():
    """`\\b` looks at chars outside the span, whose class only the installed `regex` knows."""
    with pytest.raises(NotForRe, match="word_boundary"):
        re_parts(parse_regex(r"\b(?P<n>\w+)"))


def test_a_class_of_the_tables_is_left_to_the_runtime():
    """`[^\\s<]` holds non-ASCII chars only the installed `regex` knows: a piece of its own, which
    the runtime spells from the tables for a span that is not ASCII, from the ASCII members
    otherwise (a class written out in full stays in the source)."""
    parts, aliases = re_parts(parse_regex(r"(?P<n>[^\s<]+)"))
    assert [type(part) is str for part in parts] == [True, False, True]
    assert all(type(part) is str for part in re_parts(parse_regex(r"(?P<n>[^<\n]+)"))[0])
    reader = _reader(r"(?P<n>[^\s<]+)", parts, aliases)
    for text in ["ab", "é\u3000", "a\x1cb"]:
        found = reader.groups_reader(text, 0, len(text)).match(text)
        expected = regex.match(r"(?P<n>[^\s<]+)", text)
        assert found.span() == expected.span(), text
