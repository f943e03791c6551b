"""The generated fast path against the general path, on the same events; and the compile-time
checks that keep a region without one.

A generated `ResponseParser.feed` takes some chunks itself (compiler/fast_path.py) and sends the
rest to `RegionParser.feed`. The general path alone is the same class with `feed` put back to
`RegionParser.feed`. Both must give the same event stream, event for event and unmerged (the fast
path sends one region_chunk per chunk, as the general path does when nothing is held), the same
message and the same error class, for every chunking.
"""

from __future__ import annotations

import importlib
import json
import random
from pathlib import Path

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_stream_properties import chunked, templates, texts

import chatparse
from chatparse.compiler.fast_path import plan_region
from chatparse.compiler.regions import build_regions
from chatparse.compiler.spec import load_spec
from chatparse.runtime.stream import RegionParser

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
    """("ok", message, raw events) or ("error", class name): events unmerged, on purpose."""
    try:
        parser = parser_class(prefix)
        events = list(parser.initial_events)
        for chunk in chunks:
            events.extend(parser.feed(chunk))
        message, final = parser.finalize()
    except Exception as error:
        return ("error", type(error).__name__)
    return ("ok", message, events + final)


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


def count_general_calls(parser_class: type, prefix: str, chunks: list[str], monkeypatch) -> int:
    calls = 0
    original = RegionParser.feed

    def counting(self, text):
        nonlocal calls
        calls += 1
        return original(self, text)

    parser = parser_class(prefix)
    monkeypatch.setattr(RegionParser, "feed", counting)  # what the generated super().feed reaches
    for chunk in chunks:
        parser.feed(chunk)
    monkeypatch.undo()
    return calls


def test_the_fast_path_takes_prose_chunks_and_whole_special_tokens(monkeypatch):
    # Written from the format: nothing is held inside prose without "<", and "</think>" and
    # "<tool_call>" arrive whole, so only the chunks that open a region or end in a space (which
    # `\s*<tool_call>` may still use) reach the general path.
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
    # The general path gets "<think>" (content is not open yet), "Hello" (content opens again
    # after the close), " " (ends in a space), "<tool_call>" (a space is held) and "</tool_call>"
    # (`\s*` may still follow it); "plan", " it", "</think>", " world", "." and "{}" are fast.
    assert calls == 5
    general = general_only(smollm3.ResponseParser)
    assert outcome(smollm3.ResponseParser, "", chunks) == outcome(general, "", chunks)


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
        (r"^<a>", "starts differently"),
        (r"\b<a>", "starts differently"),
        (r"<a>$", "assertion"),
        (r"<a>\Z", "assertion"),
        (r"<a>(?=b)", "falls back"),
        (r"(?<=x)<a>", "falls back"),
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
    # and the generated module says why, and has no branch for that region
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
    assert 'region == "content"' not in source and 'region == "a"' in source


def test_the_null_sink_gets_no_fast_path():
    found = plans({"a": {"open": "<a>", "close": "</a>"}})
    assert found[None].refused is not None and found["a"].refused is None


def test_a_lead_run_gives_a_tail_check_and_literal_heads_the_stoppers():
    plan = plans({"a": {"open": "<a>"}, "content": {"close_pattern": r"\s*\[END\]"}})["content"]
    assert set(plan.stoppers) == {"<", "["}
    assert set(plan.tail_lead) == set(" \t\n\r\x0b\x0c") and plan.tail_ascii
    plain = plans({"a": {"open": "<a>", "close": "</a>"}})["a"]
    assert plain.stoppers == "<" and plain.tail_lead == "" and not plain.tail_ascii


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
