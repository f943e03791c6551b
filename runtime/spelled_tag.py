"""An xml-inline `tag_pattern` that no DFA runs, read by the standard `re` module.

In: what a generated module declares for a tag pattern with a look-ahead (qwen3_coder's
`...\\n?(?:</parameter>|(?=<parameter=)|\\Z)`, DeepSeek's DSML `(?=<｜DSML｜parameter\\s+name=)`):
its spelling for `re` in pieces (compiler/codegen/re_source.py), whose classes that `regex`'s
Unicode tables decide are CharSets, and the group renames `re` needs. Out: `groupdicts(text)`,
what `regex.finditer(pattern, text, DOTALL)` gives as groupdicts (`content.parse_xml_inline`'s
`tag_finder`).

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

    def groupdicts(self, text: str) -> Iterator[dict[str, str | None]]:
        """`regex.finditer(pattern, text, flags=DOTALL)`'s groupdicts, in order."""
        exact = not text.isascii()
        compiled = self._compiled[exact]
        if compiled is None:
            compiled = self._compiled[exact] = spelled_pattern(self.parts, exact)
        aliases = self.aliases
        for found in compiled.finditer(text):
            yield merge_group_aliases(found.groupdict(), aliases)
