"""For template authors: what to check before a model writes anything, outside the compile pipeline.

lint.py (findings: errors, warnings, cost notes), portability.py (what other engines refuse),
graph.py (the region automaton in words, and Graphviz DOT), and commands.py (the `chatparse lint |
explain | graph | check` commands built on them). They read the compiler's artefacts; the
compiler never imports them.
"""
