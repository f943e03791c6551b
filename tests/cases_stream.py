"""Hand-written templates and outputs for the differential stream tests.

Each case: (id, template, prefix, text, tools). Expected outcomes are never written here: they come
from the reference's one-shot run (whole text fed at once) when the tests run.
"""

from __future__ import annotations

import json
from pathlib import Path

SMOLLM = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open_pattern": r"\s*<tool_call>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close_pattern": r"\s*(?:<\|im_end\|>|<\|endoftext\|>)", "content": "text"},
    },
}

QWEN35 = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open_pattern": r"\s*<tool_call>\s*<function=(?P<name>[^>\n]+)>",
            "close_pattern": r"</function>\s*</tool_call>",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": r"<parameter=(?P<key>[^>\n]+)>\s*(?P<value>.*?)\s*</parameter>",
            },
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
        "content": {"close_pattern": r"\s*(?:<\|im_end\|>|<\|endoftext\|>)", "content": "text"},
    },
}

GEMMA4 = {
    "defaults": {"role": "assistant"},
    "start_anchor": ["<|turn>model\n", "<tool_response|>"],
    "fields": {
        "reasoning_content": {
            "open": "<|channel>thought\n",
            "close": "<channel|>",
            "content": "text",
        },
        "tool_calls": {
            "open_pattern": r"<\|tool_call>call:(?P<name>\w+)",
            "close": "<tool_call|>",
            "repeats": True,
            "content": "json",
            "content_args": {"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']]},
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
        "content": {"close": ["<turn|>", "<|tool_response>", "<eos>"], "content": "text"},
    },
}

NULL_SINK_JOIN = {
    "start_anchor": "BEGIN",
    "fields": {
        "notes": {"open": "[", "close": "]", "repeats": True, "join": " | "},
        "score": {"open": "<s>", "close": "</s>", "content": "int"},
        "ratio": {"open": "<r>", "close": "</r>", "content": "float"},
        "flag": {"open": "<f>", "close": "</f>", "content": "bool", "optional": False},
    },
}

OVERLAPPING_LITERALS = {
    "start_anchor": "@",
    "fields": {
        "a": {"open": ["<a", "<ab>"], "close": "</x>"},
        "content": {},
    },
}

PARTIAL_VS_COMPLETE = {
    "start_anchor": "@",
    "fields": {"tool": {"open_pattern": "<tool>|<t", "close": "</a>"}, "content": {}},
}

DOLLAR_CLOSE = {
    "start_anchor": "@",
    "fields": {"content": {"close_pattern": "$"}, "x": {"open": "<x>", "close": "</x>"}},
}

KV_AND_EACH = {
    "defaults": {"role": "assistant", "tool_calls": []},
    "start_anchor_pattern": r"<\|START\|>\s*",
    "fields": {
        "meta": {"open": "<meta>", "close": "</meta>", "content": "kv-lines"},
        "tool_calls": {
            "open": "<calls>",
            "close": "</calls>",
            "content": "json",
            "transform_each": True,
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{args}"},
            },
        },
        "content": {"close": "<|END|>"},
    },
}

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "metric": {"type": "boolean"},
                "extra": {"type": "object"},
            },
        },
    },
}

NULLABLE_CLOSE = {
    "start_anchor": "@",
    "fields": {"content": {"close_pattern": "x*"}, "t": {"open": "<t>", "close": "</t>"}},
}

ZERO_WIDTH_OPEN = {
    "start_anchor": "@",
    "fields": {
        "reasoning_content": {"open_pattern": r"^\s*(?:<think>\s*)?", "close": "</think>"},
        "content": {"close_pattern": r"\s*<\|end\|>"},
    },
}

# Opens that can match the empty string, where the input ends: the reference commits no match
# that starts at the end of its buffer (whole text, feed or finalize), so nothing opens there.
EMPTY_OPEN_AT_END = {
    "start_anchor": "@",
    "fields": {
        "n": {"open_pattern": r"(?:\A|#)", "close": "</n>", "content": "json"},
        "tag": {"open_pattern": "(?:)", "close": "</n>", "repeats": True},
        "rest": {},
    },
}
EMPTY_OPEN_AND_CLOSE = {
    "start_anchor": "@",
    "fields": {"x": {"open_pattern": "(?:)", "close_pattern": "^"}},
}

# Look-ahead opens run on the `regex` fallback. Fed one char at a time, "@@e" matches `@@(?!end)`
# until "nd" arrives, and "<c>1" matches `<c>(?=\d)` before the higher-priority `<c>\d*!`
# has seen its "!": a fallback match stays pending while any attempt reads to the edge.
LOOKAHEAD_OPENS = {
    "start_anchor": "#",
    "fields": {
        "cmd": {"open_pattern": "@@(?!end)", "close": ";"},
        "arg": {"open_pattern": r"<c>\d*!|<c>(?=\d)", "close": "</c>"},
        "content": {},
    },
}

# Literal stretches that the scanner jumps over in one `startswith`: a run must still start
# inside a stretch when it could end elsewhere (`ab!` inside `abab!`), and two live delimiters
# share a stretch (`<|c|>`) before they part.
STRETCHES = {
    "start_anchor": "@",
    "fields": {
        "long": {"open": "abab!", "close": "#"},
        "short": {"open": "abX", "close": "#"},
        "tool_calls": {
            "open_pattern": r"<\|c\|>commentary\s+to=f\.(?P<name>\w+)<\|m\|>|\s*to=f\.(?P<name>\w+)\s*<\|c\|>",
            "close": "<|call|>",
            "repeats": True,
            "transform": {"name": "{name}", "arguments": "{content}"},
        },
        "content": {"open": ["<|c|>final<|m|>", "<|c|>commentary<|m|>"], "close": "<|end|>"},
    },
}

# Every kind of transform node the compiler spells out: nested dicts, lists, literals of each JSON
# type, and lookups that succeed or fail (a missing key is the reference's ValueError).
TRANSFORM_SHAPES = {
    "start_anchor": "@",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<call (?P<name>\w+)>",
            "close": "</call>",
            "repeats": True,
            "content": "json",
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content.args}"},
                "tags": ["fixed", "{content.tag}", {"deep": "{content}"}, []],
                "n": 3,
                "x": 1.5,
                "ok": True,
                "none": None,
                "empty": {},
            },
        },
        "content": {"close": "<end>"},
    },
}


def _look_ahead(open_pattern: str, close: str = ")") -> dict:
    """A template whose open runs on the `regex` fallback (the look-ahead): see `Delimiter.lead`."""
    return {
        "start_anchor": "@",
        "fields": {"call": {"open_pattern": open_pattern, "close": close}, "content": {}},
    }


# Fallback opens that begin with a loop over a class (a start after a lead char that an attempt
# covered is not attempted), and ones that look like it but are not (an alternation at the top, a
# look-behind, a lazy loop, `\b`, a class after the loop).
LEAD_LOOK_AHEAD = _look_ahead(r"\s*call(?=\s*\()")
LEAD_PLUS_LOOK_AHEAD = _look_ahead(r"[ \t]+f(?=\d)", ";")
LEAD_LAZY_LOOK_AHEAD = _look_ahead(r"\s*?x(?=\s\sy)", ";")
LEAD_BAR_LOOK_AHEAD = _look_ahead(r"\s*a(?=b)|c")
LEAD_BEHIND = _look_ahead(r"\s*(?<=\s\s)x(?=y)", ";")
LEAD_WORD_LOOK_AHEAD = _look_ahead(r"\s*\bx(?=y)", ";")
LEAD_CLASS_LOOK_AHEAD = _look_ahead(r"\s*[xy]+(?=z)", ";")
LEAD_CASES = [
    ("lead-spaces-then-call", LEAD_LOOK_AHEAD, "", "hi" + " " * 9 + "call (x) after", None),
    ("lead-spaces-then-miss", LEAD_LOOK_AHEAD, "", "  hi   callx  call  \n (a)  call", None),
    ("lead-spaces-to-the-end", LEAD_LOOK_AHEAD, "", "a" + " " * 11, None),
    ("lead-in-prefix", LEAD_LOOK_AHEAD, "@   cal", "l ( x) y   call", None),
    ("lead-plus", LEAD_PLUS_LOOK_AHEAD, "", "a \t f  fx f2;b  \t\tf9;", None),
    ("lead-lazy", LEAD_LAZY_LOOK_AHEAD, "", "   x  y;  x y; x", None),
    ("lead-bar-not-a-lead", LEAD_BAR_LOOK_AHEAD, "", "  c) then   ab)  a  c", None),
    ("lead-behind", LEAD_BEHIND, "", " xy;  xy; x   xy;", None),
    ("lead-word", LEAD_WORD_LOOK_AHEAD, "", "axy;  xy; a xy;", None),
    ("lead-class", LEAD_CLASS_LOOK_AHEAD, "", "  xyx  yyz; xq  xz;", None),
]

CASES = [
    (
        "smollm-plain",
        SMOLLM,
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
        "Hello there!<|im_end|>",
        None,
    ),
    (
        "smollm-think-tools",
        SMOLLM,
        "<|im_start|>assistant\n",
        '<think>\nLet me check.\n</think>\nSure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call><|im_end|>',
        None,
    ),
    (
        "smollm-prefilled-think",
        SMOLLM,
        "<|im_start|>assistant\n<think>\nI",
        " wonder</think>ok<|im_end|>\n<|endoftext|>",
        None,
    ),
    ("smollm-no-anchor", SMOLLM, "no anchor here <think>", "abc</think>done", None),
    ("smollm-bad-json", SMOLLM, "", "<tool_call>{not json</tool_call>", None),
    ("smollm-unclosed", SMOLLM, "", "text <think>never closed", None),
    (
        "qwen35-xml",
        QWEN35,
        "<|im_start|>assistant\n<think>\n\n</think>\n\n",
        "I'll look.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=metric>\ntrue\n</parameter>\n</function>\n</tool_call><|im_end|>",
        [WEATHER_TOOL],
    ),
    (
        "gemma4",
        GEMMA4,
        "<|turn>user\nweather?<turn|>\n<|turn>model\n",
        '<|channel>thought\nhmm<channel|><|tool_call>call:get_weather{city:<|"|>Paris, "FR"<|"|>,days:3}<tool_call|><turn|>',
        [WEATHER_TOOL],
    ),
    (
        "null-sink-join",
        NULL_SINK_JOIN,
        "BEGIN",
        "junk [one] mid [two]<s> 42 </s><r>1.5</r><f>True</f> tail",
        None,
    ),
    ("null-sink-missing-required", NULL_SINK_JOIN, "", "[one]", None),
    ("null-sink-bad-int", NULL_SINK_JOIN, "", "<s>x</s><f>1</f>", None),
    ("overlapping-literals", OVERLAPPING_LITERALS, "", "pre <ab>hi</x> post <a b</x>", None),
    ("partial-vs-complete", PARTIAL_VS_COMPLETE, "", "hi <tool>x</a> and <ty</a>", None),
    ("dollar-close", DOLLAR_CLOSE, "", "first line\nsecond <x>in</x> line\n", None),
    ("dollar-close-trailing-newline", DOLLAR_CLOSE, "", "abc\n", None),
    (
        "kv-and-each",
        KV_AND_EACH,
        "<|START|>  \n",
        'hello <meta>\nlang: en\nmood : calm\n</meta>x<calls>[{"name": "a", "args": {"q": 1}}, {"name": "b", "args": {}}]</calls><|END|>',
        None,
    ),
    ("each-not-a-list", KV_AND_EACH, "", '<calls>{"name": "a", "args": {}}</calls>', None),
    (
        "each-element-not-a-dict",
        KV_AND_EACH,
        "",
        '<calls>[{"name": "a", "args": {}}, 7]</calls>',
        None,
    ),
    ("each-lookup-before-bad-element", KV_AND_EACH, "", '<calls>[{"name": "a"}, 7]</calls>', None),
    ("prefix-none", SMOLLM, None, "x", None),
    # The prefix is cut after the last non-overlapping anchor match: "aa" in "xaaa" ends at 3.
    (
        "anchor-overlaps-itself",
        {"start_anchor": "aa", "fields": {"content": {}}},
        "xaaa",
        "bc",
        None,
    ),
    (
        "anchor-last-of-several",
        {"start_anchor": "<a>", "fields": {"content": {}}},
        "<a>1<a>2",
        "tail",
        None,
    ),
    # Quirk copied on purpose: a close matching the empty string on an empty region stops reading.
    ("quirk-nullable-close-stops-reading", NULLABLE_CLOSE, "", "ab<t>in</t>xxcd", None),
    ("quirk-nullable-close-at-start", NULLABLE_CLOSE, "", "<t>in</t> after", None),
    (
        "zero-width-open-at-start",
        ZERO_WIDTH_OPEN,
        "",
        "  <think> plan </think> answer <|end|>",
        None,
    ),
    ("zero-width-open-prefilled", ZERO_WIDTH_OPEN, "@", "plan </think> answer <|end|>", None),
    ("zero-width-open-in-prefix", ZERO_WIDTH_OPEN, "x@ <thi", "nk>plan</think>a", None),
    (
        "transform-shapes",
        TRANSFORM_SHAPES,
        "@",
        'hi <call f>{"args": {"a": 1}, "tag": "t"}</call><call g>{"args": [], "tag": null}</call> bye<end>',
        None,
    ),
    ("lookahead-open-rejects-later", LOOKAHEAD_OPENS, "", "@@end; @@go; @@en", None),
    (
        "lookahead-open-earlier-branch-wins-later",
        LOOKAHEAD_OPENS,
        "#",
        "<c>12!a</c> <c>3</c><c>4",
        None,
    ),
    ("empty-open-empty-text", EMPTY_OPEN_AT_END, "", "", None),
    ("empty-open-after-a-close-at-the-end", EMPTY_OPEN_AT_END, "", "7</n>", None),
    ("empty-open-inside-the-text", EMPTY_OPEN_AT_END, "", "[2]</n>tail</n>#3", None),
    ("empty-open-at-the-end-of-the-prefix", EMPTY_OPEN_AT_END, "@", "", None),
    ("empty-open-prefix-closes-at-its-end", EMPTY_OPEN_AT_END, "@[1]</n>", "", None),
    ("empty-open-and-close-empty-text", EMPTY_OPEN_AND_CLOSE, "", "", None),
    ("transform-missing-key", TRANSFORM_SHAPES, "@", '<call f>{"args": {}}</call><end>', None),
    ("transform-not-a-dict", TRANSFORM_SHAPES, "@", "<call f>[1, 2]</call><end>", None),
    ("stretch-inner-start", STRETCHES, "", "ababX in#ab abab! out# abababX x#", None),
    (
        "stretch-shared-prefix",
        STRETCHES,
        "@",
        "<|c|>commentary to=f.get<|m|>{}<|call|> <|c|>commentary<|m|>hi<|end|> to=f.put <|c|>x<|call|><|c|>final<|m|>bye<|end|>",
        None,
    ),
]
CASES += LEAD_CASES

# `^` holds at buffer position 0 only (the reference searches its buffer from `pos`, and its
# one-shot buffer starts after the anchor): from position 1 on, a region watches its delimiters'
# after-start forms (compiler/automata/region_automaton.py), which the fast path plans. qwen3_thinking_2507's open
# (`<think>|^`: reasoning opens, empty, at position 0 unless something else wins there) and
# ernie45's (`^\s*(?:<think>\s*)?`: only at position 0), and a close with a `^` branch.
QWEN3_THINKING = json.loads(
    (Path(__file__).resolve().parents[1] / "templates" / "qwen3_thinking_2507.json").read_text()
)
ERNIE45 = json.loads(
    (Path(__file__).resolve().parents[1] / "templates" / "ernie45.json").read_text()
)
CARET_CLOSE = {
    "start_anchor": "@",
    "fields": {
        "a": {"open": "<a>", "close_pattern": "(?:^|\n)END"},
        "content": {"close_pattern": "^<x>|</c>"},
    },
}
# An empty open at position 0 enters its region there, where its close's `^` branch still holds.
CARET_EMPTY_OPEN = {
    "start_anchor": "@",
    "fields": {"a": {"open_pattern": "^", "close_pattern": "^<x>|</a>"}, "content": {}},
}

CARET_CASES = [
    ("caret-empty-open-then-caret-close", CARET_EMPTY_OPEN, "@", "<x>rest", None),
    ("caret-empty-open-then-late-close", CARET_EMPTY_OPEN, "@", "r<x>s</a>t", None),
    (
        "caret-at-the-start",
        QWEN3_THINKING,
        "<|im_start|>assistant\n",
        "plan</think>Hi <think>x</think> yo<|im_end|>",
        None,
    ),
    (
        "caret-prefilled",
        QWEN3_THINKING,
        "<|im_start|>assistant\n<think>",
        "a</think>b <think>c</think>d",
        None,
    ),
    (
        "caret-tool-first",
        QWEN3_THINKING,
        "<|im_start|>assistant\n",
        '<tool_call>{"name": "f", "arguments": {}}</tool_call> ok',
        None,
    ),
    ("caret-no-anchor", QWEN3_THINKING, "", "x</think>y<think>z", None),
    ("caret-ernie", ERNIE45, "Assistant:", "  <think> r </think> c <think> not reasoning", None),
    ("caret-ernie-late", ERNIE45, "Assistant: early", "<think> c </think> d", None),
    ("caret-close-at-0", CARET_CLOSE, "@", "<x>after", None),
    ("caret-close-later", CARET_CLOSE, "@", "a<x>b</c>c<a>q\nEND<x>r</c>", None),
    ("caret-close-in-region", CARET_CLOSE, "@<a>", "END<a> z\nEND tail", None),
]
CASES += CARET_CASES

# The prefix path's edge rule on a fallback open `C*L...` (`fallback.pending_by_literal`): only
# starts before the literal, or before a cut-off start of it at the end of the prefix, can hold
# text there. phi4_mini's own open (`\s*functools(?=\s*\[)`), a literal that overlaps itself, a
# negative look-ahead and one that can match at the very edge; and many closes before the edge
# (each delimiter's answer is kept across commits).
PHI4_MINI = json.loads(
    (Path(__file__).resolve().parents[1] / "templates" / "phi4_mini.json").read_text()
)

# phi4_mini's look-ahead waits over spaces after `functools` (`RegexFallback(waits=)`): while only
# spaces follow, its attempt is pending without asking `regex` again; what ends the wait decides.
WAITS_CASES = [
    (
        "waits-then-call",
        PHI4_MINI,
        "<|assistant|>",
        "Sure. functools" + " " * 40 + '[{"name": "f", "arguments": {}}]<|end|>',
        None,
    ),
    (
        "waits-then-miss",
        PHI4_MINI,
        "<|assistant|>",
        "Sure. functools" + " " * 40 + "x more<|end|>",
        None,
    ),
    (
        "waits-mixed-spaces",
        PHI4_MINI,
        "<|assistant|>",
        "a functools \n\t \u3000 \u00a0[]<|end|>",
        None,
    ),
    ("waits-to-the-end", PHI4_MINI, "<|assistant|>", "a functools" + " " * 12, None),
    ("waits-twice", PHI4_MINI, "<|assistant|>", "functools  x functools   []<|end|>", None),
]
CASES += WAITS_CASES
_CALL = '[{"name": "f", "arguments": {"a": 1}}]<|end|>'
_SAID = "<|user|>hi<|end|><|assistant|>Sure."
LEAD_SELF_OVERLAP = _look_ahead(r"\s*abab(?=!)", ";")
LEAD_NEGATIVE = _look_ahead(r"\s*call(?!x)", ";")
LEAD_AT_EDGE = _look_ahead(r"\s*abab(?=!|$)", ";")
PREFIX_EDGE_CASES = [
    ("edge-spaces", PHI4_MINI, _SAID + " " * 40, "functools " + _CALL, None),
    ("edge-spaces-no-call", PHI4_MINI, _SAID + " \n" * 20, "and then some.<|end|>", None),
    ("edge-spaces-only", PHI4_MINI, "<|assistant|>" + " " * 30, "", None),
    ("edge-cut-literal", PHI4_MINI, _SAID + " " * 40 + "funct", "ools" + _CALL, None),
    ("edge-cut-literal-misses", PHI4_MINI, _SAID + " " * 40 + "funct", "ional.<|end|>", None),
    ("edge-cut-after-one-char", PHI4_MINI, _SAID + "\n" * 30 + "f", "unctools " + _CALL, None),
    ("edge-after-literal", PHI4_MINI, _SAID + " " * 30 + "functools" + " " * 20, _CALL, None),
    (
        "edge-after-literal-misses",
        PHI4_MINI,
        _SAID + " " * 30 + "functools" + " " * 20,
        "x<|end|>",
        None,
    ),
    ("edge-full-match-in-prefix", PHI4_MINI, _SAID + " " * 30 + "functools [", _CALL[1:], None),
    ("edge-full-match-at-the-end", PHI4_MINI, _SAID + " functools" + _CALL + "   ", "more", None),
    (
        "edge-many-near-misses",
        PHI4_MINI,
        "<|assistant|>" + "functools functoolsx f ff " * 6 + " " * 20 + "functo",
        "ols " + _CALL,
        None,
    ),
    (
        "edge-many-closes",
        PHI4_MINI,
        "<|assistant|>" + "a <|end|>" * 12 + "  functo",
        "ols" + _CALL,
        None,
    ),
    (
        "edge-many-closes-then-text",
        PHI4_MINI,
        "<|assistant|>" + "a <|end|>  b" * 12,
        " c<|end|>",
        None,
    ),
    ("edge-overlap-cut", LEAD_SELF_OVERLAP, "@x abab  aba", "b!;y", None),
    ("edge-overlap-cut-twice", LEAD_SELF_OVERLAP, "@x  ababab", "!;y ab", None),
    ("edge-overlap-misses", LEAD_SELF_OVERLAP, "@x  ababa", "x abab!;", None),
    ("edge-negative", LEAD_NEGATIVE, "@hi   call", " then;", None),
    ("edge-negative-misses", LEAD_NEGATIVE, "@hi   call", "x   call;", None),
    ("edge-complete-at-the-edge", LEAD_AT_EDGE, "@hi   abab", "!;", None),
    ("edge-complete-at-the-edge-grows", LEAD_AT_EDGE, "@hi   abab", "ab!;", None),
    ("edge-complete-at-the-edge-ends", LEAD_AT_EDGE, "@hi   abab", "", None),
]
CASES += PREFIX_EDGE_CASES
