"""Fitting the relevance judgement (langmem_plus/store/judgement.py) and choosing its floor.

Used by benchmarks/calibration.py. A turn is one question asked against one store: its top
hits' standing (relevance / the query's scale: how each hit stands against the query's best)
and whether each is gold, and the judgement's features (the same for every hit of the turn,
read from the hits' components). Any scale S puts the hits' relevance at standing × S, so
every figure here is computed for a candidate scale without searching again.

Labels (query level): a question of the store's own whose gold turn is in the injected top
hits is positive (MemoryBank-en's unlabelled probing questions: every one asked of its own
store); a question asked of another conversation's or user's store where the question names
its subject (LoCoMo, MADial as loaded: a person the store never mentions) and a written
unrelated question are negative. Another store's question that names no one (MemoryBank, the
name-masked MADial stress set) is no clean negative (users share topics) and is left out, as
is a question of the own store whose gold turn is missed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

FEATURES = ("best_evidence", "best_cosine", "unseen_names")
# the sign a feature's coefficient may take (0: either): more evidence, a higher cosine never
# lower the judgement; a name the store never saw never raises it
SIGNS = (1, 1, -1)
L2 = 1.0  # ridge penalty on the coefficients (not the intercept)
UNRELATED_WEIGHT = 3.0  # written unrelated questions: the negatives a user meets most
TARGET_KEPT = 0.95
FLOOR_GRID = tuple(round(0.01 * i, 2) for i in range(1, 91))


@dataclass
class Turn:
    """One question against one store (see the module docstring)."""

    set: str
    lang: str
    kind: str  # own | other | unrelated
    split: int  # 0 or 1: the half of the data it belongs to
    standing: np.ndarray  # of the top hits, best first by score
    gold: np.ndarray  # bool, aligned with standing
    features: np.ndarray  # FEATURES
    shipped_scale: float  # the scale the store gave it (components["query_evidence"])
    labelled: bool = True  # own questions: gold known
    names_subject: bool = True  # an `other` question that names the person it asks about
    extra: dict[str, float] = field(default_factory=dict)
    # hits ranked by feedback terms alone (floor.feedback_only): never injected
    feedback_only: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    # each hit's own evidence (components["evidence"]): a hit without any is never injected
    # (floor.no_evidence); empty in a cache written before it was recorded
    evidence: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def injectable(self, limit: int) -> np.ndarray:
        """Which of the top `limit` hits the floor may inject at all (bool): none ranked by
        feedback terms alone, none without evidence of its own."""
        n = len(self.standing[:limit])
        ok = np.ones(n, dtype=bool)
        fb = self.feedback_only[:limit]
        if len(fb) == n:
            ok &= ~fb
        ev = self.evidence[:limit]
        if len(ev) == n:
            ok &= ev > 0
        return ok

    def label(self, limit: int) -> float | None:
        """1: the store holds something relevant; 0: nothing; None: not used for fitting."""
        if self.kind == "own":
            if not self.labelled:
                return 1.0
            return 1.0 if self.gold[:limit].any() else None
        if self.kind == "other" and not self.names_subject:
            return None
        return 0.0


ARRAY_FIELDS = ("standing", "gold", "features", "feedback_only", "evidence")


def turns_to_json(turns: Iterable[Turn]) -> list[dict[str, Any]]:
    """Plain JSON rows of turns (a cache of the searches that runs no code when read)."""
    return [
        {k: (v.tolist() if k in ARRAY_FIELDS else v) for k, v in asdict(t).items()} for t in turns
    ]


def turns_from_json(rows: Iterable[dict[str, Any]]) -> list[Turn]:
    """The turns written by turns_to_json."""
    return [
        Turn(
            **{
                **row,
                "standing": np.asarray(row["standing"], dtype=float),
                "gold": np.asarray(row["gold"], dtype=bool),
                "feedback_only": np.asarray(row.get("feedback_only", ()), dtype=bool),
                "evidence": np.asarray(row.get("evidence", ()), dtype=float),
                "features": np.asarray(row["features"], dtype=float),
            }
        )
        for row in rows
    ]


def scale_of(coef: np.ndarray, intercept: float, feats: np.ndarray) -> np.ndarray:
    """The judgement's scale for rows of features (as store/ranking/judgement.py computes it)."""
    z = feats @ coef + intercept
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # the logistic function, overflow-free


def _weights(turns: Sequence[Turn]) -> np.ndarray:
    """Each (set, kind) group weighs the same in total (unrelated groups UNRELATED_WEIGHT
    times), whatever its size; normalised to a mean of 1."""
    count: dict[tuple[str, str], int] = {}
    for t in turns:
        count[(t.set, t.kind)] = count.get((t.set, t.kind), 0) + 1
    w = np.array(
        [
            (UNRELATED_WEIGHT if t.kind == "unrelated" else 1.0) / count[(t.set, t.kind)]
            for t in turns
        ]
    )
    return w * (len(w) / w.sum())


def _irls(x: np.ndarray, y: np.ndarray, w: np.ndarray, active: list[int]) -> np.ndarray:
    """Weighted ridge logistic regression on the `active` columns (Newton steps)."""
    x1 = np.hstack([x[:, active], np.ones((len(x), 1))])
    beta = np.zeros(x1.shape[1])
    ridge = L2 * np.diag(np.r_[np.ones(len(active)), 0.0])
    for _ in range(100):
        p = scale_of(beta[:-1], beta[-1], x1[:, :-1])
        grad = x1.T @ (w * (p - y)) + ridge @ beta
        hess = (x1 * (w * p * (1 - p))[:, None]).T @ x1 + ridge
        step = np.linalg.solve(hess, grad)
        beta -= step
        if float(np.abs(step).max()) < 1e-10:
            break
    return beta


def fit(turns: Sequence[Turn], limit: int, drop: Sequence[str] = ()) -> tuple[np.ndarray, float]:
    """(coefficients over FEATURES, intercept) fitted on the labelled turns; a coefficient
    whose sign goes against SIGNS is held at 0 and the rest refitted, as is every feature in
    `drop`."""
    used = [t for t in turns if t.label(limit) is not None]
    x = np.array([t.features for t in used])
    y = np.array([t.label(limit) for t in used], dtype=float)
    w = _weights(used)
    active = [i for i, f in enumerate(FEATURES) if f not in drop]
    while True:
        beta = _irls(x, y, w, active)
        wrong = [a for a, b in zip(active, beta[:-1], strict=True) if SIGNS[a] * b < 0]
        if not wrong:
            break
        active = [a for a in active if a not in wrong]
    coef = np.zeros(len(FEATURES))
    coef[active] = beta[:-1]
    return coef, float(beta[-1])


@dataclass(frozen=True)
class Figures:
    """What a floor does to a group of turns (NaN where the group has none of a kind)."""

    kept: float  # relevant hits injected / relevant hits injected without a floor
    own_injects: float  # own questions that inject something
    nothing_injects: float  # other + unrelated questions that inject something
    other_injects: float
    unrelated_injects: float
    turns: int


def _share(flags: list[bool]) -> float:
    return sum(flags) / len(flags) if flags else math.nan


def figures(turns: Iterable[Turn], scales: Iterable[float], floor: float, limit: int) -> Figures:
    """The floor's effect when each turn's hits have relevance standing × its scale."""
    rel_kept = rel_all = 0
    inject: dict[str, list[bool]] = {"own": [], "other": [], "unrelated": []}
    n = 0
    for t, s in zip(turns, scales, strict=True):
        n += 1
        top = (t.standing[:limit] * s >= floor - 1e-12) & t.injectable(limit)
        inject[t.kind].append(bool(top.any()))
        g = t.gold[:limit]
        rel_all += int(g.sum())
        rel_kept += int((g & top).sum())
    return Figures(
        kept=rel_kept / rel_all if rel_all else math.nan,
        own_injects=_share(inject["own"]),
        nothing_injects=_share(inject["other"] + inject["unrelated"]),
        other_injects=_share(inject["other"]),
        unrelated_injects=_share(inject["unrelated"]),
        turns=n,
    )


# The floor keeps >= TARGET_KEPT of the relevant injections of each of these sets (labelled:
# relevant hits; MemoryBank-en, unlabelled: its questions that inject something). Set by set,
# not pooled by language: a pooled rule let LoCoMo's many questions carry a floor that kept
# 0.78 of MADial-en's and 0.90 of MemoryBank-cn's relevant injections, and dropped the demo's
# "Where do I live these days?" -> "User lives in Shanghai".
FLOOR_GROUPS: tuple[tuple[str, ...], ...] = (
    ("locomo",),
    ("madial_en",),
    ("madial_zh",),
    ("memorybank_cn",),
    ("memorybank_en",),
)


def choose_floor(turns: Sequence[Turn], scales: np.ndarray, limit: int) -> float:
    """The highest floor on FLOOR_GRID that keeps >= TARGET_KEPT in every FLOOR_GROUPS group
    (0 when none does)."""
    best = 0.0
    for floor in FLOOR_GRID:
        ok = True
        for sets in FLOOR_GROUPS:
            idx = [i for i, t in enumerate(turns) if t.set in sets]
            if not idx:
                continue
            got = figures([turns[i] for i in idx], scales[idx], floor, limit)
            value = got.own_injects if sets == ("memorybank_en",) else got.kept
            ok &= value >= TARGET_KEPT
        if ok:
            best = floor
    return best


def auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """ROC AUC: the chance a positive outscores a negative (ties count half)."""
    if not len(pos) or not len(neg):
        return math.nan
    allv = np.concatenate([pos, neg])
    order = allv.argsort(kind="mergesort")
    ranks = np.empty(len(allv))
    _, first, counts = np.unique(allv[order], return_index=True, return_counts=True)
    ranks[order] = np.repeat(first + (counts - 1) / 2.0 + 1.0, counts)
    r_pos = ranks[: len(pos)].sum()
    return float((r_pos - len(pos) * (len(pos) + 1) / 2.0) / (len(pos) * len(neg)))
