"""Hostile inputs through the Python API: a project error or success, nothing lost, no hang.

The corpus lives in tests/hostile.py (reused by the reliability suite). Every case runs
against one store and one Memory holding a sentinel; after each case the sentinel must read
back unchanged and search must still find it.
"""

from __future__ import annotations

import math

import pytest
from conftest import HashEmbeddings
from hostile import Subjects, cases, is_project_error, plant_sentinel, run_case, sentinel_intact
from hypothesis import given, settings
from hypothesis import strategies as st

from langmem_plus import HybridStore, Memory
from langmem_plus.errors import ValidationError

CASES = cases()


@pytest.fixture(scope="module")
def subjects():
    store = HybridStore(index={"dims": 32, "embed": HashEmbeddings(32), "fields": ["text"]})
    subj = Subjects(store=store, memory=Memory(store=store))
    plant_sentinel(subj)
    yield subj
    store.close()


def test_corpus_is_large_and_covers_every_surface():
    assert len(CASES) >= 140
    prefixes = {c.id.split(".")[0] for c in CASES}
    assert prefixes == {"store", "memory", "facts"}
    assert sum(c.reject for c in CASES) >= 140


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input_gets_a_project_error_and_loses_nothing(case, subjects):
    outcome = run_case(case, subjects)
    assert not outcome.startswith("raw:"), outcome
    if case.reject:
        assert outcome.startswith("rejected:"), f"{case.id} was accepted"
    assert sentinel_intact(subjects)


def test_a_rejected_batch_writes_nothing(subjects):
    from langgraph.store.base import PutOp

    ns = ("atomic",)
    with pytest.raises(ValidationError):
        subjects.store.batch([PutOp(ns, "ok", {"text": "fine"}), PutOp(ns, "bad", {"f": math.nan})])
    assert subjects.store.get(ns, "ok") is None


json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=st.characters(), max_size=20),  # surrogates included
    st.binary(max_size=4),
)
json_values = st.recursive(
    json_leaf,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4),
        st.dictionaries(st.text(alphabet=st.characters(), max_size=5), kids, max_size=4),
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(value=json_values)
def test_any_value_is_stored_exactly_or_refused(subjects, value):
    store = subjects.store
    try:
        store.put(("prop",), "p", {"v": value})
    except Exception as exc:
        assert is_project_error(exc), repr(exc)
        return
    got = store.get(("prop",), "p")
    assert got is not None
    assert got.value == {"v": value} or _has_tuple(value)  # tuples read back as lists
    assert sentinel_intact(subjects)


def _has_tuple(value):
    return isinstance(value, tuple) or (
        isinstance(value, (list, dict))
        and any(_has_tuple(v) for v in (value.values() if isinstance(value, dict) else value))
    )
