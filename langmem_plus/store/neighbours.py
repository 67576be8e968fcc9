"""Conversation-context smoothing: an item inherits part of its neighbours' relevance.

Items of one namespace written one after another are often one exchange (a question and its
answer, a remark and the detail that follows). The turn that holds the answer frequently does
not share the question's words, while the turn next to it does. With
`MemoryConfig.neighbour_weight` = a > 0, each of the best candidates passes a share of its fused
relevance to the items written just before and after it in the same namespace (insertion order,
i.e. item id order): f'(j) = (f(j) + a * max over best neighbours i of f(i)) / (1 + a).
Neighbours outside the candidate set join it (with their own relevance counted as 0).
Only items that declare the same session (`session_id`, `chat_id` or `conversation_id` in
their value) pass relevance to each other: independent memories are never smoothed.
Measured in docs/benchmarks.md ("what we tried").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["adjacent", "inherit"]

# How far (in item ids) to look for the previous / next item of the same namespace; beyond
# it (many namespaces written interleaved) an item simply has no neighbour.
_WINDOW = 64


def adjacent(conn: Any, ids: Iterable[int]) -> dict[int, list[int]]:
    """item id -> ids of the items written just before and after it in its namespace."""
    ids = sorted(set(ids))
    if not ids:
        return {}
    probe = sorted({j for i in ids for j in (i - 1, i, i + 1)})
    ns: dict[int, int] = {}
    for k in range(0, len(probe), 500):
        part = probe[k : k + 500]
        marks = ",".join("?" * len(part))
        ns.update(conn.execute(f"SELECT id, ns_id FROM items WHERE id IN ({marks})", part))
    out: dict[int, list[int]] = {}
    for i in ids:
        own = ns.get(i)
        if own is None:
            continue
        found: list[int] = []
        for step, sql in (
            (
                -1,
                "SELECT id FROM items WHERE id < ? AND id >= ? AND ns_id = ? "
                "ORDER BY id DESC LIMIT 1",
            ),
            (1, "SELECT id FROM items WHERE id > ? AND id <= ? AND ns_id = ? ORDER BY id LIMIT 1"),
        ):
            j = i + step
            if ns.get(j) == own:
                found.append(j)
            else:  # a gap or another namespace's item: bounded lookup
                row = conn.execute(sql, (i, i + step * _WINDOW, own)).fetchone()
                if row is not None:
                    found.append(int(row[0]))
        out[i] = found
    return out


def inherit(
    fused: Mapping[int, float], nbrs: Mapping[int, list[int]], alpha: float
) -> dict[int, float]:
    """Smoothed relevance for the sources in `nbrs` and their neighbours (see module doc)."""
    got: dict[int, float] = {}
    for i, js in nbrs.items():
        fi = fused.get(i, 0.0)
        for j in js:
            if fi > got.get(j, 0.0):
                got[j] = fi
    ids = set(fused) | set(got)
    return {i: (fused.get(i, 0.0) + alpha * got.get(i, 0.0)) / (1.0 + alpha) for i in ids}


def _session(row: Any) -> str | None:
    """The session an item row declares in its value, if any (extracted by `_rows`)."""
    return None if row[12] is None else str(row[12])


def with_neighbours(
    store: Any,
    conn: Any,
    keep: list[int],
    rows: dict[int, Any],
    fused: dict[int, tuple[float, float, float]],
    flt: Mapping[str, Any] | None,
    time_range: Any,
    now: float,
    want: int,
    full_rows: bool = True,
) -> tuple[list[int], dict[int, tuple[float, float, float]]]:
    """`ranked()`'s hook: smooth the fused relevance over insertion-order neighbours.

    The best max(2 * want, 20) candidates pass relevance on; neighbours that were not
    candidates are loaded (and filtered) like any candidate, with values when `full_rows`.
    Returns the new candidate list
    and fused tuples (relevance replaced, the explanation parts kept; 0 for newcomers).
    """
    from langmem_plus.store._ranking import _keep, _rows

    alpha = store.config.neighbour_weight
    top = sorted(keep, key=lambda i: -fused[i][0])[: max(2 * want, 20)]
    if not any(_session(rows[i]) is not None for i in top if i in rows):
        return keep, fused  # no session among the best: nothing can be smoothed, no reads
    nbrs = adjacent(conn, top)
    new = {j for js in nbrs.values() for j in js} - set(rows)
    if new:
        rows.update(_rows(store, conn, new, full=full_rows))
    # Only turns of one session are context for each other: both items must name the same
    # session (session_id / chat_id / conversation_id in their value). Independent memories
    # (no session) never pass relevance around.
    nbrs = {
        i: [
            j
            for j in js
            if j in rows
            and _session(rows[i]) is not None
            and _session(rows[i]) == _session(rows[j])
        ]
        for i, js in nbrs.items()
        if i in rows
    }
    new = {j for js in nbrs.values() for j in js} & new
    if new:
        keep = keep + [
            i for i in _keep(store, {i: rows[i] for i in new if i in rows}, flt, time_range, now)
        ]
    smooth = inherit({i: fused[i][0] for i in keep if i in fused}, nbrs, alpha)
    out = {}
    for i in keep:
        _f, bn, vn = fused.get(i, (0.0, 0.0, 0.0))
        out[i] = (smooth.get(i, 0.0), bn, vn)
    return keep, out
