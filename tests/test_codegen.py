"""Generated modules: deterministic, formatted, self-contained, and safe against hostile templates."""

from __future__ import annotations

import ast
import io
import os
import subprocess
import sys
import textwrap
import tokenize

import pytest
from cases_stream import GEMMA4, QWEN35, SMOLLM
from hypothesis import given, settings
from hypothesis import strategies as st
from support import (
    FAMILIES,
    HAVE_REFERENCE,
    REPO,
    chatparse_outcome,
    reference_one_shot,
    same_outcome,
)

import chatparse
from chatparse import compile_template
from chatparse.compiler.codegen.emit import comment_text, py_literal

ALLOWED_IMPORT_ROOTS = {"__future__", "chatparse", "regex"} | set(sys.stdlib_module_names)


def imported_modules(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module or "")
    return names


@pytest.mark.parametrize("template", [SMOLLM, QWEN35, GEMMA4], ids=["smollm", "qwen35", "gemma4"])
def test_generated_module_imports_only_the_runtime_stdlib_and_regex(template):
    modules = imported_modules(compile_template(template))
    assert all(name.split(".")[0] in ALLOWED_IMPORT_ROOTS for name in modules), modules
    assert not any(name.startswith("chatparse.compiler") for name in modules)
    assert "chatparse.runtime" in modules


# What importing a generated module must not load. The compiler and its tools would break the
# runtime/compiler split; the rest are modules the runtime uses only on some parse paths and
# imports there, since each costs a millisecond or more at import (regex ~8 ms, json ~3 ms).
DEFERRED_AT_IMPORT = (
    "chatparse.compiler",
    "jinja2",
    "black",
    "lark",
    "regex",
    "json",
    "copy",
    "threading",
    "typing",
    "inspect",
)


# The probe runs with -S: site-packages' .pth files (an editable install's finder, and on some machines
# a hook that imports certifi, and with it typing and threading) run before any user code, so what
# they load would be charged to chatparse, or hide what chatparse loads. The probe finds chatparse
# from the repository root itself and reads the other packages from the parent's sys.path.
PROBE_IMPORTS = """
import importlib, importlib.util, sys
sys.path[:] = {path!r}
before = sorted(m for m in {deferred!r} if m in sys.modules)
spec = importlib.util.spec_from_file_location(
    "chatparse", {init!r}, submodule_search_locations=[{root!r}]
)
package = importlib.util.module_from_spec(spec)
sys.modules["chatparse"] = package
spec.loader.exec_module(package)
for family in {families!r}:
    importlib.import_module("chatparse.generated." + family)
print(before, sorted(m for m in {deferred!r} if m in sys.modules))
"""


def test_importing_every_generated_module_loads_no_compiler_and_no_deferred_module():
    families = sorted(path.stem for path in (REPO / "generated").glob("[a-z]*.py"))
    assert len(families) == len(FAMILIES)
    code = PROBE_IMPORTS.format(
        path=[entry for entry in sys.path if entry],
        deferred=DEFERRED_AT_IMPORT,
        init=str(REPO / "__init__.py"),
        root=str(REPO),
        families=families,
    )
    out = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, check=True
    )
    # Nothing deferred was loaded before the imports (else the check would be empty), nor after.
    assert out.stdout.strip() == "[] []"


def test_same_template_same_bytes_under_different_hash_seeds():
    script = textwrap.dedent("""
        import hashlib, sys
        sys.path.insert(0, %r)
        from cases_stream import QWEN35
        from chatparse import compile_template
        print(hashlib.sha256(compile_template(QWEN35).encode()).hexdigest())
        """) % os.path.dirname(__file__)
    digests = set()
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        digests.add(out.stdout.strip())
    assert len(digests) == 1


def test_generated_source_is_black_formatted():
    import black

    source = compile_template(SMOLLM)
    assert black.format_str(source, mode=black.Mode(line_length=100)) == source


HOSTILE = [
    'x"; import os; os.system("echo pwned"); "',
    "x'''\"\"\"\n__import__('os').system('echo pwned')\n#",
    "{{ 7 * 7 }}{% raw %}{% endraw %}",
    "line\nbreak\r\nand\x00nul\u2028sep",
    "\\",
    "\ud800lone surrogate",
]


@pytest.mark.parametrize("payload", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_template_strings_stay_data(payload):
    template = {
        "defaults": {payload: payload, "role": "assistant"},
        "start_anchor": payload + "@",
        "fields": {
            payload: {
                "open": payload,
                "close": [payload + "!", "</" + payload + ">"],
                "transform": {payload: "{content}"},
            },
            "content": {"close_pattern": r"\s*<\|end\|>"},
        },
    }
    source = compile_template(template)
    tree = ast.parse(source)
    # Every identifier the module uses is one the code model chose, never template text.
    identifiers = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert "os" not in identifiers and "__import__" not in identifiers
    calls = {
        n.func.id if isinstance(n.func, ast.Name) else n.func.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
    }
    assert calls <= {
        "type",  # the generated `feed`'s test of a chunk that is no str
        "Literal",
        "Literals",
        "LeadRunThenLiteral",
        "LeadRunThenLiterals",
        "LiteralThenRun",
        "Dfa",
        "RegexFallback",
        "Field",
        "Region",
        "Row",
        "Watch",
        "check_abi",
        "chars",
        "from_ranges",
        "parse_text",
        "apply_transform",
        "lookup_placeholder",
        "parse",
        "float",
        "process_field",
        "parse_json",
        # the generated fast path (compiler/planning/fast_path.py)
        "feed",
        "append",
        "len",
        "fast_taken",
        "ChunkEnds",
        "frozenset",
        "isdisjoint",
        "join",
        "chr",
        "range",
        "map",
        "fast_feed",
        "fast",  # `feed`'s call of the current region's function (`fast = self.fast_feed`)
        "fast_decline",
        "fast_hold",
        "rstrip",
        "fast_release",
        "fast_feed_held",
    } | {name for name in identifiers if name.endswith("_feed")}, calls
    module = chatparse.load_module(template)
    assert module.TEMPLATE == template
    text = f"a {payload} b {payload}! c <|end|>"
    if HAVE_REFERENCE:
        expected = reference_one_shot(template, text, "")
        assert same_outcome(chatparse_outcome(template, [text], ""), expected)
        assert same_outcome(chatparse_outcome(template, list(text), ""), expected)


def test_template_cache_compiles_once_and_forgets_evicted_sources(monkeypatch):
    import linecache

    from chatparse import _memory

    monkeypatch.setattr(_memory, "_CACHE", {})
    monkeypatch.setattr(_memory, "_CACHE_LIMIT", 2)
    templates = [
        {"start_anchor": "<a>", "fields": {"content": {"close": f"<end{i}>"}}} for i in range(3)
    ]

    first = chatparse.load_module(templates[0])
    assert chatparse.load_module(dict(templates[0])) is first  # an equal dict hits the cache
    assert first.__file__ in linecache.cache  # tracebacks can show generated lines

    for template in templates[1:]:
        chatparse.load_module(template)
    assert first.__file__ not in linecache.cache
    assert chatparse.load_module(templates[0]) is not first  # evicted, so compiled again
    # After evictions, a module is still found by its template's hash (an equal dict).
    assert chatparse.load_module(dict(templates[0])) is chatparse.load_module(templates[0])
    assert chatparse.parse_response("hi<end2>", templates[2], prefix="") == {"content": "hi"}


@settings(max_examples=2000, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("\\\"'ab \n\r{}xNu\t") + ["\ud800", "é", "\x00", "\u2028"])
    )
)
def test_string_literals_read_back_exactly(text):
    # Patterns print as raw literals (r"\s*<x>") where one can hold them; never at the cost of a
    # single char, whatever quotes, backslash runs or line breaks the template string holds.
    literal = py_literal(text)
    assert ast.literal_eval(literal) == text
    assert literal.startswith(('r"', "'", '"'))


def test_patterns_print_as_raw_literals():
    assert py_literal(r"\s*<tool_call>") == r'r"\s*<tool_call>"'
    assert py_literal("a\\") == repr("a\\")  # an odd backslash run at the end needs repr


# Plain-string transforms and content_args quote template text at the very end of a one-line
# docstring: `r"""x: content 'text', transform "{content}""""` once failed to tokenize.
PLAIN_TRANSFORMS = [
    "{content}",
    "constant",
    'ends in a quote"',
    "ends in a backslash\\",
    'has """ inside',
    '"""',
    "# fmt: off",
    "{{ content }}",
    "\\",
    '"',
]


@pytest.mark.parametrize("transform", PLAIN_TRANSFORMS, ids=range(len(PLAIN_TRANSFORMS)))
def test_plain_string_transform_compiles_and_agrees_with_reference(transform):
    template = {
        "start_anchor": "<A>",
        "fields": {"x": {"open": "<x>", "close": "</x>", "transform": transform}},
    }
    source = compile_template(template)
    ast.parse(source)
    if HAVE_REFERENCE:
        for text in ("<x>hi</x>", "no field"):
            expected = reference_one_shot(template, text, "")
            assert same_outcome(chatparse_outcome(template, [text], ""), expected), (text, expected)


HOSTILE_TEXT = st.text(
    alphabet=st.sampled_from(
        list("\\\"'#{}% ab\n\r\x00\x0c\x1c\x85") + ["\ud800", "\udfff", "\u2028", "\U0001f600"]
    )
)


@settings(max_examples=1000, deadline=None, derandomize=True)
@given(text=HOSTILE_TEXT)
def test_comment_filter_output_is_one_line_safe_in_comments_and_docstrings(text):
    line = comment_text(text)
    assert line.isprintable() and "#" not in line
    # As the whole of a raw docstring, and as its first or last part next to other text:
    for docstring in (f'r"""{line}"""', f'r"""{line}, compiled"""', f'r"""x: {line}"""'):
        module = ast.parse(docstring)
        assert len(module.body) == 1 and isinstance(module.body[0].value.value, str)
    # As a comment it stays one comment on its line, and it cannot hold a pragma.
    tokens = list(tokenize.generate_tokens(io.StringIO(f"X = 1  # 3 {line}\n").readline))
    assert [t.type for t in tokens].count(tokenize.COMMENT) == 1
    assert [t.type for t in tokens].count(tokenize.NEWLINE) == 1


@pytest.mark.parametrize("pragma", ["# fmt: off", "# fmt: skip", "#fmt:off", "# type: ignore"])
def test_template_text_cannot_switch_black_off(pragma):
    # A pragma in a delimiter lands in row comments and the diagram: black must still format
    # every line after it, so the module stays black's output of itself.
    import black

    template = {
        "start_anchor": "@",
        "fields": {"x": {"open": pragma, "close": "</x>"}, "content": {}},
    }
    source = compile_template(template)
    assert "fmt:" not in "".join(
        line for line in source.splitlines() if line.lstrip().startswith("#")
    )
    mode = black.Mode(line_length=100, target_versions={black.TargetVersion.PY310})
    assert black.format_str(source, mode=mode) == source


@pytest.mark.parametrize("args", [[], None, [{"strip": False}], "strip", 0, False], ids=repr)
@pytest.mark.parametrize("content", ["text", "json", "xml-inline", "kv-lines"])
def test_non_dict_content_args_fails_when_parsed_as_in_the_reference(args, content):
    # The reference stores content_args unchecked; its parsers call args.get(...), so each value
    # of the field raises AttributeError, and a text without the field parses fine.
    template = {
        "start_anchor": "<A>",
        "fields": {
            "x": {"open": "<x>", "close": "</x>", "content": content, "content_args": args},
            "content": {},
        },
    }
    for text in ("a <x>[1]</x> b", "a b", "a <x>open only"):
        for chunks in ([text], list(text)):
            got = chatparse_outcome(template, chunks, "")
            if HAVE_REFERENCE:
                assert same_outcome(got, reference_one_shot(template, text, "")), (text, got)
            assert (got[0] == "error") == ("<x>" in text), got
    with pytest.raises(AttributeError, match=r"Field 'x': 'content_args' must be a dict"):
        chatparse.parse_response("<x>1</x>", template, prefix="")
