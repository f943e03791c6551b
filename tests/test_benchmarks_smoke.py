"""Smoke test for benchmarks/: workload generators, chunkers and the floor parser, on tiny sizes.

Times nothing. Checks the invariants the benchmark's figures rest on: samples are deterministic
and near their target size, prose looks like text, chunks join back to the text, the "server"
chunking never splits a special token while the "split" chunking always does, the reference
parses every sample to the message the generator assembled, and the hand-written floor gives
the reference's events and message exactly.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import regex
from hypothesis import example, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import bench  # noqa: E402
import handwritten  # noqa: E402
import workloads  # noqa: E402

FAMILIES = workloads.FAMILIES
TINY = (300, 1000, 3000)


def _reference():
    return pytest.importorskip("transformers.utils.chat_parsing")


def _steps(make, prefix, chunks):
    """Events per call (initial, each feed, finalize) and the message; an exception ends the run
    and is recorded by class, so two parsers can be compared on failing inputs too."""
    steps = []
    try:
        parser = make(prefix)
        steps.append(parser.initial_events)
        for chunk in chunks:
            steps.append(parser.feed(chunk))
        message, final = parser.finalize()
        steps.append(final)
        return steps, message
    except (ValueError, KeyError, TypeError) as e:
        return steps, type(e)


@pytest.mark.parametrize("family", FAMILIES)
def test_samples_are_deterministic_per_seed(family):
    a, b = workloads.make_sample(family, 1000), workloads.make_sample(family, 1000)
    assert a == b
    assert workloads.make_sample(family, 1000, seed=1).text != a.text


def test_samples_do_not_depend_on_pythonhashseed():
    code = (
        "import hashlib, sys; sys.path.insert(0, sys.argv[1]); import workloads as w; "
        "print(hashlib.sha256(''.join(w.make_sample(f, 3000).text for f in w.FAMILIES).encode()).hexdigest())"
    )
    bench_dir = str(Path(workloads.__file__).parent)
    digests = {
        subprocess.run(
            [sys.executable, "-c", code, bench_dir],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(digests) == 1


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("target, tolerance", [(1000, 0.25), (10_000, 0.05), (100_000, 0.02)])
def test_sample_size_is_near_target(family, target, tolerance):
    sample = workloads.make_sample(family, target)
    assert abs(len(sample.text) - target) <= target * tolerance, len(sample.text)
    assert len(sample.expected["tool_calls"]) == workloads.tool_call_count(target) >= 2


@pytest.mark.parametrize("family", FAMILIES)
def test_prose_looks_like_text(family):
    sample = workloads.make_sample(family, 10_000)
    prose = sample.expected["reasoning_content"] + "\n" + sample.expected["content"]
    for needle in (". ", ", ", "\n\n", "<", "{", "```"):
        assert needle in prose, needle
    assert len(set(prose)) > 40
    most_common = max(prose.count(c) for c in set(prose))
    assert most_common < 0.25 * len(prose)  # spaces are the most common, as in real text
    assert len(prose.split()) > 800


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("target", TINY)
def test_server_chunks_join_back_and_keep_special_tokens_whole(family, target):
    sample = workloads.make_sample(family, target)
    chunks = workloads.server_chunks(sample)
    assert "".join(chunks) == sample.text
    specials = set(workloads.WRITERS[family].special_tokens)
    assert all(c in specials or 1 <= len(c) <= 6 for c in chunks)
    boundaries, pos = set(), 0
    for chunk in chunks:
        pos += len(chunk)
        boundaries.add(pos)
    spans = workloads.special_token_spans(sample)
    assert len(spans) >= 4
    for start, end in spans:
        assert sample.text[start:end] in specials
        assert not any(start < b < end for b in boundaries), sample.text[start:end]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("target", TINY)
def test_split_chunks_join_back_and_cut_every_special_token(family, target):
    sample = workloads.make_sample(family, target)
    chunks = workloads.split_chunks(sample)
    assert "".join(chunks) == sample.text
    assert all(1 <= len(c) <= 6 for c in chunks)
    boundaries, pos = set(), 0
    for chunk in chunks:
        pos += len(chunk)
        boundaries.add(pos)
    for start, end in workloads.special_token_spans(sample):
        if end - start >= 2:
            assert any(start < b < end for b in boundaries), sample.text[start:end]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("target", TINY)
def test_reference_parses_each_sample_to_the_generated_message(family, target):
    """Bulk and streamed under both chunkings, values and types (bench.first_difference)."""
    ref = _reference()
    template, _ = workloads.load_template(family)
    sample = workloads.make_sample(family, target)
    bulk = ref.parse_response(sample.text, template, prefix=sample.prefix, tools=sample.tools)
    assert bench.first_difference(bulk, sample.expected) is None
    for chunking in workloads.CHUNKINGS.values():
        make = lambda prefix: ref.ResponseParser(
            template, prefix=prefix, tools=sample.tools
        )  # noqa: E731
        _, message = _steps(make, sample.prefix, chunking(sample))
        assert bench.first_difference(message, sample.expected) is None


@pytest.mark.parametrize("target", TINY + (10_000,))
@pytest.mark.parametrize("chunking", sorted(workloads.CHUNKINGS))
@pytest.mark.parametrize("seed", [0, 1])
def test_floor_gives_the_reference_events_on_smollm3_samples(target, chunking, seed):
    ref = _reference()
    template, _ = workloads.load_template("smollm3")
    sample = workloads.make_sample("smollm3", target, seed)
    chunks = workloads.CHUNKINGS[chunking](sample, seed)
    expected = _steps(
        lambda p: ref.ResponseParser(template, prefix=p, tools=sample.tools), sample.prefix, chunks
    )
    got = _steps(lambda p: handwritten.HandwrittenParser(prefix=p, tools=sample.tools), sample.prefix, chunks)
    assert got == expected
    assert got[1] == sample.expected


_FRAGMENTS = [
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<|im_end|>",
    "<|im_start|>assistant\n",
    '{"name": "f", "arguments": {"a": [1, "<x>"]}}',
    '{"name": "g"}',
    "[1]",
    "{bad",
    " ",
    "\n",
    "\t",
    "\u3000",
    "\x1c",
    "<",
    "<t",
    "<th",
    "</",
    "</tool",
    "<|im",
    "x",
    "hi there.",
]


@settings(max_examples=300, derandomize=True, deadline=None)
@given(
    prefix=st.sampled_from(
        ["", "sys<|im_start|>assistant\n", "<|im_start|>assistant\n<think>\n", "no anchor <t"]
    ),
    parts=st.lists(st.sampled_from(_FRAGMENTS), max_size=14),
    cuts=st.lists(st.integers(1, 7), min_size=1, max_size=8),
)
@example(
    prefix="",
    parts=["a", " ", "\n", "<tool_call>", '{"name": "f", "arguments": {}}', "</tool_call>"],
    cuts=[1],
)
@example(prefix="", parts=["x", "\x1c", "<|im_end|>", "\n\n"], cuts=[2])
def test_floor_gives_the_reference_events_on_adversarial_text(prefix, parts, cuts):
    """Partial delimiters at chunk edges, whitespace runs before \\s* delimiters (\\x1c is not
    \\s for `regex`), bad JSON, text after the end marker, trailing whitespace at EOS."""
    ref = _reference()
    text = "".join(parts)
    chunks, i, k = [], 0, 0
    while i < len(text):
        chunks.append(text[i : i + cuts[k % len(cuts)]])
        i += cuts[k % len(cuts)]
        k += 1
    template = handwritten.TEMPLATE
    expected = _steps(lambda p: ref.ResponseParser(template, prefix=p), prefix, chunks)
    assert _steps(lambda p: handwritten.HandwrittenParser(prefix=p), prefix, chunks) == expected


def test_floor_template_is_the_smollm3_template_in_use():
    template, source = workloads.load_template("smollm3")
    assert (
        handwritten.TEMPLATE == template
    ), f"handwritten.py implements a different template than {source}"


def test_floor_whitespace_is_exactly_regex_backslash_s():
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    assert set(handwritten.WHITESPACE) == set(regex.findall(r"\s", every))


def test_first_difference_compares_types_not_just_values():
    assert bench.first_difference({"a": [1, {"b": "x"}]}, {"a": [1, {"b": "x"}]}) is None
    assert "int" in bench.first_difference({"a": 1}, {"a": 1.0})
    assert "bool" in bench.first_difference({"a": [True]}, {"a": [1]})
    assert "keys" in bench.first_difference({"a": 1}, {"b": 1})
    assert "differ at 2" in bench.first_difference("abcd", "abXd")
