"""Literals -> the source of one `re` shaped as their trie, which tries one path per position.

In: literals (not empty), and whether a proper prefix of one that the end of the text cuts off
counts as found (a stream's text may go on). Out: `trie_source`, a pattern that matches at a
position exactly where one of the literals begins (or, with `cut_off`, a proper prefix of one
ends the text); where several do, the longest literal wins, as in an alternation of them
longest first. (With `cut_off` only where a match starts is meant: a prefix cut off may win over
a shorter literal.)

Why a trie: `re` tries an alternation's branches one after another, so a flat `a|b|c` of the
literals (and, with `cut_off`, of every proper prefix of each, followed by `\\Z`) costs each
position one attempt per branch: harmony's null sink has 7 literals of up to 31 chars and some
180 branches, 2 us a short chunk. The trie's branches at a node start with distinct chars, so
an attempt follows one path, at most as long as the longest literal, and backs out of it through
each node once (to try its `\\Z`, or the shorter literal ending there): linear in the text for a
bounded literal length, whatever the text. It matches what the alternation matches.

Used by the streaming prefilter (runtime/search.py `text_end_finder`), whose `cut_off` form had
an alternative per proper prefix. (The whole-text scans, `Heads` and runtime/whole.py, search a
few literals without prefixes, where a flat alternation costs about as much.)
"""

from __future__ import annotations

import re

# Nesting deeper than this (a group per branching node) goes flat: `re` parses and compiles
# nested groups by recursion, so a template's long chain of nested literals ("a", "aa", "aaa",
# ...) could exhaust the stack. Chains of one child are written as one literal, not nested.
NESTING_MAX = 64


def trie_source(literals: list[str] | tuple[str, ...], *, cut_off: bool = False) -> str:
    """The pattern (see the module docstring); `literals` must not be empty or hold ""."""
    trie: dict = {}
    for literal in literals:
        node = trie
        for char in literal:
            node = node.setdefault(char, {})
        node[""] = None  # a literal ends here
    if _depth(trie, cut_off) > NESTING_MAX:
        return _flat_source(literals, cut_off)
    return _node_source(trie, root=True, cut_off=cut_off)


def _depth(node: dict, cut_off: bool) -> int:
    """The nesting of groups `_node_source` gives `node`'s pattern: a node with more than one way
    on (children, the end of a literal, or with `cut_off` the end of the text) opens a group."""
    deepest = 0
    stack = [(node, 0, True)]
    while stack:
        current, depth, root = stack.pop()
        ways = len(current) + (cut_off and not root and "" not in current)
        depth += ways > 1
        deepest = max(deepest, depth)
        stack.extend((child, depth, False) for child in current.values() if child is not None)
    return deepest


def _node_source(node: dict, *, root: bool, cut_off: bool) -> str:
    # Iterative over chains of one child: a literal of thousands of chars nests nothing.
    chain = []
    while len(node) == 1 and "" not in node and (root or not cut_off):
        ((char, node),) = node.items()
        chain.append(re.escape(char))
        root = False
    branches = [
        re.escape(char) + _node_source(child, root=False, cut_off=cut_off)
        for char, child in sorted(node.items())
        if char
    ]
    if "" in node:
        branches.append("")  # a literal ends here: last, so a longer one wins
    elif cut_off and not root:
        branches.append(r"\Z")  # a proper prefix the end of the text cuts off
    head = "".join(chain)
    if len(branches) == 1:
        return head + branches[0]
    return head + "(?:" + "|".join(branches) + ")"


def _flat_source(literals: list[str] | tuple[str, ...], cut_off: bool) -> str:
    ordered = sorted(set(literals), key=lambda literal: (-len(literal), literal))
    alternatives = [re.escape(literal) for literal in ordered]
    if cut_off:
        prefixes = sorted({literal[:k] for literal in ordered for k in range(1, len(literal))})
        alternatives += [re.escape(prefix) + r"\Z" for prefix in prefixes]
    return "|".join(alternatives)


__all__ = ["NESTING_MAX", "trie_source"]
