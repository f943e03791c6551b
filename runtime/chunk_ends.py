"""Which last char a generated fast path lets a chunk end in: `ChunkEnds`, a dict from char to bool.

In: what the compiler decided for a region (compiler/planning/fast_path.py): the ASCII chars a
chunk may end in (the module's `X_TAIL`), and `keeps`, the chars that may keep a watched
delimiter's lead run alive or start one (`\\s` of `\\s*<tool_call>`), a `CharSet` whose non-ASCII
members the installed `regex` decides (runtime/charclass.py measures them). Out: `ends[char]`,
whether a chunk without stoppers that ends in `char` goes to the region whole (else its trailing
run is held, or the general path takes it).

Why a dict: the ASCII answers are its entries, and a non-ASCII char is asked of `keeps` once (a
bisection over the measured tables, some 150 ns) and remembered, so a chunk of Chinese or
accented text costs one lookup, as one of English does. (It went to the general path, some 3 us
a chunk, where no table was consulted.)
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from .charclass import CharSet

# The non-ASCII chars remembered per region at most: the answers of a text in any script fit,
# and a stream of ever new code points costs a `CharSet` lookup each past it, not memory.
REMEMBERED_MAX = 4096


class ChunkEnds(dict):
    """`ends[char]`: whether a fast path takes a chunk ending in `char` (see the module docstring)."""

    __slots__ = ("keeps",)

    def __init__(self, tail: str, keeps: CharSet | None = None) -> None:
        super().__init__((chr(cp), chr(cp) in tail) for cp in range(0x80))
        self.keeps = keeps  # None: no named class runs, every non-ASCII char ends a chunk

    def __missing__(self, char: str) -> bool:
        plain = self.keeps is None or char not in self.keeps
        if len(self) < 0x80 + REMEMBERED_MAX:
            self[char] = plain
        return plain

    def __repr__(self) -> str:
        tail = "".join(char for char in map(chr, range(0x80)) if self[char])
        return f"ChunkEnds({tail!r}, {self.keeps!r})"
