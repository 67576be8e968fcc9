"""The engine's one model call (`FactDeriver`) against a local OpenAI-compatible HTTP server
(127.0.0.1 only): request shape, parsed facts, malformed answers and HTTP 500 retries."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from _openai_server import LOOPBACK, FakeOpenAI, chat_openai, completion, tool_completion

from langmem_plus.processors import FactDeriver

pytestmark = LOOPBACK


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as srv:
        yield srv


TURNS = [{"role": "user", "text": "我搬到杭州了"}]
EXISTING = [{"id": "f1", "text": "用户住在上海", "slot": "home.location"}]
ANSWER = {
    "facts": [
        {"text": "用户住在杭州", "slot": "home.location", "value": "杭州", "supersedes": ["f1"]}
    ]
}


def _brief(out: object) -> list[tuple[str, list[str]]]:
    return [(f.text, f.supersedes) for f in out.facts]  # type: ignore[attr-defined]


def test_request_shape_and_facts_parse(server: FakeOpenAI) -> None:
    server.script = [(200, completion(json.dumps(ANSWER, ensure_ascii=False)))]
    out = FactDeriver(model=chat_openai(server)).run(TURNS, EXISTING)
    assert _brief(out) == [("用户住在杭州", ["f1"])] and not out.fell_back
    req = server.requests[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["auth"] == "Bearer test"
    body = req["body"]
    assert body["model"] == "test-model"
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "用户住在上海" in body["messages"][1]["content"]
    assert "tools" in body or "response_format" in body
    if "response_format" in body:
        schema = body["response_format"]["json_schema"]["schema"]
        assert "facts" in schema["properties"]
    else:
        assert body["tools"][0]["function"]["name"] == "FactsOut"


def test_tool_call_answer_parses(server: FakeOpenAI) -> None:
    server.script = [(200, tool_completion("FactsOut", ANSWER))]
    out = FactDeriver(model=chat_openai(server)).run(TURNS, EXISTING)
    assert _brief(out) == [("用户住在杭州", ["f1"])]


def test_malformed_answer_falls_back_to_rules(server: FakeOpenAI) -> None:
    server.script = [(200, completion("Sorry, I can't produce JSON today."))]
    sleeps: list[float] = []
    out = FactDeriver(model=chat_openai(server), sleep=sleeps.append).run(TURNS, EXISTING)
    assert _brief(out) == [("用户住在杭州", [])] and out.fell_back
    assert len(server.requests) == 1 and sleeps == []  # malformed answers are not retried


def test_http_500_is_retried_with_backoff(server: FakeOpenAI) -> None:
    server.script = [
        (500, {"error": {"message": "boom"}}),
        (500, {"error": {"message": "boom"}}),
        (200, completion(json.dumps(ANSWER))),
    ]
    sleeps: list[float] = []
    out = FactDeriver(model=chat_openai(server), sleep=sleeps.append).run(TURNS, EXISTING)
    assert _brief(out) == [("用户住在杭州", ["f1"])]
    assert sleeps == [1.0, 2.0]
    assert len(server.requests) == 3


def test_http_500_forever_falls_back_to_rules(server: FakeOpenAI) -> None:
    server.script = [(500, {"error": {"message": "down"}})] * 4
    sleeps: list[float] = []
    out = FactDeriver(model=chat_openai(server), sleep=sleeps.append).run(TURNS, EXISTING)
    assert sleeps == [1.0, 2.0, 4.0]
    assert len(server.requests) == 4
    assert _brief(out) == [("用户住在杭州", [])] and out.fell_back


def test_http_400_on_response_format_switches_to_plain_json(server: FakeOpenAI) -> None:
    server.script = [
        (400, {"error": {"message": "response_format not supported"}}),
        (200, completion("```json\n" + json.dumps(ANSWER) + "\n```")),
    ]
    sleeps: list[float] = []
    out = FactDeriver(model=chat_openai(server), sleep=sleeps.append).run(TURNS, EXISTING)
    assert _brief(out) == [("用户住在杭州", ["f1"])]
    second = server.requests[1]["body"]
    assert "response_format" not in second and "tools" not in second
    assert "JSON schema" in second["messages"][0]["content"]
    assert sleeps == []
