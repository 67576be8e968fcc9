"""Conversation-context smoothing: an item inherits part of its neighbours' relevance.

Items of one namespace written one after another are often one exchange (a question and its
answer, a remark and the detail that follows). The turn that holds the answer frequently does
not share the question's words, while the turn next to it does. With
`MemoryConfig.neighbour_weight` = a > 0, each of the best candidates passes a share of its fused
relevance to the items written just before and after it in the same namespace (insertion order,
i.e. item id order): f'(j) = (f(j) + a * max over best neighbours i of f(i)) / (1 + a).
Neighbours outside the candidate set join it (with their own relevance counted as 0).
Only items that declare the same session (a value key of `StoreTuning.session_keys`) pass
relevance to each other: independent memories are never smoothed.
Measured in docs/benchmarks.md ("what we tried").

Answers inherit their question (`StoreTuning.answer_weight` = b > 0): the embedding matches a
question to the turns that ask the same thing, so a question turn ("what breed is he?") outranks
the turn that answers it. When one of the best candidates is a question turn, the next turn of
the same session ranks at least b times the question's fused relevance:
f'(a) = max(f'(a), b * f(q)). Measured in docs/results/question_answer.md. A question is often
elliptical itself ("what did you think of it?", "so who's doing it?"): with
`StoreTuning.answer_in_context` the answer takes the question's relevance in context instead,
f'(q) when higher than f(q), so the subject named just before the question reaches the turn that
answers it. Measured in docs/results/retrieval_quality.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["inherit", "with_neighbours"]

Fused = dict[int, tuple[float, float, float]]
"""item id -> (fused relevance, bm25_norm, vector_norm)."""


def inherit(
    fused: Mapping[int, float],
    nbrs: Mapping[int, list[int]],
    alpha: float,
    answers: Mapping[int, int] | None = None,
    beta: float = 0.0,
    in_context: bool = False,
) -> dict[int, float]:
    """Smoothed relevance for the sources in `nbrs` and their neighbours; `answers` maps a
    question turn to the turn that follows it, which keeps `beta` of the question's relevance
    (its smoothed one when higher, with `in_context`; see module doc)."""
    got: dict[int, float] = {}
    for i, js in nbrs.items():
        fi = fused.get(i, 0.0)
        for j in js:
            if fi > got.get(j, 0.0):
                got[j] = fi
    ids = set(fused) | set(got)
    out = {i: (fused.get(i, 0.0) + alpha * got.get(i, 0.0)) / (1.0 + alpha) for i in ids}
    asked = {q: question_relevance(fused, out, q, in_context) for q in (answers or {})}
    for q, a in (answers or {}).items():
        if a in out:
            out[a] = max(out[a], beta * asked[q])
    return out


def question_relevance(
    fused: Mapping[int, float], smoothed: Mapping[int, float], q: int, in_context: bool
) -> float:
    """What a question turn passes to its answer: its own relevance or, `in_context`, its
    smoothed one when higher (a question without the query's words, "so who's doing it?",
    whose session names the subject just before it)."""
    own = fused.get(q, 0.0)
    return max(own, smoothed.get(q, 0.0)) if in_context else own


def next_turns(nbrs: Mapping[int, list[int]]) -> dict[int, int]:
    """item id -> the neighbour written just after it (the turn that may answer it)."""
    out: dict[int, int] = {}
    for i, js in nbrs.items():
        after = [j for j in js if j > i]
        if after:
            out[i] = min(after)
    return out


def with_neighbours(
    keep: list[int],
    rows: dict[int, Any],
    fused: Fused,
    want: int,
    alpha: float,
    *,
    adjacent: Callable[[Iterable[int]], dict[int, list[int]]],
    fetch: Callable[[Iterable[int]], dict[int, Any]],
    admit: Callable[[dict[int, Any]], list[int]],
    questions: Callable[[Iterable[int]], set[int]] | None = None,
    beta: float = 0.0,
    in_context: bool = False,
) -> tuple[list[int], Fused]:
    """The ranker's neighbours stage: smooth the fused relevance over insertion-order
    neighbours.

    The best max(2 * want, 20) candidates pass relevance on. `adjacent` finds an item's
    neighbours, `fetch` reads the rows of neighbours that were not candidates (added to
    `rows`), `admit` keeps those that pass the search's filters, `questions` says which of
    the given items are question turns (their next turn keeps `beta` of their relevance, of
    their smoothed one when higher with `in_context`; None or `beta` 0: off). Returns the new
    candidate list and fused tuples (relevance replaced, the explanation parts kept; 0 for
    newcomers).
    """
    top = sorted(keep, key=lambda i: -fused[i][0])[: max(2 * want, 20)]
    if not any(rows[i].session is not None for i in top if i in rows):
        return keep, fused  # no session among the best: nothing can be smoothed, no reads
    nbrs = adjacent(top)
    new = {j for js in nbrs.values() for j in js} - set(rows)
    if new:
        rows.update(fetch(new))
    # Only turns of one session are context for each other: both items must name the same
    # session (session_id / chat_id / conversation_id in their value). Independent memories
    # (no session) never pass relevance around.
    nbrs = {
        i: [
            j
            for j in js
            if j in rows and rows[i].session is not None and rows[i].session == rows[j].session
        ]
        for i, js in nbrs.items()
        if i in rows
    }
    new = {j for js in nbrs.values() for j in js} & new
    if new:
        keep = keep + admit({i: rows[i] for i in new if i in rows})
    answers: dict[int, int] = {}
    if questions is not None and beta > 0:
        after = next_turns(nbrs)
        asked = questions(after) if after else set()
        answers = {q: a for q, a in after.items() if q in asked}
    own = {i: fused[i][0] for i in keep if i in fused}
    smooth = inherit(own, nbrs, alpha, answers, beta, in_context)
    out = {}
    for i in keep:
        _f, bn, vn = fused.get(i, (0.0, 0.0, 0.0))
        out[i] = (smooth.get(i, 0.0), bn, vn)
    return keep, out
