"""The model path as a deployment meets it: one retry policy (every request counted), a
per-call deadline, a bounded post-turn queue, a `close` that returns in bounded time and
says what it left, and exactly which post-turn steps call the model."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from _agent_fakes import Scripted, scripted
from _openai_server import HANG, FakeOpenAI, completion, loopback
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel

from langmem_plus import HybridStore, MemoryConfig, MemoryMiddleware
from langmem_plus.agent.postturn import PostTurnJob
from langmem_plus.agent.worker import CloseReport, PostTurnWorker
from langmem_plus.errors import ValidationError
from langmem_plus.processors.model.structured import (
    StructuredLLM,
    build_model,
    client_retries,
    without_client_retries,
)


class Out(BaseModel):
    answer: str


def _cfg(**llm: Any) -> MemoryConfig:
    return MemoryConfig(llm={"backoff_base_s": 0.0, **llm})  # type: ignore[arg-type]


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as srv:
        yield srv


# ---------------------------------------------------------------------------- retries
@loopback
def test_http_500_sends_as_many_requests_as_the_cost_record_counts(server):
    """A user's ChatOpenAI (its client retries twice by default) used to send 12 requests
    per call while the record said 4: now the library alone retries."""
    model = ChatOpenAI(model="test-model", base_url=server.base_url, api_key="test")
    assert client_retries(model) == 2
    trace = StructuredLLM(model, _cfg()).call_traced(Out, "sys", "user")
    assert trace.value is None and "500" in (trace.error or "")
    assert len(server.requests) == trace.calls == 4  # 1 + llm.max_retries
    assert model.max_retries is None  # the user's own model is left as it was


@loopback
def test_models_the_library_builds_do_not_retry_and_time_out(server):
    model = build_model(
        "openai:test-model", _cfg(request_timeout_s=7.0), base_url=server.base_url, api_key="k"
    )
    assert model.max_retries == 0 and model.request_timeout == 7.0
    server.script = [(500, {}), (200, completion('{"answer": "ok"}'))]
    trace = StructuredLLM(model, _cfg()).call_traced(Out, "sys", "user")
    assert trace.value == Out(answer="ok")
    assert len(server.requests) == trace.calls == 2


@loopback  # langchain-openai probes socket options when it builds its client
def test_a_passed_openai_model_gets_a_timeout_only_when_it_has_none():
    base = dict(model="m", base_url="http://127.0.0.1:9/v1", api_key="k")
    none = without_client_retries(ChatOpenAI(**base), 5.0)
    assert client_retries(none) == 0 and none.request_timeout == 5.0
    assert none.root_client.timeout == 5.0
    own = without_client_retries(ChatOpenAI(**base, timeout=2.0, max_retries=4), 5.0)
    assert client_retries(own) == 0 and own.request_timeout == 2.0
    kept = ChatOpenAI(**base, timeout=2.0, max_retries=0)
    assert without_client_retries(kept, 5.0) is kept


class SelfRetrying(Scripted):
    """A model whose (imagined) client retries by itself and offers no way to turn it off."""

    max_retries: int = 2


def test_a_model_that_retries_itself_is_not_retried_on_top(caplog):
    model = SelfRetrying(script=[TimeoutError("slow"), '{"answer": "late"}'])
    with caplog.at_level(logging.WARNING, logger="langmem_plus.processors"):
        llm = StructuredLLM(model, _cfg())
    assert llm.client_retries == 2 and llm.max_retries == 0
    assert "max_retries=0" in caplog.text
    trace = llm.call_traced(Out, "sys", "user")
    assert trace.value is None and model.calls == trace.calls == 1


# ---------------------------------------------------------------------------- deadline
def test_no_retry_starts_past_the_call_deadline():
    now = [0.0]

    def sleep(s: float) -> None:
        now[0] += s

    model = Scripted(script=[TimeoutError("hung")])
    llm = StructuredLLM(
        model,
        _cfg(backoff_base_s=1.0, max_retries=5, call_deadline_s=2.5),
        sleep=sleep,
        clock=lambda: now[0],
    )
    trace = llm.call_traced(Out, "sys", "user")
    # attempt 1, wait 1 s, attempt 2; the next wait (2 s) would end past 2.5 s
    assert trace.value is None and trace.calls == model.calls == 2
    assert "deadline" in (trace.error or "")


class Hanging(Scripted):
    """Never answers an async request."""

    async def _agenerate(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        await asyncio.Event().wait()


def test_an_async_call_is_cut_at_the_deadline():
    model = Hanging(script=["unused"])
    llm = StructuredLLM(model, _cfg(call_deadline_s=0.05, max_retries=3))
    trace = asyncio.run(llm.acall_traced(Out, "sys", "user"))
    assert trace.value is None and "Timeout" in (trace.error or "")
    assert trace.calls == model.calls == 1  # the deadline left no room for a retry


@loopback
def test_a_hung_endpoint_costs_one_request_per_attempt(server):
    server.fallback = HANG
    model = ChatOpenAI(model="test-model", base_url=server.base_url, api_key="k", timeout=0.2)
    trace = StructuredLLM(model, _cfg(max_retries=1)).call_traced(Out, "sys", "user")
    assert trace.value is None and "Timeout" in (trace.error or "")
    assert len(server.requests) == trace.calls == 2  # was 6: 2 attempts x the client's 3


# ---------------------------------------------------------------------------- the worker
def _job(user: str, session: str) -> PostTurnJob:
    return PostTurnJob(
        store=None,  # type: ignore[arg-type]  # the worker never reads it
        user_id=user,
        namespace=("memories", user),
        session_id=session,
        turn_count=1,
    )


def test_close_returns_at_its_timeout_and_names_what_it_left():
    started, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def run(job: PostTurnJob) -> None:
        started.set()
        ran.append(job.session_id)
        release.wait()

    worker = PostTurnWorker(run, debounce_s=0.0)
    worker.submit("t1", _job("u1", "s1"))
    assert started.wait(5)
    worker.submit("t2", _job("u2", "s2"))
    report = worker.close(timeout=0.05)
    assert isinstance(report, CloseReport) and not report
    assert report.running == (("u1", "s1"),)
    assert report.dropped == (("u2", "s2"),)
    release.set()
    worker.close(timeout=5)
    assert ran == ["s1"]  # the dropped job never ran
    with pytest.raises(ValidationError):
        worker.submit("t3", _job("u3", "s3"))


def test_the_queue_is_bounded():
    release = threading.Event()
    worker = PostTurnWorker(lambda job: release.wait(), debounce_s=60.0, max_pending=2)
    worker.submit("t1", _job("u1", "s1"))
    worker.submit("t2", _job("u2", "s2"))
    worker.submit("t1", _job("u1", "s1"))  # debounced into the waiting job: no new slot
    worker.submit("t3", _job("u3", "s3"))
    assert worker.dropped == [("u3", "s3")]
    assert worker.pending == 2
    release.set()
    assert worker.close(timeout=5)
    with pytest.raises(ValidationError):
        PostTurnWorker(lambda job: None, max_pending=0)


def test_middleware_close_reports_and_is_true_when_all_ran():
    store = HybridStore(index=False)
    mw = MemoryMiddleware(debounce_s=0.0)
    agent = create_agent(scripted([AIMessage("hello")]), middleware=[mw], store=store)
    agent.invoke(
        {"messages": [{"role": "user", "content": "I live in Lisbon"}]},
        {"configurable": {"thread_id": "t", "user_id": "u"}},
    )
    report = mw.close()
    assert report and report.dropped == () and report.running == ()
    store.close()


# ---------------------------------------------------------------------------- which steps
MODEL_STEPS = {"knowledge", "rolling", "session", "archive"}
RULE_STEPS = {"profile", "reconsolidate", "recall", "context"}


def test_only_facts_and_summaries_call_the_model():
    """What docs/guides/models.md says: per exchange one call (facts); a session title once;
    a rolling summary every `window.summarize_every` exchanges once `summarize_after` are
    reached; turn analysis, profile and reconsolidation stay rule-based."""
    counting = Scripted(script=["{}"])
    costs: list[Any] = []
    store = HybridStore(index=False)
    mw = MemoryMiddleware(model=counting, background=False, on_cost=costs.append)
    agent = create_agent(
        scripted([AIMessage(f"noted {i}") for i in range(12)]),
        middleware=[mw],
        store=store,
        checkpointer=InMemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "t", "user_id": "u"}}
    lines = ["I live in Lisbon", "I prefer short answers", "my cat is Mochi"] * 4
    for text in lines:
        agent.invoke({"messages": [{"role": "user", "content": text}]}, cfg)
    by_stage: dict[str, int] = {}
    for cost in costs:
        for stage in cost.stages:
            by_stage[stage.stage] = by_stage.get(stage.stage, 0) + stage.calls
    assert counting.calls == sum(by_stage.values())  # nothing calls it outside a stage
    assert {s for s, n in by_stage.items() if n} <= MODEL_STEPS
    assert all(by_stage.get(s, 0) == 0 for s in RULE_STEPS)
    assert by_stage["knowledge"] == len(lines)  # one call per exchange
    assert by_stage["session"] == 1  # the title, once
    assert by_stage["rolling"] >= 1  # past 10 exchanges
    store.close()
