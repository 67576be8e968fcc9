"""PostTurnWorker: one daemon thread running post-turn jobs, debounced per thread + session."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from langmem_plus.agent.postturn import PostTurnJob
from langmem_plus.errors import ValidationError

__all__ = ["PostTurnWorker"]

logger = logging.getLogger("langmem_plus.engine")


class PostTurnWorker:
    """Runs post-turn jobs in one daemon thread, debounced per key; `flush()` drains it."""

    def __init__(self, fn: Callable[[PostTurnJob], Any], *, debounce_s: float = 1.0) -> None:
        if debounce_s < 0:
            raise ValidationError(f"debounce_s must be >= 0, got {debounce_s}")
        self._fn = fn
        self.debounce_s = debounce_s
        self._cv = threading.Condition()
        self._pending: dict[Any, tuple[float, PostTurnJob]] = {}
        self._order: deque[Any] = deque()
        self._running = 0
        self._flushing = 0
        self._closed = False
        self._thread: threading.Thread | None = None
        self.errors: list[BaseException] = []

    def submit(self, key: Any, job: PostTurnJob) -> None:
        """Queue `job` for `key` (a thread); a job of the same session already waiting absorbs
        it (debounce), so a burst of turns is processed once."""
        full = (key, job.session_id)
        with self._cv:
            if self._closed:
                raise ValidationError("the post-turn worker is closed")
            old = self._pending.get(full)
            if old is not None:
                merged = old[1].merge(job)
            else:
                merged = job
                self._order.append(full)
            self._pending[full] = (time.monotonic() + self.debounce_s, merged)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._loop, name="langmem-post-turn", daemon=True
                )
                self._thread.start()
            self._cv.notify_all()

    def _next(self) -> tuple[Any, PostTurnJob] | None:
        now = time.monotonic()
        for key in list(self._order):
            due, job = self._pending[key]
            if self._flushing or self._closed or due <= now:
                self._order.remove(key)
                del self._pending[key]
                return key, job
        return None

    def _loop(self) -> None:
        while True:
            with self._cv:
                picked = self._next()
                while picked is None:
                    if self._closed and not self._pending:
                        return
                    wait = None
                    if self._pending:
                        wait = max(
                            0.0, min(d for d, _ in self._pending.values()) - time.monotonic()
                        )
                    self._cv.wait(timeout=wait if wait is not None else 1.0)
                    picked = self._next()
                self._running += 1
            try:
                self._fn(picked[1])
            except Exception as exc:  # a failed job is logged; the turns stay uncollected
                logger.exception("post-turn processing failed: %s", exc)
                self.errors.append(exc)
            finally:
                with self._cv:
                    self._running -= 1
                    self._cv.notify_all()

    @property
    def pending(self) -> int:
        """Jobs waiting or running."""
        with self._cv:
            return len(self._pending) + self._running

    def flush(self, timeout: float | None = None) -> bool:
        """Run every waiting job now and wait for them; False if `timeout` ran out first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cv:
            self._flushing += 1
            self._cv.notify_all()
            try:
                while self._pending or self._running:
                    if self._pending and (self._thread is None or not self._thread.is_alive()):
                        self._thread = threading.Thread(
                            target=self._loop, name="langmem-post-turn", daemon=True
                        )
                        self._thread.start()
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if remaining is not None and remaining <= 0:
                        return False
                    self._cv.wait(timeout=remaining if remaining is not None else 1.0)
                return True
            finally:
                self._flushing -= 1

    def close(self, timeout: float | None = None) -> bool:
        """Flush and stop the thread."""
        ok = self.flush(timeout)
        with self._cv:
            self._closed = True
            self._cv.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
        return ok
