"""HybridStore over Milvus (Milvus Lite here): the BaseStore contract, consistency between
handles, isolation, bad input, and the missing-extra error. One Lite file serves the module.
"""

from __future__ import annotations

import builtins
import json
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import HashEmbeddings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import BaseStore
from milvus_fixtures import LITE_REASON, LiteFile, lite_expire, requires_lite

from langmem_plus import HybridStore, Memory
from langmem_plus.clock import ManualClock
from langmem_plus.errors import MissingExtraError, ValidationError
from langmem_plus.model.records import SessionSummary, utcnow
from langmem_plus.store.seams import storage_target
from langmem_plus.testing import BaseStoreConformance

pytestmark = requires_lite


def _index() -> dict:
    emb = HashEmbeddings()
    return {"dims": emb.dims, "embed": emb, "fields": ["text"]}


@pytest.fixture(scope="module")
def lite(tmp_path_factory: pytest.TempPathFactory) -> LiteFile:
    return LiteFile(tmp_path_factory.mktemp("milvus"))


class TestMilvusLiteStore(BaseStoreConformance):
    """The conformance suite on Milvus Lite, with the same known gaps as on SQLite (none)."""

    @pytest.fixture
    def store(self, lite: LiteFile) -> Iterator[BaseStore]:
        with lite.open(index=_index()) as s:
            yield s

    def expire(self, store: BaseStore, namespace: tuple[str, ...], key: str) -> None:
        lite_expire(store, namespace, key, time.time() - 3600)  # type: ignore[arg-type]

    def age(self, store: BaseStore, namespace: tuple[str, ...], key: str, seconds: float) -> None:
        hs: HybridStore = store  # type: ignore[assignment]
        item = hs.get(namespace, key)
        assert item is not None
        back = item.created_at.timestamp() - seconds, item.updated_at.timestamp() - seconds
        hs._storage.restore_item_stats([(".".join(namespace), key, *back, None, 0)])


class TestMilvusLiteKeywordOnly(TestMilvusLiteStore):
    @pytest.fixture
    def store(self, lite: LiteFile) -> Iterator[BaseStore]:
        with lite.open(index=False) as s:
            yield s


class TestMilvusLiteOmitExpired(TestMilvusLiteStore):
    omits_expired = True

    @pytest.fixture
    def store(self, lite: LiteFile) -> Iterator[BaseStore]:
        with lite.open(index=False, ttl={"omit_expired": True}) as s:
            yield s


# ---------------------------------------------------------------- entry points
@pytest.mark.parametrize(
    ("path", "uri"),
    [
        ("milvus://db.example:19530", "http://db.example:19530"),
        ("https://cloud.example", "https://cloud.example"),
        ("./memories.milvus.db", "memories.milvus.db"),
        ("memories.db", None),
        (None, None),
    ],
)
def test_which_paths_name_milvus(path: str | None, uri: str | None) -> None:
    assert storage_target(path) == uri


def test_a_missing_extra_names_the_pip_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    real_import = builtins.__import__

    def no_pymilvus(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "pymilvus" or name.startswith("pymilvus."):
            raise ImportError("No module named 'pymilvus'")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(__import__("sys").modules, "pymilvus", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_pymilvus)
    monkeypatch.setattr("importlib.import_module", lambda n: no_pymilvus(n))
    with pytest.raises(MissingExtraError, match=r"pip install 'langmem-plus\[milvus\]'"):
        HybridStore(tmp_path / "x.milvus.db", index=False)


# ---------------------------------------------------------------- consistency
def test_a_put_is_searchable_at_once_from_this_and_another_handle(lite: LiteFile) -> None:
    """Strong consistency (the default): the next read of any handle sees the write."""
    writer = lite.open(index=_index())
    reader = HybridStore(lite.path, index=_index())
    for i in range(5):
        writer.put(("users", "u1"), f"k{i}", {"text": f"川菜 note number {i}"})
        for handle in (writer, reader):
            keys = {h.key for h in handle.search(("users", "u1"), query="川菜", limit=50)}
            assert f"k{i}" in keys
            assert handle.get(("users", "u1"), f"k{i}") is not None
    writer.delete(("users", "u1"), "k0")
    assert reader.get(("users", "u1"), "k0") is None
    assert "k0" not in {h.key for h in reader.search(("users", "u1"), query="川菜")}
    writer.close()
    reader.close()


def test_ranking_fields_and_explanation_match_sqlite(lite: LiteFile) -> None:
    """Same items, same query: both backends score with the same spec score and components
    (BM25 values differ between the implementations; the order here does not)."""
    clock = ManualClock(1_700_000_000.0)
    items = {
        "a": {"text": "I love spicy Sichuan food", "category": "preference", "confidence": 0.9},
        "b": {"text": "The meeting is on Friday"},
        "c": {"text": "Sichuan pepper makes food numb", "confidence": 0.2},
    }
    stores = [HybridStore(index=_index(), clock=clock), lite.open(index=_index(), clock=clock)]
    for s in stores:
        for k, v in items.items():
            s.put(("u",), k, v)
    got = [s.search(("u",), query="what Sichuan food do I like") for s in stores]
    assert [h.key for h in got[0]] == [h.key for h in got[1]]
    for a, b in zip(got[0], got[1], strict=True):
        assert set(a.components) == set(b.components)
        for name in ("category_boost", "recency", "frequency", "confidence"):
            assert a.components[name] == pytest.approx(b.components[name], abs=1e-9)
        # SQLite keeps int8 vectors (StoreTuning.vector_storage), Milvus float32
        assert a.components["vector"] == pytest.approx(b.components["vector"], abs=2e-3)
    for s in stores:
        s.close()


def test_update_keeps_created_at_order_and_use_counts(lite: LiteFile) -> None:
    clock = ManualClock(1_700_000_000.0)
    s = lite.open(index=False, clock=clock)
    s.put(("n",), "first", {"text": "one"})
    clock.advance(5)
    s.put(("n",), "second", {"text": "two"})
    assert s.mark_used(("n",), ["first", "missing"]) == 1
    clock.advance(5)
    s.put(("n",), "first", {"text": "one again"})
    got = s.get(("n",), "first")
    assert got is not None and got.created_at.timestamp() == 1_700_000_000.0
    assert got.updated_at.timestamp() == 1_700_000_010.0
    assert [k for _, k in s.keys(("n",))] == ["first", "second"]  # insertion order kept
    assert [h.key for h in s.search(("n",))] == ["first", "second"]
    hit = s.search(("n",), query="one")[0]
    assert hit.key == "first" and hit.access_count == 1  # type: ignore[attr-defined]
    s.close()


def test_maintenance_calls(lite: LiteFile) -> None:
    s = lite.open(index=_index())
    s.put(("a", "b"), "k1", {"text": "alpha"})
    s.put(("a", "c"), "k1", {"text": "beta"})
    s.put(("a", "c"), "k2", {"text": "gamma"}, index=False)
    assert s.count(("a",), exact=False) == 3 and s.count(("a",)) == 0
    assert s.locate("k1", ("a",)) == [("a", "b"), ("a", "c")]
    stats = s.stats()
    assert stats["items"] == 3 and stats["namespaces"] == 2 and stats["vectors"] == 2
    assert s.check()["ok"] is True
    assert s.reindex() == {"items": 3, "vectors": 2}
    assert s.check()["ok"] is True
    assert s.list_namespaces(max_depth=1) == [("a",)]
    s.close()


# ---------------------------------------------------------------- bad input
def test_a_value_too_big_for_milvus_is_refused_and_nothing_is_lost(lite: LiteFile) -> None:
    s = lite.open(index=False)
    s.put(("u",), "keep", {"text": "kept"})
    with pytest.raises(ValidationError, match="Milvus backend stores at most"):
        s.put(("u",), "big", {"text": "x", "blob": "y" * 70_000})
    assert s.get(("u",), "big") is None
    assert s.get(("u",), "keep") is not None
    s.close()


@pytest.mark.parametrize("query", ['"; drop', "50%_off", "a\\b", "名字\n换行", "x' or '1'='1"])
def test_hostile_text_never_reaches_an_expression(lite: LiteFile, query: str) -> None:
    s = lite.open(index=False)
    s.put((query.replace(".", ""),), query, {"text": query})
    assert s.get((query.replace(".", ""),), query) is not None
    s.search((query.replace(".", ""),), query=query)
    s.close()


# ---------------------------------------------------------------- isolation
USERS = ["u1", "u2", "u1x", "u"]
TEXTS = ["我喜欢猫", "I like cats", "project uses Redis", "cats and dogs"]


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    writes=st.lists(
        st.tuples(st.sampled_from(USERS), st.sampled_from(TEXTS)), min_size=1, max_size=8
    ),
    reader=st.sampled_from(USERS),
    query=st.sampled_from([*TEXTS, "cats", ""]),
)
def test_namespace_isolation(lite: LiteFile, writes: list, reader: str, query: str) -> None:
    s = lite.open(index=_index())
    for i, (user, text) in enumerate(writes):
        s.put(("memories", user), f"{user}-{i}", {"text": text, "owner": user})
    ns = ("memories", reader)
    for hit in s.search(ns, query=query or None, limit=50):
        assert hit.namespace == ns and hit.value["owner"] == reader
    for i, (user, _t) in enumerate(writes):
        assert (s.get(ns, f"{user}-{i}") is not None) == (user == reader)
    assert all(n == ns for n in s.list_namespaces(prefix=ns))
    s.close()


MULTI_OPS = st.lists(
    st.tuples(
        st.sampled_from(["put", "put", "delete"]),
        st.sampled_from(USERS),
        st.sampled_from(["", "notes"]),  # the user's namespace or one below it
        st.integers(0, 3),
        st.sampled_from(TEXTS),
    ),
    min_size=1,
    max_size=12,
)


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=MULTI_OPS, query=st.sampled_from([*TEXTS, "cats"]))
def test_namespace_isolation_under_random_multi_user_operations(
    lite: LiteFile, ops: list, query: str
) -> None:
    """Puts, overwrites and deletes of several users (and their sub-namespaces) from two
    handles in turn: every user's listing, search and namespaces hold exactly their own."""
    handles = [lite.open(index=_index()), HybridStore(lite.path, index=_index())]
    model: dict[tuple[tuple[str, ...], str], str] = {}
    for j, (op, user, sub, key, text) in enumerate(ops):
        ns = ("memories", user, sub) if sub else ("memories", user)
        if op == "delete":
            handles[j % 2].delete(ns, f"k{key}")
            model.pop((ns, f"k{key}"), None)
        else:
            handles[j % 2].put(ns, f"k{key}", {"text": text, "owner": user})
            model[(ns, f"k{key}")] = user
    for user in USERS:
        prefix = ("memories", user)
        want = {nk for nk in model if nk[0][:2] == prefix}
        for s in handles:
            assert {(h.namespace, h.key) for h in s.search(prefix, limit=100)} == want
            for hit in s.search(prefix, query=query, limit=100):
                assert hit.value["owner"] == user and hit.namespace[:2] == prefix
            assert set(s.list_namespaces(prefix=prefix)) == {ns for ns, _ in want}
    for s in handles:
        s.close()


def test_skip_reason_names_the_platforms() -> None:
    assert LITE_REASON is None or "Linux and macOS" in LITE_REASON or "pip install" in LITE_REASON


# ---------------------------------------------------------------- facade and migration
def _populate(m: Memory) -> None:
    ids = m.add(
        [{"role": "user", "content": "我喜欢川菜"}, {"role": "user", "content": "I live in Lyon"}],
        "alice",
        infer=False,
        metadata={"category": "preference", "source_chat_ids": ["c1"]},
    )
    m.update(ids[1], "alice", text="I live in Paris")
    m.store.mark_used(("memories", "alice"), [ids[0]])
    m.add("bob's fact", "bob", infer=False)
    m.add_turn("alice", "c1", "user", "OrderService fails", created_at=utcnow() - timedelta(days=2))
    m.add_turn("alice", "c1", "assistant", "check processPayment")
    m.summarize("alice", "c1")
    m.store.conversations.set_session_summary(
        SessionSummary(user_id="alice", session_id="c1", title="Orders", snippet="OrderService")
    )
    m.put_profile("alice", background="backend developer")
    m.store.put(("app", "settings"), "theme", {"dark": True})


def _without_ids(dump: str) -> dict:
    """An export with turn and summary ids replaced by their order (a log numbers the turns
    it is given; everything else must survive as it was)."""
    data = json.loads(dump)
    order = {t["id"]: i for i, t in enumerate(sorted(data["turns"], key=lambda t: t["id"]))}
    for t in data["turns"]:
        t["id"] = order[t["id"]]
    for s in data["rolling_summaries"]:
        s["id"] = None
        s["start_turn"], s["end_turn"] = order[s["start_turn"]], order[s["end_turn"]]
    return data


def test_export_from_sqlite_import_into_milvus_and_back_is_lossless(lite: LiteFile) -> None:
    idx = _index()
    with Memory(embeddings=idx["embed"]) as src:
        _populate(src)
        first = src.export()
    with Memory(store=lite.open(index=idx)) as mil:
        mil.store.conversations.delete_all()
        counts = mil.import_(first)
        assert counts["items"] == 4 and counts["turns"] == 2 and counts["profiles"] == 1
        second = mil.export()
        assert _without_ids(second) == _without_ids(first)
        # the facade works over Milvus: search, use counts, recall from the log
        assert mil.search("川菜", "alice")[0].memory.access_count == 1
        assert mil.recall("OrderService", "alice")["results"]
        mil.import_(first)  # importing again changes nothing
        assert _without_ids(mil.export()) == _without_ids(first)
    with Memory(embeddings=idx["embed"]) as back:
        back.import_(second)
        assert _without_ids(back.export()) == _without_ids(first)


def test_the_cli_takes_a_milvus_db(
    lite: LiteFile, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--db x.milvus.db` runs the same commands; export from SQLite imports into Milvus."""
    from langmem_plus.cli import main

    sqlite_db, milvus_db = str(tmp_path / "m.db"), str(lite.path)
    lite.open(index=False).close()  # empty the shared collections

    def run(*argv: str) -> dict:
        code = main([*argv, "--json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        return json.loads(out)

    base = ("--embeddings", "none")
    run("--db", sqlite_db, *base, "init")  # a database named by --db is created only so
    run("--db", sqlite_db, *base, "add", "我喜欢川菜", "--no-infer", "--category", "preference")
    dump = tmp_path / "dump.json"
    assert main(["--db", sqlite_db, *base, "export", "--output", str(dump)]) == 0
    assert run("--db", milvus_db, *base, "import", str(dump))["items"] == 1
    assert run("--db", milvus_db, *base, "where")["db"] == str(Path(milvus_db).resolve())
    stats = run("--db", milvus_db, *base, "stats")
    assert stats["items"] == 1
    code = main(["--db", milvus_db, *base, "export"])
    out, _ = capsys.readouterr()
    assert code == 0 and json.loads(out)["items"] == json.loads(dump.read_text())["items"]


def test_the_rest_api_over_milvus_with_keys_in_their_own_file(
    lite: LiteFile, tmp_path: Path
) -> None:
    from fastapi.testclient import TestClient

    from langmem_plus.server import create_app
    from langmem_plus.server.apikeys import KeyStore

    mem = Memory(store=lite.open(index=False))
    with pytest.raises(ValidationError, match="keeps no API keys"):
        create_app(mem)
    with KeyStore.open(tmp_path / "keys.db") as keys:
        _, token = keys.create(user_id="alice")
        with TestClient(create_app(mem, keys=keys, require_keys=True)) as client:
            auth = {"Authorization": f"Bearer {token}"}
            res = client.post(
                "/memory/long-term", json={"messages": "我喜欢川菜", "infer": False}, headers=auth
            )
            assert res.status_code in (200, 201), res.text
            found = client.post("/memory/search", json={"query": "川菜"}, headers=auth)
            assert found.status_code == 200 and "川菜" in found.text
            assert client.post("/memory/search", json={"query": "川菜"}).status_code == 401
    mem.close()


def test_mcp_resolves_a_key_kept_beside_a_milvus_store(
    lite: LiteFile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langmem_plus.mcp_server import resolve_user
    from langmem_plus.server.apikeys import KeyStore

    monkeypatch.setenv("LANGMEM_PLUS_KEYS_DB", str(tmp_path / "keys.db"))
    with KeyStore.open(tmp_path / "keys.db") as keys:
        _, token = keys.create(user_id="alice")
    with Memory(store=lite.open(index=False)) as mem:
        assert resolve_user(mem, api_key=token) == "alice"


def test_feedback_postings_match_the_stored_tokens(lite: LiteFile) -> None:
    """doc_terms (pseudo-relevance feedback) gives tf, length and df as the SQLite index
    would: counted on the project's tokens within the searched namespaces."""
    from langmem_plus.text.tokenize import query_terms, tokenize

    texts = ["alpha beta beta gamma", "beta delta", "gamma epsilon", "zeta"]
    s = lite.open(index=False)
    for i, t in enumerate(texts):
        s.put(("fb",), f"k{i}", {"text": t})
    s.put(("other",), "x", {"text": "beta beta beta"})  # another namespace: not counted
    st: Any = s._storage
    with st.batch_lock(), st.read() as conn:
        be = st.search
        ns = be.namespace_ids(conn, ("fb",))
        hits = be.keyword_search(conn, ns, query_terms("beta"), 10)
        assert len(hits) == 2
        rows = list(be.doc_terms(conn, list(hits)))
    df = {"alpha": 1, "beta": 2, "gamma": 2, "delta": 1}
    docs: dict[int, tuple[set[tuple[str, int]], int]] = {}
    for term, item, tf, dl, _tid, d in rows:
        assert d == df[term]
        docs.setdefault(item, (set(), dl))[0].add((term, tf))
    expected = []
    for text in texts[:2]:
        toks = tokenize(text)
        expected.append(({(t, toks.count(t)) for t in toks}, len(toks)))
    got = sorted((sorted(terms), dl) for terms, dl in docs.values())
    assert got == sorted((sorted(terms), dl) for terms, dl in expected)
    s.close()


def test_a_lost_connection_is_reopened(lite: LiteFile) -> None:
    """Milvus Lite's daemon exits after a while without requests (milvus-lite issue 334);
    the store opens a new connection and retries the call once."""
    s = lite.open(index=False)
    s.put(("a",), "k", {"text": "hello"})
    s._storage.client._client.close()  # type: ignore[attr-defined]  # the old one is gone
    got = s.get(("a",), "k")
    assert got is not None and got.value == {"text": "hello"}
    s.close()


# ---------------------------------------------------------------- partition key
def test_a_user_prefix_names_its_partition_key(lite: LiteFile) -> None:
    """Items are partitioned by their namespace root (first two elements): every request of
    a search under a user's prefix but primary-key lookups carries `root == ...` (and no test
    of the namespace path), so a cluster reads that partition only; a shorter prefix spans
    roots and carries none. Deeper namespaces share the root."""
    from langmem_plus.store.milvus.schema import ns_root

    s = lite.open(index=_index())
    s.put(("users", "u1"), "a", {"text": "川菜 lunch", "session_id": "s1"})
    s.put(("users", "u1"), "a2", {"text": "then a walk", "session_id": "s1"})
    s.put(("users", "u1", "notes"), "b", {"text": "川菜 dinner"})
    s.put(("users", "u2"), "c", {"text": "川菜 breakfast"})
    client: Any = s._storage.client  # type: ignore[attr-defined]
    seen: list[str] = []
    for name in ("query", "search", "query_iterator"):
        real = getattr(client, name)

        def spy(*a: Any, _real: Any = real, **k: Any) -> Any:
            seen.append(str(k.get("filter", "")))
            return _real(*a, **k)

        object.__setattr__(client, name, spy)
    hits = s.search(("users", "u1"), query="川菜", limit=10)
    assert {"a", "b"} <= {h.key for h in hits}
    mark = f'root == "{ns_root(("users", "u1"))}"'
    lookups = [f for f in seen if f.startswith("pk in [")]  # rows by primary key
    assert seen and all(mark in f for f in seen if f not in lookups), seen
    assert not any("ns_path" in f for f in seen)  # the key alone names a user's items
    assert len(seen) - len(lookups) >= 4  # statistics, keyword, vector, neighbours
    seen.clear()
    assert {"a", "b", "c"} <= {h.key for h in s.search(("users",), query="川菜", limit=10)}
    assert not any("root ==" in f for f in seen)
    assert s.count(("users", "u1"), exact=False) == 3
    s.close()


def test_collections_of_an_earlier_version_are_still_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Items collections made before the `doc` JSON field and the `root` partition key
    (partitioned by the namespace hash): reads, writes, filters (client-side) all work."""
    import pymilvus

    from langmem_plus.store.milvus import schema as milvus_schema

    real = milvus_schema._items_schema

    def earlier(pm: Any, client: Any, *bm25: float) -> Any:
        schema, ip = real(pm, client, *bm25)
        raw = schema.to_dict()
        raw["fields"] = [f for f in raw["fields"] if f["name"] not in ("doc", "root")]
        for f in raw["fields"]:
            if f["name"] == "ns":
                f["is_partition_key"] = True
        return pymilvus.CollectionSchema.construct_from_dict(raw), ip

    monkeypatch.setattr(milvus_schema, "_items_schema", earlier)
    s = HybridStore(tmp_path / "old.milvus.db", index=_index())
    monkeypatch.undo()
    st_: Any = s._storage
    assert not st_.has_doc and not st_.rooted
    s.put(("users", "u1"), "a", {"text": "川菜 lunch", "kind": "fact"})
    s.put(("users", "u1"), "b", {"text": "川菜 dinner", "kind": "chat"})
    s.put(("users", "u2"), "c", {"text": "川菜 breakfast", "kind": "fact"})
    s.mark_used(("users", "u1"), ["a"])
    got = s.search(("users", "u1"), query="川菜", filter={"kind": "fact"})
    assert [h.key for h in got] == ["a"] and got[0].access_count == 1  # type: ignore[attr-defined]
    assert s.count(("users",), exact=False) == 3 and s.check()["ok"]
    s.close()
    again = HybridStore(tmp_path / "old.milvus.db", index=_index())  # reopened: still old
    assert not again._storage.rooted  # type: ignore[attr-defined]
    assert {h.key for h in again.search(("users",), query="川菜")} == {"a", "b", "c"}
    again.close()


def test_a_dropped_shared_connection_is_replaced_by_one_of_its_own() -> None:
    """pymilvus shares one connection per URI; when gRPC dropped it ("too many pings" from
    Milvus Lite after a long idle time) and its recovery fails, opening a store or the next
    call gets a dedicated connection instead of failing. (A stand-in pymilvus module injects
    the failure; the real client is tested everywhere else.)"""
    from langmem_plus.store.milvus.schema import Reconnecting

    class MilvusError(Exception):
        def __init__(self, code: int) -> None:
            super().__init__(f"code {code}")
            self.code = code

    made: list[bool] = []

    class Client:
        def __init__(self, uri: str, dedicated: bool = False) -> None:
            made.append(dedicated)
            if not dedicated and len(made) == 1:
                raise MilvusError(2)  # the shared connection failed to recover
            self.dedicated = dedicated
            self.calls = 0

        def query(self, name: str) -> str:
            self.calls += 1
            if self.calls == 2 and len(made) == 2:
                raise MilvusError(1)  # closed under us
            return f"{name}:{'own' if self.dedicated else 'shared'}"

    class Module:
        MilvusException = MilvusError
        MilvusClient = Client

    client: Any = Reconnecting(Module(), {"uri": "x.milvus.db"})
    assert made == [False, True]
    assert client.query("a") == "a:own"
    assert client.query("b") == "b:own" and made == [False, True, True]  # reconnected once

    class Other(Module):
        class MilvusClient(Client):
            def query(self, name: str) -> str:
                raise MilvusError(65535)  # not a connection error: raised as it is

    made.clear()
    made.append(True)  # the shared connection works this time
    other: Any = Reconnecting(Other(), {"uri": "x.milvus.db"})
    with pytest.raises(MilvusError):
        other.query("c")


_HOLD = """
import sys
from langmem_plus import HybridStore
store = HybridStore(sys.argv[1], index=False)
store.put(("u",), "k", {"text": "held"})
print("open", flush=True)
sys.stdin.read()  # held until the test closes our stdin
store.close()
"""


@pytest.mark.slow  # starts Milvus Lite in a second process
def test_a_lite_file_open_in_another_process_gets_a_clear_error(tmp_path: Path) -> None:
    """Milvus Lite opens a file in one process at a time: a second process gets the
    project's own error naming the way out, and the first one's data is untouched."""
    import subprocess
    import sys

    from langmem_plus.errors import StoreInUseError

    path = tmp_path / "held.milvus.db"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        with pytest.raises(StoreInUseError, match="another process"):
            HybridStore(path, index=False)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        assert holder.wait(timeout=120) == 0
    store = HybridStore(path, index=False)
    try:
        got = store.get(("u",), "k")
        assert got is not None and got.value == {"text": "held"}
    finally:
        store.close()
