"""Agent turns: the workload production serves. chatparse against the reference, per family.

Run:  python benchmarks/agent_turns.py [--quick] [--families a,b] [--reps N]
                                       [--json out.json] [--markdown out.md]

In:  every built-in family's sample (`samples/<family>.json`: a real turn of a few hundred
     characters after its chat prompt), and for the families `workloads.py` renders in their real
     syntax, five turns of the realistic kinds: a plain answer, reasoning then an answer, one call,
     parallel calls, and a call with a 2,000-character code argument. Server pieces: the
     template's delimiter literals whole, other text in 1-6 character pieces (`workloads`).
Out: per turn, CPU time of chatparse and of the reference (its template pre-loaded) for
     - streaming: construct with the prefix, feed every piece, finalize;
     - bulk: `parse_response` on the whole text;
     through the generated module; the speedup (reference / chatparse) as min / median / max of
     paired repetitions; then the dict API's cost over the module per message (constructing
     `chatparse.ResponseParser(template_dict, ...)`, and by name, against the module's) and
     `chatparse.openai.DeltaStream`'s time over the module's parser. A summary gives the median
     and minimum speedups over the turns and the families below 2x and 3x.

Repetitions stream the same pieces, so a chunk that a region's runs read before from the same
state is one lookup (runtime/run_sets.py), as a server's recurring tokens are (a call's header, a
close tag); `--cold` forgets every chunk reading before each chatparse stream: the case where no
token ever recurs.

Method (as bench.py): one process, one thread, CPU time (`time.thread_time_ns`), the backends of
one repetition timed next to each other, each repetition repeated until it lasts `MIN_SAMPLE` CPU
seconds, GC on. Before timing, each turn checks that chatparse's message equals the reference's
one-shot `parse_response` (values and types); a turn that differs is reported and not timed.
No padding with prose: a turn is the text a model writes.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workloads  # noqa: E402
from bench import Spread, first_difference, paired_ratios  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REPS, QUICK_REPS = 9, 3
MIN_SAMPLE = 0.02  # CPU seconds per timed sample: a turn takes tens of microseconds
KINDS = ("sample", "answer", "reasoning", "call", "parallel", "code")

clock_ns = time.thread_time_ns


@dataclass(frozen=True)
class Turn:
    family: str
    kind: str
    prefix: str
    text: str
    tools: list
    pieces: list[str]


def _pieces(template: dict, text: str, seed: str) -> list[str]:
    segments = workloads.delimiter_segments(text, workloads.delimiter_literals(template))
    rng = random.Random(seed)
    pieces: list[str] = []
    for special, part in segments:
        pieces += [part] if special else workloads.text_pieces(part, rng)
    return pieces


def turns_of(family: str) -> list[Turn]:
    """The family's sample, then the realistic kinds where workloads.py writes its syntax."""
    template, _ = workloads.load_template(family)
    sample = json.loads((ROOT / "samples" / f"{family}.json").read_text(encoding="utf-8"))
    found = [
        Turn(
            family,
            "sample",
            sample["prefix"],
            sample["text"],
            sample.get("tools") or [],
            _pieces(template, sample["text"], family),
        )
    ]
    writer = workloads.WRITERS.get(family)
    if writer is None:
        return found
    rng = random.Random(f"turns:{family}")
    weather = ("get_weather", {"city": "Paris", "unit": "celsius"})
    code = ("write_file", {"path": "src/app.py", "content": workloads._code_file(rng, 2000)})
    answer = "The forecast for Paris is mild: 14 degrees and light rain in the afternoon."
    thought = "The user wants the weather; I know the city, so one call answers it."
    kinds = {
        "answer": ("", answer, []),
        "reasoning": (thought, answer, []),
        "call": (thought, "", [weather]),
        "parallel": (thought, "", [weather, ("get_weather", {"city": "Tokyo"})]),
        "code": ("", "Writing the file.", [code]),
    }
    for kind, (reasoning, content, calls) in kinds.items():
        text = "".join(part for _, part in writer.render(reasoning, content, calls))
        found.append(
            Turn(
                family,
                kind,
                writer.prefix(workloads.TOOLS),
                text,
                workloads.TOOLS,
                _pieces(template, text, f"{family}:{kind}"),
            )
        )
    return found


def _sample(run: Callable[[], Any]) -> float:
    """CPU seconds per call of `run`, repeated until the sample lasts MIN_SAMPLE."""
    inner = 1
    while True:
        gc.collect()
        start = clock_ns()
        for _ in range(inner):
            run()
        spent = (clock_ns() - start) / 1e9
        if spent >= MIN_SAMPLE or inner >= 1 << 16:
            return spent / inner
        inner = max(inner * 2, int(inner * MIN_SAMPLE / max(spent, 1e-9)) + 1)


def forget_chunks(module: Any) -> None:
    """Forget every chunk reading of the module's regions (runtime/run_sets.py): the next stream
    finds none of its chunks read before, as if no token ever recurred."""
    parser_class = module.ResponseParser
    for region in (parser_class.home, *parser_class.regions.values()):
        for form in (region, region.after_start):
            sets = form.run_sets if form is not None else None
            if sets is not None:
                for remembered in sets.chunks:
                    remembered.clear()


def _streamer(
    make: Callable[[], Any], pieces: list[str], finish: str, before: Callable[[], Any] | None = None
) -> Callable[[], Any]:
    def run() -> Any:
        if before is not None:
            before()
        parser = make()
        feed = parser.feed
        for piece in pieces:
            feed(piece)
        return getattr(parser, finish)()

    return run


def measure(turn: Turn, reps: int, cold: bool = False) -> dict:
    from transformers.utils.chat_parsing import ResponseParser, parse_response
    from transformers.utils.chat_parsing.response_templates import load_response_template

    import chatparse
    from chatparse.openai import DeltaStream

    template, _ = workloads.load_template(turn.family)
    module = importlib.import_module(f"chatparse.generated.{turn.family}")
    spec = load_response_template(template)
    prefix, tools, text, pieces = turn.prefix, turn.tools, turn.text, turn.pieces

    expected = parse_response(text, spec, prefix=prefix, tools=tools)
    got = module.parse_response(text, prefix=prefix, tools=tools)
    streamed = _streamer(lambda: module.ResponseParser(prefix, tools=tools), pieces, "finalize")()
    for path, message in (("bulk", got), ("stream", streamed[0])):
        difference = first_difference(message, expected)
        if difference is not None:
            return {"family": turn.family, "kind": turn.kind, "mismatch": f"{path}: {difference}"}

    runs = {
        "ref_stream": _streamer(
            lambda: ResponseParser(spec, prefix=prefix, tools=tools), pieces, "finalize"
        ),
        "stream": _streamer(
            lambda: module.ResponseParser(prefix, tools=tools),
            pieces,
            "finalize",
            (lambda: forget_chunks(module)) if cold else None,
        ),
        "ref_bulk": lambda: parse_response(text, spec, prefix=prefix, tools=tools),
        "bulk": lambda: module.parse_response(text, prefix=prefix, tools=tools),
        # What the dict API adds is its lookup, before the module's own parser: constructions
        # are timed alone (a difference of two whole streams drowns it in their noise).
        "construct": lambda: module.ResponseParser(prefix, tools=tools),
        "dict": lambda: chatparse.ResponseParser(template, prefix, tools=tools),
        "name": lambda: chatparse.ResponseParser(turn.family, prefix, tools=tools),
        "deltas": _streamer(lambda: DeltaStream(module, prefix, tools=tools), pieces, "finish"),
    }
    for run in runs.values():
        run()  # warm-up: lazy tables, compiled classes, the dict API's cache
    samples: dict[str, list[float]] = {name: [] for name in runs}
    order = list(runs)
    for rep in range(reps):
        for name in order if rep % 2 == 0 else order[::-1]:
            samples[name].append(_sample(runs[name]))
    spread = {name: Spread.of(values) for name, values in samples.items()}

    def ratio(numerator: str, denominator: str) -> Spread | None:
        return Spread.of(paired_ratios(samples[numerator], samples[denominator]))

    def over(name: str) -> Spread | None:  # microseconds over the module's constructor
        return Spread.of([(a - b) * 1e6 for a, b in zip(samples[name], samples["construct"])])

    return {
        "family": turn.family,
        "kind": turn.kind,
        "chars": len(text),
        "pieces": len(pieces),
        "stream_us": spread["stream"],
        "stream_speedup": ratio("ref_stream", "stream"),
        "bulk_us": spread["bulk"],
        "bulk_speedup": ratio("ref_bulk", "bulk"),
        "dict_over_us": over("dict"),
        "name_over_us": over("name"),
        "deltas_ratio": ratio("deltas", "stream"),
    }


def _cell(value: Spread | None, spec: str = ".2f", suffix: str = "") -> str:
    return "-" if value is None else value.fmt(spec, suffix)


def table(rows: list[dict]) -> str:
    head = (
        "| family | turn | chars | pieces | streaming speedup | bulk speedup "
        "| dict API over module (us) | by name (us) | DeltaStream / parser |"
    )
    lines = [head, "|" + "---|" * 9]
    for row in rows:
        if "mismatch" in row:
            lines.append(f"| {row['family']} | {row['kind']} | MISMATCH: {row['mismatch']} |")
            continue
        lines.append(
            f"| {row['family']} | {row['kind']} | {row['chars']} | {row['pieces']} "
            f"| {_cell(row['stream_speedup'], '.2f', 'x')} | {_cell(row['bulk_speedup'], '.2f', 'x')} "
            f"| {_cell(row['dict_over_us'], '.1f')} | {_cell(row['name_over_us'], '.1f')} "
            f"| {_cell(row['deltas_ratio'], '.2f', 'x')} |"
        )
    return "\n".join(lines)


def summary(rows: list[dict]) -> str:
    timed = [row for row in rows if "mismatch" not in row]
    if not timed:
        return "no turn timed"
    lines = ["| what (medians per turn) | min | median | max | families below 2x | below 3x |"]
    lines.append("|---|---|---|---|---|---|")
    for key, what in (("stream_speedup", "streaming speedup"), ("bulk_speedup", "bulk speedup")):
        medians = [row[key].median for row in timed]
        per_family: dict[str, list[float]] = {}
        for row in timed:
            per_family.setdefault(row["family"], []).append(row[key].median)
        worst = {family: min(values) for family, values in per_family.items()}
        below2 = sorted(f for f, v in worst.items() if v < 2)
        below3 = sorted(f for f, v in worst.items() if v < 3)
        lines.append(
            f"| {what} | {min(medians):.2f}x | {statistics.median(medians):.2f}x "
            f"| {max(medians):.2f}x | {len(below2)} ({', '.join(below2) or '-'}) "
            f"| {len(below3)} of {len(worst)} |"
        )
    for key, what, suffix in (
        ("dict_over_us", "dict API over the module", " us"),
        ("name_over_us", "by name over the module", " us"),
        ("deltas_ratio", "DeltaStream / parser", "x"),
    ):
        medians = [row[key].median for row in timed]
        lines.append(
            f"| {what} | {min(medians):.2f}{suffix} | {statistics.median(medians):.2f}{suffix} "
            f"| {max(medians):.2f}{suffix} | | |"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_REPS} repetitions")
    parser.add_argument("--reps", type=int, help=f"repetitions (default {REPS})")
    parser.add_argument("--families", help="comma-separated families (default: every built-in)")
    parser.add_argument("--kinds", help=f"comma-separated turn kinds of {KINDS}")
    parser.add_argument(
        "--cold",
        action="store_true",
        help="forget the chunk readings before every chatparse stream (no token recurs)",
    )
    parser.add_argument("--json", help="write every row here")
    parser.add_argument("--markdown", help="write the tables here")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    reps = args.reps or (QUICK_REPS if args.quick else REPS)
    families = args.families.split(",") if args.families else workloads.builtin_families()
    kinds = set(args.kinds.split(",")) if args.kinds else set(KINDS)
    rows = []
    for family in families:
        for turn in turns_of(family):
            if turn.kind in kinds:
                rows.append(measure(turn, reps, cold=args.cold))
                print(f"  {family} {turn.kind}", file=sys.stderr, flush=True)
    report = f"{summary(rows)}\n\n{table(rows)}\n"
    print(report)
    if args.markdown:
        Path(args.markdown).write_text(report, encoding="utf-8")
    if args.json:
        serial = [
            {k: (asdict(v) if isinstance(v, Spread) else v) for k, v in row.items()} for row in rows
        ]
        Path(args.json).write_text(json.dumps(serial, indent=1), encoding="utf-8")
    return 1 if any("mismatch" in row for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
