"""The `python-call-list` content parser against transformers 5.25's, value for value and message
for message, and its running time on hostile input.

The reference (`content_parsers._python_call_list`, new in 5.24) is the oracle: every check runs
both on the same text and compares the value with exact types (1, 1.0 and True differ; dict key
order counts) or the exception class and its whole message (position and content included).
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support import outcome, typed
from test_linear_time import BOUND, growth

from chatparse.runtime import content
from chatparse.runtime import python_call_list
from chatparse.runtime.python_call_list import _FLAT_MAX as FLAT_MAX
from chatparse.runtime.python_call_list import MAX_DEPTH, parse_python_call_list

pytest.importorskip(
    "transformers", reason="needs the reference, transformers>=5.24 (the test extra)"
)
from transformers.utils.chat_parsing import content_parsers as ref_cp  # noqa: E402

if "python-call-list" not in ref_cp.CONTENT_PARSERS:
    pytest.skip(
        "the installed transformers predates python-call-list (5.24)", allow_module_level=True
    )


def reference(text: str) -> tuple:
    return outcome(ref_cp.parse_content, text, "python-call-list", {}, message_chars=None)


def full_outcome(parse, text: str) -> tuple:
    """Like `support.outcome`, with the whole message (its second line quotes the content)."""
    try:
        return ("ok", typed(parse(text)))
    except Exception as error:  # noqa: BLE001 - the class and message are what is compared
        return ("raise", type(error).__name__, str(error))


def assert_same(text: str) -> None:
    mine = full_outcome(lambda t: content.parse_content("python-call-list", t, {}), text)
    ref = full_outcome(lambda t: ref_cp.parse_content(t, "python-call-list", {}), text)
    assert mine == ref, text


def nest(depth: int, leaf: str = "1", opener: str = "[", closer: str = "]") -> str:
    return opener * depth + leaf + closer * depth


def dict_nest(depth: int) -> str:
    return "{'k': " * depth + "1" + "}" * depth


# --- the table: each grammar rule, each error, each boundary ------------------------------------

TABLE = [
    # calls and whitespace
    "[]",
    " \t\n\r[ \r\n\t] \n",
    "[f()]",
    '[get_weather(city="Paris", days=3)]',
    "[f(a=1), g(b=2)]",
    "[f (a=1)]",
    "[f( a = 1 ) , g( ) ]",
    "[a.b-c.d(x_1=1)]",
    "[_()]",
    "[f(a-b.c=1)]",
    # what is refused, and where
    "",
    "   ",
    "f(a=1)",
    "([f()])",
    "[",
    "[f",
    "[f(",
    "[f(a",
    "[f(a=",
    "[f(a=1",
    "[f(a=1)",
    "[f(a=1)] x",
    "[f(a=1)][]",
    "[f(1)]",
    "[f(a)]",
    "[f(a 1)]",
    "[f(a=1,)]",
    "[f(a=1),]",
    "[,]",
    "[f(a=1) g()]",
    "[f(a=1);]",
    "[1f()]",
    "[f.()]",
    "[f-(a=1)]",
    "[f(**k)]",
    "[f(a=b)]",
    "[f(a=(1, 2))]",
    "[f(\xa0a=1)]",
    "[f(a=1\x0b)]",
    "[f(a=1\x0c)]",
    # repeated names: reported just past the `)` or `}`, after errors further inside
    "[f(a=1, a=2)]",
    "[f(a=1, b=2, a=3, b=4)]",
    "[f(a=1, a=2, b=)]",
    "[f(a=1, b={'x': 1, 'x': 2}, b=3)]",
    "[f(a={'x': 1, 'x': 2, 'y': {'z': 1, 'z': 2}})]",
    "[f(a={'x': 1, 'x': 2, 'y': {'z': 1, 'z': 2)]",
    "[f(a=1, a=2), g(a=]",
    "[f(a=1), f(a=1)]",
    # lists and dicts
    "[f(a=[], b={}, c=[1, [2, {'k': [3]}]])]",
    "[f(a=[1,])]",
    "[f(a=[1 2])]",
    "[f(a={'a': 1,})]",
    "[f(a={1: 2})]",
    "[f(a={k: 2})]",
    "[f(a={'a' 1})]",
    "[f(a={'a': })]",
    "[f(a={\"a\": 1, 'b': [True]})]",
    # numbers
    "[f(a=0, b=-0, c=-0.0, d=1.5, e=1e5, f=1E+5, g=2.5e-3, h=1e-400)]",
    "[f(a=9007199254740991, b=-9007199254740991)]",
    "[f(a=9007199254740992)]",
    "[f(a=-9007199254740992)]",
    "[f(a=12345678901234567)]",
    "[f(a=123456789012345678)]",
    "[f(a=-12345678901234567)]",
    "[f(a=" + "9" * 5000 + ")]",
    "[f(a=9007199254740992.0)]",
    "[f(a=1e400)]",
    "[f(a=-1e400)]",
    "[f(a=1.0e+400)]",
    "[f(a=" + "9" * 400 + ".0)]",
    "[f(a=00)]",
    "[f(a=01)]",
    "[f(a=1.)]",
    "[f(a=.5)]",
    "[f(a=+1)]",
    "[f(a=--1)]",
    "[f(a=-)]",
    "[f(a=0x1F)]",
    "[f(a=1_000)]",
    "[f(a=1.5e3x)]",
    "[f(a=\u0661)]",
    "[f(a=nan)]",
    "[f(a=Infinity)]",
    # constants
    "[f(a=True, b=true, c=False, d=false, e=None, f=null)]",
    "[f(a=TRUE)]",
    "[f(a=Truex)]",
    "[f(a=True.x)]",
    "[f(a=True-1)]",
    "[f(a=True-)]",
    "[f(a=None_)]",
    # strings and escapes
    "[f(a='x', b=\"y\", c='', d=\"\")]",
    '[f(a="it\'s", b=\'say "hi"\')]',
    "[f(a='\\\\ \\' \\\" \\/ \\b \\f \\n \\r \\t')]",
    "[f(a='\\u00e9\\u0000\\uFFFF')]",
    "[f(a='\\ud83d\\ude00', b='\\uD83D\\uDE00')]",
    "[f(a='\\ud83d')]",
    "[f(a='\\ude00')]",
    "[f(a='\\ud83d\\u0041')]",
    "[f(a='\\ud83d\\ud83d')]",
    "[f(a='\\ud83d\\udc0')]",
    "[f(a='\\ud83d\\udc00\\udc00')]",
    "[f(a='\\u12')]",
    "[f(a='\\u12G4')]",
    "[f(a='\\U0001F600')]",
    "[f(a='\\x41')]",
    "[f(a='\\q')]",
    "[f(a='\\q\\ud800')]",
    "[f(a='\\ud800\\q')]",
    "[f(a='\ud800')]",
    "[f(a='\ud800\\q')]",
    "[f(a='\\q\ud800')]",
    "[f(a='\\q\n')]",
    "[f(a='\\\n')]",
    "[f(a='\\\r')]",
    "[f(a='x\n')]",
    '[f(a="x\r")]',
    "[f(a='x)]",
    "[f(a='x\\')]",
    "[f(a='x\\'",
    "[f(a='",
    "[f(a='\\",
    "[f(a='a'b)]",
    "[f(a='\U0001f600 \u00e9')]",
    # nesting: the limit, one past it, and mixed lists and dicts
    "[f(a=" + nest(MAX_DEPTH) + ")]",
    "[f(a=" + nest(MAX_DEPTH + 1) + ")]",
    "[f(a=" + dict_nest(MAX_DEPTH) + ")]",
    "[f(a=" + dict_nest(MAX_DEPTH + 1) + ")]",
    "[f(a=" + "[{'k': " * 50 + "1" + "}]" * 50 + ")]",
    "[f(a=" + "[{'k': " * 51 + "1" + "}]" * 51 + ")]",
    "[f(a=" + "[" * (MAX_DEPTH + 1),
    "[f(a=" + "[" * MAX_DEPTH,
    "[f(a=" + "[" * 5000 + "]" * 5000 + ")]",
]


@pytest.mark.parametrize("text", TABLE)
def test_value_or_error_message_equals_the_reference(text):
    assert_same(text)


def test_the_table_exercises_every_error_message():
    """Each of the reference's messages occurs in the table (so no error path goes untested)."""
    outcomes = [
        full_outcome(lambda t: ref_cp.parse_content(t, "python-call-list", {}), text)
        for text in TABLE
    ]
    messages = [o[2] for o in outcomes if o[0] == "raise"]
    heads = [
        "expected '['",
        "expected '('",
        "expected ','",
        "expected ':'",
        "expected a function name",
        "expected a keyword argument",
        "expected '=' (positional",
        "repeated name",
        "dict keys must be strings",
        "invalid string",
        "lone surrogate in the string",
        "lone surrogate escape in",
        "unsupported escape",
        "lists and dicts nested more than 100 levels",
        "integer outside the range",
        "number too large",
        "expected a string, number",
        "unexpected content after the closing ']'",
    ]
    for head in heads:
        assert any(message.startswith(f"python-call-list: {head}") for message in messages), head


def test_content_args_are_not_read():
    """The reference ignores `args` (so a list or None is no error, unlike the other parsers)."""
    text = "[f(a=1)]"
    for args in ({}, {"strip": False}, [], None, "x"):
        assert typed(parse_python_call_list(text, args)) == typed(
            ref_cp.parse_content(text, "python-call-list", args)
        )


# --- property: random call lists, intact and damaged --------------------------------------------

WHITESPACE = st.text(" \t\n\r", max_size=2)
NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,3}(?:[-.][A-Za-z0-9_]{1,2}){0,2}", fullmatch=True)
GOOD_ESCAPES = [
    "\\\\",
    "\\'",
    '\\"',
    "\\/",
    "\\b",
    "\\f",
    "\\n",
    "\\r",
    "\\t",
    "\\u00e9",
    "\\ud83d\\ude00",
]
BAD_ESCAPES = ["\\ud83d", "\\ude00", "\\q", "\\u12", "\\x41", "\\\n"]
PLAIN_CHARS = st.characters(codec="utf-8", exclude_characters="\\'\"\n\r")
# A valid string's chars: plain ones, the other quote (drawn as both, one of them is the other),
# and valid escapes; a bad string may also hold line breaks, raw surrogates and bad escapes.
GOOD_STRING_CHARS = st.one_of(PLAIN_CHARS, st.sampled_from(GOOD_ESCAPES))
BAD_STRING_CHARS = st.one_of(
    GOOD_STRING_CHARS, st.sampled_from(BAD_ESCAPES + ["'", '"', "\n", "\r", "\ud800", "\udfff"])
)
NUMBERS = st.one_of(
    st.integers(-(2**53) - 2, 2**53 + 2).map(str),
    st.integers(-(10**20), 10**20).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["1e400", "-0", "0.5e-3", "01", "1.", ".5", "1E+2", "-1e308", "9" * 20]),
)
CONSTANTS = st.sampled_from(["True", "true", "False", "false", "None", "null", "Truex", "nil"])


@st.composite
def strings(draw, bad: bool = False) -> str:
    quote = draw(st.sampled_from(["'", '"']))
    other = "'" if quote == '"' else '"'
    chars = st.one_of(BAD_STRING_CHARS if bad else GOOD_STRING_CHARS, st.just(other))
    return quote + "".join(draw(st.lists(chars, max_size=6))) + quote


def joined(draw, items: list[str], open_: str, close: str) -> str:
    ws = [draw(WHITESPACE) for _ in range(2 * len(items) + 2)]
    body = ",".join(f"{ws[2 * i]}{item}{ws[2 * i + 1]}" for i, item in enumerate(items))
    return f"{open_}{ws[-2]}{body}{ws[-1]}{close}"


@st.composite
def values(draw, depth: int = 0, bad: bool = False) -> str:
    """A value: a string, number or constant, or (above the last of 3 levels) a list or dict."""
    kind = draw(
        st.sampled_from(["string", "number", "constant", "list", "dict"][: 5 if depth < 3 else 3])
    )
    if kind == "string":
        return draw(strings(bad))
    if kind == "number":
        return draw(NUMBERS)
    if kind == "constant":
        return draw(CONSTANTS)
    items = [draw(values(depth + 1, bad)) for _ in range(draw(st.integers(0, 3)))]
    if kind == "list":
        return joined(draw, items, "[", "]")
    keys = [draw(st.sampled_from(["'k'", '"k"', "'j'"]) | strings(bad)) for _ in items]
    return joined(draw, [f"{k}{draw(WHITESPACE)}:{v}" for k, v in zip(keys, items)], "{", "}")


@st.composite
def call_lists(draw, bad: bool = False) -> str:
    """A call list; names and keys may repeat, numbers and constants may be out of the grammar,
    and with `bad` strings may be invalid too."""
    calls = []
    for _ in range(draw(st.integers(0, 3))):
        arguments = [
            f"{draw(st.sampled_from(['a', 'b', 'c']) | NAMES)}{draw(WHITESPACE)}={draw(values(0, bad))}"
            for _ in range(draw(st.integers(0, 3)))
        ]
        calls.append(draw(NAMES) + draw(WHITESPACE) + joined(draw, arguments, "(", ")"))
    return draw(WHITESPACE) + joined(draw, calls, "[", "]") + draw(WHITESPACE)


@st.composite
def damaged(draw) -> str:
    """A call list with bad strings and a few chars deleted, inserted or replaced (the grammar's
    own chars)."""
    text = draw(call_lists(bad=True))
    for _ in range(draw(st.integers(1, 3))):
        position = draw(st.integers(0, len(text)))
        char = draw(st.sampled_from(list("[](){}:,='\"\\ \nx1.-") + ["True", "\ud800"]))
        action = draw(st.sampled_from(["insert", "delete", "replace"]))
        if action == "insert":
            text = text[:position] + char + text[position:]
        elif action == "delete":
            text = text[:position] + text[position + 1 :]
        else:
            text = text[:position] + char + text[position + 1 :]
    return text


PROPERTY = settings(
    max_examples=400, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@PROPERTY
@given(call_lists())
@example("[f(a='\\ud83d\\ude00', b=[{'k': None}])]")
def test_random_call_lists_parse_as_in_the_reference(text):
    assert_same(text)


@PROPERTY
@given(damaged())
@example("[f(a=1,, b=2)]")
def test_damaged_call_lists_fail_or_parse_as_in_the_reference(text):
    assert_same(text)


def test_the_generated_call_lists_are_mostly_valid():
    """The intact strategy is worth its name: most of what it draws parses in the reference (so
    the first property test compares values, not only errors)."""
    parsed = 0

    @settings(max_examples=100, derandomize=True, deadline=None)
    @given(call_lists())
    def count(text):
        nonlocal parsed
        parsed += reference(text)[0] == "ok"

    count()
    assert parsed >= 30


# --- linear time on hostile input ---------------------------------------------------------------

UNIT = 1000  # chars of hostile text per size unit of `growth`

HOSTILE = {
    # nesting to the limit, again and again, then one level too deep
    "nesting at the limit": lambda n: "[f(a=["
    + ",".join([nest(MAX_DEPTH - 1)] * (n * UNIT // 200))
    + "])]",
    "dicts at the limit": lambda n: "[f(a=["
    + ",".join([dict_nest(MAX_DEPTH - 1)] * (n * UNIT // 700))
    + "])]",
    "opening brackets only": lambda n: "[f(a=" + "[" * (n * UNIT),
    "one long string": lambda n: "[f(a='" + "x" * (n * UNIT) + "')]",
    "an unterminated string": lambda n: "[f(a='" + "x" * (n * UNIT),
    "an unterminated string of escapes": lambda n: "[f(a='" + "\\'" * (n * UNIT // 2),
    "escapes with a bad one last": lambda n: "[f(a='" + "\\n" * (n * UNIT // 2) + "\\q')]",
    "a string cut by a newline at the end": lambda n: "[f(a='" + "x" * (n * UNIT) + "\n')]",
    "many calls": lambda n: "[" + ", ".join(["f(a='x', b=1)"] * (n * UNIT // 15)) + "]",
    "many repeated names": lambda n: "[f(" + ", ".join(["a=1"] * (n * UNIT // 5)) + ")]",
    "a long integer": lambda n: "[f(a=" + "9" * (n * UNIT) + ")]",
    "a long float": lambda n: "[f(a=1." + "9" * (n * UNIT) + ")]",
    "whitespace": lambda n: "[" + " " * (n * UNIT) + "f()]",
}


@pytest.mark.parametrize("shape", sorted(HOSTILE))
def test_cpu_time_grows_linearly_with_hostile_input(shape):
    def runner_at(n):
        text = HOSTILE[shape](n)

        def run():
            try:
                parse_python_call_list(text, {})
            except ValueError:
                pass

        return run

    ratio, how = growth(runner_at)
    assert ratio < BOUND, f"{shape}: 8x the text took {ratio:.1f}x the CPU time ({how})"


# --- flat call lists: the path read in C ---------------------------------------------------------
# `_flat_calls` reads a flat call list (every argument a plain string, a short number or a
# constant) with `re`; it must give the reader's value whenever it answers, answer for the flat
# lists models write, and stay linear within the length it is tried on (`_FLAT_MAX`).

FLAT_VALUES = st.one_of(
    st.from_regex(r"'[^'\\\n\r]{0,4}'|\"[^\"\\\n\r]{0,4}\"", fullmatch=True),
    st.from_regex(r"-?(0|[1-9][0-9]{0,16})(\.[0-9]{1,3})?", fullmatch=True),
    CONSTANTS,
)


@st.composite
def flat_call_lists(draw) -> str:
    """Call lists whose arguments are scalars, names repeating now and then."""
    calls = []
    for _ in range(draw(st.integers(0, 3))):
        arguments = [
            f"{draw(st.sampled_from(['a', 'b', 'c']) | NAMES)}{draw(WHITESPACE)}="
            f"{draw(WHITESPACE)}{draw(FLAT_VALUES)}"
            for _ in range(draw(st.integers(0, 3)))
        ]
        calls.append(draw(NAMES) + draw(WHITESPACE) + joined(draw, arguments, "(", ")"))
    return draw(WHITESPACE) + joined(draw, calls, "[", "]") + draw(WHITESPACE)


def reader(text: str) -> tuple:
    return outcome(lambda: python_call_list._Reader(text).read())


@PROPERTY
@given(st.one_of(flat_call_lists(), call_lists(), damaged()))
@example("[f(a='g(b=1)', c=\"x)y\"), h()]")  # a `)` inside a string
@example("[f(a=1, a=2)]")  # a repeated name: the reader reports it
@example("[f(a=1234567890123456)]")  # 16 digits: the reader checks the range
def test_the_flat_path_gives_the_readers_value_or_leaves_it_to_the_reader(text):
    fast = python_call_list._flat_calls(text)
    if fast is not None:
        assert ("ok", typed(fast)) == reader(text)


def test_the_flat_path_reads_the_flat_lists_models_write():
    for text in (
        "[get_weather(city='Paris', metric='celsius'), get_time(timezone=\"Asia/Tokyo\")]",
        " [ f ( ) , g ( a = -0.5 , b = True , c = null , d = 123456789012345 ) ] ",
        "[]",
    ):
        assert python_call_list._flat_calls(text) is not None, text


FLAT_HOSTILE = {
    "blanks after '['": lambda n: "[" + " " * n,
    "blanks in a call": lambda n: "[f(" + " " * n,
    "blanks after an argument": lambda n: "[f(a=1" + " " * n,
    "blanks after a call": lambda n: "[f()" + " " * n,
    "blanks, then no ']'": lambda n: "[]" + " " * n + "x",
    "commas between blanks": lambda n: "[f()" + " , f()" * (n // 6) + " ,",
    "calls, never closed": lambda n: "[" + ", ".join(["f(a='x', b=1)"] * (n // 15)),
    "arguments, then a trailing comma": lambda n: "[f(" + ", ".join(["a1=1"] * (n // 6)) + ",)]",
    "a dotted name": lambda n: "[" + "a." * (n // 2) + "(",
    "a long decimal": lambda n: "[f(a=1." + "9" * n,
}


@pytest.mark.parametrize("shape", sorted(FLAT_HOSTILE))
def test_the_flat_path_is_linear_up_to_its_limit(shape):
    small, large = (FLAT_HOSTILE[shape](n) for n in (FLAT_MAX // 8 - 8, FLAT_MAX - 64))
    assert len(large) <= FLAT_MAX

    def seconds(text: str) -> float:
        start = time.process_time()
        for _ in range(50):
            python_call_list._flat_calls(text)
        return time.process_time() - start

    ratio = min(seconds(large) for _ in range(3)) / min(seconds(small) for _ in range(3))
    assert ratio < BOUND, f"{shape}: 8x the text took {ratio:.1f}x the CPU time"


def test_ten_megabyte_string():
    text = "[f(a='" + "\u00e9x" * 5_000_000 + "')]"
    assert parse_python_call_list(text, {}) == [
        {"name": "f", "arguments": {"a": "\u00e9x" * 5_000_000}}
    ]


# --- templates: a python-call-list field, whole and streamed, against the reference's one shot ---

EACH_CALL = {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}}
# LFM2: `<|tool_call_start|>[get_weather(city="Paris")]<|tool_call_end|>`.
LFM2_LIKE = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "tool_calls": {
            "open": "<|tool_call_start|>",
            "close": "<|tool_call_end|>",
            "content": "python-call-list",
            "transform": EACH_CALL,
            "transform_each": True,
        },
        "content": {"close": "<|im_end|>"},
    },
}
# Llama 3.2 pythonic: the calls are the rest of the output, from a `[` that starts a call.
OPEN_BRACKET = {
    "start_anchor": "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "fields": {
        "content": {},
        "tool_calls": {
            "open_pattern": r"(?=\[[A-Za-z_][\w.-]*\()",
            "close_pattern": r"<\|eot_id\|>|\Z",
            "content": "python-call-list",
            "transform": EACH_CALL,
            "transform_each": True,
        },
    },
}
# The value as it is, repeated regions, and content_args the parser never reads.
RAW_REPEATED = {
    "start_anchor": "@",
    "fields": {
        "calls": {"open": "<c>", "close": "</c>", "content": "python-call-list", "repeats": True},
        "content": {},
    },
}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "code": {"type": ["integer", "string"]},
                    "note": {"type": "string", "nullable": True},
                    "flags": {"type": "array"},
                    "on": {"type": "boolean"},
                },
            },
        },
    }
]

TEMPLATE_CASES = [
    (LFM2_LIKE, 'hi <|tool_call_start|>[get_weather(city="Paris", days=3)]<|tool_call_end|>done'),
    (
        LFM2_LIKE,
        "<think>plan</think><|tool_call_start|>[get_weather(city='7', days='3', code='007', "
        "note='null', on='true', flags='[1]'), other(a={'b': [1, None, 2.5]})]<|tool_call_end|>",
    ),
    (
        LFM2_LIKE,
        "<|tool_call_start|>[get_weather(city=7, days=3.0, code=7, note=None)]<|tool_call_end|>",
    ),
    (
        LFM2_LIKE,
        "<|tool_call_start|>[get_weather(city='\\u00e9\\ud83d\\ude00\\n')]<|tool_call_end|>ok",
    ),
    (LFM2_LIKE, "<|tool_call_start|>[get_weather(city=7)<|tool_call_end|>"),
    (LFM2_LIKE, "<|tool_call_start|>[get_weather('Paris')]<|tool_call_end|>"),
    (LFM2_LIKE, "<|tool_call_start|>[f(a=" + "[" * 101 + "]" * 101 + ")]<|tool_call_end|>"),
    (LFM2_LIKE, "<|tool_call_start|>[]<|tool_call_end|>x"),
    (LFM2_LIKE, "<|tool_call_start|>[get_weather(city='Par"),
    (OPEN_BRACKET, 'Sure. [get_weather(city="Paris", days=3)]'),
    (OPEN_BRACKET, "[get_weather(city='7', code='007', days='3'), f()]<|eot_id|>"),
    (OPEN_BRACKET, "x [f(a=1) g()]"),
    (OPEN_BRACKET, "a list [1, 2] and [get_weather(city='Oslo')]\n"),
    (RAW_REPEATED, "a<c>[f(a=1)]</c>b<c> [g(x='y'), h()] </c>"),
    (RAW_REPEATED, "<c>[f(a=1, a=2)]</c>"),
]


def _template_ids(cases):
    return [f"{i}-{text[:30]}" for i, (_, text) in enumerate(cases)]


def assert_template_matches_reference(template, text, prefix="", tools=None, seed=0):
    """chatparse fed whole, one char at a time and in seeded random chunks, and its bulk
    `parse_response`, against the reference's one-shot result (message, merged events, or the
    error's class and message)."""
    from support import ReferenceParser, chunkings, run_parser_with_message

    import chatparse

    expected = run_parser_with_message(
        lambda: ReferenceParser(template, prefix=prefix, tools=tools), [text]
    )
    for chunks in chunkings(text, seed=seed):
        got = run_parser_with_message(
            lambda: chatparse.ResponseParser(template, prefix=prefix, tools=tools), chunks
        )
        assert got == expected, chunks
    try:
        bulk = ("ok", typed(chatparse.parse_response(text, template, prefix=prefix, tools=tools)))
    except Exception as error:  # noqa: BLE001
        bulk = ("error", type(error).__name__, str(error))
    assert bulk == expected[:2] if expected[0] == "ok" else bulk == expected
    return expected


@pytest.mark.parametrize("template, text", TEMPLATE_CASES, ids=_template_ids(TEMPLATE_CASES))
@pytest.mark.parametrize("tools", [None, TOOLS], ids=["no-tools", "tools"])
def test_template_with_a_call_list_field_matches_the_reference(template, text, tools):
    assert_template_matches_reference(template, text, tools=tools, seed=len(text))


def test_typed_coercion_keeps_string_parameters_as_the_call_list_wrote_them():
    """5.25's TYPED_STRUCTURED_PARSERS: with tools, a parameter that allows "string" keeps a quoted
    value as a string ('007', 'null') and an unquoted one as typed; other parameters are still
    cast from a quoted string ('3' -> 3 for an integer)."""
    text = (
        "<|tool_call_start|>[get_weather(city=7, days='3', code='007', note='null', on='true')]"
        "<|tool_call_end|>"
    )
    expected = assert_template_matches_reference(LFM2_LIKE, text, tools=TOOLS)
    assert expected[1] == typed(
        {
            "tool_calls": [
                {
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "arguments": {
                            "city": 7,
                            "days": 3,
                            "code": "007",
                            "note": "null",
                            "on": True,
                        },
                    },
                }
            ]
        }
    )


@pytest.mark.parametrize(
    "content_args", [[], ["value_parser_by"], "x", "value_parser_by", 5, None, True]
)
def test_content_args_of_any_kind_as_the_reference(content_args):
    """python-call-list never reads its args; with tools, the reference then tests
    `"value_parser_by" not in content_args`: a list or str holding it skips coercion, and a number,
    bool or null raises that test's TypeError."""
    template = {
        "start_anchor": "@",
        "fields": {
            "tool_calls": {
                **LFM2_LIKE["fields"]["tool_calls"],
                "content_args": content_args,
            },
            "content": {},
        },
    }
    text = "<|tool_call_start|>[get_weather(days='3')]<|tool_call_end|>"
    for tools in (None, TOOLS):
        assert_template_matches_reference(template, text, tools=tools)


def test_generated_module_declares_the_parser_and_the_coercion():
    """The compiler decides: the module calls the python-call-list reader by name and says how
    tool-call coercion treats the field (no run-time lookup of the parser or of TYPED_STRUCTURED).
    """
    from chatparse import compile_template

    source = compile_template(LFM2_LIKE)
    assert "content.parse_python_call_list(body, {})" in source
    assert "typed=True" in source
    assert "parse_content" not in source
