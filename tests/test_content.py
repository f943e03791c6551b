"""Differential tests: chatparse.runtime.content against the reference content parsers.

Every check runs the reference (transformers 5.25.0 `chat_parsing.content_parsers`) and
chatparse on the same text and args and compares the value with exact types (1, 1.0 and
True differ; dict key order counts) or the exception class and the start of its message.
"""

from __future__ import annotations

import functools
import json

import pytest
import regex
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support import outcome as _outcome
from support import typed

from chatparse.runtime import content

pytest.importorskip(
    "transformers", reason="needs the reference, transformers 5.25.0 (.ci/install-oracle)"
)
from transformers.utils.chat_parsing import content_parsers as ref_cp

SETTINGS = settings(max_examples=200, derandomize=True, deadline=None)

# Messages are compared by their first 40 chars: chatparse's may say more after them.
outcome = functools.partial(_outcome, message_chars=40)


def ours(name, text, args):
    return outcome(content.PARSERS[name], text, args)


def reference(name, text, args):
    return outcome(ref_cp.CONTENT_PARSERS[name], text, args)


def assert_same(mine, ref):
    """Same value, or same exception class; message heads agree except for the bare
    KeyError of an unknown parser name, whose reference text is just the name."""
    if mine[0] == "raise" and ref[0] == "raise" and mine[1] == ref[1] == "KeyError":
        return
    assert mine == ref


# --- corpus: the reference test file's fixtures, re-expressed as (parser, text, args) ---

GEMMA4_ARGS = {"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']]}
QWEN3_ARGS = {
    "tag_pattern": r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
    "value_parser": {"name": "json", "args": {"allow_non_json": True}},
}
QWEN3_RAW_ARGS = {"tag_pattern": r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>"}
CITE_ARGS = {
    "tag_pattern": r"<(?P<key>\w+)>\s*(?P<value>.*?)\s*</\1>",
    "value_parser": {"name": "json", "args": {"allow_non_json": True}},
}

CORPUS = [
    ("text", "  I should call a tool.  ", {}),
    ("text", " Tokyo, probably.", {"strip": False}),
    ("int", "42", {}),
    ("int", " 42\n", {"strip": False}),
    ("int", "4.2", {}),
    ("float", "1e3", {}),
    ("float", "nan", {}),
    ("float", "abc", {}),
    ("bool", " TRUE ", {}),
    ("bool", "1", {}),
    ("bool", "yes", {}),
    ("bool", " true", {"strip": False}),
    (
        "json",
        '[\n    {"tool_call_id": "0", "tool_name": "simple_tool", '
        '"parameters": {"temperature_format": "Celsius"}}\n]',
        {},
    ),
    ("json", '\n{"name": "get_current_temperature", "arguments": {"location": "Paris"}}\n', {}),
    ("json", '{"name":"get_weather","args":{"city":"Tokyo","units":"C"}}', {}),
    (
        "json",
        '{detail_level:0,location:<|"|>Paris, France<|"|>,unit:<|"|>celsius<|"|>}',
        GEMMA4_ARGS,
    ),
    (
        "json",
        '{bool_value:true,list_value:[<|"|>foo<|"|>,<|"|>bar<|"|>],null_value:null,'
        'number_value:1,string_value:<|"|>foo<|"|>,struct_value:{foo:<|"|>bar<|"|>}}',
        GEMMA4_ARGS,
    ),
    ("json", '{a:1,b:<|"|>bar<|"|>}', GEMMA4_ARGS),
    ("json", '{a:<|"|>say "hi"\n<|"|>}', GEMMA4_ARGS),
    ("json", "celsius", {"allow_non_json": True}),
    ("json", "007", {"allow_non_json": True}),
    ("json", "1.50", {"allow_non_json": True}),
    ("json", "{}", {}),
    ("json", "not json", {}),
    (
        "xml-inline",
        '\n<parameter=locations>\n[{"country": "France", "city": "Paris"}]\n'
        "</parameter>\n<parameter=temp_units>\ncelsius\n</parameter>\n</function>\n",
        QWEN3_ARGS,
    ),
    (
        "xml-inline",
        "\n<parameter=hour>\n007\n</parameter>\n<parameter=enabled>\ntrue\n</parameter>\n"
        "<parameter=label>\nwake up\n</parameter>\n</function>\n",
        QWEN3_ARGS,
    ),
    (
        "xml-inline",
        "\n<parameter=hour>\n7\n</parameter>\n<parameter=hour>\n9\n</parameter>\n",
        {**QWEN3_RAW_ARGS, "merge_duplicates": True},
    ),
    ("xml-inline", "<name=foo><age=10>", {"tag_pattern": r"<(?P<key>\w+)=(?P<value>[^>]+)>"}),
    ("xml-inline", "<label>1.50</label><hour>7</hour>", CITE_ARGS),
    ("kv-lines", "name: alice\nage: 30", {}),
    ("kv-lines", "hour: 7\nenabled: true\n", {}),
    ("kv-lines", "k1: v1\nk2: v2", {"value_parser": {"name": "int"}}),
    (
        "kv-lines",
        "a=1;b=x;;c",
        {
            "line_sep": ";",
            "kv_sep": "=",
            "value_parser": {"name": "json", "args": {"allow_non_json": True}},
        },
    ),
]


@pytest.mark.parametrize(("name", "text", "args"), CORPUS)
def test_reference_corpus(name, text, args):
    assert_same(ours(name, text, args), reference(name, text, args))
    assert_same(
        outcome(content.parse_content, name, text, args),
        outcome(ref_cp.parse_content, text, name, args),
    )


def test_parser_table_and_streamable_set_match_reference():
    assert list(content.PARSERS) == list(ref_cp.CONTENT_PARSERS)
    assert content.STREAMABLE == ref_cp.STREAMABLE_PARSERS


def test_unknown_nested_value_parser_raises_key_error_naming_it():
    args = {"value_parser": {"name": "nope"}}
    assert reference("kv-lines", "a: 1", args)[:2] == ("raise", "KeyError")
    with pytest.raises(KeyError, match="nope"):
        content.parse_kv_lines("a: 1", args)


# --- quirks we copy on purpose ------------------------------------------------------


def test_unquoted_keys_allow_whitespace_around_the_key():
    """5.24: a bare key after `{` or `,` may have whitespace before and after it (5.23 quoted a
    key only right after `{` or `,` and right before `:`, so these raised)."""
    args = {"unquoted_keys": True}
    for text in ("{ a:1}", "{a:1, b:2}", "{a :1}", "{\n  a : 1 ,\n\tb\n:2}", "{a:1,b:2}"):
        assert ours("json", text, args) == reference("json", text, args)
    assert ours("json", "{ a : 1}", args) == ("ok", typed({"a": 1}))
    assert ours("json", "{\n  a : 1 ,\n\tb\n:2}", args) == ("ok", typed({"a": 1, "b": 2}))


def test_quirk_unquoted_keys_only_after_brace_or_comma():
    """Kept in 5.24: a bare key after `[` or `:` is left alone, so the text stays invalid JSON."""
    args = {"unquoted_keys": True}
    for text in ("[a:1]", "{x:[a:1]}", "{x: a:1}"):
        mine = ours("json", text, args)
        assert mine == reference("json", text, args)
        assert mine[:2] == ("raise", "ValueError")


@pytest.mark.parametrize(
    "text",
    [
        '{a: 1, b: "c,d:e"}',  # the case: key-like text inside a value
        '{"a": "x,b:1"}',
        '{a: "{b:1}", c: 2}',
        '{a: "q\\",b:1", c: "\\\\"}',  # escaped quote and backslash inside the string
        '{a: "x, b:1}',  # unterminated: the scan goes on inside it and quotes `b`
        '{a: "x\\\n,b:1"}',  # backslash-newline ends the string match (`.` is not DOTALL)
        '{a: "ok", "b": "x"}',
    ],
)
def test_unquoted_keys_leave_quoted_strings_alone(text):
    """5.24: a whole "..." string is skipped, so key-like text inside a value is not rewritten
    (5.23 rewrote `,b:` inside a string, and `{a: 1, b: "c,d:e"}` raised)."""
    args = {"unquoted_keys": True}
    assert ours("json", text, args) == reference("json", text, args)


def _whole_outcome(parser, text, args):
    """The value, or the exception class and its whole message: for a text that does not parse,
    the message quotes the rewritten text, so the key rewrite itself is compared."""
    try:
        return ("ok", typed(parser(text, args)))
    except Exception as error:  # noqa: BLE001 - class and message are what is compared
        return ("raise", type(error).__name__, str(error))


@SETTINGS
@given(
    text=st.lists(
        # \x1c and \x0b: ASCII chars `re`'s \s takes and `regex`'s does not, and both do.
        st.sampled_from(
            [
                '"',
                "\\",
                "\n",
                "{",
                ",",
                ":",
                "a",
                "b_1",
                " ",
                "}",
                "[",
                '<|"|>',
                "é",
                "\x1c",
                "\x0b",
            ]
        ),
        max_size=30,
    ).map("".join),
    string_delims=st.sampled_from([[], [['<|"|>', '<|"|>']], [["<<", ">>"], ['<|"|>', '<|"|>']]]),
)
@example(text='{a: "' + '\\"' * 5 + "\n, b: 1", string_delims=[])
@example(text="{\x1ca: 1, \x0bb: 2}", string_delims=[])
@example(text='{"\\\n, a:"x", b:"\\\\"}', string_delims=[])
def test_unquoted_keys_rewrite_is_the_references_on_quotes_and_backslashes(text, string_delims):
    """Quotes, escapes, backslash-newlines and unterminated strings in every order: the rewritten
    text (quoted whole in the error message when it does not parse) is the reference's."""
    args = {"unquoted_keys": True, "string_delims": string_delims}
    assert _whole_outcome(content.parse_json, text, args) == _whole_outcome(
        ref_cp._json, text, args
    )


@SETTINGS
@given(
    text=st.lists(
        # No `"` but inside the custom quote: the key rewrite's one-`split` path, where every
        # match is a key (and a custom quote left unpaired brings its `"` back: the loop).
        st.sampled_from(
            ['<|"|>', "{", ",", ":", "a", "b_1", " ", "\n", "}", "[", "é", "\x0b", "1"]
        ),
        max_size=40,
    ).map("".join),
    unquoted_keys=st.booleans(),
)
@example(text='{a:<|"|>x<|"|>,b:<|"|>y', unquoted_keys=True)  # an odd custom quote
@example(text='{ a :1,\x0bb\n:<|"|>é<|"|>}', unquoted_keys=True)
def test_custom_quote_pairs_and_bare_keys_are_the_references(text, unquoted_keys):
    """Gemma's dialect, one custom quote both ways: its occurrences pair in order, and with no
    `"` left every bare key is quoted at once: the value, or the error quoting the rewritten
    text, is the reference's."""
    args = {"unquoted_keys": unquoted_keys, "string_delims": [['<|"|>', '<|"|>']]}
    assert _whole_outcome(content.parse_json, text, args) == _whole_outcome(
        ref_cp._json, text, args
    )


@SETTINGS
@given(
    text=st.lists(
        st.sampled_from(
            ['"', "\\", "\n", "{", ",", ":", "a", "b_1", " ", "}", "[", '<|"|>', "<e>", "\x01", "1"]
        ),
        max_size=30,
    ).map("".join),
    pair=st.sampled_from([('<|"|>', '<|"|>'), ("<e>", "</e>")]),
    options=st.sampled_from(
        [{}, {"unquoted_keys": True}, {"allow_non_json": True, "strip": False}]
    ),
)
def test_json_with_its_one_string_pair_given_is_parse_json(text, pair, options):
    """A module whose json `string_delims` is one plain pair calls `parse_json_one_pair` with it:
    the same value, or the same error and message, as `parse_json` reading it from the args."""
    args = {"string_delims": [list(pair)], **options}
    assert content.plain_pair(args["string_delims"]) == pair
    assert _whole_outcome(
        lambda text, args: content.parse_json_one_pair(text, args, *pair), text, args
    ) == _whole_outcome(content.parse_json, text, args)


def _loads_outcome(loads, text):
    try:
        return ("ok", typed(loads(text)))
    except (ValueError, TypeError, RecursionError) as error:
        return ("raise", type(error).__name__, str(error))


@SETTINGS
@given(
    text=st.lists(
        st.sampled_from(
            [" ", "\t", "\n", "\r", "\x0c", "\x0b", "\x1c", "\xa0", "\u2028", "\ufeff"]
            + ["{", "}", "[", "]", ",", ":", '"', '"a"', "1", "-0", "2.5e3", "1" * 5000]
            + ["true", "null", "NaN", "x", "\\", "\x00"]
        ),
        max_size=12,
    ).map("".join)
)
@example(text=" \x0c1")  # `str.strip` would take the form feed: json.loads does not
@example(text="\ufeff{}")
@example(text="1 2")
@example(text="[" * 100_000)
@example(text='\r\n {"a": [1, 2.5, "x"]} \t')
def test_json_loads_is_json_loads(text):
    """`content.json_loads`, the scanner on the text stripped of JSON whitespace, is `json.loads`:
    the same value (exact types, key order), or the same exception with the same message."""
    assert _loads_outcome(content.json_loads, text) == _loads_outcome(json.loads, text)


def test_json_loads_of_no_str_is_json_loads():
    for value in (None, 1, b'{"a": 1}', bytearray(b"[1]")):
        assert _loads_outcome(content.json_loads, value) == _loads_outcome(json.loads, value)


def test_unquoted_keys_rewrite_is_linear_time():
    """An unterminated string full of escaped quotes: the reference's `sub` reads it to the end
    from each quote (quadratic); chatparse reads it once. 8x the text stays well under 16x the
    CPU time (a quadratic would take about 64x)."""
    import time

    def cpu(n: int) -> float:
        text = '{a: "' + '\\"' * n
        best = float("inf")
        for _ in range(3):
            start = time.process_time()
            with pytest.raises(ValueError):
                content.parse_json(text, {"unquoted_keys": True})
            best = min(best, time.process_time() - start)
        return best

    small, large = cpu(20_000), cpu(160_000)
    assert large < 16 * max(small, 1e-3), (small, large)


def test_unquoted_keys_with_string_delims_and_quotes():
    """Gemma 4's dialect: custom string delimiters hide their strings first; a plain "..."
    string is still skipped by the key rewrite, and an unpaired delimiter's quote starts one."""
    for text in (
        '{a:<|"|>x,y:z<|"|>, b: "c,d:e", c:<|"|>"<|"|>}',
        '{ a :<|"|>v<|"|> , b : 1}',
        '{a:<|"|>v, b:1}',
        '{k:"<|"|>x<|"|>", m: 1}',
    ):
        assert ours("json", text, GEMMA4_ARGS) == reference("json", text, GEMMA4_ARGS)
    assert ours("json", '{a: 1, b: "c,d:e"}', GEMMA4_ARGS) == ("ok", typed({"a": 1, "b": "c,d:e"}))


def test_quirk_unquoted_keys_use_regex_word_class():
    # U+0301 is a word character for `regex` but not for `re`; "\u00b2" the other way round.
    for key in ("e\u0301", "x\u00b2"):
        text = "{" + key + ":1}"
        assert ours("json", text, {"unquoted_keys": True}) == reference(
            "json", text, {"unquoted_keys": True}
        )
    assert ours("json", "{e\u0301:1}", {"unquoted_keys": True}) == ("ok", typed({"e\u0301": 1}))


def test_quirk_string_delims_reject_sentinel_characters():
    for text in ('{a:<|"|>x\x01<|"|>}', "\x02"):
        mine = ours("json", text, GEMMA4_ARGS)
        assert mine == reference("json", text, GEMMA4_ARGS)
        assert mine[:2] == ("raise", "ValueError") and "sentinel" in mine[2]
    # Without string_delims the sentinels are just invalid JSON, not a special error.
    assert ours("json", "\x01", {}) == reference("json", "\x01", {})


def test_quirk_json_error_message_says_whether_dialect_rewrote_the_text():
    plain = ours("json", "{oops", {})
    rewritten = ours("json", "{oops:", {"unquoted_keys": True})
    assert plain == reference("json", "{oops", {})
    assert rewritten == reference("json", "{oops:", {"unquoted_keys": True})
    assert plain[2].startswith("json parser could not parse region")
    assert rewritten[2].startswith("json: could not parse after dialect")
    # Dialect options that change nothing give the plain message.
    assert ours("json", "{oops", {"unquoted_keys": True})[2] == plain[2]


def test_quirk_allow_non_json_returns_stripped_original_text():
    """The fallback is the *original* text (before any dialect rewrite), stripped per `strip`."""
    args = {"allow_non_json": True, **GEMMA4_ARGS}
    for text, strip in ((' {a:<|"|>x<|"|>', True), ("  007 ", True), ("  007 ", False)):
        mine = ours("json", text, {**args, "strip": strip})
        assert mine == reference("json", text, {**args, "strip": strip})
    assert ours("json", ' {a:<|"|>x<|"|>', args) == ("ok", typed('{a:<|"|>x<|"|>'))


def test_quirk_bool_is_true_only_for_true_or_1():
    for text in ("true", " TRUE\n", "1", "True", "yes", "on", "0", "false", "", " 1", "t"):
        mine = ours("bool", text, {})
        assert mine == reference("bool", text, {})
    assert ours("bool", "yes", {}) == ("ok", typed(False))
    assert ours("bool", " 1", {"strip": False}) == ("ok", typed(False))


def test_quirk_xml_inline_value_group_that_did_not_participate_gives_none():
    args = {"tag_pattern": r"<(?P<key>\w+)(?:=(?P<value>\w+))?>"}
    text = "<a=1><b>"
    assert ours("xml-inline", text, args) == reference("xml-inline", text, args)
    assert ours("xml-inline", text, args) == ("ok", typed({"a": "1", "b": None}))
    # ... and that None reaches the value parser as is (each parser fails its own way).
    for value_parser in (
        {"name": "text"},
        {"name": "json"},
        {"name": "int", "args": {"strip": False}},
        {"name": "text", "args": {"strip": False}},
        {"name": "json", "args": GEMMA4_ARGS},
    ):
        vp_args = {**args, "value_parser": value_parser}
        assert ours("xml-inline", text, vp_args) == reference("xml-inline", text, vp_args)


def test_quirk_xml_inline_without_value_group_gives_empty_string():
    args = {
        "tag_pattern": r"<(?P<key>\w+)/>",
        "value_parser": {"name": "json", "args": {"allow_non_json": True}},
    }
    assert ours("xml-inline", "<a/><b/>", args) == reference("xml-inline", "<a/><b/>", args)
    assert ours("xml-inline", "<a/>", args) == ("ok", typed({"a": ""}))


def test_quirk_xml_inline_missing_key_group_raises_only_when_a_tag_matches():
    args = {"tag_pattern": r"<(?P<name>\w+)>"}
    assert (
        ours("xml-inline", "no tags", args)
        == reference("xml-inline", "no tags", args)
        == ("ok", typed({}))
    )
    mine = ours("xml-inline", "<a>", args)
    assert mine == reference("xml-inline", "<a>", args)
    with pytest.raises(ValueError, match="named group 'key'"):
        content.parse_xml_inline("<a>", args)


def test_xml_inline_requires_tag_pattern():
    mine = ours("xml-inline", "<a>", {})
    assert mine == reference("xml-inline", "<a>", {})
    assert mine[:2] == ("raise", "ValueError") and "tag_pattern" in mine[2]


def test_merge_duplicates_wraps_a_first_value_that_is_a_list():
    """5.24: the first repeat wraps the first value whatever its type (5.23 extended a first value
    that was already a list in place, giving {"a": [1, 2, 3, [4]]} here)."""
    args = {
        "tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>",
        "value_parser": {"name": "json"},
        "merge_duplicates": True,
    }
    text = "<a>[1, 2]</a><a>3</a><b>1</b><b>2</b><a>[4]</a>"
    assert ours("xml-inline", text, args) == reference("xml-inline", text, args)
    assert ours("xml-inline", text, args) == ("ok", typed({"a": [[1, 2], 3, [4]], "b": [1, 2]}))
    for text in (
        "<a>[1]</a><a>2</a>",
        "<a>[]</a><a>[]</a>",
        "<a>[1]</a>",
        "<a>1</a><b>[2]</b><b>3</b>",
    ):
        assert ours("xml-inline", text, args) == reference("xml-inline", text, args)
    assert ours("xml-inline", "<a>[1]</a><a>2</a>", args) == ("ok", typed({"a": [[1], 2]}))


def test_repeated_key_without_merge_keeps_first_position_and_last_value():
    args = {"tag_pattern": r"<(?P<key>\w+)=(?P<value>\w*)>"}
    text = "<a=1><b=2><a=3>"
    assert (
        ours("xml-inline", text, args)
        == reference("xml-inline", text, args)
        == ("ok", typed({"a": "3", "b": "2"}))
    )


def test_tag_finder_replaces_the_regex_search():
    pattern = QWEN3_ARGS["tag_pattern"]
    text = "<parameter=a>\n1\n</parameter><parameter=b>x</parameter><parameter=a>[2]</parameter>"
    compiled = regex.compile(pattern, regex.DOTALL)
    calls = []

    def finder(body):
        calls.append(body)
        return (m.groupdict() for m in compiled.finditer(body))

    args = {**QWEN3_ARGS, "merge_duplicates": True}
    assert outcome(content.parse_xml_inline, text, args, tag_finder=finder) == reference(
        "xml-inline", text, args
    )
    assert calls == [text]
    # The finder's groupdicts are trusted as given: a finder that yields nothing gives {}.
    assert content.parse_xml_inline(text, args, tag_finder=lambda body: iter(())) == {}


def test_kv_lines_separator_errors_match_reference():
    for args in ({"line_sep": ""}, {"kv_sep": ""}, {"kv_sep": "", "line_sep": ";"}):
        mine = ours("kv-lines", "a: 1", args)
        assert mine == reference("kv-lines", "a: 1", args)
        assert mine[:2] == ("raise", "ValueError")


def test_invalid_args_types_fail_like_reference():
    cases = [
        ("json", "{}", {"string_delims": "ab"}),
        ("json", "{}", {"string_delims": [["<"]]}),
        ("json", "'x'", {"string_delims": [[1, 2]]}),
        ("xml-inline", "<a>", {"tag_pattern": "(?P<key>"}),
        ("kv-lines", "a: 1", {"value_parser": "json"}),
        ("kv-lines", "a: 1", {"value_parser": {"name": "json", "args": None}}),
    ]
    for name, text, args in cases:
        assert_same(ours(name, text, args), reference(name, text, args))


# --- property tests ------------------------------------------------------------------

TOKENS = [
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    '"',
    "'",
    " ",
    "\n",
    "\t",
    "\\",
    "a",
    "b",
    "key",
    "_x",
    "é",
    "e\u0301",
    "\u00b2",
    "\u0663",
    "1",
    "0",
    "-",
    "+",
    ".",
    "e",
    "3.5",
    "1_0",
    "true",
    "TRUE",
    "false",
    "null",
    "NaN",
    "Infinity",
    "yes",
    '<|"|>',
    "<<",
    ">>",
    "\x01",
    "\x02",
    "<",
    ">",
    "=",
    "/",
    ";",
    "<parameter=",
    "</parameter>",
    "<a>",
    "</a>",
]
texts = st.one_of(
    st.lists(st.sampled_from(TOKENS), max_size=24).map("".join),
    st.text(max_size=12),
)
strip_args = st.fixed_dictionaries({}, optional={"strip": st.booleans()})

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(alphabet='ab "\\\n,:{}é', max_size=6),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b_1", "key", "x y", "é"]), inner, max_size=3),
    ),
    max_leaves=8,
)


def render_gemma(value, open_delim='<|"|>', close_delim='<|"|>'):
    """Gemma-4 style: bare keys, custom string delimiters, no spaces."""
    if isinstance(value, dict):
        items = ",".join(
            f"{k}:{render_gemma(v, open_delim, close_delim)}" for k, v in value.items()
        )
        return "{" + items + "}"
    if isinstance(value, list):
        return "[" + ",".join(render_gemma(v, open_delim, close_delim) for v in value) + "]"
    if isinstance(value, str):
        return open_delim + value + close_delim
    return json.dumps(value)


def render_bare(value, space=" "):
    """Bare keys with `space` around them and standard "..." strings (which may hold `,k:` and
    escaped quotes): the text 5.24's `unquoted_keys` rewrite reads differently from 5.23's."""
    if isinstance(value, dict):
        items = ",".join(f"{space}{k}{space}:{render_bare(v, space)}" for k, v in value.items())
        return "{" + items + "}"
    if isinstance(value, list):
        return "[" + ",".join(render_bare(v, space) for v in value) + "]"
    return json.dumps(value)


json_texts = st.one_of(
    texts,
    json_values.map(json.dumps),
    json_values.map(render_gemma),
    st.tuples(json_values, st.sampled_from(["", " ", "\n\t"])).map(lambda pair: render_bare(*pair)),
    st.tuples(json_values, st.sampled_from(["'", "<<"])).map(
        lambda pair: render_gemma(pair[0], pair[1], "'" if pair[1] == "'" else ">>")
    ),
)
json_args = st.fixed_dictionaries(
    {},
    optional={
        "unquoted_keys": st.booleans(),
        "string_delims": st.sampled_from(
            [
                [],
                None,  # falsy but not a list: the reference's loop decides what happens
                [['<|"|>', '<|"|>']],
                [["'", "'"]],
                [["<<", ">>"], ["'", "'"]],
                [["<<", ">>"]],
                [["aa", "aa"]],  # delimiters that overlap themselves
                [["aba", "aba"]],
                [["", "'"]],
                [["0", "x"]],
            ]
        ),
        "allow_non_json": st.booleans(),
        "strip": st.booleans(),
    },
)
value_parsers = st.sampled_from(
    [
        None,
        {"name": "json", "args": {"allow_non_json": True}},
        {"name": "json", "args": GEMMA4_ARGS},
        {"name": "json"},
        {"name": "int"},
        {"name": "bool"},
        {"name": "text", "args": {"strip": False}},
        {"args": {}},
        {"name": "kv-lines", "args": {"kv_sep": "="}},
        {"name": "nope"},
    ]
)
tag_patterns = st.sampled_from(
    [
        r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
        r"<(?P<key>\w+)=(?P<value>[^>]*)>",
        r"<(?P<key>\w+)(?:=(?P<value>\w+))?>",
        r"<(?P<key>\w+)>",
        r"<(?P<name>\w+)>(?P<value>.*?)</(?P=name)>",
        r"(?:<(?P<key>\w+)>|\[(?P<value>\w*)\])",
    ]
)
xml_args = st.fixed_dictionaries(
    {"tag_pattern": tag_patterns},
    optional={"value_parser": value_parsers, "merge_duplicates": st.booleans()},
)
xml_texts = st.one_of(
    texts,
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "hour", "é"]),
            st.one_of(json_texts, st.sampled_from(["7", "true", "x y"])),
        ),
        max_size=4,
    ).map(lambda pairs: "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in pairs)),
    st.lists(
        st.tuples(st.sampled_from(["a", "b"]), st.sampled_from(["", "1", "x"])), max_size=4
    ).map(lambda pairs: "".join(f"<{k}={v}>" if v else f"<{k}>" for k, v in pairs)),
)
kv_args = st.fixed_dictionaries(
    {},
    optional={
        "line_sep": st.sampled_from(["\n", ";", "||", "\r\n"]),
        "kv_sep": st.sampled_from([":", "=", "::", " "]),
        "strip": st.booleans(),
        "value_parser": value_parsers,
    },
)
kv_texts = st.one_of(
    texts,
    st.lists(
        st.tuples(
            st.sampled_from(["a", " b ", "a", "x y", ""]),
            st.sampled_from([":", "=", "::", " "]),
            st.one_of(json_texts, st.sampled_from([" 7", "true ", ""])),
        ),
        max_size=4,
    ).map(lambda rows: "\n".join(k + sep + v for k, sep, v in rows)),
)


@SETTINGS
@given(name=st.sampled_from(["text", "int", "float", "bool"]), text=texts, args=strip_args)
@example(name="int", text=" \u0663 ", args={})
@example(name="float", text="1_0.5", args={"strip": False})
def test_scalar_parsers_match_reference(name, text, args):
    assert_same(ours(name, text, args), reference(name, text, args))


@SETTINGS
@given(text=json_texts, args=json_args)
@example(text='{a:<|"|>x<|"|>}', args={"unquoted_keys": True})
@example(text="'0'x", args={"string_delims": [["'", "'"], ["0", "x"]]})
@example(text='{"k": aaaa}', args={"string_delims": [["aa", "aa"]]})
@example(text="[aaa, aaxaa]", args={"string_delims": [["aa", "aa"]]})
@example(
    text="{k:abababa,m:aba1aba}", args={"string_delims": [["aba", "aba"]], "unquoted_keys": True}
)
@example(text="{a:<<x>>,b:<<y}", args={"string_delims": [["<<", ">>"]], "unquoted_keys": True})
@example(text='{a:<<"q\u0001>>}', args={"string_delims": [["<<", ">>"]]})
@example(
    text='{<|"|>k<|"|>:<|"|>v\n<|"|>,x:1}',
    args={"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']]},
)
@example(text='{ a : "b,c:d" ,e:1}', args={"unquoted_keys": True})
@example(
    text='{a:<<x>>, b : "y,z:1"}', args={"string_delims": [["<<", ">>"]], "unquoted_keys": True}
)
@example(
    text='{a:<<x>>, b : "y,z:1"}',
    args={"string_delims": [["<<", ">>"], ["[[", "]]"]], "unquoted_keys": True},
)
def test_json_parser_matches_reference(text, args):
    assert_same(ours("json", text, args), reference("json", text, args))


@SETTINGS
@given(text=xml_texts, args=xml_args)
def test_xml_inline_parser_matches_reference(text, args):
    assert_same(ours("xml-inline", text, args), reference("xml-inline", text, args))


@SETTINGS
@given(text=kv_texts, args=kv_args)
def test_kv_lines_parser_matches_reference(text, args):
    assert_same(ours("kv-lines", text, args), reference("kv-lines", text, args))


@SETTINGS
@given(
    name=st.sampled_from(list(ref_cp.CONTENT_PARSERS) + ["nope"]),
    text=texts,
    args=st.one_of(json_args, xml_args, kv_args),
)
def test_parse_content_matches_reference(name, text, args):
    assert_same(
        outcome(content.parse_content, name, text, args),
        outcome(ref_cp.parse_content, text, name, args),
    )
