r"""The streaming engine: runs over the region's lazy product DFA, stepped as chunks arrive.

In: the text received so far (the parser's buffer) and whether the input has ended. Out: routed
text and committed delimiters (`message.MessageAssembly`), and the runs that hold the rest.

Guarantee: for every way of splitting the text into chunks, the same commits as the whole text
fed at once. Text is held exactly while a delimiter run that starts at or before it is still
alive, and routed as soon as every such run is dead.

## How one region is scanned

The parser sits in one region: the implicit field's (or a null sink when the template has none)
or an explicit field's. The region's *watch set* is what the reference's `_watchlist` returns: in
the implicit region every explicit open plus the implicit close; in an explicit region its own
close. A *run* is one anchored attempt of every watched delimiter from one start position; each
character steps every live run. The winner is the reference's `_scan` key: earliest start, then
longest, then open before close, then field name. In run terms:

- Runs are kept in start order. A run that has recorded a match makes every later run irrelevant
  (an earlier start always wins), so later runs are dropped and no new ones start.
- Two runs without a match that sit in the same states behave the same from now on, so only the
  earlier one is kept. That bounds the live runs by the number of state tuples, which keeps the
  time per character constant: `\s*<tool_call>` after a long run of spaces stays linear, where the
  reference's re-search from every space is quadratic.
- The first run is committed when it has a match and none of its delimiters can still change: the
  match start is then the earliest possible and every length at that start is final.
- Text before the first live run can never be part of a delimiter: it goes to the region now.

Alternatives considered: re-running `regex.search(partial=True)` per chunk (the reference: quadratic
and chunking-dependent), one product DFA per region (faster, but the state tuples would be emitted
for every combination of delimiters; the runs step the same product, built lazily for the
state tuples the text reaches, see `regions.LazyProductDfa`), and a Pike VM with per-thread starts (the same bound, more
work per character). Runs over per-delimiter DFAs keep the emitted tables one per delimiter.
"""

from __future__ import annotations

from .dfa_tables import DEAD, END_OF_INPUT
from .message import MessageAssembly
from .regions import UNBUILT, winner
from .run_sets import EMPTY, FALLBACK_PENDING, surviving

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from collections.abc import Callable

    from .delimiter import Delimiter
    from .events import Event
    from .regions import Region


class _Run:
    """One anchored attempt of every watched delimiter from `start`."""

    __slots__ = ("start", "states", "ends", "matched")

    def __init__(self, start: int, states: tuple[int, ...], ends: list[int], matched: bool) -> None:
        self.start = start
        self.states = states
        self.ends = ends
        self.matched = matched


class StreamingEngine(MessageAssembly):
    """`_advance`: step every live run over the unread text; commit, route and hold."""

    def _advance(self, events: list[Event], eos: bool) -> None:
        """Step every live run over the unread text; commit, route and hold as the runs decide."""
        while not self._stopped:
            decided = self._step_to_end(eos)
            if decided is not None:
                self._commit(events, decided)
                continue
            if eos:
                self._route(events, self._end)
                self._close_current(events, self._end, self._end)
                return
            hold = self._runs[0].start if self._runs else self._end
            self._route(events, hold)
            return
        if eos:
            self._text = ""
            self._tail = []

    def _step_to_end(self, eos: bool) -> _Run | None:
        """Step runs up to the end of the known text (and EOI when `eos`); return a decided winner."""
        text, base, before = self._unstepped()
        scan, runs, decided = self._step_text(text, base, before, eos)
        self._scan = scan
        self._runs = runs
        if decided is not None:
            return decided
        if self._region.has_fallback and any(
            state == FALLBACK_PENDING for run in runs for state in run.states
        ):
            self._settle_fallbacks(runs, self._region.delimiters, eos, text, base)
            runs = self._runs = self._prune(runs)
        if eos:
            runs = self._runs = self._step_end_of_input(runs)
        return self._decided(runs)

    def _unstepped(self) -> tuple[str, int, str]:
        """The text that holds every position not stepped yet: (text, its absolute start, the char
        before it). Usually the newest chunk alone, when everything before it has been stepped."""
        tail = self._tail
        end = self._end
        if tail and self._scan >= end - len(tail[-1]) and not self._keep_history:
            text = tail[-1]
            if len(tail) > 1:
                before = tail[-2][-1]
            else:
                before = self._text[-1] if self._text else self._before
            return text, end - len(text), before
        return self._joined(), self._base, self._before

    def _step_text(
        self, text: str, base: int, before: str, eos: bool
    ) -> tuple[int, list[_Run], _Run | None]:
        """Step the live runs from `_scan` over `text` (absolute start `base`) to its end, starting
        a run at every candidate while no run has a match; stop early when a run is decided.
        Returns (the next position to step, the live runs, the decided run or None)."""
        region = self._region
        if region.prefilter is UNBUILT:
            region.build_finders()
        if region.run_sets is not None:
            return self._step_run_sets(text, base)
        runs = self._runs
        scan = self._scan
        end = self._end
        candidate = self._candidate_finder(region, base)
        transitions = region.transitions
        dead = (0,) * len(region.watch)
        next_candidate = -1  # the next position the prefilter accepts (a run anywhere else dies)
        # Runs left with nothing but pending `regex` attempts (and dead delimiters) do not change
        # by a char (`_settle_fallbacks` asks `regex` about them once the text is stepped): only
        # the next candidate, where a run may start, needs stepping.
        waiting = region.has_fallback and self._only_pending(runs)
        while scan < end:
            if not runs or waiting:
                if runs and runs[-1].matched:
                    return end, runs, None  # an earlier start has a match: nothing starts later
                found = candidate(text, scan - base) if region.watch else -1
                if found < 0:
                    return end, runs, None
                scan = base + found
            if next_candidate <= scan and not (runs and runs[-1].matched):
                next_candidate = self._start_run(
                    runs, scan, next_candidate, text, base, before, eos, candidate
                )
            ch = text[scan - base]
            for run in runs:
                run.states, reports = transitions.get((run.states, ch)) or region.step(
                    run.states, ch
                )
                if reports:
                    for k, offset in reports:
                        run.ends[k] = scan - offset
                    run.matched = True
            scan += 1
            if len(runs) == 1:  # the common case, without building a new list
                if runs[0].states != dead:
                    waiting = region.has_fallback and self._only_pending(runs)
                    continue
                if runs[0].matched:
                    return scan, runs, runs[0]
                runs = []
                continue
            runs = self._prune(runs)
            if self._decided(runs) is not None:
                return scan, runs, runs[0]
            waiting = region.has_fallback and self._only_pending(runs)
        return scan, runs, None

    @staticmethod
    def _only_pending(runs: list[_Run]) -> bool:
        """Whether every live delimiter of `runs` is a pending `regex` attempt (no DFA state)."""
        return all(state <= DEAD for run in runs for state in run.states)

    def _step_run_sets(self, text: str, base: int) -> tuple[int, list[_Run], _Run | None]:
        """`_step_text` for a region whose runs all start in its fresh states: the live runs
        read the text from `_scan` as one state of the region's `RunSets` (`_read_runs`)."""
        scan = self._scan
        if scan >= self._end:
            return scan, self._runs, None
        runs, scan, decided = self._read_runs(text, base, scan - base if scan > base else 0)
        return scan, runs, runs[0] if decided else None

    def _read_runs(self, text: str, at: int, start: int = 0) -> tuple[list[_Run], int, bool]:
        """The live runs after reading `text` from `start`, where `text[0]` is absolute position
        `at`, up to its end or to the char on which a run is decided (`RunSets.read`, one dict
        lookup per char however many runs are alive, or one per chunk for a token read before):
        (the runs, the next position to read, whether the first run is decided)."""
        region = self._region
        sets = region.run_sets
        assert sets is not None
        runs = self._runs
        known = self._run_config  # (the runs list, its config, the tables' generation)
        if not runs:
            # (`begin`: before buffer position 0, where a delimiter `^` ties there may start)
            config = sets.begin if at + start == 0 and sets.begin is not None else EMPTY
        elif known[0] is runs and known[2] == sets.generation:
            config = known[1]
        else:
            config = sets.number(tuple((run.states, run.matched) for run in runs))
        config, read, effects = sets.read(config, text, region.run_candidate, start)
        following = []
        for (origin, ends), (states, matched) in zip(effects, sets.configs[config]):
            if origin >= 0:
                run = runs[origin]
                run.states = states
                run.matched = matched
            else:
                run = _Run(at - 1 - origin, states, [-1] * len(sets.fresh), matched)
            for k, offset in ends:
                run.ends[k] = at + offset
            following.append(run)
        self._run_config = (following, config, sets.generation)
        return following, at + read, sets.decided[config]

    def _start_run(
        self,
        runs: list[_Run],
        scan: int,
        next_candidate: int,
        text: str,
        base: int,
        before: str,
        eos: bool,
        candidate: Callable[[str, int], int],
    ) -> int:
        """Start a run at `scan` when the prefilter accepts it; returns the next candidate."""
        if next_candidate < scan:
            found = candidate(text, scan - base)
            next_candidate = base + found if found >= 0 else self._end
        if next_candidate == scan:
            fresh = self._region.fresh
            if fresh is not None:  # one start state per delimiter, none of them a match
                runs.append(_Run(scan, fresh, [-1] * len(fresh), False))
            else:
                self._spawn(runs, self._region.delimiters, scan, text, base, before, eos)
        return next_candidate

    @staticmethod
    def _candidate_finder(region: Region, base: int) -> Callable[[str, int], int]:
        """The region's candidate finder for text from absolute `base`: past buffer position 0,
        that of its after-start form when it has watches only position 0 lets match."""
        later = region.later_candidate
        if later is None or not region.start_only:
            return region.candidate
        if base > 0:
            return later
        first = region.candidate

        def candidate(text: str, pos: int) -> int:
            if pos > 0:
                return later(text, pos)
            if first(text, 0) == 0:
                return 0
            return later(text, 1) if len(text) > 1 else -1

        return candidate

    def _step_end_of_input(self, runs: list[_Run]) -> list[_Run]:
        """Feed EOI to every live run: the input has ended, so every run is decided now. No run
        starts at the end of the input: the reference never commits a match that starts at the
        end of its buffer (an empty open there opens nothing)."""
        delimiters = self._region.delimiters
        end = self._end
        for run in runs:
            for k, state in enumerate(run.states):
                if state > 0:
                    offset = delimiters[k].end_offset(state, END_OF_INPUT)
                    if offset is not None:
                        run.ends[k] = end - offset
                        run.matched = True
            run.states = (0,) * len(run.states)
        return self._prune(runs)

    def _spawn(self, runs, delimiters, position, text, base, before, eos) -> None:
        prev = text[position - base - 1] if position > base else before
        at_begin = position == 0
        states = []
        ends = []
        matched = False
        start_only = self._region.start_only if position else ()
        for k, delimiter in enumerate(delimiters):
            if k in start_only:
                states.append(0)  # it matches at buffer position 0 only
                ends.append(-1)
                continue
            if delimiter.fallback:
                # An attempt inside a run of lead chars after one is decided by it (`lead`).
                if self._dominated(k, delimiter, position, text, base):
                    states.append(0)
                    ends.append(-1)
                    continue
                if delimiter.lead is not None:
                    self._lead_anchors[k] = (position, position)
                outcome, end = self._attempt(delimiter, position, eos)
                if outcome == "match":
                    states.append(0)
                    ends.append(end)
                    matched = True
                else:
                    states.append(FALLBACK_PENDING if outcome == "pending" else 0)
                    ends.append(-1)
                continue
            state = delimiter.start_state(at_begin, prev)
            if state in delimiter.settled:
                ends.append(position)
                matched = True
                state = 0
            else:
                ends.append(-1)
            states.append(state)
        if matched or any(states):
            runs.append(_Run(position, tuple(states), ends, matched))

    def _dominated(self, k: int, delimiter: Delimiter, position: int, text: str, base: int) -> bool:
        """Whether an attempt of the lead-dominated fallback `delimiter` at `position` is decided
        by its last one, at q: the text from q to `position` is its lead chars (`lead`), so this
        one fails when that one fails and loses to it when that one matches, pending or not.
        Candidates from `Heads` skip the starts inside a run of lead chars, so the attempt just
        before is not always at `position - 1`; each char is looked at once (`_lead_anchors`)."""
        anchor = self._lead_anchors.get(k)
        lead = delimiter.lead
        if anchor is None or lead is None:
            return False
        start, reach = anchor
        if reach < 0 or position <= start:
            return False
        one = lead[0].match
        if reach < position:
            if reach < base:
                text, base = self._joined(), self._base
                if reach == base - 1 and self._before and one(self._before):
                    reach = base  # the char before the text kept, the only one still known
                elif reach < base:  # that text is gone: attempt, as without an anchor
                    return False
            while reach < position:
                found = one(text, reach - base)
                if found is None or found.end() == reach - base:
                    self._lead_anchors[k] = (start, -1)
                    return False
                reach = found.end() + base
            self._lead_anchors[k] = (start, reach)
        return True

    def _settle_fallbacks(self, runs, delimiters, eos, text, base) -> None:
        """Ask `regex` again about the runs' pending fallback attempts, in start order, up to the
        first run that stays pending: while it is, no later run can be committed or change what
        is held, so asking about them on every chunk would only repeat work."""
        for run in runs:
            states = list(run.states)
            for k, state in enumerate(states):
                if state == FALLBACK_PENDING:
                    delimiter = delimiters[k]
                    key = (run.start, k)
                    if not eos and self._lead_only(delimiter, key, text, base):
                        continue  # lead chars only from the start to the end: pending (`lead`)
                    if not eos and self._waits(delimiter, key, text, base):
                        continue  # its look-ahead waits over what followed: pending (`waits`)
                    outcome, end = self._attempt(delimiter, run.start, eos)
                    if outcome != "pending":
                        self._lead_checked.pop(key, None)
                        self._waits_checked.pop(key, None)
                    if outcome == "match":
                        run.ends[k] = end
                        run.matched = True
                    if outcome != "pending":
                        states[k] = 0
            run.states = tuple(states)
            if FALLBACK_PENDING in run.states:
                return

    def _lead_only(self, delimiter: Delimiter, key: tuple[int, int], text: str, base: int) -> bool:
        """Whether the text from the start of a pending fallback attempt to the end is lead chars
        only (`Delimiter.lead_run_end`). How far that is known is kept (-1: a char that is not
        lead came), so each char is looked at once; `text` from absolute `base` is what was
        just stepped and ends the text received."""
        checked = self._lead_checked.get(key, key[0])
        if checked < 0 or not delimiter.waits_on_lead:
            return False
        if checked < base:
            text, base = self._joined(), self._base
        found = delimiter.lead_run_end(text, checked - base)
        if found < 0:
            return False
        lead_only = found == len(text)
        self._lead_checked[key] = found + base if lead_only else -1
        return lead_only

    def _waits(self, delimiter: Delimiter, key: tuple[int, int], text: str, base: int) -> bool:
        """Whether a pending attempt of a look-ahead fallback (`Delimiter.waits_after`) is still
        pending: its relaxed part (lead chars, then the literal) is in the text from its start,
        and only chars its look-ahead waits over follow it to the end. How far that is known is
        kept in `_waits_checked` (-1: not so), so each char is looked at once."""
        found = delimiter.waits_after
        if found is None:
            return False
        checked = self._waits_checked.get(key)
        if checked is None:  # where the relaxed part ends, read once
            lead, literal, _ = found
            whole, whole_base = self._joined(), self._base
            at = key[0] - whole_base
            if at < 0:
                return False
            while at < len(whole) and whole[at] in lead:
                at += 1
            if not whole.startswith(literal, at):
                return False  # not through the relaxed part yet (or another outcome): ask
            checked = whole_base + at + len(literal)
        if checked < 0:
            return False
        if checked < base:
            text, base = self._joined(), self._base
            if checked < base:
                return False
        waits = found[2]
        for ch in text[checked - base :]:
            if ch not in waits:
                self._waits_checked[key] = -1
                return False
        self._waits_checked[key] = base + len(text)
        return True

    def _attempt(self, delimiter: Delimiter, start: int, eos: bool) -> tuple[str, int]:
        """One `regex` attempt of a fallback delimiter at absolute `start`, over the text held
        and the char before it (all of the output when the delimiter `needs_history`); the end
        of a match is absolute."""
        text = self._joined()
        offset = self._base
        if offset and start == offset:
            text = self._before + text  # `\b` and `^` see the char before the attempt
            offset -= 1
        outcome, end = delimiter.match_at(text, start - offset, final=eos)
        return outcome, end + offset if outcome == "match" else end

    def _through_lookahead(self, delimiter: Delimiter, start: int) -> int:
        """Where the match from absolute `start` of a delimiter with look-aheads ends: its run
        recorded where its look-ahead's text ends (`DfaTables.through_lookahead`). The run held
        all of that text, so it is here, with the char before it for `\b` and `^`."""
        text = self._joined()
        offset = self._base
        if offset and self._before and start == offset:
            # The char before the run is before the buffer: one copy with it (a run that starts
            # later has it in the buffer, which is not copied per commit).
            text = self._before + text
            offset -= 1
        return delimiter.through_lookahead(text, start - offset) + offset

    @staticmethod
    def _prune(runs: list[_Run]) -> list[_Run]:
        """Drop the runs that can no longer matter: every run after one with a match (the first key
        of `regions.winner`: an earlier start always wins), dead runs, and of two runs without a
        match in the same states the later one (they behave the same from here on): the rule of
        `run_sets.surviving`, which the run sets step by too."""
        return [runs[i] for i in surviving((run.states, run.matched) for run in runs)]

    @staticmethod
    def _decided(runs: list[_Run]) -> _Run | None:
        """The first run, when it has a match and none of its delimiters can still change it."""
        if runs and runs[0].matched and not any(runs[0].states):
            return runs[0]
        return None

    def _commit(self, events: list[Event], run: _Run) -> None:
        """Commit a decided run: of the ends it recorded (one start), `regions.winner` picks."""
        watch = self._region.watch
        ends = run.ends
        start = run.start
        best = None
        several = False
        for k, end in enumerate(ends):
            if end >= 0:
                if watch[k].delimiter.lookahead_ends:
                    end = ends[k] = self._through_lookahead(watch[k].delimiter, start)
                if best is None:
                    best = (watch[k], start, end)
                else:
                    several = True
        if several:  # (one match, the common case, is its own winner)
            best = winner((watch[k], start, end) for k, end in enumerate(ends) if end >= 0)
        if best is not None and self._commit_match(events, *best):
            self._stopped = True
