r"""The declared forms of a delimiter: what a generated module writes instead of DFA tables.

In: the compiler's analysis of one delimiter (compiler/planning/analysis.py), printed as one of the forms
below. Out: a `Delimiter` (delimiter.py) holding the tables its engine steps, built at import from the
form (a few dicts per delimiter: cheap), and the analysis the engine would otherwise read off the
tables (`single_literal`, `heads`, the first chars). Guarantee: the compiler has checked, for every
form it prints, that the tables built here are its own minimised DFA up to state numbering (the
same language and the same leftmost-first ends); the constructors trust what they are given.

- `Literal("<think>")`: one literal.
- `Literals("<|return|>", "<|end|>")`: alternative literals, tried in order as `regex` tries an
  alternation (the compiler lists a template's literal list longest first, as the reference sorts
  it, which makes the list leftmost-longest).
- `LeadRunThenLiterals(SPACE, "<|im_end|>", pattern=...)`: a greedy run of lead chars, then one of
  the literals (`\s*(?:<\|im_end\|>|</s>)`). No literal holds a lead char.
- `LiteralThenRun("</tool_call>", SPACE, pattern=...)`: a literal, then a greedy run of trail chars
  (`</tool_call>\s*`). The literal holds no trail char.
- `Dfa(pattern=..., states=..., ends=...)`: any other pattern a DFA expresses. A state is named
  by the shortest input that reaches it (its witness), so the names stay put when an alternative
  adds states; rows are keyed by chars and by the wide classes named in `classes`.
- `RegexFallback(pattern)`: a pattern a DFA cannot express, run by `regex`.

Tables built here follow dfa_tables.py's conventions: state 0 is DEAD and 1 the start, a `Dfa`'s
states are numbered in the order written (the compiler's), and the classes cover every code point
(the last one is the rest, which goes to DEAD).
"""

from __future__ import annotations

import re

from .charclass import ANY, CharSet
from .delimiter import Delimiter
from .dfa_tables import Row
from .search import ascii_chars

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .group_slice import GroupSlice

# The key of an `ends` entry that stands for the end of the input (dfa_tables.py's symbol EOI).
END_OF_INPUT_KEY = ""


_CHAR_SETS: dict[str, CharSet] = {}  # one CharSet per char, shared by every delimiter


def _char_set(ch: str) -> CharSet:
    found = _CHAR_SETS.get(ch)
    if found is None:
        found = _CHAR_SETS[ch] = CharSet.chars(ch)
    return found


# What `json.dumps(text, ensure_ascii=False)` escapes: the quote, the backslash and the chars below
# U+0020. Written out, because every generated module quotes its literals at import and `json`
# costs milliseconds to import.
_JSON_ESCAPES = {code: f"\\u{code:04x}" for code in range(0x20)}
_JSON_ESCAPES.update({ord(ch): "\\" + short for ch, short in zip('"\\\n\r\t\b\f', '"\\nrtbf')})


def _quoted(text: str) -> str:
    """`json.dumps(text, ensure_ascii=False)`: the literal as `source` shows it."""
    return '"' + text.translate(_JSON_ESCAPES) + '"'


def _escape(text: str) -> str:
    """`text` as a `regex` pattern matching it literally (every char that is not a letter, digit or
    underscore is escaped, which `regex` reads as that char)."""
    return "".join(ch if ch.isalnum() or ch == "_" else "\\" + ch for ch in text)


def _literal_tables(
    literals: tuple[str, ...], lead: CharSet | None, trail: CharSet | None
) -> tuple[tuple[CharSet, ...], tuple[dict[int, int], ...], dict[int, int], dict[str, int]]:
    """(classes, rows, ends, the class of each literal char) for lead chars, then one of
    `literals` (the first that matches, as an alternation), then trail chars. A literal that an
    earlier one is a prefix of can never match: it adds no state.

    The rest of the chars (DEAD from every state) and the lead or trail chars come first among
    the classes, and each literal char's class is known (`DfaTables.know_classes`): a char is
    placed in at most two membership tests, however many distinct chars the literals hold."""
    chars = sorted({ch for literal in literals for ch in literal})
    covered = CharSet.chars("".join(chars))
    loop_class = 0  # the class of the lead or trail chars, when there are any
    loop = lead if lead is not None else trail
    classes = []
    if loop is not None:
        classes.append(loop)
        loop_class = len(classes)
        covered = covered | loop
    classes.append(ANY - covered)  # the rest: DEAD from every state
    class_of = {ch: index for index, ch in enumerate(chars, len(classes) + 1)}
    classes.extend(_char_set(ch) for ch in chars)
    rows: list[dict[int, int]] = [{}, {}]
    complete: set[int] = set()
    for literal in literals:
        state = 1
        for ch in literal:
            if state in complete:
                break  # an earlier alternative already matched here
            row = rows[state]
            target = row.get(class_of[ch])
            if target is None:
                target = len(rows)
                rows.append({})
                row[class_of[ch]] = target
            state = target
        else:
            complete.add(state)
    if lead is not None:
        rows[1][loop_class] = 1
    if trail is not None:
        for state in complete:
            rows[state][loop_class] = state
    return tuple(classes), tuple(rows), dict.fromkeys(sorted(complete), 0), class_of


def _first_of(literals: tuple[str, ...]):
    """`search(text, pos)` of the first place where one of `literals` matches, the first of them
    in order winning there, as a `regex` alternation does: `str.find` for one literal, else one
    `re` of plain alternatives (fixed strings: it never backtracks past one literal's length)."""
    if len(literals) == 1:
        (literal,) = literals
        size = len(literal)

        def search(text: str, pos: int) -> tuple[int, int] | None:
            found = text.find(literal, pos)
            return (found, found + size) if found >= 0 else None

        return search
    alternation = re.compile("|".join(re.escape(literal) for literal in literals)).search

    def search_any(text: str, pos: int) -> tuple[int, int] | None:
        found = alternation(text, pos)
        return found.span() if found is not None else None

    return search_any


class Literal(Delimiter):
    """One literal (`open: "<think>"`). `may_grow`: the reference's streaming edge rule holds a
    complete match at the edge of the text, as for a pattern (`Delimiter.grows_at_edge`).

    Whole-text search is `str.find` (the form says every match is the literal)."""

    __slots__ = ("_literal_at", "alternatives")
    checks_edge = False  # a literal's match reads nothing past its end: final before the edge

    def __init__(self, text: str, *, may_grow: bool = False) -> None:
        classes, rows, ends, class_of = _literal_tables((text,), None, None)
        super().__init__(
            _quoted(text),
            _escape(text),
            classes=classes,
            rows=rows,
            ends=ends,
            literal=not may_grow,
            single_literal=text,
            heads=(CharSet(), (text,)),
            first_chars=CharSet.chars(text[:1]),
        )
        self.know_classes(class_of)
        self._literal_at = _first_of((text,))
        self.alternatives = (text,)

    def search(
        self, text: str, pos: int = 0, text_is_ascii: bool | None = None
    ) -> tuple[int, int] | None:
        return self._literal_at(text, pos)

    @staticmethod
    def span_at(text: str, at: int, size: int, floor: int) -> tuple[int, int]:
        """The match whose literal of `size` chars is at `at` (see `whole.LiteralScan`)."""
        return at, at + size


class Literals(Delimiter):
    """Alternative literals, tried in order (`open: ["<|END_RESPONSE|>", "<|END_TEXT|>"]`).

    Whole-text search is one `re` of the alternatives, in order (`_first_of`)."""

    __slots__ = ("_literal_at", "alternatives", "_apart")
    checks_edge = False  # a literal's match reads nothing past its end: final before the edge

    def __init__(self, *alternatives: str, may_grow: bool = False) -> None:
        classes, rows, ends, class_of = _literal_tables(alternatives, None, None)
        super().__init__(
            "[" + ", ".join(_quoted(text) for text in alternatives) + "]",
            "|".join(_escape(text) for text in alternatives),
            classes=classes,
            rows=rows,
            ends=ends,
            literal=not may_grow,
            single_literal=None,
            heads=(CharSet(), alternatives),
            first_chars=CharSet.chars("".join(text[:1] for text in alternatives)),
        )
        self.know_classes(class_of)
        self._literal_at = _first_of(alternatives)
        self.alternatives = alternatives
        self._apart: bool | None = None  # see `last_match_end`; asked of a start anchor only

    def search(
        self, text: str, pos: int = 0, text_is_ascii: bool | None = None
    ) -> tuple[int, int] | None:
        return self._literal_at(text, pos)

    @staticmethod
    def span_at(text: str, at: int, size: int, floor: int) -> tuple[int, int]:
        """The match whose literal of `size` chars is at `at` (see `whole.LiteralScan`)."""
        return at, at + size

    def last_match_end(self, text: str) -> int | None:
        """`search.last_match_end`; where occurrences never overlap (a start anchor's list of
        special tokens), every occurrence is a match, and the last one ends last: the latest
        end of each alternative's last occurrence (`str.rfind`)."""
        if self._apart is None:
            self._apart = _never_overlap(self.alternatives or ())
        if not self._apart:
            return super().last_match_end(text)
        last = -1
        for literal in self.alternatives or ():
            found = text.rfind(literal)
            if found >= 0 and found + len(literal) > last:
                last = found + len(literal)
        return last if last >= 0 else None


# The most chars `_never_overlap` compares (quadratic in them): past it, a list keeps the
# left-to-right search, which is linear anyway.
APART_CHECK_MAX = 256


def _never_overlap(literals: tuple[str, ...]) -> bool:
    """Whether no two occurrences of `literals` can overlap (one ends inside the other, or
    holds it), so that each occurrence is a match of a left-to-right search. False past
    `APART_CHECK_MAX` chars in all."""
    if sum(map(len, literals)) > APART_CHECK_MAX:
        return False
    return not any(
        (other != text and other in text)
        or any(other.startswith(text[k:]) for k in range(1, len(text)))
        for text in literals
        for other in literals
    )


class LeadRunThenLiterals(Delimiter):
    r"""A greedy run of `lead` chars, then the first of `literals` that matches (`\s*<tool_call>`).

    Whole-text search: the first place one of the literals matches (`_first_of`), moved back over
    the lead chars before it, down to the position asked. No earlier start can match: a literal
    holds no lead char, so a match that starts in the run before that place has its literal there,
    and one that starts before the run has a literal earlier still. The greedy run stops at the
    literal, so the end is the literal's. A search walks back over the lead run it answers with
    (one match's text), as `Heads.starts_in` does within one search."""

    __slots__ = ("_literal_at", "_lead", "_lead_ascii", "alternatives")

    def __init__(self, lead: CharSet, *literals: str, pattern: str) -> None:
        classes, rows, ends, class_of = _literal_tables(literals, lead, None)
        super().__init__(
            f"/{pattern}/",
            pattern,
            classes=classes,
            rows=rows,
            ends=ends,
            single_literal=None,
            heads=(lead, literals),
            first_chars=lead | CharSet.chars("".join(text[:1] for text in literals)),
        )
        self.know_classes(class_of)
        self._literal_at = _first_of(literals)
        self._lead = lead
        self._lead_ascii = ascii_chars(lead)
        self.alternatives = literals

    def search(
        self, text: str, pos: int = 0, text_is_ascii: bool | None = None
    ) -> tuple[int, int] | None:
        found = self._literal_at(text, pos)
        if found is None:
            return None
        return self.span_at(text, found[0], found[1] - found[0], pos)

    def span_at(self, text: str, at: int, size: int, floor: int) -> tuple[int, int]:
        """The match whose literal of `size` chars is at `at`: from the start of the lead run
        before it, down to `floor` (see `whole.LiteralScan`)."""
        start = at
        lead, lead_ascii = self._lead, self._lead_ascii
        while start > floor and (
            text[start - 1] in lead_ascii or (text[start - 1] > "\x7f" and text[start - 1] in lead)
        ):
            start -= 1
        return start, at + size


LeadRunThenLiteral = LeadRunThenLiterals


class LiteralThenRun(Delimiter):
    r"""A literal, then a greedy run of `trail` chars (`</tool_call>\s*`).

    Whole-text search: the literal's first place (`str.find`; it holds no trail char, so no
    other start can match), then the trail chars after it, greedily."""

    __slots__ = ("_literal", "_trail", "_trail_ascii", "alternatives")

    def __init__(self, literal: str, trail: CharSet, *, pattern: str) -> None:
        classes, rows, ends, class_of = _literal_tables((literal,), None, trail)
        super().__init__(
            f"/{pattern}/",
            pattern,
            classes=classes,
            rows=rows,
            ends=ends,
            single_literal=None,
            heads=(CharSet(), (literal,)),
            first_chars=CharSet.chars(literal[:1]),
        )
        self.know_classes(class_of)
        self._literal = literal
        self._trail = trail
        self._trail_ascii = ascii_chars(trail)
        self.alternatives = (literal,)

    def search(
        self, text: str, pos: int = 0, text_is_ascii: bool | None = None
    ) -> tuple[int, int] | None:
        start = text.find(self._literal, pos)
        return None if start < 0 else self.span_at(text, start, len(self._literal), pos)

    def span_at(self, text: str, at: int, size: int, floor: int) -> tuple[int, int]:
        """The match whose literal is at `at`: to the end of the trail run after it (see
        `whole.LiteralScan`)."""
        end = at + size
        trail, trail_ascii, length = self._trail, self._trail_ascii, len(text)
        while end < length and (
            text[end] in trail_ascii or (text[end] > "\x7f" and text[end] in trail)
        ):
            end += 1
        return at, end


class Dfa(Delimiter):
    """A DFA written as named states (see the module docstring).

    `states` maps a state's name to its row: `{key: next state}` or `Row({key: next state or None
    for DEAD}, otherwise=next state)`, a key being one char or a name from `classes`; a missing key
    goes to DEAD. The first state is the start (`starts` names the start states at position 0,
    after a `\\w` char, after any other char, when they differ; None is DEAD). `ends` maps a state
    to k (a match ends k chars before the next symbol) or to `{key: k}`, the key "" being the end
    of the input. `lead` and `literals` are what every match begins with (see `Delimiter.heads`; None:
    nothing to say), `follows` the chars that may come right after such a literal in a match (a
    literal a match may end with has none), `first_chars` the chars a match can begin with. `stretches` maps a state to
    `{literal: the state after it}`, the literal stretches a run crosses at once from there, and
    `loops` a state to the chars it stays in without reporting a match end
    (compiler/planning/run_crossings.py). `lookahead_ends` maps a state to i when its report is
    alternative i's, through a look-ahead that ends it, read as consuming its text: that match
    ends where `before_lookahead[i]`, run from its start, ends (None: where it starts; see
    compiler/automata/trailing_lookahead.py). `anchored` is the pattern spelled for the standard `re` (source
    pieces, and CharSets for the classes the installed `regex`'s tables decide), which a
    whole-text search matches with at each candidate start: the compiler proved one backtracking
    attempt of it linear (compiler/planning/linear_backtracking.py); None: the DFA runs every attempt.
    `groups_parts`, spelled the same way, reads the named groups of a match where there is no
    `anchored` spelling (None: `regex` reads them). `group_slice` cuts the one named group out of
    a match by `str` methods (runtime/group_slice.py), before either is asked.
    """

    __slots__ = ()

    def __init__(
        self,
        *,
        pattern: str,
        states: dict[Any, Any],
        ends: dict[Any, Any],
        classes: dict[str, CharSet] | None = None,
        starts: tuple[Any, Any, Any] | None = None,
        first_chars: CharSet,
        lead: CharSet | None = None,
        literals: tuple[str, ...] | None = None,
        follows: dict[str, CharSet] | None = None,
        has_groups: bool = False,
        groups_parts: tuple[str | CharSet, ...] | None = None,
        groups_aliases: dict[str, str] | None = None,
        group_slice: GroupSlice | None = None,
        stretches: dict[Any, dict[str, Any]] | None = None,
        loops: dict[Any, CharSet] | None = None,
        lookahead_ends: dict[Any, int] | None = None,
        before_lookahead: tuple[Delimiter | None, ...] | None = None,
        anchored: tuple[str | CharSet, ...] | None = None,
    ) -> None:
        named = classes or {}
        chars: set[str] = set()
        for row in states.values():
            keys: dict[Any, Any] = row.exceptions if type(row) is Row else row
            chars.update(key for key in keys if len(key) == 1)
        for report in ends.values():
            if type(report) is dict:
                chars.update(key for key in report if len(key) == 1)
        order = sorted(chars)
        class_ids: dict[str, int] = {ch: index for index, ch in enumerate(order, 1)}
        charsets = [_char_set(ch) for ch in order]
        covered = CharSet.chars("".join(order))
        for name, charset in named.items():
            charsets.append(charset)
            class_ids[name] = len(charsets)
            covered = covered | charset
        charsets.append(ANY - covered)
        rest = len(charsets)
        number = {name: index for index, name in enumerate(states, 1)}
        number[None] = 0
        rows: list[dict[int, int]] = [{}]
        for row in states.values():
            if type(row) is Row:
                exceptions: dict[Any, Any] = row.exceptions
                built = dict.fromkeys(range(1, rest + 1), number[row.otherwise])
                built.update({class_ids[key]: number[t] for key, t in exceptions.items()})
                rows.append({class_id: t for class_id, t in built.items() if t})
            else:
                rows.append({class_ids[key]: number[target] for key, target in row.items()})
        built_ends: dict[int, Any] = {}
        for name, report in ends.items():
            if type(report) is dict:
                report = {
                    0 if key == END_OF_INPUT_KEY else class_ids[key]: k for key, k in report.items()
                }
            built_ends[number[name]] = report
        super().__init__(
            f"/{pattern}/",
            pattern,
            classes=tuple(charsets),
            rows=tuple(rows),
            ends=built_ends,
            starts=(
                (number[starts[0]], number[starts[1]], number[starts[2]])
                if starts is not None
                else (1, 1, 1)
            ),
            has_groups=has_groups,
            groups_parts=groups_parts,
            groups_aliases=groups_aliases,
            group_slice=group_slice,
            single_literal=None,
            heads=(
                (lead if lead is not None else CharSet(), literals, follows)
                if literals is not None
                else None
            ),
            first_chars=first_chars,
            stretches={
                number[name]: {literal: number[after] for literal, after in by_literal.items()}
                for name, by_literal in (stretches or {}).items()
            },
            loops={number[name]: stay for name, stay in (loops or {}).items()},
            lookahead_ends={
                number[name]: alternative for name, alternative in (lookahead_ends or {}).items()
            },
            before_lookahead=before_lookahead,
            anchored=anchored,
        )


class RegexFallback(Delimiter):
    """A pattern a DFA cannot express (look-around, back-references, ...): `regex` runs it, one
    anchored attempt per candidate start (see fallback.py).

    `lead` and `literals`: for a pattern whose look-aheads (at its end) only restrict matches,
    what every match of the pattern without them begins with, hence every match and every
    attempt still pending at the end of the text (the compiler's `relax`): the region's candidate
    finder uses them as a DFA delimiter's `Heads`, so `regex` is attempted only in the lead run
    before a literal, or at the end of the text. None: every position is a candidate.

    `waits`: when the pattern without its look-ahead is exactly chars of `lead` then the one
    literal, the chars over which its look-ahead (its last item) stays undecided (the compiler's
    `lookahead_wait`): an attempt whose text after that literal holds only them is pending, and
    the streaming engine does not ask `regex` again (`StreamingEngine._waits`).

    `lead_loop`, `looks_behind`, `asserts_end`: what the compiler read off the pattern's text
    (compiler/planning/fallback_plan.py; see `Delimiter`), so that the runtime parses no pattern."""

    __slots__ = ("waits_after", "lead_loop", "looks_behind", "asserts_end")

    def __init__(
        self,
        pattern: str,
        *,
        has_groups: bool = False,
        lead: CharSet | None = None,
        literals: tuple[str, ...] | None = None,
        waits: CharSet | None = None,
        lead_loop: tuple[str, str | None, bool] | None = None,
        looks_behind: bool = False,
        asserts_end: bool = False,
    ) -> None:
        self.lead_loop = lead_loop
        self.looks_behind = looks_behind
        self.asserts_end = asserts_end
        self.waits_after = (
            (lead if lead is not None else CharSet(), literals[0], waits)
            if waits is not None and literals is not None and len(literals) == 1
            else None
        )
        super().__init__(
            f"/{pattern}/",
            pattern,
            fallback=True,
            has_groups=has_groups,
            heads=(
                (lead if lead is not None else CharSet(), literals)
                if literals is not None
                else None
            ),
        )


__all__ = [
    "Dfa",
    "LeadRunThenLiteral",
    "LeadRunThenLiterals",
    "Literal",
    "LiteralThenRun",
    "Literals",
    "RegexFallback",
]
