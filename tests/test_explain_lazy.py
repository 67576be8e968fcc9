"""A search hit's score components are built on first read, from the ranking's arrays, and
read the same whatever happens to the hit first (copy, pickle, `dict()`, assignment)."""

from __future__ import annotations

import copy
import math
import pickle
from typing import Any

from conftest import HashEmbeddings

from langmem_plus import HybridStore
from langmem_plus.store.ranking.scoring import COMPONENTS

INDEX = {"dims": 16, "embed": HashEmbeddings(16), "fields": ["text"]}
TEXTS = ["alpha beta gamma", "beta gamma delta", "gamma ray burst", "alpha and omega"]


def _hits(tmp_path: Any) -> list[Any]:
    store = HybridStore(tmp_path / "x.db", index=INDEX)
    for i, t in enumerate(TEXTS):
        store.put(("u",), f"k{i}", {"text": t})
    hits = store.search(("u",), query="alpha gamma", limit=3)
    store.close()
    return hits


def test_components_name_every_score_part_and_match_the_score(tmp_path) -> None:
    for hit in _hits(tmp_path):
        comp = hit.components
        assert tuple(comp) == COMPONENTS
        assert comp["score"] == hit.score
        assert comp["profile"] == "default"
        assert all(isinstance(comp[k], float) for k in COMPONENTS[:-1])
        assert all(math.isfinite(comp[k]) for k in COMPONENTS[:-1])
        assert hit.components is comp  # built once


def test_components_survive_copy_and_pickle_before_first_read(tmp_path) -> None:
    hits = _hits(tmp_path)
    copies = [copy.deepcopy(h) for h in hits]
    pickled = [pickle.loads(pickle.dumps(h)) for h in hits]
    for h, c, p in zip(hits, copies, pickled, strict=True):
        assert c.components == p.components == h.components
        assert h == c


def test_dict_is_langgraphs_the_explanation_stays_an_attribute(tmp_path) -> None:
    # what tools serialise (LangMem's search_memory calls dict()) carries no ranking internals
    from langgraph.store.base import SearchItem

    for h in _hits(tmp_path):
        plain = SearchItem(h.namespace, h.key, h.value, h.created_at, h.updated_at, h.score)
        assert h.dict() == plain.dict() and "components" not in h.dict()
        assert h.components["score"] == h.score


def test_assigned_components_replace_the_lazy_ones(tmp_path) -> None:
    hit = _hits(tmp_path)[0]
    hit.components = {"score": 1.0}
    assert hit.components == {"score": 1.0}


def test_a_hit_made_directly_equals_the_one_init_makes() -> None:
    """`MemorySearchItem.hit` sets the slots itself (a search makes ten hits per query): it
    must set every slot of the class and its LangGraph bases as `__init__` does."""
    from datetime import datetime, timezone

    from langmem_plus.store.seams import MemorySearchItem

    when = datetime(2026, 1, 2, tzinfo=timezone.utc)
    src: Any = (object(), 3)
    args: dict[str, Any] = dict(
        namespace=("u", "x"),
        key="k",
        value={"text": "t"},
        created_at=when,
        updated_at=when,
        score=0.5,
        access_count=2,
        last_accessed=None,
    )
    made = MemorySearchItem(**args, explain=src)
    made._rowid = None
    direct = MemorySearchItem.hit(**args, explain=src)
    direct._rowid = None
    slots = [s for cls in type(made).__mro__ for s in getattr(cls, "__slots__", ())]
    assert "namespace" in slots and "score" in slots and "_explain" in slots
    for name in slots:
        assert getattr(direct, name) == getattr(made, name), name
