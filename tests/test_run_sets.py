"""The live runs of a region stepped as one state (runtime/run_sets.py).

The property: a region whose runs step as one state of its `RunSets` sends exactly the events, per
`feed` call and unmerged, that stepping each run and pruning gives (the same module with the
region's run sets off, so the per-run loop of `StreamingEngine._step_text` steps it); also when
the tables start over every few steps (their memory bound), and for the held-runs feed
(`RegionParser._read_by_run_sets`) with its edges: an empty chunk, a chunk after `finalize`.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from support import generated_module, short_chunks
from test_fast_path import outcome, server_chunks

from chatparse.runtime import run_sets

ROOT = Path(__file__).resolve().parent.parent
FAMILIES = sorted(path.stem for path in (ROOT / "samples").glob("*.json"))


def sample(family: str) -> tuple[str, str]:
    data = json.loads((ROOT / "samples" / f"{family}.json").read_text(encoding="utf-8"))
    return data["prefix"], data["text"]


def regions_of(parser_class: type) -> list:
    found = []
    for region in (parser_class.home, *parser_class.regions.values()):
        for form in (region, region.after_start):
            if form is not None:
                form.build_finders()
                found.append(form)
    return found


def per_run_outcome(parser_class: type, prefix: str, chunks: list[str]) -> tuple:
    """`outcome` with every region's run sets off: each run stepped and pruned on its own."""
    saved = [(region, region.run_sets) for region in regions_of(parser_class)]
    try:
        for region, _ in saved:
            region.run_sets = None
        return outcome(parser_class, prefix, chunks)
    finally:
        for region, sets in saved:
            region.run_sets = sets


def chunkings(text: str, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    return [
        server_chunks(text, rng, split_specials=False),
        server_chunks(text, rng, split_specials=True),
        short_chunks(text, seed),
        list(text),
    ]


def test_most_regions_step_their_runs_as_one_state():
    with_sets = [
        region.run_sets is not None
        for family in FAMILIES
        for region in regions_of(generated_module(family).ResponseParser)
        if region.watch
    ]
    assert sum(with_sets) >= 0.8 * len(with_sets)


@pytest.mark.parametrize("family", FAMILIES)
def test_run_sets_send_what_the_per_run_loop_sends(family):
    parser_class = generated_module(family).ResponseParser
    prefix, text = sample(family)
    for cut in (len(text), len(text) * 2 // 3):  # whole, and cut off inside a delimiter or call
        for chunks in chunkings(text[:cut], seed=cut):
            assert outcome(parser_class, prefix, chunks) == per_run_outcome(
                parser_class, prefix, chunks
            ), chunks


@pytest.mark.parametrize("family", ["deepseek_v3", "hermes", "kimi_k2", "qwen3_coder", "step3"])
def test_tables_that_start_over_give_the_same_events(family, monkeypatch):
    parser_class = generated_module(family).ResponseParser
    prefix, text = sample(family)
    chunks = server_chunks(text, random.Random(7), split_specials=True)
    expected = per_run_outcome(parser_class, prefix, chunks)
    monkeypatch.setattr(run_sets, "CONFIG_CAP", 3)
    monkeypatch.setattr(run_sets, "STEP_CAP", 5)
    for region in regions_of(parser_class):
        if region.run_sets is not None:
            monkeypatch.setattr(
                region, "run_sets", run_sets.RunSets(region, region.fresh, region.fresh_at_start)
            )
    assert outcome(parser_class, prefix, chunks) == expected
    for region in regions_of(parser_class):
        if region.run_sets is not None:
            assert len(region.run_sets.configs) <= 3


def held_runs_parser():
    """A deepseek_v3 parser holding runs inside a call's open, on the held-runs feed."""
    module = generated_module("deepseek_v3")
    prefix, _ = sample("deepseek_v3")
    parser = module.ResponseParser(prefix)
    parser.feed("Sure.")
    parser.feed("<｜tool▁calls▁begin｜>")
    parser.feed("<｜tool▁call▁begin｜>function<｜tool▁sep｜>get")
    assert parser.fast_feed.__name__ == "feed" and parser._reading_runs
    return parser


def test_an_empty_chunk_while_runs_are_held_changes_nothing():
    parser = held_runs_parser()
    assert parser.feed("") == []
    assert parser.feed("_weather\n```json\n{}") != []  # the open is committed
    message, _ = parser.finalize()
    assert message["content"] == "Sure."


def test_a_chunk_after_finalize_raises_while_runs_were_held():
    parser = held_runs_parser()
    parser.finalize()
    with pytest.raises(RuntimeError):
        parser.feed("x")


def test_a_chunk_read_before_is_one_lookup_and_a_long_one_is_not_kept():
    parser_class = generated_module("deepseek_v3").ResponseParser
    region = parser_class.regions["tool_calls"]
    region.build_finders()
    sets = region.run_sets
    header = "\n```<｜tool▁call▁end｜>"
    first = sets.read(run_sets.EMPTY, header, region.candidate)
    assert sets.read(run_sets.EMPTY, header, region.candidate) is first
    config, read, runs = first
    assert read == len(header) and sets.decided[config]  # the close, decided on its last char
    assert [origin for origin, _ in runs] == [-1]  # one run, started on the chunk's first char
    long = "x" * (run_sets.CHUNK_MAX + 1)
    assert sets.read(run_sets.EMPTY, long, region.candidate) == (run_sets.EMPTY, len(long), ())
    assert long not in sets.chunks[run_sets.EMPTY]


def test_a_chunk_after_held_text_is_read_as_a_chunk_of_its_own(monkeypatch):
    """A chunk read from `start`, after text the runs hold (gpt_oss's call header, token by
    token), is the chunk's remembered reading with its offsets moved by `start`: what the char
    loop gives from there, at any offset."""
    parser_class = generated_module("gpt_oss").ResponseParser
    region = parser_class.home.after_start or parser_class.home
    region.build_finders()
    sets = region.run_sets
    header = "<|channel|>commentary to=functions.get_weather "
    config = sets.read(run_sets.EMPTY, header, region.candidate)[0]
    assert sets.configs[config], "the header holds no run: the test reads nothing held"
    started = ended = False
    for chunk in ("<|constrain|>", "x <|start|>", "json<|message|>"):
        for held in (header, "x" + header):  # the same chunk at two offsets
            text = held + chunk
            found = sets.read(config, text, region.candidate, len(held))
            with monkeypatch.context() as patched:
                patched.setattr(run_sets, "CHUNK_MAX", 0)  # the char loop, nothing remembered
                assert found == sets.read(config, text, region.candidate, len(held))
            started |= any(origin < -len(held) for origin, _ in found[2])
            ended |= any(offset >= len(held) for _, ends in found[2] for _, offset in ends)
        assert chunk in sets.chunks[config]
    assert started and ended, "no run started in a chunk, or none ended there"


@pytest.mark.parametrize("family", ["deepseek_v3", "qwen3_coder", "step3"])
def test_a_stream_read_again_takes_no_new_step(family, monkeypatch):
    """The second stream of the same pieces finds every step and chunk remembered."""
    parser_class = generated_module(family).ResponseParser
    prefix, text = sample(family)
    chunks = server_chunks(text, random.Random(3), split_specials=False)
    first = outcome(parser_class, prefix, chunks)

    def no_new_step(self, config, ch):
        raise AssertionError(f"a step not remembered: {ch!r}")

    monkeypatch.setattr(run_sets.RunSets, "step", no_new_step)
    assert outcome(parser_class, prefix, chunks) == first


@pytest.mark.parametrize("family", ["llama3_pythonic", "llama4_pythonic", "ernie45"])
def test_a_region_whose_start_only_open_has_no_heads_steps_its_runs_as_one_state(family):
    """A delimiter that only buffer position 0 lets match (`^(?=\\[NAME\\()`) starts a run there
    only: the region's run sets read the first chunk from their `begin` config, whose new run
    takes its start state, and start every later run without it. The events are the per-run
    loop's (`test_run_sets_send_what_the_per_run_loop_sends` holds the samples to it); here a
    call list that opens the reply, and prose that does not, in pieces of every size."""
    parser_class = generated_module(family).ResponseParser
    home = parser_class.home
    home.build_finders()
    assert home.run_sets is not None and home.run_sets.begin is not None
    prefix, _ = sample(family)
    for text in ("[f(a=1), g(b='x')]<|eot_id|>", "[1, 2] and [f(", " [f(a=1)]", "[f"):
        for seed in range(3):
            for chunks in chunkings(text, seed):
                assert outcome(parser_class, prefix, chunks) == per_run_outcome(
                    parser_class, prefix, chunks
                ), chunks
