"""Seeded, realistic raw model outputs for the benchmark, and the two ways of chunking them.

In:  a family name (see FAMILIES), a target size in characters, a seed.
Out: a `Sample`: the chat `prefix` (ending at the assistant header or prefill), the raw output
     `text`, the JSON-schema `tools`, the output as `segments` (special tokens vs ordinary text)
     and the `expected` message, assembled from the generated parts (not from any parser).
     `server_chunks` and `split_chunks` cut a sample's text into the chunks a server would stream.

Guaranteed:
- Same (family, target, seed) -> byte-identical sample, whatever PYTHONHASHSEED is.
- Every output has long reasoning, some content and at least two tool calls with nested
  arguments; the size grows through longer prose and more, larger tool calls, and lands within
  25% of the target at 1k characters, 5% at 10k and 2% from 100k up.
- Prose is word-like text with punctuation, newlines, markdown, `<`, `{` and code snippets, and
  never contains a delimiter of any benchmarked family (checked, see `_FORBIDDEN`).
- `"".join(chunks) == sample.text` for both chunkings. `server_chunks` keeps each special token
  whole and cuts ordinary text into 1-6 character pieces (a detokenizer never merges text across
  a special token). `split_chunks` ignores token boundaries and cuts every special token
  mid-way, the worst case for a parser's hold logic.

Templates are the built-in catalogue's: templates/<family>.json.

For every built-in family (not only FAMILIES), `builtin_sample` takes samples/<family>.json's
demo output and adds long seeded prose before or after it; its segments mark the template's
delimiter literals (`delimiter_literals`), so `server_chunks` keeps each of them whole.
"""

from __future__ import annotations

import json
import random
import re
import zlib
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
TEMPLATE_DIR = REPO / "templates"

FAMILIES = ("smollm3", "qwen3", "qwen3_coder", "gpt_oss", "gemma4", "cohere_command_a")
SIZES = {"1k": 1_000, "10k": 10_000, "100k": 100_000, "1M": 1_000_000}

# Share of the output spent on tool calls; the rest is reasoning and content prose.
_TOOL_SHARE = 0.3
_REASONING_SHARE_OF_PROSE = 0.65


def load_template(family: str) -> tuple[dict, str]:
    """The family's built-in response template and its path relative to the repository."""
    path = TEMPLATE_DIR / f"{family}.json"
    return json.loads(path.read_text(encoding="utf-8")), f"templates/{family}.json"


# --------------------------------------------------------------------------------------------
# Prose
# --------------------------------------------------------------------------------------------

_WORDS = """
the a an of to and in that is for it as with on be this are by or from at which but not have
has can will would should could may might must we you they it its their our if then when while
because so also however therefore instead although each every any some more most less first
next last value values result results function functions call calls request response user users
data file files path paths table tables field fields record records error errors case cases
test tests input output buffer stream chunk chunks token tokens parser region regions template
model models weather forecast city cities temperature humidity wind rain report reports summary
query queries filter filters document documents author authors year years range limit offset
event events meeting attendee attendees schedule time zone duration start end window budget
cost price estimate number numbers count total average median latency throughput memory cache
server client network timeout retry retries config option options setting settings default
check verify compare update create delete read write open close return handle parse format
small large quick careful simple complex correct wrong possible likely important useful
clear exact different same similar recent previous current final initial empty full partial
""".split()

_UNICODE_WORDS = ["café", "naïve", "Zürich", "São Paulo", "résumé", "Ångström", "façade", "Kraków"]
_NAMES = ["Ada", "Grace", "Linus", "Barbara", "Edsger", "Donald", "Frances", "Ken", "Margaret"]
_OPENERS_REASONING = [
    "Okay, so",
    "Let me think about this.",
    "Wait,",
    "Hmm,",
    "First,",
    "Actually,",
    "So",
    "Now",
    "Alternatively,",
    "On the other hand,",
    "Let me double-check:",
    "Right,",
]
_OPENERS_CONTENT = ["", "", "", "Note that", "In short,", "Overall,", "For example,", "Also,"]
_INLINE_SNIPPETS = [
    "`x < y`",
    "`a <= b`",
    "`n << 2`",
    "`List<String>`",
    "`{}`",
    '`{"retry": 3}`',
    "`dict[str, int]`",
    "`i < len(items)`",
    "`<div>`",
    "`<br/>`",
    "`0 < t < 1`",
    "`{k: v}`",
    "`a->b`",
    "`x != y`",
    "`#include <stdio.h>`",
    "`<th>`",
    "`</td>`",
    "`<table>`",
]
_PUNCT_END = [".", ".", ".", ".", "?", "!", ":"]


def _code_block(rng: random.Random) -> str:
    """A short fenced snippet; several kinds so the text has `<`, `{`, indentation and quotes."""
    name = rng.choice(["collect", "merge", "scan", "flush", "check", "render", "retry"])
    limit = rng.randint(2, 99)
    kind = rng.randrange(4)
    if kind == 0:
        return (
            f"```python\ndef {name}(items, limit={limit}):\n"
            f"    out = {{}}\n"
            f"    for i, item in enumerate(items):\n"
            f'        if i < limit and item.get("ok"):\n'
            f'            out[item["id"]] = item\n'
            f"    return out\n```"
        )
    if kind == 1:
        return (
            f'```json\n{{\n  "name": "{name}",\n  "limit": {limit},\n'
            f'  "tags": ["a", "b"],\n  "nested": {{"ok": true, "ratio": 0.{limit}}}\n}}\n```'
        )
    if kind == 2:
        return (
            f'```html\n<table class="{name}">\n  <tr><th>key</th><th>value</th></tr>\n'
            f"  <tr><td>limit</td><td>{limit}</td></tr>\n</table>\n```"
        )
    return (
        f"```c\n#include <stdio.h>\nint {name}(int n) {{\n"
        f"    return n < {limit} ? n << 1 : n;\n}}\n```"
    )


def _sentence(rng: random.Random, openers: list[str]) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(5, 18))]
    roll = rng.random()
    if roll < 0.12:
        words.insert(rng.randrange(len(words)), rng.choice(_INLINE_SNIPPETS))
    elif roll < 0.2:
        words.insert(rng.randrange(len(words)), str(rng.choice([3, 12, 42, 100, 2024, 0.5, 99.9])))
    elif roll < 0.25:
        words.insert(rng.randrange(len(words)), rng.choice(_UNICODE_WORDS))
    elif roll < 0.3:
        words.insert(rng.randrange(len(words)), f'"{rng.choice(_WORDS)}"')
    if rng.random() < 0.3:
        words[rng.randrange(len(words))] += ","
    if rng.random() < 0.08:
        words.insert(rng.randrange(len(words)), f"({rng.choice(_WORDS)} {rng.choice(_WORDS)})")
    opener = rng.choice(openers)
    body = " ".join(words).rstrip(",")
    text = f"{opener} {body}" if opener else body[:1].upper() + body[1:]
    return text + rng.choice(_PUNCT_END)


def _paragraph(rng: random.Random, openers: list[str]) -> str:
    roll = rng.random()
    if roll < 0.1:
        return _code_block(rng)
    if roll < 0.2:
        return "\n".join(f"- {_sentence(rng, [''])}" for _ in range(rng.randint(2, 5)))
    if roll < 0.26:
        return "\n".join(f"{i}. {_sentence(rng, [''])}" for i in range(1, rng.randint(3, 6)))
    if roll < 0.3:
        return f"## {rng.choice(_WORDS).capitalize()} {rng.choice(_WORDS)}"
    return " ".join(_sentence(rng, openers) for _ in range(rng.randint(1, 5)))


def prose(rng: random.Random, budget: int, *, reasoning: bool) -> str:
    """About `budget` characters of paragraphs (never more, at least one sentence), stripped."""
    openers = _OPENERS_REASONING if reasoning else _OPENERS_CONTENT
    parts: list[str] = []
    used = 0
    misses = 0
    while misses < 8:
        # Whole paragraphs while they fit, then single sentences to close the gap.
        para = _paragraph(rng, openers) if misses == 0 else _sentence(rng, openers)
        extra = len(para) + (2 if parts else 0)
        if parts and used + extra > budget:
            misses += 1
            continue
        parts.append(para)
        used += extra
    return "\n\n".join(parts).strip()


# --------------------------------------------------------------------------------------------
# Tools and tool-call arguments
# --------------------------------------------------------------------------------------------


def _tool(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


TOOLS = [
    _tool(
        "get_weather",
        "Current weather and a short forecast for a location.",
        {
            "location": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer"},
            "include": {"type": "object"},
        },
        ["location"],
    ),
    _tool(
        "search_documents",
        "Full-text search over the document store with structured filters.",
        {
            "query": {"type": "string"},
            "filters": {"type": "object"},
            "limit": {"type": "integer"},
            "score_threshold": {"type": "number"},
        },
        ["query"],
    ),
    _tool(
        "write_file",
        "Create or overwrite a text file in the workspace.",
        {
            "path": {"type": "string"},
            "content": {"type": "string"},
            "options": {"type": "object"},
        },
        ["path", "content"],
    ),
    _tool(
        "create_event",
        "Put an event on the shared calendar.",
        {
            "title": {"type": "string"},
            "attendees": {"type": "array"},
            "duration_minutes": {"type": "integer"},
            "reminders": {"type": "array"},
            "metadata": {"type": "object"},
        },
        ["title", "attendees"],
    ),
]


def _code_file(rng: random.Random, budget: int) -> str:
    """A multi-line source file of about `budget` characters (tool-call payload for write_file)."""
    lines = ['"""Generated helper module."""', "", "import json", ""]
    used = sum(len(x) + 1 for x in lines)
    n = 0
    while used < budget:
        n += 1
        block = [
            f"def step_{n}(rows, limit={rng.randint(1, 500)}):",
            f'    """{_sentence(rng, [""])}"""',
            '    kept = [r for r in rows if r.get("score", 0) < limit]',
            f'    return {{"step": {n}, "kept": len(kept), "tag": "{rng.choice(_WORDS)}"}}',
            "",
        ]
        lines.extend(block)
        used += sum(len(x) + 1 for x in block)
    return "\n".join(lines).strip()


def _arguments(rng: random.Random, budget: int) -> tuple[str, dict]:
    """Pick a tool and build nested arguments of roughly `budget` characters."""
    if budget > 600:
        return "write_file", {
            "path": f"src/{rng.choice(_WORDS)}_{rng.randint(1, 99)}.py",
            "content": _code_file(rng, budget - 120),
            "options": {"mode": "0644", "create_dirs": True, "encoding": "utf-8"},
        }
    # Below about 250 characters only the smallest tool fits.
    kind = rng.randrange(3) if budget >= 250 else 0
    if kind == 0:
        return "get_weather", {
            "location": rng.choice(["Paris", "São Paulo", "Zürich", "Kraków", "New York, NY"]),
            "unit": rng.choice(["celsius", "fahrenheit"]),
            "days": rng.randint(1, 10),
            "include": {"hourly": rng.random() < 0.5, "fields": ["temperature", "wind"]},
        }
    if kind == 1:
        return "search_documents", {
            "query": _sentence(rng, [""])[:80].strip(),
            "filters": {
                "year_range": [2019, rng.randint(2020, 2025)],
                "tags": rng.sample(_WORDS, 3),
                "exact": rng.random() < 0.5,
                "author": {"name": rng.choice(_NAMES), "affiliation": None},
            },
            "limit": rng.randint(5, 50),
            "score_threshold": round(rng.random(), 3) or 0.5,
        }
    return "create_event", {
        "title": f"{rng.choice(_WORDS).capitalize()} review: {rng.choice(_UNICODE_WORDS)}",
        "attendees": [
            {"name": name, "email": f"{name.lower()}@example.com", "optional": rng.random() < 0.3}
            for name in rng.sample(_NAMES, 2)
        ],
        "duration_minutes": rng.choice([15, 30, 45, 60]),
        "reminders": [{"minutes_before": 10, "method": "popup"}],
        "metadata": {
            "room": {"building": "B", "floor": rng.randint(1, 9)},
            "notes": "bring <slides> & {data}",
        },
    }


# --------------------------------------------------------------------------------------------
# Family writers: parts -> segments (special tokens vs ordinary text)
# --------------------------------------------------------------------------------------------

Segment = tuple[bool, str]  # (is_special_token, text)


def _s(token: str) -> Segment:
    return (True, token)


def _t(text: str) -> Segment:
    return (False, text)


@dataclass(frozen=True)
class Writer:
    """How one family renders a response, its chat prompt and its special-token vocabulary."""

    special_tokens: tuple[str, ...]
    prefix: Callable[[list[dict]], str]
    render: Callable[[str, str, list[tuple[str, dict]]], list[Segment]]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


_SYSTEM = "You are a careful assistant. Think step by step, then answer; call tools when useful."
_EARLIER_Q = "What can you do with the tools you have?"
_EARLIER_A = "I can check the weather, search documents, write files and schedule events."
_QUESTION = (
    "Plan the review meeting, check the weather, find last year's reports and draft the script."
)


def _chatml_prefix(tools: list[dict], prefill: str = "") -> str:
    tool_lines = "\n".join(_dumps(t) for t in tools)
    return (
        f"<|im_start|>system\n{_SYSTEM}\n\n# Tools\n\nYou may call one or more functions.\n"
        f"<tools>\n{tool_lines}\n</tools>\n\nFor each call return a JSON object with the function "
        f"name and arguments inside tool_call XML tags.<|im_end|>\n"
        f"<|im_start|>user\n{_EARLIER_Q}<|im_end|>\n"
        f"<|im_start|>assistant\n{_EARLIER_A}<|im_end|>\n"
        f"<|im_start|>user\n{_QUESTION}<|im_end|>\n<|im_start|>assistant\n{prefill}"
    )


def _hermes_render(reasoning: str, content: str, calls: list[tuple[str, dict]]) -> list[Segment]:
    segs = [_s("<think>"), _t(f"\n{reasoning}\n"), _s("</think>"), _t(f"\n\n{content}")]
    for name, args in calls:
        segs += [
            _t("\n"),
            _s("<tool_call>"),
            _t(f"\n{_dumps({'name': name, 'arguments': args})}\n"),
            _s("</tool_call>"),
        ]
    return segs + [_s("<|im_end|>")]


def _xml_value(value: Any) -> str:
    """Qwen3-Coder writes strings raw and everything else as JSON; `tools=` types it back."""
    return value if isinstance(value, str) else _dumps(value)


def _qwen_coder_render(
    reasoning: str, content: str, calls: list[tuple[str, dict]]
) -> list[Segment]:
    # The prompt prefills "<think>\n", so the output starts inside the reasoning.
    segs = [_t(f"{reasoning}\n"), _s("</think>"), _t(f"\n\n{content}")]
    for name, args in calls:
        params = "".join(
            f"<parameter={k}>\n{_xml_value(v)}\n</parameter>\n" for k, v in args.items()
        )
        segs += [
            _t("\n\n"),
            _s("<tool_call>"),
            _t(f"\n<function={name}>\n{params}</function>\n"),
            _s("</tool_call>"),
        ]
    return segs + [_s("<|im_end|>")]


def _harmony_prefix(tools: list[dict]) -> str:
    decls = "\n".join(
        f"// {t['function']['description']}\ntype {t['function']['name']} = (_: any) => any;"
        for t in tools
    )
    return (
        "<|start|>system<|message|>You are ChatGPT, a large language model.\nReasoning: high\n"
        "# Valid channels: analysis, commentary, final. Channel must be included for every message.<|end|>"
        f"<|start|>developer<|message|># Instructions\n{_SYSTEM}\n\n# Tools\n\n## functions\n\n"
        f"namespace functions {{\n{decls}\n}} // namespace functions<|end|>"
        f"<|start|>user<|message|>{_EARLIER_Q}<|end|>"
        f"<|start|>assistant<|channel|>final<|message|>{_EARLIER_A}<|end|>"
        f"<|start|>user<|message|>{_QUESTION}<|end|><|start|>assistant"
    )


def _harmony_render(reasoning: str, content: str, calls: list[tuple[str, dict]]) -> list[Segment]:
    segs = [_s("<|channel|>"), _t("analysis"), _s("<|message|>"), _t(reasoning), _s("<|end|>")]
    for name, args in calls:
        segs += [
            _s("<|start|>"),
            _t("assistant"),
            _s("<|channel|>"),
            _t(f"commentary to=functions.{name} "),
            _s("<|constrain|>"),
            _t("json"),
            _s("<|message|>"),
            _t(_dumps(args)),
            _s("<|call|>"),
        ]
    segs += [
        _s("<|start|>"),
        _t("assistant"),
        _s("<|channel|>"),
        _t("final"),
        _s("<|message|>"),
        _t(content),
    ]
    return segs + [_s("<|return|>")]


def _gemma_value(value: Any) -> list[Segment]:
    """Gemma 4's call syntax: bare keys, strings between <|"|> tokens, JSON otherwise."""
    if isinstance(value, str):
        return [_s('<|"|>'), _t(value), _s('<|"|>')]
    if isinstance(value, dict):
        out: list[Segment] = [_t("{")]
        for i, (k, v) in enumerate(value.items()):
            out += [_t(("," if i else "") + f"{k}:")] + _gemma_value(v)
        return out + [_t("}")]
    if isinstance(value, list):
        out = [_t("[")]
        for i, v in enumerate(value):
            out += ([_t(",")] if i else []) + _gemma_value(v)
        return out + [_t("]")]
    return [_t(_dumps(value))]


def _gemma_prefix(tools: list[dict]) -> str:
    decls = "".join(f"<|tool>declaration:{t['function']['name']}{{...}}<tool|>" for t in tools)
    return (
        f"<bos><|turn>system\n{_SYSTEM}{decls}<turn|>\n<|turn>user\n{_EARLIER_Q}<turn|>\n"
        f"<|turn>model\n{_EARLIER_A}<turn|>\n<|turn>user\n{_QUESTION}<turn|>\n<|turn>model\n"
    )


def _gemma_render(reasoning: str, content: str, calls: list[tuple[str, dict]]) -> list[Segment]:
    segs = [_s("<|channel>"), _t(f"thought\n{reasoning}"), _s("<channel|>"), _t(content)]
    for name, args in calls:
        segs += [_s("<|tool_call>"), _t(f"call:{name}")] + _gemma_value(args) + [_s("<tool_call|>")]
    return segs + [_s("<|tool_response>")]


def _cohere_prefix(tools: list[dict]) -> str:
    return (
        "<BOS_TOKEN><|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|># System Preamble\n"
        f"{_SYSTEM}\n\n## Available Tools\n```json\n{json.dumps(tools, indent=2)}\n```<|END_OF_TURN_TOKEN|>"
        f"<|START_OF_TURN_TOKEN|><|USER_TOKEN|>{_EARLIER_Q}<|END_OF_TURN_TOKEN|>"
        f"<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|><|START_RESPONSE|>{_EARLIER_A}<|END_RESPONSE|><|END_OF_TURN_TOKEN|>"
        f"<|START_OF_TURN_TOKEN|><|USER_TOKEN|>{_QUESTION}<|END_OF_TURN_TOKEN|>"
        "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"
    )


def _cohere_render(reasoning: str, content: str, calls: list[tuple[str, dict]]) -> list[Segment]:
    actions = [
        {"tool_call_id": str(i), "tool_name": n, "parameters": a} for i, (n, a) in enumerate(calls)
    ]
    body = "[\n" + ",\n".join(f"    {_dumps(a)}" for a in actions) + "\n]"
    return [
        _s("<|START_THINKING|>"),
        _t(reasoning),
        _s("<|END_THINKING|>"),
        _s("<|START_RESPONSE|>"),
        _t(content),
        _s("<|END_RESPONSE|>"),
        _s("<|START_ACTION|>"),
        _t(body),
        _s("<|END_ACTION|>"),
        _s("<|END_OF_TURN_TOKEN|>"),
    ]


_CHATML_TOKENS = (
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<|im_end|>",
    "<|im_start|>",
)
WRITERS: dict[str, Writer] = {
    "smollm3": Writer(_CHATML_TOKENS, _chatml_prefix, _hermes_render),
    "qwen3": Writer(_CHATML_TOKENS, _chatml_prefix, _hermes_render),
    "qwen3_coder": Writer(
        _CHATML_TOKENS, lambda tools: _chatml_prefix(tools, "<think>\n"), _qwen_coder_render
    ),
    "gpt_oss": Writer(
        (
            "<|start|>",
            "<|channel|>",
            "<|message|>",
            "<|end|>",
            "<|call|>",
            "<|return|>",
            "<|constrain|>",
        ),
        _harmony_prefix,
        _harmony_render,
    ),
    "gemma4": Writer(
        (
            "<|channel>",
            "<channel|>",
            "<|tool_call>",
            "<tool_call|>",
            '<|"|>',
            "<|tool_response>",
            "<turn|>",
        ),
        _gemma_prefix,
        _gemma_render,
    ),
    "cohere_command_a": Writer(
        (
            "<|START_THINKING|>",
            "<|END_THINKING|>",
            "<|START_RESPONSE|>",
            "<|END_RESPONSE|>",
            "<|START_ACTION|>",
            "<|END_ACTION|>",
            "<|END_OF_TURN_TOKEN|>",
        ),
        _cohere_prefix,
        _cohere_render,
    ),
}

# Generated prose and argument strings must never contain a delimiter of any family, or the
# sample would parse differently from its `expected` message.
_FORBIDDEN = tuple(
    sorted(
        {t for w in WRITERS.values() for t in w.special_tokens}
        | {"<function=", "</function>", "<parameter=", "</parameter>", "<eos>", "<|", "|>"}
    )
)


# --------------------------------------------------------------------------------------------
# Samples
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    family: str
    target: int
    prefix: str
    text: str
    tools: list[dict]
    segments: tuple[Segment, ...]
    expected: dict


def _rng(*key: object) -> random.Random:
    # crc32, not hash(): str hashing changes with PYTHONHASHSEED.
    return random.Random(zlib.crc32(":".join(map(str, key)).encode()))


def tool_call_count(target: int) -> int:
    """2 at 1k, about 6 at 10k, 20 at 100k, 63 at 1M: more calls, and larger ones, as size grows."""
    return max(2, round(2 * (target / 1000) ** 0.5))


def _check_clean(text: str, what: str) -> None:
    for bad in _FORBIDDEN:
        if bad in text:
            raise AssertionError(f"generated {what} contains delimiter {bad!r}")


def make_sample(family: str, target: int, seed: int = 0) -> Sample:
    """Build one output of about `target` characters for `family` (see the module docstring)."""
    writer = WRITERS[family]
    rng = _rng(family, target, seed)
    n_calls = tool_call_count(target)
    per_call = int(target * _TOOL_SHARE / n_calls)
    calls = [_arguments(rng, per_call) for _ in range(n_calls)]
    for _, args in calls:
        _check_clean(_dumps(args), "tool-call arguments")
    # Render once with tiny prose to learn the size of the markup, then spend the rest on prose.
    overhead = sum(len(t) for _, t in writer.render("r", "c", calls)) - 2
    prose_budget = max(120, target - overhead)
    reasoning = prose(rng, int(prose_budget * _REASONING_SHARE_OF_PROSE), reasoning=True)
    content = prose(rng, prose_budget - len(reasoning) - 2, reasoning=False)
    _check_clean(reasoning, "reasoning")
    _check_clean(content, "content")
    segments = tuple(writer.render(reasoning, content, calls))
    expected = {
        "role": "assistant",
        "reasoning_content": reasoning,
        "content": content,
        "tool_calls": [
            {"type": "function", "function": {"name": n, "arguments": a}} for n, a in calls
        ],
    }
    return Sample(
        family=family,
        target=target,
        prefix=writer.prefix(TOOLS),
        text="".join(t for _, t in segments),
        tools=TOOLS,
        segments=segments,
        expected=expected,
    )


# --------------------------------------------------------------------------------------------
# Chunkings
# --------------------------------------------------------------------------------------------


def server_chunks(sample: Sample, seed: int = 0) -> list[str]:
    """Special tokens whole; ordinary text in 1-6 character pieces, never across a token."""
    rng = _rng("server", sample.family, sample.target, seed)
    chunks: list[str] = []
    for special, text in sample.segments:
        if special:
            chunks.append(text)
        else:
            chunks.extend(text_pieces(text, rng))
    return chunks


def text_pieces(text: str, rng: random.Random) -> list[str]:
    """Ordinary text in the 1-6 character pieces a detokenizer streams."""
    pieces = []
    i = 0
    while i < len(text):
        step = rng.randint(1, 6)
        pieces.append(text[i : i + step])
        i += step
    return pieces


def special_token_spans(sample: Sample) -> list[tuple[int, int]]:
    """(start, end) offsets of every special token in `sample.text`."""
    spans, pos = [], 0
    for special, text in sample.segments:
        if special:
            spans.append((pos, pos + len(text)))
        pos += len(text)
    return spans


def split_chunks(sample: Sample, seed: int = 0) -> list[str]:
    """Worst case: 1-6 character pieces ignoring token boundaries, and every special token of two
    or more characters cut at least once strictly inside it."""
    rng = _rng("split", sample.family, sample.target, seed)
    n = len(sample.text)
    cuts = set()
    i = 0
    while i < n:
        i += rng.randint(1, 6)
        cuts.add(min(i, n))
    for start, end in special_token_spans(sample):
        if end - start >= 2 and not any(c in cuts for c in range(start + 1, end)):
            cuts.add(start + rng.randint(1, end - start - 1))
    bounds = [0] + sorted(c for c in cuts if 0 < c < n) + [n]
    return [sample.text[a:b] for a, b in zip(bounds, bounds[1:])]


CHUNKINGS = {"server": server_chunks, "split": split_chunks}


# --------------------------------------------------------------------------------------------
# Every built-in family: its demo sample plus long prose, chunked at the template's delimiters
# --------------------------------------------------------------------------------------------

SAMPLE_DIR = REPO / "samples"
# Where the long prose goes: "before" the demo text (the first region the output opens, often
# the reasoning when the prompt prefills `<think>`), or "after" it (the implicit content region
# that follows the last close). A placement whose one-shot parse differs between chatparse and
# the reference is skipped by bench.py.
PLACEMENTS = ("before", "after")
BUILTIN_PROSE = 10_000  # characters of prose added to each demo sample


def builtin_families() -> list[str]:
    """Every built-in family: templates/*.json, in name order."""
    return sorted(p.stem for p in TEMPLATE_DIR.glob("*.json"))


_QUANTIFIER = re.compile(r"\{\d*(?:,\d*)?\}")
_GROUP_PREFIX = re.compile(r"\(\?(?:[:=!>]|<[=!]|P<\w+>|P=\w+\)|[a-zA-Z]+[:)])?")


# A class of at most this many plain chars (`[mt]`) spells each of them in a literal run, so
# `<\|eo[mt]_id\|>` gives both tokens, which a server sends whole; a run has at most
# `_RUN_VARIANTS_MAX` spellings.
_SMALL_CLASS = re.compile(r"\[([^\]\\^\-\[]{1,4})\]")
_RUN_VARIANTS_MAX = 16


def literal_runs(pattern: str) -> list[str]:
    """The maximal runs of literal characters (two or more) in a delimiter regex, in order.

    A run ends at any metacharacter, class escape (`\\s`, `\\w`, ...), character class, group or
    alternation; a character under a quantifier (`a*`, `a?`, `a+`, `a{2}`) is left out, as it
    is not always there. `\\s*(?:<\\|end\\|>|<\\|endoftext\\|>)` gives `<|end|>` and
    `<|endoftext|>`; `<start_function_call>call:(?P<name>[\\w.\\-]+)` gives
    `<start_function_call>call:`. A class of a few plain chars is each of them: `<\\|eo[mt]\\|>`
    gives `<|eom|>` and `<|eot|>` (Llama's end tokens, each one special token). Simple on
    purpose: it only decides where bench.py's chunks may not cut, so a run it misses is merely
    streamed in pieces."""
    runs: list[str] = []
    run: list[str] = []  # per position, the chars it may be: one, or a small class's members

    def end(drop_last: bool = False) -> None:
        if drop_last and run:
            run.pop()
        if len(run) >= 2:
            runs.extend("".join(spelling) for spelling in product(*run))
        run.clear()

    def spellings() -> int:
        count = 1
        for chars in run:
            count *= len(chars)
        return count

    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt in "ntr":
                run.append({"n": "\n", "t": "\t", "r": "\r"}[nxt])
            elif nxt.isalnum():  # \s \w \d \b \A \Z \1 ...: a class, an anchor, a reference
                end()
            else:
                run.append(nxt)
            i += 2
        elif c in "*+?":
            end(drop_last=True)
            i += 1
        elif c == "{" and (m := _QUANTIFIER.match(pattern, i)):
            end(drop_last=True)
            i = m.end()
        elif (m := _SMALL_CLASS.match(pattern, i)) and (
            spellings() * len(set(m[1])) <= _RUN_VARIANTS_MAX
        ):
            run.append("".join(sorted(set(m[1]))))
            i = m.end()
        elif c == "[":
            end()
            j = i + 1
            j += pattern.startswith("^", j)
            j += pattern.startswith("]", j)
            while j < len(pattern) and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            i = j + 1
        elif c == "(":
            end()
            m = _GROUP_PREFIX.match(pattern, i)
            i = m.end() if m and m.end() > i + 1 else i + 1
        elif c in ")|^$.":
            end()
            i += 1
        else:
            run.append(c)
            i += 1
    end()
    return runs


def delimiter_literals(template: dict) -> tuple[str, ...]:
    """The strings a server would stream whole: each field's literal `open` / `close` (a string
    or a list of them) and the literal runs of its `open_pattern` / `close_pattern`, longest
    first (ties in code-point order)."""
    found: set[str] = set()
    for spec in template.get("fields", {}).values():
        for key in ("open", "close"):
            value = spec.get(key)
            found.update([value] if isinstance(value, str) else value or [])
        for key in ("open_pattern", "close_pattern"):
            if isinstance(spec.get(key), str):
                found.update(literal_runs(spec[key]))
    return tuple(sorted((s for s in found if s), key=lambda s: (-len(s), s)))


def delimiter_segments(text: str, literals: tuple[str, ...]) -> tuple[Segment, ...]:
    """`text` as segments: every occurrence of a literal (leftmost, then longest) is a special
    segment, the text between them ordinary. A literal that also occurs in prose (a run such as
    `function` in a pattern) is kept whole there too, as a tokenizer's word would be."""
    if not literals:
        return (_t(text),) if text else ()
    finder = re.compile("|".join(map(re.escape, literals)))  # longest first: leftmost-longest
    segs: list[Segment] = []
    pos = 0
    for m in finder.finditer(text):
        if m.start() > pos:
            segs.append(_t(text[pos : m.start()]))
        segs.append(_s(m.group()))
        pos = m.end()
    if pos < len(text):
        segs.append(_t(text[pos:]))
    return tuple(segs)


def builtin_sample(
    family: str, placement: str, prose_chars: int = BUILTIN_PROSE, seed: int = 0
) -> Sample:
    """samples/<family>.json with about `prose_chars` of seeded prose `placement` ("before" or
    "after") its text, a blank line between them. Segments mark the template's delimiter
    literals (delimiter_literals), so `server_chunks` keeps each whole and cuts the rest into
    1-6 character pieces. `expected` is empty: no generator knows the message; bench.py takes
    the reference's one-shot `parse_response` as the expected message."""
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {PLACEMENTS}, not {placement!r}")
    demo = json.loads((SAMPLE_DIR / f"{family}.json").read_text(encoding="utf-8"))
    template, _ = load_template(family)
    long = prose(_rng("builtin", family, prose_chars, seed), prose_chars, reasoning=False)
    text = f"{long}\n\n{demo['text']}" if placement == "before" else f"{demo['text']}\n\n{long}"
    return Sample(
        family=family,
        target=prose_chars,
        prefix=demo["prefix"],
        text=text,
        tools=demo.get("tools") or [],
        segments=delimiter_segments(text, delimiter_literals(template)),
        expected={},
    )


def added_prose(sample: Sample, placement: str) -> str:
    """The prose `builtin_sample` added to the demo text."""
    demo = json.loads((SAMPLE_DIR / f"{sample.family}.json").read_text(encoding="utf-8"))
    cut = len(sample.text) - len(demo["text"]) - 2
    return sample.text[:cut] if placement == "before" else sample.text[-cut:]
