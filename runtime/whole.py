"""The engines that read a complete text: bulk (`parse`, the whole output at once) and prefix
(the truncated prompt prefix, with the reference's edge rule at its end).

In: the whole text in the parser's buffer. Out: routed text and committed delimiters
(`message.MessageAssembly`), as the reference's one-shot pass finds them: one leftmost-first
`Delimiter.search` per watched delimiter, the winner by `regions.winner`.

Guarantee: the reference's message (and, for the prefix, its `initial_events`); the streaming
engine reaches the same message and the differential tests hold both to the reference. A search
result stays valid until the text before its start is consumed, so a delimiter that is not in the
text is searched once.
"""

from __future__ import annotations

import re

from .message import MessageAssembly, endless_empty_region
from .regions import UNBUILT, winner

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from typing import Any

    from .delimiter import Delimiter
    from .events import Event
    from .regions import Watch

_UNSEARCHED: Any = object()  # a delimiter not searched yet


class SearchMemo:
    """Each delimiter's last answers over one complete text.

    `_pos` only grows, so a search result (and the leftmost pending start, when there is no match)
    stays the answer while it is at or after the position asked, and "none" stays the answer for
    good. So a text of many commits (closes of a repeating field) searches each delimiter again
    only when a commit passed its answer. `offset` is the absolute position of `text[0]`.

    The bulk loop (`_advance_whole`) reads `found` and `scans` itself and calls `search` when an
    answer is missing or passed: that check is its inner loop, kept inline there.
    """

    __slots__ = (
        "text",
        "offset",
        "found",
        "scans",
        "_pending",
        "_extended",
        "_survives",
        "_ascii",
    )

    def __init__(self, text: str, offset: int = 0) -> None:
        self.text = text
        self.offset = offset
        self.found: dict[Delimiter, tuple[int, int] | None] = {}
        # Each `LiteralScan`'s last answer (watch, start, end), kept as `found` is.
        self.scans: dict[LiteralScan, tuple[Watch, int, int] | None] = {}
        # The prefix engine's (`pending`, `survives_edge`), made on first use there.
        self._pending: dict[Delimiter, int | None] | None = None
        self._extended: str | None = None  # the prefix's text + "\x00", for `survives_edge`
        self._survives: dict[tuple[Delimiter, tuple[int, int]], bool] | None = None
        self._ascii: bool | None = None  # text.isascii(), asked once when a search needs it

    def match(self, delimiter: Delimiter, position: int) -> tuple[int, int] | None:
        """The delimiter's leftmost-first match at or after absolute `position`, or None."""
        span = self.found.get(delimiter, _UNSEARCHED)
        if span is _UNSEARCHED or (span is not None and span[0] < position):
            span = self.search(delimiter, position)
        return span

    def search(self, delimiter: Delimiter, position: int) -> tuple[int, int] | None:
        """Search from absolute `position`, and keep the answer in `found`."""
        offset = self.offset
        if self._ascii is None and delimiter.anchored_parts is not None:
            self._ascii = self.text.isascii()
        span = delimiter.search(self.text, position - offset, self._ascii)
        if span is not None and offset:
            span = (span[0] + offset, span[1] + offset)
        self.found[delimiter] = span
        return span

    def survives_edge(self, delimiter: Delimiter, span: tuple[int, int]) -> bool:
        """`Delimiter.survives_edge` for a match of the prefix (offset 0), asked once per match."""
        key = (delimiter, span)
        if self._survives is None:
            self._survives = {}
        survives = self._survives.get(key)
        if survives is None:
            if self._extended is None:
                self._extended = self.text + "\x00"
            survives = delimiter.survives_edge(self.text, self._extended, *span)
            self._survives[key] = survives
        return survives

    def pending(self, delimiter: Delimiter, position: int) -> int | None:
        """The first start at or after `position` whose run is alive at the end of the text
        (`Delimiter.leftmost_pending`); only asked with `offset` 0."""
        if self._pending is None:
            self._pending = {}
        pending = self._pending.get(delimiter, _UNSEARCHED)
        if pending is _UNSEARCHED or (pending is not None and pending < position):
            pending = self._pending[delimiter] = delimiter.leftmost_pending(self.text, position)
        return pending


class LiteralScan:
    """The watches of a region, all of a literal form (`Delimiter.alternatives`), searched
    together: one `re` of all their literals, longest first, finds the first place where one of
    them is. The watches that match there are those with a literal that the one found begins
    with (each with the first of its own literals that does: the one its own search takes, as
    any literal that is there too is a prefix of the longest), and of their matches (`span_at`:
    with the lead run before the literal, or the trail run after it) the `winner` is the first
    match of them all.

    The compiler declares it for a region (`Region(literal_scan=True)`, compiler/planning/
    literal_scan.py) where no literal begins with a char that a lead run of the region may
    hold: a watch whose first literal is further on then starts further on too (its lead run
    cannot reach back over the literal found). The `re` is fixed strings of at most
    `search.CUT_OFF_MAX` chars each: it reads at most their total length from any position.
    """

    __slots__ = ("_search", "_at")

    def __init__(self, watches: tuple[Watch, ...]) -> None:
        literals = {literal for w in watches for literal in w.delimiter.alternatives or ()}
        # found literal -> (watch, the length of its literal there) of each watch that matches
        self._at: dict[str, tuple[tuple[Watch, int], ...]] = {}
        for found in literals:
            entries = []
            for w in watches:
                for literal in w.delimiter.alternatives or ():
                    if found.startswith(literal):
                        entries.append((w, len(literal)))
                        break
            self._at[found] = tuple(entries)
        longest_first = sorted(literals, key=lambda literal: (-len(literal), literal))
        self._search = re.compile("|".join(map(re.escape, longest_first))).search

    def first(self, text: str, pos: int) -> tuple[Watch, int, int] | None:
        """The first match at or after `pos` of the scanned watches: (watch, start, end)."""
        found = self._search(text, pos)
        if found is None:
            return None
        at = found.start()
        entries = self._at[found.group()]
        if len(entries) == 1:
            ((w, size),) = entries
            return (w, *w.delimiter.span_at(text, at, size, pos))
        return winner((w, *w.delimiter.span_at(text, at, size, pos)) for w, size in entries)


class WholeTextEngines(MessageAssembly):
    """The prefix engine (`_advance_prefix`) and the bulk engine (`_advance_whole`)."""

    # --- the prefix: the reference's edge rule ---------------------------------------------------

    def _advance_prefix(self, events: list[Event]) -> None:
        """Process the truncated prefix exactly as the reference does, edge included.

        The end of the prefix is a chunk boundary the reference cannot avoid, and there its
        partial-match search decides: per delimiter, a complete match anywhere (the input treated
        as ended) beats a partial one that starts earlier, and a complete match at the edge is
        held only if it could grow (`ResponseParser._can_grow`: a regex or an extendable literal
        list). Reproducing that here makes `initial_events` and the message equal the reference's
        `parse_response(text, prefix=...)`; from the first held position on, the ordinary run
        scanner continues, which gives the one-shot result for the text that follows.
        """
        text = self._text  # the whole truncated prefix; positions are absolute here (base 0)
        memo = SearchMemo(text)
        keep_history = self._keep_history
        self._keep_history = True  # route and consume move `_pos` only: no slicing per commit
        try:
            while True:
                hold, matches = self._prefix_matches(memo)
                best = winner(matches)
                if best is None or best[1] >= hold:
                    self._route(events, hold)
                    break
                if self._commit_match(events, *best):
                    break  # the reference's `_process` stops here; the next feed scans again
        finally:
            self._keep_history = keep_history
        if not keep_history and self._pos > self._base:
            self._before = text[self._pos - 1]
            self._text = text[self._pos :]
            self._base = self._pos
        self._scan = self._pos
        self._runs = []
        self._lead_anchors.clear()
        self._waits_checked.clear()
        # The text held from here (a match at the edge, an attempt still alive) is not stepped:
        # `_feed`'s unstepped shortcut for the null sink must not skip it (it may end a match).
        self._prefix_unstepped = self._pos < self._end

    def _prefix_matches(self, memo: SearchMemo) -> tuple[int, list[tuple[Watch, int, int]]]:
        """Where the edge rule holds the text from (the prefix's length: nowhere), and the matches
        that may be committed: per watched delimiter, its match unless it sits at the edge and
        could grow there, else the start of its leftmost pending run holds."""
        length = len(memo.text)
        hold = length
        matches = []
        position = self._pos
        for watch in self._region.watch:
            delimiter = watch.delimiter
            found = memo.match(delimiter, position)
            if found is None:
                pending = memo.pending(delimiter, position)
                if pending is not None:
                    hold = min(hold, pending)
                continue
            start, end = found
            if end == length and (start == end or delimiter.grows_at_edge):
                hold = min(hold, start)
                continue
            if end < length and delimiter.checks_edge and not memo.survives_edge(delimiter, found):
                hold = min(hold, start)  # 5.24: it leans on the edge (`$` before a last "\n")
                continue
            matches.append((watch, start, end))
        return hold, matches

    # --- the whole text at once ---------------------------------------------------------------------

    def _advance_whole(self) -> None:
        """Read the rest of the text when all of it is here and the input has ended (`parse`).

        No run needs to wait for more input, so each region's next delimiter is found as the
        reference's one-shot pass finds it: one leftmost-first search per watched delimiter over
        the whole text, the winner by `winner`'s rule (or the region's `LiteralScan`, which finds
        it by one search). Searches run in C up to a delimiter's literal
        (`search.Heads`), and a search result stays valid until the text before its start is
        consumed (`SearchMemo`), so a delimiter that is not in the text is searched once.

        `parse` wants the message only, so no event is built, and the loop keeps the position,
        the region, its field and its text in locals, with the memo's lookups and the tie-break
        inline (this loop is most of a short message's time): what `_commit_match` does per commit (route the text
        before the match, open or close, the reference's stop at a zero-width close of an empty
        region), without the event machinery. The differential tests hold the two to the same
        message.
        """
        text = self._joined()
        offset = self._base  # absolute position of text[0]
        if offset and self._before and self._shape().context_dependent:
            # Searches must see the char before `_base` (`\b`, `^`): one copy, then positions
            # are shifted by the extra char. A search never starts at that char.
            text = self._before + text
            offset -= 1
        memo = SearchMemo(text, offset)
        found, scans, search = memo.found, memo.scans, memo.search
        home, regions, end = self.home, self.regions, self._end
        region, position = self._region, self._pos
        field = region.field
        body, opened = self.region_body, self.region_opened
        zero_width_close_at = self._zero_width_close_at
        # `_store_closed` without its lenient-mode check per value.
        store = self._store_closed if self._malformed_event else self._store_value
        # The reference commits no match that starts at the end of its buffer (so there, nothing
        # is searched: every match would start there).
        while position < end:
            scan = region.scan
            if scan is not None:  # the region's `LiteralScan` finds the winner
                if scan is UNBUILT:
                    scan = region.scan = LiteralScan(region.watch)
                best = scans.get(scan, _UNSEARCHED)
                if best is _UNSEARCHED or (best is not None and best[1] < position):
                    best = scan.first(text, position - offset)
                    if best is not None and offset:
                        best = (best[0], best[1] + offset, best[2] + offset)
                    scans[scan] = best
                if best is None or best[1] == end:
                    break
                chosen, start, stop = best
            else:
                chosen = None
                for entry in region.watch:
                    span = found.get(entry.delimiter, _UNSEARCHED)
                    if span is _UNSEARCHED or (span is not None and span[0] < position):
                        span = search(entry.delimiter, position)
                    if span is None or span[0] == end:
                        continue
                    if chosen is None:
                        chosen, (start, stop) = entry, span
                        continue
                    # `winner`: the earliest start, then the longest, then the watch's priority
                    # (`region.watch` is sorted by it, so a later entry wins only by its span).
                    if span[0] < start or (span[0] == start and span[1] > stop):
                        chosen, (start, stop) = entry, span
                if chosen is None:
                    break
            if start > position and field is not None:
                body.append(text[position - offset : start - offset])
                opened = True
            position = stop
            delimiter = chosen.delimiter
            captures = self._read_captures(delimiter, start, stop) if delimiter.has_groups else {}
            zero_width = start == stop
            if chosen.kind == "open":
                if zero_width and zero_width_close_at == start:
                    raise endless_empty_region(chosen, start)
                if opened and field is not None:
                    store(None, field, "".join(body), None)
                region = regions[chosen.field.name]
                if stop and region.after_start is not None:
                    region = region.after_start
                field = region.field
                self._captures, body, opened = captures, [], True
                zero_width_close_at = -1
                continue
            if captures:
                self._captures.update(captures)  # 5.24: a close capture beats the open's
            explicit = region is not home and region is not home.after_start
            if opened and field is not None:
                store(None, field, "".join(body), None)
            had_content, opened, body, self._captures = opened, False, [], {}
            region = home.after_start if stop and home.after_start is not None else home
            field = region.field
            zero_width_close_at = start if (zero_width and explicit) else -1
            if zero_width and not had_content:
                self._stopped = True  # the reference's `_process` stops here for good
                break
        if not self._stopped:
            # The end of the input: the rest goes to the current region, which it closes
            # (`_close_current`).
            if position < end and field is not None:
                body.append(text[position - offset : end - offset])
                opened = True
            if opened and field is not None:
                store(None, field, "".join(body), None)
            region = self._entered(home, end)
            position, body, opened, self._captures = end, [], False, {}
        self._pos = position
        self._region, self.region_body, self.region_opened = region, body, opened
        self._zero_width_close_at = zero_width_close_at
        self._text = ""
        self._tail = []
