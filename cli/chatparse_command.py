"""`chatparse`: watch a compiled parser stream a sample, or parse a model output from the shell.

In:  argv.
    chatparse demo                      list the families that have a bundled sample
    chatparse demo FAMILY [--chunk-size N] [--openai]
        stream FAMILY's sample through its parser in small pieces, as a server would, printing
        each event as it arrives (one line each, nothing merged), then the message as JSON; with
        --openai, each OpenAI delta instead (tool arguments stream as the model writes them)
    chatparse parse TEMPLATE [FILE] [--prefix TEXT | --prefix-file F] [--tools F.json] [--events]
                    [--malformed raise|event]
        parse the raw output in FILE (or stdin) and print the message as JSON; with --events,
        print {"message": ..., "events": [...]} with consecutive chunks of a region merged;
        --malformed event is the parser's lenient mode (a region that does not parse is left
        out, and reported by a region_malformed event)
    chatparse parse TEMPLATE [FILE] ... --openai [--chunk-size N] [--reasoning-key K]
                    [--malformed raise|drop|content] [--engine-reason stop|length]
        the chat.completion.chunk stream a server would send, one JSON line each
    chatparse lint | explain | graph | check TEMPLATE ...
        for template authors: see chatparse/authoring/commands.py (lint and check exit 1 on
        findings)
TEMPLATE is a template JSON file, a tokenizer_config.json (or its directory) or a built-in
family name. A built-in family runs its committed module (chatparse.generated.<family>) when there
is one; anything else is compiled in memory (`chatparse.load_module`).
Out: stdout as above; exit 0, or 2 with a one-line `chatparse: error: ...` on stderr (a user's
mistake never prints a traceback); a reader that goes away (`| head -1`) ends the command quietly
with 141 (128 + SIGPIPE, as a tool killed by the signal), Ctrl-C with 130.
Guarantee: the demo's chunking is deterministic (a fixed seed), so its output is reproducible.
Without --prefix the output is taken as the whole message (prefix ""), the explicit opt-out the
reference asks for; pass the chat prompt when its template pre-writes part of the message.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from chatparse import catalogue
from chatparse.authoring import commands as author_commands
from chatparse.catalogue import TemplateSourceError

EXIT_OK, EXIT_ERROR = 0, 2
EXIT_PIPE, EXIT_INTERRUPTED = 128 + 13, 128 + 2  # as a process killed by SIGPIPE, SIGINT
# A streaming server hands out a few tokens at a time; 1-6 characters per piece makes every
# delimiter likely to be split somewhere, which is what the demo is meant to show.
DEMO_PIECE_SIZES = (1, 6)
DEMO_SEED = 0
PREFIX_SHOWN = 120
# The errors a template or an output can cause at parse time (the reference's own classes).
PARSE_ERRORS = (ValueError, TypeError, KeyError)


class CliError(Exception):
    """A failure to report as one `chatparse: error:` line and exit 2."""


def server_chunks(text: str, chunk_size: int | None = None) -> Iterator[str]:
    """`text` in consecutive pieces: all `chunk_size` long, or 1-6 long from a fixed-seed RNG."""
    rng = random.Random(DEMO_SEED)
    start = 0
    while start < len(text):
        size = chunk_size if chunk_size else rng.randint(*DEMO_PIECE_SIZES)
        yield text[start : start + size]
        start += size


def _json_line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr)


def format_event(event: dict, when: str, field_width: int = 0) -> str:
    """One readable line: when it arrived, the event type, the field, then text or value."""
    kind = event.get("type", "?").removeprefix("region_")
    line = f"{when:>6}  {kind:<5}  {event.get('field')!s:<{field_width}}"
    if kind == "chunk":
        line += f"  {event.get('text')!r}"
        if event.get("dirty"):
            line += "  (dirty)"
    elif kind == "close":
        line += f"  = {_json_line(event.get('value'))}"
    return line.rstrip()


def merge_chunks(events: list[dict]) -> list[dict]:
    """Consecutive chunks of the same field and dirtiness joined into one; other events kept."""
    merged: list[dict] = []
    for event in events:
        last = merged[-1] if merged else None
        if (
            last is not None
            and event.get("type") == last.get("type") == "region_chunk"
            and event.get("field") == last.get("field")
            and event.get("dirty") == last.get("dirty")
        ):
            merged[-1] = {**last, "text": last["text"] + event["text"]}
        else:
            merged.append(dict(event))
    return merged


def _module_for(template: Any, family: str | None) -> tuple[types.ModuleType, str]:
    """The parser module, and a phrase saying where it came from."""
    if family is not None:
        module = catalogue.committed_module(family)
        if module is not None:
            return module, f"{module.__name__} (committed)"
    from chatparse import load_module

    try:
        return load_module(template), "compiled in memory"
    except (ValueError, TypeError) as exc:
        raise CliError(f"invalid template: {' '.join(str(exc).split())}") from exc


def _read_input(path: str | None, what: str) -> str:
    """A file's text, or stdin's for None or "-", with line endings exactly as written."""
    if path is None or path == "-":
        stream = sys.stdin
        raw = getattr(stream, "buffer", None)
        try:
            return raw.read().decode("utf-8") if raw is not None else stream.read()
        except UnicodeDecodeError as exc:
            raise CliError(
                f"{what} on stdin is not UTF-8 ({exc.reason} at byte {exc.start})"
            ) from None
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        raise CliError(f"{what} {path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise CliError(f"{what} {path}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise CliError(f"{what} {path}: cannot read ({exc.strerror or exc})") from None


def _read_tools(path: str | None) -> list | None:
    if path is None:
        return None
    tools = catalogue.read_json(Path(path), "--tools")
    if tools is not None and not isinstance(tools, list):
        raise CliError(f"--tools {path}: expected a JSON list of tools, got {type(tools).__name__}")
    return tools


def _parse_failure(exc: Exception, what: str) -> CliError:
    message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
    # Some messages quote the region on a second line; keep the error to one line.
    return CliError(
        f"cannot parse {what}: {type(exc).__name__}: {str(message).replace(chr(10), ' ')}"
    )


# --- demo ----------------------------------------------------------------------------------------


def run_demo(family: str | None, chunk_size: int | None, out=None, openai: bool = False) -> int:
    out = out or sys.stdout
    if family is not None and openai:
        return _demo_openai(family, chunk_size, out)
    if family is None:
        names = catalogue.sample_families()
        print("usage: chatparse demo FAMILY; families with a bundled sample:", file=sys.stderr)
        for name in names:
            print(name, file=out)
        return EXIT_OK
    sample = catalogue.load_sample(family)
    template = catalogue.builtin_template(family)
    module, origin = _module_for(template, family)
    prefix = sample.get("prefix") or ""
    fields = template.get("fields") if isinstance(template, dict) else None
    width = max(map(len, fields), default=0) if isinstance(fields, dict) else 0
    tools = sample.get("tools")
    sizes = f"{chunk_size}" if chunk_size else "{}-{}".format(*DEMO_PIECE_SIZES)
    print(f"# {family}: {origin}; output streamed in {sizes}-character pieces", file=out)
    shown = "prefix" if len(prefix) <= PREFIX_SHOWN else f"prefix (last {PREFIX_SHOWN} characters)"
    print(f"# {shown}: {prefix[-PREFIX_SHOWN:]!r}", file=out)
    print(
        "# each event is labelled with the piece whose feed() returned it (#N), or prefix/end",
        file=out,
    )
    try:
        parser = module.ResponseParser(prefix, tools=tools)
        for event in parser.initial_events:
            print(format_event(event, "prefix", width), file=out)
        for number, piece in enumerate(server_chunks(sample["text"], chunk_size), start=1):
            for event in parser.feed(piece):
                print(format_event(event, f"#{number}", width), file=out)
        message, events = parser.finalize()
    except PARSE_ERRORS as exc:
        raise _parse_failure(exc, f"the {family} sample") from exc
    for event in events:
        print(format_event(event, "end", width), file=out)
    print("# message:", file=out)
    print(json.dumps(message, indent=2, ensure_ascii=False), file=out)
    return EXIT_OK


def _demo_openai(family: str, chunk_size: int | None, out) -> int:
    """The family's sample through `DeltaStream`: each delta (choices[0].delta) on one line,
    labelled with the piece whose feed() returned it, so the tool arguments are seen streaming."""
    from ..serving.openai_adapter import DeltaStream

    sample = catalogue.load_sample(family)
    module, origin = _module_for(catalogue.builtin_template(family), family)
    sizes = f"{chunk_size}" if chunk_size else "{}-{}".format(*DEMO_PIECE_SIZES)
    print(f"# {family}: {origin}; output streamed in {sizes}-character pieces", file=out)
    print("# each delta is labelled with the piece whose feed() returned it (#N), or end", file=out)
    counter = iter(range(1 << 62))
    try:
        stream = DeltaStream(
            module,
            sample.get("prefix") or "",
            tools=sample.get("tools"),
            call_id=lambda: f"call_{next(counter)}",
        )
        for number, piece in enumerate(server_chunks(sample["text"], chunk_size), start=1):
            for delta in stream.feed(piece):
                print(f"{'#' + str(number):>6}  {piece!r:<12}  {_json_line(delta)}", file=out)
        for delta in stream.finish():
            print(f"{'end':>6}  {'':<12}  {_json_line(delta)}", file=out)
    except PARSE_ERRORS as exc:
        raise _parse_failure(exc, f"the {family} sample") from exc
    print(f"# finish_reason: {stream.finish_reason}", file=out)
    return EXIT_OK


# --- parse ---------------------------------------------------------------------------------------


# `--malformed` under each output: the parser's policies without --openai, the adapter's with it.
PARSER_POLICIES = ("raise", "event")
OPENAI_POLICIES = ("raise", "drop", "content")


def _check_options(args: argparse.Namespace) -> None:
    """Refuse an option that the chosen output would ignore (silently ignoring it hides a typo)."""
    if args.openai:
        if args.malformed not in (None, *OPENAI_POLICIES):
            raise CliError(
                f"--openai takes --malformed {' | '.join(OPENAI_POLICIES)}, not {args.malformed!r} "
                "(drop and content run the parser in event mode)"
            )
        return
    for option, value in (
        ("--chunk-size", args.chunk_size),
        ("--reasoning-key", args.reasoning_key),
        ("--engine-reason", args.engine_reason),
    ):
        if value is not None:
            raise CliError(f"{option} applies to --openai output only")
    if args.malformed not in (None, *PARSER_POLICIES):
        raise CliError(
            f"--malformed {args.malformed} applies to --openai output; without it the parser "
            f"takes --malformed {' | '.join(PARSER_POLICIES)}"
        )


def run_parse(args: argparse.Namespace, out=None) -> int:
    out = out or sys.stdout
    _check_options(args)
    source = catalogue.resolve_template(args.template)
    prefix = (
        args.prefix if args.prefix_file is None else _read_input(args.prefix_file, "--prefix-file")
    )
    tools = _read_tools(args.tools)
    text = _read_input(args.file, "output")
    module, _ = _module_for(source.template, source.family)
    what = "stdin" if args.file in (None, "-") else args.file
    if args.openai:
        return _print_openai_chunks(module, prefix, tools, text, args, what, out)
    try:
        parser = module.ResponseParser(
            prefix if prefix is not None else "", tools=tools, malformed=args.malformed or "raise"
        )
        events = list(parser.initial_events)
        events += parser.feed(text)
        message, final = parser.finalize()
    except PARSE_ERRORS as exc:
        raise _parse_failure(exc, what) from exc
    result: Any = message
    if args.events:
        result = {"message": message, "events": merge_chunks(events + final)}
    print(json.dumps(result, indent=2, ensure_ascii=False), file=out)
    return EXIT_OK


def _print_openai_chunks(module, prefix, tools, text, args, what, out) -> int:
    """The output as a server would stream it: `chat.completion.chunk` objects, one JSON line each,
    fed in server-like pieces (1-6 characters, deterministic; or --chunk-size), then the chunk
    carrying the finish reason."""
    from ..serving.openai_adapter import ChunkWriter, DeltaStream

    writer = ChunkWriter(
        id="chatcmpl-chatparse", model=module.__name__.rsplit(".", 1)[-1], created=0
    )
    counter = iter(range(1 << 62))
    try:
        stream = DeltaStream(
            module,
            prefix if prefix is not None else "",
            tools=tools,
            reasoning_key=args.reasoning_key or "reasoning_content",
            call_id=lambda: f"call_{next(counter)}",
            malformed=args.malformed or "raise",
        )
        for piece in server_chunks(text, args.chunk_size):
            for chunk in writer.chunks(stream.feed(piece)):
                print(_json_line(chunk), file=out)
        for chunk in writer.chunks(stream.finish(args.engine_reason)):
            print(_json_line(chunk), file=out)
    except PARSE_ERRORS as exc:
        raise _parse_failure(exc, what) from exc
    reason = stream.finish_reason
    assert reason is not None  # known once the stream is finished
    print(_json_line(writer.final(reason)), file=out)
    return EXIT_OK


# --- entry ---------------------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="chatparse", description="Stream or parse chat-model output with a compiled template."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    demo = commands.add_parser("demo", help="stream a family's bundled sample, event by event")
    demo.add_argument("family", nargs="?", metavar="FAMILY", help="omit to list the families")
    demo.add_argument(
        "--chunk-size",
        type=_positive_int,
        metavar="N",
        help="feed pieces of exactly N characters (default: 1-6, deterministic)",
    )
    demo.add_argument(
        "--openai",
        action="store_true",
        help="print the OpenAI deltas instead of the events (tool arguments streaming)",
    )

    parse = commands.add_parser("parse", help="parse a raw model output into a message (JSON)")
    parse.add_argument(
        "template", metavar="TEMPLATE", help="template JSON, tokenizer_config.json or built-in name"
    )
    parse.add_argument("file", nargs="?", metavar="FILE", help="the raw output (default: stdin)")
    prefixes = parse.add_mutually_exclusive_group()
    prefixes.add_argument("--prefix", metavar="TEXT", help="the chat prompt the model continued")
    prefixes.add_argument("--prefix-file", metavar="F", help="read the prefix from F")
    parse.add_argument("--tools", metavar="F.json", help="JSON list of tools (casts arguments)")
    outputs = parse.add_mutually_exclusive_group()
    outputs.add_argument(
        "--events", action="store_true", help='print {"message", "events"} (chunks merged)'
    )
    outputs.add_argument(
        "--openai",
        action="store_true",
        help="print the chat.completion.chunk stream a server would send, one JSON line each",
    )
    parse.add_argument(
        "--chunk-size",
        type=_positive_int,
        metavar="N",
        help="with --openai: feed pieces of N characters (default: 1-6, deterministic)",
    )
    parse.add_argument(
        "--reasoning-key",
        choices=("reasoning_content", "reasoning"),
        help="with --openai: the delta key of the reasoning text (default: reasoning_content)",
    )
    parse.add_argument(
        "--malformed",
        choices=("raise", "event", "drop", "content"),
        help="a region that does not parse (with --openai, also a call cut off) fails: raise, the"
        " default; event: the parser's lenient mode (left out, with a region_malformed event);"
        " with --openai, drop (left out) or content (its body sent as content)",
    )
    parse.add_argument(
        "--engine-reason",
        choices=("stop", "length"),
        help="with --openai: why the generation ended, when known; stop: the end of the output"
        " closes a call, as the reference reads it (for templates whose calls end with an"
        " end-of-turn token left out of the output); default: a call without its close is cut off",
    )
    author_commands.add_commands(commands)
    return parser


def stdout_closed() -> int:
    """The reader of stdout went away (`chatparse demo qwen3 | head -1`): stop quietly, as a shell
    tool does. Python would print a BrokenPipeError traceback, and another when it flushes stdout
    at exit; pointing stdout at devnull leaves nothing to flush."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout is no file (a test's capture)
        pass
    return EXIT_PIPE


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.command == "demo":
            code = run_demo(args.family, args.chunk_size, openai=args.openai)
        elif args.command in author_commands.COMMANDS:
            code = author_commands.COMMANDS[args.command](args)
        else:
            code = run_parse(args)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at exit
        return code
    except (CliError, TemplateSourceError) as exc:
        print(f"chatparse: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return stdout_closed()
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except ModuleNotFoundError as exc:
        return report_compiler_missing("chatparse", exc)


def report_compiler_missing(program: str, exc: ModuleNotFoundError) -> int:
    """A command that needs the compiler, installed without it: say which extra to install."""
    from .._memory import compiler_missing

    error = compiler_missing(exc)
    if error is exc:
        raise exc
    print(f"{program}: error: {error}", file=sys.stderr)
    return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
