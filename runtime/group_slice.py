r"""A delimiter's one named group, cut out of its match by `str` methods instead of a regex match.

In: the match of a delimiter `R HEAD [W-run] (?P<name>B-run) [V-run] [TAIL [U-run]]`, as the span
the DFA found (`\s*<function=(?P<name>[^>\n]+)>` on `\n<function=get_weather>`). Out:
`GroupSlice.read(span)`, {name: the group}, or None where a run ends at a non-ASCII char, which
the installed tables may count in it: the caller then reads the groups by a regex match.

Guarantee: the group `regex` reports for that match (compiler/planning/group_slices.py proves the
match splits into these parts one way only, and states each run by its ASCII chars). The group
starts where the first HEAD in the span ends, past the W chars after it; it ends before the U
chars at the end of the span, TAIL, and the V chars before TAIL.
"""

from __future__ import annotations


class GroupSlice:
    """See the module docstring; each run is given as its ASCII chars ("": no such run)."""

    __slots__ = ("name", "head", "skip", "before_tail", "tail", "after_tail")

    def __init__(
        self,
        name: str,
        *,
        head: str,
        skip: str = "",
        before_tail: str = "",
        tail: str = "",
        after_tail: str = "",
    ) -> None:
        self.name = name
        self.head = head
        self.skip = skip
        self.before_tail = before_tail
        self.tail = tail
        self.after_tail = after_tail

    def read(self, span: str) -> dict[str, str] | None:
        found = span.find(self.head)
        if found < 0:
            return None  # (not a match of the pattern: the regex reading says what is wrong)
        begin = found + len(self.head)
        if self.skip:
            rest = span[begin:].lstrip(self.skip)
            begin = len(span) - len(rest)
            if rest[:1] >= "\x80":
                return None  # maybe a W char under the installed tables
        end = len(span)
        if self.after_tail:
            end = len(span.rstrip(self.after_tail))
        tail = self.tail
        if tail:
            if end - len(tail) < begin or not span.startswith(tail, end - len(tail)):
                return None  # a U-run that ends at a non-ASCII char, maybe a U char
            end -= len(tail)
        if self.before_tail:
            kept = span[begin:end].rstrip(self.before_tail)
            end = begin + len(kept)
            if kept[-1:] >= "\x80":
                return None  # maybe a V char under the installed tables
        if end <= begin:
            return None  # (the group holds one char at least in a match)
        return {self.name: span[begin:end]}


__all__ = ["GroupSlice"]
