"""The read side of episodes and facts: search results as the memory layer shows them.

Superseded facts are hidden unless asked for, `as_of` looks back, and an episode whose facts
were all superseded (or that a later turn corrected) is demoted with a `superseded` component;
recency is counted on the user's own timeline. Works over any LangGraph `BaseStore`'s items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from langmem_plus.episodic.versions import RELEVANCE_SHARE, newer_first, prior_scale
from langmem_plus.model.records import MemoryRecord, utcnow
from langmem_plus.text.timeparse import parse_iso

__all__ = [
    "DEFAULT_FLOOR",
    "DEMOTION",
    "above_floor",
    "current_view",
    "feedback_only",
    "floor_for",
    "record_of_item",
]

DEFAULT_FLOOR = 0.1
"""The relevance floor of a store that searches with embeddings but has no fitted judgement:
the floor calibrated on the best candidate's evidence with the bundled USE embeddings (the
highest keeping >= 95 % of the relevant hits, docs/calibration.md)."""

DEMOTION = 0.5  # score factor of a superseded fact shown, or an episode superseded or corrected


def record_of_item(item: Any) -> MemoryRecord | None:
    """The `MemoryRecord` of a store item, or None when its value is not one."""
    try:
        return MemoryRecord.from_item(item)
    except Exception:
        return None


def current_view(
    items: Sequence[Any],
    *,
    limit: int,
    include_superseded: bool = False,
    as_of: datetime | None = None,
    recency: tuple[float, float] | None = None,
    newer_share: float | None = RELEVANCE_SHARE,
    now: datetime | None = None,
) -> list[Any]:
    """Search results as the memory layer shows them, best first, at most `limit`.

    Superseded facts are dropped (kept and marked with `include_superseded`); with `as_of`,
    what was known and true then. An episode whose facts were all superseded is demoted
    (score x `DEMOTION`) and its `components["superseded"]` says so. Among the results
    shown, a later episode about the same thing as an earlier one is put first when it is
    at least `newer_share` as relevant (`versions.newer_first`, `components["newer_version"]`;
    None: no reordering).

    `recency` = (weight, half-life in days) re-bases the score's recency term on the user's
    own timeline: the age of a memory is counted from when it was said (`occurred_at`) back
    from the newest memory found (never past `as_of` or now), not from the wall clock. So in
    imported or long-idle histories the newer of two statements still counts as newer; when
    the user is active (newest ≈ now) nothing changes. `now`: the store's clock (default the
    wall clock).
    """
    if recency is not None:
        _rebase_recency(items, recency[0], recency[1], as_of or now)
    shown: list[tuple[float, int, Any]] = []
    for i, it in enumerate(items):
        value = it.value if isinstance(it.value, Mapping) else {}
        rec = record_of_item(it) if value.get("kind") else None
        stale = False
        if rec is not None:
            if as_of is not None:
                if not rec.valid_at(as_of):
                    continue
            elif not rec.is_current:
                if not include_superseded:
                    continue
                stale = True
            replaced = rec.facts_superseded or rec.corrected_by is not None
            stale = stale or (rec.kind == "episodic" and replaced and as_of is None)
        score = float(getattr(it, "score", None) or 0.0)
        comps = getattr(it, "components", None)
        if isinstance(comps, dict):
            comps["superseded"] = 1.0 if stale else 0.0
        if stale:
            score *= DEMOTION
            if getattr(it, "score", None) is not None:
                it.score = score
        shown.append((score, i, it))
    shown.sort(key=lambda x: (-x[0], x[1]))
    return newer_first(
        [it for _, _, it in shown[:limit]],
        recency[0] if recency is not None else 0.0,
        newer_share,
    )


def _said_at(item: Any) -> datetime | None:
    value = item.value if isinstance(item.value, Mapping) else {}
    raw = value.get("occurred_at")
    if isinstance(raw, str):
        try:
            return parse_iso(raw)
        except ValueError:
            return None
    when = getattr(item, "updated_at", None) or getattr(item, "created_at", None)
    return when if isinstance(when, datetime) else None


def _rebase_recency(
    items: Sequence[Any], weight: float, half_life_days: float, as_of: datetime | None
) -> None:
    """Replace each hit's wall-clock recency term by its recency on the user's timeline."""
    times = [_said_at(it) for it in items]
    known = [t for t in times if t is not None]
    if not known or weight <= 0:
        return
    cap = as_of or utcnow()
    newest = min(max(known), cap)
    for it, t in zip(items, times, strict=True):
        comps = getattr(it, "components", None)
        if t is None or not isinstance(comps, dict) or getattr(it, "score", None) is None:
            continue
        age_days = max(0.0, (newest - t).total_seconds()) / 86400.0
        fresh = 0.5 ** (age_days / half_life_days)
        wall = float(comps.get("recency", 0.0) or 0.0)
        it.score = float(it.score) + prior_scale(comps) * weight * (fresh - wall)
        comps["recency"] = fresh


def above_floor(items: Sequence[Any], floor: float) -> list[Any]:
    """The hits worth injecting into a model's context: those whose relevance
    (`components["relevance"]`, HybridStore's absolute text relevance) reaches `floor`
    (`MemoryConfig.recall.min_relevance`), in their order, except a hit ranked by feedback
    terms alone (`feedback_only`). A hit that carries no relevance (a plain LangGraph store's)
    is kept: the floor is calibrated on HybridStore's scale only."""
    if not 0.0 <= floor <= 1.0:
        raise ValueError(f"floor must be in [0, 1], got {floor!r}")
    if floor <= 0:
        return list(items)
    out = []
    for it in items:
        comps = getattr(it, "components", None) or {}
        rel = comps.get("relevance")
        if not isinstance(rel, (int, float)) or (rel >= floor and not feedback_only(comps)):
            out.append(it)
    return out


def feedback_only(components: Mapping[str, Any]) -> bool:
    """Whether a hit's keyword score comes from pseudo-relevance-feedback terms alone, with no
    evidence of its own (none of the query's words, a cosine at the model's background): such
    a hit ranks among the query's candidates, but nothing says it answers the query (the demo's
    "我喜欢吃什么菜？" reached "用户下周三要去杭州面试" through the feedback term 用户)."""
    bm25, ev = components.get("bm25"), components.get("evidence")
    if not isinstance(bm25, (int, float)) or not isinstance(ev, (int, float)):
        return False
    return bm25 > 0 and ev <= 0


def floor_for(store: Any, floor: float | None) -> float:
    """The relevance floor that applies to `store`'s hits: none (0) for a keyword-only store,
    whose relevance rests on its own IDF alone — in a small store a word that most memories hold
    weighs almost nothing, so a floor would drop real matches; else `floor`, or when it is None
    the floor calibrated with the store's relevance judgement (`relevance_judgement`, fitted
    for its embeddings), or DEFAULT_FLOOR."""
    if getattr(store, "embeddings", None) is None:
        return 0.0
    if floor is not None:
        return floor
    judgement = getattr(store, "relevance_judgement", None)
    got = getattr(judgement, "floor", None)
    return float(got) if isinstance(got, (int, float)) else DEFAULT_FLOOR
