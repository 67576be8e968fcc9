"""Recall cost of the store's compact vectors (int8, float16) and of its IVF index, on USE vectors.

Two measurements, both on real USE-multilingual embeddings (`default_embeddings`):

1. Storage: every document vector is written as the store writes it (`encode_vec`: int8 + scale,
   or float16), decoded and L2-normalised as the store reads it, and searched exactly against
   float32 queries. Compared with exact float32 search: recall@10 (overlap of the top-10 lists),
   top-1 agreement and |cosine error| over all query x document pairs. Corpus: the memory texts
   of the shared datasets (LoCoMo turns, MADial-Bench zh/en memories), each set pooled into one
   corpus (harder than the per-user namespaces the store searches); queries: the sets' own
   questions (LoCoMo) and dialogue contexts (MADial).
2. IVF: `n` synthetic en/zh/code memories from `scale.Corpus`, embedded with USE, stored as
   int8, indexed by IVF as large namespaces were before issue #31 (`build_ivf`; the store now
   uses HNSW, measured by benchmarks/large_namespace.py)
   (nlist = max(256, min(16384, 4 sqrt(n))), nlist*40 training sample, fp16 codes); searched
   through FAISS (one query at a time) at several nprobe
   values. recall@10 against exact float32 search over the same documents, and against the
   exact search over the int8 vectors (the flat index a store below `ann_threshold` uses).
   Queries: 2-3 words of a stored memory (as in scale.py) and unseen sentences of the same
   generator.

    python benchmarks/vector_recall.py [--data ../shared/datasets] [--n 200k] \
        [--out docs/results/vector_recall.json] [--md docs/results/vector_recall.md] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
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
from _results import write_json, write_text  # noqa: E402

from langmem_plus.embeddings import default_embeddings  # noqa: E402
from langmem_plus.store.vector.index import decode_vecs, encode_vec  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "datasets"
K = 10
FORMATS = ("int8", "float16")
NPROBES = (8, 16, 32, 64)


# ============================================================================ helpers
def normalise(mat: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (mat / norms).astype(np.float32)


def stored(vecs: np.ndarray, storage: str) -> np.ndarray:
    """What the store's flat index holds: encode as written, decode as read, normalise."""
    blobs = [encode_vec(v, storage) for v in vecs]  # type: ignore[arg-type]
    return normalise(decode_vecs(blobs, vecs.shape[1]))


def exact_topk(docs: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    index = faiss.IndexFlatIP(docs.shape[1])
    index.add(docs)
    _scores, ids = index.search(queries, min(k, len(docs)))
    return ids


def overlap(a: np.ndarray, b: np.ndarray) -> float:
    """Mean |top-k(a) & top-k(b)| / k over the rows."""
    k = a.shape[1]
    return float(
        np.mean([len(set(x.tolist()) & set(y.tolist())) / k for x, y in zip(a, b, strict=True)])
    )


def pct(values: Sequence[float]) -> dict[str, float]:
    arr = np.asarray(values if len(values) else [0.0], dtype=np.float64)
    return {f"p{p}": float(np.percentile(arr, p)) for p in (50, 95, 99)}


class Embedder:
    """USE embeddings with a running count of texts and seconds."""

    def __init__(self) -> None:
        self.model = default_embeddings()
        self.texts = 0
        self.seconds = 0.0

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        t0 = time.perf_counter()
        out = self.model.embed_array(list(texts))
        self.seconds += time.perf_counter() - t0
        self.texts += len(texts)
        return normalise(out)


# ============================================================================ 1. storage
def load_sets(data: Path, smoke: bool) -> dict[str, tuple[list[str], list[str]]]:
    """(documents, queries) per dataset, from retrieval_quality's loaders, de-duplicated."""
    import retrieval_quality as rq

    units = {
        "locomo": rq.load_locomo(data, max_convs=1 if smoke else None, max_q=20 if smoke else None),
        "madial_zh": rq.load_madial(data, "zh", max_q=10 if smoke else None),
        "madial_en": rq.load_madial(data, "en", max_q=10 if smoke else None),
    }
    out: dict[str, tuple[list[str], list[str]]] = {}
    for name, us in units.items():
        docs = list(dict.fromkeys(t for u in us for _, t in u.docs))
        queries = list(dict.fromkeys(q.text for u in us for q in u.queries))
        if smoke:
            docs = docs[:60]
        out[name] = (docs, queries)
    return out


def storage_cost(doc_vecs: np.ndarray, q_vecs: np.ndarray) -> dict[str, Any]:
    """Each storage format against exact float32 search over the same documents."""
    ref_ids = exact_topk(doc_vecs, q_vecs, K)
    ref_cos = q_vecs @ doc_vecs.T
    rows = np.arange(len(q_vecs))[:, None]
    out: dict[str, Any] = {}
    for fmt in FORMATS:
        docs = stored(doc_vecs, fmt)
        ids = exact_topk(docs, q_vecs, K)
        err = np.abs(q_vecs @ docs.T - ref_cos)
        out[fmt] = {
            "bytes_per_vector": len(encode_vec(doc_vecs[0], fmt)),  # type: ignore[arg-type]
            f"recall@{K}": overlap(ids, ref_ids),
            "top1_agreement": float(np.mean(ids[:, 0] == ref_ids[:, 0])),
            "cos_abs_err_mean": float(err.mean()),
            "cos_abs_err_p99": float(np.percentile(err, 99)),
            "cos_abs_err_max": float(err.max()),
            f"cos_abs_err_mean_top{K}": float(err[rows, ref_ids].mean()),
        }
    return out


def run_storage(data: Path, smoke: bool, emb: Embedder) -> dict[str, Any]:
    sets = load_sets(data, smoke)
    res: dict[str, Any] = {}
    all_docs: list[np.ndarray] = []
    all_q: list[np.ndarray] = []
    for name, (docs, queries) in sets.items():
        d, q = emb(docs), emb(queries)
        all_docs.append(d)
        all_q.append(q)
        res[name] = {"docs": len(docs), "queries": len(queries), **storage_cost(d, q)}
        print(f"[vector_recall] storage {name}: {len(docs)} docs", file=sys.stderr, flush=True)
    d, q = np.vstack(all_docs), np.vstack(all_q)
    res["all"] = {"docs": len(d), "queries": len(q), **storage_cost(d, q)}
    return res


# ============================================================================ 2. IVF
def parse_n(tok: str) -> int:
    tok = tok.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(tok[-1], 1)
    return int(float(tok[:-1] if mult > 1 else tok) * mult)


def synthetic(n: int, n_queries: int) -> tuple[list[str], dict[str, list[str]]]:
    """n scale.py memories, plus queries of two kinds (fixed seeds)."""
    import scale

    corpus = scale.Corpus()
    docs = [corpus.sentence() for _ in range(n)]
    words = [corpus.query(docs) for _ in range(n_queries)]
    unseen = [corpus.sentence() for _ in range(n_queries)]
    return docs, {"words_of_a_memory": words, "unseen_sentence": unseen}


def embed_cached(emb: Embedder, texts: list[str], cache: Path | None, tag: str) -> np.ndarray:
    """USE vectors of texts, optionally cached in `cache` (.npy per tag and count)."""
    path = None if cache is None else cache / f"vector_recall_{tag}_{len(texts)}.npy"
    if path is not None and path.exists():
        return np.load(path)
    head = _cached_prefix(emb, texts, cache, tag)
    rest = texts[len(head) :]
    parts = [head] + [emb(rest[i : i + 4096]) for i in range(0, len(rest), 4096)]
    out = np.vstack([p for p in parts if len(p)])
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, out)
    return out


def _cached_prefix(emb: Embedder, texts: list[str], cache: Path | None, tag: str) -> np.ndarray:
    """The longest cached run of `tag` vectors shorter than `texts` whose first vectors match
    a fresh embedding of the same texts (the generator is seeded: a smaller corpus is a
    prefix of a larger one); empty when there is none."""
    if cache is None:
        return np.zeros((0, 0), dtype=np.float32)
    sizes = []
    for f in cache.glob(f"vector_recall_{tag}_*.npy"):
        try:
            m = int(f.stem.rsplit("_", 1)[1])
        except ValueError:
            continue
        if 0 < m < len(texts):
            sizes.append((m, f))
    for m, f in sorted(sizes, reverse=True):
        got = np.load(f)
        probe = emb(texts[:3])
        if got.shape[0] == m and np.allclose(got[:3], probe, atol=1e-5):
            return got
    return np.zeros((0, 0), dtype=np.float32)


def nlist_for(n: int) -> int:
    """The nlist the store used for a namespace of n vectors while large ones were IVF."""
    return int(max(256, min(16384, 4 * np.sqrt(n))))


def build_ivf(mat: np.ndarray, nlist: int) -> Any:
    """The IVF index large namespaces used before HNSW (issue #31): fp16 codes, trained on
    nlist * 40 of the (normalised) vectors, ids 0..n-1."""
    mat = normalise(mat)
    ivf = faiss.IndexIVFScalarQuantizer(
        faiss.IndexFlatIP(mat.shape[1]), mat.shape[1], nlist, faiss.ScalarQuantizer.QT_fp16,
        faiss.METRIC_INNER_PRODUCT,
    )  # fmt: skip
    rng = np.random.default_rng(0)
    ivf.train(mat[rng.choice(len(mat), size=min(len(mat), nlist * 40), replace=False)])
    ivf.add(mat)
    return ivf


def ivf_recall(
    doc_vecs: np.ndarray,
    queries: dict[str, np.ndarray],
    nprobes: Sequence[int],
    nlist: int | None = None,
) -> dict[str, Any]:
    """The store's IVF over int8-stored vectors, against exact float32 and exact int8 search.

    `nlist` None: the store's own choice for this n; else that many lists (the nlist of a
    larger store, to estimate its recall at the same share of lists probed).
    """
    n = len(doc_vecs)
    stored8 = stored(doc_vecs, "int8")
    t0 = time.perf_counter()
    ivf = build_ivf(stored8, nlist or nlist_for(n))
    build_s = time.perf_counter() - t0
    out: dict[str, Any] = {
        "n": n,
        "nlist_as_for_n": n if nlist is None else None,
        "nlist": int(ivf.nlist),
        "train_sample": int(min(n, ivf.nlist * 40)),
        "ivf_build_s": build_s,
        "threads": faiss.omp_get_max_threads(),
        "queries": {},
    }
    for kind, q in queries.items():
        ref = exact_topk(doc_vecs, q, K)
        ref8 = exact_topk(stored8, q, K)
        row: dict[str, Any] = {
            "n_queries": len(q),
            f"flat_int8_recall@{K}_vs_float32": overlap(ref8, ref),
            "nprobe": {},
        }
        for p in nprobes:
            ivf.nprobe = p
            ivf.search(q[:1], K)  # warm
            got, lat = [], []
            for i in range(len(q)):
                t1 = time.perf_counter()
                _, ids = ivf.search(q[i : i + 1], K)
                lat.append((time.perf_counter() - t1) * 1000)
                got.append(ids[0].tolist())
            arr = np.asarray(got, dtype=np.int64)
            row["nprobe"][str(p)] = {
                f"recall@{K}_vs_float32": overlap(arr, ref),
                f"recall@{K}_vs_flat_int8": overlap(arr, ref8),
                "latency_ms": pct(lat),
                "latency_ms_mean": float(np.mean(lat)),
            }
        out["queries"][kind] = row
    return out


def run_ivf(
    sizes: Sequence[int],
    n_queries: int,
    emb: Embedder,
    cache: Path | None,
    nlist_of: Sequence[int] = (),
) -> dict[str, Any]:
    n_max = max(sizes)
    t0 = time.perf_counter()
    docs, queries = synthetic(n_max, n_queries)
    gen_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    doc_vecs = embed_cached(emb, docs, cache, "docs")
    q_vecs = {k: embed_cached(emb, v, cache, f"q_{k}") for k, v in queries.items()}
    embed_s = time.perf_counter() - t0
    print(
        f"[vector_recall] embedded {n_max} synthetic memories in {embed_s:.0f} s",
        file=sys.stderr,
        flush=True,
    )
    res: dict[str, Any] = {
        "corpus_generation_s": gen_s,
        "embed_s": embed_s,
        "sizes": {},
    }
    for n in sizes:
        res["sizes"][str(n)] = ivf_recall(doc_vecs[:n], q_vecs, NPROBES)
        print(f"[vector_recall] IVF at {n}: done", file=sys.stderr, flush=True)
        for m in nlist_of:
            r = ivf_recall(doc_vecs[:n], q_vecs, NPROBES, nlist=nlist_for(m))
            r["nlist_as_for_n"] = m
            res["sizes"][f"{n} (nlist of {m})"] = r
            print(f"[vector_recall] IVF at {n}, nlist of {m}: done", file=sys.stderr, flush=True)
    return res


# ============================================================================ report
def markdown(results: dict[str, Any]) -> str:
    lines = [f"Command: `{results.get('command', '')}`", ""]
    lines += ["### Storage formats against exact float32 (USE vectors, pooled corpora)", ""]
    lines += [
        f"| set | docs | queries | format | bytes/vector | recall@{K} | top-1 same | "
        f"mean abs cos err | p99 | max | mean on exact top-{K} |",
        "|---" * 11 + "|",
    ]
    for name, r in results.get("storage", {}).items():
        for fmt in FORMATS:
            f = r[fmt]
            lines.append(
                f"| {name} | {r['docs']:,} | {r['queries']:,} | {fmt} | {f['bytes_per_vector']} | "
                f"{f[f'recall@{K}']:.4f} | {f['top1_agreement']:.4f} | "
                f"{f['cos_abs_err_mean']:.2e} | {f['cos_abs_err_p99']:.2e} | "
                f"{f['cos_abs_err_max']:.2e} | {f[f'cos_abs_err_mean_top{K}']:.2e} |"
            )
    ivf = results.get("ivf")
    if ivf:
        lines += [
            "",
            "### IVF (large namespaces before issue #31) on int8-stored USE vectors of synthetic memories",
            "",
            f"USE embedding: {ivf['embed_s']:.0f} s. recall@{K} against exact float32 search "
            f"over the same documents; 'vs flat int8' isolates the IVF approximation. Rows "
            f"'nlist of N' build the IVF with the nlist the store uses at N vectors: an estimate "
            f"of recall at N at the same share of lists probed (k-means gets fewer points per "
            f"list). Latency: FAISS, one query at a time, "
            f"{next(iter(ivf['sizes'].values()))['threads']} threads.",
            "",
            f"| n | nlist | IVF build s | queries | flat int8 recall@{K} | nprobe | "
            f"recall@{K} vs float32 | vs flat int8 | latency p50 / p95 ms |",
            "|---" * 9 + "|",
        ]
        for r in ivf["sizes"].values():
            label = (
                f"{r['n']:,}"
                if r["nlist_as_for_n"] in (None, r["n"])
                else (f"{r['n']:,} (nlist of {r['nlist_as_for_n']:,})")
            )
            for kind, q in r["queries"].items():
                for p, v in q["nprobe"].items():
                    lines.append(
                        f"| {label} | {r['nlist']} | {r['ivf_build_s']:.1f} | {kind} "
                        f"({q['n_queries']}) | {q[f'flat_int8_recall@{K}_vs_float32']:.4f} | {p} | "
                        f"{v[f'recall@{K}_vs_float32']:.4f} | {v[f'recall@{K}_vs_flat_int8']:.4f} | "
                        f"{v['latency_ms']['p50']:.2f} / {v['latency_ms']['p95']:.2f} |"
                    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="datasets folder")
    ap.add_argument("--n", default="200k", help="IVF corpus sizes, e.g. 50k,200k (0: skip)")
    ap.add_argument(
        "--nlist-of",
        default="",
        help="also build each size's IVF with the nlist the store uses at these sizes "
        "(e.g. 200k,1m): their recall at the same share of lists probed",
    )
    ap.add_argument("--queries", type=int, default=500, help="IVF queries of each kind")
    ap.add_argument("--cache", type=Path, default=None, help="folder to cache USE vectors")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--md", type=Path, default=None)
    ap.add_argument("--smoke", action="store_true", help="tiny corpora, a few seconds")
    args = ap.parse_args(argv)
    if args.smoke:
        args.n, args.queries = "300", 10
    sizes = [parse_n(t) for t in args.n.split(",") if parse_n(t) > 0]
    emb = Embedder()
    results: dict[str, Any] = {
        "machine": {
            "nproc": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "faiss": faiss.__version__,
        },
        "model": emb.model.model_name,
        "command": "python benchmarks/vector_recall.py "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "smoke": args.smoke,
        "k": K,
    }
    if (args.data / "locomo").exists():
        results["storage"] = run_storage(args.data, args.smoke, emb)
    else:
        print(f"[vector_recall] no datasets at {args.data}: storage part skipped", file=sys.stderr)
    if sizes:
        nlist_of = [parse_n(t) for t in args.nlist_of.split(",") if t.strip()]
        results["ivf"] = run_ivf(sizes, args.queries, emb, args.cache, nlist_of)
    results["use_texts_per_s"] = emb.texts / max(emb.seconds, 1e-9)
    text = markdown(results)
    print(text)
    write_json(args.out, results, newline=False)
    write_text(args.md, text + "\n")
    return results


if __name__ == "__main__":
    main()
