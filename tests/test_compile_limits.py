"""Compile time is linear in the template's size (measured), and a template past a stated limit is
refused with a ValueError that names the limit (compiler/limits.py, README "Limits").

Templates come from model hubs and the dict API compiles one on first use. The scaling checks
compile a template at a size `n` and at `8n` and compare CPU time (`time.process_time`, collector
off, the fastest of a few runs): linear work gives a ratio near 8, quadratic near 64; the bound is
16, as in tests/test_linear_time.py. The shapes are the ones that were quadratic: many fields
whose opens share their first chars (each delimiter's whole-chunk literals were checked against
every other delimiter), a long literal (its literal paths were walked by recursion, copying the
path at each step), a literal of distinct chars (a DFA table of states times classes), and one
pattern of many alternatives. Each run uses names and text no earlier run used, so the
compiler's memos (parses, class checks) cannot make the larger size look cheaper.
"""

from __future__ import annotations

import gc
import itertools
import time

import pytest
from support import HAVE_REFERENCE, ReferenceParser

import chatparse
from chatparse.compiler.codegen import emit
from chatparse.compiler.limits import MAX_DELIMITER_LENGTH

BOUND = 16.0  # 8x the size: linear ~8x the time, quadratic ~64x
_SALT = itertools.count()


def _fields(n: int) -> dict:
    """The shape of issue 19: n fields `<fN(?: [a-z]+)?>` ... `</f>`, plus an implicit content."""
    salt = next(_SALT)
    fields: dict = {"content": {}}
    for i in range(n):
        fields[f"f{salt}_{i}"] = {"open_pattern": f"<f{salt}_{i}(?: [a-z]+)?>", "close": "</f>"}
    return {"start_anchor": "<s>", "fields": fields}


def _literal(n: int) -> dict:
    """One close literal of n chars, `a...a` then a char of its own per run."""
    text = "a" * (n - 1) + chr(0x62 + next(_SALT) % 20)
    return {"start_anchor": "<s>", "fields": {"content": {}, "x": {"open": "<x>", "close": text}}}


def _distinct_literal(n: int) -> dict:
    """One close literal of n distinct chars (n states, n + 1 char classes)."""
    base = 0x4E00 + 1000 * (next(_SALT) % 16)
    text = "".join(chr(base + i) for i in range(n))
    return {"start_anchor": "<s>", "fields": {"content": {}, "x": {"open": "<x>", "close": text}}}


def _lookahead_literal(n: int) -> dict:
    """One open pattern of n chars before a look-ahead that ends it (a DFA with look-ahead
    reports, compiler/automata/trailing_lookahead.py; its states are named by their inputs only while
    those stay short, else numbered)."""
    text = "a" * (n - 1) + chr(0x62 + next(_SALT) % 20)
    return {
        "start_anchor": "<s>",
        "fields": {"content": {}, "x": {"open_pattern": text + r"(?=\s*\[)", "close": "</t>"}},
    }


def _alternatives(n: int) -> dict:
    """One open pattern of n alternatives."""
    salt = next(_SALT)
    pattern = "(?:" + "|".join(f"<t{salt}_{i}>" for i in range(n)) + ")"
    return {
        "start_anchor": "<s>",
        "fields": {"content": {}, "x": {"open_pattern": pattern, "close": "</t>"}},
    }


def _cpu_seconds(template: dict) -> float:
    gc.collect()
    gc.disable()
    try:
        started = time.process_time()
        chatparse.compile_template(template)
        return time.process_time() - started
    finally:
        gc.enable()


def growth(template_at, n: int) -> tuple[float, str]:
    """CPU time to compile `template_at(8 * n)` over that of `template_at(n)`."""
    _cpu_seconds(template_at(n))  # warm-up: the grammar, the Unicode tables
    base = min(_cpu_seconds(template_at(n)) for _ in range(3))
    best = float("inf")
    # Another process on the shared cores slows a long run more than short ones: a borderline
    # ratio is measured again, keeping the fastest; a quadratic one stays far past the bound.
    for _ in range(3):
        best = min(best, _cpu_seconds(template_at(8 * n)))
        if best < 0.75 * BOUND * base or best > 3 * BOUND * base:
            break
    return best / base, f"n={n}: {base * 1000:.0f} ms -> {best * 1000:.0f} ms"


@pytest.fixture
def unformatted(monkeypatch):
    """black is linear and not the compiler's own work; leaving it out of both sizes keeps one
    size from being formatted and the other not (FORMAT_MAX_CHARS)."""
    monkeypatch.setattr(emit, "FORMAT_MAX_CHARS", 0)


@pytest.mark.parametrize(
    "shape, template_at, n",
    [
        ("fields", _fields, 16),
        ("literal length", _literal, 256),
        ("distinct-char literal length", _distinct_literal, 128),
        ("alternatives in one pattern", _alternatives, 64),
        ("literal length before a look-ahead", _lookahead_literal, 256),
    ],
)
def test_compile_time_is_linear(unformatted, shape, template_at, n):
    ratio, how = growth(template_at, n)
    assert ratio < BOUND, f"{shape}: 8x the size took {ratio:.1f}x the CPU time ({how})"


def test_a_module_grows_linearly_with_a_dfa_of_a_long_literal(unformatted):
    """A Dfa's states are named by their shortest inputs, which grow by a char per state along a
    literal: past a budget they are numbered, or a 10,000-char literal before a look-ahead made a
    100 MB module."""
    small, large = (len(chatparse.compile_template(_lookahead_literal(n))) for n in (512, 4096))
    assert large < 10 * small, (small, large)


# --- refusals -------------------------------------------------------------------------------------


def _with(slot: str, value) -> dict:
    template: dict = {"start_anchor": "<s>", "fields": {"content": {}, "x": {"open": "<x>"}}}
    if slot == "start_anchor":
        template["start_anchor"] = value
    else:
        template["fields"]["x"][slot] = value
    return template


_TOO_LONG = {
    "open": "<" + "x" * MAX_DELIMITER_LENGTH,
    "close": ["</a>", "b" * (MAX_DELIMITER_LENGTH - 3)],  # the list's chars count together
    "close_pattern": "(?:" + "c" * (MAX_DELIMITER_LENGTH - 3) + ")",
    "start_anchor": "s" * (MAX_DELIMITER_LENGTH + 1),
}


@pytest.mark.parametrize("slot", sorted(_TOO_LONG))
def test_a_delimiter_past_the_limit_is_refused_naming_the_limit(slot):
    value = _TOO_LONG[slot]
    length = len(value) if isinstance(value, str) else sum(map(len, value))
    assert length == MAX_DELIMITER_LENGTH + 1
    started = time.process_time()
    with pytest.raises(ValueError) as refused:
        chatparse.load_module(_with(slot, value))
    assert time.process_time() - started < 1.0  # refused before any work on the delimiter
    message = str(refused.value)
    assert "MAX_DELIMITER_LENGTH" in message
    assert f"{MAX_DELIMITER_LENGTH:,}" in message
    assert f"{length:,} chars" in message
    assert repr(slot) in message
    if slot != "start_anchor":
        assert "Field 'x'" in message


@pytest.mark.skipif(not HAVE_REFERENCE, reason="needs the reference")
@pytest.mark.parametrize("slot", sorted(_TOO_LONG))
def test_the_reference_has_no_such_limit(slot):
    """The refusal is chatparse's own (README "Limits"): the reference loads the template."""
    ReferenceParser(_with(slot, _TOO_LONG[slot]), prefix="")


def test_the_limit_is_inclusive(monkeypatch):
    """A delimiter of exactly the limit compiles and one char more is refused (with the limit
    lowered, so the check stays cheap)."""
    from chatparse.compiler.frontend import spec

    monkeypatch.setattr(spec, "MAX_DELIMITER_LENGTH", 12)
    chatparse.compile_template(_with("close", "</" + "y" * 10))
    with pytest.raises(ValueError, match="over chatparse's limit of 12 chars"):
        chatparse.compile_template(_with("close", "</" + "y" * 11))
    with pytest.raises(ValueError, match="'close_pattern' is 13 chars long"):
        chatparse.compile_template(_with("close_pattern", "</(?:" + "y" * 7 + ")"))


def test_an_invalid_pattern_reports_its_error_first():
    """A template the reference rejects keeps the reference's error, however long the pattern."""
    with pytest.raises(ValueError, match="not a valid regex"):
        chatparse.compile_template(_with("close_pattern", "[" + "a" * MAX_DELIMITER_LENGTH))


def test_a_template_past_the_state_budget_is_refused_naming_the_limit(monkeypatch):
    """A short pattern can need hundreds of DFA states (`(?:a|b)*a(?:a|b){7}`: the last 8 chars
    read); many such fields are refused once their states pass `MAX_TEMPLATE_DFA_STATES`
    (lowered here, so that takes a few fields, not thirty)."""
    from chatparse.compiler.automata import region_automaton as regions

    monkeypatch.setattr(regions, "MAX_TEMPLATE_DFA_STATES", 1000)
    fields: dict = {"content": {}}
    for i in range(20):
        fields[f"g{i}"] = {"open_pattern": f"<{i}(?:a|b)*a(?:a|b){{7}}>", "close": "</g>"}
    template = {"start_anchor": "<s>", "fields": fields}
    with pytest.raises(ValueError) as refused:
        chatparse.compile_template(template)
    message = str(refused.value)
    assert "MAX_TEMPLATE_DFA_STATES" in message and "limit of 1,000 in all" in message
    assert "Field 'g" in message and "'open_pattern'" in message
    # Two such fields fit in the budget.
    chatparse.compile_template({"start_anchor": "<s>", "fields": dict(list(fields.items())[:3])})


def test_states_built_for_a_fallback_count_too():
    """A pattern past the DFA limits (`(?:a|b)*a(?:a|b){13}`, 16,384 states) falls back to
    `regex` after building up to `MAX_DFA_STATES` of them: one such field compiles, but a few
    reach `MAX_TEMPLATE_DFA_STATES` in all, with or without a look-ahead (whose relaxed DFA is
    built instead)."""
    from chatparse.compiler.limits import MAX_DFA_STATES, MAX_TEMPLATE_DFA_STATES

    for tail in ("", "(?=x)"):
        fields: dict = {"content": {}}
        for i in range(MAX_TEMPLATE_DFA_STATES // MAX_DFA_STATES + 1):
            fields[f"h{i}"] = {
                "open_pattern": f"<{i}(?:a|b)*a(?:a|b){{13}}>{tail}",
                "close": "</h>",
            }
        template = {"start_anchor": "<s>", "fields": fields}
        with pytest.raises(ValueError, match="MAX_TEMPLATE_DFA_STATES"):
            chatparse.compile_template(template)
        source = chatparse.compile_template(
            {"start_anchor": "<s>", "fields": dict(list(fields.items())[:2])}
        )
        assert "RegexFallback(" in source


# --- a module past FORMAT_MAX_CHARS ---------------------------------------------------------------


def test_a_module_past_the_format_limit_is_black_input_of_the_same_code(monkeypatch):
    """Past `FORMAT_MAX_CHARS` the module is the rendered text, which black formats into exactly
    the module compiled under the limit: the same code, only not formatted."""
    import black

    template = _fields(3)
    formatted = chatparse.compile_template(template)
    monkeypatch.setattr(emit, "FORMAT_MAX_CHARS", len(formatted) // 2)
    rendered = chatparse.compile_template(template)
    assert rendered != formatted
    mode = black.Mode(line_length=100, target_versions={black.TargetVersion.PY310})
    assert black.format_str(rendered, mode=mode) == formatted


@pytest.mark.skipif(not HAVE_REFERENCE, reason="needs the reference")
def test_a_template_of_160_fields_parses_as_the_reference_does():
    """Issue 19's shape at 160 fields (an unformatted module, whole-chunk literals for every
    field): the one-shot result of the reference, for every chunking."""
    from support import chatparse_outcome, chunkings, reference_one_shot, same_outcome

    template = _fields(160)
    names = list(template["fields"])[1:]
    text = (
        f"Hi <{names[0]}>one</f> and <{names[12]} ab>two</f><{names[123]}>"
        f"<{names[159]}>three</f> <{names[1]}x> <f> </f> tail"
    )
    expected = reference_one_shot(template, text, prefix="")
    assert expected[0] == "ok", expected
    for chunks in chunkings(text, seed=19):
        assert same_outcome(chatparse_outcome(template, chunks, prefix=""), expected), chunks
    # The fast path commits the same chunks whole (compiler/planning/fast_path.py `whole`) for the last
    # field as for the first, each with its own name: the rival check's budget is not spent.
    home = chatparse.load_module(template).ResponseParser.home
    opens = {watch.field.name: watch.whole for watch in home.watch if watch.kind == "open"}
    assert sorted(opens) == sorted(names) and opens[names[0]]
    for name in names:
        assert opens[name] == tuple(text.replace(names[0], name) for text in opens[names[0]])
    parser = chatparse.ResponseParser(template, prefix="")
    pieces = ["Hi ", opens[names[140]][0], "body", "</f>", " end"]
    events = [event for piece in pieces for event in parser.feed(piece)]
    events += parser.finalize()[1]
    ours = ("ok", chatparse.parse_response("".join(pieces), template, prefix=""))
    assert same_outcome(ours, reference_one_shot(template, "".join(pieces), prefix="")[:2])
    assert any(e["type"] == "region_open" and e["field"] == names[140] for e in events)


# --- a literal past the DFA table limits ---------------------------------------------------------


def _periodic(n: int, salt: int) -> str:
    """n chars of a 26-char period: a literal that overlaps itself every 26 chars, with 27 char
    classes, so past about 3,700 chars its DFA is over `MAX_TABLE_CELLS`."""
    return "".join(chr(0x61 + (7 * i + salt) % 26) for i in range(n))


def _long_close(literal: str) -> dict:
    return {
        "start_anchor": "<s>",
        "fields": {"content": {}, "x": {"open": "<x>", "close": literal}},
    }


def test_a_literal_past_the_table_limits_keeps_a_literal_form():
    """A literal list too large for the compiler's DFA is still a literal form, which the runtime
    builds in linear time and finds with `str.find`, not a `regex` fallback, which retries from
    every position and reads the literal's beginning again each time (12 s to stream the
    literal itself at 9,000 chars)."""
    literal = _periodic(5000, next(_SALT))
    source = chatparse.compile_template(_long_close(literal))
    assert "RegexFallback(" not in source
    assert "X_CLOSE = Literal(" in source
    pair = [literal, "<|end|>"]
    source = chatparse.compile_template(_long_close(pair))  # type: ignore[arg-type]
    assert "RegexFallback(" not in source and "X_CLOSE = Literals(" in source
    # A pattern that is only literal text too, its alternatives in its own order; a pattern
    # with anything else (a class here) stays on the fallback.
    template = _long_close(literal)
    del template["fields"]["x"]["close"]
    template["fields"]["x"]["close_pattern"] = f"(?:<\\|end\\|>|{literal})"
    source = chatparse.compile_template(template)
    assert "RegexFallback(" not in source
    assert f'X_CLOSE = Literals(\n    "<|end|>",\n    "{literal}",' in source
    template["fields"]["x"]["close_pattern"] = f"[ab]{literal}"
    assert "X_CLOSE = RegexFallback(" in chatparse.compile_template(template)


@pytest.mark.parametrize("n", [256])
def test_the_stream_finder_grows_linearly_with_a_literal(n):
    """A region's candidate finder (runtime/search.py `text_end_finder`) spells each literal's
    prefixes only up to `CUT_OFF_MAX` chars: one alternative per prefix of a 4,000-char literal
    was an 8 MB `re`, seconds to build at the first chunk."""
    from chatparse.runtime.charclass import CharSet
    from chatparse.runtime.search import Heads, text_end_finder

    salt = next(_SALT)
    small, large = (
        len(text_end_finder([Heads(CharSet(), [_periodic(size, salt)])])[0].pattern)
        for size in (n, 8 * n)
    )
    assert large < 1.5 * small, (small, large)
    # and it still finds a literal cut off anywhere past the spelled prefixes
    literal = _periodic(8 * n, salt)
    _, candidate = text_end_finder([Heads(CharSet(), [literal])])
    text = "x" * 10 + literal[:-1]
    assert candidate(text, 0) == 10
    assert candidate("x" * 10 + literal[:3], 0) == 10
    assert candidate("x" * 10 + literal[1:], 0) != 10


@pytest.mark.skipif(not HAVE_REFERENCE, reason="needs the reference")
def test_a_long_literal_parses_as_the_reference_does():
    """The literal form of a 4,000-char literal list gives the reference's one-shot result for
    texts that hold it, cut it off, or hold most of it, whole and in chunks."""
    from support import chatparse_outcome, chunkings, reference_one_shot, same_outcome

    literal = _periodic(4000, next(_SALT))
    # 600 distinct chars: 601 classes, past the table limit at any length over 166
    distinct = "".join(chr(0x4E00 + 3 * i) for i in range(600))
    others = "".join(chr(0x4E01 + 3 * i) for i in range(40))  # chars between the literal's
    for close in (literal, [literal, literal[:26]], distinct, f"(?:{literal[:26]}|{literal})"):
        template = _long_close(close)  # type: ignore[arg-type]
        pattern = isinstance(close, str) and close.startswith("(?:")
        if pattern:  # the short alternative first, as written: it wins where both match
            del template["fields"]["x"]["close"]
            template["fields"]["x"]["close_pattern"] = close
        assert "RegexFallback(" not in chatparse.compile_template(template)
        body = close[0] if isinstance(close, list) else literal if pattern else close
        for text in (
            "hi <x>" + body[:-1] + "!" + body + " after",
            "<x>a" + body[:30] + "b" + body[:26] + others + "c",
            "<x>" + body[:2000],
        ):
            expected = reference_one_shot(template, text, "")
            for chunks in chunkings(text, random_splits=1):
                assert same_outcome(chatparse_outcome(template, chunks, ""), expected)
