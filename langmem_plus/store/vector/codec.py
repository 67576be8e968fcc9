"""On-disk form of stored vectors: int8 with a per-vector float32 scale, or float16.

The `vectors` table holds these blobs (SQLite is the truth; FAISS indexes are built from them,
store/vector/index.py). The decoder tells the two forms apart by length, so databases may mix them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

__all__ = ["VectorStorage", "decode_vec", "decode_vecs", "encode_vec"]

VectorStorage = Literal["int8", "float16"]

# Below this many dimensions the two blob lengths (2*dims for float16, dims+4 for int8) collide
# (dims == 4) or int8 saves nothing, so such vectors are always written as float16.
_INT8_MIN_DIMS = 5


def encode_vec(vec: np.ndarray, storage: VectorStorage = "int8") -> bytes:
    """Compact on-disk form of one vector.

    "int8": a little-endian float32 scale (max|x| / 127) then `dims` int8 codes, round(x / scale)
    (dims + 4 bytes; on 512-d USE vectors the cosine error is 1.7e-4 on average, recall@10
    against float32 0.998: docs/results/vector_recall.md). "float16": 2 * dims bytes. The
    decoder tells them apart by length.
    """
    v = np.asarray(vec, dtype=np.float32).reshape(-1)
    if storage == "float16" or v.size < _INT8_MIN_DIMS:
        return v.astype("<f2").tobytes()
    peak = float(np.max(np.abs(v)))
    if not np.isfinite(peak):  # not representable as int8 codes: keep float16
        return v.astype("<f2").tobytes()
    scale = peak / 127.0 if peak > 0 else 1.0
    codes = np.clip(np.rint(v / scale), -127, 127).astype(np.int8)
    return np.asarray([scale], dtype="<f4").tobytes() + codes.tobytes()


def _decode_same_length(buf: bytes, n: int, dims: int, length: int) -> np.ndarray:
    """`n` blobs of one `length`, concatenated in `buf`, as an (n, dims) float32 matrix."""
    if length == 2 * dims:
        return np.frombuffer(buf, dtype="<f2").reshape(n, dims).astype(np.float32)
    if length == dims + 4 and dims >= _INT8_MIN_DIMS:
        raw = np.frombuffer(buf, dtype=np.uint8).reshape(n, dims + 4)
        scales = raw[:, :4].copy().view("<f4").astype(np.float32)  # (n, 1)
        return raw[:, 4:].view(np.int8).astype(np.float32) * scales
    raise ValueError(
        f"a stored vector has {length} bytes, which is neither float16 ({2 * dims}) nor "
        f"int8 ({dims + 4}) at {dims} dimensions"
    )


def decode_vecs(blobs: Sequence[bytes], dims: int) -> np.ndarray:
    """Stored vector blobs (float16 or int8, mixed allowed) as an (n, dims) float32 matrix."""
    n = len(blobs)
    if n == 0:
        return np.zeros((0, dims), dtype=np.float32)
    length = len(blobs[0])
    if all(len(b) == length for b in blobs):
        return _decode_same_length(b"".join(blobs), n, dims, length)
    out = np.empty((n, dims), dtype=np.float32)
    by_len: dict[int, list[int]] = {}
    for i, b in enumerate(blobs):
        by_len.setdefault(len(b), []).append(i)
    for ln, rows in by_len.items():
        out[rows] = _decode_same_length(b"".join(blobs[i] for i in rows), len(rows), dims, ln)
    return out


def decode_vec(blob: bytes, dims: int) -> np.ndarray:
    """One stored vector blob (float16 or int8) as a float32 vector of `dims`."""
    return decode_vecs([blob], dims)[0]
