r"""What the runtime's `regex` fallback needs to know about a pattern, read off its text once, here.

In: the pattern of a delimiter that falls back to `regex` (compiler/automata/region_automaton.py). Out, printed
on its `RegexFallback(...)` in the generated module (compiler/codegen/codemodel.py):

- `leading_loop`: the loop over one char class the pattern begins with (`\\s*` in
  `\\s*functools(?=\\s*\\[)`) and the literal after it, which makes the pattern
  *lead-dominated* (runtime/fallback.py, `find_lead`): a long run of spaces costs one attempt;
- `looks_behind`: whether an attempt may look further back than the char before its start, so
  that the region parser keeps the whole output;
- `asserts_the_end`: whether the pattern may hold `$` or `\\Z`, the assertions the edge rule must
  check again one char later.

Guarantee: each answer errs on the safe side (not recognised: no loop; unsure: it looks behind or
asserts the end). The runtime reads these declarations and parses no pattern text itself.
"""

from __future__ import annotations

import re
from typing import Any


def asserts_the_end(pattern: str) -> bool:
    """Whether `pattern` may hold `$` or `\\Z` (an over-estimate: `\\$` counts too), the
    assertions that succeed at the end of the text. Only such a pattern pays for a copy of the
    text per decided attempt."""
    return "$" in pattern or "\\Z" in pattern


# One char class or single char, then a greedy or lazy `*` or `+` (not possessive), at the very
# start of a pattern: the loop the runtime's `fallback.find_lead` uses. Anything less plain is not recognised.
_LEADING_LOOP = (
    r"""(\\[sSdDwW]|\\[nrtfv]|\\[^0-9A-Za-z]|\.|[^\\()\[\]{}|^$*+?.]|\[\^?\]?(?:\\.|\[:[a-z]+:\]|[^\]\\])*\])[*+]\??(?![+])"""
    # ... and the literal char after it, when one follows that no quantifier makes optional, with
    # the literal chars after that one that no quantifier touches (`functools` in
    # `\s*functools(?=...)`: every match holds them in a row, right after the loop).
    r"""(?:([^\\()\[\]{}|^$*+?.]|\\[^0-9A-Za-z])(?![*?{])"""
    r"""(?:(?=\+)|((?:(?:[^\\()\[\]{}|^$*+?.]|\\[^0-9A-Za-z])(?![*?{+]))*)))?"""
)
_LITERAL_ESCAPE = r"\\(.)"
_LOOKS_BEHIND = r"\(\?<[=!]|\\[GK]|\(\?[a-zA-Z]*r"


def looks_behind(pattern: str) -> bool:
    """Whether an attempt may look further back than the char before its start (look-behind,
    `\\G`, `\\K`, reverse matching)."""
    return re.search(_LOOKS_BEHIND, pattern) is not None


# Constructs that make a match depend on where the attempt starts, or re-enter the pattern.
_START_DEPENDENT = r"\\G|\(\?(?:R|[0-9]|[+-][0-9]|&|P>|r\)|[a-zA-Z]*r)"


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
            found = re.compile(_CLASS, re.DOTALL).match(pattern, position)
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


_CLASS = r"\[\^?\]?(?:\\.|\[:[a-z]+:\]|[^\]\\])*\]"


def leading_loop(pattern: str) -> tuple[str, str | None, str | None, bool] | None:
    """The atom of the loop a pattern begins with, the literal char after it (None: not a plain
    literal), the literal chars that follow in a row, that char first (`after` alone when a `+`
    repeats it), and whether the loop is greedy; see `_LEADING_LOOP`. None without such a loop."""
    found = re.match(_LEADING_LOOP, pattern, re.DOTALL)
    if found is None or re.search(_START_DEPENDENT, pattern) or _has_top_level_bar(pattern):
        return None
    after = found.group(2)
    literal = None
    if after is not None:
        after = re.sub(_LITERAL_ESCAPE, r"\1", after, flags=re.DOTALL)
        literal = after + re.sub(_LITERAL_ESCAPE, r"\1", found.group(3) or "", flags=re.DOTALL)
    greedy = pattern[found.end(1) + 1 : found.end(1) + 2] != "?"
    return found.group(1), after, literal, greedy


def consumed_heads(pattern: str) -> tuple[Any, tuple[str, ...]] | None:
    """What every match and every pending attempt of `pattern` begins with (lead chars, then one
    of some literals), read from its form whose final positive look-aheads consume their text
    (`(?=<function_call>)|<\\|endoftext\\|>` as `(?:<function_call>)|<\\|endoftext\\|>`); None
    when it has no such form or its matches begin with nothing fixed.

    For the candidate finder of a fallback whose look-aheads make it match empty, where its
    relaxed form (look-aheads read as empty) says nothing: a branch `(?=X)` matches at a position
    exactly when `X` does, and an attempt there is pending exactly while the text from it is a
    proper prefix of some `X`, so both start where the consuming form's match or run does."""
    from ..automata.determinize import build_dfa
    from .analysis import find_heads
    from .tag_halves import consume_final_lookaheads

    consumed = consume_final_lookaheads(pattern)
    if consumed is None:
        return None
    try:
        return find_heads(build_dfa(consumed))
    except Exception:  # noqa: BLE001 (not DFA-expressible, or over a size limit: no heads)
        return None
