"""The search path's lean fusion gives, bit for bit, the values of the plain NumPy formulas
it replaced (so a faster search never reorders tied candidates or moves a score)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from langmem_plus.config import MemoryConfig
from langmem_plus.store.ranking.scoring import (
    ORDER_KEEPING_SCALE,
    FusionTuning,
    cosine_side,
    fuse_arrays,
    keyword_evidence,
    score_batch,
    standing_minmax,
)

TUNING = FusionTuning(
    w_standing_keyword=0.55, keyword_rate=1.5, w_evidence_keyword=0.8, background=0.2
)


def reference_zscores(values: np.ndarray) -> np.ndarray:
    sd = float(values.std())
    if sd <= 1e-12:
        return np.zeros_like(values)
    return (values - float(values.mean())) / sd


def reference_zscore_of(x: float, values: np.ndarray) -> float:
    sd = float(values.std())
    return 0.0 if sd <= 1e-12 else float((x - values.mean()) / sd)


def reference_standing(
    bm25: np.ndarray, cosine: np.ndarray, w_keyword: float, background: float | None = None
) -> np.ndarray:
    """The formulation through NumPy's methods (std, mean, min, max, clip); with a
    `background`, the zero is no evidence at all when every candidate stands above it."""
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
    raw = wb * reference_zscores(b) + wv * reference_zscores(c)
    r_lo, r_hi = float(raw.min()), float(raw.max())
    if background is not None and r_hi - r_lo > 1e-12:
        nothing = wb * reference_zscore_of(0.0, b) + wv * reference_zscore_of(background, c)
        r_lo = min(r_lo, nothing)
    return (raw - r_lo) / (r_hi - r_lo) if r_hi - r_lo > 1e-12 else wb * bn + wv * vn


def reference_vector_evidence(cosine: np.ndarray, background: float) -> np.ndarray:
    c = np.where(np.isnan(cosine), background, cosine)
    return np.clip((c - background) / (1.0 - background), 0.0, 1.0)


bm25s = st.lists(
    st.one_of(st.floats(0, 40, allow_nan=False), st.just(0.0), st.just(2.5)),
    min_size=1,
    max_size=120,
)
cosine_values = st.one_of(
    st.floats(-1, 1, allow_nan=False), st.just(float("nan")), st.just(0.3), st.just(0.2)
)


@given(bm25s, st.data())
def test_fusion_equals_the_numpy_reference_exactly(bm: list[float], data: st.DataObject):
    cos = np.array(data.draw(st.lists(cosine_values, min_size=len(bm), max_size=len(bm))))
    b = np.array(bm)
    mass = data.draw(st.floats(0, 40, allow_nan=False))
    want_f = reference_standing(b, cos, TUNING.w_standing_keyword)
    assert np.array_equal(standing_minmax(b, cos, TUNING.w_standing_keyword), want_f)
    got = fuse_arrays(b, cos, mass, tuning=TUNING)
    want_v = reference_vector_evidence(cos, TUNING.background)
    assert np.array_equal(got.vector, want_v)
    k = keyword_evidence(b, mass, TUNING.keyword_rate)
    ev = 1.0 - (1.0 - TUNING.w_evidence_keyword * k) * (1.0 - want_v)
    assert np.array_equal(got.evidence, ev)
    want_r = reference_standing(b, cos, TUNING.w_standing_keyword, TUNING.background)
    top = max(float(ev[int(np.argmax(want_r))]), ORDER_KEEPING_SCALE)
    assert np.array_equal(got.relevance, want_r * top)


@given(bm25s, st.data())
def test_refusion_with_the_kept_cosine_side_equals_a_fresh_fusion(
    bm: list[float], data: st.DataObject
):
    cos = np.array(data.draw(st.lists(cosine_values, min_size=len(bm), max_size=len(bm))))
    side = cosine_side(cos, TUNING.background)
    more = np.array(data.draw(st.lists(st.floats(0, 5), min_size=len(bm), max_size=len(bm))))
    b = np.array(bm) + more  # new keyword scores (a feedback round), same cosines
    fresh = fuse_arrays(b, cos, 3.0, tuning=TUNING)
    kept = fuse_arrays(b, cos, 3.0, tuning=TUNING, side=side)
    for name in ("relevance", "keyword", "vector", "evidence"):
        assert np.array_equal(getattr(fresh, name), getattr(kept, name))


def reference_score(cfg: MemoryConfig, now: float, cols: dict[str, Any]) -> dict[str, Any]:
    """The spec score with every formula applied (no shortcut for unused items)."""
    sc = cfg.score
    age_days = np.maximum(0.0, now - cols["last_used"]) / 86400.0
    rec = np.where(np.isnan(cols["last_used"]), 0.0, 0.5 ** (age_days / sc.recency_half_life_days))
    ac = cols["access_count"]
    freq = np.where(
        ac > 0, np.minimum(1.0, np.log1p(ac) / math.log1p(sc.frequency_saturation)), 0.0
    )
    conf = np.clip(
        np.where(np.isnan(cols["confidence"]), sc.default_confidence, cols["confidence"]), 0, 1
    )
    cat = np.where(cols["preference_item"] & cols["preference_query"], sc.preference_boost, 1.0)
    score = sc.w_keyword * cols["fused"] + cols["prior_scale"] * (
        sc.w_category * cat + sc.w_recency * rec + sc.w_frequency * freq + sc.w_confidence * conf
    )
    topic = np.where(cols["on_topic"], sc.topic_boost, 1.0)
    return {
        "score": score * topic,
        "category_boost": cat,
        "recency": rec,
        "frequency": freq,
        "confidence": conf,
        "topic_boost": topic,
    }


@given(st.integers(1, 60), st.data())
def test_score_batch_equals_the_full_formula_exactly(n: int, data: st.DataObject):
    def floats(lo: float, hi: float, nan: bool = False) -> np.ndarray:
        one = st.floats(lo, hi, allow_nan=False)
        return np.array(
            data.draw(
                st.lists(st.one_of(one, st.just(np.nan)) if nan else one, min_size=n, max_size=n)
            )
        )

    def flags() -> np.ndarray:
        return np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)

    used = data.draw(st.booleans())
    cols = {
        "fused": floats(0, 1),
        "last_used": floats(1.6e9, 1.8e9, nan=True),
        "access_count": floats(0, 50).round() if used else np.zeros(n),
        "confidence": floats(-0.5, 1.5, nan=True),
        "preference_item": flags(),
        "preference_query": data.draw(st.booleans()),
        "on_topic": flags(),
        "prior_scale": data.draw(st.floats(0, 1)),
    }
    cfg = MemoryConfig()
    got = score_batch(
        config=cfg, now=1.75e9, symbol_match=np.zeros(n), vector_norm=np.zeros(n), **cols
    )
    want = reference_score(cfg, 1.75e9, cols)
    assert set(got) == set(want)
    for name, arr in want.items():
        assert np.array_equal(got[name], arr), name


@given(
    st.lists(st.floats(-1e3, 1e3, allow_nan=False, width=32), min_size=1, max_size=64),
    st.booleans(),
)
def test_a_query_made_unit_equals_normalise_bit_for_bit(values: list[float], zero: bool) -> None:
    """The vector scan's one-row `unit_query` does `normalise`'s operations (zero vector too)."""
    from langmem_plus.store.vector.faissns import normalise, unit_query

    v = np.zeros(len(values), np.float32) if zero else np.asarray(values, np.float32)
    got, want = unit_query(v), normalise(v.reshape(1, -1))
    assert got.dtype == want.dtype == np.float32 and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
