"""The neighbours stage on arrays gives, bit for bit, what the per-item formula gives.

`neighbours.smooth` computes the smoothed relevance of every candidate at once; the reference
below is the formula of the module docstring written item by item (how the stage computed it
before).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from langmem_plus.store.ranking.neighbours import inherit, question_turns, smooth
from langmem_plus.store.seams import CandidateRow


def reference(
    fused: Mapping[int, float],
    nbrs: Mapping[int, list[int]],
    alpha: float,
    answers: Mapping[int, int],
    beta: float,
    in_context: bool,
) -> dict[int, float]:
    """f'(j) = (f(j) + a * max over sources i of f(i)) / (1 + a); an answer keeps at least
    b times its question's relevance (its smoothed one when higher, in context)."""
    got: dict[int, float] = {}
    for i, js in nbrs.items():
        fi = fused.get(i, 0.0)
        for j in js:
            if fi > got.get(j, 0.0):
                got[j] = fi
    ids = set(fused) | set(got)
    out = {i: (fused.get(i, 0.0) + alpha * got.get(i, 0.0)) / (1.0 + alpha) for i in ids}
    asked = {}
    for q in answers:
        own = fused.get(q, 0.0)
        asked[q] = max(own, out.get(q, 0.0)) if in_context else own
    for q, a in answers.items():
        if a in out:
            out[a] = max(out[a], beta * asked[q])
    return out


relevance = st.floats(min_value=0.0, max_value=3.0, allow_nan=False)
ids = st.integers(min_value=0, max_value=12)  # few ids: sources, questions and answers meet


@st.composite
def cases(draw: Any) -> tuple[Any, ...]:
    fused = draw(st.dictionaries(ids, relevance, max_size=20))
    nbrs = draw(st.dictionaries(ids, st.lists(ids, max_size=2, unique=True), max_size=10))
    answers = draw(st.dictionaries(ids, ids, max_size=5))
    alpha = draw(st.floats(min_value=0.05, max_value=2.0))
    beta = draw(st.floats(min_value=0.0, max_value=1.0))
    return fused, nbrs, alpha, answers, beta, draw(st.booleans())


# a question without the query's words, after the turn that names the subject (in context)
@example(({0: 1.0, 1: 0.0, 2: 0.1}, {0: [1]}, 0.5, {1: 2}, 0.9, True))
@settings(max_examples=400, deadline=None)
@given(cases())
def test_inherit_equals_the_formula_item_by_item(case: tuple[Any, ...]) -> None:
    fused, nbrs, alpha, answers, beta, in_context = case
    assert inherit(fused, nbrs, alpha, answers, beta, in_context) == reference(*case)


# a question that is only a candidate's neighbour, and its answer a candidate
@example(({1: 0.0, 8: 1.0}, {0: [], 8: [0]}, 1.0, {0: 1}, 1.0, True), [])
@settings(max_examples=300, deadline=None)
@given(cases(), st.lists(ids, max_size=6, unique=True))
def test_smooth_over_candidates_and_newcomers(case: tuple[Any, ...], extra: list[int]) -> None:
    """The stage's call: candidates first (their own relevance), newcomers after (0): the
    stage reads every candidate's neighbours, so they are among the newcomers. A newcomer no
    neighbour passed relevance to is not lifted as an answer (0, as before)."""
    fused, nbrs, alpha, answers, beta, in_context = case
    reached = [j for i in fused for j in nbrs.get(i, [])]
    keep = list(fused) + [i for i in dict.fromkeys(extra + reached) if i not in fused]
    own = np.asarray([fused.get(i, 0.0) for i in keep], dtype=np.float64)
    got = smooth(keep, own, nbrs, alpha, answers, beta, in_context, held=len(fused)).tolist()
    ref = reference(*case)
    assert got == [ref.get(i, 0.0) for i in keep]


def _row(i: int, text: str) -> CandidateRow:
    value = json.dumps({"text": text})
    return CandidateRow(i, "ns", f"k{i}", value, 0.0, 0.0, None, 0, None, None, None, None, "s1")


def test_question_turns_are_the_rows_whose_text_ends_with_a_question_mark() -> None:
    def text_of(value: Mapping[str, Any]) -> str:
        return str(value["text"])

    rows = {1: _row(1, "What breed is he? "), 2: _row(2, "A beagle."), 3: _row(3, "你好吗？")}
    assert question_turns(rows, text_of) == {1, 3}
    assert question_turns({1: _row(1, "He is a beagle.")}, text_of) == set()
