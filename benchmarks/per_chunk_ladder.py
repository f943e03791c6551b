"""What each piece of a streaming parser's per-chunk work costs above the API lower bound.

In:  nothing (seeded ASCII prose, cut into server-sized 1-6 character chunks without `<`).
Out: a table, one row per rung: CPU time per chunk (`time.thread_time`), min / median / max over
     the repetitions, and its ratio to the lower bound (`lower_bound.py`), each ratio taken per
     repetition from samples measured next to each other (every rung runs once per repetition,
     in turn).

Issue 10 asks for streaming within 1.5x of the lower bound from 10k up. This ladder shows where
that bound sits for any parser, before it parses anything: each rung adds one thing the common
chunk needs, and the last rung is chatparse's generated smollm3 parser itself on the same chunks
(all of them in its content region, all on its generated fast path).

    bound       append the chunk, return [one region_chunk event]
    + test      decline a chunk holding a char a delimiter starts with, or ending in a lead char
    + dispatch  through one stable `feed` that calls the current region's function (callers
                cache `parser.feed`, so the function cannot be swapped on the instance)
    + compact   join the body past a number of pieces (the memory bound: tests/test_memory.py)
    + open      the region-open check (the first chunk of a region also sends region_open)
    chatparse   the generated smollm3 module, content region

    python benchmarks/per_chunk_ladder.py [--chars N] [--repetitions N]
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench  # noqa: E402
import lower_bound  # noqa: E402
import workloads  # noqa: E402

STOPS = "<"
LEAD = "\t\n\x0b\x0c\r "
BODY_PIECES = 128


def _event(text: str) -> dict:
    return {"type": "region_chunk", "field": "content", "text": text, "dirty": False}


class Tested:
    def __init__(self) -> None:
        self.region_body: list[str] = []

    def feed(self, text: str) -> list[dict]:
        if not text or "<" in text or text[-1] in LEAD:
            return self._slow(text)
        self.region_body.append(text)
        return [_event(text)]

    def _slow(self, text: str) -> list[dict]:
        self.region_body.append(text)
        return [_event(text)]


def _dispatched_fast(parser: Any, text: str) -> list[dict]:
    if not text or "<" in text or text[-1] in LEAD:
        return parser._slow(text)
    parser.region_body.append(text)
    return [_event(text)]


class Dispatched(Tested):
    def __init__(self) -> None:
        super().__init__()
        self.fast_feed = _dispatched_fast

    def feed(self, text: str) -> list[dict]:
        return self.fast_feed(self, text)


def _compacted_fast(parser: Any, text: str) -> list[dict]:
    if not text or "<" in text or text[-1] in LEAD:
        return parser._slow(text)
    body = parser.region_body
    body.append(text)
    if len(body) > BODY_PIECES:
        parser._merge()
    return [_event(text)]


class Compacted(Dispatched):
    def __init__(self) -> None:
        super().__init__()
        self.fast_feed = _compacted_fast
        self._merged: list[str] = []

    def _merge(self) -> None:
        """The pieces joined into one, kept apart from the rest (linear: nothing is re-copied)."""
        self._merged.append("".join(self.region_body))
        self.region_body.clear()


def _opened_fast(parser: Any, text: str) -> list[dict]:
    if not text or "<" in text or text[-1] in LEAD:
        return parser._slow(text)
    body = parser.region_body
    body.append(text)
    if len(body) > BODY_PIECES:
        parser._merge()
    event = _event(text)
    if parser.region_opened:
        return [event]
    parser.region_opened = True
    return [{"type": "region_open", "field": "content"}, event]


class Opened(Compacted):
    def __init__(self) -> None:
        super().__init__()
        self.fast_feed = _opened_fast
        self.region_opened = False


def chunks_of_prose(chars: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    # ASCII and no `<`: every chunk is one the fast path takes (a chunk ending in a non-ASCII
    # char goes to the general path, whose cost this ladder does not measure).
    text = workloads.prose(rng, chars, reasoning=False).replace("<", "(")
    text = text.encode("ascii", "replace").decode("ascii")
    return workloads.text_pieces(text, rng)


def rungs() -> list[tuple[str, Callable[[], Any]]]:
    from chatparse.generated import smollm3

    return [
        ("bound", lambda: lower_bound.LowerBoundParser("")),
        ("+ test", Tested),
        ("+ dispatch", Dispatched),
        ("+ compact", Compacted),
        ("+ open", Opened),
        # No prefix: the stream starts in the content region (smollm3 has no forced open).
        ("chatparse", lambda: smollm3.ResponseParser(prefix="")),
    ]


def chatparse_stays_on_its_fast_path(chunks: list[str]) -> None:
    """Raise AssertionError when the chatparse rung sends a chunk to the general path
    (`RegionParser.feed`): then it would not measure the fast path."""
    from chatparse.runtime.region_parser import RegionParser

    def general_path(self: Any, text: str) -> list[dict]:
        raise AssertionError(f"general path on {text!r}")

    general = RegionParser.feed
    RegionParser.feed = general_path  # type: ignore[method-assign]
    try:
        parser = rungs()[-1][1]()
        for chunk in chunks:
            parser.feed(chunk)
    finally:
        RegionParser.feed = general  # type: ignore[method-assign]


def time_rung(make: Callable[[], Any], chunks: list[str], inner: int) -> float:
    """CPU µs per chunk over `inner` streams (feeds only: construction is outside the clock)."""
    parsers = [make() for _ in range(inner)]
    gc.collect()
    gc.disable()
    try:
        start = time.thread_time_ns()
        for parser in parsers:
            feed = parser.feed
            for chunk in chunks:
                feed(chunk)
        elapsed = time.thread_time_ns() - start
    finally:
        gc.enable()
    return elapsed / 1e3 / inner / len(chunks)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chars", type=int, default=100_000)
    parser.add_argument("--repetitions", type=int, default=15)
    args = parser.parse_args(argv)
    chunks = chunks_of_prose(args.chars)
    inner = max(1, 200_000 // len(chunks))
    ladder = rungs()
    chatparse_stays_on_its_fast_path(chunks)
    times: dict[str, list[float]] = {name: [] for name, _ in ladder}
    for _name, make in ladder:  # warm up
        time_rung(make, chunks, 1)
    for _ in range(args.repetitions):
        for name, make in ladder:
            times[name].append(time_rung(make, chunks, inner))
    bound = times["bound"]
    print(
        f"{len(chunks)} chunks of prose ({args.chars} chars, 1-6 each, no '<'), "
        f"{args.repetitions} repetitions, CPU µs per chunk min / median / max"
    )
    print(f"{'rung':<12} {'µs/chunk':>22} {'/ bound':>22}")
    for name, _ in ladder:
        spread = bench.Spread.of(times[name])
        ratio = bench.Spread.of(bench.paired_ratios(times[name], bound))
        assert spread is not None and ratio is not None  # every rung ran every repetition
        print(f"{name:<12} {spread.fmt('.3f'):>22} {ratio.fmt():>21}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
