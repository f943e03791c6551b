r"""Region automaton -> words (`explain`) and a Graphviz picture (`to_dot`).

In:  a `RegionAutomaton` (region_automaton.py).
Out: `explain(automaton)`: the lines of the region diagram, the same text the generated module's
     docstring carries (the code model's diagram, reused, not rewritten); `to_dot(automaton)`: one
     DOT digraph with a cluster for the regions (a node per region, an edge per open and close,
     labelled with the delimiter) and a cluster per delimiter DFA (a node per state, doubled when
     it reports a match, an edge per target labelled with the char classes leading there, one
     class per label line: a class spelling can hold ' | ').
Guarantee: every string from the template reaches the DOT text only inside a quoted, escaped DOT
string, so any delimiter draws; the output is deterministic (fields in source order, states by
number).
"""

from __future__ import annotations

from ..compiler.automata.region_automaton import CompiledDelimiter, RegionAutomaton
from ..compiler.codegen.codemodel import build_module
from ..compiler.frontend.symbolic_charclass import format_charset

SINK = "(null sink)"
START = "(prefix)"


def explain(automaton: RegionAutomaton) -> list[str]:
    """The region diagram of the generated module's docstring, line by line."""
    return list(build_module(automaton).diagram)


def dot_string(text: str) -> str:
    """A DOT quoted string holding `text` exactly (backslash, quote and newline escaped)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _region_id(field: str | None) -> str:
    return f"region {field}" if field is not None else SINK


def to_dot(automaton: RegionAutomaton, name: str = "template") -> str:
    spec = automaton.spec
    q = dot_string
    lines = [f"digraph {q(name)} {{", "  rankdir=LR;", "  node [fontname=monospace];"]
    lines.append(f"  subgraph {q('cluster_regions')} {{")
    lines.append(f"    label={q('regions')};")
    home = automaton.home.field
    home_id = _region_id(home)
    home_label = f"{home} (implicit)" if home is not None else SINK
    lines.append(f"    {q(START)} [shape=plaintext, label={q('prefix')}];")
    lines.append(f"    {q(home_id)} [shape=box, label={q(home_label)}];")
    for field in spec.fields:
        if field.open is not None:
            lines.append(f"    {q(_region_id(field.name))} [shape=box, label={q(field.name)}];")
    lines.append(
        f"    {q(START)} -> {q(home_id)} [label={q(automaton.start_anchor.spec.describe())}];"
    )
    for field in spec.fields:
        if field.open is None:
            continue
        region = _region_id(field.name)
        lines.append(f"    {q(home_id)} -> {q(region)} [label={q(field.open.describe())}];")
        if field.close is not None:
            lines.append(f"    {q(region)} -> {q(home_id)} [label={q(field.close.describe())}];")
    if home is not None:
        implicit = spec.field(home)
        if implicit.close is not None:
            lines.append(
                f"    {q(home_id)} -> {q(home_id)} [label={q(implicit.close.describe())}];"
            )
    lines.append("  }")
    delimiters = [("start_anchor", automaton.start_anchor)]
    delimiters += [(f"{field} {role}", d) for (field, role), d in automaton.delimiters.items()]
    for title, compiled in delimiters:
        lines.extend(_dfa_cluster(title, compiled))
    lines.append("}")
    return "\n".join(lines) + "\n"


def dfa_node(title: str, state: int) -> str:
    return f"{title} s{state}"


def _dfa_cluster(title: str, compiled: CompiledDelimiter) -> list[str]:
    q = dot_string
    lines = [f"  subgraph {q('cluster_' + title)} {{", f"    label={q(compiled.spec.describe())};"]
    # A look-ahead that ends the pattern's alternatives: the DFA that reads its text as consumed
    # (compiler/automata/trailing_lookahead.py); its match ends before that text.
    dfa = compiled.dfa or (compiled.lookahead.dfa if compiled.lookahead is not None else None)
    if dfa is None:
        lines.append(
            f"    {q(title + ' fallback')} [shape=note, "
            f"label={q('regex fallback: ' + str(compiled.fallback_reason))}];"
        )
        lines.append("  }")
        return lines
    start_id = f"{title} start"
    lines.append(f"    {q(start_id)} [shape=point];")
    for state in range(1, len(dfa.rows)):
        shape = "doublecircle" if dfa.ends[state] is not None else "circle"
        lines.append(f"    {q(dfa_node(title, state))} [shape={shape}, label={q(str(state))}];")
    lines.append(f"    {q(start_id)} -> {q(dfa_node(title, dfa.starts[0]))};")
    for state in range(1, len(dfa.rows)):
        targets: dict[int, list[str]] = {}
        for symbol, target in dfa.rows[state].items():
            targets.setdefault(target, []).append(format_charset(dfa.classes[symbol - 1]))
        for target, labels in targets.items():
            label = q("\n".join(labels))
            lines.append(
                f"    {q(dfa_node(title, state))} -> {q(dfa_node(title, target))} [label={label}];"
            )
    lines.append("  }")
    return lines
