"""Word vectors kept in the database, by embedding model, for the common-word projection.

The query's common words (store/ranking/common_terms.py) are embedded one by one the first time a
process meets them; with the bundled USE model that is one model call (a millisecond or more)
on a user's first search in every new process or store handle. The shelf keeps each word's
embedding in the table `word_vectors` under the model's name and dimension, so a later process
reads it instead. A vector is stored as the model gave it, as float32 when that loses nothing
(the bundled model's case: 2 KB at 512-d) and as float64 otherwise (`<f4` / `<f8` bytes: nothing
stored is ever executed or unpickled), so a word read back weighs exactly as when it was
embedded. Searches only read: a word embedded during a search is written with the store's next
write transaction (or when the store closes); a read-only store reads what is there and writes
nothing. Only models with a name of their own (`embedding_model_name` from a model attribute)
are kept: a class name alone does not say which weights made a vector.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

import numpy as np

from langmem_plus.store.db.database import Database, in_chunks

__all__ = ["MAX_PENDING", "WordShelf", "shelf_key"]

MAX_PENDING = 4096
"""Words kept in memory for the next write at most (a 512-d vector is 4 KB)."""


def shelf_key(model_name: str, dims: int) -> str | None:
    """The key of this model's word vectors, or None when the name does not identify the
    model (a bare class name) or there are no vectors."""
    if dims <= 0 or ":" not in model_name:
        return None
    return f"{model_name}@{dims}"


class WordShelf:
    """Unit word vectors of one model in one SQLite store (see the module docstring)."""

    def __init__(self, db: Database, key: str, dims: int) -> None:
        self.db, self.key, self.dims = db, key, dims
        self._pending: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def load(self, words: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored embeddings of `words`, float64 (rows not held whole are ignored)."""
        out: dict[str, np.ndarray] = {}
        want = list(dict.fromkeys(words))
        if not want:
            return out
        with self._lock:
            for w in want:
                if w in self._pending:
                    out[w] = self._pending[w]
        kinds = {self.dims * 4: "<f4", self.dims * 8: "<f8"}
        with self.db.read() as conn:
            for part, qs in in_chunks([w for w in want if w not in out]):
                rows = conn.execute(
                    f"SELECT word, vec FROM word_vectors WHERE model = ? AND word IN ({qs})",
                    (self.key, *part),
                )
                for word, blob in rows:
                    kind = kinds.get(len(blob)) if isinstance(blob, bytes) else None
                    if kind is not None:
                        vec = np.frombuffer(blob, dtype=kind).astype(np.float64)
                        if np.isfinite(vec).all():
                            out[word] = vec
        return out

    def keep(self, vectors: Mapping[str, np.ndarray]) -> None:
        """Remember newly embedded words (float64, as the model gave them) until the next
        write transaction (at most
        `MAX_PENDING`: a store that only searches drops the oldest rather than grow)."""
        if self.db.read_only:
            return
        with self._lock:
            self._pending.update((w, v) for w, v in vectors.items() if v.shape == (self.dims,))
            while len(self._pending) > MAX_PENDING:
                del self._pending[next(iter(self._pending))]

    @property
    def has_pending(self) -> bool:
        """Whether words wait to be written."""
        return bool(self._pending)

    def flush(self, conn: object) -> None:
        """Write the remembered words inside the caller's write transaction."""
        with self._lock:
            if not self._pending:
                return
            rows = [(self.key, w, _packed(v)) for w, v in self._pending.items()]
            self._pending.clear()
        conn.executemany(  # type: ignore[attr-defined]
            "INSERT OR REPLACE INTO word_vectors (model, word, vec) VALUES (?, ?, ?)", rows
        )


def _packed(vec: np.ndarray) -> bytes:
    """A vector's bytes: float32 when that holds it exactly, else float64."""
    v = np.asarray(vec, dtype=np.float64)
    small = v.astype("<f4")
    return (
        small.tobytes()
        if np.array_equal(small.astype(np.float64), v)
        else v.astype("<f8").tobytes()
    )
