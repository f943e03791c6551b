"""The response-template compiler, one subpackage per pipeline stage.

frontend/ (template JSON -> spec, regex ASTs) -> automata/ (DFAs, the region automaton) ->
planning/ (what the runtime will do, decided once) -> codegen/ (the plan -> Python source);
limits.py holds every stage's size limits, nested.py the template data nested to any depth.

template JSON -> `load_spec` (TemplateSpec) -> `parse_regex` (RegexNode, lark) -> `build_nfa` (Nfa)
-> `compile_dfa` (DeterminizedDfa) -> `build_regions` (RegionAutomaton) -> `build_module` (ModuleModel)
-> `render_module` (jinja2, then black) -> Python source.

`compile_template` is the one public entry; it raises ValueError, naming the field and key, for a
template the reference would reject.
"""

from __future__ import annotations


def compile_template(
    template: dict, *, source_path: str | None = None, rebuild: str | None = None
) -> str:
    """Compile a response template into the source of a self-contained parser module."""
    from .automata.region_automaton import build_regions
    from .codegen.codemodel import build_module
    from .codegen.emit import render_module
    from .frontend.spec import load_spec

    automaton = build_regions(load_spec(template))
    return render_module(build_module(automaton, source_path=source_path, rebuild=rebuild))


__all__ = ["compile_template"]
