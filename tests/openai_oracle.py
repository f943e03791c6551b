"""The client-side oracle for tests/test_openai_deltas.py: the real `openai` package's stream
accumulator, and the checks a client would make of the JSON it accumulates.

The worktree's root is the `chatparse` package and holds `openai.py` (chatparse.openai); with
the root on sys.path (pytest's rootdir) a plain `import openai` could find that file, or the
root package itself registered under its directory's name, so the installed package is imported
with the root kept off the path.
"""

from __future__ import annotations

import importlib
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _in_repo(path: str) -> bool:
    """Whether `path` lies inside the repository (a sibling folder such as `<root>-venv` does not)."""
    path = os.path.abspath(path)
    return path == ROOT or path.startswith(ROOT + os.sep)


def real_openai():
    module = sys.modules.get("openai")
    if module is not None and not _in_repo(getattr(module, "__file__", "") or ""):
        return module
    for name in [n for n in sys.modules if n == "openai" or n.startswith("openai.")]:
        if _in_repo(getattr(sys.modules[name], "__file__", "") or ""):
            del sys.modules[name]
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if p not in ("", ".") and os.path.abspath(p) != ROOT]
    try:
        module = importlib.import_module("openai")
        importlib.import_module("openai.lib.streaming.chat")
    finally:
        sys.path[:] = saved
    assert not _in_repo(module.__file__), module.__file__
    return module


def accumulate(chunks: list[dict]) -> dict:
    """The assistant message `openai.lib.streaming.chat.ChatCompletionStreamState` builds from
    `chat.completion.chunk` dicts, as a plain dict (extra delta keys kept)."""
    openai = real_openai()
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    state = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    snapshot = state.current_completion_snapshot
    choice = snapshot.choices[0]
    message = choice.message.model_dump(exclude_none=True)
    extra = choice.message.model_extra or {}
    message.update(extra)
    message["_finish_reason"] = choice.finish_reason
    del openai
    return message


def as_chatparse(message: dict, reasoning_key: str = "reasoning_content") -> dict:
    """An accumulated OpenAI message in parse_response's shape: the reasoning key renamed back,
    each call {"type", "function": {"name", "arguments": json.loads(arguments)}} (ids dropped)."""
    out = {}
    for key, value in message.items():
        if key.startswith("_") or key in ("refusal", "parsed", "annotations"):
            continue
        if key == reasoning_key:
            out["reasoning_content"] = value
        elif key == "tool_calls":
            out["tool_calls"] = [
                {
                    "type": call["type"],
                    "function": {
                        "name": call["function"]["name"],
                        "arguments": json.loads(call["function"]["arguments"]),
                    },
                }
                for call in value
            ]
        else:
            out[key] = value
    return out


def openai_view(message: dict) -> dict:
    """parse_response's message as an OpenAI client sees it: tool_calls one flat list of calls."""
    out = dict(message)
    calls = out.get("tool_calls")
    if isinstance(calls, dict):
        out["tool_calls"] = [calls]
    elif isinstance(calls, list) and any(isinstance(c, list) for c in calls):
        out["tool_calls"] = [
            c for group in calls for c in (group if isinstance(group, list) else [group])
        ]
    return out
