"""`chatparse lint | explain | graph | check`: the template author's commands.

In:  argv parsed by `chatparse.cli.chatparse_command` (these commands register themselves with
     `add_commands`).
    chatparse lint TEMPLATE [--format text|json] [--portable] [--notes]
        the findings of `chatparse.authoring.lint` (errors and warnings; --notes adds cost notes,
        --portable the portability profile); exit 0 clean, 1 findings, 2 a template that
        does not load
    chatparse explain TEMPLATE
        the region automaton in words (the generated module's docstring diagram)
    chatparse graph TEMPLATE -o FILE.dot|FILE.svg
        Graphviz DOT of the regions and each delimiter's DFA; .svg runs Graphviz `dot` (an
        error, with nothing written, when it is not installed)
    chatparse check TEMPLATE --samples DIR_OR_JSONL [--prefix TEXT] [--update]
        each sample ({"text", "prefix"?, "tools"?, "expected"?}: a DIR of .json files, one
        .json file, or a .jsonl file) through every chunking (whole, one character at a time, seeded random,
        server-like), by chatparse and, when transformers is installed, by the reference;
        reports any chunking dependence, any difference from the reference's one-shot result
        and from "expected", prints each message; --update writes "expected" (for review)
TEMPLATE is anything `chatparse.load_template` reads from a string: a template file, a
tokenizer_config.json, a model directory or a built-in name.
Out: stdout; exit codes as above (2 with one `chatparse: error:` line for a bad argument).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from chatparse import catalogue
from chatparse.catalogue import TemplateSourceError

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
CHECK_SEEDS = (0, 1, 2)
RANDOM_PIECES = (1, 12)


def _automaton(arg: str):
    """(template, automaton) of a TEMPLATE argument; TemplateSourceError when it does not load."""
    from chatparse.compiler.automata.region_automaton import build_regions
    from chatparse.compiler.frontend.spec import load_spec

    template = catalogue.resolve_template(arg).template
    try:
        return template, build_regions(load_spec(template))
    except (ValueError, TypeError) as exc:
        raise TemplateSourceError(f"invalid template: {' '.join(str(exc).split())}") from exc


# --- lint ---------------------------------------------------------------------------------------


def run_lint(args: argparse.Namespace, out=None) -> int:
    from chatparse.authoring.lint import lint

    out = out or sys.stdout
    template, _ = _automaton(args.template)
    findings = [
        f for f in lint(template, portable=args.portable) if args.notes or f.severity != "note"
    ]
    if args.format == "json":
        print(json.dumps([f.as_dict() for f in findings], indent=2, ensure_ascii=False), file=out)
    else:
        for finding in findings:
            print(finding.format(), file=out)
        print(f"{args.template}: {len(findings)} finding(s)", file=out)
    return EXIT_FINDINGS if findings else EXIT_OK


# --- explain / graph ----------------------------------------------------------------------------


def run_explain(args: argparse.Namespace, out=None) -> int:
    from chatparse.authoring.graph import explain

    _, automaton = _automaton(args.template)
    for line in explain(automaton):
        print(line, file=out or sys.stdout)
    return EXIT_OK


def run_graph(args: argparse.Namespace, out=None) -> int:
    from chatparse.authoring.graph import to_dot

    out = out or sys.stdout
    _, automaton = _automaton(args.template)
    target = Path(args.output)
    text = to_dot(automaton, name=args.template)
    if target.suffix == ".svg":
        dot = shutil.which("dot")
        if dot is None:
            # An error, and nothing written: writing the DOT beside the SVG instead would overwrite
            # a file the user did not name, and exit 0 for a picture that was never drawn.
            raise TemplateSourceError(
                f"-o {target}: Graphviz `dot` is not installed, so no SVG can be drawn; write the "
                f"DOT text with -o {target.with_suffix('.dot')} and render it where Graphviz is"
            )
        try:
            done = subprocess.run(
                [dot, "-Tsvg", "-o", str(target)], input=text, text=True, capture_output=True
            )
        except OSError as exc:
            raise TemplateSourceError(f"cannot run {dot}: {exc.strerror or exc}") from None
        if done.returncode != 0:
            raise TemplateSourceError(f"dot failed: {' '.join(done.stderr.split())}")
    elif target.suffix == ".dot":
        try:
            target.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise TemplateSourceError(
                f"-o {target}: cannot write ({exc.strerror or exc})"
            ) from None
    else:
        raise TemplateSourceError(f"-o {target}: expected a .dot or .svg file name")
    print(f"wrote {target}", file=out)
    return EXIT_OK


# --- check --------------------------------------------------------------------------------------


def chunkings(text: str) -> list[tuple[str, list[str]]]:
    """(name, pieces) for every chunking check runs; each joins back to `text`."""
    from chatparse.cli.chatparse_command import server_chunks

    found = [("whole", [text]), ("chars", list(text))]
    for seed in CHECK_SEEDS:
        rng = random.Random(seed)
        pieces, start = [], 0
        while start < len(text):
            size = rng.randint(*RANDOM_PIECES)
            pieces.append(text[start : start + size])
            start += size
        found.append((f"random(seed={seed})", pieces))
    found.append(("server", list(server_chunks(text))))
    return found


def outcome(make, pieces: list[str]) -> tuple:
    """("ok", message, merged events) or ("error", class name)."""
    from chatparse.cli.chatparse_command import merge_chunks

    try:
        parser = make()
        events = list(parser.initial_events)
        for piece in pieces:
            events.extend(parser.feed(piece))
        message, final = parser.finalize()
    except Exception as exc:  # the class is the comparable part
        return ("error", type(exc).__name__)
    return ("ok", message, merge_chunks(events + list(final)))


def _reference():
    try:
        from transformers.utils.chat_parsing import ResponseParser
    except ImportError:
        return None
    return ResponseParser


def read_samples(path: Path) -> list[tuple[str, dict]]:
    """(label, sample) from a directory of .json files or a .jsonl file."""
    if path.is_dir():
        files = sorted(path.glob("*.json"))
        return [(f.name, catalogue.read_json(f, "sample")) for f in files]
    if not path.is_file():
        raise TemplateSourceError(f"--samples {path}: no such file or directory")
    if path.suffix == ".json":
        return [(path.name, catalogue.read_json(path, "sample"))]
    samples = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                samples.append((f"{path.name}:{number}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise TemplateSourceError(f"{path}:{number}: not JSON ({exc.msg})") from None
    return samples


def _write_samples(path: Path, samples: list[tuple[str, dict]]) -> None:
    if path.suffix == ".json" and path.is_file():
        text = json.dumps(samples[0][1], indent=2, ensure_ascii=False) + "\n"
        path.write_text(text, encoding="utf-8")
    elif path.is_dir():
        for label, sample in samples:
            text = json.dumps(sample, indent=2, ensure_ascii=False) + "\n"
            (path / label).write_text(text, encoding="utf-8")
    else:
        lines = [json.dumps(sample, ensure_ascii=False) for _, sample in samples]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _expected_of(result: tuple) -> Any:
    return result[1] if result[0] == "ok" else {"error": result[1]}


def check_sample(module, reference, template, sample: dict, prefix: str | None) -> dict:
    """The outcomes of one sample, and every problem found, as a report dict."""
    text = sample.get("text")
    if not isinstance(text, str):
        return {"problems": ["no string 'text'"], "result": None}
    if prefix is None:
        prefix = sample.get("prefix") or ""
    tools = sample.get("tools")
    problems = []
    parsers = [("chatparse", lambda: module.ResponseParser(prefix, tools=tools))]
    if reference is not None:
        parsers.append(("reference", lambda: reference(template, prefix=prefix, tools=tools)))
    results: dict[str, tuple] = {}
    for who, make in parsers:
        whole = None
        for name, pieces in chunkings(text):
            result = outcome(make, pieces)
            if whole is None:
                whole = result
                results[who] = result
            elif result != whole:
                problems.append(f"{who} depends on the chunking: {name} differs from whole")
    if "reference" in results and results["reference"] != results["chatparse"]:
        problems.append("chatparse differs from the reference (one-shot)")
    if "expected" in sample and _expected_of(results["chatparse"]) != sample["expected"]:
        problems.append("the message differs from 'expected'")
    return {"problems": problems, "result": results["chatparse"]}


def _loops_in_the_reference(automaton) -> str | None:
    """A field whose open and close both match the empty string (lint CP105), or None."""
    from chatparse.authoring.lint import matches_empty_midtext

    for field in automaton.spec.fields:
        open_ = automaton.delimiters.get((field.name, "open"))
        close = automaton.delimiters.get((field.name, "close"))
        if open_ is not None and close is not None:
            if matches_empty_midtext(open_) and matches_empty_midtext(close):
                return field.name
    return None


def run_check(args: argparse.Namespace, out=None) -> int:
    from chatparse import load_module

    out = out or sys.stdout
    template, automaton = _automaton(args.template)
    module = load_module(template)
    reference = _reference()
    looping = _loops_in_the_reference(automaton)
    if reference is not None and looping:
        print(
            f"# the reference is skipped: the open and close of {looping!r} both match the empty "
            "string, where the reference loops forever (lint CP105)",
            file=out,
        )
        reference = None
    path = Path(args.samples)
    samples = read_samples(path)
    if not samples:
        raise TemplateSourceError(f"--samples {path}: no samples")
    failed = 0
    for label, sample in samples:
        if not isinstance(sample, dict):
            print(f"# {label}: not a JSON object", file=out)
            failed += 1
            continue
        report = check_sample(module, reference, template, sample, args.prefix)
        status = "ok" if not report["problems"] else "FAIL"
        print(f"# {label}: {status}", file=out)
        for problem in report["problems"]:
            print(f"#   {problem}", file=out)
        failed += bool(report["problems"])
        if report["result"] is not None:
            print(json.dumps(_expected_of(report["result"]), ensure_ascii=False), file=out)
            if args.update:
                sample["expected"] = _expected_of(report["result"])
    if args.update:
        try:
            _write_samples(path, samples)
        except OSError as exc:
            raise TemplateSourceError(
                f"--update {path}: cannot write ({exc.strerror or exc})"
            ) from None
        print(f"# wrote 'expected' into {path}", file=out)
    where = "" if reference is not None else " (transformers not installed: no reference)"
    print(f"# {len(samples)} sample(s), {failed} with problems{where}", file=out)
    return EXIT_FINDINGS if failed else EXIT_OK


# --- registration -------------------------------------------------------------------------------

TEMPLATE_HELP = "template JSON, tokenizer_config.json, model directory or built-in name"
COMMANDS = {"lint": run_lint, "explain": run_explain, "graph": run_graph, "check": run_check}


def add_commands(commands) -> None:
    lint = commands.add_parser("lint", help="find the traps in a template (exit 1 on findings)")
    lint.add_argument("template", metavar="TEMPLATE", help=TEMPLATE_HELP)
    lint.add_argument("--format", choices=("text", "json"), default="text")
    lint.add_argument("--portable", action="store_true", help="add the portability profile")
    lint.add_argument("--notes", action="store_true", help="add cost notes (\\s*-led delimiters)")

    explain = commands.add_parser("explain", help="the region automaton in words")
    explain.add_argument("template", metavar="TEMPLATE", help=TEMPLATE_HELP)

    graph = commands.add_parser("graph", help="draw the regions and delimiter DFAs (Graphviz)")
    graph.add_argument("template", metavar="TEMPLATE", help=TEMPLATE_HELP)
    graph.add_argument("-o", "--output", required=True, metavar="FILE.dot|FILE.svg")

    check = commands.add_parser("check", help="run samples through every chunking")
    check.add_argument("template", metavar="TEMPLATE", help=TEMPLATE_HELP)
    check.add_argument("--samples", required=True, metavar="DIR_OR_JSONL")
    check.add_argument("--prefix", metavar="TEXT", help="the prefix for every sample")
    check.add_argument("--update", action="store_true", help="write 'expected' into the samples")
