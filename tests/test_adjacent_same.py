"""`rows.adjacent` told which items share the one namespace (a one-namespace search's
candidates) finds the same neighbours as when it reads every namespace: interleaved
namespaces, gaps from deletions, first and last items, neighbours beyond the window."""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from langmem_plus.store.sqlite.rows import adjacent


@st.composite
def layouts(draw: st.DrawFn) -> tuple[dict[int, int], list[int], set[int]]:
    n = draw(st.integers(1, 160))
    ns_of = {i: draw(st.sampled_from([1, 1, 1, 2, 3])) for i in range(1, n + 1)}
    for i in draw(st.lists(st.sampled_from(sorted(ns_of)), max_size=n // 2)):
        ns_of.pop(i, None)  # deleted items: gaps in the ids
    mine = sorted(i for i, ns in ns_of.items() if ns == 1)
    if not mine:
        mine = [max(ns_of, default=0) + 1]
        ns_of[mine[0]] = 1
    same = set(draw(st.lists(st.sampled_from(mine), min_size=1, unique=True)))
    ids = draw(st.lists(st.sampled_from(sorted(same)), min_size=1, max_size=20))
    return ns_of, ids, same


@settings(max_examples=300, deadline=None)
@given(layouts())
def test_neighbours_with_same_equal_those_read_from_every_namespace(
    layout: tuple[dict[int, int], list[int], set[int]],
) -> None:
    ns_of, ids, same = layout
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, ns_id INTEGER NOT NULL)")
    conn.executemany("INSERT INTO items VALUES (?, ?)", sorted(ns_of.items()))
    assert adjacent(conn, ids, same) == adjacent(conn, ids)


def test_an_id_outside_same_reads_every_namespace() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, ns_id INTEGER NOT NULL)")
    conn.executemany("INSERT INTO items VALUES (?, ?)", [(1, 1), (2, 2), (3, 1), (4, 1)])
    assert adjacent(conn, [3, 2], same={3, 4}) == {2: [], 3: [1, 4]}
