"""The packed (term id, tf) format of doc_terms round-trips and refuses what it cannot hold."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langmem_plus.store.db.termpack import pack_terms, unpack_terms


@given(st.dictionaries(st.integers(0, 2**40), st.integers(1, 2**20), max_size=60))
def test_round_trip_sorted_by_term_id(pairs):
    blob = pack_terms(pairs.items())
    assert unpack_terms(blob) == sorted(pairs.items())


def test_ids_are_stored_as_varint_deltas():
    # deltas 5, 2, 123 and tfs take one byte each; a delta of 293 takes two
    assert pack_terms([(5, 1), (7, 2), (130, 1)]) == bytes([5, 1, 2, 2, 123, 1])
    assert len(pack_terms([(5, 1), (7, 2), (300, 1)])) == 7


@pytest.mark.parametrize("pairs", [[(3, 0)], [(-1, 1)]])
def test_refuses_tf_below_one_or_negative_ids(pairs):
    with pytest.raises(ValueError):
        pack_terms(pairs)


def test_truncated_blob_is_an_error():
    blob = pack_terms([(300, 2)])
    with pytest.raises(ValueError):
        unpack_terms(blob[:-1])


@given(
    st.lists(
        st.dictionaries(st.integers(0, 2**40), st.integers(1, 2**20), max_size=30), max_size=12
    )
)
def test_many_blobs_decode_at_once_as_one_by_one(docs):
    """The resident index (store/keyword/resident.py) decodes a namespace's blobs in one pass."""
    from langmem_plus.store.db.termpack import unpack_many

    blobs = [pack_terms(d.items()) for d in docs]
    blob, tid, tf = unpack_many(blobs)
    want = [(b, t, f) for b, d in enumerate(blobs) for t, f in unpack_terms(d)]
    assert list(zip(blob.tolist(), tid.tolist(), tf.tolist(), strict=True)) == want


def test_many_blobs_refuse_a_truncated_one():
    from langmem_plus.store.db.termpack import unpack_many

    with pytest.raises(ValueError):
        unpack_many([pack_terms([(1, 1)]), pack_terms([(300, 2)])[:-1]])
    with pytest.raises(ValueError):  # cut inside a varint, before another blob
        unpack_many([pack_terms([(1, 1), (300, 2)])[:-2], pack_terms([(5, 1)])])
