"""An xml-inline `tag_pattern` with a look-ahead is read by the standard `re` in the spelling the
compiler declares (`SpelledTagPattern`, runtime/spelled_tag.py), where the reference's
`regex.finditer` reads it: the same groupdicts, in order, on any text.

Texts are made of the pattern's own pieces (its literals, the look-ahead's text, values with
spaces, newlines and `<`) and of the chars where `re`'s and `regex`'s classes differ (`\\x1c` is
`\\s` in `re`, not in `regex`), ASCII and not (the two spellings the runtime picks between). The
built-in families' tags are checked as their modules declare them; tags with look-aheads made up
here go through `compile_template` as a template would.
"""

from __future__ import annotations

import random

import pytest
import regex
from support import FAMILIES, exec_module, generated_module

import chatparse
from chatparse.runtime import SpelledTagPattern

FAMILIES_WITH_SPELLED_TAGS = [
    "deepseek_v32",
    "deepseek_v4",
    "qwen3_coder",
    "seed_oss",
]

# The chars where `re` and `regex` read `\s`, `\w` or `\d` differently, and some that every class
# here tells apart.
TRICKY = ["\x1c", "\x1f", "\x85", "\u3000", "é", "٣", "_", " ", "\n", "\t", "x", "7", '"', "'", ">"]


def _expected(pattern: str, text: str) -> list[dict]:
    return [m.groupdict() for m in regex.finditer(pattern, text, flags=regex.DOTALL)]


def module_of(tag_pattern: str) -> dict:
    """The namespace of the module compiled from a template whose calls are xml-inline with
    `tag_pattern` (a template from a hub, as a user would compile it)."""
    template = {
        "start_anchor": "<|assistant|>",
        "fields": {
            "tool_calls": {
                "open": "<tool_call>",
                "close": "</tool_call>",
                "content": "xml-inline",
                "content_args": {"tag_pattern": tag_pattern},
            },
            "content": {},
        },
    }
    return exec_module(chatparse.compile_template(template))


def _texts(examples: list[str], seed: int, count: int) -> list[str]:
    """Texts of whole example tags, pieces of them cut anywhere, and the tricky chars, then
    mutated char by char (a char dropped, doubled or replaced by a tricky one)."""
    rng = random.Random(seed)
    pieces = list(examples) + TRICKY
    for example in examples:
        for _ in range(6):
            cut = sorted(rng.sample(range(len(example) + 1), 2))
            pieces.append(example[cut[0] : cut[1]])
    texts = []
    for _ in range(count):
        text = list("".join(rng.choice(pieces) for _ in range(rng.randint(0, 8))))
        for _ in range(rng.randint(0, 3)):
            if not text:
                break
            at = rng.randrange(len(text))
            how = rng.randrange(3)
            if how == 0:
                del text[at]
            elif how == 1:
                text.insert(at, text[at])
            else:
                text[at] = rng.choice(TRICKY)
        texts.append("".join(text))
    return texts


# Tags as each family writes them (its sample's shape), for the texts to be made of.
EXAMPLES = {
    "deepseek_v32": [
        '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n',
        '<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>',
        '<｜DSML｜parameter\tname="a b"  string="true"> x ',
    ],
    "qwen3_coder": [
        "<parameter=city>\nParis\n</parameter>\n",
        "<parameter=code>\ndef f():\n    return 1\n",
        "<parameter=n>3</parameter>",
    ],
}
EXAMPLES["deepseek_v4"] = EXAMPLES["deepseek_v32"]
EXAMPLES["seed_oss"] = EXAMPLES["qwen3_coder"]


def test_the_built_ins_with_spelled_tags_are_those_with_a_look_ahead() -> None:
    """minimax_m2's tag has a look-ahead too, but a value between two runs of spaces keeps it on
    `regex` (see test_a_tag_the_spelling_cannot_take_stays_with_regex)."""
    spelled = [
        family
        for family in FAMILIES
        if isinstance(getattr(generated_module(family), "TOOL_CALLS_TAG", None), SpelledTagPattern)
    ]
    assert spelled == FAMILIES_WITH_SPELLED_TAGS


@pytest.mark.parametrize("family", FAMILIES_WITH_SPELLED_TAGS)
def test_a_built_in_tag_reads_as_regex_does(family: str) -> None:
    module = generated_module(family)
    tag = module.TOOL_CALLS_TAG
    assert isinstance(tag, SpelledTagPattern)
    pattern = module.TOOL_CALLS_ARGS["tag_pattern"]
    texts = _texts(EXAMPLES[family], seed=len(family), count=1500)
    found = sum(1 for text in texts if _expected(pattern, text))
    assert found > 100, "too few texts hold a tag to test anything"
    assert any(not text.isascii() and _expected(pattern, text) for text in texts)
    for text in texts:
        assert list(tag.groupdicts(text)) == _expected(pattern, text), text


# Tags that a DFA cannot run (a look-ahead), in the shapes templates write them: each pair of
# renamed groups, a negative look-ahead, classes of the tables inside and outside the look-ahead.
MADE_UP_TAGS = {
    r"<p=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?(?:</p>|(?=<p=)|\Z)": ["<p=k>\nv\n</p>", "<p=é>x"],
    r"<a\s+k=\"(?P<key>\w+)\"\s*>(?P<value>.*?)(?:</a>|(?=<a\s))": [
        '<a k="x_1" >v</a>',
        '<a\tk="é">',
    ],
    r"(?:<k>(?P<key>\w+)</k>|\[(?P<key>\d+)\])(?P<value>.*?)(?=<k>|\[|\Z)": ["<k>ab</k>v", "[٣7]w"],
    r"<v (?!x)(?P<key>[^\s>]+)>(?P<value>.*?)</v>": ["<v k>1</v>", "<v xk>2</v>"],
    r"(?P<key>\w+)=(?P<value>\S*?)(?=\s|$)": ["k=v ", "é=\x1c1\n"],
}


@pytest.mark.parametrize("pattern", list(MADE_UP_TAGS))
def test_a_made_up_tag_with_a_look_ahead_reads_as_regex_does(pattern: str) -> None:
    namespace = module_of(pattern)
    tag = namespace["TOOL_CALLS_TAG"]
    assert isinstance(tag, SpelledTagPattern)
    texts = _texts(MADE_UP_TAGS[pattern], seed=len(pattern), count=1500)
    assert sum(1 for text in texts if _expected(pattern, text)) > 100
    for text in texts:
        assert list(tag.groupdicts(text)) == _expected(pattern, text), text


@pytest.mark.parametrize(
    "pattern",
    [
        r"<p>(?P<value>.*?)(?=(?P<key>x))",  # a named group inside the look-ahead
        r"(?:<p>(?=<))+(?P<key>.)(?P<value>.)",  # a look-ahead under a repeat
        r"<p>(?:(?P<key>a*)b?)*(?P<value>.*?)(?=;)",  # a repeat of what can match empty
        r"<v (?P<key>[^\s>]+)>(?P<value>(?:(?!</v>).)*)</v>",  # the same, a tempered `.`
        r"<p>(?P<key>.)(?P<value>.*?)(?<=x)",  # look-behind: not a DFA's, not spelled either
        r"\b(?P<key>\w+)(?P<value>.*?)(?=;)",  # `\b` asks the tables word by word
        # minimax_m2's: a lazy value between two runs, quadratic over a long run of spaces in both
        # engines, and 3x slower in `re`
        r"<p (?P<key>\w+)>\s*(?P<value>.*?)\s*(?:</p>|(?=<p ))",
    ],
)
def test_a_tag_the_spelling_cannot_take_stays_with_regex(pattern: str) -> None:
    namespace = module_of(pattern)
    assert "TOOL_CALLS_TAG" not in namespace or not isinstance(
        namespace["TOOL_CALLS_TAG"], SpelledTagPattern
    )


def test_a_call_reads_the_same_message_as_the_reference() -> None:
    """The whole value, through the module: a DSML call whose string argument holds a char
    `\\s` of `re` only, a non-string one JSON, and a parameter closed by the next one's
    look-ahead."""
    from support import builtin_template
    from transformers.utils.chat_parsing import parse_response
    from transformers.utils.chat_parsing.response_templates import load_response_template

    module = generated_module("deepseek_v32")
    text = (
        "Hi.<｜DSML｜function_calls>\n"
        '<｜DSML｜invoke name="f">\n'
        '<｜DSML｜parameter name="a" string="true">x\x1cy</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="b" string="false">[1, 2]'
        '<｜DSML｜parameter name="c" string="true">\u3000z</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n"
        "</｜DSML｜function_calls>"
    )
    prefix = "<｜Assistant｜>"
    spec = load_response_template(builtin_template("deepseek_v32"))
    expected = parse_response(text, spec, prefix=prefix)
    assert module.parse_response(text, prefix=prefix) == expected
    assert expected["tool_calls"][0]["function"]["arguments"]["b"] == [1, 2]
