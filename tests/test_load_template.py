"""`chatparse.load_template(source)`: a template from wherever users have one, and the dict API
accepting every such source.

The expected templates are read straight from the files the tests write (or from the built-in
JSON files with `json.load`), never from the code under test.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import types

import pytest

import chatparse
from chatparse import catalogue

ROOT = pathlib.Path(__file__).resolve().parents[1]
HERMES = json.loads((ROOT / "templates" / "hermes.json").read_text(encoding="utf-8"))
TEXT = 'Hi<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>'
MESSAGE = {
    "role": "assistant",
    "content": "Hi",
    "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"x": 1}}}],
}


def write_config(directory: pathlib.Path, **extra) -> pathlib.Path:
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "response_template": HERMES, **extra}
    path = directory / "tokenizer_config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


class Tokenizer:
    def __init__(self, template):
        self.response_template = template


class OldTokenizer:
    """A tokenizer that keeps unknown config keys in `init_kwargs` only."""

    def __init__(self, template):
        self.init_kwargs = {"response_template": template}


class Processor:
    def __init__(self, tokenizer):
        self.tokenizer = tokenizer


def sources(tmp_path: pathlib.Path):
    config = write_config(tmp_path)
    template_file = tmp_path / "hermes_template.json"
    template_file.write_text(json.dumps(HERMES), encoding="utf-8")
    return {
        "dict": HERMES,
        "family": "hermes",
        "template file (str)": str(template_file),
        "template file (Path)": template_file,
        "tokenizer_config.json": str(config),
        "model directory": tmp_path,
        "tokenizer attribute": Tokenizer(HERMES),
        "tokenizer init_kwargs": OldTokenizer(HERMES),
        "processor": Processor(OldTokenizer(HERMES)),
        "generated module": __import__("chatparse.generated.hermes", fromlist=["TEMPLATE"]),
    }


@pytest.mark.parametrize(
    "kind",
    [
        "dict",
        "family",
        "template file (str)",
        "template file (Path)",
        "tokenizer_config.json",
        "model directory",
        "tokenizer attribute",
        "tokenizer init_kwargs",
        "processor",
        "generated module",
    ],
)
def test_every_source_gives_the_template_and_the_dict_api_accepts_it(tmp_path, kind):
    source = sources(tmp_path)[kind]
    assert chatparse.load_template(source) == HERMES
    assert chatparse.parse_response(TEXT, source, prefix="") == MESSAGE
    parser = chatparse.ResponseParser(source, "")
    for piece in TEXT:
        parser.feed(piece)
    assert parser.finalize()[0] == MESSAGE


def test_a_real_tokenizer_from_a_model_directory(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    model = tokenizers.models.WordLevel({"[UNK]": 0, "hi": 1}, unk_token="[UNK]")
    backend = tokenizers.Tokenizer(model)
    backend.save(str(tmp_path / "tokenizer.json"))
    write_config(tmp_path)
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    assert chatparse.load_template(tokenizer) == HERMES
    assert chatparse.parse_response(TEXT, tokenizer, prefix="") == MESSAGE


def test_the_dict_is_returned_unchecked():
    # Validation is the compiler's: load_template only finds the template.
    odd = {"fields": "not a dict"}
    assert chatparse.load_template(odd) is odd
    with pytest.raises(ValueError, match="fields"):
        chatparse.parse_response("x", odd, prefix="")


@pytest.mark.parametrize(
    "source, words",
    [
        ("nosuch_family", "unknown built-in template 'nosuch_family'"),
        ("missing/dir/template.json", "no such file"),
        (Tokenizer(None), "no 'response_template'"),
        (Processor(Tokenizer(None)), "no 'response_template'"),
        (types.ModuleType("not_generated"), "no TEMPLATE dict"),
    ],
)
def test_a_source_without_a_template_is_named(source, words):
    with pytest.raises(catalogue.TemplateSourceError, match=words):
        chatparse.load_template(source)
    # The dict API keeps the reference's error class and opening words, then says why.
    with pytest.raises(ValueError, match=r"^response_template must be a dict, got \w+: .*" + words):
        chatparse.parse_response("x", source, prefix="")


def test_a_config_without_a_response_template_says_so(tmp_path):
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": "x"}))
    with pytest.raises(catalogue.TemplateSourceError, match="has no 'response_template' key"):
        chatparse.load_template(tmp_path)


@pytest.mark.parametrize("value", [42, None, ["a"], 1.5])
def test_other_non_dicts_keep_the_reference_error(value):
    reference = pytest.importorskip("transformers.utils.chat_parsing")
    with pytest.raises(ValueError) as expected:
        reference.parse_response("x", value, prefix="")
    with pytest.raises(ValueError) as got:
        chatparse.parse_response("x", value, prefix="")
    # chatparse adds the value itself to the reference's words.
    assert str(got.value).startswith(str(expected.value))


def test_loading_imports_no_transformers(tmp_path):
    write_config(tmp_path)
    code = (
        "import sys, chatparse\n"
        f"chatparse.load_template({str(tmp_path)!r})\n"
        "chatparse.parse_response('x', 'hermes', prefix='')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('transformers', 'torch')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_builtin_name_loads_the_committed_module_without_the_compiler():
    # Serving by name must not compile (nor import black, lark or jinja2): the committed
    # module is right there.
    code = (
        "import sys, chatparse\n"
        "from chatparse.openai import DeltaStream\n"
        "parser = chatparse.ResponseParser('qwen3', prefix='')\n"
        "DeltaStream('qwen3', prefix='')\n"
        "print(type(parser).__module__)\n"
        "print(sorted(m for m in ('black', 'lark', 'jinja2', 'chatparse.compiler') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["chatparse.generated.qwen3", "[]"]


def test_a_template_dict_changed_in_place_is_compiled_again():
    # The dict API finds a template it saw by the object's identity; a change to that object
    # must not be answered by the module of what it held before.
    template = json.loads(json.dumps(HERMES))
    text = "a<|im_end|>b<|im_end|>"
    assert chatparse.parse_response(text, template, prefix="")["content"] == "a\n\nb"
    template["fields"]["content"]["join"] = " / "
    assert chatparse.parse_response(text, template, prefix="")["content"] == "a / b"
    template["fields"]["content"]["join"] = "\n\n"
    assert chatparse.parse_response(text, template, prefix="")["content"] == "a\n\nb"


def test_a_template_file_rewritten_is_read_again(tmp_path):
    path = tmp_path / "t.json"
    template = json.loads(json.dumps(HERMES))
    path.write_text(json.dumps(template), encoding="utf-8")
    text = "a<|im_end|>b<|im_end|>"
    assert chatparse.parse_response(text, str(path), prefix="")["content"] == "a\n\nb"
    template["fields"]["content"]["join"] = " / "
    path.write_text(json.dumps(template) + " ", encoding="utf-8")  # a new size, whatever the clock
    assert chatparse.parse_response(text, str(path), prefix="")["content"] == "a / b"


def test_a_name_or_path_built_anew_finds_its_module_without_reading_it(tmp_path, monkeypatch):
    """A server builds the string per request (a parser name sliced, a setting read): the module
    is found by the string's text, and neither the built-in's nor the file's template is read
    again (which cost more than parsing a short turn)."""
    from chatparse import catalogue

    path = tmp_path / "t.json"
    path.write_text(json.dumps(HERMES), encoding="utf-8")
    reads = []
    real = catalogue.load_template
    monkeypatch.setattr(
        catalogue, "load_template", lambda source: reads.append(source) or real(source)
    )
    for source in ("hermes", str(path)):
        first = chatparse.ResponseParser("".join(source), prefix="")
        reads.clear()
        for _ in range(3):
            again = chatparse.ResponseParser("".join([source[:3], source[3:]]), prefix="")
            assert type(again) is type(first)
        assert reads == []


def test_one_relative_path_from_two_folders_names_two_files(tmp_path, monkeypatch):
    """Found by its text, a relative path still names the file of the working directory: two
    files of one name, size and time, in two folders, give their own templates."""
    import os

    templates = []
    for folder, join in (("a", " / "), ("b", " | ")):
        template = json.loads(json.dumps(HERMES))
        template["fields"]["content"]["join"] = join
        (tmp_path / folder).mkdir()
        path = tmp_path / folder / "t.json"
        path.write_text(json.dumps(template), encoding="utf-8")
        os.utime(path, ns=(1_000_000_000, 1_000_000_000))
        templates.append(tmp_path / folder)
    text = "a<|im_end|>b<|im_end|>"
    for folder, expected in zip(templates * 2, ["a / b", "a | b"] * 2):
        monkeypatch.chdir(folder)
        assert chatparse.parse_response(text, "t.json", prefix="")["content"] == expected
