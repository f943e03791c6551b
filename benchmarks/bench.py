"""Benchmark chatparse against the reference (transformers.utils.chat_parsing) and a floor.

Run:  python benchmarks/bench.py [--quick] [--families a,b] [--sizes 1k,10k] [--reference-only]
                                 [--chunkings server,split] [--json out.json]

In:  seeded outputs from workloads.py (six families, 1k-1M characters), chunked as a server
     streams them ("server": special tokens whole, text in 1-6 character pieces) and in the worst
     case ("split": every special token cut mid-way).
Out: a table per family, size and chunking: microseconds per chunk for streaming (construct the
     parser with the prefix, feed every chunk, finalize), MB/s (UTF-8 bytes of the output) for
     bulk `parse_response`, speedups (reference time / chatparse time); the floor table
     (benchmarks/handwritten.py, SmolLM3 only); compile and import times; and a summary against the
     targets. Exit status 1 when any row's messages differ or a parser raised.

Method: everything runs in this one process, backends interleaved and alternating order per
repetition, medians reported. Small runs are repeated inside one sample until it lasts
`min_sample` seconds. Before timing, each row checks that chatparse, the reference (and the
floor) give the same message, values and types; a row that differs is reported and not timed.
The reference gets its template pre-loaded (`load_response_template`), as a server would cache
it, so both sides are timed on parsing, not on loading. GC stays on, as in a server.
chatparse is used through its generated module `chatparse.generated.<family>` when one exists and
was built from the same template (production's path), else through the dict API.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import handwritten  # noqa: E402
import workloads  # noqa: E402

# Repetitions per size (full run). The reference's streaming is quadratic in the output length
# (each feed copies the whole buffer), so at 1M one run of it takes tens of seconds.
REPS = {"1k": 9, "10k": 7, "100k": 5, "1M": 3}
REFERENCE_STREAM_REPS = {"1M": 1}
# A run that long is its own warm-up: its check run is kept as a timing sample.
KEEP_CHECK_RUN_S = 2.0

TARGETS = {
    "stream_small": 8.0,  # speedup at 1k and 10k
    "stream_100k": 20.0,
    "stream_1M": 100.0,
    "flat_per_chunk": 1.5,  # chatparse us/chunk at 1M over its own at 1k
    "bulk_min": 1.0,
    "bulk_median": 3.0,
    "floor": 4.0,  # chatparse us/chunk over the floor's
    "compile_s": 1.0,
    "import_ms": 20.0,
}


# --------------------------------------------------------------------------------------------
# Backends
# --------------------------------------------------------------------------------------------


@dataclass
class Backend:
    name: str  # "chatparse", "reference" or "floor"
    how: str  # shown in the output: which code path is measured
    make: Callable[[str, list], Any]  # (prefix, tools) -> streaming parser
    bulk: Callable[[str, str, list], dict] | None  # (text, prefix, tools) -> message


def reference_backend(template: dict) -> Backend:
    from transformers.utils.chat_parsing import ResponseParser, parse_response
    from transformers.utils.chat_parsing.response_templates import load_response_template

    spec = load_response_template(template)
    return Backend(
        "reference",
        "transformers.utils.chat_parsing",
        lambda prefix, tools: ResponseParser(spec, prefix=prefix, tools=tools),
        lambda text, prefix, tools: parse_response(text, spec, prefix=prefix, tools=tools),
    )


def chatparse_backend(family: str, template: dict) -> tuple[Backend, str | None]:
    """The generated module when it exists and matches `template`, else the dict API.
    Returns the backend and a warning (or None)."""
    module_name = f"chatparse.generated.{family}"
    warning = None
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name != module_name:
            raise
        module = None
    if module is not None:
        built_from = getattr(module, "TEMPLATE", None)
        if built_from is not None and built_from != template:
            warning = f"{module_name}.TEMPLATE is not the template in use; timing the dict API"
        else:
            return (
                Backend(
                    "chatparse",
                    f"generated module {module_name}",
                    lambda prefix, tools: module.ResponseParser(prefix=prefix, tools=tools),
                    lambda text, prefix, tools: module.parse_response(
                        text, prefix=prefix, tools=tools
                    ),
                ),
                None,
            )
    import chatparse

    return (
        Backend(
            "chatparse",
            "dict API chatparse.ResponseParser",
            lambda prefix, tools: chatparse.ResponseParser(template, prefix=prefix, tools=tools),
            lambda text, prefix, tools: chatparse.parse_response(
                text, template, prefix=prefix, tools=tools
            ),
        ),
        warning,
    )


def floor_backend() -> Backend:
    return Backend(
        "floor", "benchmarks/handwritten.py (hand-written, SmolLM3 only)", handwritten.HandwrittenParser, None
    )


# --------------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------------


def run_stream(
    backend: Backend, sample: workloads.Sample, chunks: list[str], inner: int
) -> tuple[float, Any]:
    """Seconds per run (construct with the prefix, feed every chunk, finalize) and the message."""
    make, prefix, tools = backend.make, sample.prefix, sample.tools
    message = None
    gc.collect()
    start = time.perf_counter_ns()
    for _ in range(inner):
        parser = make(prefix, tools)
        parser.initial_events
        feed = parser.feed
        for chunk in chunks:
            feed(chunk)
        message, _ = parser.finalize()
    return (time.perf_counter_ns() - start) / inner / 1e9, message


def run_bulk(backend: Backend, sample: workloads.Sample, inner: int) -> tuple[float, Any]:
    parse, text, prefix, tools = backend.bulk, sample.text, sample.prefix, sample.tools
    message = None
    gc.collect()
    start = time.perf_counter_ns()
    for _ in range(inner):
        message = parse(text, prefix, tools)
    return (time.perf_counter_ns() - start) / inner / 1e9, message


def first_difference(a: Any, b: Any, path: str = "message") -> str | None:
    """Where two messages differ, comparing types as well as values (1 == 1.0 == True in Python)."""
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} {a!r:.120} vs {type(b).__name__} {b!r:.120}"
    if isinstance(a, dict):
        if set(a) != set(b):
            return f"{path}: keys {sorted(a)} vs {sorted(b)}"
        for key in a:
            found = first_difference(a[key], b[key], f"{path}[{key!r}]")
            if found:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    if a != b:
        if isinstance(a, str):
            at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            near = f"{a[at:at + 60]!r} vs {b[at:at + 60]!r}"
            return f"{path}: strings differ at {at} (len {len(a)} vs {len(b)}): {near}"
        return f"{path}: {a!r:.120} vs {b!r:.120}"
    return None


def measure(
    runners: dict[str, Callable[[int], tuple[float, Any]]],
    reps: dict[str, int],
    min_sample: float,
) -> tuple[dict[str, float], dict[str, Any], dict[str, str]]:
    """Check run for every backend, then interleaved timed samples. Returns the median seconds
    per run, the messages and the errors (a backend that raised gets no timing)."""
    messages, errors, samples, inner = {}, {}, {}, {}
    for name, run in runners.items():
        try:
            seconds, messages[name] = run(1)
        except Exception as e:  # noqa: BLE001 - report any parser failure and go on
            errors[name] = f"{type(e).__name__}: {e}"[:300]
            continue
        samples[name] = [seconds] if seconds >= KEEP_CHECK_RUN_S else []
        # The check run pays one-time costs (lazy tables, first regex compiles); size the timed
        # samples on a warm run, or short outputs get one-call samples that are mostly warm-up.
        warm = run(1)[0] if seconds < KEEP_CHECK_RUN_S else seconds
        inner[name] = max(1, int(min_sample / max(warm, 1e-7)))
    live = [n for n in runners if n not in errors]
    for rep in range(max((reps[n] for n in live), default=0)):
        for name in live if rep % 2 == 0 else reversed(live):
            if len(samples[name]) < reps[name]:
                samples[name].append(runners[name](inner[name])[0])
    return {n: statistics.median(samples[n]) for n in live}, messages, errors


# --------------------------------------------------------------------------------------------
# Rows
# --------------------------------------------------------------------------------------------


@dataclass
class Row:
    family: str
    size: str
    chars: int
    chunking: str
    chunks: int
    stream_us: dict[str, float] = field(default_factory=dict)  # backend -> us per chunk
    bulk_mbps: dict[str, float] = field(default_factory=dict)  # backend -> MB/s
    problems: list[str] = field(default_factory=list)


def check_messages(
    messages: dict[str, Any], expected: dict, where: str, problems: list[str]
) -> bool:
    """chatparse and the floor must equal the reference; the reference should equal the sample's
    expected message (if not, the workload or the template is off, but the comparison holds)."""
    ok = True
    reference = messages.get("reference")
    for name, message in messages.items():
        if name == "reference":
            continue
        if reference is not None and (diff := first_difference(message, reference)):
            problems.append(f"MISMATCH {where}: {name} vs reference: {diff}")
            ok = False
    if reference is not None and (diff := first_difference(reference, expected)):
        problems.append(f"note {where}: reference differs from the generated message: {diff}")
    return ok


def bench_row(
    family: str,
    size: str,
    chunking: str,
    sample: workloads.Sample,
    backends: list[Backend],
    args: argparse.Namespace,
) -> Row:
    chunks = workloads.CHUNKINGS[chunking](sample)
    row = Row(family, size, len(sample.text), chunking, len(chunks))
    where = f"{family} {size} {chunking}"
    reps = {
        b.name: (
            1
            if args.quick
            else (REFERENCE_STREAM_REPS if b.name == "reference" else {}).get(size, REPS[size])
        )
        for b in backends
    }
    runners = {b.name: (lambda inner, b=b: run_stream(b, sample, chunks, inner)) for b in backends}
    medians, messages, errors = measure(runners, reps, args.min_sample)
    for name, error in errors.items():
        row.problems.append(f"ERROR {where}: {name} raised {error}")
    if check_messages(messages, sample.expected, where, row.problems):
        row.stream_us = {n: s / len(chunks) * 1e6 for n, s in medians.items()}
    if chunking == "server":  # bulk parsing does not depend on the chunking
        bulk = [b for b in backends if b.bulk is not None]
        reps = {b.name: 1 if args.quick else REPS[size] for b in bulk}
        runners = {b.name: (lambda inner, b=b: run_bulk(b, sample, inner)) for b in bulk}
        medians, messages, errors = measure(runners, reps, args.min_sample)
        for name, error in errors.items():
            row.problems.append(f"ERROR {where} bulk: {name} raised {error}")
        if check_messages(messages, sample.expected, f"{where} bulk", row.problems):
            nbytes = len(sample.text.encode("utf-8"))
            row.bulk_mbps = {n: nbytes / s / 1e6 for n, s in medians.items()}
    return row


# --------------------------------------------------------------------------------------------
# Compile and import times (fresh subprocesses)
# --------------------------------------------------------------------------------------------

_COMPILE_CHILD = """
import json, sys, time
import chatparse
template = json.load(open(sys.argv[1], encoding="utf-8"))
start = time.perf_counter()
chatparse.compile_template(template)
print(time.perf_counter() - start)
"""

_IMPORT_CHILD = (
    "import time; s = time.perf_counter(); import {module}; print(time.perf_counter() - s)"
)


def _child(code: str, *argv: str, pycache: str | None = None) -> float:
    env = dict(os.environ)
    if pycache is not None:
        # An installed package imports from .pyc files; some shells set PYTHONDONTWRITEBYTECODE,
        # which would make every timed import recompile the sources. Keep the caches in a
        # scratch directory rather than in the package tree.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pycache
    with tempfile.TemporaryDirectory() as cwd:  # keep the cwd out of sys.path lookups
        done = subprocess.run(
            [sys.executable, "-c", code, *argv], cwd=cwd, env=env, capture_output=True, text=True
        )
    if done.returncode != 0:
        raise RuntimeError(
            done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "child failed"
        )
    return float(done.stdout.strip().splitlines()[-1])


def compile_times(families: list[str], quick: bool) -> list[dict]:
    """Cold compile of each built-in template (all of templates/*.json, or only the selected
    families' with --quick), one fresh process each, so no compile cache helps."""
    builtin = sorted(workloads.TEMPLATE_DIR.glob("*.json"))
    paths = {p.stem: (str(p), f"templates/{p.name}") for p in builtin}
    if quick:
        paths = {k: v for k, v in paths.items() if k in families}
    out = []
    for name, (path, source) in sorted(paths.items()):
        try:
            out.append(
                {"template": name, "source": source, "seconds": _child(_COMPILE_CHILD, path)}
            )
        except RuntimeError as e:
            out.append({"template": name, "source": source, "error": str(e)})
    return out


def import_times(modules: list[str], runs: int) -> list[dict]:
    """Median wall time of `import M` in fresh interpreters (after one warm-up that writes .pyc)."""
    out = []
    with tempfile.TemporaryDirectory() as pycache:
        for module in modules:
            code = _IMPORT_CHILD.format(module=module)
            try:
                _child(code, pycache=pycache)
                times = [_child(code, pycache=pycache) for _ in range(runs)]
                out.append({"module": module, "ms": statistics.median(times) * 1e3})
            except RuntimeError as e:
                out.append({"module": module, "error": str(e)})
    return out


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------


def _fmt(x: float | None, spec: str = ".2f", suffix: str = "") -> str:
    return "-" if x is None else f"{x:{spec}}{suffix}"


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def table(headers: list[str], rows: list[list[str]], left: int = 1) -> str:
    """Plain-text table: the first `left` columns left-aligned, the rest right-aligned."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        padded = (
            c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
        )
        return "  ".join(padded).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


MAIN_HEADERS = "family size chars chunking chunks".split() + [
    "chatparse us/chunk",
    "reference us/chunk",
    "speedup",
    "bulk MB/s chatparse",
    "bulk MB/s reference",
    "bulk speedup",
    "",
]


def main_row(r: Row) -> list[str]:
    cp, ref = r.stream_us.get("chatparse"), r.stream_us.get("reference")
    bcp, bref = r.bulk_mbps.get("chatparse"), r.bulk_mbps.get("reference")
    bulk = [_fmt(bcp, ".1f"), _fmt(bref, ".1f"), _fmt(_ratio(bcp, bref), ".1f", "x")]
    flag = "MISMATCH/ERROR" if any(not p.startswith("note") for p in r.problems) else ""
    return [r.family, r.size, str(r.chars), r.chunking, str(r.chunks), _fmt(cp), _fmt(ref)] + [
        _fmt(_ratio(ref, cp), ".1f", "x"),
        *(bulk if r.chunking == "server" else ["", "", ""]),
        flag,
    ]


FLOOR_HEADERS = ["family", "size", "chunking", "floor us/chunk", "chatparse us/chunk"] + [
    "chatparse/floor",
    "reference us/chunk",
    "reference/floor",
]


def floor_row(r: Row) -> list[str]:
    f, cp, ref = (r.stream_us.get(k) for k in ("floor", "chatparse", "reference"))
    return [r.family, r.size, r.chunking, _fmt(f), _fmt(cp), _fmt(_ratio(cp, f), ".2f", "x")] + [
        _fmt(ref),
        _fmt(_ratio(ref, f), ".2f", "x"),
    ]


def _speedups(rows: list[Row], sizes: tuple[str, ...], chunking: str = "server") -> list[float]:
    return [
        r.stream_us["reference"] / r.stream_us["chatparse"]
        for r in rows
        if r.size in sizes
        and r.chunking == chunking
        and {"chatparse", "reference"} <= set(r.stream_us)
    ]


def _per_chunk_growth(rows: list[Row]) -> list[float]:
    """chatparse us/chunk at 1M over its own at 1k, per family and chunking."""
    at_1k = {(r.family, r.chunking): r.stream_us.get("chatparse") for r in rows if r.size == "1k"}
    return [
        r.stream_us["chatparse"] / at_1k[r.family, r.chunking]
        for r in rows
        if r.size == "1M" and "chatparse" in r.stream_us and at_1k.get((r.family, r.chunking))
    ]


def _judge(
    target: str, values: list[float], pick: Callable, op: str, limit: float, unit: str
) -> dict:
    if not values:
        return {"target": target, "status": "n/a", "detail": "not measured"}
    value = pick(values)
    passed = value >= limit if op == ">=" else value <= limit if op == "<=" else value < limit
    detail = (
        f"{pick.__name__} {value:.3g}{unit} over {len(values)} rows (need {op} {limit:g}{unit})"
    )
    return {
        "target": target,
        "status": "PASS" if passed else "FAIL",
        "value": value,
        "detail": detail,
    }


def summary(rows: list[Row], compiles: list[dict], imports: list[dict]) -> list[dict]:
    """One entry per target: the deciding figure (worst case, or the median where the target
    says so) and PASS/FAIL/n/a, then informational figures."""
    t = TARGETS
    bulk = [
        r.bulk_mbps["chatparse"] / r.bulk_mbps["reference"]
        for r in rows
        if {"chatparse", "reference"} <= set(r.bulk_mbps)
    ]
    vs_floor = [
        r.stream_us["chatparse"] / r.stream_us["floor"]
        for r in rows
        if {"chatparse", "floor"} <= set(r.stream_us)
    ]
    compile_s = [c["seconds"] for c in compiles if "seconds" in c]
    import_ms = [i["ms"] for i in imports if "ms" in i and ".generated." in i["module"]]
    median = statistics.median
    out = [
        _judge(
            "streaming speedup at 1k-10k",
            _speedups(rows, ("1k", "10k")),
            min,
            ">=",
            t["stream_small"],
            "x",
        ),
        _judge(
            "streaming speedup at 100k",
            _speedups(rows, ("100k",)),
            min,
            ">=",
            t["stream_100k"],
            "x",
        ),
        _judge("streaming speedup at 1M", _speedups(rows, ("1M",)), min, ">=", t["stream_1M"], "x"),
        _judge(
            "chatparse us/chunk, 1M over 1k",
            _per_chunk_growth(rows),
            max,
            "<=",
            t["flat_per_chunk"],
            "x",
        ),
        _judge("bulk never slower than the reference", bulk, min, ">=", t["bulk_min"], "x"),
        _judge("bulk speedup, median", bulk, median, ">=", t["bulk_median"], "x"),
        _judge("streaming cost over the floor (SmolLM3)", vs_floor, max, "<=", t["floor"], "x"),
        _judge("compile time", compile_s, max, "<", t["compile_s"], " s"),
        _judge("import time of a generated module", import_ms, max, "<", t["import_ms"], " ms"),
    ]
    for sizes in (("1k", "10k"), ("100k",), ("1M",)):
        if values := _speedups(rows, sizes, "split"):
            detail = f"min {min(values):.3g}x, median {median(values):.3g}x"
            out.append(
                {
                    "target": f"split-chunking speedup at {'-'.join(sizes)}",
                    "status": "info",
                    "detail": detail,
                }
            )
    ref_floor = [
        r.stream_us["reference"] / r.stream_us["floor"]
        for r in rows
        if {"reference", "floor"} <= set(r.stream_us)
    ]
    if ref_floor:
        detail = f"min {min(ref_floor):.3g}x, max {max(ref_floor):.3g}x"
        out.append(
            {
                "target": "reference cost over the floor (SmolLM3)",
                "status": "info",
                "detail": detail,
            }
        )
    return out


def print_report(
    meta: dict, rows: list[Row], compiles: list, imports: list, results: list, problems: list
) -> None:
    print(f"chatparse benchmark: Python {meta['python']}, {meta['platform']}, {meta['cpus']} CPUs")
    print(f"reference: transformers {meta['transformers']}; repetitions per size {meta['reps']}")
    print(
        f"(reference streaming {meta['reference_stream_reps']}); medians; speedup = reference time /"
    )
    print("chatparse time; MB/s = UTF-8 bytes of the output per second")
    for family, how in meta["families"].items():
        print(f"  {family}: " + "; ".join(f"{k}: {v}" for k, v in how.items()))
    print()
    print(table(MAIN_HEADERS, [main_row(r) for r in rows]))
    if floor_rows := [floor_row(r) for r in rows if "floor" in r.stream_us]:
        print(
            "\nFloor (benchmarks/handwritten.py, a hand-written str.find parser for SmolLM3, same events):"
        )
        print(table(FLOOR_HEADERS, floor_rows, left=3))
    if compiles:
        print("\nCompile (chatparse.compile_template, cold, one fresh process per template):")
        cells = [
            [
                c["template"],
                c["source"],
                _fmt(c.get("seconds"), ".3f") if "seconds" in c else "ERROR " + c["error"],
            ]
            for c in compiles
        ]
        print(table(["template", "source", "seconds"], cells, left=2))
    if imports:
        print("\nImport (fresh process, median):")
        cells = [
            [i["module"], _fmt(i.get("ms"), ".1f") if "ms" in i else "ERROR " + i["error"]]
            for i in imports
        ]
        print(table(["module", "ms"], cells))
    print("\nSummary against the targets:")
    for s in results:
        print(f"  [{s['status']:<4}] {s['target']}: {s['detail']}")
    if problems:
        loud = sum(not p.startswith("note") for p in problems)
        print(f"\nProblems ({loud} mismatches/errors/warnings, {len(problems) - loud} notes):")
        for p in problems:
            print(f"  {p}")


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="1k/10k/100k, one repetition (under a minute on 2 cores)",
    )
    p.add_argument(
        "--families",
        default=",".join(workloads.FAMILIES),
        help="comma-separated, from: " + ", ".join(workloads.FAMILIES),
    )
    p.add_argument(
        "--sizes", default=None, help="comma-separated, from: " + ", ".join(workloads.SIZES)
    )
    p.add_argument(
        "--chunkings", default="server,split", help="comma-separated, from: server, split"
    )
    p.add_argument(
        "--reference-only", action="store_true", help="time the reference and the floor only"
    )
    p.add_argument(
        "--min-sample",
        type=float,
        default=None,
        help="seconds one timing sample lasts at least (default 0.02, quick 0.005)",
    )
    p.add_argument("--json", metavar="PATH", help="also write every figure as JSON")
    args = p.parse_args(argv)
    args.families = [f for f in args.families.split(",") if f]
    args.sizes = (
        args.sizes.split(",")
        if args.sizes
        else ["1k", "10k", "100k"] if args.quick else list(workloads.SIZES)
    )
    args.chunkings = [c for c in args.chunkings.split(",") if c]
    for given, known, what in (
        (args.families, workloads.FAMILIES, "family"),
        (args.sizes, workloads.SIZES, "size"),
        (args.chunkings, workloads.CHUNKINGS, "chunking"),
    ):
        if unknown := [x for x in given if x not in known]:
            p.error(f"unknown {what}: {', '.join(unknown)}")
    if args.min_sample is None:
        args.min_sample = 0.005 if args.quick else 0.02
    return args


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    import transformers

    meta = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "transformers": transformers.__version__,
        "quick": args.quick,
        "reps": {s: (1 if args.quick else REPS[s]) for s in args.sizes},
        "reference_stream_reps": {
            s: (1 if args.quick else REFERENCE_STREAM_REPS.get(s, REPS[s])) for s in args.sizes
        },
        "families": {},
    }
    rows: list[Row] = []
    problems: list[str] = []
    for family in args.families:
        template, source = workloads.load_template(family)
        backends = [reference_backend(template)]
        how = {"template": source, "reference": backends[0].how}
        if not args.reference_only:
            try:
                cp, warning = chatparse_backend(family, template)
                backends.insert(0, cp)
                how["chatparse"] = cp.how
                if warning:
                    problems.append(f"WARNING {family}: {warning}")
            except Exception as e:  # noqa: BLE001 - report, and still time the reference
                problems.append(
                    f"ERROR {family}: chatparse unavailable ({type(e).__name__}: {e}); "
                    "timing the reference only (see --reference-only)"
                )
                how["chatparse"] = "unavailable"
        if family == "smollm3":
            backends.append(floor_backend())
            how["floor"] = backends[-1].how
        meta["families"][family] = how
        log(
            f"[{family}] template {source}; "
            + "; ".join(f"{k}: {v}" for k, v in how.items() if k != "template")
        )
        for size in args.sizes:
            sample = workloads.make_sample(family, workloads.SIZES[size])
            for chunking in args.chunkings:
                t0 = time.perf_counter()
                row = bench_row(family, size, chunking, sample, backends, args)
                rows.append(row)
                problems.extend(row.problems)
                for p in row.problems:
                    log(("!!! " if not p.startswith("note") else "    ") + p)
                log(f"  {family:<17} {size:>4} {chunking:<6} {time.perf_counter() - t0:6.1f} s")

    compiles: list[dict] = []
    imports: list[dict] = []
    if not args.reference_only:
        log("compile times (fresh process per template) ...")
        compiles = compile_times(args.families, args.quick)
        generated = [
            f"chatparse.generated.{f}"
            for f in args.families
            if meta["families"][f].get("chatparse", "").startswith("generated")
        ]
        log("import times (fresh processes) ...")
        imports = import_times(
            ["chatparse", "chatparse.runtime", *generated], 3 if args.quick else 7
        )

    results = summary(rows, compiles, imports)
    print_report(meta, rows, compiles, imports, results, problems)
    print(f"\n(total {time.perf_counter() - started:.0f} s)")
    if args.json:
        payload = {
            "meta": meta,
            "rows": [r.__dict__ for r in rows],
            "compile": compiles,
            "import": imports,
            "summary": results,
            "problems": problems,
        }
        Path(args.json).write_text(
            json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    return 1 if any(p.startswith(("MISMATCH", "ERROR")) for p in problems) else 0


if __name__ == "__main__":
    sys.exit(main())
