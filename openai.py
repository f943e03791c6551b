"""`chatparse.openai`, the public import path of the OpenAI-compatible serving layer.

A facade: it re-exports the public names of chatparse.serving.openai_adapter (the module that
defines them, and documents what streams and what is guaranteed):

    from chatparse.openai import ChunkWriter, DeltaStream, ResponsesEvents, chat_completion
"""

from __future__ import annotations

from .serving.openai_adapter import (
    ChunkWriter,
    DeltaStream,
    ResponsesEvents,
    chat_completion,
    chat_completion_message,
    default_call_id,
)

__all__ = [
    "ChunkWriter",
    "DeltaStream",
    "ResponsesEvents",
    "chat_completion",
    "chat_completion_message",
    "default_call_id",
]
