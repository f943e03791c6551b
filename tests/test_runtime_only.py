"""A runtime-only install: chatparse without its `compiler` extra needs only `regex`.

A venv of its own (no system site packages, so the compiler's packages installed for the suite are
not visible) gets chatparse with `--no-deps` and `regex`. There the built-in families parse and
stream, and what needs the compiler says which extra to install, without a traceback.
"""

from __future__ import annotations

import os
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = r"""
import importlib.util, json, sys
for name in ("lark", "jinja2", "black"):
    assert importlib.util.find_spec(name) is None, name  # the venv really lacks the compiler
import chatparse
from chatparse.openai import DeltaStream
text = 'hi <tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'
message = chatparse.parse_response(text, "hermes", prefix="")
stream = DeltaStream("hermes", prefix="")
deltas = stream.feed(text) + stream.finish()
import chatparse.generated.qwen3_coder as module
parsed = module.parse_response("<tool_call>\n<function=f>\n</function>\n</tool_call>", prefix="")
# xml-inline arguments stream with the tag halves the module declares, no compiler needed
xml = "<tool_call>\n<function=f>\n<parameter=a>\nsome long text\n</parameter>\n</function>\n</tool_call>"
xml_stream = DeltaStream("qwen3_coder", prefix="")
xml_fragments = sum(
    1
    for i in range(0, len(xml), 3)
    for delta in xml_stream.feed(xml[i : i + 3])
    for call in delta.get("tool_calls", [])
    if call["function"].get("arguments")
)
try:
    chatparse.parse_response("x", {"fields": {"content": {}}}, prefix="")
    error = None
except ModuleNotFoundError as exc:
    error = str(exc)
print(json.dumps({"message": message, "finish": stream.finish_reason, "parsed": parsed,
                  "xml_fragments": xml_fragments,
                  "error": error, "modules": sorted(m for m in ("lark", "jinja2", "black")
                                                     if m in sys.modules)}))
"""


@pytest.fixture(scope="module")
def runtime_venv(tmp_path_factory):
    where = tmp_path_factory.mktemp("runtime-only") / "venv"
    venv.EnvBuilder(with_pip=True).create(where)
    python = where / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "-e", str(ROOT), "regex"],
        capture_output=True,
        text=True,
    )
    if install.returncode != 0:
        pytest.skip(f"pip could not install into a fresh venv: {install.stderr[-300:]}")
    return where


def run(where: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return subprocess.run(args, capture_output=True, text=True, cwd=where, env=env)


def test_built_in_families_need_only_regex(runtime_venv):
    done = run(runtime_venv, str(runtime_venv / "bin" / "python"), "-c", SCRIPT)
    assert done.returncode == 0, done.stderr
    import json

    result = json.loads(done.stdout)
    calls = [{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]
    assert result["message"] == {"role": "assistant", "content": "hi", "tool_calls": calls}
    assert result["finish"] == "tool_calls"
    assert result["parsed"]["tool_calls"][0]["function"]["name"] == "f"
    assert result["xml_fragments"] >= 3  # streamed, not sent whole at the close
    assert result["modules"] == []
    assert "pip install 'chatparse[compiler]'" in result["error"]


def test_commands_name_the_extra(runtime_venv):
    demo = run(runtime_venv, str(runtime_venv / "bin" / "chatparse"), "demo", "smollm3")
    assert demo.returncode == 0, demo.stderr
    for command in (["compile-template", "hermes", "-o", "x.py"], ["chatparse", "lint", "hermes"]):
        done = run(runtime_venv, str(runtime_venv / "bin" / command[0]), *command[1:])
        assert done.returncode != 0
        assert "pip install 'chatparse[compiler]'" in done.stderr
        assert "Traceback" not in done.stderr


def test_the_suite_has_the_compiler():
    """The test extra pulls the compiler extra in (the README's test command)."""
    for name in ("lark", "jinja2", "black"):
        __import__(name)


def test_compiling_without_black_alone_names_the_extra():
    """A serving engine's venv may hold lark and jinja2 (vLLM's do) but not black: compiling a
    template that is not built in names the extra, not only the missing module."""
    import sys

    script = (
        "import sys; sys.modules['black'] = None\n"
        "import chatparse\n"
        "try:\n"
        "    chatparse.parse_response('x', {'fields': {'content': {}}}, prefix='')\n"
        "except ModuleNotFoundError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "pip install 'chatparse[compiler]'" in done.stdout
    assert "'black'" in done.stdout
