"""Automata: regex ASTs -> DFAs, then the template's region automaton.

Takes `RegexNode` trees and the `TemplateSpec`; gives each delimiter's Thompson NFA (nfa.py), its
minimised `DeterminizedDfa` (determinize.py, with the look-aheads that end a pattern's
alternatives run by trailing_lookahead.py), and the `RegionAutomaton` (region_automaton.py): the
regions, their watch sets in priority order, and the delimiters left to a `regex` fallback.
"""
