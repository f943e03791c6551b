"""chatparse against the reference's one-shot result, for every chunking of hand-written cases."""

from __future__ import annotations

import pytest
from cases_stream import CASES, LOOKAHEAD_OPENS, PARTIAL_VS_COMPLETE
from support import (
    ReferenceParser,
    chatparse_bulk_outcome,
    chatparse_outcome,
    chunkings,
    expected_outcomes,
    needs_reference,
    reference_one_shot,
    run_parser,
    same_outcome,
    without_events,
)

import chatparse


@pytest.mark.parametrize("case_id, template, prefix, text, tools", CASES, ids=[c[0] for c in CASES])
def test_every_chunking_gives_the_reference_one_shot_result(case_id, template, prefix, text, tools):
    """Against the recorded outcome always, and the live reference's when it is installed."""
    for source, expected in expected_outcomes(f"stream/{case_id}"):
        for chunks in chunkings(text, seed=len(case_id)):
            got = chatparse_outcome(template, chunks, prefix, tools)
            assert same_outcome(got, expected), (source, chunks, got, expected)
        bulk = chatparse_bulk_outcome(template, text, prefix, tools)
        assert same_outcome(bulk, without_events(expected)), (source, bulk, expected)


# Where the reference's own streamed result depends on the chunking (README, "The one-shot
# guarantee"): case -> (template, text, field, one-shot value, value when fed one char at a time).
REFERENCE_CHUNKING_DEPENDENT = {
    "partial-vs-complete": (PARTIAL_VS_COMPLETE, "hi <tool>x</a>", "tool", "x", "ool>x"),
    "literal-list-prefix": (
        {
            "start_anchor": "@",
            "fields": {"a": {"open": ["<a", "<ab>"], "close": "</x>"}, "content": {}},
        },
        "<ab>hi</x>",
        "a",
        "hi",
        "b>hi",
    ),
    "negative-lookahead-at-the-edge": (LOOKAHEAD_OPENS, "@@end;x", "content", "@@end;x", "x"),
    "earlier-branch-not-yet-complete": (LOOKAHEAD_OPENS, "<c>12!a</c>", "arg", "a", "12!a"),
}


@needs_reference
@pytest.mark.parametrize("case", sorted(REFERENCE_CHUNKING_DEPENDENT))
def test_reference_streaming_depends_on_chunking_and_chatparse_does_not(case):
    """The reference fed one character at a time disagrees with its own one-shot result (this test
    fails if a reference upgrade fixes that, so the README stays true); chatparse gives the
    one-shot result for every chunking."""
    template, text, field, one_shot_value, char_value = REFERENCE_CHUNKING_DEPENDENT[case]
    one_shot = reference_one_shot(template, text, "")
    char_by_char = run_parser(lambda: ReferenceParser(template, prefix=""), list(text))
    assert one_shot[1][field] == one_shot_value
    assert char_by_char[1][field] == char_value
    for chunks in chunkings(text, seed=7):
        assert same_outcome(chatparse_outcome(template, chunks, ""), one_shot), chunks


@needs_reference
@pytest.mark.parametrize("text", ["first\nsecond", "a\nb\n", "x\n\ny\n\n"])
def test_reference_decides_dollar_at_the_edge_as_one_shot_since_5_24(text):
    """5.23 fed one char at a time committed `$` before the newline that ended its buffer and lost
    the first line ("first\nsecond" gave "second"); 5.24's edge rule holds such a match until the
    text goes on, so its streamed result is the one-shot result, as chatparse's always was."""
    template = {"start_anchor": "@", "fields": {"content": {"close_pattern": "$"}}}
    one_shot = reference_one_shot(template, text, "")
    assert same_outcome(
        run_parser(lambda: ReferenceParser(template, prefix=""), list(text)), one_shot
    )
    for chunks in chunkings(text, seed=7):
        assert same_outcome(chatparse_outcome(template, chunks, ""), one_shot), chunks


@pytest.mark.parametrize(
    "prefix, chunks", [("", ["a"]), ("", ["", "a", "b"]), ("@a", []), ("@", ["a"])]
)
def test_zero_width_open_and_close_at_one_position_raise_instead_of_hanging(prefix, chunks):
    """The reference opens and closes such a region forever (its `_process` never returns) at
    any position before the end of its buffer; chatparse raises ValueError naming the field.
    On an empty text the reference returns {} ("empty-open-and-close-empty-text" in CASES)."""
    template = {
        "start_anchor": "@",
        "fields": {"x": {"open_pattern": "(?:)", "close_pattern": "^"}},
    }
    with pytest.raises(ValueError, match="Field 'x'.*empty string"):
        parser = chatparse.ResponseParser(template, prefix=prefix)
        for chunk in chunks:
            parser.feed(chunk)
        parser.finalize()
    with pytest.raises(ValueError, match="Field 'x'.*empty string"):
        chatparse.parse_response("".join(chunks), template, prefix=prefix)


def test_compiler_warns_about_zero_width_open_and_close():
    template = {"start_anchor": "@", "fields": {"x": {"open_pattern": "^", "close_pattern": "$"}}}
    source = chatparse.compile_template(template)
    assert "# warning:" in source and "both match the empty string" in source


def _emitted_per_feed(parser, chunks):
    """After each feed: {field: all region_chunk text emitted so far}."""
    emitted: dict[str, str] = {}
    for event in parser.initial_events:
        if event["type"] == "region_chunk":
            emitted[event["field"]] = emitted.get(event["field"], "") + event["text"]
    history = []
    for chunk in chunks:
        for event in parser.feed(chunk):
            if event["type"] == "region_chunk":
                emitted[event["field"]] = emitted.get(event["field"], "") + event["text"]
        history.append(dict(emitted))
    parser.finalize()
    return history


@needs_reference
@pytest.mark.parametrize("case_id, template, prefix, text, tools", CASES, ids=[c[0] for c in CASES])
def test_text_is_never_emitted_later_than_the_reference_emits_it(
    case_id, template, prefix, text, tools
):
    """After every feed, each field has received at least the text the reference's streaming
    parser has emitted for it (where the reference's streamed result is its one-shot result;
    where it is not, its early text may be wrong, see REFERENCE_CHUNKING_DEPENDENT)."""
    one_shot = reference_one_shot(template, text, prefix, tools)
    if one_shot[0] != "ok" or template is LOOKAHEAD_OPENS:
        # The reference commits a look-ahead match that more input could undo ("@@e" for
        # `@@(?!end)`): its early text is a guess, right only when the input happens to end.
        return
    for chunks in chunkings(text, seed=len(case_id)):
        if not same_outcome(
            run_parser(lambda: ReferenceParser(template, prefix=prefix, tools=tools), chunks),
            one_shot,
        ):
            continue
        ours = _emitted_per_feed(
            chatparse.ResponseParser(template, prefix=prefix, tools=tools), chunks
        )
        theirs = _emitted_per_feed(ReferenceParser(template, prefix=prefix, tools=tools), chunks)
        for step, (mine, reference) in enumerate(zip(ours, theirs)):
            for field, emitted in reference.items():
                assert mine.get(field, "").startswith(emitted), (
                    case_id,
                    chunks[: step + 1],
                    field,
                    mine,
                    reference,
                )
