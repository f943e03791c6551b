"""An xml-inline `tag_pattern` that no DFA runs, read by the standard `re` module, and its TAIL.

In: what a generated module declares for a tag pattern with a look-ahead (qwen3_coder's
`...\\n?(?:</parameter>|(?=<parameter=)|\\Z)`, DeepSeek's DSML `(?=<｜DSML｜parameter\\s+name=)`):
its spelling for `re` in pieces (compiler/codegen/re_source.py), whose classes that `regex`'s
Unicode tables decide are CharSets, and the group renames `re` needs. Out: `groupdicts(text)`,
what `regex.finditer(pattern, text, DOTALL)` gives as groupdicts (`content.parse_xml_inline`'s
`tag_finder`). `SpelledTagTail`: where such a tag's TAIL first matches, for `HalvedTagPattern`.

Why: both engines backtrack alike (leftmost-first, the same greedy and lazy repeats, a look-ahead
tried once, the same rule for an empty match), so where every class and assertion is spelled to
mean what it means in `regex` the matches and groups are the same; `re` reads a tag's `.*?` some
2.5x faster. The matching is what the reference's own `regex.finditer` does (a look-ahead keeps
the pattern off the DFA), in the faster engine.
"""

from __future__ import annotations

from .dfa_tables import merge_group_aliases, spelled_pattern

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from collections.abc import Iterator
    from re import Pattern

    from .charclass import CharSet
    from .delimiter import Delimiter


class SpelledTagPattern:
    """One tag pattern's `re` spelling (`parts`), compiled on first use per kind of text."""

    __slots__ = ("pattern", "parts", "aliases", "_compiled")

    def __init__(
        self, pattern: str, *parts: str | CharSet, aliases: dict[str, str] | None = None
    ) -> None:
        self.pattern = pattern  # as the template writes it (for review and errors)
        self.parts = parts
        self.aliases = aliases or {}
        # For an ASCII text (the tables' classes spelled with their ASCII members, which
        # measures nothing), and for any text (spelled from the measured tables).
        self._compiled: list[Pattern | None] = [None, None]

    def __repr__(self) -> str:
        return f"SpelledTagPattern({self.pattern!r})"

    def groupdicts(self, text: str, pos: int = 0) -> Iterator[dict[str, str | None]]:
        """`regex.finditer(pattern, text, pos, flags=DOTALL)`'s groupdicts, in order."""
        exact = not text.isascii()
        compiled = self._compiled[exact]
        if compiled is None:
            compiled = self._compiled[exact] = spelled_pattern(self.parts, exact)
        aliases = self.aliases
        for found in compiled.finditer(text, pos):
            yield merge_group_aliases(found.groupdict(), aliases)


class SpelledTagTail:
    """A spelled tag's TAIL `LEAD?(?:CORE...|\\Z)` (compiler/planning/tag_halves.py,
    `tail_search`): `find` gives the span of its first match at or after a value's start.

    Where TAIL first matches is where CORE (its branches but `\\Z`, `core`, a delimiter that
    never matches empty) first matches, `q`, or the end of the text when `\\Z` is a branch and
    CORE matches nowhere; or `q - 1` when that char is LEAD and not before the value's start
    (LEAD cannot begin CORE, so no earlier place works). CORE's search finds `q` in C where its
    literals are (`re` would try the whole pattern at every char of the value); `re` then reads
    the match at that place in TAIL's spelling, for where it ends (a look-ahead branch ends
    before what it looks at)."""

    __slots__ = ("pattern", "parts", "core", "lead", "at_end", "_compiled")

    def __init__(
        self, pattern: str, *parts: str | CharSet, core: Delimiter, lead: str, at_end: bool
    ) -> None:
        self.pattern = pattern  # as the template writes it (for review and errors)
        self.parts = parts
        self.core = core
        self.lead = lead
        self.at_end = at_end
        self._compiled: list[Pattern | None] = [None, None]  # for an ASCII text, for any text

    def __repr__(self) -> str:
        return f"SpelledTagTail({self.pattern!r})"

    def find(self, text: str, at: int, text_is_ascii: bool) -> tuple[int, int] | None:
        """The span of TAIL's first match at or after `at`, or None when it has none."""
        found = self.core.search(text, at, text_is_ascii)
        if found is not None:
            start = found[0]
        elif self.at_end:
            start = len(text)
        else:
            return None
        lead = self.lead
        if lead and start > at and text[start - 1] == lead:
            start -= 1
        exact = not text_is_ascii
        compiled = self._compiled[exact]
        if compiled is None:
            compiled = self._compiled[exact] = spelled_pattern(self.parts, exact)
        match = compiled.match(text, start)
        if match is None:
            raise AssertionError(f"{self.pattern}: re disagrees with the search at {start}")
        return start, match.end()
