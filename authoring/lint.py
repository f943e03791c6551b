r"""Template -> the traps an author should hear about before a model walks into them.

In:  a response template (what `load_spec` accepts).
Out: `lint(template, portable=False) -> list[Finding]`, in a fixed order (template order of the
     fields, then code). Each `Finding` has a stable `code`, the `field` and `delimiter` it
     concerns, a `message`, an `example` and a `fix`.
Guarantees:
- An `example` is a raw model output (parsed with `prefix=""`) built from the delimiters' DFAs
  (shortest matches, or shortest matches made of plain prose) and *checked* here by running it
  through the template's compiled parser: an example whose run does not show the trap is not
  given (the finding then stands on the automaton alone, with `example` None).
- Invalid templates raise what `load_spec` raises (the reference's ValueError / TypeError).
- Nothing here runs `regex` on model output except the verification runs of the parser itself.

Codes (never renumbered; new checks take new numbers):
    CP101  the implicit field does not repeat and can re-open: its earlier text is overwritten
    CP102  an explicit field does not repeat and can open twice: its first value is overwritten
    CP103  an open can match the empty string: the field opens at every position
    CP104  a close can match the empty string: the region ends at once (implicit: text dropped)
    CP105  open and close both match the empty string: the reference loops forever
    CP106  a delimiter can match plain prose inside a field's text, so writing it ends the field
    CP107  a field can never open: another field's open always wins the tie at the same position
           (literal opens: each literal; pattern opens: every match the DFA reports, decided
           on the product of the two DFAs)
    CP108  a close also matches (a prefix of) another field's delimiter: text of the field that
           quotes that delimiter ends the field (the shortest such text, from the DFA product)
    CP110  a delimiter falls back to `regex` (reason; backtracking, whole-output memory)
    CP120  a delimiter is led by `\s*`/`\s+` (every whitespace run is held back; a cost note)
    CP130  a tool-call transform does not build `{"type": "function", "function": {"name",
           "arguments"}}` with a string name and dict arguments, as OpenAI clients need
    CP131  a tool-call field yields one call, not a list (no `repeats`, no `transform_each`)
  The portability profile (`portable=True`): constructs that other engines refuse or read
  differently (RE2 / Go, Rust `regex`, JavaScript), in `*_pattern` delimiters only:
    CP201  look-around          CP205  unnamed capture group
    CP202  \d                   CP206  possessive quantifier or atomic group
    CP203  \b or \B             CP207  back-reference
    CP204  \p{...} / \P{...}    CP208  inline flags (?i) ...
                                CP209  (?P<name>...) named group
  Which engine refuses which construct is the table in portability.py (sources cited there).
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import regex

from ..compiler.automata.determinize import DEAD, EOI, DeterminizedDfa
from ..compiler.automata.region_automaton import (
    CompiledDelimiter,
    RegionAutomaton,
    build_regions,
    compile_dfa,
)
from ..compiler.frontend.regex_parse import InvalidRegex, UnsupportedRegex
from ..compiler.frontend.spec import DELIMITER_FLAGS, FieldSpec, TemplateSpec, load_spec
from ..compiler.planning.analysis import literal_alternatives
from ..compiler.planning.fallback_plan import looks_behind
from .portability import summary

# Plain prose: what any model writes in ordinary text. A delimiter that can match only such
# characters is written by accident (CP106); special tokens and markup are not.
PROSE = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \n.,:;!?'-()\"\t"
# Marker texts tried (in order) as the ordinary text around a delimiter in an example.
MARKERS = (("x", "y"), ("a", "b"), ("q", "z"), ("1", "2"), ("~", "^"))
# Bodies tried for a field value, in pairs of distinct values (CP102) or alone.
BODIES = (
    ("a", "b"),
    ("1", "2"),
    ('{"name": "a", "arguments": {}}', '{"name": "b", "arguments": {}}'),
    ("[1]", "[2]"),
    ("true", "false"),
    ("a=1", "a=2"),
    ("<a>1</a>", "<a>2</a>"),
    ("", ""),
)
# A look-around group without nested parentheses (fallback witnesses drop them).
_LOOKAROUND = re.compile(r"\(\?<?[=!](?:[^()\\]|\\.)*\)")
# Witness search: at most this many BFS states per delimiter.
_MAX_STATES = 5_000
# Product searches (two DFAs): at most this many state pairs; past it the answer is the one that
# reports nothing (no finding rests on an unfinished search).
_MAX_PAIRS = 20_000


@dataclass(frozen=True)
class Finding:
    code: str
    field: str | None
    delimiter: str | None  # the delimiter as the spec describes it, e.g. `close "</think>"`
    message: str
    example: str | None  # a raw output (prefix "") that shows the trap, checked by running it
    fix: str

    @property
    def severity(self) -> str:
        """ "error" (a trap in the output), "warning" (a cost), "note" (a cost note) or
        "portability" (the portability profile)."""
        return severity(self.code)

    def as_dict(self) -> dict:
        return {**asdict(self), "severity": self.severity}

    def format(self) -> str:
        where = ", ".join(
            part
            for part in (
                f"field {self.field!r}" if self.field is not None else None,
                self.delimiter,
            )
            if part
        )
        lines = [f"{self.code} {self.severity} {where}: {self.message}"]
        if self.example is not None:
            lines.append(f"    example: {json.dumps(self.example, ensure_ascii=False)}")
        lines.append(f"    fix: {self.fix}")
        return "\n".join(lines)


def severity(code: str) -> str:
    if code.startswith("CP2"):
        return "portability"
    return {"CP110": "warning", "CP120": "note"}.get(code, "error")


# --- running examples -----------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    message: dict | None  # None: the parser raised
    events: tuple[dict, ...]
    error: str | None  # the exception class name

    def chunks(self, field: str) -> str:
        """Every chunk of `field`, joined."""
        return "".join(
            e["text"] for e in self.events if e["type"] == "region_chunk" and e["field"] == field
        )

    def opened(self, field: str) -> int:
        return sum(1 for e in self.events if e["type"] == "region_open" and e["field"] == field)


def run_example(module: Any, text: str) -> Outcome:
    """One-shot run of a parser module (or anything with `ResponseParser`) on `text`."""
    try:
        parser = module.ResponseParser("")
        events = list(parser.initial_events)
        events += parser.feed(text)
        message, final = parser.finalize()
    except (ValueError, TypeError, KeyError, AttributeError, regex.error) as exc:
        # regex.error: a hostile content argument (an xml tag name) that is no valid pattern
        return Outcome(None, (), type(exc).__name__)
    return Outcome(message, tuple(events + list(final)), None)


# --- witnesses ------------------------------------------------------------------------------


def shortest_matches(compiled: CompiledDelimiter, alphabet: str | None = None, limit: int = 3):
    """Up to `limit` short texts the delimiter matches as a whole (checked with `regex`),
    shortest first; over `alphabet` only when given. Works on the DFA; for a `regex` fallback,
    the literals (if any)."""
    pattern = compiled.spec.compile()
    dfa = compiled.dfa
    if dfa is None:
        if compiled.spec.literals:
            return [lit for lit in compiled.spec.literals if _whole(pattern, lit)][:limit]
        # Candidates from the pattern without its look-arounds: they may need a context the
        # candidate lacks, so only the example run decides (the caller verifies every example).
        stripped = _LOOKAROUND.sub("", compiled.spec.pattern)
        try:
            dfa = compile_dfa(stripped)
        except (UnsupportedRegex, InvalidRegex):
            return []
        pattern = regex.compile(stripped, DELIMITER_FLAGS)
    chars = _chars_per_class(dfa, alphabet)
    start = dfa.starts[0]
    seen = {start: ""}
    queue = deque([start])
    results: list[str] = []
    while queue and len(seen) < _MAX_STATES:
        state = queue.popleft()
        text = seen[state]
        if dfa.ends[state] is not None and _whole(pattern, text) and text not in results:
            results.append(text)
            if len(results) >= limit:
                break
        for symbol, target in dfa.rows[state].items():
            ch = chars.get(symbol)
            if ch is None or target in seen:
                continue
            seen[target] = text + ch
            queue.append(target)
    return results


def _chars_per_class(dfa: DeterminizedDfa, alphabet: str | None) -> dict[int, str]:
    if alphabet is None:
        return {n: charset.representative() for n, charset in enumerate(dfa.classes, 1)}
    chars: dict[int, str] = {}
    for ch in alphabet:
        chars.setdefault(dfa.class_of(ch), ch)
    return chars


def _whole(pattern, text: str) -> bool:
    match = pattern.match(text)
    return match is not None and match.end() == len(text)


def matches_empty_midtext(compiled: CompiledDelimiter) -> bool:
    """Whether the delimiter matches the empty string before ordinary text (not only at the
    end of the output, as `$` does)."""
    if compiled.dfa is None:
        pattern = compiled.spec.compile()
        probes = (pattern.match(probe) for probe in ("x", " ", "\n"))
        return any(m is not None and m.end() == 0 for m in probes)
    dfa = compiled.dfa
    # starts[0] is the start of the output: an empty match only there (`^`) is an idiom.
    for start in dict.fromkeys(dfa.starts[1:]):
        ends = dfa.ends[start]
        if isinstance(ends, int):
            return True
        if isinstance(ends, dict) and any(symbol != EOI for symbol in ends):
            return True
    return False


# --- automaton queries (products of two DFAs) -----------------------------------------------


def _reports(dfa: DeterminizedDfa, state: int) -> bool:
    """Whether a run in `state` reports a match ending here (k = 0) on some next symbol."""
    ends = dfa.ends[state]
    if ends is None:
        return False
    if isinstance(ends, int):
        return ends == 0
    return 0 in ends.values()


def shared_text(outer: DeterminizedDfa, inner: DeterminizedDfa) -> str | None:
    """A shortest text that `outer` matches whole (after a non-word char, at the end) and on
    which `inner`, run from its start, reports a match: a region watching `inner` ends where its
    text quotes an `outer` delimiter. A BFS over the product of the two DFAs."""
    done = -1
    start = (outer.starts[2], inner.starts[2])
    seen = {start: ""}
    queue = deque([start])
    while queue:
        if len(seen) > _MAX_PAIRS:
            return None
        o, i = queue.popleft()
        text = seen[(o, i)]
        if i != done and text and _reports(inner, i):
            i = done
        if i == done and outer.end_for(o, EOI) == 0:
            return text
        for symbol, target in outer.rows[o].items():
            chars = outer.classes[symbol - 1]
            if i == done:
                steps = [(done, chars)]
            else:
                steps = [
                    (inner_target, chars & inner.classes[inner_symbol - 1])
                    for inner_symbol, inner_target in inner.rows[i].items()
                ]
            for next_inner, common in steps:
                key = (target, next_inner)
                if common and key not in seen:
                    seen[key] = text + common.representative()
                    queue.append(key)
    return None


def contained(small: DeterminizedDfa, large: DeterminizedDfa) -> bool:
    """Whether every text `small` matches whole (at the end of the output), `large` matches
    whole too (language inclusion, on the product of the two DFAs)."""
    start = (small.starts[2], large.starts[2])
    seen = {start}
    queue = deque([start])
    while queue:
        if len(seen) > _MAX_PAIRS:
            return True  # undecided: treated as the marker by design (no finding)
        a, b = queue.popleft()
        if small.end_for(a, EOI) == 0 and (b == DEAD or large.end_for(b, EOI) != 0):
            return False
        for symbol, target in small.rows[a].items():
            chars = small.classes[symbol - 1]
            for large_symbol, large_chars in enumerate(large.classes, 1):
                if b == DEAD or not chars & large_chars:
                    continue
                key = (target, large.rows[b].get(large_symbol, DEAD))
                if key not in seen:
                    seen.add(key)
                    queue.append(key)
            if b == DEAD and (target, DEAD) not in seen:
                seen.add((target, DEAD))
                queue.append((target, DEAD))
    return True


def always_covered(loser: DeterminizedDfa, winner: DeterminizedDfa) -> bool:
    """Whether, from every start context, each match `loser` can report is also reported by
    `winner` at the same end (so `winner`'s leftmost-first match, its latest report, is at least
    as long wherever `loser` matches). False when `loser` reports nothing."""
    found_report = False
    for context in range(3):
        start = (loser.starts[context], winner.starts[context])
        seen = {start}
        queue = deque([start])
        while queue:
            if len(seen) > _MAX_PAIRS:
                return False  # undecided: no finding
            lo, wi = queue.popleft()
            ends = loser.ends[lo]
            if ends is not None:
                by_symbol = (
                    ends
                    if isinstance(ends, dict)
                    else {s: ends for s in range(len(loser.classes) + 1)}
                )
                for symbol, k in by_symbol.items():
                    if k != 0:
                        return False  # `$` before a final newline: not analysed
                    found_report = True
                    if wi == DEAD:
                        return False
                    if symbol == EOI:
                        if winner.end_for(wi, EOI) != 0:
                            return False
                        continue
                    chars = loser.classes[symbol - 1]
                    for w_symbol, w_chars in enumerate(winner.classes, 1):
                        if chars & w_chars and winner.end_for(wi, w_symbol) != 0:
                            return False
            for symbol, target in loser.rows[lo].items():
                chars = loser.classes[symbol - 1]
                for w_symbol, w_chars in enumerate(winner.classes, 1):
                    if not chars & w_chars:
                        continue
                    w_target = winner.rows[wi].get(w_symbol, DEAD) if wi != DEAD else DEAD
                    if (target, w_target) not in seen:
                        seen.add((target, w_target))
                        queue.append((target, w_target))
    return found_report


def _never_opens_winners(f: FieldSpec, compiled: CompiledDelimiter, opens) -> list[str]:
    """The fields whose opens beat `f`'s everywhere (empty: `f` can open somewhere, or the
    question is not decided here: a `regex` fallback loser with no literals)."""
    if compiled.spec.literals:
        winners = []
        for literal in compiled.spec.literals:
            beaten_by = None
            for g, other in opens:
                if g is f or not g.name < f.name:
                    continue
                match = other.spec.compile().match(literal)
                if match is not None and match.end() == len(literal):
                    beaten_by = g.name
                    break
            if beaten_by is None:
                return []
            winners.append(beaten_by)
        return winners
    if compiled.dfa is None:
        return []
    for g, other in opens:
        if g is f or not g.name < f.name or other.dfa is None:
            continue
        if always_covered(compiled.dfa, other.dfa):
            return [g.name]
    return []


# --- the checks -----------------------------------------------------------------------------


class _Linter:
    def __init__(self, template: dict, portable: bool) -> None:
        self.spec: TemplateSpec = load_spec(template)
        self.automaton: RegionAutomaton = build_regions(self.spec)
        self.template = template
        self.portable = portable
        self._module: Any = None
        self.findings: list[Finding] = []

    @property
    def module(self) -> Any:
        if self._module is None:
            from chatparse import load_module

            self._module = load_module(self.template)
        return self._module

    def run(self, text: str) -> Outcome:
        return run_example(self.module, text)

    def first_verified(self, candidates, shows: Callable[[Outcome], bool]) -> str | None:
        for text in candidates:
            if text is not None and shows(self.run(text)):
                return text
        return None

    def add(self, code, field, delimiter, message, example, fix) -> None:
        where = delimiter.spec.describe() if isinstance(delimiter, CompiledDelimiter) else delimiter
        self.findings.append(Finding(code, field, where, message, example, fix))

    def delimiter(self, field: FieldSpec, role: str) -> CompiledDelimiter | None:
        return self.automaton.delimiters.get((field.name, role))

    def wrap(self, field: FieldSpec, bodies=("",)) -> list[str]:
        """Texts that open `field`, hold one body, and close it."""
        open_ = self.delimiter(field, "open")
        close = self.delimiter(field, "close")
        opens = shortest_matches(open_) if open_ is not None else []
        closes = shortest_matches(close) if close is not None else [""]
        return [o + b + c for o in opens for c in closes for b in bodies]

    # -- CP101 / CP102 -------------------------------------------------------------------------

    def overwritten(self) -> None:
        spec = self.spec
        implicit = spec.field(spec.implicit) if spec.implicit is not None else None
        if implicit is not None and not implicit.repeats:
            name = implicit.name
            reopeners: list[tuple[str, list[str], str]] = []
            close = self.delimiter(implicit, "close")
            if close is not None:
                reopeners.append(("its close", shortest_matches(close), close.spec.describe()))
            for f in spec.fields:
                if f.open is not None and f.close is not None:
                    middles = [w for pair in BODIES for w in self.wrap(f, (pair[0],))]
                    reopeners.append((f"field {f.name!r}", middles, f.open.describe()))

            def shows(out: Outcome) -> bool:
                value = None if out.message is None else out.message.get(name)
                return isinstance(value, str) and value in {b for _, b in MARKERS}

            # One finding per field: the first way it re-opens that a run shows, else the first.
            chosen = None
            for what, middles, described in reopeners:
                candidates = [a + m + b for a, b in MARKERS for m in middles]
                example = self.first_verified(candidates, shows)
                if chosen is None or (chosen[2] is None and example is not None):
                    chosen = (what, described, example)
                if example is not None:
                    break
            if chosen is not None:
                what, described, example = chosen
                self.add(
                    "CP101",
                    name,
                    described,
                    f"the implicit field {name!r} does not repeat; after {what} it re-opens and "
                    "its new text overwrites the earlier text",
                    example,
                    f'set "repeats": true and "join": "" on {name!r} to keep every piece',
                )
        for f in spec.fields:
            if f.open is None or f.close is None or f.repeats:
                continue
            example = None
            for first, second in (*_transform_bodies(f), *BODIES):
                singles = self.wrap(f, (second,))
                firsts = self.wrap(f, (first,))
                if not singles or not firsts:
                    break
                alone = self.run(singles[0])
                before = self.run(firsts[0])
                if alone.message is None or before.message is None:
                    continue
                if alone.message.get(f.name) == before.message.get(f.name):
                    continue
                text = firsts[0] + singles[0]
                out = self.run(text)
                if out.message is not None and out.opened(f.name) == 2:
                    if out.message.get(f.name) == alone.message.get(f.name):
                        example = text
                        break
            self.add(
                "CP102",
                f.name,
                self.delimiter(f, "open"),
                f"field {f.name!r} does not repeat but can open again after it closes; the "
                "second value replaces the first",
                example,
                f'set "repeats": true on {f.name!r} (a list of values), or "join" for text',
            )

    # -- CP103 / CP104 / CP105 -----------------------------------------------------------------

    def empty_matches(self) -> None:
        spec = self.spec
        for f in spec.fields:
            open_ = self.delimiter(f, "open")
            close = self.delimiter(f, "close")
            open_empty = open_ is not None and matches_empty_midtext(open_)
            close_empty = close is not None and matches_empty_midtext(close)
            if open_empty and close_empty:
                example = self.first_verified(
                    [a for a, _ in MARKERS], lambda out: out.error == "ValueError"
                )
                self.add(
                    "CP105",
                    f.name,
                    open_,
                    f"the open and the close of {f.name!r} both match the empty string; at such "
                    "a position the reference loops forever (chatparse raises ValueError)",
                    example,
                    "make the open or the close consume at least one character",
                )
                continue
            if open_empty:

                def opens_early(out: Outcome, name: str = f.name) -> bool:
                    return out.message is not None and out.opened(name) > 0

                example = self.first_verified([a for a, _ in MARKERS], opens_early)
                self.add(
                    "CP103",
                    f.name,
                    open_,
                    f"the open of {f.name!r} matches the empty string, so the field opens "
                    "before any text, wherever it is watched",
                    example,
                    "make the open consume at least one character (a token or a marker)",
                )
            if close_empty:
                if f.implicit:
                    candidates = [a for a, _ in MARKERS]

                    def drops(out: Outcome, name: str = f.name) -> bool:
                        return out.message is not None and not any(
                            e["type"] == "region_chunk" for e in out.events
                        )

                    message = (
                        f"the close of the implicit field {f.name!r} matches the empty string: "
                        "on an empty region the reference stops reading, and the text is dropped"
                    )
                else:
                    starts = shortest_matches(open_) if open_ is not None else []

                    def drops(out: Outcome, name: str = f.name) -> bool:
                        return (
                            out.message is not None
                            and out.opened(name) > 0
                            and not out.chunks(name)
                        )

                    candidates = [p + a for p in starts for a, _ in MARKERS]
                    message = (
                        f"the close of {f.name!r} matches the empty string, so the field closes "
                        "as soon as it opens and its text goes elsewhere"
                    )
                self.add(
                    "CP104",
                    f.name,
                    close,
                    message,
                    self.first_verified(candidates, drops),
                    "make the close consume at least one character (a token, or `$` for the end)",
                )

    # -- CP106 ---------------------------------------------------------------------------------

    def prose(self) -> None:
        spec = self.spec
        implicit = spec.field(spec.implicit) if spec.implicit is not None else None
        for f in spec.fields:
            for role in ("open", "close"):
                compiled = self.delimiter(f, role)
                if compiled is None or matches_empty_midtext(compiled):
                    continue
                if role == "open":
                    if implicit is None:
                        continue  # outside every field: text there is dropped anyway
                    reader = implicit.name
                    prefix = ""
                else:
                    reader = f.name
                    opener = self.delimiter(f, "open")
                    opens = shortest_matches(opener) if opener is not None else [""]
                    if not opens:
                        continue
                    prefix = opens[0]
                words = [w for w in shortest_matches(compiled, PROSE) if w.strip() or "\n" in w]
                if not words:
                    continue
                word = words[0]
                candidates = [prefix + a + w + b for w in words for a, b in MARKERS]

                def shows(
                    out: Outcome, reader=reader, candidates=candidates, prefix=prefix
                ) -> bool:
                    if out.message is None:
                        return False
                    return all(out.chunks(reader) != c[len(prefix) :] for c in candidates)

                example = self.first_verified(candidates, shows)
                if example is None and compiled.dfa is None:
                    continue  # the candidates dropped a look-around; only a run can tell
                if role == "open":
                    message = (
                        f"the open of {f.name!r} can match plain prose ({word!r}); text of "
                        f"{reader!r} that contains it opens {f.name!r} and ends {reader!r}"
                    )
                else:
                    message = (
                        f"the close of {f.name!r} can match plain prose ({word!r}); a value that "
                        "contains it ends the field early"
                    )
                self.add(
                    "CP106",
                    f.name,
                    compiled,
                    message,
                    example,
                    "use a delimiter that ordinary text cannot contain (a special token or markup)",
                )

    # -- CP107 ---------------------------------------------------------------------------------

    def never_opens(self) -> None:
        """An open that another field's open always beats at the same position: every literal
        (a literal open) or every match its DFA can report (a pattern open) is also matched
        there, at least as long, by a higher-priority open (an earlier field name)."""
        delimiters = self.automaton.delimiters
        opens = [(f, delimiters[f.name, "open"]) for f in self.spec.fields if f.open is not None]
        for f, compiled in opens:
            winners = _never_opens_winners(f, compiled, opens)
            if not winners:
                continue
            starts = (
                [lit for lit in compiled.spec.literals if lit]
                if compiled.spec.literals
                else [w for w in shortest_matches(compiled) if w]
            )
            candidates = [s + b for s in starts[:1] for b, _ in MARKERS]

            def closed(out: Outcome, name: str = f.name) -> bool:
                return out.message is not None and not out.opened(name)

            example = self.first_verified(candidates, closed)
            self.add(
                "CP107",
                f.name,
                compiled,
                f"field {f.name!r} never opens: {', '.join(map(repr, sorted(set(winners))))} "
                "matches the same text at the same position, at least as long, and wins the tie "
                "(earliest start, then longest, then field name)",
                example,
                f"give {f.name!r} an open that no other field's open also matches",
            )

    # -- CP108 ---------------------------------------------------------------------------------

    def quoted_delimiters(self) -> None:
        """A close that also matches (a prefix of) another field's delimiter: a field whose text
        quotes that delimiter ends there. The shortest such text is a walk of the product of the
        two DFAs; a close that matches nothing but the other delimiter is that marker by design
        (both fields end on it) and is skipped."""
        for f in self.spec.fields:
            close = self.delimiter(f, "close")
            if close is None or close.dfa is None:
                continue
            for g in self.spec.fields:
                if g is f:
                    continue
                for role in ("close",) if f.implicit else ("open", "close"):
                    theirs = self.delimiter(g, role)
                    if theirs is None or theirs.dfa is None:
                        continue
                    if contained(close.dfa, theirs.dfa):
                        continue
                    shared = shared_text(theirs.dfa, close.dfa)
                    if shared is None:
                        continue
                    self._quoted(f, close, g, theirs, shared)

    def _quoted(self, f, close, g, theirs, shared: str) -> None:
        if f.implicit:
            opens, closes = [""], [""]
        else:
            opener = self.delimiter(f, "open")
            opens = [w for w in shortest_matches(opener) if w] if opener is not None else []
            closes = [w for w in shortest_matches(close) if w] or [""]
        # What follows the quoted text may land in `g`'s region (an open quoted): close it too.
        theirs_close = self.delimiter(g, "close") if theirs.spec.role == "open" else None
        ends = [closes[0]]
        if theirs_close is not None:
            ends += [w + closes[0] for w in shortest_matches(theirs_close)[:1]]
        candidates = [
            o + a + shared + body + end
            for o in opens[:1]
            for a, b in MARKERS[:2]
            for body in (b, *(pair[0] for pair in BODIES[1:]))
            for end in ends
        ]
        name = f.name

        def shows(out: Outcome) -> bool:
            value = None if out.message is None else out.message.get(name)
            if value is None:
                return False
            return shared not in (value if isinstance(value, str) else json.dumps(value))

        self.add(
            "CP108",
            f.name,
            close,
            f"the close of {f.name!r} also matches {shared!r}, which is field {g.name!r}'s "
            f"{theirs.spec.describe()}: text of {f.name!r} that quotes it ends the field there",
            self.first_verified(candidates, shows),
            f"narrow the close of {f.name!r} to the field's own end marker",
        )

    # -- CP110 / CP120 -------------------------------------------------------------------------

    def costs(self) -> None:
        for (name, _role), compiled in self.automaton.delimiters.items():
            # (look-aheads that end the pattern's alternatives run on a DFA: no fallback)
            if compiled.dfa is None and literal_alternatives(compiled.spec.pattern) is not None:
                self.add(
                    "CP110",
                    name,
                    compiled,
                    f"is past the compiler's DFA limits ({compiled.fallback_reason}): it runs "
                    "as a literal form, but no fast path plans from it (its chunks take the "
                    "general path)",
                    None,
                    "shorten the literal",
                )
            elif compiled.dfa is None and compiled.lookahead is None:
                self.add(
                    "CP110",
                    name,
                    compiled,
                    f"needs the `regex` fallback ({compiled.fallback_reason}): each attempt "
                    "backtracks in `regex`, "
                    + (
                        "and a pattern that may look behind its start makes the parser keep "
                        "its whole output in memory"
                        if looks_behind(compiled.spec.pattern)
                        else "and the parser holds the text from a pending attempt's start in "
                        "memory until `regex` decides it"
                    ),
                    None,
                    f"rewrite the pattern without {compiled.fallback_reason}",
                )
            elif _whitespace_led(compiled):
                self.add(
                    "CP120",
                    name,
                    compiled,
                    "led by \\s*: every whitespace run in the watched text is held back until "
                    "the next non-space shows whether the delimiter follows, and the scanner "
                    "cannot skip whitespace (a cost note: streaming delays, more steps)",
                    None,
                    "drop the leading \\s* if the model never writes whitespace there; strip the "
                    "field's text instead",
                )

    # -- CP130 / CP131 -------------------------------------------------------------------------

    def tool_calls(self) -> None:
        for f in self.spec.fields:
            transform = f.transform
            looks = f.name == "tool_calls" or (
                isinstance(transform, dict) and "function" in transform
            )
            if not looks:
                continue
            problem = _tool_call_problem(f)
            name = f.name
            # A call whose arguments are an object first: a shape problem then is the template's.
            bodies = [pair[0] for pair in (BODIES[2], *_transform_bodies(f), *BODIES)]
            candidates = self.wrap(f, bodies) if f.open is not None else bodies

            def unshaped(out: Outcome, name: str = name) -> bool:
                return (
                    out.message is not None
                    and name in out.message
                    and not all(map(_openai_call, _as_list(out.message[name])))
                )

            def single(out: Outcome, name: str = name) -> bool:
                return (
                    out.message is not None
                    and name in out.message
                    and not isinstance(out.message[name], list)
                )

            if problem is not None:
                example = self.first_verified(candidates, unshaped)
                self.add(
                    "CP130",
                    f.name,
                    None,
                    f"tool calls do not have the shape OpenAI clients read: {problem}",
                    example,
                    'transform to {"type": "function", "function": {"name": "{...}", '
                    '"arguments": "{...}"}} with a string name and a JSON object of arguments',
                )
            if not f.repeats and not f.transform_each:
                example = self.first_verified(candidates, single)
                self.add(
                    "CP131",
                    f.name,
                    None,
                    f"{f.name!r} holds one call, not a list of calls (no repeats, no "
                    "transform_each); OpenAI clients expect tool_calls to be a list",
                    example,
                    f'set "repeats": true on {f.name!r}',
                )

    # -- CP2xx ---------------------------------------------------------------------------------

    def portability(self) -> None:
        for (name, _role), compiled in self.automaton.delimiters.items():
            if compiled.spec.is_literal:
                continue
            for code, construct, at in portability_constructs(compiled.spec.pattern):
                self.add(
                    code,
                    name,
                    compiled,
                    f"{construct} at offset {at}: {summary(code)} ({PORTABILITY[code][0]})",
                    None,
                    PORTABILITY[code][1],
                )


def _transform_bodies(f: FieldSpec) -> list[tuple[str, str]]:
    """A pair of JSON bodies that fill every key the field's transform reads, with distinct
    values (a list of one element with `transform_each`)."""
    if f.content != "json" or f.transform is None:
        return []
    keys = []
    for path in _PLACEHOLDER.findall(json.dumps(f.transform)):
        parts = path.split(".")
        if f.transform_each:
            keys.append(parts[0])
        elif parts[0] == "content" and len(parts) > 1:
            keys.append(parts[1])
    if not keys and not f.transform_each:
        return []
    pair = []
    for value in ("a", "b"):
        body: Any = {key: value for key in dict.fromkeys(keys)}
        pair.append(json.dumps([body] if f.transform_each else body))
    return [(pair[0], pair[1])]


def _as_list(value: Any) -> list:
    return value if isinstance(value, list) else [value]


def _openai_call(call: Any) -> bool:
    """Whether one parsed call has the shape OpenAI clients read."""
    if not isinstance(call, dict) or call.get("type") != "function":
        return False
    function = call.get("function")
    return (
        isinstance(function, dict)
        and isinstance(function.get("name"), str)
        and isinstance(function.get("arguments"), dict)
    )


def _whitespace_led(compiled: CompiledDelimiter) -> bool:
    dfa = compiled.dfa
    if dfa is None:
        return False
    for start in dict.fromkeys(dfa.starts):
        if dfa.rows[start].get(dfa.class_of(" ")) == start and dfa.ends[start] is None:
            return True
    return False


_PLACEHOLDER = re.compile(r"\{(\w+(?:\.\w+)*)\}")


def _tool_call_problem(f: FieldSpec) -> str | None:
    t = f.transform
    if t is None:
        if f.content != "json":
            return f"no transform, and content {f.content!r} is not a JSON object of calls"
        return None  # the JSON itself is the call; its shape is the model's
    if not isinstance(t, dict) or t.get("type") != "function":
        return 'the transform has no "type": "function"'
    function = t.get("function")
    if not isinstance(function, dict):
        return 'the transform has no "function" object'
    missing = [key for key in ("name", "arguments") if key not in function]
    if missing:
        return f"function has no {' or '.join(missing)}"
    name, arguments = function["name"], function["arguments"]
    if not isinstance(name, str):
        return "function.name is not a string placeholder"
    if not isinstance(arguments, str):
        return None  # a literal object: a dict
    match = _PLACEHOLDER.fullmatch(arguments)
    if match is None:
        return "function.arguments is a literal string, not a JSON object of arguments"
    path = match.group(1).split(".")
    if f.transform_each:
        return None  # an element's key: a JSON value from the parsed list
    if path[0] != "content" and path[0] in f.group_names:
        return (
            f"function.arguments is the capture {{{path[0]}}}, a string, not a JSON object of "
            "arguments"
        )
    if path[0] == "content" and f.content == "text":
        return "function.arguments is the text content (a string), not a JSON object"
    return None


PORTABILITY = {
    "CP201": (
        "RE2 (Go, C++) and Rust `regex` refuse look-around",
        "match the context into the delimiter, or move the check into the field's text",
    ),
    "CP202": (
        "\\d is Unicode digits in Python `regex`, ASCII only in RE2 and JavaScript",
        "write [0-9]",
    ),
    "CP203": (
        "word boundaries differ (ASCII-only \\b in RE2 and JavaScript without /u)",
        "match the neighbouring characters explicitly",
    ),
    "CP204": (
        "Unicode property names differ between engines (JavaScript needs /u, RE2 knows few)",
        "spell the characters as a class",
    ),
    "CP205": (
        "an unnamed group captures; engines that map captures by name or refuse numbered "
        "captures reject it",
        "write (?:...)",
    ),
    "CP206": (
        "RE2, Rust `regex` and JavaScript refuse possessive quantifiers and atomic groups",
        "use a plain quantifier",
    ),
    "CP207": ("RE2 and Rust `regex` refuse back-references", "spell the repeated text out"),
    "CP208": (
        "inline flags beyond (?i) (?m) (?s) differ or are refused; DOTALL is implied here",
        "drop the flag or spell its effect out",
    ),
    "CP209": (
        "JavaScript spells named groups (?<name>...), ECMAScript std::regex has none",
        "use the group only where the template needs the capture",
    ),
}

_QUANTIFIER_END = re.compile(r"(?:[*+?]|\{\d*,?\d*\})$")


def portability_constructs(pattern: str) -> list[tuple[str, str, int]]:
    """(code, construct, offset) for each construct of the portability profile in `pattern`."""
    found: list[tuple[str, str, int]] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if nxt in "dD":
                found.append(("CP202", f"\\{nxt}", i))
            elif nxt in "bB" and not in_class:
                found.append(("CP203", f"\\{nxt}", i))
            elif nxt in "pP":
                found.append(("CP204", f"\\{nxt}{{...}}", i))
            elif nxt in "123456789" and not in_class:
                found.append(("CP207", f"\\{nxt}", i))
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            i += 1
            continue
        if c == "[":
            in_class = True
            i += 1
            if i < n and pattern[i] == "^":
                i += 1
            if i < n and pattern[i] == "]":
                i += 1  # a leading ] is a member
            continue
        if c == "(":
            rest = pattern[i + 1 :]
            if not rest.startswith("?"):
                found.append(("CP205", "(...)", i))
            elif rest[1:].startswith(("=", "!", "<=", "<!")):
                opener = rest[: 3 if rest[1] == "<" else 2]
                found.append(("CP201", f"look-around ({opener}...)", i))
            elif rest[1:].startswith(">"):
                found.append(("CP206", "atomic group (?>...)", i))
            elif rest[1:].startswith("P="):
                found.append(("CP207", "(?P=...)", i))
            elif rest[1:].startswith("P<"):
                found.append(("CP209", "(?P<name>...)", i))
            elif rest[1:2].isalpha() and not rest[1:].startswith(("P<", "P>")):
                flags = re.match(r"[a-zA-Z-]+", rest[1:])
                found.append(("CP208", f"(?{flags.group(0) if flags else ''}...)", i))
            i += 1
            continue
        if c == "+" and i > 0 and _QUANTIFIER_END.search(pattern[:i]) and not _escaped(pattern, i):
            found.append(("CP206", f"possessive {pattern[i - 1]}+", i - 1))
        i += 1
    return found


def _escaped(pattern: str, i: int) -> bool:
    """Whether the quantifier before position i is itself an escaped character."""
    backslashes = 0
    j = i - 2
    while j >= 0 and pattern[j] == "\\":
        backslashes += 1
        j -= 1
    return backslashes % 2 == 1


def lint(template: Any, portable: bool = False) -> list[Finding]:
    """Every finding for `template` (see the module docstring)."""
    linter = _Linter(template, portable)
    linter.overwritten()
    linter.empty_matches()
    linter.prose()
    linter.never_opens()
    linter.quoted_delimiters()
    linter.costs()
    linter.tool_calls()
    if portable:
        linter.portability()
    order = {f.name: n for n, f in enumerate(linter.spec.fields)}
    return sorted(
        linter.findings,
        key=lambda item: (
            -1 if item.field is None else order.get(item.field, -1),
            item.code,
            item.delimiter or "",
        ),
    )
