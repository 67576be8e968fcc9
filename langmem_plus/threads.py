"""The library's share of the BLAS thread pool: a guest in someone else's process.

A query's matrix products (the embedding model's, the store's cosines over a few hundred
candidates) are too small to gain from a second BLAS thread, and on a busy host a spinning BLAS
worker that waits for a core costs milliseconds per call (docs/results/busy_host.md). So the
library's own work runs inside `blas_limit(1)`: while any such block runs, NumPy's BLAS is
limited to the smallest limit any of them asked for, never above what the process had; when the
last one ends, every library gets back the setting it had when the first began. Nested and
concurrent blocks share one count, so threads that interleave never leave the setting lowered.

OpenBLAS (NumPy's) keeps one thread pool per process, so a NumPy call that the application makes
on another thread while such a block runs also gets the lower limit. BLAS libraries threaded by
OpenMP (FAISS's) are left alone: their setting is the calling thread's OpenMP one, which FAISS
manages itself (store/vector/faissns.py).
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["blas_limit"]

_lock = threading.Lock()
_held: list[int] = []  # the limits of the blocks running now
_saved: list[tuple[Any, int]] = []  # (library, its threads before the first block)
_libs: list[Any] | None = None


def _after_fork_in_child() -> None:
    """A forked child has only the forking thread: no block of another thread runs there (and
    the lock may have been held by one)."""
    global _lock
    _lock = threading.Lock()
    _held.clear()
    _saved.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class _OpenBLAS:
    """One OpenBLAS library's thread setting, through its own C calls. (threadpoolctl lets only
    the first Python thread that sets an OpenBLAS limit set one, and a server embeds on many.)"""

    def __init__(self, get: Any, set_: Any) -> None:
        self._get, self._set = get, set_

    def get_num_threads(self) -> int:
        return int(self._get())

    def set_num_threads(self, n: int) -> None:
        self._set(int(n))


def _openblas(filepath: str) -> _OpenBLAS | None:
    """The thread calls of the OpenBLAS loaded from `filepath` (NumPy's wheels rename them)."""
    try:
        dll = ctypes.CDLL(filepath, mode=getattr(os, "RTLD_NOLOAD", 0))
    except OSError:
        return None
    for prefix in ("scipy_", ""):
        for suffix in ("64_", ""):
            get = getattr(dll, f"{prefix}openblas_get_num_threads{suffix}", None)
            set_ = getattr(dll, f"{prefix}openblas_set_num_threads{suffix}", None)
            if get is not None and set_ is not None:
                get.restype, get.argtypes = ctypes.c_int, []
                set_.restype, set_.argtypes = None, [ctypes.c_int]
                return _OpenBLAS(get, set_)
    return None


def _libraries() -> list[Any]:
    """The BLAS libraries with their own thread pool, each with `get_num_threads` and
    `set_num_threads` (found once, by threadpoolctl: NumPy's BLAS is loaded with NumPy, before
    any of the library's work)."""
    global _libs
    if _libs is None:
        from threadpoolctl import ThreadpoolController

        found: list[Any] = []
        for lib in ThreadpoolController().select(user_api="blas").lib_controllers:
            if getattr(lib, "threading_layer", None) == "openmp":
                continue
            if lib.internal_api == "openblas":
                own = _openblas(lib.filepath)
                if own is not None:
                    found.append(own)
                continue
            found.append(lib)
        _libs = found
    return _libs


def _apply(limit: int) -> None:
    for lib, before in _saved:
        want = min(before, limit)
        if lib.get_num_threads() != want:
            lib.set_num_threads(want)


@contextmanager
def blas_limit(threads: int) -> Iterator[None]:
    """Run the block with NumPy's BLAS on at most `threads` threads (lowering only)."""
    with _lock:
        if not _held:
            counts = [(lib, lib.get_num_threads()) for lib in _libraries()]
            _saved[:] = [(lib, n) for lib, n in counts if isinstance(n, int) and n > 0]
        _held.append(threads)
        _apply(min(_held))
    try:
        yield
    finally:
        with _lock:
            _held.remove(threads)
            if _held:
                _apply(min(_held))
            else:
                for lib, before in _saved:
                    if lib.get_num_threads() != before:
                        lib.set_num_threads(before)
                _saved.clear()
