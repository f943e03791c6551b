"""`compile-template`: compile a response template into a parser module, or check committed ones.

In:  argv. SRC is a template JSON file, a tokenizer_config.json (its `response_template`), a
     directory holding one, or a built-in family name (`compile-template --list`).
Out: the module source on stdout, or written to `-o OUT`; exit status 0 on success, 1 when
     `--check`/`--check-all` finds a module out of date, 2 for any error (one line on stderr).
Guarantee: the output depends only on the template and on SRC/OUT *relative to the package root*
(or their file names when outside it), never on the working directory, so
`compile-template templates/x.json -o generated/x.py`, `compile-template x -o generated/x.py` and
`compile-template --write-all` write the same bytes, and `--check`/`--check-all` compare exactly
what those would write.

    compile-template SRC [-o OUT]        compile (to stdout without -o)
    compile-template SRC -o OUT --check  exit 1 with a unified diff when OUT is out of date
    compile-template --check-all         every templates/F.json against generated/F.py
    compile-template --write-all         regenerate every generated/F.py (maintainers)
    compile-template --list              the built-in families, one per line
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from pathlib import Path
from typing import Any

from chatparse import catalogue
from chatparse.catalogue import TemplateSourceError

EXIT_OK, EXIT_STALE, EXIT_ERROR = 0, 1, 2


class CompileError(Exception):
    """A template the compiler rejects; the message is one line naming the source and the field."""


def _error(message: object) -> None:
    print(f"compile-template: error: {message}", file=sys.stderr)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def compile_source(template: Any, source_label: str, out_label: str | None) -> str:
    """The module source for `template`, with the deterministic header `compile-template` writes."""
    from chatparse.compiler import compile_template

    try:
        return compile_template(
            template,
            source_path=source_label,
            rebuild=catalogue.rebuild_command(source_label, out_label),
        )
    # The compiler raises ValueError for a template the reference rejects, and TypeError for the
    # odd shapes the reference fails on with its own TypeError (see compiler/frontend/spec.py).
    except (ValueError, TypeError) as exc:
        raise CompileError(f"{source_label}: invalid template: {_one_line(exc)}") from exc


def _read_text(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _write_text(path: Path, text: str) -> None:
    # Write beside the target, then rename: an interrupted run never leaves half a module.
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise TemplateSourceError(f"{path}: cannot write ({exc.strerror or exc})") from None


def _diff(old: str | None, new: str, out: str) -> str:
    lines = difflib.unified_diff(
        (old or "").splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"{out} (committed)" if old is not None else "/dev/null",
        tofile=f"{out} (generated)",
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def _compile_one(args: argparse.Namespace) -> int:
    source = catalogue.resolve_template(args.src)
    out_label = catalogue.relative_label(Path(args.output)) if args.output else None
    generated = compile_source(source.template, source.label, out_label)
    if args.check:
        current = _read_text(Path(args.output))
        if current == generated:
            print(f"{args.output}: up to date", file=sys.stderr)
            return EXIT_OK
        sys.stdout.write(_diff(current, generated, args.output))
        state = "missing" if current is None else "out of date"
        print(
            f"{args.output}: {state}; rebuild: {catalogue.rebuild_command(source.label, out_label)}",
            file=sys.stderr,
        )
        return EXIT_STALE
    if args.output:
        if _read_text(Path(args.output)) != generated:
            _write_text(Path(args.output), generated)
    else:
        sys.stdout.write(generated)
    return EXIT_OK


def _builtin_jobs() -> list[tuple[str, str, str]]:
    """(family, source label, out label) for every built-in template."""
    return [
        (
            family,
            f"{catalogue.TEMPLATES_DIR}/{family}.json",
            f"{catalogue.GENERATED_DIR}/{family}.py",
        )
        for family in catalogue.families()
    ]


def _compiled_builtins():
    """(family, source label, output label, generated source) per built-in template; the source
    is None, after the error is reported, for a template that does not compile."""
    for family, source_label, out_label in _builtin_jobs():
        try:
            generated = compile_source(catalogue.builtin_template(family), source_label, out_label)
        except (TemplateSourceError, CompileError) as exc:
            _error(exc)
            generated = None
        yield family, source_label, out_label, generated


def _check_all() -> int:
    status, stale = EXIT_OK, []
    for family, source_label, out_label, generated in _compiled_builtins():
        if generated is None:
            status = EXIT_ERROR
            continue
        current = _read_text(catalogue.generated_path(family))
        if current != generated:
            stale.append((out_label, "missing" if current is None else "out of date", source_label))
    templates = set(catalogue.families())
    orphans = [f for f in catalogue.generated_families() if f not in templates]
    for out_label, state, source_label in stale:
        print(
            f"{out_label}: {state}; rebuild: {catalogue.rebuild_command(source_label, out_label)}"
        )
    for family in orphans:
        print(
            f"{catalogue.GENERATED_DIR}/{family}.py: no {catalogue.TEMPLATES_DIR}/{family}.json "
            "compiles to it; delete it"
        )
    if stale or orphans:
        print("or regenerate everything: compile-template --write-all", file=sys.stderr)
        status = max(status, EXIT_STALE)
    elif status == EXIT_OK:
        print(f"{len(templates)} generated modules up to date", file=sys.stderr)
    return status


def _write_all() -> int:
    status, written, unchanged = EXIT_OK, 0, 0
    for family, _, out_label, generated in _compiled_builtins():
        if generated is None:
            status = EXIT_ERROR
            continue
        path = catalogue.generated_path(family)
        if _read_text(path) != generated:
            _write_text(path, generated)
            written += 1
            print(f"wrote {out_label}")
        else:
            unchanged += 1
    print(f"{written} written, {unchanged} unchanged", file=sys.stderr)
    return status


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="compile-template",
        description="Compile a chat-model response template into a specialised parser module.",
    )
    parser.add_argument(
        "src",
        nargs="?",
        metavar="SRC",
        help="template JSON, tokenizer_config.json (or its directory), or a built-in family name",
    )
    parser.add_argument(
        "-o", "--output", metavar="OUT", help="write the module here (default: stdout)"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 with a diff if OUT is out of date",
    )
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument(
        "--check-all",
        action="store_true",
        help="check every generated/F.py against templates/F.json",
    )
    modes.add_argument("--write-all", action="store_true", help="regenerate every generated/F.py")
    modes.add_argument("--list", action="store_true", help="list the built-in families")
    return parser


def main(argv: list[str] | None = None) -> int:
    """`compile-template` (the console script, and `python -m chatparse.cli.compile_template`), or a
    clear error when the compiler's packages are not installed (`chatparse[compiler]`)."""
    from chatparse.cli.chatparse_command import (
        EXIT_INTERRUPTED,
        report_compiler_missing,
        stdout_closed,
    )

    try:
        code = _main(argv)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at exit
        return code
    except BrokenPipeError:  # `compile-template qwen3 | head`: stop quietly
        return stdout_closed()
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except ModuleNotFoundError as exc:
        return report_compiler_missing("compile-template", exc)


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    whole_catalogue = args.check_all or args.write_all or args.list
    if whole_catalogue and (args.src or args.output or args.check):
        parser.error("--list, --check-all and --write-all take no SRC, -o or --check")
    if not whole_catalogue and not args.src:
        parser.error("SRC is required (a template file, tokenizer_config.json or built-in name)")
    if args.check and not args.output:
        parser.error("--check needs -o OUT: the file to compare against")
    try:
        if args.list:
            for family in catalogue.families():
                print(family)
            return EXIT_OK
        if args.check_all:
            return _check_all()
        if args.write_all:
            return _write_all()
        return _compile_one(args)
    except (TemplateSourceError, CompileError) as exc:
        _error(exc)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
