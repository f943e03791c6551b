"""chatparse's parsers inside vLLM: a `ToolParser` and a `ReasoningParser` over `DeltaStream`.

vLLM builds one parser pair per request (`DelegatingParser`: the reasoning parser first, then the
tool parser) and feeds it the text each engine step decoded. chatparse parses the whole message
(reasoning, content and tool calls) in one pass, so the pair shares one `_Session`:

- with both `--reasoning-parser chatparse` and `--tool-call-parser chatparse`, the reasoning
  parser takes the prompt (`set_prompt_token_ids`; a `ToolParser` never sees it) and reports the
  reasoning phase over at once, and the tool parser streams everything: reasoning, content and
  tool-call fragments, from one `DeltaStream`;
- with the tool parser alone, the output is parsed as the whole message (`prefix=""`): use the
  reasoning parser too when the chat template writes part of the message into the prompt (an
  opening `<think>`);
- with the reasoning parser alone, it streams reasoning and the message's content itself
  (`serving/reasoning_split.py`); a call the model writes goes out as its raw text, since no tool
  parser takes it (and it is not dropped).

The stream reads vLLM's token ids (`delta_token_ids`) through transformers 5.25's token-id input
where the tokenizer is a fast one (`CHATPARSE_TOKEN_IDS=0` turns it off): a control token that the
model spelled out with ordinary tokens (text a user quoted) never opens a call, and the output is
decoded with its special tokens. A request with stop strings, and the whole-output parse
(`extract_tool_calls`, which vLLM gives text only), read vLLM's text; with tools, the request asks
vLLM to keep special tokens in it (`adjust_request`, as vLLM's own parsers do).

Both are engine-based (`engine_based_streaming`): vLLM feeds them deltas only and calls
`finish_streaming()` at the end, which sends what chatparse still holds (a trailing `<tool` that
turned out to be text). `prev_tool_call_arr[i]["arguments"]` and `streamed_args_for_tool[i]` are
both the argument text sent so far, so vLLM's end-of-stream remainder is always empty: nothing
goes out twice. A call the output cuts off or that does not parse is handled by the policy in
`CHATPARSE_MALFORMED` (`drop`, the default, or `content`; see chatparse.openai).

`tool_choice` "required" and named are read by this parser like "auto"
(`supports_required_and_named = False`): vLLM's JSON-schema route would make the model write JSON
where the template expects its own format.
"""

from __future__ import annotations

import threading
from typing import Any

from vllm.entrypoints.generate.base.protocol import (
    DeltaMessage,
    ExtractedToolCallInformation,
    FunctionCall,
    ToolCall,
)
from vllm.reasoning import ReasoningParser
from vllm.tool_parsers import ToolParser

from ..serving.openai_adapter import DeltaStream, chat_completion_message, check_start_anchor
from ..serving.reasoning_split import ReasoningSplit
from .call_record import SentCalls
from .engine_models import LOGGING_WRAPPER, unwrapped_validator
from .template_choice import (
    FAMILY_PREFIX,
    PARSER_NAME,
    choose_module,
    malformed_policy,
    token_id_tokenizer,
)

REASONING_KEY = "reasoning"  # vLLM's DeltaMessage field
# The shapes of `DeltaMessage` the plugin builds: a call's later fragment, a call's first
# fragment with text beside it, text alone.
_DELTA_SAMPLES: list[dict] = [
    {
        "content": None,
        "reasoning": None,
        "tool_calls": [{"index": 0, "function": {"arguments": "{"}}],
    },
    {
        "content": "a",
        "reasoning": "b",
        "tool_calls": [
            {"index": 1, "id": "c", "type": "function", "function": {"name": "f", "arguments": ""}}
        ],
    },
    {"content": "a", "reasoning": None},
]
# `DeltaMessage(**fields)` without the constructor's keyword packing, and without the validator
# vLLM wraps around each of its request models (`OpenAIBaseModel.__log_extra_fields__`, which
# only logs keys a model does not declare, and the plugin's dicts have none of those); see
# `engine_models.unwrapped_validator`.
_delta = unwrapped_validator(DeltaMessage, LOGGING_WRAPPER, _DELTA_SAMPLES)
TOOL_PREFIX, REASONING_PREFIX = "ToolParser_", "ReasoningParser_"


class _Session:
    """One request's parse, shared by its reasoning and tool parser."""

    __slots__ = (
        "parser_name",
        "module",
        "tokenizer",
        "id_tokenizer",
        "prompt",
        "prompt_ids",
        "reads_ids",
        "tool_parser",
        "stream",
        "_parsed",
    )

    def __init__(self, parser_name: str, tokenizer: Any) -> None:
        self.parser_name = parser_name
        self.module = choose_module(parser_name, tokenizer)
        self.tokenizer = tokenizer
        # The tokenizer through which the stream may read vLLM's token ids, or None (text only).
        self.id_tokenizer = token_id_tokenizer(tokenizer)
        self.prompt = ""  # the prompt as text; "" when vLLM gave none (the output is the message)
        self.prompt_ids: list[int] = []  # the same as ids
        self.reads_ids = False  # whether `stream` reads token ids (else vLLM's text)
        self.tool_parser: ChatparseToolParser | None = None
        self.stream: DeltaStream | None = None
        # The last whole output parsed, with the tools it was parsed with, and its message: vLLM
        # asks the reasoning parser, then the tool parser, about the same output.
        self._parsed: tuple[str, list | None, dict] | None = None

    def new_stream(self, tools: list | None) -> DeltaStream:
        return DeltaStream(
            self.module,
            self.prompt,
            tools=tools,
            reasoning_key=REASONING_KEY,
            malformed=malformed_policy(),
        )

    def streaming(self, tools: list | None, request: Any = None) -> DeltaStream:
        """The request's stream, made on first use. It reads token ids when the tokenizer allows
        and the tool parser passes the request, unless the request has stop strings: vLLM cuts
        a stop string out of the text it sends, not out of the ids."""
        if self.stream is None:
            stops = getattr(request, "stop", None)  # (a request type without it has none)
            if self.id_tokenizer is not None and request is not None and not stops:
                self.reads_ids = True
                self.stream = DeltaStream(
                    self.module,
                    self.prompt_ids,
                    tools=tools,
                    reasoning_key=REASONING_KEY,
                    malformed=malformed_policy(),
                    tokenizer=self.id_tokenizer,
                )
            else:
                self.stream = self.new_stream(tools)
        return self.stream

    def feed(self, stream: DeltaStream, delta_text: str, delta_token_ids: Any) -> list[dict]:
        """The deltas of one engine step: its ids where the stream reads ids, else its text."""
        if self.reads_ids:
            return stream.feed(delta_token_ids) if delta_token_ids else []
        return stream.feed(delta_text) if delta_text else []

    def parsed(self, output: str, tools: list | None) -> dict:
        """The OpenAI `chat.completion` message of a whole output (parsed once when both
        parsers ask with the same tools). vLLM gives the whole output as text only."""
        last = self._parsed
        if last is not None and last[0] == output and last[1] is tools:
            return last[2]
        stream = self.new_stream(tools)
        stream.feed(output)
        stream.finish()
        assert stream.message is not None
        message = chat_completion_message(stream.message, reasoning_key=REASONING_KEY)
        self._parsed = (output, tools, message)
        return message


# vLLM builds a request's reasoning parser, then its tool parser, in one call on one thread
# (`Parser.__init__`): the reasoning parser leaves its session here for the tool parser.
_PAIRING = threading.local()


class ChatparseToolParser(SentCalls, ToolParser):
    """vLLM's `ToolParser` over chatparse (see the module docstring)."""

    parser_name = PARSER_NAME
    engine_based_streaming = True
    supports_required_and_named = False

    def __init__(self, tokenizer: Any, tools: list | None = None) -> None:
        super().__init__(tokenizer, tools)
        session = getattr(_PAIRING, "session", None)
        _PAIRING.session = None
        if session is None or session.parser_name != self.parser_name:
            session = _Session(self.parser_name, tokenizer)
        session.tool_parser = self
        self._session = session
        self.tools_listed = [tool.model_dump(exclude_none=True) for tool in self.tools] or None

    def adjust_request(self, request: Any) -> Any:
        """As vLLM's own parsers for formats with special tokens: with tools, the output text keeps
        its special tokens (a template's delimiters may be special tokens, which vLLM otherwise
        leaves out of the text). A stream that reads token ids decodes them itself."""
        request = super().adjust_request(request)
        if request.tools and request.tool_choice != "none":
            request.skip_special_tokens = False
        return request

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        message = self._session.parsed(model_output, self.tools_listed)
        calls = [
            ToolCall(
                id=call["id"],
                function=FunctionCall(
                    name=call["function"]["name"], arguments=call["function"]["arguments"]
                ),
            )
            for call in message.get("tool_calls", [])
        ]
        return ExtractedToolCallInformation(
            tools_called=bool(calls), tool_calls=calls, content=message.get("content")
        )

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Any,
        current_token_ids: Any,
        delta_token_ids: Any,
        request: Any,
    ) -> DeltaMessage | None:
        session = self._session
        stream = session.stream or session.streaming(self.tools_listed, request)
        deltas = session.feed(stream, delta_text, delta_token_ids)
        return self._delta_message(deltas) if deltas else None

    def finish_streaming(self) -> DeltaMessage | None:
        return self._delta_message(self._session.streaming(self.tools_listed).finish())

    def _delta_message(self, deltas: list[dict]) -> DeltaMessage | None:
        """chatparse's deltas as one `DeltaMessage`, keeping vLLM's record of each call."""
        if len(deltas) == 1 and len(deltas[0]) == 1 and "tool_calls" in deltas[0]:
            # The commonest delta, arguments of a call: chatparse's fragments are already shaped
            # as vLLM's `DeltaToolCall`s (the loop below builds the same dicts).
            fragments = deltas[0]["tool_calls"]
            for fragment in fragments:
                self.record(fragment)
            self.current_tool_id = fragments[-1]["index"]
            return _delta({"content": None, "reasoning": None, "tool_calls": fragments})
        content: list[str] = []
        reasoning: list[str] = []
        # vLLM's `DeltaToolCall`s as dicts: `DeltaMessage` validates them into its models in one
        # pydantic-core call, with the same fields set (3.0 us a delta, against 3.8 us for the
        # three constructors one by one).
        calls: list[dict] = []
        for delta in deltas:
            if text := delta.get("content"):
                content.append(text)
            if thought := delta.get(REASONING_KEY):
                reasoning.append(thought)
            for fragment in delta.get("tool_calls", ()):
                index, function = fragment["index"], fragment["function"]
                arguments = self.record(fragment)
                if "id" in fragment:  # a call's first fragment: its id, type and name
                    call = {
                        "index": index,
                        "id": fragment["id"],
                        "type": fragment["type"],
                        "function": {"name": function["name"], "arguments": arguments},
                    }
                else:
                    call = {"index": index, "function": {"arguments": arguments}}
                self.current_tool_id = index
                calls.append(call)
        if not (content or reasoning or calls):
            return None
        text, thought = "".join(content) or None, "".join(reasoning) or None
        return _delta({"content": text, "reasoning": thought, "tool_calls": calls})


class ChatparseReasoningParser(ReasoningParser):
    """vLLM's `ReasoningParser` over chatparse (see the module docstring)."""

    parser_name = PARSER_NAME
    engine_based_streaming = True

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, *args, **kwargs)
        self._session = _Session(self.parser_name, tokenizer)
        _PAIRING.session = self._session
        self._alone: ReasoningSplit | None = None  # the split it streams by when not paired

    def set_prompt_token_ids(self, prompt_token_ids: Any) -> None:
        session = self._session
        session.prompt_ids = list(prompt_token_ids)
        session.prompt = self.model_tokenizer.decode(session.prompt_ids, skip_special_tokens=False)

    def is_reasoning_end(self, input_ids: Any) -> bool:
        # Paired with chatparse's tool parser, that one reads the reasoning too: this phase is over.
        return self._session.tool_parser is not None

    def has_engine_confirmed_reasoning_end(self) -> bool:
        # It reads the whole output when vLLM runs it (paired without a prompt, or alone).
        return False

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        return input_ids

    def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
        tool_parser = self._session.tool_parser
        if tool_parser is not None:
            # Parsed with the tool parser's tools, so that its `extract_tool_calls` on the same
            # output finds the message parsed (the reasoning does not depend on the tools).
            message = self._session.parsed(model_output, tool_parser.tools_listed)
            return message.get(REASONING_KEY), model_output  # the tool parser reads it all
        reasoning, content = self._new_split().whole(model_output)
        return reasoning or None, content or None

    def extract_reasoning_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Any,
        current_token_ids: Any,
        delta_token_ids: Any,
    ) -> DeltaMessage | None:
        session = self._session
        paired = session.tool_parser
        if paired is None:
            return _text_message(*self._stream_alone().feed(delta_text)) if delta_text else None
        deltas = session.feed(session.streaming(paired.tools_listed), delta_text, delta_token_ids)
        return paired._delta_message(deltas) if deltas else None

    def finish_streaming(self) -> DeltaMessage | None:
        paired = self._session.tool_parser
        if paired is None:
            return _text_message(*self._stream_alone().finish())
        return paired._delta_message(self._session.streaming(paired.tools_listed).finish())

    def _stream_alone(self) -> ReasoningSplit:
        """The request's split when not paired, made on first use."""
        if self._alone is None:
            self._alone = self._new_split()
        return self._alone

    def _new_split(self) -> ReasoningSplit:
        """Alone (no chatparse tool parser): reasoning and the message's content, a call the
        model writes going out as its raw text (no tool parser takes it; it is not dropped).
        A prompt without the template's start anchor is refused, as `DeltaStream` refuses it."""
        session = self._session
        if session.prompt:
            check_start_anchor(session.module, session.prompt)
        return ReasoningSplit(session.module, session.prompt, "content")


def _text_message(reasoning: str, content: str) -> DeltaMessage | None:
    """Reasoning and content as one `DeltaMessage` (None when both are empty)."""
    if not (reasoning or content):
        return None
    return _delta({"content": content or None, "reasoning": reasoning or None})


def _parser_name(class_suffix: str) -> str:
    """`chatparse_qwen3_coder` -> `chatparse-qwen3_coder` (vllm_registration's class names)."""
    if class_suffix == PARSER_NAME:
        return PARSER_NAME
    return FAMILY_PREFIX + class_suffix[len(PARSER_NAME) + 1 :]


def __getattr__(name: str) -> type:
    """The class vLLM's lazy registry names for `chatparse-<family>`: a subclass per name, so
    that the parser knows its name (vLLM constructs it with the tokenizer and tools only)."""
    for prefix, base in (
        (TOOL_PREFIX, ChatparseToolParser),
        (REASONING_PREFIX, ChatparseReasoningParser),
    ):
        if name.startswith(prefix):
            parser_name = _parser_name(name[len(prefix) :])
            made = type(name, (base,), {"parser_name": parser_name, "__module__": __name__})
            globals()[name] = made
            return made
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
