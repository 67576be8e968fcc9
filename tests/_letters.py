"""Bag-of-letters embeddings for tests: deterministic, no model, and the cosine of two texts is
known exactly from their letters."""

from __future__ import annotations

import numpy as np
from langchain_core.embeddings import Embeddings


class Letters(Embeddings):
    """Deterministic bag-of-letters embeddings (no model): the cosine is known exactly."""

    dims = 26

    def _one(self, text: str) -> list[float]:
        v = np.zeros(self.dims)
        for ch in text.lower():
            if "a" <= ch <= "z":
                v[ord(ch) - 97] += 1
        n = float(np.linalg.norm(v))
        return (v / n if n else v).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)
