"""A model's output split into its reasoning and the rest, for an engine that runs a reasoning parser
first and hands the text it leaves on (SGLang): to a tool parser, or to the client as content.

In:  a generated module, the prompt (`prefix`, as the parser takes it), what the rest is for
     (`rest`), then the output in chunks (`ReasoningSplit.feed`, then `finish`).
Out: per chunk, (reasoning, rest), each passed on once the parser has routed its text:
     - reasoning: the message's `reasoning_content` as it streams (stripped pieces, joined as the
       message joins them);
     - rest="message": the message's raw text with the body of each reasoning region left out
       (its delimiters kept), the prompt's part (from its last start anchor on) in the first
       chunk's, for a tool parser that reads it as a whole message (`prefix=""`): chatparse's;
     - rest="content": the message's content as it streams (as `DeltaStream` sends it), and the
       raw text of its tool-call regions (no tool parser runs: the engine sends what it gets to
       the client, and a call is not dropped).
Guaranteed: the reasoning pieces concatenate to the message's `reasoning_content` (the parse of
prefix + output). With rest="message" the parse of the rest with `prefix=""` gives the message's
other fields: the rest holds every char of the message but its reasoning bodies, so each region,
reasoning ones included (empty), opens and closes where it does in the message (a delimiter that
looks into a reasoning body, a lookbehind, is the exception). A call region that does not parse
never raises here (the tool parser judges calls).

The split reads the parser's offsets (`offsets=True`: the span each open, close and malformed event
consumed, in the prompt's tail from its last start anchor on, then the output), so it takes the
general path of the parser, never its fast path.
"""

from __future__ import annotations

from collections import deque

from .openai_adapter import TextStream

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

REASONING_FIELD = "reasoning_content"
CONTENT_FIELD = "content"
TOOL_FIELD = "tool_calls"
RESTS = ("message", "content")


def _text_stream(template: dict, field: str) -> TextStream | None:
    """The field's stream where DeltaStream streams it piece by piece; else None: its value goes
    out whole when its region closes."""
    spec = template.get("fields", {}).get(field)
    if not spec or not TextStream.streams(spec):
        return None
    return TextStream(field, spec, template.get("defaults", {}).get(field))


class ReasoningSplit:
    """One output's reasoning and the rest (see the module docstring)."""

    def __init__(self, module: Any, prefix: str, rest: str = "message") -> None:
        if rest not in RESTS:
            raise ValueError(f"rest must be one of {RESTS}, got {rest!r}")
        template = module.TEMPLATE
        self._raw = rest == "message"
        self._streams = {
            field: _text_stream(template, field) for field in (REASONING_FIELD, CONTENT_FIELD)
        }
        cut = module.ResponseParser.start_anchor.last_match_end(prefix) if prefix else None
        self._parser = module.ResponseParser(prefix, malformed="event", offsets=True)
        tail = prefix[cut:] if cut is not None else prefix
        # The message text not yet routed (the prompt's tail, then the output), in pieces as fed:
        # the first starts at parser position `_front_at`.
        self._pieces: deque[str] = deque([tail] if tail else [])
        self._front_at = 0
        self._done = 0  # the text before this position has gone out or been left out
        self._position = 0  # where the last event ended (a region_chunk's start)
        # What the prompt's tail routes goes out with the first chunk's.
        self._pending: tuple[str, str] | None = self._route(self._parser.initial_events)

    def feed(self, text: str) -> tuple[str, str]:
        if text:
            self._pieces.append(text)
        return self._with_pending(self._route(self._parser.feed(text)))

    def finish(self) -> tuple[str, str]:
        reasoning, rest = self._with_pending(self._route(self._parser.finalize()[1]))
        if self._raw:
            rest += self._take(self._done, None)
        return reasoning, rest

    def whole(self, text: str) -> tuple[str, str]:
        """`feed(text)` then `finish()`, joined: a whole output's reasoning and rest."""
        reasoning, rest = self.feed(text)
        more_reasoning, more_rest = self.finish()
        return reasoning + more_reasoning, rest + more_rest

    def _with_pending(self, routed: tuple[str, str]) -> tuple[str, str]:
        pending = self._pending
        if pending is None:
            return routed
        self._pending = None
        return pending[0] + routed[0], pending[1] + routed[1]

    def _take(self, start: int, end: int | None) -> str:
        """The message text between parser positions `start` and `end` (None: its end); the text
        before `end` is routed then. Each piece is sliced where a span ends in it and dropped once
        wholly routed: linear time over the output."""
        out: list[str] = []
        pieces = self._pieces
        while pieces and (end is None or end > self._front_at):
            piece = pieces[0]
            piece_end = self._front_at + len(piece)
            low = max(start, self._front_at) - self._front_at
            high = len(piece) if end is None else min(end, piece_end) - self._front_at
            if high > low:
                out.append(piece[low:high])
            if end is not None and piece_end > end:
                break
            pieces.popleft()
            self._front_at = piece_end
        return "".join(out)

    def _route(self, events: list[dict]) -> tuple[str, str]:
        reasoning: list[str] = []
        rest: list[str] = []
        for event in events:
            kind, field = event["type"], event["field"]
            if kind == "region_chunk":
                start = self._position
                end = self._position = start + len(event["text"])
            else:
                start, end = event["start"], event["end"]
                self._position = end
            if field == REASONING_FIELD:
                reasoning.append(self._streamed(field, kind, event))
                if self._raw and kind == "region_chunk":  # the body is left out
                    rest.append(self._advance(start, keep=True))
                rest.append(self._advance(end, keep=self._raw and kind != "region_chunk"))
            elif self._raw or field == TOOL_FIELD:
                rest.append(self._advance(end, keep=True))
            else:
                if field == CONTENT_FIELD:
                    rest.append(self._streamed(field, kind, event))
                self._advance(end, keep=False)
        return "".join(reasoning), "".join(rest)

    def _advance(self, end: int, keep: bool) -> str:
        """Route the text up to position `end`: returned when `keep`, else left out."""
        if end <= self._done:
            return ""
        text = self._take(self._done, end) if keep else self._take(end, end)
        self._done = end
        return text

    def _streamed(self, field: str, kind: str, event: dict) -> str:
        """A text field's piece for `event` (its value at the close when it does not stream)."""
        stream = self._streams[field]
        if stream is None:
            value = event.get("value")
            return value if kind == "region_close" and isinstance(value, str) else ""
        if kind == "region_open":
            stream.open()
        elif kind == "region_chunk":
            return stream.chunk(event["text"])
        elif kind == "region_close":
            return stream.close(event["value"])[0]
        return ""


__all__ = ["REASONING_FIELD", "RESTS", "ReasoningSplit"]
