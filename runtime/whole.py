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

from .message import MessageAssembly

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from .delimiter import Delimiter

_UNSEARCHED = object()  # a delimiter not searched yet


class WholeTextEngines(MessageAssembly):
    """`_advance_prefix` and `_advance_whole`."""

    def _advance_prefix(self, events: list[dict]) -> None:
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
        length = len(text)
        # Each delimiter's last answers, as in `_advance_whole`: a search result (and the leftmost
        # pending start, when there is no match) stays the answer while it is at or after `_pos`,
        # and "none" stays the answer for good. So a prefix of many commits (closes of a
        # repeating field) searches each delimiter again only when a commit passed its answer.
        found_at: dict[Delimiter, tuple[int, int] | None] = {}
        pending_at: dict[Delimiter, int | None] = {}
        keep_history = self._keep_history
        self._keep_history = True  # route and consume move `_pos` only: no slicing per commit
        try:
            while True:
                best = None
                best_key = None
                hold = length
                position = self._pos
                for watch in self._region.watch:
                    delimiter = watch.delimiter
                    found = found_at.get(delimiter, _UNSEARCHED)
                    if found is _UNSEARCHED or (found is not None and found[0] < position):
                        found = found_at[delimiter] = delimiter.search(text, position)
                    if found is None:
                        pending = pending_at.get(delimiter, _UNSEARCHED)
                        if pending is _UNSEARCHED or (pending is not None and pending < position):
                            pending = delimiter.leftmost_pending(text, position)
                            pending_at[delimiter] = pending
                        if pending is not None:
                            hold = min(hold, pending)
                        continue
                    start, end = found
                    if end == length and (start == end or delimiter.grows_at_edge):
                        hold = min(hold, start)
                        continue
                    key = (start, start - end, watch.priority)
                    if best_key is None or key < best_key:
                        best, best_key = (watch, start, end), key
                if best is None or best[1] >= hold:
                    self._route(events, hold)
                    break
                watch, start, end = best
                if self._commit_match(events, watch, start, end):
                    break  # the reference's `_process` stops here; the next feed scans again
        finally:
            self._keep_history = keep_history
        if not keep_history and self._pos > self._base:
            self._before = text[self._pos - 1]
            self._text = text[self._pos :]
            self._base = self._pos
        self._scan = self._pos
        self._runs = []
        self._attempted_at = -2

    # --- the whole text at once ---------------------------------------------------------------------

    def _advance_whole(self, events: list[dict] | None) -> None:
        """Read the rest of the text when all of it is here and the input has ended (`parse`).

        No run needs to wait for more input, so each region's next delimiter is found as the
        reference's one-shot pass finds it: one leftmost-first search per watched delimiter over
        the whole text, the winner by (earliest start, longest, priority). Searches run in C up to
        a delimiter's literal (`scan.Heads`), and a search result stays valid until the text
        before its start is consumed, so a delimiter that is not in the text is searched once.
        The streaming path reaches the same message; the differential tests hold both to it.
        """
        text = self._joined()
        offset = self._base  # absolute position of text[0]
        if offset and self._before and self._shape().context_dependent:
            # Searches must see the char before `_base` (`\b`, `^`): one copy, then positions
            # are shifted by the extra char. A search never starts at that char.
            text = self._before + text
            offset -= 1
        keep_history = self._keep_history
        self._keep_history = True  # route and consume move `_pos` only: no slicing per commit
        # Each delimiter's last search result. `_pos` only grows, so a span stays the answer while
        # it starts at or after `_pos`, and "none" stays the answer for good.
        found: dict[Delimiter, tuple[int, int] | None] = {}
        try:
            while not self._stopped:
                position = self._pos
                best = None
                best_start = best_length = 0
                for watch in self._region.watch:  # in priority order: ties keep the first
                    delimiter = watch.delimiter
                    span = found.get(delimiter, _UNSEARCHED)
                    if span is _UNSEARCHED or (span is not None and span[0] < position):
                        span = delimiter.search(text, position - offset)
                        if span is not None and offset:
                            span = (span[0] + offset, span[1] + offset)
                        found[delimiter] = span
                    if span is None or span[0] == self._end:
                        continue  # the reference commits no match at the end of its buffer
                    start = span[0]
                    length = span[1] - start
                    if (
                        best is None
                        or start < best_start
                        or (start == best_start and length > best_length)
                    ):
                        best, best_start, best_length = watch, start, length
                if best is None:
                    self._route(events, self._end)
                    self._close_current(events)
                    break
                if self._commit_match(events, best, best_start, best_start + best_length):
                    self._stopped = True
        finally:
            self._keep_history = keep_history
        self._text = ""
        self._tail = []
