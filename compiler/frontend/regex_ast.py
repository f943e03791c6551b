"""The delimiter-regex AST: frozen nodes with source spans and one-line dumps.

In:  built by regex_parse.parse_regex from a pattern string.
Out: a tree of the nodes below. Every node has `span = (start, end)`, the slice of the
     pattern it came from (excluded from equality), and `dump()`, a one-line text in
     the style of RE2's parse_test: `cat{lit{<} lit{t} star{cls{\\s}}}`.
Guaranteed: `Literal` holds one char; `Concat` and `Alternation` hold two or more
     items (the parser folds single items and uses `Empty` for no items); repeats
     keep the source's min/max/greediness (the parser drops nothing the `regex`
     module would honour).

`nodes(root)` walks a tree without recursion.

Dump vocabulary: `emp{}`, `lit{c}`, `cls{...}` (see charclass.format_charset),
`cat{...}`, `alt{...}`, `star{e}`, `plus{e}`, `que{e}`, `rep{m,n e}` / `rep{m, e}`,
with an `n` prefix for lazy repeats (`nstar{e}`), `cap{e}` / `cap{name: e}` for
capturing groups, `grp{e}` for `(?:...)`, and `begin`, `end`, `end_z`,
`word_boundary`, `not_word_boundary` for assertions.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .symbolic_charclass import SymbolicCharSet, format_char, format_charset

Span = tuple[int, int]

ASSERTION_KINDS = ("begin", "end", "end_z", "word_boundary", "not_word_boundary")


@dataclass(frozen=True)
class RegexNode:
    """Base class: every node knows where it came from and how to print itself."""

    if TYPE_CHECKING:

        @property
        def span(self) -> Span: ...  # each node's dataclass has the field

    def dump(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class Empty(RegexNode):
    """Matches the empty string (an empty pattern, alternative or group)."""

    span: Span = field(default=(0, 0), compare=False)

    def dump(self) -> str:
        return "emp{}"


@dataclass(frozen=True)
class Literal(RegexNode):
    """One char, matched exactly (no flags: case-sensitive)."""

    char: str
    span: Span = field(default=(0, 0), compare=False)

    def __post_init__(self) -> None:
        if len(self.char) != 1:
            raise ValueError(f"Literal holds one char, got {self.char!r}")

    def dump(self) -> str:
        return "lit{" + _literal_text(self.char) + "}"


def _literal_text(ch: str) -> str:
    """Printable ASCII as is (braces and backslash escaped), anything else as an escape."""
    if ch in "{}\\":
        return "\\" + ch
    if " " <= ch <= "~":
        return ch
    return format_char(ord(ch))


@dataclass(frozen=True)
class CharClass(RegexNode):
    """One char from a set: `[...]`, `.`, `\\s` `\\w` `\\d` and their negations."""

    charset: SymbolicCharSet
    span: Span = field(default=(0, 0), compare=False)

    def dump(self) -> str:
        return "cls{" + format_charset(self.charset) + "}"


@dataclass(frozen=True)
class Concat(RegexNode):
    items: tuple[RegexNode, ...]
    span: Span = field(default=(0, 0), compare=False)

    def dump(self) -> str:
        return "cat{" + " ".join(item.dump() for item in self.items) + "}"


@dataclass(frozen=True)
class Alternation(RegexNode):
    """Ordered choice: the first alternative that leads to a match wins."""

    items: tuple[RegexNode, ...]
    span: Span = field(default=(0, 0), compare=False)

    def dump(self) -> str:
        return "alt{" + " ".join(item.dump() for item in self.items) + "}"


@dataclass(frozen=True)
class Repeat(RegexNode):
    """`item` between `min` and `max` times (None: no limit); lazy when not greedy."""

    item: RegexNode
    min: int
    max: int | None
    greedy: bool = True
    span: Span = field(default=(0, 0), compare=False)

    def dump(self) -> str:
        lazy = "" if self.greedy else "n"
        inner = self.item.dump()
        shorthand = {(0, None): "star", (1, None): "plus", (0, 1): "que"}.get((self.min, self.max))
        if shorthand:
            return f"{lazy}{shorthand}{{{inner}}}"
        upper = "" if self.max is None else str(self.max)
        if self.max == self.min:
            return f"{lazy}rep{{{self.min} {inner}}}"
        return f"{lazy}rep{{{self.min},{upper} {inner}}}"


@dataclass(frozen=True)
class Group(RegexNode):
    """`(...)`, `(?P<name>...)`, `(?<name>...)` or the non-capturing `(?:...)`."""

    item: RegexNode
    name: str | None = None
    capturing: bool = True
    span: Span = field(default=(0, 0), compare=False)

    def dump(self) -> str:
        if not self.capturing:
            return "grp{" + self.item.dump() + "}"
        if self.name is not None:
            return f"cap{{{self.name}: {self.item.dump()}}}"
        return "cap{" + self.item.dump() + "}"


@dataclass(frozen=True)
class Assertion(RegexNode):
    """A zero-width test: `begin` (^ \\A), `end` ($), `end_z` (\\Z \\z), word boundaries."""

    kind: str
    span: Span = field(default=(0, 0), compare=False)

    def __post_init__(self) -> None:
        if self.kind not in ASSERTION_KINDS:
            raise ValueError(f"unknown assertion kind {self.kind!r}")

    def dump(self) -> str:
        return self.kind


def nodes(root: RegexNode) -> Iterator[RegexNode]:
    """Every node under `root`, `root` first, then each child's nodes in order (pre-order),
    without recursion: a pattern may nest deeper than the Python stack."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (Concat, Alternation)):
            stack.extend(reversed(node.items))
        elif isinstance(node, (Repeat, Group)):
            stack.append(node.item)
