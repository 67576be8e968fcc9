"""The process-wide worker threads that run background vector scans (store/vector.py).

FAISS releases the GIL while it scans, so a query's scan can run on a second core while the
calling thread does its keyword work in Python. One small pool serves every store.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import faiss

__all__ = ["worker_pool"]

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _worker_init() -> None:
    faiss.omp_set_num_threads(1)  # per thread: the caller's thread keeps its own setting


def worker_pool() -> ThreadPoolExecutor:
    """The process-wide threads that run background vector scans (created on first use)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(
                max_workers=2, thread_name_prefix="langmem-vector", initializer=_worker_init
            )
        return _POOL
