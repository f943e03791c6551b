"""Planning: what the runtime will do, decided once, from the region automaton and its DFAs.

Takes the `RegionAutomaton`; gives each delimiter's form and heads (analysis.py), what a DFA's
whole-text runs cross at once (run_crossings.py), each region's fast-path plan (fast_path.py),
what a `regex` fallback's pattern holds (fallback_plan.py) and an xml-inline tag split for
streaming (tag_halves.py): named data the generated module prints, so the runtime re-derives none.
"""
