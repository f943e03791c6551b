"""The runtime that generated parser modules stand on. It imports nothing from chatparse.compiler.

Generated modules import only the names below (and `chatparse.runtime.charclass` for the named
character classes); `check_abi` refuses a module compiled for another runtime ABI, the way
protobuf's generated code checks its runtime version.
"""

from __future__ import annotations

from . import content, transform
from .charclass import CharSet
from .chunk_ends import ChunkEnds
from .delimiter import Delimiter
from .delimiter_forms import (
    Dfa,
    LeadRunThenLiteral,
    LeadRunThenLiterals,
    Literal,
    Literals,
    LiteralThenRun,
    RegexFallback,
)
from .dfa_tables import Row
from .group_slice import GroupSlice
from .halved_tag import HalvedTagPattern
from .held import HeldTail
from .region_parser import Field, Region, RegionParser, Watch
from .spelled_tag import SpelledTagPattern, SpelledTagTail

# The one definition of the ABI number (the compiler reads it from here). Bump it whenever a
# name, constructor or function that generated code calls changes how it may be called;
# tests/test_versions.py records each ABI's signatures and fails on a change without a bump.
# 3: Delimiter(groups_pattern=, groups_aliases=).
# 4: the declared forms of delimiter_forms.py (Literal, Literals, LeadRunThenLiterals, LiteralThenRun,
#    Dfa, RegexFallback), content.text_value; Region without pairs; the fast-path hook
#    (RegionParser docstring).
# 5: the fast path per region (`fast_paths`), its tables on the watches (`Watch(whole=, held=)`)
#    and its held tail (`Region.held_tail`, runtime/held.py); `_idle` while the region is not open
#    yet, `_open_fast`.
# 6: `Region(after_start=)`, a region's form from buffer position 1 on (where `^` cannot match).
#    `RegexFallback(lead=, literals=)`: what every match of a look-ahead fallback begins with.
# 7: a generated `feed` calls `_fast` (never None); a held tail is `_hold(tail)`, handed back by
#    `_feed_held`; a chunk the region's test refuses goes to `_fast_declined`; `finalize` is the
#    runtime's (it feeds a held tail itself). `Region(match_ends=)`: the null sink's reporting chars.
# 8: `content.parse_python_call_list`; `Field(typed=, coerce=)`, how tool-call coercion treats the
#    field's value (5.25's TYPED_STRUCTURED_PARSERS, and none with a `value_parser_by`).
# 9: `RegionParser.parse(..., tokenizer=)`, token-id input (runtime/token_ids.py).
# 10: the fast-path hook is public (RegionParser's class docstring): `fast_feed`, `fast_feed_held`,
#    `fast_hold`, `fast_decline`, `fast_open`, `compact_body`, `region_body`, `region_opened`.
# 11: `RegexFallback(lead_loop=, looks_behind=, asserts_end=)`: what the compiler read off a fallback's
#    pattern (compiler/planning/fallback_plan.py); the runtime parses no pattern text.
# 12: `Dfa(stretches=, loops=)`: what a whole-text run crosses at once (compiler/planning/run_crossings.py);
#    the runtime reads no literal stretch or self-loop off the tables.
# 13: `Dfa(lookahead_ends=, before_lookahead=)`: look-aheads that end a pattern's alternatives run on
#    its DFA (compiler/automata/trailing_lookahead.py), which says where such a match ends.
# 14: `Dfa(anchored=)`: the `re` spelling a whole-text search matches with at a candidate start,
#    where one backtracking attempt is proved linear (compiler/planning/linear_backtracking.py).
# 15: a watch declares what a held tail joins over (`Watch(joins=)`) and the region's trail only
#    where it is kept: the runtime decides nothing about a held tail, and builds it with the region;
#    `Dfa(first_chars=None)` says a match may begin anywhere (no start row is read); no `pairs`.
# 16: `Region(literal_scan=)`: whole-text search finds the region's literal forms with one `re`
#    (runtime/whole.py `LiteralScan`; the compiler decides where that is sound).
# 17: `Dfa(follows=)`: the chars that may follow each heads literal in a match, which a whole-text
#    search's candidate finder looks ahead for (runtime/search.py `Heads`).
# 18: `Dfa(groups_parts=)` replaces `groups_pattern=` and `groups_ascii_only=`: the `re` spelling
#    that reads a match's groups, in pieces as `anchored=`, so a span that is not ASCII is read
#    by it too (spelled from the tables), never by a `regex` lazy loop.
# 19: `SpelledTagPattern`: an xml-inline tag_pattern with a look-ahead, read by `re` in the
#    spelling that means what `regex` reads (runtime/spelled_tag.py), where `regex` read it;
#    `HalvedTagPattern`: a tag `HEAD(?P<value>.*?)TAIL` found by its halves (runtime/halved_tag.py).
# 20: `Dfa(group_slice=GroupSlice(...))`: where a match's one named group lies, which `str` methods
#    cut out (runtime/group_slice.py; compiler/planning/group_slices.py proves it);
#    `content.parse_json_one_pair`: json whose `string_delims` is one plain pair, given it.
# 21: `SpelledTagTail` (runtime/spelled_tag.py): a spelled tag's TAIL found by its branches' search;
#    `HalvedTagPattern(tag, head, tail)` takes one as `tail` and a `SpelledTagPattern` as `tag`;
#    `SpelledTagPattern.groupdicts(text, pos=0)`.
# 22: the fast path's taken chunk goes through `fast_taken(event)` only when it makes the body one
#    piece or too many (`fast_open` and `compact_body` are gone); `fast_hold(tail, then=None)`
#    hands the next chunk to a region's `_after_run` function, which takes a held lead run back
#    with `fast_release(text, fast)`. `ChunkEnds(tail, keeps)` (runtime/chunk_ends.py): whether a
#    chunk may end in a char, a non-ASCII one answered by the installed tables.
RUNTIME_ABI = 22


def check_abi(abi: int) -> None:
    """Called at import by every generated module with the ABI it was compiled for."""
    if abi != RUNTIME_ABI:
        raise ImportError(
            f"this parser module was generated for chatparse runtime ABI {abi}, but the installed "
            f"runtime has ABI {RUNTIME_ABI}; rebuild it with compile-template"
        )


__all__ = [
    "CharSet",
    "Delimiter",
    "Dfa",
    "Field",
    "GroupSlice",
    "HalvedTagPattern",
    "ChunkEnds",
    "HeldTail",
    "LeadRunThenLiteral",
    "LeadRunThenLiterals",
    "Literal",
    "LiteralThenRun",
    "Literals",
    "RUNTIME_ABI",
    "Region",
    "RegionParser",
    "RegexFallback",
    "Row",
    "SpelledTagPattern",
    "SpelledTagTail",
    "Watch",
    "check_abi",
    "content",
    "transform",
]
