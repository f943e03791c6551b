"""compiler/planning/analysis.py: the kind of each delimiter, and that a declared form means its pattern.

The kinds of the built-ins are written here by hand from the patterns. The property tests build
patterns from parts (literals, a lead run, a trail run), and check against `regex` that the
declared form the analysis finds matches what the pattern matches, and that the runtime delimiter
built from that form (what a generated module builds) finds the same matches.
"""

from __future__ import annotations

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from chatparse import catalogue
from chatparse.compiler.planning.analysis import (
    DFA,
    FALLBACK,
    LEAD_RUN_THEN_LITERALS,
    LITERAL,
    LITERAL_THEN_RUN,
    LITERALS,
    analyse,
    check_runtime,
    form_dfa,
    head_follows,
    to_runtime,
)
from chatparse.compiler.codegen.codemodel import _delimiter_model, build_runtime
from chatparse.compiler.frontend.regex_parse import parse_regex
from chatparse.compiler.automata.region_automaton import (
    build_regions,
    compile_delimiter,
    compile_dfa,
)
from chatparse.compiler.frontend.spec import DelimiterSpec, load_spec
from chatparse.compiler.frontend.symbolic_charclass import SymbolicCharSet

# (family, field, role) -> kind, read off each pattern by hand.
BUILT_IN_KINDS = {
    ("smollm3", None, "start_anchor"): LITERAL,  # "<|im_start|>assistant\n"
    ("smollm3", "reasoning_content", "open"): LITERAL,  # "<think>"
    ("smollm3", "reasoning_content", "close"): LITERAL,  # "</think>"
    ("smollm3", "tool_calls", "open"): LEAD_RUN_THEN_LITERALS,  # \s*<tool_call>
    ("smollm3", "tool_calls", "close"): LITERAL_THEN_RUN,  # </tool_call>\s*
    ("smollm3", "content", "close"): LEAD_RUN_THEN_LITERALS,  # \s*<\|im_end\|>
    ("qwen3", "content", "close"): LEAD_RUN_THEN_LITERALS,  # \s*(?:<\|im_end\|>|<\|endoftext\|>)
    ("gpt_oss", "reasoning_content", "open"): LITERAL,  # "<|channel|>analysis<|message|>"
    ("gpt_oss", "tool_calls", "open"): DFA,  # [^\s<]+ and [^<]* loops, named groups
    ("gpt_oss", "tool_calls", "close"): LITERAL,  # "<|call|>"
    ("gpt_oss", "content", "open"): LITERALS,  # ["<|channel|>final<|message|>", ...commentary...]
    ("gpt_oss", "content", "close"): LITERALS,  # ["<|end|>", "<|return|>"]
    ("hermes", "content", "close"): LEAD_RUN_THEN_LITERALS,  # \s*(?:<\|im_end\|>|<\|endoftext\|>)
    ("phi4_mini", "tool_calls", "open"): FALLBACK,  # \s*functools(?=\s*\[): look-ahead
    (
        "phi4_mini",
        "tool_calls",
        "close",
    ): LEAD_RUN_THEN_LITERALS,  # \s*(?:<\|end\|>|<\|endoftext\|>)
    ("phi4_mini", None, "start_anchor"): LITERAL,  # "<|assistant|>"
    ("qwen3_coder", "tool_calls", "open"): DFA,  # \s*<tool_call>\s*<function=(?P<name>[^>\n]+)>
    ("qwen3_thinking_2507", "reasoning_content", "open"): DFA,  # <think>|^: two start states
    ("ernie45", "reasoning_content", "open"): DFA,  # ^\s*(?:<think>\s*)?: anchored, can be empty
    ("internlm", "tool_calls", "close"): LITERAL_THEN_RUN,  # <\|action_end\|>\s*
    ("hunyuan", "tool_calls", "close"): LITERAL,  # "</tool_calls>"
    (
        "kimi_k2",
        "reasoning_content",
        "close",
    ): LITERALS,  # ["</think>", "<|tool_calls_section_begin|>"]
    # \s*(?:<｜end▁of▁sentence｜>|<｜tool▁calls▁end｜>): whether `｜` is a space depends on the
    # Unicode tables (it is not, in every release so far), so the DFA keeps both branches and
    # the form "spaces, then a literal" does not hold under every table.
    ("deepseek_r1", "content", "close"): DFA,
}


def _delimiter(family, field, role):
    automaton = build_regions(load_spec(catalogue.load_template(family)))
    if role == "start_anchor":
        return automaton.start_anchor
    return automaton.delimiters[field, role]


def test_built_in_kinds():
    found = {}
    for (family, field, role), _ in BUILT_IN_KINDS.items():
        compiled = _delimiter(family, field, role)
        found[family, field, role] = analyse(compiled.dfa, compiled.spec.literals).kind
    assert found == BUILT_IN_KINDS


def test_literal_list_is_longest_first_in_template_order():
    compiled = _delimiter("gpt_oss", "content", "close")
    analysis = analyse(compiled.dfa, compiled.spec.literals)
    assert analysis.literals == ("<|return|>", "<|end|>")
    assert analysis.first_chars == compiled.dfa.classes[0].chars("<")


def test_dump_names_the_kind_and_heads():
    compiled = _delimiter("smollm3", "content", "close")
    text = analyse(compiled.dfa).dump()
    assert text.splitlines()[0] == "kind: lead_run_then_literals"
    assert "heads: SPACE then one of '<|im_end|>'" in text


def test_a_form_the_dfa_does_not_mean_is_not_declared():
    # `\s*<a>|<b>`: a `<b>` after spaces starts at the `<`, not at the spaces, so this is not
    # "spaces, then <a> or <b>".
    dfa = compile_dfa(r"\s*<a>|<b>")
    assert analyse(dfa).kind == DFA
    lead_form = analyse(compile_dfa(r"\s*(?:<a>|<b>)"))
    assert lead_form.kind == LEAD_RUN_THEN_LITERALS
    assert form_dfa(lead_form) != dfa


def test_named_groups_keep_a_dfa():
    spec = DelimiterSpec(
        role="open",
        key="open_pattern",
        field="x",
        literals=None,
        pattern="(?P<name>abc)",
        can_extend=False,
        group_names=("name",),
    )
    assert _delimiter_model("X_OPEN", compile_delimiter(spec)).kind == DFA


def test_check_runtime_fails_on_other_tables():
    import pytest

    from chatparse.compiler.planning.analysis import FormMismatch
    from chatparse.runtime.delimiter_forms import Literal

    with pytest.raises(FormMismatch):
        check_runtime(Literal("<thinking>"), compile_dfa("<think>"))


# --- property: the declared form means the pattern ------------------------------------------------

LEADS = {r"\s": r"\s", "[ \t]": "[ \t]", "x": "x"}
literal = st.text(alphabet="ab<>|x ", min_size=1, max_size=4)
texts = st.text(alphabet="ab<>|x \t\u3000é", max_size=14)


def _escape(text: str) -> str:
    return regex.escape(text)


@st.composite
def patterns(draw):
    literals = draw(st.lists(literal, min_size=1, max_size=4, unique=True))
    lead = draw(st.sampled_from([None, *LEADS]))
    trail = draw(st.sampled_from([None, *LEADS])) if lead is None and len(literals) == 1 else None
    body = "|".join(_escape(text) for text in literals)
    pattern = (f"(?:{lead})*" if lead else "") + f"(?:{body})" + (f"(?:{trail})*" if trail else "")
    return pattern, lead, trail


def _charset(spelling):
    node = parse_regex(spelling)
    return node.charset if hasattr(node, "charset") else SymbolicCharSet.chars(node.char)


def _spans(pattern, text):
    compiled = regex.compile(pattern, regex.DOTALL)
    return [
        compiled.match(text, pos) and compiled.match(text, pos).end()
        for pos in range(len(text) + 1)
    ]


@settings(max_examples=150, deadline=None)
@given(patterns(), st.lists(texts, min_size=1, max_size=6))
def test_declared_form_matches_what_the_pattern_matches(drawn, samples):
    pattern, lead, trail = drawn
    analysis = analyse(compile_dfa(pattern))
    if analysis.kind == DFA:
        return  # a lead char in a literal, or an empty match: no form claimed
    body = "|".join(_escape(text) for text in analysis.literals)
    if analysis.kind == LEAD_RUN_THEN_LITERALS:
        assert lead is not None and analysis.lead == _charset(lead)
        form = f"(?:{lead})*(?:{body})"
    elif analysis.kind == LITERAL_THEN_RUN:
        assert trail is not None and analysis.trail == _charset(trail)
        form = f"(?:{body})(?:{trail})*"
    else:
        assert analysis.kind in (LITERAL, LITERALS) and lead is None and trail is None
        form = f"(?:{body})"
    spec = DelimiterSpec(
        role="close",
        key="close_pattern",
        field="x",
        literals=None,
        pattern=pattern,
        can_extend=True,
        group_names=(),
    )
    runtime = build_runtime(_delimiter_model("X_CLOSE", compile_delimiter(spec)))
    for text in samples:
        expected = _spans(pattern, text)
        assert _spans(form, text) == expected, (pattern, form, text)
        ours = [runtime.match_at(text, pos, final=True) for pos in range(len(text) + 1)]
        assert [end if outcome == "match" else None for outcome, end in ours] == expected
        found = regex.compile(pattern, regex.DOTALL).search(text)
        assert runtime.search(text) == (found.span() if found else None)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_a_literal_delimiter_names_itself_as_json_dumps_would(text):
    """delimiter_forms.py quotes literals without importing json; the spelling is json.dumps's."""
    import json

    from chatparse.runtime.delimiter_forms import Literal, Literals

    if not text:
        return
    assert Literal(text).source == json.dumps(text, ensure_ascii=False)
    assert Literals(text, text + "!").source == json.dumps([text, text + "!"], ensure_ascii=False)


TAILS = ["", r"\s*\{", "[a-z]+>", r"(?:x|\d)*;", r"b?", r"(?P<n>[ab]+)\|"]


@settings(max_examples=200, deadline=None)
@given(patterns(), st.sampled_from(TAILS), st.lists(texts, min_size=1, max_size=6))
def test_declared_heads_begin_every_match_and_every_pending_attempt(drawn, tail, samples):
    """The `Heads` a module declares (the runtime no longer reads them off its tables) are true:
    every match of the pattern, and every attempt still alive at the end of the text, is lead
    chars then one of the literals, or a prefix of that. Checked with `regex`."""
    pattern, _, _ = drawn
    pattern = f"(?:{pattern}){tail}"
    heads = analyse(compile_dfa(pattern)).heads
    if heads is None:
        return
    lead, literals = heads
    lead_class = "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in to_runtime(lead).ranges)
    begins = regex.compile(
        (f"[{lead_class}]*" if lead_class else "") + "(?:" + "|".join(map(_escape, literals)) + ")",
        regex.DOTALL,
    )
    compiled = regex.compile(pattern, regex.DOTALL)
    for text in samples:
        for pos in range(len(text) + 1):
            found = compiled.match(text, pos)
            if found is not None:
                assert begins.match(found.group()), (pattern, heads, found.group())
            elif compiled.match(text, pos, partial=True) is not None:
                # alive at the end: lead chars then part of a literal, or more
                rest = text[pos:]
                assert begins.match(rest, partial=True), (pattern, heads, rest)


@settings(max_examples=200, deadline=None)
@given(patterns(), st.sampled_from(TAILS), st.lists(texts, min_size=1, max_size=6))
def test_declared_follows_hold_after_the_literal_of_every_match(drawn, tail, samples):
    """The chars a module declares may follow a heads literal (`Dfa(follows=)`, which a whole-text
    search looks ahead for) are true: every match is lead chars, then a literal that is either one
    a match may end with (no follows) or followed in the text by one of its declared chars.
    Checked with `regex`."""
    pattern, _, _ = drawn
    pattern = f"(?:{pattern}){tail}"
    dfa = compile_dfa(pattern)
    heads = analyse(dfa).heads
    if heads is None:
        return
    lead, literals = heads
    follows = dict(zip(literals, head_follows(dfa, heads)))
    lead_chars = to_runtime(lead)
    compiled = regex.compile(pattern, regex.DOTALL)
    for text in samples:
        for pos in range(len(text) + 1):
            found = compiled.match(text, pos)
            if found is None:
                continue
            splits = []
            at = pos
            while True:
                splits += [(at, literal) for literal in literals if text.startswith(literal, at)]
                if at == len(text) or text[at] not in lead_chars:
                    break
                at += 1
            assert splits, (pattern, heads, found.group())
            assert any(
                follows[literal] is None
                or (
                    at + len(literal) < len(text)
                    and text[at + len(literal)] in to_runtime(follows[literal])
                )
                for at, literal in splits
            ), (pattern, text, pos, follows)
