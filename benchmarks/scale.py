"""Speed and size of HybridStore from 1k to 1M items, against a naive rank-bm25 + FAISS baseline.

Memories are synthetic but shaped like real ones: English, Chinese and code sentences built
from templates with Zipf-distributed word choice (fixed seed). Bulk vectors come from a fast
deterministic hash embedding (text -> random unit vector), because embedding 1M texts with USE
would take ~10 minutes and measures the model, not the store; the real USE per-query cost is
measured separately and added to give "with query embedding" latencies. Each size runs in its
own process so peak RSS is per size.

The `users` section is the many-users case: N users with 100 items each in their own
namespace (`--users N`); it times a user's first search after the store opens (cold caches for
that user) and a later (warm) search, and reports them as ratios: to the USE query embedding's
own p50 measured in the same run, and to the naive baseline over the same user's 100 items.

The `turns` section measures the turn-memory floors on conversation turns
(`Memory.add_turn`, seeded en/zh/code sessions, the default USE embeddings and config), with
store and `Memory.recall` latency (USE embedding included) at 100 and 1,000 turns and the
bytes on disk after close (database + WAL + any FAISS snapshot).

    python benchmarks/scale.py [--sizes 1k,10k,100k] [--users 1000] [--turns 1000] [--smoke]
        [--out docs/results/scale.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _overrides import Overrides, parse_overrides  # noqa: E402
from _results import write_json, write_text  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402
from langgraph.store.base import PutOp  # noqa: E402

from langmem_plus.config import MemoryConfig  # noqa: E402
from langmem_plus.store.hybrid import HybridStore  # noqa: E402
from langmem_plus.store.tuning import StoreTuning  # noqa: E402
from langmem_plus.store.vector.index import decode_vecs  # noqa: E402
from langmem_plus.text.tokenize import tokenize  # noqa: E402

DIMS = 512
SEED = 20261122
DEFAULT_SIZES = "100,1k,10k,100k,ns1000x100"
NAIVE_MAX = 10_000  # the naive baseline rebuilds BM25 per write: small sizes only

# ============================================================================ corpus
_EN_NAMES = ["Alice", "Bob", "Chen", "Dana", "Emil", "Farah", "Gus", "Hana", "Ivan", "Jun"]
_EN_VERBS = [
    "visited",
    "likes",
    "prefers",
    "bought",
    "fixed",
    "finished",
    "started",
    "cancelled",
    "recommended",
    "booked",
    "cooked",
    "painted",
    "read",
    "wrote",
    "lost",
    "found",
    "sold",
]
_ZH_SUBJ = ["我", "用户", "妈妈", "小王", "同事", "老板", "女朋友", "室友", "孩子", "朋友"]
_ZH_VERB = ["喜欢", "去了", "买了", "讨厌", "推荐", "预订了", "学习", "完成了", "修好了", "提到"]
_CODE_ERR = ["TypeError", "KeyError", "ValueError", "TimeoutError", "NullPointerException"]
_SYL = [
    "ka",
    "ri",
    "to",
    "mon",
    "sel",
    "va",
    "dor",
    "pin",
    "qu",
    "ex",
    "lo",
    "ran",
    "te",
    "bu",
    "ma",
    "si",
    "no",
    "pel",
    "gar",
    "fi",
    "tu",
    "len",
    "zo",
    "har",
    "mi",
    "cas",
    "do",
    "wel",
]
_HANZI = "山水火木金土风云雨雪花草鱼鸟茶米面酒书画歌舞车船桥路城村店园馆院楼湖海河江"


class Corpus:
    """Seeded generator of en/zh/code memory sentences with Zipf-distributed vocabulary."""

    def __init__(self, seed: int = SEED, vocab: int = 50_000) -> None:
        self.rng = np.random.default_rng(seed)
        self.en_vocab = self._words(vocab, latin=True)
        self.zh_vocab = self._words(vocab // 2, latin=False)
        self.code_vocab = [w.capitalize() for w in self._words(5000, latin=True)]

    def _words(self, n: int, latin: bool) -> list[str]:
        alphabet = np.asarray(_SYL if latin else list(_HANZI))
        out: dict[str, None] = {}
        while len(out) < n:  # the alphabets allow far more than n distinct words
            lens = self.rng.integers(2, 5, size=n)
            picks = self.rng.integers(len(alphabet), size=(n, 4))
            for k, row in zip(lens, picks, strict=True):
                out.setdefault("".join(alphabet[row[:k]]), None)
        words = list(out)[:n]
        self.rng.shuffle(words)
        return words

    def _zipf(self, vocab: Sequence[str], k: int) -> list[str]:
        idx = np.minimum(self.rng.zipf(1.15, size=k) - 1, len(vocab) - 1)
        return [vocab[i] for i in idx]

    def sentence(self) -> str:
        """One memory: 50% English, 35% Chinese, 15% code."""
        r = self.rng.random()
        if r < 0.5:
            w = self._zipf(self.en_vocab, 6)
            name = _EN_NAMES[int(self.rng.integers(len(_EN_NAMES)))]
            verb = _EN_VERBS[int(self.rng.integers(len(_EN_VERBS)))]
            return (
                f"{name} {verb} the {w[0]} {w[1]} near {w[2]} because of {w[3]} and {w[4]} {w[5]}."
            )
        if r < 0.85:
            w = self._zipf(self.zh_vocab, 5)
            s = _ZH_SUBJ[int(self.rng.integers(len(_ZH_SUBJ)))]
            v = _ZH_VERB[int(self.rng.integers(len(_ZH_VERB)))]
            return f"{s}上周{v}{w[0]}的{w[1]}，觉得{w[2]}和{w[3]}都不错，还想去{w[4]}。"
        w = self._zipf(self.code_vocab, 4)
        err = _CODE_ERR[int(self.rng.integers(len(_CODE_ERR)))]
        return (
            f"Fixed {err} in {w[0]}Service.process{w[1]}() at src/{w[2].lower()}/"
            f"{w[3].lower()}.ts by checking the {w[1].lower()} id."
        )

    def query(self, docs: Sequence[str]) -> str:
        """A query of 2-3 words drawn from a random stored memory (rare and common mixed)."""
        text = docs[int(self.rng.integers(len(docs)))]
        toks = [t for t in tokenize(text) if "/" not in t]
        k = min(len(toks), int(self.rng.integers(2, 4)))
        picks = self.rng.choice(len(toks), size=k, replace=False) if toks else []
        return " ".join(toks[i] for i in sorted(picks)) or text[:8]


# ============================================================================ embeddings
class HashEmbeddings(Embeddings):
    """Deterministic text -> random unit vector (blake2b seed); a stand-in for bulk loading."""

    model_name = "hash-unit-512"
    dims = DIMS

    def __init__(self) -> None:
        self.seconds = 0.0
        # Query vectors made before a timed loop (`prime`): the store's search then costs no
        # embedding time, so "excl. query embedding" times the store alone.
        self.memo: dict[str, list[float]] = {}

    def prime(self, queries: Sequence[str]) -> None:
        """Embed these queries now; `embed_query` returns the stored vectors."""
        for q in queries:
            self.memo[q] = self.embed_array([q])[0].tolist()

    def _one(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
        v = np.random.default_rng(seed).standard_normal(DIMS).astype(np.float32)
        return v / np.linalg.norm(v)

    def embed_array(self, texts: Sequence[str]) -> np.ndarray:
        t0 = time.perf_counter()
        out = np.vstack([self._one(t) for t in texts]) if texts else np.zeros((0, DIMS), np.float32)
        self.seconds += time.perf_counter() - t0
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_array(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        got = self.memo.get(text)
        return got if got is not None else self.embed_array([text])[0].tolist()


# ============================================================================ helpers
def parse_size(tok: str) -> tuple[int, int]:
    """'10k' -> (1 namespace, 10,000 items); 'ns1000x100' -> (1000 namespaces, 100 each)."""
    tok = tok.strip().lower()
    if tok.startswith("ns"):
        a, b = tok[2:].split("x")
        return int(_num(a)), int(_num(b))
    return 1, int(_num(tok))


def _num(s: str) -> float:
    mult = {"k": 1_000, "m": 1_000_000}.get(s[-1], 1)
    return float(s[:-1] if mult > 1 else s) * mult


def pct(values: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99 of millisecond timings."""
    arr = np.asarray(values if len(values) else [0.0], dtype=np.float64)
    return {f"p{p}": float(np.percentile(arr, p)) for p in (50, 95, 99)}


def peak_rss_mb() -> float:
    """Peak resident set size of this process (MB; Linux reports KB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def dbstat_by_name(db_path: Path) -> dict[str, int]:
    """Bytes of pages per table or index, from SQLite's dbstat table."""
    import sqlite3

    conn = sqlite3.connect(db_path)
    try:
        rows = conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
    finally:
        conn.close()
    return {str(name): int(size) for name, size in rows}


def disk_breakdown(db_path: Path) -> dict[str, int]:
    """Bytes per storage class from SQLite's dbstat table (pages actually used per table)."""
    rows = list(dbstat_by_name(db_path).items())
    groups = {
        "text_metadata": (
            "items",
            "namespaces",
            "sqlite_autoindex_items_1",
            "items_key",
            "items_expires",
            "sqlite_autoindex_namespaces_1",
        ),
        "keyword_index": (
            "kw_log",
            "terms",
            "postings",
            "doc_terms",
            "sqlite_autoindex_terms_1",
            "sqlite_autoindex_postings_1",
        ),
        "vectors": ("vectors", "vectors_item", "vec_log"),
    }
    out = {k: 0 for k in groups} | {"other": 0}
    for name, size in rows:
        for g, names in groups.items():
            if name in names:
                out[g] += int(size)
                break
        else:
            out["other"] += int(size)
    return out


def use_query_costs(queries: Sequence[str]) -> list[float]:
    """Measured USE cost (ms) of embedding each query once, uncached."""
    from langmem_plus.embeddings import default_embeddings

    emb = default_embeddings()
    emb.embed_query("warm up")
    out = []
    for q in queries:
        t0 = time.perf_counter()
        emb.embed_query(q)
        out.append((time.perf_counter() - t0) * 1000)
    return out


# ============================================================================ naive baseline
class Naive:
    """rank-bm25 rebuilt on every write + exact FAISS (what a simple implementation does)."""

    def __init__(self, docs: list[str], vecs: np.ndarray) -> None:
        import faiss
        from rank_bm25 import BM25Okapi

        self._bm25 = BM25Okapi
        self.tokens = [tokenize(d) or ["\x00"] for d in docs]
        self.bm25 = BM25Okapi(self.tokens)
        self.index = faiss.IndexFlatIP(DIMS)
        self.index.add(vecs)

    def put(self, text: str, vec: np.ndarray) -> None:
        self.tokens.append(tokenize(text) or ["\x00"])
        self.bm25 = self._bm25(self.tokens)
        self.index.add(vec[None, :])

    def search(self, query: str, qvec: np.ndarray, k: int = 10) -> list[int]:
        s = np.asarray(self.bm25.get_scores(tokenize(query)))
        top_b = np.argsort(-s)[:100]
        _sims, ids = self.index.search(qvec[None, :], 100)
        cand = set(top_b.tolist()) | set(ids[0].tolist())
        return sorted(cand, key=lambda i: -s[i])[:k]


# ============================================================================ one size
def run_one(n_ns: int, per_ns: int, workdir: Path, n_queries: int, n_puts: int) -> dict[str, Any]:
    """Build one store of n_ns x per_ns items and measure it (runs in its own process)."""
    total = n_ns * per_ns
    tokenize("预热 jieba warm-up")  # load jieba's dictionary outside the timed sections
    corpus = Corpus()
    t0 = time.perf_counter()
    docs = [corpus.sentence() for _ in range(total)]
    gen_s = time.perf_counter() - t0
    emb = HashEmbeddings()
    db = workdir / "scale.db"
    store = HybridStore(
        db, index={"dims": DIMS, "embed": emb, "fields": ["text"]}, **_over().store_kwargs()
    )
    nss = [("bench", f"u{i}") for i in range(n_ns)]
    # ---- bulk insert (batches of 1,000 puts)
    t0 = time.perf_counter()
    emb.seconds = 0.0
    batch = 1000
    for start in range(0, total, batch):
        ops = [
            PutOp(nss[i // per_ns], f"m{i}", {"text": docs[i]})
            for i in range(start, min(total, start + batch))
        ]
        store.batch(ops)
    wall = time.perf_counter() - t0
    embed_s = emb.seconds
    insert = {
        "items": total,
        "seconds_total": wall,
        "seconds_embedding": embed_s,
        "items_per_s_excl_embedding": total / max(wall - embed_s, 1e-9),
    }
    # ---- queries (in the first namespace; with many namespaces, spread over them)
    qrng = np.random.default_rng(SEED + 1)
    queries: list[tuple[tuple[str, str], str]] = []
    for _ in range(n_queries):
        ns_i = int(qrng.integers(n_ns))
        lo = ns_i * per_ns
        queries.append((nss[ns_i], corpus.query(docs[lo : lo + per_ns])))
    emb.prime([q for _, q in queries])  # query vectors made outside the timed loop
    for ns, q in queries[:5]:
        store.search(ns, query=q, limit=10)  # warm caches
    lat = []
    for ns, q in queries:
        t1 = time.perf_counter()
        store.search(ns, query=q, limit=10)
        lat.append((time.perf_counter() - t1) * 1000)
    # The same queries again: the in-memory postings cache now holds their terms (steady state
    # of a long-running process); the first pass above read each new term from SQLite once.
    lat_warm = []
    for ns, q in queries:
        t1 = time.perf_counter()
        store.search(ns, query=q, limit=10)
        lat_warm.append((time.perf_counter() - t1) * 1000)
    # ---- single puts (new keys, then an overwrite of an existing key)
    put_lat = []
    for j in range(n_puts):
        text = corpus.sentence()
        t1 = time.perf_counter()
        store.put(nss[j % n_ns], f"new{j}", {"text": text})
        put_lat.append((time.perf_counter() - t1) * 1000)
    upd_lat = []
    for j in range(min(n_puts, total)):
        t1 = time.perf_counter()
        store.put(nss[j // per_ns], f"m{j}", {"text": docs[j] + " updated"})
        upd_lat.append((time.perf_counter() - t1) * 1000)
    # ---- ANN recall against exact search (only where the store went approximate)
    ann: dict[str, Any] = {"approximate": False}
    vec = store._vec
    if vec is not None and any(i.approximate for i in vec._ns.values()):
        ann = ann_recall(store, emb, [q for _, q in queries[:100]])
    store.close()
    # ---- sizes on disk
    sizes = disk_breakdown(db)
    db_bytes = db.stat().st_size
    wal = db.with_name(db.name + "-wal")
    snap = db.with_name(db.name + ".faiss")
    n_items = total + n_puts
    disk = {
        "db_bytes": db_bytes,
        "wal_bytes": wal.stat().st_size if wal.exists() else 0,
        "faiss_snapshot_bytes": snap.stat().st_size if snap.exists() else 0,
        "by_table_bytes": sizes,
        "per_item_bytes": {k: v / n_items for k, v in sizes.items()},
        "per_item_excl_vectors": (sizes["text_metadata"] + sizes["keyword_index"]) / n_items,
    }
    # ---- open (snapshot) and rebuild (no snapshot) times
    t1 = time.perf_counter()
    s2 = HybridStore(
        db, index={"dims": DIMS, "embed": emb, "fields": ["text"]}, **_over().store_kwargs()
    )
    open_s = time.perf_counter() - t1
    s2._db.close()
    s2._closed = True  # keep the snapshot as is
    snap.unlink(missing_ok=True)
    t1 = time.perf_counter()
    s3 = HybridStore(
        db, index={"dims": DIMS, "embed": emb, "fields": ["text"]}, **_over().store_kwargs()
    )
    rebuild_s = time.perf_counter() - t1
    s3.close()
    out: dict[str, Any] = {
        "namespaces": n_ns,
        "items_per_namespace": per_ns,
        "corpus_generation_s": gen_s,
        "insert": insert,
        "search_ms_excl_query_embedding": pct(lat),
        "search_ms_samples": lat,
        "search_ms_warm_excl_query_embedding": pct(lat_warm),
        "search_ms_warm_samples": lat_warm,
        "queries": [q for _, q in queries],
        "single_put_ms": pct(put_lat),
        "overwrite_put_ms": pct(upd_lat),
        "open_s": open_s,
        "rebuild_s": rebuild_s,
        "disk": disk,
        "ann": ann,
    }
    if total <= NAIVE_MAX and n_ns == 1:
        out["naive"] = run_naive(docs, emb, [q for _, q in queries], n_puts, corpus)
    out["peak_rss_mb"] = peak_rss_mb()
    return out


def ann_recall(store: HybridStore, emb: HashEmbeddings, queries: Sequence[str]) -> dict[str, Any]:
    """recall@10 of the store's approximate (HNSW) search against exact inner product over the
    same vectors."""
    import faiss

    vec = store._vec
    assert vec is not None
    idx = next(i for i in vec._ns.values() if i.approximate)
    # exact reference: the (int8 or float16) truth in SQLite, decoded as the store reads it
    with store._db.read() as conn:
        rows = conn.execute("SELECT id, vec FROM vectors").fetchall()
    ref_ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    ref = decode_vecs([r[1] for r in rows], DIMS)
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    flat = faiss.IndexFlatIP(DIMS)
    flat.add(ref)
    hits = []
    for q in queries:
        qv = np.asarray(emb.embed_query(q), np.float32)
        got = {vid for vid, _ in vec.search(list(vec._ns), qv, 10)}
        _scores, ex = flat.search(qv[None, :], 10)
        want = set(ref_ids[ex[0]].tolist())
        hits.append(len(got & want) / 10)
    return {
        "approximate": True,
        "hnsw_m": int(faiss.downcast_index(idx.index.index).hnsw.nb_neighbors(1)),
        "ef_search": int(vec.ef_search),
        "recall@10_vs_exact": float(np.mean(hits)),
        "indexed": int(idx.size),
        "note": "hash (random) vectors: the worst case for an approximate index",
    }


def run_naive(
    docs: list[str], emb: HashEmbeddings, queries: Sequence[str], n_puts: int, corpus: Corpus
) -> dict[str, Any]:
    """Naive baseline timings at the same size: build, search, single put (BM25 rebuilt)."""
    vecs = emb.embed_array(docs)
    t0 = time.perf_counter()
    naive = Naive(list(docs), vecs)
    build_s = time.perf_counter() - t0
    lat = []
    for q in queries:
        qv = emb.embed_array([q])[0]
        t1 = time.perf_counter()
        naive.search(q, qv)
        lat.append((time.perf_counter() - t1) * 1000)
    put_lat = []
    for _ in range(max(3, n_puts // 10)):
        text = corpus.sentence()
        v = emb.embed_array([text])[0]
        t1 = time.perf_counter()
        naive.put(text, v)
        put_lat.append((time.perf_counter() - t1) * 1000)
    return {"build_s": build_s, "search_ms": pct(lat), "single_put_ms": pct(put_lat)}


# ============================================================================ many users
USER_ITEMS = 100
NAIVE_USERS = 50  # users whose naive baseline is built (one BM25 + flat index each)


def build_users(
    db: Path,
    index: dict[str, Any],
    docs: Sequence[Sequence[str]],
    over: Overrides = Overrides(),
    chunk: int = 1000,
) -> None:
    """A store at `db` where user u (namespace ("users", f"u{u}")) holds `docs[u]` as items
    m0, m1, ... (written in batches of `chunk`), then closed: the many-users benchmarks' data."""
    store = HybridStore(db, index=index, **over.store_kwargs())
    ops = [
        PutOp(("users", f"u{u}"), f"m{i}", {"text": t})
        for u, texts in enumerate(docs)
        for i, t in enumerate(texts)
    ]
    for start in range(0, len(ops), chunk):
        store.batch(ops[start : start + chunk])
    store.close()


def run_users(n_users: int, workdir: Path, n_queries: int) -> dict[str, Any]:
    """`n_users` x 100 items: first and warm search of a user, and the naive baseline."""
    tokenize("预热 jieba warm-up")
    corpus = Corpus()
    docs = [[corpus.sentence() for _ in range(USER_ITEMS)] for _ in range(n_users)]
    emb = HashEmbeddings()
    db = workdir / "users.db"
    index = {"dims": DIMS, "embed": emb, "fields": ["text"]}
    build_users(db, index, docs, _over())
    qrng = np.random.default_rng(SEED + 2)
    users = [int(u) for u in qrng.permutation(n_users)[: min(n_users, n_queries)]]
    first_q = {u: corpus.query(docs[u]) for u in users}
    warm_q = {u: [corpus.query(docs[u]) for _ in range(3)] for u in users}
    emb.prime([*first_q.values(), *(q for qs in warm_q.values() for q in qs)])
    store = HybridStore(db, index=index, **_over().store_kwargs())  # reopened: every user is cold
    store.search(("users", "warm-up"), query="warm up", limit=10)
    first, warm = [], []
    for u in users:
        t0 = time.perf_counter()
        store.search(("users", f"u{u}"), query=first_q[u], limit=10)
        first.append((time.perf_counter() - t0) * 1000)
    for u in users:
        for q in warm_q[u]:
            t0 = time.perf_counter()
            store.search(("users", f"u{u}"), query=q, limit=10)
            warm.append((time.perf_counter() - t0) * 1000)
    store.close()
    naive = []
    for u in users[:NAIVE_USERS]:
        nv = Naive(list(docs[u]), emb.embed_array(docs[u]))
        for q in warm_q[u]:
            qv = emb.embed_array([q])[0]
            t0 = time.perf_counter()
            nv.search(q, qv)
            naive.append((time.perf_counter() - t0) * 1000)
    return {
        "users": n_users,
        "items_per_user": USER_ITEMS,
        "first_search_ms": pct(first),
        "warm_search_ms": pct(warm),
        "naive_search_ms": pct(naive),
        "first_samples": first,
        "warm_samples": warm,
        "queries": list(first_q.values()),
    }


def users_ratios(u: dict[str, Any], use: Sequence[float]) -> dict[str, float]:
    """The many-users figures as ratios (p50s of the same run)."""
    use_p50 = float(np.percentile(use, 50))
    with_q = {
        k: float(np.percentile([x + use[i % len(use)] for i, x in enumerate(u[k])], 50))
        for k in ("first_samples", "warm_samples")
    }
    naive = u["naive_search_ms"]["p50"]
    return {
        "use_query_p50_ms": use_p50,
        "warm_with_embedding_over_embedding": with_q["warm_samples"] / use_p50,
        "first_with_embedding_over_embedding": with_q["first_samples"] / use_p50,
        "warm_over_naive": u["warm_search_ms"]["p50"] / max(naive, 1e-9),
        "first_over_naive": u["first_search_ms"]["p50"] / max(naive, 1e-9),
    }


# ============================================================================ conversation turns
_T_CITY = ["Lisbon", "Kyoto", "Berlin", "Austin", "Oaxaca", "Tbilisi", "Hanoi", "Porto", "Oslo"]
_T_FOOD = ["ramen", "tacos al pastor", "dumplings", "pho", "paella", "sourdough", "khachapuri"]
_T_REL = ["sister", "brother", "mom", "dad", "partner", "roommate", "manager", "best friend"]
_T_HOBBY = ["bouldering", "the cello", "pottery", "sailing", "chess", "watercolour", "running"]
_T_PROJ = ["billing migration", "search revamp", "mobile release", "Q3 report", "onboarding flow"]
_T_DAY = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "the weekend", "next week"]
_Z_CITY = ["成都", "杭州", "西安", "厦门", "青岛", "昆明", "长沙", "苏州", "大理"]
_Z_FOOD = ["火锅", "小龙虾", "肉夹馍", "沙茶面", "米线", "臭豆腐", "生煎包", "烤鱼"]
_Z_REL = ["妈妈", "爸爸", "女朋友", "室友", "老板", "同事小王", "表姐", "儿子"]
_Z_HOBBY = ["游泳", "弹吉他", "学日语", "跑步", "摄影", "下围棋", "练书法", "做烘焙"]
_Z_THING = ["房租", "体检报告", "年终总结", "护照", "驾照考试", "装修方案", "搬家"]
_C_ERR = [
    ("TypeError", "'NoneType' object is not subscriptable"),
    ("KeyError", "'user_id'"),
    ("ValueError", "invalid literal for int() with base 10: ''"),
    ("TimeoutError", "read timed out after 30s"),
    ("sqlite3.OperationalError", "database is locked"),
    ("AttributeError", "'dict' object has no attribute 'id'"),
]
_C_FUNC = ["load_orders", "parse_invoice", "sync_users", "render_report", "fetch_prices", "retry"]
_C_MOD = ["billing", "api", "workers", "reports", "auth", "search", "etl"]
_C_FIX = [
    "add a guard before the call: `if {arg} is None: return []`",
    "pass `timeout=60` and wrap the call in the existing `retry()` helper",
    "open the connection with `busy_timeout=5000` and keep one writer",
    "use `.get('{arg}')` and log the payload when it is missing",
    "convert with `int({arg} or 0)` after stripping whitespace",
]


class TurnCorpus:
    """Seeded en/zh/code conversation turns (user and assistant), realistic lengths."""

    def __init__(self, seed: int = SEED) -> None:
        self.rng = np.random.default_rng(seed)

    def _c(self, options: Sequence[Any]) -> Any:
        return options[int(self.rng.integers(len(options)))]

    def session(self) -> tuple[str, list[tuple[str, str]]]:
        """(language, [(role, content), ...]) of one session of 6-16 alternating turns."""
        r = self.rng.random()
        lang = "en" if r < 0.45 else "zh" if r < 0.8 else "code"
        n = int(self.rng.integers(3, 9)) * 2
        make = {"en": self._en, "zh": self._zh, "code": self._code}[lang]
        return lang, [make(i % 2 == 0) for i in range(n)]

    def _en(self, user: bool) -> tuple[str, str]:
        c = self._c
        if user:
            text = c(
                [
                    f"I'm flying to {c(_T_CITY)} on {c(_T_DAY)} and want to find good {c(_T_FOOD)}"
                    " near the old town. Any tips?",
                    f"My {c(_T_REL)} just started {c(_T_HOBBY)} and is already hooked.",
                    f"Can you remind me what we decided about the {c(_T_PROJ)} deadline?",
                    f"I can't do {c(_T_HOBBY)} on {c(_T_DAY)} anymore, my knee still hurts.",
                    f"Note for later: my {c(_T_REL)}'s birthday dinner is {c(_T_DAY)}, "
                    f"they love {c(_T_FOOD)}.",
                ]
            )
            return "user", text
        text = c(
            [
                f"Sure. In {c(_T_CITY)} the best {c(_T_FOOD)} tends to be in small family places;"
                " go early, most close between lunch and dinner, and book ahead on weekends.",
                f"Noted: the {c(_T_PROJ)} deadline moved to {c(_T_DAY)}, with a review the day "
                "before. I'll bring it up when you plan that week.",
                f"That's great! {c(_T_HOBBY).capitalize()} is a good habit; a short session "
                f"twice a week is plenty at the start. Want me to remind you on {c(_T_DAY)}?",
                "Got it, I'll keep that in mind and won't suggest it for a while.",
            ]
        )
        return "assistant", text

    def _zh(self, user: bool) -> tuple[str, str]:
        c = self._c
        if user:
            text = c(
                [
                    f"我下周要去{c(_Z_CITY)}出差，顺便想吃点正宗的{c(_Z_FOOD)}，有推荐吗？",
                    f"昨天和{c(_Z_REL)}一起去{c(_Z_HOBBY)}了，感觉还挺有意思的。",
                    f"提醒我一下，{c(_Z_THING)}的事情我们上次是怎么说的？",
                    f"我最近不太能吃辣，{c(_Z_FOOD)}先不考虑了。",
                    f"{c(_Z_REL)}下个月生日，想送个和{c(_Z_HOBBY)}有关的礼物。",
                ]
            )
            return "user", text
        text = c(
            [
                f"好的。{c(_Z_CITY)}的{c(_Z_FOOD)}很有名，建议去老城区的小店，午饭时间人比较多，"
                "可以早点去。",
                f"上次说的是先把{c(_Z_THING)}的材料准备好，周五之前发给对方确认。",
                f"记住了，以后推荐的时候会避开{c(_Z_FOOD)}。",
                f"可以考虑一些{c(_Z_HOBBY)}的入门装备，或者报一个体验课，{c(_Z_REL)}应该会喜欢。",
            ]
        )
        return "assistant", text

    def _code(self, user: bool) -> tuple[str, str]:
        c = self._c
        err, msg = c(_C_ERR)
        func, mod = c(_C_FUNC), c(_C_MOD)
        if user:
            line = int(self.rng.integers(20, 400))
            return "user", (
                f"Getting `{err}: {msg}` when calling `{func}()` in src/{mod}/{func}.py line "
                f"{line}. It only happens in the nightly job."
            )
        fix = c(_C_FIX).format(arg=c(["user_id", "order", "row", "payload", "price"]))
        return "assistant", (
            f"The {err} in `{func}()` comes from the nightly data: {fix}. Then add a test in "
            f"tests/{mod}/test_{func}.py that reproduces it."
        )


def turn_query(turns: Sequence[str], rng: np.random.Generator) -> str:
    """2-4 words of a stored turn (as a user would recall it)."""
    text = turns[int(rng.integers(len(turns)))]
    toks = [t for t in tokenize(text) if len(t) > 1 and "/" not in t]
    if not toks:
        return text[:12]
    k = min(len(toks), int(rng.integers(2, 5)))
    picks = sorted(rng.choice(len(toks), size=k, replace=False))
    return " ".join(toks[i] for i in picks)


def run_turns(n_turns: int, workdir: Path, n_queries: int) -> dict[str, Any]:
    """Seed 002's floors on real turns: `Memory.add_turn` with USE embeddings, then recall."""
    from langmem_plus.memory import Memory

    tokenize("预热 jieba warm-up")
    gen = TurnCorpus()
    turns: list[tuple[str, str, str]] = []  # (session, role, content)
    while len(turns) < n_turns:
        _lang, sess = gen.session()
        sid = f"s{len(turns)}"
        turns += [(sid, role, text) for role, text in sess]
    turns = turns[:n_turns]
    db = workdir / "turns.db"
    mem = Memory(db)  # the defaults: USE embeddings, MemoryConfig()
    mem.store.embeddings.embed_query("warm up")  # type: ignore[union-attr]
    qrng = np.random.default_rng(SEED + 2)
    store_ms: list[float] = []
    recall_ms: dict[str, list[float]] = {}
    checkpoints = sorted({c for c in (100, 1000) if c <= n_turns} | {n_turns})
    for i, (sid, role, text) in enumerate(turns, start=1):
        t0 = time.perf_counter()
        mem.add_turn("alice", sid, role, text)
        store_ms.append((time.perf_counter() - t0) * 1000)
        if i in checkpoints:
            texts = [t for _, _, t in turns[:i]]
            qs = [turn_query(texts, qrng) for _ in range(n_queries + 3)]
            for q in qs[:3]:
                mem.recall(q, "alice")  # warm
            lat = []
            for q in qs[3:]:
                t0 = time.perf_counter()
                mem.recall(q, "alice")
                lat.append((time.perf_counter() - t0) * 1000)
            recall_ms[str(i)] = lat
    mem.close()
    empty = workdir / "empty.db"
    Memory(empty).close()  # the fixed cost: schema pages of an empty store
    empty_b = empty.stat().st_size
    wal = db.with_name(db.name + "-wal")
    snap = db.with_name(db.name + ".faiss")
    db_b = db.stat().st_size
    wal_b = wal.stat().st_size if wal.exists() else 0
    snap_b = snap.stat().st_size if snap.exists() else 0
    sizes = disk_breakdown(db)
    total = db_b + wal_b + snap_b
    vec_b = sizes["vectors"]
    chars = [len(t) for _, _, t in turns]
    return {
        "turns": n_turns,
        "sessions": len({s for s, _, _ in turns}),
        "content_chars": {"mean": float(np.mean(chars)), "max": int(max(chars))},
        "content_utf8_bytes_mean": float(np.mean([len(t.encode()) for _, _, t in turns])),
        "vector_storage": MemoryConfig().store.vector_storage,
        "store_ms": pct(store_ms),
        "recall_ms": {k: pct(v) for k, v in recall_ms.items()},
        "recall_queries": n_queries,
        "disk": {
            "db_bytes": db_b,
            "wal_bytes_after_close": wal_b,
            "faiss_snapshot_bytes": snap_b,
            "total_bytes": total,
            "by_table_bytes": sizes,
            "by_name_bytes": dbstat_by_name(db),
            "vector_bytes": vec_b,
            "per_turn_bytes": total / n_turns,
            "per_turn_bytes_excl_vectors": (total - vec_b - snap_b) / n_turns,
            "empty_store_bytes": empty_b,
            "per_turn_bytes_marginal": (total - empty_b) / n_turns,
        },
    }


# ============================================================================ driver
def child(args: argparse.Namespace) -> None:
    """Run one size (or the turns section) and print its JSON (in a subprocess of the driver)."""
    with tempfile.TemporaryDirectory(prefix="lmp-scale-") as tmp:
        if args.one == "turns":
            res = run_turns(args.turns, Path(tmp), args.turn_queries)
        elif args.one.startswith("users:"):
            res = run_users(int(args.one[6:]), Path(tmp), args.queries)
        else:
            n_ns, per_ns = parse_size(args.one)
            res = run_one(n_ns, per_ns, Path(tmp), args.queries, args.puts)
    res["peak_rss_mb"] = peak_rss_mb()
    print("RESULT " + json.dumps(res))


_CONFIG_ENV = "LANGMEM_PLUS_BENCH_CONFIG"


def _over() -> Overrides:
    """The store config and tuning of this run: defaults, or `--set-config` overrides (passed
    to the child processes through the environment)."""
    return parse_overrides(json.loads(os.environ.get(_CONFIG_ENV) or "[]"))


def run_child(argv: Sequence[str]) -> dict[str, Any]:
    """This script in a fresh process with `argv`; returns the JSON it prints."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, __file__, *argv], capture_output=True, text=True, check=False
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stderr[-4000:]}")
    res: dict[str, Any] = json.loads(lines[-1][7:])
    res["wall_s"] = time.perf_counter() - t0
    return res


def table(results: dict[str, Any]) -> str:
    """Markdown tables of latency, throughput and size per store size."""
    use = results["use_query_ms"]
    lines = [
        "| size | search p50 / p95 / p99 ms (no q-embed) | with USE q-embed p50 / p95 / p99 | "
        "warm pass with USE p50 / p95 | "
        "single put p50 / p95 ms | overwrite p95 ms | insert items/s (excl. embed) | "
        "open s | rebuild s | peak RSS MB | B/item text+meta | B/item keyword | "
        "B/item vectors | DB MB |",
        "|---" * 14 + "|",
    ]
    for name, r in results["sizes"].items():
        s = r["search_ms_excl_query_embedding"]
        w = r["search_ms_with_query_embedding"]
        ww = r["search_ms_warm_with_query_embedding"]
        p = r["single_put_ms"]
        d = r["disk"]["per_item_bytes"]
        lines.append(
            f"| {name} | {s['p50']:.2f} / {s['p95']:.2f} / {s['p99']:.2f} | "
            f"{w['p50']:.2f} / {w['p95']:.2f} / {w['p99']:.2f} | {ww['p50']:.2f} / {ww['p95']:.2f} | "
            f"{p['p50']:.2f} / {p['p95']:.2f} | "
            f"{r['overwrite_put_ms']['p95']:.2f} | {r['insert']['items_per_s_excl_embedding']:,.0f} | "
            f"{r['open_s']:.2f} | {r['rebuild_s']:.2f} | {r['peak_rss_mb']:.0f} | "
            f"{d['text_metadata']:.0f} | {d['keyword_index']:.0f} | {d['vectors']:.0f} | "
            f"{r['disk']['db_bytes'] / 1e6:.1f} |"
        )
    lines += [
        "",
        f"USE query embedding (measured, ms): p50 {use['p50']:.2f}, p95 {use['p95']:.2f}",
        "",
    ]
    naive_rows = [(n, r) for n, r in results["sizes"].items() if "naive" in r]
    if naive_rows:
        lines += [
            "Naive baseline (rank-bm25 rebuilt per write + exact FAISS), same data:",
            "",
            "| size | naive search p50 / p95 ms | store / naive p95 | naive single put p50 ms | "
            "store put / naive put (p50) |",
            "|---|---|---|---|---|",
        ]
        for n, r in naive_rows:
            nv = r["naive"]
            s = r["search_ms_excl_query_embedding"]
            lines.append(
                f"| {n} | {nv['search_ms']['p50']:.2f} / {nv['search_ms']['p95']:.2f} | "
                f"{s['p95'] / max(nv['search_ms']['p95'], 1e-9):.2f} | "
                f"{nv['single_put_ms']['p50']:.2f} | "
                f"{r['single_put_ms']['p50'] / max(nv['single_put_ms']['p50'], 1e-9):.3f} |"
            )
    ann_rows = [(n, r["ann"]) for n, r in results["sizes"].items() if r["ann"].get("approximate")]
    for n, a in ann_rows:
        lines.append(
            f"\nANN at {n}: HNSW M {a['hnsw_m']}, efSearch {a['ef_search']}: recall@10 vs exact "
            f"{a['recall@10_vs_exact']:.3f} ({a['note']})."
        )
    lines += users_table(results.get("users"))
    t = results.get("turns")
    if t:
        d = t["disk"]
        rec = " / ".join(
            f"@{int(k):,}: {v['p50']:.1f} / {v['p95']:.1f}" for k, v in t["recall_ms"].items()
        )
        lines += [
            "",
            f"Conversation turns (`Memory.add_turn` with USE embeddings, {t['vector_storage']} "
            f"vectors; {t['turns']:,} turns in {t['sessions']} sessions, mean "
            f"{t['content_chars']['mean']:.0f} chars):",
            "",
            "| turns | store p50 / p95 ms | recall p50 / p95 ms | B/turn on disk | "
            "B/turn excl. vectors | vectors B | snapshot B | total MB |",
            "|---|---|---|---|---|---|---|---|",
            f"| {t['turns']:,} | {t['store_ms']['p50']:.2f} / {t['store_ms']['p95']:.2f} | {rec} | "
            f"{d['per_turn_bytes']:.0f} | {d['per_turn_bytes_excl_vectors']:.0f} | "
            f"{d['vector_bytes']:,} | {d['faiss_snapshot_bytes']:,} | "
            f"{d['total_bytes'] / 1e6:.2f} |",
        ]
    lines += ["", "Checks:", ""] + [f"- {c}" for c in results["checks"]]
    return "\n".join(lines)


def users_table(u: dict[str, Any] | None) -> list[str]:
    """The many-users lines of the report (empty without that section)."""
    if not u:
        return []
    r = u["ratios"]
    f, w, n = u["first_search_ms"], u["warm_search_ms"], u["naive_search_ms"]
    return [
        "",
        f"Many users ({u['users']:,} users x {u['items_per_user']} items, one namespace each; "
        f"USE query embedding p50 {r['use_query_p50_ms']:.2f} ms in this run):",
        "",
        "| search of a user | store p50 / p95 ms | p50 incl. USE / USE alone | store / naive p50 |",
        "|---|---|---|---|",
        f"| first after open | {f['p50']:.2f} / {f['p95']:.2f} | "
        f"{r['first_with_embedding_over_embedding']:.2f}x | {r['first_over_naive']:.2f}x |",
        f"| warm | {w['p50']:.2f} / {w['p95']:.2f} | "
        f"{r['warm_with_embedding_over_embedding']:.2f}x | {r['warm_over_naive']:.2f}x |",
        "",
        f"Naive baseline over one user's {u['items_per_user']} items: p50 {n['p50']:.2f} ms, "
        f"p95 {n['p95']:.2f} ms.",
    ]


def checks(results: dict[str, Any]) -> list[str]:
    """Pass/fail lines for the issue's targets and the spec's turn-memory floors."""
    use_p50 = results["use_query_ms"]["p50"]
    out: list[str] = []

    def line(ok: bool, text: str) -> None:
        out.append(f"{'PASS' if ok else 'FAIL'}: {text}")

    sizes = results["sizes"]
    for name, r in sizes.items():
        items = r["namespaces"] * r["items_per_namespace"]
        w95 = r["search_ms_with_query_embedding"]["p95"]
        warm95 = r["search_ms_warm_with_query_embedding"]["p95"]
        tail = f"(first pass; warm pass {warm95:.2f} ms)"
        if items == 10_000 and r["namespaces"] == 1:
            line(w95 <= 5, f"p95 search at 10k incl. query embedding {w95:.2f} ms <= 5 ms {tail}")
        if items == 1_000_000 and r["namespaces"] == 1:
            line(w95 <= 25, f"p95 search at 1M incl. query embedding {w95:.2f} ms <= 25 ms {tail}")
        if items >= 1000:
            ips = r["insert"]["items_per_s_excl_embedding"]
            line(ips >= 2000, f"batch insert at {name}: {ips:,.0f} items/s >= 2,000")
        put = r["single_put_ms"]["p95"] + use_p50
        line(
            put < 20,
            f"single put at {name} (p95 + USE doc embed {use_p50:.1f} ms) {put:.2f} < 20 ms",
        )
        per = r["disk"]["per_item_excl_vectors"]
        line(per <= 1024, f"bytes per item excl. vectors at {name}: {per:.0f} <= 1 KB")
        if items == 100 and r["namespaces"] == 1:
            line(w95 < 100, f"search at 100 items p95 {w95:.2f} ms < 100 ms (items, not turns)")
        if items == 1000 and r["namespaces"] == 1:
            line(w95 < 200, f"search at 1,000 items p95 {w95:.2f} ms < 200 ms (items, not turns)")
    u = results.get("users")
    if u:
        r = u["ratios"]
        x = r["warm_with_embedding_over_embedding"]
        line(
            x <= 1.3, f"warm search of a 100-item user incl. USE {x:.2f}x the USE embedding <= 1.3x"
        )
        x = r["warm_over_naive"]
        line(x <= 1.0, f"warm search of a 100-item user {x:.2f}x the naive baseline <= 1x")
    out += turn_checks(results.get("turns"))
    return out


def turn_checks(t: dict[str, Any] | None) -> list[str]:
    """Seed 002's floors, measured on conversation turns (`Memory.add_turn` / `recall`)."""
    if not t:
        return []
    out: list[str] = []

    def line(ok: bool, text: str) -> None:
        out.append(f"{'PASS' if ok else 'FAIL'}: turn-memory floor: {text}")

    n = t["turns"]
    st = t["store_ms"]["p95"]
    line(st < 20, f"store a turn p95 {st:.2f} ms < 20 ms (add_turn incl. USE embedding)")
    for at, limit in (("100", 100), ("1000", 200)):
        if at in t["recall_ms"]:
            p95 = t["recall_ms"][at]["p95"]
            line(
                p95 < limit,
                f"recall at {int(at):,} turns p95 {p95:.2f} ms < {limit} ms (incl. USE query)",
            )
    d = t["disk"]
    per, per_x = d["per_turn_bytes"], d["per_turn_bytes_excl_vectors"]
    line(
        per < 1024,
        f"one turn on disk {per:.0f} B < 1 KB (all bytes incl. its vector; excl. vectors "
        f"{per_x:.0f} B)",
    )
    if n >= 1000:
        mb = d["total_bytes"] * 1000 / n / 1e6
        line(
            mb < 2,
            f"1,000 turns on disk {mb:.2f} MB < 2 MB (db + WAL after close + FAISS snapshot)",
        )
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Driver: one subprocess per size, then tables, checks, JSON and the plot."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=DEFAULT_SIZES, help="e.g. 1k,10k,100k,1m,ns10000x100")
    ap.add_argument("--smoke", action="store_true", help="200 items, 110 turns, few queries")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--puts", type=int, default=100)
    ap.add_argument(
        "--turns", type=int, default=1000, help="conversation turns through Memory (0: skip)"
    )
    ap.add_argument("--turn-queries", type=int, default=100, help="recalls per checkpoint")
    ap.add_argument(
        "--users", type=int, default=1000, help="many-users case: users x 100 items (0: skip)"
    )
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--md", type=Path, default=None)
    ap.add_argument("--plot", type=Path, default=None)
    ap.add_argument(
        "--set-config",
        nargs="*",
        default=[],
        metavar="SECTION.FIELD=JSON",
        help="overrides for the item sizes, e.g. tuning.prf_terms=0 (benchmarks/_overrides.py)",
    )
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        child(args)
        return {}
    if args.set_config:
        parse_overrides(args.set_config)  # validate here, before any child runs
        os.environ[_CONFIG_ENV] = json.dumps(args.set_config)
    if args.smoke:
        args.sizes, args.queries, args.puts = "200", 30, 10
        args.turns, args.turn_queries = min(args.turns, 110), 20
        args.users = min(args.users, 20)
    results: dict[str, Any] = {
        "machine": {
            "nproc": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "config": (_over().config or MemoryConfig()).model_dump(),
        "tuning": (_over().tuning or StoreTuning()).model_dump(),
        "sizes": {},
    }
    for tok in [t for t in args.sizes.split(",") if t.strip()]:
        res = run_child(["--one", tok, "--queries", str(args.queries), "--puts", str(args.puts)])
        results["sizes"][tok] = res
        print(f"[scale] {tok}: done in {res['wall_s']:.0f} s", file=sys.stderr, flush=True)
    if args.users > 0:
        res = run_child(["--one", f"users:{args.users}", "--queries", str(args.queries)])
        results["users"] = res
        print(f"[scale] users: done in {res['wall_s']:.0f} s", file=sys.stderr, flush=True)
    if args.turns > 0:
        res = run_child(
            ["--one", "turns", "--turns", str(args.turns), "--turn-queries", str(args.turn_queries)]
        )
        results["turns"] = res
        print(f"[scale] turns: done in {res['wall_s']:.0f} s", file=sys.stderr, flush=True)
    all_q = [q for r in results["sizes"].values() for q in r["queries"]]
    all_q = (all_q + results.get("users", {}).get("queries", []))[:200]
    use = use_query_costs(all_q or ["warm up query"])
    results["use_query_ms"] = pct(use)
    for r in results["sizes"].values():
        lat = r["search_ms_samples"]
        with_q = [x + use[i % len(use)] for i, x in enumerate(lat)]
        r["search_ms_with_query_embedding"] = pct(with_q)
        r["search_ms_with_query_embedding"]["method"] = "per-query sum with measured USE costs"
        warm = r["search_ms_warm_samples"]
        r["search_ms_warm_with_query_embedding"] = pct(
            [x + use[i % len(use)] for i, x in enumerate(warm)]
        )
    if "users" in results:
        results["users"]["ratios"] = users_ratios(results["users"], use)
    results["checks"] = checks(results)
    text = table(results)
    print(text)
    for r in results["sizes"].values():
        r.pop("search_ms_samples", None)
        r.pop("search_ms_warm_samples", None)
        r.pop("queries", None)
    for k in ("first_samples", "warm_samples", "queries"):
        results.get("users", {}).pop(k, None)
    write_json(args.out, results, newline=False)
    write_text(args.md, text + "\n")
    if args.plot:
        plot(results, args.plot)
    return results


def plot(results: dict[str, Any], path: Path) -> None:
    """Search latency (p50/p95, with and without query embedding) against store size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted(
        (r["items_per_namespace"], r) for r in results["sizes"].values() if r["namespaces"] == 1
    )
    if not rows:
        return
    xs = [n for n, _ in rows]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for key, label, style in (
        ("search_ms_excl_query_embedding", "store only", "-"),
        ("search_ms_with_query_embedding", "incl. USE query embedding", "--"),
    ):
        for p, marker in (("p50", "o"), ("p95", "s")):
            ax.plot(xs, [r[key][p] for _, r in rows], style, marker=marker, label=f"{p}, {label}")
    naive = [(n, r["naive"]["search_ms"]["p95"]) for n, r in rows if "naive" in r]
    if naive:
        ax.plot(
            *zip(*naive, strict=True), ":", marker="x", label="p95, naive rank-bm25 + flat FAISS"
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("items in the namespace")
    ax.set_ylabel("search latency (ms)")
    ax.set_title("HybridStore search latency vs size (2 cores, no GPU)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
