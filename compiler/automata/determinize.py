"""Thompson NFA -> anchored, leftmost-first DFA over char classes (with one-symbol lookahead).

In:  an `Nfa` (nfa.py).
Out: `determinize(nfa) -> DeterminizedDfa`, trimmed, minimized and canonically numbered:
  - symbols: class ids 1..n (`classes[i - 1]` is a SymbolicCharSet; together they cover every
    code point, ordered by smallest code point) and 0 = EOI, fed once at end of input;
  - states: 0 is DEAD; `starts = (at_begin, after_word, after_other)` are the states a
    run starts in at buffer position 0, after a \\w char, after any other char (all
    three are the same state, 1, when the pattern has no ^ \\A \\b \\B);
  - `rows[s]`: {class id: next state}; a missing class, and EOI, lead to DEAD;
  - `ends[s]`: None, an int k, or {symbol: k}. A run in state s at buffer position i
    whose next symbol (text[i], or EOI when i == len(text) at the end of input) is c
    reports a match ending at i - k (an int: the same k for every symbol). k is 0,
    or 1 for `$` matching before a final "\\n", which only EOI after the "\\n" confirms.
    The run keeps the latest report; when it reaches DEAD (or EOI) that report is
    the leftmost-first match end of the run, the one `regex` would find.
    k = -1 - i (an NFA with AHEAD states, compiler/automata/trailing_lookahead.py): top-level
    alternative i matched through its look-ahead, read as consuming; the match ends where
    that alternative's text before the look-ahead ends.
Guaranteed: from a state that is not DEAD some input still leads to a report (a run
     holds text exactly while it is not DEAD); the same pattern always yields the same
     tables; more than MAX_DFA_STATES states raises UnsupportedRegex.

How a state is built. A DFA state is an *ordered* list of NFA threads, in priority
order, not yet epsilon-closed, plus what the assertions need to know about the left
context (at buffer start? was the previous char \\w?). To step on symbol c we close the
threads in priority order *knowing c* -- that is what resolves \\b, \\B, $ and \\Z
without a second pass -- and cut the list after the first thread that reaches MATCH
(RE2 dfa.cc, NOTE(rsc): lower-priority threads can never win against it, while the
threads before it may still find a later, preferred end). Reporting the match while
looking at c rather than after consuming it is regex-automata's "delayed match".

`$` before a final newline needs two symbols of lookahead. When c is "\\n", a thread
that passes `$` is *conditional*: valid only if EOI follows the "\\n". A conditional
thread that reaches MATCH becomes a "delayed match" item in the next state, reported
with k = 1 if EOI comes next; conditional CHAR threads survive only into EOI.

    `a$|a\\n` on "a\\n"  -> (0, 1): `$` holds before the final newline, and the first
                          alternative wins; on "a\\nb" -> (0, 2).

Alternatives considered:
  - Pike VM at run time (the runtime steps NFA thread lists per char): no
    construction cost, but every char of every delimiter costs a thread-list walk in
    Python; generated code would carry NFAs, not readable tables.
  - Backtracking with `regex` itself: exact for complete matches, but its answer to
    "can a match still start here?" (partial=True) is not: `t+?>` on "t<" is a
    partial match, and `\\B` after "t" at the end is none. That answer decides how
    long text is held, so `regex` stays the fallback for unsupported patterns only.
  - Subset construction over *sets* of NFA states (leftmost-longest, POSIX): loses
    the priority order, so `<t|<tool>` would match "<tool>" where `regex` gives "<t".
  - Ordered thread lists (chosen): leftmost-first exactly, tables small for delimiter
    patterns, and one construction serves both the prefilter and the hold rule.
"""

from __future__ import annotations

import contextvars
from bisect import bisect_right
from collections import deque
from dataclasses import dataclass, field

from chatparse.runtime.charclass import WORD as REAL_WORD

from ..frontend.regex_parse import UnsupportedRegex, parse_regex
from ..frontend.symbolic_charclass import (
    WORD,
    SymbolicCharSet,
    element_of,
    format_charset,
    partition,
)
from ..limits import MAX_DFA_STATES, MAX_TABLE_CELLS
from .nfa import AHEAD, ASSERT, CHAR, SPLIT, Nfa, build_nfa

DEAD = 0
EOI = 0


class StateMeter:
    """The DFA states built while it is set in `STATES_BUILT`, before minimisation and whether
    or not the DFA is finished (one that passes a limit falls back to `regex`, its work done):
    compiler/automata/region_automaton.py charges a template's delimiters with them. A context variable, so that
    templates compiled on two threads at once count apart."""

    def __init__(self) -> None:
        self.built = 0


STATES_BUILT: contextvars.ContextVar[StateMeter | None] = contextvars.ContextVar(
    "STATES_BUILT", default=None
)

NEWLINE = SymbolicCharSet.chars("\n")

# A thread item is (nfa state, pending): pending threads were let through by `$`
# before a "\n" and live only if EOI follows. DELAYED_MATCH is a match that ended
# before that "\n" (reported with k = 1 at EOI).
DELAYED_MATCH = (-1, True)

Ends = None | int | dict[int, int]


@dataclass(frozen=True)
class DeterminizedDfa:
    """The tables of the module docstring, plus lookups for simulators and printers."""

    classes: tuple[SymbolicCharSet, ...]
    rows: tuple[dict[int, int], ...]
    ends: tuple[Ends, ...]
    starts: tuple[int, int, int]
    _lookup: list = field(default_factory=list, compare=False, repr=False)

    # -- queries ------------------------------------------------------------------

    def end_for(self, state: int, symbol: int) -> int | None:
        """k if state `state` reports a match when the next symbol is `symbol`."""
        ends = self.ends[state]
        if ends is None or isinstance(ends, int):
            return ends
        return ends.get(symbol)

    def class_of(self, ch: str) -> int:
        """The class id (1..n) of a char."""
        if not self._lookup:
            bounds = sorted(
                (lo, hi, number)
                for number, charset in enumerate(self.classes, 1)
                for lo, hi in charset.ranges
            )
            self._lookup.extend(([b[0] for b in bounds], bounds))
        starts, bounds = self._lookup
        return bounds[bisect_right(starts, element_of(ch)) - 1][2]

    def start_state(self, text: str, position: int) -> int:
        """The start state for a run that begins at `position` of `text`."""
        if position == 0:
            return self.starts[0]
        return self.starts[1] if text[position - 1] in REAL_WORD else self.starts[2]

    @property
    def nullable_starts(self) -> bool:
        """Whether some start state reports a match before consuming anything."""
        return any(self.ends[start] is not None for start in self.starts)

    # -- printing -----------------------------------------------------------------

    def witnesses(self) -> dict[int, str]:
        """For each live state, the shortest input that reaches it from a start state
        (the lexicographically smallest among the shortest; start states get "")."""
        found: dict[int, str] = {}
        frontier = []
        for start in self.starts:
            if start != DEAD and start not in found:
                found[start] = ""
                frontier.append(start)
        while frontier:
            candidates: dict[int, str] = {}
            for state in frontier:
                for symbol, target in self.rows[state].items():
                    if target in found:
                        continue
                    text = found[state] + self.classes[symbol - 1].representative()
                    if target not in candidates or text < candidates[target]:
                        candidates[target] = text
            found.update(candidates)
            frontier = sorted(candidates)
        return dict(sorted(found.items()))

    def dump(self) -> str:
        lines = [
            "classes: "
            + " ".join(f"{i}=[{format_charset(c)}]" for i, c in enumerate(self.classes, 1))
        ]
        at_begin, after_word, after_other = self.starts
        lines.append(
            f"starts: at_begin={at_begin} after_word={after_word} after_other={after_other}"
        )
        for state in range(1, len(self.rows)):
            steps = " ".join(f"{c}->{t}" for c, t in sorted(self.rows[state].items()))
            ends = self.ends[state]
            shown: object = ends
            if isinstance(ends, dict):
                shown = (
                    "{"
                    + ", ".join(f"{'EOI' if c == EOI else c}:{k}" for c, k in sorted(ends.items()))
                    + "}"
                )
            report = "" if ends is None else f"  match {shown}"
            lines.append(f"{state}: {steps or '-'}{report}")
        return "\n".join(lines)


# --- determinize ---------------------------------------------------------------------


class _Lookahead(tuple):
    """What the closure needs to know about the next symbol: (is_eoi, is_newline, is_word).

    Classes with equal lookaheads share one closure per state."""

    is_eoi = property(lambda self: self[0])
    is_newline = property(lambda self: self[1])
    is_word = property(lambda self: self[2])


class _Determinizer:
    def __init__(self, nfa: Nfa) -> None:
        self.nfa = nfa
        kinds = nfa.assertion_kinds()
        self.uses_begin = "begin" in kinds
        self.uses_word = bool(kinds & {"word_boundary", "not_word_boundary"})
        uses_end = "end" in kinds
        sets = nfa.charsets()
        if self.uses_word:
            sets.append(WORD)
        if uses_end:
            sets.append(NEWLINE)
        self.classes = partition(sets)
        # Building costs a step per (state, class): a literal of n distinct chars has n states
        # and n + 1 classes, so its work grows with n squared. Past the limit, `regex` runs it.
        if len(nfa.states) * len(self.classes) > MAX_TABLE_CELLS:
            raise UnsupportedRegex(
                f"pattern too large for a DFA ({len(nfa.states)} NFA states times "
                f"{len(self.classes)} char classes, over {MAX_TABLE_CELLS})",
                nfa.span,
            )
        # Without assertions only EOI-ness matters (pending items need `$`, an assertion).
        self.lookaheads = [_Lookahead((True, False, False))] + [
            _Lookahead(
                (
                    False,
                    uses_end and "\n" in charset,
                    self.uses_word and charset.first in WORD,
                )
            )
            for charset in self.classes
        ]
        # Per CHAR state of an alternative that ends in AHEAD(i): i (see `closure`).
        self.owner = _alternative_owners(nfa)
        # The class ids each CHAR state accepts (a class lies wholly inside or
        # outside every NFA char set: the partition refines them all).
        self.accepts: dict[int, tuple[int, ...]] = {}
        for number, nfa_state in enumerate(nfa.states):
            if nfa_state.charset is not None:  # a CHAR state
                self.accepts[number] = tuple(
                    symbol
                    for symbol, charset in enumerate(self.classes, 1)
                    if charset.first in nfa_state.charset
                )

    # -- closure --------------------------------------------------------------------

    def closure(self, key: tuple, look: _Lookahead) -> list[tuple]:
        """The ordered events of state `key` when the next symbol looks like `look`:
        ("char", nfa state, conditional), ("conditional_match",), ("match", k);
        a ("match", k) event is always last (the cut)."""
        core, at_begin, after_word = key
        states = self.nfa.states
        events: list[tuple] = []
        seen: set[tuple[int, bool]] = set()
        for item in core:
            if item == DELAYED_MATCH:
                if look.is_eoi:
                    events.append(("match", 1))
                    return events
                continue
            start, pending = item
            if pending and not look.is_eoi:
                continue
            # Depth-first in priority order; a state already reached at this position
            # (unconditionally, or with the same condition) has nothing new to offer.
            stack = [(start, False)]
            while stack:
                state, conditional = stack.pop()
                if (state, conditional) in seen or (state, False) in seen:
                    continue
                seen.add((state, conditional))
                nfa_state = states[state]
                kind = nfa_state.kind
                if kind == CHAR:
                    events.append(("char", state, conditional))
                elif kind == SPLIT:
                    stack.extend((target, conditional) for target in reversed(nfa_state.targets))
                elif kind == ASSERT:
                    passes = _assertion_holds(nfa_state.assertion, at_begin, after_word, look)
                    if passes:
                        stack.append((nfa_state.next, conditional or passes == "conditional"))
                elif kind == AHEAD:
                    # The look-ahead of alternative i is through: the match is decided, as
                    # `regex` tries a look-ahead once (atomic). Its other threads could only
                    # report the same end again (the text before the look-ahead matches in one
                    # way, compiler/automata/trailing_lookahead.py checks), so they go, and the run is
                    # not kept alive by them.
                    alternative = nfa_state.alternative
                    owner = self.owner
                    events = [
                        event
                        for event in events
                        if event[0] != "char" or owner.get(event[1]) != alternative
                    ]
                    events.append(("match", -1 - alternative))
                    return events
                elif conditional:  # MATCH, but only if EOI follows the "\n"
                    events.append(("conditional_match",))
                else:
                    events.append(("match", 0))
                    return events
        return events

    # -- one state ------------------------------------------------------------------

    def expand(self, key: tuple) -> tuple[dict[int, tuple], dict[int, int]]:
        """(successor key per class id, k per reporting symbol) of state `key`."""
        closures: dict[_Lookahead, list[tuple]] = {}
        reports: dict[int, int] = {}
        successors: dict[int, tuple] = {}
        states = self.nfa.states
        for symbol, look in enumerate(self.lookaheads):
            if look not in closures:
                closures[look] = self.closure(key, look)
            events = closures[look]
            if events and events[-1][0] == "match":
                reports[symbol] = events[-1][1]
        # Transitions: for each distinct closure, walk its events once and append
        # each thread's successor to the item list of every class it accepts.
        for look, events in closures.items():
            if look.is_eoi:
                continue
            symbols = [s for s, other in enumerate(self.lookaheads) if other == look and s != EOI]
            items: dict[int, list[tuple[int, bool]]] = {s: [] for s in symbols}
            present: dict[int, set[tuple[int, bool]]] = {s: set() for s in symbols}
            for event in events:
                if event[0] == "match":
                    break
                if event[0] == "conditional_match":
                    # Only a "\n" makes a condition, so this look is the newline class.
                    targets, item = symbols, DELAYED_MATCH
                else:
                    _, state, conditional = event
                    targets = [s for s in self.accepts[state] if s in items]
                    item = (states[state].next, conditional)
                for symbol in targets:
                    seen = present[symbol]
                    if item in seen or (item[1] and (item[0], False) in seen):
                        continue
                    seen.add(item)
                    items[symbol].append(item)
            for symbol in symbols:
                if items[symbol]:
                    successors[symbol] = (tuple(items[symbol]), False, look.is_word)
        return successors, reports

    # -- the automaton ----------------------------------------------------------------

    def build(self) -> tuple[list[dict[int, int]], list[dict[int, int]], tuple[int, int, int]]:
        """Raw tables: rows, ends as {symbol: k}, starts (state 0 is DEAD)."""
        start_item = ((self.nfa.start, False),)
        start_keys = [
            (start_item, self.uses_begin, False),
            (start_item, False, self.uses_word),
            (start_item, False, False),
        ]
        numbers: dict[tuple, int] = {}
        keys: list[tuple] = [()]  # DEAD has no key

        def number_of(key: tuple) -> int:
            if key not in numbers:
                if len(keys) > MAX_DFA_STATES:
                    raise UnsupportedRegex(
                        f"pattern too large for a DFA (over {MAX_DFA_STATES} states)",
                        self.nfa.span,
                    )
                if len(keys) * len(self.classes) > MAX_TABLE_CELLS:
                    raise UnsupportedRegex(
                        f"pattern too large for a DFA (over {MAX_TABLE_CELLS} table cells)",
                        self.nfa.span,
                    )
                numbers[key] = len(keys)
                keys.append(key)
                meter = STATES_BUILT.get()
                if meter is not None:
                    meter.built += 1
            return numbers[key]

        starts = (number_of(start_keys[0]), number_of(start_keys[1]), number_of(start_keys[2]))
        rows: list[dict[int, int]] = [{}]
        ends: list[dict[int, int]] = [{}]
        done = 1
        while done < len(keys):
            successors, reports = self.expand(keys[done])
            rows.append({symbol: number_of(key) for symbol, key in sorted(successors.items())})
            ends.append(reports)
            done += 1
        return rows, ends, starts


def _alternative_owners(nfa: Nfa) -> dict[int, int]:
    """CHAR state -> i, for the CHAR states from which AHEAD(i) is reachable (each reaches one
    at most: an alternative's states are built towards its own end state)."""
    owners: dict[int, int] = {}
    ends = {
        number: state.alternative
        for number, state in enumerate(nfa.states)
        if state.kind == AHEAD and state.alternative is not None
    }
    if not ends:
        return owners
    predecessors: dict[int, list[int]] = {}
    for number, state in enumerate(nfa.states):
        for target in state.targets:
            predecessors.setdefault(target, []).append(number)
    for end, alternative in ends.items():
        seen = {end}
        stack = [end]
        while stack:
            for before in predecessors.get(stack.pop(), ()):
                if before not in seen:
                    seen.add(before)
                    stack.append(before)
        for number in seen:
            if nfa.states[number].kind == CHAR:
                owners[number] = alternative
    return owners


def _assertion_holds(kind: str, at_begin: bool, after_word: bool, look: _Lookahead):
    """True, False, or "conditional" (`$` before a "\n": holds if EOI follows it)."""
    if kind == "begin":
        return at_begin
    if kind == "end_z":
        return look.is_eoi
    if kind == "end":
        return True if look.is_eoi else ("conditional" if look.is_newline else False)
    if kind == "word_boundary":
        return after_word != look.is_word
    if kind == "not_word_boundary":
        return after_word == look.is_word
    raise ValueError(f"unknown assertion {kind!r}")


# --- trim, minimize, number ----------------------------------------------------------


def _trim(rows: list[dict[int, int]], ends: list[dict[int, int]]) -> set[int]:
    """The states from which some input leads to a report."""
    predecessors: dict[int, set[int]] = {}
    for state, row in enumerate(rows):
        for target in row.values():
            predecessors.setdefault(target, set()).add(state)
    live = {state for state, reports in enumerate(ends) if reports}
    stack = list(live)
    while stack:
        for before in predecessors.get(stack.pop(), ()):
            if before not in live:
                live.add(before)
                stack.append(before)
    live.discard(DEAD)
    return live


def _minimize(rows, ends, live: set[int], symbols: int) -> list[int]:
    """Block number per state; DEAD and every dead state share DEAD's block.

    Hopcroft's partition refinement: start from blocks of equal `ends`, split a
    block whenever some symbol leads part of it into a splitter block and part not.
    """
    count = len(rows)

    def target(state: int, symbol: int) -> int:
        t = rows[state].get(symbol, DEAD)
        return t if t in live else DEAD

    members = [DEAD] + sorted(live)
    inverse: list[dict[int, list[int]]] = [{} for _ in range(symbols + 1)]
    for state in members:
        for symbol in range(1, symbols + 1):
            inverse[symbol].setdefault(target(state, symbol), []).append(state)

    by_ends: dict[tuple, list[int]] = {}
    for state in members:
        by_ends.setdefault(tuple(sorted(ends[state].items())) if state else ("dead",), []).append(
            state
        )
    blocks: list[set[int]] = [set(group) for group in by_ends.values()]
    block_of = [0] * count
    for number, block in enumerate(blocks):
        for state in block:
            block_of[state] = number
    pending = set(range(len(blocks)))
    while pending:
        splitter = set(blocks[pending.pop()])
        for symbol in range(1, symbols + 1):
            into = {s for t in splitter for s in inverse[symbol].get(t, ())}
            touched: dict[int, set[int]] = {}
            for state in into:
                touched.setdefault(block_of[state], set()).add(state)
            for number, part in touched.items():
                block = blocks[number]
                if len(part) == len(block):
                    continue
                blocks[number] = block - part
                blocks.append(part)
                new = len(blocks) - 1
                for state in part:
                    block_of[state] = new
                if number in pending or len(part) <= len(blocks[number]):
                    pending.add(new)
                else:
                    pending.add(number)
    dead_block = block_of[DEAD]
    # Renumber so that DEAD's block is 0.
    return [
        (
            0
            if (state not in live and state != DEAD) or block_of[state] == dead_block
            else block_of[state] + 1
        )
        for state in range(count)
    ]


def determinize(nfa: Nfa) -> DeterminizedDfa:
    """The trimmed, minimal, canonically numbered DFA of `nfa` (module docstring)."""
    builder = _Determinizer(nfa)
    rows, ends, starts = builder.build()
    return _minimal(builder.classes, rows, ends, starts)


def after_start(dfa: DeterminizedDfa) -> DeterminizedDfa | None:
    """The DFA of the runs that start after buffer position 0, when only position 0 starts
    differently (`^`, `\\A`: the starts after a \\w char and after any other are one state):
    every start is that state, and the states only position 0 reaches are gone, minimal and
    canonically numbered again, so that `<think>|^` becomes the DFA of `<think>` and a pattern
    that needs position 0 (`^\\s*<think>`) one that matches nothing (starts DEAD). None when
    position 0 starts like any other, or when the char before a start matters (`\\b`)."""
    at_begin, after_word, after_other = dfa.starts
    if after_word != after_other or at_begin == after_word:
        return None
    symbols = len(dfa.classes) + 1  # the classes and EOI
    reached = {after_word}
    frontier = [after_word]
    while frontier:
        for target in dfa.rows[frontier.pop()].values():
            if target not in reached:
                reached.add(target)
                frontier.append(target)
    # A state only position 0 reaches is left with no way on and no report: dead, so neither its
    # row nor its reports can keep two classes apart.
    rows = [dict(row) if state in reached else {} for state, row in enumerate(dfa.rows)]
    ends: list[dict[int, int]] = []
    for state, report in enumerate(dfa.ends):
        if report is None or state not in reached:
            ends.append({})
        elif isinstance(report, int):
            ends.append(dict.fromkeys(range(symbols), report))
        else:
            ends.append(dict(report))
    return _minimal(dfa.classes, rows, ends, (after_word, after_word, after_word))


def _minimal(classes, rows, ends, starts) -> DeterminizedDfa:
    """Raw tables (rows, ends as {symbol: k}, starts) -> the trimmed, minimal, canonical DFA."""
    live = _trim(rows, ends)
    block = _minimize(rows, ends, live, len(classes))

    # One representative per block.
    representative: dict[int, int] = {}
    for state in range(len(rows)):
        representative.setdefault(block[state], state)
    block_rows = {
        b: {c: block[t] for c, t in rows[s].items() if block[t] != 0}
        for b, s in representative.items()
    }
    block_ends = {b: (dict(ends[s]) if b != 0 else {}) for b, s in representative.items()}
    block_starts = tuple(block[s] for s in starts)

    classes, block_rows, block_ends = _merge_classes(classes, block_rows, block_ends)
    return _canonical(classes, block_rows, block_ends, block_starts)


def _merge_classes(classes, rows, ends):
    """Merge classes that every state treats alike; renumber by smallest code point."""
    states = sorted(rows)
    columns: dict[tuple, list[int]] = {}
    for symbol in range(1, len(classes) + 1):
        column = tuple((rows[s].get(symbol, 0), ends[s].get(symbol)) for s in states)
        columns.setdefault(column, []).append(symbol)
    groups = []
    for members in columns.values():
        merged = classes[members[0] - 1]
        for symbol in members[1:]:
            merged = merged | classes[symbol - 1]
        groups.append((merged, members))
    groups.sort(key=lambda group: group[0].order())
    new_id = {}
    for number, (_, members) in enumerate(groups, 1):
        for symbol in members:
            new_id[symbol] = number
    new_classes = tuple(charset for charset, _ in groups)
    new_rows = {s: {new_id[c]: t for c, t in row.items()} for s, row in rows.items()}
    new_ends = {
        s: {(EOI if c == EOI else new_id[c]): k for c, k in reports.items()}
        for s, reports in ends.items()
    }
    return new_classes, new_rows, new_ends


def _canonical(classes, rows, ends, starts) -> DeterminizedDfa:
    """Number states by BFS from the starts, transitions in class order; DEAD is 0."""
    number = {0: DEAD}
    order = []
    queue: deque[int] = deque()
    for start in starts:
        if start not in number:
            number[start] = len(number)
            order.append(start)
            queue.append(start)
    while queue:
        state = queue.popleft()
        for symbol in sorted(rows[state]):
            target = rows[state][symbol]
            if target not in number:
                number[target] = len(number)
                order.append(target)
                queue.append(target)
    symbols = len(classes) + 1
    final_rows: list[dict[int, int]] = [{}]
    final_ends: list[Ends] = [None]
    for state in order:
        final_rows.append({c: number[t] for c, t in sorted(rows[state].items())})
        reports = ends[state]
        if not reports:
            final_ends.append(None)
        elif len(reports) == symbols and len(set(reports.values())) == 1:
            final_ends.append(next(iter(reports.values())))
        else:
            final_ends.append(dict(sorted(reports.items())))
    return DeterminizedDfa(
        classes=classes,
        rows=tuple(final_rows),
        ends=tuple(final_ends),
        starts=(number[starts[0]], number[starts[1]], number[starts[2]]),
    )


def build_dfa(pattern: str) -> DeterminizedDfa:
    """parse_regex -> build_nfa -> determinize (raises UnsupportedRegex / InvalidRegex)."""
    try:
        return determinize(build_nfa(parse_regex(pattern)))
    except UnsupportedRegex as error:
        if error.pattern is not None:
            raise
        # The size guards know the span but not the text; name the pattern.
        raise UnsupportedRegex(error.construct, error.span, pattern) from None


# --- prefilter -----------------------------------------------------------------------


def first_chars(dfa: DeterminizedDfa) -> SymbolicCharSet:
    """Chars on which some start state does not go to DEAD (the prefilter set).

    If `dfa.nullable_starts`, a match can also begin without consuming, so every
    position is a candidate whatever char stands there.
    """
    result = SymbolicCharSet()
    for start in dict.fromkeys(dfa.starts):
        if start == DEAD:
            continue
        for symbol in dfa.rows[start]:
            result = result | dfa.classes[symbol - 1]
    return result


# --- a reference simulator (tests, and the model for the runtime's stepper) ----------


def match_state(dfa: DeterminizedDfa, text: str, start: int) -> tuple[int, int | None]:
    """Run anchored at `start` over text[start:] without EOI.

    Returns (state after the last char, or DEAD if the run died; the latest match
    end reported). DEAD with None means no match can start at `start`.
    """
    state = dfa.start_state(text, start)
    last = None
    position = start
    while state != DEAD and position < len(text):
        symbol = dfa.class_of(text[position])
        k = dfa.end_for(state, symbol)
        if k is not None:
            last = position - k
        state = dfa.rows[state].get(symbol, DEAD)
        position += 1
    return state, last


def match_end(dfa: DeterminizedDfa, text: str, start: int) -> int | None:
    """The end of the leftmost-first match anchored at `start` (text ends there: EOI)."""
    state, last = match_state(dfa, text, start)
    if state != DEAD:
        k = dfa.end_for(state, EOI)
        if k is not None:
            last = len(text) - k
    return last


def search(dfa: DeterminizedDfa, text: str, pos: int = 0) -> tuple[int, int] | None:
    """The leftmost-first match at or after `pos`: try each start in turn.

    As `regex.search(text, pos)`, a `pos` past the end means the end."""
    for start in range(min(pos, len(text)), len(text) + 1):
        end = match_end(dfa, text, start)
        if end is not None:
            return (start, end)
    return None
