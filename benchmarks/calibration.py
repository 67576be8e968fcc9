"""Calibration of the absolute relevance: relevant vs irrelevant hits by score, and the floor.

On the dev sets (LoCoMo: en; MADial-Bench: zh and en; `--data` is the datasets folder) every
question is asked against its own store (its gold turns are the relevant hits) and against
another conversation's or user's store, and a few questions written for this benchmark that
no store can answer are asked against every store (nothing there is relevant). For the top-10
hits of each it records `components["relevance"]` (and the final `score`) and whether the hit is
gold. It prints and writes (docs/results/calibration.{md,json}, docs/calibration_reliability.png):

* a reliability table per language: the share of hits that are relevant in each relevance bin;
* ROC AUC of relevance (and of the final score) separating relevant from irrelevant hits;
* the relevance floor: for each candidate floor, the share of turns with nothing relevant that
  still inject something (top `retrieval_limit` hits at or above the floor), and the share of
  the relevant hits injected without a floor that are still injected.

    python benchmarks/calibration.py --data ../shared/datasets
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import retrieval_quality as rq

RESULTS_DIR = Path(__file__).resolve().parent.parent / "docs" / "results"

from langmem_plus.config import MemoryConfig  # noqa: E402

K = 10
BINS = np.round(np.arange(0.0, 1.01, 0.1), 2)
FLOORS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
TARGET_KEPT = 0.95  # the floor keeps at least this share of today's relevant injections

# Questions no memory of these conversations answers (written for this benchmark).
UNRELATED = {
    "en": (
        "I'm writing OrderService and processOrder keeps throwing a TypeError, how do I debug it?",
        "What is the weather in Paris today?",
        "How do I convert a pandas DataFrame column to datetime?",
        "What's the capital of Australia?",
        "Explain the difference between TCP and UDP.",
        "How many grams of flour are in a cup?",
        "Can you recommend a good SQL index for a range query on timestamps?",
        "Why does my Kubernetes pod keep restarting with CrashLoopBackOff?",
    ),
    "zh": (
        "我在写 OrderService，processOrder 函数总是抛 TypeError，怎么排查？",
        "今天巴黎天气怎么样？",
        "pandas 怎么把一列转换成日期时间？",
        "澳大利亚的首都是哪里？",
        "TCP 和 UDP 有什么区别？",
        "一杯面粉大概多少克？",
        "Kubernetes 的 pod 一直 CrashLoopBackOff 是什么原因？",
        "Python 的 GIL 是什么？",
    ),
}


def _hits(system: rq.HybridSystem, query: str) -> list[tuple[str, float, float]]:
    """(key, relevance, score) of the query's top-K hits."""
    return [
        (h.key, float(h.components["relevance"]), float(h.score or 0.0))  # type: ignore[attr-defined]
        for h in system.store.search(system.ns, query=query, limit=K)
    ]


def collect(
    units: Sequence[rq.Unit], lang: str, emb: rq.CachedEmbeddings, config: MemoryConfig
) -> dict[str, list[dict[str, Any]]]:
    """Per turn: its hits (relevance, score, gold or not) and whether anything was relevant.

    `own`: questions against their own store; `other`: the next unit's questions against this
    store (another conversation / user); `unrelated`: the written off-topic questions."""
    out: dict[str, list[dict[str, Any]]] = {"own": [], "other": [], "unrelated": []}
    for i, unit in enumerate(units):
        system = rq.HybridSystem(config)
        system.build(unit, emb)
        other = units[(i + 1) % len(units)] if len(units) > 1 else None
        for q in unit.queries:
            hits = _hits(system, q.text)
            out["own"].append({"hits": [(r, s, k in q.gold) for k, r, s in hits]})
        for q in other.queries if other is not None else ():
            out["other"].append({"hits": [(r, s, False) for _k, r, s in _hits(system, q.text)]})
        for text in UNRELATED[lang]:
            out["unrelated"].append({"hits": [(r, s, False) for _k, r, s in _hits(system, text)]})
        system.close()
    return out


def auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """ROC AUC: the chance a relevant hit outscores an irrelevant one (ties count half)."""
    if not len(pos) or not len(neg):
        return float("nan")
    allv = np.concatenate([pos, neg])
    order = allv.argsort(kind="mergesort")
    ranks = np.empty(len(allv))
    sorted_v = allv[order]
    # average ranks over ties
    _, first, counts = np.unique(sorted_v, return_index=True, return_counts=True)
    avg = first + (counts - 1) / 2.0 + 1.0
    ranks[order] = np.repeat(avg, counts)
    r_pos = ranks[: len(pos)].sum()
    return float((r_pos - len(pos) * (len(pos) + 1) / 2.0) / (len(pos) * len(neg)))


def analyse(turns: dict[str, list[dict[str, Any]]], limit: int) -> dict[str, Any]:
    """Reliability bins, AUCs and the floor table of one language's turns."""
    all_hits = [h for kind in turns.values() for t in kind for h in t["hits"]]
    rel = np.array([h[0] for h in all_hits])
    score = np.array([h[1] for h in all_hits])
    gold = np.array([h[2] for h in all_hits], dtype=bool)
    idx = np.clip(np.digitize(rel, BINS[1:-1]), 0, len(BINS) - 2)
    bins = []
    for b in range(len(BINS) - 1):
        m = idx == b
        bins.append(
            {
                "lo": float(BINS[b]),
                "hi": float(BINS[b + 1]),
                "n": int(m.sum()),
                "relevant": int(gold[m].sum()),
                "share": float(gold[m].mean()) if m.any() else None,
            }
        )
    # nothing relevant: the store holds nothing that answers the question (another
    # conversation's / user's store, a written unrelated question); a question of the store's
    # own whose gold turns are not in the top 10 is a retrieval miss, counted apart (`own_miss`)
    empty = [t for kind in ("other", "unrelated") for t in turns[kind]]
    misses = [t for t in turns["own"] if not any(h[2] for h in t["hits"])]
    base_kept = sum(h[2] for t in turns["own"] for h in t["hits"][:limit])
    floors = []
    for f in FLOORS:
        inj = sum(any(h[0] >= f for h in t["hits"][:limit]) for t in empty)
        kept = sum(h[2] and h[0] >= f for t in turns["own"] for h in t["hits"][:limit])
        floors.append(
            {
                "floor": f,
                "nothing_relevant_injects": inj / max(1, len(empty)),
                "relevant_kept": kept / max(1, base_kept),
                "own_miss_injects": sum(any(h[0] >= f for h in t["hits"][:limit]) for t in misses)
                / max(1, len(misses)),
                **{
                    f"{kind}_injects": sum(any(h[0] >= f for h in t["hits"][:limit]) for t in ts)
                    / max(1, len(ts))
                    for kind, ts in turns.items()
                    if kind != "own"
                },
            }
        )
    return {
        "hits": len(all_hits),
        "relevant_hits": int(gold.sum()),
        "turns": {k: len(v) for k, v in turns.items()},
        "turns_nothing_relevant": len(empty),
        "turns_own_miss": len(misses),
        "auc_relevance": auc(rel[gold], rel[~gold]),
        "auc_score": auc(score[gold], score[~gold]),
        "auc_relevance_own_store": auc(
            *(
                np.array([h[0] for t in turns["own"] for h in t["hits"] if h[2] == want])
                for want in (True, False)
            )
        ),
        "bins": bins,
        "floors": floors,
    }


def choose_floor(results: dict[str, Any]) -> float:
    """The highest floor that keeps at least TARGET_KEPT of today's relevant injections in
    every language."""
    ok = [
        f
        for f in FLOORS
        if all(
            next(r for r in res["floors"] if r["floor"] == f)["relevant_kept"] >= TARGET_KEPT
            for res in results.values()
        )
    ]
    return max(ok) if ok else 0.0


def markdown(results: dict[str, Any], floor: float, limit: int) -> str:
    """The reliability, AUC and floor tables."""
    lines = ["| language | hits | relevant | ROC AUC relevance | ROC AUC score | AUC own store |"]
    lines.append("|---|---|---|---|---|---|")
    for lang, r in results.items():
        lines.append(
            f"| {lang} | {r['hits']} | {r['relevant_hits']} | {r['auc_relevance']:.3f} | "
            f"{r['auc_score']:.3f} | {r['auc_relevance_own_store']:.3f} |"
        )
    lines += ["", "Reliability (share of top-10 hits that are relevant, by relevance):", ""]
    langs = list(results)
    lines.append("| relevance | " + " | ".join(f"{lg} n | {lg} relevant" for lg in langs) + " |")
    lines.append("|---|" + "---|---|" * len(langs))
    for b in range(len(BINS) - 1):
        cells = []
        for lg in langs:
            row = results[lg]["bins"][b]
            share = "–" if row["share"] is None else f"{row['share']:.3f}"
            cells += [str(row["n"]), share]
        lo, hi = BINS[b], BINS[b + 1]
        lines.append(f"| [{lo:.1f}, {hi:.1f}) | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Relevance floor over the top {limit} (what is injected): share of turns with nothing "
        "relevant in the store that still inject something (all; another conversation's or "
        "user's store; a written unrelated question), and the share of the relevant hits "
        "injected without a floor that are kept:",
        "",
        "| floor | "
        + " | ".join(
            f"{lg} nothing relevant | {lg} other store | {lg} unrelated | {lg} kept" for lg in langs
        )
        + " |",
        "|---|" + "---|---|---|---|" * len(langs),
    ]
    for i, f in enumerate(FLOORS):
        cells = []
        for lg in langs:
            row = results[lg]["floors"][i]
            cells += [
                f"{row[k]:.3f}"
                for k in (
                    "nothing_relevant_injects",
                    "other_injects",
                    "unrelated_injects",
                    "relevant_kept",
                )
            ]
        mark = " **(default)**" if f == floor else ""
        lines.append(f"| {f:.2f}{mark} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(results: dict[str, Any], path: Path) -> None:
    """Reliability curves (share relevant by relevance bin) and hit counts, per language."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    mids = (BINS[:-1] + BINS[1:]) / 2
    for lang, r in results.items():
        share = [np.nan if b["share"] is None else b["share"] for b in r["bins"]]
        ax1.plot(mids, share, marker="o", label=f"{lang} (AUC {r['auc_relevance']:.2f})")
        ax2.bar(mids, [b["n"] for b in r["bins"]], width=0.08, alpha=0.5, label=lang)
    ax1.plot([0, 1], [0, 1], ls=":", color="grey", label="ideal")
    ax1.set(xlabel="relevance", ylabel="share of hits relevant", title="Reliability (top-10)")
    ax1.legend()
    ax2.set(xlabel="relevance", ylabel="hits", yscale="log", title="Hits per bin")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Command-line entry: collect, analyse, print and write the results."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=rq.DEFAULT_DATA, help="datasets folder")
    ap.add_argument("--smoke", action="store_true", help="one unit per set, a few questions")
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "calibration.json")
    ap.add_argument("--md", type=Path, default=RESULTS_DIR / "calibration.md")
    ap.add_argument("--plot", type=Path, default=RESULTS_DIR.parent / "calibration_reliability.png")
    args = ap.parse_args(argv)
    if not (args.data / "locomo").exists():
        raise SystemExit(f"no datasets at {args.data} (pass --data)")
    config = MemoryConfig()
    limit = config.recall.retrieval_limit
    emb = rq.CachedEmbeddings()
    max_q = 4 if args.smoke else None
    sets = {
        "en": [
            rq.load_locomo(args.data, 2 if args.smoke else None, max_q),
            rq.load_madial(args.data, "en", max_q),
        ],
        "zh": [rq.load_madial(args.data, "zh", max_q)],
    }
    results: dict[str, Any] = {}
    for lang, groups in sets.items():
        turns: dict[str, list[dict[str, Any]]] = {"own": [], "other": [], "unrelated": []}
        for units in groups:
            if args.smoke:
                units = units[:2]
            for kind, ts in collect(units, lang, emb, config).items():
                turns[kind] += ts
        results[lang] = analyse(turns, limit)
    floor = choose_floor(results)
    md = markdown(results, floor, limit)
    print(md)
    out = {"floor": floor, "limit": limit, "languages": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1), encoding="utf-8")
    args.md.write_text(md + "\n", encoding="utf-8")
    plot(results, args.plot)
    return out


if __name__ == "__main__":
    main()
