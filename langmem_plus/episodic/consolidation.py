"""Consolidation (SPEC R-LIFE): merge duplicate episodic memories and separate confusable
ones, most-similar pairs first, until nothing changes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, PutOp

from langmem_plus.config import MemoryConfig
from langmem_plus.episodic.episodes import is_verbatim
from langmem_plus.episodic.lifecycle_base import (
    ConsolidationReport,
    check_namespace,
    config_or_default,
    delete_op,
    job_now,
    load_records,
    put_op,
)
from langmem_plus.model.records import MemoryRecord
from langmem_plus.processors.rewriters import EpisodeMerger, EpisodeSeparator, episode_time

__all__ = ["MAX_CONSOLIDATION_PASSES", "consolidate", "should_merge"]

MAX_CONSOLIDATION_PASSES = 5  # merge/separate passes until nothing changes


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


@dataclass
class _Consolidation:
    """One consolidation run's working set: the records as they stand, the ops to write, the
    pairs compared and the report."""

    namespace: tuple[str, ...]
    cfg: MemoryConfig
    merger: EpisodeMerger
    separator: EpisodeSeparator
    now: datetime
    episodes: list[MemoryRecord]
    report: ConsolidationReport = field(default_factory=ConsolidationReport)
    current: dict[str, MemoryRecord] = field(default_factory=dict)
    puts: dict[str, PutOp] = field(default_factory=dict)
    compared: set[frozenset[str]] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.report.scanned = len(self.episodes)
        self.current = {r.id: r for r in self.episodes}

    def one_pass(self, embeddings: Embeddings) -> bool:
        """Handle the pairs most-similar first (each record once per pass); true when
        something changed, so another pass is due."""
        records = list(self.current.values())
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
            self.compared.add(frozenset((a.id, b.id)))
            if a.id in used or b.id in used:
                continue
            if cos < self.cfg.lifecycle.separate_threshold:
                break
            if cos >= self.cfg.lifecycle.merge_threshold and should_merge(a, b, self.cfg):
                used.update((a.id, b.id, self._merge(a, b)))
                changed = True
            elif not _separated(a, b):
                self._separate(a, b)
                used.update((a.id, b.id))
                changed = True
        return changed

    def _merge(self, a: MemoryRecord, b: MemoryRecord) -> str:
        """Replace `a` and `b` by their merged record; returns its id."""
        merged = self.merger.merge(a, b, now=self.now)
        report = self.report
        for old in (a, b):
            self.current.pop(old.id, None)
            self.puts[old.id] = delete_op(self.namespace, old.id)
            report.deleted_ids.append(old.id)
            if old.id in report.created_ids:
                report.created_ids.remove(old.id)
        self.current[merged.id] = merged
        self.puts[merged.id] = put_op(self.namespace, merged)
        report.created_ids.append(merged.id)
        report.merged += 1
        return merged.id

    def _separate(self, a: MemoryRecord, b: MemoryRecord) -> None:
        """Rewrite `a` and `b` so they can be told apart."""
        new_a, new_b = self.separator.separate(a, b, now=self.now)
        for new in (new_a, new_b):
            self.current[new.id] = new
            self.puts[new.id] = put_op(self.namespace, new)
            if new.id not in self.report.rewritten_ids:
                self.report.rewritten_ids.append(new.id)
        self.report.separated += 1


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
    namespace = check_namespace(namespace)
    cfg = config_or_default(config)
    now = job_now(now, store)
    if embeddings is None:
        from langmem_plus.embeddings import default_embeddings

        embeddings = default_embeddings()
    merger = merger or EpisodeMerger(config=cfg)
    separator = separator or EpisodeSeparator(config=cfg)
    # summarised episodes only: exchanges kept verbatim are never merged or rewritten
    episodes = [
        r for r in load_records(store, namespace) if r.kind == "episodic" and not is_verbatim(r)
    ]
    run = _Consolidation(namespace, cfg, merger, separator, now, episodes)
    for _ in range(MAX_CONSOLIDATION_PASSES):
        if not run.one_pass(embeddings):
            break
    report, current, puts, compared = run.report, run.current, run.puts, run.compared
    report.pairs_compared = len(compared)
    report.untouched_pairs = max(report.pairs_compared - report.merged - report.separated, 0)
    original = {r.id for r in episodes}
    report.deleted_ids = [i for i in report.deleted_ids if i in original]
    report.rewritten_ids = [i for i in report.rewritten_ids if i in current]
    if puts:
        store.batch(list(puts.values()))
    return report
