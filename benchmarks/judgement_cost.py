"""What the relevance judgement (langmem_plus/store/judgement.py) adds to a search.

Two in-memory stores hold the same LoCoMo conversation turns with the same vectors (the cached
USE embeddings); one searches with the judgement, one with `store.relevance_judgement` False.
Every dev question of the conversation (most name a person: the judgement then looks up the
names in the namespace) is asked of both, alternating which goes first, for `--rounds`
rounds; it prints the median and p95 search times of each and their ratio, and writes
docs/results/judgement_cost.{md,json}. Milliseconds on a shared machine are loose: read the
ratio.

    python benchmarks/judgement_cost.py --data ../shared/datasets
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import retrieval_quality as rq
from langgraph.store.base import PutOp

from langmem_plus.config import MemoryConfig
from langmem_plus.store.hybrid import HybridStore

RESULTS_DIR = Path(__file__).resolve().parent.parent / "docs" / "results"


def _store(unit: rq.Unit, emb: rq.CachedEmbeddings, judged: bool) -> HybridStore:
    cfg = MemoryConfig(store={"relevance_judgement": judged})
    store = HybridStore(None, index={"dims": 512, "embed": emb, "fields": ["text"]}, config=cfg)
    store.batch([PutOp(("bench", unit.name), k, {"text": t}) for k, t in unit.docs])
    return store


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=rq.DEFAULT_DATA)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "judgement_cost.json")
    ap.add_argument("--md", type=Path, default=RESULTS_DIR / "judgement_cost.md")
    args = ap.parse_args(argv)
    unit = rq.load_locomo(args.data, 1)[0]
    emb = rq.CachedEmbeddings()
    emb.warm([t for _, t in unit.docs] + [q.text for q in unit.queries])
    stores = {True: _store(unit, emb, True), False: _store(unit, emb, False)}
    assert (
        stores[True].relevance_judgement is not None and stores[False].relevance_judgement is None
    )
    ms: dict[bool, list[float]] = {True: [], False: []}
    ns = ("bench", unit.name)
    for r in range(args.rounds):
        for i, q in enumerate(unit.queries):
            order = (True, False) if (r + i) % 2 == 0 else (False, True)
            for judged in order:
                t0 = time.perf_counter()
                stores[judged].search(ns, query=q.text, limit=10)
                ms[judged].append((time.perf_counter() - t0) * 1000)
    for s in stores.values():
        s.close()
    stat = {
        name: {"p50": float(np.percentile(ms[j], 50)), "p95": float(np.percentile(ms[j], 95))}
        for name, j in (("judgement", True), ("without", False))
    }
    ratio = {k: stat["judgement"][k] / stat["without"][k] for k in ("p50", "p95")}
    cmd = "python benchmarks/judgement_cost.py --data ../shared/datasets" + (
        f" --rounds {args.rounds}" if args.rounds != 5 else ""
    )
    md = "\n".join(
        [
            f"Command: `{cmd}`  ",
            f"Machine: {platform.machine()} {platform.system()}, Python "
            f"{platform.python_version()}; {unit.name}: {len(unit.docs)} turns, "
            f"{len(unit.queries)} questions x {args.rounds} rounds, alternating; the query "
            "embedding is cached (not timed).",
            "",
            "| search | p50 ms | p95 ms |",
            "|---|---|---|",
            *(f"| {k} | {v['p50']:.2f} | {v['p95']:.2f} |" for k, v in stat.items()),
            f"| ratio | {ratio['p50']:.3f} | {ratio['p95']:.3f} |",
        ]
    )
    print(md)
    out = {"stats": stat, "ratio": ratio, "rounds": args.rounds, "queries": len(unit.queries)}
    args.out.write_text(json.dumps(out, indent=1), encoding="utf-8")
    args.md.write_text(md + "\n", encoding="utf-8")
    return out


if __name__ == "__main__":
    main()
