"""Whether a memory scope holds anything about a query: the scale of its absolute relevance.

HybridStore's relevance is `standing × scale` (scoring.fuse_arrays): the standing orders a
query's candidates, the scale says how relevant the query's best candidate is, on one scale for
every query and store. Without a judgement the scale is the best candidate's own evidence
(keyword share of the query matched, cosine above the model's background). That evidence does
not tell "this store holds nothing about the question" from "this store holds the answer" well
enough for a floor on what is injected (docs/calibration.md): a daily-life question gets about
the same cosine from another person's daily-life chat as from its own answer.

A `Judgement` replaces the scale by a calibrated probability that the scope holds something
about the query: a logistic model over a few features of the query and its candidates —

* `best_evidence`: the best candidate's own evidence (the scale without a judgement);
* `best_cosine`: the highest cosine among the candidates;
* `unseen_names`: the share of the names the query mentions (text/names.py) that no memory of
  the scope holds ("What did Caroline research?" against a store with no Caroline).

The coefficients are fitted offline for one embedding model (its cosines have their own
scale), by `benchmarks/calibration.py --fit`, and shipped in `langmem_plus/data/
relevance_judgement.json` with the relevance floor chosen with them. A store whose embeddings
have no fitted model (or that searches by keywords only) keeps the best evidence as its scale.
The judgement multiplies every candidate of the query alike, so it never changes an order.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from langmem_plus.text.names import name_terms
from langmem_plus.text.tokenize import QueryTerms

__all__ = [
    "FEATURES",
    "Judgement",
    "QueryFacts",
    "judged_columns",
    "judgement_for",
    "load_judgements",
    "query_facts",
    "rescaled",
]

FEATURES = ("best_evidence", "best_cosine", "unseen_names")
"""The judgement's inputs, in the order of its coefficients."""

_DATA_FILE = "relevance_judgement.json"


@dataclass(frozen=True)
class QueryFacts:
    """What the judgement reads: from the query before ranking, the share of its names the
    scope never saw (0 when it names nothing); after fusion, the best candidate's evidence and
    the best cosine."""

    unseen_names: float
    best_evidence: float = 0.0
    best_cosine: float = 0.0


@dataclass(frozen=True)
class Judgement:
    """A fitted logistic model: scale = 1 / (1 + exp(-(intercept + coefficients · features)))
    over `FEATURES`, for the embedding model `model`; `floor` is the relevance floor chosen
    with it (MemoryConfig.recall.min_relevance when that is left unset)."""

    model: str
    coefficients: tuple[float, ...]
    intercept: float
    floor: float

    def __post_init__(self) -> None:
        if len(self.coefficients) != len(FEATURES):
            raise ValueError(f"{len(FEATURES)} coefficients expected, got {self.coefficients}")
        if not 0.0 <= self.floor <= 1.0:
            raise ValueError(f"floor must be in [0, 1], got {self.floor!r}")

    def scale(self, best_evidence: float, best_cosine: float, facts: QueryFacts) -> float:
        """The probability that the scope holds something about the query, in (0, 1)."""
        x = (best_evidence, best_cosine, facts.unseen_names)  # FEATURES
        z = self.intercept + math.fsum(w * v for w, v in zip(self.coefficients, x, strict=True))
        if z >= 0:
            return 1.0 / (1.0 + math.exp(-z))
        e = math.exp(z)
        return e / (1.0 + e)


def query_facts(query: str, q: QueryTerms, held: Callable[[], frozenset[str]]) -> QueryFacts:
    """The query-side features: `held()` gives the query's terms that some memory of the
    scope holds; it is asked only when the query names something."""
    own = set(q.terms)
    names = [t for t in name_terms(query) if t in own]
    unseen = 0.0
    if names:
        have = held()
        unseen = sum(t not in have for t in names) / len(names)
    return QueryFacts(unseen)


def best_cosine(cosines: np.ndarray) -> float:
    """The highest cosine among candidates (NaN: no vector); 0 when none has one."""
    top = float(np.fmax.reduce(cosines)) if len(cosines) else 0.0
    return top if math.isfinite(top) else 0.0


def _parse(model: str, raw: Mapping[str, Any]) -> Judgement:
    if list(raw.get("features", [])) != list(FEATURES):
        raise ValueError(f"{_DATA_FILE}: {model}: features {raw.get('features')} != {FEATURES}")
    return Judgement(
        model=model,
        coefficients=tuple(float(c) for c in raw["coefficients"]),
        intercept=float(raw["intercept"]),
        floor=float(raw["floor"]),
    )


@cache
def load_judgements() -> dict[str, Judgement]:
    """The shipped judgements by embedding model name (`Embeddings.model_name`)."""
    text = resources.files("langmem_plus").joinpath(f"data/{_DATA_FILE}").read_text("utf-8")
    models = json.loads(text).get("models", {})
    return {name: _parse(name, raw) for name, raw in models.items()}


def judgement_for(embeddings: Any) -> Judgement | None:
    """The judgement fitted for these embeddings (matched on their `model_name`), or None."""
    name = getattr(embeddings, "model_name", None)
    if not isinstance(name, str) or not name:
        return None
    return load_judgements().get(name)


def rescaled(
    judgement: Judgement | None,
    facts: QueryFacts | None,
    relevance: np.ndarray,
    cosines: np.ndarray,
) -> tuple[np.ndarray, float, QueryFacts | None]:
    """A query's relevance (standing × the best candidate's evidence, fuse_arrays) on the
    judgement's scale: (relevance, its scale, the facts with that evidence). Without a
    judgement (or its facts) the scale is that evidence."""
    best = float(np.maximum.reduce(relevance)) if len(relevance) else 0.0
    if judgement is None or facts is None or best <= 0.0:
        return relevance, best, facts
    facts = replace(facts, best_evidence=best, best_cosine=best_cosine(cosines))
    scale = judgement.scale(best, facts.best_cosine, facts)
    return relevance * (scale / best), scale, facts


def judged_columns(
    facts: QueryFacts | None, scale: float, cosines: np.ndarray, n: int
) -> tuple[np.ndarray, ...]:
    """The explanation's columns of what the judgement reads (the same for every hit of a
    query); without a judgement the best evidence is the query's `scale`."""
    if facts is not None:
        row = (facts.best_evidence, facts.best_cosine, facts.unseen_names)
    else:
        row = (scale, best_cosine(cosines), 0.0)
    return tuple(np.full(n, v) for v in row)
