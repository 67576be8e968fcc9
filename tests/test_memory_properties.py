"""Properties of memory records, writing, search, reconsolidation, merging and reset, as
Hypothesis tests (they come from the source design's correctness properties, cited per test).
Model-driven steps use scripted chat models; store properties run on the project's HybridStore
(and LangGraph's InMemoryStore where the property is about the BaseStore API)."""

from __future__ import annotations

import math
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

from _agent_fakes import Scripted
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.embeddings import Embeddings
from langgraph.store.memory import InMemoryStore

from langmem_plus.config import MemoryConfig
from langmem_plus.episodic.episodes import EpisodeKeeper, fact_record
from langmem_plus.episodic.lifecycle import consolidate, load_records, should_merge
from langmem_plus.model.records import MemoryRecord
from langmem_plus.processors import EpisodeSeparator, FactDeriver, Reconsolidator
from langmem_plus.processors.facts.derived import DerivedFact
from langmem_plus.processors.facts.rules import rule_facts
from langmem_plus.text.clauses import is_chitchat

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
T0 = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
CFG = MemoryConfig(
    lifecycle={"merge_threshold": 0.85, "separate_threshold": 0.65}
)  # the source design's thresholds
DIM = 8


class TwoVectors(Embeddings):
    """Texts starting with 'A' get vector a, texts starting with 'B' vector b (cosine `cos`)."""

    def __init__(self, cos: float) -> None:
        self.a = [1.0] + [0.0] * (DIM - 1)
        self.b = [cos, math.sqrt(max(0.0, 1 - cos * cos))] + [0.0] * (DIM - 2)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.a if t.startswith("A") else self.b for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


class CountingSeparator(EpisodeSeparator):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def separate(
        self, a: MemoryRecord, b: MemoryRecord, *, now: datetime | None = None
    ) -> tuple[MemoryRecord, MemoryRecord]:
        self.calls += 1
        return super().separate(a, b, now=now)


words = st.text(alphabet=st.characters(categories=("L", "N")), min_size=1, max_size=12)
who_st = st.sampled_from(["user", "friend", "sister", "colleague"])
chat_st = st.sampled_from(["c1", "c2", "c3"])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=6,
)


def episode(id: str, text: str, chat: str, time: datetime, who: str = "user") -> MemoryRecord:
    return MemoryRecord(
        id=id,
        kind="episodic",
        category="episode",
        text=text,
        chat_id=chat,
        who=who,
        created_at=time,
        updated_at=time,
        metadata={"time": time.isoformat(), "chatid": chat, "who": who},
    )


def fresh_ns() -> tuple[str, str]:
    return ("memories", uuid.uuid4().hex)


_HYBRID: Any = None


def hybrid() -> Any:
    global _HYBRID
    if _HYBRID is None:
        from langmem_plus.store import HybridStore

        _HYBRID = HybridStore(index=False)
    return _HYBRID


# **Feature: ai-memory-system, Property 1: Dynamic Field Storage Consistency**
@SETTINGS
@given(extra=st.dictionaries(st.text(min_size=1, max_size=10), json_values, min_size=1, max_size=4))
def test_dynamic_fields_round_trip(extra: dict[str, Any]) -> None:
    rec = MemoryRecord(text="User likes tea", metadata=extra)
    for store in (InMemoryStore(), hybrid()):
        ns = fresh_ns()
        store.put(ns, rec.id, rec.to_value())
        back = MemoryRecord.from_item(store.get(ns, rec.id))
        for key, value in extra.items():
            assert back.metadata[key] == value


# **Feature: ai-memory-system, Property 2: Episodic Memory Field Completeness**
@SETTINGS
@given(text=words, chat=chat_st, reply=st.one_of(st.none(), words))
def test_episodic_fields_complete(text: str, chat: str, reply: str | None) -> None:
    store = InMemoryStore()
    ns = fresh_ns()
    turns = [{"role": "user", "text": text}] + (
        [{"role": "assistant", "text": reply}] if reply else []
    )
    kept = EpisodeKeeper().keep(store, ns, turns, session_id=chat, occurred_at=T0)
    rec = MemoryRecord.from_item(store.get(ns, kept.episode_id))
    assert rec.kind == "episodic" and rec.session_id == chat and rec.who == "user"
    assert rec.text == "\n".join(t["text"] for t in turns)  # verbatim, one line per turn
    assert rec.access_count == 0 and rec.namespace == ns and rec.occurred_at == T0
    assert rec.metadata["roles"] == [t["role"] for t in turns]
    assert len(rec.metadata["spans"]) == len(turns)


CHITCHAT = [
    "你好",
    "您好",
    "谢谢",
    "多谢",
    "好的",
    "嗯嗯",
    "哈哈哈",
    "晚安",
    "早上好",
    "再见",
    "hi",
    "hello",
    "thanks",
    "thank you",
    "ok",
    "okay",
    "cool",
    "lol",
    "bye",
    "good night",
]
TOPICS_ZH = ["量子计算", "区块链", "光合作用", "相对论", "通货膨胀", "黑洞", "机器学习"]
TOPICS_EN = ["quantum computing", "a blockchain", "photosynthesis", "inflation", "a black hole"]
knowledge_q = st.one_of(
    st.builds(
        lambda t, p: f"什么是{t}{p}", st.sampled_from(TOPICS_ZH), st.sampled_from(["", "？", "?"])
    ),
    st.builds(lambda t: f"为什么{t}会这样？", st.sampled_from(TOPICS_ZH)),
    st.builds(lambda t: f"What is {t}?", st.sampled_from(TOPICS_EN)),
    st.builds(lambda t: f"How does {t} work?", st.sampled_from(TOPICS_EN)),
    st.builds(lambda t: f"Can you explain {t}?", st.sampled_from(TOPICS_EN)),
)
chitchat = st.builds(
    lambda w, p: w + p, st.sampled_from(CHITCHAT), st.sampled_from(["", "!", "！", "~", ".", "。"])
)
fragments = st.one_of(
    st.sampled_from(["嗯", "啊", "the", "and", "?", "...", "呃", "so"]),
    st.text(alphabet="!?.,。，？！ ", min_size=1, max_size=4),
)


# **Feature: ai-memory-system, Property 3: Chitchat and Knowledge Query Filtering**
# (every exchange is kept as an episode, R-EPI; chitchat, knowledge questions and fragments
# give no fact, with the rules or with a model answering none, and small talk is marked so)
@SETTINGS
@given(text=st.one_of(chitchat, knowledge_q, fragments), use_model=st.booleans())
def test_chitchat_and_knowledge_not_written(text: str, use_model: bool) -> None:
    turns = [{"role": "user", "text": text}]
    model = Scripted(script=['{"facts": []}']) if use_model else None
    assert FactDeriver(model=model).run(turns).facts == []
    store, ns = InMemoryStore(), fresh_ns()
    kept = EpisodeKeeper().keep(store, ns, turns, occurred_at=T0)
    assert kept.fact_ids == []
    if kept.episode_id is not None and is_chitchat(text):
        assert MemoryRecord.from_item(store.get(ns, kept.episode_id)).metadata["chitchat"]


NAMES = ["李雷", "王芳", "小明", "Alice", "Priya", "Tom"]
CITIES_ZH = ["杭州", "成都", "深圳", "西安"]
CITIES_EN = ["Berlin", "Lisbon", "Denver", "Osaka"]
personal = st.one_of(
    st.builds(lambda n: f"我叫{n}", st.sampled_from(NAMES)),
    st.builds(lambda c: f"我住在{c}", st.sampled_from(CITIES_ZH)),
    st.builds(lambda m, d: f"我的生日是{m}月{d}日", st.integers(1, 12), st.integers(1, 28)),
    st.builds(lambda n: f"my name is {n}", st.sampled_from(NAMES)),
    st.builds(lambda c: f"I live in {c}", st.sampled_from(CITIES_EN)),
    st.builds(lambda n: f"my locker code is {n}", st.integers(1000, 9999)),
)


remember_st = st.one_of(
    st.builds(
        lambda p, f: f"{p}{f}",
        st.sampled_from(["请记住", "记住：", "帮我记一下，", "别忘了"]),
        personal.filter(lambda s: any("\u4e00" <= c <= "\u9fff" for c in s)),
    ),
    st.builds(
        lambda p, f: f"{p}{f}.",
        st.sampled_from(["Remember that ", "Please remember ", "Don't forget that "]),
        personal.filter(lambda s: not any("\u4e00" <= c <= "\u9fff" for c in s)),
    ),
)


# **Feature: ai-memory-system, Property 4: Explicit Remember Request Storage**
@SETTINGS
@given(text=remember_st)
def test_explicit_remember_is_written(text: str) -> None:
    facts = rule_facts([{"role": "user", "text": text}])
    assert facts and all(f.subject == "user" for f in facts)


def _fill(store: Any, ns: tuple[str, ...], n_sem: int, n_epi: int) -> None:
    for i in range(n_sem):
        r = MemoryRecord(text=f"tea fact {i}", kind="semantic")
        store.put(ns, r.id, r.to_value())
    for i in range(n_epi):
        r = MemoryRecord(text=f"tea episode {i}", kind="episodic", category="episode")
        store.put(ns, r.id, r.to_value())


# **Feature: ai-memory-system, Property 5: Search Result Type Coverage**
@settings(max_examples=100, deadline=None)
@given(n_sem=st.integers(1, 4), n_epi=st.integers(1, 4), n_other=st.integers(0, 3))
def test_search_covers_both_kinds_of_one_user(n_sem: int, n_epi: int, n_other: int) -> None:
    store = hybrid()
    ns, other = fresh_ns(), fresh_ns()
    _fill(store, ns, n_sem, n_epi)
    _fill(store, other, n_other, n_other)
    hits = store.search(ns, query="tea", limit=50)
    assert {h.value["kind"] for h in hits} == {"semantic", "episodic"}
    assert all(tuple(h.namespace) == ns for h in hits)
    assert len(hits) == n_sem + n_epi


# **Feature: ai-memory-system, Property 6: Search Result Limit Enforcement**
@settings(max_examples=100, deadline=None)
@given(n=st.integers(0, 8), k_sem=st.integers(1, 6), k_epi=st.integers(1, 6))
def test_search_limits_per_kind(n: int, k_sem: int, k_epi: int) -> None:
    store = hybrid()
    ns = fresh_ns()
    _fill(store, ns, n, n)
    sem = store.search(ns, query="tea", filter={"kind": "semantic"}, limit=k_sem)
    epi = store.search(ns, query="tea", filter={"kind": "episodic"}, limit=k_epi)
    assert len(sem) == min(n, k_sem) and len(epi) == min(n, k_epi)
    assert all(h.value["kind"] == "semantic" for h in sem)


# **Feature: ai-memory-system, Property 7: Hit Count Increment on Retrieval**
@settings(max_examples=100, deadline=None)
@given(uses=st.integers(0, 5))
def test_hit_count_increments_once_per_use(uses: int) -> None:
    store = hybrid()
    ns = fresh_ns()
    rec = MemoryRecord(text="User likes oolong tea")
    store.put(ns, rec.id, rec.to_value())
    for _ in range(uses):
        store.search(ns, query="oolong")  # searching alone never counts
        assert store.mark_used(ns, [rec.id, rec.id]) == 1  # once per call and key
    hit = store.search(ns, query="oolong", limit=1)[0]
    assert hit.access_count == uses
    assert MemoryRecord.from_item(hit).hit_count == uses


reconsolidate_answers = st.sampled_from(
    [
        None,
        '{"text": "rewritten", "update_desc": "d"}',
        '{"text": "rewritten", "context": "new ctx", "thing": "new thing"}',
        "not json",
    ]
)


# **Feature: ai-memory-system, Property 8: Reconsolidation Field Preservation**
# **Feature: ai-memory-system, Property 9: Reconsolidation Updates Array Growth**
@SETTINGS
@given(
    text=words,
    context=st.text(max_size=40),
    chat=chat_st,
    who=who_st,
    minutes=st.integers(0, 10**6),
    n_updates=st.integers(0, 3),
    answer=reconsolidate_answers,
)
def test_reconsolidation_keeps_fields_and_grows_updates(
    text: str, context: str, chat: str, who: str, minutes: int, n_updates: int, answer: str | None
) -> None:
    rec = episode("e", text, chat, T0 + timedelta(minutes=minutes), who)
    rec.metadata["updates"] = [{"time": T0.isoformat(), "desc": "x"}] * n_updates
    model = Scripted(script=[answer]) if answer else None
    new = Reconsolidator(model=model).reconsolidate(rec, context, now=T0)
    assert new.metadata["time"] == rec.metadata["time"]
    assert new.chat_id == rec.chat_id and new.who == rec.who
    assert new.metadata["who"] == rec.metadata["who"]
    assert new.metadata["chatid"] == rec.metadata["chatid"] and new.id == rec.id
    assert len(new.metadata["updates"]) >= n_updates + 1


def _pair_store(
    cos: float, chat_b: str, dt: timedelta, who_b: str = "user"
) -> tuple[InMemoryStore, tuple[str, str], MemoryRecord, MemoryRecord]:
    store = InMemoryStore()
    ns = fresh_ns()
    a = episode("a", "A: went hiking", "c1", T0)
    b = episode("b", "B: went hiking", chat_b, T0 + dt, who_b)
    for r in (a, b):
        store.put(ns, r.id, r.to_value())
    return store, ns, a, b


mergeable = st.one_of(
    st.tuples(st.just("c1"), st.integers(-1800, 1800)),
    st.tuples(st.just("c2"), st.integers(-604800, 604800)),
)


# **Feature: ai-memory-system, Property 10: Merge Threshold Enforcement**
# **Feature: ai-memory-system, Property 12: Merge Record Count Invariant**
# **Feature: ai-memory-system, Property 21: Merged Record Time Selection**
# **Feature: ai-memory-system, Property 22: Merged Record Source Tracking**
@SETTINGS
@given(cos=st.floats(0.86, 1.0), chat_dt=mergeable)
def test_merge_threshold_count_time_and_sources(cos: float, chat_dt: tuple[str, int]) -> None:
    chat_b, seconds = chat_dt
    store, ns, a, b = _pair_store(cos, chat_b, timedelta(seconds=seconds))
    before = len(load_records(store, ns))
    report = consolidate(store, ns, embeddings=TwoVectors(cos), config=CFG, now=T0)
    records = load_records(store, ns)
    assert report.merged == 1
    assert len(records) == before - 1
    merged = records[0]
    assert merged.metadata["time"] == min(a.metadata["time"], b.metadata["time"])
    assert {"c1", chat_b} <= set(merged.metadata["source_chat_ids"])
    assert set(merged.metadata["merged_from_ids"]) == {"a", "b"}


# **Feature: ai-memory-system, Property 11: Separation Threshold Enforcement**
@SETTINGS
@given(cos=st.floats(0.65, 0.8499), chat_dt=mergeable)
def test_separator_called_in_band(cos: float, chat_dt: tuple[str, int]) -> None:
    chat_b, seconds = chat_dt
    store, ns, _, _ = _pair_store(cos, chat_b, timedelta(seconds=seconds))
    sep = CountingSeparator()
    report = consolidate(store, ns, embeddings=TwoVectors(cos), config=CFG, separator=sep, now=T0)
    assert sep.calls == 1 and report.separated == 1 and report.merged == 0
    assert len(load_records(store, ns)) == 2


@SETTINGS
@given(cos=st.floats(-1.0, 0.6499))
def test_below_separation_band_untouched(cos: float) -> None:
    store, ns, _, _ = _pair_store(cos, "c1", timedelta(minutes=1))
    sep = CountingSeparator()
    before = {i.key: i.value for i in store.search(ns)}
    consolidate(store, ns, embeddings=TwoVectors(cos), config=CFG, separator=sep, now=T0)
    assert sep.calls == 0 and {i.key: i.value for i in store.search(ns)} == before


# **Feature: ai-memory-system, Property 13: Semantic Memory Field Completeness**
@SETTINGS
@given(
    facts=st.lists(words, min_size=1, max_size=3), chat=chat_st, slot=st.one_of(st.none(), words)
)
def test_semantic_records_complete(facts: list[str], chat: str, slot: str | None) -> None:
    ns = fresh_ns()
    ep = EpisodeKeeper().keep(
        InMemoryStore(), ns, [{"role": "user", "text": "x"}], session_id=chat, occurred_at=T0
    )
    source = MemoryRecord(
        id=ep.episode_id, namespace=ns, kind="episodic", text="x", session_id=chat
    )
    for text in facts:
        rec = fact_record(ns, DerivedFact(text=text, slot=slot, value=text), source, T0)
        assert rec.kind == "semantic" and rec.text == text and rec.value == text
        assert rec.source_ids == [ep.episode_id] and rec.session_id == chat
        assert rec.valid_from == T0 and rec.valid_to is None and rec.slot == slot


_MEMORY: Any = None


def memory() -> Any:
    global _MEMORY
    if _MEMORY is None:
        from langmem_plus.memory import Memory

        _MEMORY = Memory(embeddings=False)
    return _MEMORY


# **Feature: ai-memory-system, Property 14: Reset Operation Completeness**
@settings(max_examples=100, deadline=None)
@given(
    texts=st.lists(
        st.sampled_from(
            ["I like green tea", "我住在杭州", "My sister likes K-pop", "明天我要去面试"]
        ),
        min_size=1,
        max_size=3,
    )
)
def test_reset_removes_every_memory_of_the_user(texts: list[str]) -> None:
    mem = memory()
    user, other = uuid.uuid4().hex, uuid.uuid4().hex
    for t in texts:
        mem.add(t, user_id=user, infer=False)
    mem.add("I like coffee", user_id=other, infer=False)
    mem.reset(user)
    assert load_records(mem.store, mem.namespace(user)) == []
    assert len(load_records(mem.store, mem.namespace(other))) == 1


# **Feature: ai-memory-system, Property 18: Same Chat Merge Time Constraint**
@SETTINGS
@given(seconds=st.integers(-(10**6), 10**6))
def test_same_chat_merge_window(seconds: int) -> None:
    a = episode("a", "x", "c1", T0)
    b = episode("b", "x", "c1", T0 + timedelta(seconds=seconds))
    assert should_merge(a, b, CFG) == (abs(seconds) <= 1800)


# **Feature: ai-memory-system, Property 19: Different Chat Merge Time Constraint**
@SETTINGS
@given(seconds=st.integers(-2 * 10**6, 2 * 10**6))
def test_different_chat_merge_window(seconds: int) -> None:
    a = episode("a", "x", "c1", T0)
    b = episode("b", "x", "c2", T0 + timedelta(seconds=seconds))
    assert should_merge(a, b, CFG) == (abs(seconds) <= 604800)


# **Feature: ai-memory-system, Property 20: Who Field Merge Constraint**
@SETTINGS
@given(who_a=who_st, who_b=who_st, cos=st.floats(0.86, 1.0), seconds=st.integers(0, 1800))
def test_different_who_never_merged(who_a: str, who_b: str, cos: float, seconds: int) -> None:
    store = InMemoryStore()
    ns = fresh_ns()
    a = episode("a", "A: x", "c1", T0, who_a)
    b = episode("b", "B: x", "c1", T0 + timedelta(seconds=seconds), who_b)
    for r in (a, b):
        store.put(ns, r.id, r.to_value())
    report = consolidate(store, ns, embeddings=TwoVectors(cos), config=CFG, now=T0)
    assert (report.merged == 1) == (who_a == who_b)
    if who_a != who_b:
        assert not should_merge(a, b, CFG)
        assert len(load_records(store, ns)) == 2
