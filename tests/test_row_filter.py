"""A filter answered by a row's columns (kind, slot, category) gives exactly the answers of
matching the stored value, and a scan pushed down to SQLite finds the same rows."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from langmem_plus.model.records import record_columns
from langmem_plus.store import HybridStore
from langmem_plus.store.filters import matches
from langmem_plus.store.seams import CandidateRow, RowFilter, rank_fields

_WORDS = st.sampled_from(["episodic", "semantic", "fact", "preference", "city", "job", "x"])
_VALUES = st.fixed_dictionaries(
    {},
    optional={
        "kind": st.one_of(_WORDS, st.integers(0, 2), st.none()),
        "slot": st.one_of(_WORDS, st.integers(0, 2), st.none()),
        "category": st.one_of(_WORDS, st.integers(0, 2)),
        "text": st.just("t"),
    },
)
_FILTERS = st.fixed_dictionaries(
    {},
    optional={
        "kind": st.one_of(_WORDS, st.integers(0, 2)),
        "slot": _WORDS,
        "category": st.one_of(_WORDS, st.just({"$ne": "fact"})),
        "text": st.just("t"),
    },
)


def _row(value: dict[str, Any]) -> CandidateRow:
    return CandidateRow(
        1, "ns", "k", json.dumps(value), 0.0, 0.0, None, 0, None, None,
        *rank_fields(value), *record_columns(value),
    )  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(_VALUES, _FILTERS)
def test_columns_answer_as_the_value_does(value: dict[str, Any], flt: dict[str, Any]) -> None:
    assert RowFilter(flt)(_row(value)) == matches(value, flt)


@settings(max_examples=40, deadline=None)
@given(st.lists(_VALUES, min_size=1, max_size=12), _FILTERS)
def test_a_pushed_down_scan_finds_the_same_items(
    values: list[dict[str, Any]], flt: dict[str, Any]
) -> None:
    store = HybridStore(index=False)
    for i, v in enumerate(values):
        store.put(("n",), f"k{i}", v)
    got = [it.key for it in store.search(("n",), filter=flt, limit=100)]
    want = [f"k{i}" for i, v in enumerate(values) if matches(v, flt)]
    assert got == want
    store.close()


def test_a_filter_on_columns_reads_no_value() -> None:
    assert not RowFilter({"kind": "semantic", "slot": "city"}).needs_value
    assert RowFilter({"kind": "semantic", "slot": "city"}).columns == {
        "kind": "semantic",
        "slot": "city",
    }
    assert RowFilter({"slot": "city"}).needs_value  # without a record kind: read the value
    assert RowFilter({"kind": "other"}).needs_value
