"""The ranker's explain stage: the page of winners as `MemorySearchItem`s whose score
components are read from the ranking's arrays on first access (most callers never read them,
and building every hit's dict was a fixed cost of each search)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from langmem_plus.store.ranking.scoring import COMPONENTS
from langmem_plus.store.seams import CandidateRow, MemorySearchItem, search_hit

__all__ = ["Explanation", "page"]


class Explanation:
    """One ranked query's component columns (aligned with its candidates, in the order of
    `scoring.COMPONENTS` but the profile) and its score profile."""

    __slots__ = ("columns", "profile")

    def __init__(self, columns: Sequence[np.ndarray], profile: str) -> None:
        if len(columns) != len(COMPONENTS) - 1:
            raise ValueError(f"{len(COMPONENTS) - 1} component columns expected")
        self.columns = tuple(columns)
        self.profile = profile

    def components(self, k: int) -> dict[str, Any]:
        """The k-th candidate's components: the Python values `ndarray.tolist` gives."""
        return dict(
            zip(COMPONENTS, (*(c.item(k) for c in self.columns), self.profile), strict=True)
        )


def page(
    rows: Mapping[int, CandidateRow],
    ids: Sequence[int],
    order: Sequence[int],
    explanation: Explanation,
) -> list[MemorySearchItem]:
    """The search items of the candidates at positions `order` of `ids` (full rows in `rows`),
    scored by the explanation's first column."""
    score = explanation.columns[0]
    return [search_hit(rows[ids[k]], score.item(k), (explanation, k)) for k in order]
