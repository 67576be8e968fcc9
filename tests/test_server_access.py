"""REST access beyond the key (#32 items 5, 8, 9): the Host a keyless server answers to, the
schema and docs behind the key, and the work one request and one key may ask for."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from langmem_plus.errors import ValidationError
from langmem_plus.memory import Memory
from langmem_plus.server import create_app
from langmem_plus.server.apikeys import KeyStore, RateLimiter
from langmem_plus.server.auth import host_allowed
from langmem_plus.server.limits import WorkLimits

ALICE = {"X-User-Id": "alice"}


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def mem() -> Iterator[Memory]:
    m = Memory(embeddings=False)
    yield m
    m.close()


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# ------------------------------------------------------------------ item 5: the Host header
@pytest.mark.parametrize(
    "host",
    ["evil.example", "evil.example:8000", "localhost.evil.example", "127.0.0.1.nip.io",
     "10.0.0.5", "0.0.0.0", ""],
)  # fmt: skip
def test_a_keyless_server_refuses_a_host_that_is_not_loopback(mem, host) -> None:
    """What a page that rebinds its own name to 127.0.0.1 sends: its own name."""
    client = TestClient(create_app(mem))
    headers = {**ALICE, "Host": host}
    for method, path, body in (
        ("GET", "/memory/long-term", None),
        ("POST", "/memory/long-term", {"messages": "planted", "infer": False}),
        ("POST", "/memory/search", {"query": "x"}),
        ("GET", "/memory/profile", None),
        ("GET", "/openapi.json", None),
        ("GET", "/docs", None),
    ):
        res = client.request(method, path, headers=headers, json=body)
        assert res.status_code == 400, (method, path, res.text)
        assert "loopback Host" in res.json()["detail"]
    assert mem.get_all("alice").items == []
    assert client.get("/health", headers={"Host": host}).status_code == 200


@pytest.mark.parametrize(
    "host", ["localhost", "localhost:8000", "LOCALHOST.", "127.0.0.1", "127.8.9.10:1", "[::1]",
             "[::1]:8000"],
)  # fmt: skip
def test_a_keyless_server_answers_loopback_names(mem, host) -> None:
    client = TestClient(create_app(mem))
    res = client.post("/memory/long-term", headers={**ALICE, "Host": host},
                      json={"messages": "mine", "infer": False})  # fmt: skip
    assert res.status_code == 201, res.text


def test_allowed_hosts_adds_names_and_keys_make_the_host_irrelevant(mem) -> None:
    lan = TestClient(create_app(mem, allowed_hosts=["box.lan"]))
    assert lan.get("/memory/long-term", headers={**ALICE, "Host": "box.lan:80"}).status_code == 200
    assert (
        lan.get("/memory/long-term", headers={**ALICE, "Host": "evil.example"}).status_code == 400
    )
    anyhost = TestClient(create_app(mem, allowed_hosts=["*"]))
    assert anyhost.get("/memory/long-term", headers={**ALICE, "Host": "x.y"}).status_code == 200
    with pytest.raises(ValidationError, match="allowed_hosts"):
        create_app(mem, allowed_hosts="box.lan")
    _, token = KeyStore(mem.store.db).create(user_id="alice")
    keyed = TestClient(create_app(mem))
    res = keyed.get("/memory/long-term", headers={**_bearer(token), "Host": "api.example.com"})
    assert res.status_code == 200  # a key proves the caller; a page cannot send it


def test_host_allowed_parses_ports_and_brackets() -> None:
    assert host_allowed("[::1]:80", None) and host_allowed("::1", None)
    assert not host_allowed("[::1", None) and not host_allowed(None, None)
    assert not host_allowed("[2001:db8::1]:80", None)
    assert host_allowed("Box.Lan", frozenset({"box.lan"}))


# ------------------------------------------------------------------ item 8: schema and docs
def test_schema_and_docs_need_a_key_once_one_is_active(mem) -> None:
    client = TestClient(create_app(mem), base_url="http://localhost")
    assert client.get("/openapi.json").status_code == 200  # keyless: loopback may read it
    assert client.get("/docs").status_code == 200 and client.get("/redoc").status_code == 200
    _, token = KeyStore(mem.store.db).create(user_id="alice")
    for path in ("/openapi.json", "/docs", "/redoc"):
        res = client.get(path)
        assert res.status_code == 401 and res.headers["WWW-Authenticate"] == "Bearer"
        assert client.get(path, headers=_bearer("lmp_000000000000_" + "x" * 43)).status_code == 401
        assert client.get(path, headers=_bearer(token)).status_code == 200
    assert client.get("/openapi.json", headers=_bearer(token)).json()["paths"]
    assert client.get("/docs/oauth2-redirect", headers=_bearer(token)).status_code == 404
    assert client.get("/docs-assets/swagger-ui.css").status_code == 200  # no data: no key
    assert client.get("/health").status_code == 200


def test_require_keys_covers_the_schema(mem) -> None:
    client = TestClient(create_app(mem, require_keys=True), base_url="http://localhost")
    assert client.get("/openapi.json").status_code == 401


# ------------------------------------------------------------------ item 9: work per request
def _messages(n: int, size: int = 80) -> list[dict[str, str]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"{i:04d} " + "w" * size}
            for i in range(n)]  # fmt: skip


def test_one_request_carries_a_bounded_number_of_messages(mem) -> None:
    client = TestClient(create_app(mem), base_url="http://localhost")
    many = client.post("/memory/long-term", headers=ALICE, json={"messages": _messages(1000)})
    assert many.status_code == 413, many.text  # 92 KB: under the body limit, not the work limit
    assert "at most 100" in many.json()["detail"]
    assert mem.get_all("alice").items == []
    ok = client.post("/memory/long-term", headers=ALICE,
                     json={"messages": _messages(100), "infer": False})  # fmt: skip
    assert ok.status_code == 201


def test_one_request_carries_a_bounded_number_of_characters(mem) -> None:
    """Ten user messages of 10,000 characters make one episode of 100,009: a 500 before."""
    client = TestClient(create_app(mem), base_url="http://localhost", raise_server_exceptions=False)
    body = {"messages": [{"role": "user", "content": "z" * 10_000}] * 10}
    res = client.post("/memory/long-term", headers=ALICE, json=body)
    assert res.status_code == 413 and "characters" in res.json()["detail"]
    edit = client.post("/memory/long-term", headers=ALICE, json={"messages": "a", "infer": False})
    mid = edit.json()["ids"][0]
    small = TestClient(create_app(mem, max_chars=50), base_url="http://localhost")
    too_long = small.patch(f"/memory/long-term/{mid}", headers=ALICE, json={"text": "b" * 51})
    assert too_long.status_code == 413
    assert [r.text for r in mem.get_all("alice").items] == ["a"]


def test_each_key_has_a_work_budget(mem) -> None:
    keys = KeyStore(mem.store.db)
    _, alice = keys.create(user_id="alice")
    _, bob = keys.create(user_id="bob")
    clock = _Clock()
    budget = RateLimiter(600, burst=250, clock=clock)  # 10 units a second
    client = TestClient(create_app(mem, rate_limit=None, work_limit=budget))
    hundred = {"messages": _messages(100, size=8), "infer": False}  # 100 units (1,399 chars)
    statuses = [client.post("/memory/long-term", headers=_bearer(alice), json=hundred).status_code
                for _ in range(3)]  # fmt: skip
    assert statuses == [201, 201, 429]
    limited = client.post("/memory/long-term", headers=_bearer(alice), json=hundred)
    assert limited.status_code == 429 and limited.headers["Retry-After"] == "5"
    assert "work budget" in limited.json()["detail"]
    assert client.post("/memory/long-term", headers=_bearer(bob), json=hundred).status_code == 201
    assert client.get("/memory/long-term", headers=_bearer(alice)).status_code == 200  # reads
    clock.now += 5.0
    assert client.post("/memory/long-term", headers=_bearer(alice), json=hundred).status_code == 201
    assert mem.get_all("alice", limit=1000).total == 300


def test_work_limits_admit_the_largest_request() -> None:
    default = WorkLimits.build(100, 100_000, 1200)
    assert default.budget is not None and default.budget.burst >= WorkLimits.units(100, 100_000)
    with pytest.raises(ValidationError, match="burst"):
        WorkLimits.build(100, 100_000, RateLimiter(600, burst=10))
    with pytest.raises(ValidationError, match="work_limit"):
        WorkLimits.build(100, 100_000, "fast")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        WorkLimits.build(0, 100, None)
    assert WorkLimits.build(100, 100_000, None).budget is None
