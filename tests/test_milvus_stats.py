"""The Milvus store's BM25 statistics kept as writes happen (store/milvus/stats.py): a search reads
its scope's counts from statistics rows instead of listing the scope; the rows stay equal to a
recount of the items under random writes from several handles, also writing at once from
several threads; a failed write takes its counts back; collections made before the rows get
them counted on open; closed handles' rows fold; a drift is reported and repaired.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp
from milvus_fixtures import LiteFile, requires_lite

from langmem_plus import HybridStore
from langmem_plus.clock import ManualClock
from langmem_plus.store.milvus.stats import Counts

pytestmark = requires_lite

T0 = 1_700_000_000.0
NS = ("users", "u1")
WORDS = ["川菜", "coffee", "tea", "running", "python", "北京", "cat", "dog", "travel", "music"]


@pytest.fixture(scope="module")
def lite(tmp_path_factory: pytest.TempPathFactory) -> LiteFile:
    return LiteFile(tmp_path_factory.mktemp("milvus_stats"))


def _text(i: int) -> str:
    return " ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 2 + i % 5))


def _sums(store: HybridStore) -> dict[str, Counts]:
    return store._storage.book.sums()  # type: ignore[attr-defined,no-any-return]


def _recount(store: HybridStore) -> dict[str, Counts]:
    from langmem_plus.store.milvus.schema import h
    from langmem_plus.store.seams import ns_key

    counted = store._storage.book.recount()  # type: ignore[attr-defined]
    return {h(ns_key(ns)): c for ns, c in counted.items()}


def _nonzero(d: dict[str, Counts]) -> dict[str, Counts]:
    return {k: c for k, c in d.items() if c != Counts()}


class _Rows:
    """Counts the entities every Milvus request of a store returns."""

    def __init__(self, store: HybridStore) -> None:
        self.rows = 0
        client: Any = store._storage.client  # type: ignore[attr-defined]
        for name in ("query", "search"):
            real = getattr(client, name)

            def spy(*a: Any, _real: Any = real, _name: str = name, **k: Any) -> Any:
                got = _real(*a, **k)
                self.rows += sum(len(x) for x in got) if _name == "search" else len(got)
                return got

            object.__setattr__(client, name, spy)


def test_a_search_reads_its_scope_counts_not_its_documents(lite: LiteFile) -> None:
    """A query matching 2 of 300 items moves a few dozen rows (statistics, the matches, the
    vector and the candidates' rows), not a listing of the 300 documents' lengths."""
    s = lite.open(index=False)
    s.batch([PutOp(NS, f"k{i}", {"text": f"note {i} about the weekly report"}) for i in range(298)])
    s.put(NS, "a", {"text": "川菜 lunch with Ann"})
    s.put(NS, "b", {"text": "川菜 dinner"})
    spy = _Rows(s)
    hits = s.search(NS, query="川菜", limit=5)
    assert {h.key for h in hits} == {"a", "b"}
    assert spy.rows < 50, spy.rows
    s.close()


def test_scores_over_the_statistics_equal_sqlite_after_updates_and_deletes(
    lite: LiteFile,
) -> None:
    clock = ManualClock(T0)
    sqlite = HybridStore(index=False, clock=clock)
    milvus = lite.open(index=False, clock=clock)
    for s in (sqlite, milvus):
        for i in range(60):
            s.put(NS, f"k{i}", {"text": _text(i)})
        for i in range(0, 60, 7):
            s.put(NS, f"k{i}", {"text": _text(i + 3) + " 川菜"})  # replaced: other length
        for i in range(1, 60, 5):
            s.delete(NS, f"k{i}")
        s.put(NS, "quiet", {"text": "川菜 coffee"}, index=False)  # an item, not a document
    for query in ("川菜", "coffee tea", "北京 running music"):
        want = [(h.key, h.score) for h in sqlite.search(NS, query=query, limit=10)]
        got = [(h.key, h.score) for h in milvus.search(NS, query=query, limit=10)]
        assert [k for k, _ in got] == [k for k, _ in want]
        assert [v for _, v in got] == pytest.approx([v for _, v in want], rel=1e-9)
    assert _nonzero(_sums(milvus)) == _recount(milvus)
    sqlite.close()
    milvus.close()


OPS = st.lists(
    st.tuples(
        st.integers(0, 2),  # the handle
        st.sampled_from(["put", "put", "delete", "unindexed"]),
        st.sampled_from([("users", "u1"), ("users", "u1", "notes"), ("users", "u2"), ("solo",)]),
        st.integers(0, 5),  # the key
        st.integers(0, 20),  # the text
    ),
    min_size=1,
    max_size=25,
)


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=OPS)
def test_statistics_equal_a_recount_under_random_writes_from_several_handles(
    lite: LiteFile, ops: list[tuple[int, str, tuple[str, ...], int, int]]
) -> None:
    first = lite.open(index=False)
    handles = [first, HybridStore(lite.path, index=False), HybridStore(lite.path, index=False)]
    for who, op, ns, key, text in ops:
        s = handles[who]
        if op == "delete":
            s.delete(ns, f"k{key}")
        else:
            s.put(ns, f"k{key}", {"text": _text(text)}, index=None if op == "put" else False)
    assert _nonzero(_sums(first)) == _recount(first)
    for prefix in (("users",), ("users", "u1"), ("users", "u1", "notes"), ("solo",)):
        got = first._storage.book.scope(  # type: ignore[attr-defined]
            first._storage._new_session(),  # type: ignore[attr-defined]
            prefix,
            True,
        )
        n = sum(1 for ns, _ in first.keys(prefix, exact=False))  # type: ignore[attr-defined]
        assert got is not None and got.counts.n_items == n
    for s in handles:
        s.close()
    again = HybridStore(lite.path, index=False)
    assert again.check()["ok"], again.check()
    again.close()


def test_concurrent_writers_of_one_namespace_keep_exact_counts(lite: LiteFile) -> None:
    """Four handles in four threads write and delete their own keys of one namespace at
    once; no count is lost or doubled (each handle writes only its own rows)."""
    lite.open(index=False).close()
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def work(w: int) -> None:
        try:
            s = HybridStore(lite.path, index=False)
            barrier.wait()
            for i in range(12):
                s.put(NS, f"w{w}-{i}", {"text": _text(w + i)})
                if i % 4 == 3:
                    s.delete(NS, f"w{w}-{i - 2}")
            s.close()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    s = HybridStore(lite.path, index=False)
    assert _nonzero(_sums(s)) == _recount(s)
    assert sum(c.n_items for c in _sums(s).values()) == 4 * 9
    assert s.check()["ok"]
    s.close()


def test_a_failed_item_write_takes_its_counts_back(
    lite: LiteFile, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = lite.open(index=False)
    s.put(NS, "kept", {"text": "川菜 lunch"})
    st_: Any = s._storage
    real = st_.client.upsert

    def failing(name: str, rows: Any, **kw: Any) -> Any:
        if name == st_.names.items:
            raise RuntimeError("the items write failed")
        return real(name, rows, **kw)

    monkeypatch.setattr(st_.client, "upsert", failing)
    with pytest.raises(RuntimeError):
        s.put(NS, "lost", {"text": "coffee tea music"})
    monkeypatch.undo()
    assert _nonzero(_sums(s)) == _recount(s) and s.check()["ok"]
    s.close()


def test_items_made_before_the_statistics_are_counted_on_open(lite: LiteFile) -> None:
    s = lite.open(index=False)
    for i in range(30):
        s.put(NS if i % 2 else ("users", "u2"), f"k{i}", {"text": _text(i)})
    st_: Any = s._storage
    s.close()
    st_.client.drop_collection(st_.names.stats)  # as a store of the earlier version left it
    again = HybridStore(lite.path, index=False)
    assert _nonzero(_sums(again)) == _recount(again) and again.check()["ok"]
    assert {h.key for h in again.search(NS, query=WORDS[1])} <= {f"k{i}" for i in range(1, 30, 2)}
    again.close()


def test_closed_handles_rows_fold_and_a_drift_is_reported_then_repaired(
    lite: LiteFile,
) -> None:
    first = lite.open(index=False)
    first.put(NS, "a", {"text": "川菜"})
    first.close()
    for k in ("b", "c"):
        s = HybridStore(lite.path, index=False)
        s.put(NS, k, {"text": "coffee tea"})
        s.close()
    s = HybridStore(lite.path, index=False)
    st_: Any = s._storage
    before = _sums(s)
    rows = st_.client.query(st_.names.stats, filter='pk != ""', output_fields=["pk"])
    assert len(rows) == 3
    s.vacuum()
    rows = st_.client.query(st_.names.stats, filter='pk != ""', output_fields=["pk"])
    assert len(rows) == 1 and _sums(s) == before and s.check()["ok"]
    st_.book.add({NS: Counts(1, 1, 4)})  # what a lost race could leave
    report = s.check()
    assert not report["ok"] and "statistics of 1 namespaces" in report["problems"][0]
    s.reindex()
    assert s.check()["ok"] and _nonzero(_sums(s)) == _recount(s)
    s.close()


def test_a_recount_keeps_the_rows_of_handles_still_writing(lite: LiteFile) -> None:
    """`reindex()` by one handle while another stays open: the other's later writes still
    add up (its row is left as it is; the base row takes the difference)."""
    a = lite.open(index=False)
    b = HybridStore(lite.path, index=False)
    for i in range(6):
        a.put(NS, f"a{i}", {"text": _text(i)})
    b.reindex()
    a.put(NS, "a6", {"text": _text(6)})
    a.delete(NS, "a0")
    assert _nonzero(_sums(b)) == _recount(b)
    a.close()
    b.close()


def test_a_handle_writing_more_namespaces_than_it_keeps_reads_its_rows_back(
    lite: LiteFile, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long-lived handle keeps only its latest rows in memory (`OWN_ROWS_KEPT`); writing
    to a namespace it dropped reads its row back and adds to it."""
    from langmem_plus.store.milvus import stats as milvus_stats

    monkeypatch.setattr(milvus_stats, "OWN_ROWS_KEPT", 2)
    s = lite.open(index=False)
    for i in range(15):
        s.put(("users", f"u{i % 5}"), f"k{i}", {"text": _text(i)})
    s.delete(("users", "u0"), "k0")
    assert len(s._storage.book._own) <= 2  # type: ignore[attr-defined]
    assert _nonzero(_sums(s)) == _recount(s)
    s.close()


@pytest.fixture
def deep(lite: LiteFile) -> Iterator[HybridStore]:
    s = lite.open(index=False)
    s.put(("users", "u1"), "a", {"text": "川菜 lunch"})
    s.put(("users", "u1", "notes"), "b", {"text": "川菜 dinner"})
    s.put(("users", "u1x"), "c", {"text": "川菜 breakfast"})
    s.put(("solo",), "d", {"text": "川菜 snack"})
    yield s
    s.close()


@pytest.mark.parametrize(
    ("prefix", "keys"),
    [
        (("users", "u1"), {"a", "b"}),
        (("users", "u1", "notes"), {"b"}),
        (("users",), {"a", "b", "c"}),
        (("solo",), {"d"}),
        ((), {"a", "b", "c", "d"}),
        (("users", "nobody"), set()),
    ],
)
def test_a_scope_names_exactly_its_namespaces(
    deep: HybridStore, prefix: tuple[str, ...], keys: set[str]
) -> None:
    assert {h.key for h in deep.search(prefix, query="川菜", limit=10)} == keys


def test_an_emptied_namespace_is_searched_as_empty(tmp_path: Path) -> None:
    s = HybridStore(tmp_path / "e.milvus.db", index=False)
    s.put(NS, "a", {"text": "川菜"})
    s.delete(NS, "a")
    assert s.search(NS, query="川菜") == [] and s.search(NS) == []
    s.put(NS, "b", {"text": "川菜 again"})
    assert [h.key for h in s.search(NS, query="川菜")] == ["b"]
    s.close()


class _Waits:
    """A lock that says (`waiting`) when a thread has to wait its turn for it."""

    def __init__(self, inner: Any, waiting: threading.Event) -> None:
        self.inner, self.waiting = inner, waiting

    def __enter__(self) -> _Waits:
        if not self.inner.acquire(blocking=False):
            self.waiting.set()
            self.inner.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.inner.release()


@pytest.fixture
def turn(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Set when a thread has to wait for its turn at a Lite file (`schema.lite_lock` watched
    for the stores opened after it): what lets a held request go on."""
    from langmem_plus.store.milvus import schema

    waiting = threading.Event()
    real = schema.lite_lock
    monkeypatch.setattr(schema, "lite_lock", lambda path: _Waits(real(path), waiting))
    return waiting


def test_a_write_numbered_during_another_handles_write_still_counts(
    lite: LiteFile, monkeypatch: pytest.MonkeyPatch, turn: threading.Event
) -> None:
    """Milvus Lite runs inside this process and numbers each write from a counter it reads
    and stores back unguarded; when another handle's write lands between the two, the
    counter goes back, a later write of a row gets the number of the row's last write, and
    Lite drops it silently. A handle's statistics row then kept a stale count (the doubled
    count the concurrent-writers test hit in CI). Forced here: handle b's statistics write
    stops between reading the counter and storing it until handle a has written twice, or
    until a waits for its turn at the file."""
    from milvus_lite.engine.collection import Collection

    a = lite.open(index=False)
    b = HybridStore(lite.path, index=False)
    stats = a._storage.names.stats  # type: ignore[attr-defined]
    armed, held = threading.Event(), threading.Event()

    def get(col: Any) -> int:
        return int(col.__dict__["_next_seq"])

    def put_back(col: Any, value: int) -> None:
        if armed.is_set() and col._name == stats:
            armed.clear()
            held.set()
            turn.wait(60)
        col.__dict__["_next_seq"] = value

    monkeypatch.setattr(Collection, "_next_seq", property(get, put_back), raising=False)
    errors: list[BaseException] = []

    def b_writes() -> None:
        try:
            b.put(NS, "b1", {"text": "coffee tea"})
        except BaseException as exc:  # reported below
            errors.append(exc)

    armed.set()
    writing = threading.Thread(target=b_writes)
    writing.start()
    assert held.wait(60), "b's statistics write never numbered itself"
    a.put(NS, "a1", {"text": "川菜 lunch"})
    a.put(NS, "a2", {"text": "川菜 dinner"})
    turn.set()  # a wrote twice (with the guard, a already waited for b's write)
    writing.join()
    assert not errors, errors
    a.delete(NS, "a2")  # numbered like a's previous statistics write when the counter went back
    assert sorted(k for _, k in a.keys(NS)) == ["a1", "b1"]  # type: ignore[attr-defined]
    assert _nonzero(_sums(a)) == _recount(a)
    assert a.check()["ok"], a.check()
    a.close()
    b.close()


def test_handles_closing_at_once_lose_no_write(
    lite: LiteFile, monkeypatch: pytest.MonkeyPatch, turn: threading.Event
) -> None:
    """A handle flushes its writes to a Lite file when it closes. Lite sets a flush's rows
    aside before it takes its own lock, so of two flushes at once the one holding the
    earlier rows could publish second: Lite refused it ("current_seq is monotonic") and
    those rows vanished from view while the statistics still counted them (and the retry of
    the failed request hid the error). Forced here: handle b's flush is held after setting
    its rows aside until handle a has written and closed, or waits for its turn."""
    from milvus_lite.engine import collection as lite_engine

    a = lite.open(index=False)
    b = HybridStore(lite.path, index=False)
    a.put(NS, "a1", {"text": "川菜 lunch"})
    b.put(NS, "b1", {"text": "coffee tea"})
    armed, held = threading.Event(), threading.Event()
    real_wal = lite_engine.WAL

    def held_wal(*args: Any, **kw: Any) -> Any:  # a flush's fresh log, after the swap
        if armed.is_set():
            armed.clear()
            held.set()
            turn.wait(60)
        return real_wal(*args, **kw)

    monkeypatch.setattr(lite_engine, "WAL", held_wal)
    errors: list[BaseException] = []

    def b_closes() -> None:
        try:
            b.close()
        except BaseException as exc:  # reported below
            errors.append(exc)

    armed.set()
    closing = threading.Thread(target=b_closes)
    closing.start()
    assert held.wait(60), "b's close never flushed"
    a.put(NS, "a2", {"text": "川菜 dinner"})
    a.close()
    turn.set()  # a wrote and closed (with the guard, a already waited for b's flush)
    closing.join()
    assert not errors, errors
    monkeypatch.undo()
    c = HybridStore(lite.path, index=False)
    assert sorted(k for _, k in c.keys(NS)) == ["a1", "a2", "b1"]  # type: ignore[attr-defined]
    assert _nonzero(_sums(c)) == _recount(c) and c.check()["ok"]
    c.close()
