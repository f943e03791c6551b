"""`chatparse lint | explain | graph | check` (chatparse/authoring/commands.py), run in-process
through `chatparse.cli.chatparse_command.main`. The DOT that `graph` writes is read back by a small
DOT reader written here, and the drawn DFAs are walked on the delimiters' own literals; `explain` is compared with the
docstrings of the committed modules; `check` is run on purpose-made samples, one of which makes
the reference (not chatparse) depend on the chunking.
"""

from __future__ import annotations

import json
import re
import textwrap

import pytest

from chatparse import catalogue
from chatparse.authoring import commands as author_commands
from chatparse.cli import chatparse_command as chatparse_cli

try:
    import transformers.utils.chat_parsing  # noqa: F401

    HAVE_REFERENCE = True
except ImportError:
    HAVE_REFERENCE = False

needs_reference = pytest.mark.skipif(not HAVE_REFERENCE, reason="transformers not installed")

CLEAN = {
    "start_anchor": "<s>",
    "fields": {
        "content": {"repeats": True, "join": "", "close": "<|end|>"},
        "think": {"open": "<think>", "close": "</think>", "repeats": True, "join": ""},
    },
}
TRAP = {"start_anchor": "<s>", "fields": {"content": {"close": "<|end|>"}}}


def main(capsys, *argv) -> tuple[int, str, str]:
    code = chatparse_cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write(tmp_path, name, value) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(value), encoding="utf-8")
    return str(path)


# --- lint ---------------------------------------------------------------------------------------


def test_lint_exit_codes(tmp_path, capsys):
    code, out, _ = main(capsys, "lint", write(tmp_path, "clean.json", CLEAN))
    assert code == 0 and "0 finding(s)" in out
    code, out, _ = main(capsys, "lint", write(tmp_path, "trap.json", TRAP))
    assert code == 1 and out.startswith("CP101 error field 'content'")
    bad = {"start_anchor": "<s>", "fields": {"content": {"close_pattern": "("}}}
    code, _, err = main(capsys, "lint", write(tmp_path, "bad.json", bad))
    assert code == 2 and err.startswith("chatparse: error: invalid template")
    code, _, err = main(capsys, "lint", "no_such_family")
    assert code == 2 and "no_such_family" in err


def test_lint_json_format_and_config_sources(tmp_path, capsys):
    model = tmp_path / "model"
    model.mkdir()
    write(model, "tokenizer_config.json", {"response_template": TRAP})
    for source in (str(model), str(model / "tokenizer_config.json")):
        code, out, _ = main(capsys, "lint", source, "--format", "json")
        findings = json.loads(out)
        assert code == 1 and [f["code"] for f in findings] == ["CP101"]
        keys = {"code", "field", "delimiter", "message", "example", "fix"}
        assert keys <= set(findings[0])
        assert findings[0]["example"].count("<|end|>") == 1


def test_lint_notes_and_portable_are_opt_in(tmp_path, capsys):
    tmpl = {
        "start_anchor": "<s>",
        "fields": {"content": {"repeats": True, "join": "", "close_pattern": r"\s*\d<end>"}},
    }
    path = write(tmp_path, "t.json", tmpl)
    assert main(capsys, "lint", path)[0] == 0
    code, out, _ = main(capsys, "lint", path, "--notes", "--portable", "--format", "json")
    assert code == 1 and {f["code"] for f in json.loads(out)} == {"CP120", "CP202"}


def test_lint_builtin_by_name(capsys):
    code, out, _ = main(capsys, "lint", "hermes")
    assert code == 0


# --- explain ------------------------------------------------------------------------------------


def docstring_diagram(doc: str) -> list[str]:
    body = doc.split("Regions:\n", 1)[1]
    return textwrap.dedent(body).strip("\n").splitlines()


def test_explain_is_the_committed_docstring_diagram(capsys):
    families = catalogue.generated_families()
    assert families
    for family in families:
        module = catalogue.committed_module(family)
        code, out, _ = main(capsys, "explain", family)
        assert code == 0
        assert out.strip("\n").splitlines() == docstring_diagram(module.__doc__), family


# --- graph --------------------------------------------------------------------------------------

_TOKEN = re.compile(r'\s*(?:(->)|("(?:[^"\\]|\\.)*")|([A-Za-z_][\w.]*)|([{}\[\];=,]))', re.S)


def read_dot(text: str) -> tuple[dict, list, dict]:
    """(nodes {id: attrs}, edges [(a, b, attrs)], clusters {cluster id: [node ids]}) of a DOT
    digraph as `graph` writes it: quoted ids, statements ending in `;`, nested subgraphs."""
    tokens, pos = [], 0
    text = text.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        assert match and match.end() > pos, f"cannot read DOT at {text[pos:pos + 40]!r}"
        pos = match.end()
        arrow, quoted, word, punct = match.groups()
        if quoted is not None:
            unescape = lambda m: "\n" if m.group(1) == "n" else m.group(1)  # noqa: E731
            tokens.append(("id", re.sub(r"\\(.)", unescape, quoted[1:-1])))
        elif word is not None:
            tokens.append(("id", word))
        else:
            tokens.append(("p", arrow or punct))
    nodes, edges, clusters, stack = {}, [], {}, []
    i = 0

    def attrs(at: int) -> tuple[dict, int]:
        found = {}
        if at < len(tokens) and tokens[at] == ("p", "["):
            at += 1
            while tokens[at] != ("p", "]"):
                key, eq, value = tokens[at], tokens[at + 1], tokens[at + 2]
                assert key[0] == "id" and eq == ("p", "=") and value[0] == "id"
                found[key[1]] = value[1]
                at += 3
                if tokens[at] == ("p", ","):
                    at += 1
            at += 1
        return found, at

    assert tokens[0] == ("id", "digraph") and tokens[2] == ("p", "{")
    i = 3
    while i < len(tokens):
        kind, value = tokens[i]
        if (kind, value) == ("p", "}"):
            if stack:
                stack.pop()
            i += 1
        elif (kind, value) == ("id", "subgraph"):
            stack.append(tokens[i + 1][1])
            clusters[stack[-1]] = []
            assert tokens[i + 2] == ("p", "{")
            i += 3
        elif kind == "id" and i + 1 < len(tokens) and tokens[i + 1] == ("p", "="):
            i += 4  # graph attribute: key = value ;
        elif kind == "id" and value in ("node",) and tokens[i + 1] == ("p", "["):
            _, i = attrs(i + 1)
            i += 1
        elif kind == "id" and i + 1 < len(tokens) and tokens[i + 1] == ("p", "->"):
            target = tokens[i + 2][1]
            found, i = attrs(i + 3)
            edges.append((value, target, found))
            assert tokens[i] == ("p", ";")
            i += 1
        elif kind == "id":
            found, i = attrs(i + 1)
            nodes[value] = found
            if stack:
                clusters[stack[-1]].append(value)
            assert tokens[i] == ("p", ";")
            i += 1
        else:
            raise AssertionError(f"unexpected DOT token {value!r}")
    return nodes, edges, clusters


def walk(edges, start: str, text: str) -> str | None:
    """Follow the DFA edges whose label lists `ch` as one of its classes; None when stuck."""
    state = start
    for ch in text:
        nexts = [b for a, b, at in edges if a == state and ch in at.get("label", "").split("\n")]
        if len(nexts) != 1:
            return None
        state = nexts[0]
    return state


def test_graph_draws_every_builtin(tmp_path, capsys):
    for family in catalogue.families():
        out_file = tmp_path / f"{family}.dot"
        code, out, _ = main(capsys, "graph", family, "-o", str(out_file))
        assert code == 0 and f"wrote {out_file}" in out
        nodes, edges, clusters = read_dot(out_file.read_text(encoding="utf-8"))
        template = catalogue.builtin_template(family)
        fields = template["fields"]
        implicit = [
            name for name, f in fields.items() if "open" not in f and "open_pattern" not in f
        ]
        home = f"region {implicit[0]}" if implicit else "(null sink)"
        region_edges = {(a, b) for a, b, _ in edges if a.startswith(("region", "("))}
        for name, f in fields.items():
            if name in implicit:
                continue
            assert (home, f"region {name}") in region_edges, (family, name)
            opener = f.get("open", f.get("open_pattern"))
            label = [at["label"] for a, b, at in edges if (a, b) == (home, f"region {name}")][0]
            shown = opener if isinstance(opener, str) else opener[0]
            assert (
                json.dumps(shown, ensure_ascii=False)[1:-1].replace("\\\\", "\\") in label
                or shown in label
            ), (family, label)
            if "close" in f or "close_pattern" in f:
                assert (f"region {name}", home) in region_edges
        # every literal delimiter's drawn DFA accepts its own literals
        for name, f in fields.items():
            for role in ("open", "close"):
                literals = f.get(role)
                if literals is None:
                    continue
                literals = [literals] if isinstance(literals, str) else literals
                title = f"{name} {role}"
                assert f"cluster_{title}" in clusters
                start = [b for a, b, _ in edges if a == f"{title} start"][0]
                for literal in literals:
                    if not re.fullmatch(r"[A-Za-z0-9<>/_:=]+", literal):
                        continue  # only chars that format_charset prints as themselves
                    end = walk(edges, start, literal)
                    assert end is not None and nodes[end]["shape"] == "doublecircle", (
                        family,
                        title,
                        literal,
                    )


def test_graph_escapes_hostile_delimiters(tmp_path, capsys):
    tmpl = {
        "start_anchor": 'a"b\\c\n',
        "fields": {
            "content": {},
            'x"}': {"open": '"]; evil -> x [', "close": '\\"', "repeats": True},
        },
    }
    out_file = tmp_path / "g.dot"
    assert main(capsys, "graph", write(tmp_path, "t.json", tmpl), "-o", str(out_file))[0] == 0
    nodes, edges, _ = read_dot(out_file.read_text(encoding="utf-8"))
    labels = {at.get("label") for _, _, at in edges}
    assert 'open "\\"]; evil -> x ["' in labels
    assert "evil" not in nodes


def test_graph_svg_without_dot_is_an_error_that_writes_nothing(tmp_path, capsys, monkeypatch):
    """Without Graphviz, `-o h.svg` used to write h.dot instead (overwriting one the user had) and
    exit 0: now it fails with one line, and an existing h.dot is left as it was."""
    monkeypatch.setattr(author_commands.shutil, "which", lambda name: None)
    (tmp_path / "h.dot").write_text("mine", encoding="utf-8")
    code, out, err = main(capsys, "graph", "hermes", "-o", str(tmp_path / "h.svg"))
    assert code == 2 and out == ""
    assert err.startswith("chatparse: error: ") and "`dot` is not installed" in err
    assert err.count("\n") == 1
    assert (tmp_path / "h.dot").read_text(encoding="utf-8") == "mine"
    assert not (tmp_path / "h.svg").exists()


@pytest.mark.parametrize("name", ["x.dot", "x.svg"])
def test_graph_into_a_missing_directory_is_one_error_line(tmp_path, capsys, name):
    target = tmp_path / "missing" / name
    code, out, err = main(capsys, "graph", "hermes", "-o", str(target))
    assert code == 2 and out == "" and err.startswith("chatparse: error: ")
    assert "Traceback" not in err and err.count("\n") == 1
    assert not target.parent.exists()


# --- check --------------------------------------------------------------------------------------

LOOKAHEAD = {
    "start_anchor": "S",
    "fields": {
        "content": {"repeats": True, "join": ""},
        "r": {"open_pattern": "x(?!yz)", "close": "</r>", "repeats": True},
    },
}


def test_check_update_then_expected(tmp_path, capsys):
    samples = tmp_path / "samples"
    samples.mkdir()
    write(samples, "a.json", {"text": "hi<think>hm</think>there<|end|>"})
    write(samples, "b.json", {"text": "plain"})
    path = write(tmp_path, "t.json", CLEAN)
    code, out, _ = main(
        capsys, "check", path, "--samples", str(samples), "--prefix", "", "--update"
    )
    assert code == 0
    a = json.loads((samples / "a.json").read_text())
    # written from the format: content joined with "", think its own field
    assert a["expected"] == {"content": "hithere", "think": "hm"}
    assert main(capsys, "check", path, "--samples", str(samples), "--prefix", "")[0] == 0
    a["expected"] = {"content": "wrong"}
    write(samples, "a.json", a)
    code, out, _ = main(capsys, "check", path, "--samples", str(samples), "--prefix", "")
    assert code == 1 and "a.json: FAIL" in out and "differs from 'expected'" in out


def test_check_jsonl_prints_messages(tmp_path, capsys):
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_text(json.dumps({"text": "x</r>", "prefix": "S"}) + "\n\n", encoding="utf-8")
    path = write(tmp_path, "t.json", LOOKAHEAD)
    code, out, _ = main(capsys, "check", path, "--samples", str(jsonl))
    assert code == 0 and json.loads(out.splitlines()[1]) == {"r": [""]}


@needs_reference
def test_check_finds_the_references_chunking_dependence_on_a_fallback_template(tmp_path, capsys):
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_text(
        json.dumps({"text": "xyzxyq</r>"}) + "\n" + json.dumps({"text": "ab</r>"}) + "\n",
        encoding="utf-8",
    )
    path = write(tmp_path, "t.json", LOOKAHEAD)
    code, out, _ = main(capsys, "check", path, "--samples", str(jsonl), "--prefix", "")
    assert code == 1
    report = out.split("# s.jsonl:2")[0]
    assert "s.jsonl:1: FAIL" in report
    assert "reference depends on the chunking: chars differs from whole" in report
    assert "chatparse depends" not in out  # chatparse gives one answer for every chunking
    assert "s.jsonl:2: ok" in out


def test_chunkings_join_back():
    text = "abc<think>déf</think>" * 7
    names = [name for name, _ in author_commands.chunkings(text)]
    assert names[:2] == ["whole", "chars"] and "server" in names
    for _, pieces in author_commands.chunkings(text):
        assert "".join(pieces) == text


@pytest.mark.parametrize("family", ["hermes", "qwen3", "gpt_oss"])
def test_check_bundled_sample_agrees_everywhere(family, capsys):
    sample = catalogue.sample_path(family)
    code, out, _ = main(capsys, "check", family, "--samples", str(sample))
    assert code == 0, out
    assert out.startswith(f"# {sample.name}: ok\n")
    message = json.loads(out.splitlines()[1])
    assert message.get("role") == "assistant"


@needs_reference
def test_check_never_runs_the_reference_into_its_endless_loop(tmp_path, capsys):
    tmpl = {
        "start_anchor": "S",
        "fields": {"content": {}, "r": {"open_pattern": "a*", "close_pattern": "b*"}},
    }
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_text(json.dumps({"text": "x"}) + "\n", encoding="utf-8")
    code, out, _ = main(
        capsys, "check", write(tmp_path, "t.json", tmpl), "--samples", str(jsonl), "--prefix", ""
    )
    assert "the reference is skipped" in out
    assert code == 0 and json.loads(out.splitlines()[2]) == {"error": "ValueError"}
