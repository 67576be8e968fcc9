"""HybridStore on Milvus Lite beside HybridStore on SQLite: load time, search latency and bytes
per item at a few sizes, in one run (the same synthetic corpus as scale.py, hash embeddings).

Two shapes: `items` (N items in one namespace) and `users` (U users x 100 items, one
namespace each, searched one user at a time: the partition-key case; `--users 100,1000` runs
several); with `--locomo DATA` also real conversations (LoCoMo dev, a namespace each, their
questions as queries, the same hash embeddings). Searches of the two backends are interleaved query by query, and the Milvus figures
are also given as ratios to SQLite's measured in the same run. Search latency excludes query
embedding (vectors are made before the timed loop), so it times the store alone. For each
Milvus store the timed searches' requests and the entities those requests returned are
counted (what a server's latency and network cost multiply).

    python benchmarks/milvus_scale.py [--sizes 1k,10k] [--users 100] [--queries 200]
        [--own-bm25] [--locomo DATA] [--milvus URI] [--out docs/results/milvus_scale.json]
        [--md docs/results/milvus_scale.md]

With `--milvus milvus://host:19530` the Milvus side runs on that server (collections
`bench_<case>` are created there and dropped afterwards); bytes per item are then not
measured (0: read them from the cluster's metrics).
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _overrides import Overrides, store_fields
from _results import write_json, write_text
from langgraph.store.base import PutOp
from scale import Corpus, HashEmbeddings, parse_size

from langmem_plus import HybridStore

_BATCH = 500
SERVER: list[str | None] = [None]  # --milvus URI: a Milvus server instead of Milvus Lite
# Milvus stores per case: name -> StoreTuning overrides (--own-bm25 adds Milvus's own BM25)
VARIANTS: dict[str, dict[str, Any]] = {"milvus": {}}


def _pct(values: list[float]) -> dict[str, float]:
    arr = np.asarray(values or [0.0])
    return {"p50": float(np.percentile(arr, 50)), "p95": float(np.percentile(arr, 95))}


Doc = tuple[tuple[str, ...], str, dict[str, Any]]  # namespace, key, value


def _load(store: HybridStore, docs: list[Doc]) -> float:
    t0 = time.perf_counter()
    for i in range(0, len(docs), _BATCH):
        store.batch([PutOp(ns, key, value) for ns, key, value in docs[i : i + _BATCH]])
    return time.perf_counter() - t0


def _bytes(path: Path) -> int:
    """SQLite: the file, its WAL and snapshot; Milvus Lite: everything in its folder."""
    total = 0
    for p in path.parent.glob(path.name + "*"):
        files = p.rglob("*") if p.is_dir() else [p]
        total += sum(f.stat().st_size for f in files if f.is_file())
    return total


class Requests:
    """Counts a Milvus store's requests and the entities they return, while `on`."""

    def __init__(self, store: HybridStore) -> None:
        self.on = False
        self.requests = 0
        self.rows = 0
        client: Any = store._storage.client  # type: ignore[attr-defined]
        for name in ("query", "search", "upsert", "delete", "query_iterator"):
            real = getattr(client, name)

            def counted(*a: Any, _real: Any = real, _name: str = name, **k: Any) -> Any:
                got = _real(*a, **k)
                if self.on:
                    self.requests += 1
                    if _name == "search":
                        self.rows += sum(len(hits) for hits in got)
                    elif _name == "query":
                        self.rows += len(got)
                return got

            object.__setattr__(client, name, counted)


def run_case(
    docs: list[Doc],
    queries: list[tuple[tuple[str, ...], str]],
    workdir: Path,
    tag: str,
    emb: HashEmbeddings,
) -> dict[str, Any]:
    """Load the same docs into both backends, then time interleaved searches."""
    index = {"dims": emb.dims, "embed": emb, "fields": ["text"]}
    paths = {"sqlite": workdir / f"{tag}.db"}
    stores = {"sqlite": HybridStore(paths["sqlite"], index=index)}  # type: ignore[arg-type]
    for name, tuning in VARIANTS.items():
        suffix = "" if name == "milvus" else "_" + name.replace("-", "_")
        paths[name] = workdir / f"{tag}{suffix}.milvus.db"
        over = store_fields({"milvus_collection": f"bench_{tag}{suffix}", **tuning})
        stores[name] = _open(SERVER[0] or paths[name], index, over)
    out: dict[str, Any] = {"items": len(docs), "queries": len(queries)}
    for name, store in stores.items():
        out[name] = {"load_s": _load(store, docs)}
        print(f"{tag}: {name} loaded {len(docs)} items in {out[name]['load_s']:.1f} s", flush=True)
    counters = {name: Requests(store) for name, store in stores.items() if name != "sqlite"}
    emb.prime([q for _, q in queries])
    lat: dict[str, list[float]] = {n: [] for n in stores}
    for store in stores.values():  # one warm-up query each
        store.search(queries[0][0], query=queries[0][1], limit=10)
    for c in counters.values():
        c.on = True
    for ns, q in queries:
        for name, store in stores.items():
            t0 = time.perf_counter()
            store.search(ns, query=q, limit=10)
            lat[name].append((time.perf_counter() - t0) * 1000)
    for name, c in counters.items():
        c.on = False
        out[name]["requests_per_search"] = c.requests / len(queries)
        out[name]["rows_per_search"] = c.rows / len(queries)
    for name, store in stores.items():
        if SERVER[0] and name != "sqlite":
            _drop(store)  # closes it
        else:
            store.close()
        out[name]["search_ms"] = _pct(lat[name])
        out[name]["bytes"] = _bytes(paths[name]) if name == "sqlite" or not SERVER[0] else 0
        out[name]["bytes_per_item"] = out[name]["bytes"] / max(1, len(docs))
    for name in VARIANTS:
        out["ratio" if name == "milvus" else f"ratio_{name}"] = _ratios(out[name], out["sqlite"])
    return out


def _open(where: Any, index: Any, over: Overrides) -> HybridStore:
    """A benchmark store; on a server, collections left by an earlier run are dropped first
    (their statistics rows would count twice)."""
    store = HybridStore(where, index=index, **over.store_kwargs())
    if SERVER[0]:
        _drop(store)
        store = HybridStore(where, index=index, **over.store_kwargs())
    return store


def _drop(store: HybridStore) -> None:
    """Close a benchmark store and drop its collections (on a server)."""
    st: Any = store._storage  # type: ignore[attr-defined]
    names = (st.names.items, st.names.vectors, st.names.stats, st.names.log)
    store.close()
    from pymilvus import MilvusClient

    client = MilvusClient(uri=st.where)
    for name in names:
        if client.has_collection(name):
            client.drop_collection(name)
    client.close()


def _ratios(m: dict[str, Any], s: dict[str, Any]) -> dict[str, float]:
    """A Milvus store's figures over SQLite's, measured in the same run."""
    return {
        "load": m["load_s"] / max(s["load_s"], 1e-9),
        "search_p50": m["search_ms"]["p50"] / max(s["search_ms"]["p50"], 1e-9),
        "search_p95": m["search_ms"]["p95"] / max(s["search_ms"]["p95"], 1e-9),
        "bytes": m["bytes"] / max(s["bytes"], 1),
    }


def count_requests(workdir: Path, emb: HashEmbeddings, n: int = 300) -> dict[str, float]:
    """Milvus requests per search, put and get (what a cluster's latency multiplies), on a
    Milvus Lite store of `n` items in sessions of 20 (so session neighbours are read)."""
    corpus = Corpus()
    over = store_fields({"milvus_collection": "bench_requests"})
    index = {"dims": emb.dims, "embed": emb, "fields": ["text"]}
    store = _open(SERVER[0] or workdir / "requests.milvus.db", index, over)
    docs = [corpus.sentence() for _ in range(n)]
    store.batch(
        [
            PutOp(("u", "1"), f"k{i}", {"text": t, "session_id": f"s{i // 20}"})
            for i, t in enumerate(docs)
        ]
    )
    client: Any = store._storage.client  # type: ignore[attr-defined]
    calls = [0]
    for name in ("query", "search", "upsert", "delete", "query_iterator"):
        real = getattr(client, name)

        def counted(*a: Any, _real: Any = real, **k: Any) -> Any:
            calls[0] += 1
            return _real(*a, **k)

        object.__setattr__(client, name, counted)
    out: dict[str, float] = {}
    queries = [corpus.query(docs) for _ in range(50)]
    emb.prime(queries)
    for q in queries:
        store.search(("u", "1"), query=q, limit=10)
    out["per_search"], calls[0] = calls[0] / len(queries), 0
    for i in range(20):
        store.put(("u", "1"), f"new{i}", {"text": docs[i]})
    out["per_put"], calls[0] = calls[0] / 20, 0
    store.get(("u", "1"), "k1")
    out["per_get"] = calls[0]
    if SERVER[0]:
        _drop(store)  # closes it
    else:
        store.close()
    return out


def markdown(res: dict[str, Any]) -> str:
    lines = [
        "| case | items | backend | load s | items/s | search p50 ms | p95 ms | bytes/item "
        "| requests/search | rows/search |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for case, r in res["cases"].items():
        for name in ("sqlite", *VARIANTS):
            b = r[name]
            req = f"{b['requests_per_search']:.1f}" if "requests_per_search" in b else ""
            rows = f"{b['rows_per_search']:.0f}" if "rows_per_search" in b else ""
            lines.append(
                f"| {case} | {r['items']} | {name} | {b['load_s']:.1f} | "
                f"{r['items'] / max(b['load_s'], 1e-9):.0f} | {b['search_ms']['p50']:.1f} | "
                f"{b['search_ms']['p95']:.1f} | {b['bytes_per_item']:.0f} | {req} | {rows} |"
            )
    if "requests" in res:
        r = res["requests"]
        lines += [
            "",
            f"Milvus requests: {r['per_search']:.1f} per search, "
            f"{r['per_put']:.1f} per put, {r['per_get']:.0f} per get.",
            "",
        ]
    side = "Milvus (server)" if SERVER[0] else "Milvus Lite"
    lines += ["", f"{side} / SQLite, same run:", ""]
    lines += ["| case | load | search p50 | search p95 | bytes |", "|---|---|---|---|---|"]
    for case, r in res["cases"].items():
        for name in VARIANTS:
            x = r["ratio" if name == "milvus" else f"ratio_{name}"]
            label = case if name == "milvus" else f"{case} ({name})"
            lines.append(
                f"| {label} | {x['load']:.2f} | {x['search_p50']:.2f} | {x['search_p95']:.2f} | "
                f"{x['bytes']:.2f} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1k,10k", help="items in one namespace")
    ap.add_argument(
        "--users", default="100", help="users x 100 items, comma-separated counts (0: skip)"
    )
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--requests-only", action="store_true", help="only count requests")
    ap.add_argument(
        "--locomo",
        type=Path,
        default=None,
        metavar="DATA",
        help="also the LoCoMo dev conversations from this datasets folder (real text, one "
        "namespace per conversation, sessions kept)",
    )
    ap.add_argument(
        "--own-bm25",
        action="store_true",
        help="also a Milvus store scored with Milvus's own BM25 "
        "(store.milvus_client_bm25_max_docs = 0), interleaved with the others",
    )
    ap.add_argument(
        "--milvus",
        default=None,
        metavar="URI",
        help="run the Milvus side on this server (milvus://host:19530; collections "
        "bench_<case> are created there) instead of Milvus Lite",
    )
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--md", type=Path, default=None)
    args = ap.parse_args(argv)
    SERVER[0] = args.milvus
    if args.own_bm25:
        VARIANTS["milvus-own-bm25"] = {"milvus_client_bm25_max_docs": 0}
    corpus, emb = Corpus(), HashEmbeddings()
    res: dict[str, Any] = {
        "machine": {
            "nproc": __import__("os").cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "cases": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        res["requests"] = count_requests(work, emb)
        if args.requests_only:
            print(res["requests"])
            return res
        for tok in (t for t in args.sizes.split(",") if t.strip()):
            n_ns, per_ns = parse_size(tok)
            n = n_ns * per_ns
            docs: list[Doc] = [(("bench",), f"k{i}", {"text": corpus.sentence()}) for i in range(n)]
            texts = [d[2]["text"] for d in docs]
            queries: list[tuple[tuple[str, ...], str]] = [
                (("bench",), corpus.query(texts)) for _ in range(args.queries)
            ]
            res["cases"][f"items-{tok}"] = run_case(docs, queries, work, f"items{n}", emb)
            _report(res, args)
        for users in (int(u) for u in args.users.split(",") if int(u) > 0):
            docs = [
                (("users", f"u{u}"), f"k{i}", {"text": corpus.sentence()})
                for u in range(users)
                for i in range(100)
            ]
            rng = np.random.default_rng(7)
            queries = []
            for _ in range(args.queries):
                u = int(rng.integers(users))
                own = [d[2]["text"] for d in docs[u * 100 : (u + 1) * 100]]
                queries.append((("users", f"u{u}"), corpus.query(own)))
            tag = f"users{users}"
            res["cases"][f"users-{users}x100"] = run_case(docs, queries, work, tag, emb)
            _report(res, args)
        if args.locomo:
            docs, queries = locomo_case(args.locomo, args.queries)
            res["cases"]["locomo"] = run_case(docs, queries, work, "locomo", emb)
            _report(res, args)
    return res


def locomo_case(data: Path, n_queries: int) -> tuple[list[Doc], list[tuple[tuple[str, ...], str]]]:
    """Real conversations: every LoCoMo dev conversation a namespace ("bench", id) of one
    store, its turns the items (with their session, so neighbours are read), `n_queries` of
    its questions spread over the conversations. Read from the datasets folder, never copied."""
    from retrieval_quality import SESSION_KEY, load_locomo

    units = load_locomo(data)
    docs: list[Doc] = []
    for u in units:
        for key, text in u.docs:
            session = u.meta.get(key, {}).get(SESSION_KEY[0], "")
            docs.append((("bench", u.name), key, {"text": text, "session_id": session}))
    asked: list[tuple[tuple[str, ...], str]] = [
        (("bench", u.name), q.text) for u in units for q in u.queries
    ]
    step = max(1, len(asked) // max(1, n_queries))
    return docs, asked[::step][:n_queries]


def _report(res: dict[str, Any], args: argparse.Namespace) -> None:
    """Print the tables so far and write the results (a long run keeps what it measured)."""
    table = markdown(res)
    print(table, flush=True)
    write_json(args.out, res, newline=False)
    write_text(args.md, table + "\n")


if __name__ == "__main__":
    main()
