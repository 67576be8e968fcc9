"""REST: which user a request acts for, and the one path that must never delete everything.

`X-User-Id` arrives decoded as Latin-1 (HTTP's default), so a user id sent as raw UTF-8 must
be re-decoded or 用户甲 becomes another user; ASCII-only clients percent-encode after the
RFC 8187 prefix ``UTF-8''``. ``DELETE /memory/long-term/`` (an empty id) must not reach the
delete-all route through a slash redirect.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import quote

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from langmem_plus.errors import ValidationError
from langmem_plus.memory import Memory
from langmem_plus.server import create_app, decode_user_header
from langmem_plus.server.apikeys import KeyStore


@pytest.fixture
def mem(hash_embeddings) -> Iterator[Memory]:
    m = Memory(embeddings=hash_embeddings)
    yield m
    m.close()


@pytest.fixture
def client(mem) -> Iterator[TestClient]:
    with TestClient(create_app(mem), base_url="http://localhost") as c:
        yield c


def _add(client: TestClient, header: bytes | str, text: str) -> dict:
    r = client.post(
        "/memory/long-term", headers={"X-User-Id": header}, json={"messages": text, "infer": False}
    )
    assert r.status_code == 201, r.text
    return r.json()["memories"][0]


def test_raw_utf8_user_id_is_the_same_user_as_in_python(client, mem):
    rec = _add(client, "用户甲".encode(), "lake trip with grandma")
    assert [m.id for m in mem.get_all("用户甲").items] == [rec["id"]]
    assert mem.get_all("ç\x94¨æ\x88·ç\x94²").items == []  # not the Latin-1 reading


def test_percent_encoded_user_id_is_the_same_user(client, mem):
    rec = _add(client, "UTF-8''" + quote("用户甲"), "lake trip with grandma")
    assert [m.id for m in mem.get_all("用户甲").items] == [rec["id"]]
    r = client.get("/memory/long-term", headers={"X-User-Id": "用户甲".encode()})
    assert [m["id"] for m in r.json()["items"]] == [rec["id"]]


def test_percent_signs_without_the_prefix_are_literal(client, mem):
    rec = _add(client, "a%2Eb", "literal percent id")
    assert [m.id for m in mem.get_all("a%2Eb").items] == [rec["id"]]
    assert mem.get_all("a.b").items == []


def _raw_post_status(app, user_header: bytes) -> int:
    """POST through the ASGI interface with header bytes as given (TestClient would re-encode
    bytes that are not UTF-8)."""
    body = json.dumps({"messages": "x", "infer": False}).encode()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/memory/long-term",
        "raw_path": b"/memory/long-term",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"localhost"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"x-user-id", user_header),
        ],
        "client": ("127.0.0.1", 1),
        "server": ("testserver", 80),
    }
    sent: list[dict] = []
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    anyio.run(app, scope, receive, send)
    return next(m["status"] for m in sent if m["type"] == "http.response.start")


@pytest.mark.parametrize("header", [b"\xff\xfe", b"\xe7\x94"], ids=["latin1", "cut-utf8"])
def test_raw_user_id_that_is_not_utf8_is_a_400(mem, header):
    assert _raw_post_status(create_app(mem), header) == 400
    assert _raw_post_status(create_app(mem), "用户甲".encode()) == 201
    assert mem.store.list_namespaces() == [("memories", mem.namespace("用户甲")[-1])]


@pytest.mark.parametrize("header", ["UTF-8''%FF", "UTF-8''%E7%94"], ids=["bad", "cut"])
def test_percent_encoded_user_id_that_is_not_utf8_is_a_400(client, mem, header):
    r = client.post(
        "/memory/long-term", headers={"X-User-Id": header}, json={"messages": "x", "infer": False}
    )
    assert r.status_code == 400
    assert "UTF-8" in r.json()["detail"]
    assert mem.store.list_namespaces() == []  # nothing written for anyone


@settings(max_examples=60, deadline=None)
@given(st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=20))
def test_decoding_inverts_both_encodings(user_id: str) -> None:
    raw = user_id.encode("utf-8").decode("latin-1")  # what the server is handed
    if not user_id.startswith("UTF-8''"):
        assert decode_user_header(raw) == user_id
    assert decode_user_header("UTF-8''" + quote(user_id, safe="")) == user_id


def test_decode_rejects_non_utf8() -> None:
    with pytest.raises(ValidationError):
        decode_user_header("\xff")


def test_delete_with_an_empty_id_deletes_nothing(client, mem):
    for i in range(3):
        _add(client, "hu", f"memory number {i}")
    for follow in (True, False):
        r = client.delete(
            "/memory/long-term/", headers={"X-User-Id": "hu"}, follow_redirects=follow
        )
        assert r.status_code == 404
    r = client.delete("/memory/long-term//", headers={"X-User-Id": "hu"})
    assert r.status_code == 404
    assert len(mem.get_all("hu").items) == 3
    # the explicit routes still work
    one = mem.get_all("hu").items[0].id
    assert client.delete(f"/memory/long-term/{one}", headers={"X-User-Id": "hu"}).json() == {
        "deleted": True,
        "id": one,
    }
    assert client.delete("/memory/long-term", headers={"X-User-Id": "hu"}).status_code == 200
    assert mem.get_all("hu").items == []


def test_a_user_key_cannot_name_another_user_in_utf8(mem):
    _key, token = KeyStore(mem.store.db).create(user_id="用户甲")
    with TestClient(create_app(mem), base_url="http://localhost") as c:
        auth = {"Authorization": f"Bearer {token}"}
        r = c.post("/memory/long-term", headers=auth, json={"messages": "mine", "infer": False})
        assert r.status_code == 201
        same = {**auth, "X-User-Id": "用户甲".encode()}
        assert c.get("/memory/long-term", headers=same).json()["total"] == 1
        other = {**auth, "X-User-Id": "用户乙".encode()}
        assert c.get("/memory/long-term", headers=other).status_code == 403


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/memory/search", '{"query": "\\udfff"}'),
        ("POST", "/memory/long-term", '{"messages": "a \\ud800 b", "infer": false}'),
    ],
)
def test_a_lone_surrogate_in_a_body_is_a_422_not_a_500(mem, method, path, body):
    with TestClient(
        create_app(mem), raise_server_exceptions=False, base_url="http://localhost"
    ) as c:
        r = c.request(
            method,
            path,
            content=body,
            headers={"X-User-Id": "hu", "content-type": "application/json"},
        )
    assert r.status_code == 422, r.text
    assert r.json()["detail"]
    assert mem.store.list_namespaces() == []
