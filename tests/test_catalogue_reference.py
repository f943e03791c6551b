"""Catalogue fixtures checked against the reference parser (transformers 5.25.0).

Comes in: every ``tests/fixtures/catalogue/<family>.json`` (cases whose ``expected`` message was
written by hand from the family's documented output format), the family's response template
``templates/<family>.json`` and its demo sample ``samples/<family>.json``.

Goes out: pytest results only; nothing is written.

Guaranteed when green:
- each fixture is well formed and names a template and a sample that exist;
- each template loads in the reference and keeps its region delimiters DFA-friendly (no
  look-around, back-references, inline flags, atomic groups or possessive quantifiers) unless the
  fixture records a ``non_dfa_reason``;
- for every case, ``parse_response(text, template, prefix=..., tools=...)`` returns exactly the
  expected message: same keys, same values and the same Python types all the way down (``1``,
  ``1.0`` and ``True`` are told apart);
- streaming the same text to ``ResponseParser`` gives that same message, whether it is cut anywhere
  inside a delimiter or into arbitrary chunks;
- every sample parses without error into a message with content or tool calls.

The reference-backed tests skip when transformers is not importable; the structural ones always run.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import regex
import support
from hypothesis import given, settings
from hypothesis import strategies as st
from support import REPO, TEMPLATE_DIR, assert_same, builtin_template, needs_reference

try:
    from transformers.utils.chat_parsing import ResponseParser, parse_response
    from transformers.utils.chat_parsing.response_templates import load_response_template
except ImportError:  # the reference is a test-only dependency
    ResponseParser = parse_response = load_response_template = None

FIXTURE_DIR = support.FIXTURE_DIR / "catalogue"
SAMPLE_DIR = REPO / "samples"

FIXTURE_KEYS = {"family", "title", "sources", "covers", "cases"}
OPTIONAL_FIXTURE_KEYS = {"non_dfa_reason"}
CASE_KEYS = {"name", "prefix", "text", "expected"}
OPTIONAL_CASE_KEYS = {"tools"}
MIN_CASES = 5

# Regex constructs a DFA cannot run; each is named so a failure says which one was found.
NON_DFA_CONSTRUCTS = {
    "look-ahead": r"\(\?[=!]",
    "look-behind": r"\(\?<[=!]",
    "numbered back-reference": r"\\[1-9]",
    "named back-reference": r"\(\?P=|\\g<",
    "inline flags": r"\(\?[aiLmsux-]+[:)]",
    "atomic group": r"\(\?>",
    "conditional group": r"\(\?\(",
    "possessive quantifier": r"(?<!\\)[*+?}]\+",
}
PATTERN_KEYS = ("open_pattern", "close_pattern")


def _read_json(path: Path) -> tuple[Any, str | None]:
    try:
        return json.loads(path.read_text(encoding="utf-8")), None
    except (OSError, ValueError) as error:
        return None, f"{path.name}: {error}"


FIXTURE_PATHS = sorted(FIXTURE_DIR.glob("*.json"))
FIXTURES = {path.stem: _read_json(path) for path in FIXTURE_PATHS}


def _cases() -> list[tuple[str, dict]]:
    """(family, case) for every readable fixture; the shape test reports malformed ones."""
    found = []
    for family, (fixture, _) in FIXTURES.items():
        if isinstance(fixture, dict) and isinstance(fixture.get("cases"), list):
            found.extend((family, case) for case in fixture["cases"] if isinstance(case, dict))
    return found


ALL_CASES = _cases()
CASE_IDS = [f"{family}/{case.get('name', '?')}" for family, case in ALL_CASES]


def _parse_whole(family: str, case: dict) -> dict:
    return parse_response(
        case["text"],
        builtin_template(family),
        prefix=case["prefix"],
        tools=copy.deepcopy(case.get("tools")),
    )


# ------------------------------------------------------------- structure (no reference needed)


def test_catalogue_is_not_empty():
    assert FIXTURE_PATHS, f"no fixtures found under {FIXTURE_DIR}"


@pytest.mark.parametrize("family", sorted(FIXTURES))
def test_fixture_is_well_formed(family):
    fixture, error = FIXTURES[family]
    assert error is None, error
    assert isinstance(fixture, dict), f"{family}: fixture must be a JSON object"
    missing = FIXTURE_KEYS - set(fixture)
    unknown = set(fixture) - FIXTURE_KEYS - OPTIONAL_FIXTURE_KEYS
    assert not missing, f"{family}: fixture misses keys {sorted(missing)}"
    assert not unknown, f"{family}: fixture has unknown keys {sorted(unknown)}"
    assert (
        fixture["family"] == family
    ), f"fixture file {family}.json declares family {fixture['family']!r}"
    assert (
        family.isidentifier() and family == family.lower()
    ), f"family {family!r} must be a lowercase identifier"
    assert isinstance(fixture["title"], str) and fixture["title"].strip(), f"{family}: empty title"
    assert (
        isinstance(fixture["covers"], str) and fixture["covers"].strip()
    ), f"{family}: empty covers"
    sources = fixture["sources"]
    assert isinstance(sources, list) and sources, f"{family}: sources must be a non-empty list"
    assert all(
        isinstance(source, str) and source.strip() for source in sources
    ), f"{family}: blank source entry"

    cases = fixture["cases"]
    assert (
        isinstance(cases, list) and len(cases) >= MIN_CASES
    ), f"{family}: needs at least {MIN_CASES} cases"
    names = [case.get("name") for case in cases]
    assert len(set(names)) == len(
        names
    ), f"{family}: duplicate case names {sorted(n for n in names if names.count(n) > 1)}"
    for case in cases:
        label = f"{family}/{case.get('name', '?')}"
        assert not CASE_KEYS - set(case), f"{label}: misses keys {sorted(CASE_KEYS - set(case))}"
        assert (
            not set(case) - CASE_KEYS - OPTIONAL_CASE_KEYS
        ), f"{label}: unknown keys {sorted(set(case) - CASE_KEYS - OPTIONAL_CASE_KEYS)}"
        assert isinstance(case["prefix"], str) and isinstance(
            case["text"], str
        ), f"{label}: prefix/text must be strings"
        assert case["text"], f"{label}: empty text"
        assert case.get("tools") is None or isinstance(
            case["tools"], list
        ), f"{label}: tools must be a list"
        assert isinstance(case["expected"], dict), f"{label}: expected must be a message object"
        assert (
            case["expected"].get("role") == "assistant"
        ), f"{label}: expected message must have role 'assistant'"

    assert (
        TEMPLATE_DIR / f"{family}.json"
    ).is_file(), f"{family}: templates/{family}.json is missing"
    sample, sample_error = _read_json(SAMPLE_DIR / f"{family}.json")
    assert sample_error is None, f"{family}: samples/{family}.json: {sample_error}"
    assert isinstance(sample, dict) and set(sample) == {
        "prefix",
        "text",
        "tools",
    }, f"{family}: sample must have exactly the keys prefix, text, tools"
    assert isinstance(sample["prefix"], str) and isinstance(sample["text"], str) and sample["text"]
    assert sample["tools"] is None or isinstance(sample["tools"], list)


@pytest.mark.parametrize("family", sorted(FIXTURES))
def test_region_delimiters_are_dfa_friendly(family):
    """Open/close patterns avoid constructs a DFA cannot run, unless the fixture says why."""
    fixture, error = FIXTURES[family]
    if error is None and isinstance(fixture, dict) and fixture.get("non_dfa_reason"):
        pytest.skip(f"{family} declares non_dfa_reason: {fixture['non_dfa_reason']}")
    template = builtin_template(family)
    patterns = (
        [("start_anchor_pattern", template["start_anchor_pattern"])]
        if "start_anchor_pattern" in template
        else []
    )
    for field_name, field in template.get("fields", {}).items():
        patterns.extend((f"{field_name}.{key}", field[key]) for key in PATTERN_KEYS if key in field)
    for where, pattern in patterns:
        for construct, detector in NON_DFA_CONSTRUCTS.items():
            found = regex.search(detector, pattern)
            assert found is None, (
                f"{family}: {where} uses a {construct} ({found.group(0)!r}) in {pattern!r}; "
                "rewrite it with literals, classes and alternation, or record a non_dfa_reason "
                "in the fixture"
            )


@pytest.mark.parametrize(
    ("pattern", "construct"),
    [
        (r"foo(?=bar)", "look-ahead"),
        (r"(?<!x)y", "look-behind"),
        (r"(a)\1", "numbered back-reference"),
        (r"(?P<q>a)(?P=q)", "named back-reference"),
        (r"(?i)tool", "inline flags"),
        (r"(?>ab)", "atomic group"),
        (r"(?(1)a|b)", "conditional group"),
        (r"a++", "possessive quantifier"),
    ],
)
def test_dfa_detectors_flag_each_construct(pattern, construct):
    assert regex.search(NON_DFA_CONSTRUCTS[construct], pattern)


@pytest.mark.parametrize(
    "pattern",
    [r"\s*<tool_call>", r"<think>|^", r"\s*```\s*<x>(?:\s*</y>)?", r"(?P<name>[^\s<]+)", r"a\+b"],
)
def test_dfa_detectors_accept_plain_patterns(pattern):
    assert not any(regex.search(detector, pattern) for detector in NON_DFA_CONSTRUCTS.values())


def test_assert_same_tells_bool_int_and_float_apart():
    with pytest.raises(AssertionError, match="expected int"):
        assert_same({"a": [1]}, {"a": [True]})
    with pytest.raises(AssertionError, match=r"\['a'\]\[0\]"):
        assert_same({"a": [1]}, {"a": [1.0]})
    assert_same({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]})


# ------------------------------------------------------------- reference-backed checks


@needs_reference
@pytest.mark.parametrize("family", sorted(FIXTURES))
def test_template_loads_in_reference(family):
    load_response_template(builtin_template(family))


@needs_reference
@pytest.mark.parametrize(("family", "case"), ALL_CASES, ids=CASE_IDS)
def test_case_matches_reference(family, case):
    assert_same(case["expected"], _parse_whole(family, case), f"{family}/{case['name']}")


def _delimiter_regexes(template: dict) -> list:
    """Every anchor, open and close of a template as a compiled regex (literals escaped)."""
    found = []

    def add(literal_or_list: Any = None, pattern: str | None = None) -> None:
        if pattern is not None:
            found.append(regex.compile(pattern, regex.DOTALL))
        elif literal_or_list is not None:
            literals = [literal_or_list] if isinstance(literal_or_list, str) else literal_or_list
            found.extend(regex.compile(regex.escape(literal)) for literal in literals)

    add(template.get("start_anchor"), template.get("start_anchor_pattern"))
    for field in template["fields"].values():
        add(field.get("open"), field.get("open_pattern"))
        add(field.get("close"), field.get("close_pattern"))
    return found


def _cuts_inside_delimiters(template: dict, text: str) -> list[int]:
    """Every position from the start to the end of every delimiter occurrence in the text."""
    cuts = set()
    for pattern in _delimiter_regexes(template):
        for match in pattern.finditer(text):
            cuts.update(range(match.start(), match.end() + 1))
    return sorted(cut for cut in cuts if 0 < cut < len(text))


def _parse_in_pieces(family: str, case: dict, pieces: list[str]) -> dict:
    parser = ResponseParser(
        builtin_template(family), prefix=case["prefix"], tools=copy.deepcopy(case.get("tools"))
    )
    for piece in pieces:
        parser.feed(piece)
    message, _ = parser.finalize()
    return message


@needs_reference
@pytest.mark.parametrize(("family", "case"), ALL_CASES, ids=CASE_IDS)
def test_split_inside_any_delimiter_matches_expected(family, case):
    """A stream cut anywhere inside a delimiter gives the hand-written message too.

    The reference commits a complete match that ends before the buffer edge, so an optional tail on
    a delimiter (e.g. ``</x>(?:\\s*</section>)?``) fires early when a chunk ends inside the tail;
    this catches such templates.
    """
    text = case["text"]
    for cut in _cuts_inside_delimiters(builtin_template(family), text):
        message = _parse_in_pieces(family, case, [text[:cut], text[cut:]])
        assert_same(
            case["expected"],
            message,
            f"{family}/{case['name']} split at {cut} ({text[:cut][-12:]!r}|{text[cut:][:12]!r})",
        )


@needs_reference
@pytest.mark.parametrize("family", sorted(FIXTURES))
@settings(max_examples=25, derandomize=True, deadline=None)
@given(data=st.data())
def test_many_chunks_match_expected(family, data):
    """Feeding a case's text in arbitrary chunks yields its hand-written message."""
    cases = [case for case_family, case in ALL_CASES if case_family == family]
    if not cases:
        pytest.skip(f"{family} has no readable cases")
    case = data.draw(st.sampled_from(cases), label="case")
    text = case["text"]
    cuts = sorted(
        data.draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=8), label="cuts")
    )
    pieces = [text[start:end] for start, end in zip([0, *cuts], [*cuts, len(text)])]
    assert_same(
        case["expected"],
        _parse_in_pieces(family, case, pieces),
        f"{family}/{case['name']} in chunks {pieces!r}",
    )


@needs_reference
@pytest.mark.parametrize("family", sorted(FIXTURES))
def test_sample_parses_in_reference(family):
    sample, error = _read_json(SAMPLE_DIR / f"{family}.json")
    assert error is None, error
    message = parse_response(
        sample["text"], builtin_template(family), prefix=sample["prefix"], tools=sample["tools"]
    )
    assert message.get("role") == "assistant"
    assert message.get("content") or message.get(
        "tool_calls"
    ), f"{family}: sample parses to no content and no tool calls"
