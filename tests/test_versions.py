"""The two version numbers of generated code track what they promise.

- `RUNTIME_ABI` (runtime/__init__.py, its only definition) names how generated code may call the
  runtime. Each ABI's signatures are recorded below; a change to any of them without a new ABI
  number fails here. A generated module calls `check_abi(N)` at import, so a module generated
  for another ABI stops with ImportError instead of a TypeError deep inside a parse.
- `CODEGEN_FORMAT` (compiler/codegen/codemodel.py) names the form of the output. The form of a fixed
  template that uses every construct the emitter has is recorded in
  tests/fixtures/codegen_shape.txt under the format number; a change of form without a new
  number fails here.

Recorded entries are history: add a new ABI (or format) rather than editing the last one.
"""

from __future__ import annotations

import ast
import inspect
import io
import os
import re
import tokenize
from pathlib import Path

import pytest

import chatparse.runtime as runtime
from chatparse import compile_template
from chatparse.compiler.codegen import codemodel
from chatparse.runtime import charclass

ROOT = Path(__file__).resolve().parent.parent

# How generated code may call the runtime, per ABI: parameter names, kinds and defaults
# (annotations are left out: they do not change how a call binds).
ABI_2 = {
    "check_abi": "(abi)",
    "Delimiter": "(source, pattern, *, classes=(), rows=(), ends=None, starts=(1, 1, 1), fallback=False, has_groups=False, literal=False)",
    "Row": "(exceptions, *, otherwise)",
    "Field": "(name, *, open=None, close=None, repeats=False, join=None, optional=True, dirty=False, value)",
    "Region": "(field, watch, pairs=None)",
    "Watch": "(kind, field, delimiter)",
    "CharSet.chars": "(text)",
    "CharSet.ranges": "(*pairs)",
    "Delimiter.groupdicts": "(self, text)",
    "RegionParser.parse": "(text, *, prefix=None, tools=None)",
    "RegionParser class attributes": "('fields', 'home', 'regions', 'start_anchor', 'template')",
    "charclass names": "('ANY', 'DIGIT', 'NOT_DIGIT', 'NOT_SPACE', 'NOT_WORD', 'SPACE', 'WORD')",
    "content.parse_text": "(text, args)",
    "content.parse_int": "(text, args)",
    "content.parse_float": "(text, args)",
    "content.parse_bool": "(text, args)",
    "content.parse_json": "(text, args)",
    "content.parse_xml_inline": "(text, args, tag_finder=None)",
    "content.parse_kv_lines": "(text, args)",
    "transform.lookup_placeholder": "(scope, path)",
    "transform.each_scope": "(field, value, captures)",
    "transform.apply_transform": "(transform, scope)",
}
ABI_3 = {
    **ABI_2,
    "Delimiter": "(source, pattern, *, classes=(), rows=(), ends=None, starts=(1, 1, 1), fallback=False, has_groups=False, literal=False, groups_pattern=None, groups_aliases=None, groups_ascii_only=False)",
}
# 4: the declared delimiter forms, content.text_value; the generated fast path's hook
# (RegionParser's class docstring); parse takes `malformed`.
ABI_4 = {
    **{name: form for name, form in ABI_3.items() if name != "Delimiter"},
    "Literal": "(text, *, may_grow=False)",
    "Literals": "(*alternatives, may_grow=False)",
    "LeadRunThenLiteral": "(lead, *literals, pattern)",
    "LeadRunThenLiterals": "(lead, *literals, pattern)",
    "LiteralThenRun": "(literal, trail, *, pattern)",
    "Dfa": "(*, pattern, states, ends, classes=None, starts=None, first_chars, lead=None, literals=None, has_groups=False, groups_pattern=None, groups_aliases=None, groups_ascii_only=False)",
    "RegexFallback": "(pattern, *, has_groups=False)",
    "content.text_value": "(body, captures)",
    "RegionParser.parse": "(text, *, prefix=None, tools=None, malformed='raise')",
    "RegionParser.feed": "(self, text)",
    "RegionParser._commit_whole": "(self, index, text)",
    "RegionParser._compact_body": "(self)",
}
# 5: the fast path per region (`fast_paths`, one function each) with its held tail
# (runtime/held.py, through `Region.held_tail`); its tables on the watches (`Watch(whole=, held=)`);
# `_idle` also while the region is not open yet, whose first fast chunk `_open_fast` returns.
ABI_5 = {
    **ABI_4,
    "Watch": "(kind, field, delimiter, *, whole=(), held=None, trail=None)",
    "RegionParser class attributes": "('fast_paths', 'fields', 'home', 'regions', 'start_anchor', 'template')",
    "RegionParser._open_fast": "(self, event)",
    "RegionParser._settle": "(self, text)",
    "RegionParser.finalize": "(self)",
    "Region.held_tail": "(self)",
    "HeldTail.cut": "(self, text)",
    "HeldTail.settled": "(self, text)",
    "HeldTail.leads_into": "(self, held, literal)",
}
# 6: a region's after-start form (`Region(after_start=)`), from buffer position 1 on; what every
# match of a look-ahead fallback begins with (`RegexFallback(lead=, literals=)`).
ABI_6 = {
    **ABI_5,
    "Region": "(field, watch, pairs=None, *, after_start=None)",
    "RegexFallback": "(pattern, *, has_groups=False, lead=None, literals=None, waits=None)",
}
# 7: a generated `feed` calls `_fast`; the fast path's held tail goes through `_hold`, and every
# chunk its test refuses through `_fast_declined`.
ABI_7 = {
    **ABI_6,
    "RegionParser._hold": "(self, tail)",
    "RegionParser._fast_declined": "(self, text)",
    "Region": "(field, watch, pairs=None, *, after_start=None, match_ends=None)",
}
# 8: python-call-list (`content.parse_python_call_list`); a field's tool-call coercion
# (`Field(typed=, coerce=)`).
ABI_8 = {
    **ABI_7,
    "Field": "(name, *, open=None, close=None, repeats=False, join=None, optional=True, dirty=False, value, typed=False, coerce=True)",
    "content.parse_python_call_list": "(text, args)",
}
# 9: a generated `parse_response` passes `tokenizer` (token-id input, transformers 5.25).
ABI_9 = {
    **ABI_8,
    "RegionParser.parse": "(text, *, prefix=None, tools=None, malformed='raise', tokenizer=None)",
}
# 10: the fast-path hook is public: generated code calls no private member of RegionParser.
_PRIVATE_HOOK = (
    "RegionParser._compact_body",
    "RegionParser._open_fast",
    "RegionParser._hold",
    "RegionParser._fast_declined",
)
ABI_10 = {
    **{name: form for name, form in ABI_9.items() if name not in _PRIVATE_HOOK},
    "RegionParser.compact_body": "(self)",
    "RegionParser.fast_open": "(self, event)",
    "RegionParser.fast_hold": "(self, tail)",
    "RegionParser.fast_decline": "(self, text)",
    "RegionParser.fast_feed_held": "(self, text)",
}
# 11: a fallback's pattern read by the compiler (`RegexFallback(lead_loop=, looks_behind=, asserts_end=)`).
ABI_11 = {
    **ABI_10,
    "RegexFallback": "(pattern, *, has_groups=False, lead=None, literals=None, waits=None, lead_loop=None, looks_behind=False, asserts_end=False)",
}
# 12: a `Dfa` declares what a whole-text run crosses at once (compiler/planning/run_crossings.py).
ABI_12 = {
    **ABI_11,
    "Dfa": "(*, pattern, states, ends, classes=None, starts=None, first_chars, lead=None, literals=None, has_groups=False, groups_pattern=None, groups_aliases=None, groups_ascii_only=False, stretches=None, loops=None)",
}
# 13: a `Dfa` whose look-aheads end its alternatives (compiler/automata/trailing_lookahead.py) says which
# states report through one and where such a match ends.
ABI_13 = {
    **ABI_12,
    "Dfa": "(*, pattern, states, ends, classes=None, starts=None, first_chars, lead=None, literals=None, has_groups=False, groups_pattern=None, groups_aliases=None, groups_ascii_only=False, stretches=None, loops=None, lookahead_ends=None, before_lookahead=None)",
}
# 14: a `Dfa` may declare the `re` spelling a whole-text search matches with at a candidate start
# (`anchored`: compiler/linear_backtracking.py proved one backtracking attempt linear).
ABI_14 = {
    **ABI_13,
    "Dfa": "(*, pattern, states, ends, classes=None, starts=None, first_chars, lead=None, literals=None, has_groups=False, groups_pattern=None, groups_aliases=None, groups_ascii_only=False, stretches=None, loops=None, lookahead_ends=None, before_lookahead=None, anchored=None)",
}
# 15: a watch declares what a held tail joins (`Watch(joins=)`) and a region's trail only where
# it is kept (compiler/planning/fast_path.py `held_tail_plan`); the region's `HeldTail` is built with
# the region; `Region` takes no `pairs`; `Dfa(first_chars=None)`: a match may begin anywhere.
ABI_15 = {
    **{name: form for name, form in ABI_14.items() if name != "Region.held_tail"},
    "Region": "(field, watch, *, after_start=None, match_ends=None)",
    "Watch": "(kind, field, delimiter, *, whole=(), held=None, joins=None, trail=None)",
    "HeldTail": "(*runs, trail=None)",
}
# 16: `Region(literal_scan=)`: whole-text search finds a region's literal forms with one `re`
# (compiler/planning/literal_scan.py decides where; runtime/whole.py `LiteralScan`).
ABI_16 = {
    **ABI_15,
    "Region": "(field, watch, *, after_start=None, match_ends=None, literal_scan=False)",
}
# 17: `Dfa(follows=)`: the chars that may follow each heads literal in a match, which a whole-text
# search's candidate finder looks ahead for (compiler/planning/analysis.py `head_follows`).
ABI_17 = {
    **ABI_16,
    "Dfa": "(*, pattern, states, ends, classes=None, starts=None, first_chars, lead=None, literals=None, follows=None, has_groups=False, groups_pattern=None, groups_aliases=None, groups_ascii_only=False, stretches=None, loops=None, lookahead_ends=None, before_lookahead=None, anchored=None)",
}
ABI_18 = {
    **ABI_17,
    "Dfa": "(*, pattern, states, ends, classes=None, starts=None, first_chars, lead=None, literals=None, follows=None, has_groups=False, groups_parts=None, groups_aliases=None, stretches=None, loops=None, lookahead_ends=None, before_lookahead=None, anchored=None)",
}
ABI_19 = {
    **ABI_18,
    "SpelledTagPattern": "(pattern, *parts, aliases=None)",
    "HalvedTagPattern": "(tag, head, tail)",
}
ABI_20 = {
    **ABI_19,
    "Dfa": "(*, pattern, states, ends, classes=None, starts=None, first_chars, lead=None, literals=None, follows=None, has_groups=False, groups_parts=None, groups_aliases=None, group_slice=None, stretches=None, loops=None, lookahead_ends=None, before_lookahead=None, anchored=None)",
    "GroupSlice": "(name, *, head, skip='', before_tail='', tail='', after_tail='')",
    "content.parse_json_one_pair": "(text, args, open_delim, close_delim)",
}
# 21: `SpelledTagTail`, a spelled tag's TAIL found by its branches' search, which a
# `HalvedTagPattern` takes as `tail` (with a `SpelledTagPattern` as `tag`).
ABI_21 = {
    **ABI_20,
    "SpelledTagTail": "(pattern, *parts, core, lead, at_end)",
}
# 22: the fast-path hook's `fast_taken` replaces `fast_open` and `compact_body`; `fast_hold` takes
# the function that gets the next chunk, and `fast_release` gives a held run back; `ChunkEnds`
# says whether a chunk may end in a char.
ABI_22 = {
    **{
        name: form
        for name, form in ABI_21.items()
        if name not in ("RegionParser.fast_open", "RegionParser.compact_body")
    },
    "RegionParser.fast_taken": "(self, event)",
    "RegionParser.fast_hold": "(self, tail, then=None)",
    "RegionParser.fast_release": "(self, text, fast)",
    "ChunkEnds": "(tail, keeps=None)",
}
ABI_HISTORY = {
    2: ABI_2,
    3: ABI_3,
    4: ABI_4,
    5: ABI_5,
    6: ABI_6,
    7: ABI_7,
    8: ABI_8,
    9: ABI_9,
    10: ABI_10,
    11: ABI_11,
    12: ABI_12,
    13: ABI_13,
    14: ABI_14,
    15: ABI_15,
    16: ABI_16,
    17: ABI_17,
    18: ABI_18,
    19: ABI_19,
    20: ABI_20,
    21: ABI_21,
    22: ABI_22,
}


def _call_form(function) -> str:
    signature = inspect.signature(function)
    parameters = [
        p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()
    ]
    return str(signature.replace(parameters=parameters, return_annotation=inspect.Signature.empty))


def current_abi_surface() -> dict[str, str]:
    surface = {}
    for name in ABI_HISTORY[runtime.RUNTIME_ABI]:
        if name == "RegionParser class attributes":
            # What a generated class sets; private ones are the runtime's own.
            public = (a for a in runtime.RegionParser.__annotations__ if not a.startswith("_"))
            surface[name] = str(tuple(sorted(public)))
        elif name == "charclass names":
            surface[name] = str(tuple(sorted(charclass.NAMED_SETS)))
        else:
            owner, _, attribute = name.partition(".")
            target = getattr(runtime, owner)
            surface[name] = _call_form(getattr(target, attribute) if attribute else target)
    return surface


def test_runtime_abi_has_one_definition():
    assert codemodel.RUNTIME_ABI is runtime.RUNTIME_ABI
    definitions = [
        path.relative_to(ROOT).as_posix()
        for folder in ("compiler", "runtime")
        for path in (ROOT / folder).rglob("*.py")
        if re.search(r"^RUNTIME_ABI\s*=", path.read_text(encoding="utf-8"), re.M)
    ]
    assert definitions == ["runtime/__init__.py"]


def test_runtime_signatures_change_only_with_a_new_abi():
    assert (
        max(ABI_HISTORY) == runtime.RUNTIME_ABI
    ), f"RUNTIME_ABI is {runtime.RUNTIME_ABI}: record its signatures as ABI_{runtime.RUNTIME_ABI} here"
    numbers = sorted(ABI_HISTORY)
    for older, newer in zip(numbers, numbers[1:]):
        assert (
            ABI_HISTORY[older] != ABI_HISTORY[newer]
        ), f"ABI {newer} records no change from ABI {older}"
    recorded, current = ABI_HISTORY[runtime.RUNTIME_ABI], current_abi_surface()
    changed = {
        name: (recorded[name], current[name])
        for name in recorded
        if recorded[name] != current[name]
    }
    assert not changed, (
        f"the runtime surface generated code calls changed under ABI {runtime.RUNTIME_ABI}: {changed}. "
        "Bump RUNTIME_ABI in runtime/__init__.py, record the new signatures as a new ABI here, and "
        "regenerate generated/ (compile-template --write-all)."
    )


# The constructors whose objects are Delimiters (their attributes are recorded as Delimiter.x).
DELIMITER_FORMS = {
    "Delimiter",
    "Literal",
    "Literals",
    "LeadRunThenLiteral",
    "LeadRunThenLiterals",
    "LiteralThenRun",
    "Dfa",
    "RegexFallback",
}


def _runtime_names_used(source: str) -> set[str]:
    """The runtime names a generated module calls or reads, as keys of the ABI table."""
    tree = ast.parse(source)
    imported = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("chatparse.runtime")
        for alias in node.names
    }
    delimiters = {
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and getattr(node.value.func, "id", None) in DELIMITER_FORMS
        for target in node.targets
    }
    used = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in imported
        ):
            used.add(node.func.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id in imported:
                used.add(f"{node.value.id}.{node.attr}")
            elif node.value.id in delimiters:
                used.add(f"Delimiter.{node.attr}")
            elif node.value.id == "ResponseParser":
                used.add(f"RegionParser.{node.attr}")
    return used


def test_abi_table_covers_every_runtime_name_generated_code_uses():
    sources = [
        path.read_text(encoding="utf-8") for path in sorted((ROOT / "generated").glob("*.py"))
    ]
    sources.append(compile_template(SHAPE_TEMPLATE))
    used = set().union(*map(_runtime_names_used, sources))
    charclass_names = set(
        ABI_HISTORY[runtime.RUNTIME_ABI]["charclass names"].strip("()").replace("'", "").split(", ")
    )
    unrecorded = sorted(
        used
        - set(ABI_HISTORY[runtime.RUNTIME_ABI])
        - charclass_names
        - {"RegionParser", "content", "transform", "CharSet"}
    )
    assert (
        not unrecorded
    ), f"generated code calls runtime names the ABI table does not record: {unrecorded}"


# --- CODEGEN_FORMAT ------------------------------------------------------------------------------

# One template that uses every construct the emitter has: literal, literal-list, lead-run,
# trail-run and DFA delimiters, a `regex` fallback, start states, Row rows, named groups (with
# `re` spelling and aliases), spelled-out transforms and transform_each, an xml-inline tag DFA,
# content_args, repeats/join/optional/dirty, an implicit field, a literal deep enough to be
# written in parts, python-call-list (typed coercion) and xml-inline's value_parser_by (none).
SHAPE_TEMPLATE = {
    "version": 1,
    "defaults": {"role": "assistant"},
    "start_anchor": ["<|assistant|>", "<|a|>"],
    "fields": {
        "reasoning": {"open_pattern": "^<think>|<reason>", "close": ["</think>", "</t>"]},
        "call": {
            "open_pattern": "<call (?:name=(?P<name>[a-z]+)|id=(?P<name>[0-9]+))>",
            "close": "</call>",
            "content": "json",
            "repeats": True,
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
        "calls": {
            "open": "[CALLS]",
            "close": "[/CALLS]",
            "content": "json",
            "transform": {"name": "{name}"},
            "transform_each": True,
        },
        "args": {
            "open": "<args>",
            "close": "</args>",
            "content": "xml-inline",
            "content_args": {"tag_pattern": "<(?P<key>[a-z]+)>(?P<value>[^<]*)</[a-z]+>"},
        },
        "kv": {
            "open": "<kv>",
            "close": "</kv>",
            "content": "kv-lines",
            "content_args": {
                "kv_sep": "=",
                "deep": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["x"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],
            },
        },
        "py": {"open": "<py>", "close": "</py>", "content": "python-call-list"},
        "by": {
            "open": "<by>",
            "close": "</by>",
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": "<(?P<key>[a-z]+) s=(?P<s>[01])>(?P<value>[^<]*)</[a-z]+>",
                "value_parser_by": {"group": "s", "parsers": {"0": {"name": "json"}}},
            },
        },
        "pick": {
            "open_pattern": "(?:[a-p]|q[a-p]|r[a-p])z",
            "close_pattern": "<e>(?=!)",
            "repeats": True,
            "join": "|",
            "optional": False,
        },
        "trail": {"open_pattern": r"\s*(?:<tr>|<t2>)", "close_pattern": r"</tr>\s*"},
        "content": {"close_pattern": r"\s*<end>"},
    },
}
SHAPE_FIXTURE = ROOT / "tests" / "fixtures" / "codegen_shape.txt"


def output_shape(source: str) -> str:
    """The form of a module with its values taken out: each string is S, each number N, quoted
    text and numbers in comments too, runs of like items in one literal become one, and runs of
    like lines one line. What is left changes when the emitter writes something differently, not
    when a template (or a DFA) gives other values."""
    lines, current = [], []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.NEWLINE, tokenize.NL):
            lines.append(" ".join(current))
            current = []
        elif token.type == tokenize.STRING:
            current.append("S")
        elif token.type == tokenize.NUMBER:
            current.append("N")
        elif token.type == tokenize.COMMENT:
            text = re.sub(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", "S", token.string)
            current.append(re.sub(r"\b[0-9a-f]{64}\b|\b\d+\b", "N", text))
        elif token.type in (tokenize.NAME, tokenize.OP):
            current.append(token.string)
        elif token.type == tokenize.INDENT:
            current.append("<indent>")
        elif token.type == tokenize.DEDENT:
            current.append("<dedent>")
    shape = []
    for line in lines:
        line = re.sub(r"\b_(\w+)_PART_N\b", r"_\1_PART_n", re.sub(r"_PART_\d+", "_PART_N", line))
        line = re.sub(r"(\b[SN](?: : [SN])? ,)(?: \1)+", r"\1 ...", line)
        if not shape or shape[-1] != line:
            shape.append(line)
    return "\n".join(shape) + "\n"


def test_codegen_format_changes_with_the_shape_of_the_output():
    shape = f"codegen format {codemodel.CODEGEN_FORMAT}\n" + output_shape(
        compile_template(SHAPE_TEMPLATE)
    )
    if os.environ.get("CHATPARSE_RECORD_SHAPE"):
        SHAPE_FIXTURE.write_text(shape, encoding="utf-8")
    recorded = SHAPE_FIXTURE.read_text(encoding="utf-8")
    recorded_format = int(recorded.split("\n", 1)[0].removeprefix("codegen format "))
    if recorded_format == codemodel.CODEGEN_FORMAT:
        assert shape == recorded, (
            f"the generated code changed form under CODEGEN_FORMAT {recorded_format}: bump CODEGEN_FORMAT "
            "in compiler/codegen/codemodel.py, then record the new form with CHATPARSE_RECORD_SHAPE=1 "
            "python -m pytest tests/test_versions.py and regenerate generated/"
        )
    else:
        pytest.fail(
            f"CODEGEN_FORMAT is {codemodel.CODEGEN_FORMAT} but the recorded form is format {recorded_format}: "
            "record it with CHATPARSE_RECORD_SHAPE=1 python -m pytest tests/test_versions.py"
        )
    assert shape != output_shape(
        compile_template({"start_anchor": "@", "fields": {"content": {}}})
    ), "the shape leaves out too much to tell two forms apart"


def test_output_shape_ignores_values_but_not_form():
    base = compile_template(SHAPE_TEMPLATE)
    renamed = compile_template(
        {**SHAPE_TEMPLATE, "start_anchor": ["<|assistant|>", "<|b|>"], "defaults": {"role": "x"}}
    )
    assert output_shape(base) == output_shape(renamed)
    assert output_shape(base) != output_shape(base.replace("first_chars=", "extra=1, first_chars="))
    assert output_shape(base) != output_shape(
        base.replace("# Each in the form the compiler", "# The")
    )
