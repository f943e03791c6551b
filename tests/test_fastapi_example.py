"""examples/fastapi_server.py served on localhost and driven by the real `openai` client over HTTP.

The oracle is `chatparse.parse_response` on the sample's whole output (held to transformers 5.25
elsewhere); the client's own stream accumulator (`client.chat.completions.stream`) and its
non-streamed response parsing build what a server's user gets.
"""

from __future__ import annotations

import importlib.util
import json
import socket
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")

from openai_oracle import real_openai  # noqa: E402

import chatparse  # noqa: E402
from chatparse.catalogue import load_sample  # noqa: E402

openai = real_openai()  # the package, not the repository's openai.py

ROOT = Path(__file__).resolve().parent.parent
FAMILY = "qwen3_coder"


@pytest.fixture(scope="module")
def base_url(monkeypatch_module):
    monkeypatch_module.setenv("CHATPARSE_FAMILY", FAMILY)
    spec = importlib.util.spec_from_file_location(
        "fastapi_server", ROOT / "examples/fastapi_server.py"
    )
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(example.app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the example server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def monkeypatch_module():
    patch = pytest.MonkeyPatch()
    yield patch
    patch.undo()


def expected() -> dict:
    sample = load_sample(FAMILY)
    return chatparse.parse_response(sample["text"], FAMILY, prefix=sample["prefix"],
                                    tools=sample["tools"])  # fmt: skip


def test_streamed_over_http(base_url):
    client = openai.OpenAI(base_url=base_url, api_key="unused")
    sample = load_sample(FAMILY)
    with client.chat.completions.stream(
        model="stand-in", messages=[{"role": "user", "content": "flights?"}], tools=sample["tools"]
    ) as stream:
        argument_events = sum(
            1 for event in stream if event.type == "tool_calls.function.arguments.delta"
        )
        final = stream.get_final_completion()
    message = expected()
    choice = final.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == message["content"]
    assert choice.message.model_extra["reasoning_content"] == message["reasoning_content"]
    calls = [(c.function.name, json.loads(c.function.arguments)) for c in choice.message.tool_calls]
    assert calls == [
        (c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]
    ]
    assert argument_events >= 3  # the arguments streamed, not one piece at the close


def test_whole_over_http(base_url):
    client = openai.OpenAI(base_url=base_url, api_key="unused")
    sample = load_sample(FAMILY)
    completion = client.chat.completions.create(
        model="stand-in", messages=[{"role": "user", "content": "flights?"}], tools=sample["tools"]
    )
    message = expected()
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == message["content"]
    calls = [(c.function.name, json.loads(c.function.arguments)) for c in choice.message.tool_calls]
    assert calls == [
        (c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]
    ]
