"""The conversation side of `Memory`: log turns, index them for recall, summarise, clean up.

Turns and rolling summaries are stored in the conversation table (the truth) and mirrored as
store items under ``("conversations", user_id)`` (keys ``turn-<id>`` / ``summary-<id>``) so the
hybrid BM25 + vector search recalls them. Every deletion removes both.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from langgraph.store.base import PutOp

from langmem_plus.config import MemoryConfig
from langmem_plus.episodic.conversation_log import ConversationLog
from langmem_plus.episodic.symbol_recall import join_candidates, symbol_candidates
from langmem_plus.errors import MemoryNotFoundError, ValidationError
from langmem_plus.memory.checks import check_id, check_int, check_label, check_text
from langmem_plus.model.namespaces import user_namespace
from langmem_plus.model.records import ConversationTurn, RollingSummary, UserProfile, utcnow
from langmem_plus.store import HybridStore
from langmem_plus.store.ranking.floor import above_floor, floor_for
from langmem_plus.store.validate import has_lone_surrogate
from langmem_plus.text.timeparse import (
    PREVIOUS_SESSION,
    parse_iso,
    parse_time_range,
    strip_time_reference,
)

__all__ = ["TURN_ROOT", "ConversationIndex", "iso"]

TURN_ROOT = "conversations"
_ROLES = ("user", "assistant", "system", "tool")
_MAX_TEXT = 100_000


def iso(dt: datetime) -> str:
    """ISO 8601 in UTC with a trailing Z."""
    return dt.isoformat().replace("+00:00", "Z")


def _bound(name: str, value: Any) -> Any:
    if value is None or (isinstance(value, (datetime, int, float)) and not isinstance(value, bool)):
        return value
    if isinstance(value, str):
        try:
            parse_iso(value)
        except ValueError:
            raise ValidationError(f"time_range {name} is not an ISO date/time: {value!r}") from None
        return value
    raise ValidationError(f"time_range {name} must be a datetime, ISO string, epoch or None")


class ConversationIndex:
    """Turns, rolling summaries and their search index for one store."""

    def __init__(
        self,
        store: HybridStore,
        config: MemoryConfig,
        model: Any = None,
        *,
        log: ConversationLog | None = None,
        now: Callable[[], datetime] = utcnow,
    ) -> None:
        self.store = store
        self.config = config
        self.model = model
        self.log: ConversationLog = log if log is not None else store.conversations
        self.now = now  # the owner's clock: turn, profile and summary times, cleanup cut-offs

    # ------------------------------------------------------------------ writing
    def add_turn(
        self,
        user_id: str,
        session_id: str,
        role: str,
        content: str,
        *,
        created_at: datetime | None = None,
        index: bool = True,
    ) -> ConversationTurn:
        """Log one turn and index it; `created_at` back-dates it (imports, logs).

        `index=False` logs it only: an episode then holds its searchable copy.
        """
        return self.add_turns(
            user_id, session_id, [(role, content)], created_at=created_at, index=index
        )[0]

    def add_turns(
        self,
        user_id: str,
        session_id: str,
        turns: Sequence[tuple[str, str]],
        *,
        created_at: datetime | None = None,
        index: bool = True,
    ) -> list[ConversationTurn]:
        """Log (role, content) turns of one session, as `add_turn` does each, in one
        transaction where the log can (`add_turns`)."""
        uid = check_label("user_id", user_id)
        sid = check_id("session_id", session_id)
        for role, content in turns:
            if role not in _ROLES:
                raise ValidationError(f"role must be one of {list(_ROLES)}, got {role!r}")
            check_text("content", content, _MAX_TEXT)
        if created_at is not None and not isinstance(created_at, datetime):
            raise ValidationError("created_at must be a datetime")
        at = created_at or self.now()
        many = getattr(self.log, "add_turns", None)
        if many is not None:
            logged: list[ConversationTurn] = many(uid, sid, list(turns), created_at=at)
        else:
            logged = [self.log.add_turn(uid, sid, r, c, created_at=at) for r, c in turns]
        if index:
            self.index_turns(logged, backdate=created_at is not None)
        return logged

    def index_turns(self, turns: Sequence[ConversationTurn], *, backdate: bool = True) -> None:
        """Mirror turns as searchable items (their time kept as the item's time); a log that
        can (`share_texts`) then reads each turn's text from its item: one copy."""
        self._index(
            [
                (
                    turn.user_id,
                    f"turn-{turn.id}",
                    {
                        "text": turn.content,
                        "role": turn.role,
                        "session_id": turn.session_id,
                        "turn_id": turn.id,
                        "symbols": list(turn.symbols),
                        "created_at": iso(turn.created_at),
                        "is_summary": False,
                    },
                    turn.created_at,
                )
                for turn in turns
            ],
            backdate,
        )
        share = getattr(self.log, "share_texts", None)
        if share is not None:
            share(
                [
                    (
                        user_namespace(t.user_id, TURN_ROOT),
                        f"turn-{t.id}",
                        [(t.id, 0, len(t.content))],
                    )
                    for t in turns
                    if t.content
                ]
            )

    def index_summaries(self, summaries: Sequence[RollingSummary]) -> None:
        """Mirror rolling summaries as searchable items."""
        self._index(
            [
                (
                    s.user_id,
                    f"summary-{s.id}",
                    {
                        "text": s.summary,
                        "session_id": s.session_id,
                        "summary_id": s.id,
                        "start_turn": s.start_turn,
                        "end_turn": s.end_turn,
                        "symbols": list(s.key_symbols),
                        "key_decisions": list(s.key_decisions),
                        "created_at": iso(s.created_at),
                        "is_summary": True,
                    },
                    s.created_at,
                )
                for s in summaries
            ],
            True,
        )

    def _index(self, rows: list[tuple[str, str, dict[str, Any], datetime]], backdate: bool) -> None:
        for i in range(0, len(rows), 256):
            part = rows[i : i + 256]
            self.store.batch(
                [PutOp(user_namespace(u, TURN_ROOT), key, value) for u, key, value, _ in part]
            )
            if backdate:
                self.store.restore_item_stats(
                    [(user_namespace(u, TURN_ROOT), key, at, at, None, 0) for u, key, _, at in part]
                )

    def edit_profile(self, prof: UserProfile, sections: Mapping[str, Any]) -> UserProfile:
        """Set profile sections by hand and mark them edited by the user (never overwritten)."""
        allowed = {"reply_style", "language_habits", "background"}
        bad = sorted(set(sections) - allowed)
        if bad:
            raise ValidationError(f"unknown profile sections {bad}; use {sorted(allowed)}")
        data = prof.model_dump()
        edited = list(prof.edited_by_user)
        for name, value in sections.items():
            if value is None:
                continue
            if not isinstance(value, str) or len(value) > 10_000:
                raise ValidationError(f"{name} must be a string of at most 10000 characters")
            if has_lone_surrogate(value):
                raise ValidationError(f"{name} must be valid Unicode (it holds a lone surrogate)")
            data[name] = value
            if name not in edited:
                edited.append(name)
        prof = UserProfile(**{**data, "edited_by_user": edited, "updated_at": self.now()})
        self.log.put_profile(prof)
        return prof

    # ------------------------------------------------------------------ reading
    def join_symbols(
        self,
        found: Sequence[Any],
        user_id: str,
        namespace: tuple[str, ...],
        query: str,
        *,
        limit: int,
        filter: Mapping[str, Any] | None = None,
        time_range: tuple[Any, Any] | None = None,
        view: Mapping[str, Any] | None = None,
    ) -> list[Any]:
        """`found` joined by the items tied to the query's code symbols (the symbol index),
        with the ``coding`` score profile; unchanged otherwise. `view`: the versions shown
        (`include_superseded`, `as_of` of `HybridStore.search`)."""
        if self.config.score.profile != "coding":
            return list(found)
        extra = symbol_candidates(
            self.store, self.log, user_id, namespace, query,
            limit=limit, filter=filter, time_range=time_range, view=view,
        )  # fmt: skip
        return join_candidates(found, extra)

    def time_range(self, arg: Any, query: str, user_id: str) -> tuple[str, tuple[Any, Any] | None]:
        """Resolve a time-range argument to ``(query, (start, end))``; see `Memory.search`."""
        if arg is None:
            return query, None
        value: Any
        if isinstance(arg, str):
            if arg.strip().lower() == "auto":
                rest, found = strip_time_reference(query)
                if found is None:
                    return query, None
                value = found.value
                query = rest if rest.strip() else query
            else:
                value = parse_time_range(arg)
                if value is None:
                    raise ValidationError(
                        f"no time phrase found in {arg!r}; use e.g. 'yesterday', '上周', "
                        "'2026-01-03' or a (start, end) pair"
                    )
            if value is PREVIOUS_SESSION:
                return query, self._previous_session(user_id)
            return query, (value[0], value[1])
        if isinstance(arg, Mapping):
            unknown = set(arg) - {"start", "end"}
            if unknown:
                raise ValidationError(f"time_range keys must be start/end, got {sorted(unknown)}")
            arg = (arg.get("start"), arg.get("end"))
        if isinstance(arg, (tuple, list)) and len(arg) == 2:
            return query, (_bound("start", arg[0]), _bound("end", arg[1]))
        raise ValidationError("time_range must be a phrase, 'auto', (start, end) or {start, end}")

    def _previous_session(self, user_id: str) -> tuple[datetime, datetime] | None:
        sessions = self.log.sessions(user_id)
        if not sessions:
            return None
        s = sessions[1] if len(sessions) > 1 else sessions[0]
        return s["created_at"], s["last_active"] + timedelta(seconds=1)

    def recall(
        self,
        query: str,
        user_id: str,
        *,
        limit: int = 5,
        session_id: str | None = None,
        time_range: Any = None,
    ) -> dict[str, Any]:
        """Relevant past turns and summaries, each with its relevance, plus the total searched and the latency."""
        t0 = time.perf_counter()
        uid = check_label("user_id", user_id)
        if not isinstance(query, str) or not query.strip():
            raise ValidationError("query must be a non-empty string")
        check_int("limit", limit, 1, 1000)
        flt = None if session_id is None else {"session_id": check_id("session_id", session_id)}
        query, tr = self.time_range(time_range, query, uid)
        ns = user_namespace(uid, TURN_ROOT)
        episodes_ns = user_namespace(uid)
        ep_flt = {"kind": "episodic", **(flt or {})}
        found = self.join_symbols(
            self.store.search(ns, query=query, filter=flt, limit=limit, time_range=tr),
            uid, ns, query, limit=limit, filter=flt, time_range=tr,
        )  # fmt: skip
        found += self.join_symbols(
            self.store.search(episodes_ns, query=query, filter=ep_flt, limit=limit, time_range=tr),
            uid, episodes_ns, query, limit=limit, filter=ep_flt, time_range=tr,
        )  # fmt: skip  # exchanges kept as episodes: their turns are logged without a mirror item
        found.sort(key=lambda it: -float(it.score or 0.0))
        items = above_floor(found, floor_for(self.store, self.config.recall.min_relevance))[:limit]
        results = []
        for it in items:
            v = it.value
            turn_ids = (v.get("metadata") or {}).get("turn_ids") or [None]
            common = {
                "conversation_id": v.get("session_id"),
                "turn_id": v.get("turn_id", turn_ids[0]),
            }
            if v.get("is_summary"):
                results.append(
                    {
                        **common,
                        "summary": v.get("text"),
                        "relevance": round(float(it.score or 0.0), 4),
                        "created_at": v.get("created_at"),
                        "is_summary": True,
                    }
                )
            else:
                results.append(
                    {
                        **common,
                        "role": v.get("role", v.get("who", "user")),
                        "content": v.get("text"),
                        "relevance": round(float(it.score or 0.0), 4),
                        "created_at": v.get("created_at", v.get("occurred_at")),
                        "is_summary": False,
                    }
                )
        return {
            "results": results,
            "total_searched": self.store.count(ns) + self.store.count(episodes_ns),
            "latency_ms": round((time.perf_counter() - t0) * 1000, 1),
        }

    # ------------------------------------------------------------------ summaries
    def summarize(
        self, user_id: str, session_id: str, from_turn: int | None, to_turn: int | None
    ) -> dict[str, Any]:
        """Summarise turns from..to (1-based positions in the conversation) and index it."""
        from langmem_plus.processors.summarizer import Summarizer

        uid = check_label("user_id", user_id)
        sid = check_id("session_id", session_id)
        turns = self.log.turns(uid, sid)
        if not turns:
            raise MemoryNotFoundError(f"no conversation {sid!r} for user {uid!r}")
        n = len(turns)
        a = 1 if from_turn is None else check_int("from_turn", from_turn, 1, n)
        b = n if to_turn is None else check_int("to_turn", to_turn, 1, n)
        if a > b:
            raise ValidationError(f"from_turn ({a}) must not be after to_turn ({b})")
        chunk = turns[a - 1 : b]
        out = Summarizer(self.model, self.config).rolling(
            [{"role": t.role, "text": t.content} for t in chunk]
        )
        saved = self.log.add_rolling_summary(
            RollingSummary(
                user_id=uid,
                session_id=sid,
                start_turn=a,
                end_turn=b,
                summary=out.summary,
                key_symbols=list(out.key_symbols),
                key_decisions=list(out.key_decisions),
                created_at=self.now(),
            )
        )
        self.index_summaries([saved])
        return {
            "summary_id": saved.id,
            "conversation_id": sid,
            "turns_summarized": list(range(a, b + 1)),
            "summary": saved.summary,
            "key_symbols": saved.key_symbols,
            "key_decisions": saved.key_decisions,
        }

    # ------------------------------------------------------------------ deletion
    def _drop_items(self, keys: list[tuple[tuple[str, ...], str]]) -> None:
        for i in range(0, len(keys), 500):
            self.store.batch([PutOp(ns, k, None) for ns, k in keys[i : i + 500]])

    def _sessions(self) -> set[tuple[str, str]]:
        return {(s["user_id"], s["session_id"]) for s in self.log.sessions()}

    def delete_user(self, user_id: str) -> dict[str, int]:
        """Every turn, summary, index entry and the profile of one user."""
        before = self._sessions()
        self._drop_items(self.store.keys(user_namespace(user_id, TURN_ROOT)))
        counts = dict(self.log.delete(user_id=user_id))
        counts["conversations_deleted"] = len(before - self._sessions())
        return counts

    def delete_all(self) -> dict[str, int]:
        """Every turn, summary, profile and index entry of every user."""
        before = self._sessions()
        self._drop_items(self.store.keys((TURN_ROOT,)))
        counts = dict(self.log.delete_all())
        counts["conversations_deleted"] = len(before)
        return counts

    def cleanup(
        self,
        *,
        user_id: str | None,
        older_than: timedelta | float | None,
        session_id: str | None,
    ) -> dict[str, Any]:
        """Delete one conversation or everything older than a span, for one user or all."""
        if (older_than is None) == (session_id is None):
            raise ValidationError("give exactly one of older_than or session_id")
        cut: datetime | None = None
        if older_than is not None:
            try:  # NaN, and spans beyond the calendar, are not a time
                if isinstance(older_than, (int, float)) and not isinstance(older_than, bool):
                    older_than = timedelta(days=float(older_than))
                if not isinstance(older_than, timedelta) or older_than.total_seconds() < 0:
                    raise ValidationError("older_than must be a non-negative timedelta or days")
                cut = self.now() - older_than
            except (ValueError, OverflowError) as exc:
                if isinstance(exc, ValidationError):
                    raise
                raise ValidationError(f"older_than is not a usable span: {exc}") from None
        sid = None if session_id is None else check_id("session_id", session_id)
        users = [check_label("user_id", user_id)] if user_id is not None else self.log.users()
        before = self._sessions()
        totals: dict[str, Any] = {"turns_deleted": 0, "summaries_deleted": 0}
        for uid in users:
            turns = self.log.turns(uid, sid)
            sums = self.log.rolling_summaries(uid, sid)
            if cut is not None:
                turns = [t for t in turns if t.created_at < cut]
                sums = [s for s in sums if s.created_at < cut]
            ns: tuple[str, ...] = user_namespace(uid, TURN_ROOT)
            self._drop_items(
                [(ns, f"turn-{t.id}") for t in turns] + [(ns, f"summary-{s.id}") for s in sums]
            )
            counts = self.log.delete(user_id=uid, session_id=sid, older_than=cut)
            for k, v in counts.items():
                totals[k] = totals.get(k, 0) + v
        return {"conversations_deleted": len(before - self._sessions()), **totals}
