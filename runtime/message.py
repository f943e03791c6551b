"""The parser's state, the text buffer, and message assembly: where routed text and committed
delimiters become the message dict and the events.

In: from an engine, "route the text up to here to the current region" (`_route`) and "this
delimiter matched there" (`_commit_match`). Out: the message (`_output`: each closed region's
value, after its content parser, transform and tool-argument coercion, stored as the field says:
once, repeated, or joined) and the reference's events, appended to the caller's list (None: build
none, as `parse` does). Every event dict is built here, by the constructors of `events.py`.

Guarantee: text reaches a region's body exactly once and in order; a region's value is stored
once, when it closes; an event list receives region_open before any chunk of that region and
region_close last.
"""

from __future__ import annotations

from .coerce import coerce_tool_call
from .events import region_chunk, region_close, region_malformed, region_open

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from typing import Any, ClassVar

    from .delimiter import Delimiter
    from .events import Event
    from .regions import Field, Region, Watch

# What a region's value can raise because of the model's output (bad JSON, a missing key, a wrong
# type). A template error the compiler cannot see (a `content_args` that is not a dict raises
# AttributeError) still raises in lenient mode.
MALFORMED_ERRORS = (ValueError, KeyError, TypeError, IndexError)
# The buffer's routed text is dropped at once while what stays is at most this long (a stream's
# chunks: the buffer is then empty whenever nothing is held), else once it is no shorter than what
# stays (`ParserState._drop_before`).
DROP_ALWAYS = 64
# A region's text is kept as pieces, one per chunk, the newest this many merged into one past
# that many (`_merge_newest`); a generated fast path appends its chunks (`RegionParser.fast_taken`).
BODY_PIECES_MAX = 128
_IMMUTABLE = (str, int, float, bool, type(None))


def endless_empty_region(chosen: Watch, start: int) -> ValueError:
    """The error of an open that matches empty where a close just matched empty: the region would
    open and close forever at `start` (the reference hangs; chatparse raises)."""
    return ValueError(
        f"Field '{chosen.field.name}': its open delimiter {chosen.delimiter.source} and a "
        f"close delimiter both match the empty string at position {start}, so the "
        "region would open and close forever (the reference parser hangs here)."
    )


class Shape:
    """What `RegionParser` derives from the class attributes of a generated module."""

    __slots__ = ("defaults", "flat_defaults", "required", "keep_history", "context_dependent")

    def __init__(self, parser: type[ParserState]) -> None:
        defaults = self.defaults = parser.template.get("defaults", {})
        self.required = tuple(f.name for f in parser.fields if not f.optional)
        self.flat_defaults = all(type(value) in _IMMUTABLE for value in defaults.values())
        self.keep_history = any(r.keeps_history for r in (parser.home, *parser.regions.values()))
        delimiters = [d for f in parser.fields for d in (f.open, f.close) if d is not None]
        self.context_dependent = any(len(set(d.starts)) != 1 for d in delimiters)


class ParserState:
    """The attributes every engine reads and writes (`RegionParser.__init__` sets them), and the
    buffer: the text not yet routed, from absolute position `_base`."""

    template: dict
    fields: tuple[Field, ...]
    home: Region
    regions: dict[str, Region]
    _text: str
    _tail: list[str]
    _end: int
    _base: int
    _pos: int
    _before: str
    _scan: int
    _runs: list[Any]
    _run_config: tuple[list[Any], int, int]
    _lead_checked: dict[tuple[int, int], int]
    _lead_anchors: dict[int, tuple[int, int]]
    _waits_checked: dict[tuple[int, int], int]
    _region: Region
    region_opened: bool
    region_body: list[str]
    _captures: dict[str, str]
    _output: dict[str, Any]
    _tool_params: Any
    _malformed_event: bool
    _event_captures: bool
    _event_offsets: bool
    _finalized: bool
    _stopped: bool
    _zero_width_close_at: int
    _keep_history: bool
    _shape_of_template: ClassVar[Shape]

    @classmethod
    def _shape(cls) -> Shape:
        """Facts about the template every parser of it needs, worked out once per class."""
        shape = cls.__dict__.get("_shape_of_template")
        if shape is None:
            shape = cls._shape_of_template = Shape(cls)
        return shape

    def _forget_fallback_checks(self) -> None:
        """A commit restarts the runs: what the `regex` fallbacks' attempts learnt about the text
        (`_lead_checked`, `_lead_anchors`, `_waits_checked`) is for runs that are gone. Only
        those fallbacks fill them: most commits find them empty."""
        if self._lead_checked or self._lead_anchors or self._waits_checked:
            self._lead_checked.clear()
            self._lead_anchors.clear()
            self._waits_checked.clear()

    def _drop_before(self, position: int, text: str) -> None:
        """Drop the buffer's text before `position` (`text`: the buffer, joined), which is routed
        or consumed: when what stays is short, or no longer than what goes. A chunk may hold
        thousands of delimiters, and dropping at each commit would copy the rest of the chunk
        each time (quadratic in its length); this way a char is copied a bounded number of
        times. Kept, the text before `_pos` stays in the buffer, which only `_pos` says is done
        with (as with `_keep_history`)."""
        cut = position - self._base
        if len(text) - cut > DROP_ALWAYS and 2 * cut < len(text):
            return
        self._before = text[cut - 1]
        self._text = text[cut:]
        self._base = position

    def _joined(self) -> str:
        """The text from `_base` to the end, as one string (joining the tail once)."""
        if self._tail:
            if not self._text and len(self._tail) == 1:
                self._text = self._tail[0]  # `parse`'s whole text: no copy
            else:
                self._text = "".join((self._text, *self._tail))
            self._tail = []
        return self._text

    # --- regions -----------------------------------------------------------------------------------


class MessageAssembly(ParserState):
    """Routing text to the current region, committing a delimiter, and the message it builds."""

    def _commit_match(
        self, events: list[Event] | None, chosen: Watch, start: int, end: int
    ) -> bool:
        """Route the text before the match, then open or close. True when the reference would stop
        reading here: a zero-width close of a region that received nothing."""
        if start > self._pos:
            self._route(events, start)
        captures = (
            self._read_captures(chosen.delimiter, start, end) if chosen.delimiter.has_groups else {}
        )
        # Everything before `end` is routed or consumed (`_drop_before`); runs restart there.
        if end > self._base and not self._keep_history:
            self._drop_before(end, self._joined())
        self._pos = self._scan = end
        self._runs = []
        self._forget_fallback_checks()
        zero_width = start == end
        if chosen.kind == "open":
            if zero_width and self._zero_width_close_at == start:
                raise endless_empty_region(chosen, start)
            self._open(events, chosen.field, captures, start, end)
            self._zero_width_close_at = -1
            return False
        had_content = self.region_opened
        explicit = not self._at_home()
        if captures:
            # 5.24: the close's named groups join the open's in the transform's scope, and a
            # close capture beats an open capture of the same name (a group that did not take
            # part leaves the open's value).
            self._captures.update(captures)
        self._close_current(events, start, end)
        self._zero_width_close_at = start if (zero_width and explicit) else -1
        return zero_width and not had_content

    def _read_captures(self, delimiter: Delimiter, start: int, end: int) -> dict[str, str]:
        """Named groups, cut out of the span the DFA found where the compiler proved where the
        one group lies (`Delimiter.group_slice`), else read by one match on it
        (`Delimiter.groups_reader`)."""
        text = self._joined()
        base = self._base
        group_slice = delimiter.group_slice
        if group_slice is not None and start >= base:
            found_slice = group_slice.read(text[start - base : end - base])
            if found_slice is not None:
                return found_slice
        if base == 0 or start > base:
            context, offset = text, base
        else:
            context, offset = self._before + text, base - 1
        start -= offset
        found = delimiter.groups_reader(context, start, end - offset).match(context, start)
        if found is None or found.end() != end - offset:
            raise AssertionError(
                f"{delimiter.source}: regex disagrees with the DFA at {start + offset}-{end}"
            )
        values = delimiter.group_values(found)
        return {name: value for name, value in values.items() if value is not None}

    def _route(self, events: list[Event] | None, until: int) -> None:
        """Send the text from `_pos` to `until` to the current region (dropped in the null sink)."""
        begin = self._pos
        if until <= begin:
            return
        text = self._joined()
        chunk = text[begin - self._base : until - self._base]
        self._pos = until
        if not self._keep_history:
            self._drop_before(until, text)
        field = self._region.field
        if field is None:
            return
        if not self.region_opened:
            if events is not None:
                # The implicit region opens where its first text starts (an empty span).
                events.append(
                    region_open(field.name, None, (begin, begin) if self._event_offsets else None)
                )
            self.region_opened = True
        self._add_to_body(chunk)
        if events is not None:
            events.append(region_chunk(field.name, chunk, field.dirty))

    def _route_chunk(self, text: str) -> list[Event]:
        """`_route` for a whole chunk while nothing is held: all of `text` goes to the region."""
        begin = self._pos
        end = begin + len(text)
        self._pos = self._base = self._scan = self._end = end
        self._before = text[-1]
        field = self._region.field
        if field is None:
            return []
        self._add_to_body(text)
        chunk = region_chunk(field.name, text, field.dirty)
        if self.region_opened:
            return [chunk]
        self.region_opened = True
        return [
            region_open(field.name, None, (begin, begin) if self._event_offsets else None),
            chunk,
        ]

    def _add_to_body(self, chunk: str) -> None:
        """Append to the region's text, as the generated fast path does: one piece per chunk,
        the newest `BODY_PIECES_MAX` merged into one past that many (`_merge_newest`)."""
        body = self.region_body
        body.append(chunk)
        if len(body) > BODY_PIECES_MAX:
            self._merge_newest()

    def _merge_newest(self) -> None:
        """Merge the newest `BODY_PIECES_MAX` pieces of the body into one, then fold it into the
        pieces before it (`_fold_body`). So a region streamed in 4-char chunks is a few long
        strings and at most `BODY_PIECES_MAX` short ones (one string per chunk would cost some
        50 bytes each). All of the newest: merging only half left the other half's small pieces
        in front of the merged one, folded into it one by one, copying it each time."""
        body = self.region_body
        newest = "".join(body[-BODY_PIECES_MAX:])
        del body[-BODY_PIECES_MAX:]
        body.append(newest)
        self._fold_body()

    def _fold_body(self) -> None:
        """Merge the body's last piece with the one before while it is at least half as long.
        So each piece is more than twice as long as the next (a few dozen pieces for any text),
        and a merge makes a char's piece at least 1.5 times as long: each char is copied
        O(log n) times. (Merging only a piece at least as long as the one before leaves a row of
        pieces each a little shorter than the one before, which never merge.)"""
        body = self.region_body
        while len(body) > 1 and 2 * len(body[-1]) >= len(body[-2]):
            last = body.pop()
            body[-1] += last

    def _open(
        self,
        events: list[Event] | None,
        field: Field,
        captures: dict[str, str],
        start: int,
        end: int,
    ) -> None:
        """Open `field`'s region on its open delimiter's match, `start` to `end`, closing the
        current region there (an empty span at `start`)."""
        if self.region_opened:
            # (A region that received nothing stores nothing, and what closing it would reset
            # is set below.)
            self._close_current(events, start, start)
        self._region = self._entered(self.regions[field.name], end)
        self._captures = captures
        self.region_body = []
        self.region_opened = True
        if events is not None:
            # `captures=True` and `offsets=True` (extensions) put the open's named groups and
            # its match's span on the event.
            events.append(
                region_open(
                    field.name,
                    dict(captures) if self._event_captures else None,
                    (start, end) if self._event_offsets else None,
                )
            )

    def _at_home(self) -> bool:
        """Whether the current region is the home region, as written or in its after-start form."""
        region = self._region
        return region is self.home or region is self.home.after_start

    @staticmethod
    def _entered(region: Region, position: int) -> Region:
        """The form of `region` that text from `position` on is parsed in: its after-start form
        past buffer position 0, where a `^` of its delimiters cannot match."""
        return region.after_start if position and region.after_start is not None else region

    def _close_current(self, events: list[Event] | None, start: int, end: int) -> None:
        """Close the current region, consuming `start` to `end`: its close delimiter's match, or
        an empty span where an open of another region or the end of the input closes it."""
        field = self._region.field
        if field is not None and self.region_opened:
            span = (start, end) if self._event_offsets else None
            self._store_closed(events, field, "".join(self.region_body), span)
        self._region = self._entered(self.home, end)
        self._captures = {}
        self.region_body = []
        self.region_opened = False

    def _store_closed(
        self, events: list[Event] | None, field: Field, body: str, span: tuple[int, int] | None
    ) -> None:
        """Store the value of a closed region whose text is `body` (`_store_value`); in lenient
        mode a value that does not parse is left out, with a `region_malformed` event."""
        if not self._malformed_event:
            self._store_value(events, field, body, span)
            return
        try:
            self._store_value(events, field, body, span)
        except MALFORMED_ERRORS as exc:
            # Lenient mode: the region's value is left out of the message; the event carries
            # the error text and the raw body, and parsing goes on.
            if events is not None:
                events.append(region_malformed(field.name, str(exc), body, span))

    def _store_value(
        self,
        events: list[Event] | None,
        field: Field,
        body: str,
        span: tuple[int, int] | None,
    ) -> None:
        """Parse the closed region's body into its value and put it in the message."""
        value = field.value(body, self._captures)
        if self._tool_params and field.coerce:
            if field.coerce is not True:
                raise TypeError(field.coerce)
            value = coerce_tool_call(value, self._tool_params, field.typed)
        if field.join is not None:
            if not isinstance(value, str):
                raise ValueError(
                    f"Field '{field.name}': 'join' requires each match to parse to a string, "
                    f"got {type(value).__name__}."
                )
            previous = self._output.get(field.name)
            self._output[field.name] = value if previous is None else previous + field.join + value
        elif field.repeats:
            self._output.setdefault(field.name, []).append(value)
        else:
            self._output[field.name] = value
        if events is not None:
            events.append(region_close(field.name, value, span))
