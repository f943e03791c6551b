"""Prose in several scripts, streamed after every family's chat prompt: chatparse against the
reference and the API lower bound.

In:  each built-in family's sample prompt (`samples/<family>.json`, its `prefix`), then about
     2,000 characters of prose in one script (`SCRIPTS`: English, accented Latin, Chinese,
     Japanese, Russian), in server pieces of 1-6 characters (seeded). The prose holds no
     delimiter character, so it goes where the family's text after its prompt goes (the answer,
     a reasoning block, or the null sink where the template drops text outside its channels).
Out: one row per family and script: CPU nanoseconds per chunk for chatparse's generated module,
     the reference (its template pre-loaded) and the lower bound (benchmarks/lower_bound.py),
     min / median / max of paired repetitions, interleaved in one process; the speedup
     (reference / chatparse) and chatparse / lower bound; the field the prose went to. Then, per
     script, the families' medians over those that stream it.

Why: real outputs are not all English. A fast path that reads the last character of a chunk must
decide a non-ASCII one too (`\\s`'s non-ASCII members are the installed `regex`'s): a chunk of
Chinese text that it leaves to the general path costs some 3 us, the reference's own cost.

    python benchmarks/text_scripts.py [--families a,b] [--scripts a,b] [--reps N]
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import lower_bound  # noqa: E402
import workloads  # noqa: E402
from agent_turns import REPS, _sample, first_difference  # noqa: E402
from bench import Spread, paired_ratios  # noqa: E402

from chatparse.catalogue import families as builtin_families  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PROSE_CHARS = 2000

# One paragraph per script (no delimiter characters: no "<", "[", "{", "`" or "|"), repeated to
# PROSE_CHARS.
SCRIPTS = {
    "english": (
        "The weather service expects light rain this afternoon, so the outdoor meeting moves "
        "to the second floor. Bring the printed agenda and the notes from last week. "
    ),
    "accented": (
        "Le café de la gare ouvre à sept heures; à Zürich, São Paulo et Malmö, les équipes "
        "préfèrent déjà la réunion de l'après-midi. Grüße aus Köln, señor Muñoz. "
    ),
    "chinese": (
        "今天下午可能会有小雨，所以户外会议改到二楼举行。请带上打印好的议程和上周的笔记，"
        "我们会讨论预算、进度以及下一步的计划。"
    ),
    "japanese": (
        "今日の午後は小雨が降る見込みなので、屋外の打ち合わせは二階に移ります。"
        "印刷した議題と先週のメモを持ってきてください。"
    ),
    "russian": (
        "Сегодня днём ожидается небольшой дождь, поэтому встреча переносится на второй этаж. "
        "Возьмите распечатанную повестку и заметки с прошлой недели. "
    ),
}


def pieces_of(text: str, seed: str) -> list[str]:
    """`text` in server pieces of 1-6 characters (`workloads.text_pieces`)."""
    return workloads.text_pieces(text, random.Random(seed))


def prose(script: str) -> str:
    paragraph = SCRIPTS[script]
    return (paragraph * (PROSE_CHARS // len(paragraph) + 1))[:PROSE_CHARS]


def _streamer(make: Any, pieces: list[str]) -> Any:
    def run() -> Any:
        parser = make()
        for piece in pieces:
            parser.feed(piece)
        return parser.finalize()

    return run


def landed(message: dict, text: str) -> str:
    """The field of `message` that holds `text`, or "(dropped)": where the prose went."""
    for key, value in message.items():
        if isinstance(value, str) and text.strip() in value:
            return key
    return "(dropped)"


def measure(family: str, script: str, reps: int) -> dict[str, Any]:
    from transformers.utils.chat_parsing import ResponseParser
    from transformers.utils.chat_parsing.response_templates import load_response_template

    module = importlib.import_module(f"chatparse.generated.{family}")
    sample = json.loads((ROOT / "samples" / f"{family}.json").read_text(encoding="utf-8"))
    prefix, tools = sample["prefix"], sample.get("tools") or None
    pieces = pieces_of(prose(script), f"{family}/{script}")
    spec = load_response_template(module.TEMPLATE)  # pre-loaded, as a server caches it
    runs = {
        "chatparse": _streamer(lambda: module.ResponseParser(prefix, tools=tools), pieces),
        "reference": _streamer(lambda: ResponseParser(spec, prefix=prefix, tools=tools), pieces),
        "bound": _streamer(lambda: lower_bound.LowerBoundParser(prefix), pieces),
    }
    message = runs["chatparse"]()[0]
    difference = first_difference(message, runs["reference"]()[0])
    if difference is not None:
        raise AssertionError(f"{family}/{script}: chatparse's message differs: {difference}")
    times: dict[str, list[float]] = {name: [] for name in runs}
    for rep in range(reps):
        for name in runs if rep % 2 else reversed(list(runs)):
            times[name].append(_sample(runs[name]) * 1e9 / len(pieces))
    return {
        "goes to": landed(message, prose(script)),
        "chatparse ns/chunk": Spread.of(times["chatparse"]),
        "reference ns/chunk": Spread.of(times["reference"]),
        "bound ns/chunk": Spread.of(times["bound"]),
        "speedup": Spread.of(paired_ratios(times["reference"], times["chatparse"])),
        "chatparse/bound": Spread.of(paired_ratios(times["chatparse"], times["bound"])),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", default=",".join(builtin_families()))
    parser.add_argument("--scripts", default=",".join(SCRIPTS))
    parser.add_argument("--reps", type=int, default=REPS)
    args = parser.parse_args(argv)
    families, scripts = args.families.split(","), args.scripts.split(",")
    columns = ("chatparse ns/chunk", "reference ns/chunk", "bound ns/chunk", "speedup")
    print("| family | script | goes to | " + " | ".join(columns) + " | chatparse/bound |")
    print("|---" * (len(columns) + 4) + "|")
    medians: dict[str, dict[str, list[float]]] = {s: {"speedup": [], "bound": []} for s in scripts}
    for family in families:
        for script in scripts:
            row = measure(family, script, args.reps)
            cells = [row[c].fmt(".0f" if "ns" in c else ".2f") for c in columns]
            ratio = row["chatparse/bound"]
            line = f"| {family} | {script} | {row['goes to']} | " + " | ".join(cells)
            print(line + f" | {ratio.fmt()} |", flush=True)
            if row["goes to"] != "(dropped)":  # the medians are of streamed text
                medians[script]["speedup"].append(row["speedup"].median)
                medians[script]["bound"].append(ratio.median)
    print()
    print("Streamed text only (not the families that drop it), min/median/max of their medians:")
    print("| script | speedup | chatparse / lower bound |")
    print("|---|---|---|")
    for script in scripts:
        speed, bound = Spread.of(medians[script]["speedup"]), Spread.of(medians[script]["bound"])
        print(f"| {script} | {speed.fmt(suffix='x')} | {bound.fmt(suffix='x')} |")  # type: ignore[union-attr]
    return 0


if __name__ == "__main__":
    sys.exit(main())
