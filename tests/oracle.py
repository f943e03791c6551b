"""Run chatparse and the reference on the same input and put the outcomes in one comparable form.

An outcome is ("ok", message, merged_events) or ("error", exception class name). Events are merged
the way the contract compares them: consecutive `region_chunk`s of one field become one, and the
initial, fed and final events form one stream.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Iterable

import chatparse

try:
    from transformers.utils.chat_parsing import ResponseParser as ReferenceParser

    HAVE_REFERENCE = True
except ImportError:  # the oracle is a test extra; recorded expectations still run without it
    ReferenceParser = None
    HAVE_REFERENCE = False


def merge_chunks(events: Iterable[dict]) -> list[dict]:
    merged: list[dict] = []
    for event in events:
        if (
            event["type"] == "region_chunk"
            and merged
            and merged[-1]["type"] == "region_chunk"
            and merged[-1]["field"] == event["field"]
        ):
            previous = merged[-1]
            merged[-1] = {**previous, "text": previous["text"] + event["text"]}
            if previous["dirty"] != event["dirty"]:
                raise AssertionError(f"dirty flag changed within one field: {previous} then {event}")
        else:
            merged.append(dict(event))
    return merged


def run_parser(make: Callable[[], Any], chunks: list[str]) -> tuple:
    """Drive a parser object through `chunks`; return its outcome."""
    try:
        parser = make()
        events = list(parser.initial_events)
        for chunk in chunks:
            events.extend(parser.feed(chunk))
        message, final = parser.finalize()
        events.extend(final)
    except Exception as error:  # the class is the comparable part
        return ("error", type(error).__name__)
    return ("ok", message, merge_chunks(events))


def reference_one_shot(template: dict, text: str, prefix: str | None, tools=None) -> tuple:
    return run_parser(lambda: ReferenceParser(template, prefix=prefix, tools=tools), [text])


def chatparse_outcome(template: dict, chunks: list[str], prefix: str | None, tools=None) -> tuple:
    return run_parser(lambda: chatparse.ResponseParser(template, prefix=prefix, tools=tools), chunks)


def chatparse_bulk_outcome(template: dict, text: str, prefix: str | None, tools=None) -> tuple:
    """`chatparse.parse_response` (the whole-text path) as ("ok", message) or ("error", class)."""
    try:
        return ("ok", chatparse.parse_response(text, template, prefix=prefix, tools=tools))
    except Exception as error:
        return ("error", type(error).__name__)


def without_events(outcome: tuple) -> tuple:
    """The part of an outcome that `parse_response` returns: the message or the error class."""
    return outcome[:2]


def chunkings(text: str, seed: int = 0, random_splits: int = 3) -> list[list[str]]:
    """Whole, one character at a time, and seeded random splits (including empty chunks)."""
    result = [[text], list(text)]
    rng = random.Random(seed)
    for _ in range(random_splits):
        cuts = sorted(rng.randint(0, len(text)) for _ in range(rng.randint(1, max(1, len(text) // 2))))
        pieces, last = [], 0
        for cut in cuts:
            pieces.append(text[last:cut])
            last = cut
        pieces.append(text[last:])
        result.append(pieces)
    return result


def same_outcome(a: tuple, b: tuple) -> bool:
    """Equal outcomes, comparing values *and* types (1 != 1.0 != True here)."""
    return _typed(a) == _typed(b)


def _typed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, *(_typed(v) for v in value)]
    return (type(value).__name__, value if value == value else "nan")
