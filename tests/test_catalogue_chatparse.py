"""Every catalogue fixture through the committed generated module, whole and chunked.

The expected messages were written by hand from each family's format (tests/fixtures/catalogue);
here the committed `chatparse.generated.<family>` module must return exactly them, fed whole, one
character at a time and in seeded random chunks, and its merged event stream must equal the
reference's recorded one-shot stream (tests/fixtures/reference_outcomes.json), and the live
reference's when it is installed.
"""

from __future__ import annotations

import pytest
from support import (
    assert_same,
    builtin_template,
    expected_outcomes,
    generated_module,
    run_parser,
    same_outcome,
    short_chunks,
)
from test_catalogue_reference import ALL_CASES, CASE_IDS


def _chunkings(text: str, seed: int) -> dict[str, list[str]]:
    return {"whole": [text], "chars": list(text), "random": short_chunks(text, seed)}


@pytest.mark.parametrize("family, case", ALL_CASES, ids=CASE_IDS)
def test_generated_module_returns_the_expected_message(family, case):
    module = generated_module(family)
    tools = case.get("tools")
    assert_same(
        case["expected"], module.parse_response(case["text"], prefix=case["prefix"], tools=tools)
    )
    for name, chunks in _chunkings(case["text"], seed=len(case["name"])).items():
        outcome = run_parser(lambda: module.ResponseParser(case["prefix"], tools=tools), chunks)
        assert outcome[0] == "ok", (name, outcome)
        assert_same(case["expected"], outcome[1], where=f"message ({name})")
        for source, expected in expected_outcomes(f"catalogue/{family}/{case['name']}"):
            assert same_outcome(outcome, expected), (name, source)


@pytest.mark.parametrize("family", sorted({family for family, _ in ALL_CASES}))
def test_generated_module_embeds_its_template(family):
    assert generated_module(family).TEMPLATE == builtin_template(family)
