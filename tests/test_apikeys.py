"""API keys (hashed at rest, bound to a user or admin), the per-key token bucket, and the
CLI that manages them (`keys create|list|revoke`, `serve`'s loopback rule) — #11 item 5."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langmem_plus.cli import is_loopback, main
from langmem_plus.errors import ValidationError
from langmem_plus.server.apikeys import (
    AuthenticationError,
    KeyNotFoundError,
    KeyStore,
    RateLimiter,
    hash_token,
)


class FakeClock:
    """Seconds that move only when a test says so."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def keys(tmp_path: Path):
    with KeyStore.open(tmp_path / "k.db") as ks:
        yield ks


# ------------------------------------------------------------------------ KeyStore
def test_token_is_shown_once_and_only_its_hash_is_stored(keys, tmp_path):
    key, token = keys.create(user_id="alice", label="laptop")
    assert token.startswith(f"lmp_{key.key_id}_") and len(token) == 4 + 12 + 1 + 43
    assert key.user_id == "alice" and not key.admin and key.active and key.label == "laptop"
    with keys.db.read() as conn:
        (stored,) = conn.execute("SELECT key_hash FROM api_keys").fetchone()
    assert stored == hashlib.sha256(token.encode()).hexdigest() == hash_token(token)
    secret = token[17:]
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("k.db"))
    assert key.key_id.encode() in raw and secret.encode() not in raw
    assert keys.authenticate(token) == key
    assert all(not hasattr(k, "token") for k in keys.list_keys())


def test_authenticate_rejects_wrong_malformed_and_revoked(keys):
    key, token = keys.create(user_id="alice")
    _, other_token = keys.create(user_id="bob")
    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    swapped = f"lmp_{key.key_id}_{other_token[17:]}"  # bob's secret under alice's id
    for bad in (flipped, swapped, "", "lmp_", "Bearer " + token, token + "x", 42, None):
        with pytest.raises(AuthenticationError):
            keys.authenticate(bad)  # type: ignore[arg-type]
    assert keys.revoke(key.key_id).active is False
    with pytest.raises(AuthenticationError, match="revoked"):
        keys.authenticate(token)
    assert keys.revoke(key.key_id).revoked_at is not None  # idempotent
    assert keys.authenticate(other_token).user_id == "bob"
    assert isinstance(AuthenticationError("x"), PermissionError)


def test_create_validates_its_arguments(keys):
    for kwargs in (
        {},
        {"user_id": "alice", "admin": True},
        {"user_id": ""},
        {"user_id": "bad\ud800id"},
        {"user_id": "x" * 257},
        {"user_id": "alice", "label": "x" * 201},
        {"user_id": "alice", "label": 5},
    ):
        with pytest.raises(ValidationError):
            keys.create(**kwargs)
    assert keys.list_keys() == []  # nothing was written


def test_list_revoke_and_counts(keys):
    assert keys.active_count() == 0
    a, _ = keys.create(user_id="john.smith")
    b, _ = keys.create(admin=True)
    assert keys.active_count() == 2
    keys.revoke(a.key_id)
    assert [k.key_id for k in keys.list_keys(include_revoked=False)] == [b.key_id]
    assert {k.key_id for k in keys.list_keys()} == {a.key_id, b.key_id}
    assert keys.active_count() == 1
    assert keys.get(b.key_id).admin and keys.get(b.key_id).user_id is None
    with pytest.raises(KeyNotFoundError):
        keys.revoke("0" * 12)
    with pytest.raises(ValidationError):
        keys.revoke("not-an-id")
    assert keys.get(a.key_id).to_dict()["active"] is False


def test_revocation_is_seen_by_another_connection(tmp_path):
    """Two handles on one file (a server and the CLI): a revoke takes effect at once."""
    with KeyStore.open(tmp_path / "k.db") as server, KeyStore.open(tmp_path / "k.db") as cli:
        key, token = cli.create(user_id="alice")
        assert server.authenticate(token).key_id == key.key_id
        cli.revoke(key.key_id)
        with pytest.raises(AuthenticationError):
            server.authenticate(token)


def test_keystore_needs_a_database():
    with pytest.raises(ValidationError):
        KeyStore("k.db")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        KeyStore.open("")


# ------------------------------------------------------------------------ RateLimiter
def test_token_bucket_bursts_then_refills():
    clock = FakeClock()
    limiter = RateLimiter(60, burst=3, clock=clock)  # one per second
    assert [limiter.acquire("k1") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.acquire("k1") == pytest.approx(1.0)
    assert limiter.acquire("k2") == 0.0  # buckets are per key
    clock.now += 0.5
    assert limiter.acquire("k1") == pytest.approx(0.5)
    clock.now += 0.5
    assert limiter.acquire("k1") == 0.0
    clock.now += 3600
    assert [limiter.acquire("k1") for _ in range(4)][-1] > 0  # refills to the burst only


def test_rate_limiter_rejects_bad_settings():
    for args in (
        (0,),
        (-1,),
        (float("nan"),),
        (float("inf"),),
        ("10",),
        (True,),
        (10, 0),
        (10, 1.5),
    ):
        with pytest.raises(ValidationError):
            RateLimiter(*args)  # type: ignore[arg-type]
    assert RateLimiter(600).burst == 100  # default: ten seconds' worth


@settings(max_examples=60, deadline=None)
@given(
    per_minute=st.floats(1, 6000),
    burst=st.integers(1, 20),
    gaps=st.lists(st.floats(0, 5), min_size=1, max_size=80),
)
def test_property_never_more_than_burst_plus_rate_times_time(per_minute, burst, gaps):
    """Over any window, allowed requests <= burst + rate x window; a refusal's wait is exact."""
    clock = FakeClock(0.0)
    limiter = RateLimiter(per_minute, burst, clock=clock)
    allowed = 0
    for gap in gaps:
        clock.now += gap
        wait = limiter.acquire("k")
        if wait == 0.0:
            allowed += 1
        else:
            assert wait > 0
        assert allowed <= burst + clock.now * per_minute / 60 + 1e-6
    clock.now += 60 * burst / per_minute + 1e-3  # long enough to refill
    assert limiter.acquire("k") == 0.0


# ------------------------------------------------------------------------ CLI
@pytest.fixture
def run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LANGMEM_PLUS_DB", str(tmp_path / "m.db"))
    monkeypatch.setenv("LANGMEM_PLUS_EMBEDDINGS", "none")
    monkeypatch.setenv("LANGMEM_PLUS_USER", "env-user")  # never used for keys

    def _run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return _run


def test_cli_keys_create_list_revoke(run, tmp_path):
    assert run("init")[0] == 0
    code, out, err = run("keys", "create", "--user", "john.smith", "--label", "ci", "--json")
    assert code == 0, err
    created = json.loads(out)
    assert created["user_id"] == "john.smith" and created["admin"] is False
    token = created["token"]
    code, out, _ = run("keys", "create", "--admin")
    assert code == 0 and "shown only now" in out
    listed = json.loads(run("keys", "list", "--json")[1])
    assert [k["user_id"] for k in listed] == ["john.smith", None]
    assert token not in json.dumps(listed) and "token" not in listed[0]
    with KeyStore.open(tmp_path / "m.db") as ks:
        assert ks.authenticate(token).user_id == "john.smith"
    assert run("keys", "revoke", created["key_id"])[0] == 0
    assert len(json.loads(run("keys", "list", "--json")[1])) == 1
    assert len(json.loads(run("keys", "list", "--all", "--json")[1])) == 2
    code, _, err = run("keys", "revoke", "0" * 12)
    assert code == 1 and "no API key" in err


@pytest.mark.parametrize(
    "argv",
    [
        ("keys", "create"),  # neither --user nor --admin (LANGMEM_PLUS_USER is not enough)
        ("keys", "create", "--user", "alice", "--admin"),
        ("keys", "create", "--user", ""),
        ("keys", "revoke", "xyz"),
        ("keys",),
    ],
)
def test_cli_keys_usage_errors(run, argv):
    run("keys", "create", "--admin")  # so the database exists
    code, _, err = run(*argv)
    assert code == 2
    assert "Traceback" not in err


def test_cli_keys_list_needs_an_existing_database(run, tmp_path):
    code, _, err = run("--db", str(tmp_path / "typo.db"), "keys", "list")
    assert code == 2 and "no database" in err
    assert not (tmp_path / "typo.db").exists()


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("[::1]", True),
     ("localhost", True), ("LOCALHOST", True), ("0.0.0.0", False), ("::", False),
     ("192.168.1.5", False), ("example.com", False), ("", False)],
)  # fmt: skip
def test_is_loopback(host, loopback):
    assert is_loopback(host) is loopback


def test_serve_refuses_a_public_address_without_keys(run, monkeypatch):
    uvicorn = pytest.importorskip("uvicorn")
    started: list[dict] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: started.append({"app": app, **kw}))
    assert run("init")[0] == 0
    code, _, err = run("serve", "--host", "0.0.0.0")
    assert code == 2 and "refusing to serve on 0.0.0.0" in err and "keys create" in err
    assert started == []
    # loopback without keys: served, X-User-Id trusted
    assert run("serve", "--host", "127.0.0.1", "--port", "9")[0] == 0
    assert started[-1]["host"] == "127.0.0.1"
    assert started[-1]["app"].state.allowed_hosts is None  # loopback Host names only
    assert run("serve", "--allowed-host", "box.lan", "--allowed-host", "Box2.lan")[0] == 0
    assert started[-1]["app"].state.allowed_hosts == {"box.lan", "box2.lan"}
    # with a key: a public address is served, and keys are required there
    assert run("keys", "create", "--user", "alice")[0] == 0
    assert run("serve", "--host", "0.0.0.0", "--rate-limit", "0")[0] == 0
    app = started[-1]["app"]
    assert started[-1]["host"] == "0.0.0.0" and app.state.require_keys is True
    assert app.state.rate_limiter is None
    # revoking the last key does not open the door again: the next start refuses
    key_id = json.loads(run("keys", "list", "--json")[1])[0]["key_id"]
    run("keys", "revoke", key_id)
    assert run("serve", "--host", "0.0.0.0")[0] == 2


def test_serve_rejects_bad_limits(run):
    assert run("serve", "--max-body-bytes", "0")[0] == 2
    assert run("serve", "--rate-limit", "-1")[0] == 2
    assert run("serve", "--work-limit", "-1")[0] == 2
    assert run("serve", "--max-messages", "0")[0] == 2
