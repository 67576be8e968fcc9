"""The process-wide worker threads that run background vector scans (store/vector/index.py).

FAISS releases the GIL while it scans, so a query's scan can run on a second core while the
calling thread does its keyword work in Python. One small pool serves every store.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import faiss

__all__ = ["worker_pool"]

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _after_fork_in_child() -> None:
    """A forked child has none of the parent's threads (and maybe a lock held by one of
    them): it starts without a pool, and makes its own on first use."""
    global _POOL, _POOL_LOCK
    _POOL = None
    _POOL_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _worker_init() -> None:
    faiss.omp_set_num_threads(1)  # per thread: the caller's thread keeps its own setting


def worker_pool() -> ThreadPoolExecutor:
    """The process-wide threads that run background vector scans (created on first use; in a
    forked child, again: a pool that still counted the parent's threads would never run)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(
                max_workers=2, thread_name_prefix="langmem-vector", initializer=_worker_init
            )
        return _POOL
