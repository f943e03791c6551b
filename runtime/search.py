r"""Whole-text search for one delimiter, and where a match may start in a stream.

In: a `Delimiter` (its DFA tables) and a complete string, or for `text_end_finder` the `Heads` of a
region's watched delimiters. Out: leftmost-first spans, as `regex.search`/`finditer` give them
(`search`, `iter_spans`, `last_match_end`), the first start whose anchored run is still alive at
the end of the text (`leftmost_pending`), and candidate finders for the streaming path.

Guarantee: linear time in the text, however it is made. Runs from every start position are
stepped together, and of two runs without a match in the same state only the earlier is kept (it
wins whatever follows), so at most one run per state is alive; literals and self-loops are found
in C. `regex.search` would instead retry from every position.

What every match begins with (`Heads`: a lead run, then one of some literals) and whether a
delimiter is one plain literal are the compiler's analysis (`compiler/planning/analysis.py`), declared by
the generated module; nothing here reads them off the tables.
"""

from __future__ import annotations

import re

from .charclass import CharSet
from .dfa_tables import DEAD, END_OF_INPUT, prefilter_class_source
from .literal_trie import trie_source

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

    from .delimiter import Delimiter


class Heads:
    r"""Every match of a delimiter is some chars of `lead`, then one of `literals`.

    `\s*<tool_call>` is spaces, then `<tool_call>`; `\s*(?:<｜calls｜>\s*)?<｜call｜>` is spaces,
    then `<｜calls｜>` or `<｜call｜>`; harmony's `<\|channel\|>...|\s*to=functions\.` is spaces,
    then `<|channel|>` or `to=functions.`. The literals are found in C (`str.find`, or one `re` of
    plain alternatives, which never backtracks). A match that uses a literal at `p` can only start
    in the run of lead chars that ends at `p`, so the earliest start worth a run is the start of
    the lead run before the first literal found; the search steps runs from there, as it would
    anywhere else. Where the compiler declares the chars that may follow a literal in a match
    (`follows`), a complete text's search passes over that literal followed by anything else, or
    by nothing (`text_end_finder`, for a text that may go on, reads `literals` alone).
    """

    __slots__ = ("lead", "literals", "lead_chars", "_find", "pending_start")

    def __init__(
        self, lead: CharSet, literals: list[str], follows: dict[str, CharSet] | None = None
    ) -> None:
        self.lead = lead
        self.literals = shortest_literals(literals)
        # ASCII lead chars as a frozenset (a C lookup); any other char asks `lead`, which measures
        # the Unicode tables only then.
        self.lead_chars = ascii_chars(lead)
        # Built by `leftmost_pending` on first use.
        self.pending_start: Callable[[str, int], int] | None = None
        if len(self.literals) == 1 and not follows:
            (literal,) = self.literals
            self._find = lambda text, pos: text.find(literal, pos)
        else:
            # A literal that the compiler found must be followed by some chars in a match
            # (`follows`: `<|start|>assistant` by a space or `to=`) is found only where one of them
            # follows (a one-char look-ahead), so a complete text skips the places no match uses.
            after = follows or {}
            search = re.compile(
                "|".join(
                    re.escape(literal)
                    + (f"(?={prefilter_class_source(after[literal])})" if literal in after else "")
                    for literal in self.literals
                )
            ).search

            def find(text: str, pos: int) -> int:
                found = search(text, pos)
                return found.start() if found is not None else -1

            self._find = find

    def first_start(self, text: str, pos: int) -> int:
        """The first position >= pos where a match could start in the complete `text`, or -1:
        `starts_in(text)(pos)` for one question, without building the cursor."""
        found = self._find(text, pos)
        return found if found < 0 else lead_run_start(text, found, pos, self.lead_chars, self.lead)

    def starts_in(self, text: str) -> Callable[[int], int]:
        """`next_start(pos)`: the first position >= pos where a match could start in the complete
        `text`, or -1, for positions that never decrease.

        Each literal is found once and the lead run before it walked back once: asked again from
        a later position up to that literal, the answer is the later of that position and the
        run's start. A search asks from every position of a long lead run (`"hi" + " " * n +
        "<tool_call>oops"`), so finding and walking again at each one would be quadratic.
        """
        find = self._find
        lead_chars, lead = self.lead_chars, self.lead
        literal_at = -1  # the literal found last (-1: none yet); no literal starts before it
        run_start = 0  # where the lead run before `literal_at` starts, or the position asked
        exhausted = False

        def next_start(pos: int) -> int:
            nonlocal literal_at, run_start, exhausted
            if exhausted:
                return -1
            if pos > literal_at:
                found = find(text, pos)
                if found < 0:
                    exhausted = True
                    return -1
                literal_at = found
                run_start = lead_run_start(text, found, pos, lead_chars, lead)
            return pos if pos > run_start else run_start

        return next_start


def shortest_literals(literals: Iterable[str]) -> tuple[str, ...]:
    """`literals` without those that extend another (which add nothing to a filter), sorted."""
    kept: list[str] = []
    for literal in sorted(set(literals), key=len):
        if not any(literal.startswith(shorter) for shorter in kept):
            kept.append(literal)
    return tuple(sorted(kept))


def lead_run_start(
    text: str, at: int, floor: int, lead_chars: frozenset[str], lead: CharSet
) -> int:
    """Where the run of `lead` chars that ends at `at` starts, but not before `floor`
    (`lead_chars`: its ASCII members, a C lookup; any other char asks `lead`)."""
    while at > floor and (
        text[at - 1] in lead_chars or (text[at - 1] > "\x7f" and text[at - 1] in lead)
    ):
        at -= 1
    return at


def ascii_chars(charset: CharSet) -> frozenset[str]:
    """The ASCII members of `charset` (known without measuring the Unicode tables)."""
    return frozenset(chr(cp) for lo, hi in charset.ascii_ranges() for cp in range(lo, hi + 1))


# The longest literal prefix `text_end_finder` spells out (see there).
CUT_OFF_MAX = 64


def text_end_finder(heads: list[Heads]) -> tuple[re.Pattern, Callable[[str, int], int]]:
    """Where a match of any of `heads` may start in a text that may go on (a stream so far).

    Returns a compiled `re` that finds whether there is such a place, and `candidate(text, pos)`,
    the first one at or after `pos` (-1: none). Candidates are where a literal begins, a proper
    prefix of one that the end of the text cuts off, or a lead char that ends the text; each moved
    back over the lead chars before it (over the union of the leads: a superset is still safe).
    The `re` is the literals' trie, so an attempt reads at most `CUT_OFF_MAX` chars.
    """
    # One trie-shaped `re` (runtime/literal_trie.py): an alternative per literal and per prefix
    # cost each position one attempt per alternative (2 us a short chunk for harmony's), and grew
    # with the square of a literal's length. Cut off, the trie nests a group per char, so a
    # literal longer than CUT_OFF_MAX (at most `literal_trie.NESTING_MAX` + 1, which
    # tests/test_literal_trie.py holds) is looked for by its first CUT_OFF_MAX chars, anywhere:
    # that finds it, and every prefix of it the end of the text cuts off past that length, and
    # some places where it does not follow (a superset, which the runs stepped from there decide).
    literals = sorted({literal[:CUT_OFF_MAX] for h in heads for literal in h.literals})
    lead_set = CharSet()
    for h in heads:
        lead_set = lead_set | h.lead
    alternatives = [trie_source(literals, cut_off=True)]
    if lead_set.deferred or lead_set:
        alternatives.append(prefilter_class_source(lead_set) + r"\Z")
    compiled = re.compile("|".join(alternatives))
    search = compiled.search
    lead_chars = ascii_chars(lead_set)

    def candidate(text: str, pos: int) -> int:
        found = search(text, pos)
        if found is None:
            return -1
        return lead_run_start(text, found.start(), pos, lead_chars, lead_set)

    return compiled, candidate


def search(
    delimiter: Delimiter, text: str, pos: int = 0, text_is_ascii: bool | None = None
) -> tuple[int, int] | None:
    """Leftmost-first search over a complete string (the input ends with `text`), in linear time
    (see the module docstring); `delimiter` has DFA tables. `text_is_ascii`: `text.isascii()`,
    when the caller knows it (else asked here when an anchored `re` match needs it)."""
    if not (delimiter.starts[1] or delimiter.starts[2]):
        # Only buffer position 0 starts a run (`^(?=\[NAME\()`): one run there, or none.
        end = delimiter.run_from(text, 0)[0] if pos == 0 else -1
        return (0, end) if end >= 0 else None
    heads = delimiter.heads
    if heads is None:
        return search_runs(delimiter, text, pos, None)
    # One run from each place a match can start, while their spans do not overlap (but for the
    # char a run dies on): the first that matches is the leftmost. Starts that fall inside a
    # failed run's span are stepped together with the runs below until every run has died past
    # that span; then single runs take over again. A char is read by at most one single run and
    # one stepping of runs together (and a lead run walked back a bounded number of times), so
    # the time stays linear however the text is made.
    start = heads.first_start(text, pos)  # most searches end with their first run, or here
    next_start = None  # the cursor over later starts, built when the first run fails
    # One `re` match finds a match at a start in C, where the compiler proved it linear; a start
    # without one is run on the DFA too, for where the run stopped (the `re` attempt read no
    # further: both die where the pattern's last path does).
    anchored = delimiter.anchored_matcher(text, text_is_ascii) if start >= 0 else None
    while start >= 0:
        if anchored is not None:
            found = anchored(text, start)
            if found is not None:
                return start, found.end()
        end, stop = delimiter.run_from(text, start)
        if end >= 0:
            return start, end
        if next_start is None:
            next_start = heads.starts_in(text)
        # A run from a later start in the failed run's start-state loop (the rest of the lead
        # run before a literal, `\n` before "```json") reaches the same state where that loop
        # ends, so it fails alike: the next start worth a run is past it.
        start = next_start(delimiter.start_loop_end(text, start) + 1)
        if 0 <= start < stop:
            found = search_runs(delimiter, text, start, next_start, stop)
            if found is None or found[0] >= 0:
                return found
            start = next_start(found[1])
    return None


def search_runs(
    delimiter: Delimiter,
    text: str,
    pos: int,
    starts: Callable[[int], int] | None,
    until: int = -1,
) -> tuple[int, int] | None:
    """`search` with every start stepped together (see there); `starts` is the `Heads`
    cursor over `text` (None: the delimiter has no `Heads`). With `until` >= 0, the stepping
    stops where no run is alive at or past `until`: (-1, that position), from which `search`
    goes on with single runs."""
    length = len(text)
    runs: list[list[int]] = []  # [start, state, end]: in start order; end -1 = no match yet
    position = pos
    next_start = -1  # with `starts`: no match starts in [position, next_start)
    while True:
        if starts is not None and next_start < position:
            found = starts(position)
            next_start = found if found >= 0 else length + 1
        if position < length:
            if not runs:
                if 0 <= until <= position:
                    return -1, position
                position = _next_start(delimiter, text, position, starts, next_start)
                if position < 0:
                    return None
            elif len(runs) == 1 and runs[0][1]:
                position, jumped = _jump_lone_run(
                    delimiter, text, position, runs[0], starts, next_start
                )
                if jumped:
                    continue
        if not (runs and runs[-1][2] >= 0) and (starts is None or position == next_start):
            # No run has matched yet, so a run starting here could still be the leftmost.
            start_run(delimiter, runs, position, text[position - 1] if position else "")
        runs = step_runs(delimiter, runs, position, text[position] if position < length else END)
        decided = decided_match(runs)
        if decided is not None:
            if delimiter.lookahead_ends:  # where the match ends, not its look-ahead's text
                return decided[0], delimiter.through_lookahead(text, decided[0])
            return decided
        if position >= length:
            return None
        position += 1


def _next_start(
    delimiter: Delimiter,
    text: str,
    position: int,
    starts: Callable[[int], int] | None,
    next_start: int,
) -> int:
    """With no live run: the next position a match may start at (-1: none in the text)."""
    if starts is not None:
        return next_start if next_start <= len(text) else -1
    candidates = delimiter.candidates
    if candidates is None:
        return position
    found = candidates.search(text, position)
    return found.start() if found is not None else len(text)


def _jump_lone_run(
    delimiter: Delimiter,
    text: str,
    position: int,
    run: list[int],
    starts: Callable[[int], int] | None,
    next_start: int,
) -> tuple[int, bool]:
    """Move one live run ahead in C: over its state's self-loop (`.*?` in a tag) to the next
    char that can leave it or start a new run, then over a literal stretch (`parameter=` after
    `<`), which it either reads whole or dies on, when no run has to start inside it. Returns
    (the position reached, whether it crossed a stretch: the caller starts over there)."""
    length = len(text)
    spawning = run[2] < 0
    if starts is None:
        exits = delimiter.loop_exits(run[1], spawning=spawning)
        limit = length
    else:
        exits = delimiter.loop_exits(run[1], spawning=False)
        limit = min(next_start, length) if spawning else length
    if exits is not None:
        found = exits.search(text, position, limit)
        position = found.start() if found is not None else limit
    chain = delimiter.literal_chain(run[1])
    if chain is None or not text.startswith(chain[0], position):
        return position, False
    if run[2] >= 0 or chain[2] or (starts is not None and next_start >= position + len(chain[0])):
        run[1] = chain[1]
        return position + len(chain[0]), True
    return position, False


# The runs of one delimiter over one text, kept in start order as [start, state, end] (end -1: no
# match yet): the rule "the earliest start wins, one run per state" for a single DFA, which
# whole-text search steps here and serving/inline_calls.py steps as a stream's chars arrive.
END = END_OF_INPUT


def start_run(delimiter: Delimiter, runs: list[list[int]], position: int, prev: str) -> None:
    """Start a run at `position` (`prev`: the char before it, "" at the start)."""
    state = delimiter.start_state(position == 0, prev)
    if state in delimiter.settled:
        runs.append([position, DEAD, position])
    elif state:
        runs.append([position, state, -1])


def step_runs(
    delimiter: Delimiter, runs: list[list[int]], position: int, ch: Any
) -> list[list[int]]:
    """Step every run over `ch`, the char at `position` (`END`: the end of the input); keep the
    runs that can still matter: up to the first with a match, one per state."""
    at_end = ch is END
    kept: list[list[int]] = []
    seen: set[int] | None = None  # the kept runs' states, made once a second run is alive
    for start, state, end in runs:
        if state:
            offset = delimiter.end_offset(state, ch)
            if offset is not None:
                end = position - offset
            state = DEAD if at_end else delimiter.next_state(state, ch)
            if state in delimiter.settled:
                state, end = DEAD, position + 1
        if end >= 0:
            kept.append([start, state, end])
            break  # an earlier start always wins: later runs can never matter
        if state:
            if kept:
                if seen is None:
                    seen = {run[1] for run in kept}
                if state in seen:
                    continue
                seen.add(state)
            kept.append([start, state, -1])
    return kept


def decided_match(runs: list[list[int]]) -> tuple[int, int] | None:
    """(start, end) of the first run once it has a match that no char can change, else None."""
    if runs and runs[0][2] >= 0 and not runs[0][1]:
        return runs[0][0], runs[0][2]
    return None


def iter_spans(delimiter: Delimiter, text: str, pos: int = 0) -> Iterator[tuple[int, int]]:
    """Spans of `regex.finditer(pattern, text, pos)`: non-overlapping, leftmost-first."""
    if delimiter.fallback or delimiter.candidates is None or delimiter.lookahead_ends:
        # After an empty match `regex` retries the same position for a *non-empty* match of
        # lower priority (`|a` on "a" gives (0, 0) then (0, 1)); a leftmost-first DFA has cut
        # that alternative, so patterns that can match empty use `regex` here (and those with
        # look-aheads, `(?=<call>)|<end>`, whose empty matches the start state does not show).
        for found in delimiter.compiled.finditer(text, pos):
            yield found.span()
        return
    position = pos
    # Asked once for every search over the text, and only by a delimiter whose `re` spelling
    # depends on it (an xml-inline tag left on the DFA reads no more of its body for it).
    text_is_ascii = text.isascii() if delimiter.anchored_parts is not None else None
    while position <= len(text):
        found = delimiter.search(text, position, text_is_ascii)
        if found is None:
            return
        yield found
        position = found[1]  # never empty here, so this always advances


def groupdicts(delimiter: Delimiter, text: str, pos: int = 0) -> Iterator[dict[str, str | None]]:
    """`regex.finditer(pattern, text, pos)`'s groupdicts; spans found in linear time by the DFA."""
    for start, end in iter_spans(delimiter, text, pos):
        found = delimiter.groups_reader(text, start, end).match(text, start)
        if found is None or found.end() != end:
            raise AssertionError(
                f"{delimiter.source}: regex disagrees with the DFA at {start}-{end}"
            )
        yield delimiter.group_values(found)


def leftmost_pending(delimiter: Delimiter, text: str, pos: int) -> int | None:
    """The first start >= pos whose anchored run is still alive at the end of `text` (where
    `match_at(text, start, final=False)` says "pending").

    Linear time: runs from every start are stepped together, and of two runs in the same state
    only the earlier start is kept, since both are alive at the end or neither is.
    """
    settled = delimiter.settled
    candidates = delimiter.candidates
    length = len(text)
    runs: dict[int, int] = {}  # live state -> earliest start in it
    position = pos
    heads = delimiter.heads
    if heads is not None:
        # A pending run holds lead chars, then part of a literal or more: it starts at or
        # after the first place `text_end_finder` accepts, or is the empty run at the end.
        if heads.pending_start is None:
            heads.pending_start = text_end_finder([heads])[1]
        position = heads.pending_start(text, pos)
        if position < 0:
            position = length
    while True:
        if not runs and candidates is not None and position < length:
            found = candidates.search(text, position)
            position = found.start() if found is not None else length
        state = delimiter.start_state(position == 0, text[position - 1] if position else "")
        if state and state not in settled and state not in runs:
            runs[state] = position
        if position == length:
            return min(runs.values()) if runs else None
        ch = text[position]
        stepped: dict[int, int] = {}
        for state, start in runs.items():
            state = delimiter.next_state(state, ch)
            if state and state not in settled and start < stepped.get(state, length + 1):
                stepped[state] = start
        runs = stepped
        position += 1


def last_match_end(delimiter: Delimiter, text: str) -> int | None:
    """End of the last match of `finditer(text)` (non-overlapping, leftmost-first), or None.

    This is where the start anchor cuts the prefix: the reference keeps what follows the *last*
    anchor match. Non-overlapping matters: "aa" in "aaa" ends at 2, not 3.
    """
    last_end = None
    literal = delimiter.single_literal
    if literal is not None:
        if not delimiter.literal_overlaps:
            # Two occurrences never overlap, so the last one found from the right is the last
            # one found from the left.
            found = text.rfind(literal)
            return found + len(literal) if found >= 0 else None
        found = text.find(literal)
        while found >= 0:
            last_end = found + len(literal)
            found = text.find(literal, last_end)
        return last_end
    for _, last_end in delimiter.iter_spans(text):  # noqa: B007 (the last one is wanted)
        pass
    return last_end
