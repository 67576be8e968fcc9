"""A local OpenAI-compatible chat server for tests (127.0.0.1 only): answers
POST /v1/chat/completions from a script and records every request, so processors can be
driven through a real ChatOpenAI client without leaving the machine. Fault modes: any HTTP
status, a malformed body, a slow answer (`slow`) and a request that never gets one (`HANG`,
held until the server closes)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import pytest

# Sockets on, to 127.0.0.1 only: the marks a test that talks to FakeOpenAI needs.
LOOPBACK = [
    pytest.mark.enable_socket,
    pytest.mark.allow_hosts(["127.0.0.1"]),
    pytest.mark.network,
]


def loopback(test: Any) -> Any:
    """Marks one test with LOOPBACK (for a module whose other tests stay offline)."""
    for mark in LOOPBACK:
        test = mark(test)
    return test


# A script entry that never answers: the request is held until the server closes.
HANG: tuple[int, Any] = (-1, None)


def slow(seconds: float, status: int, body: Any) -> tuple[int, Any, float]:
    """A script entry answered after `seconds`."""
    return (status, body, seconds)


class FakeOpenAI:
    """Answers POST /v1/chat/completions from a script of (status, body) pairs, `slow(...)`
    or `HANG` entries; once the script is used up every request gets `fallback` (HTTP 500 by
    default). A body that is a str is sent as it is (malformed JSON). Each request is kept
    as {"path", "body", "auth", "api_key"} (the Authorization and x-api-key headers). Any
    POST path is answered, so an Anthropic client at `root_url` works too (`anthropic_message`)."""

    def __init__(self) -> None:
        self.script: list[tuple[Any, ...]] = []
        self.fallback: tuple[Any, ...] = (500, {"error": "empty"})
        self.requests: list[dict[str, Any]] = []
        self.released = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                server.requests.append(
                    {
                        "path": self.path,
                        "body": json.loads(self.rfile.read(length) or b"{}"),
                        "auth": self.headers.get("Authorization"),
                        "api_key": self.headers.get("x-api-key"),
                    }
                )
                entry = server.script.pop(0) if server.script else server.fallback
                status, body = entry[0], entry[1]
                if status == HANG[0]:
                    server.released.wait()
                    return
                if len(entry) > 2 and server.released.wait(entry[2]):
                    return
                data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (timeout) and closed the socket
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def root_url(self) -> str:
        """The server without a path (an Anthropic client's, or Ollama's, base URL)."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (``.../v1``)."""
        return f"{self.root_url}/v1"

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The JSON body of each request, in order."""
        return [r["body"] for r in self.requests]

    def close(self) -> None:
        self.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def chat_openai(server: FakeOpenAI) -> Any:
    """A ChatOpenAI client for `server`, with the client's own retries off."""
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model="test-model", base_url=server.base_url, api_key="test", max_retries=0, timeout=10
    )


def completion(message: dict[str, Any] | str, finish: str = "stop") -> dict[str, Any]:
    """A chat.completion body with one choice (a str is the assistant's text); 321 prompt
    and 45 completion tokens."""
    if isinstance(message, str):
        message = {"role": "assistant", "content": message}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 321, "completion_tokens": 45, "total_tokens": 366},
    }


def tool_completion(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """A chat.completion body whose answer is one call of tool `name` with `args`."""
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return completion({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")


def anthropic_message(content: list[dict[str, Any]] | str) -> dict[str, Any]:
    """An Anthropic Messages API answer (a str is one text block); 11 input, 7 output tokens."""
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    stop = "tool_use" if any(c.get("type") == "tool_use" for c in content) else "end_turn"
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 11, "output_tokens": 7},
    }


def anthropic_tool_use(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic answer that calls tool `name` with `args`."""
    return anthropic_message([{"type": "tool_use", "id": "toolu_1", "name": name, "input": args}])
