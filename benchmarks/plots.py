"""The docs' pictures, drawn from the benchmarks' results JSON (matplotlib, dev extra).

Each benchmark calls its writer after it writes its JSON; run this script alone to redraw
every picture from the JSON already in docs/results/ without rerunning a benchmark:

    python benchmarks/plots.py                     # all three, into docs/
    python benchmarks/plots.py --only retrieval    # one of retrieval, e2e, calibration

| picture | from | drawn by |
|---|---|---|
| docs/retrieval_quality.png | docs/results/retrieval_quality.json | `retrieval_quality` |
| docs/e2e_memory.png | docs/results/e2e_memory.json | `e2e_memory` |
| docs/calibration_reliability.png | docs/results/calibration.json | `calibration` |
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
DOCS = ROOT / "docs"

RETRIEVAL_SYSTEMS = {
    "hybrid": "HybridStore",
    "bm25": "BM25 (rank-bm25)",
    "dense": "dense (FAISS)",
    "rrf": "BM25 + dense, RRF",
    "inmemory": "LangGraph InMemoryStore",
}
RETRIEVAL_SETS = {"locomo": "LoCoMo", "madial_zh": "MADial zh", "madial_en": "MADial en"}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _legend_below(fig: Any, ax: Any, ncol: int) -> None:
    """One legend for the figure, under the panels (never over a bar)."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))


def _save(fig: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not fig.legends:
        fig.tight_layout()
    fig.savefig(path, dpi=90, metadata={"Software": None})  # no version stamp: stable bytes
    _pyplot().close(fig)
    return path


def _bars(ax: Any, groups: Sequence[str], series: dict[str, list[float]], label_fmt: str) -> None:
    """Grouped bars: one group per x label, one bar per series, each labelled."""
    n = max(1, len(series))
    width = 0.8 / n
    for i, (name, values) in enumerate(series.items()):
        xs = [g + (i - (n - 1) / 2) * width for g in range(len(groups))]
        bars = ax.bar(xs, values, width=width, label=name)
        ax.bar_label(bars, labels=[label_fmt.format(v) for v in values], fontsize=6, padding=1)
    ax.set_xticks(range(len(groups)), groups)


def retrieval_quality(data: dict[str, Any], path: Path) -> Path:
    """Per set, each system's any@5 (a question's evidence in the top 5) and MRR."""
    plt = _pyplot()
    sets = [s for s in RETRIEVAL_SETS if s in data["sets"]]
    systems = [s for s in RETRIEVAL_SYSTEMS if all(s in data["sets"][k]["systems"] for k in sets)]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, metric, title in (
        (axes[0], "any@5", "Evidence in the top 5 (any@5)"),
        (axes[1], "mrr", "Mean reciprocal rank"),
    ):
        series = {
            RETRIEVAL_SYSTEMS[s]: [data["sets"][k]["systems"][s][metric] for k in sets]
            for s in systems
        }
        _bars(ax, [RETRIEVAL_SETS[k] for k in sets], series, "{:.2f}")
        ax.set(ylim=(0, 1.05), title=title)
    queries = ", ".join(f"{RETRIEVAL_SETS[k]} {data['sets'][k]['queries']}" for k in sets)
    fig.suptitle(f"Retrieval quality by system and set (questions: {queries})", fontsize=10)
    _legend_below(fig, axes[0], len(systems))
    return _save(fig, path)


def e2e_memory(data: dict[str, Any], path: Path) -> Path:
    """The pipeline against the reference (every turn kept), overall and per question
    category: evidence recall and answers found in what would be injected."""
    plt = _pyplot()
    systems = {"pipeline": "pipeline (episodes + facts)", "reference": "every turn, verbatim"}
    metrics = {
        "evidence_recall": "evidence recall",
        "answer_all": "answer fully in context",
        "answer_share": "share of answer in context",
    }
    cats = sorted(data["systems"]["pipeline"].get("by_category", {}))
    fig, axes = plt.subplots(1, len(metrics), figsize=(13, 4), sharey=True)
    for ax, (metric, title) in zip(axes, metrics.items(), strict=True):
        series = {}
        for key, label in systems.items():
            sysd = data["systems"][key]
            series[label] = [sysd[metric]] + [sysd["by_category"][c][metric] for c in cats]
        _bars(ax, ["all", *cats], series, "{:.2f}")
        ax.set(ylim=(0, 1.05), title=title)
        ax.tick_params(axis="x", labelrotation=20, labelsize=8)
    fig.suptitle(
        f"End-to-end memory, {data['set']} ({data['conversations']} conversations, "
        f"{data['systems']['pipeline']['questions']} questions)",
        fontsize=10,
    )
    _legend_below(fig, axes[0], len(systems))
    return _save(fig, path)


def calibration(data: dict[str, Any], path: Path) -> Path:
    """Reliability curves (share of hits relevant per relevance bin), today and with the
    relevance judgement, and hits per bin, per language."""
    plt = _pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for lang, r in data["languages"].items():
        for key, style, label in (("bins_today", ":", "today"), ("bins", "-", "judgement")):
            mids = [(b["lo"] + b["hi"]) / 2 for b in r[key]]
            share = [math.nan if b["share"] is None else b["share"] for b in r[key]]
            auc = r["auc_today" if key == "bins_today" else "auc_judgement"]["hits"]
            ax1.plot(mids, share, ls=style, marker="o", label=f"{lang} {label} (AUC {auc:.2f})")
        mids = [(b["lo"] + b["hi"]) / 2 for b in r["bins"]]
        ax2.bar(mids, [b["n"] for b in r["bins"]], width=0.08, alpha=0.5, label=lang)
    ax1.plot([0, 1], [0, 1], ls="--", color="grey", label="ideal")
    ax1.set(xlabel="relevance", ylabel="share of hits relevant", title="Reliability (top-10)")
    ax1.legend(fontsize=7)
    ax2.set(xlabel="relevance (judgement)", ylabel="hits", yscale="log", title="Hits per bin")
    ax2.legend()
    return _save(fig, path)


PLOTS: dict[str, tuple[Callable[[dict[str, Any], Path], Path], str, str]] = {
    "retrieval": (retrieval_quality, "retrieval_quality.json", "retrieval_quality.png"),
    "e2e": (e2e_memory, "e2e_memory.json", "e2e_memory.png"),
    "calibration": (calibration, "calibration.json", "calibration_reliability.png"),
}


def draw(name: str, results: Path = RESULTS, out_dir: Path = DOCS) -> Path:
    """Draw picture `name` (a key of `PLOTS`) from its JSON under `results` into `out_dir`."""
    writer, source, target = PLOTS[name]
    data = json.loads((results / source).read_text(encoding="utf-8"))
    return writer(data, out_dir / target)


def main(argv: Sequence[str] | None = None) -> list[Path]:
    """Redraw the pictures from the results JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=sorted(PLOTS), action="append")
    ap.add_argument("--results", type=Path, default=RESULTS, help="folder of the JSON")
    ap.add_argument("--out", type=Path, default=DOCS, help="folder of the pictures")
    args = ap.parse_args(argv)
    drawn = [draw(name, args.results, args.out) for name in (args.only or PLOTS)]
    for p in drawn:
        print(p)
    return drawn


if __name__ == "__main__":
    main()
