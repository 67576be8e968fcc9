"""MemoryConfig: every weight, limit and threshold of SPEC.md in one validated place."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["MemoryConfig", "ScoreProfile"]

ScoreProfile = Literal["default", "coding"]


class MemoryConfig(BaseModel):
    """Tunable knobs of langmem_plus, with the source documents' defaults.

    Similarity thresholds (`merge_threshold`, `separate_threshold`) depend on the embedding
    model's similarity scale; the defaults are calibrated for the bundled USE-multilingual
    model (see docs/calibration.md: duplicates score 0.83-0.96, confusable events 0.59-0.85,
    unrelated 0.08-0.26) and must be re-calibrated for another model
    (`benchmarks/calibrate_thresholds.py`).
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)

    # --- R-RET 2: the spec score -------------------------------------------
    w_keyword: float = Field(0.4, ge=0, description="Weight of the fused text relevance.")
    w_category: float = Field(0.2, ge=0, description="Weight of the category boost.")
    w_recency: float = Field(0.15, ge=0, description="Weight of recency (half-life decay).")
    w_frequency: float = Field(0.1, ge=0, description="Weight of log-normalised access count.")
    w_confidence: float = Field(0.15, ge=0, description="Weight of the item's confidence.")
    preference_boost: float = Field(
        1.5, ge=1, description="category_boost for preference items on preference queries."
    )
    topic_boost: float = Field(1.3, ge=1, description="Multiplier for items on current_topic.")
    recency_half_life_days: float = Field(7.0, gt=0, description="Recency halves this often.")
    frequency_saturation: int = Field(
        100, ge=1, description="access_count at which log-normalised frequency reaches 1."
    )
    default_confidence: float = Field(
        0.5, ge=0, le=1, description="Confidence assumed for items that carry none."
    )
    # --- coding profile ---------------------------------------------------
    profile: ScoreProfile = Field(
        "default",
        description="'default' (relevance, category, recency, use, confidence) or 'coding' "
        "(code symbols, recency, similarity).",
    )
    w_symbol: float = Field(0.4, ge=0, description="coding profile: symbol match weight.")
    w_code_recency: float = Field(0.3, ge=0, description="coding profile: recency weight.")
    w_similarity: float = Field(0.3, ge=0, description="coding profile: similarity weight.")

    # --- R-RET 1: hybrid recall -------------------------------------------------------
    bm25_k1: float = Field(1.5, gt=0, description="BM25 term-frequency saturation.")
    bm25_b: float = Field(
        0.3,
        ge=0,
        le=1,
        description="BM25 length normalisation (0.3, not 0.75: short memories and turns; "
        "a long one carries more, not noise. docs/benchmarks.md).",
    )
    bm25_epsilon: float = Field(
        0.0,
        ge=0,
        description="Floor for negative IDF (x mean IDF; the store never goes below 0.01). 0: a "
        "term in half or more of the namespace (a user's or speaker's name in every memory) "
        "carries almost nothing, instead of favouring items that repeat it.",
    )
    bm25_k3: float = Field(
        1.0,
        ge=0,
        description="Query term frequency saturation: a term repeated n times in the query "
        "weighs (k3+1)·n/(k3+n); 0 counts each distinct term once.",
    )
    prf_terms: int = Field(
        10,
        ge=0,
        description="Pseudo-relevance feedback: add this many expansion terms taken from the "
        "top `prf_docs` keyword hits (0: off).",
    )
    prf_docs: int = Field(3, ge=1, description="Feedback documents read for expansion terms.")
    prf_weight: float = Field(
        0.5,
        ge=0,
        le=1,
        description="Query weight of the best expansion term (others proportionally less; "
        "original terms weigh 1).",
    )
    prf_fused_docs: int = Field(
        3,
        ge=0,
        description="Second feedback round: up to prf_terms expansion terms from this many best "
        "*fused* (keyword + vector) candidates re-score the candidates, then fusion runs again "
        "(0: off; needs prf_terms > 0).",
    )
    prf_fused_weight: float = Field(
        0.5, ge=0, le=1, description="Query weight of the best fused-feedback term."
    )
    cjk_single_char_weight: float = Field(
        0.3,
        ge=0,
        le=1,
        description="Query weight of one-character Chinese terms (polysemous; in jieba search "
        "mode mostly fragments or light verbs: 吃, 好, 多). 1: no change.",
    )
    neighbour_weight: float = Field(
        0.35,
        ge=0,
        le=1,
        description="Share of fused relevance an item inherits from its insertion-order "
        "neighbours of the same session (items naming the same session_id / chat_id / "
        "conversation_id; conversation context; 0: off).",
    )
    keyword_candidates: int = Field(100, ge=1, description="Keyword candidates per query.")
    vector_candidates: int = Field(100, ge=1, description="Vector neighbours per query.")
    common_term_ratio: float = Field(
        0.05,
        gt=0,
        le=1,
        description="Terms in more than this share of a namespace only re-score candidates "
        "found by rarer terms (keeps queries fast at 1M items).",
    )
    max_postings_scan: int = Field(
        2000,
        ge=100,
        description="Postings budget per query: terms are read rarest first; a term past the "
        "budget only re-scores the candidates already found (or, if nothing rarer matched, "
        "contributes its most recent postings). Bounds keyword latency at any store size.",
    )
    row_cache_rows: int = Field(
        250_000,
        ge=0,
        description="In-memory cache of the ranking columns of candidate items "
        "(store/rowcache.py), in rows (~300 bytes each); 0 reads them from SQLite on every "
        "query. Exact: every change to an item reaches it through the kw_log table.",
    )
    keyword_cache_postings: int = Field(
        20_000_000,
        ge=0,
        description="In-memory postings cache (store/kwcache.py) cap, in postings (~8 bytes "
        "each); 0 reads every query's postings from SQLite. The cache is exact: it replays "
        "every process's writes from the kw_log table before each search.",
    )
    keyword_cache_max_docs: int = Field(
        150_000,
        ge=0,
        description="Searches over more documents than this read postings from SQLite "
        "(bounded by max_postings_scan) instead of the in-memory cache: at 1M items a common "
        "term's postings are too long to score in full per query.",
    )
    keyword_cache_warm_docs: int = Field(
        20_000,
        ge=0,
        description="Namespaces of up to this many documents load their whole keyword index "
        "into the cache on their first search (one read; ~0.2 s at 10k items) instead of one "
        "cold read per new query term later.",
    )
    cached_postings_scan: int = Field(
        50_000,
        ge=100,
        description="Postings budget per query when served from memory (same rule as "
        "max_postings_scan; in memory a posting costs ~10 ns instead of ~1 us).",
    )
    w_fusion_keyword: float = Field(
        0.55, ge=0, le=1, description="Share of BM25 in the fused text relevance (rest: vector)."
    )
    ann_threshold: int = Field(
        200_000,
        ge=1000,
        description="Namespaces larger than this use an approximate (IVF) vector index.",
    )
    vector_search_thread: bool = Field(
        True,
        description="Run a query's FAISS scans on a worker thread while its keyword scoring "
        "runs (uses a second core; FAISS releases the GIL). Off: everything on the calling "
        "thread.",
    )
    ivf_nprobe: int = Field(
        64,
        ge=1,
        description="IVF lists probed per query (recall@10 vs exact on USE vectors: ~0.92-0.99 at "
        "64, 0.86-0.97 at 32; docs/results/vector_recall.md).",
    )
    vector_storage: Literal["int8", "float16"] = Field(
        "int8",
        description="On-disk form of new vectors in SQLite. 'int8': per-vector symmetric int8 "
        "codes plus a float32 scale (dims + 4 bytes: 516 B at 512-d, half of float16); on USE "
        "vectors the cosine error is 1.7e-4 on average (max 1.3e-3) and recall@10 against "
        "float32 0.998 (docs/results/vector_recall.md); it is what brings 1,000 turns under "
        "2 MB. "
        "'float16': 2 bytes per dimension. Both are always read, so a store may mix them.",
    )
    snapshot_min_vectors: int = Field(
        200_000,
        ge=0,
        description="Write the FAISS snapshot file (float32: 2 KB per 512-d vector, 4x the int8 "
        "vectors in SQLite) on close only at or above this many vectors, or whenever a "
        "namespace uses IVF (rebuilding IVF needs k-means training); below it no snapshot is "
        "written, a stale one is removed, and open rebuilds the flat indexes from SQLite, which "
        "measured no slower than loading the snapshot (10k: 0.03 s, 50k: 0.25 s, 100k: 0.7 s, "
        "200k: 2.4 s vs 2.8 s on 2 cores). 0: always write it.",
    )
    max_query_chars: int = Field(
        10_000, ge=16, description="Longer queries are truncated (a query is data, never an error)."
    )
    record_costs: bool = Field(
        True,
        description="Keep each turn's per-stage costs (ms, model calls, tokens) in the "
        "database for `langmem-plus stats --costs` (about 100 bytes per exchange); the "
        "on_cost callback and the reports get them either way.",
    )
    max_item_chars: int = Field(
        100_000,
        ge=1,
        description="A put whose text to index (and embed) is longer, or whose value is more "
        "than 10x this as JSON, is refused with ValidationError before any embedding work "
        "(the facade, REST and CLI stop at the same 100,000 characters of text).",
    )

    # --- R-RET 3 ---------------------------------------------------------------------
    retrieval_limit: int = Field(5, ge=1, description="Top-N memories recalled per turn.")

    # --- R-WM -------------------------------------------------------------------------
    working_memory_ttl_minutes: float = Field(30.0, gt=0, description="WM expiry.")
    window_max_turns: int = Field(20, ge=2, description="Messages kept in the window.")
    summarize_every: int = Field(5, ge=1, description="Rolling summary chunk size (turns).")
    summarize_after: int = Field(10, ge=2, description="Summaries start once this many turns.")
    keep_verbatim_turns: int = Field(5, ge=1, description="Recent turns kept verbatim.")

    # --- R-LIFE -----------------------------------------------------------------------
    merge_threshold: float = Field(
        0.81,
        ge=-1,
        le=1,
        description="cosine >= this: merge (0.81 calibrated for the default USE embeddings).",
    )
    separate_threshold: float = Field(
        0.55,
        ge=-1,
        le=1,
        description="cosine >= this: separate (0.55 calibrated for the default USE embeddings).",
    )
    merge_window_same_chat_s: int = Field(1800, ge=0, description="Same chat merge window.")
    merge_window_diff_chat_s: int = Field(604800, ge=0, description="Cross chat merge window.")
    episode_decay_after_days: float = Field(7, ge=0)
    episode_decay_factor: float = Field(0.8, gt=0, le=1)
    episode_delete_after_days: float = Field(14, ge=0)
    fact_decay_after_days: float = Field(7, ge=0)
    fact_decay_factor: float = Field(0.95, gt=0, le=1)
    fact_delete_below: float = Field(0.3, ge=0)
    review_low: float = Field(0.5, ge=0, description="Importance below this goes to review.")
    review_high: float = Field(2.5, ge=0, description="Importance at/above this: promote review.")
    core_importance: float = Field(3.0, ge=0, description="Importance that never decays.")
    boost_amount: float = Field(0.3, ge=0, description="BOOST adds this importance.")
    reviewer_max_rounds: int = Field(3, ge=0, le=10)
    eviction_threshold: int | None = Field(None, ge=1, description="Optional item cap.")

    # --- R-CTX ------------------------------------------------------------------------
    ctx_profile: bool = True
    ctx_rolling_summary: bool = True
    ctx_memories: bool = True
    ctx_session_summaries: bool = True
    ctx_max_chars_profile: int = Field(1200, ge=0)
    ctx_max_chars_summary: int = Field(1500, ge=0)
    ctx_max_chars_memories: int = Field(2000, ge=0)
    ctx_recent_sessions: int = Field(3, ge=0)

    # --- R-PROC -----------------------------------------------------------------------
    llm_max_retries: int = Field(3, ge=0, description="Retries with 1 s, 2 s, 4 s backoff.")
    llm_backoff_base_s: float = Field(1.0, ge=0)

    @model_validator(mode="after")
    def _check_consistency(self) -> MemoryConfig:
        if self.separate_threshold > self.merge_threshold:
            raise ValueError(
                f"separate_threshold ({self.separate_threshold}) must not exceed "
                f"merge_threshold ({self.merge_threshold})"
            )
        if self.keep_verbatim_turns >= self.summarize_after:
            raise ValueError("keep_verbatim_turns must be smaller than summarize_after")
        return self
