r"""Region automaton -> `ModuleModel`: every name, literal and comment of the generated module.

In: a `RegionAutomaton` and where the template came from. Out: a `ModuleModel`, plain data that the
jinja2 templates only loop over and print (betterproto's split). Guarantee: every string that came
from the template is still a Python *value* here (printed later by the `py` and `comment` filters,
never pasted as code), names are valid identifiers that cannot collide, and the order of
everything is fixed: fields in source order, states by number, classes by smallest code point.

Each delimiter is printed in the form compiler/planning/analysis.py found and checked (`Literal("<think>")`,
`LeadRunThenLiteral(SPACE, "<|im_end|>", ...)`, ...); only what has no such form is printed as a
`DeterminizedDfa`, whose states are *named by their shortest witness* (the shortest input that reaches them,
each class read as a printable member) and whose rows are keyed by chars and by named wide
classes. Why witnesses: a delimiter's state numbers (BFS order) shift for every state after the
first one an added alternative creates, and class numbers shift whenever the alphabet changes, so
a one-token edit rewrote the whole table; numbering new states after the old ones would need the
old module. A shortest witness is a property of the language: an added alternative leaves a
state's name put unless it opens a shorter way into that state, so the diff of an edit stays in
the edited delimiter, mostly in the rows the edit adds. A DFA with several start states (`^`,
`\b`) gives them all the empty witness, so it keeps its numbers.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from typing import Any

import regex

from ...runtime import RUNTIME_ABI
from ...runtime.content import plain_pair
from ...runtime.held import HELD_MAX
from ...runtime.message import BODY_PIECES_MAX
from ...runtime.search import shortest_literals
from ...runtime.transform import PLACEHOLDER
from .. import nested
from ..automata.determinize import DEAD, EOI, DeterminizedDfa, first_chars
from ..automata.nfa import nullable
from ..automata.region_automaton import (
    CompiledDelimiter,
    RegionAutomaton,
    RegionSpec,
    compile_delimiter,
    compile_dfa,
)
from ..frontend.regex_ast import Group, RegexNode, Repeat
from ..frontend.regex_parse import RegexError, parse_regex, parse_relaxed
from ..frontend.spec import DelimiterSpec
from ..frontend.symbolic_charclass import SymbolicCharSet, format_charset
from ..planning.analysis import (
    DFA,
    FALLBACK,
    LEAD_RUN_THEN_LITERALS,
    LITERAL,
    LITERAL_FORMS,
    LITERAL_THEN_RUN,
    LITERALS,
    check_runtime,
    head_follows,
)
from ..planning.analysis import eval_runtime as eval_charset
from ..planning.fallback_plan import asserts_the_end, consumed_heads, leading_loop, looks_behind
from ..planning.fast_path import (
    FastPathPlan,
    delimiter_analysis,
    held_tail_plan,
    plan_regions,
    relaxed_analysis,
    sink_match_ends,
    watch_held,
    watch_trail,
)
from ..planning.group_slices import GroupSliceModel, group_slice
from ..planning.linear_backtracking import (
    has_a_lazy_value_between_runs,
    linear_spelling,
    trim_runs_around_a_lazy_group,
)
from ..planning.literal_scan import literal_form, literal_scan
from ..planning.run_crossings import check_crossings, literal_stretches, self_loops
from ..planning.tag_halves import consume_final_lookaheads, split_tag, tail_search
from .re_source import NotForRe, re_parts, walk_paths

# The shape of the output: bump it whenever the emitted code changes form (not when only the
# values in it do); tests/test_versions.py records the shape of a fixed template under this
# number. 2: Row shorthand, groups_pattern, spelled-out transforms, deep literals in parts.
# 3: declared delimiter forms (Literal, ..., Dfa with named states), content.text_value, no pairs;
#    the ResponseParser's own fast path (`feed`, compiler/planning/fast_path.py).
# 4: the fast path's held tail (`HeldTail`, `_held`, `finalize`), event dicts built inline.
# 5: after-start forms (`X_AFTER_START` delimiters, `Region(after_start=)`) where a `^` makes
#    position 0 start differently; the fast path plans them.
#    Also a look-ahead fallback's heads (`RegexFallback(lead=, literals=)`), and fast paths planned
#    from its relaxed pattern.
# 6: the fast path's uncommon branches live in the runtime (`_fast_declined`, `_hold`); a region
#    whose held tail comes down to one trailing lead run holds it inline (`X_LEAD`); no `finalize`.
# 7: a region's stoppers are tested one `if` each, commented with the delimiters that start with
#    that char (`X_STOPS` lists them the same way), so editing one delimiter's first char changes
#    only its own lines.
# 8: a field says how tool-call coercion treats its value (`Field(typed=True)`,
#    `Field(coerce=False)`); python-call-list values call `content.parse_python_call_list`.
# 9: a generated `feed` hands a chunk that is no str to the general path, which names the type.
# 10: a generated `parse_response` takes `tokenizer=` (token ids in, transformers 5.25).
# 11: the delimiters comment names runtime/delimiter_forms.py (runtime modules renamed: no homonyms).
# 12: the fast path calls the runtime's public hook (`fast_decline`, `fast_hold`, `region_body`, ...).
# 13: a RegexFallback declares what its pattern holds (`lead_loop=`, `looks_behind=`, `asserts_end=`).
# 14: an xml-inline field's tag halves (`X_TAG_HEAD`, `X_TAG_TAIL`, `TAG_HALVES`) for the serving layer.
# 15: a look-ahead fallback's heads also from its look-aheads read as consuming; its comment says so.
# 16: a spelled-out transform reads the parsed value and the captures directly, and falls back to
#     `transform.lookup_placeholder` for the reference's error; a text field says `coerce=False`.
# 17: a `Dfa` declares what a whole-text run crosses at once: `stretches=` and `loops=`.
# 18: look-aheads that end a pattern's alternatives run on a `Dfa` (`lookahead_ends=`,
#     `before_lookahead=`, and `X_BEFORE_LOOKAHEAD` delimiters), no longer on `RegexFallback`.
# 19: a `Dfa` whose one backtracking attempt is proved linear declares its `re` spelling
#     (`anchored=`, compiler/planning/linear_backtracking.py) for whole-text searches.
# 20: a watch declares what a held tail joins over (`joins=`), and its `trail=` only where the
#     region keeps it; a `Dfa` that can match empty says `first_chars=None`.
# 21: a region that whole-text search covers with one `re` says `literal_scan=True`.
# 22: a `TAG_HALVES` entry names, fourth, the chars a TAIL that matches empty only at the end of
#     the text begins its other matches with (`\n?(?:</parameter>|\Z)`: "\n" and "<"), or None.
# 23: `feed` takes a plain chunk of a text region (at most `_FEED_INLINE_MAX`) itself, without
#     calling the region's fast path function.
# 24: a `Dfa` declares the chars that may follow each of its heads literals in a match (`follows=`).
# 25: `groups_parts=` (pieces and CharSets, as `anchored=`) for `groups_pattern=` and
#     `groups_ascii_only=`; a lazy value between two runs is spelled so that `re` reads it in
#     linear time (`trim_runs_around_a_lazy_group`).
# 26: an xml-inline tag_pattern with a look-ahead is a `SpelledTagPattern` (`re` in the spelling
#     that reads it as `regex` does), its value's `tag_finder`, where `regex` read it; one that its
#     halves find faster than its Dfa is a `HalvedTagPattern` (`X_TAG_FINDER`).
# 27: a `Dfa` whose one named group lies between a head literal and a tail declares where
#     (`group_slice=GroupSlice(...)`, compiler/planning/group_slices.py); a json value whose
#     `string_delims` is one plain pair is read by `content.parse_json_one_pair` with that pair.
# 28: a `SpelledTagPattern` whose HEAD is searched as glm's is and whose TAIL is an optional char
#     then branches (`\n?(?:</parameter>|(?=<parameter=)|\Z)`) is found by its halves too: TAIL by
#     a `SpelledTagTail` (`X_TAG_TAIL_FINDER`, with its branches' search `X_TAG_TAIL_CORE`).
# 29: the fast path of a region that holds a lead run has an `_after_run` function, which takes
#     the next chunk (in `feed` itself, which holds a trailing run as the region's function
#     does); a taken chunk calls `fast_taken` only when it makes the body one piece or too many; `feed` tests the chunk's type (no try); `feed` also
#     takes the plain chunks of every region (text regions first), not only of two text regions;
#     a region's `X_ENDS` (`ChunkEnds`) says whether a chunk may end in a char, a non-ASCII one
#     answered by the installed tables (such a chunk went to the general path).
CODEGEN_FORMAT = 29


@dataclass(frozen=True)
class StateModel:
    """One state of a `Dfa` form: its name (the shortest input reaching it, or its number when
    several start states make the inputs ambiguous), row and match report, as Python values."""

    name: object
    transitions: tuple[tuple[str, object], ...]  # (key, next state name), in class order
    end: object  # None | int | tuple of (key, k): the `ends` entry
    # When most classes share one target: written as Row(exceptions, otherwise=target), where an
    # exception to DEAD has the target None.
    otherwise: object = None


@dataclass(frozen=True)
class DelimiterModel:
    name: str  # e.g. TOOL_CALLS_OPEN
    source: str  # e.g. 'open_pattern /\s*<tool_call>/'
    pattern: str
    kind: str  # an analysis kind: literal, literals, lead_run_then_literals, ..., dfa, fallback
    fallback_reason: str | None
    has_groups: bool
    may_grow: bool  # a literal form the reference's edge rule holds (it came from a pattern)
    literals: tuple[str, ...] = ()
    lead: str | None = None  # Python expressions building runtime CharSets
    trail: str | None = None
    first_chars: str | None = None
    heads_lead: str | None = None
    heads_literals: tuple[str, ...] | None = None
    # dfa: (literal, expression of the chars that may follow it in a match) for the heads
    # literals a match cannot end with (`analysis.head_follows`)
    heads_follows: tuple[tuple[str, str], ...] = ()
    classes: tuple[tuple[str, str], ...] = ()  # dfa: (name, expression) of each wide class
    states: tuple[StateModel, ...] = ()
    starts: tuple | None = None  # dfa: start state names, when they differ by context
    # dfa: what a whole-text run crosses at once (compiler/planning/run_crossings.py): (state name,
    # ((literal, name of the state after it), ...)) per state with literal stretches, and (state
    # name, expression of the chars it stays in) per state with a self-loop
    stretches: tuple[tuple[object, tuple[tuple[str, object], ...]], ...] = ()
    loops: tuple[tuple[object, str], ...] = ()
    # the pattern for one `re` match that reads the named groups, where there is no `anchored`
    # spelling: pieces as `anchored`'s
    groups_parts: tuple[tuple[str, str], ...] = ()
    groups_aliases: dict = field(default_factory=dict)  # renamed group -> its name in `pattern`
    # where the one named group lies in a match (compiler/planning/group_slices.py), or None
    group_slice: GroupSliceModel | None = None
    charsets: tuple = ()  # every compiler SymbolicCharSet it prints (for the imports)
    after_start_of: str | None = None  # the delimiter this is the after-start form of
    waits: str | None = None  # a look-ahead fallback: the chars its look-ahead waits over
    # A fallback's pattern as compiler/planning/fallback_plan.py reads it (the runtime parses no pattern).
    lead_loop: tuple[str, str | None, bool] | None = None
    looks_behind: bool = False
    asserts_end: bool = False
    # dfa of trailing look-aheads (compiler/automata/trailing_lookahead.py): (state name, alternative) per
    # state whose report is a look-ahead alternative's, and per alternative the name of the
    # delimiter of its text before the look-ahead (None: that text matches empty only)
    lookahead_ends: tuple[tuple[object, int], ...] = ()
    before_lookahead: tuple[str | None, ...] = ()
    # dfa: the pattern for one `re` match at a candidate start, proved to backtrack in linear
    # time (compiler/planning/linear_backtracking.py): source pieces, and the Python expression of each
    # class that the installed `regex`'s tables decide (the runtime spells it); empty: none
    anchored: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ValueModel:
    """How one field's body becomes its value: content parser, then transform."""

    function: str  # e.g. tool_calls_value
    field: str
    summary: str  # one line quoting the template fragment it implements
    content: str  # the content parser's name, e.g. "json"
    parser: str  # runtime function, e.g. parse_json
    args_name: str  # module constant holding content_args
    args: object
    transform: object
    transform_each: bool
    tag_finder: str | None  # delimiter constant for xml-inline's tag_pattern, when compiled
    filled: FilledNode | None = (
        None  # the transform, spelled out (when it nests no deeper than a literal may)
    )
    args_error: str | None = None  # content_args is not a dict: the AttributeError's message
    # json whose `string_delims` is one plain pair: that pair, which the module passes to
    # `content.parse_json_one_pair` (the runtime does not read it from the args per value)
    string_pair: tuple[str, str] | None = None
    # content_args or a transform nested deeper than one literal: the constant is read from
    # TEMPLATE at this key path rather than printed twice. Such a transform is walked by the
    # runtime's `apply_transform`, as by the reference's `_apply_transform` (which recurses per
    # level there and here alike).
    args_path: tuple | None = None
    transform_constant: str | None = None
    transform_path: tuple | None = None


@dataclass(frozen=True)
class FilledNode:
    """One node of a transform, resolved at compile time so the module builds the value directly.

    kind "dict": `items` holds (key, node) pairs; "list": `items` holds nodes; "lookup": `value`
    is a placeholder path ("content.name") looked up in the scope at parse time; "literal":
    `value` is inserted as it is. Keys and values stay Python values here (printed with `py`).
    """

    kind: str
    value: object = None
    items: tuple = ()


def filled_transform(transform: object) -> FilledNode:
    """The transform as the runtime's `apply_transform` would fill it, node by node."""
    if isinstance(transform, dict):
        return FilledNode(
            "dict", items=tuple((key, filled_transform(item)) for key, item in transform.items())
        )
    if isinstance(transform, list):
        return FilledNode("list", items=tuple(filled_transform(item) for item in transform))
    if isinstance(transform, str):
        placeholder = regex.fullmatch(PLACEHOLDER, transform)
        if placeholder is not None:
            return FilledNode("lookup", value=placeholder.group(1))
    return FilledNode("literal", value=transform)


@dataclass(frozen=True)
class FieldModel:
    name: str  # the field name (a value, printed with py)
    constant: str  # e.g. TOOL_CALLS_FIELD
    open: str | None
    close: str | None
    repeats: bool
    join: str | None
    optional: bool
    dirty: bool
    value: str
    typed: bool = False  # coercion keeps string-typed parameters (TYPED_STRUCTURED_PARSERS)
    coerce: bool | str = True  # FieldSpec.coerce


@dataclass(frozen=True)
class WatchModel:
    kind: str
    field_constant: str
    delimiter: str
    whole: tuple[
        str, ...
    ] = ()  # the chunks the fast path commits whole (compiler/planning/fast_path.py)
    held: str | None = None  # its lead chars when the fast path may hold its runs
    joins: str | None = None  # the lead chars a held tail and a whole chunk of it join over
    trail: str | None = None  # a region's one literal then a run: the run's ASCII chars


@dataclass(frozen=True)
class RegionModel:
    field_constant: str | None
    field_name: str | None
    watch: tuple[WatchModel, ...]
    after_start: RegionModel | None = None  # the region from buffer position 1 on (`^` dead)
    match_ends: str | None = None  # the null sink's chars a match can be reported on
    literal_scan: bool = False  # whole-text search finds its literal forms together


@dataclass(frozen=True)
class FastPathModel:
    """One region's branch of the generated `feed` (compiler/planning/fast_path.py decides it)."""

    field_name: str | None
    comment: tuple[str, ...]  # the plan, one line each (also for a region without a fast path)
    chunk_constant: str | None = None  # e.g. CONTENT_CHUNK; None: no fast path here
    dirty: bool = False  # its region_chunk events' "dirty"
    stoppers: tuple[str, ...] = ()  # `ch not in text` for each (the chars a chunk must not hold)
    stopper_owners: tuple[str, ...] = ()  # per stopper, the delimiters that can start with it
    stops_constant: str | None = None  # e.g. CONTENT_STOPS: the stoppers, one line each
    stopper_set: str | None = None  # ... or one frozenset of them, when there are many
    tail_lead: str = ""  # ASCII chars a chunk must not end in
    tail_constant: str | None = None  # e.g. CONTENT_TAIL: the ASCII chars a chunk may end in
    ends_constant: str | None = None  # e.g. CONTENT_ENDS: `ChunkEnds` of TAIL and `tail_keeps`
    tail_keeps: str | None = None  # the runtime expression of the plan's `tail_keeps`
    lead_run: str = ""  # the trailing run a chunk holds, when the held tail comes down to one
    lead_constant: str | None = None  # e.g. CONTENT_LEAD: `lead_run` as a constant
    function: str | None = None  # e.g. content_feed: the region's fast path
    # e.g. content_after_run: the region's fast path while it holds a run of `lead_run` chars
    # (with `lead_constant` only)
    after_run_function: str | None = None
    # Whether `feed` takes this region's plain chunks itself (`_feed_inline`).
    inline_in_feed: bool = False


@dataclass(frozen=True)
class ModuleModel:
    title: str
    source_path: str | None
    template_sha256: str
    rebuild: str | None
    template: dict  # may hold `nested.Ref`s to `template_parts`
    diagram: tuple[str, ...]
    warnings: tuple[str, ...]
    start_anchor: DelimiterModel
    delimiters: tuple[DelimiterModel, ...]
    values: tuple[ValueModel, ...]
    fields: tuple[FieldModel, ...]
    home: RegionModel
    regions: tuple[RegionModel, ...]
    runtime_imports: tuple[str, ...]
    charclass_imports: tuple[str, ...]
    template_parts: (
        tuple
    ) = ()  # (part name, literal), innermost first, for a template nested too deep
    codegen_format: int = CODEGEN_FORMAT
    runtime_abi: int = RUNTIME_ABI
    uses_transform: bool = field(default=False)
    fast_paths: tuple[FastPathModel, ...] = ()  # home region first, then the explicit ones
    # xml-inline fields whose tag splits for streaming (compiler/planning/tag_halves.py): (field name,
    # HEAD's constant, TAIL's constant, TAIL as written when its DFA consumes look-aheads, the
    # chars TAIL's matches begin with when it matches empty only at the end of the text, else None)
    tag_halves: tuple[tuple[str, str, str, str | None, str | None], ...] = ()
    spelled_tags: tuple[SpelledTagModel, ...] = ()
    spelled_tails: tuple[SpelledTailModel, ...] = ()
    halved_tags: tuple[HalvedTagModel, ...] = ()
    fast_body_pieces: int = BODY_PIECES_MAX  # the fast path compacts the body past this
    held_max: int = HELD_MAX  # the longest tail the fast path holds

    @property
    def has_fast_path(self) -> bool:
        return any(p.chunk_constant is not None for p in self.fast_paths)

    @property
    def feed_inlined(self) -> tuple[FastPathModel, ...]:
        """The regions whose plain chunks `feed` takes itself, in the order it tests for them:
        text regions first (`_feed_inline`)."""
        return tuple(
            sorted((p for p in self.fast_paths if p.inline_in_feed), key=lambda p: p.dirty)
        )


@dataclass(frozen=True)
class SpelledTagModel:
    """An xml-inline tag_pattern that no DFA runs (a look-ahead), read by `re` in a spelling that
    means what `regex` means (`runtime/spelled_tag.py`)."""

    name: str  # its module constant, e.g. TOOL_CALLS_TAG
    pattern: str
    parts: tuple[tuple[str, str], ...]  # ("source", piece) or ("class", its expression)
    aliases: dict[str, str]
    charsets: tuple = ()  # the SymbolicCharSets it prints (for the imports)


@dataclass(frozen=True)
class SpelledTailModel:
    """A spelled tag's TAIL, an optional char then branches (`runtime/spelled_tag.py`'s
    `SpelledTagTail`, planned by `tag_halves.tail_search`): where it first matches is found by
    a search of its branches but `\\Z` (`core`), and its match read by `re` in its spelling."""

    name: str  # its module constant, e.g. TOOL_CALLS_TAG_TAIL_FINDER
    pattern: str  # TAIL as written
    parts: tuple[tuple[str, str], ...]  # ("source", piece) or ("class", its expression)
    core: str  # the delimiter constant of its branches but `\Z`
    lead: str  # the optional char before them, or ""
    at_end: bool  # whether `\Z` is a branch
    charsets: tuple = ()  # the SymbolicCharSets it prints (for the imports)


@dataclass(frozen=True)
class HalvedTagModel:
    """An xml-inline tag_pattern `HEAD(?P<value>.*?)TAIL` found by HEAD's search and TAIL's
    (`runtime/halved_tag.py`): a literal TAIL's `str.find`, where the whole `Dfa` is not proved
    linear for one `re` attempt but HEAD's is; or, for a tag with a look-ahead (a
    `SpelledTagPattern`), a `SpelledTagTail`'s search."""

    name: str  # its module constant, e.g. TOOL_CALLS_TAG_FINDER
    tag: str  # the whole tag's Dfa or SpelledTagPattern constant
    head: str  # HEAD's Dfa constant
    tail: str  # TAIL's literal, or its SpelledTagTail constant
    tail_literal: bool = True


PARSER_FUNCTIONS = {
    "text": "parse_text",
    "int": "parse_int",
    "float": "parse_float",
    "bool": "parse_bool",
    "json": "parse_json",
    "xml-inline": "parse_xml_inline",
    "kv-lines": "parse_kv_lines",
    "python-call-list": "parse_python_call_list",
}


def template_sha256(template: dict) -> str:
    """sha256 of the compact JSON of the template, in source key order (ASCII-escaped, so lone
    surrogates hash too)."""
    text = nested.dumps(template, separators=(",", ":"), ensure_ascii=True, default=repr)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def py_identifiers(names: list[str]) -> dict[str, str]:
    """Field name -> an upper-case identifier stem; collisions resolved in sorted name order."""
    taken: set[str] = set()
    result: dict[str, str] = {}
    for name in sorted(names):
        stem = re.sub(r"[^0-9A-Za-z]+", "_", name).strip("_").upper() or "FIELD"
        if stem[0].isdigit():
            stem = "F_" + stem
        candidate, counter = stem, 2
        while candidate in taken:
            candidate, counter = f"{stem}_{counter}", counter + 1
        taken.add(candidate)
        result[name] = candidate
    return result


def build_module(
    automaton: RegionAutomaton, *, source_path: str | None = None, rebuild: str | None = None
) -> ModuleModel:
    spec = automaton.spec
    stems = py_identifiers([f.name for f in spec.fields])
    delimiter_models: list[DelimiterModel] = []
    names: dict[tuple[str, str], str] = {}
    # The after-start forms the regions watch (`RegionSpec.after_start`), by field and role.
    after_start_forms = {
        (w.field, w.kind): w.delimiter
        for region in (automaton.home, *automaton.regions)
        if region.after_start is not None
        for w in region.after_start.watch
        if w.delimiter.after_start
    }
    for f in spec.fields:
        for role in ("open", "close"):
            compiled = automaton.delimiters.get((f.name, role))
            if compiled is not None:
                name = f"{stems[f.name]}_{role.upper()}"
                names[f.name, role] = name
                if compiled.lookahead is not None:
                    delimiter_models += _lookahead_models(name, compiled)
                else:
                    delimiter_models.append(_delimiter_model(name, compiled))
                later = after_start_forms.get((f.name, role))
                if later is not None:
                    delimiter_models.append(
                        replace(_delimiter_model(f"{name}_AFTER_START", later), after_start_of=name)
                    )

    values = []
    fields = []
    tag_halves: list[tuple[str, str, str, str | None, str | None]] = []
    tail_starts: list[Any] = []  # the SymbolicCharSets TAG_HALVES prints (for the imports)
    spelled_tags: list[SpelledTagModel] = []
    spelled_tails: list[SpelledTailModel] = []
    halved_tags: list[HalvedTagModel] = []
    for f in spec.fields:
        stem = stems[f.name]
        tag = _tag_pattern_delimiter(f)
        deep_args = nested.height(f.content_args) > nested.LITERAL_MAX_DEPTH
        spell_out = (
            f.transform is not None and nested.height(f.transform) <= nested.LITERAL_MAX_DEPTH
        )
        deep_transform = f.transform is not None and not spell_out
        tag_model = _delimiter_model(f"{stem}_TAG", tag) if tag is not None else None
        if tag_model is not None:
            delimiter_models.append(tag_model)
        spelled = _spelled_tag(f, f"{stem}_TAG") if tag is None else None
        if spelled is not None:
            spelled_tags.append(spelled)
        tag_finder = f"{stem}_TAG" if tag is not None or spelled is not None else None
        halves = _tag_halves(f, stem)
        if halves is not None:
            head_model, tail_model, rewind, starts = halves
            delimiter_models += [head_model, tail_model]
            if tag_model is not None and _finds_by_halves(
                tag_model, head_model, tail_model, rewind
            ):
                tag_finder = f"{stem}_TAG_FINDER"
                halved_tags.append(
                    HalvedTagModel(
                        tag_finder, tag_model.name, head_model.name, tail_model.literals[0]
                    )
                )
            elif spelled is not None and _searched_alone(head_model):
                written = rewind if rewind is not None else tail_model.pattern
                found = _spelled_tail(f, stem, written, tail_model)
                if found is not None:
                    core_model, tail_finder = found
                    if core_model is not None:
                        delimiter_models.append(core_model)
                    spelled_tails.append(tail_finder)
                    tag_finder = f"{stem}_TAG_FINDER"
                    halved_tags.append(
                        HalvedTagModel(
                            tag_finder, spelled.name, head_model.name, tail_finder.name, False
                        )
                    )
            tag_halves.append(
                (
                    f.name,
                    head_model.name,
                    tail_model.name,
                    rewind,
                    None if starts is None else repr(starts),
                )
            )
            if starts is not None:
                tail_starts.append(starts)
        string_pair = (
            plain_pair(f.content_args.get("string_delims", []))
            if f.content == "json" and type(f.content_args) is dict and not deep_args
            else None
        )
        value = ValueModel(
            function=f"{stem.lower()}_value",
            field=f.name,
            summary=_value_summary(f),
            content=f.content,
            parser="parse_json_one_pair" if string_pair else PARSER_FUNCTIONS[f.content],
            string_pair=string_pair,
            args_name=f"{stem}_ARGS",
            # python-call-list has no options: its reader is called with {} whatever the template says
            args=f.content_args if f.content != "python-call-list" else {},
            transform=f.transform,
            transform_each=f.transform_each,
            tag_finder=tag_finder,
            filled=filled_transform(f.transform) if spell_out else None,
            args_error=f.content_args_error,
            args_path=("fields", f.name, "content_args") if deep_args else None,
            transform_constant=f"{stem}_TRANSFORM" if deep_transform else None,
            transform_path=("fields", f.name, "transform") if deep_transform else None,
        )
        default = (
            f.content == "text"
            and f.content_args == {}
            and f.transform is None
            and f.content_args_error is None
            and tag is None
        )
        if not default:
            values.append(value)
        fields.append(
            FieldModel(
                name=f.name,
                constant=f"{stem}_FIELD",
                open=names.get((f.name, "open")),
                close=names.get((f.name, "close")),
                repeats=bool(f.repeats),
                join=f.join,
                optional=bool(f.optional),
                dirty=f.dirty,
                value="content.text_value" if default else value.function,
                typed=f.typed,
                # A text value is a str, which tool-call coercion returns as it is.
                coerce=False if default else f.coerce,
            )
        )

    plans = plan_regions(automaton.home, automaton.regions)
    plan_of = {plan.field: plan for plan in plans}

    by_name = {model.name: model for model in delimiter_models}

    def held_models(
        region: RegionSpec, constants: list[str]
    ) -> tuple[list[str | None], list[str | None], str | None]:
        """Per watch, its lead chars when its runs are lead chars then a proper prefix of a
        literal (`watch_held`; the region has a held tail when every watch has them) and what a
        held tail joins, and the region's trail. Each watch's are decided from the others that
        have lead chars, whether or not the region has a held tail, so that an edit of one
        delimiter leaves the others' lines be."""
        leads = [watch_held(w.delimiter)[0] for w in region.watch]
        joins: list[str | None] = [None] * len(leads)
        held = [index for index, lead in enumerate(leads) if lead is not None]
        if not held:
            return leads, joins, None
        models = [by_name[constants[index]] for index in held]
        runs = tuple(
            (leads[index] or "", shortest_literals(m.heads_literals or m.literals))
            for index, m in zip(held, models, strict=True)
        )
        exact = tuple(m.kind in LITERAL_FORMS for m in models)
        first = watch_trail(region.watch[held[0]].delimiter)
        decided, trail = held_tail_plan(runs, exact, first)
        for index, joined in zip(held, decided, strict=True):
            joins[index] = joined
        return leads, joins, trail if len(leads) == 1 else None

    def region_model(region: RegionSpec) -> RegionModel:
        # The fast path runs in a region's after-start form when it has one (fast_path.py):
        # only that form gets the plan's whole chunks.
        after = region_model(region.after_start) if region.after_start is not None else None
        plan = plan_of[region.field] if after is None else None
        whole: list[list[str]] = [[] for _ in region.watch]
        for literal, index in plan.whole if plan is not None else ():
            whole[index].append(literal)
        constants = [
            names[w.field, w.kind] + ("_AFTER_START" if w.delimiter.after_start else "")
            for w in region.watch
        ]
        held, joins, trail = held_models(region, constants)
        return RegionModel(
            field_constant=f"{stems[region.field]}_FIELD" if region.field is not None else None,
            field_name=region.field,
            watch=tuple(
                WatchModel(
                    w.kind,
                    f"{stems[w.field]}_FIELD",
                    constants[index],
                    whole=tuple(whole[index]),
                    held=held[index],
                    joins=joins[index],
                    trail=trail,
                )
                for index, w in enumerate(region.watch)
            ),
            after_start=after,
            match_ends=sink_match_ends(region),
            literal_scan=literal_scan(region),
        )

    start_anchor = _delimiter_model("START_ANCHOR", automaton.start_anchor)
    all_delimiters = (start_anchor, *delimiter_models)
    charsets = [c for d in all_delimiters for c in d.charsets] + tail_starts
    charsets += [c for t in spelled_tags for c in t.charsets]
    charsets += [c for tail in spelled_tails for c in tail.charsets]
    # The chars a fast path's chunk may not end in (`X_ENDS`), where a named class decides.
    charsets += [plan.tail_keeps for plan in plans if plan.tail_keeps is not None]
    home = region_model(automaton.home)
    regions = tuple(region_model(r) for r in automaton.regions)
    charclass_imports = tuple(
        sorted({name for c in charsets for name in c.required_names()} - {"CharSet"})
    )
    forms = {
        LITERAL: "Literal",
        LITERALS: "Literals",
        LITERAL_THEN_RUN: "LiteralThenRun",
        DFA: "Dfa",
        FALLBACK: "RegexFallback",
    }
    runtime_imports = ["Field", "Region", "RegionParser", "Watch", "check_abi", "content"]
    for d in all_delimiters:
        if d.kind == LEAD_RUN_THEN_LITERALS:
            runtime_imports.append(_lead_form(d))
        else:
            runtime_imports.append(forms[d.kind])
    if any("CharSet" in c.required_names() for c in charsets):
        runtime_imports.append("CharSet")
    if any(state.otherwise is not None for d in all_delimiters for state in d.states):
        runtime_imports.append("Row")
    if any(v.transform is not None for v in values):
        runtime_imports.append("transform")
    if spelled_tags:
        runtime_imports.append("SpelledTagPattern")
    if spelled_tails:
        runtime_imports.append("SpelledTagTail")
    if halved_tags:
        runtime_imports.append("HalvedTagPattern")
    if any(d.group_slice is not None for d in all_delimiters):
        runtime_imports.append("GroupSlice")

    def watched_names(region: RegionSpec) -> tuple[str, ...]:
        planned = region.after_start or region  # the form fast_path.plan_region plans
        return tuple(
            names[w.field, w.kind] + ("_AFTER_START" if w.delimiter.after_start else "")
            for w in planned.watch
        )

    fast_paths = tuple(
        _fast_path_model(
            plan,
            stems,
            # `is not None`: a field may be named "" (the null sink's plan has no field)
            spec.field(plan.field).dirty if plan.field is not None else False,
            watched_names(region),
        )
        for plan, region in zip(plans, (automaton.home, *automaton.regions), strict=True)
    )
    fast_paths = _feed_inline(fast_paths)
    if any(p.ends_constant is not None for p in fast_paths):
        runtime_imports.append("ChunkEnds")
    title = (
        source_path.rsplit("/", 1)[-1].removesuffix(".json")
        if source_path
        else "an in-memory template"
    )
    template_parts, template = nested.split_parts("TEMPLATE", spec.source)
    return ModuleModel(
        title=title,
        source_path=source_path,
        template_sha256=template_sha256(spec.source),
        rebuild=rebuild,
        template=template,
        template_parts=template_parts,
        diagram=tuple(_diagram(automaton)),
        warnings=automaton.warnings,
        start_anchor=start_anchor,
        delimiters=tuple(delimiter_models),
        values=tuple(values),
        fields=tuple(fields),
        home=home,
        regions=regions,
        runtime_imports=tuple(sorted(set(runtime_imports), key=lambda n: (n[0].islower(), n))),
        charclass_imports=charclass_imports,
        fast_paths=fast_paths,
        tag_halves=tuple(tag_halves),
        spelled_tags=tuple(spelled_tags),
        spelled_tails=tuple(spelled_tails),
        halved_tags=tuple(halved_tags),
    )


# More stoppers than this are tested with one frozenset rather than one `in` each.
_STOPPERS_INLINE_MAX = 3


def _fast_path_model(
    plan: FastPathPlan, stems: dict[str, str], dirty: bool, watched: tuple[str, ...]
) -> FastPathModel:
    """`watched`: the constants of the delimiters the planned region watches, in its order."""
    comment = tuple(plan.dump().splitlines())
    if plan.refused is not None or plan.field is None:
        return FastPathModel(plan.field, comment)
    stem = stems[plan.field]
    inline = len(plan.stoppers) <= _STOPPERS_INLINE_MAX
    return FastPathModel(
        plan.field,
        comment,
        chunk_constant=f"{stem}_CHUNK",
        dirty=dirty,
        stoppers=tuple(plan.stoppers),
        stopper_owners=tuple(
            ", ".join(watched[i] for i in watches) for watches in plan.stopper_watches
        ),
        stops_constant=f"{stem}_STOPS",
        stopper_set=None if inline else f"{stem}_STOPPERS",
        tail_lead=plan.tail_lead,
        tail_constant=f"{stem}_TAIL" if plan.tail_lead or plan.tail_ascii else None,
        ends_constant=f"{stem}_ENDS" if plan.tail_lead or plan.tail_ascii else None,
        tail_keeps=repr(plan.tail_keeps) if plan.tail_keeps is not None else None,
        lead_run=plan.lead_run,
        lead_constant=f"{stem}_LEAD" if plan.lead_run else None,
        function=f"{stem.lower()}_feed",
        after_run_function=f"{stem.lower()}_after_run" if plan.lead_run else None,
    )


def _feed_inline(fast_paths: tuple[FastPathModel, ...]) -> tuple[FastPathModel, ...]:
    """The fast paths, each region that has one marked for `feed` to take its plain chunks
    without a call. Each region's test costs the chunks of the regions tested after it one `is`
    test (some 10 ns) and saves its own a call (some 30-70 ns); `feed` tests text regions first
    (`ModuleModel.feed_inlined`), where long outputs' chunks go. Every region, not the first few:
    which regions are inlined then depends on no other field, so adding a field touches only its
    own lines of the module (tests/test_module_diff.py)."""
    return tuple(
        replace(p, inline_in_feed=True) if p.chunk_constant is not None else p for p in fast_paths
    )


def _tag_pattern_delimiter(f) -> CompiledDelimiter | None:
    """xml-inline's `tag_pattern` comes from the template too, so it gets the same linear-time
    machinery as the delimiters. Left to the runtime's `regex` path when it is missing, invalid
    (the reference's error then surfaces at parse time, as there) or not DFA-expressible."""
    args = f.content_args
    if (
        f.content != "xml-inline"
        or not isinstance(args, dict)
        or not isinstance(args.get("tag_pattern"), str)
    ):
        return None
    pattern = args["tag_pattern"]
    try:
        group_names = tuple(sorted(regex.compile(pattern, regex.DOTALL).groupindex))
    except (regex.error, ValueError, TypeError, RecursionError):
        # (RecursionError: `regex` parses groups nested some 400 deep by recursion, and so
        # fails as the reference's own `regex` does when it reads the tag at parse time.)
        return None
    compiled = compile_delimiter(_tag_spec(f, pattern, group_names))
    return compiled if compiled.dfa is not None else None


def _tag_spec(f, pattern: str, group_names: tuple[str, ...]) -> DelimiterSpec:
    """A field's xml-inline tag_pattern (or a part of it) as a delimiter to compile."""
    return DelimiterSpec(
        role="tag_pattern",
        key="tag_pattern",
        field=f.name,
        literals=None,
        pattern=pattern,
        can_extend=False,
        group_names=group_names,
    )


def _tag_halves(f, stem: str) -> tuple[DelimiterModel, DelimiterModel, str | None, Any] | None:
    """The DFAs of an xml-inline tag's HEAD and TAIL (compiler/planning/tag_halves.py), with TAIL as
    written when its DFA consumes look-aheads, and `_tail_starts`; None when the tag does not
    split, a half is not DFA-expressible, or both halves match the empty string (finditer's
    empty-match rules)."""
    args = f.content_args
    if f.content != "xml-inline" or not isinstance(args, dict):
        return None
    pattern = args.get("tag_pattern")
    split = split_tag(pattern) if isinstance(pattern, str) else None
    if split is None:
        return None
    head, head_groups, tail, rewind = split
    models = []
    starts = None
    for name, half, groups in (("HEAD", head, head_groups), ("TAIL", tail, ())):
        try:
            compiled = compile_delimiter(_tag_spec(f, half, groups))
        except ValueError:  # over a size limit: such calls go out whole
            return None
        if compiled.dfa is None:
            return None
        models.append(_delimiter_model(f"{stem}_TAG_{name}", compiled))
        if name == "TAIL":
            starts = _tail_starts(compiled.dfa)
    if all(build_runtime(m).match_at("", 0, final=True)[0] == "match" for m in models):
        return None
    return models[0], models[1], rewind, starts


def _finds_by_halves(
    tag: DelimiterModel, head: DelimiterModel, tail: DelimiterModel, rewind: str | None
) -> bool:
    """Whether the tag's matches are found by its halves (`runtime/halved_tag.py`): its own `Dfa`
    has no `re` spelling proved linear (one that has is as fast already), HEAD is searched alone
    (`_searched_alone`), and TAIL is one literal as written (no look-ahead made to consume)."""
    return (
        tag.kind == DFA
        and not tag.anchored
        and tag.first_chars is not None
        and _searched_alone(head)
        and tail.kind == LITERAL
        and rewind is None
    )


def _searched_alone(head: DelimiterModel) -> bool:
    """Whether a tag's HEAD is searched by `HalvedTagPattern`: it has an `re` spelling proved
    linear for one attempt (which reads its groups too), and first chars (it never matches
    empty: a tag match is never empty, as finditer's empty-match rules would need)."""
    return (
        head.kind == DFA
        and bool(head.anchored)
        and head.first_chars is not None
        and not head.lookahead_ends
    )


# A TAIL's branches (`X_TAG_TAIL_CORE`) are searched in C where their matches begin with a few plain
# chars; a TAIL whose branches begin with more is left to the whole tag's `re` reading.
_TAIL_CORE_STARTS_MAX = 4


def _spelled_tail(
    f, stem: str, tail: str, tail_model: DelimiterModel
) -> tuple[DelimiterModel | None, SpelledTailModel] | None:
    """The search of a spelled tag's TAIL (`SpelledTagTail`), as written in `tail`: the
    delimiter of its branches but `\\Z` (CORE, look-aheads that end it made to consume), which
    never matches empty and whose matches never begin with the optional char before them
    (`tag_halves.tail_search` says why the first TAIL is then found from CORE's first match), and
    TAIL's `re` spelling, which reads the match as `regex` does. None where any of it fails.
    CORE's delimiter is None where it is TAIL's own DFA (`tail_model`: no LEAD, no `\\Z`)."""
    split = tail_search(tail)
    if split is None:
        return None
    lead, core, at_end = split
    try:
        _, dropped = parse_relaxed(core)
        searched = consume_final_lookaheads(core) if dropped else core
        if searched is None:
            return None
        compiled = compile_delimiter(_tag_spec(f, searched, ()))
    except (RegexError, ValueError, RecursionError):
        return None
    dfa = compiled.dfa
    if dfa is None or dfa.nullable_starts:
        return None
    starts = first_chars(dfa)
    keys = _class_keys(starts) if starts is not None else None
    if keys is None or len(keys) > _TAIL_CORE_STARTS_MAX:
        return None
    if lead and (not lead.isascii() or lead in keys):
        return None
    try:
        tail_node, tail_dropped = parse_relaxed(tail)
    except (RegexError, RecursionError):
        return None
    spelling = _re_spelling(tail, tail_node, tail_dropped)
    if spelling is None or spelling[1]:
        return None  # (TAIL has no named group, so nothing to rename)
    if searched == tail_model.pattern:
        core_model, core_name = None, tail_model.name
    else:
        core_model = _delimiter_model(f"{stem}_TAG_TAIL_CORE", compiled)
        core_name = core_model.name
    parts = spelling[0]
    return core_model, SpelledTailModel(
        name=f"{stem}_TAG_TAIL_FINDER",
        pattern=tail,
        parts=_spelled_parts(parts),
        core=core_name,
        lead=lead,
        at_end=at_end,
        charsets=tuple(part for part in parts if not isinstance(part, str)),
    )


def _tail_starts(dfa: DeterminizedDfa) -> Any:
    """For a TAIL that matches empty only at the end of the text (`\\n?(?:</parameter>|\\Z)`):
    the chars its other matches begin with. Its `Dfa` declares no first chars (a match can be
    empty), but a value's text before any of these chars ends no tag, so the serving layer crosses
    it in one search. None for any other TAIL (its own first chars, or none when it may match
    empty mid-text)."""
    starts = [start for start in dict.fromkeys(dfa.starts) if start != DEAD]
    at_end_only = all(
        isinstance(ends, dict) and set(ends) == {EOI}
        for ends in (dfa.ends[start] for start in starts)
        if ends is not None
    )
    if not dfa.nullable_starts or not at_end_only:
        return None
    return first_chars(dfa) or None  # (none: it matches only at the end; no class is declared)


# A row with at least this many classes going to one state is written as a Row (one line, "all
# other classes go to N") rather than a dict that black spreads over a line per class.
_ROW_SHORTHAND_MIN_SHARED = 8

# A class of at most this many plain chars is written as those chars (`["']` as '"' and "'").
_SPELLED_CLASS_MAX = 4

_ESCAPE_NAMES = ("\\s", "\\w", "\\d", "\\S", "\\W", "\\D")


def _class_keys(charset: SymbolicCharSet) -> tuple[str, ...] | None:
    """The chars a class is written as in a row, or None for a wide class (written by name)."""
    real = charset.literal()
    if real is None or len(real) > _SPELLED_CLASS_MAX:
        return None
    return tuple(chr(cp) for lo, hi in real.ranges for cp in range(lo, hi + 1))


def _class_name(charset: SymbolicCharSet) -> str:
    """The name of a wide class in a `Dfa` form: its regex spelling (`\\s`, `[^\\s<]`)."""
    text = format_charset(charset)
    if text in _ESCAPE_NAMES:
        return text
    if text == ".":
        return "ANY"
    return f"[{text}]"


def _printable(charset: SymbolicCharSet) -> str:
    """The char a state name uses for a class: its smallest printable ASCII member if it has one
    (a space for `\\s`, not a tab), else its representative."""
    ascii_members, _ = charset.components()
    for lo, hi in ascii_members.ranges:
        if hi >= 0x20 and lo <= 0x7E:
            return chr(max(lo, 0x20))
    return charset.representative()


STATE_NAMES_MAX_CHARS = (
    50_000  # the chars of all of a Dfa's state names, past which it numbers them
)


def state_names(dfa: DeterminizedDfa) -> dict[int, object]:
    """A name for every live state: the shortest input that reaches it from the start (the least
    in code point order among the shortest, each class read as its `_printable` char).

    Alternatives considered: BFS numbers (the runtime's), which an added alternative shifts for
    every state after the first new one, so a one-token edit rewrote every row of the delimiter;
    and numbering new states after the old ones, which needs the old module. A state's shortest
    input is a property of the language: an added alternative leaves it put unless it opens a
    shorter way into the state. Several start states (`^`, `\\b`) all have the empty input, so
    such a DFA keeps its numbers; so does one whose names would add up to more than
    `STATE_NAMES_MAX_CHARS` (a long literal in a pattern: names that grow by a char per state
    would make the module grow with the square of its length)."""
    live_starts = {start for start in dfa.starts if start != 0}
    numbers = {state: state for state in range(1, len(dfa.rows))}
    if len(live_starts) > 1:
        return numbers  # type: ignore[return-value]
    found: dict[int, str] = {start: "" for start in live_starts}
    frontier = sorted(live_starts)
    spelled = 0
    while frontier:
        candidates: dict[int, str] = {}
        for state in frontier:
            for class_id, target in dfa.rows[state].items():
                if target in found:
                    continue
                text = found[state] + _printable(dfa.classes[class_id - 1])
                if target not in candidates or text < candidates[target]:
                    candidates[target] = text
        found.update(candidates)
        spelled += sum(map(len, candidates.values()))
        if spelled > STATE_NAMES_MAX_CHARS:
            return numbers  # type: ignore[return-value]
        frontier = sorted(candidates)
    # Two classes out of one state can share a char when one of them holds it only under other
    # Unicode tables (`助` as a non-space and as a space): the later state gets its number too.
    names: dict[int, object] = {}
    taken: set[object] = set()
    for state, text in sorted(found.items()):
        name = text if text not in taken else f"{text} (state {state})"
        if name in taken:
            return numbers  # type: ignore[return-value]
        taken.add(name)
        names[state] = name
    return names


def _dfa_states(
    dfa: DeterminizedDfa,
) -> tuple[tuple[StateModel, ...], tuple[tuple[str, str], ...], list]:
    """The states of a `Dfa` form and the wide classes they name."""
    names = state_names(dfa)
    wide: dict[int, str] = {}  # class id -> name, for the wide classes used

    def keys(class_id: int) -> tuple[str, ...]:
        charset = dfa.classes[class_id - 1]
        spelled = _class_keys(charset)
        if spelled is not None:
            return spelled
        wide.setdefault(class_id, _class_name(charset))
        return (wide[class_id],)

    states = []
    count = len(dfa.classes)
    for state in range(1, len(dfa.rows)):
        row = dfa.rows[state]
        targets = [row.get(class_id, 0) for class_id in range(1, count + 1)]
        common = max(set(targets), key=lambda target: (targets.count(target), -target))
        otherwise = None
        if common != 0 and targets.count(common) >= _ROW_SHORTHAND_MIN_SHARED:
            otherwise = names[common]
            pairs = [
                (key, names.get(target))
                for class_id, target in enumerate(targets, 1)
                if target != common
                for key in keys(class_id)
            ]
        else:
            pairs = [
                (key, names[target])
                for class_id, target in sorted(row.items())
                for key in keys(class_id)
            ]
        end: Any = dfa.ends[state]
        if isinstance(end, dict):
            end = tuple(
                (key, k)
                for symbol, k in sorted(end.items())
                for key in (("",) if symbol == 0 else keys(symbol))
            )
        states.append(StateModel(names[state], tuple(pairs), end, otherwise))
    used = [(name, dfa.classes[class_id - 1]) for class_id, name in sorted(wide.items())]
    return tuple(states), tuple((name, repr(c)) for name, c in used), [c for _, c in used]


def _lead_form(model: DelimiterModel) -> str:
    return "LeadRunThenLiteral" if len(model.literals) == 1 else "LeadRunThenLiterals"


def _common(name: str, compiled: CompiledDelimiter, kind: str) -> dict[str, Any]:
    spec = compiled.spec
    return dict(
        name=name,
        source=spec.describe(),
        pattern=spec.pattern,
        kind=kind,
        fallback_reason=compiled.fallback_reason,
        has_groups=bool(spec.group_names),
        may_grow=not (spec.literals is not None and not spec.can_extend),
    )


def _delimiter_model(name: str, compiled: CompiledDelimiter) -> DelimiterModel:
    spec = compiled.spec
    dfa = compiled.dfa
    # A pattern with named groups stays a Dfa form: the groups are read from its match.
    analysis = delimiter_analysis(compiled)
    common = _common(name, compiled, analysis.kind)
    printed = literal_form(compiled) if analysis.kind == FALLBACK else None
    if printed is not None:
        return _oversized_literals_model(name, compiled, printed[0])
    if analysis.kind == FALLBACK:
        loop = leading_loop(spec.pattern)
        common.update(
            lead_loop=(loop[0], loop[2], loop[3]) if loop is not None else None,
            looks_behind=looks_behind(spec.pattern),
            asserts_end=asserts_the_end(spec.pattern),
        )
        relaxed = relaxed_analysis(compiled)
        heads = _look_ahead_heads(compiled)
        if heads is None:
            return DelimiterModel(**common)
        # What every match of its relaxed pattern (without its look-aheads) begins with, so of
        # its own: the runtime attempts `regex` only where such a match may start.
        lead = heads[0] if heads[0] else None  # none: the runtime's default, no lead chars
        # `waits` (regions.lookahead_wait) needs the relaxed pattern to be exactly lead chars
        # then one literal, so that where its match ends is read off the text.
        waits = (
            compiled.waits
            if relaxed is not None
            and relaxed.kind in (LITERAL, LEAD_RUN_THEN_LITERALS)
            and len(relaxed.literals) == 1
            else None
        )
        return DelimiterModel(
            **common,
            heads_lead=repr(lead) if lead is not None else None,
            heads_literals=heads[1],
            waits=repr(waits) if waits is not None else None,
            charsets=tuple(c for c in (lead, waits) if c is not None),
        )
    assert dfa is not None  # only a fallback has no DFA
    if analysis.kind != DFA:
        model = DelimiterModel(
            **common,
            literals=analysis.literals,
            lead=repr(analysis.lead) if analysis.lead is not None else None,
            trail=repr(analysis.trail) if analysis.trail is not None else None,
            charsets=tuple(c for c in (analysis.lead, analysis.trail) if c is not None),
        )
        check_runtime(build_runtime(model), dfa)
        return model
    first = _declared_first_chars(dfa, analysis.first_chars)
    follows = head_follows(dfa, analysis.heads) if analysis.heads is not None else ()
    model = _dfa_model(name, compiled, dfa, analysis.heads, first, follows=follows)
    runtime = build_runtime(model)
    check_runtime(runtime, dfa)
    check_crossings(runtime)
    return model


def _oversized_literals_model(
    name: str, compiled: CompiledDelimiter, literals: tuple[str, ...]
) -> DelimiterModel:
    """A delimiter that is only literal text (a template's literal list, or a pattern of
    literal alternatives: `analysis.literal_alternatives`) whose DFA is past the compiler's
    table limits (limits.py: a literal of thousands of chars, or of hundreds of distinct ones).
    It is still a literal form: the runtime builds a literal's trie itself, in time linear in
    its length, and finds it with `str.find`, where `regex` would retry from every position and
    read the literal again each time (quadratic on text that repeats its beginning). The form
    needs no check against a DFA: it is the `literals`, in the order the pattern's alternation
    tries them (a literal list's pattern is longest first, ties in template order). The
    planning stages see a delimiter without a DFA, as they see a fallback: no fast path plans
    from it, and the general path runs it."""
    kind = LITERAL if len(literals) == 1 else LITERALS
    common = _common(name, compiled, kind)
    common["fallback_reason"] = None
    return DelimiterModel(**common, literals=literals)


def _look_ahead_heads(compiled: CompiledDelimiter) -> Any:
    """What every match of a pattern the DFA cannot run whole begins with, (lead, literals) or
    None: read off its relaxed DFA (look-aheads read as empty), else off its form whose final
    look-aheads consume their text (where dropping them leaves an empty match)."""
    relaxed = relaxed_analysis(compiled)
    heads = relaxed.heads if relaxed is not None else None
    return heads if heads is not None else consumed_heads(compiled.spec.pattern)


def _declared_first_chars(dfa: DeterminizedDfa, analysed: Any) -> Any:
    """The chars a match of `dfa` can begin with, as its `Dfa` declares them (the runtime's
    candidate search), or None when a match can be empty and so begin anywhere."""
    if dfa.nullable_starts:
        return None
    return analysed if analysed is not None else first_chars(dfa)


def _dfa_model(
    name: str,
    compiled: CompiledDelimiter,
    dfa: DeterminizedDfa,
    heads: Any,
    first: Any,
    *,
    anchored: bool = True,
    follows: tuple = (),
) -> DelimiterModel:
    """The `Dfa` form of `dfa`, with what every match begins with (`heads`: (lead, literals) or
    None), the chars that may follow each of those literals (`follows`, aligned with them: a
    charset or None; () for none known) and the chars it can begin with (`first`)."""
    followed = tuple(
        (literal, follow)
        for literal, follow in zip(heads[1] if heads is not None else (), follows)
        if follow is not None
    )
    spec = compiled.spec
    states, classes, wide = _dfa_states(dfa)
    loops = self_loops(dfa)
    parts, anchored_aliases = _anchored_parts(spec.pattern) if anchored else ((), {})
    # With an anchored spelling, its match reads the groups too (exactly, on any text).
    groups = _groups_parts(spec.pattern) if spec.group_names and not parts else None
    names = state_names(dfa)
    return DelimiterModel(
        **_common(name, compiled, DFA),
        first_chars=repr(first) if first is not None else None,
        heads_lead=repr(heads[0]) if heads is not None else None,
        heads_literals=heads[1] if heads is not None else None,
        heads_follows=tuple((literal, repr(follow)) for literal, follow in followed),
        classes=classes,
        states=states,
        starts=(
            tuple(names.get(start) for start in dfa.starts) if dfa.starts != (1, 1, 1) else None
        ),
        stretches=tuple(
            (names[state], tuple((literal, names[after]) for literal, after in by_literal.items()))
            for state, by_literal in literal_stretches(dfa).items()
        ),
        loops=tuple((names[state], repr(stay)) for state, stay in loops.items()),
        groups_parts=_spelled_parts(groups[0]) if groups else (),
        groups_aliases=groups[1] if groups else anchored_aliases,
        group_slice=group_slice(spec.pattern) if spec.group_names else None,
        anchored=_spelled_parts(parts),
        charsets=tuple(wide)
        + ((first,) if first is not None else ())
        + ((heads[0],) if heads is not None else ())
        + tuple(follow for _, follow in followed)
        + tuple(loops.values())
        + tuple(part for part in parts if not isinstance(part, str))
        + tuple(part for part in (groups[0] if groups else ()) if not isinstance(part, str)),
    )


def _lookahead_models(name: str, compiled: CompiledDelimiter) -> list[DelimiterModel]:
    """A delimiter whose look-aheads a DFA runs (compiler/automata/trailing_lookahead.py): the delimiters
    of the text before each look-ahead (`NAME_BEFORE_LOOKAHEAD`, numbered when there are
    several), then the `Dfa` of the pattern with its look-aheads read as consuming, which
    declares which states report through a look-ahead. What every match begins with is what the
    fallback's would be (its relaxed or consuming heads), as the plans read it."""
    lookahead = compiled.lookahead
    assert lookahead is not None
    spec = compiled.spec
    models: list[DelimiterModel] = []
    before_names: list[str | None] = []
    for index, pattern in enumerate(lookahead.before):
        if pattern is None:
            before_names.append(None)
            continue
        suffix = "" if len(lookahead.before) == 1 else f"_{index}"
        before_name = f"{name}_BEFORE_LOOKAHEAD{suffix}"
        before_spec = DelimiterSpec(
            spec.role, spec.key, spec.field, None, pattern, can_extend=False, group_names=()
        )
        models.append(
            _delimiter_model(
                before_name, CompiledDelimiter(before_spec, compile_dfa(pattern), None)
            )
        )
        before_names.append(before_name)
    heads = _look_ahead_heads(compiled)
    model = _dfa_model(
        name,
        compiled,
        lookahead.dfa,
        heads,
        _declared_first_chars(lookahead.dfa, None),
        anchored=False,
    )
    names = state_names(lookahead.dfa)
    model = replace(
        model,
        lookahead_ends=tuple(
            (names[state], alternative) for state, alternative in sorted(lookahead.reports.items())
        ),
        before_lookahead=tuple(before_names),
        fallback_reason=None,
    )
    runtime = build_runtime(model, {m.name: build_runtime(m) for m in models})
    check_runtime(runtime, lookahead.dfa)
    check_crossings(runtime)
    return [*models, model]


def build_runtime(model: DelimiterModel, before: dict[str, Any] | None = None):
    """The runtime delimiter the module builds from `model` (what `check_runtime` checks), built
    from the same values the module prints."""
    from ...runtime import delimiter_forms
    from ...runtime.dfa_tables import Row

    def charset(expression: str | None):
        return None if expression is None else eval_charset(expression)

    if model.kind == LITERAL:
        return delimiter_forms.Literal(model.literals[0], may_grow=model.may_grow)
    if model.kind == LITERALS:
        return delimiter_forms.Literals(*model.literals, may_grow=model.may_grow)
    if model.kind == LEAD_RUN_THEN_LITERALS:
        return delimiter_forms.LeadRunThenLiterals(
            charset(model.lead), *model.literals, pattern=model.pattern
        )
    if model.kind == LITERAL_THEN_RUN:
        return delimiter_forms.LiteralThenRun(
            model.literals[0], charset(model.trail), pattern=model.pattern
        )
    states: dict[Any, Any] = {}  # keyed by state names: witnesses (str) or numbers
    for state in model.states:
        row: Any = dict(state.transitions)
        states[state.name] = (
            Row(row, otherwise=state.otherwise) if state.otherwise is not None else row  # type: ignore[arg-type]
        )
    ends = {
        state.name: dict(state.end) if isinstance(state.end, tuple) else state.end
        for state in model.states
        if state.end is not None
    }
    return delimiter_forms.Dfa(
        pattern=model.pattern,
        first_chars=charset(model.first_chars),
        lead=charset(model.heads_lead),
        literals=model.heads_literals,
        follows={literal: eval_charset(expression) for literal, expression in model.heads_follows}
        or None,
        classes={name: charset(expression) for name, expression in model.classes},
        states=states,
        ends=ends,
        starts=model.starts,
        has_groups=model.has_groups,
        stretches={state: dict(by_literal) for state, by_literal in model.stretches},
        loops={state: eval_charset(stay) for state, stay in model.loops},
        lookahead_ends=dict(model.lookahead_ends) or None,
        before_lookahead=(
            tuple(None if n is None else (before or {})[n] for n in model.before_lookahead) or None
        ),
    )


# Longest groups spelling worth printing (its classes that the tables decide are printed by name):
# a module is read in review. Past this the runtime keeps `regex`.
_GROUPS_PATTERN_MAX = 800


# Longest `re` spelling a Dfa declares for its anchored matches (a long literal stays on the DFA,
# whose stretches cross it in C anyway).
_ANCHORED_MAX = 2000


def _anchored_parts(pattern: str) -> tuple[tuple, dict[str, str]]:
    """`re_parts` of `pattern`, or of the spelling of it `linear_spelling` gives, when one
    backtracking attempt of that is proved linear (compiler/planning/linear_backtracking.py),
    with its group renames, else ((), {}): the runtime then steps the DFA."""
    if len(pattern) > 2 * _ANCHORED_MAX:
        return (), {}  # its spelling would be too long: not parsed again
    try:
        node = parse_regex(pattern)
    except RegexError:  # a look-ahead a DFA runs (trailing_lookahead.py)
        return (), {}
    spelling = linear_spelling(node)
    if spelling is None:
        return (), {}
    try:
        parts, aliases = re_parts(spelling)
    except NotForRe:
        return (), {}
    if sum(len(part) for part in parts if isinstance(part, str)) > _ANCHORED_MAX:
        return (), {}
    return parts, aliases


def _spelled_parts(parts: tuple) -> tuple[tuple[str, str], ...]:
    """`re_parts` as the module prints them: ("source", piece) or ("class", its expression)."""
    return tuple(
        ("source", part) if isinstance(part, str) else ("class", repr(part)) for part in parts
    )


def _groups_parts(pattern: str) -> tuple[tuple, dict[str, str]] | None:
    """`re_parts` of `pattern` (re_source.py) and the group renames it needs, or None when `re`
    cannot take it (a group name two groups of one match share, `\\b`) or the spelling is too
    long to print; the runtime then keeps `regex` for the groups."""
    try:
        node = parse_regex(pattern)
    except RegexError:  # a look-ahead a DFA runs (trailing_lookahead.py): `regex` reads groups
        return None
    # A value lazily between two runs (`\s*(?P<value>.*?)\s*</x>`) is read in the spelling
    # that does not backtrack over a run of spaces in quadratic time: the same groups.
    node = trim_runs_around_a_lazy_group(node)
    try:
        parts, aliases = re_parts(node)
    except NotForRe:
        return None
    if sum(len(part) for part in parts if isinstance(part, str)) > _GROUPS_PATTERN_MAX:
        return None
    return parts, aliases


def _spelled_tag(f, name: str) -> SpelledTagModel | None:
    """An xml-inline `tag_pattern` with look-aheads (no DFA runs it) spelled for `re`, which then
    reads it where `regex` would: its relaxed AST (`parse_relaxed`, each look-ahead an Empty node)
    spelled with each look-ahead put back (`re_parts(lookaheads=)`). None, leaving `regex`, for a
    pattern without a look-ahead (one that failed the DFA for another reason), a look-ahead that
    is not a plain `(?=...)`/`(?!...)` of a supported body, a body with a named group (its group
    would escape the renames), one under a repeat, a repeat whose body can match empty (`re` and
    `regex` end such a loop by rules of their own), a value lazily between two runs of one class
    (quadratic over a long run in both engines, 3x slower in `re`), a group name or assertion `re`
    cannot take, or a spelling too long to print."""
    args = f.content_args
    if f.content != "xml-inline" or not isinstance(args, dict):
        return None
    pattern = args.get("tag_pattern")
    if not isinstance(pattern, str) or len(pattern) > _GROUPS_PATTERN_MAX:
        return None
    try:
        regex.compile(pattern, regex.DOTALL)
        node, dropped = parse_relaxed(pattern)
    except (regex.error, RegexError, ValueError, TypeError, RecursionError):
        return None
    if not dropped:
        return None
    if has_a_lazy_value_between_runs(node):
        # minimax_m2's `\s*(?P<value>.*?)\s*(?:</parameter>|(?=...))`: quadratic over a value of
        # many spaces in both engines, and `re` takes 3x longer there than `regex`.
        return None
    spelling = _re_spelling(pattern, node, dropped)
    if spelling is None:
        return None
    parts, aliases = spelling
    return SpelledTagModel(
        name=name,
        pattern=pattern,
        parts=_spelled_parts(parts),
        aliases=aliases,
        charsets=tuple(part for part in parts if not isinstance(part, str)),
    )


def _re_spelling(
    pattern: str, node: RegexNode, dropped: tuple
) -> tuple[tuple, dict[str, str]] | None:
    """`pattern` (its relaxed AST `node`, with the look-aheads `dropped`) spelled for `re` with
    each look-ahead put back (`re_parts(lookaheads=)`), and the group renames `re` needs; None
    for a look-ahead that is not a plain `(?=...)`/`(?!...)` of a supported body, a body with a
    named group, one under a repeat, a repeat whose body can match empty, what `re` cannot take,
    or a spelling too long to print."""
    lookaheads: dict[int, tuple[str, RegexNode]] = {}
    for empty in dropped:
        start, end = empty.span
        opener = pattern[start : start + 3]
        if opener not in ("(?=", "(?!") or pattern[end - 1 : end] != ")":
            return None
        try:
            body = parse_regex(pattern[start + 3 : end - 1])
        except (RegexError, RecursionError):
            return None
        if any(isinstance(n, Group) and n.name is not None for _, n in walk_paths(body, ())):
            return None
        lookaheads[id(empty)] = (opener, body)
    nodes = list(walk_paths(node, ()))
    outside_repeats = [
        id(n)
        for path, n in nodes
        if id(n) in lookaheads and not any(isinstance(p, Repeat) for p, _ in path)
    ]
    if sorted(outside_repeats) != sorted(lookaheads):
        return None  # each look-ahead once, and under no repeat
    if any(isinstance(n, Repeat) and n.max != 1 and nullable(n.item) for _, n in nodes):
        return None  # `re` and `regex` end such a loop, and set its groups, by rules of their own
    try:
        parts, aliases = re_parts(node, lookaheads)
    except (NotForRe, RecursionError):
        return None
    if sum(len(part) for part in parts if isinstance(part, str)) > _GROUPS_PATTERN_MAX:
        return None
    return parts, aliases


# Longest JSON of content_args or a transform quoted in a value function's docstring.
_SUMMARY_JSON_MAX = 300


def _summary_json(value: object) -> str:
    text = nested.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= _SUMMARY_JSON_MAX else text[: _SUMMARY_JSON_MAX - 3] + "..."


def _value_summary(f) -> str:
    parts = [f"content {f.content!r}"]
    if f.content_args != {}:
        parts.append(f"content_args {_summary_json(f.content_args)}")
    if f.transform is not None:
        key = "transform_each" if f.transform_each else "transform"
        parts.append(f"{key} {_summary_json(f.transform)}")
    return f"{f.name}: " + ", ".join(parts)


def _diagram(automaton: RegionAutomaton):
    spec = automaton.spec
    home = automaton.home.field
    home_label = f"{home} (implicit)" if home is not None else "(null sink)"
    yield f"The prefix is cut after the last match of {automaton.start_anchor.spec.describe()}."
    yield ""
    for f in spec.fields:
        if f.open is None:
            continue
        flags = ", ".join(
            flag
            for flag, on in (
                ("repeats", f.repeats),
                (f"join {f.join!r}", f.join is not None),
                (f.content, f.content != "text"),
            )
            if on
        )
        yield f"{home_label} --{f.open.describe()}--> {f.name}" + (f"  ({flags})" if flags else "")
        if f.close is not None:
            yield f"{f.name} --{f.close.describe()}--> {home_label}"
        else:
            yield f"{f.name} (no close: runs to the end of the output)"
    if home is not None:
        implicit = spec.field(home)
        if implicit.close is not None:
            yield f"{home_label} --{implicit.close.describe()}--> closes {home}"
    yield ""
    yield "Winner at one position: earliest start, then longest, then open before close, then field name."
