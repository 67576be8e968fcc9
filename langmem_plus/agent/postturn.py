"""Post-turn processing: the exchange kept as an episode with the facts derived from it,
profile, reconsolidation, rolling and session summaries, archiving. Mixed into `MemoryEngine`; sync (runs in the
background worker or inside a graph node)."""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from langgraph.store.base import BaseStore

from langmem_plus.agent.working import WorkingMemory, archive_record
from langmem_plus.config import MemoryConfig
from langmem_plus.episodic.conversation_log import ConversationLog
from langmem_plus.episodic.episodes import EpisodeKeeper, Turn, exchanges, without_echoes
from langmem_plus.model.costs import CostCallback, CostTimer, TurnCost, deliver
from langmem_plus.model.records import MemoryRecord, RollingSummary, SessionSummary, UserProfile
from langmem_plus.processors.processor_set import Processors

__all__ = ["PostTurnJob", "PostTurnSteps"]

logger = logging.getLogger("langmem_plus.engine")


# ---------------------------------------------------------------------------- jobs
@dataclass
class PostTurnJob:
    """What the post-turn processors need for one (or several debounced) turns."""

    store: BaseStore
    user_id: str
    namespace: tuple[str, ...]
    session_id: str
    turn_count: int
    recalled: dict[str, str] = field(default_factory=dict)  # key -> text
    archive: WorkingMemory | None = None
    log: ConversationLog | None = None  # the store's (or the injected) conversation log

    def merge(self, newer: PostTurnJob) -> PostTurnJob:
        """Fold a newer job of the same thread into this one (debounce)."""
        self.recalled.update(newer.recalled)
        self.turn_count = max(self.turn_count, newer.turn_count)
        self.archive = self.archive or newer.archive
        return self


def _turns(turns: Sequence[Any]) -> list[Turn]:
    """Conversation-log turns as the write driver reads them."""
    return [Turn(t.role, t.content, t.created_at, t.id) for t in turns]


def _as_dialogue(turns: Sequence[Turn]) -> list[dict[str, str]]:
    return [{"role": t.role, "text": t.text} for t in turns if t.role in ("user", "assistant")]


class PostTurnSteps(ABC):
    """The post-turn processors over one session (mixin: needs config, processors, now())."""

    config: MemoryConfig
    summarize: bool
    reports: deque[dict[str, Any]]
    on_cost: CostCallback | None

    ALL_STEPS = frozenset(
        {"knowledge", "profile", "reconsolidate", "rolling", "session", "archive"}
    )

    @abstractmethod
    def now(self) -> datetime:
        """The engine's clock (MemoryEngine supplies it; tests inject one)."""

    @property
    @abstractmethod
    def processors(self) -> Processors:
        """The engine's processors (built once from its model and config)."""

    def record_cost(self, cost: TurnCost, store: BaseStore) -> None:
        """Hand a turn's cost to `on_cost` and persist it when the store keeps a log."""
        deliver(cost, on_cost=getattr(self, "on_cost", None), store=store)

    def process(self, job: PostTurnJob, steps: frozenset[str] | None = None) -> dict[str, Any]:
        """Run the post-turn processors over the session's uncollected turns; returns a report.

        `steps` selects processors (default: all); only the knowledge step marks turns
        collected, so the steps can also run one by one (graph nodes). The report's
        ``stage_costs`` is the `TurnCost` of the steps that ran (as a dict)."""
        steps = self.ALL_STEPS if steps is None else steps
        t0 = time.perf_counter()
        report: dict[str, Any] = {
            "user_id": job.user_id,
            "session_id": job.session_id,
            "episodes": [],
            "facts": [],
            "superseded": [],
            "cost": {},
            "rolling_summaries": [],
            "session_summary": None,
            "profile_updated": False,
            "reconsolidated": [],
            "archived": None,
        }
        store = job.store
        conv = job.log
        if conv is None:
            report["note"] = "no conversation log; post-turn processing skipped"
            self.reports.append(report)
            return report
        all_turns = conv.turns(job.user_id, job.session_id)
        pending = [t for t in all_turns if not t.is_collected]
        dialogue = _as_dialogue(_turns(pending))
        if "knowledge" not in steps:  # run alone: work on the latest exchange
            latest = exchanges(_turns(all_turns))
            dialogue = _as_dialogue(latest[-1]) if latest else []
        timer = CostTimer()
        if dialogue:
            if "knowledge" in steps:
                first = pending[0].id if pending[0].id is not None else 0
                before = [t for t in all_turns if t.id is not None and t.id < first][-4:]
                with timer.stage("knowledge", meter=False) as tally:
                    self._knowledge(job, pending, before, report)
                    tally.add_usage(report["cost"])
            if "profile" in steps:
                with timer.stage("profile"):
                    self._profile(job, dialogue, report)
            if "reconsolidate" in steps:
                with timer.stage("reconsolidate"):
                    self._reconsolidate(job, dialogue, report)
        if self.summarize and "rolling" in steps:
            with timer.stage("rolling"):
                self._rolling(job, conv, all_turns, report)
        if "session" in steps:
            with timer.stage("session"):
                self._session_summary(job, conv, all_turns, report)
        if job.archive is not None and "archive" in steps:
            with timer.stage("archive"):
                self._archive(job, all_turns, report)
        if pending and "knowledge" in steps:
            conv.mark_collected([t.id for t in pending if t.id is not None])
        cost = timer.finish(
            user_id=job.user_id, session_id=job.session_id, phase="post_turn", at=self.now()
        )
        report["stage_costs"] = cost.as_dict()
        report["elapsed_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        self.reports.append(report)
        self.record_cost(cost, store)
        return report

    def _keeper(self) -> EpisodeKeeper:
        """The episode keeper: a one-call FactDeriver with a model, precision-first rules without."""
        keeper = getattr(self, "_episode_keeper", None)
        if keeper is None:
            keeper = EpisodeKeeper(self.config, self.processors.deriver)
            self._episode_keeper = keeper
        return keeper

    def _knowledge(
        self,
        job: PostTurnJob,
        pending: Sequence[Any],
        before: Sequence[Any],
        report: dict[str, Any],
    ) -> None:
        """Keep each pending exchange as an episode; derive its facts and close replaced ones
        (the write driver `EpisodeKeeper.keep_turns`, as `Memory.add`)."""
        replies = [t.content for t in before if t.role == "assistant"]
        kept = self._keeper().keep_turns(
            job.store,
            job.namespace,
            _turns(pending),
            session_id=job.session_id,
            at=self.now(),
            context=replies[-1] if replies else None,
            log=job.log,
            recalled=list(job.recalled.values()),
        )
        report["episodes"] = [k.episode_id for k in kept if k.episode_id]
        report["facts"] = [f for k in kept for f in k.fact_ids]
        report["superseded"] = [c for k in kept for c in k.closed_ids]
        for k in kept:
            for key, val in k.cost.items():
                if isinstance(val, (int, float)) and not isinstance(val, bool):
                    report["cost"][key] = report["cost"].get(key, 0) + val

    def _profile(
        self, job: PostTurnJob, dialogue: list[dict[str, str]], report: dict[str, Any]
    ) -> None:
        writer = self.processors.profile_writer
        conv = job.log
        if conv is None:
            return
        try:
            old = conv.get_profile(job.user_id) or UserProfile(user_id=job.user_id)
            # the background is what the user's current facts say (derived precision-first
            # with their sources; superseded ones are left out by the store), never a guess
            # of the writer's own (a pet's name is not the user's name)
            new = writer.update(old, dialogue, facts=self._background(job))
            if new.model_dump(exclude={"updated_at"}) != old.model_dump(exclude={"updated_at"}):
                conv.put_profile(new)
                report["profile_updated"] = True
        except Exception as exc:
            logger.warning("profile writer failed: %s", exc)

    def _background(self, job: PostTurnJob) -> list[str]:
        """The user's current profile facts (about the user, not third persons), oldest first:
        the store's search shows current facts only (superseded ones are left out)."""
        facts = []
        flt = {"kind": "semantic", "metadata.fact_kind": "profile"}
        for it in job.store.search(job.namespace, filter=flt, limit=200):
            value = it.value if isinstance(it.value, dict) else {}
            meta = value.get("metadata") or {}
            if value.get("superseded_by") or value.get("valid_to"):
                continue  # another BaseStore's search knows nothing of validity
            if meta.get("subject", "user") == "user" and isinstance(value.get("text"), str):
                facts.append((str(value.get("occurred_at") or ""), value["text"]))
        return [text for _, text in sorted(facts)]

    def _reconsolidate(
        self, job: PostTurnJob, dialogue: list[dict[str, str]], report: dict[str, Any]
    ) -> None:
        recon = self.processors.reconsolidator
        if not job.recalled:
            return
        for key in list(job.recalled)[:3]:
            item = job.store.get(job.namespace, key)
            if item is None or not isinstance(item.value, dict):
                continue
            if item.value.get("kind") != "episodic" or "spans" in (
                item.value.get("metadata") or {}
            ):
                continue  # an exchange kept verbatim is ground truth: never rewritten
            try:
                record = MemoryRecord.from_item(item)
                context = "\n".join(f"{d['role']}: {d['text']}" for d in dialogue)[:4000]
                new = recon.reconsolidate(record, context, now=self.now())
                if isinstance(new, MemoryRecord):
                    job.store.put(job.namespace, key, new.to_value())
                    report["reconsolidated"].append(key)
            except Exception as exc:
                logger.warning("reconsolidation of %s failed: %s", key, exc)

    def _rolling(
        self,
        job: PostTurnJob,
        conv: ConversationLog,
        all_turns: Sequence[Any],
        report: dict[str, Any],
    ) -> None:
        summarizer = self.processors.summarizer
        cfg = self.config
        grouped = exchanges(_turns(all_turns))
        total = len(grouped)
        if total < cfg.window.summarize_after:
            return
        existing = conv.rolling_summaries(job.user_id, job.session_id)
        done = max((s.end_turn for s in existing), default=0)
        while done + cfg.window.summarize_every <= total - cfg.window.keep_verbatim_turns:
            chunk = grouped[done : done + cfg.window.summarize_every]
            dialogue = _as_dialogue([t for ex in chunk for t in ex])
            try:
                out = summarizer.rolling(dialogue)
            except Exception as exc:
                logger.warning("rolling summary failed: %s", exc)
                return
            saved = conv.add_rolling_summary(
                RollingSummary(
                    user_id=job.user_id,
                    session_id=job.session_id,
                    start_turn=done + 1,
                    end_turn=done + cfg.window.summarize_every,
                    summary=out.summary,
                    key_symbols=list(out.key_symbols),
                    key_decisions=list(out.key_decisions),
                    created_at=self.now(),
                )
            )
            report["rolling_summaries"].append(
                {"turns": [saved.start_turn, saved.end_turn], "summary": saved.summary}
            )
            done += cfg.window.summarize_every

    def _session_summary(
        self,
        job: PostTurnJob,
        conv: ConversationLog,
        all_turns: Sequence[Any],
        report: dict[str, Any],
    ) -> None:
        summarizer = self.processors.summarizer
        if not any(t.role == "assistant" for t in all_turns):
            return
        known = conv.session_summaries(job.user_id, limit=1000)
        if any(s.session_id == job.session_id for s in known):
            return
        first = exchanges(_turns(all_turns))[:1]
        said = _as_dialogue([t for ex in first for t in ex])
        # what the reply only repeated of the recalled memories is no summary of the session
        dialogue = [
            d for d, _ in without_echoes([(d, None) for d in said], list(job.recalled.values()))
        ]
        try:
            title, snippet = summarizer.session_title(dialogue)
        except Exception as exc:
            logger.warning("session title failed: %s", exc)
            return
        created = all_turns[0].created_at if all_turns else self.now()
        conv.set_session_summary(
            SessionSummary(
                user_id=job.user_id,
                session_id=job.session_id,
                title=title,
                snippet=snippet,
                created_at=created,
            )
        )
        report["session_summary"] = {"title": title, "snippet": snippet}

    def _archive(self, job: PostTurnJob, all_turns: Sequence[Any], report: dict[str, Any]) -> None:
        wm = job.archive
        if wm is None:
            return
        dialogue = _as_dialogue(_turns(all_turns))
        summary = None
        summarizer = self.processors.summarizer
        if dialogue:
            try:
                summary = summarizer.episode(dialogue, wm.created_at)
            except Exception as exc:
                logger.warning("episode summary failed: %s", exc)
        rec = archive_record(wm, dialogue, summary=summary, now=self.now(), namespace=job.namespace)
        if rec is not None:
            job.store.put(job.namespace, rec.id, rec.to_value())
            report["archived"] = {"id": rec.id, "text": rec.text}
