r"""Region -> whether its whole-text search may find its literal delimiters together.

In: a `RegionSpec`. Out: `literal_scan(region)`, the `Region(literal_scan=True)` a generated
module declares. Guarantee: where it is True, runtime/whole.py `LiteralScan` (one `re` of the
literals of the region's watches, longest first) finds the same first match as their own
searches and `winner`.

Why it holds. A literal form's match is lead chars, then one of its literals, then trail chars
(`\s*<tool_call>`, `</tool_call>\s*`); its search finds its first literal and walks back over
the lead chars before it. Let q be the first place where any scanned literal is. A watch whose
first literal is at q matches there (from its lead run before q): the scan takes the longest
literal at q, and every literal at q is a prefix of it. A watch whose first literal is further
on starts further on too, unless its lead run reaches back over q: it cannot when the char at q,
the first char of a scanned literal, is no lead char. So the condition: no scanned literal
begins with a char that a scanned lead run may hold (under any Unicode tables).

The scan needs every watch of the region in a literal form, two at least (one is its own
search; with a Dfa watched too, the scan would save little over the searches it still needs),
and literals of at most `search.CUT_OFF_MAX` chars each, so that the `re` reads a bounded number
of chars per position (a longer literal keeps its own `str.find`).
"""

from __future__ import annotations

from chatparse.runtime.search import CUT_OFF_MAX

from ..automata.region_automaton import CompiledDelimiter, RegionSpec
from ..frontend.symbolic_charclass import SymbolicCharSet
from .analysis import FALLBACK, LITERAL_FORMS, literal_alternatives, possible_chars
from .fast_path import delimiter_analysis


def literal_form(
    delimiter: CompiledDelimiter,
) -> tuple[tuple[str, ...], SymbolicCharSet | None] | None:
    """(its literals, its lead run's chars or None) when the module prints the delimiter in a
    literal form, else None: what compiler/codegen/codemodel.py `_delimiter_model` prints (it
    asks here for a pattern past the DFA table limits)."""
    analysis = delimiter_analysis(delimiter)
    if analysis.kind == FALLBACK:
        # A literal past the DFA table limits is still printed as a literal form.
        literals = literal_alternatives(delimiter.spec.pattern)
        return (literals, None) if literals is not None else None
    if analysis.kind in LITERAL_FORMS:
        return analysis.literals, analysis.lead
    return None


def literal_scan(region: RegionSpec) -> bool:
    """Whether `region`'s watches are all literal forms that may be searched together (see the
    module docstring)."""
    found = [literal_form(w.delimiter) for w in region.watch]
    forms = [form for form in found if form is not None]
    if len(forms) < 2 or len(forms) < len(found):
        return False
    leads = [possible_chars(lead) for _, lead in forms if lead is not None]
    for literals, _ in forms:
        for literal in literals:
            if not literal or len(literal) > CUT_OFF_MAX:
                return False
            if any(literal[0] in lead for lead in leads):
                return False
    return True
