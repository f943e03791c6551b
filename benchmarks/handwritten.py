"""A hand-written `str.find` streaming parser for exactly one template, SmolLM3's (`TEMPLATE`,
the same as templates/smollm3.json).

In:  the chat prefix and the model output in chunks, as for the reference's ResponseParser.
Out: the same `initial_events`, per-chunk events, final message and final events as the
     reference's ResponseParser gives for `TEMPLATE` (checked by
     tests/test_benchmarks_smoke.py on generated SmolLM3 outputs and both chunkings).

It is what a person might write by hand for this one format: a comparison point, not a floor.
It keeps only the held tail of the buffer (never the whole text) and looks for delimiters with
`str.find` / `str.rfind`, but every chunk still goes through a general method with a fast
path in front; parsers that inline a per-region fast path run 1.7-2.7x faster than this one
(issue 10). The floor of the API is `lower_bound.py`.

Not a general parser: `tools=` is accepted and ignored (the benchmark's SmolLM3 arguments are
already typed, so the reference's schema coercion changes nothing), and the delimiter scan
relies on these delimiters having "<" only as their first character.
"""

from __future__ import annotations

import json
from typing import Any

TEMPLATE = {
    "version": 1,
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {
            "open": "<think>",
            "close": "</think>",
            "repeats": True,
            "join": "\n\n",
            "content": "text",
        },
        "tool_calls": {
            "open_pattern": r"\s*<tool_call>",
            "close_pattern": r"</tool_call>\s*",
            "repeats": True,
            "content": "json",
            "transform": {
                "type": "function",
                "function": {"name": "{content.name}", "arguments": "{content.arguments}"},
            },
        },
        "content": {
            "close_pattern": r"\s*<\|im_end\|>",
            "repeats": True,
            "join": "\n\n",
            "content": "text",
        },
    },
}

ANCHOR = "<|im_start|>assistant\n"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
TOOL_OPEN, TOOL_CLOSE = "<tool_call>", "</tool_call>"
IM_END = "<|im_end|>"
REASONING, TOOLS, CONTENT = "reasoning_content", "tool_calls", "content"

# The characters `regex` matches with \s (Unicode White_Space). str.isspace() would also take
# \x1c-\x1f, which the reference's `\s*` does not.
WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def _partial_len(buf: str, delim: str) -> int:
    """Length of the longest tail of `buf` that is a proper prefix of `delim` ("<" only first)."""
    i = buf.rfind("<", max(0, len(buf) - len(delim) + 1))
    return len(buf) - i if i >= 0 and delim.startswith(buf[i:]) else 0


def _ws_start(buf: str, end: int) -> int:
    """Start of the whitespace run ending at `end` (what a leading `\\s*` swallows)."""
    return len(buf[:end].rstrip(WHITESPACE))


class HandwrittenParser:
    """SmolLM3 only: content is implicit, <think> opens reasoning, \\s*<tool_call> opens a call."""

    def __init__(self, prefix: str | None = None, tools: Any = None):
        if prefix is None:
            raise ValueError('HandwrittenParser needs prefix= (pass "" when there is none)')
        self._held = ""
        self._current = CONTENT
        self._opened = False
        self._body: list[str] = []
        self._output: dict[str, Any] = {"role": "assistant"}
        self._finalized = False
        self.initial_events: list[dict] = []
        cut = prefix.rfind(ANCHOR)
        rest = prefix[cut + len(ANCHOR) :] if cut >= 0 else prefix
        if rest:
            self._run(rest, self.initial_events, eos=False)

    def feed(self, chunk: str) -> list[dict]:
        if self._finalized:
            raise RuntimeError("HandwrittenParser already finalized")
        events: list[dict] = []
        if self._held:
            buf, self._held = self._held + chunk, ""
        elif (
            chunk and "<" not in chunk and (self._current != CONTENT or chunk[-1] not in WHITESPACE)
        ):
            # Fast path, the common case: no delimiter can start in this chunk or be pending.
            self._text(events, chunk)
            return events
        else:
            buf = chunk
        self._run(buf, events, eos=False)
        return events

    def finalize(self) -> tuple[dict, list[dict]]:
        if self._finalized:
            raise RuntimeError("HandwrittenParser already finalized")
        events: list[dict] = []
        buf, self._held = self._held, ""
        self._run(buf, events, eos=True)
        self._finalized = True
        out = {k: v for k, v in self._output.items() if k == "role" or v not in (None, "", [], {})}
        self._output = out
        return out, events

    # -- scanning ------------------------------------------------------------------------

    def _run(self, buf: str, events: list[dict], eos: bool) -> None:
        while True:
            if self._current == CONTENT:
                buf = self._scan_content(buf, events, eos)
            else:
                close = THINK_CLOSE if self._current == REASONING else TOOL_CLOSE
                i = buf.find(close)
                if i >= 0:
                    end = i + len(close)
                    if close == TOOL_CLOSE:  # `</tool_call>\s*` takes the whitespace after it
                        end = len(buf) - len(buf[end:].lstrip(WHITESPACE))
                        if end == len(buf) and not eos:
                            self._text(events, buf[:i])  # more whitespace may follow: hold
                            self._held = buf[i:]
                            return
                    if i:
                        self._text(events, buf[:i])
                    self._close(events)
                    buf = buf[end:]
                    continue
                if eos:
                    self._text(events, buf)
                    self._close(events)
                    return
                keep = _partial_len(buf, close)
                self._text(events, buf[: len(buf) - keep])
                self._held = buf[len(buf) - keep :]
                return
            if buf is None:
                return

    def _scan_content(self, buf: str, events: list[dict], eos: bool) -> str | None:
        """One step in the implicit content region; returns the unconsumed rest, or None when
        the buffer is exhausted (the pending tail, if any, is in self._held)."""
        n = len(buf)
        hold = n
        best: tuple[int, int, str] | None = None  # (start, end, what)
        i = buf.find(THINK_OPEN)
        if i >= 0:
            best = (i, i + len(THINK_OPEN), THINK_OPEN)
        elif not eos:
            hold = min(hold, n - _partial_len(buf, THINK_OPEN))
        for delim in (TOOL_OPEN, IM_END):
            i = buf.find(delim)
            if i >= 0:
                start, end = _ws_start(buf, i), i + len(delim)
                if end == n and not eos:
                    hold = min(hold, start)  # a regex match at the edge could still grow: wait
                elif best is None or start < best[0]:
                    best = (start, end, delim)
            elif not eos:
                keep = _partial_len(buf, delim)
                hold = min(hold, _ws_start(buf, n - keep))
        if best is not None and best[0] < hold:
            start, end, what = best
            if start:
                self._text(events, buf[:start])
            self._close(events)
            if what == THINK_OPEN:
                self._open(events, REASONING)
            elif what == TOOL_OPEN:
                self._open(events, TOOLS)
            return buf[end:]
        if eos:
            self._text(events, buf)
            self._close(events)
            return None
        if hold:
            self._text(events, buf[:hold])
        self._held = buf[hold:]
        return None

    # -- regions ---------------------------------------------------------------------------

    def _open(self, events: list[dict], field: str) -> None:
        self._current, self._opened, self._body = field, True, []
        events.append({"type": "region_open", "field": field})

    def _text(self, events: list[dict], text: str) -> None:
        if not text:
            return
        if not self._opened:
            self._opened = True
            events.append({"type": "region_open", "field": self._current})
        self._body.append(text)
        events.append(
            {
                "type": "region_chunk",
                "field": self._current,
                "text": text,
                "dirty": self._current == TOOLS,
            }
        )

    def _close(self, events: list[dict]) -> None:
        field = self._current
        if self._opened:
            body = "".join(self._body)
            if field == TOOLS:
                try:
                    call = json.loads(body)
                    function = {"name": call["name"], "arguments": call["arguments"]}
                except (json.JSONDecodeError, KeyError, TypeError) as e:
                    raise ValueError(
                        f"tool_calls: not a JSON call with name and arguments: {body!r}"
                    ) from e
                value: Any = {"type": "function", "function": function}
                self._output.setdefault(TOOLS, []).append(value)
            else:
                value = body.strip()
                previous = self._output.get(field)
                self._output[field] = value if previous is None else previous + "\n\n" + value
            events.append({"type": "region_close", "field": field, "value": value})
        self._current, self._opened, self._body = CONTENT, False, []
