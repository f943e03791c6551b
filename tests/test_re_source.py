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

from chatparse.compiler.re_source import NotForRe, re_source
from chatparse.compiler.regex_parse import UnsupportedRegex, parse_regex

TRICKY = ["x", " ", "\n", "\x1c", "é", "_", "٣"]  # `\w`/`\s`/`\d` disagree between re and regex here


def same_matches(pattern: str, texts) -> None:
    original = regex.compile(pattern, regex.DOTALL)
    spelled = re.compile(re_source(parse_regex(pattern)))
    for text in texts:
        for pos in range(len(text) + 1):
            a, b = original.match(text, pos), spelled.match(text, pos)
            assert (a and (a.span(), a.groupdict())) == (b and (b.span(), b.groupdict())), (pattern, text, pos)


@settings(derandomize=True, max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PATTERNS)
def test_generated_patterns_match_alike_in_re(pattern: str) -> None:
    try:
        regex.compile(pattern, regex.DOTALL)
        re_source(parse_regex(pattern))
    except (regex.error, UnsupportedRegex, NotForRe):
        return
    letters = [ch for ch in "<t/>-]}{é" if ch in pattern][:3] + TRICKY[:5]
    texts = ["".join(chars) for length in range(4) for chars in itertools.product(letters, repeat=length)]
    same_matches(pattern, texts)


@pytest.mark.parametrize(
    "pattern, texts",
    [
        (r"<parameter=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?</parameter>", ["<parameter=a>\nx\n</parameter>", "<parameter=a>x"]),
        (r"\s*<tool_call>\s*<function=(?P<name>[^>\n]+)>", [" \x1c<tool_call>\n<function=f>", "\n<tool_call><function=g h>"]),
        (r"\b(?P<w>\w+)\b", ["é_٣ x", "a\x1cb"]),
        (r"(?P<a>a|ab)(?P<b>c|bcd)(?P<c>d*)", ["abcd", "abcdd"]),
        (r"[-&~\]\\^|]+(?P<e>)|(?:)z", ["&~-]^|\\z", "z"]),
    ],
)
def test_catalogue_shapes_match_alike_in_re(pattern, texts):
    same_matches(pattern, texts)


def test_a_group_name_used_twice_stays_with_regex():
    with pytest.raises(NotForRe, match="name"):
        re_source(parse_regex(r"(?P<name>a)|b(?P<name>c)"))
