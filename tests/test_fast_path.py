"""The generated fast path against the general path, on the same events; and the compile-time
checks that keep a region without one.

A generated `ResponseParser.feed` takes some chunks itself (compiler/planning/fast_path.py) and sends the
rest to `RegionParser.feed`. The general path alone is the same class with `feed` put back to
`RegionParser.feed`. Both must give the same event stream, event for event and unmerged (the fast
path sends one region_chunk per chunk, as the general path does when nothing is held), the same
message and the same error class, for every chunking.
"""

from __future__ import annotations

import importlib
import json
import random
import sys
from pathlib import Path

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import (
    HAVE_REFERENCE,
    REPO,
    ReferenceParser,
    needs_reference,
    reference_one_shot,
    run_parser,
    same_outcome,
)
from support import (
    chunkings as support_chunkings,
)
from test_stream_properties import chunked, templates, texts

import chatparse
from chatparse.compiler.planning.fast_path import plan_region
from chatparse.compiler.automata.region_automaton import build_regions
from chatparse.compiler.frontend.spec import load_spec
from chatparse.runtime.region_parser import RegionParser

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "tests" / "fixtures" / "catalogue"
FAMILIES = sorted(
    path.stem for path in (ROOT / "generated").glob("*.py") if path.stem != "__init__"
)

# Special tokens as servers send them: a bracketed tag, or a `[NAME]` marker.
SPECIAL = regex.compile(r"<[^<>\s]{1,40}>|\[[A-Z_]{2,}\]")


def general_only(parser_class: type) -> type:
    """The same parser with the fast path off: every chunk goes to the general path."""
    return type("GeneralOnly", (parser_class,), {"feed": RegionParser.feed})


def outcome(parser_class: type, prefix: str, chunks: list[str]) -> tuple:
    """("ok", message, raw events per call) or ("error", class name): events unmerged and kept
    per `feed` call, on purpose (a fast path that emitted a char later would differ)."""
    try:
        parser = parser_class(prefix)
        events = [list(parser.initial_events)]
        for chunk in chunks:
            events.append(parser.feed(chunk))
        message, final = parser.finalize()
    except Exception as error:
        return ("error", type(error).__name__)
    return ("ok", message, [*events, final])


def server_chunks(text: str, rng: random.Random, split_specials: bool) -> list[str]:
    """Special tokens whole (or each cut in two), other text in pieces of 1 to 6 chars."""
    chunks: list[str] = []
    last = 0
    for found in [*SPECIAL.finditer(text), None]:
        stop = found.start() if found is not None else len(text)
        while last < stop:
            size = rng.randint(1, 6)
            chunks.append(text[last : min(stop, last + size)])
            last += size
        last = stop
        if found is not None:
            token = found.group()
            if split_specials:
                cut = rng.randint(1, len(token) - 1)
                chunks += [token[:cut], token[cut:]]
            else:
                chunks.append(token)
            last = found.end()
    return chunks


def chunkings(text: str, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    result = [[text], list(text)]
    for _ in range(3):
        cuts = sorted(
            rng.randint(0, len(text)) for _ in range(rng.randint(1, max(1, len(text) // 3)))
        )
        result.append([text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])])
    result += [server_chunks(text, rng, False), server_chunks(text, rng, True)]
    return result


def family_cases(family: str) -> list[tuple[str, str]]:
    path = CATALOGUE / f"{family}.json"
    if not path.exists():
        return []
    cases = json.loads(path.read_text())["cases"]
    return [
        (case.get("prefix") or "", case["text"])
        for case in cases
        if isinstance(case.get("text"), str)
    ]


@pytest.mark.parametrize("family", FAMILIES)
def test_fast_path_gives_the_general_paths_events_on_every_family(family):
    parser_class = importlib.import_module(f"chatparse.generated.{family}").ResponseParser
    general = general_only(parser_class)
    cases = family_cases(family)
    assert cases or family not in {"smollm3", "qwen3"}
    for number, (prefix, text) in enumerate(cases):
        for chunks in chunkings(text, number):
            fast = outcome(parser_class, prefix, chunks)
            assert fast == outcome(general, prefix, chunks), (family, prefix[-40:], chunks)


def calling_the_region_function(parser_class: type) -> type:
    """The same parser whose `feed` calls the current region's fast path function for every
    chunk: no plain chunk is taken by `feed` itself (codegen format 23)."""

    def feed(self, text):
        try:
            return self.fast_feed(self, text)
        except TypeError:
            if isinstance(text, str):
                raise
            return RegionParser.feed(self, text)

    return type("CallingTheRegionFunction", (parser_class,), {"feed": feed})


@pytest.mark.parametrize("family", FAMILIES)
def test_feed_takes_a_plain_chunk_as_the_regions_function_does(family):
    parser_class = importlib.import_module(f"chatparse.generated.{family}").ResponseParser
    called = calling_the_region_function(parser_class)
    for number, (prefix, text) in enumerate(family_cases(family)):
        for chunks in chunkings(text, number):
            assert outcome(parser_class, prefix, chunks) == outcome(called, prefix, chunks)


def test_feed_takes_plain_prose_without_calling_the_regions_function():
    module = importlib.import_module("chatparse.generated.qwen3")
    parser = module.ResponseParser("<|im_start|>assistant\n")
    parser.feed("<think>")
    chunks = ["Let", " me", " think", ".", "</think>", "Sure", ",", " done", "."]
    region_functions = {module.content_feed.__code__, module.reasoning_content_feed.__code__}
    calls = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code in region_functions:
            calls.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        events = [parser.feed(chunk) for chunk in chunks]
    finally:
        sys.setprofile(None)
    assert calls == ["reasoning_content_feed"]  # for "</think>", which it declines
    assert [e["text"] for batch in events for e in batch if e["type"] == "region_chunk"] == [
        "Let",
        " me",
        " think",
        ".",
        "Sure",
        ",",
        " done",
        ".",
    ]


def count_general_calls(parser_class: type, prefix: str, chunks: list[str], monkeypatch) -> int:
    return count_general_calls_on(parser_class(prefix), chunks, monkeypatch)


def _count_general_path(monkeypatch) -> list[int]:
    """Count the chunks the general path reads: `_feed`, its engine, looked up on every call of
    `RegionParser.feed` (a generated `feed` may hold that function itself, in `fast_feed`), and
    `_read_by_run_sets`, its reading in a region whose runs step as one state."""
    calls = [0]
    for name in ("_feed", "_read_by_run_sets"):
        original = getattr(RegionParser, name)

        def counting(self, text, original=original):
            calls[0] += 1
            return original(self, text)

        monkeypatch.setattr(RegionParser, name, counting)
    return calls


def test_the_fast_path_takes_prose_chunks_and_whole_special_tokens(monkeypatch):
    # Written from the format: nothing is held inside prose without "<", and "</think>" and
    # "<tool_call>" arrive whole. A chunk ending in a space is taken and its space kept back (the
    # held tail: `\s*<tool_call>` may still use it), then given back with the next chunk.
    from chatparse.generated import smollm3

    chunks = [
        "<think>",
        "plan",
        " it",
        "</think>",
        "Hello",
        " world",
        ".",
        " ",
        "<tool_call>",
        "{}",
        "</tool_call>",
    ]
    calls = count_general_calls(smollm3.ResponseParser, "", chunks, monkeypatch)
    # None reaches the general path. "<think>" is committed whole although content is not open
    # yet, "Hello" opens content again after the close, " " is held and " <tool_call>" is one
    # match of `\s*<tool_call>`, committed whole; "</tool_call>" is held (`\s*` may still follow
    # it) until finalize.
    assert calls == 0
    general = general_only(smollm3.ResponseParser)
    assert outcome(smollm3.ResponseParser, "", chunks) == outcome(general, "", chunks)


# --- the held tail (runtime/held.py) ------------------------------------------------------------

# Chunkings that end chunks where a delimiter run is alive: a split special token, trailing
# whitespace (ASCII, and non-ASCII spaces whose class the installed `regex` decides), a "<" in
# prose, a text that ends inside a run (finalize gets a held tail), and prefixes that leave a
# region open.
HELD_CASES = [
    (
        "smollm3",
        "",
        [
            "Hi",
            " ",
            "<th",
            "ink>",
            "plan",
            "</th",
            "ink>",
            "ok",
            "  ",
            "\n",
            "<tool_",
            "call>",
            "{}",
        ],
    ),
    ("smollm3", "", ["Hello  ", "world\n", "\n", "<|im_", "end|>"]),
    ("smollm3", "", ["a\u3000", " ", "<tool_call>", '{"name": "f"}', "</tool_call>"]),
    ("smollm3", "", ["a\u00a0 ", "b\u2003", "\u2003", "<|im_end|>"]),
    ("smollm3", "", ["if a < b", " <", "x", " and c <", "= d", "<", "<think>"]),
    ("smollm3", "", ["done  "]),
    ("smollm3", "", ["done <th"]),
    ("smollm3", "", ["x", "<", "<t", "h", "i", "n", "k", ">", "y", "</", "think", ">"]),
    ("smollm3", "<|im_start|>assistant\n<think>", ["plan </", "th", "ink>", "a ", "<|im_end|>"]),
    (
        "smollm3",
        "<|im_start|>assistant\n",
        ["</tool_call", ">", " x", " <tool_call", ">", "{}</tool", "_call>  ", " z"],
    ),
    ("smollm3", "", ["<tool_call>", "{}", "</tool_call>", "\u3000x"]),
    ("smollm3", "", ["<tool_call>", "{}", "</tool_call>", " ", "\u2003", "<|im_end|>"]),
    (
        "smollm3",
        "",
        ["<tool_call>", "{}", "</tool_call>\n<tool_call>", "{}", "</tool_call> x</tool_call>"],
    ),
    # a split token's last piece, then more text in the same chunk
    (
        "smollm3",
        "",
        ["a", "<tool_", "call>\n{", '"name": "f"}', "</tool_call>", "<th", "ink>x<", "/think>y"],
    ),
    ("qwen3", "", ["<th", "ink>\nplan</th", "ink>\n\nok <|im_", "end|>"]),
    # lead chars then a whole token in one chunk: one match
    ("smollm3", "", ["Hi.", "\n<tool_call>", "{}", "</tool_call>", " \n<|im_end|>"]),
    ("smollm3", "", ["Hi. ", "\n<tool_call>", "{}", "</tool_call>", "x <|im_end|>"]),
    ("qwen3", "", ["<think>", "a", "\n</think>", "\n\n<tool_call>", "{}", "</tool_call>"]),
    # longer than HELD_MAX: the general path holds the run
    ("smollm3", "", ["a", *[" "] * 200, "<tool_call>", "{}", "</tool_call>", *["\n"] * 200, "b"]),
    ("qwen3", "", ["<think>", "a <", "/think>", "b\n", "<tool_call>", "{}", "</tool_call>", "\n"]),
    ("qwen3", "<|im_start|>assistant\n<think>\n", ["plan\n\n", "</think", ">\n\n", "answer  "]),
    (
        "gpt_oss",
        "",
        [
            "<|channel|>analysis<|message|>",
            "x <|e",
            "nd|>",
            "<|start|>",
            "assistant",
            "<|channel|>final<|message|>hi ",
        ],
    ),
]


@pytest.mark.parametrize("family, prefix, chunks", HELD_CASES)
def test_the_held_tail_gives_the_general_paths_events(family, prefix, chunks):
    parser_class = importlib.import_module(f"chatparse.generated.{family}").ResponseParser
    assert outcome(parser_class, prefix, chunks) == outcome(
        general_only(parser_class), prefix, chunks
    )
    text = "".join(chunks)
    for size in (1, 2, 3):
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        assert outcome(parser_class, prefix, pieces) == outcome(
            general_only(parser_class), prefix, pieces
        )


def test_the_held_tail_keeps_whitespace_and_split_tokens_off_the_general_path(monkeypatch):
    # Written from the format: a chunk ending in spaces sends the text before them and keeps them
    # back; "<th" then "ink>" is `<think>` split in two, committed whole once both are in.
    from chatparse.generated import smollm3

    chunks = ["Hello", " world  ", "and", " more", "<th", "ink>", "plan", "</th", "ink>"]
    parser = smollm3.ResponseParser("<|im_start|>assistant\n")
    calls = count_general_calls_on(parser, ["Hi", *chunks, " ", "\n", "<tool_call>"], monkeypatch)
    assert calls == 0
    parser = smollm3.ResponseParser("<|im_start|>assistant\n")
    parser.feed("Hi")
    assert parser.feed(" world  ") == [
        {"type": "region_chunk", "field": "content", "text": " world", "dirty": False}
    ]
    assert parser.feed("and")[0]["text"] == "  and"


def test_lead_chars_then_a_whole_token_stay_off_the_general_path(monkeypatch):
    # A detokenizer may send "\n" and the special token after it as one delta.
    from chatparse.generated import smollm3

    chunks = ["Hi.", "\n<tool_call>", '{"name": "f", "arguments": {}}', "</tool_call>"]
    parser = smollm3.ResponseParser("<|im_start|>assistant\n")
    assert count_general_calls_on(parser, chunks, monkeypatch) == 0
    parser = smollm3.ResponseParser("<|im_start|>assistant\n")
    parser.feed("Hi.")
    assert parser.feed("\n<tool_call>") == [
        {"type": "region_close", "field": "content", "value": "Hi."},
        {"type": "region_open", "field": "tool_calls"},
    ]


def count_general_calls_on(parser, chunks: list[str], monkeypatch) -> int:
    calls = _count_general_path(monkeypatch)
    for chunk in chunks:
        parser.feed(chunk)
    monkeypatch.undo()
    return calls[0]


@pytest.mark.parametrize(
    "after", ["<|im_end|>", "Done", "\x85<|im_end|>", "\u3000x", " \n", "", "<tool_call>\n{}"]
)
def test_a_held_close_and_its_run_are_committed_by_the_next_chunk_as_the_general_path_would(
    after, monkeypatch
):
    # qwen3's call close `</tool_call>\s*` is held while its run may grow. A chunk that begins
    # with an ASCII char no run takes ends it: the close is committed, and the chunk read on its
    # own. A non-ASCII first char may be a space under the installed tables (\x85 is for
    # `regex`): the general path decides.
    from chatparse.generated import qwen3

    prefix = "<|im_start|>assistant\n"
    chunks = ["<tool_call>", '\n{"name": "f", "arguments": {"a": 1}}\n', "</tool_call>", after]
    assert outcome(qwen3.ResponseParser, prefix, chunks) == outcome(
        general_only(qwen3.ResponseParser), prefix, chunks
    )
    if HAVE_REFERENCE:
        assert same_outcome(
            run_parser(lambda: qwen3.ResponseParser(prefix), chunks),
            reference_one_shot(qwen3.TEMPLATE, "".join(chunks), prefix),
        )
    parser = qwen3.ResponseParser(prefix)
    for chunk in chunks[:-1]:
        parser.feed(chunk)
    assert parser._held == "</tool_call>"
    if after[:1] in ("<", "D"):
        assert count_general_calls_on(parser, [after], monkeypatch) == 0


@pytest.mark.parametrize("family", ["cohere_command_a", "gpt_oss"])
def test_the_null_sink_commits_a_whole_delimiter_as_the_general_path_would(family, monkeypatch):
    # Cohere's and harmony's opens are watched in the null sink, which streams nothing and has no
    # fast path function: a chunk that is exactly one of them (`Region.whole`) is committed by
    # `RegionParser.fast_sink`, without the general path; any other chunk goes to it.
    module = importlib.import_module(f"chatparse.generated.{family}")
    parser_class = module.ResponseParser
    sample = json.loads((ROOT / "samples" / f"{family}.json").read_text(encoding="utf-8"))
    prefix, text = sample["prefix"], sample["text"]
    home = parser_class.home.after_start or parser_class.home
    assert home.field is None and home.whole
    general = general_only(parser_class)
    for number, chunks in enumerate(chunkings(text, seed=7)):
        assert outcome(parser_class, prefix, chunks) == outcome(general, prefix, chunks), chunks
        if HAVE_REFERENCE and number < 3:
            assert same_outcome(
                run_parser(lambda: parser_class(prefix), chunks),
                reference_one_shot(module.TEMPLATE, text, prefix),
            )
    token = next(iter(home.whole))
    parser = parser_class(prefix)
    assert parser.fast_feed == RegionParser.fast_sink
    assert count_general_calls_on(parser, [token], monkeypatch) == 0
    assert parser.region_opened  # the token opened its region


def test_held_tail_cut_is_the_start_of_the_earliest_live_run():
    from chatparse.runtime import HeldTail

    # Written from the forms: `\s*<a>`, `<bc>`, `</x>\s*`.
    held = HeldTail((" \n", ("<a>",), " \n"), ("", ("<bc>",), None), ("", ("</x>",), None))
    assert held.cut("text") == 4
    assert held.cut("text  ") == 4
    assert held.cut("text  <") == 4
    assert held.cut("text <b") == 5  # "<b" only `<bc>` may still use; the space is free
    assert held.cut("text </") == 5
    assert held.cut("a <x") == 4  # no run is alive
    assert held.cut("<a>") == -1 and held.cut("x</x>") == -1  # a match: the general path
    assert held.cut("\u3000 ") == -1  # is U+3000 a lead char? the installed tables decide
    assert held.cut("\u3000<b") == 1  # `<bc>` has no lead run


def test_held_tail_plan_joins_only_where_one_match_is_certain():
    """What a watch declares a held tail joins over (written from the rule in its docstring):
    its lead chars less every char a watched literal starts with, for a literal form whose
    literals no other watch has; the trail only for a region of one literal."""
    from chatparse.compiler.planning.fast_path import held_tail_plan

    lead = " \n<"
    runs = ((" \n", ("<a>",)), (lead, ("<b>", "<c>")), ("", ("</x>",)))
    joins, trail = held_tail_plan(runs, (True, True, True), "\t ")
    assert joins == (" \n", " \n", None) and trail is None  # "<" starts a literal; no lead
    joins, _ = held_tail_plan(runs, (True, False, True), None)
    assert joins == (" \n", None, None)  # a Dfa's match may need more than its literal
    shared = ((" ", ("<a>",)), (" ", ("<a>", "<b>")))
    assert held_tail_plan(shared, (True, True), None)[0] == (None, None)
    assert held_tail_plan(((" ", ("</x>",)),), (True,), "\t ") == ((" ",), "\t ")
    assert held_tail_plan((("", ("</x>", "</y>")),), (True,), "\t ")[1] is None


@settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    family=st.sampled_from(
        ["smollm3", "qwen3", "hermes", "gpt_oss", "cohere_command_a", "qwen3_coder", "seed_oss"]
    ),
    pieces=st.lists(
        st.sampled_from(
            [
                "a",
                " ",
                "\n",
                "  ",
                "<",
                "/",
                "<th",
                "ink>",
                "</th",
                "think>",
                "<think>",
                "</think>",
                "<tool_call>",
                "</tool_call>",
                "{}",
                "<|im_end|>",
                "<|im_",
                "end|>",
                "\u3000",
                "\u00a0",
                "é",
                "<|channel|>",
                "final",
                "<|message|>",
                "<|end|>",
                "<|",
                "<function=",
                "f>",
                "<seed:",
                "tool_call>",
            ]
        ),
        max_size=24,
    ),
    data=st.data(),
)
def test_held_tails_give_the_general_paths_events_on_random_chunkings(family, pieces, data):
    parser_class = importlib.import_module(f"chatparse.generated.{family}").ResponseParser
    general = general_only(parser_class)
    text = "".join(pieces)
    prefix = data.draw(
        st.sampled_from(["", "<|im_start|>assistant\n", "<|im_start|>assistant\n<think>"])
    )
    for chunks in (pieces, data.draw(chunked(text)), list(text)):
        assert outcome(parser_class, prefix, chunks) == outcome(general, prefix, chunks), chunks


@settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    template=templates(),
    text=texts(),
    prefix=st.sampled_from(["", "@@", "x@@<a>", "@@<t"]),
    data=st.data(),
)
def test_fast_path_gives_the_general_paths_events_on_random_templates(template, text, prefix, data):
    try:
        module = chatparse.load_module(template)
    except Exception:
        return  # the template is refused at compile time: no parser to compare
    parser_class = module.ResponseParser
    general = general_only(parser_class)
    pieces = [text, "plain", "<a>", "</a>", " ", "<t>"]
    for chunks in (
        [text],
        list(text),
        data.draw(chunked(text)),
        pieces,
        data.draw(st.lists(st.sampled_from(pieces))),
    ):
        assert outcome(parser_class, prefix, chunks) == outcome(general, prefix, chunks), chunks


# --- the compile-time checks ---------------------------------------------------------------------


def plans(fields: dict) -> dict:
    automaton = build_regions(load_spec({"start_anchor": "@@", "fields": fields}))
    return {plan.field: plan for plan in map(plan_region, (automaton.home, *automaton.regions))}


@pytest.mark.parametrize(
    "pattern, reason",
    [
        (r"\b<a>", "starts differently"),
        (r"<a>$", "assertion"),
        (r"<a>\Z", "assertion"),
        (r"<a>(?=b)b", "look-ahead before its end"),  # a look-ahead that can kill a run early
        (r"(?:<a>(?=b)|x)y", "look-ahead before its end"),
        (r"\s*?<a>(?=b)", "lazy loop"),  # `regex` reports partial matches no text completes
        (r"(<a>)(?=b)\1", "falls back"),  # a back-reference: no relaxed pattern
        (r"(?<=x)<a>", "falls back"),
        # (`^<a>(?=b)` alone leaves the watch after position 0: its relaxed form matches nothing
        # there, test_a_fallback_that_needs_position_0_leaves_the_watch_after_it)
        (r"(?:^|x)<a>(?=b)", "without its look-ahead starts differently"),
        (r"(?:<a>$|<b>)(?=c)", "without its look-ahead holds an assertion"),
        # (`(?=b)` is planned with its look-ahead consuming, as granite_20b_fc's close: a
        # look-ahead that can match empty has no useful one)
        (r"(?=b|)", "without its look-ahead can match the empty string"),
        (r"<a>|", "empty string"),
        (r"\s*\w+", "after a named class"),
        (r"[^x]<a>", "any of"),
        (r"[a-z]+<a>", "any of"),
        (r"\s+\w", "named class"),
    ],
)
def test_a_region_whose_delimiter_breaks_an_assumption_gets_no_fast_path(pattern, reason):
    found = plans({"a": {"open": "<a>", "close": "</a>"}, "content": {"close_pattern": pattern}})
    assert found["content"].refused is not None and reason in found["content"].refused
    assert found["a"].refused is None  # the other region keeps its fast path
    # and the generated module says why, and has no fast path function for that region
    source = chatparse.compile_template(
        {
            "start_anchor": "@@",
            "fields": {
                "a": {"open": "<a>", "close": "</a>"},
                "content": {"close_pattern": pattern},
            },
        }
    )
    assert "content: no fast path:" in source
    assert "def content_feed(" not in source and "def a_feed(" in source


@pytest.mark.parametrize(
    "pattern, watched",
    [(r"^<a>", ("<a>",)), (r"(?:^|\n)<b>", ("<a>", "\n<b>")), (r"<b>|^", ("<a>", "<b>"))],
)
def test_a_caret_delimiter_gets_a_fast_path_from_position_1_on(pattern, watched):
    # `^` holds at buffer position 0 only, so the region is planned in its after-start form:
    # `^<a>` can match nowhere else and drops out of the watch, the others lose their `^` branch.
    fields = {"a": {"open": "<a>", "close": "</a>"}, "content": {"close_pattern": pattern}}
    automaton = build_regions(load_spec({"start_anchor": "@@", "fields": fields}))
    later = automaton.home.after_start
    assert later is not None and automaton.regions[0].after_start is None
    assert [dfa_search_literal(w.delimiter.dfa) for w in later.watch] == list(watched)
    plan = plan_region(automaton.home)
    assert plan.refused is None and plan.after_start
    source = chatparse.compile_template({"start_anchor": "@@", "fields": fields})
    assert "def content_feed(" in source and "after_start=Region(" in source
    assert "content (from position 1 on, where `^` cannot match)" in source


def dfa_search_literal(dfa) -> str:
    """The one string a literal DFA matches (the after-start forms above are literals)."""
    from chatparse.compiler.planning.analysis import LITERAL, analyse

    form = analyse(dfa)
    assert form.kind == LITERAL, form
    return form.literals[0]


def test_the_null_sink_gets_no_fast_path():
    found = plans({"a": {"open": "<a>", "close": "</a>"}})
    assert found[None].refused is not None and found["a"].refused is None


def test_a_lead_run_gives_a_tail_check_and_literal_heads_the_stoppers():
    plan = plans({"a": {"open": "<a>"}, "content": {"close_pattern": r"\s*\[END\]"}})["content"]
    assert set(plan.stoppers) == {"<", "["}
    assert set(plan.tail_lead) == set(" \t\n\r\x0b\x0c") and plan.tail_ascii
    plain = plans({"a": {"open": "<a>", "close": "</a>"}})["a"]
    assert plain.stoppers == "<" and plain.tail_lead == "" and not plain.tail_ascii


@pytest.mark.parametrize(
    "close, open_, lead",
    [
        # Written from HeldTail.cut's rule for a chunk without stoppers: it holds from where the
        # trailing run of each delimiter's lead chars starts, the earliest over them.
        (r"\s*\[END\]", r"\s*<a>", " \t\n\r\x0b\x0c"),  # one lead for both: rstrip decides
        (r"\s*\[END\]", "<a>", " \t\n\r\x0b\x0c"),  # a delimiter without a lead run
        (r" *\[END\]", r"\s*<a>", ""),  # two leads: a trailing "\t " holds from the tab
        ("[END]", "<a>", ""),  # no lead run: nothing to hold at the end of such a chunk
    ],
)
def test_a_region_holds_one_trailing_lead_run_inline_only_when_cut_comes_down_to_it(
    close, open_, lead
):
    fields = {"a": {"open_pattern": open_, "close": "</a>"}, "content": {"close_pattern": close}}
    plan = plans(fields)["content"]
    assert plan.held_refused is None
    assert set(plan.lead_run) == set(lead)


def test_the_inline_lead_run_holds_what_the_held_tail_would(monkeypatch):
    # smollm3's content watches `\s*<tool_call>` and `\s*<\|im_end\|>`: a chunk ending in spaces
    # holds them without asking HeldTail.cut; a non-ASCII char before them is asked of the
    # installed tables (`CONTENT_ENDS`): one that `\s` takes (U+3000) sends the chunk to the
    # general path, any other (é) ends the run as an ASCII letter would.
    from chatparse.generated import smollm3
    from chatparse.runtime.held import HeldTail

    assert smollm3.CONTENT_LEAD == "\t\n\x0b\x0c\r "

    def refuse(self, text):
        raise AssertionError(f"HeldTail.cut asked for {text!r}")

    prefix = "<|im_start|>assistant\n"
    chunks = ["Hi", " there \n", "\t", "x  ", "caf\u00e9 ", "\u3000 ", "end"]
    expected = outcome(general_only(smollm3.ResponseParser), prefix, chunks)
    monkeypatch.setattr(HeldTail, "cut", refuse)
    assert outcome(smollm3.ResponseParser, prefix, chunks) == expected
    parser = smollm3.ResponseParser(prefix)
    parser.feed("Hi")
    assert parser.feed(" there \n") == [
        {"type": "region_chunk", "field": "content", "text": " there", "dirty": False}
    ]
    assert parser._held == " \n" and parser.feed("\t") == [] and parser._held == " \n\t"
    assert count_general_calls_on(parser, ["x  "], monkeypatch) == 0
    assert count_general_calls_on(parser, ["caf\u00e9 "], monkeypatch) == 0
    assert count_general_calls_on(parser, ["\u4f60\u597d"], monkeypatch) == 0
    assert count_general_calls_on(parser, ["x\u3000 "], monkeypatch) == 1


@pytest.mark.parametrize("family", ["qwen3", "smollm3", "hermes", "qwen3_coder"])
def test_text_in_any_script_stays_on_the_fast_path(family, monkeypatch):
    # A chunk ending in a non-ASCII char went to the general path (some 3 us, 20x the lower
    # bound, for every chunk of Chinese text) because `\s`, which a close's lead run loops on,
    # has non-ASCII members that the installed `regex` decides. `X_ENDS` asks those tables per
    # char: only one `\s` takes (U+3000, U+00A0) leaves the fast path. The events are the
    # general path's, and the reference's.
    module = importlib.import_module(f"chatparse.generated.{family}")
    prefix = "<|im_start|>assistant\n"
    chunks = [
        "\u4f60\u597d",
        "\uff0c\u4e16\u754c",
        " caf\u00e9",
        "\u3000",
        "Z\u00fcrich\u00a0",
        "\u00e0",
    ]
    expected = outcome(general_only(module.ResponseParser), prefix, chunks)
    assert outcome(module.ResponseParser, prefix, chunks) == expected
    if HAVE_REFERENCE:
        text = "".join(chunks)
        assert_fast_is_general_and_reference(module, prefix, text, 0)
    parser = module.ResponseParser(prefix)
    parser.feed("x")
    assert count_general_calls_on(parser, ["\u4f60\u597d", "\uff01", "caf\u00e9"], monkeypatch) == 0
    assert count_general_calls_on(parser, ["a\u3000"], monkeypatch) == 1


def test_whole_chunks_are_settled_matches_that_no_rival_could_take():
    home = plans(
        {
            "a": {"open": "<think>"},
            "b": {"open": ["<t", "<x>"]},
            "content": {"close_pattern": r"\s*<end>"},
        }
    )["content"]
    whole = {literal: plan_watch for literal, plan_watch in home.whole}
    watch = home.watch
    assert {literal: watch[index] for literal, index in whole.items()} == {
        "<think>": "open a",  # "<t" matches a shorter prefix of it: the longer one wins
        "<x>": "open b",  # not "<t": after it `<think>` is still alive, the general path holds
        "<end>": "close content",
    }
    # A match that may still grow (`\s*` after it) or a delimiter with named groups: no entry.
    grows = plans(
        {
            "a": {"open": "<a>", "close_pattern": r"</a>\s*"},
            "g": {"open_pattern": r"<g(?P<n>x)>", "transform": {"n": "{n}"}},
        }
    )
    assert grows["a"].whole == ()
    assert "<gx>" not in dict(grows[None].whole)
    # "<ab>" is a match of both: not provably one of them, so no entry.
    tie = plans({"a": {"open": "<ab>"}, "b": {"open_pattern": r"<a[b]>"}})[None]
    assert "<ab>" not in dict(tie.whole)


def test_a_token_written_with_a_small_class_is_a_whole_chunk_of_each_member(monkeypatch):
    # Llama's `<|eot_id|>` and `<|eom_id|>` are written `<\|eo[mt]_id\|>`: a server sends each
    # as one token, which is a settled match of its own. A class of more chars branches no
    # literal path.
    home = plans(
        {
            "a": {"open": "<a>"},
            "content": {"close_pattern": r"\s*<\|eo[mt]_id\|>"},
            "b": {"open_pattern": r"<b[xyz0-9]>"},
        }
    )["content"]
    whole = dict(home.whole)
    assert {"<|eom_id|>", "<|eot_id|>", "<a>"} <= set(whole)
    assert not any(literal.startswith("<b") for literal in whole)
    # functionary's: committed by the fast path, as the general path would.
    from chatparse.generated import functionary_v31

    parser_class = functionary_v31.ResponseParser
    assert {"<|eom_id|>", "<|eot_id|>"} <= set(parser_class.home.whole)
    for token in ("<|eom_id|>", "<|eot_id|>"):
        chunks = ["Sure", ".", token, "after"]
        assert count_general_calls(parser_class, "", chunks, monkeypatch) == 0
        monkeypatch.undo()
        fast = outcome(parser_class, "", chunks)
        assert fast == outcome(general_only(parser_class), "", chunks)
        if HAVE_REFERENCE:
            expected = reference_one_shot(parser_class.template, "".join(chunks), "")
            assert same_outcome(fast[:2], expected[:2]), (fast, expected)


def test_plans_are_the_same_whatever_the_tables():
    # A non-ASCII literal next to `\s*`: whether "\u3000" is a space is the installed regex's to
    # decide, so it is never in a whole chunk nor ruled out as a lead char at the tail.
    plan = plans({"a": {"open_pattern": "\\s*\u3000<a>"}, "content": {}})["content"]
    assert plan.tail_ascii
    assert not any("\u3000" in literal for literal, _ in plan.whole)


# Found by test_lint's hostile templates: planning the fast path of this template's regions took
# minutes (each class's code points were recomputed for every edge of the whole-chunk search).
HOSTILE_PLAN = {
    "fields": {
        '"\n>{% raw %}': {"open_pattern": "'''{\n", "close_pattern": 'é\ud800a\udfff"\\s*'},
        "{": {
            "open": '\ud800"',
            "content_args": {"'#{'{content}\"": '\\>"""<\udfff"'},
            "transform": "''''\"\"\"",
        },
        "content": {},
    },
    "start_anchor_pattern": '"\\\r\\\n"',
}


def test_planning_a_hostile_template_does_not_hang():
    """A hang detector, not a timing test: the compile takes about a second; before the fix it
    took minutes. A subprocess, so that a regression fails instead of stalling the suite."""
    import subprocess
    import sys

    code = (
        "import json, sys, chatparse; " "chatparse.compile_template(json.loads(sys.stdin.read()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(HOSTILE_PLAN),
        text=True,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    "pattern, held",
    [
        (r"\s*<t>", True),  # a literal form
        (r"\s*<t>\s*[a-z]+>", True),  # a Dfa form with heads: spaces, then `<t>`, then more
        (r"\s*(?:<u>\s*)?<t>", True),
        (r"\s\s<t>", False),  # a third space ends the run: not any run of spaces
        (r"<t>|\s+<u>", False),  # `<u>` is alive only after a space
        (r"<t>x|<t>", True),  # alternative literals
    ],
)
def test_a_region_holds_a_tail_only_when_its_runs_are_lead_chars_then_a_literal_prefix(
    pattern, held
):
    # Written from runtime/held.py's rule: a run is alive exactly over lead chars then a proper
    # prefix of a literal; a delimiter whose runs are not that keeps the region's tail unheld.
    found = plans({"a": {"open": "<a>", "close": "</a>"}, "content": {"close_pattern": pattern}})[
        "content"
    ]
    assert found.refused is None
    assert (found.held_refused is None) == held, found.held_refused


# --- look-ahead fallbacks, planned from their relaxed pattern ------------------------------------
# phi4_mini's open is `\s*functools(?=\s*\[)`: the fast path plans from `\s*functools`, holds a
# trailing run of spaces or a cut-off "functools", and sends a chunk holding "functools" to the
# general path, which asks `regex` whether the look-ahead holds.

PHI4_PREFIX = "<|user|>hi<|end|><|assistant|>"
PHI4_CALL = '[{"name": "f", "arguments": {"a": 1}}]<|end|>'
LOOKAHEAD_TEXTS = [
    "Sure. functools" + PHI4_CALL,  # a call
    "of functools, of course: functools is a module. fun. tools. funct!<|end|>",  # no `[` after
    "a   functools  \n [" + PHI4_CALL[1:],  # spaces before it and between it and the `[`
    "see functools",  # the input ends right after it
    "see functools   ",  # ... or after it and some spaces
    "see funct",  # ... or inside it
    "ffunctools" + PHI4_CALL,
    "functoolsfunctools" + PHI4_CALL,
    "x functools x functools" + PHI4_CALL,
    "a\u3000functools" + PHI4_CALL,  # a non-ASCII space: the installed tables decide
    "a functools\u2003.\u2003<|end|>",  # a non-ASCII space, then no `[`
    "x" + " " * 150 + "functools" + PHI4_CALL,  # a lead run longer than HELD_MAX
    "full of f words: fun, far, of, if, off, ff, functor, functoo, fu.<|end|>",
]


def lookahead_chunkings(text: str, seed: int) -> list[list[str]]:
    """`chunkings` (this module's), and `text` cut in two at every place (which splits "functools" everywhere)."""
    return chunkings(text, seed) + [[text[:k], text[k:]] for k in range(1, len(text))]


def assert_fast_is_general_and_reference(module, prefix: str, text: str, number: int) -> None:
    """For every chunking of `text` (`lookahead_chunkings`): the module's events per feed call
    equal its general path's, and its result the reference's one-shot result."""
    parser_class = module.ResponseParser
    general = general_only(parser_class)
    one_shot = reference_one_shot(module.TEMPLATE, text, prefix) if HAVE_REFERENCE else None
    for chunks in lookahead_chunkings(text, number):
        fast = outcome(parser_class, prefix, chunks)
        assert fast == outcome(general, prefix, chunks), chunks
        if one_shot is not None:
            ours = run_parser(lambda: parser_class(prefix), chunks)
            assert same_outcome(ours, one_shot), chunks


@pytest.mark.parametrize("number, text", list(enumerate(LOOKAHEAD_TEXTS)))
def test_a_lookahead_fast_path_gives_the_general_paths_events(number, text):
    from chatparse.generated import phi4_mini

    parser_class = phi4_mini.ResponseParser
    assert "def content_feed(" in Path(phi4_mini.__file__).read_text(encoding="utf-8")
    general = general_only(parser_class)
    for chunks in lookahead_chunkings(text, number):
        fast = outcome(parser_class, PHI4_PREFIX, chunks)
        assert fast == outcome(general, PHI4_PREFIX, chunks), chunks
        assert fast[0] == "ok"


@needs_reference
@pytest.mark.parametrize("number, text", list(enumerate(LOOKAHEAD_TEXTS)))
def test_a_lookahead_fast_path_gives_the_reference_result_and_never_emits_later(number, text):
    from chatparse.generated import phi4_mini

    template = phi4_mini.TEMPLATE
    one_shot = reference_one_shot(template, text, PHI4_PREFIX)
    assert one_shot[0] == "ok"
    for chunks in support_chunkings(text, number):
        ours = run_parser(lambda: phi4_mini.ResponseParser(PHI4_PREFIX), chunks)
        assert same_outcome(ours, one_shot), chunks
        # After every feed, each field has at least the text the reference's streaming parser
        # has emitted (where its streamed result is its one-shot result).
        reference = ReferenceParser(template, prefix=PHI4_PREFIX)
        if not same_outcome(
            run_parser(lambda: ReferenceParser(template, prefix=PHI4_PREFIX), chunks), one_shot
        ):
            continue
        parser = phi4_mini.ResponseParser(PHI4_PREFIX)
        mine: dict[str, str] = {}
        theirs: dict[str, str] = {}
        for chunk in chunks:
            for emitted, events in ((mine, parser.feed(chunk)), (theirs, reference.feed(chunk))):
                for event in events:
                    if event["type"] == "region_chunk":
                        field = event["field"]
                        emitted[field] = emitted.get(field, "") + event["text"]
            for field, sent in theirs.items():
                assert mine.get(field, "").startswith(sent), (chunks, field, mine, theirs)


# qwen3_coder's reasoning close is `</think>|<tool_call>(?=\s*<function=)`: a look-ahead that
# ends one branch (vLLM's implicit end of an unclosed <think> at a call). The fast path plans from
# `</think>|<tool_call>` and sends a chunk holding either to the general path.
QWEN_PREFIX = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n"
QWEN_CALL = "<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call><|im_end|>"
BRANCH_LOOKAHEAD_TEXTS = [
    "Plan: call f.\n<tool_call>\n" + QWEN_CALL,  # a call inside the unclosed think
    "I could write <tool_call> here, but no.</think>\n\nDone.<|im_end|>",  # no <function= after
    "x <tool_call>   \n\n  " + QWEN_CALL,  # spaces between
    "x <tool_call>" + " " * 150 + QWEN_CALL,  # more spaces than HELD_MAX
    "see <tool_call>",  # the input ends right after it
    "see <tool_call>  \n",  # ... or after it and some spaces
    "see <tool_ca",  # ... or inside it
    "<tool_call><tool_call>" + QWEN_CALL,
    "a <tool_call> b <tool_call>\n" + QWEN_CALL,
    "done</think>\n\nok<|im_end|>",
]


@pytest.mark.parametrize("number, text", list(enumerate(BRANCH_LOOKAHEAD_TEXTS)))
def test_a_branch_lookahead_fast_path_gives_the_general_paths_and_the_reference_result(
    number, text
):
    from chatparse.generated import qwen3_coder

    source = Path(qwen3_coder.__file__).read_text(encoding="utf-8")
    assert "def reasoning_content_feed(" in source
    assert_fast_is_general_and_reference(qwen3_coder, QWEN_PREFIX, text, number)
    for chunks in lookahead_chunkings(text, number):
        assert outcome(qwen3_coder.ResponseParser, QWEN_PREFIX, chunks)[0] == "ok"


# llama3_pythonic's call list is the whole reply: its open `^(?=\[[A-Za-z]\w*\()` is a look-ahead
# (the `regex` fallback) whose relaxed form `^` matches nothing after position 0, so the region
# stops watching it there and the fast path takes the prose (it streamed at 0.23x the reference's
# speed when the fallback stayed watched at every position).
LLAMA_PREFIX = "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
START_LOOKAHEAD_TEXTS = [
    "[get_weather(city='Paris'), f()]<|eot_id|>",
    "Sure, here: [f(a=1)]<|eot_id|>",  # a list after prose is content
    "[1, 2] is a list.<|eot_id|>",  # a bracket but no call
    " [f(a=1)]<|eot_id|>",  # not at the very start
    "[f(a=1)] and then text",  # text after the list: the reference's ValueError
    "[",
    "[f",
    "[f(",
    "x" * 150 + "<|eot_id|>",
]


def test_a_fallback_that_needs_position_0_leaves_the_watch_after_it():
    automaton = build_regions(load_spec(chatparse.load_template("llama3_pythonic")))
    home = automaton.home
    assert any(w.field == "tool_calls" for w in home.watch)
    assert home.after_start is not None
    assert [w.field for w in home.after_start.watch] == ["content"]


@pytest.mark.parametrize("number, text", list(enumerate(START_LOOKAHEAD_TEXTS)))
def test_a_start_lookahead_fast_path_gives_the_general_paths_and_the_reference_result(number, text):
    from chatparse.generated import llama3_pythonic

    assert_fast_is_general_and_reference(llama3_pythonic, LLAMA_PREFIX, text, number)


def test_a_lookahead_fast_path_takes_prose_and_sends_the_literal_to_the_general_path(monkeypatch):
    from chatparse.generated import phi4_mini

    parser_class = phi4_mini.ResponseParser
    # Prose full of "f", spaces at chunk ends, a cut-off "funct": never a match of
    # `\s*functools`, so never a call of the general path.
    prose = ["Of", " course", ", ", "if", " fun ", "funct", "ional", " off", ".\n", "\n", "ok"]
    assert count_general_calls(parser_class, PHI4_PREFIX, prose, monkeypatch) == 0
    # "functools" (whole, or completed by a chunk) is a match of it: the general path decides.
    for chunks in (["a ", "functools", "["], ["a func", "tools ["], ["a functools!"]):
        assert count_general_calls(parser_class, PHI4_PREFIX, chunks, monkeypatch) >= 1, chunks


def test_a_lookahead_general_path_asks_regex_only_near_its_literal(monkeypatch):
    """The region's candidate finder reads the fallback's declared heads (lead chars, then
    "functools"): `regex` is attempted only in the lead run before the literal or at the end of
    the text, not at every position of the prose. (phi4_mini's own open, a look-ahead that ends
    it, runs on a DFA and never asks `regex`; a negative look-ahead keeps this one on it.)"""
    from chatparse.generated import phi4_mini
    from chatparse.runtime import fallback

    template = chatparse.load_template("phi4_mini")
    fields = dict(template["fields"])
    fields["tool_calls"] = {**fields["tool_calls"], "open_pattern": r"\s*functools(?!\s*\])"}
    on_regex = chatparse.load_module({**template, "fields": fields})
    assert on_regex.TOOL_CALLS_OPEN.fallback and not phi4_mini.TOOL_CALLS_OPEN.fallback

    attempts: list[int] = []
    original = fallback.match_at

    def counting(delimiter, text, start, *, final):
        attempts.append(start)
        return original(delimiter, text, start, final=final)

    monkeypatch.setattr(fallback, "match_at", counting)
    prose = "of fun words, if any: " * 40
    for module, expected in ((on_regex, 1), (phi4_mini, 0)):
        general = general_only(module.ResponseParser)
        found = outcome(general, PHI4_PREFIX, [prose + "see  functools" + PHI4_CALL])
        assert found[0] == "ok" and found[1]["tool_calls"][0]["function"]["name"] == "f"
        # the two spaces before "functools" (the second one is dominated by the first)
        assert len(attempts) == expected, attempts
        attempts.clear()
        assert outcome(general, PHI4_PREFIX, [prose + "."])[0] == "ok"
        assert attempts == []


def test_the_module_says_how_a_lookahead_fallback_is_planned():
    source = chatparse.compile_template(
        {
            "start_anchor": "@@",
            "fields": {
                "call": {"open_pattern": r"\s*call(?!x)", "close": ";"},
                "content": {},
            },
        }
    )
    assert (
        'RegexFallback(\n    r"\\s*call(?!x)", lead=SPACE, literals=("call",), lead_loop=(r"\\s", "call", True)\n)'
        in source
    )
    assert "Every match of the pattern begins with chars of `lead`, then one" in source
    assert (
        "content: chunks not ending in '\\t\\n\\x0b\\x0c\\r ' or in a non-ASCII char of SPACE, without"
        in source
    )
    assert "'c' (open call)" in source
    assert '    # may start CALL_OPEN\n    if "c" in text:\n' in source
    assert "open call: planned without its look-ahead (lead chars, then 'call')" in source
    assert "def content_feed(" in source


@pytest.mark.parametrize(
    "pattern, texts",
    [
        (r"\s*call(?!x)", ["a call", "a callx;", "call", "ca", "a  \n call  (;", "callcall;"]),
        (r"<e>(?=!)", ["a <e>!b;", "a <e>x;", "<e", "x<e>", "<<e>!;"]),  # no lead run
        (r"\s*ab(?=!|$)", ["x ab", "x ab!;", "x abab;", "x a"]),  # `$` inside: dropped with it
        (r"\s*<t>\s*[a-z]+(?=\()", ["a <t> ab(;", "a <t> ab;", "<t>  x", "<t"]),  # a Dfa form
    ],
)
def test_lookahead_fast_paths_give_the_general_paths_events(pattern, texts):
    template = {
        "start_anchor": "@@",
        "fields": {"call": {"open_pattern": pattern, "close": ";"}, "content": {}},
    }
    module = chatparse.load_module(template)
    parser_class = module.ResponseParser
    assert parser_class.fast_paths.get("content") is not None  # the region was planned
    general = general_only(parser_class)
    for number, text in enumerate(texts):
        for chunks in lookahead_chunkings(text, number):
            assert outcome(parser_class, "", chunks) == outcome(general, "", chunks), chunks
            assert same_outcome(
                run_parser(lambda: parser_class(""), chunks), reference_one_shot(template, text, "")
            ), chunks


# A close with trailing look-aheads (compiler/automata/trailing_lookahead.py) has whole chunks: the
# literals of its DFA that meet no look-ahead report (plain matches). A literal whose run reports
# through a look-ahead is a match of the look-ahead alternative, which ends before the literal.
LOOKAHEAD_CLOSES = [
    # qwen3_coder's reasoning close: "</think>", never "<tool_call><function=" (its match is
    # "<tool_call>", ended before its look-ahead)
    (
        r"</think>|<tool_call>(?=\s*<function=)",
        {"</think>"},
        ["<think>a</think>b", "<think>a<tool_call><function=x", "<think>a<tool_call> <f</think>"],
    ),
    # granite_20b_fc's call close: a look-ahead alone, then a token
    (r"(?=<call>)|<end>", {"<end>"}, ["<think>a<end>b", "<think>a<call>b<end>", "<think><en<end>"]),
    # the look-ahead alternative first: on "</a>" `regex` takes "<" (its look-ahead holds)
    (r"<(?=/a>)|</a>", set(), ["<think>x</a>y", "<think>x</b></a>"]),
    (r"</a>|<(?=/a>)", {"</a>"}, ["<think>x</a>y", "<think>x<</a>"]),
    (r"<x(?=y)|<xy", set(), ["<think>a<xyz", "<think>a<xz<xy"]),
    (r"<a>(?=b)", set(), ["<think>1<a>b2", "<think>1<a>c<a>b"]),
]


@pytest.mark.parametrize(
    "number, close, whole, texts", [(n, *case) for n, case in enumerate(LOOKAHEAD_CLOSES)]
)
def test_a_lookahead_closes_plain_literals_are_whole_chunks(number, close, whole, texts):
    fields = {"reasoning": {"open": "<think>", "close_pattern": close}, "content": {}}
    assert {literal for literal, _ in plans(fields)["reasoning"].whole} == whole
    module = chatparse.load_module({"start_anchor": "@@", "fields": fields})
    for text in texts:
        assert_fast_is_general_and_reference(module, "", text, number)


@pytest.mark.parametrize("family", ["smollm3", "qwen3_coder", "gpt_oss"])
def test_bytes_fed_raise_a_type_error_naming_str_and_bytes_and_change_nothing(family):
    # The reference raises TypeError for bytes too (from `str + bytes`); chatparse's message
    # says what it expects. Before it, the fast path's `in` test said "a bytes-like object is
    # required, not 'str'": the types the wrong way round.
    parser_class = importlib.import_module(f"chatparse.generated.{family}").ResponseParser
    parser = parser_class(prefix="")
    events = list(parser.initial_events) + parser.feed("Hello ")  # the fast path holds the space
    for chunk in (b"world", bytearray(b"x")):
        with pytest.raises(TypeError, match=r"expects str .*got (bytes|bytearray): decode it"):
            parser.feed(chunk)
    events += parser.feed("world")
    message, final = parser.finalize()
    _, expected_message, expected_events = outcome(parser_class, "", ["Hello ", "world"])
    assert message == expected_message
    assert events + final == [event for call in expected_events for event in call]


@pytest.mark.parametrize("family", ["smollm3", "qwen3_coder", "gpt_oss"])
def test_a_sequence_of_strings_fed_raises_a_type_error_and_changes_nothing(family):
    # A list or tuple of str passes every test a fast path makes of a chunk (`"<" not in text`,
    # `text[-1] in TAIL`): it was taken as text, and its event carried the list. The generated
    # `feed` tests the chunk's type first; a held run survives the error.
    parser_class = importlib.import_module(f"chatparse.generated.{family}").ResponseParser
    parser = parser_class(prefix="")
    events = list(parser.initial_events) + parser.feed("Hello ")  # the fast path holds the space
    for chunk in (["world"], ("w",), ["a", " "]):
        with pytest.raises(TypeError, match=r"expects str .*got (list|tuple)$"):
            parser.feed(chunk)
    events += parser.feed("world")
    with pytest.raises(TypeError, match=r"expects str .*got list$"):
        parser.feed(["x"])  # nothing held
    message, final = parser.finalize()
    _, expected_message, expected_events = outcome(parser_class, "", ["Hello ", "world"])
    assert message == expected_message
    assert events + final == [event for call in expected_events for event in call]


def test_a_long_region_streamed_by_the_fast_path_is_a_few_pieces_copied_log_n_times():
    # `fast_taken` folds the chunks taken since the last compaction into the pieces before them
    # (`_fold_body`): each piece more than twice as long as the next. Joining the newest 128
    # pieces instead copied the longer pieces among them at every compaction, and folding only
    # into a piece at most as long left a row of pieces, each a little shorter, that never merged.
    from chatparse.generated import qwen3
    from chatparse.runtime.message import BODY_PIECES_MAX

    parser = qwen3.ResponseParser("<|im_start|>assistant\n")
    parser.feed("<think>")
    parser.feed("x")
    copied = 0
    for number in range(200 * BODY_PIECES_MAX):
        parser.feed("abc" if number % 3 else "abcd")
        body = parser.region_body
        if len(body) == 1 and number > BODY_PIECES_MAX:
            copied += len(body[0])  # (a merge into one piece copies all of it)
        assert len(body) <= BODY_PIECES_MAX
    folded = [len(piece) for piece in parser.region_body if len(piece) > 4]
    assert all(longer > 2 * shorter for longer, shorter in zip(folded, folded[1:])), folded
    assert len(folded) <= 12, folded
    total = sum(map(len, parser.region_body))
    assert copied < 4 * total, (copied, total)
    message, _ = parser.finalize()
    assert len(message["reasoning_content"]) == total


def test_a_fallback_that_matches_empty_gets_heads_from_its_look_ahead():
    """`(?=<function_call>)|<\\|endoftext\\|>` (granite_20b_fc's close) matches empty where its
    look-ahead holds: read as consuming, every match starts at one of the two literals, so
    `regex` is tried only there, not at every position (it was: 0.22x the reference streaming)."""
    from chatparse.generated import granite_20b_fc

    close = granite_20b_fc.TOOL_CALLS_CLOSE
    assert close.heads is not None and close.heads.literals == ("<function_call>", "<|endoftext|>")


# granite_20b_fc's call ends where the next call's tag begins: its close
# `(?=<function_call>)|<\|endoftext\|>` matches empty without its look-ahead, so the plan reads it
# with the look-ahead consuming (it starts and waits where that does): the call region's fast
# path takes chunks without "<" (every chunk went to the general path before, ~4 us each).
GRANITE_PREFIX = "USER: What's the weather?\nASSISTANT:"
CONSUMING_LOOKAHEAD_TEXTS = [
    ' <function_call> {"name": "f", "arguments": {"a": 1}}<|endoftext|>',
    '<function_call> {"name": "f", "arguments": {}} <function_call> {"name": "g", "arguments":'
    ' {"s": "<x>"}}<|endoftext|>',
    '<function_call> {"name": "f", "arguments": {"s": "<function"}}<|endoftext|>',
    '<function_call> {"name": "f", "arguments": {}}<function',
    "text <function_call",
]


def test_a_consuming_lookahead_plan_gives_the_call_region_a_fast_path():
    from chatparse.generated import granite_20b_fc

    assert "def tool_calls_feed(" in Path(granite_20b_fc.__file__).read_text(encoding="utf-8")


@pytest.mark.parametrize("number, text", list(enumerate(CONSUMING_LOOKAHEAD_TEXTS)))
def test_a_consuming_lookahead_fast_path_gives_the_general_paths_and_the_reference(number, text):
    from chatparse.generated import granite_20b_fc

    assert_fast_is_general_and_reference(granite_20b_fc, GRANITE_PREFIX, text, number)


def _feed_at_once_with_a_shallow_stack(module, text: str) -> dict:
    """`text` fed in one chunk under a stack 150 frames deeper than the caller's, after a first
    stream of it in 4-char pieces (so that the regions' lazily built tables, the run sets,
    exist as in a server and the fast path's entries take the chunk); the final message."""
    warm = module.ResponseParser("")
    for start in range(0, min(len(text), 2000), 4):
        warm.feed(text[start : start + 4])
    parser = module.ResponseParser("")
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 150)
    try:
        parser.feed(text)
        message, _ = parser.finalize()
    finally:
        sys.setrecursionlimit(limit)
    return message


def test_back_to_back_calls_in_one_chunk_keep_the_stack_flat():
    """Whole delimiters back to back (a call's close, then the next call's open) in one chunk:
    each commit's rest was fed by recursion (`_settle`), before the fast path's loop."""
    module = importlib.import_module("chatparse.generated.hermes")
    text = '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>\n' * 400
    assert _feed_at_once_with_a_shallow_stack(module, text) == module.parse_response(
        text, prefix=""
    )


@pytest.mark.parametrize("family", FAMILIES)
def test_one_chunk_of_many_delimiters_keeps_the_stack_flat(family):
    """A chunk may hold any number of delimiters: the fast path reads the text after each
    commit as a chunk of its own (`RegionParser._feed_rest`) in a loop, so the stack does not
    grow with them (it did: hermes's sample 200 times over, fed at once after a first stream,
    was a RecursionError). Checked under a stack 150 frames deeper than here, where a recursion per
    delimiter fails at once; and fed at once, the text gives what `parse_response` gives."""
    module = importlib.import_module(f"chatparse.generated.{family}")
    sample = json.loads((REPO / "samples" / f"{family}.json").read_text())
    text = sample["text"] * 300
    assert _feed_at_once_with_a_shallow_stack(module, text) == module.parse_response(
        text, prefix=""
    )


# Pieces that hold a stopper char without a delimiter (xml-inline tags, `a < b`), the delimiters
# whole and cut, and lead chars.
CUT_PIECES = [
    "<parameter=city>",
    "</parameter>",
    "<function=f>",
    "a < b",
    "<",
    "</",
    "</func",
    "tion>",
    "</function>",
    "<tool_call>",
    "</tool_call>",
    "</tool_",
    "call>",
    "<think>",
    "</think>",
    "<|im_end|>",
    "<|im_",
    "x<",
    "<b>",
    "\n",
    " ",
    "é",
    "Paris",
]


@settings(max_examples=200, derandomize=True, deadline=None)
@given(
    family=st.sampled_from(["qwen3_coder", "hermes", "smollm3", "qwen3"]),
    pieces=st.lists(st.sampled_from(CUT_PIECES), max_size=20),
    data=st.data(),
)
def test_a_chunk_holding_a_stopper_outside_its_literals_gives_the_general_paths_events(
    family, pieces, data
):
    """A chunk holding a stopper char that starts no delimiter in it (a call body's xml tags, `a <
    b`) is sent by the fast path, through the held tail (`HeldTail.cut`), unless it holds a
    watched literal or ends in the first chars of one: per feed call, the general path's events."""
    parser_class = importlib.import_module(f"chatparse.generated.{family}").ResponseParser
    general = general_only(parser_class)
    text = "".join(pieces)
    prefix = data.draw(st.sampled_from(["", "<|im_start|>assistant\n"]))
    # (After the open, a plain chunk lets the general path hand the call region to its fast path.)
    opened = (
        ["<tool_call>\n<function=f>\n", "Paris"]
        if family == "qwen3_coder"
        else ["<tool_call>", "{"]
    )
    for chunks in (
        pieces,
        opened + pieces,
        data.draw(chunked("".join(opened) + text)),
        list(text),
    ):
        assert outcome(parser_class, prefix, chunks) == outcome(general, prefix, chunks), chunks


def test_a_call_bodys_tags_stay_on_the_fast_path(monkeypatch):
    """qwen3_coder's call body: `<parameter=...>` tags hold "<", which only `\\s*</function>`
    starts with there, and go to the region without the general path (the held tail finds no
    run alive in them); a chunk ending in the close's first chars holds them."""
    module = importlib.import_module("chatparse.generated.qwen3_coder")
    parser = module.ResponseParser("<|im_start|>assistant\n")
    # (The general path reads the open, and the run its "\n" starts on into the next chunk.)
    parser.feed("<tool_call>\n<function=get_weather>\n")
    parser.feed("<parameter=city>")
    calls = _count_general_path(monkeypatch)
    body = ["\nParis", "\n</parameter>", "\n<parameter=unit>", "\nC\n"]
    events = [event for chunk in body for event in parser.feed(chunk)]
    assert calls[0] == 0
    assert "".join(event["text"] for event in events) == "".join(body)[:-1]  # ("\n" held)
    # A chunk ending in the close's first chars declines: its tail is held, then closes the call.
    events = parser.feed("</parameter>\n</func")
    assert "".join(event["text"] for event in events) == "\n</parameter>"
    assert parser.fast_feed is RegionParser.fast_feed_held
    assert "region_close" in [event["type"] for event in parser.feed("tion>")]
    message, _ = parser.finalize()
    assert message["tool_calls"][0]["function"]["arguments"] == {"city": "Paris", "unit": "C"}
