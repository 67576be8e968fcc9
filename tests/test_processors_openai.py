"""The knowledge monitor against a local OpenAI-compatible HTTP server (127.0.0.1 only):
request shape, parsed ops, malformed answers and HTTP 500 retries."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from langmem_plus.processors import KnowledgeMonitor

pytestmark = [
    pytest.mark.enable_socket,
    pytest.mark.allow_hosts(["127.0.0.1"]),
    pytest.mark.network,
]


def completion(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class FakeOpenAI:
    """Answers POST /v1/chat/completions from a script of (status, body) pairs."""

    def __init__(self) -> None:
        self.script: list[tuple[int, dict[str, Any]]] = []
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                server.requests.append(
                    {
                        "path": self.path,
                        "body": json.loads(self.rfile.read(length) or b"{}"),
                        "auth": self.headers.get("Authorization"),
                    }
                )
                status, body = server.script.pop(0) if server.script else (500, {"error": "empty"})
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    srv = FakeOpenAI()
    yield srv
    srv.close()


def make_model(server: FakeOpenAI) -> Any:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model="test-model", base_url=server.base_url, api_key="test", max_retries=0, timeout=10
    )


TURNS = [{"role": "user", "text": "不对，我不是住在上海，是住在杭州"}]
EXISTING = [{"id": "m1", "text": "用户住在上海"}]


def test_request_shape_and_ops_parse(server: FakeOpenAI) -> None:
    answer = {
        "ops": [
            {
                "op": "UPDATE",
                "id": "m1",
                "text": "用户住在杭州",
                "category": "fact",
                "who": "user",
                "confidence": 0.9,
                "reason": "correction",
            }
        ]
    }
    server.script = [(200, completion(json.dumps(answer, ensure_ascii=False)))]
    ops = KnowledgeMonitor(model=make_model(server)).run(TURNS, EXISTING)
    assert [(o.op, o.id, o.text) for o in ops] == [("UPDATE", "m1", "用户住在杭州")]
    req = server.requests[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["auth"] == "Bearer test"
    body = req["body"]
    assert body["model"] == "test-model"
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "memory monitor" in body["messages"][0]["content"]
    assert '[m1] "用户住在上海"' in body["messages"][1]["content"]
    assert "tools" in body or "response_format" in body
    if "response_format" in body:
        schema = body["response_format"]["json_schema"]["schema"]
        assert "ops" in schema["properties"]
    else:
        assert body["tools"][0]["function"]["name"] == "OpsOut"


def test_tool_call_answer_parses(server: FakeOpenAI) -> None:
    msg = completion("")
    msg["choices"][0]["message"] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {
                    "name": "OpsOut",
                    "arguments": json.dumps({"ops": [{"op": "DELETE", "id": "m1"}]}),
                },
            }
        ],
    }
    msg["choices"][0]["finish_reason"] = "tool_calls"
    server.script = [(200, msg)]
    ops = KnowledgeMonitor(model=make_model(server)).run(TURNS, EXISTING)
    assert [(o.op, o.id) for o in ops] == [("DELETE", "m1")]


def test_malformed_answer_falls_back_to_rules(server: FakeOpenAI) -> None:
    server.script = [(200, completion("Sorry, I can't produce JSON today."))]
    sleeps: list[float] = []
    ops = KnowledgeMonitor(model=make_model(server), sleep=sleeps.append).run(TURNS, EXISTING)
    assert [(o.op, o.id, o.text) for o in ops] == [("UPDATE", "m1", "用户住在杭州")]
    assert len(server.requests) == 1 and sleeps == []  # malformed answers are not retried


def test_http_500_is_retried_with_backoff(server: FakeOpenAI) -> None:
    answer = {"ops": [{"op": "SKIP"}]}
    server.script = [
        (500, {"error": {"message": "boom"}}),
        (500, {"error": {"message": "boom"}}),
        (200, completion(json.dumps(answer))),
    ]
    sleeps: list[float] = []
    ops = KnowledgeMonitor(model=make_model(server), sleep=sleeps.append).run(TURNS, EXISTING)
    assert [o.op for o in ops] == ["SKIP"]
    assert sleeps == [1.0, 2.0]
    assert len(server.requests) == 3


def test_http_500_forever_falls_back_to_rules(server: FakeOpenAI) -> None:
    server.script = [(500, {"error": {"message": "down"}})] * 4
    sleeps: list[float] = []
    ops = KnowledgeMonitor(model=make_model(server), sleep=sleeps.append).run(TURNS, EXISTING)
    assert sleeps == [1.0, 2.0, 4.0]
    assert len(server.requests) == 4
    assert [(o.op, o.id) for o in ops] == [("UPDATE", "m1")]


def test_http_400_on_response_format_switches_to_plain_json(server: FakeOpenAI) -> None:
    answer = {"ops": [{"op": "UPDATE", "id": "m1", "text": "用户住在杭州"}]}
    server.script = [
        (400, {"error": {"message": "response_format not supported"}}),
        (200, completion("```json\n" + json.dumps(answer) + "\n```")),
    ]
    sleeps: list[float] = []
    ops = KnowledgeMonitor(model=make_model(server), sleep=sleeps.append).run(TURNS, EXISTING)
    assert [(o.op, o.id, o.text) for o in ops] == [("UPDATE", "m1", "用户住在杭州")]
    second = server.requests[1]["body"]
    assert "response_format" not in second and "tools" not in second
    assert "JSON schema" in second["messages"][0]["content"]
    assert sleeps == []
