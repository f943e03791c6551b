r"""One open, close or start-anchor delimiter: its DFA, plus whole-text search, named groups and
the `regex` fallback.

In: what a generated module declares for one delimiter pattern: the DFA tables (`dfa_tables.py`) or,
for a pattern a DFA cannot express, just the pattern text (`fallback=True`). Out: `Delimiter`,
which the region parser steps (`DfaTables`), searches (`search.py`, `fallback.py`) and reads named
groups with. This class only dispatches between the DFA and the `regex` paths and caches what
they work out once per delimiter; the modules named above say what each path guarantees.
"""

from __future__ import annotations

import re

from . import fallback
from . import search as dfa_search
from ._lazy import compiled as compiled_regex
from .dfa_tables import DfaTables, Row, merge_group_aliases, spelled_pattern

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from .charclass import CharSet
    from .group_slice import GroupSlice
    from .search import Heads

_UNSET: Any = object()
_DOTALL = 16  # regex.DOTALL, without importing `regex` before it is needed


class Delimiter(DfaTables):
    """An anchored DFA for one open, close or start-anchor pattern, with per-character memo tables."""

    # A look-ahead fallback's wait (`RegexFallback`): (lead chars, the literal, the chars its
    # look-ahead waits over after them); None for the others.
    waits_after: tuple[CharSet, str, CharSet] | None = None
    # Whether a match that ends before the edge of the prefix must survive the text going on
    # (`survives_edge`): every pattern; not the literal forms, whose match is final there (a
    # literal list in the reference, or a pattern that is one literal or a list of them, which
    # reads nothing past its match and has no assertion).
    checks_edge = True
    # What a `regex` fallback's pattern holds, as the compiler read it (compiler/planning/fallback_plan.py;
    # `RegexFallback` declares them): the loop it begins with, (class, literal after it or None,
    # greedy), or None; whether an attempt may look behind its start; whether it may assert the
    # end of the text (`$`, `\Z`). A DFA delimiter has none of them.
    lead_loop: tuple[str, str | None, bool] | None = None
    looks_behind = False
    asserts_end = False
    # A literal form's literals, in the order its search tries them, with `span_at` (the match
    # whose literal is found at a place): what `whole.LiteralScan` searches together. None for
    # the other forms.
    alternatives: tuple[str, ...] | None = None

    __slots__ = (
        "source",
        "pattern",
        "fallback",
        "has_groups",
        "_compiled",
        "single_literal",
        "literal_overlaps",
        "grows_at_edge",
        "_heads",
        "groups_parts",
        "groups_aliases",
        "group_slice",
        "_groups",
        "_lead",
        "anchored_parts",
        "_anchored",
    )

    def __init__(
        self,
        source: str,
        pattern: str,
        *,
        classes: tuple[CharSet, ...] = (),
        rows: tuple[dict[int, int] | Row, ...] = (),
        ends: dict[int, Any] | None = None,
        starts: tuple[int, int, int] = (1, 1, 1),
        fallback: bool = False,
        has_groups: bool = False,
        literal: bool = False,
        groups_parts: tuple[str | CharSet, ...] | None = None,
        groups_aliases: dict[str, str] | None = None,
        group_slice: GroupSlice | None = None,
        single_literal: str | None = None,
        heads: Any = None,
        first_chars: CharSet | None = None,
        stretches: dict[int, dict[str, int]] | None = None,
        loops: dict[int, CharSet] | None = None,
        lookahead_ends: dict[int, int] | None = None,
        before_lookahead: tuple[Any, ...] | None = None,
        anchored: tuple[str | CharSet, ...] | None = None,
    ) -> None:
        # `single_literal`, `heads`, `first_chars`, `stretches` and `loops` are the compiler's
        # analysis, declared by the constructors of delimiter_forms.py (None: nothing to say; for
        # `first_chars`, a match may begin anywhere). The runtime never works them out itself.
        super().__init__(
            classes, rows, ends, starts, stretches, loops, lookahead_ends, before_lookahead
        )
        self._first = first_chars
        self.source = source
        self.pattern = pattern
        self.fallback = fallback
        self.has_groups = has_groups
        # The `re` spelling that reads the named groups of a match the DFA found, when the
        # pattern has no anchored one (below): source pieces and CharSets, as `anchored`.
        self.groups_parts = groups_parts
        self.groups_aliases = groups_aliases or {}
        # Where the compiler proved the one named group's place in a match (runtime/group_slice.py):
        # cut out by `str` methods, before any regex match.
        self.group_slice = group_slice
        self._groups: list[Any] = [None, None]  # for ASCII spans, for any span
        # The reference's streaming edge rule (`ResponseParser._can_grow`): a complete match at the
        # edge of the text received so far is held unless it is a literal no other literal of its
        # list extends. Only the prefix's end uses it (see `whole.PrefixEngine`).
        self.grows_at_edge = not literal
        self._compiled: Any = None
        self.single_literal = single_literal
        single = self.single_literal or ""
        # Whether two occurrences can overlap: some proper suffix is also a prefix ("aa" in "aaa").
        self.literal_overlaps = any(single.startswith(single[k:]) for k in range(1, len(single)))
        self._heads: Any = heads
        self._lead: Any = _UNSET  # fallback only: see `lead`
        # The `re` spelling one anchored match at a candidate start may use (the compiler proved
        # its backtracking linear): source pieces and CharSets; compiled on first use.
        self.anchored_parts = anchored
        self._anchored: list[Any] = [None, None]  # for ASCII text, for any text

    def __repr__(self) -> str:
        return f"Delimiter({self.source})"

    @property
    def compiled(self):
        """The pattern compiled by `regex` (DOTALL), for named groups and the fallback path."""
        if self._compiled is None:
            self._compiled = compiled_regex(self.pattern, _DOTALL)
        return self._compiled

    def groups_reader(self, text: str, start: int, end: int):
        """What reads the groups of the match at text[start:end]: the anchored spelling when the
        module declares one, else the groups spelling (`groups_parts`), each spelled from the
        tables when the span is not ASCII (see `_spelled`); else `compiled`, the `regex`
        pattern."""
        if self.anchored_parts is not None:
            return self.anchored_pattern(not text[start:end].isascii())
        if self.groups_parts is not None:
            exact = not text[start:end].isascii()
            return self._groups[exact] or self._spelled(self.groups_parts, self._groups, exact)
        return self.compiled

    def group_values(self, found) -> dict[str, str | None]:
        """The named groups of a match by `groups`, under the pattern's own names
        (`merge_group_aliases`)."""
        return merge_group_aliases(found.groupdict(), self.groups_aliases)

    def survives_edge(self, text: str, extended: str, start: int, end: int) -> bool:
        """Whether the match text[start:end], which ends before the end of `text`, stays the match
        when the text goes on: the reference's edge rule (5.24, `ResponseParser._can_grow`) for a
        pattern, which matches again at `start` with the text followed by one char that is
        neither a newline nor the end (`extended`: `text` + "\\x00") and keeps the match only if
        its span and named groups come out the same. `$` before a trailing newline and `\\Z` in
        a look-ahead fail it."""
        compiled = self.compiled
        found = compiled.match(extended, start)
        if found is None or found.span() != (start, end):
            return False
        return not self.has_groups or found.groupdict() == compiled.match(text, start).groupdict()

    # --- stepping ---------------------------------------------------------------------------------

    # --- one anchored attempt, and whole-string search ----------------------------------------------

    def match_at(self, text: str, start: int, *, final: bool) -> tuple[str, int]:
        """One anchored attempt at `start` over `text` (the text known so far).

        Returns ("match", end), ("none", -1) or, when `final` is false and more input could still
        change the outcome, ("pending", -1). This is the run the region parser makes, done in one go.
        """
        if self.fallback:
            return fallback.match_at(self, text, start, final=final)
        return DfaTables.match_at(self, text, start, final=final)

    def span_at(self, text: str, at: int, size: int, floor: int) -> tuple[int, int]:
        """A literal form's match whose literal of `size` chars is at `at`, its lead run not
        reaching back before `floor` (`alternatives`; the forms of delimiter_forms.py)."""
        raise TypeError(f"{self.source} has no literal form")

    def search(
        self, text: str, pos: int = 0, text_is_ascii: bool | None = None
    ) -> tuple[int, int] | None:
        """Leftmost-first search over a complete string (the input ends with `text`), in linear
        time for a DFA (`search.search`). A caller that searches one text many times says
        whether it is ASCII (`text.isascii()`, asked once), else a search that needs it asks."""
        if self.fallback:
            return fallback.search(self, text, pos)
        return dfa_search.search(self, text, pos, text_is_ascii)

    def leftmost_pending(self, text: str, pos: int) -> int | None:
        """The first start >= pos whose anchored run is still alive at the end of `text` (where
        `match_at(text, start, final=False)` says "pending"); linear for a DFA."""
        if self.fallback:
            lead = self.lead
            if lead is not None and lead[3] is not None:
                return fallback.pending_by_literal(self, text, pos)
            return fallback.pending_by_search(self, text, pos)
        return dfa_search.leftmost_pending(self, text, pos)

    def iter_spans(self, text: str) -> Iterator[tuple[int, int]]:
        """Spans of `regex.finditer(pattern, text)`: non-overlapping, leftmost-first."""
        return dfa_search.iter_spans(self, text)

    def groupdicts(self, text: str) -> Iterator[dict[str, str | None]]:
        """`regex.finditer(pattern, text)`'s groupdicts; spans found in linear time by the DFA."""
        return dfa_search.groupdicts(self, text)

    def last_match_end(self, text: str) -> int | None:
        """End of the last match of `finditer(text)` (see `search.last_match_end`), or None."""
        return dfa_search.last_match_end(self, text)

    def anchored_matcher(self, text: str, text_is_ascii: bool | None = None) -> Any:
        """`match(text, start)` of the anchored spelling that reads `text` as `regex` does
        (`anchored_pattern`), or None when the module declares none. `text_is_ascii`:
        `text.isascii()` when the caller knows it."""
        if self.anchored_parts is None:
            return None
        if text_is_ascii is None:
            text_is_ascii = text.isascii()
        return self.anchored_pattern(not text_is_ascii).match

    def anchored_pattern(self, exact: bool) -> re.Pattern:
        """The compiled `anchored_parts` (see `_spelled`)."""
        return self._anchored[exact] or self._spelled(self.anchored_parts, self._anchored, exact)

    @staticmethod
    def _spelled(parts: Any, cache: list[Any], exact: bool) -> re.Pattern:
        """`parts` compiled (`dfa_tables.spelled_pattern`), kept in `cache[exact]`."""
        pattern = cache[exact] = spelled_pattern(parts or (), exact)
        return pattern

    @property
    def heads(self) -> Heads | None:
        """What every match begins with (see `search.Heads`), as declared, or None."""
        if type(self._heads) is tuple:  # declared (lead, literals): built on first use
            self._heads = dfa_search.Heads(*self._heads)
        return self._heads

    # --- the regex fallback's lead (see `fallback.find_lead`) --------------------------------------

    @property
    def lead(self) -> tuple[Any, ...] | None:
        """`fallback.find_lead`, worked out once; None for a DFA delimiter."""
        if self._lead is _UNSET:
            self._lead = fallback.find_lead(self) if self.fallback else None
        return self._lead

    @property
    def waits_on_lead(self) -> bool:
        """Whether an attempt is known to be pending while its text to the end is lead chars."""
        lead = self.lead
        return lead is not None and lead[2] is not None

    def lead_run_end(self, text: str, pos: int) -> int:
        """Where the run of lead chars from `pos` ends, when an attempt whose text to the end is
        lead chars only is known to be pending (see `lead`); -1 when that is not known."""
        lead = self.lead
        if lead is None or lead[2] is None:
            return -1
        return lead[2].match(text, pos).end()

    @property
    def needs_history(self) -> bool:
        """Whether a `regex` attempt may look further back than the char before its start
        (look-behind, `\\G`, `\\K`, reverse matching): the region parser then keeps the
        whole output. Others see the char before (for `\\b`, `^`) and what follows."""
        return self.fallback and self.looks_behind
