"""A growable 1-d numpy buffer: the in-memory postings and the FAISS item-id mirrors use it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["GrowBuffer"]


class GrowBuffer:
    """A 1-d numpy buffer with amortised appends; `view()` is valid until the next append."""

    __slots__ = ("buf", "n")

    def __init__(self, dtype: Any, cap: int = 16) -> None:
        self.buf = np.empty(cap, dtype=dtype)
        self.n = 0

    def extend(self, values: np.ndarray | Sequence[Any]) -> None:
        m = len(values)
        need = self.n + m
        if need > len(self.buf):
            new = np.empty(max(need, 2 * len(self.buf)), dtype=self.buf.dtype)
            new[: self.n] = self.buf[: self.n]
            self.buf = new
        self.buf[self.n : need] = values
        self.n = need

    def view(self) -> np.ndarray:
        return self.buf[: self.n]
