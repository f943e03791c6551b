r"""Where a generated fast path must stop emitting: the start of the text a delimiter may still use.

In: the watched delimiters of one region in their literal forms (a `Literal`, `Literals`, a lead
run then literals, a literal then a run), as the compiler lists them for `HeldTail`, and a text
that ends where the fast path's text ends, with no run alive before its start. Out:
`HeldTail.cut(text)`, the position from which the general path would hold `text` (`len(text)`:
nothing), or -1 when the fast path cannot decide (a watched literal occurs in it, so a delimiter
matches; or the char before a run of lead chars is non-ASCII, which the installed `regex` may
count as a lead char; or the tail is longer than `HELD_MAX`). `settled` finds the match of a
region's one literal-then-run delimiter (`</tool_call>\s*`), which the fast path commits once its
run has ended. Guarantee: with a watched literal absent, a run of delimiter d is alive at the end
of `text` exactly from the positions p where `text[p:]` is lead chars (d's lead run,
if it has one) then a proper prefix of one of d's literals: the earliest such p over every
delimiter is where the general path starts holding (it holds exactly while a run is alive).
"""

from __future__ import annotations

# The longest tail the fast path holds. It copies its tail into each next chunk, so a longer one
# (a long run of spaces before `\s*<tool_call>`) goes to the general path, which holds a run of
# any length in linear time.
HELD_MAX = 128


class HeldTail:
    """One region's literal delimiters, for the fast path's held tail (see the module docstring).

    `runs`: per watched delimiter, (its lead run's ASCII chars, or "" when it has none, its
    literals, and the lead chars a held tail may be before a chunk that is exactly one of those
    literals for the two to be one match, None when they never are: see `leads_into`). `trail`:
    the ASCII trail chars of the region's one watched delimiter when it is a literal then a run
    (`</tool_call>\\s*`; see `settled`), else None. The compiler decides all of it
    (compiler/planning/fast_path.py `held_tail_plan`, declared on each `Watch`) and emits one only
    for a region whose watched delimiters all have a literal form and whose lead chars are the
    only chars that can precede a literal in a run; what is built here is an index of the
    literals.
    """

    __slots__ = ("literals", "tails", "bare", "leads", "trail")

    def __init__(
        self, *runs: tuple[str, tuple[str, ...], str | None], trail: str | None = None
    ) -> None:
        self.trail = trail
        self.leads = {
            literal: joins
            for _, literals, joins in runs
            if joins is not None
            for literal in literals
        }
        self.literals = tuple(
            dict.fromkeys(literal for _, literals, _ in runs for literal in literals)
        )
        # last char -> the (non-empty proper prefix of a literal, its delimiter's lead chars)
        # ending in it, longest first; `bare`: the lead chars of each delimiter with a lead run
        # (a run of them alone, before no literal char yet, is alive too).
        tails: dict[str, dict[tuple[str, str], None]] = {}
        for lead, literals, _ in runs:
            for literal in literals:
                for size in range(1, len(literal)):
                    tails.setdefault(literal[size - 1], {})[(literal[:size], lead)] = None
        self.tails = {
            last: tuple(sorted(found, key=lambda item: -len(item[0])))
            for last, found in sorted(tails.items())
        }
        self.bare = tuple(dict.fromkeys(lead for lead, _, _ in runs if lead))

    def leads_into(self, held: str, literal: str) -> bool:
        """Whether a held tail `held` and then a chunk that is exactly a whole match `literal`
        make one match over both: `held` is lead chars of the delimiter `literal` belongs to (so
        its run from the start of `held` is the earliest, and no other run starts inside it)."""
        lead = self.leads.get(literal)
        return lead is not None and not held.strip(lead)

    def settled(self, text: str) -> tuple[int, int | None] | None:
        """For the one watched literal-then-run delimiter: (where its first match in `text`
        starts, where it ends, None while its run reaches the end of `text` and may grow).
        None: no match, or a non-ASCII char right after the run (maybe a trail char). With one
        delimiter watched, no run that starts earlier can be alive there (it would be a match
        of the same literal, earlier)."""
        trail = self.trail
        if trail is None:
            return None
        literal = self.literals[0]
        start = text.find(literal)
        if start < 0:
            return None
        end = len(text) - len(text[start + len(literal) :].lstrip(trail))
        if end == len(text):
            return (start, None) if end - start <= HELD_MAX else None
        if text[end] >= "\x80":
            return None
        return start, end

    def cut(self, text: str) -> int:
        """See the module docstring; `text` is not empty."""
        for literal in self.literals:
            if literal in text:
                return -1
        end = len(text)
        best = end
        for lead in self.bare:
            start = len(text.rstrip(lead))
            if start and text[start - 1] >= "\x80":
                return -1  # maybe a lead char under the installed tables
            if start < best:
                best = start
        for prefix, lead in self.tails.get(text[-1], ()):
            if not text.endswith(prefix):
                continue
            start = end - len(prefix)
            if lead:
                start = len(text[:start].rstrip(lead))
                if start and text[start - 1] >= "\x80":
                    return -1  # maybe a lead char under the installed tables
            if start < best:
                best = start
        return best if end - best <= HELD_MAX else -1


__all__ = ["HeldTail"]
