"""The API lower bound: the least a streaming parser with the reference's API can do per chunk.

In:  the chat prefix and the model output in chunks, as for the reference's ResponseParser.
Out: for every `feed`, a list holding one `region_chunk` event dict with the reference's four
     keys (`EVENT_KEYS`); `finalize` joins the chunks into `content`.

It parses nothing: `feed` appends the chunk to a list and returns one event. Any parser with
this API pays at least that per chunk (a Python method call, a list for the events, a dict
for the event), so its time per chunk bounds what chatparse can cost, whatever the template.
`bench.py` reports chatparse's time over this one ("within X of the lower bound") and the
reference's time over it (the largest speedup any parser with this API could show).

Its message is not a parse of the output, so bench.py never compares it with the reference's.
tests/test_benchmarks_smoke.py checks that it gives one event per chunk with exactly the keys
of the reference's `region_chunk` events.
"""

from __future__ import annotations

from typing import Any

# The keys of the reference's region_chunk events (ResponseParser._accumulate).
EVENT_KEYS = ("type", "field", "text", "dirty")


class LowerBoundParser:
    """Appends each chunk and returns one region_chunk event for it; no scanning, no state."""

    def __init__(self, prefix: str | None = None, tools: Any = None, field: str = "content"):
        if prefix is None:
            raise ValueError('LowerBoundParser needs prefix= (pass "" when there is none)')
        self._field = field
        self._chunks: list[str] = []
        self.initial_events: list[dict] = []

    def feed(self, chunk: str) -> list[dict]:
        self._chunks.append(chunk)
        return [{"type": "region_chunk", "field": self._field, "text": chunk, "dirty": False}]

    def finalize(self) -> tuple[dict, list[dict]]:
        return {"role": "assistant", self._field: "".join(self._chunks)}, []
