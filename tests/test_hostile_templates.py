"""Hypothesis: hostile strings in every string slot of a template, and nesting 1,000 levels deep.

Templates are untrusted input that reaches generated code. Field names, delimiters (literals,
literal lists, patterns), transform strings and keys, defaults, content_args, start anchors and
xml-inline tag patterns get strings made of quotes at either end, triple quotes, a trailing
backslash, line breaks, NUL, lone surrogates, `{{ }}`, `{% %}`, `#` and pragma text. For every
template, either the module compiles and its result (message or error class, whole and fed one
character at a time, and `parse_response`) equals the reference's one-shot result, or the
template is rejected with the reference's error class. Runs derandomized in CI (< 20 s); set
CHATPARSE_HYPOTHESIS_EXAMPLES for a longer run.
"""

from __future__ import annotations

import os

import pytest
import regex
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support import (
    ReferenceParser,
    chatparse_bulk_outcome,
    chatparse_outcome,
    needs_reference,
    nested,
    reference_one_shot,
    same_outcome,
    without_events,
)

import chatparse
from chatparse.compiler.nested import dumps

pytestmark = needs_reference

EXAMPLES = int(os.environ.get("CHATPARSE_HYPOTHESIS_EXAMPLES", "40"))

# Pieces that break a careless emitter: string and docstring ends, escapes, line breaks, bytes a
# source file cannot hold, jinja syntax, comment starts and pragmas, placeholders.
ATOMS = [
    '"',
    "'",
    '"""',
    "'''",
    "\\",
    "\n",
    "\r\n",
    "\x00",
    "\ud800",
    "\udfff",
    "\u2028",
    "{{ x }}",
    "{% raw %}",
    "#",
    "# fmt: off",
    "{content}",
    "{",
    "}",
    "<",
    ">",
    "é",
    "a",
    " ",
]


@st.composite
def hostile(draw, min_size=1):
    """A hostile string; quotes and backslashes like to sit at either end."""
    text = "".join(draw(st.lists(st.sampled_from(ATOMS), min_size=min_size, max_size=4)))
    head = draw(st.sampled_from(["", '"', "\\", "'"]))
    tail = draw(st.sampled_from(["", '"', "\\", '"""']))
    return head + text + tail


@st.composite
def delimiter(draw, role: str, group: bool = False):
    """(key, value, literals that match it) for an open or close delimiter."""
    text = draw(hostile())
    kinds = ["literal", "list", "escaped pattern"] * 2 + ["raw pattern"] + ["group"] * (2 * group)
    kind = draw(st.sampled_from(kinds))
    if kind == "literal":
        return role, text, [text]
    if kind == "list":
        other = draw(hostile())
        return role, [text, other], [text, other]
    if kind == "escaped pattern":
        return role + "_pattern", regex.escape(text) + r"\s*", [text]
    if kind == "group":
        return role + "_pattern", regex.escape(text) + r"(?P<g>\w+)>", [text + "v>"]
    return role + "_pattern", text, [text]  # often an invalid regex: rejected like the reference


@st.composite
def templates(draw):
    pieces: list[str] = []  # text the output may contain
    fields = {}
    for _ in range(draw(st.integers(1, 2))):
        name = draw(hostile())
        key, value, literals = draw(delimiter("open", group=True))
        field = {key: value}
        pieces += literals
        if draw(st.booleans()):
            key, value, literals = draw(delimiter("close"))
            field[key] = value
            pieces += literals
        content = draw(st.sampled_from(["text", "text", "json", "kv-lines", "xml-inline"]))
        if content != "text":
            field["content"] = content
        args = {}
        if content == "kv-lines":
            args = {"kv_sep": draw(hostile()), "line_sep": draw(hostile())}
        elif content == "xml-inline":
            tag = draw(hostile())
            pieces.append(f"<{tag}>v</{tag}>")
            args = {
                "tag_pattern": draw(
                    st.sampled_from(
                        [
                            f"<(?P<key>{regex.escape(tag)})>(?P<value>[^<]*)</{regex.escape(tag)}>",
                            tag,  # raw: often invalid, or without a `key` group
                        ]
                    )
                )
            }
        if draw(st.booleans()):
            args[draw(hostile())] = draw(hostile())
        if args:
            field["content_args"] = args
        if "(?P<g>" in str(field.get("open_pattern")) or draw(st.booleans()):
            transform = {
                draw(hostile()): "{content}",
                draw(hostile()): draw(hostile()),
                "list": [
                    draw(hostile()),
                    "{g}" if "(?P<g>" in str(field.get("open_pattern")) else "{content}",
                ],
            }
            field["transform"] = draw(st.sampled_from([transform, draw(hostile()), "{content}"]))
        fields[name] = field
    if draw(st.booleans()):
        fields["content"] = {}
    template = {"fields": fields}
    if draw(st.booleans()):
        template["defaults"] = {draw(hostile()): draw(hostile()), "role": "assistant"}
    anchor = draw(hostile())
    template.update(
        draw(
            st.sampled_from(
                [
                    {"start_anchor": anchor},
                    {"start_anchor": [anchor, "@@"]},
                    {"start_anchor_pattern": regex.escape(anchor)},
                ]
                * 3
                + [{"start_anchor_pattern": anchor}]
            )
        )
    )
    pieces.append(anchor)
    # Where to nest 1,000 deep; the test builds that value (hypothesis would print it, recursing).
    deep = draw(st.sampled_from([None] * 4 + ["transform", "defaults", "content_args"]))
    return template, pieces, deep


def deepen(template: dict, where: str | None, leaf: str) -> dict:
    """`template` with a value nested 1,000 levels deep in `where` (first field's transform or
    content_args, or defaults)."""
    if where is None:
        return template
    template = {**template, "fields": dict(template["fields"])}
    name, first = next(iter(template["fields"].items()))
    first = template["fields"][name] = dict(first)
    if where == "transform":
        first["transform"] = {"deep": nested(1000, "{content}")}
    elif where == "defaults":
        template["defaults"] = {"deep": nested(1000, leaf)}
    else:
        first["content_args"] = {"deep": nested(1000, leaf)}
    return template


def _loops_forever_in_the_reference(template: dict) -> bool:
    """A field whose open and close both match the empty string makes the reference loop."""
    for field in template["fields"].values():
        if not isinstance(field, dict):
            continue
        try:
            opens, closes = (
                regex.compile(field[k]).fullmatch("") is not None if k in field else False
                for k in ("open_pattern", "close_pattern")
            )
        except (regex.error, TypeError, ValueError):
            continue
        if opens and closes:
            return True
    return False


def check_against_reference(template: dict, text: str, prefix: str) -> None:
    """chatparse's outcome (whole, one character at a time, bulk) is the reference's one-shot
    outcome; a template the reference accepts compiles and holds its strings as data."""
    expected = reference_one_shot(template, text, prefix)
    for chunks in ([text], list(text)):
        got = chatparse_outcome(template, chunks, prefix)
        assert same_outcome(got, expected), (chunks, got[:2], expected[:2])
    assert same_outcome(chatparse_bulk_outcome(template, text, prefix), without_events(expected))
    try:
        ReferenceParser(template, prefix="")
    except Exception as error:  # rejected: chatparse refuses to compile it, with the same class
        with pytest.raises(type(error)):
            chatparse.load_module(template)
    else:  # accepted: the module holds the template's strings as data, read back exactly
        module = chatparse.load_module(template)
        assert dumps(module.TEMPLATE, default=repr) == dumps(template, default=repr)


@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=templates(), data=st.data())
def test_hostile_template_compiles_and_agrees_with_reference(case, data):
    template, pieces, deep = case
    if _loops_forever_in_the_reference(template):
        return
    text = "".join(
        data.draw(
            st.lists(st.sampled_from(pieces + ["x", " ", "\n", '"']), max_size=8), label="text"
        )
    )
    prefix = data.draw(st.sampled_from(["", "@@"] + pieces[-1:]), label="prefix")
    check_against_reference(deepen(template, deep, pieces[0]), text, prefix)


# Fixed cases: the examples of issue 9, and each deep slot at 1,000 levels with hostile strings.
FIXED = {
    "plain-string transform": {
        "start_anchor": "<A>",
        "fields": {"x": {"open": "<x>", "close": "</x>", "transform": "{content}"}},
    },
    "null content_args": {
        "start_anchor": "<A>",
        "fields": {"x": {"open": "<x>", "close": "</x>", "content_args": None}},
    },
    "quotes and backslashes 300-400 deep": {
        "start_anchor": '"""\\',
        "defaults": {"d": nested(400, '"')},
        "fields": {'"': {"open": "\\", "transform": {"t": nested(300, "{content}")}}},
    },
    "content_args 1,000 deep (accepted)": {
        "start_anchor": "\\",
        "fields": {"\\": {"open": '"', "content_args": {"d": nested(1000, "#")}}, "content": {}},
    },
    "transform 1,000 deep (RecursionError)": {
        "start_anchor": "'''",
        "fields": {"'": {"open": "'", "transform": [nested(999, "{content}")]}},
    },
    "defaults 1,000 deep (RecursionError)": {
        "start_anchor": "#",
        "defaults": {"#": nested(1000, "\x00")},
        "fields": {"#": {"open": "\x00"}},
    },
}


@pytest.mark.parametrize("name", FIXED)
@pytest.mark.parametrize("text", ["<x>a</x>\"\\#\x00' b", ""])
def test_fixed_hostile_template_agrees_with_reference(name, text):
    check_against_reference(FIXED[name], text, "")


def test_a_tag_pattern_regex_cannot_compile_for_depth_fails_where_the_references_does():
    """`regex` parses groups by recursion: a tag_pattern nested 400 deep exceeds the stack in its
    `compile`. The reference reads the tag only when a call's value is parsed, so its parser is
    built and reads text without a call; chatparse compiles the template too (the tag is left to
    `regex`) and fails in the same place, with the same class."""
    pattern = "(?:" * 400 + "<(?P<key>a)>(?P<value>b)" + ")" * 400
    template = {
        "start_anchor": "@",
        "fields": {
            "tool_calls": {
                "open": "<c>",
                "close": "</c>",
                "content": "xml-inline",
                "content_args": {"tag_pattern": pattern},
            },
            "content": {},
        },
    }
    with pytest.raises(RecursionError):
        regex.compile(pattern)
    chatparse.compile_template(template)
    for text in ("plain text", "<c><a>b</c>"):
        assert chatparse_outcome(template, [text], "") == reference_one_shot(template, text, "")
