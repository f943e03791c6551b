"""The delimiter DFA against the `regex` module, exhaustively on small inputs.

For every pattern of a fixed, generated set and every short string, the DFA must agree
with `regex.compile(pattern, regex.DOTALL)` on
  (a) `search(dfa, s)` vs `pattern.search(s).span()`;
  (c) the anchored match end at every start vs `pattern.match(s, start)`;
  (b) "a match could still start here": the run is alive or has reported at the end
      of s (before EOI) exactly when some continuation of s matches from that start.
      Checked exactly by feeding `regex` s + the DFA's shortest completion, and the
      converse by (c) on the one-char extensions; and against
      `pattern.match(s, start, partial=True)` where `regex`'s partial matching is
      exact (see test_regex_partial_quirks for where it is not).

Strings: every string up to a length limit over `<`, `t`, `/`, `>`, space, `x` and
"\\n", reduced per pattern to one char per DFA class (chars of one class are
interchangeable for the DFA, and test_charclass.py checks the classes themselves
against `regex` on every code point), so fewer letters buy longer strings (length 6
for three classes).
"""

from __future__ import annotations

import itertools
import os
import random
import subprocess
import sys

import pytest
import regex
from test_regex_parse import regex_accepts

from chatparse.compiler.automata.determinize import (
    DEAD,
    EOI,
    DeterminizedDfa,
    build_dfa,
    first_chars,
    match_end,
    match_state,
    search,
)
from chatparse.compiler.automata.nfa import build_nfa
from chatparse.compiler.frontend.regex_parse import UnsupportedRegex, parse_regex
from chatparse.compiler.frontend.symbolic_charclass import ANY, SPACE, SymbolicCharSet

ALPHABET = "<t/> x\n"
MAX_STRINGS = 20000  # per pattern: length 5 for all seven letters, 6 for fewer

HAND_WRITTEN = [
    # literals and prefix-overlapping alternations
    "<t>",
    "<t|<tool>",
    "<tool>|<t",
    "<t>|<t/>|<",
    "t|tt|ttt",
    "ttt|tt|t",
    "<(?:t|tx)>",
    "<(?:tx|t)x?>",
    "x|",
    "|x",
    "(?:)",
    "",
    # classes
    ".",
    ".x",
    r"\s",
    r"\S+",
    r"\w\W",
    r"[^<]*>",
    r"[t/]+",
    r"[^ >\n]{2}",
    r"[\s<]x",
    r"[^\w]",
    r"\d|x",
    # greedy and lazy quantifiers
    "x*",
    "x*?",
    "x+?t",
    "t??x",
    "x{2}",
    "x{2,}",
    "x{,2}t",
    "x{1,3}?t",
    "(?:tx){1,2}",
    "<.*>",
    "<.*?>",
    "<t.*?/t>",
    r"\s*<t>\s*",
    r"(?:<|t)+?>",
    # nullable loop bodies (regex ends a loop after an iteration that matched empty)
    r"(?:x*|t)*",
    r"(?:x*|t)*t",
    r"(?:x*?)*",
    r"(?:x|)*",
    r"(?:|x)*",
    r"(?:|t){2,}",
    r"(?:x*|t){2,3}",
    r"(?:x*|t)+?>",
    r"(?:(?:x*|t)*|<)*",
    r"(?:$|x)*",
    r"(?:\b|x)*t",
    r"(?:x?){3}t",
    # anchors and assertions
    "^x",
    r"\Ax|t",
    "x$",
    "$",
    r"x$|x\n",
    r"$\n",
    r"\n$",
    r"x\n?$",
    r"(?:\n$|t)*",
    r"x\Z",
    r"\Z",
    *([r"x\z|x"] if regex_accepts(r"\z") else []),  # `\z` is new in regex
    r"\bt",
    r"t\b",
    r"\bt\b",
    r"\B",
    r"\Bt",
    r"x\B.",
    r"(?:t|x)+\b",
    r"^$",
    r"^\b",
    r"\b$",
    r"(?:^|<)t",
    # nested groups and captures
    r"(<(t|x)+(?P<end>>))",
    r"(?:(?:<)(?:t|(?:x)))+",
    r"(?<n>t)(?:x|(t))?",
]

# The shapes the random generator combines.
ATOMS = [
    "<",
    "t",
    "/",
    ">",
    "x",
    " ",
    r"\n",
    ".",
    r"\s",
    r"\S",
    r"\w",
    r"\W",
    "[^<]",
    "[t/]",
    "[^ >]",
    "^",
    "$",
    r"\A",
    r"\Z",
    r"\z",
    r"\b",
    r"\B",
]
QUANTIFIERS = ["*", "+", "?", "*?", "+?", "??", "{2}", "{0,2}", "{1,}", "{,2}", "{1,2}?", "{2,}?"]


def _random_pattern(rng: random.Random, depth: int = 0) -> str:
    roll = rng.random()
    if depth >= 3 or roll < 0.35:
        return rng.choice(ATOMS)
    if roll < 0.6:
        return "".join(_random_pattern(rng, depth + 1) for _ in range(rng.randint(2, 3)))
    if roll < 0.8:
        branches = (
            _random_pattern(rng, depth + 1) if rng.random() > 0.15 else ""
            for _ in range(rng.randint(2, 3))
        )
        return "(?:" + "|".join(branches) + ")"
    return "(?:" + _random_pattern(rng, depth + 1) + ")" + rng.choice(QUANTIFIERS)


def generated_patterns(count: int = 240, seed: int = 20240611) -> list[str]:
    rng = random.Random(seed)
    patterns: list[str] = []
    while len(patterns) < count:
        pattern = _random_pattern(rng)
        try:
            regex.compile(pattern, regex.DOTALL)
        except regex.error:
            continue
        if pattern not in patterns:
            patterns.append(pattern)
    return patterns


PATTERNS = HAND_WRITTEN + generated_patterns()


# --- the exhaustive walk ------------------------------------------------------------


def _representatives(dfa: DeterminizedDfa) -> str:
    """One char of ALPHABET per DFA class that ALPHABET touches."""
    seen: dict[int, str] = {}
    for ch in ALPHABET:
        seen.setdefault(dfa.class_of(ch), ch)
    return "".join(seen.values())


def _completions(dfa: DeterminizedDfa) -> dict[int, str]:
    """Per live state, a shortest input after which the state reports a match
    (ending with the lookahead char, or with nothing when EOI is the lookahead)."""
    found: dict[int, str] = {}
    for state in range(1, len(dfa.rows)):
        if dfa.end_for(state, EOI) is not None:
            found[state] = ""
        else:
            for symbol in range(1, len(dfa.classes) + 1):
                if dfa.end_for(state, symbol) is not None:
                    found[state] = dfa.classes[symbol - 1].representative()
                    break
    frontier = dict(found)
    while frontier:
        nxt: dict[int, str] = {}
        for state in range(1, len(dfa.rows)):
            if state in found:
                continue
            for symbol, target in sorted(dfa.rows[state].items()):
                if target in frontier:
                    nxt[state] = dfa.classes[symbol - 1].representative() + frontier[target]
                    break
        found.update(nxt)
        frontier = nxt
    return found


def _partial_is_exact(pattern: str) -> bool:
    """regex's partial=True is exact for patterns without lazy repeats and assertions."""
    return not regex.search(r"[*+?}]\?|\\[AbBZz]|[\^$]", pattern)


def walk(dfa: DeterminizedDfa, letters: str, max_length: int):
    """Yield (text, runs) for every text over `letters` up to `max_length`, where
    runs[start] = (state, last reported end) of the run from `start` over text[start:]
    before EOI: the runtime's incremental stepping, one char for all runs at once."""
    stack = [("", ((dfa.start_state("", 0), None),))]
    while stack:
        text, runs = stack.pop()
        yield text, runs
        if len(text) == max_length:
            continue
        for ch in reversed(letters):
            symbol = dfa.class_of(ch)
            stepped = []
            for state, last in runs:
                if state != DEAD:
                    k = dfa.end_for(state, symbol)
                    if k is not None:
                        last = len(text) - k
                    state = dfa.rows[state].get(symbol, DEAD)
                stepped.append((state, last))
            longer = text + ch
            stepped.append((dfa.start_state(longer, len(longer)), None))
            stack.append((longer, tuple(stepped)))


def _max_length(letters: str) -> int:
    length = 0
    while length < 6 and sum(len(letters) ** n for n in range(length + 2)) <= MAX_STRINGS:
        length += 1
    return length


def check_pattern(pattern: str) -> list[str]:
    """All disagreements between the DFA and `regex` for `pattern` (empty: none)."""
    compiled = regex.compile(pattern, regex.DOTALL)
    dfa = build_dfa(pattern)
    completions = _completions(dfa)
    partial_exact = _partial_is_exact(pattern)
    letters = _representatives(dfa)
    problems: list[str] = []

    def fail(message: str) -> None:
        if len(problems) < 5:
            problems.append(f"{pattern!r}: {message}")

    for text, runs in walk(dfa, letters, _max_length(letters)):
        ends = []
        for start, (state, last) in enumerate(runs):
            end = last
            if state != DEAD:
                k = dfa.end_for(state, EOI)
                if k is not None:
                    end = len(text) - k
            ends.append(end)
            # (c) the anchored match end at every start
            match = compiled.match(text, start)
            if end != (match.end() if match else None):
                fail(f"match end {text!r} at {start}: regex {match}, dfa {end}")
            # (b) alive or reported <=> some continuation matches from `start`
            if state != DEAD:
                extended = text + completions[state]
                if compiled.match(extended, start) is None:
                    fail(f"alive at end of {text!r} from {start}, but {extended!r} does not match")
            if partial_exact:
                partial = compiled.match(text, start, partial=True) is not None
                if partial != (state != DEAD or last is not None):
                    fail(f"partial {text!r} at {start}: regex {partial}, dfa {state, last}")
        # (a) leftmost-first search = the first start whose run has an end
        expected = compiled.search(text)
        found = next(((start, end) for start, end in enumerate(ends) if end is not None), None)
        if found != (expected.span() if expected else None):
            fail(f"search {text!r}: regex {expected}, dfa {found}")
    return problems


@pytest.mark.parametrize("chunk", range(4))
def test_dfa_agrees_with_regex_exhaustively(chunk: int) -> None:
    problems = []
    for pattern in PATTERNS[chunk::4]:
        problems.extend(check_pattern(pattern))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("pattern", PATTERNS[::10])
def test_simulator_agrees_with_the_incremental_walk(pattern: str) -> None:
    """search / match_end / match_state (determinize.py) compute what the walk above computes."""
    dfa = build_dfa(pattern)
    for text, runs in walk(dfa, _representatives(dfa), 4):
        for start, run in enumerate(runs):
            assert match_state(dfa, text, start) == run
        expected = regex.compile(pattern, regex.DOTALL).search(text)
        assert search(dfa, text) == (expected.span() if expected else None)
        expected = regex.compile(pattern, regex.DOTALL).search(text, 1)
        assert search(dfa, text, 1) == (expected.span() if expected else None)


def test_pattern_set_is_broad() -> None:
    """The generated set really exercises the constructs the exhaustive test claims."""
    text = "\n".join(PATTERNS)
    for construct in [
        "*?",
        "+?",
        "??",
        "{2}",
        "(?:|",
        r"\b",
        r"\B",
        "$",
        "^",
        r"\Z",
        r"\A",
        "[^<]",
    ]:
        assert construct in text, construct
    assert len(PATTERNS) >= 300


# --- semantics examples (STYLE.md section 2) ---------------------------------------


@pytest.mark.parametrize(
    "pattern, text, span",
    [
        ("<t|<tool>", "<tool>", (0, 2)),  # leftmost-first: the first alternative wins
        ("<tool>|<t", "<tool>", (0, 6)),
        ("<tool>|<t", "<to", (0, 2)),  # complete "<t" (the longer one cannot finish)
        ("a.*z|b", "a b", (2, 3)),  # a complete later match beats a partial earlier one
        (r"(?:a*|b)*", "b", (0, 0)),  # regex ends a loop after an empty iteration
        (r"a$|a\n", "a\n", (0, 1)),  # `$` before the final newline; first alternative
        (r"a$|a\n", "a\nb", (0, 2)),
        (r"a\Z|a\n", "a\n", (0, 2)),
    ],
)
def test_semantics_examples(pattern: str, text: str, span: tuple[int, int]) -> None:
    assert regex.compile(pattern, regex.DOTALL).search(text).span() == span
    assert search(build_dfa(pattern), text) == span


def test_search_from_pos_sees_the_text_before_it() -> None:
    """Like regex.search(text, pos): `^` only at 0, `\\b` looks at text[pos - 1]."""
    assert search(build_dfa("^a"), "ba", 1) is None
    assert search(build_dfa(r"\ba"), "ba", 1) is None
    assert search(build_dfa(r"\Ba"), "ba", 1) == (1, 2)
    assert regex.compile(r"\Ba").search("ba", 1).span() == (1, 2)
    assert regex.compile("^a").search("ba", 1) is None


def test_ends_report_delayed_dollar_match() -> None:
    """`$` before a final "\\n": reported with k = 1 once EOI follows the "\\n"."""
    dfa = build_dfa("a$")
    newline = dfa.class_of("\n")
    after_a = dfa.rows[dfa.starts[2]][dfa.class_of("a")]
    assert dfa.end_for(after_a, EOI) == 0
    assert dfa.end_for(after_a, newline) is None
    after_newline = dfa.rows[after_a][newline]
    assert dfa.ends[after_newline] == {EOI: 1}
    assert dfa.rows[after_newline] == {}
    assert match_end(dfa, "a\n", 0) == 1
    assert match_end(dfa, "a\nb", 0) is None


def test_ends_is_an_int_when_every_symbol_reports_alike() -> None:
    dfa = build_dfa("<t>")
    final = [s for s in range(1, len(dfa.rows)) if dfa.ends[s] is not None]
    assert [dfa.ends[s] for s in final] == [0]
    assert isinstance(build_dfa(r"t\b").ends[2], dict)


def test_regex_partial_quirks() -> None:
    """Why (b) does not trust `partial=True` for lazy repeats and assertions: these are
    `regex`'s answers, each wrong about whether any continuation can match. If this
    test fails, `regex` changed and _partial_is_exact can cover more patterns."""
    # A lazy repeat reports a partial match that no continuation can complete.
    assert regex.compile("t+?>").match("t<", 0, partial=True) is not None
    assert search(build_dfa("t+?>"), "t<" + "x" * 5) is None
    # \B at the end of the text: "tt" would match at 1, yet no partial match.
    assert regex.compile(r"\B").match("t", 1, partial=True) is None
    assert regex.compile(r"\B").match("tt", 1) is not None
    assert match_state(build_dfa(r"\B"), "t", 1)[0] != DEAD
    # An assertion that can no longer hold still gives a partial match at the end.
    assert regex.compile(r"t\bt").match("t", 0, partial=True) is not None
    assert match_state(build_dfa(r"t\bt"), "t", 0)[0] == DEAD


# --- structure ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern, dump",
    [
        ("a|b", ["0: split -> 1, 3", "1: char a -> 2", "2: match", "3: char b -> 2"]),
        ("a*?", ["0: split -> 1, 2", "1: match", "2: char a -> 0"]),  # lazy: exit first
        (
            "a{2,3}",
            ["0: char a -> 1", "1: char a -> 2", "2: split -> 3, 4", "3: char a -> 4", "4: match"],
        ),
        (
            r"\bx$",
            ["0: assert word_boundary -> 1", "1: char x -> 2", "2: assert end -> 3", "3: match"],
        ),
        # The inner loop's clean copy (2) leaves both loops when a* matched empty;
        # its dirty copy (4) goes back to the outer loop (0).
        (
            "(?:a*|b)*",
            [
                "0: split -> 1, 5",
                "1: split -> 2, 6",
                "2: split -> 3, 5",
                "3: char a -> 4",
                "4: split -> 3, 0",
                "5: match",
                "6: char b -> 0",
            ],
        ),
    ],
)
def test_nfa_dump(pattern: str, dump: list[str]) -> None:
    assert build_nfa(parse_regex(pattern)).dump().splitlines() == ["start 0", *dump]


def test_dfa_dump() -> None:
    assert build_dfa("<t|<tool>").dump().splitlines() == [
        "classes: 1=[^<t] 2=[<] 3=[t]",
        "starts: at_begin=1 after_word=1 after_other=1",
        "1: 2->2",
        "2: 3->3",
        "3: -  match 0",  # the <tool> branch was cut: <t already matched
    ]
    assert build_dfa("a$").dump().splitlines() == [
        "classes: 1=[^\\na] 2=[\\n] 3=[a]",
        "starts: at_begin=1 after_word=1 after_other=1",
        "1: 3->2",
        "2: 2->3  match {EOI:0}",
        "3: -  match {EOI:1}",  # "a\n" then EOI: the match ends before the newline
    ]


def test_no_assertions_means_one_start_state() -> None:
    for pattern in ["<t>", r"\s*x", "(?:a|b)*?c"]:
        assert build_dfa(pattern).starts == (1, 1, 1)


def test_start_contexts_with_assertions() -> None:
    dfa = build_dfa(r"\bt")
    at_begin, after_word, after_other = dfa.starts
    assert after_word == DEAD  # \b before t needs a non-word char before it
    assert at_begin == after_other != DEAD
    caret = build_dfa("^t")
    assert caret.starts[0] != DEAD and caret.starts[1:] == (DEAD, DEAD)


def _live_states(dfa: DeterminizedDfa) -> set[int]:
    live = {s for s in range(1, len(dfa.rows)) if dfa.ends[s] is not None}
    changed = True
    while changed:
        changed = False
        for state in range(1, len(dfa.rows)):
            if state not in live and any(t in live for t in dfa.rows[state].values()):
                live.add(state)
                changed = True
    return live


def _distinguishable_pairs(dfa: DeterminizedDfa) -> set[tuple[int, int]]:
    """Pairs of states told apart by some input (plain fixpoint, independent of determinize.py)."""
    count = len(dfa.rows)
    symbols = range(len(dfa.classes) + 1)
    differ = {
        (a, b)
        for a in range(count)
        for b in range(a + 1, count)
        if any(dfa.end_for(a, c) != dfa.end_for(b, c) for c in symbols)
    }
    changed = True
    while changed:
        changed = False
        for a in range(count):
            for b in range(a + 1, count):
                if (a, b) in differ:
                    continue
                for c in symbols[1:]:
                    x, y = sorted((dfa.rows[a].get(c, DEAD), dfa.rows[b].get(c, DEAD)))
                    if x != y and (x, y) in differ:
                        differ.add((a, b))
                        changed = True
                        break
    return differ


@pytest.mark.parametrize("pattern", HAND_WRITTEN[::3])
def test_trimmed_minimal_and_canonical(pattern: str) -> None:
    dfa = build_dfa(pattern)
    # Trimmed: every state but DEAD can still report a match.
    assert _live_states(dfa) == set(range(1, len(dfa.rows)))
    # Minimal: every two states are distinguishable.
    count = len(dfa.rows)
    assert len(_distinguishable_pairs(dfa)) == count * (count - 1) // 2
    # Canonical: states are numbered in BFS order from the starts.
    order = [s for s in dict.fromkeys(dfa.starts) if s != DEAD]
    for state in order:
        for _, target in sorted(dfa.rows[state].items()):
            if target not in order:
                order.append(target)
    assert order == list(range(1, count))
    # Classes are disjoint, cover everything, ordered by smallest code point.
    orders = [c.order() for c in dfa.classes]
    assert orders == sorted(orders) and orders[0][0] == 0
    union = SymbolicCharSet()
    for index, one in enumerate(dfa.classes):
        assert not any(one & other for other in dfa.classes[index + 1 :])
        union = union | one
    assert union == ANY


def test_classes_that_behave_alike_are_merged() -> None:
    dfa = build_dfa("[ab]c|[bd]c")
    assert [c for c in dfa.classes if "a" in c][0] == SymbolicCharSet.chars("abd")


def test_same_pattern_same_tables_under_any_hash_seed() -> None:
    script = (
        "from chatparse.compiler.automata.determinize import build_dfa\n"
        "for p in [r'\\s*<t|<tool>\\b', r'(?:x*|t)*\\Z', r'[^<>]+?(?P<a>/)$']:\n"
        "    d = build_dfa(p); print(d.dump()); print(d.witnesses())\n"
    )
    outputs = set()
    for seed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        run = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        outputs.add(run.stdout)
    assert len(outputs) == 1
    assert build_dfa(r"\s*<t") == build_dfa(r"\s*<t")


@pytest.mark.parametrize(
    "pattern", [r"<t|<tool>", r"\s*<t>", r"x\n?$", r"\bt\B.", r"(?:x*|t){2,3}"]
)
def test_witnesses_are_shortest_and_smallest(pattern: str) -> None:
    dfa = build_dfa(pattern)
    letters = "".join(sorted({c.representative() for c in dfa.classes}))
    best: dict[int, str] = {}
    for length in range(6):
        for chars in itertools.product(letters, repeat=length):
            text = "".join(chars)
            for start in dict.fromkeys(dfa.starts):
                state = start
                for ch in text:
                    state = dfa.rows[state].get(dfa.class_of(ch), DEAD) if state else DEAD
                if state != DEAD and state not in best:
                    best[state] = text
    assert dfa.witnesses() == dict(sorted(best.items()))


def test_first_chars_and_nullable_starts() -> None:
    assert first_chars(build_dfa("<t|>")) == SymbolicCharSet.chars("<>")
    assert first_chars(build_dfa(r"\s*<t>")) == SPACE | SymbolicCharSet.chars("<")
    assert not build_dfa(r"\s*<t>").nullable_starts
    assert build_dfa("x*").nullable_starts
    assert build_dfa(r"\b").nullable_starts
    dfa = build_dfa("$")
    assert dfa.nullable_starts and first_chars(dfa) == SymbolicCharSet.chars("\n")


# --- catastrophic patterns and the size guards ------------------------------------------


@pytest.mark.parametrize(
    "pattern, text, span",
    [(r"(a|a)*b", "a" * 30 + "b", (0, 31)), (r"(a+)+$", "a" * 30 + "b", None)],
)
def test_catastrophic_patterns_are_small_and_linear(pattern, text, span) -> None:
    dfa = build_dfa(pattern)
    assert len(dfa.rows) <= 4
    assert search(dfa, text) == span
    # Linear by construction: at most 4 states, one table step per char (what the reference
    # backtracks on exponentially). The CPU-time 8n-vs-n ratio is tests/test_linear_time.py's;
    # a wall-clock bound here would only measure the machine's load.
    state, last = match_state(dfa, "a" * 200_000, 0)
    assert state != DEAD


def test_dfa_size_guard() -> None:
    build_dfa(r"(?:a|b)*a(?:a|b){8}")  # 512 states: fine
    pattern = r"x(?:a|b)*a(?:a|b){14}"
    with pytest.raises(UnsupportedRegex, match="over 10000 states") as error:
        build_dfa(pattern)
    assert error.value.span == (0, len(pattern))


def test_nfa_size_guard() -> None:
    with pytest.raises(UnsupportedRegex, match="over 20000 NFA states"):
        build_dfa(r"(?:ab){10001}")
