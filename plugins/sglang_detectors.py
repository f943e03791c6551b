"""chatparse's tool-call detector inside SGLang: a `BaseFormatDetector` over `DeltaStream`.

SGLang's `FunctionCallParser` builds one detector per request and calls
`parse_streaming_increment(new_text, tools)` per chunk, then `finish(tools)` when the stream ends
(which sends what chatparse still holds: a trailing `<tool` that turned out to be text). Each
chunk's deltas become a `StreamingParseResult`: `normal_text` is the content, `calls` the
tool-call fragments (`ToolCallItem`: the name on a call's first fragment, then argument text).
`prev_tool_call_arr` and `streamed_args_for_tool` hold exactly the argument text sent
(`call_record.SentCalls`), so SGLang's end-of-stream remainder is empty.

SGLang hands the prompt only to its own response-template detectors, so the output is parsed as
the whole message (`prefix=""`); reasoning is SGLang's reasoning parser's, upstream of this one
(reasoning deltas are not content here). Malformed and cut-off calls follow `CHATPARSE_MALFORMED`
(`drop`, the default, or `content`), as in the vLLM plugin.
"""

from __future__ import annotations

from typing import Any

from sglang.srt.function_call.base_format_detector import BaseFormatDetector
from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem

from ..serving.openai_adapter import DeltaStream, chat_completion_message
from .call_record import SentCalls
from .template_choice import PARSER_NAME, choose_module, malformed_policy

# `StreamingParseResult(**fields)` with its `ToolCallItem`s given as dicts: one pydantic-core call
# (0.8 us a chunk with one call fragment, against 1.3 us for the two constructors), the same models
# with the same fields set.
_result = StreamingParseResult.__pydantic_validator__.validate_python


def _tool_dicts(tools: Any) -> list | None:
    return [tool.model_dump(exclude_none=True) for tool in tools] if tools else None


class ChatparseDetector(SentCalls, BaseFormatDetector):
    """SGLang's tool-call detector over chatparse (see the module docstring)."""

    parser_name = PARSER_NAME

    def __init__(self, tokenizer: Any = None) -> None:
        super().__init__()
        self._module = choose_module(self.parser_name, tokenizer)
        self._stream: DeltaStream | None = None
        self._policy = malformed_policy()

    def _new_stream(self, tools: Any) -> DeltaStream:
        return DeltaStream(self._module, "", tools=_tool_dicts(tools), malformed=self._policy)

    def parse_streaming_increment(self, new_text: str, tools: Any) -> StreamingParseResult:
        if self._stream is None:
            self._stream = self._new_stream(tools)
        return self._result(self._stream.feed(new_text) if new_text else [])

    def finish(self, tools: Any) -> StreamingParseResult:
        if self._stream is None:
            return StreamingParseResult()
        return self._result(self._stream.finish())

    def detect_and_parse(self, text: str, tools: Any) -> StreamingParseResult:
        stream = self._new_stream(tools)
        stream.feed(text)
        stream.finish()
        assert stream.message is not None
        message = chat_completion_message(stream.message)
        calls = [
            ToolCallItem(
                tool_index=index,
                name=call["function"]["name"],
                parameters=call["function"]["arguments"],
            )
            for index, call in enumerate(message.get("tool_calls", []))
        ]
        return StreamingParseResult(normal_text=message.get("content") or "", calls=calls)

    def has_tool_call(self, text: str) -> bool:
        return (
            bool(
                chat_completion_message(self._module.parse_response(text, prefix="")).get(
                    "tool_calls"
                )
            )
            if text
            else False
        )

    def supports_structural_tag(self) -> bool:
        return False  # constrained decoding would need the template's own grammar

    @classmethod
    def parses_without_tools(cls) -> bool:
        return True  # a call to an undeclared tool is still a call, never content

    def structure_info(self) -> Any:
        raise NotImplementedError("chatparse's detector has no structural tag")

    def _result(self, deltas: list[dict]) -> StreamingParseResult:
        if len(deltas) == 1 and len(deltas[0]) == 1 and "tool_calls" in deltas[0]:
            fragments = deltas[0]["tool_calls"]
            if len(fragments) == 1 and "id" not in fragments[0]:
                # The commonest result, more of a started call's arguments (the loop below,
                # written out for it).
                fragment = fragments[0]
                arguments = self.record(fragment)
                self.current_tool_id = index = fragment["index"]
                call = {"tool_index": index, "name": None, "parameters": arguments}
                return _result({"normal_text": "", "calls": [call]})
        content: list[str] = []
        calls: list[dict] = []  # `ToolCallItem`s as dicts, validated with the result in one call
        for delta in deltas:
            if text := delta.get("content"):
                content.append(text)
            for fragment in delta.get("tool_calls", ()):
                arguments = self.record(fragment)
                name = fragment["function"]["name"] if "id" in fragment else None
                self.current_tool_id = fragment["index"]
                calls.append(
                    {"tool_index": fragment["index"], "name": name, "parameters": arguments}
                )
        return _result({"normal_text": "".join(content), "calls": calls})


def detector_for(parser_name: str) -> type[ChatparseDetector]:
    """The detector class SGLang's registry holds for `parser_name` (it builds a detector from its
    class and the tokenizer only, so the class carries the name)."""
    if parser_name == PARSER_NAME:
        return ChatparseDetector
    class_name = "ChatparseDetector_" + parser_name.replace("-", "_")
    return type(class_name, (ChatparseDetector,), {"parser_name": parser_name})
