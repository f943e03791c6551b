"""The incremental json dialect reader (serving/json_dialect.py) against the reference's whole-body
rewrite (transformers 5.25.0 `content_parsers._json`).

For dialect bodies built at random (custom-quoted strings holding quotes, braces, commas, colons and
pieces of the quote itself; bare, quoted and custom-quoted keys; whitespace of both kinds; then
mutated) and every chunking tried: wherever the reference parses the body, the reader's spelled
tokens are json.dumps of the reference's value (a prefix of it where the reader gave up, which it
may only do for a custom quote inside a standard string); nothing raises, whatever the body.
"""

from __future__ import annotations

import json
import random
from unittest import mock

import pytest

from support import SpellingSink, reader_growth

from chatparse.serving.json_calls import plan_for
from chatparse.serving.json_dialect import DialectReader, dialect_for

pytest.importorskip(
    "transformers", reason="needs the reference, transformers 5.25.0 (.ci/install-oracle)"
)
from transformers.utils.chat_parsing import content_parsers as ref_cp

DIALECTS = {
    "gemma4": {"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']]},
    "functiongemma": {"unquoted_keys": True, "string_delims": [["<escape>", "<escape>"]]},
    "keys only": {"unquoted_keys": True},
    "quotes only": {"string_delims": [['<|"|>', '<|"|>']]},
    "two-part quotes": {"unquoted_keys": True, "string_delims": [["<<", ">>"]]},
}


def reference_value(text: str, args: dict):
    try:
        return True, ref_cp.CONTENT_PARSERS["json"](text, args)
    except ValueError:
        return False, None


def read(text: str, args: dict, cuts: list[int]) -> SpellingSink:
    sink = SpellingSink()
    quotes, keys = dialect_for(args)
    reader = DialectReader(sink, quotes, keys)
    sink.reader = reader.json
    previous = 0
    for cut in [*cuts, len(text)]:
        reader.feed(text[previous:cut])
        previous = cut
    reader.finish()
    return sink


def _quote(args: dict) -> tuple[str, str] | None:
    delims = args.get("string_delims")
    return tuple(delims[0]) if delims else None


def _random_body(rng: random.Random, args: dict) -> str:
    quote = _quote(args)
    keys = args.get("unquoted_keys", False)
    noise = ["{", "}", "[", "]", ",", ":", '"', "\\", " ", "a", "1", "\n", "é"]
    if quote:
        noise += [quote[0], quote[1], quote[0][:2], quote[1][1:], "<"]

    def space() -> str:
        return rng.choice(
            ["", "", " ", "\n  ", "\t", "\x0b", "\u00a0"] if rng.random() < 0.1 else ["", " "]
        )

    def string_chars() -> str:
        pieces = ["x", "y z", ",", ":", "{", "}", '"', "\\", "é", "\u2028", "\n", "a: b", ", c:"]
        if quote:
            pieces += [quote[0][:2], quote[1][1:], "<"]
        return "".join(rng.choice(pieces) for _ in range(rng.randrange(4)))

    def string() -> str:
        if quote and rng.random() < 0.6:
            return quote[0] + string_chars().replace(quote[1], "") + quote[1]
        return json.dumps(string_chars())

    def key() -> str:
        roll = rng.random()
        if keys and roll < 0.5:
            return rng.choice(["a", "city", "_k2", "9", "ünï", "x_y"])
        return string()

    def value(depth: int) -> str:
        roll = rng.random() * (0.3 if depth == 0 else 1)  # the root mostly an object
        if depth < 3 and roll < 0.25:
            members = [
                space() + key() + space() + ":" + space() + value(depth + 1)
                for _ in range(rng.randrange(4))
            ]
            return "{" + ",".join(members) + space() + "}"
        if depth < 3 and roll < 0.4:
            return "[" + ",".join(space() + value(depth + 1) for _ in range(rng.randrange(4))) + "]"
        if roll < 0.8:
            return string()
        return rng.choice(["1", "-2.5e3", "true", "false", "null", "0", "12"])

    body = space() + value(0) + space()
    for _ in range(rng.choice([0, 0, 0, 1, 2])):  # a mutation: a piece inserted or one cut out
        at = rng.randrange(len(body) + 1)
        if rng.random() < 0.5:
            body = body[:at] + rng.choice(noise) + body[at:]
        else:
            body = body[:at] + body[at + rng.randrange(1, 4) :]
    return body


def _cuttings(rng: random.Random, text: str) -> list[list[int]]:
    every = list(range(1, len(text)))
    some = sorted(rng.sample(every, min(len(every), rng.randrange(1, 6)))) if every else []
    return [[], every, some]


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_every_chunking_spells_the_references_value(dialect):
    args = DIALECTS[dialect]
    quote = _quote(args)
    rng = random.Random(dialect)
    parsed = gave_up = 0
    for _ in range(1500):
        body = _random_body(rng, args)
        ok, expected = reference_value(body, args)
        for cuts in _cuttings(rng, body):
            got = read(body, args, cuts)
            if not ok:
                continue  # the region is malformed: what went out stays, nothing more is claimed
            parsed += 1
            target = json.dumps(expected)
            if got.failed:
                gave_up += 1
                assert quote and quote[0] in body, (body, cuts)
                assert json.loads(target) == expected
                if not _repeats_a_key(body, args):
                    assert target.startswith(got.text), (body, cuts, got.text, target)
                continue
            assert json.loads(got.text) == expected, (body, cuts, got.text)
            if not _repeats_a_key(body, args):
                assert got.text == target, (body, cuts, got.text, target)
    assert parsed > 1000  # the generator makes bodies the reference parses
    assert gave_up < parsed // 20  # giving up is the rare case


def _repeats_a_key(body: str, args: dict) -> bool:
    """Whether the reference's value hides a repeated key (the spelling then writes both): the
    reference run again with json.loads told to report each object's members."""
    repeats: list[bool] = []

    def loads(text, **_):
        def members(items):
            repeats.append(len(items) != len({key for key, _ in items}))
            return dict(items)

        return original(text, object_pairs_hook=members)

    original = json.loads
    with mock.patch.object(ref_cp.json, "loads", loads):
        reference_value(body, args)
    return any(repeats)


@pytest.mark.parametrize(
    ("body", "spelled", "gives_up"),
    [
        # A bare key split anywhere: quoted once its ":" comes.
        ('{city:<|"|>Paris<|"|>,days:2}', '{"city": "Paris", "days": 2}', False),
        # A custom quote that never closes is the rewrite's text as it is: not JSON.
        ('{a:<|"|>Paris}', '{"a": "Paris}', True),
        # Inside a standard string: a string only if a closing quote comes.
        ('{"a": "x<|"|>y"}', '{"a": "x', True),
        # A word after "," in an array is no key: it goes on as it is.
        ("[1, true]", "[1, true]", False),
        # Key-like text in a custom-quoted string is the string's.
        ('{a:<|"|>b: 1, c:<|"|>}', '{"a": "b: 1, c:"}', False),
        # A custom-quoted key.
        ('{<|"|>k k<|"|>: 1}', '{"k k": 1}', False),
    ],
)
def test_pieces_of_the_rewrite(body, spelled, gives_up):
    args = DIALECTS["gemma4"]
    for cuts in ([], list(range(1, len(body)))):
        got = read(body, args, cuts)
        assert got.failed == gives_up
        assert got.text == spelled, cuts


def test_dialects_the_reader_follows():
    assert dialect_for({"unquoted_keys": True}) == (None, True)
    assert dialect_for({"string_delims": [["<e>", "</e>"]]}) == (("<e>", "</e>"), False)
    assert dialect_for({}) is None
    # A quote that JSON text may hold where a value stands could be text the rewrite keeps.
    for open_quote in ('"', "'" * 0 + "t", "1", "{", " ", "x", "_"):
        assert dialect_for({"string_delims": [[open_quote, "|"]]}) is None
    assert dialect_for({"string_delims": [["<a>", "<b>"], ["<c>", "<d>"]]}) is None
    assert dialect_for({"unquoted_keys": True, "allow_non_json": True}) is None
    # plan_for: the built-in dialects stream
    spec = {
        "content": "json",
        "content_args": DIALECTS["gemma4"],
        "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
    }
    assert plan_for(spec).dialect == (('<|"|>', '<|"|>'), True)


def test_reader_is_linear_time():
    """Long custom-quoted strings, long bare words, many members and half quotes at every chunk's
    end, fed 3 characters at a time: CPU time at 8n stays within the bound of 8x time at n."""
    from test_linear_time import BOUND

    quotes, keys = dialect_for(DIALECTS["gemma4"])

    def texts(n):
        members = ",".join(f'k{i}:<|"|>v<|<|"|>' for i in range(n // 16))
        body = "{" + "w" * n + ':<|"|>' + "é<|" * n + '<|"|>,' + members + "}"
        unclosed = '{"a": "' + "<|" * n  # held halves inside a standard string
        return [[body[i : i + 3] for i in range(0, len(body), 3)], [unclosed]]

    def reader():
        sink = SpellingSink()
        dialect = DialectReader(sink, quotes, keys)
        sink.reader = dialect.json
        return dialect

    ratio, how = reader_growth(reader, texts)
    assert ratio < BOUND, how
