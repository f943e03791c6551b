"""A model's output split into its reasoning and the rest of its raw text, for an engine that runs a
reasoning parser first and hands the text it leaves to a separate tool parser (SGLang).

In:  a generated module, the prompt (`prefix`, as the parser takes it), then the output in chunks
     (`ReasoningSplit.feed`, then `finish`).
Out: per chunk, (reasoning, rest): the reasoning as it streams, and the output's raw text outside
     its reasoning regions (each region cut out whole: open delimiter, body, close delimiter),
     passed on once the parser has routed it, the other regions' delimiters included, so that a
     tool parser downstream reads calls from it as from the output.
Guaranteed: the reasoning pieces concatenate to the message's `reasoning_content` (the parse of
prefix + output), each piece stripped and joined as the message is; the rest pieces concatenate
to the output with its reasoning regions cut out, and nothing of the prompt. A region of a call
that does not parse never raises here (the tool parser downstream judges calls).

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


class ReasoningSplit:
    """One output's reasoning and the rest of its text (see the module docstring)."""

    def __init__(self, module: Any, prefix: str) -> None:
        template = module.TEMPLATE
        spec = template.get("fields", {}).get(REASONING_FIELD)
        default = template.get("defaults", {}).get(REASONING_FIELD)
        # The reasoning streams piece by piece where DeltaStream streams it; else it goes out
        # whole, as its value, when its region closes.
        self._text = (
            TextStream("reasoning", spec, default) if spec and TextStream.streams(spec) else None
        )
        cut = module.ResponseParser.start_anchor.last_match_end(prefix) if prefix else None
        self._parser = module.ResponseParser(prefix, malformed="event", offsets=True)
        origin = len(prefix) - cut if cut is not None else len(prefix)
        # The output not yet routed, in pieces as fed: the first starts at parser position
        # `_front_at` (the output starts at `origin`, after the prompt's tail).
        self._pieces: deque[str] = deque()
        self._front_at = origin
        self._done = origin  # the input before this position has gone out or been cut
        self._position = 0  # where the last event ended (a region_chunk's start)
        # The reasoning the prompt holds (a `<think>` the chat template wrote, and what follows it)
        # goes out with the first chunk's; its rest is the prompt's, never sent.
        self._pending = self._route(self._parser.initial_events)[0]

    def feed(self, text: str) -> tuple[str, str]:
        if text:
            self._pieces.append(text)
        reasoning, rest = self._route(self._parser.feed(text))
        if self._pending:
            reasoning, self._pending = self._pending + reasoning, ""
        return reasoning, rest

    def finish(self) -> tuple[str, str]:
        reasoning, rest = self._route(self._parser.finalize()[1])
        if self._pending:
            reasoning, self._pending = self._pending + reasoning, ""
        return reasoning, rest + self._take(self._done, None)

    def _take(self, start: int, end: int | None) -> str:
        """The output between parser positions `start` and `end` (None: its end); the output
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
            kind = event["type"]
            if kind == "region_chunk":
                start = self._position
                end = self._position = start + len(event["text"])
            else:
                start, end = event["start"], event["end"]
                self._position = end
            if event["field"] != REASONING_FIELD:
                if end > self._done:
                    rest.append(self._take(self._done, end))
                    self._done = end
                continue
            if start > self._done:  # text between regions, before this one
                rest.append(self._take(self._done, start))
            if end > self._done:
                self._take(end, end)  # the region's text: cut
                self._done = end
            reasoning.append(self._reasoning(kind, event))
        return "".join(reasoning), "".join(rest)

    def _reasoning(self, kind: str, event: dict) -> str:
        text = self._text
        if text is None:
            value = event.get("value")
            return value if kind == "region_close" and isinstance(value, str) else ""
        if kind == "region_open":
            text.open()
        elif kind == "region_chunk":
            return text.chunk(event["text"])
        elif kind == "region_close":
            return text.close(event["value"])[0]
        return ""


__all__ = ["REASONING_FIELD", "ReasoningSplit"]
