"""The knowledge monitor against a local OpenAI-compatible HTTP server (127.0.0.1 only):
request shape, parsed ops, malformed answers and HTTP 500 retries."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from _openai_server import LOOPBACK, FakeOpenAI, chat_openai, completion, tool_completion

from langmem_plus.processors import KnowledgeMonitor

pytestmark = LOOPBACK


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as srv:
        yield srv


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
    ops = KnowledgeMonitor(model=chat_openai(server)).run(TURNS, EXISTING)
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
    msg = tool_completion("OpsOut", {"ops": [{"op": "DELETE", "id": "m1"}]})
    server.script = [(200, msg)]
    ops = KnowledgeMonitor(model=chat_openai(server)).run(TURNS, EXISTING)
    assert [(o.op, o.id) for o in ops] == [("DELETE", "m1")]


def test_malformed_answer_falls_back_to_rules(server: FakeOpenAI) -> None:
    server.script = [(200, completion("Sorry, I can't produce JSON today."))]
    sleeps: list[float] = []
    ops = KnowledgeMonitor(model=chat_openai(server), sleep=sleeps.append).run(TURNS, EXISTING)
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
    ops = KnowledgeMonitor(model=chat_openai(server), sleep=sleeps.append).run(TURNS, EXISTING)
    assert [o.op for o in ops] == ["SKIP"]
    assert sleeps == [1.0, 2.0]
    assert len(server.requests) == 3


def test_http_500_forever_falls_back_to_rules(server: FakeOpenAI) -> None:
    server.script = [(500, {"error": {"message": "down"}})] * 4
    sleeps: list[float] = []
    ops = KnowledgeMonitor(model=chat_openai(server), sleep=sleeps.append).run(TURNS, EXISTING)
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
    ops = KnowledgeMonitor(model=chat_openai(server), sleep=sleeps.append).run(TURNS, EXISTING)
    assert [(o.op, o.id, o.text) for o in ops] == [("UPDATE", "m1", "用户住在杭州")]
    second = server.requests[1]["body"]
    assert "response_format" not in second and "tools" not in second
    assert "JSON schema" in second["messages"][0]["content"]
    assert sleeps == []
