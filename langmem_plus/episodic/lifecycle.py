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

from langgraph.store.base import BaseStore, PutOp

from langmem_plus.config import MemoryConfig
from langmem_plus.episodic.consolidation import MAX_CONSOLIDATION_PASSES, consolidate, should_merge
from langmem_plus.episodic.episodes import is_verbatim
from langmem_plus.episodic.lifecycle_base import (
    CleanupReport,
    ConsolidationReport,
    DecayReport,
    EvictionReport,
    ReviewReport,
    check_namespace,
    config_or_default,
    delete_op,
    job_now,
    load_records,
    put_op,
)
from langmem_plus.errors import ValidationError
from langmem_plus.model.records import MemoryRecord
from langmem_plus.processors.reviewer import Reviewer
from langmem_plus.processors.rewriters import episode_time

__all__ = [
    "MAX_CONSOLIDATION_PASSES",
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

logger = logging.getLogger("langmem_plus.episodic.lifecycle")


# -------------------------------------------------------------------------------- decay
def _protected(rec: MemoryRecord, cfg: MemoryConfig) -> bool:
    return rec.tier in ("core", "system") or rec.importance >= cfg.lifecycle.core_importance


def _activity_time(rec: MemoryRecord) -> datetime:
    """Decay runs from the last use (store-managed `last_accessed`) or else creation."""
    return max(t for t in (rec.last_accessed, rec.created_at) if t is not None)


def _decayed(rec: MemoryRecord, is_episode: bool, cfg: MemoryConfig, now: datetime) -> MemoryRecord:
    """`rec` with the decay periods elapsed since its last activity applied (a copy), or
    `rec` itself when no new period has passed."""
    life = cfg.lifecycle
    after = life.episode_decay_after_days if is_episode else life.fact_decay_after_days
    factor = life.episode_decay_factor if is_episode else life.fact_decay_factor
    ref = _activity_time(rec)
    state = dict(rec.metadata.get("decay") or {})
    applied = int(state.get("periods", 0)) if state.get("since") == ref.isoformat() else 0
    age_days = (now - ref).total_seconds() / 86400
    target = math.floor(age_days / after) if after > 0 and age_days > 0 else 0
    if target <= applied:
        return rec
    new = rec.model_copy(deep=True)
    new.importance = round(rec.importance * factor ** (target - applied), 6)
    new.metadata = {
        **rec.metadata,
        "decay": {"since": ref.isoformat(), "periods": target, "at": now.isoformat()},
    }
    return new


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
    namespace = check_namespace(namespace)
    cfg = config_or_default(config)
    now = job_now(now, store)
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
            puts.append(delete_op(namespace, rec.id))
            report.deleted += 1
            report.deleted_ids.append(rec.id)
            continue
        new = _decayed(rec, is_episode, cfg, now)
        if not is_episode and new.importance < cfg.lifecycle.fact_delete_below:
            puts.append(delete_op(namespace, rec.id))
            report.deleted += 1
            report.deleted_ids.append(rec.id)
            continue
        if not is_episode and reviewer is not None and new.importance < cfg.lifecycle.review_low:
            report.reviewed += 1
            decision = reviewer.review(new, mode="decay", search=search)
            if decision.decision == "DELETE":
                puts.append(delete_op(namespace, rec.id))
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
            puts.append(put_op(namespace, new))
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
    namespace = check_namespace(namespace)
    cfg = config_or_default(config)
    now = job_now(now, store)
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
            puts.append(delete_op(namespace, rec.id))
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
        puts.append(put_op(namespace, new))
    if puts:
        store.batch(puts)
    return report


# ------------------------------------------------------------------------ evict / cleanup
def evict(store: BaseStore, namespace: tuple[str, ...], max_items: int) -> EvictionReport:
    """Keep at most `max_items` records: evict lowest confidence first, then the oldest
    `last_accessed` (or creation). Core and system tiers are never evicted."""
    namespace = check_namespace(namespace)
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
        store.batch([delete_op(namespace, r.id) for r in victims])
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
    namespace = check_namespace(namespace)
    if isinstance(days, bool) or not isinstance(days, int | float) or days < 0:
        raise ValidationError("days must be a non-negative number")
    now = job_now(now, store)
    cutoff = now - timedelta(days=days)
    records = load_records(store, namespace)
    victims = [r for r in records if r.tier != "system" and r.created_at < cutoff]
    if victims:
        store.batch([delete_op(namespace, r.id) for r in victims])
    return CleanupReport(
        scanned=len(records), deleted=len(victims), deleted_ids=[r.id for r in victims]
    )
