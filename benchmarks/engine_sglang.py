"""Per-delta CPU time inside SGLang: chatparse's detector against SGLang's own, same family.

Run in the SGLang venv that `.ci/engine-tests` builds (from outside the clone):

    cd /tmp && ~/.cache/chatparse-engines/sglang-*/bin/python /path/to/chatparse/benchmarks/engine_sglang.py

The outputs of benchmarks/engine_vllm.py (a sentence, then one call whose one string argument has
N characters), in 4-character chunks through each detector's `parse_streaming_increment`, then
`finish`, as SGLang's `FunctionCallParser` calls them. CPU time inside the detector's calls per
chunk, less an empty clock interval's (as engine_vllm.py); the two interleaved in one process;
medians with min and max. Both detectors' accumulated arguments are checked before anything is
timed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_vllm import TOOLS, clock_cost, output_for  # noqa: E402

ENGINE_NAMES = {"hermes": "hermes", "qwen3_coder": "qwen3_coder", "deepseek_v3": "deepseekv3"}


def stream_once(detector_class, tools, pieces, overhead: float = 0.0) -> tuple[float, str]:
    detector = detector_class()
    arguments: list[str] = []
    spent = 0.0
    for piece in pieces:
        started = time.thread_time()
        result = detector.parse_streaming_increment(piece, tools)
        spent += time.thread_time() - started - overhead
        arguments += [call.parameters for call in result.calls if call.parameters]
    started = time.thread_time()
    result = detector.finish(tools)
    spent += time.thread_time() - started - overhead
    arguments += [call.parameters for call in result.calls if call.parameters]
    return spent, "".join(arguments)


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--sizes", default="300,3000,30000")
    options.add_argument("--families", default=",".join(ENGINE_NAMES))
    options.add_argument("--reps", type=int, default=5)
    args = options.parse_args()

    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.plugins import load_plugins

    load_plugins()
    overhead = clock_cost()
    print(f"(an empty clock interval reads {overhead * 1e6:.2f} us, subtracted from each call's)\n")
    tools = [Tool(**tool) for tool in TOOLS]
    print("| family | argument chars | chunks | SGLang's detector (us/chunk) "
          "| chatparse (us/chunk) | speedup |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for family in args.families.split(","):
        detectors = {
            "engine": FunctionCallParser.ToolCallParserEnum[ENGINE_NAMES[family]],
            "chatparse": FunctionCallParser.ToolCallParserEnum[f"chatparse-{family}"],
        }
        for size in map(int, args.sizes.split(",")):
            text = output_for(family, size)
            pieces = [text[i : i + 4] for i in range(0, len(text), 4)]
            times: dict[str, list[float]] = {name: [] for name in detectors}
            results = {}
            for _ in range(args.reps):
                for name, detector_class in detectors.items():
                    seconds, arguments = stream_once(detector_class, tools, pieces, overhead)
                    times[name].append(seconds / len(pieces) * 1e6)
                    results[name] = arguments
            assert len(json.loads(results["chatparse"])["content"]) == size
            try:
                engine_ok = len(json.loads(results["engine"])["content"]) == size
            except ValueError:
                engine_ok = False

            def cell(values: list[float]) -> str:
                return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"

            ratio = statistics.median(times["engine"]) / statistics.median(times["chatparse"])
            note = "" if engine_ok else " (its arguments differ)"
            print(
                f"| {family} | {size:,} | {len(pieces)} | {cell(times['engine'])}{note} "
                f"| {cell(times['chatparse'])} | {ratio:.1f}x |"
            )


if __name__ == "__main__":
    main()
