"""PostTurnWorker: one daemon thread running post-turn jobs, debounced per thread + session,
with a bounded queue and a `close` that returns in bounded time and says what it left."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langmem_plus.agent.postturn import PostTurnJob
from langmem_plus.errors import ValidationError

__all__ = ["DEFAULT_CLOSE_TIMEOUT_S", "CloseReport", "PostTurnWorker"]

logger = logging.getLogger("langmem_plus.engine")

DEFAULT_CLOSE_TIMEOUT_S = 30.0
"""How long `close()` waits for queued post-turn work by default."""


@dataclass(frozen=True)
class CloseReport:
    """What `PostTurnWorker.close` left undone, as ``(user_id, session_id)`` pairs.

    `dropped`: jobs that never started (and were dropped when the queue was full); their turns
    stay uncollected in the conversation log, so the session's next job processes them.
    `running`: jobs still running when the timeout ran out (e.g. a model call to a hung
    endpoint); they finish, or fail, on the daemon thread. True when nothing was left.
    """

    finished: bool
    dropped: tuple[tuple[str, str], ...] = ()
    running: tuple[tuple[str, str], ...] = ()

    def __bool__(self) -> bool:
        return self.finished


def _who(job: PostTurnJob) -> tuple[str, str]:
    return (job.user_id, job.session_id)


class PostTurnWorker:
    """Runs post-turn jobs in one daemon thread, debounced per key; `flush()` drains it.

    At most `max_pending` jobs wait (one per thread and session); a new one past that is
    dropped with a warning (its turns stay in the log for the session's next job), so a slow
    or hung model never grows the queue without bound.
    """

    def __init__(
        self,
        fn: Callable[[PostTurnJob], Any],
        *,
        debounce_s: float = 1.0,
        max_pending: int = 1000,
    ) -> None:
        if debounce_s < 0:
            raise ValidationError(f"debounce_s must be >= 0, got {debounce_s}")
        if isinstance(max_pending, bool) or not isinstance(max_pending, int) or max_pending < 1:
            raise ValidationError(f"max_pending must be an int >= 1, got {max_pending!r}")
        self._fn = fn
        self.debounce_s = debounce_s
        self.max_pending = max_pending
        self._cv = threading.Condition()
        self._pending: dict[Any, tuple[float, PostTurnJob]] = {}
        self._order: deque[Any] = deque()
        self._running = 0
        self._current: list[PostTurnJob] = []
        self._flushing = 0
        self._closed = False
        self._thread: threading.Thread | None = None
        self.errors: list[BaseException] = []
        self.dropped: list[tuple[str, str]] = []  # (user_id, session_id) of jobs dropped

    def submit(self, key: Any, job: PostTurnJob) -> None:
        """Queue `job` for `key` (a thread); a job of the same session already waiting absorbs
        it (debounce), so a burst of turns is processed once. Past `max_pending` waiting jobs
        the new one is dropped (logged, kept in `dropped`)."""
        full = (key, job.session_id)
        with self._cv:
            if self._closed:
                raise ValidationError("the post-turn worker is closed")
            old = self._pending.get(full)
            if old is not None:
                merged = old[1].merge(job)
            elif len(self._pending) >= self.max_pending:
                self.dropped.append(_who(job))
                logger.warning(
                    "post-turn queue full (%d jobs): job of user %r session %r dropped; its "
                    "turns stay in the log for the session's next job",
                    self.max_pending,
                    job.user_id,
                    job.session_id,
                )
                return
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
                self._current.append(picked[1])
            try:
                self._fn(picked[1])
            except Exception as exc:  # a failed job is logged; the turns stay uncollected
                logger.exception("post-turn processing failed: %s", exc)
                self.errors.append(exc)
            finally:
                with self._cv:
                    self._running -= 1
                    self._current.remove(picked[1])
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

    def close(self, timeout: float | None = DEFAULT_CLOSE_TIMEOUT_S) -> CloseReport:
        """Run the queued jobs for at most `timeout` seconds (None: until done), then stop.

        Returns within `timeout` (plus the time to take the lock) whatever the model does: jobs
        that did not start by then are dropped, a job still running is left to finish on the
        daemon thread, and the `CloseReport` names both (it is true when nothing was left)."""
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        ok = self.flush(timeout)
        with self._cv:
            self._closed = True
            dropped = tuple(_who(job) for _, job in self._pending.values())
            self._pending.clear()
            self._order.clear()
            self._cv.notify_all()
        if self._thread is not None:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            self._thread.join(left)
        with self._cv:
            running = tuple(_who(job) for job in self._current)
        if dropped or running:
            logger.warning(
                "post-turn worker closed with work left: %d job(s) dropped %s, %d still running %s",
                len(dropped),
                list(dropped),
                len(running),
                list(running),
            )
        return CloseReport(
            finished=ok and not dropped and not running, dropped=dropped, running=running
        )
