"""Content parsers: turn a region's body text into the field's value.

In:  the body text of one region and the field's `content_args` dict.
Out: the parsed value (str, int, float, bool, any JSON value, a dict for
     xml-inline and kv-lines, a list of calls for python-call-list).
Guaranteed: for every input, the same value (and type) or the same exception class as
the reference content parser of the same name in transformers 5.25.0
(`chat_parsing.content_parsers`), quirks included; each quirk is named where it
happens. Error messages name the parser and quote the offending text. `python-call-list`
(runtime/python_call_list.py) and xml-inline's `value_parser_by` are transformers 5.25's, error
messages included.

Parsers are looked up by their template name in `PARSERS`; `STREAMABLE` lists the
ones whose region chunks are final text (not dirty). Patterns use the `regex`
module, never `re`, because its `\\w` is the one the reference uses.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache

from ._lazy import regex_module

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from typing import Any

# A tag finder yields, for each tag match in order, the match's groupdict.
TagFinder = Callable[[str], Iterable[dict]]


def parse_text(text: str, args: dict) -> str:
    """The body itself, stripped of surrounding whitespace unless `strip` is falsy."""
    return text.strip() if args.get("strip", True) else text


def text_value(body: str, captures: dict[str, str]) -> str:
    """The value of a field with `content: "text"` and no `content_args` or transform: the body,
    stripped. Generated modules share this one function instead of writing it per field."""
    return body.strip()


def parse_int(text: str, args: dict) -> int:
    """`int()` of the (stripped) body; raises ValueError on non-integer text."""
    return int(parse_text(text, args))


def parse_float(text: str, args: dict) -> float:
    """`float()` of the (stripped) body; accepts what Python accepts (`nan`, `1e3`, ...)."""
    return float(parse_text(text, args))


def parse_bool(text: str, args: dict) -> bool:
    """True only for "true" or "1" (any case, after strip); every other text is False."""
    return parse_text(text, args).lower() in ("true", "1")


# --- json ------------------------------------------------------------------------
# With `string_delims`, each custom-delimited string is first swapped for a token
# built from two control characters that real model output never contains; the token
# survives the key-quoting rewrite untouched, then becomes a standard JSON string.
_TOKEN_OPEN, _TOKEN_CLOSE = "\x01", "\x02"
# `unquoted_keys` (reference `_json`, 5.24): a bare `\w+` key right after `{` or `,` is quoted,
# with any whitespace around it kept (`{ a : 1}`). A whole quoted string is matched first and
# put back as it is, so key-like text inside a value (`{b: "c,d:e"}`) is never rewritten. An
# unterminated string does not match, and the scan goes on inside it. Quirk kept: a key after
# `[` or `:` stays bare (`[a: 1]` is not JSON). `regex`'s \s and \w, as the reference.
# The reference is one `regex.sub` of `"(?:\\.|[^"\\])*"|(?<=[{,])(\s*)(\w+)(\s*):`; here
# its two alternatives are run apart (`_quote_bare_keys`), which keeps the time linear, and the
# char before a key is taken, not looked behind at, so that a search skips to `"`, `{` and `,` in
# C (a key's match ends with ":", and a skipped string with `"`: the char before the next key is
# never inside the last match). Groups: `{` or `,` and spaces, the key, spaces and ":".
_QUOTE_OR_KEY = r'"|([{,]\s*)(\w+)(\s*:)'
_STRING_BODY = r'(?:\\.|[^"\\])*'  # `.` is not DOTALL: a backslash before "\n" ends it


def _token(index: int) -> str:
    return f"{_TOKEN_OPEN}{index}{_TOKEN_CLOSE}"


def _hide_delimited_strings(text: str, string_delims: Any) -> tuple[str, list[str]]:
    """Swap every `open ... close` string (shortest match, any characters) for a token.

    Pairs are applied one after another, each to the output of the previous one, as
    the reference does; the returned list holds the raw strings in token order."""
    strings: list[str] = []

    def to_token(match: Any) -> str:
        strings.append(match.group(1))
        return _token(len(strings) - 1)

    for open_delim, close_delim in string_delims:
        text = _delimited_string_pattern(open_delim, close_delim).sub(to_token, text)
    return text, strings


@lru_cache(maxsize=64)
def _delimited_string_pattern(open_delim: str, close_delim: str) -> Any:
    """`open(.*?)close`, compiled once per pair (a process sees a handful of templates)."""
    regex = regex_module()
    return regex.compile(
        regex.escape(open_delim) + r"(.*?)" + regex.escape(close_delim), regex.DOTALL
    )


# `_QUOTE_OR_KEY` in `re` for an ASCII text, on which `regex`'s \s and \w are these classes
# (`re`'s own \s also takes \x1c-\x1f): `re` answers a search in a fraction of the time.
_ASCII_QUOTE_OR_KEY = r'"|([{,][\t\n\x0b\x0c\r ]*)([A-Za-z0-9_]+)([\t\n\x0b\x0c\r ]*:)'


@lru_cache(maxsize=2)
def _unquoted_key_patterns(ascii_text: bool) -> tuple[Any, Any]:
    if ascii_text:
        import re

        return re.compile(_ASCII_QUOTE_OR_KEY), re.compile(_STRING_BODY)
    regex = regex_module()
    return regex.compile(_QUOTE_OR_KEY), regex.compile(_STRING_BODY)


def _quote_bare_keys(text: str) -> str:
    """The reference's key rewrite (see `_QUOTE_OR_KEY`), in linear time.

    Its `sub` tries the string alternative at every quote, and an unterminated string is read to
    its end from each quote inside it: `"\\"\\"\\"...` costs quadratic time there. A string's body
    is read the same way from any start (an escape takes two chars), so when the body read from
    a quote fails at `dead_until`, every quote before that point sat inside an escape of it, and
    the body read from there joins the same path and fails at the same point: those quotes are
    skipped without reading. Keys inside a failed string are still quoted, as the reference does.
    """
    finder, string_body = _unquoted_key_patterns(text.isascii())
    if '"' not in text:
        # No string to skip (Gemma's bodies, whose strings are tokens by now): every match is a
        # key, and one `split` finds them all in C, as the loop below would one by one.
        pieces = finder.split(text)  # [text, "{" or "," and spaces, key, spaces and ":", text...]
        pieces[2::4] = map('"{}"'.format, pieces[2::4])
        return "".join(pieces)
    parts: list[str] = []
    copied = 0  # text[:copied] is in `parts`
    position = 0
    dead_until = -1
    length = len(text)
    while (found := finder.search(text, position)) is not None:
        start = found.start()
        key = found.group(2)
        if key is not None:
            parts += (text[copied:start], found.group(1), '"', key, '"', found.group(3))
            copied = position = found.end()
            continue
        if start >= dead_until:
            end = string_body.match(text, start + 1).end()
            if end < length and text[end] == '"':
                position = end + 1  # a whole string: kept as it is
                continue
            dead_until = end  # no closing quote: a backslash before "\n", or the end
        position = start + 1
    if not parts:
        return text
    parts.append(text[copied:])
    return "".join(parts)


def plain_pair(string_delims: Any) -> tuple[str, str] | None:
    """The one [open, close] pair of non-empty strings in `string_delims`, else None."""
    if type(string_delims) is list and len(string_delims) == 1:
        pair = string_delims[0]
        if type(pair) in (list, tuple) and len(pair) == 2:
            open_delim, close_delim = pair
            if type(open_delim) is str and type(close_delim) is str and open_delim and close_delim:
                return open_delim, close_delim
    return None


def _rewrite_with_one_pair(text: str, pair: tuple[str, str], unquoted_keys: bool) -> str:
    """`_hide_delimited_strings`, the key rewrite and `_restore_strings` for one plain pair, with
    `str.find` instead of a regex per string and one pass to put the strings back.

    Same result: `open(.*?)close` matches at the first `open` that has a `close` after it, and if
    the first has none, no later one has. Every string becomes the same two-char token; the key
    rewrite neither changes a token nor reads its index as a key (a key needs `{`, `,` or
    whitespace before its word, and a token's index follows "\x01"), and a quoted string it
    skips reads a token as any other chars, so the tokens come back in order, each as
    `json.dumps` of its string.
    """
    open_delim, close_delim = pair
    if open_delim == close_delim:
        # One quote both ways (Gemma's `<|"|>`): the matches pair its occurrences in order, the
        # ones `split` finds; an odd one out stays in the text.
        outside = text.split(open_delim)
        if len(outside) % 2 == 0:
            outside[-2:] = [outside[-2] + open_delim + outside[-1]]
        strings = outside[1::2]
        del outside[1::2]
        return _put_back_strings(outside, strings, unquoted_keys)
    outside = []
    strings = []
    position = 0
    while True:
        start = text.find(open_delim, position)
        if start < 0:
            break
        end = text.find(close_delim, start + len(open_delim))
        if end < 0:
            break
        outside.append(text[position:start])
        strings.append(text[start + len(open_delim) : end])
        position = end + len(close_delim)
    outside.append(text[position:])
    return _put_back_strings(outside, strings, unquoted_keys)


def _put_back_strings(outside: list[str], strings: list[str], unquoted_keys: bool) -> str:
    """The text around the strings (one piece more than `strings`, none holding a token char),
    keys quoted when `unquoted_keys`, with each string back as `json.dumps` writes it."""
    if not strings:
        return _quote_bare_keys(outside[0]) if unquoted_keys else outside[0]
    if unquoted_keys:
        token = _TOKEN_OPEN + _TOKEN_CLOSE
        outside = _quote_bare_keys(token.join(outside)).split(token)
    parts = outside + outside[1:]  # (the length of the result)
    parts[0::2] = outside
    parts[1::2] = map(_encode_json_string or _json_string_encoder(), strings)
    return "".join(parts)


def _restore_strings(text: str, strings: list[str]) -> str:
    # One replace per token, in order: a later string_delims pair can rewrite an
    # earlier token, and the reference then leaves that text as it is.
    import json

    for index, raw in enumerate(strings):
        text = text.replace(_token(index), json.dumps(raw))
    return text


def _json_error() -> type[ValueError]:
    import json  # (imported only where a value fails to parse)

    return json.JSONDecodeError


def _holds_sentinels(text: str) -> ValueError:
    return ValueError(
        "json: input contains reserved sentinel characters (\\x01/\\x02); cannot parse "
        f"safely with string_delims.\nContent: {text!r}"
    )


def _not_json(text: str, err: Exception) -> ValueError:
    return ValueError(
        f"json parser could not parse region as JSON.\nContent: {text!r}\nError: {err}"
    )


# `json.dumps` of a str (`json.encoder.encode_basestring_ascii`), looked up on first use.
_encode_json_string: Callable[[str], str] | None = None


def _json_string_encoder() -> Callable[[str], str]:
    global _encode_json_string
    import json  # (json imports json.encoder; `from json.encoder import` costs 0.5 us a call)

    _encode_json_string = json.encoder.encode_basestring_ascii
    return _encode_json_string


# The scanner `json.loads` runs (its decoder's `scan_once`), created on first use.
_scan_json_value: Callable[[str, int], tuple[Any, int]] | None = None
_JSON_WHITESPACE = " \t\n\r"  # what `json.loads` skips around a document (`WHITESPACE`)


def _json_scanner() -> Callable[[str, int], tuple[Any, int]]:
    global _scan_json_value
    import json.scanner

    # What `JSONDecoder.__init__` sets as its `scan_once`: the default decoder's, as `loads` runs.
    decoder = json.JSONDecoder()
    _scan_json_value = json.scanner.make_scanner(decoder)  # type: ignore[arg-type]  # (typeshed)
    return _scan_json_value


def json_loads(text: str) -> Any:
    """`json.loads(text)`: its value, or its exception (with its message).

    A document is JSON whitespace, one value, JSON whitespace; the value read from its first
    char ends where it ends whatever follows it, so the scanner `json.loads` runs gives the same
    value on the text stripped of that whitespace, without `loads`'s and `decode`'s steps around
    it (half the time of a tool call's arguments). On any failure (a byte-order mark, extra
    data, bad JSON, a number too long), `json.loads` itself runs on `text` to raise what it
    raises."""
    if type(text) is str:  # (else `json.loads` says what it takes: a value group may be None)
        document = text.strip(_JSON_WHITESPACE)
        try:
            value, end = (_scan_json_value or _json_scanner())(document, 0)
        except (StopIteration, ValueError, RecursionError):
            end = -1
        if end == len(document):
            return value
    import json

    return json.loads(text)


def parse_json(text: str, args: dict) -> Any:
    """JSON, with the reference's dialect options for model-emitted near-JSON.

    `string_delims` [[open, close], ...]: custom string quotes (Gemma 4's `<|"|>`).
    `unquoted_keys`: quote bare `\\w+` keys (after `{` or `,` and optional whitespace, never
    inside a quoted string).
    `allow_non_json`: on a parse failure return the stripped text instead of raising.
    """
    if type(args) is dict and not args:  # no dialect option (most templates): JSON or an error
        try:
            return json_loads(text)
        except _json_error() as err:
            raise _not_json(text, err) from err
    string_delims = args.get("string_delims", [])
    if string_delims and (_TOKEN_OPEN in text or _TOKEN_CLOSE in text):
        raise _holds_sentinels(text)
    pair = plain_pair(string_delims)
    if type(string_delims) is list and not string_delims:  # no dialect strings, the common case
        rewritten = _quote_bare_keys(text) if args.get("unquoted_keys", False) else text
    elif pair is not None:
        rewritten = _rewrite_with_one_pair(text, pair, args.get("unquoted_keys", False))
    else:
        rewritten, strings = _hide_delimited_strings(text, string_delims)
        if args.get("unquoted_keys", False):
            rewritten = _quote_bare_keys(rewritten)
        rewritten = _restore_strings(rewritten, strings)
    return _json_of_rewrite(text, rewritten, args)


def parse_json_one_pair(text: str, args: dict, open_delim: str, close_delim: str) -> Any:
    """`parse_json(text, args)` for `args` whose `string_delims` is one plain pair, [open_delim,
    close_delim] (the compiler read it with `plain_pair`; Gemma's `<|"|>`): the same value or
    error, without reading `args` for the pair on every call."""
    if _TOKEN_OPEN in text or _TOKEN_CLOSE in text:
        raise _holds_sentinels(text)
    pair = (open_delim, close_delim)
    rewritten = _rewrite_with_one_pair(text, pair, args.get("unquoted_keys", False))
    return _json_of_rewrite(text, rewritten, args)


def _json_of_rewrite(text: str, rewritten: str, args: dict) -> Any:
    """The value of a dialect body `text` rewritten as JSON, or `parse_json`'s error for it."""
    try:
        return json_loads(rewritten)
    except _json_error() as err:
        if args.get("allow_non_json"):
            return parse_text(text, args)
        if rewritten == text:
            raise _not_json(text, err) from err
        raise ValueError(
            "json: could not parse after dialect transforms.\n"
            f"Original: {text!r}\nTransformed: {rewritten!r}\nError: {err}"
        ) from err


# --- nested value parsers ----------------------------------------------------------


def _parse_value(raw: Any, value_parser: Any) -> Any:
    """Run one xml-inline / kv-lines value through its `value_parser`, if any."""
    if value_parser is None:
        return raw
    return parse_content(value_parser.get("name", "text"), raw, value_parser.get("args", {}))


def _regex_tag_finder(tag_pattern: Any) -> TagFinder:
    def find(text: str) -> Iterable[dict]:
        regex = regex_module()
        if type(tag_pattern) is str:
            # Compiled once per process: `regex.finditer(pattern, ...)` looks it up in regex's
            # own cache on every call, which costs more than reading a few tags.
            matches = _tag_regex(tag_pattern).finditer(text)
        else:
            matches = regex.finditer(tag_pattern, text, flags=regex.DOTALL)  # its own error
        for match in matches:
            yield match.groupdict()

    return find


@lru_cache(maxsize=64)
def _tag_regex(tag_pattern: str) -> Any:
    regex = regex_module()
    return regex.compile(tag_pattern, regex.DOTALL)


def _value_parser_by(args: dict) -> tuple[str | None, dict]:
    """xml-inline's `value_parser_by` as (group, parsers by capture); (None, {}) without one.

    A value that is not a dict fails on its `.get`, with AttributeError, as in the reference."""
    value_parser_by = args.get("value_parser_by")
    if value_parser_by is None:
        return None, {}
    group, parsers = value_parser_by.get("group"), value_parser_by.get("parsers")
    if not isinstance(group, str) or not isinstance(parsers, dict):
        raise ValueError(
            "xml-inline: 'value_parser_by' must be a dict with 'group' (a named group in "
            "tag_pattern) and 'parsers' (a dict mapping what that group captures to a value "
            f"parser). Got: {value_parser_by!r}"
        )
    return group, parsers


def parse_xml_inline(text: str, args: dict, tag_finder: TagFinder | None = None) -> dict:
    """Shallow XML-like tags -> dict, one entry per `tag_pattern` match.

    `tag_pattern` (required) is a regex with named groups `key` and `value`; a match
    whose `key` group is absent or did not participate raises ValueError. A pattern
    without a `value` group gives "" (quirk: a `value` group that did not participate
    gives None, which then goes to the `value_parser` as is). `value_parser`
    {"name", "args"} parses each value; `merge_duplicates` collects a repeated key's
    values into a list, otherwise the last value wins.

    `value_parser_by` {"group": name, "parsers": {capture: value parser}} (5.25) picks each
    value's parser by what another named group of `tag_pattern` captured (DeepSeek V3.2's DSML
    `string="true|false"`); a capture without an entry, or a group that did not take part, falls
    back to `value_parser`. Its shape is checked before any tag is read, the group's existence
    at the first tag, both with the reference's messages.

    `tag_finder` replaces the regex search (the compiler passes a linear-time matcher
    for the same pattern); it must yield each match's groupdict in order.
    """
    tag_pattern = args.get("tag_pattern")
    if tag_pattern is None:
        raise ValueError("xml-inline: 'tag_pattern' content_arg is required")
    value_parser = args.get("value_parser")
    merge_duplicates = args.get("merge_duplicates", False)
    by_group, parsers_by_capture = _value_parser_by(args)
    find_tags = tag_finder if tag_finder is not None else _regex_tag_finder(tag_pattern)

    out: dict[str, Any] = {}
    merged: set[str] = set()  # keys whose value is already the list of their values
    for groups in find_tags(text):
        key = groups.get("key")
        if key is None:
            raise ValueError(
                f"xml-inline: tag_pattern must have a named group 'key'. Pattern: {tag_pattern}"
            )
        parser = value_parser
        if by_group is not None:
            if by_group not in groups:
                raise ValueError(
                    f"xml-inline: value_parser_by names group '{by_group}', which tag_pattern "
                    f"does not define. Pattern: {tag_pattern}"
                )
            parser = parsers_by_capture.get(groups[by_group], value_parser)
        value = _parse_value(groups.get("value", ""), parser)
        if key in out and merge_duplicates:
            # The first repeat wraps the first value, whatever its type (5.24: a first value that
            # is a list, `<a>[1]</a><a>2</a>` with json values, gives [[1], 2]; 5.23 extended it).
            if key not in merged:
                out[key] = [out[key]]
                merged.add(key)
            out[key].append(value)
        else:
            out[key] = value
    return out


def parse_python_call_list(text: str, args: dict) -> list[dict]:
    """`[name(keyword=value, ...), ...]` -> `[{"name": ..., "arguments": {...}}, ...]`; `args` is
    not read. The reader lives in runtime/python_call_list.py, imported on first use."""
    return _python_call_list_reader()(text, args)


@lru_cache(maxsize=1)
def _python_call_list_reader() -> Callable[[str, dict], list[dict]]:
    # Once: a `from ... import` statement costs half a microsecond on every call.
    from .python_call_list import parse_python_call_list

    return parse_python_call_list


def parse_kv_lines(text: str, args: dict) -> dict:
    """`key<kv_sep>value` lines -> dict; lines without `kv_sep` (or empty) are skipped.

    `line_sep` (default newline) and `kv_sep` (default ":") split lines and pairs
    (only the first `kv_sep` counts); `strip` applies to the line, the key and the
    value; `value_parser` parses each value; a repeated key keeps its last value.
    """
    line_sep = args.get("line_sep", "\n")
    kv_sep = args.get("kv_sep", ":")
    value_parser = args.get("value_parser")

    out: dict[str, Any] = {}
    for line in text.split(line_sep):
        line = parse_text(line, args)
        if not line or kv_sep not in line:
            continue
        key, value = line.split(kv_sep, 1)
        out[parse_text(key, args)] = _parse_value(parse_text(value, args), value_parser)
    return out


PARSERS: dict[str, Callable[..., Any]] = {
    "text": parse_text,
    "int": parse_int,
    "float": parse_float,
    "bool": parse_bool,
    "json": parse_json,
    "xml-inline": parse_xml_inline,
    "kv-lines": parse_kv_lines,
    "python-call-list": parse_python_call_list,
}

# Parsers whose value is the body text itself (modulo strip and a cast): their region
# chunks are final text, so they stream with dirty=False.
STREAMABLE: frozenset[str] = frozenset({"text", "int", "float", "bool"})

# Parsers whose syntax already tells a quoted string from a number, boolean, null, list or dict:
# schema coercion leaves a parameter whose schema allows "string" as the parser typed it (5.25's
# `TYPED_STRUCTURED_PARSERS`; `coerce.coerce_tool_calls(typed=True)`): `"u": "007"` stays "007"
# for an integer-or-string parameter, `"o": "null"` stays "null" for an Optional[str] one.
TYPED_STRUCTURED_PARSERS: frozenset[str] = frozenset({"json", "python-call-list"})


def parse_content(name: str, text: str, args: dict) -> Any:
    """Parse `text` with the content parser called `name`.

    An unknown name raises KeyError, as the reference's dict lookup does (template
    loading rejects unknown top-level names earlier; nested `value_parser` names are
    only checked here)."""
    try:
        parser = PARSERS[name]
    except KeyError:
        raise KeyError(f"unknown content parser {name!r}. Available: {sorted(PARSERS)}") from None
    return parser(text, args)


__all__ = [
    "PARSERS",
    "STREAMABLE",
    "TYPED_STRUCTURED_PARSERS",
    "TagFinder",
    "parse_bool",
    "parse_content",
    "parse_float",
    "parse_int",
    "parse_json",
    "parse_json_one_pair",
    "parse_kv_lines",
    "parse_python_call_list",
    "parse_text",
    "parse_xml_inline",
]
