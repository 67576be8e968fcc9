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
from langmem_plus.model.records import utcnow  # noqa: E402
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

    from langmem_plus.agent.working import WorkingMemory

    class State(TypedDict, total=False):
        working_memory: dict

    def node(state: State) -> State:
        wm = WorkingMemory.new(utcnow(), session_id="t1", user_id="alice")
        wm = wm.record_turn(utcnow(), topic="travel")
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
        assert client.get("/memory/working/t1", headers=BOB).status_code == 404  # alice's


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status"),
    [
        ("get", "/memory/long-term", {}, 422),  # no X-User-Id
        ("get", "/memory/long-term", {"headers": {"X-User-Id": "x" * 257}}, 422),
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


# ---------------------------------------------------------------------------- access (#11.5)
from fastapi.testclient import TestClient  # noqa: E402

from langmem_plus.server.apikeys import KeyStore, RateLimiter  # noqa: E402


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _bearer(token: str, **extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", **extra}


@pytest.fixture
def keyed(mem):
    """A TestClient on an app with one key for john.smith and one admin key."""
    keys = KeyStore(mem.store.db)
    user_key, user_token = keys.create(user_id="john.smith")
    _, admin_token = keys.create(admin=True)
    with TestClient(create_app(mem, rate_limit=None)) as client:
        yield client, keys, user_key, user_token, admin_token


def test_without_keys_the_header_is_trusted_and_dots_are_users(mem):
    with TestClient(create_app(mem), base_url="http://localhost") as client:
        for uid, text in (("john.smith", "PIN 4711"), ("john_smith", "PIN 1234")):
            res = client.post("/memory/long-term", json={"messages": text, "infer": False},
                              headers={"X-User-Id": uid})  # fmt: skip
            assert res.status_code == 201, res.text
        for uid, text in (("john.smith", "PIN 4711"), ("john_smith", "PIN 1234")):
            items = client.get("/memory/long-term", headers={"X-User-Id": uid}).json()["items"]
            assert [i["text"] for i in items] == [text]
        bogus = client.get("/memory/long-term", headers=_bearer("lmp_nope", **ALICE))
        assert bogus.status_code == 401  # a key that is not one is never ignored


def test_a_user_key_acts_as_its_user_only(keyed, mem):
    client, _, _, token, _ = keyed
    mem.add("john.smith's PIN is 4711", "john.smith", infer=False)
    mem.add("john_smith's PIN is 1234", "john_smith", infer=False)
    items = client.get("/memory/long-term", headers=_bearer(token)).json()["items"]
    assert [i["text"] for i in items] == ["john.smith's PIN is 4711"]
    same = client.get("/memory/long-term", headers=_bearer(token, **{"X-User-Id": "john.smith"}))
    assert same.status_code == 200
    for other in ("john_smith", "alice"):
        res = client.get("/memory/long-term", headers=_bearer(token, **{"X-User-Id": other}))
        assert res.status_code == 403 and "one user" in res.json()["detail"]
    added = client.post("/memory/long-term", json={"messages": "new", "infer": False},
                        headers=_bearer(token))  # fmt: skip
    assert added.status_code == 201
    assert [r.text for r in mem.get_all("john.smith").items][-1] == "new"


def test_once_a_key_exists_every_call_needs_one(keyed):
    client, _, _, token, _ = keyed
    for headers in ({}, ALICE, {"Authorization": "Basic YWxpY2U6eA==", **ALICE},
                    _bearer(token[:-1] + "?"), _bearer("lmp_000000000000_" + "A" * 43)):  # fmt: skip
        res = client.get("/memory/long-term", headers=headers)
        assert res.status_code == 401, headers
        assert res.json()["detail"] and res.headers["WWW-Authenticate"] == "Bearer"
    assert client.get("/health").status_code == 200  # liveness stays open


def test_revocation_takes_effect_on_the_next_request(keyed):
    client, keys, user_key, token, _ = keyed
    assert client.get("/memory/profile", headers=_bearer(token)).status_code == 200
    keys.revoke(user_key.key_id)
    res = client.get("/memory/profile", headers=_bearer(token))
    assert res.status_code == 401 and "revoked" in res.json()["detail"]


def test_an_admin_key_names_the_user(keyed, mem):
    client, _, _, _, admin = keyed
    mem.add("alice likes tea", "alice", infer=False)
    res = client.get("/memory/long-term", headers=_bearer(admin, **ALICE))
    assert [i["text"] for i in res.json()["items"]] == ["alice likes tea"]
    missing = client.get("/memory/long-term", headers=_bearer(admin))
    assert missing.status_code == 422 and "admin key" in missing.json()["detail"]


def test_require_keys_without_any_key_refuses_everything(mem):
    with TestClient(create_app(mem, require_keys=True)) as client:
        assert client.get("/memory/long-term", headers=ALICE).status_code == 401


def test_rate_limit_per_key_with_retry_after(mem):
    keys = KeyStore(mem.store.db)
    _, a = keys.create(user_id="alice")
    _, b = keys.create(user_id="bob")
    clock = _Clock()
    app = create_app(mem, rate_limit=RateLimiter(30, burst=2, clock=clock))  # one per 2 s
    with TestClient(app) as client:
        assert [client.get("/memory/profile", headers=_bearer(a)).status_code
                for _ in range(2)] == [200, 200]  # fmt: skip
        limited = client.get("/memory/profile", headers=_bearer(a))
        assert limited.status_code == 429 and limited.headers["Retry-After"] == "2"
        assert "rate limit" in limited.json()["detail"]
        assert client.get("/memory/profile", headers=_bearer(b)).status_code == 200
        clock.now += 2.0
        assert client.get("/memory/profile", headers=_bearer(a)).status_code == 200


def test_body_limit_refuses_before_parsing(mem):
    with TestClient(create_app(mem, max_body_bytes=1000), base_url="http://localhost") as client:
        big = {"messages": "x" * 2000, "infer": False}
        declared = client.post("/memory/long-term", json=big, headers=ALICE)
        assert declared.status_code == 413 and "1000 bytes" in declared.json()["detail"]

        def chunks():  # no Content-Length: counted as it streams
            yield b'{"messages": "'
            for _ in range(5):
                yield b"y" * 400
            yield b'", "infer": false}'

        streamed = client.post("/memory/long-term", content=chunks(),
                               headers={**ALICE, "Content-Type": "application/json"})  # fmt: skip
        assert streamed.status_code == 413
        small = client.post("/memory/long-term", json={"messages": "fits", "infer": False},
                            headers=ALICE)  # fmt: skip
        assert small.status_code == 201
    assert [r.text for r in mem.get_all("alice").items] == ["fits"]  # nothing else written


def test_body_limit_over_real_http(mem):
    """A chunked upload over a socket is cut off at the limit with a 413 JSON answer."""
    app = create_app(mem, max_body_bytes=4096)

    def chunks():
        for _ in range(64):
            yield b"z" * 1024

    with _Server(app) as base, httpx.Client(base_url=base, timeout=10) as client:
        res = client.post("/memory/search", content=chunks(),
                          headers={**ALICE, "Content-Type": "application/json"})  # fmt: skip
        assert res.status_code == 413 and res.json()["detail"]
        ok = client.post("/memory/search", json={"query": "x"}, headers=ALICE)
        assert ok.status_code == 200


def test_openapi_declares_bearer_and_access_errors(mem):
    schema = create_app(mem).openapi()
    schemes = schema["components"]["securitySchemes"]
    assert {"type": "http", "scheme": "bearer"}.items() <= next(iter(schemes.values())).items()
    for path, ops in schema["paths"].items():
        for method, op in ops.items():
            if path == "/health":
                assert "security" not in op
                continue
            assert op["security"], (method, path)
            assert {"401", "403", "413", "429"} <= set(op["responses"]), (method, path)
    retry = schema["paths"]["/memory/search"]["post"]["responses"]["429"]
    assert "Retry-After" in retry["headers"]


# ---------------------------------------------------------------------------- the schema is true
_OPERATION_IDS = {
    ("get", "/health"): "health",
    ("get", "/memory/long-term"): "listMemories",
    ("post", "/memory/long-term"): "addMemories",
    ("delete", "/memory/long-term"): "clearMemories",
    ("get", "/memory/long-term/{memory_id}"): "getMemory",
    ("patch", "/memory/long-term/{memory_id}"): "updateMemory",
    ("delete", "/memory/long-term/{memory_id}"): "deleteMemory",
    ("get", "/memory/long-term/{memory_id}/history"): "getMemoryHistory",
    ("post", "/memory/search"): "searchMemories",
    ("get", "/memory/recall"): "recallConversations",
    ("get", "/memory/profile"): "getProfile",
    ("put", "/memory/profile"): "updateProfile",
    ("get", "/memory/working/{session_id}"): "getWorkingMemory",
}


def _conformance_checks() -> list:
    from schemathesis.checks import (
        content_type_conformance,
        not_a_server_error,
        response_headers_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    return [
        not_a_server_error,
        status_code_conformance,
        content_type_conformance,
        response_schema_conformance,
        response_headers_conformance,
    ]


def _violations(case, response) -> list[str]:
    from schemathesis.core.failures import FailureGroup

    try:
        case.validate_response(response, checks=_conformance_checks())
    except (Exception, FailureGroup) as exc:  # schemathesis raises a group of failures
        return [
            f"{case.method} {case.path} {response.status_code}: {str(e).splitlines()[0]}"
            for e in getattr(exc, "exceptions", [exc])
        ]
    return []


def test_every_operation_has_a_stable_operation_id(mem):
    schema = create_app(mem).openapi()
    found = {
        (method, path): op["operationId"]
        for path, ops in schema["paths"].items()
        for method, op in ops.items()
    }
    assert found == _OPERATION_IDS


def test_declared_404s_and_one_error_shape(mem):
    schema = create_app(mem).openapi()
    paths = schema["paths"]
    for method in ("get", "patch", "delete"):
        assert "404" in paths["/memory/long-term/{memory_id}"][method]["responses"]
    assert "404" in paths["/memory/long-term/{memory_id}/history"]["get"]["responses"]
    assert "404" in paths["/memory/working/{session_id}"]["get"]["responses"]
    assert "HTTPValidationError" not in schema["components"]["schemas"]
    invalid = schema["components"]["schemas"]["ValidationErrorOut"]
    assert invalid["properties"]["detail"]["type"] == "string" and invalid["required"] == ["detail"]
    for ops in paths.values():
        for op in ops.values():
            for status, response in op["responses"].items():
                if status.startswith("4"):
                    ref = response["content"]["application/json"]["schema"]["$ref"]
                    assert ref.rsplit("/", 1)[1] in ("ErrorOut", "ValidationErrorOut")


@pytest.mark.parametrize(
    ("path", "method", "kwargs", "status"),
    [
        ("/memory/long-term/{memory_id}", "GET", {"path_parameters": {"memory_id": "nope"}}, 404),
        ("/memory/long-term/{memory_id}/history", "GET",
         {"path_parameters": {"memory_id": "nope"}}, 404),
        ("/memory/long-term/{memory_id}", "PATCH",
         {"path_parameters": {"memory_id": "nope"}, "body": {"text": "x"}}, 404),
        ("/memory/long-term/{memory_id}", "DELETE", {"path_parameters": {"memory_id": "nope"}}, 404),
        ("/memory/working/{session_id}", "GET", {"path_parameters": {"session_id": "s"}}, 404),
        ("/memory/long-term", "GET", {"query": {"limit": 0}}, 422),  # request validation
        ("/memory/long-term", "GET", {"headers": {}}, 422),  # no X-User-Id: the app's own 422
        ("/memory/search", "POST", {"body": {"query": "x", "time_range": "soonish"}}, 422),
        ("/memory/search", "POST", {"body": {"query": "x", "limit": 10, "offset": 995}}, 422),
        ("/memory/long-term", "POST",
         {"body": {"messages": "x", "metadata": {"confidence": 9}}}, 422),
        ("/memory/search", "POST", {"body": {"query": "x", "offset": 1}}, 200),
    ],
)  # fmt: skip
def test_each_answer_the_app_sends_matches_the_schema(mem, path, method, kwargs, status):
    schemathesis = pytest.importorskip("schemathesis")
    app = create_app(mem, rate_limit=None, allowed_hosts=["testserver"])
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    headers = kwargs.pop("headers", ALICE)
    case = schema[path][method].Case(headers=headers, **kwargs)
    response = case.call()
    assert response.status_code == status, response.text
    assert not _violations(case, response)
    assert isinstance(response.json().get("detail", ""), str)


def test_access_errors_match_the_schema(mem):
    schemathesis = pytest.importorskip("schemathesis")
    keys = KeyStore(mem.store.db)
    _, token = keys.create(user_id="alice")
    clock = _Clock()
    app = create_app(mem, rate_limit=RateLimiter(30, burst=1, clock=clock), max_body_bytes=200)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, headers=_bearer(token))
    clock.now += 10  # loading the schema took the burst
    profile = schema["/memory/profile"]["GET"]
    statuses = []
    for headers in ({}, _bearer(token), _bearer(token), "later", _bearer(token, **BOB)):
        if headers == "later":  # the bucket refills
            clock.now += 10
            continue
        case = profile.Case(headers=headers)
        response = case.call()
        statuses.append(response.status_code)
        assert not _violations(case, response)
    assert statuses == [401, 200, 429, 403]
    clock.now += 10
    big = schema["/memory/long-term"]["POST"].Case(
        headers=_bearer(token), body={"messages": "x" * 500, "infer": False}
    )
    response = big.call()
    assert response.status_code == 413 and not _violations(big, response)


def test_search_offset_pages_through_the_ranking(mem):
    for text in ("tea in the morning", "tea after lunch", "tea at night"):
        mem.add(text, "alice", infer=False)
    with TestClient(create_app(mem), base_url="http://localhost") as client:
        first = client.post("/memory/search", json={"query": "tea", "limit": 3}, headers=ALICE)
        ranked = [h["id"] for h in first.json()["results"]]
        assert len(ranked) == 3
        for offset in range(4):
            page = client.post(
                "/memory/search", json={"query": "tea", "limit": 1, "offset": offset},
                headers=ALICE,
            )  # fmt: skip
            assert [h["id"] for h in page.json()["results"]] == ranked[offset : offset + 1]
        too_far = client.post(
            "/memory/search", json={"query": "tea", "limit": 5, "offset": 999}, headers=ALICE
        )
        assert too_far.status_code == 422 and "offset + limit" in too_far.json()["detail"]


def test_schemathesis_every_response_conforms(mem):
    """Generated requests (valid and invalid) for every operation: each response's status,
    content type, headers and body are the ones the schema declares; never a 5xx."""
    schemathesis = pytest.importorskip("schemathesis")
    from hypothesis import HealthCheck, given, settings
    from hypothesis.errors import Unsatisfiable

    mem.add("a memory about Python", "alice", infer=False)
    app = create_app(mem, rate_limit=None, allowed_hosts=["testserver"])
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    failures: list[str] = []
    calls: list[int] = []
    for result in schema.get_all_operations():
        op = result.ok()
        for mode in (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE):

            @settings(
                max_examples=6, deadline=None, database=None, derandomize=True,
                suppress_health_check=list(HealthCheck),
            )  # fmt: skip
            @given(case=op.as_strategy(generation_mode=mode))
            def check(case) -> None:
                response = case.call()
                calls.append(response.status_code)
                failures.extend(_violations(case, response))

            try:
                check()
            except Unsatisfiable:  # no way to make a request invalid (e.g. /health)
                continue
        if op.method.upper() == "GET" and op.path == "/memory/long-term/{memory_id}":
            # a 404 on purpose (generated ids may all exist or all be refused as invalid)
            missing = op.Case(path_parameters={"memory_id": "no-such-memory"}, headers=ALICE)
            response = missing.call()
            calls.append(response.status_code)
            failures.extend(_violations(missing, response))
    assert not failures, sorted(set(failures))
    assert len(calls) >= 60 and {200, 404, 422} <= set(calls)


def test_a_rebound_host_name_is_refused_over_real_http(mem):
    """DNS rebinding: a page on attacker.example rebinds its name to 127.0.0.1, so the browser
    connects to this server but sends `Host: attacker.example`. A keyless server refuses it."""
    with _Server(create_app(mem)) as base, httpx.Client(base_url=base, timeout=10) as client:
        port = base.rsplit(":", 1)[1]
        rebound = {**ALICE, "Host": f"attacker.example:{port}"}
        assert client.get("/memory/long-term", headers=rebound).status_code == 400
        planted = client.post("/memory/long-term", headers=rebound,
                              json={"messages": "planted", "infer": False})  # fmt: skip
        assert planted.status_code == 400
        assert client.get("/openapi.json", headers=rebound).status_code == 400
        assert client.get("/memory/long-term", headers=ALICE).status_code == 200  # 127.0.0.1
    assert mem.get_all("alice").items == []
