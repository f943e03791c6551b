r"""One delimiter, run as an anchored DFA: the tables a generated module holds, and how to step them.

In: the tables `compiler/dfa.py` produces for one delimiter pattern (or, for a pattern a DFA cannot
express, just the pattern text). Out: `Delimiter` objects that the region parser (`stream.py`) steps
one character at a time, plus `Delimiter.search`/`last_match_end` for whole strings.

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

Patterns a DFA cannot express (look-around, back-references, ...) have `fallback=True` and no
tables: the region parser then runs `regex` for that delimiter, one anchored attempt per candidate
start (`Delimiter.match_at`). That path can backtrack; the generated module says so.
"""

from __future__ import annotations

import re

from ._lazy import compiled as compiled_regex
from ._lazy import regex_module
from .charclass import WORD, CharSet

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

DEAD = 0
EOI = 0

_END_OF_INPUT = object()
_UNSET = object()
_DOTALL = 16  # regex.DOTALL, without importing `regex` before it is needed


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

_HEAD_DEPTH = 24  # longest literal Heads reads off a DFA
_HEAD_COUNT = 32  # most literals; past that the trie stops growing where it is
_HEAD_FANOUT = 4  # widest class that still branches the literal trie (`["']`)
_HEAD_LEAD = 4096  # widest lead worth walking back over (`\s` has 25 chars)
_HEAD_LEAD_ASCII = 32  # the same for a lead not measured yet, counted in ASCII members


class Heads:
    r"""Every match of a delimiter is some chars of `lead`, then one of `literals`.

    `\s*<tool_call>` is spaces, then `<tool_call>`; `\s*(?:<｜calls｜>\s*)?<｜call｜>` is spaces,
    then `<｜calls｜>` or `<｜call｜>`; harmony's `<\|channel\|>...|\s*to=functions\.` is spaces,
    then `<|channel|>` or `to=functions.`. The literals are found in C (`str.find`, or one `re` of
    plain alternatives, which never backtracks). A match that uses a literal at `p` can only start
    in the run of lead chars that ends at `p`, so the earliest start worth a run is the start of
    the lead run before the first literal found; the search steps runs from there, as it would
    anywhere else.
    """

    __slots__ = ("lead", "literals", "lead_chars", "_find", "pending_start")

    def __init__(self, lead: CharSet, literals: list[str]) -> None:
        self.lead = lead
        # A literal that extends another adds nothing to the filter: keep the shortest ones.
        kept: list[str] = []
        for literal in sorted(set(literals), key=len):
            if not any(literal.startswith(shorter) for shorter in kept):
                kept.append(literal)
        self.literals = tuple(sorted(kept))
        # ASCII lead chars as a frozenset (a C lookup); any other char asks `lead`, which measures
        # the Unicode tables only then.
        self.lead_chars = _ascii_chars(lead)
        self.pending_start = None  # built by Delimiter.leftmost_pending on first use
        if len(self.literals) == 1:
            (literal,) = self.literals
            self._find = lambda text, pos: text.find(literal, pos)
        else:
            search = re.compile("|".join(re.escape(literal) for literal in self.literals)).search

            def find(text: str, pos: int) -> int:
                found = search(text, pos)
                return found.start() if found is not None else -1

            self._find = find

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
                literal_at = run_start = found
                while run_start > pos and (
                    text[run_start - 1] in lead_chars
                    or (text[run_start - 1] > "\x7f" and text[run_start - 1] in lead)
                ):
                    run_start -= 1
            return pos if pos > run_start else run_start

        return next_start


def _ascii_chars(charset: CharSet) -> frozenset[str]:
    """The ASCII members of `charset` (known without measuring the Unicode tables)."""
    return frozenset(chr(cp) for lo, hi in charset.ascii_ranges() for cp in range(lo, hi + 1))


def text_end_finder(heads: list[Heads]) -> tuple[re.Pattern, Callable[[str, int], int]]:
    """Where a match of any of `heads` may start in a text that may go on (a stream so far).

    Returns a compiled `re` that finds whether there is such a place, and `candidate(text, pos)`,
    the first one at or after `pos` (-1: none). Candidates are where a literal begins, a proper
    prefix of one that the end of the text cuts off, or a lead char that ends the text; each moved
    back over the lead chars before it (over the union of the leads: a superset is still safe).
    The `re` is fixed-length alternatives, so it never backtracks.
    """
    literals = sorted({literal for h in heads for literal in h.literals})
    cut_off = sorted({literal[:k] for literal in literals for k in range(1, len(literal))})
    lead_set = CharSet()
    for h in heads:
        lead_set = lead_set | h.lead
    alternatives = [re.escape(literal) for literal in literals]
    alternatives += [re.escape(prefix) + r"\Z" for prefix in cut_off]
    if lead_set.deferred or lead_set:
        alternatives.append(class_source(lead_set) + r"\Z")
    compiled = re.compile("|".join(alternatives))
    search = compiled.search
    lead_chars = _ascii_chars(lead_set)

    def candidate(text: str, pos: int) -> int:
        found = search(text, pos)
        if found is None:
            return -1
        start = found.start()
        while start > pos and (
            text[start - 1] in lead_chars
            or (text[start - 1] > "\x7f" and text[start - 1] in lead_set)
        ):
            start -= 1
        return start

    return compiled, candidate


class Delimiter:
    """An anchored DFA for one open, close or start-anchor pattern, with per-character memo tables."""

    __slots__ = (
        "source",
        "pattern",
        "classes",
        "rows",
        "ends",
        "starts",
        "fallback",
        "has_groups",
        "settled",
        "_compiled",
        "_class_of",
        "_next",
        "_end_of",
        "single_literal",
        "_literal_overlaps",
        "grows_at_edge",
        "_candidates",
        "_exits",
        "_chains",
        "_heads",
        "_plans",
        "groups_pattern",
        "groups_aliases",
        "groups_ascii_only",
        "_groups",
        "_lead",
        "_first",
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
        groups_pattern: str | None = None,
        groups_aliases: dict[str, str] | None = None,
        groups_ascii_only: bool = False,
        single_literal: Any = _UNSET,
        heads: Any = _UNSET,
        first_chars: CharSet | None = None,
    ) -> None:
        # `single_literal`, `heads` and `first_chars` are the compiler's analysis, declared by the
        # constructors of delimiters.py; left out, they are read off the tables on first use.
        self.source = source
        self.pattern = pattern
        self.classes = classes
        self.rows = tuple(row.expand(len(classes)) if type(row) is Row else row for row in rows)
        self.ends = ends or {}
        self.starts = starts
        self.fallback = fallback
        self.has_groups = has_groups
        self.groups_pattern = groups_pattern
        self.groups_aliases = groups_aliases or {}
        self.groups_ascii_only = groups_ascii_only
        self._groups = None
        # The reference's streaming edge rule (`ResponseParser._can_grow`): a complete match at the
        # edge of the text received so far is held unless it is a literal no other literal of its
        # list extends. Only the prefix's end uses it (see RegionParser._advance_prefix).
        self.grows_at_edge = not literal
        self._compiled = None
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
        self.single_literal = (
            self._find_single_literal() if single_literal is _UNSET else single_literal
        )
        literal = self.single_literal or ""
        # Whether two occurrences can overlap: some proper suffix is also a prefix ("aa" in "aaa").
        self._literal_overlaps = any(
            literal.startswith(literal[k:]) for k in range(1, len(literal))
        )
        self._candidates = _UNSET
        self._exits: dict[tuple[int, bool], Any] = {}
        self._chains: dict[int, tuple[str, int, bool] | None] = {}
        self._heads = heads
        self._first = first_chars
        self._plans: list[tuple | None] = [None] * len(rows)
        self._lead = _UNSET  # fallback only: see `lead`

    def __repr__(self) -> str:
        return f"Delimiter({self.source})"

    @property
    def compiled(self):
        """The pattern compiled by `regex` (DOTALL), for named groups and the fallback path."""
        if self._compiled is None:
            self._compiled = compiled_regex(self.pattern, _DOTALL)
        return self._compiled

    @property
    def groups(self):
        """What reads the named groups of a match the DFA found: `re` with `groups_pattern` (the
        compiler's spelling of the pattern for it), else `compiled`."""
        if self._groups is None:
            self._groups = re.compile(self.groups_pattern) if self.groups_pattern else self.compiled
        return self._groups

    def groups_reader(self, text: str, start: int, end: int):
        """What reads the groups of the match at text[start:end]: `groups`, unless its spelling
        holds only for ASCII text and the span is not (then `compiled`, the `regex` pattern)."""
        if self.groups_ascii_only and not text[start:end].isascii():
            return self.compiled
        return self.groups

    def group_values(self, found) -> dict[str, str | None]:
        """The named groups of a match by `groups`, under the pattern's own names: a group that
        `groups_pattern` renamed (its name was used twice, in branches of which one takes part)
        gives its value to the name, as `regex` would."""
        values = found.groupdict()
        if not self.groups_aliases:
            return values
        merged: dict[str, str | None] = {}
        for name, value in values.items():
            name = self.groups_aliases.get(name, name)
            if value is not None or name not in merged:
                merged[name] = value
        return merged

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
        """The `k` of a match ending before `ch` (a character, or `_END_OF_INPUT`), else None."""
        report = self.ends.get(state)
        if report is None or type(report) is int:
            return report
        memo = self._end_of[state]
        if ch in memo:
            return memo[ch]
        found = report.get(EOI if ch is _END_OF_INPUT else self.class_of(ch))
        if len(memo) < MEMO_CAP:
            memo[ch] = found
        return found

    # --- whole-string use ---------------------------------------------------------------------------

    def match_at(self, text: str, start: int, *, final: bool) -> tuple[str, int]:
        """One anchored attempt at `start` over `text` (the text known so far).

        Returns ("match", end), ("none", -1) or, when `final` is false and more input could still
        change the outcome, ("pending", -1). This is the run the region parser makes, done in one go.
        """
        if self.fallback:
            return self._regex_match_at(text, start, final=final)
        prev = text[start - 1] if start else ""
        state = self.start_state(start == 0, prev)
        end = -1
        position = start
        length = len(text)
        while state:
            if state in self.settled:
                return "match", position
            if position == length:
                if not final:
                    return "pending", -1
                offset = self.end_offset(state, _END_OF_INPUT)
                if offset is not None:
                    end = position - offset
                break
            ch = text[position]
            offset = self.end_offset(state, ch)
            if offset is not None:
                end = position - offset
            state = self.next_state(state, ch)
            position += 1
        return ("match", end) if end >= 0 else ("none", -1)

    @property
    def lead(self) -> tuple[Any, Any] | None:
        r"""For a fallback pattern that begins with a loop over one char class at its top level
        (`\s*functools(?=\s*\[)`, `[ \t]+...`): (that class, the pattern behind a negative
        look-behind of it), both compiled by `regex`; None for any other pattern.

        Such a pattern `C*R` is *lead-dominated*: when it has no match at `s` and `text[s]` is in
        `C`, it has none at `s + 1` either, since `C*` could take `text[s]` in front of any match
        from `s + 1` (whatever `R` holds: look-around and groups see the same text from either
        start). The same holds for an attempt that is only pending at the end of the text known
        so far. So after one attempt fails, the starts in the run of `C` chars it began are never
        tried: `search` asks `regex` only for starts that no `C` char precedes, and the region
        parser attempts no start that follows a lead char it attempted (`dominated`).
        Without this, a long run of spaces costs one attempt per space, each reading the rest of
        the run: quadratic, as the reference is.

        When a literal follows the loop (`functools`, its first char outside `C`), the tuple also
        holds it and a reverse match of `C*` (else None, None): see `_pending_by_literal`.
        """
        if self._lead is _UNSET:
            self._lead = None
            found = _leading_loop(self.pattern) if self.fallback else None
            if found is not None:
                atom, after, literal, greedy = found
                flags = self.compiled.flags
                regex = regex_module()
                try:
                    lead = compiled_regex(atom, flags)
                    guarded = compiled_regex(f"(?<!{atom})(?:{self.pattern})", flags)
                    # `C*f...` with a literal `f` outside `C`: an attempt whose text to the end is
                    # all `C` is pending, since only the end of the text can hold the `f`.
                    waits = after is not None and lead.match(after) is None
                    run = compiled_regex(f"(?:{atom})*", flags) if waits else None
                    # The literal is compared char by char: not under flags that change what
                    # its chars match (case) or whether they count (verbose).
                    # And only after a greedy loop: on a lazy one `regex`'s partial matching
                    # reports attempts that no text could complete (`\s*?x` on " f"), and the
                    # edge rule must see them as the reference does.
                    plain = greedy and not flags & (regex.IGNORECASE | regex.VERBOSE)
                    back = compiled_regex(f"(?r)(?:{atom})*", flags) if waits and plain else None
                except Exception:  # regex refuses the spelling: keep the plain search
                    pass
                else:
                    self._lead = (lead, guarded, run, literal if back is not None else None, back)
        return self._lead

    def dominated_after(self, prev: str) -> bool:
        """Whether an attempt right after the char `prev` is decided by the attempt at `prev`
        (see `lead`): it fails when that one fails, and loses to it when that one matches. The
        caller must have attempted (or found dominated) the start at `prev`."""
        lead = self.lead
        return lead is not None and prev != "" and lead[0].match(prev) is not None

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
        return self.fallback and _LOOKS_BEHIND.search(self.pattern) is not None

    def _regex_match_at(self, text: str, start: int, *, final: bool) -> tuple[str, int]:
        compiled = self.compiled
        found = compiled.match(text, start, partial=not final)
        if found is None:
            return "none", -1
        if final:
            return "match", found.end()
        if found.partial or found.end() == len(text):
            # At the edge of the known text a regex match may still grow or vanish
            # (greedy loops, look-ahead): as ResponseParser._can_grow, it waits.
            return "pending", -1
        # A complete match that ends before the edge is final only if no attempt of the pattern
        # read up to the edge: `regex` prefers a complete match to a partial one, so
        # `<t>(?!skip)` on "<t>sk" matches "<t>" though "ip" would kill it, and `<t>x*y|<t>` on
        # "<t>xx" matches "<t>" though "y" would make it "<t>xxy". `fullmatch` with partial=True
        # explores every path and reports one that reaches the edge.
        if compiled.fullmatch(text, start, partial=True) is not None:
            return "pending", -1
        return "match", found.end()

    def search(self, text: str, pos: int = 0) -> tuple[int, int] | None:
        """Leftmost-first search over a complete string (the input ends with `text`).

        Linear time: runs from every start position are stepped together, and of two runs without
        a match in the same state only the earlier is kept (it wins whatever follows), so at most
        one run per state is alive. `regex.search` would instead retry from every position.
        """
        if self.fallback:
            lead = self.lead
            if lead is None:
                found = self.compiled.search(text, pos)
                return found.span() if found is not None else None
            # A start right after a lead char fails when the start before it failed (`lead`), so
            # after one attempt at `pos`, `regex` searches only starts that no lead char precedes.
            found = self.compiled.match(text, pos)
            if found is None and pos < len(text):
                found = lead[1].search(text, pos + 1)
            return found.span() if found is not None else None
        heads = self.heads
        if heads is not None:
            # One run from each place a match can start, while their spans do not overlap (but for
            # the char a run dies on): the first that matches is the leftmost. Once a start falls
            # inside a failed run's span, the runs below take over, so the time stays linear
            # however the text is made.
            next_start = heads.starts_in(text)
            while True:
                start = next_start(pos)
                if start < 0:
                    return None
                end, stop = self._run_from(text, start)
                if end >= 0:
                    return start, end
                pos = next_start(start + 1)
                if pos < 0:
                    return None
                if pos < stop:
                    break
            return self._search_runs(text, pos, next_start)
        return self._search_runs(text, pos, None)

    def _run_from(self, text: str, start: int) -> tuple[int, int]:
        """One anchored run from `start` over the complete `text`: (the end of its match or -1,
        the position of the char it stopped on). Literal stretches and self-loops are crossed in C.
        """
        state = self.start_state(start == 0, text[start - 1] if start else "")
        plans = self._plans
        following = self._next
        length = len(text)
        position = start
        end = -1
        while state:
            plan = plans[state] or self._plan(state)
            settled, chain, chain_to, exits, report = plan
            if settled:
                return position, position
            if chain is not None and text.startswith(chain, position):
                state = chain_to
                position += len(chain)
                continue
            if exits is not None:
                found = exits(text, position)
                position = found.start() if found is not None else length
            if position == length:
                if report is not None:
                    offset = self.end_offset(state, _END_OF_INPUT)
                    if offset is not None:
                        end = position - offset
                break
            ch = text[position]
            if report is not None:
                offset = report if type(report) is int else self.end_offset(state, ch)
                if offset is not None:
                    end = position - offset
            state = following[state].get(ch) or self.next_state(state, ch)
            if not state:
                break  # `position` is the char that ended the run: a new one may start there
            position += 1
        return end, position

    def _plan(self, state: int) -> tuple:
        """What `_run_from` does in `state`, looked up once: (settled, literal stretch, state
        after it, the C search for the next char that leaves the self-loop, end report)."""
        chain = self.literal_chain(state)
        exits = self.loop_exits(state, spawning=False)
        plan = (
            state in self.settled,
            chain[0] if chain is not None else None,
            chain[1] if chain is not None else DEAD,
            exits.search if exits is not None else None,
            self.ends.get(state),
        )
        self._plans[state] = plan
        return plan

    def _search_runs(
        self, text: str, pos: int, starts: Callable[[int], int] | None
    ) -> tuple[int, int] | None:
        """`search` with every start stepped together (see there); `starts` is the `Heads`
        cursor over `text` (None: the delimiter has no `Heads`)."""
        length = len(text)
        runs: list[list[int]] = []  # [start, state, end]: in start order; end -1 = no match yet
        position = pos
        candidates = self.candidates
        next_start = -1  # with `starts`: no match starts in [position, next_start)
        while True:
            if starts is not None and next_start < position:
                found = starts(position)
                next_start = found if found >= 0 else length + 1
            if position < length:
                if not runs:
                    if starts is not None:
                        if next_start > length:
                            return None
                        position = next_start
                    elif candidates is not None:
                        found = candidates.search(text, position)
                        position = found.start() if found is not None else length
                elif len(runs) == 1 and runs[0][1]:
                    # One live run in a state that loops on most characters (`.*?` in a tag): jump
                    # to the next character that can leave the loop or start a new run, in C.
                    spawning = runs[0][2] < 0
                    if starts is None:
                        exits = self.loop_exits(runs[0][1], spawning=spawning)
                        limit = length
                    else:
                        exits = self.loop_exits(runs[0][1], spawning=False)
                        limit = min(next_start, length) if spawning else length
                    if exits is not None:
                        found = exits.search(text, position, limit)
                        position = found.start() if found is not None else limit
                if len(runs) == 1 and runs[0][1]:
                    # A run inside a literal stretch (`parameter=` after `<`) either reads it
                    # whole or dies: compare the stretch in C instead of stepping it, when no run
                    # has to start inside it.
                    chain = self.literal_chain(runs[0][1])
                    if (
                        chain is not None
                        and (
                            runs[0][2] >= 0
                            or chain[2]
                            or (starts is not None and next_start >= position + len(chain[0]))
                        )
                        and text.startswith(chain[0], position)
                    ):
                        runs[0][1] = chain[1]
                        position += len(chain[0])
                        continue
            if not (runs and runs[-1][2] >= 0) and (starts is None or position == next_start):
                # No run has matched yet, so a run starting here could still be the leftmost.
                state = self.start_state(position == 0, text[position - 1] if position else "")
                if state in self.settled:
                    runs.append([position, DEAD, position])
                elif state:
                    runs.append([position, state, -1])
            ch = text[position] if position < length else _END_OF_INPUT
            kept: list[list[int]] = []
            seen: set[int] = set()
            for run in runs:
                start, state, end = run
                if state:
                    offset = self.end_offset(state, ch)
                    if offset is not None:
                        end = position - offset
                    state = self.next_state(state, ch) if position < length else DEAD
                    if state in self.settled:
                        state, end = DEAD, position + 1
                if end >= 0:
                    kept.append([start, state, end])
                    break  # an earlier start always wins: later runs can never matter
                if state and state not in seen:
                    seen.add(state)
                    kept.append([start, state, -1])
            runs = kept
            if runs and runs[0][2] >= 0 and not runs[0][1]:
                return runs[0][0], runs[0][2]
            if position >= length:
                return None
            position += 1

    @property
    def candidates(self) -> re.Pattern | None:
        """A compiled class of the characters a match can start with (None: any position)."""
        if self._candidates is _UNSET:
            nullable = any(self.ends.get(start) is not None for start in self.starts)
            if nullable:
                self._candidates = None
            else:
                self._candidates = class_pattern(self._first_chars())
        return self._candidates

    @property
    def heads(self) -> Heads | None:
        """What every match begins with (see `Heads`), or None when the tables do not say."""
        if self._heads is _UNSET:
            self._heads = self._find_heads()
        elif type(self._heads) is tuple:  # declared (lead, literals): built on first use
            self._heads = Heads(*self._heads)
        return self._heads

    def _find_heads(self) -> Heads | None:
        """Read `Heads` off the tables.

        The lead states are the start state and every state it reaches over wide classes (more
        than `_HEAD_FANOUT` chars: `\\s`, `[^>]`); the lead is every char that keeps a match among
        them. None of them may report a match end. Every other edge out of a lead state (a narrow
        class into a state outside the lead) begins a literal, which follows single-char edges
        until a state reports a match end, loops, meets a wide class or the literals grow too many
        or too long: a prefix of the rest of every match that leaves the lead through that edge.
        """
        if self.fallback or len(set(self.starts)) != 1:
            return None
        start = self.starts[0]
        if start == DEAD:
            return None
        lead_states = {start}
        pending = [start]
        while pending:
            state = pending.pop()
            if self.ends.get(state) is not None:
                return None  # a match may end in the lead: the empty match, or `\s+` alone
            for class_id, target in self.rows[state].items():
                if _wide(self.classes[class_id - 1]) and target not in lead_states:
                    lead_states.add(target)
                    pending.append(target)
        lead = CharSet()
        narrow: list[tuple[str, int]] = []
        for state in sorted(lead_states):
            for class_id, target in self.rows[state].items():
                charset = self.classes[class_id - 1]
                if target in lead_states or _wide(charset):
                    lead = lead | charset  # `\n` has a class of its own when `[^>\n]` follows
                else:
                    narrow.extend((ch, target) for ch in charset)
        if not narrow or _wider_than(lead, _HEAD_LEAD):
            return None  # `.*?</x>`: nearly every position is in the lead, nothing to skip
        literals: list[str] = []

        def extend(prefix: str, state: int, path: frozenset) -> None:
            row = self.rows[state]
            edges: list[tuple[str, int]] = []
            stop = (
                state in self.settled
                or self.ends.get(state) is not None
                or state in path
                or len(prefix) >= _HEAD_DEPTH
                or not row
            )
            if not stop:
                for class_id, target in row.items():
                    charset = self.classes[class_id - 1]
                    if _wide(charset):
                        stop = True
                        break
                    edges.extend((ch, target) for ch in charset)
            if stop or len(literals) + len(edges) > _HEAD_COUNT:
                literals.append(prefix)
                return
            for ch, target in edges:
                extend(prefix + ch, target, path | {state})

        for ch, target in narrow:
            extend(ch, target, frozenset(lead_states))
        return Heads(lead, literals)

    def _first_chars(self) -> CharSet:
        """The chars a match can begin with (from any start context)."""
        if self._first is not None:
            return self._first
        first = CharSet()
        for start in set(self.starts) - {DEAD}:
            for class_id in self.rows[start]:
                first = first | self.classes[class_id - 1]
        return first

    def literal_chain(self, state: int) -> tuple[str, int, bool] | None:
        """(chars, state after them, whether none of them can start a match) for a literal stretch
        from `state`, or None when it is shorter than two chars.

        The stretch follows, from each state, its one edge on a single char to a higher-numbered
        state (`</parameter>` inside `.*?`: the other edges fall back into the loop and do not
        matter when the text holds the stretch), through states that report no match end. A caller
        that finds the chars in the text may jump to the returned state: stepping them one by one
        takes exactly these edges.
        """
        if state in self._chains:
            return self._chains[state]
        chars = []
        current = state
        while current and current not in self.settled and self.ends.get(current) is None:
            forward = []
            for class_id, target in self.rows[current].items():
                charset = self.classes[class_id - 1]
                ranges = () if charset.deferred else charset.ranges
                # States are numbered breadth-first from the start: a stretch moves to higher
                # numbers, while the edges back into a loop go to lower ones.
                if len(ranges) == 1 and ranges[0][0] == ranges[0][1] and target > current:
                    forward.append((chr(ranges[0][0]), target))
            if len(forward) != 1:
                break
            ch, current = forward[0]
            chars.append(ch)
        chain = None
        if len(chars) >= 2:
            literal = "".join(chars)
            candidates = self.candidates
            unstartable = candidates is not None and candidates.search(literal) is None
            chain = (literal, current, unstartable)
        self._chains[state] = chain
        return chain

    def loop_exits(self, state: int, spawning: bool) -> Any:
        """A compiled class of the characters that do something in `state`: leave its self-loop,
        report a match end, or (when `spawning`) start a new run. None when the state has no
        self-loop worth skipping or a new run could start anywhere."""
        key = (state, spawning)
        if key in self._exits:
            return self._exits[key]
        exits = None
        report = self.ends.get(state)
        looping = [
            class_id
            for class_id, target in self.rows[state].items()
            if target == state and not (isinstance(report, int) or (report and class_id in report))
        ]
        if looping and not (spawning and self.candidates is None):
            stay = CharSet()
            for class_id in looping:
                stay = stay | self.classes[class_id - 1]
            if spawning:
                stay = stay - self._first_chars()
            exits = class_pattern(~stay)
        self._exits[key] = exits
        return exits

    def iter_spans(self, text: str):
        """Spans of `regex.finditer(pattern, text)`: non-overlapping, leftmost-first."""
        if self.fallback or self.candidates is None:
            # After an empty match `regex` retries the same position for a *non-empty* match of
            # lower priority (`|a` on "a" gives (0, 0) then (0, 1)); a leftmost-first DFA has cut
            # that alternative, so patterns that can match empty use `regex` here.
            for found in self.compiled.finditer(text):
                yield found.span()
            return
        position = 0
        while position <= len(text):
            found = self.search(text, position)
            if found is None:
                return
            yield found
            position = found[1]  # never empty here, so this always advances

    def groupdicts(self, text: str):
        """`regex.finditer(pattern, text)`'s groupdicts; spans found in linear time by the DFA."""
        for start, end in self.iter_spans(text):
            found = self.groups_reader(text, start, end).match(text, start)
            if found is None or found.end() != end:
                raise AssertionError(
                    f"{self.source}: regex disagrees with the DFA at {start}-{end}"
                )
            yield self.group_values(found)

    def leftmost_pending(self, text: str, pos: int) -> int | None:
        """The first start >= pos whose anchored run is still alive at the end of `text` (where
        `match_at(text, start, final=False)` says "pending").

        Linear time: runs from every start are stepped together, and of two runs in the same state
        only the earlier start is kept, since both are alive at the end or neither is.
        """
        if self.fallback:
            lead = self.lead
            if lead is not None and lead[3] is not None:
                return self._pending_by_literal(text, pos)
            return self._pending_by_search(text, pos)
        settled = self.settled
        candidates = self.candidates
        length = len(text)
        runs: dict[int, int] = {}  # live state -> earliest start in it
        position = pos
        heads = self.heads
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
            state = self.start_state(position == 0, text[position - 1] if position else "")
            if state and state not in settled and state not in runs:
                runs[state] = position
            if position == length:
                return min(runs.values()) if runs else None
            ch = text[position]
            stepped: dict[int, int] = {}
            for state, start in runs.items():
                state = self.next_state(state, ch)
                if state and state not in settled and start < stepped.get(state, length + 1):
                    stepped[state] = start
            runs = stepped
            position += 1

    def _pending_by_search(self, text: str, pos: int) -> int | None:
        """`leftmost_pending` on the fallback: `regex`'s partial search finds the first start whose
        attempt reaches the end of the text (or matches); after one attempt at `pos`, only starts
        that no lead char precedes are searched (see `lead`)."""
        lead = self.lead
        length = len(text)
        while pos <= length:
            outcome = self.match_at(text, pos, final=False)[0]
            if outcome == "pending":
                return pos
            if pos == length:
                return None
            search = (lead[1] if lead is not None and outcome == "none" else self.compiled).search
            found = search(text, pos + 1, partial=True)
            if found is None:
                return None
            if found.partial or found.end() == length:
                return found.start()
            pos = found.start() + 1  # a match that ends before the end: not pending here
        return None

    def _pending_by_literal(self, text: str, pos: int) -> int | None:
        r"""`leftmost_pending` on the fallback for `C*L...`, a lead-dominated pattern (see `lead`)
        whose loop is followed by the literal `L`, its first char outside `C`.

        An attempt at `s` that matches or reaches the end of the text takes the whole run of `C`
        chars from `s` (the char after it, `L[0]`, is not in `C`), and then finds `L` there, or the
        end of the text within `L`. So it starts where such a run begins (or at `pos`): before an
        occurrence of `L`, or before a proper prefix of `L` (the empty one too) that ends the
        text. Starts later in such a run are dominated by its first. Only those starts are
        attempted, in order, each one `match_at`: `str.find` finds `L` and a reverse match of
        `C*` walks back over each run once. `regex` itself would read to the end of the text from
        every start where `L` is absent (its partial search is quadratic on a long run).
        """
        _, _, _, literal, back = self.lead
        length = len(text)
        tails = sorted(
            {
                back.match(text, pos, length - k).start()
                for k in range(min(len(literal) - 1, length - pos) + 1)
                if text.endswith(literal[:k])
            }
        )
        tried: set[int] = set()
        found = text.find(literal, pos)
        index = 0
        while True:
            start = back.match(text, pos, found).start() if found >= 0 else length + 1
            while index < len(tails) and tails[index] <= start:  # all of them once `L` runs out
                candidate = tails[index]
                index += 1
                outcome = self.match_at(text, candidate, final=False)[0]
                tried.add(candidate)
                if outcome == "pending":
                    return candidate
                if outcome == "match":  # a caller that had not searched first: the general way
                    return self._pending_by_search(text, candidate + 1)
            if found < 0:
                return None
            if start not in tried:
                outcome = self.match_at(text, start, final=False)[0]
                if outcome == "pending":
                    return start
                if outcome == "match":
                    return self._pending_by_search(text, start + 1)
            found = text.find(literal, found + 1)

    def last_match_end(self, text: str) -> int | None:
        """End of the last match of `finditer(text)` (non-overlapping, leftmost-first), or None.

        This is where the start anchor cuts the prefix: the reference keeps what follows the *last*
        anchor match. Non-overlapping matters: "aa" in "aaa" ends at 2, not 3.
        """
        last_end = None
        literal = self.single_literal
        if literal is not None:
            if not self._literal_overlaps:
                # Two occurrences never overlap, so the last one found from the right is the last
                # one found from the left.
                found = text.rfind(literal)
                return found + len(literal) if found >= 0 else None
            found = text.find(literal)
            while found >= 0:
                last_end = found + len(literal)
                found = text.find(literal, last_end)
            return last_end
        for _, last_end in self.iter_spans(text):  # noqa: B007 (the last one is wanted)
            pass
        return last_end

    def _find_single_literal(self) -> str | None:
        """The text of a delimiter that is one plain literal (a `str.find` prefilter), else None."""
        if self.fallback or self.starts != (1, 1, 1):
            return None
        chars = []
        state = 1
        while state not in self.settled:
            row = self.rows[state]
            if len(row) != 1 or state in self.ends:
                return None
            ((class_id, state),) = row.items()
            charset = self.classes[class_id - 1]
            ranges = () if charset.deferred else charset.ranges
            if len(ranges) != 1 or ranges[0][0] != ranges[0][1]:
                return None
            chars.append(chr(ranges[0][0]))
        return "".join(chars) or None


END_OF_INPUT = _END_OF_INPUT

# One char class or single char, then a greedy or lazy `*` or `+` (not possessive), at the very
# start of a pattern: the loop `Delimiter.lead` needs. Anything less plain is not recognised.
_LEADING_LOOP = re.compile(
    r"""(\\[sSdDwW]|\\[nrtfv]|\\[^0-9A-Za-z]|\.|[^\\()\[\]{}|^$*+?.]|\[\^?\]?(?:\\.|\[:[a-z]+:\]|[^\]\\])*\])[*+]\??(?![+])"""
    # ... and the literal char after it, when one follows that no quantifier makes optional, with
    # the literal chars after that one that no quantifier touches (`functools` in
    # `\s*functools(?=...)`: every match holds them in a row, right after the loop).
    r"""(?:([^\\()\[\]{}|^$*+?.]|\\[^0-9A-Za-z])(?![*?{])"""
    r"""(?:(?=\+)|((?:(?:[^\\()\[\]{}|^$*+?.]|\\[^0-9A-Za-z])(?![*?{+]))*)))?""",
    re.DOTALL,
)
_LITERAL_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_LOOKS_BEHIND = re.compile(r"\(\?<[=!]|\\[GK]|\(\?[a-zA-Z]*r")
# Constructs that make a match depend on where the attempt starts, or re-enter the pattern.
_START_DEPENDENT = re.compile(r"\\G|\(\?(?:R|[0-9]|[+-][0-9]|&|P>|r\)|[a-zA-Z]*r)")


def _has_top_level_bar(pattern: str) -> bool:
    """Whether `pattern` is an alternation at its top level (`\\s*x|y`: the loop is only in one
    branch). Escapes, classes and groups are skipped; unsure is True."""
    depth = 0
    position = 0
    length = len(pattern)
    while position < length:
        ch = pattern[position]
        if ch == "\\":
            position += 2
            continue
        if ch == "[":
            found = _CLASS.match(pattern, position)
            if found is None:
                return True
            position = found.end()
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            return True
        position += 1
    return depth != 0


_CLASS = re.compile(r"\[\^?\]?(?:\\.|\[:[a-z]+:\]|[^\]\\])*\]", re.DOTALL)


def _leading_loop(pattern: str) -> tuple[str, str | None, str | None, bool] | None:
    """The atom of the loop a pattern begins with, the literal char after it (None: not a plain
    literal), the literal chars that follow in a row, that char first (`after` alone when a `+`
    repeats it), and whether the loop is greedy; see `_LEADING_LOOP`. None without such a loop."""
    found = _LEADING_LOOP.match(pattern)
    if found is None or _START_DEPENDENT.search(pattern) or _has_top_level_bar(pattern):
        return None
    after = found.group(2)
    literal = None
    if after is not None:
        after = _LITERAL_ESCAPE.sub(r"\1", after)
        literal = after + _LITERAL_ESCAPE.sub(r"\1", found.group(3) or "")
    greedy = pattern[found.end(1) + 1 : found.end(1) + 2] != "?"
    return found.group(1), after, literal, greedy


def class_source(charset: CharSet) -> str:
    """A character class for `charset` that `re` and `regex` read alike: every code point escaped.

    A set of `regex`'s Unicode tables that is not measured yet (`CharSet.deferred`) is spelled
    with its ASCII members and every non-ASCII char: a superset. That is safe because every class
    this module and stream.py compile is a prefilter (where a match could start, where a loop
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


def _wide(charset: CharSet) -> bool:
    """Whether a class is too wide to spell out as literal chars (`\\s`, `[^>]`); a class of the
    Unicode tables always is, and asking costs no measuring."""
    return charset.deferred or len(charset) > _HEAD_FANOUT


def _wider_than(charset: CharSet, size: int) -> bool:
    """Whether a lead is too wide to be worth walking back over. Unmeasured: judged by its ASCII
    members, as the text it is walked over mostly is (`\\s` has 6, `[^\\s<]` 121)."""
    if charset.deferred:
        return sum(hi - lo + 1 for lo, hi in charset.ascii_ranges()) > _HEAD_LEAD_ASCII
    return len(charset) > size


def class_pattern(charset: CharSet) -> re.Pattern:
    """A compiled character class for `charset`: explicit code points only, so the standard `re`
    module matches exactly what `regex` would, and a single class never backtracks."""
    return re.compile(class_source(charset))
