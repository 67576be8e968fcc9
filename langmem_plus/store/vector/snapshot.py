"""The vector snapshot file beside a database: plain arrays that cannot execute, signed.

A snapshot only saves the time of rebuilding FAISS indexes from SQLite, so anything doubtful
about it means "rebuild", never "trust". The file is this module's own container: a magic
line, a JSON header (the caller's header and each array's name, numeric dtype, shape and
place), the raw bytes of the arrays, and an HMAC-SHA256 over everything before it, keyed with
a secret kept in the database itself. Nothing in it is compressed or can run code.

Reading trusts nothing before the signature: the path is opened without following a link and
without blocking (a FIFO cannot hang the open), must be a regular file no larger than the
database's vectors can explain (`snapshot_size_limit`), is read once into memory, and only
bytes whose HMAC verifies are parsed; the arrays are views of those bytes. A file that was
not written by a process able to read the database (crafted, foreign, truncated, bit-flipped)
fails before FAISS parses a byte of it. Writing goes to a temp file created exclusively
(0600, never through a link), renamed into place.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import sqlite3
import stat
import threading
from collections.abc import Mapping
from glob import escape as glob_escape
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "SnapshotError",
    "read_snapshot",
    "remove_stale_temp_files",
    "snapshot_key",
    "snapshot_size_limit",
    "write_snapshot",
]

_KEY_META = "snapshot_key"
_MAGIC = b"LMPSNAP2"
_MAC_LEN = 32
_LEN_BYTES = 8
_RESERVED = ("header", "mac")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class SnapshotError(ValueError):
    """The snapshot file is missing, unreadable, foreign or tampered with: rebuild instead."""


def snapshot_key(conn: sqlite3.Connection, *, create: bool) -> bytes | None:
    """The database's secret snapshot key (made once, inside a write transaction if `create`)."""
    row = conn.execute("SELECT value FROM meta WHERE key=?", (_KEY_META,)).fetchone()
    if row is not None:
        return bytes.fromhex(str(row[0]))
    if not create:
        return None
    key = secrets.token_bytes(32)
    conn.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (_KEY_META, key.hex()))
    return key


def snapshot_size_limit(conn: sqlite3.Connection, dims: int) -> int:
    """The largest snapshot the database's vectors can explain, in bytes (read before any).

    Per vector at most 8 bytes per dimension (its float32 copy, plus as much again for IVF
    centroids: a namespace has fewer centroids than vectors) and 64 for ids; per namespace
    4 KiB of index headers; 1 MiB for the rest. Ids only grow, so the largest id bounds the
    count without a scan.
    """
    vectors = int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM vectors").fetchone()[0])
    spaces = int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM namespaces").fetchone()[0])
    return (1 << 20) + vectors * (8 * max(1, int(dims)) + 64) + spaces * 4096


def write_snapshot(
    path: Path, key: bytes, header: Mapping[str, Any], arrays: Mapping[str, np.ndarray]
) -> None:
    """Write header + arrays + their HMAC atomically (an exclusive temp file, then rename)."""
    if any(name in arrays for name in _RESERVED):
        raise ValueError(f"array names {_RESERVED} are reserved")
    blobs = {name: np.ascontiguousarray(a) for name, a in arrays.items()}
    layout, offset = [], 0
    for name, arr in blobs.items():
        if arr.dtype.kind not in "biuf":
            raise ValueError(f"array {name!r} is not numeric ({arr.dtype})")
        layout.append([name, arr.dtype.str, list(arr.shape), offset, arr.nbytes])
        offset += arr.nbytes
    head = json.dumps({"header": dict(header), "arrays": layout}, sort_keys=True).encode()
    mac = hmac.new(key, digestmod=hashlib.sha256)
    tmp = _temp_path(path)
    fd = _create_exclusive(tmp)
    try:
        with os.fdopen(fd, "wb") as fh:
            for part in (_MAGIC, len(head).to_bytes(_LEN_BYTES, "little"), head):
                mac.update(part)
                fh.write(part)
            for arr in blobs.values():
                view = arr.data.cast("B")
                mac.update(view)
                fh.write(view)
            fh.write(mac.digest())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _create_exclusive(tmp: Path) -> int:
    """Open a new file at `tmp` for writing, 0600, never through a link or over a file.

    The name is this writer's own (pid and thread), so whatever already sits there is a
    killed writer's leftover or a planted link: it is unlinked (a link, not its target) and
    the exclusive create tried once more; a second failure raises `OSError`.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY | _CLOEXEC
    try:
        return os.open(tmp, flags, 0o600)
    except FileExistsError:
        tmp.unlink()
        return os.open(tmp, flags, 0o600)


def _temp_path(path: Path) -> Path:
    """`<snapshot>.<pid>.<thread id>.tmp`: the writer's temp file (`remove_stale_temp_files`)."""
    return path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: existence check only
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0  # someone else's live process, or not a pid we can judge: keep
    return True


def remove_stale_temp_files(path: Path) -> int:
    """Delete temp files of `path` left by snapshot writers that died mid-write (SIGKILL,
    power loss); returns how many. Only names `write_snapshot` makes count, and only when
    their process is gone: a live writer's file (or one of a reused pid) stays. POSIX only.
    """
    if os.name != "posix":
        return 0
    pattern = re.compile(re.escape(path.name) + r"\.(\d+)\.(\d+)\.tmp")
    removed = 0
    try:
        candidates = list(path.parent.glob(f"{glob_escape(path.name)}.*.*.tmp"))
    except OSError:
        return 0
    for tmp in candidates:
        m = pattern.fullmatch(tmp.name)
        if m is None or _pid_alive(int(m.group(1))):
            continue
        try:
            tmp.unlink()
            removed += 1
        except FileNotFoundError:
            pass  # another process cleaned it up first
        except OSError:
            return removed  # read-only directory and the like: nothing more to do here
    return removed


def _read_bounded(path: Path, max_bytes: int) -> bytearray:
    """The bytes of `path` when it is a regular file (not a link, FIFO or device) of at most
    `max_bytes`; checked on the open descriptor before a byte is read."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _BINARY | _CLOEXEC)
    except OSError as exc:
        raise SnapshotError(f"cannot open the snapshot: {exc.strerror or exc}") from exc
    with os.fdopen(fd, "rb", buffering=0) as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SnapshotError("the snapshot path is not a regular file")
        size = info.st_size
        if size > max_bytes:
            raise SnapshotError(
                f"snapshot of {size} bytes is larger than this database's vectors explain "
                f"({max_bytes} bytes)"
            )
        if size < len(_MAGIC) + _LEN_BYTES + _MAC_LEN:
            raise SnapshotError("not a snapshot file: too short")
        buf = bytearray(size)
        view, got = memoryview(buf), 0
        try:
            while got < size:
                n = fh.readinto(view[got:])
                if not n:
                    raise SnapshotError("the snapshot file shrank while it was read")
                got += n
        except OSError as exc:
            raise SnapshotError(f"cannot read the snapshot: {exc.strerror or exc}") from exc
    return buf


def read_snapshot(
    path: Path, key: bytes, *, max_bytes: int = 1 << 40
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Header and arrays of a snapshot whose HMAC verifies; `SnapshotError` otherwise.

    Nothing is parsed before the signature checks out, and nothing larger than `max_bytes`
    (see `snapshot_size_limit`) is read. The arrays are read-only views of the file's bytes.
    """
    raw = _read_bounded(path, max_bytes)
    body, mac = memoryview(raw)[:-_MAC_LEN], bytes(raw[-_MAC_LEN:])
    if bytes(body[: len(_MAGIC)]) != _MAGIC:
        raise SnapshotError("not a snapshot file (or one of an older format)")
    if not hmac.compare_digest(hmac.new(key, body, hashlib.sha256).digest(), mac):
        raise SnapshotError("snapshot signature does not match this database")
    # signed by a writer holding the database's key: what follows is this module's own output
    start = len(_MAGIC) + _LEN_BYTES
    head_len = int.from_bytes(body[len(_MAGIC) : start], "little")
    try:
        meta = json.loads(bytes(body[start : start + head_len]))
        header, layout = meta["header"], meta["arrays"]
        data = body[start + head_len :]
        arrays = {}
        for name, dtype, shape, offset, nbytes in layout:
            dt = np.dtype(dtype)
            if dt.kind not in "biuf" or offset + nbytes > len(data):
                raise SnapshotError(f"snapshot array {name!r} is malformed")
            arr = np.frombuffer(data, dtype=dt, count=nbytes // dt.itemsize, offset=offset)
            arrays[str(name)] = arr.reshape(shape)
    except (ValueError, KeyError, TypeError) as exc:
        raise SnapshotError(f"snapshot header is malformed: {exc}") from exc
    if not isinstance(header, dict):
        raise SnapshotError("snapshot header is not an object")
    return header, arrays
