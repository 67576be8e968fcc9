"""ItemWriter and Maintenance work from the store's parts alone (no HybridStore)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from langgraph.store.base import PutOp

from langmem_plus.store.db.changefeed import KEYWORD_FEED, VECTOR_FEED
from langmem_plus.store.db.database import Database
from langmem_plus.store.keyword.index import KeywordIndex
from langmem_plus.store.sqlite.maintenance import Maintenance
from langmem_plus.store.sqlite.writer import ItemWriter
from langmem_plus.text.tokenize import QueryTerms


@dataclass
class Put:
    op: PutOp
    texts: list[tuple[str, str]] = field(default_factory=list)
    keyword_text: str = ""
    unembedded: bool = False


def test_writer_puts_overwrites_and_deletes_with_every_change_logged():
    db = Database(None)
    kw = KeywordIndex()
    writer = ItemWriter(kw, "int8")
    ns = ("u", "a")
    vec = np.ones((1, 8), np.float32)
    with db.write() as conn:
        put = Put(PutOp(ns, "k", {"text": "redis cache"}), [("text", "redis cache")], "redis cache")
        writer.apply_puts(conn, {(ns, "k"): put}, vec, now=100.0)
    with db.read() as conn:
        ns_ids = list(writer.namespace_ids(conn, [ns]).values())
        assert list(kw.search(conn, ns_ids, QueryTerms(("redis",), ()), k=5)) == [1]
        assert VECTOR_FEED.size(conn) == 1 and KEYWORD_FEED.size(conn) == 1
    with db.write() as conn:
        put = Put(PutOp(ns, "k", {"text": "zebra"}), [("text", "zebra")], "zebra")
        writer.apply_puts(conn, {(ns, "k"): put}, vec, now=101.0)
    with db.read() as conn:
        assert kw.search(conn, ns_ids, QueryTerms(("redis",), ()), k=5) == {}
        assert conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == 1
    with db.write() as conn:
        writer.apply_puts(conn, {(ns, "k"): Put(PutOp(ns, "k", None))}, None, now=102.0)
    maint = Maintenance(
        db,
        kw,
        None,
        texts=lambda v: [("text", v["text"])],
        embeddings=None,
        model_name="",
        dims=8,
        vector_storage="int8",
    )
    assert maint.count(ns, exact=True) == 0 and maint.keys((), exact=False) == []
    with db.read() as conn:
        assert conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM postings").fetchone()[0] == 0
    db.close()
