"""Record the reference's one-shot outcomes on the differential corpus (tests/support.corpus()).

Run with the reference installed (`pip install -e '.[test]' && .ci/install-oracle`, transformers
5.25.0):

    python tests/record_reference.py

It writes tests/fixtures/reference_outcomes.json: per case, a digest of its input, and the
message and merged events, or the exception class and message, of the reference fed the whole
text at once. Values are encoded by `support.encode` (types kept: 1, 1.0, True, None, NaN).
`tests/test_reference_recording.py` fails when the file no longer equals what the installed
reference gives, or when a case changed since it was recorded.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import support  # noqa: E402


def record_case(template: dict, prefix: str | None, text: str, tools: list | None) -> dict:
    """The reference's one-shot outcome of one case, as a recording entry."""
    entry: dict = {"input": support.case_digest(template, prefix, text, tools)}
    try:
        parser = support.ReferenceParser(template, prefix=prefix, tools=tools)
        events = list(parser.initial_events)
        events.extend(parser.feed(text))
        message, final = parser.finalize()
        events.extend(final)
    except Exception as error:  # the class (and message) is what is recorded
        entry.update(outcome="error", error=type(error).__name__, message=str(error))
        return entry
    entry.update(
        outcome="ok",
        message=support.encode(message),
        events=support.encode(support.merge_chunks(events)),
    )
    return entry


def recording() -> dict:
    import transformers

    cases = {}
    for key, (template, prefix, text, tools) in support.corpus().items():
        cases[key] = record_case(template, prefix, text, tools)
    return {
        "transformers": transformers.__version__,
        "recorded_by": "tests/record_reference.py",
        "cases": cases,
    }


def dumps(data: dict) -> str:
    """The recording as JSON, one case a line (so an edit to a case is a one-line diff)."""

    def one(value) -> str:
        return json.dumps(value, ensure_ascii=True, allow_nan=False)

    head = {key: value for key, value in data.items() if key != "cases"}
    lines = [f"  {one(key)}: {one(value)}," for key, value in head.items()]
    cases = [f"    {one(key)}: {one(entry)}" for key, entry in data["cases"].items()]
    return "{\n" + "\n".join(lines) + '\n  "cases": {\n' + ",\n".join(cases) + "\n  }\n}\n"


def main() -> int:
    if not support.HAVE_REFERENCE:
        print("the reference is not importable: run .ci/install-oracle", file=sys.stderr)
        return 1
    data = recording()
    text = dumps(data)
    support.RECORDING.write_text(text, encoding="utf-8")
    print(f"{support.RECORDING}: {len(data['cases'])} cases, transformers {data['transformers']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
