"""OpenAI-compatible streaming over any response template: chat-completion deltas and Responses events.

In:  a template (a dict, a built-in family name, a file, a tokenizer..., anything
     `chatparse.load_module` reads, or a generated module), the prompt `prefix`, `tools`, then the
     model's raw output in chunks (`DeltaStream.feed`, then `finish`).
Out: lists of deltas, each shaped like a chat completion chunk's `choices[0].delta`: `role` on
     the first, then `content`, the reasoning key (`reasoning_content`, or `reasoning`) and
     `tool_calls` fragments `{"index", "id", "type", "function": {"name", "arguments"}}`;
     `message` (parse_response's message, once finished) and `finish_reason` ("tool_calls",
     "stop", or "length" under a lenient policy). `ChunkWriter` wraps deltas into `chat.completion.chunk` dicts, `ResponsesEvents`
     turns them into the Responses API's event sequence.
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
`feed` or `finish`, as `ResponseParser` does. The two lenient policies never raise for one (the
parser runs with `malformed="event"`); the malformed call region sends nothing more of its call
(what already went out stays: a delta is never retracted, and a call cut off mid-arguments keeps
its partial text, as an OpenAI server's does), it is recorded in `malformed`, and `finish_reason`
is "length" when the output ended inside it (a generation stopped by `max_tokens`):
- `malformed="drop"`: the call is left out of `message`, as the parser leaves it out;
- `malformed="content"`: the region's body (its raw text between the delimiters: the events carry
  no offsets yet, so the delimiters are not in it) goes out as a `content` delta where the call
  was, and `message["content"]` is then the content the client holds (the parser's content with
  the bodies where their calls were).

What streams before its region closes:
- text fields (`content`, reasoning) whose content parser is `text` with no transform: each
  piece as it arrives, without the whitespace `strip` removes (trailing whitespace waits for the
  next non-space character), with the field's `join` before every piece after the first;
- tool calls of a JSON body (see `openai_calls`: no dialect, the standard transform): the name
  once its JSON string is complete (or from the open's captures, when the parser's region_open
  carries them), then the arguments as json.dumps text, each piece once final (strings as they
  arrive, numbers and literals when complete, keys when complete); a member that `tools=` typing
  could change waits for its value; with `transform_each`, call by call;
- tool calls of an xml-inline or kv-lines body named by a capture of the open (see
  `openai_inline`): the name at the open, each member's key once its tag's head or its line's
  separator is read, a string value as it arrives (minus what the value's end could still claim:
  a partial close tag, a trailing newline or space the pattern drops), a value that `tools=`
  typing or a `value_parser` changes when its tag or line ends, the closing "}" at the region's
  close. An xml-inline parameter whose tag never closes before the region does is left out of the
  message after its key went out: the call's index is then in `diverged`, and when the output
  ended inside it (`max_tokens`) `finish_reason` is "length", as for a cut-off JSON call.
What goes out whole, when its region closes: calls of any other body or transform (json dialects,
a non-standard transform, xml-inline with `merge_duplicates` or a `tag_pattern` not of the form
`HEAD(?P<value>.*?)TAIL`), calls whose name comes from a capture of the open while region_open
carries no captures (their arguments wait for the name, which must be on the first fragment), and
a call whose JSON repeats the key holding its name or arguments (its text stops there; if the
final value does not extend what was sent the call's index is in `diverged`, with the unclosed tag
above the only cases where the client's call differs from `message`). Other fields (not text, or
not joined) go out with `finish`, from the final message.
"""

from __future__ import annotations

import json
import time
import types
from itertools import count

from .openai_calls import JsonCalls, plan_for
from .openai_inline import InlineCalls, inline_plan_for, retypes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

TOOL_FIELD = "tool_calls"


def _module_for(template: Any) -> Any:
    """The generated module behind `template`: a module as is, else `chatparse.load_module`."""
    if isinstance(template, types.ModuleType) and hasattr(template, "ResponseParser"):
        return template
    from . import load_module

    return load_module(template)


# The adapter's policies for a call region whose value does not parse (not runtime/stream.py's
# MALFORMED_POLICIES, which are the parser's: "raise" or "event"; both lenient ones here use "event").
MALFORMED_POLICIES = ("raise", "drop", "content")


def _new_parser(
    module: Any, prefix: Any, tools: list | None, malformed: str, tokenizer: Any = None
) -> Any:
    """The module's parser, with `captures` on region_open (a call's name before it closes) and,
    for the "drop" and "content" policies, lenient mode; with a `tokenizer`, it takes token ids."""
    options = {"tokenizer": tokenizer} if tokenizer is not None else {}
    if malformed != "raise":
        options["malformed"] = "event"
    return module.ResponseParser(prefix, tools=tools, captures=True, **options)


def _default_call_ids() -> Callable[[], str]:
    numbers = count()
    stamp = f"{time.time_ns():x}"[-10:]
    return lambda: f"call_{stamp}{next(numbers):04d}"


class _Text:
    """One text field's stream: stripped pieces, joined as the message joins them."""

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
    """A call the stream has started: its index and what its arguments have sent."""

    __slots__ = ("index", "name", "sent")

    def __init__(self, index: int, name: Any) -> None:
        self.index, self.name, self.sent = index, name, ""


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
        prefix: str | None = None,
        *,
        tools: list | None = None,
        reasoning_key: str = "reasoning_content",
        call_id: Callable[[], str] | None = None,
        malformed: str = "raise",
        tokenizer: Any = None,
    ) -> None:
        # With a fast `tokenizer`, `prefix` and `feed` take token ids (transformers 5.25).
        if malformed not in MALFORMED_POLICIES:
            raise ValueError(f"malformed must be one of {MALFORMED_POLICIES}, got {malformed!r}")
        self._module = _module_for(template)
        self._parser = _new_parser(self._module, prefix, tools, malformed, tokenizer)
        # The "drop" policy's record: {"error", "text", "sent"} per malformed call region, where
        # `sent` is how many of its calls had gone out before it turned out malformed.
        self.malformed: list[dict] = []
        self._cut_off = False  # the output ended inside a malformed call (max_tokens)
        self._policy = malformed
        self._content: list[str] = []  # every `content` delta sent (for the "content" policy)
        self.template: dict = self._module.TEMPLATE
        self._fields: dict = self.template.get("fields", {})
        self._defaults: dict = self.template.get("defaults", {})
        self._reasoning_key = reasoning_key
        self._call_id = call_id or _default_call_ids()
        from .runtime.coerce import coerce_tool_calls, schema_types, tool_parameters

        self._tool_params = tool_parameters(tools)
        self._schema_types = schema_types
        self._coerce_calls = coerce_tool_calls
        self._texts: dict[str, _Text] = {}
        for name, spec in self._fields.items():
            if name != TOOL_FIELD and self._streams_text(spec):
                self._texts[name] = _Text(self._key(name), spec, self._defaults.get(name))
        self._plan = plan_for(self._fields.get(TOOL_FIELD, {}))
        # xml-inline and kv-lines bodies (openai_inline); None when a JSON plan or neither
        self._inline = (
            inline_plan_for(self._fields.get(TOOL_FIELD, {})) if self._plan is None else None
        )
        self._reading: JsonCalls | InlineCalls | None = None  # the open tool region's body
        self._started: list[_Call] = []  # calls of the open region that have a first fragment
        self._calls = 0  # calls started so far (the next index)
        self._out: list[dict] = []
        self._pending = list(self._parser.initial_events)
        self._first = True
        self._finished = False
        self.message: dict | None = None
        self.diverged: list[int] = []  # calls whose final value does not extend what was sent

    # --- public -------------------------------------------------------------------------------

    @property
    def finish_reason(self) -> str:
        if self._cut_off:
            return "length"
        return "tool_calls" if self._calls else "stop"

    def feed(self, text: Any) -> list[dict]:
        """The deltas that `text` (the next piece of the model's output, or its token ids) makes
        final."""
        if self._finished:
            raise RuntimeError("DeltaStream.feed after finish")
        events, self._pending = self._pending + self._parser.feed(text), []
        return self._deltas(events)

    def finish(self) -> list[dict]:
        """The remaining deltas; afterwards `message` and `finish_reason` are final."""
        if self._finished:
            raise RuntimeError("DeltaStream.finish called twice")
        message, events = self._parser.finalize()
        events, self._pending = self._pending + events, []
        # A call region still open at the end is malformed only because the output stopped.
        self._cut_off = self._cut_off or any(
            e["type"] == "region_malformed" and e["field"] == TOOL_FIELD for e in events
        )
        self._finished = True  # (a call that diverges from here on was cut off: see _finish_call)
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

    @staticmethod
    def _streams_text(spec: dict) -> bool:
        return (
            spec.get("content", "text") == "text"
            and spec.get("transform") is None
            and (spec.get("join") is not None or not spec.get("repeats"))
        )

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
        if isinstance(delta.get("content"), str):
            self._content.append(delta["content"])
        last = self._out[-1] if self._out else None
        if last is not None and _merge(last, delta):
            return
        self._out.append(delta)

    def _text_event(self, kind: str, text: _Text, event: dict) -> None:
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

    def _tool_event(self, kind: str, event: dict) -> None:
        if kind == "region_malformed":
            # The "drop" policy: nothing more of this region goes out. What was sent stays (a
            # delta is never retracted): a call cut off mid-arguments keeps its partial text, as
            # an OpenAI server's does when it stops for length.
            self.malformed.append(
                {"error": event["error"], "text": event["text"], "sent": len(self._started)}
            )
            self._reading, self._started = None, []
            if self._policy == "content" and event["text"]:
                self._emit({"content": event["text"]})  # the "content" policy: its body as text
        elif kind == "region_open":
            self._started = []
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
        elif kind == "region_chunk":
            if self._reading is not None:
                self._reading.feed(event["text"])
                self._pump()
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

    def _typed(self, name: str | None, key: str) -> bool | None:
        if not self._tool_params:
            return False
        if name is None:
            return None
        properties = self._tool_params.get(name)
        return (
            bool(properties) and key in properties and retypes(self._schema_types(properties[key]))
        )

    def _coerce_member(self, name: str, key: str, value: Any) -> Any:
        call = {"function": {"name": name, "arguments": {key: value}}}
        return self._coerce_calls(call, self._tool_params)["function"]["arguments"][key]

    def _pump(self) -> None:
        """Send what the open region's calls have made final, call by call, in order."""
        reading = self._reading
        assert reading is not None
        for position, slot in enumerate(reading.slots):
            if position == len(self._started):
                if not slot.streaming or slot.name is None:
                    return
                self._start(slot.name, slot.text)
            elif slot.streaming:
                call = self._started[position]
                if len(slot.text) > len(call.sent):
                    self._fragment(call, slot.text[len(call.sent) :])
            if not (slot.closed and slot.complete and slot.streaming):
                return

    def _start(self, name: Any, arguments: str, kind: Any = "function") -> _Call:
        call = _Call(self._calls, name)
        self._calls += 1
        self._started.append(call)
        function = {"name": name, "arguments": arguments}
        fragment = {"index": call.index, "id": self._call_id(), "type": kind, "function": function}
        self._emit({"tool_calls": [fragment]})
        call.sent = arguments
        return call

    def _fragment(self, call: _Call, arguments: str) -> None:
        fragment = {"index": call.index, "function": {"arguments": arguments}}
        self._emit({"tool_calls": [fragment]})
        call.sent += arguments

    def _finish_call(self, position: int, value: Any) -> None:
        kind, name, arguments = _call_parts(value)
        target = json.dumps(arguments)
        if position >= len(self._started):
            self._start(name, target, kind)
            return
        call = self._started[position]
        slot = self._reading.slots[position] if self._reading is not None else None
        if slot is not None and slot.complete and slot.streaming and slot.text != target:
            try:
                if json.loads(slot.text) == arguments:
                    target = slot.text  # a repeated key: the text as written
            except ValueError:
                pass
        if call.name == name and target.startswith(call.sent):
            if len(target) > len(call.sent):
                self._fragment(call, target[len(call.sent) :])
        else:
            self.diverged.append(call.index)
            if self._finished:  # the output ended inside the call (an xml-inline tag left open)
                self._cut_off = True


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
    """Deltas in, the Responses API's streaming events out (`response.*` dicts).

    Each run of text or reasoning becomes an output item (`message` with one `output_text`
    part, `reasoning` with one `reasoning_text` part), each call a `function_call` item:
    `response.output_item.added`, then `response.content_part.added` and the `.delta` events
    (`response.output_text.delta`, `response.reasoning_text.delta`,
    `response.function_call_arguments.delta`), then the `.done` events and
    `response.output_item.done`. An item is done when the next begins, or at `close()`.
    `sequence_number` counts from 0 across the events of one stream."""

    def __init__(self, *, reasoning_key: str = "reasoning_content", id_prefix: str = "") -> None:
        self._reasoning_key = reasoning_key
        self._prefix = id_prefix
        self._sequence = count()
        self._items = count()
        self._item: dict | None = None
        self._text = ""
        self._calls: dict[int, dict] = {}  # call index -> its item
        self.output: list[dict] = []  # the items, done or in progress

    def _event(self, kind: str, **fields: Any) -> dict:
        return {"type": kind, "sequence_number": next(self._sequence), **fields}

    def feed(self, deltas: Iterable[dict]) -> list[dict]:
        events: list[dict] = []
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

    def close(self) -> list[dict]:
        """The `.done` events of the item still open."""
        return self._done()

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
        item = self._item
        assert item is not None
        item["content"][0]["text"] += text
        name = (
            "response.output_text.delta" if kind == "message" else "response.reasoning_text.delta"
        )
        extra = {"logprobs": []} if kind == "message" else {}
        events.append(
            self._event(
                name,
                item_id=item["id"],
                output_index=self.output.index(item),
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

    def _done(self) -> list[dict]:
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
        item["status"] = "completed"
        events.append(
            self._event("response.output_item.done", output_index=index, item=_copy(item))
        )
        return events


def _copy(item: dict) -> dict:
    return json.loads(json.dumps(item))


__all__ = ["ChunkWriter", "DeltaStream", "ResponsesEvents"]
