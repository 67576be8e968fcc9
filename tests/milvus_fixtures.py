"""Milvus Lite for the tests: whether it can run here, and stores over one Lite file per
test module (starting Lite and creating collections is the slow part; opening a store on
existing collections is not), wiped between tests.

Milvus Lite ships for Linux and macOS only (x86-64 and arm64); on Windows, or where the
`milvus` extra is not installed, the Milvus tests skip with that reason.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from langmem_plus import HybridStore

__all__ = ["LITE_REASON", "LiteFile", "lite_expire", "requires_lite", "wipe"]


def _lite_reason() -> str | None:
    if not sys.platform.startswith(("linux", "darwin")):
        return f"Milvus Lite ships for Linux and macOS only, not {sys.platform}"
    for module, package in (("pymilvus", "pymilvus"), ("milvus_lite", "milvus-lite")):
        if importlib.util.find_spec(module) is None:
            return f"{package} is not installed (pip install 'langmem-plus[milvus]')"
    return None


LITE_REASON = _lite_reason()
requires_lite = pytest.mark.skipif(LITE_REASON is not None, reason=LITE_REASON or "")


class LiteFile:
    """One Milvus Lite file; `open` gives a store on it with every item of earlier tests
    deleted."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / "tests.milvus.db"

    def open(self, **kwargs: Any) -> HybridStore:
        store = HybridStore(self.path, **kwargs)
        wipe(store)
        return store


def wipe(store: HybridStore) -> None:
    """Delete every item, vector and statistics row of a Milvus store."""
    st: Any = store._storage
    for name in (st.names.items, st.names.vectors, st.names.stats):
        if st.client.has_collection(name):
            st.client.delete(name, filter='pk != ""')


def lite_expire(store: HybridStore, namespace: Sequence[str], key: str, at: float) -> None:
    """Set the item's expiry time (as if its TTL ran out at `at`)."""
    from langmem_plus.store.milvus.schema import item_pk

    st: Any = store._storage
    got = st.client.query(
        st.names.items, filter=f'pk == "{item_pk(namespace, key)}"', output_fields=st.fields
    )
    for ent in got:
        ent["expires_at"] = at
    st.client.upsert(st.names.items, got)
