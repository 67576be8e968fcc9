"""API keys and per-key rate limits for the REST and MCP servers (#11 item 5).

A key is bound to one user (it acts as that user and no other) or marked admin (it may act
for any user it names). Keys live in the memory database itself, in a table this module
creates (``api_keys``); only a SHA-256 digest of each token is stored, and the plain token is
shown once, when the key is created (``langmem-plus keys create``).

Tokens look like ``lmp_<key id>_<secret>``: the 12-hex-digit key id names the row to check
(and is what ``keys list`` and ``keys revoke`` show); the secret is 256 random bits.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from langmem_plus.errors import LangmemPlusError, ValidationError
from langmem_plus.model.namespaces import check_user_id
from langmem_plus.store.db.database import Database

__all__ = [
    "TOKEN_PREFIX",
    "ApiKey",
    "AuthenticationError",
    "KeyNotFoundError",
    "KeyStore",
    "RateLimiter",
    "hash_token",
]

TOKEN_PREFIX = "lmp_"
_KEY_ID_RE = re.compile(r"^[0-9a-f]{12}$")
_TOKEN_RE = re.compile(r"^lmp_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$")
_MAX_LABEL = 200

_SCHEMA = """
CREATE TABLE IF NOT EXISTS api_keys (
    key_id TEXT PRIMARY KEY,
    key_hash TEXT NOT NULL,
    user_id TEXT,
    admin INTEGER NOT NULL DEFAULT 0,
    label TEXT,
    created_at REAL NOT NULL,
    revoked_at REAL,
    CHECK ((admin = 1 AND user_id IS NULL) OR (admin = 0 AND user_id IS NOT NULL))
)
"""


class AuthenticationError(LangmemPlusError, PermissionError):
    """An API key is missing, malformed, unknown or revoked."""


class KeyNotFoundError(LangmemPlusError, KeyError):
    """No API key with that id exists."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else "API key not found"


def hash_token(token: str) -> str:
    """The digest stored for `token`: hex SHA-256 of its UTF-8 bytes.

    A slow password hash (bcrypt, scrypt, Argon2) exists to make guessing low-entropy
    passwords expensive after a leak. A token's secret is 256 bits from `secrets`: no
    guessing can find it, so one SHA-256 (preimage-resistant) is as safe, and checking a
    key on every request stays in microseconds instead of tens of milliseconds.
    """
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _dt(epoch: float | None) -> datetime | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, timezone.utc)


@dataclass(frozen=True)
class ApiKey:
    """One API key as stored (never the token): its id, whom it acts for, and its state."""

    key_id: str
    user_id: str | None
    admin: bool
    label: str | None
    created_at: datetime
    revoked_at: datetime | None = None

    @property
    def active(self) -> bool:
        """True until the key is revoked."""
        return self.revoked_at is None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (ISO times), as ``keys list --json`` prints it."""
        return {
            "key_id": self.key_id,
            "user_id": self.user_id,
            "admin": self.admin,
            "label": self.label,
            "created_at": self.created_at.isoformat(),
            "revoked_at": None if self.revoked_at is None else self.revoked_at.isoformat(),
            "active": self.active,
        }


_COLUMNS = "key_id, user_id, admin, label, created_at, revoked_at"


def _row_key(row: tuple[Any, ...]) -> ApiKey:
    key_id, user_id, admin, label, created, revoked = row
    created_at = _dt(created)
    assert created_at is not None
    return ApiKey(key_id, user_id, bool(admin), label, created_at, _dt(revoked))


class KeyStore:
    """The API keys of one memory database: create, list, revoke, authenticate.

    Pass the store's `Database` (``memory.store.db``) to share its connection, or use
    `KeyStore.open(path)` for a database file alone (the CLI). Revocation takes effect on the
    next request of every server using the file: the REST server authenticates each request,
    and an MCP server started with a key checks it again before each tool call.
    """

    def __init__(self, db: Database, *, clock: Callable[[], float] = time.time) -> None:
        if not isinstance(db, Database):
            raise ValidationError(f"db must be a Database, got {type(db).__name__}")
        self.db = db
        self._clock = clock
        self._owns_db = False
        with db.read() as conn:
            exists = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='api_keys'"
            ).fetchone()
        if exists is None:  # only the first use writes (BEGIN IMMEDIATE ... CREATE)
            with db.write() as conn:
                conn.execute(_SCHEMA)

    @classmethod
    def open(cls, path: str | Path) -> KeyStore:
        """The keys of the database file at `path` (created if missing); close it after."""
        if not isinstance(path, (str, Path)) or not str(path):
            raise ValidationError(f"path must be a database file path, got {path!r}")
        store = cls(Database(Path(path)))
        store._owns_db = True
        return store

    def close(self) -> None:
        """Close the database if this key store opened it."""
        if self._owns_db:
            self.db.close()

    def __enter__(self) -> KeyStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def create(
        self, *, user_id: str | None = None, admin: bool = False, label: str | None = None
    ) -> tuple[ApiKey, str]:
        """A new key for `user_id` (or an admin key); returns it and its token, shown once."""
        if admin and user_id is not None:
            raise ValidationError("an admin key acts for any user: give user_id or admin, not both")
        if not admin:
            if user_id is None:
                raise ValidationError("a key needs a user (user_id) or admin=True")
            check_user_id(user_id)
        if label is not None and (not isinstance(label, str) or len(label) > _MAX_LABEL):
            raise ValidationError(f"label must be a string of at most {_MAX_LABEL} characters")
        key_id = secrets.token_hex(6)
        token = f"{TOKEN_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
        now = self._clock()
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO api_keys(key_id, key_hash, user_id, admin, label, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (key_id, hash_token(token), None if admin else user_id, int(admin), label, now),
            )
        created_at = _dt(now)
        assert created_at is not None
        return ApiKey(key_id, None if admin else user_id, admin, label, created_at), token

    def list_keys(self, *, include_revoked: bool = True) -> list[ApiKey]:
        """Every key, oldest first (revoked ones too unless `include_revoked` is False)."""
        where = "" if include_revoked else " WHERE revoked_at IS NULL"
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM api_keys{where} ORDER BY created_at, key_id"
            ).fetchall()
        return [_row_key(r) for r in rows]

    def get(self, key_id: str) -> ApiKey:
        """The key with id `key_id`; `KeyNotFoundError` when there is none."""
        if not isinstance(key_id, str) or not _KEY_ID_RE.match(key_id):
            raise ValidationError(f"a key id is 12 hex digits (see `keys list`), got {key_id!r}")
        with self.db.read() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM api_keys WHERE key_id=?", (key_id,)
            ).fetchone()
        if row is None:
            raise KeyNotFoundError(f"no API key with id {key_id!r}")
        return _row_key(row)

    def revoke(self, key_id: str) -> ApiKey:
        """Revoke a key (idempotent); it stops working on the next request."""
        key = self.get(key_id)
        if key.active:
            with self.db.write() as conn:
                conn.execute(
                    "UPDATE api_keys SET revoked_at=? WHERE key_id=? AND revoked_at IS NULL",
                    (self._clock(), key_id),
                )
        return self.get(key_id)

    def active_count(self) -> int:
        """How many keys are not revoked (0: the server trusts X-User-Id on loopback)."""
        with self.db.read() as conn:
            row = conn.execute("SELECT COUNT(*) FROM api_keys WHERE revoked_at IS NULL").fetchone()
        return int(row[0])

    def authenticate(self, token: str) -> ApiKey:
        """The active key whose token this is; `AuthenticationError` otherwise."""
        m = _TOKEN_RE.match(token) if isinstance(token, str) else None
        if m is None:
            raise AuthenticationError("malformed API key (expected lmp_<id>_<secret>)")
        with self.db.read() as conn:
            row = conn.execute(
                f"SELECT key_hash, {_COLUMNS} FROM api_keys WHERE key_id=?", (m.group(1),)
            ).fetchone()
        # compare digests in constant time; an unknown id still costs one comparison
        stored = row[0] if row is not None else "0" * 64
        if not hmac.compare_digest(stored, hash_token(token)) or row is None:
            raise AuthenticationError("unknown API key")
        key = _row_key(row[1:])
        if not key.active:
            raise AuthenticationError("this API key was revoked")
        return key


class RateLimiter:
    """A token bucket per key: `per_minute` requests on average, bursts up to `burst`.

    `clock` returns seconds (monotonic); tests pass a fake one, so no test sleeps.
    """

    def __init__(
        self,
        per_minute: float,
        burst: int | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if isinstance(per_minute, bool) or not isinstance(per_minute, (int, float)):
            raise ValidationError(f"per_minute must be a number, got {per_minute!r}")
        if not math.isfinite(per_minute) or per_minute <= 0:
            raise ValidationError(f"per_minute must be positive, got {per_minute!r}")
        if burst is None:
            burst = max(1, math.ceil(per_minute / 6))  # ten seconds' worth
        if isinstance(burst, bool) or not isinstance(burst, int) or burst < 1:
            raise ValidationError(f"burst must be a positive integer, got {burst!r}")
        self.rate = float(per_minute) / 60.0
        self.burst = burst
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def acquire(self, key: str, cost: float = 1.0) -> float:
        """Take `cost` (default one request) from `key`'s bucket: 0.0 if allowed, else
        seconds until it is. A cost above `burst` could never pass: `ValidationError`."""
        if not 0 < cost <= self.burst:
            raise ValidationError(f"cost must be in (0, burst={self.burst}], got {cost!r}")
        with self._lock:
            now = self._clock()
            tokens, last = self._buckets.get(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + max(0.0, now - last) * self.rate)
            if tokens >= cost:
                self._buckets[key] = (tokens - cost, now)
                return 0.0
            self._buckets[key] = (tokens, now)
            return (cost - tokens) / self.rate
