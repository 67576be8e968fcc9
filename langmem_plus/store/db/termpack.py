"""The byte format of one document's (term id, tf) pairs in `doc_terms` (store/keyword/docterms.py).

Term ids ascending, each as the unsigned LEB128 varint of its difference to the previous one,
followed by its term frequency as a varint: a document's pairs take two to four bytes each.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["pack_terms", "unpack_joined", "unpack_many", "unpack_terms"]

_EMPTY_I = np.zeros(0, dtype=np.int64)


def _varint(n: int, out: bytearray) -> None:
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def pack_terms(pairs: Iterable[tuple[int, int]]) -> bytes:
    """Pack (term id, tf) pairs (any order, ids unique, both ≥ 0 and tf ≥ 1) into bytes."""
    out = bytearray()
    prev = 0
    for tid, tf in sorted(pairs):
        if tid < prev or tf < 1:
            raise ValueError(f"cannot pack term id {tid} with tf {tf}")
        _varint(tid - prev, out)
        _varint(tf, out)
        prev = tid
    return bytes(out)


def unpack_terms(blob: bytes) -> list[tuple[int, int]]:
    """The (term id, tf) pairs of a packed blob, term ids ascending."""
    pairs: list[tuple[int, int]] = []
    vals: list[int] = []
    n = shift = 0
    for byte in blob:
        n |= (byte & 0x7F) << shift
        if byte & 0x80:
            shift += 7
            continue
        vals.append(n)
        n = shift = 0
        if len(vals) == 2:
            tid = vals[0] + (pairs[-1][0] if pairs else 0)
            pairs.append((tid, vals[1]))
            vals.clear()
    if vals or shift:
        raise ValueError("truncated doc_terms blob")
    return pairs


def unpack_many(blobs: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decode many `doc_terms` blobs at once: (blob index, term id, tf) of
    every pair, in blob order then term-id order, as `unpack_terms` gives them one by one."""
    if not blobs:
        return _EMPTY_I, _EMPTY_I, _EMPTY_I
    lens = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs))
    return unpack_joined(b"".join(blobs), lens)


def unpack_joined(joined: bytes, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`unpack_many` of blobs given joined, with each one's length in `lens`."""
    raw = np.frombuffer(joined, dtype=np.uint8)
    if not len(raw):
        return _EMPTY_I, _EMPTY_I, _EMPTY_I
    last = raw < 0x80  # the last byte of each varint
    if not last[-1]:
        raise ValueError("truncated doc_terms blob")
    ends = np.flatnonzero(last)
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    varint: np.ndarray = np.cumsum(last) - last  # varint number of every byte
    shift = (np.arange(len(raw)) - starts[varint]) * 7
    vals = np.add.reduceat((raw & 0x7F).astype(np.int64) << shift, starts)
    # varints per blob: the blobs' byte ranges, counted in varint ends
    if int(lens.sum()) != len(raw):
        raise ValueError("doc_terms blob lengths do not add up")
    bounds = np.cumsum(lens)
    if not last[bounds[lens > 0] - 1].all():  # a blob cut inside a varint
        raise ValueError("truncated doc_terms blob")
    per_blob = np.searchsorted(ends, bounds, side="left") - np.searchsorted(
        ends, bounds - lens, side="left"
    )
    if np.any(per_blob % 2):
        raise ValueError("truncated doc_terms blob")
    pairs = per_blob // 2
    blob = np.repeat(np.arange(len(lens), dtype=np.int64), pairs)
    delta, tf = vals[0::2], vals[1::2]
    # term ids: running sums of the deltas, restarted at each blob
    run = np.cumsum(delta)
    first = np.cumsum(pairs) - pairs  # each blob's first pair
    has = pairs > 0
    offset = np.zeros(len(lens), dtype=np.int64)
    offset[has] = run[first[has]] - delta[first[has]]
    return blob, run - offset[blob], tf
