"""Char classes as immutable sets of code points, and regex's \\w \\s \\d as named sets.

In:  code point ranges (from the installed `regex`, a string of chars or set algebra).
Out: `CharSet` values: canonical (sorted, disjoint, non-adjacent inclusive ranges over
     0..0x10FFFF), hashable, with `in` by bisection and `| & - ~` algebra.
Guaranteed:
  - Two CharSets are equal exactly when they hold the same code points.
  - SPACE, WORD and DIGIT are what the `regex` installed *here* matches with \\s, \\w and
    \\d (str pattern, default flags), whichever `regex` release compiled the module that
    uses them: they are measured from it, once per process, on every code point. They differ
    from `str`: \\s leaves out \\x1c-\\x1f (which `str.isspace` accepts), and \\w grows with
    the Unicode version of the `regex` release (2026.11 added about 12,800 code points).
  - Measuring costs about 30 ms, so it is deferred: a set built from the named sets answers
    `in` for an ASCII char from a 128-bit mask (ASCII membership is the same in every `regex`
    release; the measurement checks it), and only the first non-ASCII char, or a question about
    the whole set (its ranges, size or equality), measures. An output of only ASCII text never
    pays for the Unicode tables.
  - `repr(charset)` is a short Python expression that rebuilds the set from the names
    of this module (`CharSet`, `SPACE`, `WORD`, `DIGIT`, `NOT_*`, `ANY`); it is pure
    ASCII with every control char, quote, backslash, surrogate and non-ASCII char
    escaped. `required_names()` lists the names it uses. (Generated modules print the
    compiler's own spelling of a class, which never depends on the tables.)
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable

MAX_CODE_POINT = 0x10FFFF

Ranges = tuple[tuple[int, int], ...]


def _canonical(pairs: Iterable[tuple[int, int]], top: int = MAX_CODE_POINT) -> Ranges:
    """Sort and merge overlapping or touching (first, last) pairs within 0..top."""
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(pairs):
        if not 0 <= lo <= hi <= top:
            raise ValueError(f"bad code point range ({lo:#x}, {hi:#x})")
        if merged and lo <= merged[-1][1] + 1:
            if hi > merged[-1][1]:
                merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
    return tuple(merged)


def _complement(ranges: Ranges, top: int = MAX_CODE_POINT) -> Ranges:
    out = []
    next_lo = 0
    for lo, hi in ranges:
        if lo > next_lo:
            out.append((next_lo, lo - 1))
        next_lo = hi + 1
    if next_lo <= top:
        out.append((next_lo, top))
    return tuple(out)


def _intersect(a: Ranges, b: Ranges) -> Ranges:
    out = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo = max(a[i][0], b[j][0])
        hi = min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


_ASCII_MASK = (1 << 128) - 1


def _ascii_mask(ranges: Ranges) -> int:
    """Bit `cp` set for each ASCII code point `cp` of `ranges`."""
    mask = 0
    for lo, hi in ranges:
        if lo > 0x7F:
            break
        hi = min(hi, 0x7F)
        mask |= ((1 << (hi - lo + 1)) - 1) << lo
    return mask


class _RangesAttribute:
    """`charset.ranges` is the tuple of pairs; `CharSet.ranges(*pairs)` builds a set.

    Both spellings are part of the interface: generated code rebuilds sets with
    `CharSet.ranges((0x61, 0x7A),)`, and the compiler reads `charset.ranges`.
    """

    def __get__(self, instance, owner):
        if instance is None:
            return owner.from_ranges
        return instance._resolved()


class CharSet:
    """An immutable set of code points (see the module docstring).

    A set is *deferred* while `_ranges` is None: `_build` then computes its ranges on first
    need, and `_ascii` (always present) answers `in` for ASCII chars without computing them.
    """

    __slots__ = ("_ranges", "_starts", "_hash", "_ascii", "_build")

    ranges = _RangesAttribute()
    _TOP = MAX_CODE_POINT  # the largest element (the compiler's symbolic sets go further)

    def __init__(self, pairs: Iterable[tuple[int, int]] = ()) -> None:
        self._set_canonical(_canonical(pairs, self._TOP))

    def _set_canonical(self, ranges: Ranges) -> None:
        self._ranges = ranges
        self._starts = tuple(lo for lo, _ in ranges)
        self._hash = hash(ranges)
        self._ascii = _ascii_mask(ranges)
        self._build = None

    @classmethod
    def _from_canonical(cls, ranges: Ranges) -> CharSet:
        charset = cls.__new__(cls)
        charset._set_canonical(ranges)
        return charset

    @classmethod
    def _deferred(cls, build, ascii_mask: int) -> CharSet:
        """A set whose canonical ranges `build()` returns when first needed."""
        charset = cls.__new__(cls)
        # None marks the set deferred (`_resolved` fills it in); typed as the ranges it becomes.
        charset._ranges = None  # type: ignore[assignment]
        charset._ascii = ascii_mask
        charset._build = build
        return charset

    def _resolved(self) -> Ranges:
        if self._ranges is None:
            self._set_canonical(self._build())
        return self._ranges

    @classmethod
    def from_ranges(cls, *pairs: tuple[int, int]) -> CharSet:
        """The set of the inclusive (first, last) code point pairs."""
        return cls(pairs)

    @classmethod
    def chars(cls, text: str) -> CharSet:
        """The set of the chars of `text`."""
        return cls((ord(ch), ord(ch)) for ch in text)

    # -- queries ----------------------------------------------------------------

    def __contains__(self, ch: str) -> bool:
        cp = ord(ch)
        if cp < 0x80:
            return (self._ascii >> cp) & 1 == 1
        ranges = self._resolved()
        i = bisect_right(self._starts, cp) - 1
        return i >= 0 and cp <= ranges[i][1]

    @property
    def deferred(self) -> bool:
        """Whether the ranges are still to be measured (see the module docstring)."""
        return self._ranges is None

    def ascii_ranges(self) -> Ranges:
        """The ranges of its ASCII members (known without measuring)."""
        pairs = []
        cp = 0
        while cp < 0x80:
            if (self._ascii >> cp) & 1:
                lo = cp
                while cp < 0x80 and (self._ascii >> cp) & 1:
                    cp += 1
                pairs.append((lo, cp - 1))
            cp += 1
        return tuple(pairs)

    def __len__(self) -> int:
        """The number of code points in the set."""
        return sum(hi - lo + 1 for lo, hi in self._resolved())

    def __bool__(self) -> bool:
        return bool(self._resolved())

    def __iter__(self):
        """The chars of the set in code point order (mind the size of big sets)."""
        for lo, hi in self._resolved():
            for cp in range(lo, hi + 1):
                yield chr(cp)

    @property
    def first(self) -> int:
        """The smallest code point (ValueError for the empty set)."""
        ranges = self._resolved()
        if not ranges:
            raise ValueError("the empty CharSet has no first code point")
        return ranges[0][0]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CharSet):
            return NotImplemented
        return self._resolved() == other._resolved()

    def __hash__(self) -> int:
        self._resolved()
        return self._hash

    # -- algebra ----------------------------------------------------------------
    # With a deferred operand the result is deferred too: its ASCII mask is computed now (an int
    # operation), its ranges when first needed.

    def __or__(self, other: CharSet) -> CharSet:
        if self._ranges is None or other._ranges is None:
            return CharSet._deferred(
                lambda: _canonical(self._resolved() + other._resolved()), self._ascii | other._ascii
            )
        return type(self)(self._ranges + other._ranges)

    def __and__(self, other: CharSet) -> CharSet:
        if self._ranges is None or other._ranges is None:
            return CharSet._deferred(
                lambda: _intersect(self._resolved(), other._resolved()), self._ascii & other._ascii
            )
        return type(self)._from_canonical(_intersect(self._ranges, other._ranges))

    def __sub__(self, other: CharSet) -> CharSet:
        if self._ranges is None or other._ranges is None:
            return CharSet._deferred(
                lambda: _intersect(self._resolved(), _complement(other._resolved())),
                self._ascii & ~other._ascii,
            )
        return type(self)._from_canonical(
            _intersect(self._ranges, _complement(other._ranges, self._TOP))
        )

    def __invert__(self) -> CharSet:
        if self._ranges is None:
            return CharSet._deferred(
                lambda: _complement(self._resolved()), ~self._ascii & _ASCII_MASK
            )
        return type(self)._from_canonical(_complement(self._ranges, self._TOP))

    def issubset(self, other: CharSet) -> bool:
        return not (self - other)

    # -- printing ---------------------------------------------------------------

    def __repr__(self) -> str:
        return _expression(self)[0]

    def required_names(self) -> tuple[str, ...]:
        """The module-level names `repr(self)` refers to, sorted."""
        return _expression(self)[1]


# --- regex's classes -----------------------------------------------------------------
# ASCII members: the same in every `regex` release (the measurement below checks it).
_ASCII_CLASSES = {
    "WORD": _ascii_mask(((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))),
    "SPACE": _ascii_mask(((0x09, 0x0D), (0x20, 0x20))),
    "DIGIT": _ascii_mask(((0x30, 0x39),)),
}
_CLASS_PATTERNS = {"WORD": r"\w", "SPACE": r"\s", "DIGIT": r"\d"}
_measured: dict[str, Ranges] = {}


def _every_code_point() -> str:
    """One string holding each code point 0..0x10FFFF once, lone surrogates included.

    Built as UTF-32-LE bytes: the 65,536 words of one plane (from an array, as the machine
    orders it), repeated for the 17 planes, with each word's third byte set to its plane (one
    slice assignment), so no loop over the 1.1M code points runs in Python."""
    import array
    import sys

    plane = array.array("I", range(0x10000))
    if sys.byteorder != "little":
        plane.byteswap()
    planes = (MAX_CODE_POINT + 1) // 0x10000
    words = bytearray(plane.tobytes() * planes)
    words[2::4] = b"".join(bytes((k,)) * 0x10000 for k in range(planes))
    return words.decode("utf-32-le", "surrogatepass")


def measure_named_classes(text: str | None = None) -> dict[str, Ranges]:
    """The ranges of \\w, \\s and \\d as the installed `regex` matches them, measured once
    (on `text`, every code point once, when the caller has that string already).

    Raises RuntimeError when that `regex` breaks what the compiler relies on: the ASCII
    members above, \\d inside \\w, and \\s outside \\w (generated classes are built on those).
    """
    if not _measured:
        from ._lazy import regex_module

        regex = regex_module()
        text = _every_code_point() if text is None else text
        found = {}
        for name, pattern in _CLASS_PATTERNS.items():
            runs = regex.compile(f"(?:{pattern})+", regex.DOTALL).finditer(text)
            found[name] = tuple((run.start(), run.end() - 1) for run in runs)
        for name, ranges in found.items():
            if _ascii_mask(ranges) != _ASCII_CLASSES[name]:
                raise RuntimeError(
                    f"regex {regex.__version__}: {_CLASS_PATTERNS[name]} has other ASCII members "
                    "than every earlier release; chatparse does not support this regex release"
                )
        word = CharSet._from_canonical(found["WORD"])
        if not CharSet._from_canonical(found["DIGIT"]).issubset(word) or (
            CharSet._from_canonical(found["SPACE"]) & word
        ):
            raise RuntimeError(
                f"regex {regex.__version__}: \\d is not inside \\w, or \\s meets \\w; "
                "chatparse does not support this regex release"
            )
        _measured.update(found)
    return _measured


def _named(name: str) -> CharSet:
    return CharSet._deferred(lambda: measure_named_classes()[name], _ASCII_CLASSES[name])


WORD = _named("WORD")
SPACE = _named("SPACE")
DIGIT = _named("DIGIT")
NOT_WORD = ~WORD
NOT_SPACE = ~SPACE
NOT_DIGIT = ~DIGIT
ANY = CharSet._from_canonical(((0, MAX_CODE_POINT),))

# Name -> set, in the order repr() tries them (ties keep the earlier name).
NAMED_SETS: dict[str, CharSet] = {
    "ANY": ANY,
    "SPACE": SPACE,
    "WORD": WORD,
    "DIGIT": DIGIT,
    "NOT_SPACE": NOT_SPACE,
    "NOT_WORD": NOT_WORD,
    "NOT_DIGIT": NOT_DIGIT,
}


# --- repr ----------------------------------------------------------------------------

_NAMED_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}

# Spell a set out char by char only while that stays short.
_MAX_SPELLED_CHARS = 32


def _py_char(cp: int) -> str:
    """One code point inside a double-quoted Python literal, ASCII only."""
    ch = chr(cp)
    if ch in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[ch]
    if 0x20 <= cp < 0x7F:
        return ch
    if cp < 0x100:
        return f"\\x{cp:02x}"
    if cp < 0x10000:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


def _spelled(ranges: Ranges) -> str:
    text = "".join(_py_char(cp) for lo, hi in ranges for cp in range(lo, hi + 1))
    return f'CharSet.chars("{text}")'


def _as_pairs(ranges: Ranges) -> str:
    pairs = ", ".join(f"(0x{lo:X}, 0x{hi:X})" for lo, hi in ranges)
    return f"CharSet.ranges({pairs},)" if len(ranges) == 1 else f"CharSet.ranges({pairs})"


def _plain(ranges: Ranges) -> str:
    """The shortest `CharSet.chars(...)` / `CharSet.ranges(...)` form of `ranges`."""
    if not ranges:
        return 'CharSet.chars("")'
    candidates = [_as_pairs(ranges)]
    if sum(hi - lo + 1 for lo, hi in ranges) <= _MAX_SPELLED_CHARS:
        candidates.append(_spelled(ranges))
    short = tuple(r for r in ranges if r[1] - r[0] < 2)
    long = tuple(r for r in ranges if r[1] - r[0] >= 2)
    if short and long and sum(hi - lo + 1 for lo, hi in short) <= _MAX_SPELLED_CHARS:
        candidates.append(f"{_spelled(short)} | {_as_pairs(long)}")
    return min(candidates, key=len)


_EXPRESSIONS: dict[Ranges, tuple[str, tuple[str, ...]]] = {}


def _expression(charset: CharSet) -> tuple[str, tuple[str, ...]]:
    """(shortest expression, names it uses); first candidate wins ties."""
    cached = _EXPRESSIONS.get(charset._ranges)
    if cached is not None:
        return cached
    candidates: list[tuple[str, tuple[str, ...]]] = []
    for name, named in NAMED_SETS.items():
        if charset == named:
            candidates.append((name, (name,)))
    candidates.append((_plain(charset._ranges), ("CharSet",)))
    for name, named in NAMED_SETS.items():
        # Every range of the difference prints as at least one character, so a named set whose
        # difference has too many ranges cannot give the shortest text. The difference has at
        # least |ranges(named) - ranges(charset)| - 1 ranges (each range boundary of one set that
        # the other lacks is a boundary of the symmetric difference): check that bound first, as
        # computing the difference of the big Unicode tables is what costs.
        budget = len(candidates[0][0]) + len(candidates[-1][0])
        if abs(len(named._ranges) - len(charset._ranges)) - 1 >= budget:
            continue
        missing = (named - charset)._ranges
        extra = (charset - named)._ranges
        if len(missing) + len(extra) >= budget:
            continue
        text = name
        if missing:
            subtrahend = _plain(missing)
            if " | " in subtrahend:
                subtrahend = f"({subtrahend})"
            text = f"{text} - {subtrahend}"
        if extra:
            text = f"{text} | {_plain(extra)}"
        if missing or extra:
            candidates.append((text, tuple(sorted({"CharSet", name}))))
    best = min(candidates, key=lambda candidate: len(candidate[0]))
    if len(_EXPRESSIONS) < 4096:
        _EXPRESSIONS[charset._ranges] = best
    return best
