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

__all__ = [
    "COMPONENTS",
    "CosineSide",
    "Fused",
    "FusionTuning",
    "ScoreParts",
    "cosine_side",
    "evidence",
    "fuse_arrays",
    "keyword_evidence",
    "keyword_share",
    "prior_scales",
    "score_batch",
    "standing",
    "vector_evidence",
]

_DAY = 86400.0


@dataclass(frozen=True)
class FusionTuning:
    """The knobs of `fuse_arrays`: BM25's share in the standing, the keyword evidence's rate
    and weight, the embedding model's background cosine, and the keyword evidence at which
    BM25 takes its full share (`keyword_share`; 0: always)."""

    w_standing_keyword: float
    keyword_rate: float
    w_evidence_keyword: float
    background: float
    full_share_evidence: float = 0.0


@dataclass
class Fused:
    """Aligned arrays: relevance, keyword evidence, vector evidence, absolute evidence."""

    relevance: np.ndarray
    keyword: np.ndarray
    vector: np.ndarray
    evidence: np.ndarray


@dataclass
class ScoreParts:
    """Why an item ranked where it did: every input of its final score.

    `relevance`: the text relevance the spec's w_keyword weighs (scoring.fuse_arrays);
    `bm25` raw BM25 and `bm25_norm` the keyword evidence (share of the query's IDF mass
    matched, saturating); `keyword` the same keyword evidence (the name kept for
    compatibility; before 0.x it held the fused relevance); `vector` the cosine and
    `vector_norm` the vector evidence (cosine above the model's background); `evidence` the
    two combined, this item's own absolute evidence; `query_evidence` the query's scale, the
    factor that scales the relevance and the priors (category, recency, use, confidence) alike;
    `prior_scale` what this item's priors were multiplied by: the query's scale, or for an item
    with no evidence of its own and little relevance its relevance (`prior_scales`).
    The scale is the judgement that the scope holds something about the query where the
    store's embeddings have one (store/ranking/judgement.py), else the evidence of the query's best
    candidate. What the judgement reads, the same for every hit of a query: `best_evidence`
    (the best candidate's evidence), `best_cosine` and `unseen_names` (the share of the names
    the query mentions that the scope never saw). `recency` of a record is counted on the
    user's timeline (store/seams.py prior_columns). `superseded` is 1 for an item shown though
    a later statement replaced it (a superseded fact in history, an episode whose facts were
    superseded or that was corrected): its score is halved (ranker.DEMOTION). `newer_version`
    is 1 for a later episode moved above an earlier one about the same thing (versions.py);
    the list is then no longer sorted by score at that place.
    """

    score: float = 0.0
    relevance: float = 0.0
    keyword: float = 0.0
    bm25: float = 0.0
    bm25_norm: float = 0.0
    vector: float = 0.0
    vector_norm: float = 0.0
    evidence: float = 0.0
    query_evidence: float = 1.0
    prior_scale: float = 1.0
    best_evidence: float = 0.0
    best_cosine: float = 0.0
    unseen_names: float = 0.0
    category_boost: float = 1.0
    recency: float = 0.0
    frequency: float = 0.0
    confidence: float = 0.0
    topic_boost: float = 1.0
    symbol_match: float = 0.0
    superseded: float = 0.0
    newer_version: float = 0.0
    profile: str = "default"

    def as_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in COMPONENTS}


COMPONENTS = tuple(ScoreParts.__dataclass_fields__)
"""The names of a search hit's `components`, in order (the fields of `ScoreParts`)."""


def standing(
    bm25: np.ndarray, cosine: np.ndarray, w_keyword: float, background: float
) -> np.ndarray:
    """How each candidate stands against the query's best one, in [0, 1] (the best: 1).

    Each signal is turned into standard scores over the candidates (z = (x - mean) / std), so
    it counts by how far an item stands out, not by its raw scale (BM25 grows with query length;
    cosine lives in a narrow, model-specific band): raw = w·z_bm25 + (1-w)·z_cos orders the
    candidates (measured against fixed weightings in docs/benchmarks.md). The standing is
    (raw - raw0) / (raw_best - raw0), where raw0 is the raw value of no evidence at all (BM25 0,
    the background cosine): a ratio of evidence above nothing, which stays near 1 for a
    candidate almost as good as the best even among two (a min-max would give it 0). A signal
    without spread contributes nothing; a candidate with no vector counts as the lowest cosine.
    """
    b = np.maximum(bm25, 0.0)
    has = ~np.isnan(cosine)
    has_v = bool(has.any())
    lo = float(cosine[has].min()) if has_v else 0.0
    c = np.where(has, cosine, lo)
    has_b = bool(len(b)) and float(b.max()) > 0
    wb = w_keyword if (has_b and has_v) else (1.0 if has_b else 0.0)
    wv = 1.0 - wb if has_v else 0.0
    # raw - raw0 = wb·b/sd_b + wv·(c - background)/sd_c (a signal without spread: 0)
    sd_b, sd_c = float(b.std()), float(c.std())
    above = np.zeros_like(b)
    if sd_b > 1e-12:
        above = above + wb * b / sd_b
    if sd_c > 1e-12:
        above = above + wv * (c - background) / sd_c
    if len(b) == 0:
        return above
    best = float(above.max())
    if best <= 1e-12:  # nothing stands out (one candidate, or no evidence anywhere)
        return np.where(above >= best - 1e-12, 1.0, 0.0) if best > 0 else np.ones_like(b)
    return np.clip(above / best, 0.0, 1.0)


def keyword_evidence(bm25: np.ndarray, mass: float, rate: float) -> np.ndarray:
    """Keyword evidence in [0, 1): 1 - exp(-rate·x), x = BM25 / the query's weighted IDF
    mass (the BM25 of an average-length document holding every query term once), i.e. the
    share of the query matched, saturating. Absolute: no other candidate changes it."""
    if mass <= 1e-9:  # no query term the index knows
        return np.zeros_like(bm25)
    return 1.0 - np.exp(-rate * np.maximum(bm25, 0.0) / mass)


def _unit_clip(x: np.ndarray) -> np.ndarray:
    """`x` clipped to [0, 1] (np.clip's values, without its Python-level dispatch)."""
    return np.minimum(np.maximum(x, 0.0), 1.0)


def vector_evidence(cosine: np.ndarray, background: float) -> np.ndarray:
    """The cosine above the embedding model's background (the cosine unrelated texts get),
    rescaled to [0, 1]; NaN (no vector) and anything at or below the background give 0.
    Background 0 keeps the plain cosine (as LangGraph's stores report it)."""
    return _cosine_evidence(np.where(np.isnan(cosine), background, cosine), background)


def _cosine_evidence(c: np.ndarray, background: float) -> np.ndarray:
    """`vector_evidence` of cosines without NaN."""
    return _unit_clip((c - background) / (1.0 - background))


def evidence(k: np.ndarray, v: np.ndarray, w_keyword: float) -> np.ndarray:
    """Absolute evidence of relevance in [0, 1] from keyword evidence `k` and vector evidence
    `v`, combined as independent evidence: 1 - (1 - w·k)(1 - v). With no keyword match it is
    the vector evidence itself."""
    return 1.0 - (1.0 - w_keyword * k) * (1.0 - v)


@dataclass(frozen=True)
class CosineSide:
    """The vector side of fusion for one query's candidates: what a re-fusion after new
    keyword scores (the feedback round) reuses unchanged.

    `filled`: the cosines with NaN (no vector) taken as the lowest one; `lo`/`hi` their
    range over the candidates with a vector; `z` their standard scores; `evidence` the
    vector evidence (`vector_evidence`); `every`: every candidate has a vector (no NaN).
    """

    has: np.ndarray
    has_v: bool
    filled: np.ndarray
    lo: float
    hi: float
    z: np.ndarray
    evidence: np.ndarray
    every: bool = False


def cosine_side(cosine: np.ndarray, background: float) -> CosineSide:
    """The `CosineSide` of aligned candidate cosines (NaN: no vector)."""
    has = ~np.isnan(cosine)
    every = bool(has.all())
    has_v = every or bool(has.any())
    if has_v:
        with_v = cosine if every else cosine[has]
        lo, hi = float(np.minimum.reduce(with_v)), float(np.maximum.reduce(with_v))
    else:
        lo = hi = 0.0
    # every candidate with a vector (the usual case): nothing to fill, the same values
    c = cosine if every else np.where(has, cosine, lo)
    ev = _cosine_evidence(cosine, background) if every else vector_evidence(cosine, background)
    return CosineSide(has, has_v, c, lo, hi, _zscores(c), ev, every)


ORDER_KEEPING_SCALE = 1e-15
"""The smallest scale of a query's scores: with no evidence at all, they still rank."""


def fuse_arrays(
    bm25: np.ndarray,
    cosine: np.ndarray,
    mass: float,
    *,
    tuning: FusionTuning,
    bm25_evidence: np.ndarray | None = None,
    side: CosineSide | None = None,
    evidence_of: Fused | None = None,
) -> Fused:
    """Text relevance of aligned candidate arrays (cosine NaN: the candidate has no vector).

    relevance = standing × the absolute evidence of the query's best candidate: the best
    candidate scores its own evidence (`evidence`: the share of the query's IDF mass matched
    and the cosine above the model's background, independent of every other candidate), the
    others in proportion to how they stand against it (`standing_minmax`, whose zero is no
    evidence at all when every candidate stands above it: a runner-up is not 0 for being the
    last of a few). So a lone or top hit no longer scores the same whatever it is worth, an
    unrelated query scores low throughout, and the candidates' order is the standing's. Calibrated in docs/results/calibration.md.
    `bm25_evidence`: the BM25 over the query's own terms when `bm25` holds feedback terms
    too (they rank, they are no evidence of an answer); None: `bm25` itself.
    `side`: the cosines' `CosineSide` when the caller holds it already (a re-fusion).
    `evidence_of`: a fusion of the same candidates with the same `bm25_evidence`, mass and
    cosines, whose keyword and absolute evidence are reused (a re-fusion after feedback terms
    changed `bm25` alone).
    """
    if side is None:
        side = cosine_side(cosine, tuning.background)
    v = side.evidence
    if evidence_of is not None:
        k, ev = evidence_of.keyword, evidence_of.evidence
    else:
        k = keyword_evidence(
            bm25 if bm25_evidence is None else bm25_evidence, mass, tuning.keyword_rate
        )
        ev = evidence(k, v, tuning.w_evidence_keyword)
    w = keyword_share(tuning.w_standing_keyword, k, tuning.full_share_evidence)
    f = _standing_minmax(np.maximum(bm25, 0.0), side, w, tuning.background)
    # the best candidate's evidence; never exactly 0, so candidates without any evidence keep
    # their order (scores near 0, relevance below any floor)
    top = max(float(ev[int(np.argmax(f))]), ORDER_KEEPING_SCALE) if len(f) else 0.0
    return Fused(relevance=f * top, keyword=k, vector=v, evidence=ev)


def keyword_share(w_keyword: float, keyword: np.ndarray, full_at: float) -> float:
    """BM25's share in a query's standing: `w_keyword` when the query's best keyword
    candidate matches enough of it (keyword evidence >= `full_at`), less in proportion below.

    BM25 among the candidates counts by standard scores, which reward standing out, not how
    much of the query is matched: a question in other words than the memory ("which language
    do I code in?" against "backend services in Go") matches only its common words ("like")
    or a feedback term, those few hits stand far out, and they pushed the memory the
    embedding found first below the top 5. With little keyword evidence the order leans on
    the embedding; with none (no query term matched, or only feedback or substring scores),
    on it alone. `full_at` 0: always `w_keyword`."""
    if full_at <= 0 or not len(keyword):
        return w_keyword
    return w_keyword * min(1.0, float(np.maximum.reduce(keyword)) / full_at)


def _zscores(values: np.ndarray) -> np.ndarray:
    """Standard scores over the candidates (all zero when the signal has no spread): the
    floating-point operations of `(values - values.mean()) / values.std()`, with the mean
    and the deviations computed once."""
    n = len(values)
    if n == 0:
        return np.zeros_like(values)
    d = values - np.add.reduce(values) / n
    sd = math.sqrt(float(np.add.reduce(d * d) / n))
    if sd <= 1e-12:
        return np.zeros_like(values)
    return d / sd


def standing_minmax(bm25: np.ndarray, cosine: np.ndarray, w_keyword: float) -> np.ndarray:
    """The pre-absolute standing: w·z_bm25 + (1-w)·z_cos min-max scaled over the candidates
    (the best 1, the worst 0); with no spread, the plain weighted inputs (experiment)."""
    return _standing_minmax(np.maximum(bm25, 0.0), cosine_side(cosine, 0.0), w_keyword)


def _standing_minmax(
    b: np.ndarray, side: CosineSide, w_keyword: float, background: float | None = None
) -> np.ndarray:
    """`standing_minmax` of non-negative BM25 `b` and the cosines' `CosineSide`. With a
    `background`, the zero of the scale is no evidence at all (BM25 0, a cosine at the
    background) when every candidate stands above it: the runner-up of two relevant
    candidates is not 0 for being the last (a plain min-max gave it 0, and the same item ~0.4
    once an unrelated memory joined); among candidates that reach below nothing (the usual
    pool) the zero stays the worst one's."""
    n = len(b)
    top_b = float(np.maximum.reduce(b)) if n else 0.0
    has_b = top_b > 0
    has_v = side.has_v
    wb = w_keyword if (has_b and has_v) else (1.0 if has_b else 0.0)
    wv = 1.0 - wb if has_v else 0.0
    raw = wb * _zscores(b) + wv * side.z
    if n == 0:
        return raw
    r_lo, r_hi = float(np.minimum.reduce(raw)), float(np.maximum.reduce(raw))
    if background is not None and r_hi - r_lo > 1e-12:
        r_lo = min(r_lo, _raw_of_nothing(b, side.filled, wb, wv, background))
    if r_hi - r_lo > 1e-12:
        return (raw - r_lo) / (r_hi - r_lo)
    # no spread: the plain weighted inputs
    bn = b / top_b if has_b else np.zeros_like(b)
    spread = side.hi - side.lo
    vn = (side.filled - side.lo) / spread if spread > 1e-9 else np.where(side.has, 1.0, 0.0)
    return wb * bn + wv * vn


def _raw_of_nothing(b: np.ndarray, c: np.ndarray, wb: float, wv: float, background: float) -> float:
    """The standing's raw value (w·z_bm25 + (1-w)·z_cos) of a candidate with no evidence at
    all, BM25 0 and a cosine at the background, on the candidates' standard scores (a signal
    without spread: 0, as for them)."""
    return wb * _zscore_of(0.0, b) + wv * _zscore_of(background, c)


def _zscore_of(x: float, values: np.ndarray) -> float:
    """The standard score of `x` over `values` (0 when they do not spread), as `_zscores`."""
    n = len(values)
    mean = np.add.reduce(values) / n
    d = values - mean
    sd = math.sqrt(float(np.add.reduce(d * d) / n))
    return 0.0 if sd <= 1e-12 else float((x - mean) / sd)


def prior_scales(
    relevance: np.ndarray,
    evidence: np.ndarray,
    scale: float,
    best: float,
    floor: float,
    share: float,
) -> float | np.ndarray:
    """What each candidate's priors (category, recency, use, confidence) are multiplied by.

    The query's `scale` for a candidate with evidence of its own (`evidence` > 0: some of the
    query's words, a cosine above the model's background) or with relevance at the gate; for
    any other candidate its own `relevance` (never exactly 0, so they keep their order). The
    priors reorder what has relevance; they never lift a memory with none above one that has
    it (a recent, unrelated memory scored ~0.43 within a question that matched something).
    The gate is read on the scale of the query's best evidence `best` (the relevance before a
    relevance judgement rescales it, so a judgement moves no rank): the lower of `floor` and
    `share` of the best (in a weak query, half the best still counts). Returns the scale
    itself, a float, when every candidate takes it (the usual case)."""
    gate = min(floor, share * best) * scale / best if best > 0 else 0.0
    full = (evidence > 0) | (relevance >= gate)
    if full.all():
        return scale
    return np.where(full, scale, np.maximum(relevance, ORDER_KEEPING_SCALE))


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
    prior_scale: float | np.ndarray = 1.0,
) -> dict[str, np.ndarray]:
    """Vectorised spec score over candidates; returns the score and every component array.

    `prior_scale` (HybridStore: the query's scale, per candidate `prior_scales`) scales the
    priors (category, recency, use, confidence) with the relevance, so they weigh against it
    as in the spec whatever the query's strength, a weak query scores low throughout, and a
    candidate with no relevance is not lifted by them.

    `last_used` holds epoch seconds (NaN: never), `confidence` NaN means "none given"
    (config.default_confidence is used).
    """
    age_days = np.maximum(0.0, now - last_used) / _DAY
    rec = np.where(
        np.isnan(last_used), 0.0, 0.5 ** (age_days / config.score.recency_half_life_days)
    )
    used = bool(access_count.any())
    if used:
        freq = np.where(
            access_count > 0,
            np.minimum(1.0, np.log1p(access_count) / math.log1p(config.score.frequency_saturation)),
            0.0,
        )
    else:  # nothing used yet (the usual search): the zeros the formula gives
        freq = np.zeros(len(access_count))
    unset = np.isnan(confidence)
    if unset.all():  # no confidence given (the usual case): the default, clipped, throughout
        d = float(config.score.default_confidence)
        conf = np.full(len(confidence), min(max(d, 0.0), 1.0))
    else:
        conf = _unit_clip(np.where(unset, config.score.default_confidence, confidence))
    if preference_query:
        cat = np.where(preference_item, config.score.preference_boost, 1.0)
    else:
        cat = np.ones(len(preference_item))
    sc = config.score
    if sc.profile == "coding":
        score = sc.w_symbol * symbol_match + sc.w_code_recency * rec + sc.w_similarity * vector_norm
        cat = np.ones_like(score)
    else:
        # the same additions, left to right; a term known to be w·1 is added as the scalar w,
        # and w·0 (+0.0) is left out when what it is added to is > 0: equal results
        priors = (sc.w_category * cat if preference_query else sc.w_category) + sc.w_recency * rec
        if used or not (sc.w_category > 0 and math.isfinite(sc.w_frequency)):
            priors = priors + sc.w_frequency * freq
        score = sc.w_keyword * fused + prior_scale * (priors + sc.w_confidence * conf)
    topic = np.where(on_topic, config.score.topic_boost, 1.0)
    return {
        "score": score * topic,
        "category_boost": cat,
        "recency": rec,
        "frequency": freq,
        "confidence": conf,
        "topic_boost": topic,
    }
