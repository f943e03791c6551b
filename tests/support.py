"""The helpers the tests share: the built-ins, the reference as oracle, comparable outcomes, chunkings.

A parser outcome is ("ok", message, merged_events) or ("error", exception class name). Events are
merged the way the contract compares them: consecutive `region_chunk`s of one field become one,
and the initial, fed and final events form one stream. A function outcome (`outcome`) is
("ok", typed value) or ("raise", exception class name, first line of its message).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import importlib
import json
import random
import re
from pathlib import Path
from typing import Any, Callable, Iterable

import pytest

import chatparse

try:
    from transformers.utils.chat_parsing import ResponseParser as ReferenceParser

    HAVE_REFERENCE = True
except ImportError:  # the oracle is a test extra; recorded expectations still run without it
    ReferenceParser = None
    HAVE_REFERENCE = False

REPO = Path(__file__).resolve().parents[1]
# The reference release the tests compare with, as .ci/install-oracle installs it.
(ORACLE_VERSION,) = re.findall(
    r"^ORACLE=(\S+)", (REPO / ".ci" / "install-oracle").read_text(encoding="utf-8"), re.MULTILINE
)

needs_reference = pytest.mark.skipif(
    not HAVE_REFERENCE,
    reason=f"needs the reference, transformers {ORACLE_VERSION} (.ci/install-oracle)",
)

TEMPLATE_DIR = REPO / "templates"
FIXTURE_DIR = REPO / "tests" / "fixtures"
FAMILIES = sorted(path.stem for path in TEMPLATE_DIR.glob("*.json"))


# --- the built-ins and modules compiled in memory ---------------------------------------------


@functools.lru_cache(maxsize=None)
def _template_text(family: str) -> str:
    return (TEMPLATE_DIR / f"{family}.json").read_text(encoding="utf-8")


def builtin_template(family: str) -> dict:
    """A fresh copy of templates/<family>.json, so no test can leak a mutation into another."""
    try:
        return json.loads(_template_text(family))
    except (OSError, ValueError) as error:
        raise AssertionError(f"templates/{family}.json is unreadable: {error}") from error


def generated_module(family: str):
    """The committed module generated/<family>.py."""
    return importlib.import_module(f"chatparse.generated.{family}")


def exec_module(source: str, filename: str = "<test generated>") -> dict:
    """Run a generated module's source in a fresh namespace (no import system involved)."""
    namespace: dict = {}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


def nested(depth: int, leaf: object) -> object:
    """`leaf` inside `depth` containers, alternating list and dict."""
    value = leaf
    for level in range(depth):
        value = {"k": value} if level % 2 else [value]
    return value


# --- outcomes ----------------------------------------------------------------------------------


def typed(value: Any) -> list:
    """`value` as a flat list of tokens that tells every scalar's exact type (1, 1.0 and True
    differ), keeps dict key order and compares floats by repr (NaN == NaN): ("dict", n) or
    ("list", n) or ("tuple", n) then the n keys and values or items, each scalar as
    (type name, value). Flat and built without recursion, so values thousands of levels deep
    compare (nested tuples would hit the recursion limit in `==`)."""
    tokens: list = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            tokens.append(("dict", len(item)))
            for key, child in reversed(list(item.items())):
                stack.append(child)
                stack.append(key)
        elif isinstance(item, (list, tuple)):
            tokens.append((type(item).__name__, len(item)))
            stack.extend(reversed(item))
        elif isinstance(item, float):
            tokens.append(("float", repr(item)))
        else:
            tokens.append((type(item).__name__, item))
    return tokens


def outcome(fn: Callable, *args, message_chars: int | None = None, **kwargs) -> tuple:
    """("ok", typed result) or ("raise", exception class name, the first line of its message, or
    its first `message_chars` chars: 0 compares the class alone)."""
    try:
        return ("ok", typed(fn(*args, **kwargs)))
    except Exception as error:  # noqa: BLE001 - the class and message are what tests compare
        return ("raise", type(error).__name__, str(error).split("\n")[0][:message_chars])


def assert_same(expected: Any, actual: Any, where: str = "message") -> None:
    """Equality that also compares types at every level, naming the first place that differs."""
    want_type, got_type = type(expected).__name__, type(actual).__name__
    assert type(actual) is type(
        expected
    ), f"{where}: expected {want_type} {expected!r}, got {got_type} {actual!r}"
    if isinstance(expected, dict):
        assert set(actual) == set(expected), (
            f"{where}: keys differ; missing {sorted(set(expected) - set(actual))}, "
            f"unexpected {sorted(set(actual) - set(expected))}"
        )
        for key in expected:
            assert_same(expected[key], actual[key], f"{where}[{key!r}]")
    elif isinstance(expected, list):
        assert len(actual) == len(
            expected
        ), f"{where}: expected {len(expected)} items, got {len(actual)}: {actual!r}"
        for index, (want, got) in enumerate(zip(expected, actual)):
            assert_same(want, got, f"{where}[{index}]")
    else:
        assert actual == expected, f"{where}: expected {expected!r}, got {actual!r}"


# --- parsers, the reference as oracle, chunkings -----------------------------------------------


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
                raise AssertionError(
                    f"dirty flag changed within one field: {previous} then {event}"
                )
        else:
            merged.append(dict(event))
    return merged


def _drive(make: Callable[[], Any], chunks: list[str]) -> tuple[dict, list]:
    """Drive a parser object through `chunks`: its message and its merged events."""
    parser = make()
    events = list(parser.initial_events)
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    message, final = parser.finalize()
    events.extend(final)
    return message, merge_chunks(events)


def run_parser(make: Callable[[], Any], chunks: list[str]) -> tuple:
    """Drive a parser object through `chunks`; return its outcome."""
    try:
        message, events = _drive(make, chunks)
    except Exception as error:  # the class is the comparable part
        return ("error", type(error).__name__)
    return ("ok", message, events)


def run_parser_with_message(make: Callable[[], Any], chunks: list[str]) -> tuple:
    """`run_parser`, with an error's message too: ("error", class name, message), and the message
    and events as `typed` tokens (so 1, 1.0 and True differ)."""
    try:
        message, events = _drive(make, chunks)
    except Exception as error:  # the class and the message are what is compared
        return ("error", type(error).__name__, str(error))
    return ("ok", typed(message), typed(events))


def reference_one_shot(template: dict, text: str, prefix: str | None, tools=None) -> tuple:
    return run_parser(lambda: ReferenceParser(template, prefix=prefix, tools=tools), [text])


def chatparse_outcome(template: dict, chunks: list[str], prefix: str | None, tools=None) -> tuple:
    return run_parser(
        lambda: chatparse.ResponseParser(template, prefix=prefix, tools=tools), chunks
    )


def chatparse_bulk_outcome(template: dict, text: str, prefix: str | None, tools=None) -> tuple:
    """`chatparse.parse_response` (the whole-text path) as ("ok", message) or ("error", class)."""
    try:
        return ("ok", chatparse.parse_response(text, template, prefix=prefix, tools=tools))
    except Exception as error:
        return ("error", type(error).__name__)


def without_events(outcome: tuple) -> tuple:
    """The part of an outcome that `parse_response` returns: the message or the error class."""
    return outcome[:2]


def short_chunks(text: str, seed: int) -> list[str]:
    """`text` cut into seeded random chunks of 1 to 6 chars."""
    rng = random.Random(seed)
    pieces, i = [], 0
    while i < len(text):
        step = rng.randint(1, 6)
        pieces.append(text[i : i + step])
        i += step
    return pieces


def chunkings(text: str, seed: int = 0, random_splits: int = 3) -> list[list[str]]:
    """Whole, one character at a time, and seeded random splits (including empty chunks)."""
    result = [[text], list(text)]
    rng = random.Random(seed)
    for _ in range(random_splits):
        cuts = sorted(
            rng.randint(0, len(text)) for _ in range(rng.randint(1, max(1, len(text) // 2)))
        )
        pieces, last = [], 0
        for cut in cuts:
            pieces.append(text[last:cut])
            last = cut
        pieces.append(text[last:])
        result.append(pieces)
    return result


def same_outcome(a: tuple, b: tuple) -> bool:
    """Equal outcomes, comparing values *and* types (1 != 1.0 != True here) and dict key order."""
    return typed(a) == typed(b)


# --- the reference's recorded outcomes (tests/fixtures/reference_outcomes.json) -------------------
# Written by tests/record_reference.py with the reference installed, so that the differential
# tests still assert where transformers is not. JSON keeps str, int, bool and None apart and
# reads finite floats back exactly; the rest is tagged: {"$float": "nan"}, {"$tuple": [...]},
# {"$dict": [[key, value], ...]} for a dict with a key that is not a str or starts with "$".

RECORDING = FIXTURE_DIR / "reference_outcomes.json"
RECORD_COMMAND = (
    f"python tests/record_reference.py (with transformers {ORACLE_VERSION}: .ci/install-oracle)"
)


def encode(value: Any) -> Any:
    """`value` as JSON data that `decode` turns back into an equal value of the same types."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value - value == 0 else {"$float": repr(value)}  # not nan or inf
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, tuple):
        return {"$tuple": [encode(item) for item in value]}
    if isinstance(value, dict):
        if all(isinstance(key, str) and not key.startswith("$") for key in value):
            return {key: encode(item) for key, item in value.items()}
        return {"$dict": [[encode(key), encode(item)] for key, item in value.items()]}
    raise TypeError(f"no JSON encoding for {type(value).__name__}: {value!r}")


def decode(data: Any) -> Any:
    if isinstance(data, list):
        return [decode(item) for item in data]
    if isinstance(data, dict):
        if len(data) == 1:
            ((tag, inner),) = data.items()
            if tag == "$float":
                return float(inner)
            if tag == "$tuple":
                return tuple(decode(item) for item in inner)
            if tag == "$dict":
                return {decode(key): decode(item) for key, item in inner}
        return {key: decode(item) for key, item in data.items()}
    return data


def corpus() -> dict[str, tuple[dict, str | None, str, list | None]]:
    """The differential corpus, by id: tests/cases_stream.py's cases ("stream/<id>") and the
    catalogue fixtures ("catalogue/<family>/<name>"), each (template, prefix, text, tools)."""
    from cases_stream import CASES

    cases: dict[str, tuple[dict, str | None, str, list | None]] = {}

    def add(key: str, template: dict, prefix: str | None, text: str, tools: list | None) -> None:
        assert key not in cases, f"two cases are named {key}"
        cases[key] = (template, prefix, text, tools)

    for case_id, template, prefix, text, tools in CASES:
        add(f"stream/{case_id}", template, prefix, text, tools)
    for path in sorted((FIXTURE_DIR / "catalogue").glob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            add(
                f"catalogue/{path.stem}/{case['name']}",
                builtin_template(path.stem),
                case["prefix"],
                case["text"],
                case.get("tools"),
            )
    return cases


def case_digest(template: dict, prefix: str | None, text: str, tools: list | None) -> str:
    """A digest of a case's input, so that a recording of an edited case reads as stale."""
    data = json.dumps(encode([template, prefix, text, tools]), ensure_ascii=True)
    return hashlib.sha256(data.encode("ascii")).hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def _recording() -> dict:
    return json.loads(RECORDING.read_text(encoding="utf-8"))


def recorded_entry(key: str) -> dict:
    """The recorded entry of corpus case `key`, checked against the case's current input."""
    entries = _recording()["cases"]
    assert key in entries, f"{key} is not recorded; rerun {RECORD_COMMAND}"
    entry = entries[key]
    assert entry["input"] == case_digest(
        *corpus_case(key)
    ), f"the recording of {key} is stale (its input changed); rerun {RECORD_COMMAND}"
    return entry


@functools.lru_cache(maxsize=1)
def _corpus() -> dict:
    return corpus()


def corpus_case(key: str) -> tuple[dict, str | None, str, list | None]:
    """A fresh copy of corpus case `key` (template, prefix, text, tools)."""
    template, prefix, text, tools = _corpus()[key]
    return copy.deepcopy(template), prefix, text, copy.deepcopy(tools)


def recorded_outcome(key: str) -> tuple:
    """The reference's recorded one-shot outcome of corpus case `key`, in `run_parser`'s form."""
    entry = recorded_entry(key)
    if entry["outcome"] == "error":
        return ("error", entry["error"])
    return ("ok", decode(entry["message"]), decode(entry["events"]))


def expected_outcomes(key: str) -> list[tuple[str, tuple]]:
    """What chatparse must equal on corpus case `key`: the recording, and the live reference's
    one-shot outcome when it is installed, each labelled."""
    expected = [("recorded", recorded_outcome(key))]
    if HAVE_REFERENCE:
        template, prefix, text, tools = corpus_case(key)
        expected.append(("reference", reference_one_shot(template, text, prefix, tools)))
    return expected


def reader_growth(make_reader: Callable[[], Any], texts_at: Callable[[int], list]) -> tuple:
    """`test_linear_time.growth` of an incremental reader (the serving layer's JSON readers): for
    size n, each text of `texts_at(n)` (a list of pieces) is fed piece by piece to a reader
    `make_reader()` made for it, which is then finished."""
    from test_linear_time import growth

    def runner(n: int) -> Callable[[], None]:
        texts = texts_at(n)

        def run() -> None:
            for pieces in texts:
                reader = make_reader()
                for piece in pieces:
                    reader.feed(piece)
                reader.finish()

        return run

    return growth(runner)


class SpellingSink:
    """A sink for serving's JsonReader that has the reader spell the whole text (its root value)
    into `pieces`, as json.dumps writes it, and records whether the reader gave up (`failed`).
    `reader` is the JsonReader it asks (set it after making the reader)."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.failed = False
        self.reader: Any = None

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    def begin(self, kind: str) -> None:
        self.reader.spell(self.pieces)

    def scalar(self, value: Any) -> None:  # a root number or literal
        self.pieces.append(json.dumps(value))

    def spelled_key(self, name: str, separator: str) -> None:
        from json.encoder import encode_basestring_ascii

        self.pieces.append(separator + encode_basestring_ascii(name) + ": ")

    def member_end(self) -> None:
        pass

    def spelled_end(self) -> None:
        pass

    # Tokens the reader reports when it is not spelling: not here, where it spells the root.
    def key(self, name: str) -> None:
        raise AssertionError("a key reported while the root is spelled")

    def piece(self, chars: str) -> None:
        raise AssertionError("a piece reported while the root is spelled")

    def end(self, kind: str) -> None:
        raise AssertionError("an end reported while the root is spelled")

    def fail(self) -> None:
        self.failed = True
