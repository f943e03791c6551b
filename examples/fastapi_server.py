"""A chat-completions endpoint over chatparse: a model's raw output in, OpenAI chunks out (SSE).

The model is a stand-in: `generate` replays a built-in family's bundled sample output in
4-character pieces, as an inference engine yields decoded text. Replace `render_prompt` and
`generate` with your engine's; everything between them is what a server needs from chatparse:
a `DeltaStream` per request (the prompt as its prefix, the request's tools for argument typing),
`ChunkWriter` for the chunk envelope, and `chat_completion` for a non-streamed answer.

    pip install chatparse fastapi uvicorn
    CHATPARSE_FAMILY=qwen3_coder uvicorn examples.fastapi_server:app --port 8000

Any OpenAI client then works against http://localhost:8000/v1 (tests/test_fastapi_example.py
drives it with the `openai` package over HTTP).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse

from chatparse.catalogue import load_sample
from chatparse.openai import ChunkWriter, DeltaStream, chat_completion

FAMILY = os.environ.get("CHATPARSE_FAMILY", "qwen3_coder")
app = FastAPI()


def render_prompt(messages: list[dict], tools: list | None) -> str:
    """Stand-in for the chat template: the prompt the sample's output continues."""
    return load_sample(FAMILY)["prefix"]


def generate(prompt: str) -> Iterator[str]:
    """Stand-in for the engine: the sample's output, in 4-character pieces."""
    text = load_sample(FAMILY)["text"]
    for start in range(0, len(text), 4):
        yield text[start : start + 4]


@app.post("/v1/chat/completions")
async def chat_completions(request: Request):
    body = await request.json()
    tools = body.get("tools") or None
    prompt = render_prompt(body.get("messages", []), tools)
    # One DeltaStream per request. "drop": a call the output cuts off (max_tokens) or that does
    # not parse is left out and the stream goes on; finish_reason then says "length".
    stream = DeltaStream(FAMILY, prompt, tools=tools, malformed="drop")
    completion_id = f"chatcmpl-{uuid.uuid4().hex}"
    model = body.get("model", FAMILY)
    if not body.get("stream"):
        for piece in generate(prompt):
            stream.feed(piece)
        stream.finish()
        reason = stream.finish_reason
        return JSONResponse(chat_completion(stream.message, id=completion_id, model=model,
                                            finish_reason=reason))  # fmt: skip
    writer = ChunkWriter(id=completion_id, model=model)

    def events() -> Iterator[str]:
        for piece in generate(prompt):
            for delta in stream.feed(piece):
                yield f"data: {json.dumps(writer.chunk(delta))}\n\n"
        for delta in stream.finish():
            yield f"data: {json.dumps(writer.chunk(delta))}\n\n"
        assert stream.finish_reason is not None
        yield f"data: {json.dumps(writer.final(stream.finish_reason))}\n\n"
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")
