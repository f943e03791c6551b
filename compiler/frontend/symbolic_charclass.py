"""Compile-time char classes: symbolic over `regex`'s Unicode tables, so no output depends on them.

In:  the chars, ranges and class escapes (`\\w`, `\\s`, `\\d`, ...) of one pattern.
Out:
  - `SymbolicCharSet`: the compiler's char set. It is *symbolic*: which non-ASCII code points
    `\\w`, `\\s` and `\\d` hold is left open, because that changes with the `regex` release
    (2026.11 added about 12,800 code points to `\\w`) and the module a compiler writes must
    be the same bytes under every release and right under each. Every code point is split
    by the *cell* it falls in: OTHER (in no named class), SPACE, WORD but not DIGIT, and
    DIGIT. A symbolic set holds (cell, code point) pairs; ASCII code points sit only in
    their own cell (ASCII membership is the same in every release: the runtime checks it),
    every other code point in all four. So `[é]` is é in each cell, `\\w` is the two word
    cells, and `[é]` minus `\\w` stays non-empty, as it is under a release where é is no
    word char. The sets are still ranges over integers (cell * 0x110000 + code point), so
    the algebra, the partition and the DFA work on them unchanged.
    The invariants this relies on (\\d inside \\w, \\s outside \\w) are checked by the
    runtime when it measures the installed `regex`.
  - `partition(sets)`: the coarsest list of disjoint, non-empty classes that covers
    every element and splits none of the given sets. Ordered by smallest element, so
    the class ids a DFA uses are the same on every run.
  - `runtime_expression(cs)`: a Python expression over the runtime's names (`WORD`,
    `SymbolicCharSet.chars(...)`, ...) that builds the set the symbolic one stands for under
    whichever tables the runtime measures (`repr` of a symbolic set gives it).
  - `format_charset(cs)`: a short regex-like text for dumps and comments, e.g. `\\s`,
    `a-z_`, `^<>`, `.`, `\\w--t` (\\w without t); printable ASCII only.
  - `concrete(cs)`: the runtime `SymbolicCharSet` a symbolic set stands for under the tables of the
    `regex` installed here (tests, and the check against `regex` itself).
  - `regex_charset(class_text)`: the set of code points `regex` itself matches with one
    class, measured on every code point. The parser uses it to catch classes whose
    `regex` meaning differs from the documented one (a quirk: `[^\\s\\S]` matches
    everything in `regex`), and falls back to `regex` for them.
"""

from __future__ import annotations

import functools
from bisect import bisect_right
from collections.abc import Iterable
from typing import TYPE_CHECKING

import regex

from chatparse.runtime import charclass as runtime
from chatparse.runtime.charclass import MAX_CODE_POINT

CELL_SIZE = MAX_CODE_POINT + 1
CELLS = ("OTHER", "SPACE", "WORD_NOT_DIGIT", "DIGIT")
_TOP = len(CELLS) * CELL_SIZE - 1
_NON_ASCII = (0x80, MAX_CODE_POINT)


def _cell_of_ascii(cp: int) -> int:
    if cp in range(0x30, 0x3A):
        return 3
    if chr(cp) in runtime.WORD:  # the ASCII mask: no measurement
        return 2
    return 1 if chr(cp) in runtime.SPACE else 0


_ASCII_CELLS = tuple(_cell_of_ascii(cp) for cp in range(0x80))


def ascii_cell(cp: int) -> int:
    """The cell of an ASCII code point (the same under every `regex` release)."""
    return _ASCII_CELLS[cp]


@functools.cache
def _ascii_of_cells(cells: frozenset[int]) -> runtime.CharSet:
    """The ASCII code points whose cell is one of `cells`."""
    return runtime.CharSet((cp, cp) for cp in range(0x80) if _ASCII_CELLS[cp] in cells)


def _lift(real: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The symbolic pairs of real code point ranges: ASCII in its own cell, the rest in all."""
    pairs = []
    for lo, hi in real:
        for cp in range(lo, min(hi, 0x7F) + 1):
            cell_base = _ASCII_CELLS[cp] * CELL_SIZE
            pairs.append((cell_base + cp, cell_base + cp))
        lo = max(lo, 0x80)
        if lo <= hi:
            pairs.extend((k * CELL_SIZE + lo, k * CELL_SIZE + hi) for k in range(len(CELLS)))
    return pairs


class SymbolicCharSet(runtime.CharSet):
    """A symbolic char set (see the module docstring): the runtime's algebra over cells."""

    __slots__ = ()
    _TOP = _TOP

    if TYPE_CHECKING:
        # The runtime's algebra builds `type(self)`, so symbolic sets (never deferred) stay
        # symbolic; only the declared types are narrowed here.
        def __or__(self, other: runtime.CharSet) -> SymbolicCharSet: ...
        def __and__(self, other: runtime.CharSet) -> SymbolicCharSet: ...
        def __sub__(self, other: runtime.CharSet) -> SymbolicCharSet: ...
        @classmethod
        def _from_canonical(cls, ranges: runtime.Ranges) -> SymbolicCharSet: ...

    @classmethod
    def from_ranges(cls, *pairs: tuple[int, int]) -> SymbolicCharSet:
        """The set of the inclusive (first, last) real code point pairs."""
        return cls(_lift(pairs))

    @classmethod
    def chars(cls, text: str) -> SymbolicCharSet:
        return cls.from_ranges(*((ord(ch), ord(ch)) for ch in text))

    @classmethod
    def cells(cls, *cells: int) -> SymbolicCharSet:
        """Every element of the given cells (a named class, or a combination of them)."""
        return cls(
            [(k * CELL_SIZE + 0x80, k * CELL_SIZE + MAX_CODE_POINT) for k in cells]
            + _lift((cp, cp) for cp in range(0x80) if ascii_cell(cp) in cells)
        )

    def __contains__(self, item) -> bool:
        """Membership of an element (an int), or of an ASCII char."""
        if isinstance(item, str):
            if ord(item) > 0x7F:
                raise ValueError(f"which cell {item!r} falls in is not known at compile time")
            item = ascii_cell(ord(item)) * CELL_SIZE + ord(item)
        ranges = self._resolved()
        i = bisect_right(self._starts, item) - 1
        return i >= 0 and item <= ranges[i][1]

    def __invert__(self) -> SymbolicCharSet:
        return ANY - self

    def __iter__(self):
        raise TypeError("a symbolic SymbolicCharSet has no chars to list; see components()")

    def __len__(self) -> int:
        raise TypeError("a symbolic SymbolicCharSet has no size: the Unicode tables are left open")

    def components(self) -> tuple[runtime.CharSet, tuple[runtime.CharSet, ...]]:
        """(its ASCII members, and per cell the non-ASCII code points it holds there)."""
        ascii_members = []
        per_cell: list[list[tuple[int, int]]] = [[] for _ in CELLS]
        for lo, hi in self._resolved():
            for k in range(lo // CELL_SIZE, hi // CELL_SIZE + 1):
                first = max(lo, k * CELL_SIZE) - k * CELL_SIZE
                last = min(hi, k * CELL_SIZE + MAX_CODE_POINT) - k * CELL_SIZE
                if first <= 0x7F:
                    ascii_members.append((first, min(last, 0x7F)))
                    first = 0x80
                if first <= last:
                    per_cell[k].append((first, last))
        return runtime.CharSet(ascii_members), tuple(runtime.CharSet(p) for p in per_cell)

    def literal(self) -> runtime.CharSet | None:
        """The real code points, when the set does not depend on the tables (`[a-z\\u00e9]`),
        else None (`\\w`, `[^\\s<]`)."""
        ascii_members, per_cell = self.components()
        if any(component != per_cell[0] for component in per_cell[1:]):
            return None
        return ascii_members | per_cell[0]

    def representative(self) -> str:
        """A char for witnesses: the smallest ASCII member, else the smallest code point of the
        first cell it holds (a member only under tables that put it in that cell)."""
        ascii_members, _ = self.components()
        return chr(ascii_members.first if ascii_members else self.first % CELL_SIZE)

    def order(self) -> tuple[int, int]:
        """Sort key for class ids: the smallest real code point, then the smallest element, so
        classes come in code point order as far as the tables allow."""
        ascii_members, per_cell = self.components()
        firsts = [c.first for c in (ascii_members, *per_cell) if c]
        return (min(firsts), self.first)

    def __repr__(self) -> str:
        return runtime_expression(self)[0]

    def required_names(self) -> tuple[str, ...]:
        return runtime_expression(self)[1]


ANY = SymbolicCharSet.cells(0, 1, 2, 3)
SPACE = SymbolicCharSet.cells(1)
WORD = SymbolicCharSet.cells(2, 3)
DIGIT = SymbolicCharSet.cells(3)
NOT_SPACE = SymbolicCharSet.cells(0, 2, 3)
NOT_WORD = SymbolicCharSet.cells(0, 1)
NOT_DIGIT = SymbolicCharSet.cells(0, 1, 2)

# The runtime name and the regex spelling of each named set, in the order printers try them.
_NAMED = (
    ("ANY", ".", ANY),
    ("SPACE", "\\s", SPACE),
    ("WORD", "\\w", WORD),
    ("DIGIT", "\\d", DIGIT),
    ("NOT_SPACE", "\\S", NOT_SPACE),
    ("NOT_WORD", "\\W", NOT_WORD),
    ("NOT_DIGIT", "\\D", NOT_DIGIT),
)


def _cells_of(named: SymbolicCharSet) -> frozenset[int]:
    return frozenset(k for k in range(len(CELLS)) if k * CELL_SIZE + 0x80 in named)


# Runtime expressions for every combination of cells: a name where one covers it.
_CELL_EXPRESSIONS = {frozenset(_cells_of(named)): name for name, _, named in _NAMED}
_CELL_EXPRESSIONS.update(
    {
        frozenset({0}): "(NOT_WORD - SPACE)",
        frozenset({2}): "(WORD - DIGIT)",
        frozenset({0, 2}): "(NOT_SPACE - DIGIT)",
        frozenset({0, 3}): "(NOT_WORD - SPACE | DIGIT)",
        frozenset({1, 2}): "(SPACE | WORD - DIGIT)",
        frozenset({1, 3}): "(SPACE | DIGIT)",
        frozenset({1, 2, 3}): "(SPACE | WORD)",
        frozenset({0, 1, 3}): "(NOT_WORD | DIGIT)",
    }
)


def _named_forms(charset: SymbolicCharSet):
    """(name, regex text, missing, extra): `charset` == named - missing | extra, with
    `missing` and `extra` real code point sets (literals under every table)."""
    ascii_members, per_cell = charset.components()
    for name, text, named in _NAMED:
        inside = _cells_of(named)
        outside = [k for k in range(len(CELLS)) if k not in inside]
        kept = {per_cell[k] for k in inside}
        added = {per_cell[k] for k in outside} or {runtime.CharSet()}
        if len(kept) != 1 or len(added) != 1:
            continue
        (kept_real,) = kept
        (extra_real,) = added
        if not extra_real.issubset(kept_real):
            continue
        ascii_inside = _ascii_of_cells(inside)
        missing = (ascii_inside - ascii_members) | (runtime.CharSet((_NON_ASCII,)) - kept_real)
        extra = (ascii_members - ascii_inside) | extra_real
        built = named - SymbolicCharSet.from_ranges(*missing.ranges) | SymbolicCharSet.from_ranges(
            *extra.ranges
        )
        assert built == charset, (name, charset)
        yield name, text, missing, extra


def _cell_terms(charset: SymbolicCharSet):
    """(cells, real set): `charset` is the union of each cells' expression & the real set."""
    ascii_members, per_cell = charset.components()
    groups: dict[runtime.CharSet, list[int]] = {}
    for k, component in enumerate(per_cell):
        groups.setdefault(component, []).append(k)
    for component, cells in groups.items():
        real = (ascii_members & _ascii_of_cells(frozenset(cells))) | component
        if real:
            yield frozenset(cells), real


def _paren(text: str) -> str:
    return f"({text})" if " | " in text else text


@functools.lru_cache(maxsize=4096)
def runtime_expression(charset: SymbolicCharSet) -> tuple[str, tuple[str, ...]]:
    """(the shortest runtime expression for `charset`, the runtime names it uses).

    Every candidate is checked by evaluating it over the symbolic names: the text means the
    set under every table, not only under the installed one.
    """
    candidates: list[str] = []
    literal = charset.literal()
    if literal is not None:
        candidates.append(runtime._plain(literal.ranges))
    for name, _, missing, extra in _named_forms(charset):
        text = name
        if missing:
            text += f" - {_paren(runtime._plain(missing.ranges))}"
        if extra:
            text += f" | {runtime._plain(extra.ranges)}"
        candidates.append(text)
    terms = []
    for cells, real in _cell_terms(charset):
        cells_text = _CELL_EXPRESSIONS[cells]
        plain = _paren(runtime._plain(real.ranges))
        options = [f"{cells_text} & {plain}", f"{plain} & {cells_text}"]
        others = frozenset(range(len(CELLS))) - cells
        if others in _CELL_EXPRESSIONS:
            options.append(f"{plain} - {_CELL_EXPRESSIONS[others]}")
        if real == runtime.ANY:
            options.append(cells_text)
        if not others:
            options.append(plain)
        terms.append(min(options, key=len))
    candidates.append(" | ".join(terms) if terms else 'SymbolicCharSet.chars("")')
    # The shortest candidate that builds the set (the first such in list order): tried shortest
    # first, so most candidates are never evaluated.
    best = next(
        text
        for text in sorted(candidates, key=len)
        if eval(text, {"__builtins__": {}}, dict(_SYMBOLIC_NAMES)) == charset
    )
    return best, tuple(sorted(_names_in(best)))


def _names_in(text: str) -> set[str]:
    """The runtime names an expression uses."""
    words = set(text.replace("(", " ").replace(")", " ").replace(".", " ").split())
    return words & ({name for name, _, _ in _NAMED} | {"CharSet"})


_SYMBOLIC_NAMES = {"CharSet": SymbolicCharSet, **{name: named for name, _, named in _NAMED}}


def concrete(
    charset: SymbolicCharSet, tables: dict[str, runtime.CharSet] | None = None
) -> runtime.CharSet:
    """The runtime set `charset` stands for under `tables` ({"WORD", "SPACE", "DIGIT"}: real
    sets), by default the installed `regex`'s."""
    if tables is None:
        real_cells = _installed_cells()
    else:
        word, space, digit = tables["WORD"], tables["SPACE"], tables["DIGIT"]
        real_cells = (~(word | space), space, word - digit, digit)
    ascii_members, per_cell = charset.components()
    result = runtime.CharSet()
    for real_cell, component in zip(real_cells, per_cell):
        result = result | (real_cell & (ascii_members | component))
    return runtime.CharSet(result.ranges)


@functools.cache
def _installed_cells() -> tuple[runtime.CharSet, ...]:
    """The real chars of each cell under the installed `regex` (0.5 ms of set algebra over the
    Unicode tables, once per process rather than once per class)."""
    word, space, digit = runtime.WORD, runtime.SPACE, runtime.DIGIT
    return (~(word | space), space, word - digit, digit)


def element_of(ch: str) -> int:
    """The element a real char is under the installed tables (for simulators and tests)."""
    cp = ord(ch)
    if cp <= 0x7F:
        return ascii_cell(cp) * CELL_SIZE + cp
    if ch in runtime.DIGIT:
        return 3 * CELL_SIZE + cp
    if ch in runtime.WORD:
        return 2 * CELL_SIZE + cp
    return (CELL_SIZE if ch in runtime.SPACE else 0) + cp


def partition(sets: Iterable[SymbolicCharSet]) -> list[SymbolicCharSet]:
    """The coarsest partition of all elements that refines every set in `sets`.

    Two elements land in the same class exactly when every given set holds both
    or neither of them (so classes need not be contiguous: with `[a-z]` and `\\s`
    the class of everything else is one class with many ranges).
    """
    # Sweep the elements once: each set flips its bit where one of its ranges
    # starts and where it ends, so between two cut points the mask of sets holding
    # the elements is constant, and equal masks form one class.
    flips: dict[int, int] = {0: 0}
    for bit, charset in enumerate(dict.fromkeys(sets)):
        for lo, hi in charset.ranges:
            flips[lo] = flips.get(lo, 0) ^ (1 << bit)
            flips[hi + 1] = flips.get(hi + 1, 0) ^ (1 << bit)
    cuts = sorted(flips)
    by_mask: dict[int, list[tuple[int, int]]] = {}
    mask = 0
    for lo, next_lo in zip(cuts, cuts[1:] + [_TOP + 1]):
        mask ^= flips[lo]
        if lo <= _TOP:
            by_mask.setdefault(mask, []).append((lo, next_lo - 1))
    # Intervals of one mask are sorted and never touch (the mask changes at every cut), so
    # each list is already canonical; ASCII elements outside their own cell are dropped.
    classes = [SymbolicCharSet._from_canonical(tuple(pairs)) & ANY for pairs in by_mask.values()]
    return sorted((c for c in classes if c), key=SymbolicCharSet.order)


# --- printing ------------------------------------------------------------------------

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


@functools.lru_cache(maxsize=4096)
def format_charset(charset: SymbolicCharSet) -> str:
    """The shortest of several spellings: a named class, ranges, `^` + the complement,
    or a named class with additions and `--` removals (as in `\\w--_`)."""
    for _, text, named in _NAMED:
        if charset == named:
            return text
    if not charset:
        return "^."
    candidates = []
    literal = charset.literal()
    if literal is not None:
        candidates.append(format_ranges(literal.ranges))
        candidates.append("^" + format_ranges((~literal).ranges))
    for _, text, missing, extra in _named_forms(~charset):
        if not missing:
            candidates.append(f"^{text}{format_ranges(extra.ranges)}")
    for _, text, missing, extra in _named_forms(charset):
        removed = f"--{format_ranges(missing.ranges)}" if missing else ""
        candidates.append(f"{text}{format_ranges(extra.ranges)}{removed}")
    terms = []
    for cells, real in _cell_terms(charset):
        spelled = _CELL_EXPRESSIONS[cells].strip("()")
        for name, text, _ in sorted(_NAMED, key=lambda named_set: -len(named_set[0])):
            spelled = spelled.replace(name, text)
        terms.append(f"({spelled}&&{format_ranges(real.ranges)})")
    candidates.append("|".join(terms))
    # The positive classes read better: `\\w--_` over `^\\W_`, `^\\s<` over `\\S--<`.
    return min(
        candidates, key=lambda text: len(text) + 2 * any(n in text for n in ("\\S", "\\W", "\\D"))
    )


# --- the regex oracle ----------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def every_code_point() -> str:
    """One string holding each code point 0..0x10FFFF once, lone surrogates included (the
    runtime's tables are measured from the same string, so it is built once)."""
    text = runtime._every_code_point()
    runtime.measure_named_classes(text)
    return text


@functools.lru_cache(maxsize=1024)
def regex_charset(class_text: str) -> runtime.CharSet:
    """The code points that `regex` matches with the one-char pattern `class_text`."""
    runs = regex.compile(f"(?:{class_text})+", regex.DOTALL).finditer(every_code_point())
    return runtime.CharSet((run.start(), run.end() - 1) for run in runs)
