"""Shared fixtures: a tiny deterministic embedding model, so store tests run fast and offline."""

from __future__ import annotations

import hashlib
import os

import numpy as np
import pytest
from hypothesis import settings
from langchain_core.embeddings import Embeddings

from langmem_plus.text import tokenize

# property tests draw the same examples on every run (CI must not depend on luck); set
# HYPOTHESIS_PROFILE=explore to draw new ones locally
# no deadline: a per-example wall-time limit fails on a loaded machine (tests never assert on
# wall time)
settings.register_profile("deterministic", derandomize=True, database=None, deadline=None)
settings.register_profile("explore", derandomize=False, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))


class HashEmbeddings(Embeddings):
    """Deterministic bag-of-tokens embeddings: texts sharing tokens are close (cosine)."""

    model_name = "test-hash-embeddings"

    def __init__(self, dims: int = 64) -> None:
        self.dims = dims

    def _vec(self, text: str) -> list[float]:
        v = np.zeros(self.dims, dtype=np.float64)
        for tok in tokenize(text) or [text]:
            h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "little")
            v[h % self.dims] += 1.0 if (h >> 32) & 1 else -1.0
        n = np.linalg.norm(v)
        if n == 0:
            v[0] = 1.0
            n = 1.0
        return (v / n).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


class CountingEmbeddings(HashEmbeddings):
    """Hash embeddings that record every text embedded as a document (single words: the
    common-word projection's)."""

    def __init__(self, dims: int = 64) -> None:
        super().__init__(dims)
        self.embedded: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.embedded.extend(texts)
        return super().embed_documents(texts)


@pytest.fixture
def hash_embeddings() -> HashEmbeddings:
    return HashEmbeddings()


@pytest.fixture
def hash_index(hash_embeddings: HashEmbeddings) -> dict:
    return {"dims": hash_embeddings.dims, "embed": hash_embeddings, "fields": ["text"]}
