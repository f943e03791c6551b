"""The portability profile as data: which other engines refuse (or read differently) each regex
construct that transformers' response templates accept.

In:  nothing (a table). Out: `ENGINES` (engine -> the regex engine it runs delimiter and tool-call
     patterns on, and the source that shows it: repository + path), `MATRIX` (lint code ->
     construct, a minimal pattern holding only that construct, and engine -> verdict), and
     `summary(code)`, the sentence `chatparse lint --portable` prints.
Verdicts: "refuses" (the engine's regex compiler raises on the construct), "differs" (it compiles
     but matches other text than Python's `regex`), "accepts".
Where each verdict comes from (read in the cited sources, December 2026):
  - sglang-gateway: the Rust `regex` crate (`use regex::Regex` in every tool parser); the crate's
    parser has error kinds for look-around, back-references and repetition without an operand
    (regex-syntax/src/ast/mod.rs). Its \\d \\b \\p are Unicode-aware as in Python's `regex`.
  - vllm: its port of the response parser searches with the `regex` module (`partial=True`),
    the reference's engine: it accepts everything transformers accepts.
  - llama.cpp: `common_regex` compiles with `std::regex` (ECMAScript grammar) and also builds a
    reversed partial-match pattern whose builder throws on every `(?` group except `(?:`
    (look-around, named groups, atomic groups, inline flags); ECMAScript has no possessive
    quantifiers, and its \\d \\b are ASCII.
  - transformers.js: JavaScript `RegExp`. No response-template parser was found in its stored
    source, so this row is the ECMAScript grammar's, marked `verified=False`: no `(?P<name>`,
    no possessive or atomic groups, no global inline flags; \\p only with the `u` flag; \\d \\b
    ASCII.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Engine:
    name: str
    regex_engine: str
    repository: str
    path: str
    verified: bool  # the verdicts were read from the cited source (False: from the grammar)


ENGINES: dict[str, Engine] = {
    "sglang-gateway": Engine(
        "SGLang model gateway",
        "Rust regex crate",
        "sgl-project/sglang",
        "sgl-model-gateway/src/tool_parser/parsers/kimik2.rs",
        True,
    ),
    "rust-regex": Engine(
        "Rust regex crate (what the gateway links)",
        "Rust regex crate",
        "rust-lang/regex",
        "regex-syntax/src/ast/mod.rs",
        True,
    ),
    "vllm": Engine(
        "vLLM",
        "Python regex module",
        "vllm-project/vllm",
        "vllm/parser/chat_parsing/response_parser.py",
        True,
    ),
    "llama.cpp": Engine(
        "llama.cpp",
        "std::regex (ECMAScript) + reversed partial pattern",
        "ggml-org/llama.cpp",
        "common/regex-partial.cpp",
        True,
    ),
    "transformers.js": Engine(
        "transformers.js",
        "JavaScript RegExp",
        "huggingface/transformers.js",
        "packages/transformers/src",
        False,
    ),
}


@dataclass(frozen=True)
class Construct:
    construct: str
    example: str  # a minimal delimiter pattern holding this construct and no other
    verdicts: dict[str, str]  # engine -> "refuses" | "differs" | "accepts"


def _row(sglang: str, vllm: str, llama: str, js: str) -> dict[str, str]:
    return {
        "sglang-gateway": sglang,
        "rust-regex": sglang,
        "vllm": vllm,
        "llama.cpp": llama,
        "transformers.js": js,
    }


MATRIX: dict[str, Construct] = {
    "CP201": Construct("look-around", "<t(?=>)", _row("refuses", "accepts", "refuses", "accepts")),
    "CP202": Construct("\\d", "<t\\d>", _row("accepts", "accepts", "differs", "differs")),
    "CP203": Construct("\\b or \\B", "\\bcall:", _row("accepts", "accepts", "differs", "differs")),
    "CP204": Construct(
        "\\p{...} / \\P{...}", "<\\p{L}>", _row("accepts", "accepts", "differs", "differs")
    ),
    "CP205": Construct(
        "unnamed group", "<(t|u)>", _row("accepts", "accepts", "accepts", "accepts")
    ),
    "CP206": Construct(
        "possessive quantifier or atomic group",
        "<t++>",
        _row("refuses", "accepts", "refuses", "refuses"),
    ),
    "CP207": Construct(
        "back-reference", "<(t)\\1>", _row("refuses", "accepts", "accepts", "accepts")
    ),
    "CP208": Construct("inline flags", "(?i)<t>", _row("accepts", "accepts", "refuses", "refuses")),
    "CP209": Construct(
        "(?P<name>...) named group",
        "<(?P<n>t)>",
        _row("accepts", "accepts", "refuses", "refuses"),
    ),
}


def refused_by(code: str) -> list[str]:
    return [e for e, verdict in MATRIX[code].verdicts.items() if verdict == "refuses"]


def summary(code: str) -> str:
    """`refused by ...; read differently by ...` for one lint code, from the matrix."""
    row = MATRIX[code].verdicts
    parts = []
    for verdict, words in (("refuses", "refused by"), ("differs", "read differently by")):
        engines = [e for e, v in row.items() if v == verdict]
        if engines:
            parts.append(f"{words} {', '.join(engines)}")
    return "; ".join(parts) or "accepted by every engine in the profile"
