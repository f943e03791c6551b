r"""The `regex` fallback: delimiters a DFA cannot express (look-around, back-references, ...).

In: a `Delimiter` with `fallback=True` (its pattern, no tables) and the text known so far. Out: the
same answers the DFA paths give (`match_at`'s outcome, `search`'s span, `leftmost_pending`'s start),
from `regex` with DOTALL.

Guarantee: as the DFA paths, except for time: `regex` can backtrack, and the generated module says
so. One shape is kept linear: a pattern that begins with a loop over one char class
(`\s*functools(?=\s*\[)`) is *lead-dominated* (`find_lead`), so a long run of spaces costs one
attempt, not one per space.
"""

from __future__ import annotations

from ._lazy import compiled as compiled_regex
from ._lazy import regex_module

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from typing import Any

    from .delimiter import Delimiter


def find_lead(delimiter: Delimiter) -> tuple[Any, ...] | None:
    r"""For a fallback pattern that begins with a loop over one char class at its top level
    (`\s*functools(?=\s*\[)`, `[ \t]+...`), as the compiler declares it (`lead_loop`, from
    compiler/planning/fallback_plan.py): (that class, the pattern behind a negative look-behind of it),
    both compiled by `regex`; None for any other pattern.

    Such a pattern `C*R` is *lead-dominated*: when it has no match at `s` and `text[s]` is in
    `C`, it has none at `s + 1` either, since `C*` could take `text[s]` in front of any match
    from `s + 1` (whatever `R` holds: look-around and groups see the same text from either
    start). The same holds for an attempt that is only pending at the end of the text known
    so far. So after one attempt fails, the starts in the run of `C` chars it began are never
    tried: `search` asks `regex` only for starts that no `C` char precedes, and the region
    parser attempts no start inside a run of lead chars after one it attempted (`_dominated`).
    Without this, a long run of spaces costs one attempt per space, each reading the rest of
    the run: quadratic, as the reference is.

    When a literal follows the loop (`functools`, its first char outside `C`), the tuple also
    holds it and a reverse match of `C*` (else None, None): see `pending_by_literal`.
    """
    if delimiter.lead_loop is None:
        return None
    atom, literal, greedy = delimiter.lead_loop  # the compiler's `fallback_plan.leading_loop`
    after = literal[0] if literal is not None else None
    flags = delimiter.compiled.flags
    regex = regex_module()
    try:
        lead = compiled_regex(atom, flags)
        guarded = compiled_regex(f"(?<!{atom})(?:{delimiter.pattern})", flags)
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
        return None
    return (lead, guarded, run, literal if back is not None else None, back)


def match_at(delimiter: Delimiter, text: str, start: int, *, final: bool) -> tuple[str, int]:
    """`Delimiter.match_at` by `regex`: one anchored attempt at `start` over the text known so far."""
    compiled = delimiter.compiled
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
    # Nor if it leans on the end of the text: `$` before a last "\n", `\Z` in a look-ahead
    # (`<r>(?=\n?\Z)` on "<r>\n" matches "<r>", which any next char undoes). Those succeed at
    # the edge rather than read past it, so `fullmatch` does not see them; the reference's edge
    # rule (5.24) asks, as here, whether the match survives one more char (`survives_edge`).
    if delimiter.asserts_end and not delimiter.survives_edge(
        text, text + "\x00", start, found.end()
    ):
        return "pending", -1
    return "match", found.end()


def search(delimiter: Delimiter, text: str, pos: int) -> tuple[int, int] | None:
    """Leftmost-first search over a complete string, by `regex`."""
    lead = delimiter.lead
    if lead is None:
        found = delimiter.compiled.search(text, pos)
        return found.span() if found is not None else None
    # A start right after a lead char fails when the start before it failed (`lead`), so
    # after one attempt at `pos`, `regex` searches only starts that no lead char precedes.
    found = delimiter.compiled.match(text, pos)
    if found is None and pos < len(text):
        found = lead[1].search(text, pos + 1)
    return found.span() if found is not None else None


def pending_by_search(delimiter: Delimiter, text: str, pos: int) -> int | None:
    """`leftmost_pending` on the fallback: `regex`'s partial search finds the first start whose
    attempt reaches the end of the text (or matches); after one attempt at `pos`, only starts
    that no lead char precedes are searched (see `lead`)."""
    lead = delimiter.lead
    length = len(text)
    while pos <= length:
        outcome = delimiter.match_at(text, pos, final=False)[0]
        if outcome == "pending":
            return pos
        if pos == length:
            return None
        search = (lead[1] if lead is not None and outcome == "none" else delimiter.compiled).search
        found = search(text, pos + 1, partial=True)
        if found is None:
            return None
        if found.partial or found.end() == length:
            return found.start()
        pos = found.start() + 1  # a match that ends before the end: not pending here
    return None


def pending_by_literal(delimiter: Delimiter, text: str, pos: int) -> int | None:
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
    lead = delimiter.lead
    assert lead is not None and lead[3] is not None  # the caller checked
    _, _, _, literal, back = lead
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
            outcome = delimiter.match_at(text, candidate, final=False)[0]
            tried.add(candidate)
            if outcome == "pending":
                return candidate
            if outcome == "match":  # a caller that had not searched first: the general way
                return pending_by_search(delimiter, text, candidate + 1)
        if found < 0:
            return None
        if start not in tried:
            outcome = delimiter.match_at(text, start, final=False)[0]
            if outcome == "pending":
                return start
            if outcome == "match":
                return pending_by_search(delimiter, text, start + 1)
        found = text.find(literal, found + 1)
