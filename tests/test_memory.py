"""Memory stays bounded: the per-character memo tables are capped, and a long streamed output
costs about its own size."""

from __future__ import annotations

import random
import tracemalloc

import chatparse.generated.qwen3 as qwen3
import chatparse.generated.smollm3 as smollm3
from chatparse.runtime import Delimiter
from chatparse.runtime.dfa_tables import MEMO_CAP


def _tables(module):
    """Every per-character memo table of a generated module: its delimiters' and regions'."""
    parser = module.ResponseParser
    for value in vars(module).values():
        if isinstance(value, Delimiter):
            yield f"{value!r} classes", value._class_of
            for state, memo in enumerate(value._next):
                yield f"{value!r} next[{state}]", memo
            for state, memo in enumerate(value._end_of):
                yield f"{value!r} ends[{state}]", memo
    for region in (parser.home, *parser.regions.values()):
        yield f"region {region.name} transitions", region.transitions


def _cjk_and_emoji(count: int, seed: int) -> str:
    rng = random.Random(seed)
    ranges = [(0x4E00, 0x9FFF), (0x3040, 0x30FF), (0xAC00, 0xD7A3), (0x1F300, 0x1FAFF)]
    chars = []
    for _ in range(count):
        lo, hi = rng.choice(ranges)
        chars.append(chr(rng.randint(lo, hi)))
        if rng.random() < 0.05:
            chars.append(rng.choice([" ", "\n", "<", "</thi", "<tool_ca", "  <think"]))
    return "".join(chars)


def test_memo_tables_stay_capped_on_long_cjk_and_emoji_output():
    """20 outputs of 20k random CJK, kana, hangul and emoji chars (some delimiter bits between):
    a server that streams such text for weeks must not grow a table toward all of Unicode."""
    for module in (smollm3, qwen3):
        for seed in range(20):
            text = _cjk_and_emoji(20_000, seed)
            parser = module.ResponseParser(prefix="")
            for i in range(0, len(text), 4):
                parser.feed(text[i : i + 4])
            parser.finalize()
        sizes = {name: len(table) for name, table in _tables(module)}
        assert max(sizes.values()) <= MEMO_CAP, {k: v for k, v in sizes.items() if v > MEMO_CAP}
        assert max(sizes.values()) >= MEMO_CAP // 2  # the text did reach the cap


def test_streaming_a_long_output_in_4_char_chunks_peaks_within_3x_its_size():
    """The region's text is kept as a few long strings, not one string per chunk (which cost
    16x the output). The peak per char does not depend on the length: 1 MB stands for the
    8 MB of the issue, which takes minutes under tracemalloc."""
    line = "The quick brown fox jumps over the lazy dog; then it rests.\n"
    text = (line * (1_000_000 // len(line) + 1))[:1_000_000].strip() + "."
    tracemalloc.start()
    try:
        parser = smollm3.ResponseParser(prefix="")
        for i in range(0, len(text), 4):
            parser.feed(text[i : i + 4])
        message, _ = parser.finalize()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert message["content"] == text
    assert peak < 3 * len(text), f"peak {peak / 1e6:.1f} MB for {len(text) / 1e6:.1f} MB"
