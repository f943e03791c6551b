"""The three streaming events a response parser emits, and their constructors.

In:  a field name plus, for a chunk, the routed text and its dirty flag, or, for a
     close, the field's final value.
Out: plain dicts, shaped exactly like the reference `ResponseParser`'s events, with
     the same keys in the same order (consumers may compare or serialise them):

    {"type": "region_open",  "field": f}          (+ "captures": named groups, with captures=True)
    {"type": "region_chunk", "field": f, "text": t, "dirty": d}
    {"type": "region_close", "field": f, "value": v}

and, in lenient mode only (`malformed="event"`, an extension), for a structured region whose value
does not parse:

    {"type": "region_malformed", "field": f, "error": e, "text": t}

With `offsets=True` (an extension, as transformers' main branch) open, close and malformed events
carry "start" and "end" right after "field": the span of the parser's input text (the prefix
after start-anchor truncation, then the output) that the event consumed, its open or close
delimiter's match, empty at an implicit boundary:

    {"type": "region_open",      "field": f, "start": s, "end": e}   (+ "captures")
    {"type": "region_close",     "field": f, "start": s, "end": e, "value": v}
    {"type": "region_malformed", "field": f, "start": s, "end": e, "error": r, "text": t}

`dirty` is True when the field's content parser is structured (json, xml-inline,
kv-lines): its chunks are raw body text and only the close carries the parsed value.
The TypedDicts are for type checkers only (`typing` costs milliseconds at import); at run time
every event is a plain dict. `message.py` is the one place the parser builds events, with these.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal, TypedDict

    class _RegionOpenKeys(TypedDict):
        type: Literal["region_open"]
        field: str

    class RegionOpen(_RegionOpenKeys, total=False):
        start: int
        end: int
        captures: dict[str, str]

    class RegionChunk(TypedDict):
        type: Literal["region_chunk"]
        field: str
        text: str
        dirty: bool

    class _RegionCloseKeys(TypedDict):
        type: Literal["region_close"]
        field: str
        value: Any

    class RegionClose(_RegionCloseKeys, total=False):
        start: int
        end: int

    class _RegionMalformedKeys(TypedDict):
        type: Literal["region_malformed"]
        field: str
        error: str
        text: str

    class RegionMalformed(_RegionMalformedKeys, total=False):
        start: int
        end: int

    Event = RegionOpen | RegionChunk | RegionClose | RegionMalformed


def region_open(
    field: str, captures: dict[str, str] | None = None, span: tuple[int, int] | None = None
) -> RegionOpen:
    """A region starts: an explicit open matched, or the implicit region got its first text.
    With `captures` (the parser's `captures=True`, an extension) the event carries the open's
    named groups under "captures"; with `span` (`offsets=True`, an extension) "start" and "end"."""
    if span is not None:
        if captures is None:
            return {"type": "region_open", "field": field, "start": span[0], "end": span[1]}
        return {
            "type": "region_open",
            "field": field,
            "start": span[0],
            "end": span[1],
            "captures": captures,
        }
    if captures is None:
        return {"type": "region_open", "field": field}
    return {"type": "region_open", "field": field, "captures": captures}


def region_chunk(field: str, text: str, dirty: bool) -> RegionChunk:
    """Text routed into the open region; `dirty` says it is not yet part of a final value."""
    return {"type": "region_chunk", "field": field, "text": text, "dirty": dirty}


def region_close(field: str, value: Any, span: tuple[int, int] | None = None) -> RegionClose:
    """The region ended; `value` is its body after the content parser and transform."""
    if span is None:
        return {"type": "region_close", "field": field, "value": value}
    return {
        "type": "region_close",
        "field": field,
        "start": span[0],
        "end": span[1],
        "value": value,
    }


def region_malformed(
    field: str, error: str, text: str, span: tuple[int, int] | None = None
) -> RegionMalformed:
    """Lenient mode: the region's value did not parse; `text` is its raw body."""
    if span is None:
        return {"type": "region_malformed", "field": field, "error": error, "text": text}
    return {
        "type": "region_malformed",
        "field": field,
        "start": span[0],
        "end": span[1],
        "error": error,
        "text": text,
    }


__all__ = [
    "region_chunk",
    "region_close",
    "region_malformed",
    "region_open",
]
