"""The change feed (store/db/changefeed.py) hands a subscriber exactly what it missed, or restarts it.

A recording subscriber over a real database: entries past its watermark arrive in log order;
a log compacted past the watermark, a reset entry, a replaced database (head behind the
watermark) or an empty subscriber restart it instead; its watermark always ends at the head.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import pytest

from langmem_plus.errors import ValidationError
from langmem_plus.store.db.changefeed import (
    KEYWORD_FEED,
    OP_ADD,
    OP_REMOVE,
    OP_ROW,
    VECTOR_FEED,
    Change,
)
from langmem_plus.store.db.database import Database, in_chunks


class Recorder:
    def __init__(self, empty: bool = False) -> None:
        self.watermark = 0
        self.empty = empty
        self.applied: list[Change] = []
        self.restarts = 0

    def holds_nothing(self) -> bool:
        return self.empty

    def restart(self, conn: sqlite3.Connection) -> None:
        self.restarts += 1

    def apply(self, conn: sqlite3.Connection, changes: Sequence[Change]) -> None:
        self.applied.extend(changes)


@pytest.fixture
def db():
    d = Database(None)
    yield d
    d.close()


def _append(db: Database, feed, changes) -> None:
    with db.write() as conn:
        feed.append(conn, changes)


def _sync(db: Database, feed, sub: Recorder) -> None:
    with db.read() as conn:
        feed.sync(conn, sub)


@pytest.mark.parametrize("feed", [KEYWORD_FEED, VECTOR_FEED])
def test_entries_past_the_watermark_arrive_in_order_once(db, feed):
    sub = Recorder()
    _append(db, feed, [(1, 10, OP_ADD), (1, 11, OP_ADD)])
    _sync(db, feed, sub)
    _append(db, feed, [(2, 10, OP_REMOVE), (1, 12, OP_ROW)])
    _sync(db, feed, sub)
    _sync(db, feed, sub)  # nothing new: nothing applied again
    assert sub.applied == [(1, 10, OP_ADD), (1, 11, OP_ADD), (2, 10, OP_REMOVE), (1, 12, OP_ROW)]
    assert sub.restarts == 0
    with db.read() as conn:
        assert sub.watermark == feed.head(conn) == 4


def test_a_log_compacted_past_the_watermark_restarts_the_subscriber(db):
    sub = Recorder()
    _append(db, KEYWORD_FEED, [(1, 1, OP_ADD)])
    _sync(db, KEYWORD_FEED, sub)
    _append(db, KEYWORD_FEED, [(1, 2, OP_ADD), (1, 3, OP_ADD), (1, 4, OP_ADD)])
    with db.write() as conn:
        KEYWORD_FEED.keep_newest(conn, 1)  # entries 2 and 3 are gone
        assert not KEYWORD_FEED.reaches_back_to(conn, 1)
        assert KEYWORD_FEED.reaches_back_to(conn, 3)
    _sync(db, KEYWORD_FEED, sub)
    assert sub.restarts == 1 and sub.applied == [(1, 1, OP_ADD)] and sub.watermark == 4


def test_a_reset_restarts_the_subscriber_and_empties_the_log(db):
    sub = Recorder()
    _append(db, VECTOR_FEED, [(1, 1, OP_ADD)])
    _sync(db, VECTOR_FEED, sub)
    with db.write() as conn:
        VECTOR_FEED.reset(conn)
        assert VECTOR_FEED.size(conn) == 1
    _sync(db, VECTOR_FEED, sub)
    assert sub.restarts == 1 and sub.applied == [(1, 1, OP_ADD)] and sub.watermark == 2


def test_a_head_behind_the_watermark_is_another_database(db):
    sub = Recorder()
    sub.watermark = 99
    _append(db, KEYWORD_FEED, [(1, 1, OP_ADD)])
    _sync(db, KEYWORD_FEED, sub)
    assert sub.restarts == 1 and not sub.applied and sub.watermark == 1


def test_an_empty_subscriber_skips_reading_and_restarts(db):
    sub = Recorder(empty=True)
    _append(db, KEYWORD_FEED, [(1, 1, OP_ADD)])
    _sync(db, KEYWORD_FEED, sub)
    assert sub.restarts == 1 and not sub.applied and sub.watermark == 1


def test_the_head_survives_a_log_emptied_by_compaction(db):
    _append(db, VECTOR_FEED, [(1, 1, OP_ADD), (1, 2, OP_ADD)])
    with db.write() as conn:
        VECTOR_FEED.drop_through(conn, 2)
        assert VECTOR_FEED.size(conn) == 0 and VECTOR_FEED.head(conn) == 2
        assert VECTOR_FEED.reaches_back_to(conn, 2)
        assert not VECTOR_FEED.reaches_back_to(conn, 1)


def test_in_chunks_splits_with_placeholders_and_refuses_a_bad_size():
    got = list(in_chunks(range(5), 2))
    assert got == [([0, 1], "?,?"), ([2, 3], "?,?"), ([4], "?")]
    assert list(in_chunks([])) == []
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValidationError):
            list(in_chunks([1], bad))  # type: ignore[arg-type]
