"""REST API over real HTTP (uvicorn on a loopback port) plus schemathesis: never a 500."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")

from langmem_plus.memory import Memory  # noqa: E402
from langmem_plus.records import utcnow  # noqa: E402
from langmem_plus.server import create_app  # noqa: E402

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]

ALICE = {"X-User-Id": "alice"}
BOB = {"X-User-Id": "bob"}


class _Server:
    """uvicorn in a background thread on 127.0.0.1, port chosen by the OS."""

    def __init__(self, app) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def mem(hash_embeddings) -> Iterator[Memory]:
    m = Memory(embeddings=hash_embeddings)
    yield m
    m.close()


@pytest.fixture
def api(mem) -> Iterator[httpx.Client]:
    with _Server(create_app(mem)) as base, httpx.Client(base_url=base, timeout=10) as client:
        yield client


def test_long_term_crud_and_paging(api):
    created = api.post("/memory/long-term", json={"messages": "I prefer dark mode", "infer": False},
                       headers=ALICE)  # fmt: skip
    assert created.status_code == 201
    (mid,) = created.json()["ids"]
    for i in range(4):
        api.post("/memory/long-term", json={"messages": f"fact {i}", "infer": False}, headers=ALICE)
    page = api.get("/memory/long-term", params={"limit": 2, "offset": 0}, headers=ALICE).json()
    assert page["total"] == 5 and len(page["items"]) == 2 and page["next_offset"] == 2
    assert page["items"][0]["id"] == mid
    assert api.get(f"/memory/long-term/{mid}", headers=ALICE).json()["text"] == "I prefer dark mode"
    assert api.get(f"/memory/long-term/{mid}", headers=BOB).status_code == 404  # scoped
    patched = api.patch(f"/memory/long-term/{mid}", json={"text": "I prefer light mode"},
                        headers=ALICE)  # fmt: skip
    assert patched.status_code == 200 and patched.json()["text"] == "I prefer light mode"
    history = api.get(f"/memory/long-term/{mid}/history", headers=ALICE).json()
    assert [h["event"] for h in history] == ["ADD", "UPDATE"]
    assert api.delete(f"/memory/long-term/{mid}", headers=ALICE).json() == {
        "deleted": True,
        "id": mid,
    }
    assert api.get(f"/memory/long-term/{mid}", headers=ALICE).status_code == 404
    assert api.delete(f"/memory/long-term/{mid}", headers=ALICE).status_code == 404
    assert api.delete("/memory/long-term", headers=ALICE).json()["memories_deleted"] == 4
    assert api.get("/memory/long-term", headers=ALICE).json()["total"] == 0


def test_add_with_inference_and_search(api):
    out = api.post(
        "/memory/long-term",
        json={"messages": [{"role": "user", "content": "I prefer Python for data work"}]},
        headers=ALICE,
    ).json()
    assert out["ids"] and "Python" in out["memories"][0]["text"]
    res = api.post("/memory/search", json={"query": "I like Python", "limit": 3}, headers=ALICE)
    hit = res.json()["results"][0]
    assert {"keyword", "category_boost", "recency", "frequency", "confidence"} <= set(
        hit["components"]
    )
    none = api.post("/memory/search", json={"query": "Python", "time_range": "yesterday"},
                    headers=ALICE)  # fmt: skip
    assert none.json() == {"results": []}
    ranged = api.post(
        "/memory/search",
        json={
            "query": "Python",
            "time_range": {"start": (utcnow() - timedelta(hours=1)).isoformat()},
        },
        headers=ALICE,
    )
    assert ranged.json()["results"]
    assert api.post("/memory/search", json={"query": "Python"}, headers=BOB).json() == {
        "results": []
    }


def test_profile_and_recall(api, mem):
    assert api.get("/memory/profile", headers=ALICE).json()["reply_style"] == ""
    put = api.put("/memory/profile", json={"reply_style": "brief"}, headers=ALICE).json()
    assert put["reply_style"] == "brief" and put["edited_by_user"] == ["reply_style"]
    assert api.get("/memory/profile", headers=ALICE).json()["reply_style"] == "brief"
    mem.add_turn("alice", "s1", "user", "processPayment is slow")
    rec = api.get("/memory/recall", params={"query": "processPayment"}, headers=ALICE).json()
    assert rec["results"][0]["content"] == "processPayment is slow"
    assert set(rec) == {"results", "total_searched", "latency_ms"}


def test_working_memory_from_conversation_log(api, mem):
    assert api.get("/memory/working/s1", headers=ALICE).status_code == 404
    mem.add_turn("alice", "s1", "user", "hi")
    mem.add_turn("alice", "s1", "assistant", "hello")
    wm = api.get("/memory/working/s1", headers=ALICE).json()
    assert wm["session_id"] == "s1" and wm["turn_count"] == 1 and wm["source"] == "conversation_log"
    assert api.get("/memory/working/s1", headers=BOB).status_code == 404
    mem.add_turn("alice", "old", "user", "long ago", created_at=utcnow() - timedelta(hours=2))
    assert api.get("/memory/working/old", headers=ALICE).status_code == 404  # expired


def test_working_memory_from_checkpointer(mem):
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from typing_extensions import TypedDict

    from langmem_plus.working import WorkingMemory

    class State(TypedDict, total=False):
        working_memory: dict

    def node(state: State) -> State:
        wm = WorkingMemory.new(utcnow(), session_id="t1").record_turn(utcnow(), topic="travel")
        return {"working_memory": wm.to_state()}

    saver = InMemorySaver()
    graph = StateGraph(State).add_node("n", node).add_edge(START, "n").add_edge("n", END)
    graph.compile(checkpointer=saver).invoke({}, {"configurable": {"thread_id": "t1"}})
    app = create_app(mem, checkpointer=saver)
    with _Server(app) as base, httpx.Client(base_url=base) as client:
        wm = client.get("/memory/working/t1", headers=ALICE).json()
        assert wm["current_topic"] == "travel" and wm["turn_count"] == 1
        assert wm["source"] == "checkpointer"
        assert client.get("/memory/working/unknown", headers=ALICE).status_code == 404


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status"),
    [
        ("get", "/memory/long-term", {}, 422),  # no X-User-Id
        ("get", "/memory/long-term", {"headers": {"X-User-Id": "a.b"}}, 422),
        ("get", "/memory/long-term", {"headers": ALICE, "params": {"limit": 0}}, 422),
        ("get", "/memory/long-term", {"headers": ALICE, "params": {"offset": -1}}, 422),
        ("post", "/memory/long-term", {"headers": ALICE, "json": {"messages": ""}}, 422),
        ("post", "/memory/long-term", {"headers": ALICE, "json": {"messages": "x", "bogus": 1}}, 422),
        ("post", "/memory/long-term",
         {"headers": ALICE, "json": {"messages": "x", "metadata": {"confidence": 9}}}, 422),
        ("post", "/memory/search", {"headers": ALICE, "json": {"query": "x", "time_range": "soonish"}}, 422),
        ("post", "/memory/search", {"headers": ALICE, "json": {"query": "x", "filters": {"$bad": 1}}}, 422),
        ("patch", "/memory/long-term/missing", {"headers": ALICE, "json": {"text": "y"}}, 404),
        ("patch", "/memory/long-term/missing", {"headers": ALICE, "json": {}}, 404),
        ("put", "/memory/profile", {"headers": ALICE, "json": {"mood": "happy"}}, 422),
    ],
)  # fmt: skip
def test_bad_input_is_4xx_with_detail(api, method, path, kwargs, status):
    res = api.request(method.upper(), path, **kwargs)
    assert res.status_code == status, res.text
    assert res.json()["detail"]


def test_openapi_schema_is_served(api):
    schema = api.get("/openapi.json").json()
    paths = schema["paths"]
    for p in ("/memory/long-term", "/memory/long-term/{memory_id}", "/memory/working/{session_id}",
              "/memory/search", "/memory/profile"):  # fmt: skip
        assert p in paths
    assert "X-User-Id" in str(paths["/memory/long-term"]["get"]["parameters"])


def test_schemathesis_finds_no_server_errors(mem):
    """Generated requests against every operation (positive and negative): no 5xx."""
    schemathesis = pytest.importorskip("schemathesis")
    from hypothesis import HealthCheck, given, settings
    from hypothesis.errors import Unsatisfiable

    mem.add("seed memory about Python", "alice", infer=False)
    app = create_app(mem)
    schema = schemathesis.openapi.from_dict(app.openapi())
    failures: list[str] = []
    calls: list[int] = []
    with _Server(app) as base:
        for result in schema.get_all_operations():
            op = result.ok()
            for mode in (
                schemathesis.GenerationMode.POSITIVE,
                schemathesis.GenerationMode.NEGATIVE,
            ):

                @settings(
                    max_examples=4, deadline=None, database=None, derandomize=True,
                    suppress_health_check=list(HealthCheck),
                )  # fmt: skip
                @given(case=op.as_strategy(generation_mode=mode))
                def check(case) -> None:
                    response = case.call(base_url=base, timeout=10)
                    calls.append(response.status_code)
                    if response.status_code >= 500:
                        failures.append(
                            f"{case.method} {case.formatted_path}: {response.text[:200]}"
                        )

                try:
                    check()
                except Unsatisfiable:  # no way to make a request invalid (e.g. /health)
                    continue
    assert not failures, failures
    assert len(calls) >= 40  # every operation was exercised
