"""The injectable clock: a store, its conversations and the lifecycle jobs all read it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from langmem_plus import HybridStore
from langmem_plus.clock import ManualClock, check_clock, clock_datetime, system_clock
from langmem_plus.episodic.lifecycle import cleanup_older_than, decay
from langmem_plus.errors import ValidationError
from langmem_plus.model.records import MemoryRecord

NS = ("memories", "u1")
T0 = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)


def _fact(id: str, created: datetime = T0) -> MemoryRecord:
    return MemoryRecord(id=id, namespace=NS, text=f"User likes {id}", created_at=created)


def _importance(store: HybridStore, key: str) -> float | None:
    item = store.get(NS, key)
    return None if item is None else MemoryRecord.from_item(item).importance


def test_manual_clock_moves_only_when_told() -> None:
    clock = ManualClock(100)
    assert clock() == 100.0 and clock() == 100.0
    assert clock.advance(2.5) == 102.5 and clock() == 102.5
    assert clock.set(50) == 50.0
    assert clock_datetime(clock) == datetime.fromtimestamp(50, tz=timezone.utc)
    with pytest.raises(ValidationError):
        clock.advance(-1)
    with pytest.raises(ValidationError):
        clock.advance("1")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        ManualClock(True)


def test_check_clock_defaults_to_the_wall_clock() -> None:
    assert check_clock(None) is system_clock
    clock = ManualClock()
    assert check_clock(clock) is clock
    with pytest.raises(ValidationError, match="callable"):
        check_clock("now")


def test_item_expires_when_the_fake_clock_passes_its_ttl(hash_index) -> None:
    clock = ManualClock()
    with HybridStore(index=hash_index, ttl={"omit_expired": True}, clock=clock) as store:
        store.put(("m",), "k", {"text": "a short-lived note"}, ttl=5)  # minutes
        clock.advance(5 * 60 - 1)
        assert store.get(("m",), "k", refresh_ttl=False) is not None
        clock.advance(2)
        assert store.get(("m",), "k") is None
        assert store.sweep_ttl() == 1
        assert store.stats()["items"] == 0


def test_timestamps_and_mark_used_follow_the_clock(hash_index) -> None:
    clock = ManualClock(T0.timestamp())
    with HybridStore(index=hash_index, clock=clock) as store:
        store.put(("m",), "k", {"text": "note"})
        item = store.get(("m",), "k")
        assert item is not None and item.created_at == T0
        clock.advance(60)
        assert store.mark_used(("m",), ["k"]) == 1
        hit = store.search(("m",), query="note")[0]
        assert hit.last_accessed == T0 + timedelta(seconds=60)
        turn = store.conversations.add_turn("u1", "s1", "user", "hello")
        assert turn.created_at == T0 + timedelta(seconds=60)


def test_decay_and_cleanup_default_to_the_store_clock(hash_index) -> None:
    clock = ManualClock(T0.timestamp())
    with HybridStore(index=hash_index, clock=clock) as store:
        for rec in (_fact("old"), _fact("new", created=T0 + timedelta(days=9))):
            store.put(NS, rec.id, rec.to_value())
        assert decay(store, NS).decayed == 0  # "now" is T0: nothing unused for 7 days yet
        clock.set((T0 + timedelta(days=10)).timestamp())
        assert decay(store, NS).decayed == 1  # "old" is 10 days unused, "new" one day
        assert _importance(store, "old") == pytest.approx(0.95)
        assert cleanup_older_than(store, NS, 5).deleted_ids == ["old"]
        assert store.get(NS, "new") is not None
