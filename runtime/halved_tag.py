"""An xml-inline `tag_pattern` `HEAD(?P<value>.*?)TAIL` whose TAIL is one literal, found by its
halves: HEAD's search, then `str.find` of TAIL.

In: what a generated module declares for such a tag (glm's `<arg_key>\\s*(?P<key>.*?)\\s*</arg_key>
(?:\\\\n|\\s)*<arg_value>(?P<value>.*?)</arg_value>`): the whole tag's `Dfa`, HEAD's `Dfa` (with its
`re` spelling, one attempt of which the compiler proved linear) and TAIL's literal
(compiler/planning/tag_halves.py splits the pattern). Out: `groupdicts(text)`, what
`regex.finditer(pattern, text, DOTALL)` gives as groupdicts (`content.parse_xml_inline`'s
`tag_finder`), in linear time.

Why exact: a match of the tag at a start is a match of HEAD there, so the leftmost start of a tag
is at or after HEAD's leftmost start `s`. There, a backtracking search tries HEAD's ways in order
and, after each, the value's lengths from 0 up, each followed by TAIL: after HEAD's first way,
which ends at `h` (HEAD's own search finds `(s, h)`), the first length that works ends where TAIL
first occurs at or after `h`. So when TAIL occurs after `h`, the tag's first match is `s` to the
end of that occurrence, with HEAD's groups and the value between. Only when it does not might a
later way of HEAD (ending before `h`) be followed by a TAIL: then the whole tag's linear-time search
(search.py) takes over from `s` for the rest of the text.

Why faster: the whole tag is not proved linear for one `re` attempt (after its value fails to find
TAIL, `re` would go back into HEAD and read the rest again for each way), so its search steps the
DFA in Python; HEAD's search is one `re` attempt per candidate start, and TAIL one `str.find`.
"""

from __future__ import annotations

from . import search as dfa_search

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from collections.abc import Iterator

    from .delimiter import Delimiter


class HalvedTagPattern:
    """A tag pattern found by HEAD's search and TAIL's literal (see the module docstring)."""

    __slots__ = ("tag", "head", "tail")

    def __init__(self, tag: Delimiter, head: Delimiter, tail: str) -> None:
        self.tag = tag  # the whole pattern's Dfa, for the rest of a text where TAIL is not found
        self.head = head
        self.tail = tail

    def __repr__(self) -> str:
        return f"HalvedTagPattern({self.tag.pattern!r})"

    def groupdicts(self, text: str) -> Iterator[dict[str, str | None]]:
        """`regex.finditer(pattern, text, flags=DOTALL)`'s groupdicts, in order."""
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
            tail_at = text.find(tail, head_end)
            if tail_at < 0:
                yield from dfa_search.groupdicts(self.tag, text, start)
                return
            values = head.group_values(groups)
            values["value"] = text[head_end:tail_at]
            yield values
            position = tail_at + len(tail)
