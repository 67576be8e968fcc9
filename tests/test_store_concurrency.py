"""Several threads and several processes write one file: nothing lost, no 'database is locked'."""

from __future__ import annotations

import multiprocessing as mp
import threading

import pytest
from conftest import HashEmbeddings

from langmem_plus import HybridStore


def _index() -> dict:
    return {"dims": 64, "embed": HashEmbeddings(), "fields": ["text"]}


def _proc_writer(path: str, worker: int, n: int, q: mp.Queue) -> None:
    try:
        store = HybridStore(path, index=_index())
        for i in range(n):
            store.put(("memories", f"w{worker}"), f"k{i}", {"text": f"worker {worker} note {i}"})
            if i % 5 == 0:
                store.search(("memories", f"w{worker}"), query=f"note {i}", limit=3)
        store.close()
        q.put(("ok", worker))
    except BaseException as exc:  # pragma: no cover - reported to the parent
        q.put(("error", repr(exc)))


@pytest.mark.slow
def test_processes_write_one_file(tmp_path):
    path = str(tmp_path / "shared.db")
    HybridStore(path, index=_index()).close()  # create schema first
    ctx = mp.get_context("spawn")
    q: mp.Queue = ctx.Queue()
    n_workers, n = 4, 40
    procs = [ctx.Process(target=_proc_writer, args=(path, w, n, q)) for w in range(n_workers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    results = [q.get(timeout=5) for _ in procs]
    assert all(r[0] == "ok" for r in results), results
    store = HybridStore(path, index=_index())
    assert store.stats()["items"] == n_workers * n
    for w in range(n_workers):
        items = store.search(("memories", f"w{w}"), limit=1000)
        assert len(items) == n and all(i.value["text"].startswith(f"worker {w} ") for i in items)
        hit = store.search(("memories", f"w{w}"), query="note 7", limit=1)[0]
        assert hit.key == "k7"
    assert store.stats()["vectors"] == n_workers * n
    store.close()


def test_threads_with_separate_handles(tmp_path):
    path = str(tmp_path / "t.db")
    HybridStore(path, index=_index()).close()
    errors: list[BaseException] = []

    def run(t: int) -> None:
        try:
            s = HybridStore(path, index=_index())
            for i in range(30):
                s.put(("t", str(t)), f"k{i}", {"text": f"thread {t} item {i}"})
            s.close()
        except BaseException as exc:  # pragma: no cover
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    s = HybridStore(path, index=_index())
    assert s.stats()["items"] == 120
    s.close()
