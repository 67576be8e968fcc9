"""The keyword candidate cut is deterministic: ties at the cut go to the lower item id, so the
same scores gathered in any order (another cache history, another process) give the same
candidates."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from langmem_plus.store.keyword.bm25 import top_k

scores = st.lists(
    st.tuples(st.integers(0, 10_000), st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.25])),
    min_size=1,
    max_size=60,
    unique_by=lambda t: t[0],
)


@given(scores, st.integers(1, 70), st.randoms(use_true_random=False))
def test_the_cut_does_not_depend_on_order(pairs, k, rnd) -> None:
    ids = np.array([i for i, _ in pairs], dtype=np.int64)
    vals = np.array([v for _, v in pairs], dtype=np.float64)
    chosen = set(ids[top_k(ids, vals, k)].tolist())
    perm = list(range(len(pairs)))
    rnd.shuffle(perm)
    again = set(ids[perm][top_k(ids[perm], vals[perm], k)].tolist())
    assert chosen == again
    # exactly the k best by (score desc, id asc)
    expected = {i for i, _ in sorted(pairs, key=lambda t: (-t[1], t[0]))[:k]}
    assert chosen == expected


def test_k_zero_and_empty() -> None:
    assert len(top_k(np.array([1, 2]), np.array([1.0, 2.0]), 0)) == 0
    assert len(top_k(np.array([], dtype=np.int64), np.array([]), 3)) == 0
