"""Many users searched in random order, in CPU time: what a service's store meets.

N users with 100 items each (scale.py's synthetic memories and hash embeddings), then 6·N
searches of users drawn at random (fixed seed), so a user is searched ~6 times, never twice in
a row on purpose. Each small user's keyword index and rows are held in memory up to the
caches' caps (`tuning.keyword_cache_postings`, `tuning.row_cache_rows`); past them the least
recently searched users are dropped and read again on their next search. Reports the medians,
mean and p95 of per-search process CPU time over the last two thirds (the first third fills the
caches). Interleave builds by running each tree's own copy from its own directory (scale.py puts the
script's tree first on sys.path, so PYTHONPATH alone does not switch builds; the JSON's
`code` names the tree timed):

    python benchmarks/users_mix.py [--users 1000] [--set-config tuning.keyword_cache_postings=N]

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale
from _overrides import parse_overrides

import langmem_plus
from langmem_plus import HybridStore
from langmem_plus.text.tokenize import tokenize


def main() -> None:
    """Build the users' store, search users in random order, print CPU-time figures."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--users", type=int, default=1000)
    ap.add_argument("--set-config", nargs="*", default=[], metavar="SECTION.FIELD=JSON")
    args = ap.parse_args()
    n = args.users
    tokenize("预热 jieba warm-up")
    corpus, emb = scale.Corpus(), scale.HashEmbeddings()
    docs = [[corpus.sentence() for _ in range(scale.USER_ITEMS)] for _ in range(n)]
    db = Path(tempfile.mkdtemp()) / "mix.db"
    index = {"dims": scale.DIMS, "embed": emb, "fields": ["text"]}
    over = parse_overrides(args.set_config)
    scale.build_users(db, index, docs, over, chunk=5000)
    order = np.random.default_rng(scale.SEED).integers(0, n, 6 * n).tolist()
    queries = [corpus.query(docs[u]) for u in order]
    emb.prime(queries)
    store = HybridStore(db, index=index, **over.store_kwargs())
    cpu = time.process_time
    took = []
    for u, q in zip(order, queries, strict=True):
        t0 = cpu()
        store.search(("users", f"u{u}"), query=q, limit=10)
        took.append(cpu() - t0)
    store.close()
    ms = np.array(took[len(took) // 3 :]) * 1000
    print(
        json.dumps(
            {
                "users": n,
                "code": str(Path(langmem_plus.__file__).resolve().parents[1]),  # the tree timed
                "searches": len(ms),
                "cpu_ms": {
                    "p50": float(np.median(ms)),
                    "mean": float(ms.mean()),
                    "p95": float(np.percentile(ms, 95)),
                },
            }
        )
    )


if __name__ == "__main__":
    main()
