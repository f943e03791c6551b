"""chatparse's reasoning detector inside SGLang: `--reasoning-parser chatparse` over `ReasoningSplit`.

SGLang's chat serving builds one `ReasoningParser` per request and calls the detector's
`parse_streaming_increment(new_text)` per chunk, then `finish()`; each returns the reasoning to
stream and the `normal_text` that goes on to the tool-call parser, or to the client as content
when none runs (SGLang says which: `tool_call_parser_active`). Here the reasoning is the message's
`reasoning_content`, piece by piece; the normal text for a tool parser is the message's raw text
without its reasoning bodies (serving/reasoning_split.py), which chatparse's tool detector reads as
the whole message (SGLang's own tool detectors would read the kept delimiters as text: pair it with
chatparse's), and for the client the message's content, as `DeltaStream` streams it (a call's raw
text too, when the model writes one: no tool parser runs to take it).

SGLang hands the prompt (`prefix`, the rendered assistant prefill) only to detectors that are
`ResponseTemplateReasoningDetector`s, so this one is one: a template whose chat template writes the
opening `<think>` into the prompt then streams its reasoning. Being one, SGLang also keeps special
tokens in the text it decodes (the delimiters of most templates). SGLang's own response-template
machinery (its loader, which refuses `join` and any field but thinking/content/tool calls, and its
grammar framing) is not used: the constructor does not call the base's, the questions SGLang asks
about grammar framing are answered "none" (no structural tag, no answer opener), and the
reasoning end the grammar backend waits for is the template's first literal reasoning close.
"""

from __future__ import annotations

from typing import Any

from sglang.srt.parser.response_template import ResponseTemplateReasoningDetector

from ..serving.openai_adapter import check_start_anchor
from ..serving.reasoning_split import REASONING_FIELD, ReasoningSplit
from .template_choice import PARSER_NAME, choose_module


class _Result:
    """Duck-types SGLang's reasoning `StreamingParseResult`."""

    __slots__ = ("normal_text", "reasoning_text")

    def __init__(self, reasoning_text: str, normal_text: str) -> None:
        self.reasoning_text = reasoning_text
        self.normal_text = normal_text


def _literals(spec: dict | None, key: str) -> list[str]:
    value = (spec or {}).get(key)
    if isinstance(value, str):
        return [value]
    return [item for item in value or () if isinstance(item, str)]


class ChatparseReasoningDetector(ResponseTemplateReasoningDetector):
    """SGLang's reasoning detector over chatparse (see the module docstring)."""

    parser_name = PARSER_NAME
    thinks_internally = False
    reasoning_default = "explicit_enable_thinking"
    strict_arguments = False

    def __init__(
        self,
        stream_reasoning: bool = True,
        tokenizer: Any = None,
        prefix: str = "",
        force_nonempty_content: bool = False,
        tool_call_parser_active: bool = False,
        **_kwargs: Any,
    ) -> None:
        # (The base's constructor is not called: see the module docstring.)
        self._module = choose_module(self.parser_name, tokenizer)
        template = self._module.TEMPLATE
        self.response_template = template
        spec = template.get("fields", {}).get(REASONING_FIELD)
        self.think_start_token = next(iter(_literals(spec, "open")), "")
        self.think_end_token = next(iter(_literals(spec, "close")), "")
        self.think_excluded_tokens = None
        self.think_start_self_label = ""
        self.message_start_think_openers: list[str] = []
        self.stream_reasoning = stream_reasoning
        # SGLang's `force_nonempty_content` (a chat template kwarg): an output with no answer
        # gives its reasoning as the answer. Applied to the whole-output parse only.
        self._force_nonempty_content = force_nonempty_content
        self._prefix = prefix or ""
        if self._prefix:
            # A prompt without the template's start anchor would be parsed as part of the
            # message, its reasoning streamed back (DeltaStream refuses it the same way).
            check_start_anchor(self._module, self._prefix)
        # What the normal text is for: a tool parser (chatparse's) that reads the message without
        # its reasoning bodies, or the client, who gets the content (serving/reasoning_split.py).
        self._rest = "message" if tool_call_parser_active else "content"
        self._split: ReasoningSplit | None = None
        self._held: list[str] = []  # the reasoning, when it is not streamed (`stream_reasoning`)
        self.answer_started = False

    # --- parsing ------------------------------------------------------------------------------

    def parse_streaming_increment(self, new_text: str) -> _Result:
        return self._result(*self._stream().feed(new_text), final=False)

    def finish(self) -> _Result:
        return self._result(*self._stream().finish(), final=True)

    def detect_and_parse(self, text: str) -> _Result:
        result = _Result(*ReasoningSplit(self._module, self._prefix, self._rest).whole(text))
        if self._force_nonempty_content and not result.normal_text:
            result.normal_text, result.reasoning_text = result.reasoning_text, ""
        return result

    def _stream(self) -> ReasoningSplit:
        """The request's split, made on first use."""
        if self._split is None:
            self._split = ReasoningSplit(self._module, self._prefix, self._rest)
        return self._split

    def _result(self, reasoning: str, normal: str, *, final: bool) -> _Result:
        if not self.stream_reasoning:
            # SGLang's `stream_reasoning=False`: the reasoning goes out once complete, that is
            # when text after it does (or the output ends).
            self._held.append(reasoning)
            if normal or final:
                reasoning, self._held = "".join(self._held), []
            else:
                reasoning = ""
        return _Result(reasoning, normal)

    # --- what SGLang asks a response-template detector about grammar framing ------------------

    def get_think_end_token_ids(self, tokenizer: Any) -> list[int]:
        if not self.think_end_token:
            return []
        return tokenizer.encode(self.think_end_token, add_special_tokens=False)

    def get_self_opened_think_start_token_ids(self, tokenizer: Any) -> list[int] | None:
        return None

    def starts_message(self, prefix: str) -> bool:
        return False

    def answer_opener(self, prefix: str) -> str:
        return ""

    def answer_rest_structural_tag(self, prefix: str) -> dict[str, Any] | None:
        return None

    def json_answer_structural_tag(self, json_schema: Any, **_kwargs: Any) -> None:
        return None

    def json_output_started(self, text: str) -> bool:
        return False

    def get_answer_frame(self) -> None:
        return None


def reasoning_detector_for(parser_name: str) -> type[ChatparseReasoningDetector]:
    """The reasoning detector class SGLang's registry holds for `parser_name` (it builds a detector
    from its class and keyword arguments only, so the class carries the name)."""
    if parser_name == PARSER_NAME:
        return ChatparseReasoningDetector
    class_name = "ChatparseReasoningDetector_" + parser_name.replace("-", "_")
    return type(class_name, (ChatparseReasoningDetector,), {"parser_name": parser_name})


__all__ = ["ChatparseReasoningDetector", "reasoning_detector_for"]
