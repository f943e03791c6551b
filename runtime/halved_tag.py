"""An xml-inline `tag_pattern` `HEAD(?P<value>.*?)TAIL` found by its halves: HEAD's search, then
TAIL's.

In: what a generated module declares for such a tag: the whole tag's finder for the rest of a text
(its `Dfa`, or its `SpelledTagPattern` when a look-ahead keeps it off the DFA), HEAD's `Dfa` (with
its `re` spelling, one attempt of which the compiler proved linear) and TAIL: one literal (glm's
`<arg_key>\\s*(?P<key>.*?)\\s*</arg_key>(?:\\\\n|\\s)*<arg_value>(?P<value>.*?)</arg_value>`), found
by `str.find`, or a `SpelledTagTail` (qwen3_coder's `\\n?(?:</parameter>|(?=<parameter=)|\\Z)`),
found by its branches' search (compiler/planning/tag_halves.py splits the pattern). Out:
`groupdicts(text)`, what `regex.finditer(pattern, text, DOTALL)` gives as groupdicts
(`content.parse_xml_inline`'s `tag_finder`).

Why exact: a match of the tag at a start is a match of HEAD there, so the leftmost start of a tag
is at or after HEAD's leftmost start `s`. There, a backtracking search tries HEAD's ways in order
and, after each, the value's lengths from 0 up, each followed by TAIL: after HEAD's first way,
which ends at `h` (HEAD's own search finds `(s, h)`), the first length that works ends where TAIL
first matches at or after `h`. So when TAIL matches after `h`, the tag's first match is `s` to the
end of that match of TAIL, with HEAD's groups and the value between. Only when it does not might a
later way of HEAD (ending before `h`) be followed by a TAIL: then the whole tag's own finder takes
over from `s` for the rest of the text.

Why faster: the whole tag's search steps its DFA in Python (one `re` attempt of it is not proved
linear: after its value fails to find TAIL, `re` would go back into HEAD and read the rest again
for each way), or, spelled, `re` tries TAIL after every char of the value; HEAD's search is one
`re` attempt per candidate start, and TAIL's one `str.find` or a search of its branches' literals.
Linear time holds where the whole tag's finder does (a DFA's search; a spelled tag's `re` reading
is the reference's own). A spelled tag's halves cost more a tag than its `re` reading of a short
value: a text of short values (`SPELLED_CHARS_PER_TAG`) is read by the spelled tag itself.
"""

from __future__ import annotations

from . import search as dfa_search
from .spelled_tag import SpelledTagPattern

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from collections.abc import Iterator

    from .delimiter import Delimiter
    from .spelled_tag import SpelledTagTail


# A spelled tag's own `re` reading costs some 35 ns a char of value (its lazy value tries TAIL
# after each char) over some 0.9 us a tag, its halves some 2-3 us a tag whatever the value: below
# this many chars of text a tag (tags counted by HEAD's literal), the spelled reading is the faster
# (qwen3_coder's tags break even at some 55 chars, DSML's at some 140).
SPELLED_CHARS_PER_TAG = 96


class HalvedTagPattern:
    """A tag pattern found by HEAD's search and TAIL's (see the module docstring)."""

    __slots__ = ("tag", "head", "tail", "_tag_literal")

    def __init__(
        self, tag: Delimiter | SpelledTagPattern, head: Delimiter, tail: str | SpelledTagTail
    ) -> None:
        # The whole pattern's Dfa or spelling, for the rest of a text where TAIL is not found.
        self.tag = tag
        self.head = head
        self.tail = tail  # a literal, or a SpelledTagTail
        # For a spelled tag: HEAD's one literal, which counts its tags in a text.
        heads = head.heads
        spelled = isinstance(tag, SpelledTagPattern)
        one = spelled and heads is not None and len(heads.literals) == 1
        self._tag_literal = heads.literals[0] if one else None  # type: ignore[union-attr]

    def __repr__(self) -> str:
        return f"HalvedTagPattern({self.tag.pattern!r})"

    def groupdicts(self, text: str) -> Iterator[dict[str, str | None]]:
        """`regex.finditer(pattern, text, flags=DOTALL)`'s groupdicts, in order: by the halves
        (`by_halves`), or, for a spelled tag in a text of short values, by its own reading."""
        literal = self._tag_literal
        if literal is not None and len(text) < SPELLED_CHARS_PER_TAG * (text.count(literal) + 1):
            return self.tag.groupdicts(text)
        return self.by_halves(text)

    def by_halves(self, text: str) -> Iterator[dict[str, str | None]]:
        """`groupdicts` by HEAD's search, then TAIL's (see the module docstring)."""
        head, tail = self.head, self.tail
        heads = head.heads
        text_is_ascii = text.isascii()
        # HEAD's `re` spelling, which reads its groups too (the compiler declares one: see
        # `_finds_by_halves` in compiler/codegen/codemodel.py).
        anchored = head.anchored_matcher(text, text_is_ascii)
        position = 0
        while True:
            # HEAD's leftmost match: most often one `re` attempt at the first place one may
            # start, as HEAD's search begins; else that search, then its groups read alike.
            groups = None
            if heads is not None:
                start = heads.first_start(text, position)
                if start < 0:
                    return  # no place a HEAD may start: no tag either
                groups = anchored(text, start)
            if groups is None:
                found = head.search(text, position, text_is_ascii)
                if found is None:
                    return  # no HEAD from here: no tag either
                start = found[0]
                groups = anchored(text, start)
                if groups is None or groups.end() != found[1]:
                    raise AssertionError(
                        f"{head.source}: regex disagrees with the DFA at {start}-{found[1]}"
                    )
            head_end = groups.end()
            if isinstance(tail, str):
                tail_at = text.find(tail, head_end)
                found = (tail_at, tail_at + len(tail)) if tail_at >= 0 else None
            else:
                found = tail.find(text, head_end, text_is_ascii)
            if found is None:
                yield from self._rest(text, start)
                return
            values = head.group_values(groups)
            values["value"] = text[head_end : found[0]]
            yield values
            position = found[1]

    def _rest(self, text: str, start: int) -> Iterator[dict[str, str | None]]:
        """The whole tag's matches from `start` on, by its own finder."""
        tag = self.tag
        if isinstance(tag, SpelledTagPattern):
            return tag.groupdicts(text, start)
        return dfa_search.groupdicts(tag, text, start)
