"""The many-users case of scale.py (users x 100 items, one namespace each) timed in CPU time.

On a shared machine a neighbour's load stretches wall times (and starves the USE model: its
p50 moved 16-300 ms between runs of scale.py here), so an A/B of two builds reads more
steadily in the process's CPU time: a user's first search after the store opens, later (warm)
searches, and the naive baseline (rank-bm25 + exact FAISS) over the same user's items. Of the
warm searches, `second` is each user's next search after the first and `later` the ones
after it. Then each user
takes three turns of an agent's loop, a new memory written and a search (`after_write`: the
searches, each the first since a write to its namespace). Last, as many other users, never
searched before, run the agent's loop from the start: recall, keep the exchange, four times
(`loop_first`: the first recall; `loop`: the recalls after it, each right after a write).
Interleave builds by running each tree's own copy from its own directory (scale.py puts the
script's tree first on sys.path, so PYTHONPATH alone does not switch builds; the JSON's
`code` names the tree timed):

    python benchmarks/users_cpu.py [--users 100]

Prints one JSON line of medians (ms of CPU).
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

import langmem_plus
from langmem_plus import HybridStore
from langmem_plus.text.tokenize import tokenize


def main() -> None:
    """Build the users' store, time first and warm searches and the naive baseline."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--users", type=int, default=100)
    n = ap.parse_args().users
    tokenize("预热 jieba warm-up")
    corpus, emb = scale.Corpus(), scale.HashEmbeddings()
    docs = [[corpus.sentence() for _ in range(scale.USER_ITEMS)] for _ in range(2 * n)]
    db = Path(tempfile.mkdtemp()) / "users.db"
    index = {"dims": scale.DIMS, "embed": emb, "fields": ["text"]}
    scale.build_users(db, index, docs, scale._over())
    first_q = {u: corpus.query(docs[u]) for u in range(n)}
    warm_q = {u: [corpus.query(docs[u]) for _ in range(3)] for u in range(n)}
    turn_q = {u: [corpus.query(docs[u]) for _ in range(3)] for u in range(n)}
    loop_q = {u: [corpus.query(docs[u]) for _ in range(4)] for u in range(n, 2 * n)}
    qs = (*warm_q.values(), *turn_q.values(), *loop_q.values())
    emb.prime([*first_q.values(), *(q for q_list in qs for q in q_list)])
    store = HybridStore(
        db, index=index, **scale._over().store_kwargs()
    )  # reopened: every user is cold
    store.search(("users", "warm-up"), query="warm up", limit=10)
    cpu = time.process_time
    first, warm, naive, second, later, after_write = [], [], [], [], [], []
    for u in range(n):
        t0 = cpu()
        store.search(("users", f"u{u}"), query=first_q[u], limit=10)
        first.append(cpu() - t0)
    for u in range(n):
        for j, q in enumerate(warm_q[u]):
            t0 = cpu()
            store.search(("users", f"u{u}"), query=q, limit=10)
            warm.append(cpu() - t0)
            (later if j else second).append(warm[-1])
    for u in range(n):
        for j, q in enumerate(turn_q[u]):
            store.put(("users", f"u{u}"), f"t{j}", {"text": corpus.sentence()})
            t0 = cpu()
            store.search(("users", f"u{u}"), query=q, limit=10)
            after_write.append(cpu() - t0)
    loop_first, loop = [], []
    for u in range(n, 2 * n):
        for j, q in enumerate(loop_q[u]):
            t0 = cpu()
            store.search(("users", f"u{u}"), query=q, limit=10)
            (loop if j else loop_first).append(cpu() - t0)
            store.put(("users", f"u{u}"), f"x{j}", {"text": corpus.sentence()})
    store.close()
    for u in range(min(n, scale.NAIVE_USERS)):
        nv = scale.Naive(list(docs[u]), emb.embed_array(docs[u]))
        for q in warm_q[u]:
            qv = emb.embed_array([q])[0]
            t0 = cpu()
            nv.search(q, qv)
            naive.append(cpu() - t0)
    med = {
        k: float(np.median(v)) * 1000
        for k, v in (
            ("first", first),
            ("warm", warm),
            ("second", second),
            ("later", later),
            ("after_write", after_write),
            ("loop_first", loop_first),
            ("loop", loop),
            ("naive", naive),
        )
    }
    med["first_over_naive"] = med["first"] / med["naive"]
    med["warm_over_naive"] = med["warm"] / med["naive"]
    # the tree timed (scale.py puts its own tree first on sys.path: run each tree's own script)
    code = str(Path(langmem_plus.__file__).resolve().parents[1])
    print(json.dumps({"users": n, "code": code, "cpu_ms_p50": med}))


if __name__ == "__main__":
    main()
