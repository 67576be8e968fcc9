"""Concurrent async store calls, coalesced into shared batches, vs the same calls one by one.

`HybridStore.abatch` coalesces concurrent calls on one event loop (as LangGraph's
`AsyncBatchedBaseStore` does): N `aput`s started together share one embedding call and one
SQLite transaction; N `asearch`es share one embedding call for their queries. This script
measures what that buys with the default offline embeddings (USE multilingual):

- `aput`: N puts of distinct memories into a fresh namespace;
- `asearch`: N keyword+vector searches over a namespace of `--corpus` memories;

each run three ways, in the same process, interleaved (the order rotates every round), on a
file-backed store: `asyncio.gather` of N calls ("concurrent"); the same gather on a store whose
`abatch` runs every call alone, as HybridStore did before coalescing ("uncoalesced": plan,
embed and execute per call, which is the old method body); and N awaited calls in a row
("one by one"). The table shows the median wall time over the rounds and the ratios.

    python benchmarks/async_batching.py --out docs/results/async_batching.json \
        --md docs/results/async_batching.md
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langgraph.store.base import PutOp  # noqa: E402

from langmem_plus import HybridStore  # noqa: E402
from langmem_plus.embeddings import embedding_model_name  # noqa: E402

_SUBJECTS = ["I", "My sister", "Our team", "The landlord", "My doctor", "Grandpa", "Alice"]
_VERBS = ["prefers", "booked", "cancelled", "is learning", "recommended", "forgot", "moved"]
_OBJECTS = [
    "green tea in the morning",
    "a flight to Lisbon in May",
    "the Tuesday piano lesson",
    "Rust for the new service",
    "a quieter apartment near the park",
    "the dentist appointment",
    "vegetarian recipes with lentils",
    "the quarterly budget review",
    "a hiking trip in the Alps",
    "我们下周去杭州开会",
    "她最喜欢的咖啡是拿铁",
]


def _texts(n: int, rng: random.Random) -> list[str]:
    return [
        f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} (note {i})"
        for i in range(n)
    ]


class _Uncoalesced(HybridStore):
    """HybridStore with the pre-coalescing `abatch`: each call planned, embedded and run alone."""

    async def abatch(self, ops: Any) -> list[Any]:
        plan = self._plan(ops)
        doc_vecs, q_vecs = await self._embed_async(plan)
        return await asyncio.to_thread(self._execute, plan, doc_vecs, q_vecs)


async def _timed(calls: list[Callable[[], Awaitable[Any]]], concurrent: bool) -> float:
    start = time.perf_counter()
    if concurrent:
        await asyncio.gather(*(c() for c in calls))
    else:
        for c in calls:
            await c()
    return time.perf_counter() - start


_MODES = ("concurrent", "uncoalesced", "one_by_one")


async def _run(args: argparse.Namespace, store: HybridStore, plain: HybridStore) -> dict[str, Any]:
    rng = random.Random(args.seed)
    corpus = _texts(args.corpus, rng)
    for target in (store, plain):  # the same corpus in both stores
        for i in range(0, len(corpus), 256):
            chunk = corpus[i : i + 256]
            ops = [PutOp(("corpus",), f"c{i + j}", {"text": t}) for j, t in enumerate(chunk)]
            await asyncio.to_thread(target.batch, ops)
    queries = [t.split(" (note")[0] for t in _texts(max(args.n), rng)]

    rows: list[dict[str, Any]] = []
    for n in args.n:
        for workload in ("aput", "asearch"):
            times: dict[str, list[float]] = {m: [] for m in _MODES}
            for r in range(args.rounds):
                order = _MODES[r % 3 :] + _MODES[: r % 3]
                for mode in order:
                    target = plain if mode == "uncoalesced" else store
                    if workload == "aput":
                        ns = ("bench", workload, str(n), mode, str(r))
                        texts = _texts(n, rng)
                        calls = [
                            (lambda k=k, t=t, ns=ns, s=target: s.aput(ns, f"k{k}", {"text": t}))
                            for k, t in enumerate(texts)
                        ]
                    else:
                        picked = rng.sample(queries, n) if n <= len(queries) else queries
                        calls = [
                            (lambda q=q, s=target: s.asearch(("corpus",), query=q, limit=5))
                            for q in picked
                        ]
                    times[mode].append(await _timed(calls, mode != "one_by_one"))
            med = {m: statistics.median(times[m]) for m in _MODES}
            rows.append(
                {
                    "workload": workload,
                    "n": n,
                    **{f"{m}_s": round(med[m], 4) for m in _MODES},
                    **{f"{m}_ops_per_s": round(n / med[m], 1) for m in _MODES},
                    "speedup_vs_one_by_one": round(med["one_by_one"] / med["concurrent"], 2),
                    "speedup_vs_uncoalesced": round(med["uncoalesced"] / med["concurrent"], 2),
                    "rounds": args.rounds,
                    **{f"all_{m}_s": [round(t, 4) for t in times[m]] for m in _MODES},
                }
            )
            print(
                f"{workload:8} n={n:5}  concurrent {med['concurrent']:8.3f} s   "
                f"uncoalesced {med['uncoalesced']:8.3f} s   one by one {med['one_by_one']:8.3f} s",
                flush=True,
            )
    return {"rows": rows}


def _table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| workload | N | concurrent (s) | uncoalesced (s) | one by one (s) | concurrent ops/s "
        "| vs uncoalesced | vs one by one |\n|---|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    body = "".join(
        f"| {r['workload']} | {r['n']} | {r['concurrent_s']:.3f} | {r['uncoalesced_s']:.3f} | "
        f"{r['one_by_one_s']:.3f} | {r['concurrent_ops_per_s']:.0f} | "
        f"x{r['speedup_vs_uncoalesced']:.2f} | x{r['speedup_vs_one_by_one']:.2f} |\n"
        for r in rows
    )
    return head + body


def main(argv: list[str] | None = None, embeddings: Any = None) -> dict[str, Any]:
    """Run the benchmark; `embeddings` replaces the default model (for smoke tests)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, nargs="+", default=[10, 100, 1000])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--corpus", type=int, default=2000, help="memories searched by asearch")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--out", type=Path)
    p.add_argument("--md", type=Path)
    args = p.parse_args(argv)
    index = None if embeddings is None else {"embed": embeddings, "fields": ["text"]}
    with (
        tempfile.TemporaryDirectory() as tmp,
        HybridStore(Path(tmp) / "b.db", index=index) as s,
        _Uncoalesced(Path(tmp) / "u.db", index=index) as u,
    ):
        started = time.time()
        load_before = os.getloadavg()[0]
        res = asyncio.run(_run(args, s, u))
        res["meta"] = {
            "command": "python benchmarks/async_batching.py " + " ".join(argv or sys.argv[1:]),
            "embeddings": embedding_model_name(s.embeddings),
            "corpus": args.corpus,
            "seed": args.seed,
            "python": platform.python_version(),
            "machine": platform.machine(),
            "cpu_count": os.cpu_count(),
            "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            "seconds": round(time.time() - started, 1),
            "date": time.strftime("%Y-%m-%d", time.gmtime()),
        }
    table = _table(res["rows"])
    print()
    print(table)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(res, indent=2, ensure_ascii=False) + "\n")
    if args.md:
        m = res["meta"]
        args.md.parent.mkdir(parents=True, exist_ok=True)
        args.md.write_text(
            "# Async batching: coalesced concurrent calls vs uncoalesced vs one by one\n\n"
            f"`{m['command']}` — embeddings `{m['embeddings']}`, file-backed store, "
            f"{m['corpus']} memories searched, median of {args.rounds} interleaved rounds, "
            f"{m['cpu_count']} CPUs (1-minute load average {m['load_average_1min'][0]} at the "
            f"start, {m['load_average_1min'][1]} at the end: the machine was shared, so the "
            f"absolute times are noisy; both modes ran interleaved under the same load), "
            f"{m['date']}. Per-round times are in the JSON.\n\n" + table
        )
    return res


if __name__ == "__main__":
    main()
