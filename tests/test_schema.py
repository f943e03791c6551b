"""Differential tests: chatparse.runtime.schema.json_schema_for against transformers'
`get_json_schema` (5.25.0): the same dict with the same key order, or an exception of
the same class name (the reference's classes live in transformers, ours in chatparse).
"""

from __future__ import annotations

import functools
import operator
import typing
from enum import Enum, IntEnum
from typing import Any, Literal, Optional, Union

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support import outcome as _outcome

from chatparse.runtime import schema

pytest.importorskip(
    "transformers", reason="needs the reference, transformers 5.25.0 (.ci/install-oracle)"
)
from transformers.utils.chat_template_utils import get_json_schema

SETTINGS = settings(max_examples=200, derandomize=True, deadline=None)

# Errors are compared by class: chatparse's messages are its own.
outcome = functools.partial(_outcome, message_chars=0)


def assert_same(func):
    mine, ref = outcome(schema.json_schema_for, func), outcome(get_json_schema, func)
    assert mine == ref
    return mine


# --- corpus: the cases of transformers' tests/utils/test_chat_template_utils.py, rewritten ---


def simple(x: int):
    """
    Adds nothing.

    Args:
         x: The input
    """


def no_arguments():
    """
    Does nothing at all.
    """


def bare_containers(x: list, y: tuple, z: dict):
    """
    Bare containers.

    Args:
        x: first
        y: second
        z: third
    """


def unions(x: int | float, y: list | tuple, z: list | tuple | dict | None = None):
    """
    Unions, with duplicates.

    Args:
        x: first
        y: second
        z: third
    """


def optional_and_default(x: int | None, y: int = 42):
    """
    Optional and defaulted.

    Args:
        x: first
        y: second
    """


def nested(x: list[list[str | int]], y: list[int | float], z: int | str | None = None):
    """
    Nested lists.

    Args:
        x: first
        y: second
        z: third
    """


def complex_unions(x: str | list[str], y: Literal["a", "b"] | int | None = None):
    """
    Unions of complex types.

    Args:
        x: first
        y: second
    """


def returns_int(x: int) -> int:
    """
    Has a return hint only.

    Args:
        x: The input
    """


def returns_documented(x: int) -> int:
    """
    Has a documented return.

    Args:
        x: The input


    Returns:
        The output
    """


def a_tuple(x: tuple[int, str]):
    """
    Tuple.

    Args:
        x: The input


    Returns:
        The output
    """


def choices(temperature_format: str, rating: int, enabled: bool):
    """
    Choices.

    Args:
        temperature_format: The format to use (Choices: ["celsius", "fahrenheit"])
        rating: The rating (choices: [1, 2, 3])
        enabled: Whether it is on (choices: [true, false])
    """


def literals(
    fmt: Literal["celsius", "fahrenheit"], booleanish: Literal[True, False, 0, 1, "y", "n"] = False
):
    """
    Literals.

    Args:
        fmt: The format
        booleanish: Something boolean-ish


    Returns:
        The temperature
    """


def multiline(x: int, y: int):
    """
    Multi-line argument docs.

    Args:
        x: The first input

        y: The second input. This is a longer description
           that spans multiple lines with indentation and stuff.

    Returns:
        God knows what
    """


def returns_none(x: int) -> None:
    """
    Returns None.

    Args:
        x: The first input
    """


def everything(
    x: str, y: list[str | int] | None, z: tuple[str | int, str] = (42, "hello")
) -> tuple[int, str]:
    """
    Everything at once, with docstring args that we have to strip out.

    Args:
        x: The first input. It's got a big multiline
           description and also contains
           (choices: ["a", "b", "c"])

        y: The second input. It's a big list with a single-line description.

        z: The third input. It's some kind of tuple with a default arg.

    Returns:
        The output. The return description is also a big multiline
        description that spans multiple lines.
    """


class Color(Enum):
    RED = "red"
    GREEN = "green"


class Level(IntEnum):
    LOW = 1
    HIGH = 2


class Mixed(Enum):
    A = 1
    B = "b"
    C = None


class Empty(Enum):
    pass


class Unjsonable(Enum):
    A = (1, 2)


class Custom:
    pass


def enums(color: Color, level: Level, mixed: Mixed = Mixed.A, maybe: Optional[Color] = None):
    """
    Enums.

    Args:
        color: c
        level: l
        mixed: m
        maybe: o
    """


def typing_aliases(
    a: typing.List[int], b: typing.Dict[str, float], c: typing.Dict, d: Any, e: dict[str, list[Any]]
):
    """
    Old typing aliases and Any.

    Args:
        a: a
        b: b
        c: c
        d: d
        e: e
    """


def bad_return(x: int) -> Custom:
    """
    An unsupported return hint is dropped, not an error.

    Args:
        x: x

    Returns:
        Something custom.
    """


class Tool:
    def method(self, x: int):
        """
        A method.

        Args:
            x: The input
        """

    @staticmethod
    def static(x: int):
        """
        A static method.

        Args:
            x: The input
        """

    @classmethod
    def klass(cls, x: int):
        """
        A class method.

        Args:
            x: The input
        """

    def typed_self(self: int, x: int):
        """
        A typed first argument named self is an argument.

        Args:
            self: me
            x: The input
        """


def missing_docstring(x: int):
    return x


def missing_argument_doc(x: int):
    """
    No args section.
    """


def missing_hint(x):
    """
    Untyped.

    Args:
         x: The input
    """


def single_tuple(x: tuple[int]):
    """
    Tuple of one.

    Args:
        x: The input
    """


def ellipsis_tuple(x: tuple[int, ...]):
    """
    Variable tuple.

    Args:
        x: The input
    """


def custom_class(x: Custom):
    """
    Custom.

    Args:
        x: The input
    """


def bad_choices(x: str):
    """
    Choices that are not JSON.

    Args:
        x: The input (choices: [a, b])
    """


def empty_enum(x: Empty):
    """
    Empty enum.

    Args:
        x: The input
    """


def unjsonable_enum(x: Unjsonable):
    """
    Enum of tuples.

    Args:
        x: The input
    """


def bad_literal(x: Literal[Color.RED]):
    """
    Literal of an enum member.

    Args:
        x: The input
    """


ACCEPTED = [
    simple,
    no_arguments,
    bare_containers,
    unions,
    optional_and_default,
    nested,
    complex_unions,
    returns_int,
    returns_documented,
    a_tuple,
    choices,
    literals,
    multiline,
    returns_none,
    everything,
    enums,
    typing_aliases,
    bad_return,
    Tool.method,
    Tool().method,
    Tool.static,
    Tool().static,
    Tool.klass,
    Tool().klass,
    Tool.typed_self,
]
REJECTED = [
    (missing_docstring, "DocstringParsingException"),
    (missing_argument_doc, "DocstringParsingException"),
    (missing_hint, "TypeHintParsingException"),
    (single_tuple, "TypeHintParsingException"),
    (ellipsis_tuple, "TypeHintParsingException"),
    (custom_class, "TypeHintParsingException"),
    (bad_choices, "JSONDecodeError"),
    (empty_enum, "TypeHintParsingException"),
    (unjsonable_enum, "TypeHintParsingException"),
    (bad_literal, "TypeHintParsingException"),
]


@pytest.mark.parametrize("func", ACCEPTED, ids=lambda f: f.__qualname__)
def test_accepted_functions_give_the_reference_schema(func):
    assert assert_same(func)[0] == "ok"


@pytest.mark.parametrize(("func", "error"), REJECTED, ids=lambda v: getattr(v, "__name__", v))
def test_rejected_functions_raise_the_reference_class(func, error):
    assert assert_same(func)[:2] == ("raise", error)


def test_error_messages_name_function_and_argument():
    with pytest.raises(schema.DocstringParsingException, match="missing_docstring"):
        schema.json_schema_for(missing_docstring)
    with pytest.raises(schema.DocstringParsingException, match="missing_argument_doc.*'x'"):
        schema.json_schema_for(missing_argument_doc)
    with pytest.raises(schema.TypeHintParsingException, match="x .*missing_hint"):
        schema.json_schema_for(missing_hint)


def test_typed_google_entries_are_entries():
    """5.24: `b (int): ...` is an entry (5.23 read it as text of `a`, and then `b` had no
    description, so the schema failed). A type holding parentheses is still not a head."""

    def fn(a: int, b: int, c: dict):
        """
        Typed entries.

        Args:
            a: first
            b (int): second
            c	(dict[str, int]): third
            d(dict(str)): no entry here
        """

    assert assert_same(fn)[:1] == ("ok",)
    properties = schema.json_schema_for(fn)["function"]["parameters"]["properties"]
    assert properties["b"]["description"] == "second"
    assert properties["c"]["description"] == "third d(dict(str)): no entry here"

    def spaced(a: int):
        """
        A space before the colon.

        Args:
            a (int) : first
        """

    assert assert_same(spaced)[:2] == ("raise", "DocstringParsingException")


def test_quirk_empty_entry_swallows_the_next_line():
    def fn(a: int, c: int = 0):
        """
        Empty entry.

        Args:
            a:
            b: second
            c: third
        """

    assert assert_same(fn)[0] == "ok"
    properties = schema.json_schema_for(fn)["function"]["parameters"]["properties"]
    assert (properties["a"]["description"], properties["c"]["description"]) == (
        "b: second",
        "third",
    )


def test_quirk_section_words_end_sections_even_inside_words():
    def fn(a: int):
        """
        Describe MyArgs: here.

        Args:
            a: first. Returns: nothing
        """

    assert assert_same(fn)[0] == "ok"
    assert schema.json_schema_for(fn)["function"]["description"] == "Describe My"


# --- property tests: random type hints --------------------------------------------

BASE_HINTS = [
    int,
    float,
    str,
    bool,
    type(None),
    None,
    list,
    tuple,
    dict,
    Any,
    Color,
    Level,
    Mixed,
    Empty,
    Unjsonable,
    Custom,
    typing.List,
    typing.Dict,
    typing.Tuple,
    Literal["a", "b"],
    Literal[1, True, "y", None],
    Literal[1.5],
    Literal[Color.RED],
    typing.Callable[[int], int],
    frozenset,
    bytes,
]


def _union(members):
    try:
        return Union[tuple(members)]
    except TypeError:
        return int


def _pipe(pair):
    try:
        return operator.or_(*pair)
    except TypeError:
        return Optional[pair[0]]


hints = st.recursive(
    st.sampled_from(BASE_HINTS),
    lambda inner: st.one_of(
        inner.map(lambda h: list[h]),
        inner.map(lambda h: dict[str, h]),
        inner.map(lambda h: dict[h]),
        inner.map(lambda h: tuple[h]),
        st.tuples(inner, inner).map(lambda p: tuple[p]),
        inner.map(lambda h: tuple[h, ...]),
        st.lists(inner, min_size=1, max_size=3).map(_union),
        st.tuples(inner, inner).map(_pipe),
        inner.map(lambda h: Optional[h]),
    ),
    max_leaves=5,
)


def make_function(param_hints, n_defaults, return_hint, with_return):
    namespace = {f"H{i}": hint for i, hint in enumerate(param_hints)}
    namespace["R"] = return_hint
    first_default = len(param_hints) - n_defaults
    params = ", ".join(
        f"p{i}: H{i}" + (" = None" if i >= first_default else "") for i in range(len(param_hints))
    )
    returns = " -> R" if with_return else ""
    exec(f"def tool({params}){returns}:\n    pass\n", namespace)  # noqa: S102 - builds test input
    tool = namespace["tool"]
    arg_lines = "".join(f"    p{i}: parameter {i}\n" for i in range(len(param_hints)))
    tool.__doc__ = f"A generated tool.\n\nArgs:\n{arg_lines}\nReturns:\n    something\n"
    return tool


@SETTINGS
@given(
    param_hints=st.lists(hints, max_size=3),
    n_defaults=st.integers(0, 3),
    return_hint=hints,
    with_return=st.booleans(),
)
def test_type_hints_match_reference(param_hints, n_defaults, return_hint, with_return):
    assert_same(
        make_function(param_hints, min(n_defaults, len(param_hints)), return_hint, with_return)
    )


# --- property tests: random docstrings ---------------------------------------------

INDENTS = ["", "  ", "    ", "\t", "     ", "        "]
LINE_BODIES = [
    "x: The input",
    "y: Also the input",
    'z: third (choices: ["a", " b "])',
    "x:",
    "y:",
    "x: pick (CHOICES: [1, 2])",
    "y (int): typed entry",
    "Args:",
    "Returns:",
    "Raises:",
    "Args: inline",
    "MyArgs:",
    "continuation text",
    "more words here",
    "(choices: [true])",
    "x: (choices: [])",
    "x: bad (choices: nope)",
    'x: d (choices: {"k": 1})',
    "ValueError: when bad",
    "https://example.com/x",
    "z: has Returns: inline",
    "Describe the tool.",
    "",
    "   ",
    "x: a\u00a0b",
    "y: tabs\there",
    "z: last one)",
    "x: (choices:)",
    'y: text (choices: "ab") ',
]
random_docstrings = st.lists(
    st.tuples(st.sampled_from(INDENTS), st.sampled_from(LINE_BODIES)).map("".join), max_size=10
).map("\n".join)
ENTRY_BODIES = [
    "x: The input",
    "y: Also the input",
    "z: third",
    "x:",
    "continuation text",
    "more (choices: [1])",
    'y: pick (choices: ["a", "b"])',
    "z: d (Choices: [true, null])",
    "y (str): typed",
    "x: again",
]
TAILS = [
    "",
    "\n\nReturns:\n    The output\n      more",
    "\nRaises:\n  ValueError: x",
    "\nReturns:\n  r\nRaises:\n  E",
    "\nReturns: inline",
]
structured_docstrings = st.builds(
    lambda description, entries, tail: description + "\n\nArgs:\n" + "\n".join(entries) + tail,
    st.sampled_from(["Tool.", "A tool\nover two lines.", "", "Tool. Raises: nothing"]),
    st.lists(
        st.tuples(
            st.sampled_from(["    ", "    ", "  ", "      ", "\t", ""]),
            st.sampled_from(ENTRY_BODIES),
        ).map("".join),
        max_size=6,
    ),
    st.sampled_from(TAILS),
)
docstrings = st.one_of(random_docstrings, structured_docstrings)


def tool_x(x: int) -> int:
    pass


def tool_xy(x: int, y: str = "") -> int:
    pass


def tool_xyz(x: int, y: str = "", z: list[int] | None = None) -> int:
    pass


def tool_none():
    pass


@SETTINGS
@given(doc=docstrings, tool=st.sampled_from([tool_none, tool_x, tool_xy, tool_xyz]))
@example(doc="Tool.\nArgs:\n    x:\n    y: b\n    z: c", tool=tool_xyz)
@example(
    doc="Tool.\n\nArgs:\n  x: a\n    y: deeper\n  z: c\nReturns:\n  r\n  more\nRaises:\n  E",
    tool=tool_xyz,
)
def test_docstrings_match_reference(doc, tool):
    tool.__doc__ = doc
    assert_same(tool)


@SETTINGS
@given(
    doc=st.one_of(docstrings, st.text(alphabet=' \t\n\x0bxyz:()[]"1ArgsReturnsRaises', max_size=40))
)
@example(doc="d\n Args:\nx: a\n  Returns:\nr\n\n  Raises: e")
def test_docstring_reading_matches_reference_parser(doc):
    """Description, argument texts and returns text, before choices are split off."""
    from transformers.utils.chat_template_utils import parse_google_format_docstring

    for text in (doc, doc.strip()):
        assert schema._read_docstring(text) == parse_google_format_docstring(text)
