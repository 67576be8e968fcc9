"""The time source of the store and the lifecycle jobs, injectable so tests need no sleeps.

A clock is any zero-argument callable returning epoch seconds (`time.time` is one). TTL
expiry and refresh, search recency, the TTL sweep, `mark_used` and the lifecycle jobs'
default "now" all read the store's clock, so a test can move time forward with
`ManualClock.advance` instead of waiting for it to pass.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone

from langmem_plus.errors import ValidationError

__all__ = ["Clock", "ManualClock", "check_clock", "clock_datetime", "system_clock"]

Clock = Callable[[], float]


def system_clock() -> float:
    """The wall clock in epoch seconds (`time.time()`, looked up at each call)."""
    return time.time()


def check_clock(clock: object) -> Clock:
    """`clock` itself when it is callable, `system_clock` when it is None; else ValidationError."""
    if clock is None:
        return system_clock
    if not callable(clock):
        raise ValidationError(
            f"clock must be a zero-argument callable returning epoch seconds (such as "
            f"time.time), got {type(clock).__name__}"
        )
    return clock  # type: ignore[return-value]


def clock_datetime(clock: Clock) -> datetime:
    """The clock's current time as an aware UTC datetime."""
    return datetime.fromtimestamp(clock(), tz=timezone.utc)


class ManualClock:
    """A clock that only moves when told to: `ManualClock(start)()` returns `start` until
    `advance(seconds)` or `set(epoch)` moves it. For deterministic tests of TTL and decay."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = self._seconds("start", start)

    @staticmethod
    def _seconds(name: str, value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValidationError(f"{name} must be a number of seconds, got {value!r}")
        return float(value)

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> float:
        """Move forward by `seconds` (never backward); returns the new time."""
        seconds = self._seconds("seconds", seconds)
        if seconds < 0:
            raise ValidationError("a ManualClock only moves forward; use set() to go back")
        self.now += seconds
        return self.now

    def set(self, epoch: float) -> float:
        """Jump to `epoch` seconds; returns it."""
        self.now = self._seconds("epoch", epoch)
        return self.now
