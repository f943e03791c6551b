r"""The streaming region parser that every generated module subclasses.

In: a region automaton (fields, the watch set of each region, the start anchor) that a generated
module declares as class attributes, then the prefix and text chunks. Out: the reference's events
(`region_open`, `region_chunk`, `region_close`) and, at `finalize`, its message dict.

Events are plain dicts with the reference's keys in the reference's order (`events.py` documents
them as TypedDicts; building them inline keeps `typing` out of the import path).

Guarantee: for every way of splitting the text into chunks, the message and the event stream (with
consecutive `region_chunk`s of one field merged) equal the reference's *one-shot* result: the whole
text fed at once after the prefix. Text is held exactly while a delimiter run that starts at or
before it is still alive, and emitted as soon as every such run is dead.

The parser is assembled from one module per responsibility:

- `regions.py`: fields, watch sets, the lazy product DFA of a region, `winner` (the tie-break);
- `message.py`: the buffer, routing, committing a delimiter, the message and its events;
- `streaming_engine.py`: the streaming engine (`feed`, `finalize`);
- `whole.py`: the bulk engine (`parse`) and the prefix engine (the reference's edge rule);
- `delimiter.py`, `dfa_tables.py`, `search.py`, `fallback.py`: one delimiter.
"""

from __future__ import annotations

from .coerce import drop_empty, tool_parameters
from .events import region_chunk, region_open
from .message import BODY_PIECES_MAX
from .prefix_memo import PrefixMemo, fresh_copy
from .regions import UNBUILT, Field, Region, Watch
from .streaming_engine import StreamingEngine, _Run
from .whole import WholeTextEngines

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar

    from .delimiter import Delimiter
    from .events import Event
    from .held import HeldTail

    # A generated region function, or a `RegionParser` method of the same shape (`fast_feed`).
    FastFeed = Callable[["RegionParser", str], list[Event]]

MALFORMED_POLICIES = ("raise", "event")
# The null sink leaves a chunk unstepped (`_feed`) only while the text not yet routed is shorter:
# stepping it joins that text, so a longer one (a run held over a long header) would be copied
# once per chunk.
UNSTEPPED_MAX = 512
# The longest rest of a chunk (the text after a delimiter committed in it) that the fast path
# reads as a chunk of its own (`_feed_rest`); a longer one goes to the general path whole.
REST_FAST_MAX = 256


def not_text(where: str, text: object) -> TypeError:
    """The error for a chunk that is no str: TypeError, as the reference's feed raises (its
    message, from `str + bytes`, and the one a fast path's `in` test gives, name the types the
    other way round)."""
    return TypeError(
        f"{where} expects str (the model's decoded output text), got {type(text).__name__}"
        + (": decode it first" if isinstance(text, (bytes, bytearray)) else "")
    )


class RegionParser(WholeTextEngines, StreamingEngine):
    """The reference's `ResponseParser` protocol; a generated module sets the class attributes.

    A chunk is fed in one of three ways. `feed` here is the general path. A generated
    `ResponseParser` overrides it with a fast path (compiler/planning/fast_path.py decides what it
    may take): one function per region, in `fast_paths` by field name. Its `feed` calls
    `fast_feed`, which is one of:

    1. the current region's function, while `_idle` is set and nothing is held, or, while it
       holds a run of its region's lead chars (the spaces a close may begin with), the region's
       `_after_run` function, which hands a chunk without the region's stoppers and the run to
       the region's function as one chunk (the generated `feed` takes a chunk of either that
       holds no stopper itself, as they would: it sends it, or holds its trailing run). A chunk
       the region's function does not pass goes to
       `fast_decline`, which commits a chunk that is a whole delimiter, cuts a tail to hold, or
       hands the chunk to (3). The null sink, which streams nothing, has no function: there
       `fast_sink` commits a chunk that is a whole delimiter, and hands any other to (3);
    2. `fast_feed_held`, while the fast path holds any other tail (or an `_after_run` function
       passes it a chunk it does not take): the tail and the next chunk go on as one chunk to
       (1), or are committed as one delimiter;
    3. the general path, `RegionParser.feed`, otherwise. Its runs read the chunk: as one state of
       the region's run sets (runtime/run_sets.py, `_read_by_run_sets`) where they step so, else
       run by run (`_feed`, streaming_engine.py). In the null sink, while its runs wait for a
       char a delimiter can report a match on (`_sink_waits`), `waiting_sink_feed` is the
       general path's first test on its own: a chunk without one is appended unstepped, as
       `_feed` would leave it, without the rest of the general path's bookkeeping.

    The fast-path hook: the public names below are what generated code may use (besides the
    protocol and the class attributes); no generated code touches a private member. They are
    for generated modules, not for callers of the protocol.

    - `region_body`, `region_opened`: the current region's text so far (a list of pieces) and
      whether its `region_open` was sent (while it is False the body is empty). A chunk the fast
      path takes is appended to `region_body`, and that is all, unless that makes the body one
      piece or more than `BODY_PIECES_MAX`: then its event goes through `fast_taken(event)`,
      which opens the region first where it is not open, and compacts the body. The positions
      lag until the general path next runs and catches up (`_catch_up`: the pieces appended
      since the fast path took over).
    - `fast_hold(tail, then=None)`: text after the body that a delimiter may still use
      (runtime/held.py); the next chunk goes to `then`, an `_after_run` function, which takes
      the tail back with `fast_release(text, fast)`, else to `fast_feed_held`. The general path
      never sees it: it comes back with the next chunk (`finalize` feeds it alone), so the
      positions stay the body's.
    - `fast_decline(text)`: a chunk the region's test did not pass, with nothing held: a whole
      delimiter (`Region.whole`) is committed, the held tail is cut, or the general path takes it.

    Internally, `_idle` is the field of the current region while the general path holds nothing
    (no run, no text waiting) and the parser can take text, else None; the general path sets it
    (and `fast_feed`) on the way out of `__init__`, `feed` and `_commit_whole`.
    """

    template: dict
    start_anchor: Delimiter
    fields: tuple[Field, ...]
    home: Region  # the implicit field's region, or the null sink
    regions: dict[str, Region]  # explicit field name -> its region
    # A generated module's fast path of each region, by field name (see the class docstring).
    fast_paths: dict[str, FastFeed] = {}
    _prefix_states: ClassVar[PrefixMemo]  # per class (`__init_subclass__`)
    _anchor_literal: ClassVar[str | None] = None  # set by `__init_subclass__`

    def __new__(
        cls,
        prefix: Any = None,
        *,
        tools: Any = None,
        malformed: str = "raise",
        captures: bool = False,
        offsets: bool = False,
        tokenizer: Any = None,
    ) -> Any:
        # Token-id input (transformers 5.25) is a layer above this text engine: with a tokenizer
        # the caller gets a `TokenIdParser` wrapping an instance of this class. (The options are
        # spelled out: packing them into a dict costs every construction.)
        if tokenizer is not None:
            from .token_ids import TokenIdParser

            return TokenIdParser(
                cls,
                prefix,
                tokenizer,
                tools=tools,
                malformed=malformed,
                captures=captures,
                offsets=offsets,
            )
        return object.__new__(cls)

    def __init__(
        self,
        prefix: str | None = None,
        *,
        tools: list | None = None,
        malformed: str = "raise",
        captures: bool = False,
        offsets: bool = False,
        tokenizer: None = None,
    ) -> None:
        if malformed not in MALFORMED_POLICIES:
            raise ValueError(f"malformed must be one of {MALFORMED_POLICIES}, got {malformed!r}")
        if prefix is None:
            raise ValueError(
                "ResponseParser/parse_response requires `prefix`: the chat prompt sent to the model "
                "before generation. Chat templates often pre-write part of the assistant message "
                "(an opening <think>, say) that the parser must see. If the text already holds the "
                'whole message, pass prefix="" to opt out explicitly.'
            )
        self._begin(self._truncated(prefix), tools, malformed, captures, offsets)

    def _begin(
        self, tail: str, tools: list | None, malformed: str, captures: bool, offsets: bool
    ) -> None:
        """Set up the state after the truncated prefix `tail`: remembered (runtime/prefix_memo.py),
        or processed by the prefix engine."""
        # A server constructs one parser per message, mostly after the same truncated prefix:
        # the state it leaves is remembered (runtime/prefix_memo.py), options included.
        key = (tail, malformed, captures, offsets)
        memo = self._prefix_states
        if memo.restore(self, key):
            self._tool_params = tool_parameters(tools)
            return
        # "event" is the lenient mode (an extension; the default is the reference's "raise"): a
        # structured region whose value does not parse becomes a `region_malformed` event.
        self._malformed_event = malformed == "event"
        # `captures=True` (an extension, as transformers' main branch): region_open events carry
        # the open's named groups, so a client can use a call's name before its region closes.
        self._event_captures = captures
        # `offsets=True` (an extension, as transformers' main branch): open, close and malformed
        # events carry "start" and "end", the span of the input text (from the truncated prefix's
        # start, as the positions below) that each consumed. The generated fast path is off then
        # (`_set_idle`): it opens the implicit region and settles closes behind a held tail, whose
        # positions only the general path tracks. Offsets are opt-in; the default keeps its speed.
        self._event_offsets = offsets
        self._tool_params = tool_parameters(tools)
        shape = self._shape()
        defaults = self.template.get("defaults", {})
        # {"role": "assistant"} needs no deepcopy (and `copy` is imported only when one does).
        if shape.flat_defaults:
            self._output: dict[str, Any] = dict(defaults)
        else:
            from copy import deepcopy

            self._output = deepcopy(defaults)
        # The text not yet routed: `_text[0]` is absolute position `_base`; positions count from the
        # start of the truncated prefix, which is where the reference's buffer starts (so `^` and
        # `\A` match there).
        self._text = ""
        # Chunks received after `_text`, not yet joined: while a run holds text (a long run of
        # spaces before `\s*<tool_call>`, say) the held text grows by appending here, and it is
        # joined once, when it is routed or a delimiter is committed, never once per chunk.
        self._tail: list[str] = []
        self._end = 0  # absolute end of the text received so far
        self._base = 0
        self._pos = 0  # everything before `_pos` is routed to a region or consumed as a delimiter
        self._before = ""  # the character just before `_base` (for `\b`), "" at the start
        self._scan = 0  # the next position to step
        self._runs: list[_Run] = []
        # The run-set config of `_runs` while the run-set engine keeps them (`_read_runs`).
        self._run_config: tuple[list[_Run], int, int] = ([], 0, 0)
        # (run start, delimiter index) -> how far a pending fallback attempt is lead chars only.
        self._lead_checked: dict[tuple[int, int], int] = {}
        # delimiter index -> (where `_spawn` last attempted that lead-dominated fallback, how far
        # the text from there is known to be its lead chars, -1 once it is not; see `_dominated`).
        self._lead_anchors: dict[int, tuple[int, int]] = {}
        # (run start, delimiter index) -> how far the text after a pending look-ahead fallback's
        # relaxed part is known to be chars its look-ahead waits over (see `_waits`).
        self._waits_checked: dict[tuple[int, int], int] = {}
        self._region = self.home
        self.region_opened = False
        self.region_body: list[str] = []
        self._captures: dict[str, str] = {}
        self._finalized = False
        # After a zero-width close of an empty region the reference stops reading (its `_process`
        # breaks out for good), so the rest of the text never reaches the message. Copied on purpose.
        self._stopped = False
        self._zero_width_close_at = -1
        self._keep_history = shape.keep_history
        self._idle: str | None = None  # see the class docstring
        # What a generated `feed` calls (see the class docstring); the general path until idle.
        self.fast_feed: FastFeed = RegionParser.feed
        self._reading_runs = False  # the general path's runs step as one state (`_set_idle`)
        self._held = ""  # a generated fast path's held tail (runtime/held.py, `fast_hold`)
        # `_feed_rest`: whether its loop is running, and the rest an inner call left to it.
        self._feeding_rest = False
        self._rest = ""
        # How many pieces `region_body` had when the fast path took over: the pieces after them
        # are the chunks it took since (`_catch_up`), so no catch-up sums the whole body.
        self._idle_pieces = 0
        # The prefix engine held text that no run has stepped (`_advance_prefix`): the next chunk
        # goes to the stepping engine, since that text may end a match (see `_feed`).
        self._prefix_unstepped = False
        self.initial_events: list[Event] = []
        # The commit the first chunk makes of text the prefix engine held (`_committed_prefix`).
        self._prefix_commit: tuple[tuple, tuple[Event, ...]] | None = None
        if tail:
            self._text = tail
            self._end = len(tail)
            self._advance_prefix(self.initial_events)
        self._set_idle()
        if self._prefix_unstepped and not self._runs and memo.has_room(key, 2):
            self._prefix_commit = self._committed_prefix(key, defaults)
        memo.remember(self, key, defaults)

    def _committed_prefix(
        self, key: tuple, defaults: dict
    ) -> tuple[tuple, tuple[Event, ...]] | None:
        """What the first chunk does with the text the prefix engine held (`_prefix_unstepped`,
        `<think>` after DeepSeek's anchor): that text stepped as a chunk of its own. The
        reference holds a pattern's match at the end of its buffer (its edge rule), so the
        prefix engine leaves it; with any text after it, the stepping engine steps it with that
        text, and gives what it gives stepping it alone first (the same for every chunking)
        when doing so leaves no run alive: a match its DFA decided is committed, the rest
        routed. Then the state after that step is remembered under a key of its own, and the
        first chunk restores it and sends its events (`_feed_after_held_prefix`), in place of
        stepping the held text again: (that key, the events), or None when a run stays alive,
        the reference stops, or a value is stored (the state then depends on the tools)."""
        trial: RegionParser = object.__new__(type(self))
        trial.__dict__.update(fresh_copy(self.__dict__))
        events: list[Event] = []
        trial._advance(events, eos=False)
        trial._prefix_unstepped = False
        if trial._runs or trial._stopped or trial._pos != trial._end:
            return None
        trial._set_idle()
        committed_key = (*key, "committed")
        if not self._prefix_states.remember(trial, committed_key, defaults):
            return None
        return committed_key, tuple(events)

    @classmethod
    def _truncated(cls, prefix: str) -> str:
        """The prefix after the last match of the start anchor (all of it when there is none)."""
        if not prefix:
            return ""
        literal = cls._anchor_literal
        if literal is not None:  # `last_match_end` of a literal no two matches of which overlap
            found = prefix.rfind(literal)
            if found >= 0:
                return prefix[found + len(literal) :]
        cut = cls.start_anchor.last_match_end(prefix)
        if cut is None:
            import logging  # only on this rare path: importing logging is not free

            logging.getLogger("chatparse").info(
                "start anchor %s not found in the prefix; parsing the whole prefix",
                cls.start_anchor.source,
            )
            return prefix
        return prefix[cut:]

    def __init_subclass__(cls, **options: Any) -> None:
        super().__init_subclass__(**options)
        # This class's remembered states after a prefix (one memo per generated class).
        cls._prefix_states = PrefixMemo()
        # A start anchor that is one literal, no two matches of which overlap: its last match is
        # where `str.rfind` finds it (`_truncated`).
        anchor = cls.__dict__.get("start_anchor")
        if anchor is not None:
            overlaps = anchor.single_literal is None or anchor.literal_overlaps
            cls._anchor_literal = None if overlaps else anchor.single_literal

    # --- the public protocol ---------------------------------------------------------------------

    def feed(self, text: str) -> list[Event]:
        if type(text) is not str:
            if not isinstance(text, str):
                raise not_text("ResponseParser.feed", text)
        elif self._reading_runs and text:
            return self._read_by_run_sets(text)  # (`_idle` is None: no catch-up)
        if self._idle is not None:
            self._catch_up()
        if self._prefix_commit is not None and text:
            return self._feed_after_held_prefix(text)
        events = self._feed(text)
        self._set_idle()
        return events

    def _feed_after_held_prefix(self, text: str) -> list[Event]:
        """The first chunk after a prefix whose held text `_committed_prefix` stepped once: the
        state after that step restored (unless the memo was cleared since), its events, then
        `text` fed as any chunk."""
        committed_key, committed = self._prefix_commit  # type: ignore[misc]
        self._prefix_commit = None
        if self._finalized or not self._prefix_states.restore(self, committed_key):
            events = self._feed(text)
            self._set_idle()
            return events
        self._set_idle()
        return fresh_copy(list(committed)) + self.feed(text)

    # --- the hook of a generated fast path (see the class docstring) ------------------------------

    def _set_idle(self) -> None:
        nothing_held = not self._runs and not self._tail and not self._text
        region = self._region
        if region.after_start is not None and self._end and nothing_held:
            # Past buffer position 0 with no run reaching back to it: the region's after-start
            # form (`Region.after_start`) watches the same delimiters without their `^`.
            region = self._region = region.after_start
        ready = (
            nothing_held
            and region.after_start is None
            and self._pos == self._end
            and not self._keep_history
            and not self._stopped
            and not self._finalized
            and not self._event_offsets
        )
        self._idle = region.name if ready else None
        # Nothing is held here: the fast path holds only after the general path has run.
        if ready and region.field is None and region.whole:
            self.fast_feed = RegionParser.fast_sink
        elif region.match_ends is not None and self._sink_waits():
            self.fast_feed = RegionParser.waiting_sink_feed
        else:
            self.fast_feed = self.fast_paths.get(self._idle) or RegionParser.feed  # type: ignore[arg-type]
        self._idle_pieces = len(self.region_body)
        # Runs alive over all of the text, stepping as one state: the general path's next chunk
        # goes to the run sets (`feed`).
        if self._idle is None and self._runs and self._scan == self._end and self._steps_runs():
            self._reading_runs = True
        else:
            self._reading_runs = False

    def _sink_waits(self) -> bool:
        """Whether the null sink's runs wait for a chunk with a char a watched delimiter can
        report a match on (`Region.match_ends`): `_feed` leaves a chunk without one unstepped
        while this holds, and nothing it tests changes until a chunk is stepped."""
        return (
            bool(self._runs)
            and not any(run.matched for run in self._runs)
            and not self._keep_history
            and not self._prefix_unstepped
            and self._prefix_commit is None
            and not self._stopped
            and not self._finalized
        )

    def waiting_sink_feed(self, text: str) -> list[Event]:
        """`feed` in the null sink while its runs wait (`_sink_waits`): a chunk without a char a
        watched delimiter can report a match on waits unstepped, as `_feed` would leave it, at
        the cost of an append (header text between special tokens, harmony's `to=functions.f`);
        any other chunk goes to `feed`."""
        if (
            type(text) is str
            and text
            and self._region.match_ends.isdisjoint(text)  # type: ignore[union-attr]
            and self._end - self._base < UNSTEPPED_MAX
        ):
            self._tail.append(text)
            self._end += len(text)
            return []
        if type(text) is str and text and self._region.run_sets is not None:
            # A char a match may end on: this chunk and the ones left unstepped are read by the
            # run sets (what `_feed` would step them by, without its steps around).
            return self._read_by_run_sets(text)
        return RegionParser.feed(self, text)

    def _steps_runs(self) -> bool:
        """Whether `_read_by_run_sets` may read the next chunk: the current region's runs step
        as one state (`Region.run_sets`) and nothing keeps the general path."""
        region = self._region
        return (
            region.run_sets is not None
            and region.match_ends is None  # the null sink may leave chunks unstepped
            and not self._keep_history
            and not self._stopped
            and not self._finalized
            and not self._prefix_unstepped
        )

    def _read_by_run_sets(self, text: str) -> list[Event]:
        """The general path in a region whose runs step as one state (`Region.run_sets`), for a
        non-empty str `text` when everything before it is stepped: the chunk is stepped in one
        loop (runs start, die and record match ends as the run sets say); then, as `_advance`
        does, the text before the first live run goes to the region and the rest is held with
        the runs, or a decided run is committed and the rest of the chunk is fed from its end.

        `feed` calls it while runs are alive (`_reading_runs`), `_general` for a chunk the
        fast path declined, and `waiting_sink_feed` for a chunk of the null sink that a match
        may end in, after chunks it left unstepped: those are read first, with it."""
        if self._idle is not None:
            self._catch_up()
        base = self._end
        if self._scan < base:  # (chunks the null sink left unstepped)
            self._tail.append(text)
            self._end = base + len(text)
            unread, at, _ = self._unstepped()
            runs, scan, decided = self._read_runs(unread, at, self._scan - at)
        else:
            runs, scan, decided = self._read_runs(text, base)
            self._tail.append(text)
            self._end = base + len(text)
        self._scan = scan
        self._runs = runs
        events: list[Event] = []
        if decided:
            # A delimiter to commit: as `_advance` does. The commit consumed everything up to
            # the match's end and left no run, so the rest of the chunk is read as a chunk of
            # its own (the result is the same for every chunking), by the new region's fast
            # path when it has one.
            self._commit(events, runs[0])
            if self._scan < self._end:  # (a delimiter that ends the chunk leaves nothing to read)
                text = self._joined()
                rest = text[self._pos - self._base :]
                if self._pos > self._base:
                    self._before = text[self._pos - self._base - 1]
                self._text = ""
                self._end = self._scan = self._base = self._pos
                self._set_idle()
                return events + self._feed_rest(rest)
        elif runs and scan == self._end and self._region.match_ends is None:
            # Runs are still alive over all of the chunk: the text before the first is the
            # region's, and the next chunk comes here too (what `_set_idle` would decide; in
            # the null sink, it decides on `waiting_sink_feed`, below).
            if runs[0].start > self._pos:
                self._route(events, runs[0].start)
            self._idle = None
            self.fast_feed = RegionParser.feed
            self._reading_runs = True
            return events
        else:
            self._route(events, runs[0].start if runs else self._end)
        self._set_idle()
        return events

    def _general(self, text: str) -> list[Event]:
        """The general path for a chunk the fast path did not take (nothing held): the run sets
        read it where they may (`_steps_runs`), else `feed` (which says what a chunk that is no
        str should be, and takes a str subclass)."""
        if type(text) is str and text and self._steps_runs():
            return self._read_by_run_sets(text)
        return RegionParser.feed(self, text)

    def _catch_up(self) -> None:
        """Bring the positions up to the chunks the fast path took (it appends them to the body,
        never empty, and does nothing else), joined into one piece of the body: they count as
        caught up from here. (The join is what measures them: a sum of their lengths costs a
        call per piece, some 20 ns each, where `join` copies a few bytes.)"""
        body = self.region_body
        caught = self._idle_pieces
        if len(body) > caught:
            taken = "".join(body[caught:])
            body[caught:] = (taken,)
            self._end += len(taken)
            self._pos = self._base = self._scan = self._end
            self._before = taken[-1]
            self._idle_pieces = caught + 1

    def fast_taken(self, event: Event) -> list[Event]:
        """The events of a chunk the fast path appended to `region_body` when that made the body
        one piece (the region's first text: `region_open` first, unless an open delimiter sent
        it) or more than `BODY_PIECES_MAX` (compacted, once the positions count them)."""
        body = self.region_body
        if len(body) > BODY_PIECES_MAX:
            # The chunks taken since the fast path took over are one piece after `_catch_up`,
            # folded into the pieces before it. (Joining the newest `BODY_PIECES_MAX` pieces
            # would copy the longer pieces among them again at every compaction.)
            self._catch_up()
            self._fold_body()
            if len(body) > BODY_PIECES_MAX:  # many short pieces the general path routed
                self._merge_newest()
            self._idle_pieces = len(body)
        if self.region_opened:
            return [event]
        self.region_opened = True
        return [region_open(event["field"]), event]

    def fast_hold(self, tail: str, then: FastFeed | None = None) -> None:
        """The fast path holds `tail`: the next chunk goes to `then`, a generated function that
        knows what is held (a run of its region's lead chars, which it releases with
        `fast_release`), or else to `fast_feed_held`."""
        self._held = tail
        self.fast_feed = then or RegionParser.fast_feed_held

    def fast_release(self, text: str, fast: FastFeed) -> str:
        """The held tail and `text`, as one chunk for the region's function `fast`, which takes
        the next chunk from here."""
        joined = self._held + text  # first: a chunk that is no str raises with the tail still held
        self._held = ""
        self.fast_feed = fast
        return joined

    def fast_sink(self, text: str) -> list[Event]:
        """`feed` in the null sink while nothing is held (`_set_idle`), which streams nothing: a
        chunk that is exactly a whole delimiter (`Region.whole`, cohere's `<|START_ACTION|>`) is
        committed, as `fast_decline` does; any other goes to the general path."""
        region = self._region
        index = region.whole.get(text)
        if index is not None:
            return self._commit_whole(index, text)
        ends = region.match_ends
        if (
            type(text) is str
            and text
            and region.run_sets is not None
            and ends is not None
            and not ends.isdisjoint(text)
            and not self._prefix_unstepped
            and self._prefix_commit is None
        ):
            # A char a match may end on (harmony's `<|start|>`): read by the run sets, as
            # `waiting_sink_feed` reads such a chunk once runs are alive.
            return self._read_by_run_sets(text)
        return RegionParser.feed(self, text)

    def fast_feed_held(self, text: str) -> list[Event]:
        """`feed` while the fast path holds a tail: the tail and `text` go on as one chunk, or are
        committed as one match when `text` is a whole delimiter the tail is the lead run of; a
        tail that is a literal-then-run match (`HeldTail.settled`) that `text` ends is committed,
        and `text` fed after it."""
        held = self._held
        joined = held + text  # first: a chunk that is no str raises with the tail still held
        self._held = ""
        fast = self.fast_feed = self.fast_paths[self._idle]  # type: ignore[index]
        region = self._region
        held_tail: HeldTail = region.held  # type: ignore[assignment]  # (a fast path holds)
        if text in region.whole and held_tail.leads_into(held, text):
            return self._commit_whole(region.whole[text], joined)
        trail = held_tail.trail
        if (
            trail is not None
            and text
            and text[0] not in trail
            and text[0] < "\x80"
            and held.startswith(held_tail.literals[0])
        ):
            # The held tail is the match of the region's one literal-then-run delimiter, its run
            # still open (`_settle` held it), and `text` ends that run: its first char is no
            # trail char, and ASCII, so no table makes it one. What `_settle` would commit over
            # `joined`, then `text` as a chunk of its own.
            return self._commit_whole(0, held) + self.feed(text)
        return fast(self, joined)

    def fast_decline(self, text: str) -> list[Event]:
        """The fast path's test did not pass `text` (nothing held): commit it when it is a whole
        delimiter; else, when the region has a held tail (`Region.held`), send the text
        before it and hold it, or settle a watched literal the text holds (`_settle`); else the
        general path takes it."""
        region = self._region
        index = region.whole.get(text)
        if index is not None:
            return self._commit_whole(index, text)
        held_tail = region.held
        if not text or held_tail is None:
            return self._general(text)
        cut = held_tail.cut(text)
        if cut < 0:
            return self._settle(text)
        events = self._fast_take(text[:cut]) if cut else []
        if cut < len(text):
            self.fast_hold(text[cut:])
        return events

    def _fast_take(self, text: str) -> list[Event]:
        """What a generated fast path does with a chunk that passes its test: `text` goes to the
        region (not empty; the region has a field)."""
        field = self._region.field
        assert field is not None  # a fast path has a field
        body = self.region_body
        body.append(text)
        event = region_chunk(field.name, text, field.dirty)
        if 1 < len(body) <= BODY_PIECES_MAX:
            return [event]
        return self.fast_taken(event)

    def _settle(self, text: str) -> list[Event]:
        """The fast path found a watched literal in `text` (nothing held before it). When `text`
        begins with a whole chunk (`Region.whole`), commit it and feed the rest; when it is lead
        chars then a whole chunk, commit it as one match. When the region's
        one delimiter is a literal then a run (`HeldTail.settled`), send the text before the
        match, then hold the match while its run may grow, or commit it and feed the rest; else
        the general path takes `text`."""
        region = self._region
        held_tail = region.held
        # (A whole chunk can begin or end `text` only if one of them does: tested in C first.)
        chunks = region.whole_chunks
        if chunks and (text.startswith(chunks) or text.endswith(chunks)):
            for whole, index in region.whole.items():
                if len(text) <= len(whole):
                    continue
                # A whole chunk that begins `text` is committed as if it came alone: its match
                # is settled and wins (the earliest start), whatever follows (a split token's
                # last piece and the text after it).
                if text.startswith(whole):
                    return self._commit_whole(index, whole) + self._feed_rest(text[len(whole) :])
                # Lead chars of its delimiter, then a whole chunk (`"\n<tool_call>"`): one
                # match, as a held tail and that chunk would be (`fast_feed_held`). Nothing is
                # held, so no run reaches back before `text`.
                if (
                    text.endswith(whole)
                    and held_tail is not None
                    and held_tail.leads_into(text[: -len(whole)], whole)
                ):
                    return self._commit_whole(index, text)
        found = held_tail.settled(text) if held_tail is not None else None
        if found is None:
            return self._general(text)
        start, end = found
        events = self._fast_take(text[:start]) if start else []
        if end is None:
            self.fast_hold(text[start:])
            return events
        events += self._commit_whole(0, text[start:end])
        if end < len(text):
            events += self._feed_rest(text[end:])
        return events

    def _feed_rest(self, rest: str) -> list[Event]:
        """The events of `rest`, the text after a delimiter committed inside a chunk, fed as a
        chunk of its own (the result is the same for every chunking) by `feed`, whose fast path
        may commit again and have a rest of its own. Fed in a loop, not by recursion: a chunk
        may hold thousands of delimiters. An inner call (a rest's own rest) leaves its text to
        the loop, after the events its caller returns, in order. A rest longer than
        `REST_FAST_MAX` goes to the general path whole (linear in it)."""
        if self._feeding_rest:
            self._rest = rest  # the caller returns at once: the loop below feeds it next
            return []
        self._feeding_rest = True
        events: list[Event] = []
        try:
            while rest:
                if len(rest) > REST_FAST_MAX:
                    # A long rest (a chunk of many delimiters) goes to the general path, which
                    # reads it by positions: fed rest by rest, each would be a copy of it.
                    events += RegionParser.feed(self, rest)
                    break
                events += self.feed(rest)
                rest, self._rest = self._rest, ""
        finally:
            self._feeding_rest = False
            self._rest = ""
        return events

    def _commit_whole(self, index: int, text: str) -> list[Event]:
        """Commit `text`, a whole match of the current region's watch `index`, fed while the
        general path holds nothing (the fast path's state: every position before it is routed).
        A match without named groups is consumed where it lands: no buffer, nothing to route."""
        self._catch_up()
        watch = self._region.watch[index]
        start = self._end
        end = self._end = start + len(text)
        events: list[Event] = []
        if watch.delimiter.has_groups or self._text or self._tail or self._runs:
            self._tail.append(text)
            if self._commit_match(events, watch, start, end):
                self._stopped = True
            self._set_idle()
            return events
        # `_commit_match` for a match that is not empty, once it has consumed the match.
        self._pos = self._base = self._scan = end
        self._before = text[-1]
        self._forget_fallback_checks()
        if watch.kind == "open":
            self._open(events, watch.field, {}, start, end)
        else:
            self._close_current(events, start, end)
        self._zero_width_close_at = -1
        self._set_idle()
        return events

    # --- the general path ------------------------------------------------------------------------

    def _feed(self, text: str) -> list[Event]:
        if self._finalized:
            raise RuntimeError("ResponseParser already finalized")
        if not text or self._stopped:
            return []
        runs = self._runs
        match_ends = self._region.match_ends
        if (
            match_ends is not None
            and match_ends.isdisjoint(text)
            and self._end - self._base < UNSTEPPED_MAX
            and not self._keep_history
            and not any(run.matched for run in runs)
            and not self._prefix_unstepped
        ):
            # The null sink, where no watched delimiter can report a match on any char of
            # `text` and none is waiting to be decided: stepping it now would emit nothing, and
            # stepping it with a later chunk decides the same (`Region.match_ends`). Header
            # text between special tokens (harmony's `to=functions.f `) costs an append.
            self._tail.append(text)
            self._end += len(text)
            return []
        if not runs and not self._text and not self._tail and not self._keep_history:
            region = self._region
            prefilter = region.prefilter
            if prefilter is UNBUILT:
                prefilter = region.build_finders()
            if not region.watch or (prefilter is not None and prefilter.search(text) is None):
                return self._route_chunk(text)  # no watched delimiter can start in it: prose
        events: list[Event] = []
        self._tail.append(text)
        self._end += len(text)
        self._advance(events, eos=False)
        self._prefix_unstepped = False
        return events

    def finalize(self) -> tuple[dict, list[Event]]:
        held = self._held
        if not held:
            return self._finish()
        # A tail the fast path holds goes to the general path first, as if fed only now.
        self._held = ""
        events = RegionParser.feed(self, held)
        message, final = self._finish()
        return message, events + final

    def _finish(self) -> tuple[dict, list[Event]]:
        if self._finalized:
            raise RuntimeError("ResponseParser already finalized")
        if self._idle is not None:
            self._catch_up()
            self._idle = None
        self.fast_feed = RegionParser.feed  # which raises from now on
        self._reading_runs = False
        events: list[Event] = []
        if (
            not self._runs
            and self._pos == self._scan == self._end
            and not self._stopped
            and not self._prefix_unstepped
        ):
            # Everything is stepped and routed and no run is alive: the end of the input decides
            # nothing (no match starts at the end), it only closes the current region.
            self._close_current(events, self._end, self._end)
        else:
            self._advance(events, eos=True)
        self._output = self._message()
        self._finalized = True
        return self._output, events

    def _message(self) -> dict:
        """The final message of the text read: the required fields checked, empty values
        dropped (`drop_empty`)."""
        shape = self._shape()
        output = self._output
        missing = shape.required and [name for name in shape.required if name not in output]
        if missing:
            raise ValueError(
                f"Required response_template fields missing from parsed output: {missing}"
            )
        return drop_empty(output, shape.defaults)

    @classmethod
    def parse(
        cls,
        text: str,
        *,
        prefix: str | None = None,
        tools: list | None = None,
        malformed: str = "raise",
        tokenizer: Any = None,
    ) -> dict:
        if tokenizer is not None:
            parser = cls(prefix, tools=tools, malformed=malformed, tokenizer=tokenizer)
            parser.feed(text)
            return parser.finalize()[0]
        if type(prefix) is str and malformed in MALFORMED_POLICIES:
            # A bare parser given what the bulk engine reads of the state after the prefix, when
            # that state is remembered (runtime/prefix_memo.py); else one set up as usual.
            tail = cls._truncated(prefix)
            parser = cls._prefix_states.restore_for_parse(cls, (tail, malformed, False, False))
            if parser is None:
                parser = object.__new__(cls)
                parser._begin(tail, tools, malformed, False, False)
            else:
                parser._tool_params = tool_parameters(tools)
        else:
            parser = cls(prefix, tools=tools, malformed=malformed)  # which says what is wrong
        if text and not parser._stopped:
            parser._tail.append(text)
            parser._end += len(text)
        parser._advance_whole()  # `parse` returns the message only: it builds no events
        return parser._message()


__all__ = ["Field", "Region", "RegionParser", "Watch"]
