"""chatparse against the reference's one-shot result, for every chunking of hand-written cases."""

from __future__ import annotations

import pytest
from cases_stream import CASES, PARTIAL_VS_COMPLETE
import chatparse
from oracle import (
    HAVE_REFERENCE,
    ReferenceParser,
    chatparse_outcome,
    chunkings,
    reference_one_shot,
    run_parser,
    same_outcome,
)

pytestmark = pytest.mark.skipif(not HAVE_REFERENCE, reason="needs transformers==5.23.0 (test extra)")


@pytest.mark.parametrize("case_id, template, prefix, text, tools", CASES, ids=[c[0] for c in CASES])
def test_every_chunking_gives_the_reference_one_shot_result(case_id, template, prefix, text, tools):
    expected = reference_one_shot(template, text, prefix, tools)
    for chunks in chunkings(text, seed=len(case_id)):
        got = chatparse_outcome(template, chunks, prefix, tools)
        assert same_outcome(got, expected), (chunks, got, expected)


def test_reference_streaming_depends_on_chunking_and_chatparse_does_not():
    """STYLE.md section 2: with open_pattern "<tool>|<t" the reference fed one character at a time
    commits "<t" early and puts "ool>x" in the region; its one-shot result is "x"."""
    text = "hi <tool>x</a>"
    one_shot = reference_one_shot(PARTIAL_VS_COMPLETE, text, "")
    char_by_char = run_parser(lambda: ReferenceParser(PARTIAL_VS_COMPLETE, prefix=""), list(text))
    assert one_shot[1]["tool"] == "x"
    assert char_by_char[1]["tool"] == "ool>x"
    ours = chatparse_outcome(PARTIAL_VS_COMPLETE, list(text), "")
    assert same_outcome(ours, one_shot)


def test_zero_width_open_and_close_at_one_position_raise_instead_of_hanging():
    """The reference opens and closes such a region forever (its `_process` never returns);
    chatparse raises ValueError naming the field."""
    template = {"start_anchor": "@", "fields": {"x": {"open_pattern": "^", "close_pattern": "$"}}}
    parser = chatparse.ResponseParser(template, prefix="")
    with pytest.raises(ValueError, match="Field 'x'.*empty string"):
        parser.finalize()


def test_compiler_warns_about_zero_width_open_and_close():
    template = {"start_anchor": "@", "fields": {"x": {"open_pattern": "^", "close_pattern": "$"}}}
    source = chatparse.compile_template(template)
    assert "# warning:" in source and "both match the empty string" in source
