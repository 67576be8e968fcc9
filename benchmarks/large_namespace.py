"""One large namespace (a team's or an organisation's memory): the vector index's recall and the
store's search latency against SQLite FTS5's BM25 alone, on real USE vectors (issue #31).

Corpus: the memory texts of the shared datasets (LoCoMo turns, MADial-Bench zh/en memories),
then filler up to `n`: each filler text joins the first part of one real text to the last part
of another (words for English, characters for Chinese), so every vector is a real USE vector of
a varied, natural-looking sentence. Vectors are embedded once and cached (`--cache`, float16).
Queries: the sets' own questions (LoCoMo) and dialogue contexts (MADial), and 2-3 words of a
stored text (as `scale.py` asks).

* `recall`: recall@10 of approximate FAISS indexes (HNSW; IVF, as large namespaces were before)
  against the exact float16 scan the store uses below the switch, with one-query latency
  (one thread, as the store searches).
* `latency`: a store of `n` items in one namespace (the vectors above, through a memo embedder)
  and an FTS5 table over the same texts (`bm25()`, the query's tokens OR-ed, top 10), queried
  alternately with the same queries; p50/p95 of each and their ratio, same run.

    python benchmarks/large_namespace.py recall --sizes 10k,100k --cache /tmp/lns
    python benchmarks/large_namespace.py latency --sizes 10k,100k --cache /tmp/lns \
        [--variants exact:ann_threshold=1000000000 hnsw:ann_threshold=50000] [--out ... --md ...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import faiss  # noqa: E402
from _results import command_line, machine, publish  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402

K = 10
SEED = 31
DIMS = 512


def parse_n(tok: str) -> int:
    tok = tok.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(tok[-1], 1)
    return int(float(tok[:-1] if mult > 1 else tok) * mult)


# ============================================================================ corpus
def real_sets(data: Path) -> tuple[list[str], dict[str, list[str]]]:
    """The datasets' memory texts (de-duplicated) and their queries by kind."""
    import retrieval_quality as rq

    units = {
        "locomo": rq.load_locomo(data),
        "madial_zh": rq.load_madial(data, "zh"),
        "madial_en": rq.load_madial(data, "en"),
    }
    docs = list(dict.fromkeys(t for us in units.values() for u in us for _, t in u.docs))
    queries = {
        name: list(dict.fromkeys(q.text for u in us for q in u.queries))
        for name, us in units.items()
    }
    return docs, queries


def _cjk(text: str) -> bool:
    return sum("\u4e00" <= c <= "\u9fff" for c in text) > len(text) // 4


def corpus(real: list[str], n: int, seed: int = SEED) -> list[str]:
    """`n` texts: the real ones first, then joins of two real texts of the same script."""
    out = list(real[:n])
    rng = np.random.default_rng(seed)
    zh = [t for t in real if _cjk(t)]
    en = [t for t in real if not _cjk(t)]
    seen = set(out)
    while len(out) < n:
        pool = zh if (zh and rng.random() < len(zh) / len(real)) else en
        a, b = pool[int(rng.integers(len(pool)))], pool[int(rng.integers(len(pool)))]
        if _cjk(a):
            cut_a, cut_b = int(rng.integers(2, max(3, len(a)))), int(rng.integers(0, len(b) - 1))
            text = a[:cut_a] + b[cut_b:]
        else:
            wa, wb = a.split(), b.split()
            ia = int(rng.integers(1, max(2, len(wa))))
            ib = int(rng.integers(0, max(1, len(wb) - 1)))
            text = " ".join(wa[:ia] + wb[ib:])
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def word_queries(docs: Sequence[str], k: int, seed: int = SEED) -> list[str]:
    """2-3 tokens of random stored texts (scale.py's queries)."""
    from langmem_plus.text.tokenize import tokenize

    rng = np.random.default_rng(seed + 1)
    out = []
    for _ in range(k):
        toks = [t for t in tokenize(docs[int(rng.integers(len(docs)))]) if "/" not in t]
        m = min(len(toks), int(rng.integers(2, 4)))
        picks = sorted(rng.choice(len(toks), size=m, replace=False)) if toks else []
        out.append(" ".join(toks[i] for i in picks) or "memory")
    return out


def embed_cached(texts: list[str], cache: Path, chunk: int = 8192) -> np.ndarray:
    """USE vectors (float32) of `texts`, embedded in chunks cached as float16 under `cache`."""
    from langmem_plus.embeddings import default_embeddings

    emb = default_embeddings()
    cache.mkdir(parents=True, exist_ok=True)
    parts = []
    t0 = time.perf_counter()
    for i in range(0, len(texts), chunk):
        part = texts[i : i + chunk]
        key = hashlib.blake2b("\n".join(part).encode(), digest_size=12).hexdigest()
        f = cache / f"{key}.npy"
        if f.exists():
            parts.append(np.load(f))
            continue
        vecs = emb.embed_array(part).astype(np.float16)
        np.save(f, vecs)
        parts.append(vecs)
        done = i + len(part)
        print(f"  embedded {done:,}/{len(texts):,} ({time.perf_counter() - t0:.0f} s)", flush=True)
    return np.vstack(parts).astype(np.float32)


def unit(mat: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(mat / norms, dtype=np.float32)


def query_sets(real_q: dict[str, list[str]], docs: list[str], per: int) -> dict[str, list[str]]:
    rng = np.random.default_rng(SEED + 2)
    out = {}
    for name, qs in real_q.items():
        idx = rng.choice(len(qs), size=min(per, len(qs)), replace=False)
        out[name] = [qs[i] for i in sorted(idx)]
    out["words_of_a_memory"] = word_queries(docs, per)
    return out


# ============================================================================ recall
def exact_index(vecs: np.ndarray) -> Any:
    idx = faiss.IndexScalarQuantizer(
        DIMS, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
    )
    idx.add(vecs)
    return idx


def one_by_one(index: Any, qv: np.ndarray, k: int = K) -> tuple[np.ndarray, list[float]]:
    labels = np.empty((len(qv), k), dtype=np.int64)
    ms = []
    for i in range(len(qv)):
        t0 = time.perf_counter()
        _, lab = index.search(qv[i : i + 1], k)
        ms.append((time.perf_counter() - t0) * 1000)
        labels[i] = lab[0]
    return labels, ms


def recall_at(base: np.ndarray, qv: np.ndarray, truth: np.ndarray, got: np.ndarray) -> float:
    """recall@10 against the exact top 10, ties counted: a returned vector is a hit when its
    cosine reaches the exact 10th one's (float32, 1e-6 slack), so an index that returns another
    of several equally close vectors is not marked wrong."""
    hits = []
    for q, t, g in zip(qv, truth, got, strict=True):
        t, g = t[t >= 0], g[g >= 0]
        if not len(t):
            hits.append(1.0)
            continue
        kth = float(np.min(base[t] @ q))
        hits.append(float(np.sum(base[g] @ q >= kth - 1e-6)) / len(t))
    return float(np.mean(hits))


def pct(ms: Sequence[float]) -> dict[str, float]:
    arr = np.asarray(ms)
    return {"p50": float(np.percentile(arr, 50)), "p95": float(np.percentile(arr, 95))}


def run_recall(args: argparse.Namespace) -> dict[str, Any]:
    real, real_q = real_sets(Path(args.data))
    n_max = max(args.sizes)
    docs = corpus(real, n_max)
    vecs = unit(embed_cached(docs, args.cache))
    qsets = query_sets(real_q, docs, args.queries)
    qvecs = {k: unit(embed_cached(v, args.cache / "q")) for k, v in qsets.items()}
    faiss.omp_set_num_threads(1)
    rows = []
    for n in args.sizes:
        base = vecs[:n]
        exact = exact_index(base)
        truth = {k: one_by_one(exact, q) for k, q in qvecs.items()}
        for name, (_, ms) in truth.items():
            rows.append({"n": n, "index": "exact fp16", "param": "-", "queries": name,
                         "recall": 1.0, **pct(ms), "build_s": 0.0})  # fmt: skip
        for m in args.hnsw_m:
            faiss.omp_set_num_threads(args.build_threads)
            t0 = time.perf_counter()
            h = faiss.IndexHNSWFlat(DIMS, m, faiss.METRIC_INNER_PRODUCT)
            h.hnsw.efConstruction = args.ef_construction
            h.add(base)
            build = time.perf_counter() - t0
            faiss.omp_set_num_threads(1)
            for ef in args.ef_search:
                h.hnsw.efSearch = ef
                for name, q in qvecs.items():
                    got, ms = one_by_one(h, q)
                    rows.append({"n": n, "index": f"HNSW M={m}", "param": f"ef={ef}",
                                 "queries": name, "recall": recall_at(base, q, truth[name][0], got),
                                 **pct(ms), "build_s": build})  # fmt: skip
            print(f"n={n:,} HNSW M={m} built in {build:.1f} s", flush=True)
        if args.ivf:
            from vector_recall import build_ivf, nlist_for

            faiss.omp_set_num_threads(args.build_threads)
            t0 = time.perf_counter()
            ivf = build_ivf(base, nlist_for(n))
            build = time.perf_counter() - t0
            faiss.omp_set_num_threads(1)
            for nprobe in args.nprobe:
                ivf.nprobe = nprobe
                for name, q in qvecs.items():
                    got, ms = one_by_one(ivf, q)
                    rows.append({"n": n, "index": f"IVF nlist={ivf.nlist}",
                                 "param": f"nprobe={nprobe}", "queries": name,
                                 "recall": recall_at(base, q, truth[name][0], got), **pct(ms),
                                 "build_s": build})  # fmt: skip
        for r in rows:
            if r["n"] == n:
                print(json.dumps(r), flush=True)
    return {"part": "recall", "rows": rows, "queries": {k: len(v) for k, v in qsets.items()}}


def render_recall(res: dict[str, Any]) -> str:
    lines = [
        "| n | index | param | queries | recall@10 vs exact | p50 / p95 ms (1 thread) | build s |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in res["rows"]:
        lines.append(
            f"| {r['n']:,} | {r['index']} | {r['param']} | {r['queries']} | {r['recall']:.4f} | "
            f"{r['p50']:.2f} / {r['p95']:.2f} | {r['build_s']:.1f} |"
        )
    return "\n".join(lines)


# ============================================================================ latency
class MemoEmbeddings(Embeddings):
    """The precomputed USE vector of each known text (bulk loading without the model); other
    texts (the common query words the store projects out) go to the model itself."""

    model_name = "usem3-memo"
    dims = DIMS

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        from langmem_plus.embeddings import default_embeddings

        self.table = table
        self.model = default_embeddings()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        todo = [t for t in texts if t not in self.table]
        if todo:
            self.table.update(zip(todo, self.model.embed_array(todo), strict=True))
        return [self.table[t].tolist() for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def fts5(path: Path, docs: Sequence[str]) -> sqlite3.Connection:
    """An FTS5 table over the store's tokens of each text (jieba for Chinese, as the store)."""
    from langmem_plus.text.tokenize import tokenize

    conn = sqlite3.connect(path)
    conn.execute("CREATE VIRTUAL TABLE docs USING fts5(body, tokenize='unicode61')")
    conn.executemany(
        "INSERT INTO docs(rowid, body) VALUES (?, ?)",
        ((i, " ".join(tokenize(t))) for i, t in enumerate(docs)),
    )
    conn.commit()
    return conn


def fts5_search(conn: sqlite3.Connection, query: str) -> list[int]:
    from langmem_plus.text.tokenize import tokenize

    toks = list(dict.fromkeys(tokenize(query)))
    if not toks:
        return []
    match = " OR ".join('"' + t.replace('"', '""') + '"' for t in toks)
    rows = conn.execute(
        "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?", (match, K)
    ).fetchall()
    return [r[0] for r in rows]


def _variants(specs: Sequence[str]) -> dict[str, dict[str, Any]]:
    """'name:field=json,field=json' -> {name: StoreTuning overrides}."""
    out: dict[str, dict[str, Any]] = {}
    for spec in specs:
        name, _, rest = spec.partition(":")
        pairs = [kv.split("=", 1) for kv in rest.split(",") if kv]
        out[name] = {k: json.loads(v) for k, v in pairs}
    return out


def run_latency(args: argparse.Namespace) -> dict[str, Any]:
    """Per size: one store built once (exact), copied per variant and reopened with its
    config (the vector index is rebuilt from SQLite, as on open), and an FTS5 table; the
    queries run round-robin over the variants and FTS5."""
    import shutil

    from langmem_plus.config import MemoryConfig
    from langmem_plus.store.hybrid import HybridStore
    from langmem_plus.store.tuning import StoreTuning
    from langmem_plus.text.transcript import text_to_embed

    real, real_q = real_sets(Path(args.data))
    docs = corpus(real, max(args.sizes))
    vecs = embed_cached(docs, args.cache)
    qsets = query_sets(real_q, docs, args.queries)
    qlist = [q for qs in qsets.values() for q in qs]
    variants = _variants(args.variants)
    # the text the store embeds for a query (text/transcript.py)
    max_chars = MemoryConfig().recall.max_query_chars
    qtexts = [text_to_embed(q[:max_chars]) for q in qlist]
    qvecs = embed_cached(qtexts, args.cache / "q")
    rows = []
    ns = ("org", "shared")
    for n in args.sizes:
        table = {d: vecs[i] for i, d in enumerate(docs[:n])}
        table.update({q: qvecs[i] for i, q in enumerate(qtexts)})
        emb = MemoEmbeddings(table)
        index = {"embed": emb, "dims": DIMS}
        with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
            t0 = time.perf_counter()
            exact = StoreTuning(ann_threshold=10**9)
            base = HybridStore(Path(tmp) / "base.db", index=index, tuning=exact)
            for i in range(0, n, 2000):
                base.batch([_put(ns, j, docs[j]) for j in range(i, min(n, i + 2000))])
            base.close()
            build = time.perf_counter() - t0
            stores: dict[str, Any] = {}
            opened: dict[str, float] = {}
            for name, over in variants.items():
                path = Path(tmp) / f"{name}.db"
                shutil.copy(Path(tmp) / "base.db", path)
                t0 = time.perf_counter()
                stores[name] = HybridStore(path, index=index, tuning=StoreTuning(**over))
                opened[name] = time.perf_counter() - t0
            conn = fts5(Path(tmp) / "fts.db", docs[:n])
            for q in qlist[:20]:  # warm every side
                for st in stores.values():
                    st.search(ns, query=q, limit=K)
                fts5_search(conn, q)
            lat: dict[str, list[float]] = {name: [] for name in [*stores, "fts5"]}
            keys: dict[str, list[list[str]]] = {name: [] for name in stores}
            for _ in range(args.passes):
                for q in qlist:
                    for name, st in stores.items():
                        t0 = time.perf_counter()
                        hits = st.search(ns, query=q, limit=K)
                        lat[name].append((time.perf_counter() - t0) * 1000)
                        keys[name].append([h.key for h in hits])
                    t0 = time.perf_counter()
                    fts5_search(conn, q)
                    lat["fts5"].append((time.perf_counter() - t0) * 1000)
            first = next(iter(stores))
            kinds = [k for k, qs in qsets.items() for _ in qs] * args.passes
            by_kind = {
                side: {
                    kind: pct([x for x, k in zip(xs, kinds, strict=True) if k == kind])
                    for kind in qsets
                }
                for side, xs in lat.items()
            }
            row: dict[str, Any] = {"n": n, "build_s": build, "queries": len(lat["fts5"]),
                                   "fts5": pct(lat["fts5"]), "by_kind": by_kind,
                                   "variants": {}}  # fmt: skip
            for name, st in stores.items():
                vec = st._vec
                same = [
                    len(set(a) & set(b)) / max(1, len(b))
                    for a, b in zip(keys[name], keys[first], strict=True)
                ]
                row["variants"][name] = {
                    **pct(lat[name]),
                    "p50_ratio": pct(lat[name])["p50"] / row["fts5"]["p50"],
                    "p95_ratio": pct(lat[name])["p95"] / row["fts5"]["p95"],
                    "approximate": vec is not None and any(x.approximate for x in vec._ns.values()),
                    "open_s": opened[name],
                    f"top{K}_overlap_with_{first}": float(np.mean(same)),
                }
                st.close()
            conn.close()
            print(json.dumps(row), flush=True)
            rows.append(row)
    return {"part": "latency", "rows": rows, "variants": variants}


def _put(ns: tuple[str, ...], i: int, text: str) -> Any:
    from langgraph.store.base import PutOp

    return PutOp(ns, f"m{i}", {"text": text})


def render_latency(res: dict[str, Any]) -> str:
    lines = [
        "| n | variant | store p50 / p95 ms | FTS5 p50 / p95 ms | p50 ratio | p95 ratio | "
        "approximate | top-10 same as first | open s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in res["rows"]:
        f = r["fts5"]
        for name, v in r["variants"].items():
            overlap = next(x for k, x in v.items() if k.startswith("top"))
            lines.append(
                f"| {r['n']:,} | {name} | {v['p50']:.2f} / {v['p95']:.2f} | "
                f"{f['p50']:.2f} / {f['p95']:.2f} | {v['p50_ratio']:.2f} | {v['p95_ratio']:.2f} | "
                f"{v['approximate']} | {overlap:.3f} | {v['open_s']:.1f} |"
            )
    lines += ["", "By query kind, p50 / p95 ms:", "",
              "| n | kind | " + " | ".join(res["rows"][0]["by_kind"]) + " |",
              "|---|---|" + "---|" * len(res["rows"][0]["by_kind"])]  # fmt: skip
    for r in res["rows"]:
        sides = r["by_kind"]
        for kind in next(iter(sides.values())):
            cells = [f"{sides[s][kind]['p50']:.2f} / {sides[s][kind]['p95']:.2f}" for s in sides]
            lines.append(f"| {r['n']:,} | {kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("part", choices=("recall", "latency", "embed"))
    ap.add_argument("--data", type=Path, default=Path("/work/shared/datasets"))
    ap.add_argument("--sizes", type=lambda s: [parse_n(x) for x in s.split(",")], default=[10_000])
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "lns")
    ap.add_argument("--tmp", default=None)
    ap.add_argument("--queries", type=int, default=200, help="queries per kind")
    ap.add_argument("--passes", type=int, default=1)
    ap.add_argument("--hnsw-m", type=lambda s: [int(x) for x in s.split(",")], default=[32])
    ap.add_argument("--ef-construction", type=int, default=40)
    ap.add_argument(
        "--ef-search", type=lambda s: [int(x) for x in s.split(",")], default=[32, 64, 128]
    )
    ap.add_argument("--ivf", action="store_true")
    ap.add_argument(
        "--nprobe", type=lambda s: [int(x) for x in s.split(",")], default=[32, 64, 128]
    )
    ap.add_argument("--build-threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument(
        "--variants",
        nargs="*",
        default=["exact:ann_threshold=1000000000", "hnsw:ann_threshold=1000"],
        help="name:field=json,... store configs compared in the latency part",
    )
    ap.add_argument("--out", type=Path)
    ap.add_argument("--md", type=Path)
    args = ap.parse_args(argv)
    if args.part == "embed":
        real, _ = real_sets(args.data)
        embed_cached(corpus(real, max(args.sizes)), args.cache)
        return {}
    res = run_recall(args) if args.part == "recall" else run_latency(args)
    res.update(command=command_line("large_namespace.py", argv), machine=machine(),
               load=Path("/proc/loadavg").read_text().split()[:3])  # fmt: skip
    md = render_recall(res) if args.part == "recall" else render_latency(res)
    publish(res, f"Command: `{res['command']}`\n\n{md}\n", args.out, args.md)
    return res


if __name__ == "__main__":
    main()
