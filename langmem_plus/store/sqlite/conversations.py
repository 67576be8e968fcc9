"""The conversation side of R-DATA: turns, rolling and session summaries, profiles, symbols.

Lives in the same SQLite file as the memories (`HybridStore.conversations`), so one backup,
one export and one cleanup cover everything. Dropped window turns are never lost: they stay
here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any

from langmem_plus.clock import Clock, system_clock
from langmem_plus.errors import ValidationError
from langmem_plus.model.records import ConversationTurn, RollingSummary, SessionSummary, UserProfile
from langmem_plus.store.conversation import check_delete, check_turn, required_text, symbol_entries
from langmem_plus.store.db.database import Database
from langmem_plus.store.seams import ns_key
from langmem_plus.text.symbols import extract_symbols

__all__ = [
    "DeleteCounts",
    "SQLiteConversationLog",
]


def _epoch(dt: datetime | None, clock: Clock = system_clock) -> float:
    if dt is None:
        return clock()
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


def _dt(x: float) -> datetime:
    return datetime.fromtimestamp(x, tz=timezone.utc)


DeleteCounts = dict[str, int]


class SQLiteConversationLog:
    """Turns, summaries, profiles and the symbol index of every user, in SQLite: the
    `langmem_plus.episodic.conversation_log.ConversationLog` a `HybridStore` provides."""

    def __init__(self, db: Database, clock: Clock = system_clock) -> None:
        self._db = db
        self._clock = clock

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Calls made inside as one write transaction (reads inside see its writes; the
        store's own writes inside join it too)."""
        with self._db.write():
            yield

    # ---------------------------------------------------------------- turns
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
        """Persist one turn and index its code symbols; returns it with its id."""
        syms = None if symbols is None else [list(symbols)]
        return self.add_turns(
            user_id, session_id, [(role, content)], created_at=created_at, symbols=syms
        )[0]

    def add_turns(
        self,
        user_id: str,
        session_id: str,
        turns: Sequence[tuple[str, str]],
        *,
        created_at: datetime | None = None,
        symbols: Sequence[Sequence[str]] | None = None,
    ) -> list[ConversationTurn]:
        """Persist (role, content) turns of one session in one transaction and index their
        code symbols (`symbols`: one list per turn, else extracted); returns them with ids."""
        for role, content in turns:
            check_turn(user_id, session_id, role, content)
        syms = (
            [list(x) for x in symbols]
            if symbols is not None
            else [extract_symbols(c) for _r, c in turns]
        )
        ts = _epoch(created_at, self._clock)
        out: list[ConversationTurn] = []
        with self._db.write() as conn:
            for (role, content), sy in zip(turns, syms, strict=True):
                tid = conn.execute(
                    "INSERT INTO turns(user_id, session_id, role, content, symbols, created_at) "
                    "VALUES (?,?,?,?,?,?)",
                    (user_id, session_id, role, content, json.dumps(sy, ensure_ascii=False), ts),
                ).lastrowid
                if sy:
                    conn.executemany(
                        "INSERT OR REPLACE INTO symbol_index(symbol, user_id, session_id, "
                        "turn_id, relevance, context) VALUES (?,?,?,?,?,?)",
                        [
                            (s, user_id, session_id, tid, rel, ctx)
                            for s, rel, ctx in symbol_entries(content, sy)
                        ],
                    )
                out.append(
                    ConversationTurn(
                        id=tid,
                        user_id=user_id,
                        session_id=session_id,
                        role=role,  # type: ignore[arg-type]
                        content=content,
                        created_at=_dt(ts),
                        symbols=sy,
                    )
                )
        return out

    def turns(
        self,
        user_id: str,
        session_id: str | None = None,
        *,
        after_id: int = 0,
        limit: int | None = None,
        uncollected_only: bool = False,
    ) -> list[ConversationTurn]:
        """Turns of a user (optionally one session) in order."""
        sql = f"SELECT {_TURN_COLS} FROM {_TURN_FROM} WHERE t.user_id=? AND t.id>?"
        args: list[Any] = [user_id, after_id]
        if session_id is not None:
            sql += " AND t.session_id=?"
            args.append(session_id)
        if uncollected_only:
            sql += " AND t.is_collected=0"
        sql += " ORDER BY t.id"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(int(limit))
        with self._db.read() as conn:
            rows = conn.execute(sql, args).fetchall()
        return [_turn(r) for r in rows]

    def recent_turns(self, user_id: str, session_id: str, limit: int) -> list[ConversationTurn]:
        """The last `limit` turns of a session, oldest first: one bounded read (what a new
        turn answers does not need the whole conversation read)."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValidationError(f"limit must be a positive integer, got {limit!r}")
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {_TURN_COLS} FROM {_TURN_FROM} WHERE t.user_id=? AND t.session_id=? "
                "ORDER BY t.id DESC LIMIT ?",
                (user_id, session_id, limit),
            ).fetchall()
        return [_turn(r) for r in reversed(rows)]

    def get_turn(self, turn_id: int) -> ConversationTurn | None:
        """One turn by id, or None."""
        with self._db.read() as conn:
            row = conn.execute(
                f"SELECT {_TURN_COLS} FROM {_TURN_FROM} WHERE t.id=?",
                (turn_id,),
            ).fetchone()
        return None if row is None else _turn(row)

    def share_text(
        self, namespace: Sequence[str], key: str, spans: Sequence[tuple[int, int, int]]
    ) -> int:
        """Let turns read their text from the item (an episode) that holds it verbatim.

        `spans` are ``(turn_id, start, stop)`` into the item's text. A turn is linked only
        when that span equals its content exactly, so no text is ever lost; returns how many.
        Should the item be deleted or its text change, the turns get their copy back
        (migration 011's triggers).
        """
        return self.share_texts([(namespace, key, spans)])

    def share_texts(
        self, links: Sequence[tuple[Sequence[str], str, Sequence[tuple[int, int, int]]]]
    ) -> int:
        """`share_text` for several items in one transaction; returns how many turns."""
        links = [link for link in links if link[2]]
        if not links:
            return 0
        linked = 0
        with self._db.write() as conn:
            for namespace, key, spans in links:
                item = (ns_key(namespace), key)
                # a span is linked only where the turn's content is that span of the item's text
                conn.execute(
                    "INSERT OR REPLACE INTO turn_text(turn_id, item_id, start, stop) "
                    "SELECT t.id, i.id, s.start, s.stop FROM (SELECT json_extract(value, '$[0]') "
                    "AS turn_id, json_extract(value, '$[1]') AS start, json_extract(value, "
                    "'$[2]') AS stop FROM json_each(?)) s JOIN turns t ON t.id = s.turn_id "
                    "JOIN items i ON i.id = (SELECT i2.id FROM items i2 JOIN namespaces n "
                    "ON n.id = i2.ns_id WHERE n.ns = ? AND i2.key = ?) "
                    "WHERE s.start >= 0 AND s.stop >= s.start AND t.content != '' "
                    "AND json_type(i.value, '$.text') = 'text' "
                    "AND t.content = substr(json_extract(i.value, '$.text'), s.start + 1, "
                    "s.stop - s.start)",
                    (json.dumps([list(x) for x in spans]), *item),
                )
                ids = [t for t, _, _ in spans]
                linked += conn.execute(
                    f"UPDATE turns SET content='' WHERE id IN ({','.join('?' * len(ids))}) "
                    "AND content != '' AND id IN (SELECT x.turn_id FROM turn_text x JOIN items i "
                    "ON i.id = x.item_id JOIN namespaces n ON n.id = i.ns_id "
                    "WHERE n.ns = ? AND i.key = ?)",
                    (*ids, *item),
                ).rowcount
        return linked

    def mark_collected(self, turn_ids: Iterable[int]) -> int:
        """Mark turns as processed by the post-turn processors."""
        ids = [(int(t),) for t in turn_ids]
        with self._db.write() as conn:
            conn.executemany("UPDATE turns SET is_collected=1 WHERE id=?", ids)
        return len(ids)

    def sessions(self, user_id: str | None = None) -> list[dict[str, Any]]:
        """Sessions with turn counts and first/last activity, newest first."""
        sql = (
            "SELECT user_id, session_id, COUNT(*), MIN(created_at), MAX(created_at) FROM turns "
            + ("WHERE user_id=? " if user_id is not None else "")
            + "GROUP BY user_id, session_id ORDER BY MAX(created_at) DESC"
        )
        with self._db.read() as conn:
            rows = conn.execute(sql, (user_id,) if user_id is not None else ()).fetchall()
        return [
            {
                "user_id": u,
                "session_id": s,
                "turn_count": n,
                "created_at": _dt(a),
                "last_active": _dt(b),
            }
            for u, s, n, a, b in rows
        ]

    def users(self) -> list[str]:
        """Every user with turns, a profile or a session summary."""
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT user_id FROM turns UNION SELECT user_id FROM profiles "
                "UNION SELECT user_id FROM session_summaries ORDER BY 1"
            ).fetchall()
        return [r[0] for r in rows]

    # ---------------------------------------------------------------- summaries
    def add_rolling_summary(self, summary: RollingSummary) -> RollingSummary:
        """Store a rolling summary (turns start_turn..end_turn of a session)."""
        if summary.end_turn < summary.start_turn:
            raise ValidationError("end_turn must not be before start_turn")
        with self._db.write() as conn:
            sid = conn.execute(
                "INSERT INTO rolling_summaries(user_id, session_id, start_turn, end_turn, summary, "
                "key_symbols, key_decisions, created_at) VALUES (?,?,?,?,?,?,?,?)",
                (
                    summary.user_id,
                    summary.session_id,
                    summary.start_turn,
                    summary.end_turn,
                    summary.summary,
                    json.dumps(summary.key_symbols, ensure_ascii=False),
                    json.dumps(summary.key_decisions, ensure_ascii=False),
                    _epoch(summary.created_at, self._clock),
                ),
            ).lastrowid
        return summary.model_copy(update={"id": sid})

    def rolling_summaries(
        self, user_id: str, session_id: str | None = None
    ) -> list[RollingSummary]:
        """Rolling summaries of a user (optionally one session), oldest first."""
        sql = (
            "SELECT id, user_id, session_id, start_turn, end_turn, summary, key_symbols, "
            "key_decisions, created_at FROM rolling_summaries WHERE user_id=?"
        )
        args: list[Any] = [user_id]
        if session_id is not None:
            sql += " AND session_id=?"
            args.append(session_id)
        with self._db.read() as conn:
            rows = conn.execute(sql + " ORDER BY id", args).fetchall()
        return [
            RollingSummary(
                id=r[0],
                user_id=r[1],
                session_id=r[2],
                start_turn=r[3],
                end_turn=r[4],
                summary=r[5],
                key_symbols=json.loads(r[6]),
                key_decisions=json.loads(r[7]),
                created_at=_dt(r[8]),
            )
            for r in rows
        ]

    def set_session_summary(self, summary: SessionSummary) -> None:
        """Write (or replace) the title + snippet of a session."""
        with self._db.write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO session_summaries(user_id, session_id, title, snippet, "
                "created_at) VALUES (?,?,?,?,?)",
                (
                    summary.user_id,
                    summary.session_id,
                    summary.title,
                    summary.snippet,
                    _epoch(summary.created_at, self._clock),
                ),
            )

    def session_summaries(
        self, user_id: str, *, limit: int = 10, exclude_session: str | None = None
    ) -> list[SessionSummary]:
        """Most recent session summaries of a user."""
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT user_id, session_id, title, snippet, created_at FROM session_summaries "
                "WHERE user_id=? AND session_id != ? ORDER BY created_at DESC LIMIT ?",
                (user_id, exclude_session or "", int(limit)),
            ).fetchall()
        return [
            SessionSummary(user_id=u, session_id=s, title=t, snippet=sn, created_at=_dt(c))
            for u, s, t, sn, c in rows
        ]

    # ---------------------------------------------------------------- profiles
    def get_profile(self, user_id: str) -> UserProfile | None:
        """The user's profile document, or None."""
        with self._db.read() as conn:
            row = conn.execute("SELECT doc FROM profiles WHERE user_id=?", (user_id,)).fetchone()
        return None if row is None else UserProfile.model_validate_json(row[0])

    def put_profile(self, profile: UserProfile) -> None:
        """Save the whole profile document (the caller merges; see ProfileWriter)."""
        with self._db.write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO profiles(user_id, doc, updated_at) VALUES (?,?,?)",
                (
                    profile.user_id,
                    profile.model_dump_json(),
                    _epoch(profile.updated_at, self._clock),
                ),
            )

    # ---------------------------------------------------------------- symbols
    def find_symbols(
        self, user_id: str, symbols: Sequence[str], limit: int = 20
    ) -> list[dict[str, Any]]:
        """Turns that mention any of `symbols` (case-insensitive), best relevance first."""
        if not symbols:
            return []
        marks = ",".join("?" * len(symbols))
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT symbol, session_id, turn_id, relevance, context FROM symbol_index "
                f"WHERE user_id=? AND lower(symbol) IN ({marks}) "
                f"ORDER BY relevance DESC, turn_id DESC LIMIT ?",
                (user_id, *[s.lower() for s in symbols], int(limit)),
            ).fetchall()
        return [
            {"symbol": s, "session_id": sid, "turn_id": t, "relevance": r, "context": c}
            for s, sid, t, r, c in rows
        ]

    # ---------------------------------------------------------------- costs
    def add_costs(self, rows: Sequence[Sequence[Any]]) -> None:
        """Append turn-cost rows: (cost_id, phase, user_id, session_id, stage, ms, calls,
        prompt_tokens, completion_tokens, created_at epoch) — see `langmem_plus.model.costs`."""
        if not rows:
            return
        for r in rows:
            if len(r) != 10:
                raise ValidationError(f"a turn-cost row has 10 fields, got {len(r)}")
            required_text("user_id", r[2])
            required_text("stage", r[4])
        with self._db.write() as conn:
            conn.executemany(
                "INSERT INTO turn_costs(cost_id, phase, user_id, session_id, stage, ms, calls, "
                "prompt_tokens, completion_tokens, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                [tuple(r) for r in rows],
            )

    def cost_rows(
        self, *, user_id: str | None = None, since: datetime | None = None
    ) -> list[dict[str, Any]]:
        """Persisted turn-cost rows (oldest first), optionally of one user / since a time."""
        conds: list[str] = []
        args: list[Any] = []
        if user_id is not None:
            conds.append("user_id=?")
            args.append(required_text("user_id", user_id))
        if since is not None:
            conds.append("created_at >= ?")
            args.append(_epoch(since))
        where = " WHERE " + " AND ".join(conds) if conds else ""
        cols = (
            "cost_id", "phase", "user_id", "session_id", "stage", "ms", "calls",
            "prompt_tokens", "completion_tokens", "created_at",
        )  # fmt: skip
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {', '.join(cols)} FROM turn_costs{where} ORDER BY id", args
            ).fetchall()
        return [dict(zip(cols, r, strict=True)) for r in rows]

    # ---------------------------------------------------------------- deletion
    def delete(
        self,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        older_than: datetime | None = None,
    ) -> DeleteCounts:
        """Delete turns, summaries and symbol entries matching every given condition."""
        check_delete(user_id, session_id, older_than)
        conds, args = [], []
        if user_id is not None:
            conds.append("user_id=?")
            args.append(user_id)
        if session_id is not None:
            conds.append("session_id=?")
            args.append(session_id)
        where = " AND ".join(conds) if conds else "1=1"
        cut = _epoch(older_than) if older_than is not None else None
        counts: DeleteCounts = {}
        with self._db.write() as conn:
            t_where = where + (" AND created_at < ?" if cut is not None else "")
            t_args = [*args, cut] if cut is not None else args
            for table in ("symbol_index", "turn_text"):
                conn.execute(
                    f"DELETE FROM {table} WHERE turn_id IN (SELECT id FROM turns WHERE {t_where})",
                    t_args,
                )
            counts["turns_deleted"] = conn.execute(
                f"DELETE FROM turns WHERE {t_where}", t_args
            ).rowcount
            counts["summaries_deleted"] = conn.execute(
                f"DELETE FROM rolling_summaries WHERE {t_where}", t_args
            ).rowcount
            counts["session_summaries_deleted"] = conn.execute(
                f"DELETE FROM session_summaries WHERE {t_where}", t_args
            ).rowcount
            conn.execute(f"DELETE FROM turn_costs WHERE {t_where}", t_args)
            if user_id is not None and session_id is None and cut is None:
                conn.execute("DELETE FROM profiles WHERE user_id=?", (user_id,))
        return counts

    def delete_all(self) -> DeleteCounts:
        """Delete every turn, summary, profile and symbol entry."""
        with self._db.write() as conn:
            counts = {
                "turns_deleted": conn.execute("DELETE FROM turns").rowcount,
                "summaries_deleted": conn.execute("DELETE FROM rolling_summaries").rowcount,
                "session_summaries_deleted": conn.execute("DELETE FROM session_summaries").rowcount,
            }
            conn.execute("DELETE FROM symbol_index")
            conn.execute("DELETE FROM turn_text")
            conn.execute("DELETE FROM profiles")
            conn.execute("DELETE FROM turn_costs")
        return counts


# a turn's text: its span of the episode item that shares it, else its own column
_TURN_COLS = (
    "t.id, t.user_id, t.session_id, t.role, "
    "COALESCE(substr(json_extract(i.value, '$.text'), x.start + 1, x.stop - x.start), t.content), "
    "t.symbols, t.created_at, t.is_collected"
)
_TURN_FROM = (
    "turns t LEFT JOIN turn_text x ON x.turn_id = t.id LEFT JOIN items i ON i.id = x.item_id"
)


def _turn(r: Sequence[Any]) -> ConversationTurn:
    return ConversationTurn(
        id=r[0],
        user_id=r[1],
        session_id=r[2],
        role=r[3],
        content=r[4],
        symbols=json.loads(r[5]),
        created_at=_dt(r[6]),
        is_collected=bool(r[7]),
    )
