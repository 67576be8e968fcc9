"""What each speed layer buys: a search with the layer taken out, against the shipped store, in
the same run (issue #29's rule: a layer stays only if removing it costs more than 10 % of a
search on real conversations, or breaks a scale figure).

Two parts, each in CPU time (process CPU: a query's FAISS scan on the worker thread counts),
the variants alternated round by round, medians of the rounds:

- `real`: real_users.py's users (LoCoMo 100-turn users, MADial zh/en users, the bundled USE
  model's vectors memoised): the store's part of a warm search, and the agent loop (a turn
  written before each search, on a copy of the store);
- `scale`: scale.py's one-namespace stores of 10k and 100k synthetic items (built once), each
  variant on a fresh handle: the first pass over 300 queries, the warm pass, and the agent loop
  (a put, new or an overwrite, before each of 150 searches).

A layer is taken out with its `StoreTuning` knob where it has one, else by swapping the
function that holds it for the plain computation (the same answers, bit for bit):

    python benchmarks/layer_costs.py --data ../shared/datasets --part real --rounds 3
    python benchmarks/layer_costs.py --part scale --sizes 10k,100k --rounds 3
        [--variants default,no_resident,...] [--out F.json] [--md F.md]
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langgraph.store.base import PutOp

sys.path.insert(0, str(Path(__file__).resolve().parent))

import real_users as ru
import scale
from _overrides import Overrides
from _results import command_line, machine, publish
from stage_costs import MemoEmbeddings

from langmem_plus import HybridStore
from langmem_plus.store.tuning import StoreTuning
from langmem_plus.text.tokenize import tokenize
from langmem_plus.text.transcript import text_to_embed


def _no_patch() -> Iterator[None]:
    """A write to a namespace held whole drops it (read again whole by its next search)."""
    from langmem_plus.store.keyword.cache import PostingsCache

    def drop(self: Any, cache: Any, items: Any) -> None:
        if cache.resident is not None:
            self._total -= cache.drop_resident()

    return _swapped(PostingsCache, "_patch_resident", drop)


@contextlib.contextmanager
def _swapped(owner: Any, name: str, value: Any) -> Iterator[None]:
    old = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, old)


# name -> (StoreTuning fields, the swap that takes the layer out)
VARIANTS: dict[str, tuple[dict[str, Any], Callable[[], Any] | None]] = {
    "default": ({}, None),
    "no_resident": ({"keyword_resident_docs": 0}, None),
    "no_patch": ({}, _no_patch),
    "no_postings_cache": ({"keyword_cache_postings": 0}, None),
    "no_warm_whole": ({"keyword_cache_warm_docs": 0}, None),
    "no_row_cache": ({"row_cache_rows": 0}, None),
}
REAL_DEFAULT = [
    "default", "no_resident", "no_patch", "no_postings_cache", "no_row_cache",
]  # fmt: skip
SCALE_DEFAULT = ["default", "no_postings_cache", "no_warm_whole", "no_row_cache"]


@contextlib.contextmanager
def variant(name: str) -> Iterator[StoreTuning]:
    """The variant's tuning, with its swap in place."""
    fields, swap = VARIANTS[name]
    with swap() if swap is not None else contextlib.nullcontext():
        yield StoreTuning(**fields)


def _medians(got: dict[str, list[float]]) -> dict[str, float]:
    got["all"] = [v for vs in got.values() for v in vs]
    return {s: float(np.median(v)) for s, v in got.items()}


def real_loop(db: Path, emb: Any, users: Sequence[ru.User], tuning: StoreTuning) -> Any:
    """real_users.py's agent loop with this tuning: a turn written before each search."""
    copy = db.with_name(f"loop-{time.monotonic_ns()}.db")
    shutil.copyfile(db, copy)
    store = HybridStore(copy, index={"embed": emb, "fields": ["text"]}, tuning=tuning)
    for u in users:
        store.search(u.ns, query=u.queries[0], limit=10)
    got: dict[str, list[float]] = {}
    for u in users:
        for j, q in enumerate(u.queries[1:]):
            _k, text, extra = u.items[j % len(u.items)]
            store.put(u.ns, f"again-{j}", {"text": ru.again(text), **extra})
            t0 = time.process_time()
            store.search(u.ns, query=q, limit=10)
            got.setdefault(u.set_name, []).append((time.process_time() - t0) * 1000)
    store.close()
    for path in copy.parent.glob(copy.name + "*"):
        path.unlink()
    return got


def run_real(data: Path, names: Sequence[str], rounds: int, smoke: bool) -> dict[str, Any]:
    """{variant: {"store": {set: ms}, "loop": {set: ms}}}, medians over the rounds."""
    tokenize("预热 jieba warm-up")
    users = ru.users_of(data)
    if smoke:
        users = [u for s in ru.SETS for u in [v for v in users if v.set_name == s][:1]]
        for u in users:
            u.queries = u.queries[:3]
    memo = MemoEmbeddings()
    texts = [t for u in users for _, t, _ in u.items]
    memo.prime(
        texts + [ru.again(t) for t in texts] + [text_to_embed(q) for u in users for q in u.queries]
    )
    emb = ru.QueryEmbeddings(memo, False)
    db = ru.build(users, emb)
    per: dict[str, dict[str, list[dict[str, float]]]] = {
        n: {"store": [], "loop": []} for n in names
    }
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            with variant(name) as tuning:
                over = Overrides(tuning=tuning)
                per[name]["store"].append(
                    _medians(ru.searches(db, emb, users, time.process_time, over))
                )
                per[name]["loop"].append(_medians(real_loop(db, emb, users, tuning)))
    return {
        n: {k: {s: float(np.median([x[s] for x in v[k]])) for s in v[k][0]} for k in v}
        for n, v in per.items()
    }


def _scale_store(total: int, workdir: Path) -> tuple[Path, dict[str, Any]]:
    """scale.py's synthetic one-namespace store of `total` items, its queries and writes."""
    corpus = scale.Corpus()
    docs = [corpus.sentence() for _ in range(total)]
    db = workdir / f"s{total}.db"
    store = HybridStore(
        db, index={"dims": scale.DIMS, "embed": scale.HashEmbeddings(), "fields": ["text"]}
    )
    ns = ("bench", "u0")
    for start in range(0, total, 1000):
        store.batch(
            [PutOp(ns, f"m{i}", {"text": docs[i]}) for i in range(start, min(total, start + 1000))]
        )
    store.close()
    queries = [corpus.query(docs) for _ in range(300)]
    writes = [docs[(i * 7919) % total] + " again" for i in range(150)]
    return db, {"ns": ns, "queries": queries, "writes": writes, "total": total}


def scale_passes(db: Path, meta: dict[str, Any], tuning: StoreTuning) -> dict[str, list[float]]:
    """First pass, warm pass and agent loop on a fresh copy: [p50, p95] CPU ms each."""
    copy = db.with_name(f"copy-{time.monotonic_ns()}.db")
    shutil.copyfile(db, copy)
    emb = scale.HashEmbeddings()
    emb.prime(meta["queries"] + meta["writes"])
    ns, queries, total = meta["ns"], meta["queries"], meta["total"]
    store = HybridStore(
        copy, index={"dims": scale.DIMS, "embed": emb, "fields": ["text"]}, tuning=tuning
    )
    for q in queries[:5]:
        store.search(ns, query=q, limit=10)
    lat: dict[str, list[float]] = {"first": [], "warm": [], "loop": []}
    for label in ("first", "warm"):
        for q in queries:
            t0 = time.process_time()
            store.search(ns, query=q, limit=10)
            lat[label].append((time.process_time() - t0) * 1000)
    for j, text in enumerate(meta["writes"]):
        store.put(ns, f"new{j}" if j % 2 == 0 else f"m{(j * 31) % total}", {"text": text})
        t0 = time.process_time()
        store.search(ns, query=queries[j], limit=10)
        lat["loop"].append((time.process_time() - t0) * 1000)
    store.close()
    for path in copy.parent.glob(copy.name + "*"):
        path.unlink()
    return {k: [float(np.percentile(v, 50)), float(np.percentile(v, 95))] for k, v in lat.items()}


def run_scale(sizes: Sequence[int], names: Sequence[str], rounds: int) -> dict[str, Any]:
    """{size: {variant: {pass: [p50, p95]}}}, medians over the rounds."""
    tokenize("预热 jieba warm-up")
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for total in sizes:
            db, meta = _scale_store(total, Path(tmp))
            per: dict[str, list[dict[str, list[float]]]] = {n: [] for n in names}
            for r in range(rounds):
                for name in names if r % 2 == 0 else names[::-1]:
                    with variant(name) as tuning:
                        per[name].append(scale_passes(db, meta, tuning))
            out[str(total)] = {
                n: {k: [float(np.median([x[k][i] for x in v])) for i in (0, 1)] for k in v[0]}
                for n, v in per.items()
            }
    return out


def table(res: dict[str, Any]) -> str:
    """Markdown: each variant's figures and their ratio to the default's."""
    lines = [
        f"Machine: {res['machine']}. Command: `{res['command']}`. CPU ms, medians of {res['rounds']} rounds.",
        "",
    ]
    if "real" in res:
        real = res["real"]
        sets = list(real["default"]["store"])
        lines += ["| variant | " + " | ".join(f"store {s}" for s in sets) + " | " + " | ".join(f"loop {s}" for s in sets) + " |",
                  "|---|" + "---:|" * (2 * len(sets))]  # fmt: skip
        for n, v in real.items():
            cells = [
                f"{v[k][s]:.2f} ({v[k][s] / real['default'][k][s]:.2f}x)"
                for k in ("store", "loop")
                for s in sets
            ]
            lines.append(f"| {n} | " + " | ".join(cells) + " |")
        lines.append("")
    for size, vs in res.get("scale", {}).items():
        lines += [
            f"| {size} items: variant | first p50 / p95 | warm p50 / p95 | loop p50 / p95 |",
            "|---|---:|---:|---:|",
        ]
        base = vs["default"]
        for n, v in vs.items():
            cells = [
                f"{v[k][0]:.2f} / {v[k][1]:.2f} ({v[k][0] / base[k][0]:.2f}x / {v[k][1] / base[k][1]:.2f}x)"
                for k in ("first", "warm", "loop")
            ]
            lines.append(f"| {n} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", type=Path, default=Path("../shared/datasets"))
    ap.add_argument("--part", choices=["real", "scale", "both"], default="both")
    ap.add_argument("--sizes", default="10k,100k")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--variants", default=None, help="a comma list of " + ", ".join(VARIANTS))
    ap.add_argument("--smoke", action="store_true", help="a tiny run (tests)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--md", type=Path, default=None)
    args = ap.parse_args(argv)
    chosen = args.variants.split(",") if args.variants else None
    res: dict[str, Any] = {
        "machine": machine(),
        "command": command_line("layer_costs.py", argv),
        "rounds": args.rounds,
        "code": str(Path(__file__).resolve().parents[1]),
    }
    if args.part in ("real", "both"):
        res["real"] = run_real(args.data, chosen or REAL_DEFAULT, args.rounds, args.smoke)
    if args.part in ("scale", "both"):
        sizes = [int(s.replace("k", "000")) for s in args.sizes.split(",")]
        res["scale"] = run_scale(sizes, chosen or SCALE_DEFAULT, args.rounds)
    publish(res, table(res), args.out, args.md)
    return res


if __name__ == "__main__":
    main()
