"""The Memory facade in mem0's hands: global ids, agent/run scopes, delete_all, from_config,
threshold, update(data="text"), free metadata keys, metadata filters and dict-shaped results."""

from __future__ import annotations

import asyncio
import string

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from langmem_plus.clock import ManualClock
from langmem_plus.errors import MemoryNotFoundError, ValidationError
from langmem_plus.memory import AsyncMemory, Memory, MemoryPage, SearchHit, as_mem0
from langmem_plus.memory.checks import SETTABLE
from langmem_plus.memory.scopes import translate_filters
from langmem_plus.model.records import MemoryRecord


@pytest.fixture
def mem():
    m = Memory(embeddings=False, clock=ManualClock())  # scores hold recency: time stands still
    yield m
    m.close()


# ---------------------------------------------------------------------------- global ids
def test_get_update_delete_history_need_only_the_id(mem):
    (mid,) = mem.add("I live in Lyon", "alice", infer=False)
    mem.add("I live in Oslo", "bob", infer=False)
    assert mem.get(mid).text == "I live in Lyon"
    assert mem.get(memory_id=mid).namespace == ("memories", "alice")
    updated = mem.update(mid, data="I live in Paris")  # mem0: data is the new text
    assert updated.text == "I live in Paris"
    assert mem.get(mid, "alice").text == "I live in Paris"
    events = mem.history(memory_id=mid)
    assert [e["event"] for e in events] == ["ADD", "UPDATE"]
    assert events[1]["old_text"] == "I live in Lyon" and events[1]["text"] == "I live in Paris"
    mem.delete(memory_id=mid)
    with pytest.raises(MemoryNotFoundError):
        mem.get(mid)
    assert [r.text for r in mem.get_all("bob").items] == ["I live in Oslo"]


def test_a_given_user_id_still_isolates_users(mem):
    (mid,) = mem.add("I live in Lyon", "alice", infer=False)
    with pytest.raises(MemoryNotFoundError):
        mem.get(mid, "mallory")
    with pytest.raises(MemoryNotFoundError):
        mem.delete(mid, "mallory")
    assert mem.get(mid, "alice").text == "I live in Lyon"


def test_id_arguments_are_checked(mem):
    (mid,) = mem.add("x y z", "alice", infer=False)
    with pytest.raises(ValidationError):
        mem.get()
    with pytest.raises(ValidationError):
        mem.get(mid, memory_id="other")
    with pytest.raises(ValidationError):
        mem.update(mid, text="a", data="b")
    with pytest.raises(MemoryNotFoundError):
        mem.get("0" * 32)
    assert mem.get(mid, memory_id=mid).id == mid  # the same id twice is fine


def test_update_with_a_dict_keeps_working(mem):
    (mid,) = mem.add("I like tea", "alice", infer=False)
    rec = mem.update(mid, "alice", data={"category": "preference"})
    assert rec.category == "preference" and rec.text == "I like tea"


def test_the_store_locates_a_key_across_namespaces(mem):
    (mid,) = mem.add("hello there", "bob", infer=False)
    assert mem.store.locate(mid, ("memories",)) == [("memories", "bob")]
    assert mem.store.locate(mid, ("conversations",)) == []
    assert mem.store.locate("absent") == []
    with pytest.raises(ValidationError):
        mem.store.locate("")


# ---------------------------------------------------------------------------- scopes
def test_agent_and_run_scopes_filter_search_and_get_all(mem):
    mem.add("the deploy runs on Friday", "alice", infer=False, agent_id="ops", run_id="r1")
    mem.add("the deploy checklist is in the wiki", "alice", infer=False, agent_id="ops")
    mem.add("deploy songs for the party", "alice", infer=False, agent_id="dj", run_id="r1")
    texts = {h.text for h in mem.search("deploy", "alice", agent_id="ops")}
    assert texts == {"the deploy runs on Friday", "the deploy checklist is in the wiki"}
    assert {h.text for h in mem.search("deploy", "alice", run_id="r1")} == {
        "the deploy runs on Friday",
        "deploy songs for the party",
    }
    assert [h.text for h in mem.search("deploy", "alice", agent_id="ops", run_id="r1")] == [
        "the deploy runs on Friday"
    ]
    page = mem.get_all("alice", agent_id="dj")
    assert page.total == 1 and page.items[0].metadata["agent_id"] == "dj"
    assert mem.get_all("alice").total == 3
    hit = mem.search("party", "alice")[0]
    assert hit["agent_id"] == "dj" and hit["run_id"] == "r1" and hit["user_id"] == "alice"


def test_a_later_run_leaves_earlier_runs_memories_in_their_scope(mem):
    first = mem.add("I live in Lyon", "u", run_id="r1")
    mem.add("I moved to Paris, I live in Paris now", "u", run_id="r2")
    assert {mem.get(i).metadata["run_id"] for i in first} == {"r1"}
    mem.delete_all(user_id="u", run_id="r2")
    assert {r.id for r in mem.get_all("u").items} == set(first)


def test_delete_all_by_user_agent_and_run(mem):
    mem.add("a1 alpha", "alice", infer=False, agent_id="ops", run_id="r1")
    mem.add("a2 alpha", "alice", infer=False, agent_id="ops", run_id="r2")
    mem.add("a3 alpha", "alice", infer=False)
    mem.add("b1 alpha", "bob", infer=False, agent_id="ops", run_id="r1")
    mem.add("c1 alpha", "carol", infer=False)
    with pytest.raises(ValidationError):
        mem.delete_all()
    assert mem.delete_all(user_id="alice", run_id="r1") == {"memories_deleted": 1}
    assert sorted(r.text for r in mem.get_all("alice").items) == ["a2 alpha", "a3 alpha"]
    assert mem.delete_all(agent_id="ops") == {"memories_deleted": 2}  # every user
    assert [r.text for r in mem.get_all("alice").items] == ["a3 alpha"]
    assert mem.get_all("bob").total == 0
    mem.add_turn("carol", "s1", "user", "keep this turn")
    assert mem.delete_all(user_id="carol") == {"memories_deleted": 1}
    assert mem.get_all("carol").total == 0
    assert mem.store.conversations.turns("carol", "s1")  # conversations stay
    assert mem.get_all("alice").total == 1


# ---------------------------------------------------------------------------- metadata
def test_reserved_names_in_metadata_with_foreign_words_stay_metadata(mem):
    (mid,) = mem.add("I love ramen", "alice", infer=False, metadata={"category": "food"})
    rec = mem.get(mid)
    assert rec.category == "fact" and rec.metadata["category"] == "food"
    (pid,) = mem.add("I prefer tea", "alice", infer=False, metadata={"category": "preference"})
    assert mem.get(pid).category == "preference"  # a word the field holds still sets it
    with pytest.raises(ValidationError):
        mem.add("x", "alice", infer=False, metadata={"confidence": 7})


def test_infer_true_keeps_foreign_category_in_metadata(mem):
    ids = mem.add("I like green tea", "alice", metadata={"category": "food", "topic": "drinks"})
    assert ids
    for i in ids:
        rec = mem.get(i)
        assert rec.metadata["category"] == "food" and rec.metadata["topic"] == "drinks"


def test_filters_on_free_keys_match_metadata(mem):
    mem.add("ramen in Tokyo", "alice", infer=False, metadata={"topic": "food"})
    mem.add("ramen recipe book", "alice", infer=False, metadata={"topic": "books"})
    mem.add("ramen shop", "alice", infer=False, metadata={"category": "food"})
    assert [h.text for h in mem.search("ramen", "alice", filters={"topic": "food"})] == [
        "ramen in Tokyo"
    ]
    assert [h.text for h in mem.search("ramen", "alice", filters={"category": "food"})] == [
        "ramen shop"
    ]
    assert mem.search("ramen", "alice", filters={"category": "preference"}) == []
    assert mem.get_all("alice", filters={"topic": "books"}).items[0].text == "ramen recipe book"
    assert len(mem.search("ramen", "alice", filters={"user_id": "alice"})) == 3
    with pytest.raises(ValidationError):
        mem.search("ramen", "alice", filters={"user_id": "bob"})
    either = mem.search("ramen", "alice", filters={"OR": [{"topic": "food"}, {"topic": "books"}]})
    assert sorted(h.text for h in either) == ["ramen in Tokyo", "ramen recipe book"]


_word = st.text(string.ascii_lowercase + "_", min_size=1, max_size=12)


@given(key=_word, value=st.one_of(_word, st.integers(-5, 5)))
def test_filter_keys_that_are_not_record_fields_read_metadata(key, value):
    if key in ("created_at", "updated_at", "timestamp"):
        with pytest.raises(ValidationError, match="time_range"):
            translate_filters({key: value})
        return
    flt = translate_filters({key: value})
    if key in MemoryRecord.model_fields:
        assert list(flt) in ([key], [f"metadata.{key}"])
    elif key != "user_id":
        assert flt == {f"metadata.{key}": value}


@given(meta=st.dictionaries(_word, _word, max_size=5))
@example(meta={"verified": "abc", "confidence": "high", "tags": "x"})  # typed fields: kept
def test_any_string_metadata_is_kept_without_error(meta):
    with Memory(embeddings=False) as m:
        (mid,) = m.add("remember this", "u", infer=False, metadata=meta)
        rec = m.get(mid)
        for k, v in meta.items():
            if k in SETTABLE and k not in ("text", "metadata") and getattr(rec, k) == v:
                continue  # a word the record field holds set the field
            if k == "metadata":
                continue
            assert rec.metadata[k] == v


# ---------------------------------------------------------------------------- search
def test_threshold_drops_low_scores(mem):
    mem.add("green tea is my favourite drink", "alice", infer=False)
    mem.add("the tea garden was wet", "alice", infer=False)
    hits = mem.search("green tea", "alice")
    assert len(hits) == 2
    cut = (hits[0].score + hits[1].score) / 2
    kept = mem.search("green tea", "alice", threshold=cut)
    assert [h.id for h in kept] == [hits[0].id]
    assert mem.search("green tea", "alice", threshold=hits[0].score + 1) == []
    for bad in (float("nan"), "0.5", True):
        with pytest.raises(ValidationError):
            mem.search("green tea", "alice", threshold=bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- shapes
def test_results_read_as_mem0_dicts(mem):
    (mid,) = mem.add("I love ramen", "alice", infer=False, metadata={"topic": "food"})
    hit = mem.search("ramen", "alice")[0]
    assert isinstance(hit, SearchHit) and hit.memory.text == "I love ramen"  # unchanged
    assert hit["memory"] == "I love ramen" and hit["id"] == mid and hit["score"] == hit.score
    assert hit["metadata"] == {"topic": "food"} and hit.get("nope", 1) == 1
    with pytest.raises(KeyError):
        hit["nope"]
    shaped = as_mem0(mem.search("ramen", "alice"))
    assert shaped["results"][0]["memory"] == "I love ramen"
    page = mem.get_all("alice")
    assert isinstance(page, MemoryPage) and page["results"][0]["id"] == mid
    assert as_mem0(page) == {"results": page["results"]}
    assert as_mem0(mem.get(mid))["memory"] == "I love ramen"
    assert as_mem0([mid]) == {"results": [{"id": mid}]}
    with pytest.raises(ValidationError):
        as_mem0(42)


# ---------------------------------------------------------------------------- from_config
def test_from_config_takes_our_keys_and_mem0s(tmp_path):
    db = tmp_path / "m.db"
    with Memory.from_config({"path": str(db), "embeddings": False, "version": "v1.1"}) as m:
        (mid,) = m.add("persisted", "u", infer=False)
    with Memory.from_config({"history_db_path": str(db), "embeddings": False}) as m:
        assert m.get(mid).text == "persisted"
    m = Memory.from_config(
        {"embeddings": False, "llm": {"provider": "openai", "config": {"model": "gpt-4o-mini"}}}
    )
    assert m.model == "openai:gpt-4o-mini"
    m.close()
    m = Memory.from_config({"embeddings": False, "config": {"score": {"w_recency": 0.5}}})
    assert m.config.score.w_recency == 0.5
    m.close()
    for bad in (
        {"vector_store": {"provider": "qdrant"}},
        {"llm": {"provider": "openai"}},
        {"config": {"no_such_field": 1}},
        {"path": "a.db", "history_db_path": "b.db"},
        "not a dict",
    ):
        with pytest.raises(ValidationError):
            Memory.from_config(bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- async
def test_async_memory_has_the_same_mem0_methods():
    async def main() -> None:
        am = AsyncMemory.from_config({"embeddings": False})
        (mid,) = await am.add("async ramen", "alice", infer=False, agent_id="a", run_id="r")
        assert (await am.get(memory_id=mid)).text == "async ramen"
        hits = await am.search("ramen", "alice", agent_id="a", threshold=0.0)
        assert hits[0]["memory"] == "async ramen"
        assert (await am.get_all("alice", run_id="r")).total == 1
        assert (await am.update(mid, data="async udon")).text == "async udon"
        assert [e["event"] for e in await am.history(mid)] == ["ADD", "UPDATE"]
        await am.delete(memory_id=mid)
        await am.add("second", "alice", infer=False, run_id="r")
        assert await am.delete_all(run_id="r") == {"memories_deleted": 1}
        await am.close()

    asyncio.run(main())
