"""`rows.adjacent` finds each item's neighbours in its namespace as a plain reading of the
table would: interleaved namespaces, gaps from deletions, first and last items, neighbours
beyond the window of ids around it."""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from langmem_plus.store.sqlite.rows import adjacent


def reference(ns_of: dict[int, int], ids: list[int]) -> dict[int, list[int]]:
    """The item before and after each of `ids` among the items of its namespace."""
    out: dict[int, list[int]] = {}
    for i in sorted(set(ids)):
        if i not in ns_of:
            continue
        same = sorted(j for j, ns in ns_of.items() if ns == ns_of[i])
        k = same.index(i)
        out[i] = [same[k + d] for d in (-1, 1) if 0 <= k + d < len(same)]
    return out


@st.composite
def layouts(draw: st.DrawFn) -> tuple[dict[int, int], list[int]]:
    n = draw(st.integers(1, 160))
    ns_of = {i: draw(st.sampled_from([1, 1, 1, 2, 3])) for i in range(1, n + 1)}
    for i in draw(st.lists(st.sampled_from(sorted(ns_of)), max_size=n // 2)):
        ns_of.pop(i, None)  # deleted items: gaps in the ids
    ids = draw(st.lists(st.integers(1, n + 1), min_size=1, max_size=20))
    return ns_of, ids


@settings(max_examples=300, deadline=None)
@given(layouts())
def test_neighbours_equal_a_plain_reading(layout: tuple[dict[int, int], list[int]]) -> None:
    ns_of, ids = layout
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, ns_id INTEGER NOT NULL)")
    conn.executemany("INSERT INTO items VALUES (?, ?)", sorted(ns_of.items()))
    assert adjacent(conn, ids) == reference(ns_of, ids)
