"""What `DeltaStream` costs over the parser under it, rung by rung, on every family's sample.

In:  each built-in family's sample turn in server pieces (`agent_turns.turns_of`).
Out: a table, one row per family: CPU time of a whole stream (construct, feed every piece,
     finish) for each rung, as a ratio to the parser's, min / median / max of paired repetitions,
     then the median over the families.

Issue 19 asks for `DeltaStream` within 1.5x of the parser. This ladder shows where that bound sits
for any adapter written in Python, before it streams a call's arguments: each rung adds one thing
an OpenAI delta stream needs.

    parser      the generated module's parser (with `captures=True`, as DeltaStream makes it)
    + deltas    one delta dict per region_chunk event: the least any adapter does
    + one pass  and one `re` call over each tool-call chunk (a JSON tokenizer's `findall`, its
                tokens dropped, no state kept from one chunk to the next): the least an adapter
                that streams a call's arguments does, since it must look at every chunk of them
    + tokens    and the tool-call bodies' chunks read by serving's JSON reader (a json dialect's
                reader for gemma's) into a sink that keeps nothing (tokens only: no spelling, no
                call, no delta); only the families whose calls stream from JSON have this rung
    DeltaStream chatparse.openai.DeltaStream (calls streamed: names, argument fragments)

    python benchmarks/deltas_ladder.py [--families a,b] [--reps N]
"""

from __future__ import annotations

import argparse
import importlib
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent_turns import REPS, Turn, _sample, turns_of  # noqa: E402
from bench import Spread, paired_ratios  # noqa: E402

from chatparse.serving.json_dialect import DialectReader  # noqa: E402
from chatparse.serving.json_reader import JsonReader  # noqa: E402
from chatparse.serving.openai_adapter import _module_plan  # noqa: E402

RUNGS = ("parser", "+ deltas", "+ one pass", "+ tokens", "DeltaStream")
TOOL_FIELD = "tool_calls"


class _Deltas:
    """The parser, and one delta dict per region_chunk event."""

    def __init__(self, module: Any, turn: Turn) -> None:
        self.parser = module.ResponseParser(turn.prefix, tools=turn.tools, captures=True)

    def feed(self, text: str) -> list[dict]:
        out = []
        for event in self.parser.feed(text):
            if event["type"] == "region_chunk":
                out.append({event["field"]: event["text"]})
        return out

    def finish(self) -> Any:
        return self.parser.finalize()


# A JSON tokenizer's one pass: a string (closed or cut off by the chunk's end), a structure char,
# a number, a literal, or any other run (`+ one pass` drops what it finds).
_ONE_PASS = re.compile(
    r'[ \t\n\r]*(?:"(?:[^"\\]|\\.)*"?|[{}\[\]:,]|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?'
    r'|true|false|null|[^"{}\[\]:,\s]+)'
)


class _OnePass(_Deltas):
    """`_Deltas`, and each tool-call chunk read by one `re` call whose tokens are dropped."""

    def feed(self, text: str) -> list[dict]:
        out = []
        for event in self.parser.feed(text):
            if event["type"] == "region_chunk":
                if event["field"] == TOOL_FIELD:
                    _ONE_PASS.findall(event["text"])
                out.append({event["field"]: event["text"]})
        return out


class _NoSink:
    """Takes every token and keeps nothing."""

    def begin(self, kind: str) -> None:
        pass

    def key(self, name: str) -> None:
        pass

    def piece(self, chars: str) -> None:
        pass

    def end(self, kind: str) -> None:
        pass

    def scalar(self, value: Any) -> None:
        pass

    def fail(self) -> None:
        pass


class _Tokens(_Deltas):
    """`_Deltas`, and each tool-call region's body read by serving's JSON reader (the dialect's,
    for gemma's json dialects) into `_NoSink`."""

    def __init__(self, module: Any, turn: Turn) -> None:
        super().__init__(module, turn)
        dialect = _module_plan(module).json.dialect
        self.new_reader: Callable[[], Any] = (
            (lambda: JsonReader(_NoSink()))
            if dialect is None
            else (lambda: DialectReader(_NoSink(), *dialect))
        )
        self.reader: Any = None

    def feed(self, text: str) -> list[dict]:
        out = []
        for event in self.parser.feed(text):
            if event.get("field") != TOOL_FIELD:
                if event["type"] == "region_chunk":
                    out.append({event["field"]: event["text"]})
            elif event["type"] == "region_open":
                self.reader = self.new_reader()
            elif event["type"] == "region_chunk":
                self.reader.feed(event["text"])
                out.append({TOOL_FIELD: event["text"]})
        return out


def json_calls(module: Any) -> bool:
    """Whether the module's tool calls stream from a JSON body (DeltaStream's JSON reader)."""
    return _module_plan(module).json is not None


def rungs(module: Any, turn: Turn) -> dict[str, Callable[[], Any]]:
    from chatparse.openai import DeltaStream

    def stream(make: Callable[[], Any], finish: str) -> Callable[[], Any]:
        def run() -> Any:
            adapter = make()
            feed = adapter.feed
            for piece in turn.pieces:
                feed(piece)
            return getattr(adapter, finish)()

        return run

    made = {
        "parser": stream(
            lambda: module.ResponseParser(turn.prefix, tools=turn.tools, captures=True),
            "finalize",
        ),
        "+ deltas": stream(lambda: _Deltas(module, turn), "finish"),
        "+ one pass": stream(lambda: _OnePass(module, turn), "finish"),
        "+ tokens": stream(lambda: _Tokens(module, turn), "finish"),
        "DeltaStream": stream(lambda: DeltaStream(module, turn.prefix, tools=turn.tools), "finish"),
    }
    if not json_calls(module):
        del made["+ tokens"]
    return made


def measure(family: str, reps: int) -> dict[str, Spread | None]:
    """Each rung's ratio to the parser for the family's sample (paired repetitions)."""
    module = importlib.import_module(f"chatparse.generated.{family}")
    turn = turns_of(family)[0]
    runs = rungs(module, turn)
    for run in runs.values():
        run()  # warm-up
    samples: dict[str, list[float]] = {name: [] for name in runs}
    order = list(runs)
    for rep in range(reps):
        for name in order if rep % 2 == 0 else order[::-1]:
            samples[name].append(_sample(runs[name]))
    parser = samples["parser"]
    return {
        name: Spread.of(paired_ratios(samples[name], parser)) if name in samples else None
        for name in RUNGS
    }


def families() -> list[str]:
    root = Path(__file__).resolve().parent.parent
    return sorted(path.stem for path in (root / "samples").glob("*.json"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", help="comma-separated (default: every sample)")
    parser.add_argument("--reps", type=int, default=REPS)
    args = parser.parse_args(argv)
    names = args.families.split(",") if args.families else families()
    print("ratio to the parser, min/median/max of paired repetitions (CPU time, whole stream)")
    print(f"{'family':20s} " + " ".join(f"{rung:>18s}" for rung in RUNGS))
    medians: dict[str, list[float]] = {rung: [] for rung in RUNGS}
    for family in names:
        row = measure(family, args.reps)
        cells = []
        for rung in RUNGS:
            spread = row[rung]
            cells.append(f"{spread.fmt(suffix='x'):>18s}" if spread else f"{'-':>18s}")
            if spread:
                medians[rung].append(spread.median)
        print(f"{family:20s} " + " ".join(cells), flush=True)
    summary = [
        f"{statistics.median(medians[rung]):.2f}x ({len(medians[rung])})" if medians[rung] else "-"
        for rung in RUNGS
    ]
    print(f"{'median (families)':20s} " + " ".join(f"{cell:>18s}" for cell in summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
