"""The byte format of one document's (term id, tf) pairs in `doc_terms` (store/docterms.py).

Term ids ascending, each as the unsigned LEB128 varint of its difference to the previous one,
followed by its term frequency as a varint: a document's pairs take two to four bytes each.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["pack_terms", "unpack_terms"]


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
