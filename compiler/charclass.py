"""Compile-time char class helpers: alphabet partition, class printing, the `regex` oracle.

In:  `CharSet`s (chatparse.runtime.charclass) collected from one pattern.
Out:
  - `partition(sets)`: the coarsest list of disjoint, non-empty CharSets that covers
    every code point 0..0x10FFFF and splits none of the given sets (each given set is
    a union of some classes). Ordered by smallest code point, so the class ids a DFA
    uses are the same on every run.
  - `format_charset(cs)`: a short regex-like text for dumps and comments, e.g. `\\s`,
    `a-z_`, `^<>`, `.`, `\\w--t` (\\w without t); printable ASCII only, so it is safe
    in a one-line comment.
  - `regex_charset(class_text)`: the set of code points `regex` itself matches with one
    class, measured on every code point. The parser uses it to catch classes whose
    `regex` meaning differs from the documented one (a quirk: `[^\\s\\S]` matches
    everything in `regex`), and falls back to `regex` for them.
"""

from __future__ import annotations

import array
import functools
import sys
from collections.abc import Iterable

import regex

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


def partition(sets: Iterable[CharSet]) -> list[CharSet]:
    """The coarsest partition of all code points that refines every set in `sets`.

    Two code points land in the same class exactly when every given set holds both
    or neither of them (so classes need not be contiguous: with `[a-z]` and `\\s`
    the class of everything else is one class with many ranges).
    """
    # Sweep the code points once: each set flips its bit where one of its ranges
    # starts and where it ends, so between two cut points the mask of sets holding
    # the code points is constant, and equal masks form one class.
    flips: dict[int, int] = {0: 0}
    for bit, charset in enumerate(dict.fromkeys(sets)):
        for lo, hi in charset.ranges:
            flips[lo] = flips.get(lo, 0) ^ (1 << bit)
            flips[hi + 1] = flips.get(hi + 1, 0) ^ (1 << bit)
    cuts = sorted(flips)
    by_mask: dict[int, list[tuple[int, int]]] = {}
    mask = 0
    for lo, next_lo in zip(cuts, cuts[1:] + [MAX_CODE_POINT + 1]):
        mask ^= flips[lo]
        if lo <= MAX_CODE_POINT:
            by_mask.setdefault(mask, []).append((lo, next_lo - 1))
    # Intervals of one mask are sorted and never touch (the mask changes at every
    # cut), so each list is already canonical.
    classes = [CharSet._from_canonical(tuple(pairs)) for pairs in by_mask.values()]
    return sorted(classes, key=lambda charset: charset.first)


# --- printing ------------------------------------------------------------------------

# Named sets in the order format_charset tries them; `.` is DOTALL's any char.
_NAMED = (
    (".", ANY),
    ("\\s", SPACE),
    ("\\w", WORD),
    ("\\d", DIGIT),
    ("\\S", NOT_SPACE),
    ("\\W", NOT_WORD),
    ("\\D", NOT_DIGIT),
)
_CLASS_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\f": "\\f", "\v": "\\v"}
_CLASS_SPECIALS = set("\\]^-[{}")


def format_char(cp: int) -> str:
    """One code point as it would be written inside a regex class, ASCII only."""
    ch = chr(cp)
    if ch in _CLASS_ESCAPES:
        return _CLASS_ESCAPES[ch]
    if ch in _CLASS_SPECIALS:
        return "\\" + ch
    if 0x20 <= cp < 0x7F:
        return ch
    if cp < 0x100:
        return f"\\x{cp:02x}"
    if cp < 0x10000:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


def format_ranges(ranges: Iterable[tuple[int, int]]) -> str:
    """`a-z0` style: a range of 3 or more code points with a dash, else each char."""
    parts = []
    for lo, hi in ranges:
        if hi - lo >= 2:
            parts.append(f"{format_char(lo)}-{format_char(hi)}")
        else:
            parts.extend(format_char(cp) for cp in range(lo, hi + 1))
    return "".join(parts)


def _with_named_subsets(charset: CharSet) -> str:
    """`charset` as named classes it contains plus leftover ranges, e.g. `\\s<>`."""
    named = []
    rest = charset
    for text, named_set in _NAMED[1:]:
        if named_set.issubset(rest):
            named.append(text)
            rest = rest - named_set
    return "".join(named) + format_ranges(rest.ranges)


@functools.lru_cache(maxsize=4096)
def format_charset(charset: CharSet) -> str:
    """The shortest of several spellings: a named class, ranges, `^` + the complement,
    or a named class with additions and `--` removals (as in `\\w--_`)."""
    for text, named_set in _NAMED:
        if charset == named_set:
            return text
    if not charset:
        return "^."
    complement = ~charset
    candidates = [
        _with_named_subsets(charset),
        "^" + _with_named_subsets(complement),
    ]
    for text, named_set in _NAMED:
        missing = named_set - charset
        if missing and len(missing.ranges) <= len(charset.ranges):
            extra = format_ranges((charset - named_set).ranges)
            candidates.append(f"{text}{extra}--{format_ranges(missing.ranges)}")
    return min(candidates, key=len)


# --- the regex oracle ----------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def every_code_point() -> str:
    """One string holding each code point 0..0x10FFFF once, lone surrogates included."""
    codes = array.array("I", range(MAX_CODE_POINT + 1))
    if sys.byteorder != "little":
        codes.byteswap()
    return codes.tobytes().decode("utf-32-le", "surrogatepass")


@functools.lru_cache(maxsize=1024)
def regex_charset(class_text: str) -> CharSet:
    """The code points that `regex` matches with the one-char pattern `class_text`."""
    runs = regex.compile(f"(?:{class_text})+", regex.DOTALL).finditer(every_code_point())
    return CharSet((run.start(), run.end() - 1) for run in runs)
