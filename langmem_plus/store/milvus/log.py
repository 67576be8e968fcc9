"""The conversation log of a Milvus store: turns, rolling and session summaries, profiles and
the symbol index as entities of one collection (`<name>_log`), the user as partition key.

Each record is its model's JSON (`body`) beside the scalar fields the queries filter on
(kind, hashes of user and session, id, creation time); filters compare hashes only. Turn and
summary ids are microsecond timestamps, increasing within a process (below 2**53, so they
survive JSON in any client). Milvus requires a vector field in every collection; this one
carries a constant 2-d placeholder and is never searched.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from typing import Any

from langmem_plus.clock import Clock, clock_datetime
from langmem_plus.errors import ValidationError
from langmem_plus.model.records import ConversationTurn, RollingSummary, SessionSummary, UserProfile
from langmem_plus.store.conversation import check_delete, check_turn, symbol_entries
from langmem_plus.store.milvus.schema import MAX_BYTES, and_, h, in_expr
from langmem_plus.store.milvus.session import MilvusSession
from langmem_plus.text.symbols import extract_symbols

__all__ = ["MilvusConversationLog"]

_FIELDS = ["pk", "kind", "user_id", "session_id", "rid", "created_at", "collected", "body"]
_id_lock = threading.Lock()
_last_id = 0


def _next_id() -> int:
    global _last_id
    with _id_lock:
        _last_id = max(_last_id + 1, time.time_ns() // 1000)
        return _last_id


def _utc(dt: datetime | None, clock: Clock) -> datetime:
    if dt is None:
        return clock_datetime(clock)
    return dt.replace(tzinfo=timezone.utc) if dt.tzinfo is None else dt.astimezone(timezone.utc)


def create_log_collection(pm: Any, client: Any, name: str, consistency: str) -> None:
    """Create the log collection when missing, and load it."""
    if not client.has_collection(name):
        dt = pm.DataType
        s = client.create_schema(auto_id=False, enable_dynamic_field=False)
        s.add_field("pk", dt.VARCHAR, is_primary=True, max_length=64)
        s.add_field("kind", dt.VARCHAR, max_length=16)
        s.add_field("user_h", dt.VARCHAR, max_length=32, is_partition_key=True)
        s.add_field("session_h", dt.VARCHAR, max_length=32)
        s.add_field("sym_h", dt.VARCHAR, max_length=32)
        s.add_field("user_id", dt.VARCHAR, max_length=MAX_BYTES)
        s.add_field("session_id", dt.VARCHAR, max_length=MAX_BYTES)
        s.add_field("rid", dt.INT64)
        s.add_field("rel", dt.DOUBLE)
        s.add_field("created_at", dt.DOUBLE)
        s.add_field("collected", dt.BOOL)
        s.add_field("body", dt.VARCHAR, max_length=MAX_BYTES)
        s.add_field("placeholder", dt.FLOAT_VECTOR, dim=2)
        ip = client.prepare_index_params()
        ip.add_index(field_name="placeholder", index_type="FLAT", metric_type="L2")
        client.create_collection(name, schema=s, index_params=ip, consistency_level=consistency)
    client.load_collection(name)


class MilvusConversationLog:
    """`ConversationLog` over Milvus (see the module docstring)."""

    def __init__(self, session: MilvusSession, name: str, clock: Clock) -> None:
        self._s = session
        self._name = name
        self._clock = clock

    # ---------------------------------------------------------------- plumbing
    def _record(
        self,
        kind: str,
        pk: str,
        user_id: str,
        session_id: str,
        rid: int,
        created: datetime,
        body: str,
        **extra: Any,
    ) -> dict[str, Any]:
        n = len(body.encode("utf-8", "surrogatepass"))
        if n > MAX_BYTES:
            raise ValidationError(
                f"this {kind} is {n} bytes as JSON; the Milvus backend stores at most {MAX_BYTES}"
            )
        return {
            "pk": pk,
            "kind": kind,
            "user_h": h(user_id),
            "session_h": h(session_id) if session_id else "",
            "sym_h": extra.get("sym_h", ""),
            "user_id": user_id,
            "session_id": session_id,
            "rid": rid,
            "rel": float(extra.get("rel", 0.0)),
            "created_at": created.timestamp(),
            "collected": bool(extra.get("collected", False)),
            "body": body,
            "placeholder": [1.0, 0.0],
        }

    def _find(self, kind: str, *exprs: str, fields: list[str] | None = None) -> list[dict]:
        expr = and_(f'kind == "{kind}"', *exprs)
        got = list(self._s.query_all(self._name, expr, fields or _FIELDS))
        return sorted(got, key=lambda e: int(e["rid"]))

    @staticmethod
    def _who(user_id: str | None, session_id: str | None) -> list[str]:
        out = []
        if user_id is not None:
            out.append(f'user_h == "{h(user_id)}"')
        if session_id is not None:
            out.append(f'session_h == "{h(session_id)}"')
        return out

    def _upsert(self, rows: list[dict[str, Any]]) -> None:
        for i in range(0, len(rows), 1000):
            self._s.client.upsert(self._name, rows[i : i + 1000])

    def _delete(self, pks: Sequence[str]) -> None:
        for i in range(0, len(pks), 1000):
            self._s.client.delete(self._name, filter=in_expr("pk", pks[i : i + 1000]))

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
        check_turn(user_id, session_id, role, content)
        syms = list(symbols) if symbols is not None else extract_symbols(content)
        turn = ConversationTurn(
            id=_next_id(),
            user_id=user_id,
            session_id=session_id,
            role=role,  # type: ignore[arg-type]
            content=content,
            created_at=_utc(created_at, self._clock),
            symbols=syms,
        )
        assert turn.id is not None
        rows = [
            self._record(
                "turn",
                f"t:{turn.id}:{h(user_id)}",
                user_id,
                session_id,
                turn.id,
                turn.created_at,
                turn.model_dump_json(),
            )
        ]
        for j, (sym, rel, ctx) in enumerate(symbol_entries(content, syms)):
            entry = {
                "symbol": sym,
                "session_id": session_id,
                "turn_id": turn.id,
                "relevance": rel,
                "context": ctx,
            }
            rows.append(
                self._record(
                    "symbol",
                    f"y:{turn.id}:{j}:{h(user_id)}",
                    user_id,
                    session_id,
                    turn.id,
                    turn.created_at,
                    json.dumps(entry, ensure_ascii=False),
                    sym_h=h(sym.lower()),
                    rel=rel,
                )
            )
        self._upsert(rows)
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
        exprs = [*self._who(user_id, session_id), f"rid > {int(after_id)}"]
        if uncollected_only:
            exprs.append("collected == false")
        got = self._find("turn", *exprs)
        out = [self._turn(e) for e in got]
        return out if limit is None else out[: int(limit)]

    @staticmethod
    def _turn(e: dict[str, Any]) -> ConversationTurn:
        turn = ConversationTurn.model_validate_json(e["body"])
        return turn.model_copy(update={"is_collected": bool(e["collected"])})

    def mark_collected(self, turn_ids: Iterable[int]) -> int:
        """Mark turns as processed by the post-turn processors; returns how many."""
        ids = sorted({int(t) for t in turn_ids})
        if not ids:
            return 0
        got: list[dict] = []
        for i in range(0, len(ids), 1000):
            part = ",".join(str(x) for x in ids[i : i + 1000])
            got += self._find(
                "turn",
                f"rid in [{part}]",
                fields=[*_FIELDS, "user_h", "session_h", "sym_h", "rel", "placeholder"],
            )
        for e in got:
            e["collected"] = True
        self._upsert(got)
        return len(got)

    def sessions(self, user_id: str | None = None) -> list[dict[str, Any]]:
        """Sessions with turn counts and first/last activity, newest first."""
        spans: dict[tuple[str, str], list[datetime]] = {}
        for e in self._find("turn", *self._who(user_id, None)):
            t = self._turn(e)
            spans.setdefault((t.user_id, t.session_id), []).append(t.created_at)
        rows = [
            {
                "user_id": u,
                "session_id": s,
                "turn_count": len(ts),
                "created_at": min(ts),
                "last_active": max(ts),
            }
            for (u, s), ts in spans.items()
        ]
        return sorted(rows, key=lambda r: r["last_active"], reverse=True)

    def users(self) -> list[str]:
        """Every user with turns, a profile or a session summary."""
        expr = 'kind in ["turn", "profile", "session"]'
        return sorted({e["user_id"] for e in self._s.query_all(self._name, expr, ["user_id"])})

    # ---------------------------------------------------------------- summaries
    def add_rolling_summary(self, summary: RollingSummary) -> RollingSummary:
        """Store a rolling summary; returns it with its id."""
        if summary.end_turn < summary.start_turn:
            raise ValidationError("end_turn must not be before start_turn")
        saved = summary.model_copy(update={"id": _next_id()})
        assert saved.id is not None
        self._upsert(
            [
                self._record(
                    "rolling",
                    f"r:{saved.id}:{h(saved.user_id)}",
                    saved.user_id,
                    saved.session_id,
                    saved.id,
                    saved.created_at,
                    saved.model_dump_json(),
                )
            ]
        )
        return saved

    def rolling_summaries(
        self, user_id: str, session_id: str | None = None
    ) -> list[RollingSummary]:
        """Rolling summaries of a user (optionally one session), oldest first."""
        got = self._find("rolling", *self._who(user_id, session_id))
        return [RollingSummary.model_validate_json(e["body"]) for e in got]

    def set_session_summary(self, summary: SessionSummary) -> None:
        """Write (or replace) the title and snippet of a session."""
        pk = "s:" + h(summary.user_id + "\x00" + summary.session_id)
        self._upsert(
            [
                self._record(
                    "session",
                    pk,
                    summary.user_id,
                    summary.session_id,
                    0,
                    summary.created_at,
                    summary.model_dump_json(),
                )
            ]
        )

    def session_summaries(
        self, user_id: str, *, limit: int = 10, exclude_session: str | None = None
    ) -> list[SessionSummary]:
        """The most recent session summaries of a user, newest first."""
        found = [
            SessionSummary.model_validate_json(e["body"])
            for e in self._find("session", *self._who(user_id, None))
            if e["session_id"] != (exclude_session or "")
        ]
        return sorted(found, key=lambda s: s.created_at, reverse=True)[: int(limit)]

    # ---------------------------------------------------------------- profiles, symbols
    def get_profile(self, user_id: str) -> UserProfile | None:
        """The user's profile document, or None."""
        got = self._find("profile", *self._who(user_id, None))
        return UserProfile.model_validate_json(got[0]["body"]) if got else None

    def put_profile(self, profile: UserProfile) -> None:
        """Save the whole profile document."""
        self._upsert(
            [
                self._record(
                    "profile",
                    "p:" + h(profile.user_id),
                    profile.user_id,
                    "",
                    0,
                    clock_datetime(self._clock),
                    profile.model_dump_json(),
                )
            ]
        )

    def find_symbols(
        self, user_id: str, symbols: Sequence[str], limit: int = 20
    ) -> list[dict[str, Any]]:
        """Turns mentioning any of `symbols` (case-insensitive), best relevance first."""
        wanted = sorted({h(s.lower()) for s in symbols})
        if not wanted:
            return []
        got = self._find("symbol", *self._who(user_id, None), in_expr("sym_h", wanted))
        found = [json.loads(e["body"]) for e in got]
        found.sort(key=lambda e: (-e["relevance"], -e["turn_id"]))
        return found[: int(limit)]

    # ---------------------------------------------------------------- deletion
    def delete(
        self,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        older_than: datetime | None = None,
    ) -> dict[str, int]:
        """Delete turns and summaries matching every given condition; returns counts."""
        check_delete(user_id, session_id, older_than)
        exprs = self._who(user_id, session_id)
        if older_than is not None:
            exprs.append(f"created_at < {_utc(older_than, self._clock).timestamp()!r}")
        fields = ["pk", "rid"]
        turns = self._find("turn", *exprs, fields=fields)
        rolling = self._find("rolling", *exprs, fields=fields)
        titles = self._find("session", *exprs, fields=fields)
        gone = [e["pk"] for e in turns + rolling + titles]
        ids = [int(e["rid"]) for e in turns]
        for i in range(0, len(ids), 1000):
            part = ",".join(str(x) for x in ids[i : i + 1000])
            gone += [e["pk"] for e in self._find("symbol", f"rid in [{part}]", fields=fields)]
        if user_id is not None and session_id is None and older_than is None:
            gone += [e["pk"] for e in self._find("profile", *exprs, fields=fields)]
        self._delete(gone)
        return {
            "turns_deleted": len(turns),
            "summaries_deleted": len(rolling),
            "session_summaries_deleted": len(titles),
        }

    def delete_all(self) -> dict[str, int]:
        """Delete every turn, summary, profile and symbol entry; returns counts."""
        counts = {
            "turns_deleted": len(self._find("turn", fields=["pk", "rid"])),
            "summaries_deleted": len(self._find("rolling", fields=["pk", "rid"])),
            "session_summaries_deleted": len(self._find("session", fields=["pk", "rid"])),
        }
        self._s.client.delete(self._name, filter='pk != ""')
        return counts
