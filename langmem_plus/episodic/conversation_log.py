"""What the memory engine needs from a conversation database, and a small one in memory.

`ConversationLog` is the protocol: turns, rolling and session summaries, user profiles and
the symbol index. `HybridStore.conversations` provides it in SQLite; with any other LangGraph
`BaseStore`, pass a log of your own (or `InMemoryConversationLog`) as ``conversation_log=``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from typing import Any, Protocol, runtime_checkable

from langmem_plus.errors import ValidationError
from langmem_plus.model.records import ConversationTurn, RollingSummary, SessionSummary, UserProfile
from langmem_plus.store.conversation import check_delete, check_turn, symbol_entries
from langmem_plus.text import extract_symbols

__all__ = ["ConversationLog", "InMemoryConversationLog", "check_log", "log_of"]


@runtime_checkable
class ConversationLog(Protocol):
    """The conversation database of the memory engine (turns, summaries, profiles, symbols)."""

    def add_turn(
        self,
        user_id: str,
        session_id: str,
        role: str,
        content: str,
        *,
        created_at: datetime | None = None,
        symbols: Sequence[str] | None = None,
    ) -> ConversationTurn:
        """Persist one turn (and index its code symbols); returns it with its id."""
        ...

    def turns(
        self,
        user_id: str,
        session_id: str | None = None,
        *,
        after_id: int = 0,
        limit: int | None = None,
        uncollected_only: bool = False,
    ) -> list[ConversationTurn]:
        """Turns of a user (optionally one session), oldest first."""
        ...

    def mark_collected(self, turn_ids: Iterable[int]) -> int:
        """Mark turns as processed by the post-turn processors; returns how many."""
        ...

    def sessions(self, user_id: str | None = None) -> list[dict[str, Any]]:
        """Sessions with ``turn_count``, ``created_at`` and ``last_active``, newest first."""
        ...

    def users(self) -> list[str]:
        """Every user with turns, a profile or a session summary."""
        ...

    def add_rolling_summary(self, summary: RollingSummary) -> RollingSummary:
        """Store a rolling summary; returns it with its id."""
        ...

    def rolling_summaries(
        self, user_id: str, session_id: str | None = None
    ) -> list[RollingSummary]:
        """Rolling summaries of a user (optionally one session), oldest first."""
        ...

    def set_session_summary(self, summary: SessionSummary) -> None:
        """Write (or replace) the title and snippet of a session."""
        ...

    def session_summaries(
        self, user_id: str, *, limit: int = 10, exclude_session: str | None = None
    ) -> list[SessionSummary]:
        """The most recent session summaries of a user, newest first."""
        ...

    def get_profile(self, user_id: str) -> UserProfile | None:
        """The user's profile document, or None."""
        ...

    def put_profile(self, profile: UserProfile) -> None:
        """Save the whole profile document."""
        ...

    def find_symbols(
        self, user_id: str, symbols: Sequence[str], limit: int = 20
    ) -> list[dict[str, Any]]:
        """Turns mentioning any of `symbols` (case-insensitive), best relevance first: dicts
        with ``symbol``, ``session_id``, ``turn_id``, ``relevance`` and ``context``."""
        ...

    def delete(
        self,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        older_than: datetime | None = None,
    ) -> dict[str, int]:
        """Delete turns and summaries matching every given condition; returns counts."""
        ...

    def delete_all(self) -> dict[str, int]:
        """Delete every turn, summary, profile and symbol entry; returns counts."""
        ...


def check_log(log: Any) -> ConversationLog:
    """`log` when it provides every `ConversationLog` method; else a `ValidationError`."""
    if isinstance(log, ConversationLog):
        return log
    missing = sorted(
        name
        for name in vars(ConversationLog)
        if not name.startswith("_") and not callable(getattr(log, name, None))
    )
    raise ValidationError(
        f"conversation_log must be a ConversationLog; {type(log).__name__} lacks {missing}"
    )


def log_of(store: Any) -> ConversationLog | None:
    """The conversation log a store provides (`HybridStore.conversations`), or None."""
    try:
        log = getattr(store, "conversations", None)
    except Exception:  # a store whose property fails (closed) has none to offer
        return None
    return log if isinstance(log, ConversationLog) else None


def _utc(dt: datetime | None) -> datetime:
    if dt is None:
        return datetime.now(timezone.utc)
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


class InMemoryConversationLog:
    """A `ConversationLog` in process memory (lost at exit): the full post-turn path for
    `InMemoryStore` and other stores without a conversation database. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._turns: list[ConversationTurn] = []
        self._rolling: list[RollingSummary] = []
        self._sessions: dict[tuple[str, str], SessionSummary] = {}
        self._profiles: dict[str, UserProfile] = {}
        self._symbols: list[dict[str, Any]] = []  # each with user_id besides the public keys
        self._next_turn = 1
        self._next_summary = 1

    def add_turn(
        self,
        user_id: str,
        session_id: str,
        role: str,
        content: str,
        *,
        created_at: datetime | None = None,
        symbols: Sequence[str] | None = None,
    ) -> ConversationTurn:
        """Keep one turn and index its code symbols; returns it with its id."""
        check_turn(user_id, session_id, role, content)
        syms = list(symbols) if symbols is not None else extract_symbols(content)
        with self._lock:
            turn = ConversationTurn(
                id=self._next_turn,
                user_id=user_id,
                session_id=session_id,
                role=role,  # type: ignore[arg-type]
                content=content,
                created_at=_utc(created_at),
                symbols=syms,
            )
            self._next_turn += 1
            self._turns.append(turn)
            self._symbols += [
                {"symbol": s, "user_id": user_id, "session_id": session_id, "turn_id": turn.id,
                 "relevance": rel, "context": ctx}
                for s, rel, ctx in symbol_entries(content, syms)
            ]  # fmt: skip
        return turn

    def turns(
        self,
        user_id: str,
        session_id: str | None = None,
        *,
        after_id: int = 0,
        limit: int | None = None,
        uncollected_only: bool = False,
    ) -> list[ConversationTurn]:
        """Turns of a user (optionally one session), oldest first."""
        with self._lock:
            out = [
                t
                for t in self._turns
                if t.user_id == user_id
                and (session_id is None or t.session_id == session_id)
                and (t.id or 0) > after_id
                and not (uncollected_only and t.is_collected)
            ]
        return out if limit is None else out[: int(limit)]

    def mark_collected(self, turn_ids: Iterable[int]) -> int:
        """Mark turns as processed by the post-turn processors; returns how many."""
        ids = {int(t) for t in turn_ids}
        with self._lock:
            self._turns = [
                t.model_copy(update={"is_collected": True}) if t.id in ids else t
                for t in self._turns
            ]
        return len(ids)

    def sessions(self, user_id: str | None = None) -> list[dict[str, Any]]:
        """Sessions with turn counts and first/last activity, newest first."""
        spans: dict[tuple[str, str], list[datetime]] = {}
        with self._lock:
            for t in self._turns:
                if user_id is None or t.user_id == user_id:
                    spans.setdefault((t.user_id, t.session_id), []).append(t.created_at)
        rows = [
            {"user_id": u, "session_id": s, "turn_count": len(times),
             "created_at": min(times), "last_active": max(times)}
            for (u, s), times in spans.items()
        ]  # fmt: skip
        return sorted(rows, key=lambda r: r["last_active"], reverse=True)

    def users(self) -> list[str]:
        """Every user with turns, a profile or a session summary."""
        with self._lock:
            found = {t.user_id for t in self._turns} | set(self._profiles)
            found |= {u for u, _ in self._sessions}
        return sorted(found)

    def add_rolling_summary(self, summary: RollingSummary) -> RollingSummary:
        """Keep a rolling summary; returns it with its id."""
        if summary.end_turn < summary.start_turn:
            raise ValidationError("end_turn must not be before start_turn")
        with self._lock:
            saved = summary.model_copy(update={"id": self._next_summary})
            self._next_summary += 1
            self._rolling.append(saved)
        return saved

    def rolling_summaries(
        self, user_id: str, session_id: str | None = None
    ) -> list[RollingSummary]:
        """Rolling summaries of a user (optionally one session), oldest first."""
        with self._lock:
            return [
                s
                for s in self._rolling
                if s.user_id == user_id and (session_id is None or s.session_id == session_id)
            ]

    def set_session_summary(self, summary: SessionSummary) -> None:
        """Write (or replace) the title and snippet of a session."""
        with self._lock:
            self._sessions[(summary.user_id, summary.session_id)] = summary

    def session_summaries(
        self, user_id: str, *, limit: int = 10, exclude_session: str | None = None
    ) -> list[SessionSummary]:
        """The most recent session summaries of a user, newest first."""
        with self._lock:
            found = [
                s
                for (u, sid), s in self._sessions.items()
                if u == user_id and sid != (exclude_session or "")
            ]
        return sorted(found, key=lambda s: s.created_at, reverse=True)[: int(limit)]

    def get_profile(self, user_id: str) -> UserProfile | None:
        """The user's profile document, or None."""
        with self._lock:
            return self._profiles.get(user_id)

    def put_profile(self, profile: UserProfile) -> None:
        """Save the whole profile document."""
        with self._lock:
            self._profiles[profile.user_id] = profile

    def find_symbols(
        self, user_id: str, symbols: Sequence[str], limit: int = 20
    ) -> list[dict[str, Any]]:
        """Turns mentioning any of `symbols` (case-insensitive), best relevance first."""
        wanted = {s.lower() for s in symbols}
        with self._lock:
            found = [
                {k: v for k, v in e.items() if k != "user_id"}
                for e in self._symbols
                if e["user_id"] == user_id and e["symbol"].lower() in wanted
            ]
        found.sort(key=lambda e: (-e["relevance"], -e["turn_id"]))
        return found[: int(limit)]

    def delete(
        self,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        older_than: datetime | None = None,
    ) -> dict[str, int]:
        """Delete turns and summaries matching every given condition; returns counts."""
        check_delete(user_id, session_id, older_than)
        cut = None if older_than is None else _utc(older_than)

        def hit(uid: str, sid: str, at: datetime) -> bool:
            return (
                (user_id is None or uid == user_id)
                and (session_id is None or sid == session_id)
                and (cut is None or at < cut)
            )

        with self._lock:
            gone = [t for t in self._turns if hit(t.user_id, t.session_id, t.created_at)]
            ids = {t.id for t in gone}
            self._turns = [t for t in self._turns if t.id not in ids]
            self._symbols = [e for e in self._symbols if e["turn_id"] not in ids]
            rolling = [s for s in self._rolling if hit(s.user_id, s.session_id, s.created_at)]
            self._rolling = [s for s in self._rolling if s not in rolling]
            titles = [k for k, s in self._sessions.items() if hit(k[0], k[1], s.created_at)]
            for key in titles:
                del self._sessions[key]
            if user_id is not None and session_id is None and cut is None:
                self._profiles.pop(user_id, None)
        return {
            "turns_deleted": len(gone),
            "summaries_deleted": len(rolling),
            "session_summaries_deleted": len(titles),
        }

    def delete_all(self) -> dict[str, int]:
        """Delete every turn, summary, profile and symbol entry; returns counts."""
        with self._lock:
            counts = {
                "turns_deleted": len(self._turns),
                "summaries_deleted": len(self._rolling),
                "session_summaries_deleted": len(self._sessions),
            }
            self._turns, self._rolling, self._symbols = [], [], []
            self._sessions.clear()
            self._profiles.clear()
        return counts
