"""Word vectors kept in the database, by embedding model, for the common-word projection.

The query's common words (store/common_terms.py) are embedded one by one the first time a
process meets them; with the bundled USE model that is one model call (a millisecond or more)
on a user's first search in every new process or store handle. The shelf keeps each word's
unit vector in the table `word_vectors` under the model's name and dimension, so a later
process reads it instead. A vector is stored as the embedding gave it, made unit length, in
float64 (`<f8` bytes: nothing stored is ever executed or unpickled), so a word read back
weighs exactly as it did when it was embedded. Searches only read: a word embedded during a
search is written with the store's next write transaction (or when the store closes); a
read-only store reads what is there and writes nothing. Only models with a name of their own
(`embedding_model_name` from a model attribute) are kept: a class name alone does not say
which weights made a vector.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

import numpy as np

from langmem_plus.store.sqlite import Database, in_chunks

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
        """The stored vectors of `words` (those held whole; any other row is ignored)."""
        out: dict[str, np.ndarray] = {}
        want = list(dict.fromkeys(words))
        if not want:
            return out
        with self._lock:
            for w in want:
                if w in self._pending:
                    out[w] = self._pending[w]
        size = self.dims * 8
        with self.db.read() as conn:
            for part, qs in in_chunks([w for w in want if w not in out]):
                rows = conn.execute(
                    f"SELECT word, vec FROM word_vectors WHERE model = ? AND word IN ({qs})",
                    (self.key, *part),
                )
                for word, blob in rows:
                    if isinstance(blob, bytes) and len(blob) == size:
                        vec = np.frombuffer(blob, dtype="<f8").astype(np.float64)
                        if np.isfinite(vec).all():
                            out[word] = vec
        return out

    def keep(self, vectors: Mapping[str, np.ndarray]) -> None:
        """Remember newly embedded words' vectors until the next write transaction (at most
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
            rows = [
                (self.key, w, np.asarray(v, dtype="<f8").tobytes())
                for w, v in self._pending.items()
            ]
            self._pending.clear()
        conn.executemany(  # type: ignore[attr-defined]
            "INSERT OR REPLACE INTO word_vectors (model, word, vec) VALUES (?, ?, ?)", rows
        )
