"""Smoke test for benchmarks/: workload generators, chunkers, the API lower bound, the
hand-written parser, the every-built-in section (run once on tiny prose), and the report and
checklist logic, on tiny sizes and synthetic numbers.

Times nothing. Checks the invariants the benchmark's figures rest on: samples are deterministic
and near their target size, prose looks like text, chunks join back to the text, the "server"
chunking never splits a special token while the "split" chunking always does, the reference
parses every sample to the message the generator assembled, the lower bound gives one event
per chunk with the keys of the reference's region_chunk events, the hand-written parser gives
the reference's events and message exactly, and the tables and the PASS/FAIL checklist say what
the numbers they are given say.
"""

from __future__ import annotations

import json
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
import lower_bound  # noqa: E402
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
def test_handwritten_gives_the_reference_events_on_smollm3_samples(target, chunking, seed):
    ref = _reference()
    template, _ = workloads.load_template("smollm3")
    sample = workloads.make_sample("smollm3", target, seed)
    chunks = workloads.CHUNKINGS[chunking](sample, seed)
    expected = _steps(
        lambda p: ref.ResponseParser(template, prefix=p, tools=sample.tools), sample.prefix, chunks
    )
    got = _steps(
        lambda p: handwritten.HandwrittenParser(prefix=p, tools=sample.tools), sample.prefix, chunks
    )
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
def test_handwritten_gives_the_reference_events_on_adversarial_text(prefix, parts, cuts):
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


def test_handwritten_template_is_the_smollm3_template_in_use():
    template, source = workloads.load_template("smollm3")
    assert (
        handwritten.TEMPLATE == template
    ), f"handwritten.py implements a different template than {source}"


def test_handwritten_whitespace_is_exactly_regex_backslash_s():
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    assert set(handwritten.WHITESPACE) == set(regex.findall(r"\s", every))


def test_first_difference_compares_types_not_just_values():
    assert bench.first_difference({"a": [1, {"b": "x"}]}, {"a": [1, {"b": "x"}]}) is None
    assert "int" in bench.first_difference({"a": 1}, {"a": 1.0})
    assert "bool" in bench.first_difference({"a": [True]}, {"a": [1]})
    assert "keys" in bench.first_difference({"a": 1}, {"b": 1})
    assert "differ at 2" in bench.first_difference("abcd", "abXd")


# --------------------------------------------------------------------------------------------
# The API lower bound
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("chunking", sorted(workloads.CHUNKINGS))
def test_lower_bound_gives_one_event_per_chunk_with_the_reference_region_chunk_keys(
    family, chunking
):
    ref = _reference()
    template, _ = workloads.load_template(family)
    sample = workloads.make_sample(family, 1000)
    chunks = workloads.CHUNKINGS[chunking](sample)
    steps, _ = _steps(
        lambda p: ref.ResponseParser(template, prefix=p, tools=sample.tools), sample.prefix, chunks
    )
    reference_keys = {tuple(e) for events in steps for e in events if e["type"] == "region_chunk"}
    assert len(reference_keys) == 1  # one shape, keys in one order
    assert lower_bound.EVENT_KEYS in reference_keys

    parser = lower_bound.LowerBoundParser(prefix=sample.prefix, tools=sample.tools)
    assert parser.initial_events == []
    for chunk in chunks:
        events = parser.feed(chunk)
        assert len(events) == 1
        (event,) = events
        assert tuple(event) in reference_keys
        assert event["type"] == "region_chunk" and event["text"] == chunk
        assert isinstance(event["field"], str) and isinstance(event["dirty"], bool)
    message, final = parser.finalize()
    assert final == [] and "".join(chunks) in message.values()


def test_lower_bound_needs_a_prefix_as_the_reference_does():
    with pytest.raises(ValueError, match="prefix"):
        lower_bound.LowerBoundParser()


def test_bench_never_compares_the_lower_bound_message():
    problems: list[str] = []
    messages = {bench.REFERENCE: {"role": "assistant"}, bench.BOUND: {"content": "whatever"}}
    assert bench.check_messages(messages, {"role": "assistant"}, "w", problems)
    assert problems == []
    messages[bench.CHATPARSE] = {"content": "whatever"}
    assert not bench.check_messages(messages, {"role": "assistant"}, "w", problems)
    assert problems and problems[0].startswith("MISMATCH w: chatparse")


# --------------------------------------------------------------------------------------------
# Figures, tables and the checklist, on synthetic numbers
# --------------------------------------------------------------------------------------------


def _row(size="1k", chunking="server", family="fam", cp=(1, 1, 1), ref=(9, 9, 9), bound=(1, 1, 1)):
    row = bench.Row(family, size, 1000, chunking, 300)
    row.stream_us = {
        bench.CHATPARSE: [float(x) for x in cp],
        bench.REFERENCE: [float(x) for x in ref],
        bench.BOUND: [float(x) for x in bound],
    }
    return row


def test_spread_is_min_median_max():
    assert bench.Spread.of([3.0, 1.0, 2.0, 10.0]) == bench.Spread(1.0, 2.5, 10.0)
    assert bench.Spread.of([]) is None
    assert bench.Spread(1.0, 2.5, 10.0).fmt(".1f", "x") == "1.0/2.5/10.0x"
    assert bench.Spread(1.0, 2.5, 10.0).fmt(".2f", sep=" / ") == "1.00 / 2.50 / 10.00"


def test_ratios_pair_samples_of_the_same_repetition():
    assert bench.paired_ratios([4.0, 6.0, 9.0], [1.0, 2.0, 3.0]) == [4.0, 3.0, 3.0]
    # Not min/min, median/median, max/max: those would give 4.0/3.0/3.0 from other pairs.
    assert bench.paired_ratios([9.0, 4.0], [3.0, 1.0]) == [3.0, 4.0]
    assert bench.paired_ratios([10.0], [1.0, 2.0, 5.0]) == [10.0, 5.0, 2.0]
    assert bench.paired_ratios([], [1.0]) == []


def test_report_rows_show_min_median_max_and_paired_ratios():
    row = _row(cp=(1, 2, 3), ref=(4, 6, 9), bound=(0.5, 1, 1.5))
    assert bench.stream_row(row) == [
        "fam",
        "1k",
        "server",
        "300",
        "1.00/2.00/3.00",
        "4.00/6.00/9.00",
        "3.0/3.0/4.0x",  # 4/1, 6/2, 9/3
        "",
    ]
    assert bench.bound_row(row)[3:] == ["0.500/1.000/1.500", "2.00/2.00/2.00x", "6.0/6.0/8.0x"]
    row.bulk_mbps = {bench.CHATPARSE: [30.0, 20.0], bench.REFERENCE: [10.0, 10.0]}
    assert bench.bulk_row(row)[3:6] == ["20.0/25.0/30.0", "10.0/10.0/10.0", "2.0/2.5/3.0x"]
    broken = _row()
    broken.stream_us = {}
    broken.problems = ["MISMATCH fam 1k server: chatparse vs reference: ..."]
    assert bench.stream_row(broken)[4:] == ["-", "-", "-", "MISMATCH/ERROR"]


def test_table_aligns_columns():
    text = bench.table(["name", "value"], [["a", "1.0"], ["long name", "22.25"]])
    lines = text.splitlines()
    assert lines[0].startswith("name ") and lines[1].startswith("---------  -----")
    assert {len(line) for line in lines} == {len("long name  22.25")}  # right-aligned numbers
    assert lines[2] == "a            1.0"


def test_markdown_report_has_one_line_per_row_with_min_median_max():
    meta = {"python": "3.11", "cpus": 2, "transformers": "5.23.0", "reps": {"1k": 3}}
    rows = [_row(cp=(1, 2, 3), ref=(4, 6, 9), bound=(0.5, 1, 1.5)), _row(chunking="split")]
    rows[0].bulk_mbps = {bench.CHATPARSE: [30.0, 20.0], bench.REFERENCE: [10.0, 10.0]}
    text = bench.markdown_report(meta, rows)
    assert (
        "| fam | 1k | 1.00 / 2.00 / 3.00 | 4.00 / 6.00 / 9.00 | 3.0 / 3.0 / 4.0× "
        "| 0.500 / 1.000 / 1.500 | 2.00 / 2.00 / 2.00× |"
    ) in text
    split, bulk = text.split("split across chunks:")[1].split("Bulk")
    assert "| family | 1k |\n| --- | --- |\n| fam | 9.0 / 9.0 / 9.0× |" in split
    assert "| family | 1k |\n| --- | --- |\n| fam | 2.0 / 2.5 / 3.0× |" in bulk
    assert text.count("| fam |") == 3  # the split row is not in the server table


def test_a_saved_run_reads_back_to_the_same_figures(tmp_path):
    rows = [_row(cp=(1, 2, 3), ref=(4, 6, 9)), _row("10k", "split")]
    rows[0].bulk_mbps = {bench.CHATPARSE: [30.0, 20.0], bench.REFERENCE: [10.0, 10.0]}
    compiles = [{"template": "t", "source": "templates/t.json", "seconds": [0.5]}]
    imports = [{"module": "chatparse.generated.t", "ms": [5.0]}]
    meta = {"python": "3.11", "cpus": 2, "transformers": "5.23.0", "reps": {"1k": 3}}
    checks = bench.checklist(rows, compiles, imports)
    path = tmp_path / "run.json"
    path.write_text(bench.run_json(meta, rows, compiles, imports, checks, ["note x"]))
    meta2, rows2, compiles2, imports2, problems2, builtins2 = bench.load_run(str(path))
    assert builtins2 == []
    assert (meta2, compiles2, imports2, problems2) == (meta, compiles, imports, ["note x"])
    assert [r.figures() for r in rows2] == [r.figures() for r in rows]
    assert [c.as_dict() for c in bench.checklist(rows2, compiles2, imports2)] == [
        c.as_dict() for c in checks
    ]


def _statuses(checks):
    return {(c.target.split(" (")[0], c.family, c.size): (c.status, c.noisy) for c in checks}


def test_checklist_applies_each_target_per_family_and_size():
    rows = [
        _row("1k", cp=(1, 1, 1), ref=(9, 9, 9), bound=(0.6, 0.6, 0.6)),  # 9x; 1.67x of the bound
        _row("10k", cp=(1, 1, 1), ref=(9, 9, 9), bound=(0.6, 0.6, 0.6)),  # 1.67x > 1.5: FAIL
        _row("100k", cp=(1, 1, 1), ref=(14, 14, 14)),  # 14x < 15x
        _row("1M", cp=(1, 1, 1), ref=(80, 80, 80)),  # 80x >= 75x
        _row("1k", "split", cp=(1, 1, 1), ref=(5, 5, 5)),  # 5x < 6x
        _row("10k", "split", cp=(1, 1, 1), ref=(6, 6, 6)),  # exactly 6x passes
    ]
    got = _statuses(bench.checklist(rows, [], []))
    stream, bound, split = (
        "streaming speedup, server",
        "chatparse / lower bound",
        "streaming speedup, split",
    )
    assert got[stream, "fam", "1k"] == ("PASS", False)
    assert got[stream, "fam", "10k"] == ("PASS", False)
    assert got[stream, "fam", "100k"] == ("FAIL", False)
    assert got[stream, "fam", "1M"] == ("PASS", False)
    assert got[bound, "fam", "1k"] == ("PASS", False)
    assert got[bound, "fam", "10k"] == ("FAIL", False)
    assert got[bound, "fam", "1M"] == ("PASS", False)  # 1.0x
    assert got[split, "fam", "1k"] == ("FAIL", False)
    assert got[split, "fam", "10k"] == ("PASS", False)
    # No bulk figures were given: the bulk targets are not measured, not passed.
    assert got["bulk speedup, every row", "fam", "1k"] == ("n/a", False)


def test_checklist_decides_on_the_median_and_marks_ranges_that_cross_the_limit():
    rows = [
        _row("1k", family="a", cp=(1, 1, 1), ref=(7, 9, 10)),  # 7x, 9x, 10x: median passes
        _row("1k", family="b", cp=(1, 1, 1), ref=(7, 7.5, 9)),  # median 7.5x fails
        _row("1k", family="c", cp=(1, 1, 1), ref=(8, 8, 8)),  # exactly the limit
    ]
    checks = [c for c in bench.checklist(rows, [], []) if c.target.startswith("streaming")]
    got = {c.family: (c.status, c.noisy, c.cell()) for c in checks}
    assert got == {
        "a": ("PASS", True, "PASS* 9x"),
        "b": ("FAIL", True, "FAIL* 7.5x"),
        "c": ("PASS", False, "PASS 8x"),
    }


def test_checklist_bulk_compile_and_import():
    rows = [_row("1k"), _row("10k"), _row("100k")]
    for row, (cp, ref) in zip(rows, [(9.0, 10.0), (20.0, 10.0), (50.0, 10.0)]):
        row.bulk_mbps = {bench.CHATPARSE: [cp] * 3, bench.REFERENCE: [ref] * 3}
    compiles = [
        {"template": "fast", "source": "templates/fast.json", "seconds": [0.5, 0.6, 0.7]},
        {"template": "slow", "source": "templates/slow.json", "seconds": [1.2, 1.3, 1.4]},
        {"template": "broken", "source": "templates/broken.json", "error": "boom"},
    ]
    imports = [
        {"module": "chatparse.runtime", "ms": [30.0]},  # not a generated module: no target
        {"module": "chatparse.generated.fast", "ms": [5.0, 6.0]},
        {"module": "chatparse.generated.slow", "ms": [25.0]},
    ]
    checks = bench.checklist(rows, compiles, imports)
    got = _statuses(checks)
    assert got["bulk speedup, every row", "fam", "1k"] == ("FAIL", False)  # 0.9x is slower
    assert got["bulk speedup, every row", "fam", "10k"] == ("PASS", False)
    assert got["bulk speedup, median over rows", "all", "all"] == ("FAIL", False)  # 2x < 3x
    assert got["compile", "fast", "-"] == ("PASS", False)
    assert got["compile", "slow", "-"] == ("FAIL", False)
    assert got["compile", "broken", "-"] == ("n/a", False)
    assert got["import", "fast", "-"] == ("PASS", False)
    assert got["import", "slow", "-"] == ("FAIL", False)
    assert not any(c.family == "runtime" for c in checks)

    report = bench.checklist_report(checks)
    assert "[FAIL] compile (< 1 s): 1/3 pass" in report
    assert "failing: slow, broken" in report
    assert "[FAIL] import (< 20 ms): 1/2 pass; slowest slow" in report
    assert "[FAIL] bulk speedup, median over rows (>= 3x): 2.00x" in report
    grid_line = next(line for line in report.splitlines() if "bulk speedup, every row" in line)
    assert grid_line.split()[-6:] == ["FAIL", "0.9x", "PASS", "2x", "PASS", "5x"]


def test_exit_status_fails_on_mismatches_always_and_on_targets_only_with_check():
    passing = bench.checklist([_row("1k")], [], [])
    passing = [c for c in passing if c.status == "PASS"]
    failing = bench.checklist([_row("1k", ref=(2, 2, 2))], [], [])
    assert bench.exit_status([], passing, check=True) == 0
    assert bench.exit_status([], failing, check=False) == 0
    assert bench.exit_status([], failing, check=True) == 1
    assert bench.exit_status(["MISMATCH x"], passing, check=False) == 1
    assert bench.exit_status(["note x"], passing, check=True) == 0


# --------------------------------------------------------------------------------------------
# Every built-in family: workload, chunking, and the section run on tiny prose
# --------------------------------------------------------------------------------------------

BUILTINS = workloads.builtin_families()


@pytest.mark.parametrize(
    "pattern, runs",
    [
        (r"\s*(?:<\|end\|>|<\|endoftext\|>)", ["<|end|>", "<|endoftext|>"]),
        (r"<start_function_call>call:(?P<name>[\w.\-]+)", ["<start_function_call>call:"]),
        (r"\s*functools(?=\s*\[)", ["functools"]),
        (r"(?:commentary|analysis)\s+to=functions\.", ["commentary", "analysis", "to=functions."]),
        (r"^\s*(?:<think>\s*)?", ["<think>"]),
        (r"<invoke name=[\"']?(?P<name>[^\"'>\s]+)[\"']?\s*>", ["<invoke name="]),
        # A quantified character is left out and ends the run: "d" and "g" are too short.
        (r"abc*de+f?gh{2}ij", ["ab", "ij"]),
        (r"[]<>]x|y\nz", ["y\nz"]),  # a class with ] first; \n is a literal newline
        # A class of a few plain chars is each of them (Llama's end tokens, one token each);
        # under a quantifier it is left out as a char is, and a wider class ends the run.
        (r"\s*<\|eo[mt]_id\|>", ["<|eom_id|>", "<|eot_id|>"]),
        (r"a[bc]?de", ["de"]),
        (r"<b[xyz0-9]>", ["<b"]),
    ],
)
def test_literal_runs_are_the_pattern_s_fixed_strings(pattern, runs):
    assert workloads.literal_runs(pattern) == runs


def test_delimiter_literals_take_literal_strings_and_pattern_runs_longest_first():
    template = {
        "fields": {
            "a": {"open": "<a>", "close": ["</a>", "<end>"]},
            "b": {"open_pattern": r"\s*<tool_call>", "close_pattern": r"</tool_call>\s*"},
        }
    }
    assert workloads.delimiter_literals(template) == (
        "</tool_call>",
        "<tool_call>",
        "<end>",
        "</a>",
        "<a>",
    )


@pytest.mark.parametrize("family", BUILTINS)
@pytest.mark.parametrize("placement", workloads.PLACEMENTS)
def test_builtin_samples_add_prose_and_chunk_at_the_template_delimiters(family, placement):
    demo = json.loads((workloads.SAMPLE_DIR / f"{family}.json").read_text(encoding="utf-8"))
    sample = workloads.builtin_sample(family, placement, 2000)
    assert sample == workloads.builtin_sample(family, placement, 2000)  # seeded
    prose = workloads.added_prose(sample, placement)
    assert 1500 <= len(prose) <= 2000 and demo["text"] not in prose
    expected = (
        f"{prose}\n\n{demo['text']}" if placement == "before" else f"{demo['text']}\n\n{prose}"
    )
    assert sample.text == expected and sample.prefix == demo["prefix"]
    template, _ = workloads.load_template(family)
    literals = workloads.delimiter_literals(template)
    chunks = workloads.server_chunks(sample)
    assert "".join(chunks) == sample.text
    specials = [c for c in chunks if c in literals]
    # The demo's delimiters, each one chunk (llama3_pythonic's and llama4_pythonic's demos have
    # one: their end token, `<|eot_id|>` and `<|eot|>`, one token each).
    assert specials, specials
    if family in ("llama3_pythonic", "llama4_pythonic"):
        assert specials == [{"llama3_pythonic": "<|eot_id|>"}.get(family, "<|eot|>")]
    assert all(c in literals or 1 <= len(c) <= 6 for c in chunks)
    # No chunk boundary falls inside an occurrence of a delimiter literal in the demo text.
    boundaries, pos = set(), 0
    for chunk in chunks:
        pos += len(chunk)
        boundaries.add(pos)
    start = sample.text.index(demo["text"])
    for special, text in sample.segments:
        if special:
            assert text in literals
    for literal in literals:
        at = demo["text"].find(literal)
        if at >= 0 and not any(literal in other and literal != other for other in literals):
            s, e = start + at, start + at + len(literal)
            assert not any(s < b < e for b in boundaries), literal


@pytest.fixture(scope="module")
def tiny_builtin_run():
    """The section on every family with 300 characters of prose and one repetition. run_stream's
    gc.collect() before each sample costs ~30 ms with transformers and pytest loaded (about 350
    calls here); this smoke test times nothing, so the fixture makes it a no-op."""
    _reference()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bench.gc, "collect", lambda *args: 0)
        return bench.builtin_rows(BUILTINS, reps=1, min_sample=0.0, prose_chars=300)


def test_builtin_section_runs_every_family_and_placement_with_sane_rows(tiny_builtin_run):
    rows, hows, problems = tiny_builtin_run
    assert [(r.family, r.placement) for r in rows] == [
        (f, p) for f in BUILTINS for p in workloads.PLACEMENTS
    ]
    assert set(hows) == set(BUILTINS)
    assert not [p for p in problems if p.startswith(("MISMATCH", "ERROR"))], problems
    for r in rows:
        sample = workloads.builtin_sample(r.family, r.placement, 300)
        assert (r.chars, r.chunks) == (len(sample.text), len(workloads.server_chunks(sample)))
        assert r.size == "0.3k" and r.chunking == "server"
        if r.skipped:
            assert any(p.startswith(f"SKIPPED {r.family} prose {r.placement}") for p in problems)
            assert r.stream_us == {}
            continue
        assert set(r.stream_us) == {bench.CHATPARSE, bench.REFERENCE}
        assert all(len(v) == 1 and v[0] > 0 for v in r.stream_us.values())
        assert r.stream_ratio(bench.REFERENCE, bench.CHATPARSE) is not None
        assert r.prose_field == "-" or set(r.prose_field.split(",")) <= {
            "content",
            "reasoning_content",
        }


def test_builtin_section_reaches_the_checklist_json_and_markdown(tiny_builtin_run, tmp_path):
    rows, hows, problems = tiny_builtin_run
    checks = bench.checklist([], [], [], rows)
    assert len(checks) == len(rows)
    assert {c.target for c in checks} == {bench.BUILTIN_TARGET.format(1)}
    assert {c.size for c in checks} == {"prose before", "prose after"}
    assert all(c.status in ("PASS", "FAIL", "n/a") for c in checks)
    report = bench.checklist_report(checks)
    assert all(any(line.startswith(f + " ") for line in report.splitlines()) for f in BUILTINS)
    meta = {"python": "3.11", "cpus": 2, "transformers": "5.23.0", "reps": {}, "builtin_reps": 1}
    path = tmp_path / "run.json"
    path.write_text(bench.run_json(meta, [], [], [], checks, problems, rows))
    *_, builtins2 = bench.load_run(str(path))
    assert builtins2 == rows
    text = bench.markdown_report(meta, [], rows)
    assert (
        sum(
            line.startswith(("| cohere_command_a | before", "| step3 | after"))
            for line in text.splitlines()
        )
        == 2
    )


def _builtin(family, placement, cp, ref, skipped=""):
    row = bench.BuiltinRow(family, "10k", 10_000, "server", 3000, placement=placement)
    row.prose_field, row.skipped = ("-", skipped) if skipped else ("content", "")
    if not skipped:
        row.stream_us = {
            bench.CHATPARSE: [float(x) for x in cp],
            bench.REFERENCE: [float(x) for x in ref],
        }
    return row


def test_builtin_check_is_per_family_and_placement_at_the_median_and_separate():
    builtins = [
        _builtin("fast", "before", (1, 1, 1), (5, 6, 7)),
        _builtin("fast", "after", (1, 1, 1), (1, 1, 1)),  # exactly as fast: passes
        _builtin("slow", "before", (1, 1, 1), (4, 4, 4)),
        _builtin("slow", "after", (4, 4, 4), (1, 1.2, 5)),  # 0.25x, 0.3x, 1.25x: median fails
        _builtin("odd", "before", (), (), skipped="one-shot parse_response differs: ..."),
        _builtin("odd", "after", (1, 1, 1), (3, 3, 3)),
    ]
    rows = [_row("1k"), _row("1k", "split")]
    without = bench.checklist(rows, [], [])
    checks = bench.checklist(rows, [], [], builtins)
    assert [c.as_dict() for c in checks[: len(without)]] == [c.as_dict() for c in without]
    got = {
        (c.family, c.size): (c.status, c.noisy)
        for c in checks
        if c.target == bench.BUILTIN_TARGET.format(1)
    }
    assert got == {
        ("fast", "prose before"): ("PASS", False),
        ("fast", "prose after"): ("PASS", False),
        ("slow", "prose before"): ("PASS", False),
        ("slow", "prose after"): ("FAIL", True),
        ("odd", "prose before"): ("n/a", False),
        ("odd", "prose after"): ("PASS", False),
    }
    report = bench.checklist_report(checks)
    main_grid_header = next(line for line in report.splitlines() if line.startswith("family "))
    assert "prose" not in main_grid_header  # issue 10's grid keeps its size columns
    assert (
        "streaming never slower than the reference, every built-in (>= 1x): 1/3 families pass"
        in report
    )
    assert "slowest slow prose after median 0.30x; failing: slow, odd" in report
    assert bench.builtin_table_row(builtins[3])[5:] == [
        "4.00/4.00/4.00",
        "1.00/1.20/5.00",
        "0.25/0.30/1.25x",
        "",
    ]
    assert bench.builtin_table_row(builtins[4])[-2:] == ["-", "SKIPPED"]


def test_per_chunk_ladder_rungs_stream_the_text_and_chatparse_stays_on_its_fast_path():
    """benchmarks/per_chunk_ladder.py: every rung streams exactly the chunks it is given, and its
    chatparse rung never reaches the general path (else it would not measure the fast path)."""
    import per_chunk_ladder

    chunks = per_chunk_ladder.chunks_of_prose(3_000)
    assert chunks and all("<" not in c for c in chunks) and all(1 <= len(c) <= 6 for c in chunks)
    per_chunk_ladder.chatparse_stays_on_its_fast_path(chunks)
    # ... and the check can fail: a chunk ending in a char `\s` takes (U+3000, which a close's
    # lead run may go on over) takes the general path (one ending in "é" no longer does)
    per_chunk_ladder.chatparse_stays_on_its_fast_path(["caf", "é"])
    with pytest.raises(AssertionError, match="general path"):
        per_chunk_ladder.chatparse_stays_on_its_fast_path(["caf", "é\u3000"])
    for name, make in per_chunk_ladder.rungs():
        parser = make()
        events = [e for c in chunks for e in parser.feed(c)]
        if name == "chatparse":
            events += parser.finalize()[1]
        streamed = "".join(e["text"] for e in events if e["type"] == "region_chunk")
        assert streamed == "".join(chunks), name
        assert {e["field"] for e in events} == {"content"}, name


def test_per_chunk_ladder_runs():
    result = subprocess.run(
        [
            sys.executable,
            str(Path(bench.__file__).parent / "per_chunk_ladder.py"),
            "--chars",
            "2000",
            "--repetitions",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert [line.split()[0] for line in result.stdout.splitlines()[2:]] == [
        "bound",
        "+",
        "+",
        "+",
        "+",
        "chatparse",
    ]


# --- benchmarks/agent_turns.py -----------------------------------------------------------------


def test_agent_turns_cover_every_family_and_the_realistic_kinds():
    import agent_turns

    for family in workloads.builtin_families():
        turns = agent_turns.turns_of(family)
        assert turns[0].kind == "sample" and "".join(turns[0].pieces) == turns[0].text
    rendered = {turn.kind for turn in agent_turns.turns_of("qwen3_coder")}
    assert rendered == set(agent_turns.KINDS)
    code = [t for t in agent_turns.turns_of("smollm3") if t.kind == "code"][0]
    assert len(code.text) > 2000  # the call with a 2,000-character code argument


def test_agent_turns_time_matching_turns_and_report_a_mismatch(tmp_path, monkeypatch):
    _reference()
    import agent_turns

    out = tmp_path / "turns.json"
    status = agent_turns.main(
        ["--reps", "1", "--families", "hermes", "--kinds", "sample", "--json", str(out)]
    )
    (row,) = json.loads(out.read_text())
    assert status == 0 and row["family"] == "hermes" and row["stream_speedup"]["median"] > 0
    # A turn whose text chatparse parses differently from the reference is not timed.
    turn = agent_turns.turns_of("hermes")[0]
    monkeypatch.setattr(
        "chatparse.generated.hermes.parse_response", lambda text, **kwargs: {"role": "x"}
    )
    assert "mismatch" in agent_turns.measure(turn, 1)


def test_agent_turns_cold_streams_find_no_chunk_read_before():
    import agent_turns

    from chatparse.generated import deepseek_v3

    turn = agent_turns.turns_of("deepseek_v3")[0]
    parser = deepseek_v3.ResponseParser(turn.prefix, tools=turn.tools)
    for piece in turn.pieces:
        parser.feed(piece)
    region = deepseek_v3.ResponseParser.regions["tool_calls"]
    assert any(region.run_sets.chunks)  # the header and close tokens were read
    agent_turns.forget_chunks(deepseek_v3)
    assert not any(region.run_sets.chunks)


# --- benchmarks/deltas_ladder.py ---------------------------------------------------------------


def test_deltas_ladder_rungs_do_what_they_say(monkeypatch):
    """Each rung adds its one thing: a delta per region_chunk, then one `re` pass over each call
    chunk, then the JSON bodies' tokens (only where the calls are JSON); DeltaStream's rung is
    DeltaStream's own stream."""
    import agent_turns
    import deltas_ladder

    from chatparse.generated import hermes, qwen3_coder
    from chatparse.serving.json_reader import JsonReader

    turn = agent_turns.turns_of("hermes")[0]
    parser = hermes.ResponseParser(turn.prefix, tools=turn.tools, captures=True)
    chunks = [
        {e["field"]: e["text"]}
        for piece in turn.pieces
        for e in parser.feed(piece)
        if e["type"] == "region_chunk"
    ]
    deltas = deltas_ladder._Deltas(hermes, turn)
    assert [d for piece in turn.pieces for d in deltas.feed(piece)] == chunks
    passed = []
    one_pass = deltas_ladder._ONE_PASS
    monkeypatch.setattr(
        deltas_ladder,
        "_ONE_PASS",
        type(
            "Spy", (), {"findall": lambda self, text: passed.append(text) or one_pass.findall(text)}
        )(),
    )
    once = deltas_ladder._OnePass(hermes, turn)
    assert [d for piece in turn.pieces for d in once.feed(piece)] == chunks
    assert passed == [c["tool_calls"] for c in chunks if "tool_calls" in c] and passed
    read = []
    feed = JsonReader.feed
    monkeypatch.setattr(
        JsonReader, "feed", lambda self, text: (read.append(text), feed(self, text))
    )
    tokens = deltas_ladder._Tokens(hermes, turn)
    assert [d for piece in turn.pieces for d in tokens.feed(piece)] == chunks
    assert "".join(read) == "".join(c["tool_calls"] for c in chunks if "tool_calls" in c)
    assert set(deltas_ladder.rungs(hermes, turn)) == set(deltas_ladder.RUNGS)
    coder = agent_turns.turns_of("qwen3_coder")[0]
    assert "+ tokens" not in deltas_ladder.rungs(qwen3_coder, coder)  # xml-inline calls


def test_deltas_ladder_reports_each_rung_against_the_parser(capsys):
    import deltas_ladder

    assert deltas_ladder.main(["--families", "hermes,qwen3_coder", "--reps", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    hermes = next(line for line in lines if line.startswith("hermes "))
    coder = next(line for line in lines if line.startswith("qwen3_coder "))
    assert hermes.split()[1] == "1.00/1.00/1.00x" and len(hermes.split()) == 6
    assert coder.split()[3] != "-"  # one pass over any call's chunks
    assert coder.split()[4] == "-"  # no JSON tokens rung for xml-inline calls


# --- benchmarks/text_scripts.py ----------------------------------------------------------------


def test_text_scripts_prose_is_in_its_script_and_has_no_delimiter_char():
    import text_scripts

    for script, paragraph in text_scripts.SCRIPTS.items():
        text = text_scripts.prose(script)
        assert len(text) == text_scripts.PROSE_CHARS
        assert not set(text) & set("<>[]{}`|"), script
        assert script == "english" or not text.isascii()
        pieces = text_scripts.pieces_of(text, script)
        assert "".join(pieces) == text and {len(p) for p in pieces} <= set(range(1, 7))


def test_text_scripts_reports_where_the_prose_went(capsys):
    import text_scripts

    _reference()
    assert (
        text_scripts.main(["--families", "qwen3,gpt_oss", "--scripts", "chinese", "--reps", "1"])
        == 0
    )
    rows = [
        line.split(" | ")
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("| qwen3 ") or line.startswith("| gpt_oss ")
    ]
    # gpt_oss drops text outside its channels: the prose after its prompt goes nowhere
    assert [row[2] for row in rows] == ["content", "(dropped)"]
    assert float(rows[0][6].split("/")[1]) > 1  # the speedup's median: a number, sane
