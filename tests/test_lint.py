"""`chatparse.authoring.lint`: each trap is caught on a minimal template written for it, and its
example output, computed by the linter from the automaton, really shows the trap when parsed, by
chatparse and by the reference (`transformers.utils.chat_parsing`) when it is installed. What
"shows the trap" means is written here from the format (which text is lost, which field opens),
never taken from the linter.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from test_hostile_templates import templates as hostile_templates

import chatparse
from chatparse import catalogue
from chatparse.authoring.lint import Finding, lint, portability_constructs

try:
    from transformers.utils.chat_parsing import ResponseParser as ReferenceParser
except ImportError:  # the oracle is a test extra
    ReferenceParser = None

README = Path(__file__).resolve().parent.parent / "README.md"


def template(**fields) -> dict:
    return {"start_anchor": "<s>", "fields": fields}


def run(parser_factory, text: str):
    """(message, events) or the exception class name."""
    try:
        parser = parser_factory()
        events = list(parser.initial_events) + parser.feed(text)
        message, final = parser.finalize()
    except Exception as exc:
        return type(exc).__name__
    return message, events + list(final)


def outcomes(tmpl: dict, text: str) -> list:
    """The outcome of `text` (prefix "") by chatparse, then by the reference when installed."""
    module = chatparse.load_module(tmpl)
    found = [run(lambda: module.ResponseParser(""), text)]
    if ReferenceParser is not None:
        found.append(run(lambda: ReferenceParser(tmpl, prefix=""), text))
    return found


def only(findings: list[Finding], code: str, field: str | None = None) -> Finding:
    chosen = [f for f in findings if f.code == code and (field is None or f.field == field)]
    assert len(chosen) == 1, (code, findings)
    return chosen[0]


def opened(events, field) -> int:
    return sum(1 for e in events if e["type"] == "region_open" and e["field"] == field)


def chunks(events, field) -> str:
    return "".join(e["text"] for e in events if e["type"] == "region_chunk" and e["field"] == field)


# --- CP101: the implicit field re-opened --------------------------------------------------------


def test_cp101_implicit_close_reopens_and_overwrites():
    # The SmolLM3 trap of the docs: text after the implicit close replaces the content.
    tmpl = template(content={"close": "<end>"})
    finding = only(lint(tmpl), "CP101", "content")
    before, after = finding.example.split("<end>")
    assert before and after
    for message, _ in outcomes(tmpl, finding.example):
        assert message["content"] == after  # `before` is lost


def test_cp101_explicit_field_reopens_implicit():
    tmpl = template(content={}, calls={"open": "<c>", "close": "</c>", "repeats": True})
    finding = only(lint(tmpl), "CP101", "content")
    before = finding.example.split("<c>")[0]
    after = finding.example.split("</c>")[-1]
    for message, _ in outcomes(tmpl, finding.example):
        assert message["content"] == after and before not in message["content"]


def test_cp101_not_reported_for_a_repeating_implicit_field():
    tmpl = template(content={"repeats": True, "join": "", "close": "<end>"})
    assert not [f for f in lint(tmpl) if f.code == "CP101"]


# --- CP102: an explicit field opened twice ------------------------------------------------------


def test_cp102_field_opened_twice_keeps_only_the_second_value():
    tmpl = template(content={"repeats": True, "join": ""}, r={"open": "<r>", "close": "</r>"})
    finding = only(lint(tmpl), "CP102", "r")
    for message, events in outcomes(tmpl, finding.example):
        closes = [e["value"] for e in events if e["type"] == "region_close" and e["field"] == "r"]
        assert len(closes) == 2 and closes[0] != closes[1]
        assert message["r"] == closes[1]


def test_cp102_json_list_bodies_from_the_transform():
    # mistral-like: transform_each over a JSON list, no repeats
    tmpl = template(
        content={"repeats": True, "join": ""},
        tool_calls={
            "open": "[CALLS]",
            "close": "</s>",
            "content": "json",
            "transform_each": True,
            "transform": {"type": "function", "function": {"name": "{n}", "arguments": "{a}"}},
        },
    )
    finding = only(lint(tmpl), "CP102", "tool_calls")
    for message, events in outcomes(tmpl, finding.example):
        assert opened(events, "tool_calls") == 2
        assert len(message["tool_calls"]) == 1  # the first call is gone


# --- CP103 / CP104 / CP105: empty matches -------------------------------------------------------


def test_cp103_open_matching_empty_opens_before_any_text():
    tmpl = template(content={}, r={"open_pattern": "a*", "close": "</r>"})
    finding = only(lint(tmpl), "CP103", "r")
    assert "a" not in finding.example  # plain text, no delimiter text at all
    for message, events in outcomes(tmpl, finding.example):
        assert opened(events, "r") >= 1 and "content" not in message


def test_cp103_not_reported_for_an_open_anchored_at_the_start():
    tmpl = template(content={}, r={"open_pattern": "<think>|^", "close": "</think>"})
    assert not [f for f in lint(tmpl) if f.code == "CP103"]


def test_cp104_implicit_close_matching_empty_drops_the_text():
    tmpl = template(content={"close_pattern": "a*"})
    finding = only(lint(tmpl), "CP104", "content")
    assert finding.example and "a" not in finding.example
    for message, events in outcomes(tmpl, finding.example):
        assert finding.example not in json.dumps(message)
        assert not [e for e in events if e["type"] == "region_chunk"]


def test_cp104_explicit_close_matching_empty_ends_the_field_at_once():
    tmpl = template(content={}, r={"open": "<r>", "close_pattern": "a*"})
    finding = only(lint(tmpl), "CP104", "r")
    assert finding.example.startswith("<r>")
    for message, events in outcomes(tmpl, finding.example):
        assert opened(events, "r") == 1 and chunks(events, "r") == ""
        assert message["content"] == finding.example.removeprefix("<r>")


def test_cp105_zero_width_open_and_close_loop():
    tmpl = template(content={}, r={"open_pattern": "a*", "close_pattern": "b*"})
    findings = lint(tmpl)
    finding = only(findings, "CP105", "r")
    assert not [f for f in findings if f.code in ("CP103", "CP104")]  # one finding, not three
    module = chatparse.load_module(tmpl)
    assert run(lambda: module.ResponseParser(""), finding.example) == "ValueError"


@pytest.mark.skipif(ReferenceParser is None, reason="transformers not installed")
def test_cp105_example_hangs_the_reference():
    tmpl = template(content={}, r={"open_pattern": "a*", "close_pattern": "b*"})
    example = only(lint(tmpl), "CP105").example
    code = (
        "import json, sys\n"
        "from transformers.utils.chat_parsing import ResponseParser\n"
        "t, x = json.loads(sys.argv[1]), sys.argv[2]\n"
        "p = ResponseParser(t, prefix=''); p.feed(x); p.finalize()\n"
    )
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run(
            [sys.executable, "-c", code, json.dumps(tmpl), example],
            timeout=4,
            capture_output=True,
        )


# --- CP106: delimiters that plain prose can contain ---------------------------------------------


def test_cp106_open_in_prose_ends_the_implicit_field():
    tmpl = template(content={}, answer={"open": "Answer:", "close": "<end>"})
    finding = only(lint(tmpl), "CP106", "answer")
    before = finding.example.split("Answer:")[0]
    for message, events in outcomes(tmpl, finding.example):
        assert opened(events, "answer") == 1
        assert message["content"] == before  # the content stops where it quoted "Answer:"


def test_cp106_close_in_prose_ends_the_field_early():
    tmpl = template(content={}, r={"open": "<r>", "close": "\n\n"})
    finding = only(lint(tmpl), "CP106", "r")
    body = finding.example.removeprefix("<r>")
    assert "\n\n" in body
    for message, _ in outcomes(tmpl, finding.example):
        assert message["r"] == body.split("\n\n")[0]


def test_cp106_not_reported_for_special_tokens():
    tmpl = template(content={}, r={"open": "<|r|>", "close_pattern": r"\s*</r>"})
    assert not [f for f in lint(tmpl) if f.code == "CP106"]


# --- CP107: a field that never opens ------------------------------------------------------------


def test_cp107_field_that_always_loses_the_tie():
    tmpl = template(
        content={"repeats": True, "join": ""},
        b={"open": "<t>", "close": "</t>", "repeats": True},
        a={"open_pattern": "<t>|<u>", "close": "</t>", "repeats": True},
    )
    finding = only(lint(tmpl), "CP107", "b")
    for _, events in outcomes(tmpl, finding.example):
        assert opened(events, "a") == 1 and opened(events, "b") == 0


def test_cp107_pattern_open_always_covered_by_an_earlier_field():
    # No literal list: the DFA product decides that every match of b's open is one of a's.
    tmpl = template(
        content={"repeats": True, "join": ""},
        b={"open_pattern": "<t[0-9]>", "close": "</t>", "repeats": True},
        a={"open_pattern": "<t[0-9]+>", "close": "</t>", "repeats": True},
    )
    finding = only(lint(tmpl), "CP107", "b")
    assert re.fullmatch(r"<t[0-9]>", finding.example[:4])
    for _, events in outcomes(tmpl, finding.example):
        assert opened(events, "a") == 1 and opened(events, "b") == 0


def test_cp107_not_reported_when_the_pattern_open_can_win_somewhere():
    tmpl = template(
        content={"repeats": True, "join": ""},
        b={"open_pattern": "<t[0-9a-z]>", "close": "</t>", "repeats": True},
        a={"open_pattern": "<t[0-9]+>", "close": "</t>", "repeats": True},
    )
    assert not [f for f in lint(tmpl) if f.code == "CP107"]
    for _, events in outcomes(tmpl, "<tq>x</t>"):
        assert opened(events, "b") == 1


# --- CP108: a close that also matches another field's delimiter ---------------------------------


def test_cp108_close_matching_another_fields_delimiter_splits_a_quote():
    tmpl = template(
        content={"repeats": True, "join": ""},
        r={"open": "<r>", "close_pattern": "</[a-z]+>", "repeats": True},
        tool={"open": "<tool>", "close": "</tool>", "repeats": True},
    )
    finding = only(lint(tmpl), "CP108", "r")
    assert "</tool>" in finding.example and finding.example.startswith("<r>")
    quoted = finding.example.removeprefix("<r>").split("</tool>")[0]
    for message, _ in outcomes(tmpl, finding.example):
        assert message["r"] == [quoted]  # the quote of "</tool>" ended r


def test_cp108_close_quoting_an_open_leaves_the_rest_to_the_other_field():
    tmpl = template(
        content={"repeats": True, "join": ""},
        r={"open": "<r>", "close": ["</r>", "<c"], "repeats": True},
        c={"open": "<call>", "close": "</call>", "repeats": True},
    )
    finding = only(lint(tmpl), "CP108", "r")
    for message, _ in outcomes(tmpl, finding.example):
        assert "<call>" not in "".join(message["r"])


def test_cp108_not_reported_for_a_close_that_is_the_other_marker():
    tmpl = template(
        content={"repeats": True, "join": ""},
        r={"open": "<r>", "close": "<end>", "repeats": True},
        c={"open": "<c>", "close": "<end>", "repeats": True},
    )
    assert not [f for f in lint(tmpl) if f.code == "CP108"]


# --- CP110 / CP120: costs -----------------------------------------------------------------------


def test_cp110_regex_fallback_names_the_reason_and_the_cost():
    tmpl = template(content={}, r={"open_pattern": "<r(?!>)", "close": "</r>", "repeats": True})
    finding = only(lint(tmpl), "CP110", "r")
    assert "lookahead" in finding.message and "memory" in finding.message
    assert "pending attempt" in finding.message and "whole output" not in finding.message
    assert finding.severity == "warning"
    # A look-behind can read any text before the attempt: the parser keeps all of it.
    behind = template(content={}, r={"open_pattern": "(?<=x)<r>", "close": "</r>", "repeats": True})
    assert "whole output" in only(lint(behind), "CP110", "r").message
    # A look-ahead that ends the pattern runs on a DFA (compiler/automata/trailing_lookahead.py).
    ahead = template(content={}, r={"open_pattern": "<r(?=>)", "close": "</r>", "repeats": True})
    assert not [f for f in lint(ahead) if f.code == "CP110"]


def test_cp110_a_literal_past_the_dfa_limits_runs_as_a_literal():
    """A literal of 4,000 chars of 26 kinds is past MAX_TABLE_CELLS: it keeps its literal form
    (no `regex`), which the finding says, with what it costs (no fast path)."""
    literal = "".join(chr(0x61 + 7 * i % 26) for i in range(4000))
    tmpl = template(content={}, r={"open": "<r>", "close": literal, "repeats": True})
    finding = only(lint(tmpl), "CP110", "r")
    assert "literal form" in finding.message and "fast path" in finding.message
    assert "backtracks" not in finding.message


def test_cp120_whitespace_led_delimiter_is_a_note():
    tmpl = template(content={"close_pattern": r"\s*<end>"})
    finding = only(lint(tmpl), "CP120", "content")
    assert finding.severity == "note"
    assert not [
        f for f in lint(template(content={"close_pattern": r"<end>\s*"})) if f.code == "CP120"
    ]


# --- CP130 / CP131: tool calls ------------------------------------------------------------------


def calls(**extra) -> dict:
    base = {"open": "<c>", "close": "</c>", "repeats": True, "content": "json"}
    return template(content={"repeats": True, "join": ""}, tool_calls={**base, **extra})


@pytest.mark.parametrize(
    "transform",
    [
        {"type": "function", "function": "{content}"},
        {"function": {"name": "{content.name}", "arguments": "{content.arguments}"}},
        {"type": "function", "function": {"name": "{content.name}"}},
        {"type": "function", "function": {"name": "{content.n}", "arguments": "none"}},
    ],
)
def test_cp130_tool_call_shapes_openai_clients_cannot_read(transform):
    tmpl = calls(transform=transform)
    finding = only(lint(tmpl), "CP130", "tool_calls")
    assert "OpenAI" in finding.message
    # The example's calls, parsed, lack OpenAI's {"type": "function", "function": {"name": str,
    # "arguments": dict}}.
    for message, _ in outcomes(tmpl, finding.example):
        for call in message["tool_calls"]:
            function = call.get("function") if isinstance(call, dict) else None
            assert not (
                call.get("type") == "function"
                and isinstance(function, dict)
                and isinstance(function.get("name"), str)
                and isinstance(function.get("arguments"), dict)
            ), call


def test_cp130_arguments_from_a_capture_are_a_string():
    tmpl = template(
        content={"repeats": True, "join": ""},
        tool_calls={
            "open_pattern": r"<c (?P<name>\w+) (?P<args>[^>]*)>",
            "close": "</c>",
            "repeats": True,
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{args}"},
            },
        },
    )
    only(lint(tmpl), "CP130", "tool_calls")
    # ... and the value really is a string where OpenAI clients want an object
    for message, _ in outcomes(tmpl, '<c f {"x": 1}></c>'):
        assert isinstance(message["tool_calls"][0]["function"]["arguments"], str)


def test_cp131_tool_calls_not_a_list():
    tmpl = calls(
        repeats=False,
        transform={
            "type": "function",
            "function": {"name": "{content.name}", "arguments": "{content.arguments}"},
        },
    )
    finding = only(lint(tmpl), "CP131", "tool_calls")
    assert finding.example.startswith("<c>")
    for message, _ in outcomes(tmpl, finding.example):
        assert isinstance(message["tool_calls"], dict)  # one call, not a list of calls


def test_openai_shaped_tool_calls_are_clean():
    good = {
        "type": "function",
        "function": {"name": "{content.name}", "arguments": "{content.arguments}"},
    }
    assert not [f for f in lint(calls(transform=good)) if f.code.startswith("CP13")]


# --- the portability profile --------------------------------------------------------------------


def test_portability_profile_lists_each_construct():
    pattern = r"(?i)(?=<)<(t)\d\b\p{L}a++(?>b)\1"
    codes = [code for code, _, _ in portability_constructs(pattern)]
    assert codes == [
        "CP208",
        "CP201",
        "CP205",
        "CP202",
        "CP203",
        "CP204",
        "CP206",
        "CP206",
        "CP207",
    ]
    tmpl = template(content={}, r={"open_pattern": pattern, "close": "</r>", "repeats": True})
    assert {f.code for f in lint(tmpl, portable=True) if f.severity == "portability"} == set(codes)
    assert not [f for f in lint(tmpl) if f.severity == "portability"]  # only when asked


def test_portability_ignores_escapes_classes_and_literals():
    assert portability_constructs(r"\\d\(x\)[(\]+]\++(?:a)") == []
    assert [c for c, _, _ in portability_constructs(r"(?P<n>b)")] == ["CP209"]
    tmpl = template(content={}, r={"open": r"(\d\b)", "close": "</r>", "repeats": True})
    assert not [f for f in lint(tmpl, portable=True) if f.severity == "portability"]


def test_portability_matrix_cites_a_source_for_every_engine_and_construct():
    from chatparse.authoring.portability import ENGINES, MATRIX

    for engine in ENGINES.values():
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", engine.repository) and engine.path
    for code, row in MATRIX.items():
        assert set(row.verdicts) == set(ENGINES), code
        assert set(row.verdicts.values()) <= {"refuses", "differs", "accepts"}


# Codes a construct's minimal pattern may carry besides its own: a back-reference needs a group.
_NEEDED = {"CP207": {"CP205"}}


@pytest.mark.parametrize(
    "code", sorted(__import__("chatparse.authoring.portability", fromlist=["MATRIX"]).MATRIX)
)
def test_portability_detector_finds_each_construct_in_a_minimal_template(code):
    from chatparse.authoring.portability import MATRIX

    pattern = MATRIX[code].example
    field = {"open_pattern": pattern, "close": "</r>", "repeats": True}
    if "(?P<" in pattern:
        field["transform"] = {"n": "{n}"}  # the reference wants named captures used
    tmpl = template(content={}, r=field)
    if ReferenceParser is not None:
        ReferenceParser(tmpl, prefix="")  # transformers accepts the construct
    found = {f.code for f in lint(tmpl, portable=True) if f.severity == "portability"}
    assert code in found and found <= {code} | _NEEDED.get(code, set()), found
    finding = [f for f in lint(tmpl, portable=True) if f.code == code][0]
    for engine, verdict in MATRIX[code].verdicts.items():
        if verdict == "refuses":
            assert engine in finding.message.split("refused by ")[1].split(";")[0]
    clean = template(content={}, r={"open_pattern": "<r[0-9]>", "close": "</r>", "repeats": True})
    assert not [f for f in lint(clean, portable=True) if f.severity == "portability"]


# --- the built-ins ------------------------------------------------------------------------------


def _readme_table() -> dict[str, set[str]]:
    """family -> codes, from the README's "Lint findings of the built-ins" table."""
    text = README.read_text(encoding="utf-8")
    section = text.split("### Lint findings of the built-ins", 1)[1].split("\n#", 1)[0]
    table = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].startswith("`"):
            table[cells[0].strip("`")] = set(re.findall(r"CP\d{3}", cells[1]))
    return table


def test_every_builtin_lints_clean_or_is_explained_in_the_readme():
    table = _readme_table()
    for family in catalogue.families():
        codes = {f.code for f in lint(catalogue.builtin_template(family)) if f.severity != "note"}
        assert codes == table.get(family, set()), family


def test_readme_table_matches_chatparse_lint_json_for_every_builtin(capsys):
    from chatparse.cli.chatparse_command import main

    table = _readme_table()
    for family in catalogue.families():
        code = main(["lint", family, "--format", "json"])
        findings = json.loads(capsys.readouterr().out)
        assert code == (1 if findings else 0), family
        assert {f["code"] for f in findings} == table.get(family, set()), family
        for finding in findings:
            assert set(finding) >= {"code", "field", "delimiter", "message", "example", "fix"}


def _shows(tmpl: dict, finding: Finding, message, events) -> bool:
    if finding.code == "CP102":
        field = finding.field
        closes = [e["value"] for e in events if e["type"] == "region_close" and e["field"] == field]
        return len(closes) == 2 and closes[0] != closes[1] and message[field] == closes[1]
    if finding.code == "CP106":
        return opened(events, finding.field) >= 1
    if finding.code == "CP108":
        # The finding names the other delimiter's text it quotes: it is in the example, and the
        # field, cut where the quote began, does not hold it.
        quoted = re.search(r"also matches '([^']*)'", finding.message).group(1)
        # The message spells control chars of the witness as escapes (`name="\x00"`).
        quoted = re.sub(r"\\x([0-9a-f]{2})", lambda m: chr(int(m.group(1), 16)), quoted)
        value = message.get(finding.field)
        shown = value if isinstance(value, str) else json.dumps(value)
        return quoted in finding.example and value is not None and quoted not in shown
    raise AssertionError(f"no check written for {finding.code}")


def test_builtin_examples_show_their_trap():
    for family in catalogue.families():
        tmpl = catalogue.builtin_template(family)
        for finding in lint(tmpl):
            if finding.example is None:
                continue
            for result in outcomes(tmpl, finding.example):
                assert isinstance(result, tuple), (family, finding.code, result)
                assert _shows(tmpl, finding, *result), (family, finding)


# --- hostile templates --------------------------------------------------------------------------


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=hostile_templates())
def test_hostile_templates_lint_and_draw(case):
    from test_authoring_cli import read_dot

    from chatparse.authoring.graph import to_dot
    from chatparse.compiler.automata.region_automaton import build_regions
    from chatparse.compiler.frontend.spec import load_spec

    tmpl, _, _ = case
    try:
        spec = load_spec(tmpl)
    except (ValueError, TypeError):
        return
    findings = lint(tmpl, portable=True)
    json.dumps([f.as_dict() for f in findings])
    nodes, edges, _ = read_dot(to_dot(build_regions(spec)))
    assert {b for _, b, _ in edges} <= set(nodes)  # every edge ends at a declared node


def test_fallback_delimiters_get_examples_from_the_pattern_without_look_around():
    tmpl = template(
        content={"repeats": True, "join": ""},
        calls={"open_pattern": r"call(?=\[)", "close": "</c>", "content": "json"},
    )
    findings = lint(tmpl)
    finding = only(findings, "CP102", "calls")
    assert finding.example.count("call[") == 2  # the look-ahead's "[" comes from the body
    for message, events in outcomes(tmpl, finding.example):
        closes = [
            e["value"] for e in events if e["type"] == "region_close" and e["field"] == "calls"
        ]
        assert len(closes) == 2 and message["calls"] == closes[1] != closes[0]
    # "call" alone is prose, but the look-ahead keeps prose from opening it: no CP106
    assert not [f for f in findings if f.code == "CP106"]
    for message, _ in outcomes(tmpl, "we call it"):
        assert message == {"content": "we call it"}


def test_cp101_prefers_a_way_to_reopen_that_a_run_shows():
    # The close needs a look-ahead the witness lacks; the explicit field shows the trap instead.
    tmpl = template(content={"close_pattern": "<e(?=>)"}, r={"open": "<r>", "close": "</r>"})
    finding = only(lint(tmpl), "CP101", "content")
    assert "<r>" in finding.example
    after = finding.example.split("</r>")[-1]
    for message, _ in outcomes(tmpl, finding.example):
        assert message["content"] == after
