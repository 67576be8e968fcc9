"""What each optional ranking stage costs a small user's search, and what it buys.

The fixed cost of a search (issue #12) is the sum of the Ranker's stages. This benchmark
turns the optional ones off one at a time, then all together, and reports for each variant the
warm search of a 100-item user in CPU time (scale.py's synthetic users, the bundled USE model's
own vectors memoised so no search pays an embedding), as ratios to two baselines measured in
the same run, the variants interleaved round by round: the USE query embedding itself (the
issue's "search p50 at most 1.3x the query embedding": (store + embedding) / embedding) and
the naive baseline (rank-bm25 + exact FAISS over the same user's items). Then, unless
`--no-quality`, what the variant does to retrieval quality (retrieval_quality.py, hybrid, on
the dev data):

    python benchmarks/stage_costs.py --data ../shared/datasets [--users 40] [--rounds 3]
        [--out docs/results/stage_costs.json] [--md docs/results/stage_costs.md]

The stages: both pseudo-relevance feedback rounds (`store.prf_terms`), the second one only
(`store.prf_fused_docs`), the common-word projection of the query vector
(`store.vector_common_term_ratio`), the session neighbours (`store.neighbour_weight`) and the
relevance judgement (`store.relevance_judgement`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale
from _overrides import store_fields
from _results import command_line, machine, publish

from langmem_plus import HybridStore
from langmem_plus.config import SECTIONS
from langmem_plus.embeddings import default_embeddings
from langmem_plus.text.tokenize import tokenize

VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "no second feedback round": {"prf_fused_docs": 0},
    "no feedback rounds": {"prf_terms": 0},
    "no common-word projection": {"vector_common_term_ratio": 0.0},
    "no session neighbours": {"neighbour_weight": 0.0},
    "no relevance judgement": {"relevance_judgement": False},
    "all of them off": {
        "prf_terms": 0,
        "vector_common_term_ratio": 0.0,
        "neighbour_weight": 0.0,
        "relevance_judgement": False,
    },
}
SETS = ("locomo", "madial_zh", "madial_en")


class MemoEmbeddings(Embeddings):
    """The bundled USE model, its vectors of the given texts computed once: the store sees the
    model (its name selects the fitted judgement) but a timed search pays no embedding."""

    def __init__(self) -> None:
        self.inner = default_embeddings()
        self.model_name = self.inner.model_name
        self.memo: dict[str, list[float]] = {}

    def prime(self, texts: Sequence[str]) -> None:
        """Embed these texts now (batched)."""
        todo = [t for t in dict.fromkeys(texts) if t not in self.memo]
        for start in range(0, len(todo), 256):
            part = todo[start : start + 256]
            self.memo.update(zip(part, self.inner.embed_documents(part), strict=True))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.prime(texts)
        return [self.memo[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def build(n_users: int, emb: MemoEmbeddings) -> tuple[Path, dict[int, list[str]], list[list[str]]]:
    """A store of `n_users` x 100 items; each user's queries (first one: the warm-up)."""
    corpus = scale.Corpus()
    docs = [[corpus.sentence() for _ in range(scale.USER_ITEMS)] for _ in range(n_users)]
    queries = {u: [corpus.query(docs[u]) for _ in range(12)] for u in range(n_users)}
    emb.prime([t for d in docs for t in d] + [q for qs in queries.values() for q in qs])
    db = Path(tempfile.mkdtemp()) / "stages.db"
    scale.build_users(db, {"dims": scale.DIMS, "embed": emb, "fields": ["text"]}, docs)
    return db, queries, docs


def warm_cpu_ms(db: Path, emb: MemoEmbeddings, queries: dict[int, list[str]], cfg: Any) -> float:
    """Median CPU ms of a warm search (each user searched once first, then the rest timed)."""
    index = {"dims": scale.DIMS, "embed": emb, "fields": ["text"]}
    store = HybridStore(db, index=index, **store_fields(cfg).store_kwargs())
    for u, qs in queries.items():
        store.search(("users", f"u{u}"), query=qs[0], limit=10)
    cpu, got = time.process_time, []
    for u, qs in queries.items():
        for q in qs[1:]:
            t0 = cpu()
            store.search(("users", f"u{u}"), query=q, limit=10)
            got.append(cpu() - t0)
    store.close()
    return float(np.median(got)) * 1000


def use_cpu_ms(emb: MemoEmbeddings, queries: Sequence[str]) -> float:
    """Median CPU ms of the USE model embedding one query (not memoised)."""
    cpu, got = time.process_time, []
    for q in queries:
        t0 = cpu()
        emb.inner.embed_query(q)
        got.append(cpu() - t0)
    return float(np.median(got)) * 1000


def naive_cpu_ms(
    emb: MemoEmbeddings, docs: list[list[str]], queries: dict[int, list[str]]
) -> float:
    """Median CPU ms of the naive baseline's search over one user's items."""
    cpu, got = time.process_time, []
    for u in range(min(len(docs), scale.NAIVE_USERS)):
        vecs = np.asarray(emb.embed_documents(docs[u]), dtype=np.float32)
        nv = scale.Naive(list(docs[u]), vecs)
        for q in queries[u][1:]:
            qv = np.asarray(emb.embed_query(q), dtype=np.float32)
            t0 = cpu()
            nv.search(q, qv)
            got.append(cpu() - t0)
    return float(np.median(got)) * 1000


def quality(data: Path, cfg: dict[str, Any]) -> dict[str, dict[str, float]]:
    """frac@10 and MRR per set of the hybrid system with these store settings."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "q.json"
        cmd = [
            sys.executable,
            str(Path(__file__).with_name("retrieval_quality.py")),
            "--data",
            str(data),
            "--systems",
            "hybrid",
            "--session-key",
            "session",
            "--out",
            str(out),
        ]
        store = SECTIONS["store"].model_fields
        sets = [
            f"{'store' if k in store else 'tuning'}.{k}={json.dumps(v)}" for k, v in cfg.items()
        ]
        if sets:
            cmd += ["--set-config", *sets]
        subprocess.run(cmd, check=True, capture_output=True)
        res = json.loads(out.read_text(encoding="utf-8"))
    return {
        s: {m: float(res["sets"][s]["systems"]["hybrid"][m]) for m in ("frac@10", "mrr")}
        for s in SETS
    }


def table(res: dict[str, Any]) -> str:
    """The Markdown table: per variant, speed ratios (median of the rounds) and quality."""
    lines = [
        f"Machine: {res['machine']}. Command: `{res['command']}`. {res['users']} users x 100 "
        f"items, {res['rounds']} rounds interleaved; USE query embedding {res['use_ms']:.2f} ms "
        f"CPU, naive baseline {res['naive_ms']:.3f} ms CPU (medians of the rounds).",
        "",
        "| variant | warm search ms (CPU) | (search + USE) / USE | / naive |"
        + ("".join(f" {s} frac@10 | {s} MRR |" for s in SETS) if res["quality"] else ""),
        "|---|---:|---:|---:|" + ("---:|---:|" * len(SETS) if res["quality"] else ""),
    ]
    for name, v in res["variants"].items():
        row = (
            f"| {name} | {v['warm_ms']:.3f} ({v['warm_ms_min']:.3f}-{v['warm_ms_max']:.3f}) "
            f"| {v['over_use']:.2f} | {v['over_naive']:.1f} |"
        )
        q = res["quality"].get(name)
        if q:
            row += "".join(f" {q[s]['frac@10']:.3f} | {q[s]['mrr']:.3f} |" for s in SETS)
        lines.append(row)
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    """Time every variant (interleaved rounds), then measure its quality; print the table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path("../shared/datasets"))
    ap.add_argument("--users", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-quality", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--md", type=Path, default=None)
    args = ap.parse_args(argv)
    tokenize("预热 jieba warm-up")
    emb = MemoEmbeddings()
    db, queries, docs = build(args.users, emb)
    fresh = [f"{q} (round {r})" for r in range(args.rounds) for qs in queries.values() for q in qs]
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    use, naive = [], []
    for r in range(args.rounds):
        names = list(VARIANTS)
        if r % 2:
            names.reverse()
        for name in names:
            times[name].append(warm_cpu_ms(db, emb, queries, VARIANTS[name]))
        use.append(use_cpu_ms(emb, fresh[r :: args.rounds][:200]))
        naive.append(naive_cpu_ms(emb, docs, queries))
    use_ms, naive_ms = float(np.median(use)), float(np.median(naive))
    variants = {}
    for name, ts in times.items():
        w = float(np.median(ts))
        variants[name] = {
            "settings": VARIANTS[name],
            "warm_ms": w,
            "warm_ms_min": min(ts),
            "warm_ms_max": max(ts),
            "rounds_ms": ts,
            "over_use": (w + use_ms) / use_ms,
            "over_naive": w / naive_ms,
        }
    qual = {} if args.no_quality else {n: quality(args.data, c) for n, c in VARIANTS.items()}
    res = {
        "machine": machine(),
        "command": command_line("stage_costs.py", argv),
        "users": args.users,
        "rounds": args.rounds,
        "use_ms": use_ms,
        "use_rounds_ms": use,
        "naive_ms": naive_ms,
        "naive_rounds_ms": naive,
        "variants": variants,
        "quality": qual,
    }
    publish(res, table(res), args.out, args.md)


if __name__ == "__main__":
    main()
