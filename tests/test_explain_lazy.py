"""A search hit's score components are built on first read, from the ranking's arrays, and
read the same whatever happens to the hit first (copy, pickle, `dict()`, assignment)."""

from __future__ import annotations

import copy
import math
import pickle
from typing import Any

from conftest import HashEmbeddings

from langmem_plus import HybridStore
from langmem_plus.store.scoring import COMPONENTS

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


def test_components_survive_copy_pickle_and_dict_before_first_read(tmp_path) -> None:
    hits = _hits(tmp_path)
    copies = [copy.deepcopy(h) for h in hits]
    pickled = [pickle.loads(pickle.dumps(h)) for h in hits]
    as_dicts = [h.dict()["components"] for h in hits]
    for h, c, p, d in zip(hits, copies, pickled, as_dicts, strict=True):
        assert c.components == p.components == d == h.components
        assert h == c


def test_assigned_components_replace_the_lazy_ones(tmp_path) -> None:
    hit = _hits(tmp_path)[0]
    hit.components = {"score": 1.0}
    assert hit.components == {"score": 1.0}
