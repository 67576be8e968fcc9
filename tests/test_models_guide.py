"""Each model setup docs/guides/models.md documents, against the local fake server (no
network): OpenAI by string and by object, a local OpenAI-compatible server (Ollama, vLLM)
through `from_config` and the CLI's options, Anthropic by string against an
Anthropic-compatible endpoint; what a turn cost, and what happens when the model fails."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

import pytest
from _openai_server import (
    LOOPBACK,
    FakeOpenAI,
    anthropic_tool_use,
    tool_completion,
)
from langchain_openai import ChatOpenAI

from langmem_plus import Memory, MemoryConfig
from langmem_plus.cli.options import chat_model
from langmem_plus.errors import ValidationError

pytestmark = LOOPBACK

EXCHANGE = [
    {"role": "user", "content": "I moved to Porto and I work as a nurse."},
    {"role": "assistant", "content": "Noted!"},
]
FACT = {"text": "The user lives in Porto", "kind": "fact", "source_turns": [0]}
FAST = MemoryConfig(llm={"backoff_base_s": 0.0})  # type: ignore[arg-type]


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as srv:
        yield srv


def _facts(mem: Memory) -> list[str]:
    return [r.text for r in mem.get_all("u").items if r.kind == "semantic"]


def _derives(server: FakeOpenAI, mem: Memory) -> None:
    server.script = [(200, tool_completion("FactsOut", {"facts": [FACT]}))]
    mem.add(EXCHANGE, user_id="u")
    assert "The user lives in Porto" in _facts(mem)
    assert mem.last_cost is not None and mem.last_cost.calls == len(server.requests) == 1
    assert mem.last_cost.prompt_tokens == 321  # the server's own usage figures


def test_openai_by_string_reads_the_environment(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    with Memory(model="openai:test-model", embeddings=False) as mem:
        _derives(server, mem)
    assert server.requests[0]["auth"] == "Bearer sk-from-env"
    assert server.bodies[0]["model"] == "test-model"


def test_openai_object_as_the_guide_builds_it(server):
    model = ChatOpenAI(
        model="test-model", base_url=server.base_url, api_key="sk-x", timeout=20, max_retries=0
    )
    with Memory(model=model, embeddings=False) as mem:
        _derives(server, mem)


@pytest.mark.parametrize(
    ("provider", "key", "url"),
    [("ollama", "ollama_base_url", "root"), ("vllm", "vllm_base_url", "v1")],
)
def test_a_local_server_through_from_config(server, provider, key, url):
    base = server.root_url if url == "root" else server.base_url
    cfg = {"llm": {"provider": provider, "config": {"model": "llama3.1", key: base}}}
    with Memory.from_config({**cfg, "embeddings": False}) as mem:
        assert mem.model.max_retries == 0 and mem.model.request_timeout == 30.0
        _derives(server, mem)
    assert server.requests[0]["path"] == "/v1/chat/completions"
    assert server.bodies[0]["model"] == "llama3.1"


def test_from_config_honours_openai_base_url_and_api_key(server):
    cfg = {
        "embeddings": False,
        "config": {"llm": {"request_timeout_s": 12.0}},
        "llm": {
            "provider": "openai",
            "config": {
                "model": "test-model",
                "openai_base_url": server.base_url,
                "api_key": "sk-cfg",
                "temperature": 0.0,
            },
        },
    }
    with Memory.from_config(cfg) as mem:
        assert mem.model.request_timeout == 12.0
        _derives(server, mem)
    assert server.requests[0]["auth"] == "Bearer sk-cfg"
    assert server.bodies[0]["temperature"] == 0.0


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ({"model": "m", "ollama_base_url": "http://x"}, "do not apply to provider 'openai'"),
        ({"model": "m", "http_client_proxies": "http://p"}, "not supported"),
        ({"model": "m", "vision_details": "auto"}, "not supported"),
    ],
)
def test_from_config_refuses_what_it_would_drop(config, says):
    with pytest.raises(ValidationError, match=says):
        Memory.from_config({"embeddings": False, "llm": {"provider": "openai", "config": config}})


def test_the_cli_builds_an_openai_compatible_model(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-cli")
    model = chat_model(argparse.Namespace(model="test-model", base_url=server.base_url))
    assert model.max_retries == 0 and model.request_timeout == 30.0
    with Memory(model=model, embeddings=False) as mem:
        _derives(server, mem)
    assert server.requests[0]["auth"] == "Bearer sk-cli"


def test_anthropic_by_string_against_a_compatible_endpoint(server, monkeypatch):
    pytest.importorskip("langchain_anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    monkeypatch.setenv("ANTHROPIC_API_URL", server.root_url)
    server.script = [(200, anthropic_tool_use("FactsOut", {"facts": [FACT]}))]
    with Memory(model="anthropic:claude-test", embeddings=False) as mem:
        mem.add(EXCHANGE, user_id="u")
        assert "The user lives in Porto" in _facts(mem)
        assert mem.last_cost is not None and mem.last_cost.calls == 1
        assert mem.last_cost.prompt_tokens == 11
    assert server.requests[0]["path"] == "/v1/messages"
    sent = server.requests[0]
    assert "sk-ant" in (sent["api_key"] or "") + (sent["auth"] or "")  # x-api-key or bearer


def test_when_the_model_fails_the_rules_keep_the_turn(server):
    """HTTP 500 on every request: four requests (one and three retries), all counted, and the
    exchange is still kept, with the facts the rules find."""
    model = ChatOpenAI(model="test-model", base_url=server.base_url, api_key="k")
    costs: list[Any] = []
    with Memory(model=model, config=FAST, embeddings=False, on_cost=costs.append) as mem:
        mem.add(EXCHANGE, user_id="u")
        kinds = [r.kind for r in mem.get_all("u").items]
    assert "episodic" in kinds  # the exchange, verbatim
    assert len(server.requests) == costs[0].calls == 4
