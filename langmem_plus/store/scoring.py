"""The spec score (SPEC R-RET 2) as pure functions, each component kept for explanation.

default profile:
    score = w_keyword·keyword + w_category·category_boost + w_recency·recency
          + w_frequency·frequency + w_confidence·confidence,   ×topic_boost on current_topic
coding profile:
    score = w_symbol·symbol_match + w_code_recency·recency + w_similarity·similarity
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from langmem_plus.config import MemoryConfig

__all__ = ["COMPONENTS", "ScoreParts", "fuse_arrays", "score_batch"]

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
        return {f: getattr(self, f) for f in COMPONENTS}


COMPONENTS = tuple(ScoreParts.__dataclass_fields__)
"""The names of a search hit's `components`, in order (the fields of `ScoreParts`)."""


def _zscores(values: np.ndarray) -> np.ndarray:
    """Standard scores over the candidates (all zero when the signal has no spread)."""
    sd = float(values.std())
    if sd <= 1e-12:
        return np.zeros_like(values)
    return (values - float(values.mean())) / sd


def fuse_arrays(
    bm25: np.ndarray, cosine: np.ndarray, w_keyword: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fused text relevance of aligned candidate arrays: (fused, bm25_norm, vector_norm),
    all in [0, 1] (cosine NaN: the candidate has no vector).

    Each signal is turned into standard scores over the candidate set (z = (x - mean) / std),
    so a signal counts by how far an item stands out from the other candidates, not by its
    raw scale: BM25 grows with query length and the number of matched terms, while cosine
    lives in a narrow, model-specific band. The weighted sum w·z_bm25 + (1-w)·z_cos is then
    min-max scaled to [0, 1] over the candidates. A signal without spread contributes nothing
    (the other carries the ranking); candidates with no vector count as the lowest cosine.
    `bm25_norm` (BM25 / best BM25) and `vector_norm` (min-max cosine) explain the inputs.
    Measured against fixed max/min-max weighting in docs/benchmarks.md.
    """
    b = np.maximum(bm25, 0.0)
    has = ~np.isnan(cosine)
    has_v = bool(has.any())
    lo = float(cosine[has].min()) if has_v else 0.0
    hi = float(cosine[has].max()) if has_v else 0.0
    c = np.where(has, cosine, lo)
    top_b = float(b.max()) if len(b) else 0.0
    has_b = top_b > 0
    wb = w_keyword if (has_b and has_v) else (1.0 if has_b else 0.0)
    wv = 1.0 - wb if has_v else 0.0
    bn = b / top_b if has_b else np.zeros_like(b)
    spread = hi - lo
    vn = (c - lo) / spread if spread > 1e-9 else np.where(has, 1.0, 0.0)
    raw = wb * _zscores(b) + wv * _zscores(c)
    r_lo, r_hi = float(raw.min()), float(raw.max())
    # When no signal separates the candidates, fall back to the plain weighted inputs.
    fused = (raw - r_lo) / (r_hi - r_lo) if r_hi - r_lo > 1e-12 else wb * bn + wv * vn
    return fused, bn, vn


def score_batch(
    *,
    config: MemoryConfig,
    now: float,
    fused: np.ndarray,
    last_used: np.ndarray,
    access_count: np.ndarray,
    confidence: np.ndarray,
    preference_item: np.ndarray,
    preference_query: bool,
    on_topic: np.ndarray,
    symbol_match: np.ndarray,
    vector_norm: np.ndarray,
) -> dict[str, np.ndarray]:
    """Vectorised spec score over candidates; returns the score and every component array.

    `last_used` holds epoch seconds (NaN: never), `confidence` NaN means "none given"
    (config.default_confidence is used).
    """
    age_days = np.maximum(0.0, now - last_used) / _DAY
    rec = np.where(
        np.isnan(last_used), 0.0, 0.5 ** (age_days / config.score.recency_half_life_days)
    )
    freq = np.where(
        access_count > 0,
        np.minimum(1.0, np.log1p(access_count) / math.log1p(config.score.frequency_saturation)),
        0.0,
    )
    conf = np.clip(
        np.where(np.isnan(confidence), config.score.default_confidence, confidence), 0, 1
    )
    cat = np.where(preference_item & preference_query, config.score.preference_boost, 1.0)
    if config.score.profile == "coding":
        score = (
            config.score.w_symbol * symbol_match
            + config.score.w_code_recency * rec
            + config.score.w_similarity * vector_norm
        )
        cat = np.ones_like(score)
    else:
        score = (
            config.score.w_keyword * fused
            + config.score.w_category * cat
            + config.score.w_recency * rec
            + config.score.w_frequency * freq
            + config.score.w_confidence * conf
        )
    topic = np.where(on_topic, config.score.topic_boost, 1.0)
    return {
        "score": score * topic,
        "category_boost": cat,
        "recency": rec,
        "frequency": freq,
        "confidence": conf,
        "topic_boost": topic,
    }
