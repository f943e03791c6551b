"""An xml-inline `tag_pattern` split for streaming: `HEAD(?P<value>.*?)TAIL` into its two halves.

In: a `tag_pattern`. Out: `split_tag(pattern)`, the patterns of HEAD (with its named groups) and
of TAIL, each to be compiled to a DFA like any delimiter, and TAIL as written when its DFA form
consumes look-aheads that end it; or None when the pattern does not split (then chatparse.serving
sends such calls whole at their close). The generated module declares the compiled halves
(`TAG_HALVES`), so the serving layer streams xml-inline arguments with no compiler at run time.

Why the split is exact, and how the halves are used: see serving/inline_calls.py. Decided here once
per template instead of per process at serve time.
"""

from __future__ import annotations

import re
from typing import Any

import regex

from ..frontend.regex_ast import (
    Alternation,
    Assertion,
    Concat,
    Empty,
    Group,
    Literal,
    RegexNode,
    Repeat,
)
from ..frontend.regex_parse import RegexError, parse_relaxed

VALUE_GROUP = "(?P<value>.*?)"


def split_tag(pattern: str) -> tuple[str, tuple[str, ...], str, str | None] | None:
    """(HEAD, HEAD's group names, TAIL for its DFA, TAIL as written when that DFA consumes its
    final look-aheads else None), or None when `pattern` is not `HEAD(?P<value>.*?)TAIL` with
    the value at its top level, `key` in HEAD and no group in TAIL."""
    if pattern.count(VALUE_GROUP) != 1:
        return None
    head, tail = pattern.split(VALUE_GROUP)
    try:
        compiled = regex.compile(pattern, regex.DOTALL)
        head_groups = regex.compile(head, regex.DOTALL).groupindex
        tail_groups = regex.compile(tail, regex.DOTALL).groupindex
    except Exception:  # noqa: BLE001 (an invalid pattern: the reference's error comes at parse)
        return None
    if "key" not in head_groups or "value" in head_groups or tail_groups:
        return None
    if not _value_is_top_level(pattern, compiled):
        return None
    consumed = consume_final_lookaheads(tail)
    if consumed is None:
        return head, tuple(sorted(head_groups)), tail, None
    return head, tuple(sorted(head_groups)), consumed, tail


def consume_final_lookaheads(pattern: str) -> str | None:
    """`pattern` with each positive look-ahead that ends it on every path through it,
    `(?=X)`, made to consume its text, `(?:X)`; None when it has no look-ahead, or another one
    (or another construct a DFA cannot run).

    Exact for where TAIL starts and when that is decided: such a look-ahead is the last thing
    its branch reads, so the branch matches at a position exactly when its consuming form
    does, and a run of either is alive exactly as long; only the match's end differs (the
    consuming one ends after X), and the serving layer reads the real end with `regex`."""
    try:
        node, dropped = parse_relaxed(pattern)
    except RegexError:
        return None
    if not dropped:
        return None

    def at_end(item: Any, target: Any) -> bool:
        if item is target:
            return True
        if isinstance(item, Group):
            return at_end(item.item, target)
        if isinstance(item, Alternation):
            return any(at_end(branch, target) for branch in item.items)
        if isinstance(item, Concat) and item.items:
            return at_end(item.items[-1], target)
        return False

    spans: list[tuple[int, int]] = []
    for empty in dropped:
        start, end = empty.span
        if not (isinstance(empty, Empty) and pattern.startswith("(?=", start)):
            return None  # a negative look-ahead cannot be consumed
        if not at_end(node, empty) or any(s <= start < e for s, e in spans):
            return None  # before other items, or nested in another look-ahead
        spans.append((start, end))
    out = pattern
    for start, _end in sorted(spans, reverse=True):
        out = out[:start] + "(?:" + out[start + 3 :]
    return out


def tail_search(tail: str) -> tuple[str, str, bool] | None:
    """TAIL as written, split for a whole-text search of where it first matches: (LEAD, CORE,
    AT_END) when TAIL is an optional char LEAD (`\\n?`, greedy; "" for none) then branches of
    which `\\Z` may be one (AT_END); CORE is the other branches, as written, in a group. None for
    any other TAIL, or one whose branches are all `\\Z`.

    Why: where TAIL first matches at or after a value's start `h` is where CORE first matches,
    `q` (CORE's search, with its literals found in C), or the end of the text when AT_END and
    CORE matches nowhere; or one char before, when that char is LEAD, at or after `h`, and LEAD
    cannot begin CORE (checked where CORE is compiled). qwen3_coder's
    `\\n?(?:</parameter>|(?=<parameter=)|\\Z)` is LEAD `\\n` and CORE
    `(?:</parameter>|(?=<parameter=))`; a search of TAIL itself steps every char (it can match
    empty, so no literal begins its matches), and `re`'s tries the pattern at every char."""
    try:
        node, _ = parse_relaxed(tail)
    except (RegexError, RecursionError):
        return None
    items = node.items if isinstance(node, Concat) else (node,)
    lead = ""
    first = items[0] if items else None
    if (
        isinstance(first, Repeat)
        and (first.min, first.max, first.greedy) == (0, 1, True)
        and isinstance(first.item, Literal)
    ):
        lead, items = first.item.char, items[1:]
    if not items:
        return None
    branches: list[tuple[tuple[int, int], RegexNode | None]]
    if len(items) == 1 and isinstance(items[0], Group) and isinstance(items[0].item, Alternation):
        branches = [(b.span, b) for b in items[0].item.items]
    elif len(items) == 1 and isinstance(items[0], Alternation) and not lead:
        branches = [(b.span, b) for b in items[0].items]
    else:  # one branch: the items in sequence
        branches = [((items[0].span[0], items[-1].span[1]), None)]
    at_end = any(isinstance(b, Assertion) and b.kind == "end_z" for _, b in branches)
    core = [
        tail[start:end]
        for (start, end), b in branches
        if not (isinstance(b, Assertion) and b.kind == "end_z")
    ]
    if not core:
        return None
    return lead, "(?:" + "|".join(core) + ")", at_end


def _value_is_top_level(pattern: str, compiled: Any) -> bool:
    """Whether `(?P<value>.*?)` is one item of the pattern's top-level sequence (not inside a
    group, not one branch of an alternation), read with the standard library's parser."""
    try:
        try:
            from re import _parser  # type: ignore[attr-defined]
        except ImportError:  # Python 3.10
            import sre_parse as _parser

        parsed = _parser.parse(pattern, re.DOTALL)
    except Exception:  # noqa: BLE001 (`regex` syntax that `re` does not read)
        return False
    index = compiled.groupindex["value"]
    for op, av in parsed.data:
        if str(op) == "SUBPATTERN" and av[0] == index:
            body = list(av[3].data)
            if len(body) != 1 or str(body[0][0]) != "MIN_REPEAT":
                return False
            low, high, item = body[0][1]
            return (
                low == 0 and high == _parser.MAXREPEAT and [str(o) for o, _ in item.data] == ["ANY"]
            )
    return False
