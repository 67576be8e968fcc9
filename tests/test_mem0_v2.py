"""mem0 2.x's documented calls, written in our own words, run against `Memory`.

mem0 2.x scopes `search` and `get_all` with ``filters={"user_id": ...}`` (no `user_id=`),
sizes them with `top_k`, filters with operators (``eq``, ``ne``, ``in``, ``nin``, ``gt``,
``gte``, ``lt``, ``lte``, ``contains``, ``icontains``, the wildcard ``"*"``) and groups
(``AND``, ``OR``, ``NOT``), and answers with ``{"results": [...]}`` dicts. The 1.x calls keep
working (tests/test_memory_mem0.py).
"""

from __future__ import annotations

import asyncio

import pytest

from langmem_plus.clock import ManualClock
from langmem_plus.errors import MemoryNotFoundError, ValidationError
from langmem_plus.memory import AsyncMemory, Memory


@pytest.fixture
def m():
    mem = Memory(embeddings=False, clock=ManualClock())
    mem.add("I love spicy ramen", user_id="alice", agent_id="chef", infer=False,
            metadata={"topic": "Food", "stars": 5, "tags": ["noodles", "Japan"]})  # fmt: skip
    mem.add("ramen recipe from a book", user_id="alice", agent_id="librarian", infer=False,
            metadata={"topic": "books", "stars": 3})  # fmt: skip
    mem.add("ramen shop near the office", user_id="alice", infer=False, metadata={"stars": 4})
    mem.add("bob eats ramen too", user_id="bob", agent_id="chef", infer=False)
    yield mem
    mem.close()


def _texts(results):
    return sorted(r["memory"] for r in results["results"])


# ---------------------------------------------------------------------------- the calls
def test_add_answers_with_results_events(m):
    out = m.add(
        [
            {"role": "user", "content": "I moved to Porto last month"},
            {"role": "assistant", "content": "Nice, enjoy Porto!"},
        ],
        user_id="carol",
        metadata={"source": "chat"},
    )
    events = out["results"]
    assert events and {e["event"] for e in events} <= {"ADD", "UPDATE"}
    assert all(set(e) == {"id", "memory", "event"} for e in events)
    assert any("Porto" in (e["memory"] or "") for e in events)
    assert [e["id"] for e in events] == list(out)  # still the list of ids


def test_search_with_user_in_filters_and_top_k(m):
    found = m.search("ramen", filters={"user_id": "alice"}, top_k=2)
    assert len(found["results"]) == 2
    first = found["results"][0]
    assert {"id", "memory", "score", "metadata", "user_id", "created_at"} <= set(first)
    assert first["user_id"] == "alice"
    assert _texts(m.search("ramen", filters={"user_id": "bob"})) == ["bob eats ramen too"]


def test_get_all_with_user_in_filters_and_top_k(m):
    page = m.get_all(filters={"user_id": "alice"}, top_k=2)
    assert len(page["results"]) == 2
    assert _texts(m.get_all(filters={"user_id": "alice", "agent_id": "chef"})) == [
        "I love spicy ramen"
    ]


def test_get_update_history_delete(m):
    mid = m.search("spicy", filters={"user_id": "alice"}, top_k=1)["results"][0]["id"]
    assert m.get(mid)["memory"] == "I love spicy ramen"
    m.update(memory_id=mid, text="I love mild ramen", metadata={"mood": "calm"})
    got = m.get(mid)
    assert got["memory"] == "I love mild ramen" and got["metadata"]["mood"] == "calm"
    events = m.history(mid)
    assert [e["event"] for e in events] == ["ADD", "UPDATE"]
    assert events[1]["old_memory"] == "I love spicy ramen"
    assert events[1]["new_memory"] == "I love mild ramen"
    assert events[0]["memory_id"] == mid and events[0]["is_deleted"] is False
    assert m.delete(mid) == {"message": "Memory deleted successfully!"}
    with pytest.raises(MemoryNotFoundError):
        m.get(mid)


def test_delete_all_and_reset(m):
    assert m.delete_all(user_id="bob") == {"memories_deleted": 1}
    assert m.get_all(filters={"user_id": "bob"})["results"] == []
    m.reset()
    assert m.get_all(filters={"user_id": "alice"})["results"] == []


def test_the_user_is_needed_once(m):
    with pytest.raises(ValidationError, match="user"):
        m.search("ramen", filters={"agent_id": "chef"})  # mem0 allows it; a user is a namespace
    with pytest.raises(ValidationError, match="differs"):
        m.search("ramen", user_id="alice", filters={"user_id": "bob"})
    with pytest.raises(ValidationError, match="one user"):
        m.search("ramen", filters={"user_id": {"in": ["alice", "bob"]}})
    with pytest.raises(ValidationError, match="once"):
        m.search("ramen", filters={"user_id": "alice"}, limit=2, top_k=3)


# ---------------------------------------------------------------------------- operators
@pytest.mark.parametrize(
    ("flt", "want"),
    [
        ({"agent_id": {"in": ["chef", "librarian"]}}, ["I love spicy ramen", "ramen recipe from a book"]),
        ({"agent_id": {"nin": ["chef"]}}, ["ramen recipe from a book", "ramen shop near the office"]),
        ({"agent_id": {"eq": "chef"}}, ["I love spicy ramen"]),
        ({"agent_id": {"ne": "chef"}}, ["ramen recipe from a book", "ramen shop near the office"]),
        ({"agent_id": "*"}, ["I love spicy ramen", "ramen recipe from a book"]),
        ({"topic": {"icontains": "foo"}}, ["I love spicy ramen"]),
        ({"topic": {"contains": "foo"}}, []),
        ({"tags": {"contains": "Japan"}}, ["I love spicy ramen"]),
        ({"tags": {"icontains": "japan"}}, ["I love spicy ramen"]),
        ({"stars": {"gte": 4}}, ["I love spicy ramen", "ramen shop near the office"]),
        ({"stars": {"gt": 3, "lt": 5}}, ["ramen shop near the office"]),
        ({"stars": {"lte": 3}}, ["ramen recipe from a book"]),
        ({"AND": [{"agent_id": "chef"}, {"stars": {"gte": 5}}]}, ["I love spicy ramen"]),
        ({"OR": [{"agent_id": "librarian"}, {"stars": 4}]},
         ["ramen recipe from a book", "ramen shop near the office"]),
        ({"NOT": [{"agent_id": "chef"}]}, ["ramen recipe from a book", "ramen shop near the office"]),
        ({"metadata": {"topic": "books"}}, ["ramen recipe from a book"]),
    ],
)  # fmt: skip
def test_operators_filter_search_and_get_all(m, flt, want):
    assert _texts(m.search("ramen", filters={"user_id": "alice", **flt}, top_k=10)) == want
    assert _texts(m.get_all(filters={"user_id": "alice", **flt})) == want


@pytest.mark.parametrize(
    "flt",
    [
        {"topic": {"like": "food"}},
        {"topic": {"$regex": "f.*"}},
        {"OR": {"topic": "food"}},
        {"AND": []},
        {"created_at": {"gte": "2024-01-01"}},
    ],
)
def test_an_unknown_operator_is_refused_not_matched_as_nothing(m, flt):
    with pytest.raises(ValidationError):
        m.search("ramen", filters={"user_id": "alice", **flt})
    with pytest.raises(ValidationError):
        m.get_all(filters={"user_id": "alice", **flt})


def test_async_memory_takes_the_same_calls(m):
    am = AsyncMemory(memory=m)
    found = asyncio.run(am.search("ramen", filters={"user_id": "alice", "stars": {"gte": 4}}))
    assert _texts(found) == ["I love spicy ramen", "ramen shop near the office"]
    page = asyncio.run(am.get_all(filters={"user_id": "bob"}, top_k=5))
    assert _texts(page) == ["bob eats ramen too"]
