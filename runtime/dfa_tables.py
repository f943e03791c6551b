r"""One delimiter's anchored DFA: the tables a generated module holds, and how to step them.

In: the tables `compiler/automata/determinize.py` produces for one delimiter pattern. Out: `DfaTables`, which the region
parser's lazy product DFA (`regions.py`) and the whole-text search (`search.py`) step one
character at a time through per-character memo tables, and the shortcuts a whole-text run takes
from what the module declares beside the tables (literal stretches and self-loops, from
compiler/planning/run_crossings.py; the chars a match can start with). `delimiter.py` adds the search,
named groups and the `regex` fallback on top.

## The matching contract

chatparse's result is the reference's *one-shot* result: `parse_response` on the whole text. For one
delimiter that means `regex.search(text, pos)` with DOTALL and the whole text present:

- **Within one delimiter: leftmost-first,** as the `regex` module: the earliest start wins, and at
  that start alternation order and greedy/lazy decide the end. The reference sorts literal lists
  longest first, which makes a literal list leftmost-longest (`["<a", "<ab>"]` on `"<ab>"` gives
  `"<ab>"`).
- **Classes come from `regex`,** not from `str`: `\s` leaves out `\x1c`-`\x1f`, which `str.isspace`
  accepts. The compiler builds the character classes from `regex` itself.
- **Streaming never changes the result.** A run (one anchored attempt from one start position)
  holds its text while it is alive: while more input could still turn it into a match or change its
  end. The reference's streaming search instead prefers a complete match anywhere over a partial one
  that starts earlier (`<tool>|<t` on `"<to"` commits `"<t"`), so its result depends on chunking;
  chatparse does not copy that.
- **Across a region's watch set** the reference's tie-break decides: `regions.winner`.

## The tables
Symbols are character-class ids: class `i` (1-based) is `classes[i - 1]`, a `CharSet`; together the
classes cover every code point. Symbol 0 is EOI, fed once when the input ends. State 0 is DEAD.

- `rows[s]` maps a class id to the next state; a missing class goes to DEAD.
- `ends[s]` says that when a run sits in state `s` at position `i` and the next symbol is `c`, a
  match ends at `i - k`: an int `k` for every symbol, or a dict `{class id: k}`. The lookahead symbol
  is how `\b`, `\B`, `$` and `\Z` are decided; `k` is 1 only for `$` before a final newline, which
  EOI confirms one symbol later. A run records the latest end it is told; when it reaches DEAD, the
  last end recorded is its leftmost-first match (RE2 `dfa.cc`, "leftmost-first" cut).
- `starts` = the start state for a run at buffer position 0, after a `\w` character, after any other
  character (only `^`, `\A`, `\b` and `\B` make them differ).

A state is *settled* when it reports `k = 0` for every symbol and has no transitions: the match is
final without looking at the next character. That is the literal fast path of the reference's
`ResponseParser._can_grow` ("a finished literal that no other literal extends cannot grow"), found
here for every pattern, not only literals: `"<think>"` commits at the buffer edge, `</think>\s*`
waits for the next character, as in the reference.

A look-ahead that ends a top-level alternative is read by the DFA as the pattern's own text: such a
report (`lookahead_ends`) is where the look-ahead's text ends, and the match ends where the text
before it does (`before_lookahead`, compiler/automata/trailing_lookahead.py). Patterns a DFA cannot
express otherwise (look-behind, back-references, ...) have no tables: `fallback.py` runs `regex`
for them.
"""

from __future__ import annotations

import re

from .charclass import WORD, CharSet

_ASCII = CharSet.from_ranges((0, 0x7F))

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from typing import Any

DEAD = 0
EOI = 0

END_OF_INPUT = object()  # the symbol fed once when the input ends (`end_offset`)
_UNSET = object()


class Row:
    """A DFA row written as the target of most classes plus the exceptions (`.*?` loop states
    send nearly every class back to themselves); the Delimiter expands it into a dict."""

    __slots__ = ("exceptions", "otherwise")

    def __init__(self, exceptions: dict[int, int], *, otherwise: int) -> None:
        self.exceptions = exceptions
        self.otherwise = otherwise

    def expand(self, class_count: int) -> dict[int, int]:
        row = {class_id: self.otherwise for class_id in range(1, class_count + 1)}
        row.update(self.exceptions)
        return {class_id: target for class_id, target in row.items() if target != DEAD}


# Most entries a per-character memo table holds (a delimiter's char -> class and per-state
# char -> next state, a region's (states, char) -> step). The tables are shared by the process:
# without a cap a server that streams CJK or emoji for weeks would grow them toward all of
# Unicode. Past the cap a char is looked up in the tables (a scan of the classes) each time.
MEMO_CAP = 2048


class DfaTables:
    """An anchored DFA with per-character memo tables (see the module docstring for the tables)."""

    __slots__ = (
        "classes",
        "rows",
        "ends",
        "starts",
        "settled",
        "_class_of",
        "_next",
        "_end_of",
        "_candidates",
        "_exits",
        "_chains",
        "_plans",
        "stretches",
        "loops",
        "_first",
        "lookahead_ends",
        "before_lookahead",
    )

    def __init__(
        self,
        classes: tuple[CharSet, ...],
        rows: tuple[dict[int, int] | Row, ...],
        ends: dict[int, Any] | None,
        starts: tuple[int, int, int],
        stretches: dict[int, dict[str, int]] | None = None,
        loops: dict[int, CharSet] | None = None,
        lookahead_ends: dict[int, int] | None = None,
        before_lookahead: tuple[Any, ...] | None = None,
    ) -> None:
        # A pattern whose look-aheads end its top-level alternatives (compiler/
        # trailing_lookahead.py): the states whose report (k = 0, at the end of the look-ahead's
        # text) is alternative i's, and per alternative what its text before the look-ahead is
        # (a delimiter, or None when it matches empty), whose end is the match's.
        self.lookahead_ends = lookahead_ends or {}
        self.before_lookahead = before_lookahead or ()
        # What a whole-text run crosses at once, by state (compiler/planning/run_crossings.py; declared by
        # a `Dfa` form, none for the others, whose search is C-level): the literal stretches, and
        # the chars a state stays in without reporting a match end.
        self.stretches = stretches or {}
        self.loops = loops or {}
        # The chars a match can begin with (the compiler's, declared by delimiter_forms.py);
        # None: any position (a match can be empty, or a hand-built Delimiter says nothing).
        self._first: Any = None
        self.classes = classes
        self.rows: tuple[dict[int, int], ...] = tuple(
            row.expand(len(classes)) if isinstance(row, Row) else row for row in rows
        )
        self.ends = ends or {}
        self.starts = starts
        self._class_of: dict[str, int] = {}
        # Per-state memo of character -> next state / end offset: after warm-up a step is two dict
        # lookups, whatever the size of the classes.
        self._next: list[dict[str, int]] = [{} for _ in rows]
        self._end_of: list[dict[Any, Any]] = [{} for _ in rows]
        self.settled = frozenset(
            state
            for state, report in self.ends.items()
            if type(report) is int and report == 0 and not self.rows[state]
        )
        self._candidates: Any = _UNSET
        self._exits: dict[tuple[int, bool], Any] = {}
        self._chains: dict[int, tuple[str, int, bool] | None] = {}
        self._plans: list[tuple | None] = [None] * len(rows)

    # --- stepping ---------------------------------------------------------------------------------

    def class_of(self, ch: str) -> int:
        found = self._class_of.get(ch)
        if found is None:
            found = next(
                (index for index, charset in enumerate(self.classes, 1) if ch in charset), DEAD
            )
            if len(self._class_of) < MEMO_CAP:
                self._class_of[ch] = found
        return found

    def know_classes(self, known: dict[str, int]) -> None:
        """Fill the char -> class memo with what a constructor knows (a literal form's chars,
        past MEMO_CAP): `class_of` then tests only the chars it does not know."""
        self._class_of.update(known)

    def start_state(self, at_begin: bool, prev: str) -> int:
        at_begin_state, after_word, after_other = self.starts
        if at_begin_state == after_word == after_other:
            return at_begin_state
        if at_begin:
            return at_begin_state
        return after_word if prev in WORD else after_other

    def next_state(self, state: int, ch: str) -> int:
        memo = self._next[state]
        found = memo.get(ch)
        if found is None:
            found = self.rows[state].get(self.class_of(ch), DEAD)
            if len(memo) < MEMO_CAP:
                memo[ch] = found
        return found

    def end_offset(self, state: int, ch: Any) -> int | None:
        """The `k` of a match ending before `ch` (a character, or `END_OF_INPUT`), else None."""
        report = self.ends.get(state)
        if report is None or type(report) is int:
            return report
        memo = self._end_of[state]
        if ch in memo:
            return memo[ch]
        found = report.get(EOI if ch is END_OF_INPUT else self.class_of(ch))
        if len(memo) < MEMO_CAP:
            memo[ch] = found
        return found

    # --- whole-string use ---------------------------------------------------------------------------

    def match_at(self, text: str, start: int, *, final: bool) -> tuple[str, int]:
        """One anchored attempt at `start` over `text` (the text known so far).

        Returns ("match", end), ("none", -1) or, when `final` is false and more input could still
        change the outcome, ("pending", -1). This is the run the region parser makes, done in one go.
        """
        prev = text[start - 1] if start else ""
        state = self.start_state(start == 0, prev)
        end = -1
        reporter = DEAD  # the state that reported `end`
        position = start
        length = len(text)
        while state:
            if state in self.settled:
                end, reporter = position, state
                break
            if position == length:
                if not final:
                    return "pending", -1
                offset = self.end_offset(state, END_OF_INPUT)
                if offset is not None:
                    end, reporter = position - offset, state
                break
            ch = text[position]
            offset = self.end_offset(state, ch)
            if offset is not None:
                end, reporter = position - offset, state
            state = self.next_state(state, ch)
            position += 1
        if end >= 0 and reporter in self.lookahead_ends:
            end = self._before_lookahead_end(text, start, reporter)
        return ("match", end) if end >= 0 else ("none", -1)

    def through_lookahead(self, text: str, start: int) -> int:
        """Where the match from `start` over the complete `text` ends (-1: none), for a caller
        that recorded where a report through a look-ahead was made (the end of the look-ahead's
        text): the run again, once per match."""
        return self.run_from(text, start)[0]

    def _before_lookahead_end(self, text: str, start: int, reporter: int) -> int:
        """The end of a match from `start` that `reporter` reported through its alternative's
        look-ahead: where that alternative's text before the look-ahead ends, which matches in
        one way from `start` (the compiler checked), so its search from there finds it."""
        before = self.before_lookahead[self.lookahead_ends[reporter]]
        if before is None:
            return start
        found = before.search(text, start)
        if found is None or found[0] != start:
            raise AssertionError(f"{before!r} does not match where its look-ahead did")
        return found[1]

    def run_from(self, text: str, start: int) -> tuple[int, int]:
        """One anchored run from `start` over the complete `text`: (the end of its match or -1,
        the position of the char it stopped on). Literal stretches and self-loops are crossed in C.
        """
        state = self.start_state(start == 0, text[start - 1] if start else "")
        plans = self._plans
        following = self._next
        length = len(text)
        position = start
        end = -1
        reporter = DEAD  # the state that reported `end`
        while state:
            plan = plans[state] or self._plan(state)
            settled, chain, chain_to, exits, report = plan
            if settled:
                end, reporter = position, state
                break
            if exits is not None:
                found = exits(text, position)
                position = found.start() if found is not None else length
            # A stretch never begins with a char of the self-loop: after it, as before it.
            if chain is not None:
                if type(chain) is str:
                    if text.startswith(chain, position):
                        state = chain_to
                        position += len(chain)
                        continue
                else:
                    found = chain(text, position)
                    if found is not None:
                        state = chain_to[found.group()]
                        position = found.end()
                        continue
            if position == length:
                if report is not None:
                    offset = self.end_offset(state, END_OF_INPUT)
                    if offset is not None:
                        end, reporter = position - offset, state
                break
            ch = text[position]
            if report is not None:
                offset = report if type(report) is int else self.end_offset(state, ch)
                if offset is not None:
                    end, reporter = position - offset, state
            state = following[state].get(ch) or self.next_state(state, ch)
            if not state:
                break  # `position` is the char that ended the run: a new one may start there
            position += 1
        if end >= 0 and reporter in self.lookahead_ends:
            end = self._before_lookahead_end(text, start, reporter)
        return end, position

    def _plan(self, state: int) -> tuple:
        """What `run_from` does in `state`, looked up once: (settled, its declared literal
        stretches and the state after each, the C search for the next char that leaves the
        self-loop, end report)."""
        stretches = self.stretches.get(state)
        stretch: Any  # None, the one stretch, or the `match` of a `re` of several
        after: Any  # the state after it, or by stretch
        if stretches is None:
            stretch, after = None, DEAD
        elif len(stretches) == 1:
            ((stretch, after),) = stretches.items()  # one stretch: `str.startswith`
        else:
            # Several (`<|channel|>` then `analysis` or `commentary`): one `re` of fixed
            # alternatives, none a prefix of another, so it reads each char at most once.
            alternatives = sorted(stretches, key=lambda literal: (-len(literal), literal))
            stretch = re.compile("|".join(map(re.escape, alternatives))).match
            after = stretches
        exits = self.loop_exits(state, spawning=False)
        plan = (
            state in self.settled,
            stretch,
            after,
            exits.search if exits is not None else None,
            self.ends.get(state),
        )
        self._plans[state] = plan
        return plan

    @property
    def candidates(self) -> re.Pattern | None:
        """A compiled class of the characters a match can start with, as the compiler declares
        them (`first_chars`); None, any position, when it declares none (a match can be empty)."""
        if self._candidates is _UNSET:
            first = self._first
            self._candidates = class_pattern(first) if first is not None else None
        return self._candidates

    def literal_chain(self, state: int) -> tuple[str, int, bool] | None:
        """(chars, state after them, whether none of them can start a match) when `state` has one
        declared stretch (`stretches`), else None."""
        if state in self._chains:
            return self._chains[state]
        chain = None
        stretches = self.stretches.get(state)
        if stretches is not None and len(stretches) == 1:
            ((literal, after),) = stretches.items()
            candidates = self.candidates
            unstartable = candidates is not None and candidates.search(literal) is None
            chain = (literal, after, unstartable)
        self._chains[state] = chain
        return chain

    def start_loop_end(self, text: str, start: int) -> int:
        """Where a run from `start` leaves its start state over that state's self-loop
        (the lead run of `\\s*```...`): `start` when it leaves at once or the start state depends
        on the char before. A run from any position up to there is in the same state there as the
        run from `start`, so it ends as that run does."""
        state, after_word, after_other = self.starts
        if not state == after_word == after_other:
            return start
        exits = self.loop_exits(state, spawning=False)
        if exits is None:
            return start
        found = exits.search(text, start)
        return found.start() if found is not None else len(text)

    def loop_exits(self, state: int, spawning: bool) -> Any:
        """A compiled class of the characters that do something in `state`: leave its declared
        self-loop (`loops`: one that reports no match end), or (when `spawning`) start a new run.
        None when the state has no such loop or a new run could start anywhere."""
        key = (state, spawning)
        if key in self._exits:
            return self._exits[key]
        exits = None
        stay = self.loops.get(state)
        if stay is not None and not (spawning and self.candidates is None):
            if spawning:
                stay = stay - self._first  # (declared: `candidates` is not None)
            exits = class_pattern(~stay)
        self._exits[key] = exits
        return exits


def class_source(charset: CharSet) -> str:
    """A character class for `charset` that `re` and `regex` read alike: every code point escaped.

    A set of `regex`'s Unicode tables that is not measured yet (`CharSet.deferred`) is spelled
    with its ASCII members and every non-ASCII char: a superset. That is safe because every class
    this module and region_parser.py compile is a prefilter (where a match could start, where a loop
    could end) whose hits are then stepped exactly, and it keeps ASCII text from measuring.
    """
    if charset.deferred:
        ranges = charset.ascii_ranges() + ((0x80, 0x10FFFF),)
    else:
        ranges = charset.ranges
    if not ranges:
        return r"[^\U00000000-\U0010ffff]"  # matches nothing
    body = "".join(f"\\U{lo:08x}" if lo == hi else f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in ranges)
    return f"[{body}]"


def spelled_pattern(parts: tuple[str | CharSet, ...], exact: bool) -> re.Pattern:
    """A `re` spelling the compiler wrote in pieces (compiler/codegen/re_source.py), compiled: its
    source pieces, and its classes that `regex`'s tables decide spelled from the measured tables
    when `exact`, else from their ASCII members only, which measures nothing and reads as `regex`
    does wherever it reads ASCII chars only (all of an ASCII text, or a match's span: the path
    `regex` takes reads only that, and every path before it fails in `regex`, so in `re` too,
    whose class holds no char more)."""
    pieces = []
    for part in parts:
        if isinstance(part, str):
            pieces.append(part)
        elif exact:
            part.ranges  # noqa: B018  (measures a deferred set: spelled exactly)
            pieces.append(class_source(part))
        else:
            pieces.append(class_source(CharSet(part.ascii_ranges())))
    return re.compile("".join(pieces))


def merge_group_aliases(values: dict[str, str | None], aliases: dict[str, str]) -> dict:
    """A `re` match's groupdict under the pattern's own names: a group the spelling renamed (its
    name was used twice, in branches of which one takes part) gives its value to the name, as
    `regex` would."""
    if not aliases:
        return values
    merged: dict[str, str | None] = {}
    for name, value in values.items():
        name = aliases.get(name, name)
        if value is not None or name not in merged:
            merged[name] = value
    return merged


def prefilter_class_source(charset: CharSet) -> str:
    """A class that holds `charset` for a prefilter (where a match could start, where a loop
    could end; every hit is then stepped exactly): its ASCII members, and every non-ASCII char
    when it may hold one. Not its measured non-ASCII ranges: `re` checks a char against a class
    it cannot make a table of (one reaching past U+FFFF, as `\\w` does) range by range, so a
    search over `\\w` written out costs microseconds more per text, and the spelling, so the
    cost, would depend on whether some module measured the set before."""
    wide = charset.deferred or any(last > 0x7F for _, last in charset.ranges[-1:])
    if not wide:
        return class_source(charset)
    # Every char but the ASCII non-members, as one negated class of ASCII ranges, which `re`
    # compiles in microseconds and decides by a table (a class up to U+10FFFF takes milliseconds).
    outside = _ASCII - CharSet(charset.ascii_ranges())
    return "[^" + class_source(outside)[1:] if outside else "(?s:.)"


def class_pattern(charset: CharSet) -> re.Pattern:
    """A compiled prefilter class for `charset` (`prefilter_class_source`): explicit code points
    only, so the standard `re` module reads it as `regex` would, and it never backtracks."""
    return re.compile(prefilter_class_source(charset))
