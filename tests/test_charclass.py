"""Char classes: the named sets against the installed `regex` on every code point, deferred
measuring, CharSet algebra and repr, the symbolic sets of the compiler (right under any tables),
the alphabet partition, and class printing."""

from __future__ import annotations

import ast
import json
import pathlib
import string
import subprocess
import sys

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from chatparse.compiler.frontend import symbolic_charclass as symbolic
from chatparse.compiler.frontend.regex_parse import parse_regex
from chatparse.compiler.frontend.symbolic_charclass import (
    concrete,
    every_code_point,
    format_charset,
    partition,
    regex_charset,
    runtime_expression,
)
from chatparse.runtime import charclass
from chatparse.runtime.charclass import (
    ANY,
    DIGIT,
    MAX_CODE_POINT,
    NOT_DIGIT,
    NOT_SPACE,
    NOT_WORD,
    SPACE,
    WORD,
    CharSet,
)

SETTINGS = settings(derandomize=True, max_examples=150, deadline=None)


def measured(pattern: str) -> CharSet:
    """The code points `regex` matches with a one-char pattern, found on every code point."""
    runs = regex.compile(f"(?:{pattern})+", regex.DOTALL).finditer(every_code_point())
    return CharSet((run.start(), run.end() - 1) for run in runs)


# --- the named sets are regex's, on every code point --------------------------------------


@pytest.mark.parametrize(
    "pattern, charset",
    [
        (r"\s", SPACE),
        (r"\w", WORD),
        (r"\d", DIGIT),
        (r"\S", NOT_SPACE),
        (r"\W", NOT_WORD),
        (r"\D", NOT_DIGIT),
        (r"[\s]", SPACE),
        (r"[^\s]", NOT_SPACE),
        (r"[^\w]", NOT_WORD),
        (r"[\W]", NOT_WORD),
        (r"[\d]", DIGIT),
        (".", ANY),
    ],
)
def test_named_sets_equal_regex_on_every_code_point(pattern: str, charset: CharSet) -> None:
    assert measured(pattern) == charset


@pytest.mark.parametrize("pattern, charset", [(r"\s", SPACE), (r"\w", WORD), (r"\d", DIGIT)])
def test_named_sets_agree_with_one_char_matches(pattern: str, charset: CharSet) -> None:
    """Char by char, with `regex.fullmatch`, around every range edge and on a stride."""
    points = set(range(0, MAX_CODE_POINT + 1, 331))
    for lo, hi in charset.ranges:
        points.update({lo - 1, lo, hi, hi + 1})
    compiled = regex.compile(pattern)
    for cp in sorted(p for p in points if 0 <= p <= MAX_CODE_POINT):
        assert (compiled.fullmatch(chr(cp)) is not None) == (chr(cp) in charset), hex(cp)


def test_measuring_checks_what_the_compiler_relies_on() -> None:
    tables = charclass.measure_named_classes()
    word, space, digit = (CharSet(tables[name]) for name in ("WORD", "SPACE", "DIGIT"))
    assert digit.issubset(word) and not space & word
    for cp in range(0x80):
        assert (chr(cp) in word) == (regex.fullmatch(r"\w", chr(cp)) is not None)
        assert (chr(cp) in space) == (regex.fullmatch(r"\s", chr(cp)) is not None)


_PROBE = """
import chatparse.generated.{family} as m
from chatparse.runtime import charclass
m.parse_response({text!r}, prefix={prefix!r})
parser = m.ResponseParser(prefix={prefix!r})
for ch in {text!r}:
    parser.feed(ch)
parser.finalize()
before = bool(charclass._measured)
"\\u3000" in charclass.SPACE  # the probe sees a measurement
print(before, bool(charclass._measured))
"""


@pytest.mark.parametrize("family", ["smollm3", "qwen3_coder", "kimi_k2", "gpt_oss"])
def test_ascii_output_never_measures_the_tables(family: str) -> None:
    """An output of only ASCII text, whole and streamed, never pays for the Unicode tables."""
    path = pathlib.Path(__file__).resolve().parent.parent / "samples" / f"{family}.json"
    sample = json.loads(path.read_text(encoding="utf-8"))
    prefix, text = (sample[key].encode("ascii", "ignore").decode() for key in ("prefix", "text"))
    script = _PROBE.format(family=family, prefix=prefix, text=text)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["False", "True"]


def test_every_code_point_string_is_complete() -> None:
    text = every_code_point()
    assert len(text) == MAX_CODE_POINT + 1
    assert text[0xD800] == "\ud800" and text[0x10FFFF] == "\U0010ffff"
    assert all(ord(text[cp]) == cp for cp in range(0, 0x110000, 4099))
    assert text == "".join(map(chr, range(MAX_CODE_POINT + 1)))


def test_space_is_not_str_isspace() -> None:
    """regex's \\s leaves out \\x1c-\\x1f, which str.isspace accepts."""
    assert all(chr(cp).isspace() for cp in range(0x1C, 0x20))
    assert not any(chr(cp) in SPACE for cp in range(0x1C, 0x20))
    assert "\x85" in SPACE and "\u3000" in SPACE


def test_word_is_not_str_isalnum() -> None:
    r"""regex's \w is not `str.isalnum() or "_"`, in both directions."""
    assert "\u200c" in WORD and not "\u200c".isalnum()  # ZERO WIDTH NON-JOINER
    assert "\u0301" in WORD and not "\u0301".isalnum()  # a combining mark
    assert "\xb2".isalnum() and "\xb2" not in WORD  # SUPERSCRIPT TWO


def test_word_boundary_follows_the_word_class() -> None:
    r"""regex's \b (VERSION0) is exactly: \w on one side and not on the other, the ends
    of the text counting as non-word. Checked next to every code point: in
    "c0 c1 c2 ..." (a space after each), \b stands on both sides of each \w char;
    in "c0ac1ac2a...", \B stands on both sides of each \w char, and at 0."""
    both_sides = [p for lo, hi in WORD.ranges for p in range(2 * lo, 2 * hi + 2)]
    spaced = "".join(ch + " " for ch in every_code_point())
    assert [m.start() for m in regex.finditer(r"\b", spaced)] == both_sides
    joined = "".join(ch + "a" for ch in every_code_point())
    assert [m.start() for m in regex.finditer(r"\B", joined)] == [0] + both_sides


def test_runtime_charclass_imports_only_its_table() -> None:
    """The runtime module stands alone: no regex, no lark, no compiler (lark's split)."""
    tree = ast.parse(pathlib.Path(charclass.__file__).read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add("." * node.level + (node.module or ""))
    assert imported == {"__future__", "array", "bisect", "collections.abc", "sys", "._lazy"}


# --- bracket classes inside patterns -------------------------------------------------------


@pytest.mark.parametrize(
    "pattern",
    [
        r"[\s<]",
        r"[^\s<]",
        r"[\w-]",
        r"[^\W\d]",
        r"[\d-z]",
        r"[a-\d]",
        r"[]a-c]",
        r"[^]-a]",
        r"[\x00-\x1f\\]",
        r"[\u00e9-\U0001F600]",
        r"[\ud800-\udfff]",
        r"[\b\t\n\v\f\r\a]",
        r"[\0\1\12\123\777]",
        r"[--/]",
        r"[[a]",
        r"[a-]",
        r"[\S\s]",
        r"[^\S\n]",
    ],
)
def test_bracket_classes_equal_regex(pattern: str) -> None:
    assert concrete(parse_regex(pattern).charset) == measured(pattern)


def test_regex_charset_is_the_measured_set() -> None:
    assert regex_charset(r"[a-c\s]") == CharSet.chars("abc") | SPACE


# --- CharSet -------------------------------------------------------------------------------

SMALL = st.integers(min_value=0, max_value=200)
ODD = st.sampled_from(
    [0, 9, 10, 13, 34, 39, 92, 0x7F, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0x10FFFF, 0xFFFF, 0x10000]
)
CODE_POINTS = st.one_of(SMALL, ODD, st.integers(min_value=0, max_value=MAX_CODE_POINT))


@st.composite
def charsets(draw) -> CharSet:
    pairs = []
    for _ in range(draw(st.integers(min_value=0, max_value=6))):
        lo = draw(CODE_POINTS)
        hi = min(MAX_CODE_POINT, lo + draw(st.sampled_from([0, 0, 1, 2, 5, 40, 3000])))
        pairs.append((lo, hi))
    charset = CharSet(pairs)
    base = draw(st.sampled_from([None, SPACE, WORD, DIGIT, NOT_WORD, ANY]))
    if base is not None:
        charset = draw(st.sampled_from([base | charset, base - charset, charset - base]))
    return charset


def _universe(*sets: CharSet) -> list[int]:
    """Code points where the sets can differ: every range edge and its neighbours."""
    points = {0, MAX_CODE_POINT}
    for charset in sets:
        for lo, hi in charset.ranges:
            points.update({lo - 1, lo, hi, hi + 1})
    return sorted(p for p in points if 0 <= p <= MAX_CODE_POINT)


@SETTINGS
@given(charsets(), charsets())
def test_algebra_matches_python_sets(a: CharSet, b: CharSet) -> None:
    union, both, only_a, not_a = a | b, a & b, a - b, ~a
    for point in _universe(a, b):
        ch = chr(point)
        assert (ch in union) == (ch in a or ch in b)
        assert (ch in both) == (ch in a and ch in b)
        assert (ch in only_a) == (ch in a and ch not in b)
        assert (ch in not_a) == (ch not in a)
    assert ~not_a == a
    assert union == (b | a) and hash(union) == hash(b | a)


@SETTINGS
@given(charsets())
def test_ranges_are_canonical(charset: CharSet) -> None:
    ranges = charset.ranges
    for (lo, hi), (next_lo, _) in zip(ranges, ranges[1:]):
        assert lo <= hi and hi + 1 < next_lo
    assert CharSet.ranges(*ranges) == charset


@SETTINGS
@given(charsets())
def test_repr_rebuilds_the_set_from_the_names_it_declares(charset: CharSet) -> None:
    text = repr(charset)
    assert text.isascii() and all(ch.isprintable() for ch in text)
    namespace = {name: getattr(charclass, name) for name in charset.required_names()}
    assert eval(text, {"__builtins__": {}}, namespace) == charset


@pytest.mark.parametrize(
    "charset, text",
    [
        (CharSet.chars("<>"), 'CharSet.chars("<>")'),
        (SPACE, "SPACE"),
        (~WORD, "NOT_WORD"),
        (WORD - CharSet.chars("_"), 'WORD - CharSet.chars("_")'),
        (SPACE | CharSet.chars("<"), 'SPACE | CharSet.chars("<")'),
        (CharSet.ranges((0x61, 0x7A)), "CharSet.ranges((0x61, 0x7A),)"),
        (CharSet.chars('"\\\n\x00\ud800'), 'CharSet.chars("\\x00\\n\\"\\\\\\ud800")'),
        (CharSet(), 'CharSet.chars("")'),
        (ANY - CharSet.chars("\n"), 'ANY - CharSet.chars("\\n")'),
    ],
)
def test_repr_examples(charset: CharSet, text: str) -> None:
    assert repr(charset) == text


def test_contains_and_size() -> None:
    charset = CharSet.ranges((0x61, 0x63), (0x78, 0x78))
    assert [ch in charset for ch in "`abcdwxy"] == [
        False,
        True,
        True,
        True,
        False,
        False,
        True,
        False,
    ]
    assert len(charset) == 4 and list(charset) == ["a", "b", "c", "x"]
    assert "\ud800" in ANY and "\ud800" not in WORD
    with pytest.raises(ValueError):
        CharSet.ranges((5, 4))


# --- partition and printing ------------------------------------------------------------------


@st.composite
def symbolic_charsets(draw) -> symbolic.SymbolicCharSet:
    """Sets of the compiler: literal chars and ranges (some non-ASCII) and the named classes."""
    pairs = []
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        lo = draw(st.one_of(SMALL, st.sampled_from(INTERESTING)))
        pairs.append((lo, min(MAX_CODE_POINT, lo + draw(st.sampled_from([0, 1, 5, 300])))))
    charset = symbolic.SymbolicCharSet.from_ranges(*pairs)
    base = draw(st.sampled_from([None, *NAMED_SYMBOLIC]))
    if base is not None:
        charset = draw(
            st.sampled_from([base | charset, base - charset, charset - base, base & charset])
        )
    return charset


# Code points whose class a `regex` release could change, beside ASCII and the range ends.
INTERESTING = [0x80, 0xB2, 0xE9, 0x3000, 0x200B, 0x200C, 0x0660, 0xFF5C, 0x10FFFF]
NAMED_SYMBOLIC = [symbolic.SPACE, symbolic.WORD, symbolic.DIGIT, symbolic.NOT_WORD, symbolic.ANY]


@SETTINGS
@given(st.lists(symbolic_charsets(), max_size=5))
def test_partition_is_the_coarsest_refinement(sets: list[symbolic.SymbolicCharSet]) -> None:
    classes = partition(sets)
    assert all(classes) and [c.order() for c in classes] == sorted(c.order() for c in classes)
    union = symbolic.SymbolicCharSet()
    for index, one in enumerate(classes):
        for other in classes[index + 1 :]:
            assert not one & other
        union = union | one
    assert union == symbolic.ANY
    signatures = []
    for one in classes:
        probe = one.first
        signature = tuple(probe in given for given in sets)
        # Every code point of a class is in exactly the same given sets ...
        for given in sets:
            assert one.issubset(given) or not one & given
        signatures.append(signature)
    # ... and two classes never share a signature (coarsest).
    assert len(set(signatures)) == len(signatures)


def test_partition_orders_classes_by_smallest_code_point() -> None:
    t, lt, space = (
        symbolic.SymbolicCharSet.chars("t"),
        symbolic.SymbolicCharSet.chars("<"),
        symbolic.SPACE,
    )
    classes = partition([t, lt, space])
    assert classes[0].order()[0] == 0 and classes[0] == ~(space | lt | t)
    assert classes[1:] == [space, lt, t]


def test_a_non_ascii_char_beside_a_named_class_splits_by_cell() -> None:
    """`\\s*｜`: whether ｜ is a space is the tables' to say, so it gets a class of each kind."""
    bar = symbolic.SymbolicCharSet.chars("\uff5c")
    classes = partition([symbolic.SPACE, bar])
    assert bar - symbolic.SPACE in classes and bar & symbolic.SPACE in classes
    assert repr(bar - symbolic.SPACE) == 'CharSet.chars("\\uff5c") - SPACE'


# Other tables a `regex` release could have (\d inside \w, \s outside it, ASCII as always).
OTHER_TABLES = {
    "WORD": WORD | CharSet.chars("\uff5c\u00b2") - CharSet.chars("\u00e9\u0660"),
    "SPACE": SPACE | CharSet.chars("\u200b") - CharSet.chars("\u3000"),
    "DIGIT": DIGIT - CharSet.chars("\u0660"),
}


@SETTINGS
@given(symbolic_charsets())
def test_runtime_expression_means_the_set_under_any_tables(
    charset: symbolic.SymbolicCharSet,
) -> None:
    """The printed class builds, from the runtime's names, the set the symbolic one stands for:
    under the installed tables and under other tables alike."""
    text, names = runtime_expression(charset)
    assert text.isascii() and all(ch.isprintable() for ch in text)
    installed = {name: getattr(charclass, name) for name in names}
    assert eval(text, {"__builtins__": {}}, installed) == concrete(charset)
    word, space, digit = OTHER_TABLES["WORD"], OTHER_TABLES["SPACE"], OTHER_TABLES["DIGIT"]
    other = {
        "CharSet": CharSet,
        "ANY": ANY,
        "WORD": word,
        "SPACE": space,
        "DIGIT": digit,
        "NOT_WORD": ~word,
        "NOT_SPACE": ~space,
        "NOT_DIGIT": ~digit,
    }
    assert eval(text, {"__builtins__": {}}, other) == concrete(charset, OTHER_TABLES)


@pytest.mark.parametrize(
    "charset, text",
    [
        (symbolic.SPACE, "\\s"),
        (symbolic.ANY, "."),
        (symbolic.SymbolicCharSet.chars(string.ascii_lowercase), "a-z"),
        (~symbolic.SymbolicCharSet.chars("<>"), "^<>"),
        (symbolic.SPACE | symbolic.SymbolicCharSet.chars("<"), "\\s<"),
        (symbolic.WORD - symbolic.SymbolicCharSet.chars("_"), "\\w--_"),
        (symbolic.SymbolicCharSet.chars("]^-\\\n"), "\\n\\-\\\\-\\^"),  # \\ ] ^ are a range
        (symbolic.SymbolicCharSet.chars("\x00\u00e9\U0001f600"), "\\x00\\xe9\\U0001f600"),
        (symbolic.SymbolicCharSet.chars("\uff5c") - symbolic.SPACE, "(\\S&&\\uff5c)"),
        (symbolic.NOT_SPACE - symbolic.SymbolicCharSet.chars("<\u00e9"), "^\\s<\\xe9"),
    ],
)
def test_format_charset(charset: CharSet, text: str) -> None:
    assert format_charset(charset) == text
