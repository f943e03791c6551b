"""OpenAI-compatible streaming over any response template: chat-completion deltas and Responses events.

In:  a template (a dict, a built-in family name, a file, a tokenizer..., anything
     `chatparse.load_module` reads, or a generated module), the prompt `prefix`, `tools`, then the
     model's raw output in chunks (`DeltaStream.feed`, then `finish`).
Out: lists of deltas, each shaped like a chat completion chunk's `choices[0].delta`: `role` on
     the first, then `content`, the reasoning key (`reasoning_content`, or `reasoning`) and
     `tool_calls` fragments `{"index", "id", "type", "function": {"name", "arguments"}}`;
     `message` (parse_response's message, once finished) and `finish_reason` (None until
     `finish`, then "tool_calls", "stop", or "length" when the output ended inside a call).
     `ChunkWriter` wraps deltas into `chat.completion.chunk` dicts, `ResponsesEvents` turns them
     into a whole Responses API stream (lifecycle events included), `chat_completion` turns a
     finished message into a non-streamed `chat.completion`.
Guaranteed, for every chunking of the output (tests/test_openai_deltas.py):
- nothing emitted is retracted, and the deltas accumulate (as the `openai` package's stream
  accumulator does) into `message`, with each call's `arguments` json.loads'd;
- a call's `arguments` fragments concatenate to `json.dumps` of its final arguments (when its
  body repeats no key; with a repeated key inside the arguments the text holds the member
  twice, canonically spelled, so json.loads of it still gives the final arguments);
- call indices are dense from 0, one call's fragments are contiguous, and `id`, `type` and
  `name` appear on its first fragment only.
The deltas come only from the parser's public events (region_open with `captures`,
region_chunk, region_close, region_malformed, and the final message). Errors are the parser's
under the default policy, `malformed="raise"`: a region whose value does not parse raises out of
`feed` or `finish`, as `ResponseParser` does.

A call cut before its close is never reported as finished, whatever its content parser: when the
end of the output closes a call region (the output ended inside it: `max_tokens`), the call is
malformed even where its body so far parses (an xml-inline body cut between two parameters
does), `finish_reason` is "length", and under "raise" `finish` raises ValueError. A close held at
the edge of the text (`</tool_call>\\s*` waiting for more spaces) is a close. `finish("stop")`
(the engine saw the model end its turn) reads a call the end of the output closes as the reference
does, finished: some templates' calls end with the end-of-turn token, whose text engines often
leave out. A `prefix` in which the template's start anchor never occurs raises ValueError
(`require_start_anchor=False` parses it as the reference does, the whole prompt then being the
message); `prefix=""` is the explicit "the output is the whole message". With token ids the
check reads the prefix as the parser does, decoded, where an anchor spelled out with ordinary
tokens (a user who typed it) does not count.

The two lenient policies never raise for a malformed call (the parser runs with
`malformed="event"`); the malformed call region sends nothing more of its call (what already went
out stays: a delta is never retracted, and a call cut off mid-arguments keeps its partial text, as
an OpenAI server's does), it is recorded in `malformed`, the indices of its calls that went out
in `incomplete`, and `finish_reason` is "length" when the output ended inside it:
- `malformed="drop"`: the call is left out of `message`, as the parser leaves it out;
- `malformed="content"`: the region's body (its raw text between the delimiters: the events carry
  no offsets yet, so the delimiters are not in it) goes out as a `content` delta where the call
  was, and `message["content"]` is then the content the client holds (the parser's content with
  the bodies where their calls were).

What streams before its region closes:
- text fields (`content`, reasoning) whose content parser is `text` with no transform: each
  piece as it arrives, without the whitespace `strip` removes (trailing whitespace waits for the
  next non-space character), with the field's `join` before every piece after the first;
- tool calls of a JSON body (see `json_calls`: no dialect or Gemma's, rewritten as it arrives by
  `json_dialect`; the standard transform or a `"function": "{content}"` one): the name
  once its JSON string is complete (or from the open's captures, when the parser's region_open
  carries them), then the arguments as json.dumps text, each piece once final (strings as they
  arrive, numbers and literals when complete, keys when complete); a member that `tools=` typing
  could change waits for its value; with `transform_each`, call by call;
- tool calls of a python-call-list body with the standard transform and `transform_each` (see
  `python_calls`): each call's name at its `(`, each argument's key once its `=` is read, a
  string value as it arrives, other values (and a string `tools=` typing could change) when
  complete, the closing "}" at the call's `)`;
- tool calls of an xml-inline or kv-lines body named by a capture of the open (see
  `inline_calls`): the name at the open, each member's key once its tag's head or its line's
  separator is read, a string value as it arrives (minus what the value's end could still claim:
  a partial close tag, a trailing newline or space the pattern drops), a value that `tools=`
  typing or a `value_parser` changes when its tag or line ends, the closing "}" at the region's
  close. An xml-inline parameter whose tag never closes before the region does is left out of the
  message after its key went out: the call's index is then in `diverged`, and when the output
  ended inside it (`max_tokens`) `finish_reason` is "length", as for a cut-off JSON call.
What goes out whole, when its region closes: calls of any other body or transform (json with
`allow_non_json` or several pairs of custom quotes, a non-standard transform, xml-inline with
`merge_duplicates` or a `tag_pattern` not of the form `HEAD(?P<value>.*?)TAIL`), calls whose name
comes from a capture of the open while region_open
carries no captures (their arguments wait for the name, which must be on the first fragment) or
that the close pattern captures too (5.24: the close's value beats the open's), and
a call whose JSON repeats the key holding its name or arguments (its text stops there; if the
final value does not extend what was sent the call's index is in `diverged`, with the unclosed tag
above the only cases where the client's call differs from `message`). Other fields (not text, or
not joined) go out with `finish`, from the final message.
"""

from __future__ import annotations

import json
import os
import time
import types
from functools import lru_cache
from itertools import count

from ..runtime.coerce import coerce_tool_calls, schema_types, tool_parameters
from ..runtime.content import TYPED_STRUCTURED_PARSERS
from ..runtime.region_parser import not_text
from .inline_calls import InlineCalls, inline_plan_for, retypes
from .json_calls import JsonCalls, plan_for
from .json_reader import is_plain_ascii
from .python_calls import PythonCalls, pycall_plan_for

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

TOOL_FIELD = "tool_calls"
_NOT_ASKED = object()  # DeltaStream._plain before it is asked again


class _ModulePlan:
    """What a `DeltaStream` reads off its generated module, once per module (the template is
    the module's constant `TEMPLATE`): the text fields it streams (name, spec, default), and how
    a tool-call body's arguments stream: a JSON plan (json_calls), else an xml-inline or
    kv-lines plan (inline_calls), else python-call-list (python_calls), else none."""

    __slots__ = (
        "template",
        "fields",
        "defaults",
        "texts",
        "json",
        "inline",
        "pycall",
        "typed_structured",
    )

    def __init__(self, module: Any) -> None:
        self.template: dict = module.TEMPLATE
        self.fields: dict = self.template.get("fields", {})
        self.defaults: dict = self.template.get("defaults", {})
        self.texts = tuple(
            (name, spec, self.defaults.get(name))
            for name, spec in self.fields.items()
            if name != TOOL_FIELD and TextStream.streams(spec)
        )
        calls = self.fields.get(TOOL_FIELD, {})
        self.json = plan_for(calls)
        self.inline = inline_plan_for(calls, module) if self.json is None else None
        self.pycall = self.json is None and self.inline is None and pycall_plan_for(calls)
        # 5.25: tool-call typing leaves a parameter that allows "string" as such a parser (the
        # call body's) gave it
        self.typed_structured = calls.get("content", "text") in TYPED_STRUCTURED_PARSERS


@lru_cache(maxsize=64)
def _module_plan(module: Any) -> _ModulePlan:
    return _ModulePlan(module)


def _module_for(template: Any) -> Any:
    """The generated module behind `template`: a module as is, else `chatparse.load_module`."""
    if isinstance(template, types.ModuleType) and hasattr(template, "ResponseParser"):
        return template
    from .. import load_module

    return load_module(template)


# The adapter's policies for a call region whose value does not parse (not runtime/region_parser.py's
# MALFORMED_POLICIES, which are the parser's: "raise" or "event"; both lenient ones here use "event").
MALFORMED_POLICIES = ("raise", "drop", "content")
# What `DeltaStream.finish` accepts as the engine's own reason for stopping (None: not known).
ENGINE_REASONS = (None, "stop", "length")


def _new_parser(
    module: Any, prefix: Any, tools: list | None, malformed: str, tokenizer: Any = None
) -> Any:
    """The module's parser, with `captures` on region_open (a call's name before it closes) and,
    for the "drop" and "content" policies, lenient mode; with a `tokenizer`, it takes token ids."""
    options = {"tokenizer": tokenizer} if tokenizer is not None else {}
    if malformed != "raise":
        options["malformed"] = "event"
    return module.ResponseParser(prefix, tools=tools, captures=True, **options)


def check_start_anchor(module: Any, prefix: str) -> None:
    """Refuse a prefix in which the template's start anchor never occurs. The reference then parses
    the whole prefix as the message (it logs and goes on): in a server that streams the system
    prompt and the user's turn back to the client as content."""
    if module.ResponseParser.start_anchor.last_match_end(prefix) is not None:
        return
    template = module.TEMPLATE
    anchor = template.get("start_anchor", template.get("start_anchor_pattern"))
    raise ValueError(
        f"the prefix holds no start anchor of the template ({anchor!r}), so the parser would read "
        "the whole prompt as the model's message and stream it back: pass the prompt as sent to "
        "the model (ending with its generation prompt), an empty prefix when the output is the "
        "whole message, or require_start_anchor=False to parse the prefix as the reference does"
    )


def default_call_id() -> str:
    """A fresh tool-call id: "call_" and 24 random hex digits (96 bits from os.urandom), so ids of
    calls on any number of servers and streams do not repeat (a clock and a counter repeat when
    two streams start in the same tick, and a clock's low digits wrap)."""
    return "call_" + os.urandom(12).hex()


class TextStream:
    """One text field's stream: stripped pieces, joined as the message joins them."""

    @staticmethod
    def streams(spec: dict) -> bool:
        """Whether a field with this template entry streams piece by piece: text, untransformed,
        and one value (joined when it repeats)."""
        return (
            spec.get("content", "text") == "text"
            and spec.get("transform") is None
            and (spec.get("join") is not None or not spec.get("repeats"))
        )

    def __init__(self, key: str, spec: dict, default: Any) -> None:
        self.key = key
        self.strip = (spec.get("content_args") or {}).get("strip", True)
        self.join = spec.get("join")
        self.previous = default is not None  # a value before the next piece (join goes first)
        self.piece: list[str] = []  # what this piece has sent
        self.leading = True
        self.trailing = ""

    def open(self) -> None:
        self.piece, self.leading, self.trailing = [], True, ""

    def chunk(self, text: str) -> str:
        if self.strip:
            if self.leading:
                text = text.lstrip()
                if not text:
                    return ""
                self.leading = False
            text = self.trailing + text
            kept = text.rstrip()
            self.trailing = text[len(kept) :]
            text = kept
        if not text:
            return ""
        out = text
        if not self.piece and self.previous and self.join:
            out = self.join + text
        self.piece.append(text)
        return out

    def close(self, value: Any) -> tuple[str, bool]:
        """(text still to send, whether what was sent is this piece's value)."""
        out = ""
        if not self.piece and self.previous and self.join:
            out = self.join
        sent = "".join(self.piece)
        self.previous = True
        if isinstance(value, str) and value.startswith(sent):
            return out + value[len(sent) :], True
        return out, False


class _Call:
    """A call the stream has started: its index, and the pieces its arguments have sent (joined
    only when the call closes)."""

    __slots__ = ("index", "name", "pieces")

    def __init__(self, index: int, name: Any) -> None:
        self.index, self.name = index, name
        self.pieces: list[str] = []  # the argument text sent, as sent

    @property
    def sent(self) -> str:
        pieces = self.pieces
        if len(pieces) > 1:
            pieces[:] = ["".join(pieces)]
        return pieces[0] if pieces else ""

    def send(self, arguments: str) -> None:
        self.pieces.append(arguments)


def _call_parts(call: Any) -> tuple[Any, Any, Any]:
    """(type, name, arguments) of a call value; a value of another shape keeps what it has."""
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict):
        return "function", None, call
    return call.get("type", "function"), function.get("name"), function.get("arguments")


class DeltaStream:
    """Raw model output in, OpenAI chat-completion deltas out (see the module docstring)."""

    def __init__(
        self,
        template: Any,
        prefix: Any = None,  # text, or token ids with a `tokenizer`
        *,
        tools: list | None = None,
        reasoning_key: str = "reasoning_content",
        call_id: Callable[[], str] | None = None,
        malformed: str = "raise",
        require_start_anchor: bool = True,
        tokenizer: Any = None,
    ) -> None:
        # With a fast `tokenizer`, `prefix` and `feed` take token ids (transformers 5.25).
        if malformed not in MALFORMED_POLICIES:
            raise ValueError(f"malformed must be one of {MALFORMED_POLICIES}, got {malformed!r}")
        self._module = _module_for(template)
        if require_start_anchor and prefix and tokenizer is None:
            check_start_anchor(self._module, prefix)
        self._parser = _new_parser(self._module, prefix, tools, malformed, tokenizer)
        if require_start_anchor and tokenizer is not None and self._parser.prefix_text:
            # Token ids: the prefix as the parser reads it, where a start anchor the prompt
            # spells out with ordinary tokens (a user's text) is defused and does not count.
            check_start_anchor(self._module, self._parser.prefix_text)
        self._prefix, self._tools = prefix, tools  # for `_ended_inside_call`
        self._tokenizer = tokenizer
        self._raw: list[Any] = []  # the output so far, text or ids (for `_ended_inside_call`)
        self._tool_body: list[str] = []  # the open tool-call region's chunk texts
        # Indices of the calls that went out and never finished: their region turned out
        # malformed, or the output ended inside it (ResponsesEvents marks them "incomplete").
        self.incomplete: list[int] = []
        # The "drop" policy's record: {"error", "text", "sent"} per malformed call region, where
        # `sent` is how many of its calls had gone out before it turned out malformed.
        self.malformed: list[dict] = []
        self._cut_off = False  # the output ended inside a call (max_tokens)
        self._policy = malformed
        self._content: list[str] = []  # every `content` delta sent (for the "content" policy)
        plan = _module_plan(self._module)
        self.template: dict = plan.template
        self._fields: dict = plan.fields
        self._defaults: dict = plan.defaults
        self._reasoning_key = self.reasoning_key = reasoning_key
        self._call_id = call_id or default_call_id
        self._tool_params = tool_parameters(tools)
        self._typed_members: dict[tuple[str, str], bool] = {}  # `_typed`'s answers, by name and key
        self._texts: dict[str, TextStream] = {
            name: TextStream(self._key(name), spec, default) for name, spec, default in plan.texts
        }
        self._plan = plan.json
        self._inline = plan.inline
        self._pycall = plan.pycall
        self._typed_structured = plan.typed_structured
        self._reading: JsonCalls | InlineCalls | PythonCalls | None = None  # the open body
        # What a chunk of plain characters does now (`_plain_call`), asked at the first such
        # chunk after the body's reader last read or a region event, then kept: a plain chunk
        # taken unread changes nothing it depends on, so a run of them asks once.
        self._plain: Any = _NOT_ASKED
        self._started: list[_Call] = []  # calls of the open region that have a first fragment
        self._settled = 0  # calls of the open region sent whole (`_pump` starts after them)
        self._calls = 0  # calls started so far (the next index)
        self._out: list[dict] = []
        self._pending = list(self._parser.initial_events)
        self._first = True
        self._finished = False
        self.message: dict | None = None
        self.diverged: list[int] = []  # calls whose final value does not extend what was sent

    # --- public -------------------------------------------------------------------------------

    @property
    def finish_reason(self) -> str | None:
        """None until `finish`: the stream has not ended, so nothing is known of why it will.
        Then "length" when the output ended inside a call, "tool_calls" when a call went out,
        else "stop"."""
        if not self._finished:
            return None
        if self._cut_off:
            return "length"
        return "tool_calls" if self._calls else "stop"

    def feed(self, text: Any) -> list[dict]:
        """The deltas that `text` (the next piece of the model's output, or its token ids) makes
        final."""
        if self._finished:
            raise RuntimeError("DeltaStream.feed after finish")
        if self._tokenizer is None and type(text) is not str and not isinstance(text, str):
            raise not_text("DeltaStream.feed", text)
        self._raw.append(text)
        events = self._parser.feed(text)
        if len(events) <= 1 and not self._first:
            if not events:
                return []  # text the parser holds
            # The commonest feed, one chunk of the open region: straight to its delta.
            event = events[0]
            if event["type"] == "region_chunk":
                chunk = event["text"]
                if event["field"] != TOOL_FIELD:
                    return self._text_chunk(event["field"], chunk)
                if self._reading is not None and is_plain_ascii(chunk):
                    # The commonest chunk of a call's body, plain characters inside a string, is
                    # taken unread where it only extends that string: (stops or None, take, the
                    # call it extends as it is or None) from JsonCalls.plain_target and
                    # InlineCalls.plain_target, where `stops` finds nothing in such a chunk.
                    plain = self._plain
                    if plain is _NOT_ASKED:
                        plain = self._plain = self._plain_call()
                    if plain is not None and (plain[0] is None or plain[0](chunk) is None):
                        plain[1](chunk)
                        self._tool_body.append(chunk)
                        call = plain[2]
                        if call is None:
                            return []  # more of a key, a name or a string outside the arguments
                        # Inside a string argument, all sent so far: it goes out as it is.
                        call.send(chunk)
                        fragment = {"index": call.index, "function": {"arguments": chunk}}
                        return [{"tool_calls": [fragment]}]
                self._tool_chunk(chunk)
                out, self._out = self._out, []  # (`_take`)
                return out
        if self._pending:  # the parser's initial events, before the first chunk's
            events, self._pending = self._pending + events, []
        return self._deltas(events)

    def _text_chunk(self, field: str, chunk: str) -> list[dict]:
        """The deltas of one region_chunk event of a field that is not the tool calls', after the
        first delta went out (`_deltas` does the same, through `_emit`, which adds the role to the
        first)."""
        stream = self._texts.get(field)
        if stream is None:
            return []
        out = stream.chunk(chunk)
        if not out:
            return []
        if stream.key == "content":
            self._content.append(out)
        return [{stream.key: out}]

    def finish(self, engine_reason: str | None = None) -> list[dict]:
        """The remaining deltas; afterwards `message` and `finish_reason` are final.

        `engine_reason` is why the engine stopped, when it says: "stop" (the model ended its turn
        with its end-of-turn token or a stop string, whose text the engine may have left out of
        the output), "length" (max_tokens). Without it a call whose close never came is cut off
        (the output ends inside it). With "stop", the end of the output closes such a call, as
        the reference reads it: templates whose call ends with the end-of-turn token (mistral's
        `</s>`, granite's `<|end_of_text|>`) get a finished call when the engine drops that
        token's text. With "length", `finish_reason` is "length"."""
        if self._finished:
            raise RuntimeError("DeltaStream.finish called twice")
        if engine_reason not in ENGINE_REASONS:
            raise ValueError(
                f"engine_reason must be one of {ENGINE_REASONS}, got {engine_reason!r}"
            )
        message, final = self._parser.finalize()  # (raises for a malformed call under "raise")
        events, self._pending = self._pending + final, []
        # A call region that the end of the output closes was open at the end, or opened there (an
        # open held at the edge, `call:g` of `call:get_weather`, commits at the end): cut off.
        # A close held at the edge (`</tool_call>\s*`) commits at the end too: it is not.
        cut = (
            engine_reason != "stop"
            and any(_ends_call(event) for event in final)
            and self._ended_inside_call()
        )
        if cut:
            message, events = self._cut_call(message, events)
        self._cut_off = cut or engine_reason == "length"
        self._finished = True
        self.message = message
        for name, value in message.items():
            if name in self._texts or name == TOOL_FIELD or name in self._defaults:
                continue
            self._emit({self._key(name): value})
        deltas = self._deltas(events)
        if self._first:  # nothing was ever sent: the role alone
            self._emit({})
            deltas += self._take()
        if self._policy == "content" and self.malformed:
            # The client's content holds the malformed bodies where the calls were.
            self.message = {**message, "content": "".join(self._content)}
        return deltas

    # --- events -> deltas ---------------------------------------------------------------------

    def _key(self, field: str) -> str:
        return self._reasoning_key if field == "reasoning_content" else field

    def _deltas(self, events: Iterable[dict]) -> list[dict]:
        for event in events:
            kind, field = event["type"], event.get("field")
            if field in self._texts:
                self._text_event(kind, self._texts[field], event)
            elif field == TOOL_FIELD:
                self._tool_event(kind, event)
        return self._take()

    def _take(self) -> list[dict]:
        out, self._out = self._out, []
        return out

    def _emit(self, delta: dict) -> None:
        if self._first:
            delta = {"role": self._defaults.get("role", "assistant"), **delta}
            self._first = False
        if "content" in delta and isinstance(delta["content"], str):
            self._content.append(delta["content"])
        out = self._out
        if out and _merge(out[-1], delta):
            return
        out.append(delta)

    def _text_event(self, kind: str, text: TextStream, event: dict) -> None:
        if kind == "region_open":
            text.open()
        elif kind == "region_chunk":
            out = text.chunk(event["text"])
            if out:
                self._emit({text.key: out})
        elif kind == "region_close":
            out, _ = text.close(event["value"])
            if out:
                self._emit({text.key: out})

    # --- tool calls ---------------------------------------------------------------------------

    def _tool_chunk(self, chunk: str) -> None:
        self._tool_body.append(chunk)
        if self._reading is not None:
            self._plain = _NOT_ASKED
            self._reading.feed(chunk)
            self._pump()

    def _tool_event(self, kind: str, event: dict) -> None:
        if kind == "region_chunk":  # the common event first
            self._tool_chunk(event["text"])
            return
        self._plain = _NOT_ASKED
        if kind == "region_malformed":
            # The "drop" policy: nothing more of this region goes out. What was sent stays (a
            # delta is never retracted): a call cut off mid-arguments keeps its partial text, as
            # an OpenAI server's does when it stops for length.
            self.malformed.append(
                {"error": event["error"], "text": event["text"], "sent": len(self._started)}
            )
            self.incomplete.extend(call.index for call in self._started)
            self._reading, self._started = None, []
            if self._policy == "content" and event["text"]:
                self._emit({"content": event["text"]})  # the "content" policy: its body as text
        elif kind == "region_open":
            self._tool_body = []
            self._started, self._settled = [], 0
            self._reading = None
            if self._plan is not None:
                captures = event.get("captures") or {}
                name = captures.get(self._plan.name_capture) if self._plan.name_capture else None
                self._reading = JsonCalls(self._plan, name, self._typed, self._coerce_member)
            elif self._inline is not None:
                captures = event.get("captures") or {}
                name = captures.get(self._inline.name_capture)
                self._reading = InlineCalls(self._inline, name, self._typed, self._coerce_member)
                self._pump()  # the name, from the open's captures
            elif self._pycall:
                self._reading = PythonCalls(self._typed, self._coerce_member)
        elif kind == "region_close":
            value = event["value"]
            if isinstance(self._reading, InlineCalls):
                self._reading.finish()  # the closing "}" (what the end of the body decides)
            calls = value if self._plan is not None and self._plan.each else [value]
            if self._plan is None and self._fields[TOOL_FIELD].get("transform_each"):
                calls = value if isinstance(value, list) else [value]
            for position, call in enumerate(calls):
                self._finish_call(position, call)
            self._reading, self._started = None, []

    def _ended_inside_call(self) -> bool:
        """Whether the last tool-call region, closed by `finalize`, is cut off (the end of the
        output closes it) rather than closed by its close delimiter held at the edge of the text
        (`</tool_call>\\s*` waits for more spaces): one more parse of the output, with offsets,
        which give an end-of-output close an empty span. Run only when `finalize` closes a call
        region, so the common stream pays nothing (offsets turn the generated fast path off)."""
        options = {"tokenizer": self._tokenizer} if self._tokenizer is not None else {}
        parser = self._module.ResponseParser(
            self._prefix, tools=self._tools, malformed="event", offsets=True, **options
        )
        if self._tokenizer is not None:
            events = parser.feed([token for chunk in self._raw for token in chunk])
        else:
            events = parser.feed("".join(self._raw))
        events += parser.finalize()[1]
        closes = [event for event in events if _ends_call(event)]
        return bool(closes) and closes[-1]["start"] == closes[-1]["end"]

    def _cut_call(self, message: dict, events: list[dict]) -> tuple[dict, list[dict]]:
        """The output ended inside a call: under "raise" an error, as for a call that does not
        parse; under the lenient policies the call is malformed (its region's value, which the
        body cut so far may still give, leaves the message, as the parser leaves out a call it
        cannot parse) and nothing more of it goes out."""
        found = [i for i, event in enumerate(events) if _ends_call(event)]
        last = events[found[-1]]
        if last["type"] == "region_malformed":  # the body did not parse: the parser dropped it
            return message, events
        if self._policy == "raise":
            raise ValueError(
                "the output ended inside a tool call, before its close: the call is cut off (as by "
                "max_tokens) and is not reported as finished; malformed='drop' or 'content' "
                "streams the rest"
            )
        message = dict(message)
        if self._fields[TOOL_FIELD].get("repeats") and isinstance(message.get(TOOL_FIELD), list):
            message[TOOL_FIELD] = message[TOOL_FIELD][:-1]  # the region's value is the last one
        else:
            message[TOOL_FIELD] = None
        if TOOL_FIELD in self._defaults and not message[TOOL_FIELD]:
            message[TOOL_FIELD] = self._defaults[TOOL_FIELD]
        elif not message[TOOL_FIELD]:  # as the parser's message leaves out an empty field
            del message[TOOL_FIELD]
        error = "the output ended inside the call, before its close (cut off)"
        body = "".join(self._tool_body)
        malformed = {"type": "region_malformed", "field": TOOL_FIELD, "error": error, "text": body}
        return message, [*events[: found[-1]], malformed, *events[found[-1] + 1 :]]

    def _typed(self, name: str | None, key: str) -> bool | None:
        if not self._tool_params:
            return False
        if name is None:
            return None
        typed = self._typed_members.get((name, key))
        if typed is None:
            typed = self._typed_members[name, key] = self._retyped(name, key)
        return typed

    def _retyped(self, name: str, key: str) -> bool:
        """Whether `tools=` typing can change the member `key` of `name`'s arguments."""
        properties = self._tool_params.get(name)
        if not properties or key not in properties:
            return False
        types = schema_types(properties[key])
        if self._typed_structured and "string" in types:
            return False
        return retypes(types)

    def _coerce_member(self, name: str, key: str, value: Any) -> Any:
        call = {"function": {"name": name, "arguments": {key: value}}}
        coerced = coerce_tool_calls(call, self._tool_params, typed=self._typed_structured)
        return coerced["function"]["arguments"][key]

    def _pump(self) -> None:
        """Send what the open region's calls have made final, call by call, in order."""
        reading = self._reading
        assert reading is not None
        # A call whose text is complete and sent never changes again: start after those, so that
        # a body of many calls costs linear time.
        slots, started = reading.slots, self._started
        position = self._settled
        while position < len(slots):
            slot = slots[position]
            streaming = not (slot.conflict or slot.stopped)  # (Slot.streaming, without its call)
            if position < len(started):
                if streaming and len(slot.pieces) > slot.sent:
                    self._fragment(started[position], slot.take_unsent())
            elif streaming and slot.name is not None:
                self._start(slot.name, slot.take_unsent())
            else:
                return
            if not (streaming and slot.closed and slot.complete):
                return
            position = self._settled = position + 1

    def _plain_call(
        self,
    ) -> tuple[Callable[[str], Any] | None, Callable[[str], None], _Call | None] | None:
        """What the next chunk, plain characters, does if the open body's reader can take it
        unread: the reader's search that finds nothing in a chunk it can take (None: it can take
        any) and its `take`, and the open
        call the chunk extends as it is, the reader's last slot, started (the last chunk's `_pump`
        sent all its text: a pump reaches the last slot once every slot is started, each earlier
        one settled), or None when it extends a string that sends nothing."""
        reading = self._reading
        if not isinstance(reading, (JsonCalls, InlineCalls)):
            return None  # none open, or a Python call list: its values are literals, spelled anew
        target = reading.plain_target()
        if target is None:
            return None
        passes, take, sends = target
        if not sends:
            return passes, take, None
        if len(self._started) != len(reading.slots):
            return None
        return passes, take, self._started[-1]

    def _start(self, name: Any, arguments: str, kind: Any = "function") -> _Call:
        call = _Call(self._calls, name)
        self._calls += 1
        self._started.append(call)
        function = {"name": name, "arguments": arguments}
        fragment = {"index": call.index, "id": self._call_id(), "type": kind, "function": function}
        self._emit({"tool_calls": [fragment]})
        call.send(arguments)
        return call

    def _fragment(self, call: _Call, arguments: str) -> None:
        fragment = {"index": call.index, "function": {"arguments": arguments}}
        self._emit({"tool_calls": [fragment]})
        call.send(arguments)

    def _finish_call(self, position: int, value: Any) -> None:
        kind, name, arguments = _call_parts(value)
        target = json.dumps(arguments)
        if position >= len(self._started):
            self._start(name, target, kind)
            return
        call = self._started[position]
        slot = self._reading.slots[position] if self._reading is not None else None
        if slot is not None and slot.complete and slot.streaming:
            text = slot.text
            if text != target:
                try:
                    if json.loads(text) == arguments:
                        target = text  # a repeated key: the text as written
                except ValueError:
                    pass
        sent = call.sent
        if call.name == name and target.startswith(sent):
            if len(target) > len(sent):
                self._fragment(call, target[len(sent) :])
        else:
            self.diverged.append(call.index)


def _ends_call(event: dict) -> bool:
    """Whether `event` ends a tool-call region (closed, or malformed in lenient mode)."""
    return event.get("field") == TOOL_FIELD and event["type"] in (
        "region_close",
        "region_malformed",
    )


def _merge(last: dict, delta: dict) -> bool:
    """Fold `delta` into `last` (the previous delta of one feed) when that loses nothing: the same
    single text key, or more arguments for the call that `last` ends with."""
    if set(last) != set(delta) or len(delta) != 1:
        return False
    (key,) = delta
    if isinstance(delta[key], str) and isinstance(last[key], str):
        last[key] += delta[key]
        return True
    if key == "tool_calls":
        previous, fragment = last[key][-1], delta[key][0]
        if set(fragment) == {"index", "function"} and previous["index"] == fragment["index"]:
            previous["function"]["arguments"] += fragment["function"]["arguments"]
            return True
    return False


def _flat_calls(calls: Any) -> list:
    """A message's tool_calls as one list of calls: one call (a field that does not repeat) in a
    list, the lists of a repeated `transform_each` field joined."""
    if calls is None:
        return []
    if not isinstance(calls, list):
        return [calls]
    return [call for group in calls for call in (group if isinstance(group, list) else [group])]


def chat_completion_message(
    message: dict,
    *,
    call_id: Callable[[], str] | None = None,
    reasoning_key: str = "reasoning_content",
) -> dict:
    """parse_response's message (or `DeltaStream.message`) as an OpenAI `chat.completion` message:
    `role`, `content` (None when the message has none), `tool_calls` as OpenAI sends them (`id`,
    `type`, `function` with `name` and `arguments` as json.dumps text, the text DeltaStream's
    fragments add up to), the reasoning under `reasoning_key`, any other field as it is."""
    new_id = call_id or default_call_id
    out: dict = {"role": message.get("role", "assistant"), "content": None}
    for key, value in message.items():
        if key == "role":
            continue
        if key == "content":
            out["content"] = value if isinstance(value, str) or value is None else json.dumps(value)
        elif key == TOOL_FIELD:
            calls = []
            for call in _flat_calls(value):
                kind, name, arguments = _call_parts(call)
                function = {"name": name, "arguments": json.dumps(arguments)}
                calls.append({"id": new_id(), "type": kind, "function": function})
            if calls:
                out[TOOL_FIELD] = calls
        elif key == "reasoning_content":
            out[reasoning_key] = value
        else:
            out[key] = value
    return out


def chat_completion(
    message: dict,
    *,
    id: str,
    model: str,
    created: int | None = None,
    finish_reason: str | None = None,
    call_id: Callable[[], str] | None = None,
    reasoning_key: str = "reasoning_content",
) -> dict:
    """A whole non-streamed `chat.completion` response (one choice) holding
    `chat_completion_message(message)`. `finish_reason` defaults to "tool_calls" when the message
    has a call, else "stop"; a message parsed from a whole text cannot tell a call cut off by
    max_tokens from a finished one, so pass DeltaStream's (the text fed in one piece, then
    `finish`), which is "length" then."""
    choice_message = chat_completion_message(message, call_id=call_id, reasoning_key=reasoning_key)
    if finish_reason is None:
        finish_reason = "tool_calls" if choice_message.get(TOOL_FIELD) else "stop"
    choice = {"index": 0, "message": choice_message, "logprobs": None}
    choice["finish_reason"] = finish_reason
    return {
        "id": id,
        "object": "chat.completion",
        "created": int(time.time()) if created is None else created,
        "model": model,
        "choices": [choice],
    }


class ChunkWriter:
    """Wraps deltas into `chat.completion.chunk` dicts (one choice, index 0)."""

    def __init__(self, *, id: str, model: str, created: int | None = None) -> None:
        self.id, self.model = id, model
        self.created = int(time.time()) if created is None else created

    def chunk(self, delta: dict, finish_reason: str | None = None) -> dict:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [choice],
        }

    def chunks(self, deltas: Iterable[dict]) -> list[dict]:
        return [self.chunk(delta) for delta in deltas]

    def final(self, finish_reason: str) -> dict:
        """The last chunk: an empty delta carrying the finish reason."""
        return self.chunk({}, finish_reason)


class ResponsesEvents:
    """Deltas in, the Responses API's streaming events out (`response.*` dicts), a whole
    response's lifecycle as OpenAI streams it (openai's `ResponseStreamState` accepts it,
    tests/test_openai_responses.py):

    `response.created` and `response.in_progress` (status "in_progress", no output yet) before
    the first item; then each run of text or reasoning as an output item (`message` with one
    `output_text` part, `reasoning` with one `reasoning_text` part), each call a `function_call`
    item: `response.output_item.added`, then `response.content_part.added` and the `.delta`
    events (`response.output_text.delta`, `response.reasoning_text.delta`,
    `response.function_call_arguments.delta`), then the `.done` events and
    `response.output_item.done`; an item is done when the next begins, or at `close()`; last,
    `response.completed`, or `response.incomplete` (`incomplete_details.reason`
    "max_output_tokens") when the finish reason is "length", each with the whole output.
    `sequence_number` counts from 0 (`response.created`) across the events of one response.

    An item is done with status "completed", except a call that never finished (given `stream`,
    the `DeltaStream` the deltas come from: a call in its `incomplete`, cut off or malformed)
    and the item the output ended inside when the finish reason is "length": "incomplete". Without
    `stream`, a call abandoned mid-stream (a lenient policy) cannot be told from a finished one."""

    def __init__(
        self,
        stream: DeltaStream | None = None,
        *,
        response_id: str | None = None,
        model: str = "",
        created_at: int | None = None,
        reasoning_key: str | None = None,
        id_prefix: str = "",
    ) -> None:
        self._stream = stream
        if reasoning_key is None:
            reasoning_key = stream.reasoning_key if stream is not None else "reasoning_content"
        self._reasoning_key = reasoning_key
        self._prefix = id_prefix
        self.id = response_id or "resp_" + os.urandom(12).hex()
        self.model = model
        self.created_at = int(time.time()) if created_at is None else created_at
        self._sequence = count()
        self._items = count()
        self._item: dict | None = None
        self._text = ""
        self._calls: dict[int, dict] = {}  # call index -> its item
        self._call_of: dict[str, int] = {}  # a function_call item's id -> its call index
        self._begun = self._closed = False
        self.output: list[dict] = []  # the items, done or in progress

    def _event(self, kind: str, **fields: Any) -> dict:
        return {"type": kind, "sequence_number": next(self._sequence), **fields}

    def response(self, status: str) -> dict:
        """The `response` object of a lifecycle event: the output so far, with `status`."""
        response = {
            "id": self.id,
            "object": "response",
            "created_at": self.created_at,
            "model": self.model,
            "status": status,
            "output": [_copy(item) for item in self.output] if status != "in_progress" else [],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "error": None,
            "incomplete_details": None,
        }
        if status == "incomplete":
            response["incomplete_details"] = {"reason": "max_output_tokens"}
        return response

    def _begin(self) -> list[dict]:
        if self._begun:
            return []
        self._begun = True
        return [
            self._event("response.created", response=self.response("in_progress")),
            self._event("response.in_progress", response=self.response("in_progress")),
        ]

    def feed(self, deltas: Iterable[dict]) -> list[dict]:
        if self._closed:
            raise RuntimeError("ResponsesEvents.feed after close")
        events: list[dict] = self._begin()
        for delta in deltas:
            for key, value in delta.items():
                if key == "content" and value:
                    events += self._text_delta("message", value)
                elif key == self._reasoning_key and value:
                    events += self._text_delta("reasoning", value)
                elif key == "tool_calls":
                    for fragment in value:
                        events += self._call_fragment(fragment)
        return events

    def close(self, finish_reason: str | None = None) -> list[dict]:
        """The `.done` events of the item still open, then `response.completed`, or
        `response.incomplete` when `finish_reason` (by default the stream's) is "length"."""
        if self._closed:
            raise RuntimeError("ResponsesEvents.close called twice")
        if finish_reason is None and self._stream is not None:
            finish_reason = self._stream.finish_reason
        cut = finish_reason == "length"
        events = self._begin() + self._done(cut)
        self._closed = True
        status = "incomplete" if cut else "completed"
        events.append(self._event(f"response.{status}", response=self.response(status)))
        return events

    def _open(self, item: dict) -> list[dict]:
        index = next(self._items)
        self._item = item
        self.output.append(item)
        return [self._event("response.output_item.added", output_index=index, item=_copy(item))]

    def _text_delta(self, kind: str, text: str) -> list[dict]:
        events: list[dict] = []
        if self._item is None or self._item["type"] != kind:
            events += self._done()
            index = len(self.output)
            item_id = f"{self._prefix}{'msg' if kind == 'message' else 'rs'}_{index}"
            item: dict[str, Any]
            part: dict[str, Any]
            if kind == "message":
                item = {"id": item_id, "type": "message", "role": "assistant"}
                item.update(status="in_progress", content=[])
                part = {"type": "output_text", "text": "", "annotations": []}
            else:
                item = {"id": item_id, "type": "reasoning", "summary": [], "content": []}
                item["status"] = "in_progress"
                part = {"type": "reasoning_text", "text": ""}
            events += self._open(item)
            item["content"].append(part)
            events.append(
                self._event(
                    "response.content_part.added",
                    item_id=item_id,
                    output_index=index,
                    content_index=0,
                    part=dict(part),
                )
            )
        current = self._item
        assert current is not None
        current["content"][0]["text"] += text
        name = (
            "response.output_text.delta" if kind == "message" else "response.reasoning_text.delta"
        )
        extra: dict[str, Any] = {"logprobs": []} if kind == "message" else {}
        events.append(
            self._event(
                name,
                item_id=current["id"],
                output_index=self.output.index(current),
                content_index=0,
                delta=text,
                **extra,
            )
        )
        return events

    def _call_fragment(self, fragment: dict) -> list[dict]:
        events: list[dict] = []
        function = fragment.get("function", {})
        if "id" in fragment:
            events += self._done()
            index = len(self.output)
            item = {
                "id": f"{self._prefix}fc_{index}",
                "type": "function_call",
                "status": "in_progress",
                "call_id": fragment["id"],
                "name": function.get("name"),
                "arguments": "",
            }
            self._calls[fragment["index"]] = item
            self._call_of[item["id"]] = fragment["index"]
            events += self._open(item)
        item = self._calls[fragment["index"]]
        arguments = function.get("arguments", "")
        if arguments:
            item["arguments"] += arguments
            events.append(
                self._event(
                    "response.function_call_arguments.delta",
                    item_id=item["id"],
                    output_index=self.output.index(item),
                    delta=arguments,
                )
            )
        return events

    def _done(self, cut: bool = False) -> list[dict]:
        """The open item's `.done` events; `cut`: the output ended inside it (max_tokens)."""
        item, self._item = self._item, None
        if item is None:
            return []
        index = self.output.index(item)
        events: list[dict] = []
        if item["type"] == "function_call":
            events.append(
                self._event(
                    "response.function_call_arguments.done",
                    item_id=item["id"],
                    output_index=index,
                    name=item["name"],
                    arguments=item["arguments"],
                )
            )
        else:
            part = item["content"][0]
            extra: dict[str, Any]
            if item["type"] == "message":
                name, extra = "response.output_text.done", {"logprobs": []}
            else:
                name, extra = "response.reasoning_text.done", {}
            events.append(
                self._event(
                    name,
                    item_id=item["id"],
                    output_index=index,
                    content_index=0,
                    text=part["text"],
                    **extra,
                )
            )
            events.append(
                self._event(
                    "response.content_part.done",
                    item_id=item["id"],
                    output_index=index,
                    content_index=0,
                    part=dict(part),
                )
            )
        abandoned = self._stream is not None and self._call_of.get(item["id"]) in set(
            self._stream.incomplete
        )
        item["status"] = "incomplete" if cut or abandoned else "completed"
        events.append(
            self._event("response.output_item.done", output_index=index, item=_copy(item))
        )
        return events


def _copy(item: dict) -> dict:
    return json.loads(json.dumps(item))


__all__ = [
    "ChunkWriter",
    "DeltaStream",
    "ResponsesEvents",
    "chat_completion",
    "chat_completion_message",
    "default_call_id",
]
