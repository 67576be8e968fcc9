"""Conversation-context smoothing: an item inherits part of its neighbours' relevance.

Items of one namespace written one after another are often one exchange (a question and its
answer, a remark and the detail that follows). The turn that holds the answer frequently does
not share the question's words, while the turn next to it does. With
`StoreTuning.neighbour_weight` = a > 0, each of the best candidates passes a share of its fused
relevance to the items written just before and after it in the same namespace (insertion order,
i.e. item id order): f'(j) = (f(j) + a * max over best neighbours i of f(i)) / (1 + a).
Neighbours outside the candidate set join it (with their own relevance counted as 0).
Only items that declare the same session (a value key of `MemoryConfig.store.session_keys`) pass
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

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["inherit", "question_turns", "smooth", "with_neighbours"]


def smooth(
    ids: Sequence[int],
    own: np.ndarray,
    nbrs: Mapping[int, list[int]],
    alpha: float,
    answers: Mapping[int, int] | None = None,
    beta: float = 0.0,
    in_context: bool = False,
    held: int | None = None,
) -> np.ndarray:
    """Smoothed relevance of `ids`, whose own relevance is `own` (aligned): each source in
    `nbrs` passes its own relevance to its neighbours among `ids`, and `answers` maps a
    question turn to the turn that follows it, which keeps `beta` of the question's relevance
    (its smoothed one when higher, with `in_context`; see module doc). The first `held` ids
    (default: all) are the candidates; an answer after them is lifted only when a neighbour
    passed it relevance."""
    n_held = len(ids) if held is None else held
    pos = {i: j for j, i in enumerate(ids)}
    own_list = own.tolist()
    got = [0.0] * len(ids)
    for i, js in nbrs.items():
        p = pos.get(i)
        fi = 0.0 if p is None else own_list[p]
        for j in js:
            q = pos.get(j)
            if q is not None and fi > got[q]:
                got[q] = fi
    out = (own + alpha * np.asarray(got, dtype=np.float64)) / (1.0 + alpha)
    if not answers:
        return out
    asked = {}  # every question's relevance, read before any answer is lifted
    for q in answers:
        pq = pos.get(q)
        mine = 0.0 if pq is None else own_list[pq]
        asked[q] = max(mine, 0.0 if pq is None else out[pq]) if in_context else mine
    for q, a in answers.items():
        pa = pos.get(a)
        if pa is not None and (pa < n_held or got[pa] > 0):
            out[pa] = max(out[pa], beta * asked[q])
    return out


def inherit(
    fused: Mapping[int, float],
    nbrs: Mapping[int, list[int]],
    alpha: float,
    answers: Mapping[int, int] | None = None,
    beta: float = 0.0,
    in_context: bool = False,
) -> dict[int, float]:
    """`smooth` as a dict: over the items of `fused` (item id -> own relevance) and the
    neighbours they pass relevance to (own relevance 0)."""
    ids = list(fused)
    ids += dict.fromkeys(
        j for i, js in nbrs.items() if fused.get(i, 0.0) > 0 for j in js if j not in fused
    )
    own = np.asarray([fused.get(i, 0.0) for i in ids], dtype=np.float64)
    out = smooth(ids, own, nbrs, alpha, answers, beta, in_context, held=len(fused))
    return dict(zip(ids, out.tolist(), strict=True))


def question_turns(
    rows: Mapping[int, Any], text_of: Callable[[Mapping[str, Any]], str]
) -> set[int]:
    """The ids of `rows` (full rows: their `value` is the item's JSON) whose indexed text
    (`text_of` an item value) is a question: it ends with ? or ？."""
    out: set[int] = set()
    for i, row in rows.items():
        text = text_of(json.loads(row.value or "null") or {}).rstrip()
        if text.endswith(("?", "？")):
            out.add(i)
    return out


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
    relevance: np.ndarray,
    want: int,
    alpha: float,
    *,
    adjacent: Callable[[Iterable[int]], dict[int, list[int]]],
    fetch: Callable[[Iterable[int]], dict[int, Any]],
    admit: Callable[[dict[int, Any]], list[int]],
    questions: Callable[[Iterable[int]], set[int]] | None = None,
    beta: float = 0.0,
    in_context: bool = False,
) -> tuple[list[int], np.ndarray]:
    """The ranker's neighbours stage: smooth the fused `relevance` (aligned with `keep`) over
    insertion-order neighbours.

    The best max(2 * want, 20) candidates pass relevance on. `adjacent` finds an item's
    neighbours, `fetch` reads the rows of neighbours that were not candidates (added to
    `rows`), `admit` keeps those that pass the search's filters, `questions` says which of
    the given items are question turns (their next turn keeps `beta` of their relevance, of
    their smoothed one when higher with `in_context`; None or `beta` 0: off). Returns the
    candidate list (the neighbours that joined after the candidates) and its smoothed
    relevance, aligned.
    """
    top = [keep[j] for j in np.argsort(-relevance, kind="stable")[: max(2 * want, 20)].tolist()]
    if not any(rows[i].session is not None for i in top if i in rows):
        return keep, relevance  # no session among the best: nothing can be smoothed, no reads
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
    held = len(keep)
    if new:
        keep = keep + admit({i: rows[i] for i in new if i in rows})
    answers: dict[int, int] = {}
    if questions is not None and beta > 0:
        after = next_turns(nbrs)
        asked = questions(after) if after else set()
        answers = {q: a for q, a in after.items() if q in asked}
    own = relevance
    if len(keep) > held:  # the newcomers' own relevance: 0
        own = np.concatenate((relevance, np.zeros(len(keep) - held)))
    return keep, smooth(keep, own, nbrs, alpha, answers, beta, in_context, held=held)
