"""Lifecycle jobs (SPEC R-LIFE) over any LangGraph `BaseStore` holding langmem_plus records:
consolidation (merge / separate episodic pairs), decay, review, eviction and cleanup.

Every job reads one namespace, plans its changes, writes them in one `batch` and returns a
report of counts. Every job is idempotent: run twice with the same `now`, the second run
changes nothing (decay records how many periods it already applied; separated pairs are
remembered in `metadata.separated_from`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, Item, PutOp
from pydantic import BaseModel, Field

from langmem_plus.clock import clock_datetime
from langmem_plus.config import MemoryConfig
from langmem_plus.episodes import is_verbatim
from langmem_plus.errors import ValidationError
from langmem_plus.processors.episodic import EpisodeMerger, EpisodeSeparator, episode_time
from langmem_plus.processors.reviewer import Reviewer
from langmem_plus.records import MemoryRecord, utcnow

__all__ = [
    "CleanupReport",
    "ConsolidationReport",
    "DecayReport",
    "EvictionReport",
    "ReviewReport",
    "cleanup_older_than",
    "consolidate",
    "decay",
    "evict",
    "load_records",
    "review",
    "should_merge",
]

logger = logging.getLogger("langmem_plus.lifecycle")

_PAGE = 1000
MAX_CONSOLIDATION_PASSES = 5  # merge/separate passes until nothing changes


# ------------------------------------------------------------------------------ reports
class ConsolidationReport(BaseModel):
    """What `consolidate` did."""

    scanned: int = 0
    pairs_compared: int = 0
    merged: int = 0
    separated: int = 0
    untouched_pairs: int = 0
    created_ids: list[str] = Field(default_factory=list)
    deleted_ids: list[str] = Field(default_factory=list)
    rewritten_ids: list[str] = Field(default_factory=list)


class DecayReport(BaseModel):
    """What `decay` did."""

    scanned: int = 0
    decayed: int = 0
    deleted: int = 0
    protected: int = 0
    reviewed: int = 0
    kept: int = 0
    deleted_ids: list[str] = Field(default_factory=list)


class ReviewReport(BaseModel):
    """What `review` did."""

    scanned: int = 0
    reviewed: int = 0
    promoted: int = 0
    kept: int = 0
    deleted: int = 0
    deleted_ids: list[str] = Field(default_factory=list)
    promoted_ids: list[str] = Field(default_factory=list)


class EvictionReport(BaseModel):
    """What `evict` did."""

    scanned: int = 0
    evicted: int = 0
    evicted_ids: list[str] = Field(default_factory=list)


class CleanupReport(BaseModel):
    """What `cleanup_older_than` did."""

    scanned: int = 0
    deleted: int = 0
    deleted_ids: list[str] = Field(default_factory=list)


# ------------------------------------------------------------------------------ helpers
def _check_namespace(namespace: Any) -> tuple[str, ...]:
    if (
        not isinstance(namespace, tuple)
        or not namespace
        or not all(isinstance(p, str) and p for p in namespace)
    ):
        raise ValidationError(f"namespace must be a non-empty tuple of strings, got {namespace!r}")
    return namespace


def _items(store: BaseStore, namespace: tuple[str, ...]) -> list[Item]:
    out: list[Item] = []
    offset = 0
    while True:
        page = store.search(namespace, limit=_PAGE, offset=offset)
        out.extend(i for i in page if tuple(i.namespace) == namespace)
        if len(page) < _PAGE:
            return out
        offset += _PAGE


def load_records(store: BaseStore, namespace: tuple[str, ...]) -> list[MemoryRecord]:
    """Every langmem_plus record stored directly in `namespace` (other items are skipped)."""
    namespace = _check_namespace(namespace)
    records = []
    for item in _items(store, namespace):
        try:
            records.append(MemoryRecord.from_item(item))
        except Exception as exc:
            logger.debug("skipping non-record item %s: %s", item.key, exc)
    return records


def _put(namespace: tuple[str, ...], rec: MemoryRecord) -> PutOp:
    return PutOp(namespace, rec.id, rec.to_value())


def _delete(namespace: tuple[str, ...], key: str) -> PutOp:
    return PutOp(namespace, key, None)


def _cfg(config: MemoryConfig | None) -> MemoryConfig:
    if config is not None and not isinstance(config, MemoryConfig):
        raise ValidationError("config must be a MemoryConfig")
    return config or MemoryConfig()


def _now(now: datetime | None, store: BaseStore) -> datetime:
    """`now` checked, or the store's clock (`HybridStore(clock=...)`) when it has one."""
    if now is None:
        clock = getattr(store, "clock", None)
        return clock_datetime(clock) if callable(clock) else utcnow()
    if not isinstance(now, datetime):
        raise ValidationError("now must be a datetime")
    return now if now.tzinfo else now.replace(tzinfo=utcnow().tzinfo)


# --------------------------------------------------------------------------- consolidate
def should_merge(a: MemoryRecord, b: MemoryRecord, config: MemoryConfig | None = None) -> bool:
    """The hard rules for a merge: same `who`, and same chat within 30 min or
    different chats within 7 days (windows from config)."""
    cfg = config or MemoryConfig()
    if a.who != b.who:
        return False
    dt = abs((episode_time(a) - episode_time(b)).total_seconds())
    chat_a = a.chat_id or a.metadata.get("chatid")
    chat_b = b.chat_id or b.metadata.get("chatid")
    if chat_a is not None and chat_a == chat_b:
        return dt <= cfg.lifecycle.merge_window_same_chat_s
    return dt <= cfg.lifecycle.merge_window_diff_chat_s


def _separated(a: MemoryRecord, b: MemoryRecord) -> bool:
    return b.id in (a.metadata.get("separated_from") or []) and a.id in (
        b.metadata.get("separated_from") or []
    )


def _vectors(embeddings: Embeddings, records: list[MemoryRecord]) -> np.ndarray:
    if not records:
        return np.zeros((0, 1), dtype=np.float32)
    vecs = np.asarray(embeddings.embed_documents([r.text for r in records]), dtype=np.float32)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vecs / norms


def consolidate(
    store: BaseStore,
    namespace: tuple[str, ...],
    *,
    embeddings: Embeddings | None = None,
    config: MemoryConfig | None = None,
    merger: EpisodeMerger | None = None,
    separator: EpisodeSeparator | None = None,
    now: datetime | None = None,
) -> ConsolidationReport:
    """Merge duplicate episodic memories and separate confusable ones.

    cosine >= merge_threshold and the hard rules pass -> one merged record replaces the two;
    separate_threshold <= cosine (or a near-duplicate failing the hard rules) -> the
    separator rewrites both; below -> untouched. Pairs are handled most-similar first and
    passes repeat until nothing changes, so a second run finds nothing to do.
    """
    namespace = _check_namespace(namespace)
    cfg = _cfg(config)
    now = _now(now, store)
    if embeddings is None:
        from langmem_plus.embeddings import default_embeddings

        embeddings = default_embeddings()
    merger = merger or EpisodeMerger(config=cfg)
    separator = separator or EpisodeSeparator(config=cfg)
    report = ConsolidationReport()
    # summarised episodes only: exchanges kept verbatim are never merged or rewritten
    episodes = [
        r for r in load_records(store, namespace) if r.kind == "episodic" and not is_verbatim(r)
    ]
    report.scanned = len(episodes)
    current: dict[str, MemoryRecord] = {r.id: r for r in episodes}
    puts: dict[str, PutOp] = {}
    compared: set[frozenset[str]] = set()
    for _ in range(MAX_CONSOLIDATION_PASSES):
        records = list(current.values())
        vecs = _vectors(embeddings, records)
        sims = vecs @ vecs.T if len(records) else np.zeros((0, 0))
        pairs = sorted(
            (
                (float(sims[i, j]), i, j)
                for i in range(len(records))
                for j in range(i + 1, len(records))
            ),
            reverse=True,
        )
        changed = False
        used: set[str] = set()
        for cos, i, j in pairs:
            a, b = records[i], records[j]
            compared.add(frozenset((a.id, b.id)))
            if a.id in used or b.id in used:
                continue
            if cos < cfg.lifecycle.separate_threshold:
                break
            if cos >= cfg.lifecycle.merge_threshold and should_merge(a, b, cfg):
                merged = merger.merge(a, b, now=now)
                for old in (a, b):
                    current.pop(old.id, None)
                    puts[old.id] = _delete(namespace, old.id)
                    report.deleted_ids.append(old.id)
                    if old.id in report.created_ids:
                        report.created_ids.remove(old.id)
                current[merged.id] = merged
                puts[merged.id] = _put(namespace, merged)
                report.created_ids.append(merged.id)
                report.merged += 1
                used.update((a.id, b.id, merged.id))
                changed = True
            elif not _separated(a, b):
                new_a, new_b = separator.separate(a, b, now=now)
                for new in (new_a, new_b):
                    current[new.id] = new
                    puts[new.id] = _put(namespace, new)
                    if new.id not in report.rewritten_ids:
                        report.rewritten_ids.append(new.id)
                report.separated += 1
                used.update((a.id, b.id))
                changed = True
        if not changed:
            break
    report.pairs_compared = len(compared)
    report.untouched_pairs = max(report.pairs_compared - report.merged - report.separated, 0)
    original = {r.id for r in episodes}
    report.deleted_ids = [i for i in report.deleted_ids if i in original]
    report.rewritten_ids = [i for i in report.rewritten_ids if i in current]
    if puts:
        store.batch(list(puts.values()))
    return report


# -------------------------------------------------------------------------------- decay
def _protected(rec: MemoryRecord, cfg: MemoryConfig) -> bool:
    return rec.tier in ("core", "system") or rec.importance >= cfg.lifecycle.core_importance


def _activity_time(rec: MemoryRecord) -> datetime:
    """Decay runs from the last use (store-managed `last_accessed`) or else creation."""
    return max(t for t in (rec.last_accessed, rec.created_at) if t is not None)


def decay(
    store: BaseStore,
    namespace: tuple[str, ...],
    *,
    now: datetime | None = None,
    config: MemoryConfig | None = None,
    reviewer: Reviewer | None = None,
    search: Callable[[str], Sequence[str]] | None = None,
) -> DecayReport:
    """The decay table: episodes x0.8 per 7 days unused and deleted 14 days after they
    happened; facts x0.95 per 7 days unused, deleted below 0.3 or, with a `reviewer`, reviewed
    below 0.5 (KEEP resets to 0.5). Core/system tiers and importance >= 3.0 never decay.
    `metadata.decay` records the periods applied, so re-running is a no-op."""
    namespace = _check_namespace(namespace)
    cfg = _cfg(config)
    now = _now(now, store)
    report = DecayReport()
    puts: list[PutOp] = []
    for rec in load_records(store, namespace):
        report.scanned += 1
        if _protected(rec, cfg):
            report.protected += 1
            continue
        is_episode = rec.category == "episode"
        if is_verbatim(rec) and not rec.metadata.get("chitchat"):
            report.protected += 1  # an exchange as said is ground truth: it does not decay
            continue
        if is_episode and now - episode_time(rec) >= timedelta(
            days=cfg.lifecycle.episode_delete_after_days
        ):
            puts.append(_delete(namespace, rec.id))
            report.deleted += 1
            report.deleted_ids.append(rec.id)
            continue
        after = (
            cfg.lifecycle.episode_decay_after_days
            if is_episode
            else cfg.lifecycle.fact_decay_after_days
        )
        factor = (
            cfg.lifecycle.episode_decay_factor if is_episode else cfg.lifecycle.fact_decay_factor
        )
        ref = _activity_time(rec)
        state = dict(rec.metadata.get("decay") or {})
        applied = int(state.get("periods", 0)) if state.get("since") == ref.isoformat() else 0
        age_days = (now - ref).total_seconds() / 86400
        target = math.floor(age_days / after) if after > 0 and age_days > 0 else 0
        new = rec
        if target > applied:
            new = rec.model_copy(deep=True)
            new.importance = round(rec.importance * factor ** (target - applied), 6)
            new.metadata = {
                **rec.metadata,
                "decay": {"since": ref.isoformat(), "periods": target, "at": now.isoformat()},
            }
        if not is_episode and new.importance < cfg.lifecycle.fact_delete_below:
            puts.append(_delete(namespace, rec.id))
            report.deleted += 1
            report.deleted_ids.append(rec.id)
            continue
        if not is_episode and reviewer is not None and new.importance < cfg.lifecycle.review_low:
            report.reviewed += 1
            decision = reviewer.review(new, mode="decay", search=search)
            if decision.decision == "DELETE":
                puts.append(_delete(namespace, rec.id))
                report.deleted += 1
                report.deleted_ids.append(rec.id)
                continue
            if new is rec:
                new = rec.model_copy(deep=True)
            new.importance = cfg.lifecycle.review_low
            new.metadata = {**new.metadata, "review": {"decision": "KEEP", "at": now.isoformat()}}
            report.kept += 1
        if new is not rec:
            if (
                new.importance != rec.importance
                and "decay" in new.metadata
                and (new.metadata["decay"] != rec.metadata.get("decay"))
            ):
                report.decayed += 1
            puts.append(_put(namespace, new))
    if puts:
        store.batch(puts)
    return report


# ------------------------------------------------------------------------------- review
def _default_search(store: BaseStore, namespace: tuple[str, ...]) -> Callable[[str], Sequence[str]]:
    def search(query: str) -> list[str]:
        try:
            hits = store.search(namespace, query=query, limit=5)
        except Exception as exc:
            logger.info("review search failed: %s", exc)
            return []
        return [str(h.value.get("text", "")) for h in hits if tuple(h.namespace) == namespace]

    return search


def review(
    store: BaseStore,
    namespace: tuple[str, ...],
    *,
    reviewer: Reviewer | None = None,
    config: MemoryConfig | None = None,
    search: Callable[[str], Sequence[str]] | None = None,
    now: datetime | None = None,
) -> ReviewReport:
    """Review memories at importance >= review_high (PROMOTE to core tier, or KEEP) and below
    review_low (KEEP resets to review_low, or DELETE). A KEEP at the promotion level is
    remembered for that importance, so the same memory is not re-reviewed until it changes."""
    namespace = _check_namespace(namespace)
    cfg = _cfg(config)
    now = _now(now, store)
    reviewer = reviewer or Reviewer(config=cfg)
    search = search or _default_search(store, namespace)
    report = ReviewReport()
    puts: list[PutOp] = []
    for rec in load_records(store, namespace):
        report.scanned += 1
        if rec.tier != "normal":
            continue
        if rec.importance >= cfg.lifecycle.review_high:
            mode = "promote"
            last = rec.metadata.get("review") or {}
            if last.get("decision") == "KEEP" and last.get("importance") == rec.importance:
                continue
        elif rec.importance < cfg.lifecycle.review_low:
            mode = "decay"
        else:
            continue
        report.reviewed += 1
        decision = reviewer.review(rec, mode=mode, search=search)  # type: ignore[arg-type]
        new = rec.model_copy(deep=True)
        stamp: dict[str, Any] = {
            "decision": decision.decision,
            "at": now.isoformat(),
            "reason": decision.reason,
        }
        if decision.decision == "DELETE":
            puts.append(_delete(namespace, rec.id))
            report.deleted += 1
            report.deleted_ids.append(rec.id)
            continue
        if decision.decision == "PROMOTE":
            new.tier = "core"
            report.promoted += 1
            report.promoted_ids.append(rec.id)
        else:
            if mode == "decay":
                new.importance = cfg.lifecycle.review_low
            stamp["importance"] = new.importance
            report.kept += 1
        new.metadata = {**new.metadata, "review": stamp}
        puts.append(_put(namespace, new))
    if puts:
        store.batch(puts)
    return report


# ------------------------------------------------------------------------ evict / cleanup
def evict(store: BaseStore, namespace: tuple[str, ...], max_items: int) -> EvictionReport:
    """Keep at most `max_items` records: evict lowest confidence first, then the oldest
    `last_accessed` (or creation). Core and system tiers are never evicted."""
    namespace = _check_namespace(namespace)
    if not isinstance(max_items, int) or isinstance(max_items, bool) or max_items < 0:
        raise ValidationError("max_items must be a non-negative integer")
    records = load_records(store, namespace)
    report = EvictionReport(scanned=len(records))
    excess = len(records) - max_items
    if excess <= 0:
        return report
    candidates = sorted(
        (r for r in records if r.tier == "normal"),
        key=lambda r: (r.confidence, _activity_time(r), r.id),
    )
    victims = candidates[:excess]
    if victims:
        store.batch([_delete(namespace, r.id) for r in victims])
    report.evicted = len(victims)
    report.evicted_ids = [r.id for r in victims]
    return report


def cleanup_older_than(
    store: BaseStore,
    namespace: tuple[str, ...],
    days: float,
    *,
    now: datetime | None = None,
) -> CleanupReport:
    """Delete records created more than `days` ago (system tier excepted)."""
    namespace = _check_namespace(namespace)
    if isinstance(days, bool) or not isinstance(days, int | float) or days < 0:
        raise ValidationError("days must be a non-negative number")
    now = _now(now, store)
    cutoff = now - timedelta(days=days)
    records = load_records(store, namespace)
    victims = [r for r in records if r.tier != "system" and r.created_at < cutoff]
    if victims:
        store.batch([_delete(namespace, r.id) for r in victims])
    return CleanupReport(
        scanned=len(records), deleted=len(victims), deleted_ids=[r.id for r in victims]
    )
