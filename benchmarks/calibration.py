"""Calibration of the absolute relevance, the relevance judgement and the relevance floor.

Every dev question (LoCoMo and MADial-Bench en: "en"; MADial-Bench zh: "zh") is asked against
its own store (its gold turns are the relevant hits), against another conversation's or
user's store, and questions written for this benchmark that no store answers are asked
against every store. Beside them (benchmarks/calibration_sets.py): MemoryBank-cn's labelled
probing questions (zh) and MemoryBank-en's unlabelled ones (short first-person questions, no
names), and MADial with the users' names masked (what the middleware sees: no speaker label).

For each question the top-10 hits' standing (relevance / the query's scale) and gold flags and
the relevance judgement's features (langmem_plus/store/judgement.py) are recorded once;
any scale S gives relevance = standing × S, so "today" (S = the best candidate's evidence,
floor 0.10) and the judgement are compared on the same searches. It fits the judgement
(benchmarks/calibration_fit.py) two ways, on each half of the data (tuned) and measured on the
other (held out), and on all of it (the shipped constants); prints and writes
docs/results/calibration.{md,json} and docs/calibration_reliability.png (with --out elsewhere, the
picture only where --plot says, so a trial run leaves the docs' figure alone). With --fit it writes
the all-data fit and its floor to langmem_plus/data/relevance_judgement.json (refit after any
change to the ranking or the embeddings).

    python benchmarks/calibration.py --data ../shared/datasets [--fit]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import calibration_fit as cf
import calibration_sets as cs
import plots
import retrieval_quality as rq
from _overrides import Overrides

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "docs" / "results"
JUDGEMENT_FILE = ROOT / "langmem_plus" / "data" / "relevance_judgement.json"

from langmem_plus.config import MemoryConfig  # noqa: E402
from langmem_plus.embeddings import USE_MODEL_NAME  # noqa: E402
from langmem_plus.store.ranking.floor import DEFAULT_FLOOR, feedback_only  # noqa: E402
from langmem_plus.store.ranking.judgement import load_judgements  # noqa: E402

K = 10
BINS = np.round(np.arange(0.0, 1.01, 0.1), 2)
FLOORS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
UNRELATED = cs.UNRELATED
# the sets whose figures make a language's headline (the dev data)
HEADLINE = {"en": ("locomo", "madial_en"), "zh": ("madial_zh",)}
SplitOf = Callable[[int, int], int]  # (store index, question index) -> half


def _by_store(store: int, _question: int) -> int:
    return store % 2


def _by_question(_store: int, question: int) -> int:
    return question % 2


def _turn(system: rq.HybridSystem, query: str, gold: frozenset[str], **kw: Any) -> cf.Turn:
    """One question's top-K hits on one store, as a `Turn`."""
    hits = system.store.search(system.ns, query=query, limit=K)
    comps = [h.components for h in hits]  # type: ignore[attr-defined]
    scale = float(comps[0]["query_evidence"]) if comps else 1.0
    feats = [float(comps[0][f]) if comps else 0.0 for f in cf.FEATURES]
    return cf.Turn(
        standing=np.array([c["relevance"] / scale if scale > 0 else 0.0 for c in comps]),
        gold=np.array([h.key in gold for h in hits], dtype=bool),
        feedback_only=np.array([feedback_only(c) for c in comps], dtype=bool),
        evidence=np.array([float(c["evidence"]) for c in comps]),
        features=np.array(feats),
        shipped_scale=scale,
        **kw,
    )


def collect(
    units: Sequence[rq.Unit],
    name: str,
    lang: str,
    emb: rq.CachedEmbeddings,
    config: MemoryConfig,
    split_of: SplitOf,
    *,
    labelled: bool = True,
    names_subject: bool = True,
) -> list[cf.Turn]:
    """Every unit's own questions, the next unit's questions (another conversation / user)
    and the written unrelated questions, against the unit's store."""
    out: list[cf.Turn] = []
    for i, unit in enumerate(units):
        system = rq.HybridSystem(Overrides(config))
        system.build(unit, emb)
        other = units[(i + 1) % len(units)] if len(units) > 1 else None
        common = {"set": name, "lang": lang, "labelled": labelled}
        for j, q in enumerate(unit.queries):
            out.append(_turn(system, q.text, q.gold, kind="own", split=split_of(i, j), **common))
        for j, q in enumerate(other.queries if other is not None else ()):
            split = split_of(i, j)
            out.append(
                _turn(system, q.text, frozenset(), kind="other", split=split,
                      names_subject=names_subject, **common)
            )  # fmt: skip
        for j, text in enumerate(UNRELATED[lang]):
            split = split_of(i, j) if split_of is _by_store else j % 2
            out.append(_turn(system, text, frozenset(), kind="unrelated", split=split, **common))
        system.close()
    return out


def load_all(data: Path, emb: rq.CachedEmbeddings, config: MemoryConfig, smoke: bool) -> list:
    """Every set's turns (smoke: two stores of each, a few questions)."""
    max_q = 4 if smoke else None

    def few(units: list[rq.Unit]) -> list[rq.Unit]:
        return units[:2] if smoke else units

    madial = {lang: rq.load_madial(data, lang, max_q) for lang in ("en", "zh")}
    turns: list[cf.Turn] = []
    turns += collect(few(rq.load_locomo(data, 2 if smoke else None, max_q)), "locomo", "en",
                     emb, config, _by_store)  # fmt: skip
    for lang in ("en", "zh"):
        turns += collect(madial[lang], f"madial_{lang}", lang, emb, config, _by_question)
    turns += collect(few(cs.load_memorybank_cn(data, max_q)), "memorybank_cn", "zh", emb,
                     config, _by_store, names_subject=False)  # fmt: skip
    turns += collect(few(cs.load_memorybank_en(data, max_q)), "memorybank_en", "en", emb,
                     config, _by_store, labelled=False, names_subject=False)  # fmt: skip
    for lang in ("en", "zh"):
        turns += collect(cs.masked(madial[lang], lang), f"madial_{lang}_masked", lang, emb,
                         config, _by_question, names_subject=False)  # fmt: skip
    return turns


# ============================================================================ analysis
def scales(turns: Sequence[cf.Turn], model: tuple[np.ndarray, float] | None) -> np.ndarray:
    """Each turn's scale: the judgement's, or today's (the best candidate's evidence)."""
    if model is None:
        return np.array([t.features[0] for t in turns])
    feats = np.array([t.features for t in turns]).reshape(len(turns), len(cf.FEATURES))
    return cf.scale_of(model[0], model[1], feats)


def _pick(turns: Sequence[cf.Turn], s: np.ndarray, sets: Sequence[str], split: int | None):
    idx = [i for i, t in enumerate(turns) if t.set in sets and split in (None, t.split)]
    return [turns[i] for i in idx], s[idx]


def summary(turns: Sequence[cf.Turn], s: np.ndarray, floor: float, split: int | None) -> dict:
    """Headline figures per language and figures per set at one floor."""
    out: dict[str, Any] = {}
    limit = LIMIT[0]
    for lang, sets in HEADLINE.items():
        out[lang] = vars(cf.figures(*_pick(turns, s, sets, split), floor, limit))
    for name in sorted({t.set for t in turns}):
        out[name] = vars(cf.figures(*_pick(turns, s, (name,), split), floor, limit))
    return out


def aucs(turns: Sequence[cf.Turn], s: np.ndarray, sets: Sequence[str]) -> dict[str, float]:
    """ROC AUC of the relevance over every top-10 hit (relevant vs not), over the own
    store's hits only, and of the scale over questions (store holds it vs nothing)."""
    sel, sc = _pick(turns, s, sets, None)
    rel = np.concatenate([t.standing * v for t, v in zip(sel, sc, strict=True)] or [[]])
    gold = np.concatenate([t.gold for t in sel] or [[]]).astype(bool)
    own = np.concatenate([np.full(len(t.gold), t.kind == "own") for t in sel] or [[]]).astype(bool)
    lab = [(t.label(LIMIT[0]), v) for t, v in zip(sel, sc, strict=True)]
    return {
        "hits": cf.auc(rel[gold], rel[~gold]),
        "own_store_hits": cf.auc(rel[gold & own], rel[~gold & own]),
        "questions": cf.auc(
            np.array([v for y, v in lab if y == 1.0]), np.array([v for y, v in lab if y == 0.0])
        ),
    }


def bins(turns: Sequence[cf.Turn], s: np.ndarray, sets: Sequence[str]) -> list[dict]:
    """The share of top-10 hits that are relevant, by relevance bin."""
    sel, sc = _pick(turns, s, sets, None)
    rel = np.concatenate([t.standing * v for t, v in zip(sel, sc, strict=True)] or [[]])
    gold = np.concatenate([t.gold for t in sel] or [[]]).astype(bool)
    idx = np.clip(np.digitize(rel, BINS[1:-1]), 0, len(BINS) - 2)
    out = []
    for b in range(len(BINS) - 1):
        m = idx == b
        share = float(gold[m].mean()) if m.any() else None
        out.append({"lo": float(BINS[b]), "hi": float(BINS[b + 1]), "n": int(m.sum()),
                    "relevant": int(gold[m].sum()), "share": share})  # fmt: skip
    return out


LIMIT = [5]  # what is injected: MemoryConfig.recall.retrieval_limit (set in main)
DROP: list[str] = []  # features left out of the fits (--drop)


def fold(turns: Sequence[cf.Turn], tune: int | None) -> dict[str, Any]:
    """Fit and choose the floor on one half (None: all), report both halves."""
    fit_on = [t for t in turns if tune in (None, t.split)]
    coef, b = cf.fit(fit_on, LIMIT[0], DROP)
    s_fit = scales(fit_on, (coef, b))
    floor = cf.choose_floor(fit_on, s_fit, LIMIT[0])
    s = scales(turns, (coef, b))
    res: dict[str, Any] = {"coefficients": coef.tolist(), "intercept": b, "floor": floor}
    if tune is None:
        res["all"] = summary(turns, s, floor, None)
    else:
        res["tuned"] = summary(turns, s, floor, tune)
        res["held_out"] = summary(turns, s, floor, 1 - tune)
    return res


def _floor_row(sel: Sequence[cf.Turn], sc: np.ndarray, floor: float) -> dict[str, float]:
    got = cf.figures(sel, sc, floor, LIMIT[0])
    return {"floor": floor, **vars(got), "relevant_kept": got.kept}


def analyse(turns: Sequence[cf.Turn]) -> dict[str, Any]:
    """Today's figures, the two folds, the all-data fit and the shipped judgement."""
    today = scales(turns, None)
    shipped = load_judgements().get(USE_MODEL_NAME)
    out: dict[str, Any] = {
        "today": {"floor": DEFAULT_FLOOR, **summary(turns, today, DEFAULT_FLOOR, None)}
    }
    out["folds"] = {"tune_even": fold(turns, 0), "tune_odd": fold(turns, 1)}
    out["fit_all"] = fold(turns, None)
    if shipped is not None:
        model = (np.array(shipped.coefficients), shipped.intercept)
        s = scales(turns, model)
        out["shipped"] = {"coefficients": list(shipped.coefficients),
                          "intercept": shipped.intercept, "floor": shipped.floor,
                          **summary(turns, s, shipped.floor, None)}  # fmt: skip
    else:
        s = scales(turns, (np.array(out["fit_all"]["coefficients"]), out["fit_all"]["intercept"]))
    out["per_set_floors"] = [
        {"floor": f, **summary(turns, s, f, None)} for f in (0.1, 0.15, 0.2, 0.25, 0.3, 0.36, 0.4)
    ]
    out["languages"] = {}
    for lang, sets in HEADLINE.items():
        floor = out.get("shipped", out["fit_all"])["floor"]
        sel, sc = _pick(turns, s, sets, None)
        out["languages"][lang] = {
            "hits": int(sum(len(t.gold) for t in sel)),
            "relevant_hits": int(sum(int(t.gold.sum()) for t in sel)),
            "auc_today": aucs(turns, today, sets),
            "auc_judgement": aucs(turns, s, sets),
            "auc_relevance": aucs(turns, s, sets)["hits"],
            "bins": bins(turns, s, sets),
            "bins_today": bins(turns, today, sets),
            "floors": [_floor_row(sel, sc, f) for f in sorted({*FLOORS, floor})],
        }
    return out


# ============================================================================ report
def _f(x: float | None) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _headline_cells(res: dict[str, Any]) -> list[str]:
    cells = []
    for lang in HEADLINE:
        r = res[lang]
        cells += [_f(r[k]) for k in ("nothing_injects", "other_injects", "unrelated_injects")]
        cells.append(_f(r["kept"]))
    return cells


def markdown(out: dict[str, Any]) -> str:
    """The report's tables."""
    shipped = out.get("shipped", out["fit_all"])
    lines = [
        "Turns with nothing relevant in the store that still inject something (all; another "
        "conversation's or user's store; a written unrelated question) and the share of the "
        f"relevant hits injected without a floor that are kept (top {LIMIT[0]}), on the issue's "
        "dev data (en: LoCoMo + MADial-Bench en; zh: MADial-Bench zh):",
        "",
        "| scale, floor | en nothing relevant | en other store | en unrelated | en kept "
        "| zh nothing relevant | zh other store | zh unrelated | zh kept |",
        "|---|" + "---|" * 8,
        f"| today: best evidence, {out['today']['floor']:.2f} | "
        + " | ".join(_headline_cells(out["today"]))
        + " |",
        f"| judgement (shipped), {shipped['floor']:.2f} | "
        + " | ".join(_headline_cells(shipped.get("all", shipped)))
        + " |",
        "",
        "Tuned and held out: the judgement fitted and its floor chosen on one half (LoCoMo and "
        "MemoryBank by conversation / user parity, MADial by dialogue parity, unrelated questions "
        "by their parity), measured on both:",
        "",
        "| fitted on | floor | measured on | en nothing relevant | en kept | zh nothing relevant "
        "| zh kept | MemoryBank-cn kept | MemoryBank-en own questions inject |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, f in out["folds"].items():
        for part in ("tuned", "held_out"):
            r = f[part]
            lines.append(
                f"| {name.replace('_', ' ')} | {f['floor']:.2f} | {part.replace('_', ' ')} | "
                f"{_f(r['en']['nothing_injects'])} | {_f(r['en']['kept'])} | "
                f"{_f(r['zh']['nothing_injects'])} | {_f(r['zh']['kept'])} | "
                f"{_f(r.get('memorybank_cn', {}).get('kept'))} | "
                f"{_f(r.get('memorybank_en', {}).get('own_injects'))} |"
            )
    a = out["fit_all"]
    lines += [
        f"| all data | {a['floor']:.2f} | all | {_f(a['all']['en']['nothing_injects'])} | "
        f"{_f(a['all']['en']['kept'])} | {_f(a['all']['zh']['nothing_injects'])} | "
        f"{_f(a['all']['zh']['kept'])} | {_f(a['all'].get('memorybank_cn', {}).get('kept'))} | "
        f"{_f(a['all'].get('memorybank_en', {}).get('own_injects'))} |",
        "",
        "ROC AUC, today -> the judgement: relevance of every top-10 hit (relevant vs not), of "
        "the own store's hits only, and the scale of each question (the store holds a gold hit "
        "in the top 5 vs another store's named subject or an unrelated question):",
        "",
        "| language | hits | relevant | all hits | own-store hits | questions |",
        "|---|---|---|---|---|---|",
    ]
    for lang, r in out["languages"].items():
        t, j = r["auc_today"], r["auc_judgement"]
        lines.append(
            f"| {lang} | {r['hits']} | {r['relevant_hits']} | "
            + " | ".join(
                f"{_f(t[k])} -> {_f(j[k])}" for k in ("hits", "own_store_hits", "questions")
            )
            + " |"
        )
    lines += [
        "",
        "Every set, today -> the shipped judgement (MemoryBank-cn: labelled, zh; MemoryBank-en: "
        "unlabelled probing questions; *_masked: MADial with the users' names masked, a stress "
        "set whose other-store questions name no one):",
        "",
        "| set | kept | own questions inject | other store injects | unrelated inject |",
        "|---|---|---|---|---|",
    ]
    now = shipped.get("all", shipped)
    for name in sorted(k for k in now if k not in HEADLINE and isinstance(now[k], dict)):
        t, j = out["today"][name], now[name]
        lines.append(
            f"| {name} | "
            + " | ".join(
                f"{_f(t[k])} -> {_f(j[k])}"
                for k in ("kept", "own_injects", "other_injects", "unrelated_injects")
            )
            + " |"
        )
    langs = list(out["languages"])
    lines += [
        "",
        "The shipped judgement's floor table (the default is marked):",
        "",
        "| floor | "
        + " | ".join(
            f"{lg} nothing relevant | {lg} other store | {lg} unrelated | {lg} kept" for lg in langs
        )
        + " |",
        "|---|" + "---|---|---|---|" * len(langs),
    ]
    for i, row in enumerate(out["languages"][langs[0]]["floors"]):
        cells = []
        for lg in langs:
            r = out["languages"][lg]["floors"][i]
            cells += [
                _f(r[k]) for k in ("nothing_injects", "other_injects", "unrelated_injects", "kept")
            ]
        mark = " **(default)**" if abs(row["floor"] - shipped["floor"]) < 1e-9 else ""
        lines.append(f"| {row['floor']:.2f}{mark} | " + " | ".join(cells) + " |")
    sets = [k for k in now if k not in HEADLINE and isinstance(now[k], dict)]
    lines += [
        "",
        "Each set at other floors with the shipped judgement (nothing relevant injects / "
        "relevant kept; MemoryBank-en: own questions that inject):",
        "",
        "| floor | " + " | ".join(sorted(sets)) + " |",
        "|---|" + "---|" * len(sets),
    ]
    for row in out["per_set_floors"]:
        cells = [
            f"{_f(row[n]['nothing_injects'])} / "
            + _f(row[n]["own_injects"] if n == "memorybank_en" else row[n]["kept"])
            for n in sorted(sets)
        ]
        lines.append(f"| {row['floor']:.2f} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Reliability: the share of top-10 hits that are relevant, by relevance (today -> the "
        "judgement):",
        "",
        "| relevance | " + " | ".join(f"{lg} n | {lg} relevant" for lg in langs) + " |",
        "|---|" + "---|---|" * len(langs),
    ]
    for b in range(len(BINS) - 1):
        cells = []
        for lg in langs:
            t, j = out["languages"][lg]["bins_today"][b], out["languages"][lg]["bins"][b]
            cells += [f"{t['n']} -> {j['n']}", f"{_f(t['share'])} -> {_f(j['share'])}"]
        lines.append(f"| [{BINS[b]:.1f}, {BINS[b + 1]:.1f}) | " + " | ".join(cells) + " |")
    lines += ["", "Coefficients (" + ", ".join(cf.FEATURES) + "; intercept):", ""]
    for name, f in [*out["folds"].items(), ("all data", out["fit_all"]), ("shipped", shipped)]:
        coef = ", ".join(f"{c:.3f}" for c in f["coefficients"])
        lines.append(f"- {name}: {coef}; {f['intercept']:.3f}; floor {f['floor']:.2f}")
    return "\n".join(lines)


def write_judgement(fitted: dict[str, Any], path: Path = JUDGEMENT_FILE) -> None:
    """The all-data fit as the shipped judgement of the bundled USE embeddings."""
    data = json.loads(path.read_text("utf-8")) if path.exists() else {"models": {}}
    data["models"][USE_MODEL_NAME] = {
        "features": list(cf.FEATURES),
        "coefficients": [round(c, 4) for c in fitted["coefficients"]],
        "intercept": round(fitted["intercept"], 4),
        "floor": fitted["floor"],
    }
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Command-line entry: collect, fit, analyse, print and write the results."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=rq.DEFAULT_DATA, help="datasets folder")
    ap.add_argument("--smoke", action="store_true", help="two stores per set, a few questions")
    ap.add_argument(
        "--fit", action="store_true", help=f"write the all-data fit to {JUDGEMENT_FILE.name}"
    )
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "calibration.json")
    ap.add_argument("--md", type=Path, default=RESULTS_DIR / "calibration.md")
    ap.add_argument("--plot", type=Path, default=None,
                    help="draw the reliability picture here (default: the docs' figure, "
                         "docs/calibration_reliability.png, when --out is the docs' file)")  # fmt: skip
    ap.add_argument("--drop", action="append", default=[], choices=cf.FEATURES,
                    help="leave a feature out of the fits (its coefficient 0)")  # fmt: skip
    ap.add_argument("--turns", type=Path, help="cache of the collected turns (JSON)")
    args = ap.parse_args(argv)
    DROP[:] = args.drop
    if not (args.data / "locomo").exists():
        raise SystemExit(f"no datasets at {args.data} (pass --data)")
    config = MemoryConfig()
    LIMIT[0] = config.recall.retrieval_limit
    if args.turns is not None and args.turns.exists():
        turns = cf.turns_from_json(json.loads(args.turns.read_text(encoding="utf-8")))
    else:
        turns = load_all(args.data, rq.CachedEmbeddings(), config, args.smoke)
        if args.turns is not None:
            args.turns.write_text(json.dumps(cf.turns_to_json(turns)), encoding="utf-8")
    if args.fit:
        write_judgement(fold(turns, None))
        load_judgements.cache_clear()
    out = {"limit": LIMIT[0], "k": K, **analyse(turns)}
    md = markdown(out)
    print(md)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1), encoding="utf-8")
    args.md.write_text(md + "\n", encoding="utf-8")
    plot = args.plot
    if plot is None and args.out == RESULTS_DIR / "calibration.json":
        plot = RESULTS_DIR.parent / "calibration_reliability.png"
    if plot is not None:
        plots.calibration(out, plot)
    return out


if __name__ == "__main__":
    main()
