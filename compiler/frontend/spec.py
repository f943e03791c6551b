"""Template JSON -> validated, immutable `TemplateSpec`: the first stage of the compiler.

In:  a `response_template` dict, as found in a tokenizer_config.json.
Out: `load_spec(template) -> TemplateSpec`, built from frozen dataclasses (`DelimiterSpec`,
     `FieldSpec`, `TemplateSpec`) that keep the fields in source order and hold tuples, not lists.

Guarantees:
- A template is accepted exactly when the reference (`load_response_template` in
  transformers.utils.chat_parsing.response_templates) accepts it, but for a delimiter longer
  than `MAX_DELIMITER_LENGTH` (limits.py), which chatparse refuses with a ValueError naming it. When it is rejected, the
  exception class is the reference's, and the checks run in the reference's order, so the first
  failing check decides the class. Almost every rejection is a ValueError; odd shapes the
  reference never checks fail with the TypeError the reference's own operations would raise
  (an unhashable `content`, a non-string `*_pattern`, unknown keys that cannot be sorted,
  several implicit fields with non-string names).
- Messages are ours; each names the field (or `response_template`), the key and the offending
  value.
- Delimiter regexes are compiled with `regex` and DOTALL, as the reference does, so the same
  patterns are accepted; a literal delimiter gets the reference's pattern (escaped literals,
  longest first, stable among equal lengths).
- User-provided values (`content_args`, `transform`, `defaults`, the template itself) are deep
  copies, so mutating the input afterwards cannot change the spec. Treat them as read-only.
- Values that the reference stores raw and tests for truthiness later (`repeats`, `optional`)
  are reduced to that truthiness here; `content_args` is kept as given, even when it is not a
  dict (the reference only fails on it at parse time).

Not mirrored: a value the reference stores without copying but that `copy.deepcopy` cannot copy
(never the case for JSON input) fails here and not in the reference.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

import regex

from chatparse.runtime.content import PARSERS, STREAMABLE, TYPED_STRUCTURED_PARSERS
from chatparse.runtime.transform import check_transform_strings

from ..limits import MAX_DELIMITER_LENGTH
from ..nested import copy_json

TEMPLATE_KEYS = frozenset({"version", "defaults", "fields", "start_anchor", "start_anchor_pattern"})
FIELD_KEYS = frozenset(
    {
        "open",
        "open_pattern",
        "close",
        "close_pattern",
        "content",
        "content_args",
        "repeats",
        "join",
        "optional",
        "transform",
        "transform_each",
    }
)
SUPPORTED_VERSION = 1
# The reference compiles every delimiter with DOTALL: "." crosses newlines.
DELIMITER_FLAGS = regex.DOTALL

_TEMPLATE_SCOPE = "response_template"
# Offending values are quoted in messages; a huge value would drown the message.
_MAX_SHOWN = 80


@dataclass(frozen=True)
class DelimiterSpec:
    """One open, close or start anchor delimiter, given as literal(s) or as a regex."""

    role: str  # "open" | "close" | "start_anchor"
    key: str  # the template key it came from: "open", "open_pattern", "start_anchor", ...
    field: str | None  # the field it belongs to; None for the start anchor
    literals: tuple[str, ...] | None  # deduplicated, first-seen order; None for a regex
    pattern: str  # the regex source; for literals, the alternation the reference builds
    can_extend: bool  # literals only: one literal is a strict prefix of another
    group_names: tuple[str, ...]  # the regex's named groups (captures), sorted

    @property
    def is_literal(self) -> bool:
        return self.literals is not None

    def compile(self) -> regex.Pattern:
        """The delimiter as the reference matches it (`regex` caches compiled patterns)."""
        return regex.compile(self.pattern, DELIMITER_FLAGS)

    def describe(self) -> str:
        """One line naming the key and its value.

        For example `open "<think>"`, `open ["<a>", "<b>"]` or `close_pattern /\\s*<\\|im_end\\|>/`.
        """
        if self.literals is None:
            return f"{self.key} {_show_pattern(self.pattern)}"
        quoted = [_quote(literal) for literal in self.literals]
        if len(quoted) == 1:
            return f"{self.key} {quoted[0]}"
        return f"{self.key} [{', '.join(quoted)}]"


@dataclass(frozen=True)
class FieldSpec:
    """One field of the output message and the region of text it is parsed from."""

    name: str
    open: DelimiterSpec | None
    close: DelimiterSpec | None
    content: str  # the content parser's name
    content_args: Any  # as given; the reference does not check it at load time
    repeats: bool
    join: str | None
    optional: bool
    transform: Any  # None when the field has no transform
    transform_each: bool

    @property
    def implicit(self) -> bool:
        """The field without an open delimiter: text outside every other region lands here."""
        return self.open is None

    @property
    def dirty(self) -> bool:
        """Chunks of a structured content parser stream raw; the value arrives on close."""
        return self.content not in STREAMABLE

    @property
    def typed(self) -> bool:
        """Schema coercion leaves string-typed parameters as the content parser typed them."""
        return self.content in TYPED_STRUCTURED_PARSERS

    @property
    def coerce(self) -> bool | str:
        """Whether schema coercion runs on the field's value when tools are given: not with a
        `value_parser_by`, whose captures already say how each value reads (the reference tests
        `"value_parser_by" not in content_args`). A str is the TypeError that test raises for
        `content_args` that are neither a dict nor iterable (only python-call-list, which never
        reads them, gets that far)."""
        try:
            return "value_parser_by" not in self.content_args
        except TypeError as error:
            return str(error)

    @property
    def delimiters(self) -> tuple[DelimiterSpec, ...]:
        return tuple(d for d in (self.open, self.close) if d is not None)

    @property
    def group_names(self) -> tuple[str, ...]:
        """Named groups of the open and close regexes, sorted: the captures a transform sees."""
        return tuple(sorted({name for d in self.delimiters for name in d.group_names}))

    @property
    def content_args_error(self) -> str | None:
        """What is wrong with a `content_args` that is not a dict, or None when it is one.

        The reference accepts any `content_args` at load time, and every content parser starts
        with `args.get(...)`, so a list or null fails with AttributeError each time the field's
        value is parsed (never when the field does not occur). The module raises this message
        with that class at that moment. `python-call-list` has no options and never reads its
        args, so any `content_args` will do there."""
        if isinstance(self.content_args, dict) or self.content == "python-call-list":
            return None
        return (
            f"Field {self.name!r}: 'content_args' must be a dict of options for the "
            f"{self.content!r} content parser, got {_show_typed(self.content_args)}"
        )


@dataclass(frozen=True)
class TemplateSpec:
    """A validated response template."""

    fields: tuple[FieldSpec, ...]  # source order
    defaults: dict
    start_anchor: DelimiterSpec
    implicit: str | None  # the implicit field's name, if any
    source: dict  # the original template, for embedding in generated code

    def field(self, name: str) -> FieldSpec:
        for field in self.fields:
            if field.name == name:
                return field
        raise KeyError(f"no field {name!r}; fields: {[f.name for f in self.fields]}")

    def dump(self) -> str:
        """A readable multi-line description, stable across runs (for tests and debugging)."""
        lines = [f"start anchor: {self.start_anchor.describe()}"]
        if self.defaults:
            lines.append(f"defaults: {_show(self.defaults, limit=None)}")
        lines.append(f"implicit: {self.implicit if self.implicit is not None else '-'}")
        for field in self.fields:
            flags = [f"content={field.content}"]
            if field.content_args != {}:
                flags.append(f"content_args={_show(field.content_args, limit=None)}")
            flags.append("optional" if field.optional else "required")
            if field.repeats:
                flags.append("repeats")
            if field.join is not None:
                flags.append(f"join={_quote(field.join)}")
            if field.dirty:
                flags.append("dirty")
            implicit = " (implicit)" if field.implicit else ""
            lines.append(f"field {field.name}{implicit}: {' '.join(flags)}")
            for delimiter in field.delimiters:
                line = f"  {delimiter.describe()}"
                if delimiter.can_extend:
                    line += "  (can extend)"
                if delimiter.group_names:
                    line += f"  groups: {', '.join(delimiter.group_names)}"
                lines.append(line)
            if field.transform is not None:
                each = "transform_each" if field.transform_each else "transform"
                lines.append(f"  {each} {_show(field.transform, limit=None)}")
        return "\n".join(lines)


def load_spec(template: Any) -> TemplateSpec:
    """Validate a response_template dict and build its `TemplateSpec` (see the module docstring)."""
    _check_template_shape(template)
    # Every field is checked before the implicit-field rule and the start anchor, as in the
    # reference: a template with a bad field and no start anchor reports the bad field.
    fields = tuple(_load_field(name, raw) for name, raw in template["fields"].items())
    implicit_names = [field.name for field in fields if field.implicit]
    if len(implicit_names) > 1:
        _reject_several_implicit(implicit_names)
    start_anchor = _load_delimiter(
        _TEMPLATE_SCOPE, template, "start_anchor", "start_anchor", "start_anchor_pattern", None
    )
    if start_anchor is None:
        raise ValueError(
            f"{_TEMPLATE_SCOPE}: missing 'start_anchor' or 'start_anchor_pattern' (the text that "
            "marks the start of the assistant message in the prefix)"
        )
    return TemplateSpec(
        fields=fields,
        # The reference deep-copies `defaults` (and recurses per level doing so); `content_args`
        # and `transform` it keeps as they are, however deep, so they are copied without recursion.
        defaults=copy.deepcopy(template.get("defaults", {})),
        start_anchor=start_anchor,
        implicit=implicit_names[0] if implicit_names else None,
        source=copy_json(template),
    )


def _check_template_shape(template: Any) -> None:
    """The top level: a dict of version 1 with known keys, dict defaults, non-empty dict fields."""
    if not isinstance(template, dict):
        raise ValueError(f"{_TEMPLATE_SCOPE} must be a dict, got {_show_typed(template)}")
    version = template.get("version", SUPPORTED_VERSION)
    # Equality, not identity, as in the reference: 1.0 and True are accepted as version 1.
    if version != SUPPORTED_VERSION:
        raise ValueError(
            f"{_TEMPLATE_SCOPE}: unsupported 'version' {_show(version)} "
            f"(only version {SUPPORTED_VERSION} exists)"
        )
    unknown = _sorted_unknown_keys(_TEMPLATE_SCOPE, template, TEMPLATE_KEYS)
    if unknown:
        raise ValueError(
            f"{_TEMPLATE_SCOPE}: unknown keys {unknown}; allowed keys: {sorted(TEMPLATE_KEYS)}"
        )
    defaults = template.get("defaults", {})
    if not isinstance(defaults, dict):
        raise ValueError(
            f"{_TEMPLATE_SCOPE}: 'defaults' must be a dict, got {_show_typed(defaults)}"
        )
    fields = template.get("fields", {})
    if not isinstance(fields, dict) or not fields:
        shown = "nothing" if "fields" not in template else _show_typed(fields)
        raise ValueError(f"{_TEMPLATE_SCOPE}: 'fields' must be a non-empty dict, got {shown}")


def _load_field(name: Any, raw: Any) -> FieldSpec:
    """Check one field, in the reference's order, and build its `FieldSpec`."""
    scope = f"Field {name!r}"
    if not isinstance(raw, dict):
        raise ValueError(f"{scope}: the field spec must be a dict, got {_show_typed(raw)}")
    unknown = _sorted_unknown_keys(scope, raw, FIELD_KEYS)
    if unknown:
        raise ValueError(f"{scope}: unknown keys {unknown}; allowed keys: {sorted(FIELD_KEYS)}")

    content = raw.get("content", "text")
    try:
        hash(content)
    except TypeError as exc:
        # The reference looks the name up in a dict, which raises this TypeError.
        raise TypeError(
            f"{scope}: 'content' must name a content parser, got unhashable {_show_typed(content)}"
        ) from exc
    if content not in PARSERS:
        raise ValueError(
            f"{scope}: 'content' names unknown content parser {_show(content)}; "
            f"available: {sorted(PARSERS)}"
        )

    open_ = _load_delimiter(scope, raw, "open", "open", "open_pattern", name)
    close = _load_delimiter(scope, raw, "close", "close", "close_pattern", name)

    join = raw.get("join")
    if join is not None and not isinstance(join, str):
        raise ValueError(f"{scope}: 'join' must be a string, got {_show_typed(join)}")
    repeats = raw.get("repeats", False)
    if join is not None and not repeats:
        given = f"'repeats': {_show(repeats)}" if "repeats" in raw else "no 'repeats'"
        raise ValueError(f"{scope}: 'join' ({_quote(join)}) requires a true 'repeats', got {given}")

    transform = raw.get("transform")
    transform_each = raw.get("transform_each", False)
    if not isinstance(transform_each, bool):
        raise ValueError(
            f"{scope}: 'transform_each' must be a bool, got {_show_typed(transform_each)}"
        )
    if transform_each and transform is None:
        raise ValueError(f"{scope}: 'transform_each' is true but the field has no 'transform'")
    if transform is not None:
        check_transform_strings(scope, transform)
    else:
        _reject_dropped_captures(scope, open_, close)

    return FieldSpec(
        name=name,
        open=open_,
        close=close,
        content=content,
        content_args=copy_json(raw.get("content_args", {})),
        repeats=bool(repeats),
        join=join,
        optional=bool(raw.get("optional", True)),
        transform=copy_json(transform),
        transform_each=transform_each,
    )


def _reject_dropped_captures(
    scope: str, open_: DelimiterSpec | None, close: DelimiterSpec | None
) -> None:
    """Named groups reach the output only through a transform; without one they would vanish."""
    declared = [d for d in (open_, close) if d is not None and d.group_names]
    if declared:
        names = sorted({name for d in declared for name in d.group_names})
        where = "; ".join(f"{d.describe()} has {list(d.group_names)}" for d in declared)
        raise ValueError(
            f"{scope}: named groups {names} but no 'transform' ({where}). Captures only reach "
            "the output through a 'transform' (next to 'content'): add one that uses them, or "
            "drop the names from the pattern."
        )


def _reject_several_implicit(names: list[Any]) -> None:
    """At most one field may leave out its open delimiter."""
    for name in names:
        if not isinstance(name, str):
            # The reference joins the names into its message, which raises TypeError here.
            raise TypeError(
                f"{_TEMPLATE_SCOPE}: several fields omit 'open'/'open_pattern' ({names!r}), and "
                f"field name {name!r} is not a string"
            )
    raise ValueError(
        f"{_TEMPLATE_SCOPE}: at most one field may omit 'open'/'open_pattern' (it becomes the "
        f"implicit field); these all do: {', '.join(repr(n) for n in names)}"
    )


def _load_delimiter(
    scope: str,
    raw: dict,
    role: str,
    literal_key: str,
    pattern_key: str,
    field: Any,
) -> DelimiterSpec | None:
    """The delimiter given by `literal_key` or `pattern_key` (at most one), or None."""
    if literal_key in raw and pattern_key in raw:
        both = ", ".join(f"{key!r}: {_show(raw[key])}" for key in (literal_key, pattern_key))
        raise ValueError(
            f"{scope}: give either {literal_key!r} or {pattern_key!r}, not both ({both})"
        )
    if literal_key in raw:
        literals = _check_literals(scope, literal_key, raw[literal_key])
        _check_length(scope, literal_key, sum(len(literal) for literal in literals))
        # Longest first, so the alternation prefers the longer of two literals at one position;
        # the sort is stable, so equal lengths keep their first-seen order.
        longest_first = sorted(literals, key=len, reverse=True)
        # A literal that is a strict prefix of others sorts right before the first of them.
        ordered = sorted(literals)
        return DelimiterSpec(
            role=role,
            key=literal_key,
            field=field,
            literals=literals,
            pattern="|".join(regex.escape(literal) for literal in longest_first),
            can_extend=any(b.startswith(a) for a, b in zip(ordered, ordered[1:])),
            group_names=(),
        )
    if pattern_key in raw:
        source = raw[pattern_key]
        compiled = _compile_pattern(scope, pattern_key, source)
        _check_length(scope, pattern_key, len(source))
        return DelimiterSpec(
            role=role,
            key=pattern_key,
            field=field,
            literals=None,
            pattern=source,
            can_extend=False,
            group_names=tuple(sorted(compiled.groupindex)),
        )
    return None


def _check_length(scope: str, key: str, length: int) -> None:
    """Refuse a delimiter longer than chatparse compiles (the reference has no such limit)."""
    if length > MAX_DELIMITER_LENGTH:
        raise ValueError(
            f"{scope}: {key!r} is {length:,} chars long, over chatparse's limit of "
            f"{MAX_DELIMITER_LENGTH:,} chars per delimiter (MAX_DELIMITER_LENGTH, "
            "chatparse/compiler/limits.py): compiling a delimiter costs time with its length"
        )


def _check_literals(scope: str, key: str, value: Any) -> tuple[str, ...]:
    """A literal delimiter: a non-empty string, or a non-empty list of them (deduplicated)."""
    if isinstance(value, str):
        literals = (value,)
    elif isinstance(value, list):
        if not value:
            raise ValueError(f"{scope}: {key!r} is an empty list; give at least one literal")
        for index, item in enumerate(value):
            if not isinstance(item, str):
                raise ValueError(
                    f"{scope}: {key!r} list must hold only strings, "
                    f"got {_show_typed(item)} at index {index}"
                )
        literals = tuple(dict.fromkeys(value))
    else:
        raise ValueError(
            f"{scope}: {key!r} must be a string or a list of strings, got {_show_typed(value)}"
        )
    if "" in literals:
        raise ValueError(f"{scope}: {key!r} contains an empty literal '' (it would match anywhere)")
    return literals


def _compile_pattern(scope: str, key: str, source: Any) -> regex.Pattern:
    """Compile a `*_pattern` value exactly as the reference does, keeping its error classes."""
    try:
        return regex.compile(source, DELIMITER_FLAGS)
    except regex.error as exc:
        raise ValueError(
            f"{scope}: {key!r} is not a valid regex {_show_pattern(source)}: {exc}"
        ) from exc
    except TypeError as exc:
        # Not a string: the reference lets regex's TypeError escape.
        raise TypeError(
            f"{scope}: {key!r} must be a regex string, got {_show_typed(source)}"
        ) from exc
    except ValueError as exc:
        # regex raises a plain ValueError for some flag clashes, e.g. "(?a)(?u)"; the reference
        # lets it escape. Only the message changes here, never the class.
        if type(exc) is not ValueError:
            raise
        raise ValueError(
            f"{scope}: {key!r} is not a valid regex {_show_pattern(source)}: {exc}"
        ) from exc


def _sorted_unknown_keys(scope: str, mapping: dict, allowed: frozenset) -> list:
    """Unknown keys, sorted as the reference sorts them for its message."""
    unknown = set(mapping) - allowed
    try:
        return sorted(unknown)
    except TypeError as exc:
        # Mixed key types (only possible from Python, never from JSON) cannot be sorted; the
        # reference raises this TypeError while building its message.
        raise TypeError(f"{scope}: unknown keys {list(unknown)!r} (of mixed types)") from exc


def _escape_unprintable(text: str) -> str:
    """Keep descriptions on one line: show control characters as escapes."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def _quote(text: str) -> str:
    return _escape_unprintable(json.dumps(text, ensure_ascii=False))


def _show(value: Any, limit: int | None = _MAX_SHOWN) -> str:
    """A one-line rendering of a value, cut to `limit` characters (offending values in messages)."""
    try:
        shown = json.dumps(value, ensure_ascii=False)
    except Exception:  # not JSON (a set, bytes, a cycle, ...): rendering must never fail
        shown = repr(value)
    shown = _escape_unprintable(shown)
    return shown if limit is None or len(shown) <= limit else shown[: limit - 3] + "..."


def _show_pattern(source: Any) -> str:
    """A regex between slashes, as `describe` shows it, so backslashes are not doubled."""
    return f"/{_escape_unprintable(source)}/" if isinstance(source, str) else _show(source)


def _show_typed(value: Any) -> str:
    return f"{type(value).__name__} {_show(value)}"
