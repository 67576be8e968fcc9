"""The vector snapshot file beside a database: plain arrays that cannot execute, signed.

A snapshot only saves the time of rebuilding FAISS indexes from SQLite, so anything doubtful
about it means "rebuild", never "trust". The file is a NumPy `.npz` archive read with
`allow_pickle=False` (numeric arrays only: nothing in it can run code when it is opened). It
holds a JSON header, the arrays, and an HMAC-SHA256 over all of them keyed with a secret kept in
the database itself: a file that was not written by a process able to read that database (a
crafted or foreign file, a truncated or bit-flipped one) fails the check before FAISS parses a
byte of it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import sqlite3
import threading
import zipfile
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
    "write_snapshot",
]

_KEY_META = "snapshot_key"
_HEADER = "header"
_MAC = "mac"


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


def _mac(key: bytes, header: bytes, arrays: Mapping[str, np.ndarray]) -> bytes:
    h = hmac.new(key, digestmod=hashlib.sha256)
    h.update(len(header).to_bytes(8, "little") + header)
    for name in sorted(arrays):
        arr = np.ascontiguousarray(arrays[name])
        meta = json.dumps([name, arr.dtype.str, list(arr.shape)]).encode()
        h.update(len(meta).to_bytes(8, "little") + meta)
        data = arr.tobytes()
        h.update(len(data).to_bytes(8, "little") + data)
    return h.digest()


def write_snapshot(
    path: Path, key: bytes, header: Mapping[str, Any], arrays: Mapping[str, np.ndarray]
) -> None:
    """Write header + arrays + their HMAC atomically (a unique temp file, then rename)."""
    if _HEADER in arrays or _MAC in arrays:
        raise ValueError(f"array names {_HEADER!r} and {_MAC!r} are reserved")
    head = json.dumps(dict(header), sort_keys=True).encode()
    mac = _mac(key, head, arrays)
    payload = {
        **{name: np.ascontiguousarray(a) for name, a in arrays.items()},
        _HEADER: np.frombuffer(head, np.uint8),
        _MAC: np.frombuffer(mac, np.uint8),
    }
    # A unique temp name: several processes may snapshot the same store at once.
    tmp = _temp_path(path)
    try:
        with open(tmp, "wb") as fh:
            np.savez(fh, **payload)  # type: ignore[arg-type]
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


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


def read_snapshot(path: Path, key: bytes) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Header and arrays of a snapshot whose HMAC verifies; `SnapshotError` otherwise."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise SnapshotError(f"not a snapshot file: {exc}") from exc
    head_arr, mac_arr = arrays.pop(_HEADER, None), arrays.pop(_MAC, None)
    if head_arr is None or mac_arr is None or head_arr.dtype != np.uint8:
        raise SnapshotError("snapshot without header or signature")
    head = head_arr.tobytes()
    if not hmac.compare_digest(_mac(key, head, arrays), mac_arr.tobytes()):
        raise SnapshotError("snapshot signature does not match this database")
    try:
        header = json.loads(head)
    except ValueError as exc:
        raise SnapshotError("snapshot header is not JSON") from exc
    if not isinstance(header, dict):
        raise SnapshotError("snapshot header is not an object")
    return header, arrays
