"""The spec score (SPEC R-RET 2) as pure functions, each component kept for explanation.

default profile (seed 000):
    score = w_keyword·keyword + w_category·category_boost + w_recency·recency
          + w_frequency·frequency + w_confidence·confidence,   ×topic_boost on current_topic
coding profile (seed 002):
    score = w_symbol·symbol_match + w_code_recency·recency + w_similarity·similarity
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from langmem_plus.config import MemoryConfig

__all__ = ["ScoreParts", "frequency", "fuse_relevance", "recency", "score_item"]

_DAY = 86400.0


@dataclass
class ScoreParts:
    """Why an item ranked where it did: every input of its final score."""

    score: float = 0.0
    keyword: float = 0.0
    bm25: float = 0.0
    bm25_norm: float = 0.0
    vector: float = 0.0
    vector_norm: float = 0.0
    category_boost: float = 1.0
    recency: float = 0.0
    frequency: float = 0.0
    confidence: float = 0.0
    topic_boost: float = 1.0
    symbol_match: float = 0.0
    profile: str = "default"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def recency(now: float, last: float | None, half_life_days: float) -> float:
    """1.0 now, halving every `half_life_days` since `last` (epoch seconds)."""
    if last is None:
        return 0.0
    age = max(0.0, now - last) / _DAY
    return float(0.5 ** (age / half_life_days))


def frequency(access_count: int, saturation: int) -> float:
    """log1p(count) / log1p(saturation), capped at 1."""
    if access_count <= 0:
        return 0.0
    return min(1.0, math.log1p(access_count) / math.log1p(saturation))


def fuse_relevance(
    bm25: Mapping[int, float],
    sims: Mapping[int, float],
    w_keyword: float,
) -> dict[int, tuple[float, float, float]]:
    """Fused text relevance per candidate: (fused, bm25_norm, vector_norm), all in [0, 1].

    BM25 is divided by the best BM25 among the candidates; cosine is min-max scaled over the
    candidates (the scale of a model's cosine is model-specific, its order is not). When only
    one signal has any spread, it carries the whole weight.
    """
    ids = set(bm25) | set(sims)
    if not ids:
        return {}
    top_b = max((v for v in bm25.values()), default=0.0)
    sim_vals = [sims[i] for i in ids if i in sims]
    lo = min(sim_vals, default=0.0)
    hi = max(sim_vals, default=0.0)
    spread = hi - lo
    has_b = top_b > 0
    has_v = bool(sim_vals)
    wb = w_keyword if (has_b and has_v) else (1.0 if has_b else 0.0)
    wv = 1.0 - wb if has_v else 0.0
    out: dict[int, tuple[float, float, float]] = {}
    for i in ids:
        bn = max(0.0, bm25.get(i, 0.0)) / top_b if has_b else 0.0
        vn = ((sims[i] - lo) / spread if spread > 1e-9 else 1.0) if i in sims else 0.0
        out[i] = (wb * bn + wv * vn, bn, vn)
    return out


def score_item(
    *,
    config: MemoryConfig,
    now: float,
    relevance: tuple[float, float, float],
    bm25: float,
    cosine: float | None,
    value: Mapping[str, Any],
    last_used: float | None,
    access_count: int,
    preference_query: bool,
    on_topic: bool,
    symbol_match: float | None = None,
) -> ScoreParts:
    """Score one candidate under the configured profile; returns the parts and the total."""
    fused, bn, vn = relevance
    rec = recency(now, last_used, config.recency_half_life_days)
    conf_raw = value.get("confidence") if isinstance(value, Mapping) else None
    conf = (
        float(conf_raw)
        if isinstance(conf_raw, (int, float)) and not isinstance(conf_raw, bool)
        else config.default_confidence
    )
    conf = min(1.0, max(0.0, conf))
    parts = ScoreParts(
        keyword=fused,
        bm25=bm25,
        bm25_norm=bn,
        vector=cosine if cosine is not None else 0.0,
        vector_norm=vn,
        recency=rec,
        frequency=frequency(access_count, config.frequency_saturation),
        confidence=conf,
        profile=config.profile,
    )
    if config.profile == "coding":
        parts.symbol_match = bn if symbol_match is None else symbol_match
        parts.score = (
            config.w_symbol * parts.symbol_match
            + config.w_code_recency * rec
            + config.w_similarity * vn
        )
    else:
        category = value.get("category") if isinstance(value, Mapping) else None
        parts.category_boost = (
            config.preference_boost if preference_query and category == "preference" else 1.0
        )
        parts.score = (
            config.w_keyword * fused
            + config.w_category * parts.category_boost
            + config.w_recency * rec
            + config.w_frequency * parts.frequency
            + config.w_confidence * conf
        )
    if on_topic:
        parts.topic_boost = config.topic_boost
        parts.score *= config.topic_boost
    return parts
