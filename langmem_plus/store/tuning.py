"""`StoreTuning`: the store's fitted ranking constants and internal thresholds.

Not settings (those are `MemoryConfig`): the constants the ranking was fitted with on the dev
data (BM25, query weights, feedback, fusion, neighbours), the candidate pools, and the
thresholds of the store's own machinery. Each field names the module that reads it. The
defaults are the measured ones (docs/benchmarks.md); benchmarks and experiments override them
with `HybridStore(tuning=StoreTuning(...))` (`--set-config tuning.FIELD=JSON` in
benchmarks/_overrides.py).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["StoreTuning"]


class StoreTuning(BaseModel):
    """The store's internal constants (see the module docstring); immutable, validated."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # --- keyword scoring (BM25) ---------------------------------------------------------
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
    cjk_single_char_weight: float = Field(
        0.3,
        ge=0,
        le=1,
        description="Query weight of one-character Chinese terms (polysemous; in jieba search "
        "mode mostly fragments or light verbs: 吃, 好, 多). 1: no change.",
    )
    # --- pseudo-relevance feedback ----------------------------------------------------
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
        0.3, ge=0, le=1, description="Query weight of the best fused-feedback term."
    )
    common_term_ratio: float = Field(
        0.05,
        gt=0,
        le=1,
        description="Pseudo-relevance feedback never adds an expansion term found in more than "
        "this share of the namespace's documents (at least 2 documents): such a term is weak "
        "evidence and has long postings to read.",
    )
    # --- candidates, fusion, neighbours -------------------------------------------------
    keyword_candidates: int = Field(100, ge=1, description="Keyword candidates per query.")
    vector_candidates: int = Field(100, ge=1, description="Vector neighbours per query.")
    w_fusion_keyword: float = Field(
        0.55,
        ge=0,
        le=1,
        description="Share of BM25 in a candidate's standing among the query's candidates (rest: "
        "vector; standard scores over the candidates), which orders them.",
    )
    w_fusion_keyword_transcript: float = Field(
        0.3,
        ge=0,
        le=1,
        description="w_fusion_keyword for a query written as a transcript (lines behind speaker "
        "labels, text/transcript.py): a conversation so far holds many words incidental to "
        "what a memory is about, so its order leans on the embedding. Chosen on the even half "
        "of MADial-Bench with the bundled USE embeddings (docs/benchmarks.md).",
    )
    fusion_full_share_evidence: float = Field(
        0.2,
        ge=0,
        le=1,
        description="The keyword evidence (keyword_evidence_rate) of a query's best keyword "
        "candidate at which BM25 takes its full share (w_fusion_keyword) of the standing; below "
        "it the share shrinks in proportion, to 0 with no query term matched "
        "(scoring.keyword_share): a question in other words than the memory, whose few "
        "keyword hits match only its common words, is ordered by the embedding. Not for "
        "transcript queries (a conversation matches a small share of its words by nature; "
        "measured: MADial any@5 -0.03). Chosen on the even halves of LoCoMo and the preference "
        "set (docs/results/retrieval_categories.md; 0: off).",
    )
    w_evidence_keyword: float = Field(
        0.8,
        ge=0,
        le=1,
        description="Weight of the keyword evidence in the absolute evidence of relevance "
        "1 - (1 - w·keyword)(1 - vector), which puts the relevance on one scale for every query.",
    )
    prior_gate_share: float = Field(
        0.5,
        ge=0,
        le=1,
        description="The priors (category, recency, use, confidence) of a candidate with no "
        "evidence of its own are scaled by the query's scale only when its relevance, on the "
        "scale of the query's best evidence, reaches the floor calibrated on that scale "
        "(floor.DEFAULT_FLOOR) or this share of the best when that is lower (a weak query); "
        "else by its own relevance, so they never lift a memory with no relevance "
        "(scoring.prior_scales; docs/concepts.md).",
    )
    keyword_evidence_rate: float = Field(
        1.5,
        gt=0,
        description="Keyword evidence = 1 - exp(-rate · BM25 / the query's IDF mass): how fast "
        "matching a share of the query's terms saturates.",
    )
    neighbour_weight: float = Field(
        0.35,
        ge=0,
        le=1,
        description="Share of fused relevance an item inherits from its insertion-order "
        "neighbours of the same session (items naming the same session_id / chat_id / "
        "conversation_id; conversation context; 0: off).",
    )
    answer_weight: float = Field(
        1.0,
        ge=0,
        le=1,
        description="A question turn among the best candidates passes this share of its fused "
        "relevance to the next turn of the same session, the turn that answers it (0: off).",
    )
    answer_in_context: bool = Field(
        True,
        description="The answer takes its question turn's relevance in context (after the "
        "neighbour smoothing) when that is higher than the question's own: a question with no "
        'word of the query ("so who\'s doing it?") passes on what its session says before it. '
        "False: the question's own relevance only.",
    )
    vector_common_term_ratio: float = Field(
        0.4,
        ge=0,
        le=1,
        description="The query vector loses the embedding direction of query words held by at "
        "least this share of the namespace's documents (and at least 3): a name most memories "
        "hold no longer pulls every memory about it above the one the question needs "
        "(store/ranking/common_terms.py; chosen with the bundled USE embeddings; 0: off).",
    )
    last_line_weight: float = Field(
        0.5,
        ge=0,
        description="In a query of several lines (a conversation so far), the terms of the last "
        "line weigh 1 + this on the keyword side: the latest turn is what needs answering "
        "(0: every line alike).",
    )
    # --- keyword reads and caches -----------------------------------------------------
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
        "(store/sqlite/rowcache.py), in rows (~300 bytes each); 0 reads them from SQLite on every "
        "query. Exact: every change to an item reaches it through the kw_log table.",
    )
    keyword_cache_postings: int = Field(
        20_000_000,
        ge=0,
        description="In-memory postings cache (store/keyword/cache.py) cap, in postings (~8 bytes "
        "each); 0 reads every query's postings from SQLite. The cache is exact: it replays "
        "every process's writes from the kw_log table before each search. A small "
        "namespace's whole index (keyword_resident_docs) weighs ~15,000 for 100 short "
        "memories: the default holds ~1,300 such users, the least recently searched dropped "
        "past it (benchmarks/users_mix.py).",
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
        description="Namespaces of 2,000 to this many documents load their whole postings into "
        "the cache on their first search (one read; ~0.2 s at 10k items) instead of one cold "
        "read per new query term later.",
    )
    keyword_resident_docs: int = Field(
        1_000,
        ge=0,
        description="A search over one namespace of at most this many documents ranks from that "
        "namespace's whole keyword index (terms, postings, each document's terms) held in "
        "memory (store/keyword/resident.py; ~100 bytes per posting with its terms, ~105 KB for "
        "100 short memories, counted against keyword_cache_postings; patched after writes); "
        "the row cache then holds that namespace's full rows. 0: off (per-term cache). "
        "Larger namespaces stay per-term: patching a held index after a write costs more "
        "with its size (an agent loop at 10k items: 9 ms against 3 ms per recall).",
    )
    cached_postings_scan: int = Field(
        50_000,
        ge=100,
        description="Postings budget per query when served from memory (same rule as "
        "max_postings_scan; in memory a posting costs ~10 ns instead of ~1 us).",
    )
    # --- vector index -------------------------------------------------------------------
    vector_search_thread: bool = Field(
        True,
        description="Run a query's FAISS scans on a worker thread while its keyword scoring "
        "runs (uses a second core; FAISS releases the GIL). Off: everything on the calling "
        "thread. Measured: no gain at 10k items, about 0.6 ms saved at 50k, a loss when the "
        "CPU is contended (docs/benchmarks.md).",
    )
    ann_threshold: int = Field(
        50_000,
        ge=1000,
        description="Namespaces larger than this use an approximate vector index (an HNSW "
        "graph): below it the exact scan costs less (at 16k vectors 0.4 ms against 1.0 ms for "
        "HNSW at efSearch 512), past it the scan grows with the namespace and HNSW barely does "
        "(docs/results/large_namespace.md).",
    )
    hnsw_ef_search: int = Field(
        512,
        ge=1,
        description="Candidates an HNSW search keeps while walking the graph (efSearch): "
        "higher finds more of the exact top 10 and costs more. 512: recall@10 against the "
        "exact scan >= 0.99 for question and dialogue queries on USE vectors at 49k-100k "
        "(docs/results/large_namespace.md).",
    )
    snapshot_min_vectors: int = Field(
        200_000,
        ge=0,
        description="Write the FAISS snapshot file (float32: 2 KB per 512-d vector, 4x the int8 "
        "vectors in SQLite) on close only at or above this many vectors, or whenever a "
        "namespace uses HNSW (building the graph is the slow part of a rebuild); below it no "
        "snapshot is "
        "written, a stale one is removed, and open rebuilds the flat indexes from SQLite, which "
        "measured no slower than loading the snapshot (10k: 0.03 s, 50k: 0.25 s, 100k: 0.7 s, "
        "200k: 2.4 s vs 2.8 s on 2 cores). 0: always write it.",
    )
    # --- Milvus backend ---------------------------------------------------------------
    milvus_client_bm25_max_docs: int = Field(
        16_383,
        ge=0,
        le=16_383,
        description="Milvus: a search over at most this many documents scores its keyword "
        "side with this project's BM25 over Milvus's matches, the same scores as SQLite; a "
        "larger one uses Milvus's own BM25 (other IDF and statistics). 0: always Milvus's. "
        "At most 16,383 (one request returns every match of a term: Milvus caps a limit at "
        "16,384).",
    )
