"""Matching is linear in the output length, whatever the delimiter patterns: measured.

For every built-in template (and a template of catastrophic patterns), the adversarial outputs of
`adversarial.py`, built from the template's own delimiters, are parsed at a size `n` and at `8n`,
whole (`parse_response`), streamed in 4-char chunks, and as a prefix (the start anchor's cut and
the reference's edge rule). Linear time gives a CPU-time ratio near 8, quadratic near 64; the
bound is 16.

The measurement stands up to a noisy, shared machine without a wall-clock bound: CPU time of this
process (`time.process_time`, with the collector off), `n` grown until one parse takes
`BASE_SECONDS` (small texts are parsed several times per measurement instead), the minimum of a
few repetitions at each size (noise only ever adds time), and the large size repeated only while
the ratio is not clearly under the bound.
"""

from __future__ import annotations

import gc
import json
import math
import time

import pytest
from adversarial import Adversary, DelimiterShapes
from support import FAMILIES, REPO, generated_module

import chatparse

BOUND = 16.0  # 8x the text: linear ~8x the time, quadratic ~64x
BASE_SECONDS = 0.02
SMALLEST, LARGEST = 16, 1024  # chars per shape at size n
CHUNK = 4

CATASTROPHIC = {
    "start_anchor": "@",
    "fields": {
        "x": {"open_pattern": r"(a|a)*b", "close_pattern": r"(a+)+$"},
        "tool_calls": {"open_pattern": r"\s*<tool_call>", "close": "</tool_call>"},
        "content": {"close_pattern": r"\s*(?:x+x+)+y"},
    },
}


def _module(family: str):
    if family == "catastrophic":
        return chatparse.load_module(CATASTROPHIC)
    return generated_module(family)


_ADVERSARIES: dict[str, Adversary] = {}


def _adversary(family: str) -> Adversary:
    if family not in _ADVERSARIES:
        _ADVERSARIES[family] = Adversary(_module(family))
    return _ADVERSARIES[family]


def _cpu_seconds(run, repeat: int) -> float:
    gc.disable()
    try:
        started = time.process_time()
        for _ in range(repeat):
            run()
        return time.process_time() - started
    finally:
        gc.enable()


def growth(runner_at) -> tuple[float, str]:
    """CPU time at 8n over CPU time at n, for `runner_at(n)`: a function that parses the output
    of size n (built before it is timed). Returns the ratio and how it was measured."""
    gc.collect()
    runner_at(SMALLEST)()  # warm-up: lazy tables, memo entries, compiled patterns
    n = SMALLEST
    once = _cpu_seconds(runner_at(n), 1)
    while once < BASE_SECONDS and n < LARGEST:
        # Linear time would reach the base at this size; the loop checks it did.
        # (at most 4x per step: a quadratic parse would overshoot by far more).
        n = min(
            LARGEST, n * min(4, 2 ** max(1, math.ceil(math.log2(BASE_SECONDS / max(once, 1e-6)))))
        )
        once = _cpu_seconds(runner_at(n), 1)
    repeat = 1 if once >= BASE_SECONDS else math.ceil(BASE_SECONDS / max(once, 1e-6))
    small, large = runner_at(n), runner_at(8 * n)
    base = min(_cpu_seconds(small, repeat) for _ in range(3))
    best = math.inf
    # Borderline ratios are measured again (up to 5 times, keeping the fastest): another process
    # on the 2 cores slows the large run more than the small ones; a quadratic stays near 64x.
    for _ in range(5):
        best = min(best, _cpu_seconds(large, repeat))
        if not 0.75 * BOUND * base <= best <= 3 * BOUND * base:
            break  # clearly linear, or far past what noise could add
    return best / base, f"n={n} x{repeat}: {base * 1000:.1f} ms -> {best * 1000:.1f} ms"


def _tolerant(parse):
    """Adversarial text is garbage inside a field (`json` content fails at the end): the time
    until the parser says so is what is measured."""

    def run():
        try:
            parse()
        except ValueError:
            pass

    return run


def bulk_at(module, text_at):
    def runner_at(n):
        text = text_at(n)
        return _tolerant(lambda: module.parse_response(text, prefix=""))

    return runner_at


def stream_at(module, text_at):
    def runner_at(n):
        text = text_at(n)
        chunks = [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)]

        def parse():
            parser = module.ResponseParser(prefix="")
            for chunk in chunks:
                parser.feed(chunk)
            parser.finalize()

        return _tolerant(parse)

    return runner_at


def prefix_at(module, prefix_of):
    def runner_at(n):
        prefix = prefix_of(n)
        return _tolerant(lambda: module.ResponseParser(prefix=prefix).finalize())

    return runner_at


def _assert_linear(measured: dict[str, tuple[float, str]]) -> None:
    slow = {
        label: f"{ratio:.1f}x ({how})" for label, (ratio, how) in measured.items() if ratio >= BOUND
    }
    assert not slow, f"8x the text took >= {BOUND}x the CPU time: {slow}"


def test_every_built_in_template_is_measured():
    generated = sorted(p.stem for p in (REPO / "generated").glob("*.py") if p.stem != "__init__")
    assert FAMILIES == generated
    assert len(FAMILIES) >= 29


@pytest.mark.parametrize("family", FAMILIES + ["catastrophic"])
def test_adversarial_outputs_stay_in_their_region(family):
    """The measured texts do what they say: each holds shapes of every delimiter watched in its
    region and none of them completes a delimiter (which would measure another region)."""
    adversary = _adversary(family)
    for label, (opening, recipes) in adversary.regions.items():
        assert recipes, label
        for n in (SMALLEST, 8 * SMALLEST):
            assert not adversary.leaves(label, adversary.text(label, n)[len(opening) :]), (label, n)


# Regions that many templates share (`</think>` with text content, `\s*<tool_call>`) are
# measured once per run: what a region's parse does depends only on what it watches, the field's
# content and transform, how it is opened and whether the template keeps its history.
_MEASURED: dict[tuple, tuple[float, str]] = {}


def _region_key(how, module, adversary: Adversary, label: str) -> tuple:
    parser = module.ResponseParser
    region = parser.home if label == "home" else parser.regions[label]
    spec = dict(module.TEMPLATE["fields"].get(region.name, {})) if region.name else {}
    spec.pop("open", None)
    spec.pop("open_pattern", None)
    watched = tuple(
        (w.kind, w.field.name == region.name, w.delimiter.pattern) for w in region.watch
    )
    return (
        how.__name__,
        parser._shape().keep_history,
        watched,
        repr(sorted(spec.items())),
        adversary.regions[label][0],
        tuple(adversary.regions[label][1]),
    )


def _measure_regions(how, family: str) -> None:
    module, adversary = _module(family), _adversary(family)
    measured = {}
    for label in adversary.regions:
        key = _region_key(how, module, adversary, label)
        if key not in _MEASURED:
            _MEASURED[key] = growth(how(module, lambda n, label=label: adversary.text(label, n)))
        measured[label] = _MEASURED[key]
    _assert_linear(measured)


@pytest.mark.parametrize("family", FAMILIES + ["catastrophic"])
def test_whole_text_parsing_is_linear(family):
    _measure_regions(bulk_at, family)


@pytest.mark.parametrize("family", FAMILIES + ["catastrophic"])
def test_streaming_is_linear(family):
    _measure_regions(stream_at, family)


@pytest.mark.parametrize("family", FAMILIES + ["catastrophic"])
def test_prefix_is_linear(family):
    """Partial start anchors, the anchor, then the home region's shapes: the anchor's last match
    and the reference's edge rule over the rest, both whole-string searches."""
    module, adversary = _module(family), _adversary(family)
    parser = module.ResponseParser
    key = ("prefix", parser.start_anchor.pattern, _region_key(prefix_at, module, adversary, "home"))
    if key not in _MEASURED:
        _MEASURED[key] = growth(prefix_at(module, adversary.prefix))
    _assert_linear({"prefix": _MEASURED[key]})


def _closes_of_home(family: str):
    """The shortest match of each close the home region watches (its own field's, which repeats)."""
    module = _module(family)
    home = module.ResponseParser.home
    return [
        DelimiterShapes(w.delimiter).shortest_match()
        for w in home.watch
        if w.kind == "close" and w.field.name == home.name
    ]


@pytest.mark.parametrize("family", [f for f in FAMILIES if _closes_of_home(f)])
def test_prefix_of_many_commits_is_linear(family):
    """A prefix where the implicit field closes again and again (`a <|im_end|>` n times): each
    commit of the edge rule's loop searches no delimiter again whose answer it did not pass."""
    module = _module(family)
    parser = module.ResponseParser
    close = "a " + _closes_of_home(family)[0]
    anchor = DelimiterShapes(parser.start_anchor).shortest_match()
    key = (
        "commits",
        parser.start_anchor.pattern,
        _region_key(prefix_at, module, _adversary(family), "home"),
    )
    if key not in _MEASURED:
        _MEASURED[key] = growth(
            prefix_at(module, lambda n: anchor + close * max(1, n // len(close)))
        )
    _assert_linear({"commits": _MEASURED[key]})


def one_chunk_at(module, text_at):
    """The output fed to the streaming parser in one chunk, after a first stream of a short
    output in 4-char chunks (the regions' lazily built tables exist then, as in a server)."""

    def runner_at(n):
        text = text_at(n)
        warm = module.ResponseParser(prefix="")
        for start in range(0, min(len(text), 512), CHUNK):
            warm.feed(text[start : start + CHUNK])

        def parse():
            parser = module.ResponseParser(prefix="")
            parser.feed(text)
            parser.finalize()

        return _tolerant(parse)

    return runner_at


@pytest.mark.parametrize("family", FAMILIES)
def test_one_chunk_of_many_delimiters_is_linear(family):
    """The family's sample n times over, fed at once: a commit does not copy the rest of the
    chunk (the buffer drops routed text once it is no shorter than what stays; the run sets read
    the chunk from a position; the fast path hands a long rest to the general path). It did:
    hermes's sample 2,000 times over took 38x the time of 250 times."""
    module = _module(family)
    sample = json.loads((REPO / "samples" / f"{family}.json").read_text(encoding="utf-8"))["text"]
    ratio = growth(one_chunk_at(module, lambda n: sample * max(1, n // 16)))
    _assert_linear({"one chunk": ratio})


# A call whose tag holds a long run of spaces inside its value (or key), between two chars: the
# tag_pattern `\s*(?P<value>.*?)\s*</...>` as written backtracks over it in quadratic time in
# `re` and `regex` alike (16,000 spaces: 0.2 s; 8x the text, 64x the time); `é` makes the span
# not ASCII, which the groups spelling reads too.
TAG_OF_SPACES = {
    "step3": lambda inner: (
        '<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="f">'
        f'<steptml:parameter name="k">{inner}</steptml:parameter></steptml:invoke>'
        "<｜tool_call_end｜>"
    ),
    "glm45": lambda inner: (
        f"<tool_call>f\n<arg_key>{inner}</arg_key><arg_value>x</arg_value></tool_call>"
    ),
}


@pytest.mark.parametrize("how", [bulk_at, stream_at])
@pytest.mark.parametrize("first", ["a", "é"])
@pytest.mark.parametrize("family", sorted(TAG_OF_SPACES))
def test_a_tag_value_of_many_spaces_is_read_in_linear_time(family, first, how):
    call = TAG_OF_SPACES[family]
    ratio = growth(how(_module(family), lambda n: call(first + " " * (16 * n) + "b")))
    _assert_linear({"tag": ratio})


def _runs_of_everything(n: int) -> str:
    # The catastrophic patterns' own worst case: long runs that keep every pattern alive.
    return "a" * n + " " * n + "x" * n + "b<tool_call>" + "a" * n


@pytest.mark.parametrize("how", [bulk_at, stream_at])
def test_catastrophic_patterns_are_linear(how):
    """`(a|a)*b`, `(a+)+$` and `\\s*(?:x+x+)+y` backtrack exponentially in `regex`; as DFAs they
    cost the same per char as anything else."""
    _assert_linear({"runs": growth(how(_module("catastrophic"), _runs_of_everything))})


def test_the_shapes_find_a_quadratic_matcher():
    """The measurement can fail: a delimiter search that re-reads the text from every start
    (what `regex.search` does on `\\s*<tool_call>` after a run of spaces) measures quadratic."""
    module = _module("qwen3_coder")
    delimiter = module.TOOL_CALLS_OPEN

    def naive(n):
        text = "hi" + " " * (n * 8) + "<tool_call>oops"

        def run():
            for start in range(len(text)):
                delimiter.match_at(text, start, final=True)

        return run

    ratio, how = growth(naive)
    assert ratio >= BOUND, how


# The serving layer streams a call's arguments piece by piece: a long argument (a file's
# contents) in 4-char deltas must cost time linear in its length (issue 22's engines rescan or
# rebuild the argument text per delta).
LONG_ARGUMENT = {
    "hermes": lambda n: (
        '<tool_call>\n{"name": "write", "arguments": {"path": "a.py", "text": "'
        + "x = 1\\n" * n
        + '"}}\n</tool_call>'
    ),
    "qwen3_coder": lambda n: (
        "<tool_call>\n<function=write>\n<parameter=path>\na.py\n</parameter>\n<parameter=text>\n"
        + "x = 1\n" * n
        + "</parameter>\n</function>\n</tool_call>"
    ),
}


@pytest.mark.parametrize("family", sorted(LONG_ARGUMENT))
def test_delta_stream_is_linear_in_a_long_argument(family):
    from chatparse.openai import DeltaStream

    module = generated_module(family)

    def runner_at(n):
        text = LONG_ARGUMENT[family](n)
        chunks = [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)]

        def stream():
            deltas = DeltaStream(module, prefix="")
            for chunk in chunks:
                deltas.feed(chunk)
            deltas.finish()

        return stream

    ratio, how = growth(runner_at)
    assert ratio < BOUND, (family, ratio, how)
