"""The ranker's versions stage: a later episode about the same thing shown above the earlier.

When an exchange is kept, the older episodes it is a newer version of are noted on it
(`metadata.follows`, episodic/versions.py). When a later episode and an earlier one it follows
(or a fact derived from that earlier one) are both among a search's winners, the later is put
just above it when it is at least `share` as relevant (its score without the recency term, so
being newer does not count twice): it answers the same question. Only the order within the
winners changes, never which items are shown, so a change that is not a correction ("both
stand") loses nothing, and a wrong link costs one place, not a memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["FOLLOWS", "FOLLOWS_INDEXED", "follows_of", "newer_first"]

FOLLOWS = "follows"
"""Metadata key of an episode: the earlier episodes it is a newer version of. The link is
written once, on the newer episode; an episode's followers are found by the store's lookup
over the newer ones (`HybridStore.followers`)."""

FOLLOWS_INDEXED = 2
"""Keys of an episode's `follows` the store finds it by (its first ones; the SQLite schema
indexes these positions, store/db/migrations.py 018): the write side notes no more."""


def _origins(value: Mapping[str, Any], key: str) -> set[str]:
    """The episodes a shown item stands for: itself (an episode) or its sources (a fact)."""
    if value.get("kind") == "episodic":
        return {key}
    return {str(s) for s in value.get("source_ids") or ()}


def follows_of(value: Any) -> list[str]:
    """The earlier episodes a stored value follows, in its order (none for anything but an
    episode)."""
    if not isinstance(value, Mapping) or value.get("kind") != "episodic":
        return []
    meta = value.get("metadata")
    follows = meta.get(FOLLOWS) if isinstance(meta, Mapping) else None
    return [str(f) for f in follows] if isinstance(follows, list) else []


def _follows(value: Mapping[str, Any]) -> set[str]:
    """The earlier episodes an episode follows (none for anything else)."""
    return set(follows_of(value))


def newer_first(
    keys: Sequence[str],
    values: Sequence[Any],
    relevance: Sequence[float],
    share: float,
) -> tuple[list[int], list[bool]]:
    """The order of winners (best first: `keys`, their `values` and `relevance`) with each
    later episode moved just above the first winner standing for an episode it follows
    (that episode, or a fact derived from it) when it is at least `share` as relevant; a
    later version of a version goes above it in turn; the rest keep their order. Returns
    the new order (positions in the input) and whether each input position moved."""
    vals = [v if isinstance(v, Mapping) else {} for v in values]
    origins = [_origins(v, k) for v, k in zip(vals, keys, strict=True)]
    place: list[float] = []  # where each item goes: its index, or just above its anchor
    depth: list[int] = []
    moved = [False] * len(keys)
    for j, value in enumerate(vals):
        earlier = _follows(value)
        pos, d = float(j), 0
        if earlier:
            for i in range(j):
                if origins[i] & earlier and relevance[j] >= share * relevance[i]:
                    # above the anchor, wherever it went (a chain of versions stays in order)
                    d = depth[i] + 1
                    pos = place[i] - 0.5**d
                    moved[j] = True
                    break
        place.append(pos)
        depth.append(d)
    order = sorted(range(len(keys)), key=lambda k: (place[k], k))
    return order, moved
