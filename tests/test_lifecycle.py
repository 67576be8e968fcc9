"""Lifecycle jobs over a plain LangGraph InMemoryStore: consolidation, decay, review,
eviction and cleanup; each job is idempotent."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.memory import InMemoryStore

from langmem_plus.config import MemoryConfig
from langmem_plus.episodic.lifecycle import (
    cleanup_older_than,
    consolidate,
    decay,
    evict,
    load_records,
    review,
    should_merge,
)
from langmem_plus.errors import ValidationError
from langmem_plus.model.records import MemoryRecord
from langmem_plus.processors import Reviewer

NS = ("memories", "u1")
T0 = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
DIM = 16


class PrefixEmbeddings(Embeddings):
    """Deterministic vectors: a text gets the vector of the longest registered prefix."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors

    def _one(self, text: str) -> list[float]:
        best = max((k for k in self.vectors if text.startswith(k)), key=len, default=None)
        if best is None:
            vec = [0.0] * DIM
            vec[-1] = 1.0
            return vec
        return self.vectors[best]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


def pair_vectors(cos: float, dim_a: int, dim_b: int) -> tuple[list[float], list[float]]:
    a = [0.0] * DIM
    b = [0.0] * DIM
    a[dim_a] = 1.0
    b[dim_a] = cos
    b[dim_b] = math.sqrt(max(0.0, 1 - cos * cos))
    return a, b


def episode(
    id: str, text: str, chat: str, time: datetime, who: str = "user", **kw: Any
) -> MemoryRecord:
    return MemoryRecord(
        id=id,
        namespace=NS,
        kind="episodic",
        category="episode",
        text=text,
        chat_id=chat,
        who=who,
        created_at=time,
        updated_at=time,
        metadata={"time": time.isoformat(), "chatid": chat, "who": who},
        **kw,
    )


def put(store: InMemoryStore, *records: MemoryRecord) -> None:
    for r in records:
        store.put(NS, r.id, r.to_value())


def snapshot(store: InMemoryStore) -> dict[str, Any]:
    return {i.key: i.value for i in store.search(NS, limit=1000)}


def setup_pair(
    cos: float, *, who_b: str = "user", chat_b: str = "c1", dt: timedelta = timedelta(minutes=10)
) -> tuple[InMemoryStore, PrefixEmbeddings]:
    va, vb = pair_vectors(cos, 0, 1)
    emb = PrefixEmbeddings({"Episode A": va, "Episode B": vb})
    store = InMemoryStore()
    put(
        store,
        episode("a", "Episode A about hiking.", "c1", T0),
        episode("b", "Episode B about hiking.", chat_b, T0 + dt, who=who_b),
    )
    return store, emb


def test_merge_replaces_two_with_one_and_is_idempotent() -> None:
    store, emb = setup_pair(0.9, chat_b="c2", dt=timedelta(days=2))
    report = consolidate(store, NS, embeddings=emb, now=T0 + timedelta(days=3))
    assert (report.merged, report.separated, report.scanned) == (1, 0, 2)
    records = load_records(store, NS)
    assert len(records) == 1
    merged = records[0]
    assert merged.metadata["time"] == T0.isoformat()
    assert set(merged.metadata["source_chat_ids"]) == {"c1", "c2"}
    assert merged.metadata["merged_from_ids"] == ["a", "b"]
    assert sorted(report.deleted_ids) == ["a", "b"] and report.created_ids == [merged.id]
    before = snapshot(store)
    again = consolidate(store, NS, embeddings=emb, now=T0 + timedelta(days=3))
    assert (again.merged, again.separated) == (0, 0)
    assert snapshot(store) == before


@pytest.mark.parametrize(
    ("who_b", "chat_b", "dt"),
    [
        ("friend", "c1", timedelta(minutes=5)),  # different who
        ("user", "c1", timedelta(hours=2)),  # same chat, > 30 min
        ("user", "c2", timedelta(days=8)),  # different chats, > 7 days
    ],
)
def test_hard_rules_block_merge_and_separate_instead(
    who_b: str, chat_b: str, dt: timedelta
) -> None:
    store, emb = setup_pair(0.95, who_b=who_b, chat_b=chat_b, dt=dt)
    report = consolidate(store, NS, embeddings=emb, now=T0 + timedelta(days=10))
    assert (report.merged, report.separated) == (0, 1)
    assert len(load_records(store, NS)) == 2


def test_separation_band_rewrites_both_once() -> None:
    store, emb = setup_pair(0.7)
    report = consolidate(store, NS, embeddings=emb, now=T0)
    assert (report.merged, report.separated) == (0, 1)
    recs = {r.id: r for r in load_records(store, NS)}
    assert recs["a"].metadata["separated_from"] == ["b"]
    assert recs["a"].text != "Episode A about hiking." and recs["b"].text.startswith("Episode B")
    before = snapshot(store)
    again = consolidate(store, NS, embeddings=emb, now=T0)
    assert (again.merged, again.separated) == (0, 0) and snapshot(store) == before


def test_below_separate_threshold_untouched() -> None:
    store, emb = setup_pair(0.3)
    before = snapshot(store)
    report = consolidate(store, NS, embeddings=emb, now=T0)
    assert (report.merged, report.separated, report.untouched_pairs) == (0, 0, 1)
    assert snapshot(store) == before


def test_semantic_records_and_other_namespaces_are_ignored() -> None:
    store, emb = setup_pair(0.99)
    store.put(NS, "s1", MemoryRecord(text="Episode A fact", kind="semantic").to_value())
    store.put((*NS, "sub"), "x", episode("x", "Episode A again", "c1", T0).to_value())
    store.put(NS, "junk", {"not": "a record"})
    report = consolidate(store, NS, embeddings=emb, now=T0)
    assert report.scanned == 2 and report.merged == 1
    assert store.get(NS, "s1") is not None and store.get((*NS, "sub"), "x") is not None


def test_chain_of_duplicates_merges_to_one() -> None:
    v = [1.0] + [0.0] * (DIM - 1)
    emb = PrefixEmbeddings({"Dup": v})
    store = InMemoryStore()
    put(store, *(episode(f"e{i}", f"Dup {i}.", "c1", T0 + timedelta(minutes=i)) for i in range(3)))
    report = consolidate(store, NS, embeddings=emb, now=T0)
    assert report.merged == 2 and len(load_records(store, NS)) == 1
    assert report.deleted_ids == ["e0", "e1", "e2"] or sorted(report.deleted_ids) == [
        "e0",
        "e1",
        "e2",
    ]


def test_should_merge_rules() -> None:
    a = episode("a", "x", "c1", T0)
    assert should_merge(a, episode("b", "x", "c1", T0 + timedelta(minutes=30)))
    assert not should_merge(a, episode("b", "x", "c1", T0 + timedelta(minutes=31)))
    assert should_merge(a, episode("b", "x", "c2", T0 + timedelta(days=7)))
    assert not should_merge(a, episode("b", "x", "c2", T0 + timedelta(days=7, seconds=1)))
    assert not should_merge(a, episode("b", "x", "c1", T0, who="friend"))


def test_consolidate_with_default_embeddings_and_calibrated_thresholds() -> None:
    cfg = MemoryConfig(lifecycle={"merge_threshold": 0.81, "separate_threshold": 0.55})
    store = InMemoryStore()
    put(
        store,
        episode("a", "用户周六和小李去爬了香山。", "c1", T0),
        episode("b", "周六用户跟小李一起去香山爬山了。", "c2", T0 + timedelta(days=1)),
        episode("c", "用户的笔记本电脑电池掉电很快。", "c3", T0 + timedelta(days=1)),
    )
    report = consolidate(store, NS, config=cfg, now=T0 + timedelta(days=2))
    assert report.merged == 1 and report.separated == 0
    texts = sorted(r.text for r in load_records(store, NS))
    assert len(texts) == 2 and "用户的笔记本电脑电池掉电很快。" in texts


# --------------------------------------------------------------------------------- decay
def fact(id: str, importance: float = 1.0, created: datetime = T0, **kw: Any) -> MemoryRecord:
    return MemoryRecord(
        id=id,
        namespace=NS,
        text=kw.pop("text", f"User likes thing {id}"),
        importance=importance,
        created_at=created,
        updated_at=created,
        **kw,
    )


def importance(store: InMemoryStore, key: str) -> float | None:
    item = store.get(NS, key)
    return None if item is None else MemoryRecord.from_item(item).importance


def test_decay_table_and_idempotence() -> None:
    store = InMemoryStore()
    put(
        store,
        episode("ep", "Episode", "c1", T0),
        fact("f1"),
        fact("core", tier="core"),
        fact("sys", tier="system"),
        fact("hi", importance=3.0),
        fact("low", importance=0.31),
    )
    day8 = T0 + timedelta(days=8)
    r1 = decay(store, NS, now=day8)
    assert importance(store, "ep") == pytest.approx(0.8)
    assert importance(store, "f1") == pytest.approx(0.95)
    assert importance(store, "core") == 1.0 and importance(store, "sys") == 1.0
    assert importance(store, "hi") == 3.0
    assert importance(store, "low") is None  # 0.31 * 0.95 < 0.3
    assert (r1.decayed, r1.deleted, r1.protected) == (2, 1, 3)
    before = snapshot(store)
    r2 = decay(store, NS, now=day8)
    assert (r2.decayed, r2.deleted) == (0, 0) and snapshot(store) == before
    r3 = decay(store, NS, now=T0 + timedelta(days=15))
    assert store.get(NS, "ep") is None  # episodes go after 14 days
    assert importance(store, "f1") == pytest.approx(0.95**2)
    assert r3.deleted == 1


def test_decay_sends_low_facts_to_reviewer() -> None:
    store = InMemoryStore()
    put(
        store,
        fact("keep", importance=0.52, text="User's name is Tom"),
        fact("drop", importance=0.52, text="User is tired today"),
    )
    now = T0 + timedelta(days=7)
    report = decay(store, NS, now=now, reviewer=Reviewer())
    assert report.reviewed == 2 and report.kept == 1 and report.deleted == 1
    assert importance(store, "keep") == 0.5 and store.get(NS, "drop") is None
    before = snapshot(store)
    again = decay(store, NS, now=now, reviewer=Reviewer())
    assert (again.reviewed, again.decayed, again.deleted) == (0, 0, 0)
    assert snapshot(store) == before


# -------------------------------------------------------------------------------- review
def test_review_promotes_keeps_and_deletes() -> None:
    store = InMemoryStore()
    put(
        store,
        fact("bday", importance=2.6, text="用户的生日是5月3日"),
        fact("tired", importance=2.7, text="User is tired today"),
        fact("stale", importance=0.4, text="User is tired today"),
        fact("name", importance=0.4, text="User's name is Tom"),
        fact("mid", importance=1.0),
    )
    report = review(store, NS, now=T0)
    assert report.promoted_ids == ["bday"] and report.deleted_ids == ["stale"]
    assert report.kept == 2 and report.reviewed == 4
    assert MemoryRecord.from_item(store.get(NS, "bday")).tier == "core"
    assert importance(store, "name") == 0.5
    before = snapshot(store)
    again = review(store, NS, now=T0)
    assert again.reviewed == 0 and snapshot(store) == before


# ------------------------------------------------------------------------ evict / cleanup
def test_evict_lowest_confidence_then_oldest() -> None:
    store = InMemoryStore()
    put(
        store,
        fact("a", confidence=0.9),
        fact("b", confidence=0.2, created=T0 + timedelta(days=2)),
        fact("c", confidence=0.2, created=T0),
        fact("d", confidence=0.5),
        fact("core", confidence=0.0, tier="core"),
    )
    report = evict(store, NS, 3)
    assert report.evicted_ids == ["c", "b"]
    assert sorted(r.id for r in load_records(store, NS)) == ["a", "core", "d"]
    assert evict(store, NS, 3).evicted == 0
    with pytest.raises(ValidationError):
        evict(store, NS, -1)


def test_cleanup_older_than() -> None:
    store = InMemoryStore()
    put(
        store,
        fact("old", created=T0),
        fact("new", created=T0 + timedelta(days=9)),
        fact("sys", created=T0, tier="system"),
    )
    report = cleanup_older_than(store, NS, 5, now=T0 + timedelta(days=10))
    assert report.deleted_ids == ["old"]
    assert cleanup_older_than(store, NS, 5, now=T0 + timedelta(days=10)).deleted == 0
    with pytest.raises(ValidationError):
        cleanup_older_than(store, NS, -1)


def test_namespace_validation() -> None:
    store = InMemoryStore()
    for job in (
        lambda ns: decay(store, ns),
        lambda ns: review(store, ns),
        lambda ns: consolidate(store, ns, embeddings=PrefixEmbeddings({})),
    ):
        with pytest.raises(ValidationError):
            job("memories")
        with pytest.raises(ValidationError):
            job(())
