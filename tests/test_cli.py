"""The two command-line tools: `compile-template` (chatparse.cli.compile_template) and `chatparse`
(chatparse.cli.chatparse_command), run in-process through `main(argv)`, plus one subprocess smoke
test of each.

Most tests point `chatparse.catalogue.package_root` at a temporary directory holding its own
templates/, samples/ and generated/, so they never read or write the real repository and do not
depend on which built-in families exist yet. Parsed messages are checked against hand-written
expectations and against the reference (`transformers.utils.chat_parsing`) on the same input.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import exec_module, merge_chunks, needs_reference

from chatparse import catalogue
from chatparse.cli import chatparse_command as chatparse_cli
from chatparse.cli import compile_template as compile_cli

try:
    from transformers.utils.chat_parsing import ResponseParser as ReferenceParser
    from transformers.utils.chat_parsing import parse_response as reference_parse
except ImportError:  # the reference is a test-only dependency
    ReferenceParser = reference_parse = None

# A small Qwen/SmolLM-style template, written for these tests.
TOY = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open_pattern": r"\s*<tool_call>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close_pattern": r"\s*<\|im_end\|>", "content": "text"},
    },
}
TOY_TEXT = (
    "<think>plan</think>Hi there"
    '<tool_call>{"name": "add", "arguments": {"a": 1, "b": "2"}}</tool_call><|im_end|>'
)
TOY_MESSAGE = {  # by hand, from the template: b stays a string without tools
    "role": "assistant",
    "reasoning_content": "plan",
    "content": "Hi there",
    "tool_calls": [
        {"type": "function", "function": {"name": "add", "arguments": {"a": 1, "b": "2"}}}
    ],
}
ADD_TOOL = {
    "type": "function",
    "function": {
        "name": "add",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        },
    },
}
# A prompt whose template pre-writes <think>: the output starts inside the reasoning region.
THINK_PREFIX = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>"
THINK_TEXT = "plan</think>ok<|im_end|>"
SAMPLE = {
    "prefix": THINK_PREFIX,
    "text": 'plan</think>Adding.\n<tool_call>{"name": "add", "arguments": {"a": 1, "b": "2"}}</tool_call><|im_end|>',
    "tools": [ADD_TOOL],
}


def run(main, argv, capsys):
    """(exit status, stdout, stderr) of `main(argv)`; argparse's own errors exit via SystemExit."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write_json(path: Path, value) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")
    return path


@pytest.fixture
def root(tmp_path, monkeypatch):
    """A stand-in package root with two built-in families, one with a sample."""
    root = tmp_path / "pkg"
    write_json(root / "templates" / "toy.json", TOY)
    write_json(
        root / "templates" / "toy_plain.json",
        {"start_anchor": "<|assistant|>", "fields": {"content": {"content": "text"}}},
    )
    write_json(root / "samples" / "toy.json", SAMPLE)
    (root / "generated").mkdir()
    (root / "generated" / "__init__.py").write_text("")
    monkeypatch.setattr(catalogue, "package_root", lambda: root)
    return root


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    """A working directory outside the package root."""
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return cwd


def header(source: str) -> dict[str, str]:
    """The `# key: value` lines at the top of a generated module."""
    lines = {}
    for line in source.splitlines():
        if not line.startswith("#"):
            break
        key, _, value = line[1:].partition(":")
        lines[key.strip()] = value.strip()
    return lines


# --- compile-template: compiling -------------------------------------------------------------


@needs_reference
def test_compile_to_stdout_gives_a_working_module(root, elsewhere, capsys):
    path = write_json(elsewhere / "mine.json", TOY)
    code, out, err = run(compile_cli.main, [str(path)], capsys)
    assert code == 0, err
    assert header(out)["source"] == "mine.json"  # outside the package root: the file name
    assert header(out)["rebuild"] == "compile-template mine.json"
    parsed = exec_module(out)["parse_response"](TOY_TEXT, prefix="")
    assert parsed == TOY_MESSAGE == reference_parse(TOY_TEXT, TOY, prefix="")


def test_output_is_independent_of_cwd_and_of_how_src_is_named(root, elsewhere, monkeypatch, capsys):
    out_path = root / "generated" / "toy.py"
    assert (
        run(compile_cli.main, [str(root / "templates" / "toy.json"), "-o", str(out_path)], capsys)[
            0
        ]
        == 0
    )
    first = out_path.read_bytes()
    assert header(first.decode())["source"] == "templates/toy.json"
    assert (
        header(first.decode())["rebuild"]
        == "compile-template templates/toy.json -o generated/toy.py"
    )

    out_path.unlink()
    monkeypatch.chdir(root)
    assert run(compile_cli.main, ["toy", "-o", "generated/toy.py"], capsys)[0] == 0
    assert out_path.read_bytes() == first

    out_path.unlink()
    code, out, err = run(compile_cli.main, ["--write-all"], capsys)
    assert code == 0, err
    assert "wrote generated/toy.py" in out
    assert out_path.read_bytes() == first


def test_tokenizer_config_uses_its_response_template(root, elsewhere, capsys):
    config = write_json(
        elsewhere / "model" / "tokenizer_config.json", {"eos_token": "x", "response_template": TOY}
    )
    code, out, err = run(compile_cli.main, [str(config)], capsys)
    assert code == 0, err
    assert header(out)["source"] == "tokenizer_config.json"
    # A directory holding a tokenizer_config.json works the same way.
    assert run(compile_cli.main, [str(config.parent)], capsys)[1] == out


def test_list_prints_the_built_in_families_sorted(root, capsys):
    assert run(compile_cli.main, ["--list"], capsys)[:2] == (0, "toy\ntoy_plain\n")


# --- compile-template: --check, --check-all, --write-all ---------------------------------------


def test_check_up_to_date_exits_0(root, elsewhere, capsys):
    out_path = elsewhere / "toy.py"
    assert run(compile_cli.main, ["toy", "-o", str(out_path)], capsys)[0] == 0
    before = out_path.read_bytes()
    code, out, err = run(compile_cli.main, ["toy", "-o", str(out_path), "--check"], capsys)
    assert (code, out) == (0, "")
    assert "up to date" in err
    assert out_path.read_bytes() == before


def test_check_stale_exits_1_with_a_unified_diff_and_writes_nothing(root, elsewhere, capsys):
    out_path = elsewhere / "toy.py"
    run(compile_cli.main, ["toy", "-o", str(out_path)], capsys)
    good = out_path.read_text()
    lines = good.splitlines(keepends=True)
    lines[-1] = "EDITED = True\n"
    out_path.write_text("".join(lines))
    code, out, err = run(compile_cli.main, ["toy", "-o", str(out_path), "--check"], capsys)
    assert code == 1
    assert out.startswith(f"--- {out_path} (committed)\n+++ {out_path} (generated)\n")
    assert "\n-EDITED = True\n" in out
    assert "\n+" + good.splitlines()[-1] + "\n" in out
    assert "rebuild: compile-template templates/toy.json -o toy.py" in err
    assert "EDITED" in out_path.read_text()


def test_check_missing_output_exits_1(root, elsewhere, capsys):
    code, out, err = run(compile_cli.main, ["toy", "-o", "nothing.py", "--check"], capsys)
    assert code == 1
    assert out.startswith("--- /dev/null\n") and "missing" in err
    assert not (elsewhere / "nothing.py").exists()


def test_check_all_lists_missing_stale_and_orphan_modules(root, capsys):
    generated = root / "generated"
    (generated / "gone.py").write_text("# no template\n")
    code, out, err = run(compile_cli.main, ["--check-all"], capsys)
    assert code == 1
    assert (
        "generated/toy.py: missing; rebuild: compile-template templates/toy.json -o generated/toy.py"
        in out
    )
    assert "generated/toy_plain.py: missing" in out
    assert "generated/gone.py" in out

    (generated / "gone.py").unlink()
    assert run(compile_cli.main, ["--write-all"], capsys)[0] == 0
    assert run(compile_cli.main, ["--check-all"], capsys)[:2] == (0, "")

    (generated / "toy.py").write_text((generated / "toy.py").read_text() + "# hand edit\n")
    code, out, _ = run(compile_cli.main, ["--check-all"], capsys)
    assert code == 1
    assert out == (
        "generated/toy.py: out of date; rebuild: compile-template templates/toy.json -o generated/toy.py\n"
    )


def test_write_all_rewrites_only_what_changed(root, capsys):
    assert (
        run(compile_cli.main, ["--write-all"], capsys)[1]
        == "wrote generated/toy.py\nwrote generated/toy_plain.py\n"
    )
    code, out, err = run(compile_cli.main, ["--write-all"], capsys)
    assert (code, out) == (0, "")
    assert "0 written, 2 unchanged" in err


def test_check_all_reports_an_invalid_built_in_with_exit_2(root, capsys):
    write_json(root / "templates" / "broken.json", {"fields": {"content": {"opne": "x"}}})
    code, _, err = run(compile_cli.main, ["--check-all"], capsys)
    assert code == 2
    assert "templates/broken.json: invalid template" in err and "opne" in err

    code, out, err = run(compile_cli.main, ["--write-all"], capsys)
    assert code == 2
    assert out == "wrote generated/toy.py\nwrote generated/toy_plain.py\n"
    assert "2 written, 0 unchanged" in err  # the broken template is neither
    assert not (root / "generated" / "broken.py").exists()


# --- compile-template: errors (exit 2, one line on stderr) -------------------------------------


def assert_one_line_error(result, *needles):
    code, out, err = result
    assert code == 2
    assert out == ""
    assert err.startswith("compile-template: error: ") and err.count("\n") == 1, err
    for needle in needles:
        assert needle in err, (needle, err)


def test_error_missing_file(root, elsewhere, capsys):
    assert_one_line_error(
        run(compile_cli.main, ["nope/t.json"], capsys), "nope/t.json", "no such file"
    )


def test_error_invalid_json_names_line_and_column(root, elsewhere, capsys):
    (elsewhere / "bad.json").write_text('{\n  "fields": {\n    "content": {,}\n  }\n}\n')
    assert_one_line_error(
        run(compile_cli.main, ["bad.json"], capsys), "bad.json", "line 3, column 17"
    )


def test_error_config_without_response_template(root, elsewhere, capsys):
    write_json(elsewhere / "tokenizer_config.json", {"chat_template": "{{ messages }}"})
    result = run(compile_cli.main, ["tokenizer_config.json"], capsys)
    assert_one_line_error(result, "tokenizer_config.json", "'response_template'")
    # Recognised by its keys too, whatever the file is called.
    write_json(elsewhere / "cfg.json", {"tokenizer_class": "X", "eos_token": "</s>"})
    assert_one_line_error(run(compile_cli.main, ["cfg.json"], capsys), "'response_template'")


def test_error_invalid_template_names_the_field_and_key(root, elsewhere, capsys):
    write_json(elsewhere / "t.json", {"fields": {"answer": {"opne": "<a>"}}})
    assert_one_line_error(
        run(compile_cli.main, ["t.json"], capsys), "t.json", "invalid template", "answer", "opne"
    )


def test_error_unknown_built_in_suggests_close_names(root, elsewhere, capsys):
    assert_one_line_error(run(compile_cli.main, ["toyy"], capsys), "'toyy'", "did you mean toy")
    # Nothing close: list what exists instead.
    assert_one_line_error(
        run(compile_cli.main, ["qwen9"], capsys), "'qwen9'", "known: toy, toy_plain"
    )


def test_unknown_name_among_many_points_to_the_listing():
    many = [f"family{i}" for i in range(12)]
    message = catalogue.unknown_family_message("zzz", many)
    assert message == "unknown built-in template 'zzz'; see `compile-template --list`"


def test_error_unwritable_output(root, elsewhere, capsys):
    result = run(compile_cli.main, ["toy", "-o", "no_such_dir/toy.py"], capsys)
    assert_one_line_error(result, "no_such_dir/toy.py", "cannot write")
    assert not (elsewhere / "no_such_dir").exists()


def test_usage_errors_exit_2(root, capsys):
    assert run(compile_cli.main, [], capsys)[0] == 2
    assert run(compile_cli.main, ["toy", "--check"], capsys)[0] == 2  # --check needs -o
    assert run(compile_cli.main, ["toy", "--list"], capsys)[0] == 2
    assert run(compile_cli.main, ["--list", "--check-all"], capsys)[0] == 2


# --- chatparse parse -------------------------------------------------------------------------


@pytest.fixture
def toy_files(elsewhere):
    write_json(elsewhere / "toy.json", TOY)
    (elsewhere / "out.txt").write_text(TOY_TEXT, encoding="utf-8")
    write_json(elsewhere / "tools.json", [ADD_TOOL])
    return elsewhere


@needs_reference
def test_parse_file_prints_the_message(root, toy_files, capsys):
    code, out, err = run(chatparse_cli.main, ["parse", "toy.json", "out.txt"], capsys)
    assert code == 0, err
    assert json.loads(out) == TOY_MESSAGE == reference_parse(TOY_TEXT, TOY, prefix="")


def test_parse_reads_stdin_bytes_exactly(root, toy_files, monkeypatch, capsys):
    # \r\n must reach the parser untranslated: it is part of the content.
    text = "<think>a\r\nb</think>c\r\n<|im_end|>"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8"))))
    code, out, err = run(chatparse_cli.main, ["parse", "toy.json"], capsys)
    assert code == 0, err
    assert json.loads(out) == {"role": "assistant", "reasoning_content": "a\r\nb", "content": "c"}


def test_parse_prefix_and_prefix_file(root, toy_files, capsys):
    (toy_files / "out2.txt").write_text(THINK_TEXT)
    expected = {"role": "assistant", "reasoning_content": "plan", "content": "ok"}
    code, out, err = run(
        chatparse_cli.main, ["parse", "toy.json", "out2.txt", "--prefix", THINK_PREFIX], capsys
    )
    assert (code, json.loads(out)) == (0, expected), err
    (toy_files / "prefix.txt").write_text(THINK_PREFIX)
    code, out, err = run(
        chatparse_cli.main, ["parse", "toy.json", "out2.txt", "--prefix-file", "prefix.txt"], capsys
    )
    assert (code, json.loads(out)) == (0, expected), err
    # Without a prefix the output is the whole message: no <think> was seen, so all of it is content.
    code, out, _ = run(chatparse_cli.main, ["parse", "toy.json", "out2.txt"], capsys)
    assert json.loads(out) == {"role": "assistant", "content": "plan</think>ok"}


def test_parse_tools_cast_arguments_by_schema(root, toy_files, capsys):
    code, out, err = run(
        chatparse_cli.main, ["parse", "toy.json", "out.txt", "--tools", "tools.json"], capsys
    )
    assert code == 0, err
    assert json.loads(out)["tool_calls"][0]["function"]["arguments"] == {"a": 1, "b": 2}


@needs_reference
def test_parse_events_match_the_reference(root, toy_files, capsys):
    (toy_files / "out2.txt").write_text(THINK_TEXT)
    code, out, err = run(
        chatparse_cli.main,
        ["parse", "toy.json", "out2.txt", "--prefix", THINK_PREFIX, "--events"],
        capsys,
    )
    assert code == 0, err
    reference = ReferenceParser(TOY, prefix=THINK_PREFIX)
    events = list(reference.initial_events) + reference.feed(THINK_TEXT)
    message, final = reference.finalize()
    assert json.loads(out) == {"message": message, "events": merge_chunks(events + final)}
    assert json.loads(out)["events"][0] == {"type": "region_open", "field": "reasoning_content"}


@pytest.mark.parametrize(
    "argv, needles",
    [
        (["parse", "missing.json", "out.txt"], ["missing.json", "no such file"]),
        (["parse", "toy.json", "missing.txt"], ["missing.txt", "no such file"]),
        (["parse", "toy.json", "out.txt", "--tools", "missing.json"], ["--tools", "no such file"]),
        (["parse", "toy.json", "out.txt", "--tools", "bad.json"], ["--tools", "line 1, column 2"]),
        (
            ["parse", "toy.json", "out.txt", "--tools", "toy.json"],
            ["--tools", "expected a JSON list"],
        ),
        (
            ["parse", "toy.json", "out.txt", "--prefix-file", "nope.txt"],
            ["--prefix-file", "no such file"],
        ),
        (["parse", "invalid.json", "out.txt"], ["invalid template", "content", "opne"]),
        (["parse", "toy.json", "badcall.txt"], ["cannot parse badcall.txt", "ValueError", "JSON"]),
        (["parse", "toyy", "out.txt"], ["'toyy'", "did you mean toy"]),
        (["demo", "toyy"], ["'toyy'", "did you mean toy"]),
    ],
)
def test_chatparse_errors_exit_2_with_one_line(root, toy_files, capsys, argv, needles):
    (toy_files / "bad.json").write_text("{oops")
    write_json(toy_files / "invalid.json", {"fields": {"content": {"opne": "x"}}})
    (toy_files / "badcall.txt").write_text("<tool_call>{bad</tool_call>")
    code, out, err = run(chatparse_cli.main, argv, capsys)
    assert (code, out) == (2, "")
    assert err.startswith("chatparse: error: ") and err.count("\n") == 1, err
    for needle in needles:
        assert needle in err, (needle, err)


def test_chatparse_usage_errors_exit_2(root, capsys):
    assert run(chatparse_cli.main, [], capsys)[0] == 2
    assert run(chatparse_cli.main, ["demo", "toy", "--chunk-size", "0"], capsys)[0] == 2
    assert (
        run(chatparse_cli.main, ["parse", "toy", "--prefix", "a", "--prefix-file", "b"], capsys)[0]
        == 2
    )


# --- chatparse demo --------------------------------------------------------------------------

EVENT_LINE = re.compile(r"^ *(prefix|#\d+|end)  (open |chunk|close)  (\w+)(?: +(.*))?$")


def test_demo_without_family_lists_families_with_samples(root, capsys):
    code, out, _ = run(chatparse_cli.main, ["demo"], capsys)
    assert (code, out) == (0, "toy\n")  # toy_plain has no sample


@needs_reference
def test_demo_streams_every_event_then_the_message(root, capsys):
    code, out, err = run(chatparse_cli.main, ["demo", "toy", "--chunk-size", "3"], capsys)
    assert code == 0, err
    head, _, message = out.partition("# message:\n")
    reference = ReferenceParser(TOY, prefix=SAMPLE["prefix"], tools=SAMPLE["tools"])
    expected = [("prefix", e) for e in reference.initial_events]
    text = SAMPLE["text"]
    for number, start in enumerate(range(0, len(text), 3), start=1):
        expected += [(f"#{number}", e) for e in reference.feed(text[start : start + 3])]
    final_message, final = reference.finalize()
    expected += [("end", e) for e in final]
    assert json.loads(message) == final_message
    assert final_message["tool_calls"][0]["function"]["arguments"] == {
        "a": 1,
        "b": 2,
    }  # tools applied

    lines = [line for line in head.splitlines() if not line.startswith("#")]
    assert len(lines) == len(expected)  # one line per event, nothing merged
    for line, (when, event) in zip(lines, expected):
        match = EVENT_LINE.match(line)
        assert match, line
        assert match.group(1) == when
        assert match.group(2).strip() == event["type"].removeprefix("region_")
        assert match.group(3) == event["field"]
        if event["type"] == "region_chunk":
            assert match.group(4).startswith(repr(event["text"]))
            assert match.group(4).endswith("(dirty)") == event["dirty"]
        if event["type"] == "region_close":
            assert json.loads(match.group(4).removeprefix("= ")) == event["value"]


def test_demo_default_chunks_are_small_and_deterministic(root, capsys):
    first = run(chatparse_cli.main, ["demo", "toy"], capsys)
    assert first == run(chatparse_cli.main, ["demo", "toy"], capsys)
    assert first[0] == 0
    feeds = [int(m) for m in re.findall(r"^ *#(\d+) ", first[1], re.M)]
    length = len(SAMPLE["text"])
    assert length / 6 <= max(feeds) <= length
    pieces = list(chatparse_cli.server_chunks(SAMPLE["text"]))
    assert "".join(pieces) == SAMPLE["text"]
    assert {len(p) for p in pieces[:-1]} <= set(range(1, 7)) and len({len(p) for p in pieces}) > 2


def real_demo_family() -> list:
    """One real built-in family with a sample (preferring one with a committed module), or None."""
    names = sorted(
        catalogue.sample_families(), key=lambda f: (not catalogue.generated_path(f).exists(), f)
    )
    return names[:1] or [None]


@needs_reference
@pytest.mark.parametrize("family", real_demo_family())
def test_demo_on_a_real_built_in_family(family, capsys):
    if family is None:
        pytest.skip("no built-in family with a bundled sample yet")
    template = catalogue.builtin_template(family)
    sample = catalogue.load_sample(family)
    code, out, err = run(chatparse_cli.main, ["demo", family], capsys)
    assert code == 0, err
    origin = "(committed)" if catalogue.generated_path(family).exists() else "compiled in memory"
    assert origin in out.splitlines()[0]
    message = json.loads(out.partition("# message:\n")[2])
    expected = reference_parse(
        sample["text"], template, prefix=sample.get("prefix") or "", tools=sample.get("tools")
    )
    assert message == expected


@pytest.mark.parametrize("family", catalogue.families()[:1] or [None])
def test_compile_a_real_built_in_by_name(family, elsewhere, capsys):
    if family is None:
        pytest.skip("no built-in template yet")
    code, out, err = run(compile_cli.main, [family], capsys)
    assert code == 0, err
    assert header(out)["source"] == f"templates/{family}.json"
    assert header(out)["rebuild"] == f"compile-template templates/{family}.json"
    module = exec_module(out)
    assert module["TEMPLATE"] == catalogue.builtin_template(family)


# --- console scripts, out of process ---------------------------------------------------------


def _script(name: str) -> str | None:
    """The installed entry point next to this interpreter, if any."""
    path = Path(sys.executable).with_name(name)
    return str(path) if path.exists() else shutil.which(name)


@pytest.mark.parametrize(
    "module, script, argv",
    [
        ("chatparse.cli.compile_template", "compile-template", ["--list"]),
        ("chatparse.cli.chatparse_command", "chatparse", ["demo"]),
    ],
)
def test_console_scripts_run(module, script, argv):
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    by_module = subprocess.run(
        [sys.executable, "-m", module, *argv], capture_output=True, text=True, env=env
    )
    assert by_module.returncode == 0, by_module.stderr
    assert by_module.stdout.splitlines() == (
        catalogue.families() if script == "compile-template" else catalogue.sample_families()
    )
    installed = _script(script)
    if installed is None:
        pytest.skip(f"{script} is not installed")
    by_script = subprocess.run([installed, "--help"], capture_output=True, text=True, env=env)
    assert by_script.returncode == 0, by_script.stderr
    assert by_script.stdout.startswith(f"usage: {script}")


@pytest.mark.parametrize("family", ["smollm3", "qwen3", "gpt_oss", "qwen3_coder"])
@pytest.mark.parametrize("chunk_size", [None, 1, 7])
def test_parse_openai_prints_a_chunk_stream_that_accumulates_to_the_message(
    family, chunk_size, tmp_path, capsys
):
    import openai_oracle

    sample = catalogue.load_sample(family)
    output = tmp_path / "out.txt"
    output.write_text(sample["text"], encoding="utf-8")
    argv = ["parse", family, str(output), "--prefix", sample.get("prefix") or "", "--openai"]
    if sample.get("tools"):
        tools = tmp_path / "tools.json"
        tools.write_text(json.dumps(sample["tools"]), encoding="utf-8")
        argv += ["--tools", str(tools)]
    if chunk_size:
        argv += ["--chunk-size", str(chunk_size)]
    code, out, err = run(chatparse_cli.main, argv, capsys)
    assert code == 0, err
    chunks = [json.loads(line) for line in out.splitlines()]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    expected = reference_sample_message(sample, family)
    accumulated = openai_oracle.accumulate(chunks)
    assert accumulated["_finish_reason"] == ("tool_calls" if expected.get("tool_calls") else "stop")
    assert openai_oracle.as_chatparse(accumulated) == openai_oracle.openai_view(expected)


def reference_sample_message(sample: dict, family: str) -> dict:
    """The reference's message for a bundled sample."""
    template = catalogue.builtin_template(family)
    parse_response = pytest.importorskip("transformers.utils.chat_parsing").parse_response
    return parse_response(
        sample["text"], template, prefix=sample.get("prefix") or "", tools=sample.get("tools")
    )


@pytest.mark.parametrize("family", ["qwen3", "qwen3_coder", "gemma4"])
def test_demo_openai_shows_the_arguments_streaming(family, capsys):
    """`demo FAMILY --openai`: one delta per line, labelled with its piece; the arguments of the
    first call arrive in several fragments (gemma4's too: a json dialect, rewritten as it arrives),
    and all the deltas accumulate to the sample's message."""
    import openai_oracle

    code, out, err = run(chatparse_cli.main, ["demo", family, "--openai"], capsys)
    assert code == 0, err
    lines = [line for line in out.splitlines() if not line.startswith("#")]
    deltas = [_trailing_json(line) for line in lines]
    from chatparse.openai import ChunkWriter

    writer = ChunkWriter(id="c", model="m", created=0)
    finish = out.splitlines()[-1].removeprefix("# finish_reason: ")
    accumulated = openai_oracle.accumulate(writer.chunks(deltas) + [writer.final(finish)])
    sample = catalogue.load_sample(family)
    expected = reference_sample_message(sample, family)
    assert openai_oracle.as_chatparse(accumulated) == openai_oracle.openai_view(expected)
    fragments = [
        f
        for d in deltas
        for f in d.get("tool_calls", [])
        if f["index"] == 0 and f["function"].get("arguments")
    ]
    assert len(fragments) > 1, fragments


def test_parse_openai_malformed_policies(tmp_path, capsys):
    """`parse --openai --malformed drop|content` on an output cut inside a call: no error, the
    finish reason is "length"; the default still fails."""
    import openai_oracle

    output = tmp_path / "out.txt"
    output.write_text('Hi<tool_call>{"name": "f", "arguments": {"a": "b', encoding="utf-8")
    code, _, err = run(
        chatparse_cli.main, ["parse", "smollm3", str(output), "--prefix", "", "--openai"], capsys
    )
    assert code != 0 and "cannot parse" in err
    for policy in ("drop", "content"):
        argv = ["parse", "smollm3", str(output), "--prefix", "", "--openai", "--malformed", policy]
        code, out, err = run(chatparse_cli.main, argv, capsys)
        assert code == 0, err
        accumulated = openai_oracle.accumulate([json.loads(line) for line in out.splitlines()])
        assert accumulated["_finish_reason"] == "length"
        assert accumulated["content"] == (
            "Hi" if policy == "drop" else 'Hi{"name": "f", "arguments": {"a": "b'
        )


def _trailing_json(line: str) -> dict:
    """The JSON object that ends a demo line (after its label and the piece's repr)."""
    decoder = json.JSONDecoder()
    for start in (i for i, ch in enumerate(line) if ch == "{"):
        try:
            value, end = decoder.raw_decode(line, start)
        except ValueError:
            continue
        if end == len(line):
            return value
    raise AssertionError(line)


# --- a user's mistake or a closed pipe never shows a traceback (issue 21) -------------------------


@pytest.mark.parametrize(
    "module, argv",
    [
        ("chatparse.cli.chatparse_command", ["demo", "qwen3"]),
        ("chatparse.cli.chatparse_command", ["demo", "qwen3", "--openai"]),
        (
            "chatparse.cli.chatparse_command",
            ["parse", "qwen3", "SAMPLE", "--prefix", "", "--events"],
        ),
        (
            "chatparse.cli.chatparse_command",
            ["parse", "qwen3", "SAMPLE", "--prefix", "", "--openai"],
        ),
        ("chatparse.cli.chatparse_command", ["explain", "qwen3"]),
        ("chatparse.cli.compile_template", ["qwen3"]),
    ],
)
def test_a_closed_pipe_ends_quietly(module, argv, tmp_path):
    """`chatparse demo qwen3 | head -1`: the reader goes away. The read end is closed before the
    command writes anything, so every write meets the closed pipe (no race with a buffer): no
    traceback, exit 141 (128 + SIGPIPE, what a tool killed by the signal returns)."""
    sample = tmp_path / "sample.txt"
    sample.write_text(catalogue.load_sample("qwen3")["text"], encoding="utf-8")
    argv = [str(sample) if a == "SAMPLE" else a for a in argv]
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", module, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    process.stdout.close()
    err = process.stderr.read().decode()
    process.stderr.close()
    assert process.wait() == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_malformed_is_never_silently_ignored(tmp_path, capsys):
    """--malformed without --openai used to be ignored: now `event` is the parser's lenient mode
    (the reference's message with the malformed region left out, reported by region_malformed),
    and the adapter's policies (drop, content) without --openai, or `event` with it, are
    refused, as are --chunk-size and --reasoning-key without --openai."""
    output = tmp_path / "out.txt"
    text = 'Hi<tool_call>{"name": "f", "arguments": {"a": "b</tool_call> there<|im_end|>'
    output.write_text(text, encoding="utf-8")
    base = ["parse", "smollm3", str(output), "--prefix", ""]
    code, _, err = run(chatparse_cli.main, base, capsys)
    assert code == 2 and "cannot parse" in err
    code, out, err = run(chatparse_cli.main, [*base, "--malformed", "event", "--events"], capsys)
    assert code == 0, err
    result = json.loads(out)
    if reference_parse is not None:
        # Lenient mode's oracle (tests/test_lenient.py): the reference's message for the text with
        # the bad body replaced by a valid one, that call then removed.
        from chatparse import load_template

        valid = text.replace('{"a": "b', "{}}")
        expected = reference_parse(valid, load_template("smollm3"), prefix="")
        del expected["tool_calls"]
        assert result["message"] == expected
    assert [e["type"] for e in result["events"]].count("region_malformed") == 1
    refused = [
        [*base, "--malformed", "drop"],
        [*base, "--malformed", "content"],
        [*base, "--openai", "--malformed", "event"],
        [*base, "--chunk-size", "3"],
        [*base, "--reasoning-key", "reasoning"],
        [*base, "--engine-reason", "stop"],
    ]
    for argv in refused:
        code, out, err = run(chatparse_cli.main, argv, capsys)
        assert code == 2 and err.startswith("chatparse: error: ") and err.count("\n") == 1, argv
        assert out == ""


def test_parse_openai_reports_a_cut_call_as_length(tmp_path, capsys):
    """The issue's reproduction through the CLI: qwen3_coder's sample cut after its first
    </parameter>, --malformed drop: finish_reason "length" and no finished call."""
    import openai_oracle

    sample = catalogue.load_sample("qwen3_coder")
    text = sample["text"]
    output = tmp_path / "out.txt"
    output.write_text(text[: text.index("</parameter>") + len("</parameter>")], encoding="utf-8")
    argv = ["parse", "qwen3_coder", str(output), "--prefix", sample["prefix"], "--openai"]
    code, out, err = run(chatparse_cli.main, [*argv, "--malformed", "drop"], capsys)
    assert code == 0, err
    accumulated = openai_oracle.accumulate([json.loads(line) for line in out.splitlines()])
    assert accumulated["_finish_reason"] == "length"
    code, out, err = run(chatparse_cli.main, argv, capsys)
    assert code == 2 and "cut off" in err


def test_parse_openai_engine_reason_stop_reads_an_eos_close_as_the_reference(tmp_path, capsys):
    """mistral's call ends with `</s>`, which engines often leave out of the text: without the
    engine's word the call is cut off (an error under the default policy); with
    --engine-reason stop the end of the output closes it, and the client's message is the
    reference's."""
    import openai_oracle

    sample = catalogue.load_sample("mistral")
    assert sample["text"].endswith("</s>")
    output = tmp_path / "out.txt"
    output.write_text(sample["text"].removesuffix("</s>"), encoding="utf-8")
    argv = ["parse", "mistral", str(output), "--prefix", sample["prefix"], "--openai"]
    code, _, err = run(chatparse_cli.main, argv, capsys)
    assert code == 2 and "cut off" in err
    code, out, err = run(chatparse_cli.main, [*argv, "--engine-reason", "stop"], capsys)
    assert code == 0, err
    accumulated = openai_oracle.accumulate([json.loads(line) for line in out.splitlines()])
    assert accumulated["_finish_reason"] == "tool_calls"
    expected = reference_sample_message(
        {**sample, "text": sample["text"].removesuffix("</s>")}, "mistral"
    )
    assert openai_oracle.as_chatparse(accumulated) == openai_oracle.openai_view(expected)
