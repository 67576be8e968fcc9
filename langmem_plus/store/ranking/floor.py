"""Which search hits are worth injecting into a model's context: the relevance floor.

A hit passes when its absolute relevance (`components["relevance"]`) reaches the floor
calibrated for the store's embeddings (docs/calibration.md), and it has evidence of its own
(some of the query's words, or a cosine above the model's background). Stores without vectors
have no floor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["DEFAULT_FLOOR", "above_floor", "feedback_only", "floor_for", "no_evidence"]

DEFAULT_FLOOR = 0.1
"""The relevance floor of a store that searches with embeddings but has no fitted judgement:
the floor calibrated on the best candidate's evidence with the bundled USE embeddings (the
highest keeping >= 95 % of the relevant hits, docs/calibration.md)."""


def above_floor(items: Sequence[Any], floor: float) -> list[Any]:
    """The hits worth injecting into a model's context: those whose relevance
    (`components["relevance"]`, HybridStore's absolute text relevance) reaches `floor`
    (`MemoryConfig.recall.min_relevance`), in their order, and that have evidence of their
    own (`components["evidence"]` above 0: some of the query's words, or a cosine above the
    model's background): a hit ranked only by its standing among the candidates, its
    neighbours or feedback terms is not injected, however high it stands (`no_evidence`). A
    hit that carries no relevance (a plain LangGraph store's) is kept: the floor is
    calibrated on HybridStore's scale only."""
    if not 0.0 <= floor <= 1.0:
        raise ValueError(f"floor must be in [0, 1], got {floor!r}")
    if floor <= 0:
        return list(items)
    out = []
    for it in items:
        comps = getattr(it, "components", None) or {}
        rel = comps.get("relevance")
        if not isinstance(rel, (int, float)) or (rel >= floor and not no_evidence(comps)):
            out.append(it)
    return out


def no_evidence(components: Mapping[str, Any]) -> bool:
    """Whether a hit has no evidence of its own (HybridStore's `evidence` at 0: none of the
    query's words, a cosine at the model's background), whatever its relevance."""
    ev = components.get("evidence")
    return isinstance(ev, (int, float)) and ev <= 0


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
