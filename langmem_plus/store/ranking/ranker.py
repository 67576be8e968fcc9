"""The search path of HybridStore as named stages over a `SearchBackend`.

    candidates -> rows -> keep -> fuse -> feedback -> neighbours -> score -> explain

* candidates: BM25 and vector top-k, with the first pseudo-relevance-feedback round
  (store/ranking/expansion.py) and a substring fallback when no keyword matches;
* rows: the `CandidateRow` of every candidate (light rows unless a filter, the topic or the
  symbols need the value);
* keep: expiry, the time range and the filter (topped up by a scan when they leave too few);
* fuse: the cosines of candidates the vector top-k missed, then keyword and vector relevance
  fused (scoring.fuse_arrays);
* feedback: the second feedback round, from the best fused candidates;
* neighbours: conversation-context smoothing (store/ranking/neighbours.py);
* score: the spec score (scoring.score_batch);
* explain: the winners as `MemorySearchItem`s carrying their score components.

The ranker holds no storage of its own: everything it reads comes through the backend, so a
second backend gets the same ranking, score and explanation.
"""

from __future__ import annotations

import json
import logging
import operator
from collections.abc import Callable, Iterable, KeysView, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import repeat
from typing import Any

import numpy as np

from langmem_plus.config import MemoryConfig
from langmem_plus.store.keyword.bm25 import KeywordScope, held_terms, query_mass
from langmem_plus.store.ranking import judgement as jd
from langmem_plus.store.ranking.common_terms import TermVectors, ordering_side, vector_search
from langmem_plus.store.ranking.expansion import feedback, feedback_terms, fused_feedback
from langmem_plus.store.ranking.explain import Explanation, page
from langmem_plus.store.ranking.fallback import like_scores
from langmem_plus.store.ranking.floor import DEFAULT_FLOOR
from langmem_plus.store.ranking.neighbours import question_turns, with_neighbours
from langmem_plus.store.ranking.scoring import (
    CosineSide,
    Fused,
    FusionTuning,
    cosine_side,
    evidence,
    fuse_arrays,
    prior_scales,
    score_batch,
)
from langmem_plus.store.ranking.versions import newer_first
from langmem_plus.store.seams import (
    CURRENT,
    LIKE_MAX_DOCS,
    SCAN_CAP,
    SESSION,
    CandidateRow,
    MemorySearchItem,
    RowFilter,
    SearchBackend,
    TimeRange,
    Validity,
    VectorSearch,
    in_range,
    passes,
    prior_columns,
)
from langmem_plus.store.tuning import StoreTuning
from langmem_plus.text.intent import is_preference_query
from langmem_plus.text.symbols import extract_symbols
from langmem_plus.text.tokenize import QueryTerms, query_terms, tokenize
from langmem_plus.text.transcript import is_transcript

__all__ = ["DEMOTION", "RankQuery", "Ranker"]

DEMOTION = 0.5
"""Score factor of an item shown though a later statement replaced it (`Validity.demoted`)."""

logger = logging.getLogger("langmem_plus.store.hybrid")


@dataclass(slots=True)
class RankQuery:
    """One search to rank: the query, its vector (None: keyword only) and its constraints."""

    ns_ids: Sequence[int]
    query: str
    qvec: np.ndarray | None
    filter: Mapping[str, Any] | None
    limit: int
    offset: int
    now: float
    current_topic: str | None = None
    time_range: TimeRange | None = None
    validity: Validity = CURRENT


_NO_VALUES = np.zeros(0)
_NO_VALUES.flags.writeable = False


def _no_values() -> np.ndarray:
    """The arrays of a working set before fusion fills them (shared: never written)."""
    return _NO_VALUES


@dataclass(slots=True)
class _Search:
    """One query's working set as it goes through the stages."""

    rq: RankQuery
    want: int
    q: QueryTerms
    qw: dict[str, float]
    topic: set[str]
    symbols: set[str]
    transcript: bool = False  # the query is a conversation written as a transcript
    scope: KeywordScope | None = None  # the query's own terms' scope, read once (`_scope`)
    bm25: dict[int, float] = field(default_factory=dict)
    # BM25 over the query's own terms when feedback added terms to `bm25` (None: `bm25` is
    # it): feedback terms rank the candidates but are no evidence that one answers the query
    bm25_query: dict[int, float] | None = None
    own_terms: tuple[QueryTerms, dict[str, float]] | None = None  # the query's, before feedback
    sims: dict[int, float] = field(default_factory=dict)
    vec: VectorSearch | None = None
    # the scale of the keyword evidence: the query's weighted IDF mass, or for substring
    # matches the number of words looked for
    mass: float = 0.0
    rows: dict[int, CandidateRow] = field(default_factory=dict)
    keep: list[int] = field(default_factory=list)
    # arrays aligned with `keep`: BM25, cosine (NaN: no vector), relevance, keyword evidence
    # (bm25_norm), vector evidence (vector_norm), absolute evidence
    bm: np.ndarray = field(default_factory=_no_values)
    bmq: np.ndarray = field(default_factory=_no_values)  # `bm25_query`, aligned
    cos: np.ndarray = field(default_factory=_no_values)
    fz: np.ndarray = field(default_factory=_no_values)
    bn: np.ndarray = field(default_factory=_no_values)
    vn: np.ndarray = field(default_factory=_no_values)
    ev: np.ndarray = field(default_factory=_no_values)
    top: float = 1.0  # the query's scale (scales the relevance and the priors)
    priors: float | np.ndarray = 1.0  # what the priors were multiplied by (`_prior_scales`)
    facts: jd.QueryFacts | None = None  # what the relevance judgement reads
    side: CosineSide | None = None  # the vector side of fusion (`cos`'s), kept for re-fusion
    fused: Fused | None = None  # the last fusion (its evidence is kept by a re-fusion)

    rows_filter: RowFilter | None = None  # the filter, compiled once (None: no filter)

    @property
    def need_value(self) -> bool:
        """Whether ranking reads item values (else they are read for the winners only): a
        filter on the row's columns alone (kind, slot, category) reads none."""
        return bool(
            self.topic
            or self.symbols
            or (self.rows_filter is not None and self.rows_filter.needs_value)
        )


class Ranker:
    """Hybrid ranking of one query (see the module docstring for the stages).

    `keyword_text` gives an item value's indexed text (topic and symbol matching, the
    substring fallback); `omit_expired` says whether expired items are left out;
    `vector_background` (set by the store from its embeddings) is the cosine the embedding
    model gives unrelated texts, the zero of the vector evidence (scoring.vector_evidence).
    """

    vector_background: float = 0.0
    term_vectors: TermVectors | None = None  # the store's word vectors (common_terms.py)
    judgement: jd.Judgement | None = None  # the query's scale where fitted (judgement.py)

    def __init__(
        self,
        config: MemoryConfig,
        tuning: StoreTuning,
        backend: SearchBackend,
        keyword_text: Callable[[Mapping[str, Any]], str],
        omit_expired: Callable[[], bool],
    ) -> None:
        self.config = config
        self.tuning = tuning  # the fitted constants (store/tuning.py)
        self.backend = backend
        self.keyword_text = keyword_text
        self.omit_expired = omit_expired
        self._tunings: dict[bool, FusionTuning] = {}  # by whether the query is a transcript

    def rank(self, conn: Any, rq: RankQuery) -> list[MemorySearchItem]:
        """The ranked page `rq.offset : rq.offset + rq.limit` of the query's hits."""
        with self.backend.query_scope():  # the namespaces' statistics read once
            s = self.start(rq)
            self.candidates(conn, s)
            self.rows(conn, s)
            self.keep(conn, s)
            if not s.keep:
                return []
            self.fuse(conn, s)
            self.feedback(conn, s)
            self.neighbours(conn, s)
            parts, sym = self.score(s)
            return self.explain(conn, s, parts, sym)

    # ------------------------------------------------------------------ stages
    def start(self, rq: RankQuery) -> _Search:
        """The query's terms, weights, topic tokens and code symbols."""
        cfg, tun = self.config, self.tuning
        query = rq.query[: cfg.recall.max_query_chars]
        if query != rq.query:
            rq = replace(rq, query=query)
        q = query_terms(query, cfg.recall.max_query_chars)
        qw = q.qtf_weights(tun.bm25_k3)  # repeated query terms weigh more (bm25_k3)
        qw = q.single_cjk_weights(tun.cjk_single_char_weight, qw)
        qw = q.last_line_weights(query, tun.last_line_weight, qw)
        topic = set(tokenize(rq.current_topic)) if rq.current_topic else set()
        symbols = (
            {s.lower() for s in extract_symbols(query)} if cfg.score.profile == "coding" else set()
        )
        s = _Search(rq, rq.offset + rq.limit, q, qw, topic, symbols, is_transcript(query))
        s.rows_filter = RowFilter(rq.filter) if rq.filter else None
        return s

    def candidates(self, conn: Any, s: _Search) -> None:
        """Keyword and vector candidates, with the first feedback round; substring matches
        when the keyword side has no evidence."""
        tun, rq, be = self.tuning, s.rq, self.backend
        pool = max(tun.keyword_candidates, s.want * 3)
        if rq.qvec is not None and be.has_vectors:
            k, ratio = (
                max(tun.vector_candidates, s.want * 3),
                tun.vector_common_term_ratio,
            )
            # the query's common words projected out (store/ranking/common_terms.py)
            s.vec = vector_search(
                be,
                conn,
                rq.ns_ids,
                s.q,
                lambda: self._scope(conn, s),
                rq,
                k,
                ratio,
                self.term_vectors,
            )
        failed: list[BaseException] = []

        def vector_hits() -> KeysView[int]:
            if s.vec is not None and not failed and not s.sims:
                try:
                    s.sims = s.vec.hits()
                except Exception as exc:  # raised below, not taken for a keyword failure
                    failed.append(exc)
            return s.sims.keys()

        try:
            s.mass = query_mass(self._scope(conn, s), s.q, s.qw)
            if self.judgement is not None and rq.qvec is not None:
                s.facts = jd.query_facts(
                    rq.query, s.q, lambda: held_terms(self._scope(conn, s), s.q)
                )
            if tun.prf_terms:
                self._keyword_with_feedback(conn, s, pool, vector_hits)
            else:
                s.bm25 = be.keyword_search(
                    conn, rq.ns_ids, s.q, pool, extra_candidates=vector_hits, weights=s.qw
                )
        except Exception as exc:  # the keyword index cannot serve: substring fallback
            logger.warning("keyword index failed (%s); falling back to LIKE matching", exc)
            s.bm25, s.mass = like_scores(
                self.backend, conn, rq.ns_ids, rq.query, pool, self.keyword_text
            )
        vector_hits()  # collected even when the keyword pass had nothing to score
        if failed:
            raise failed[0]
        if not any(v > 0 for v in s.bm25.values()) and (
            not s.q or be.keyword_docs(conn, rq.ns_ids) <= LIKE_MAX_DOCS
        ):
            # No keyword evidence (only stop words, or terms no segmentation produced, e.g. a
            # sub-word of a jieba token): substring matching, bounded to small namespaces.
            like, s.mass = like_scores(
                self.backend, conn, rq.ns_ids, rq.query, pool, self.keyword_text
            )
            s.bm25 = {**s.bm25, **like}

    def _scope(self, conn: Any, s: _Search) -> KeywordScope:
        """The query's keyword scope (`SearchBackend.keyword_scope`), read once per query."""
        if s.scope is None:
            s.scope = self.backend.keyword_scope(conn, s.rq.ns_ids, s.q, s.qw)
        return s.scope

    def _keyword_with_feedback(
        self, conn: Any, s: _Search, pool: int, vector_hits: Callable[[], KeysView[int]]
    ) -> None:
        """Pseudo-relevance feedback (store/ranking/expansion.py): terms of the best keyword hits, scored
        at a lower weight and added to the keyword scores. The vector-only candidates' BM25
        is read for them alone, the values a first pass over them would have given."""
        tun, be, ns_ids = self.tuning, self.backend, s.rq.ns_ids
        s.bm25 = be.keyword_search(conn, ns_ids, s.q, pool, weights=s.qw)
        terms = feedback_terms(tun, be, conn, ns_ids, s.q, s.bm25) if s.bm25 else {}
        vec_only = list(vector_hits() - s.bm25.keys())  # (order: irrelevant to the scores)
        if vec_only:
            got = be.keyword_score(conn, ns_ids, s.q, vec_only, weights=s.qw)
            s.bm25.update(zip(vec_only, map(got.get, vec_only, repeat(0.0)), strict=True))
        if s.bm25:
            s.bm25_query, s.own_terms = dict(s.bm25), (s.q, dict(s.qw))
            s.q, s.qw, s.bm25 = feedback(
                tun,
                be,
                conn,
                ns_ids,
                s.q,
                s.qw,
                s.bm25,
                terms=terms,
                search_k=None if s.sims else pool,  # no vector hits: search for more
            )

    def rows(self, conn: Any, s: _Search) -> None:
        """The candidates' rows: full when ranking needs values, else light (cached)."""
        cands = s.bm25.keys() | s.sims.keys()
        if s.need_value:
            s.rows = self.backend.rows(conn, cands, full=True)
        else:
            s.rows = self.backend.light_rows(conn, s.rq.ns_ids, cands)

    def keep(self, conn: Any, s: _Search) -> None:
        """The candidates that pass validity, expiry, the time range and the filter; with too
        few, the namespaces are scanned for more that pass."""
        rq = s.rq
        s.keep = self._admit(s, s.rows)
        dropped = len(s.keep) < len(s.rows)
        if not (rq.filter or rq.time_range or dropped) or len(s.keep) >= s.want:
            return
        omit, v, flt = self.omit_expired(), rq.validity, s.rows_filter
        scanned = self.backend.scan(
            conn,
            rq.ns_ids,
            lambda r: passes(r, rq.now, omit, flt, None, v),
            SCAN_CAP,
            rq.filter,
        )
        extra_ids = [r.id for r in scanned if in_range(r, rq.time_range)]
        if extra_ids:
            pool = max(self.tuning.keyword_candidates, s.want * 3)
            s.bm25.update(
                self.backend.keyword_search(
                    conn, rq.ns_ids, s.q, pool, extra_candidates=extra_ids, weights=s.qw
                )
            )
            if s.bm25_query is not None and s.own_terms is not None:
                q0, w0 = s.own_terms
                more = [i for i in extra_ids if i not in s.bm25_query]
                got = self.backend.keyword_score(conn, rq.ns_ids, q0, more, weights=w0)
                s.bm25_query.update((i, got.get(i, 0.0)) for i in more)
            fresh = [i for i in extra_ids if i not in s.rows]
            s.rows.update(self.backend.rows(conn, fresh, full=True))
            s.keep = self._admit(s, s.rows)

    def _admit(self, s: _Search, rows: Mapping[int, CandidateRow]) -> list[int]:
        """The ids of `rows` that pass validity, expiry, the time range and the filter."""
        rq, omit, v = s.rq, self.omit_expired(), s.rq.validity
        if not (omit or rq.filter or rq.time_range):
            if v.default:  # current versions: only a closed fact is left out
                return [i for i, r in rows.items() if r.valid_to is None]
            return [i for i, r in rows.items() if v.admits(r)]
        flt = s.rows_filter
        return [i for i, r in rows.items() if passes(r, rq.now, omit, flt, rq.time_range, v)]

    def fuse(self, conn: Any, s: _Search) -> None:
        """Cosines of the kept candidates the vector top-k missed, then fusion on arrays
        aligned with the sorted candidates."""
        if s.rq.qvec is not None and s.vec is not None:
            missing = list(set(s.keep) - s.sims.keys())
            if missing:
                s.sims.update(s.vec.cosines(missing))
        s.keep.sort()
        s.cos = _aligned(s.sims, s.keep, np.nan)
        s.side = ordering_side(s.vec, s.keep, s.cos, self.vector_background)  # common_terms.py
        s.bm = _aligned(s.bm25, s.keep, 0.0)
        own = s.bm25_query
        s.bmq = s.bm if own is None else _aligned(own, s.keep, 0.0)
        self._fuse(s)

    def _fuse(self, s: _Search) -> None:
        """Relevance, keyword, vector and absolute evidence of the candidates (store/ranking/scoring.py)."""
        st = self.tuning
        tuning = self._tunings.get(s.transcript)
        if tuning is None or tuning.background != self.vector_background:
            w = st.w_fusion_keyword_transcript if s.transcript else st.w_fusion_keyword
            tuning = self._tunings[s.transcript] = FusionTuning(
                w_standing_keyword=w,
                keyword_rate=st.keyword_evidence_rate,
                w_evidence_keyword=st.w_evidence_keyword,
                background=self.vector_background,
                # a transcript matches a small share of its words by nature: the full share
                full_share_evidence=0.0 if s.transcript else st.fusion_full_share_evidence,
            )
        if s.side is None:
            s.side = cosine_side(s.cos, self.vector_background)
            s.fused = None
        got = fuse_arrays(
            s.bm,
            s.cos,
            s.mass,
            bm25_evidence=s.bmq,
            side=s.side,
            tuning=tuning,
            evidence_of=s.fused,  # a re-fusion: the evidence of the same query terms
        )
        s.fused = got
        s.bn, s.vn, s.ev = got.keyword, got.vector, got.evidence
        s.fz, s.top, s.facts = jd.rescaled(self.judgement, s.facts, got.relevance, s.cos)

    def feedback(self, conn: Any, s: _Search) -> None:
        """Second feedback round from the best fused candidates (store/ranking/expansion.py). It only
        re-scores the candidates already held (measured: new candidates it would bring add
        ~0.003 LoCoMo frac@10 for ~0.35 ms more per query)."""
        tun = self.tuning
        if not (tun.prf_terms and tun.prf_fused_docs and s.rq.qvec is not None and s.q):
            return
        # weights from the relevance before the judgement's scale: a refit moves no rounding
        before = (s.fz if s.fused is None else s.fused.relevance).tolist()
        fused = dict(zip(s.keep, before, strict=True))
        more = fused_feedback(tun, self.backend, conn, s.rq.ns_ids, s.q, fused)
        if more:
            s.bm = s.bm + _aligned(more, s.keep, 0.0)
            self._fuse(s)

    def neighbours(self, conn: Any, s: _Search) -> None:
        """Conversation-context smoothing (store/ranking/neighbours.py), for items that name a session."""
        alpha = self.tuning.neighbour_weight
        if alpha <= 0:
            return
        sessions = list(map(SESSION, map(s.rows.__getitem__, s.keep)))
        if sessions.count(None) == len(sessions):
            return
        be, full, held = self.backend, s.need_value, len(s.keep)
        s.keep, s.fz = with_neighbours(
            s.keep,
            s.rows,
            s.fz,
            s.want,
            alpha,
            adjacent=lambda ids: be.adjacent(conn, ids),
            fetch=lambda ids: be.rows(conn, ids, full=full),
            admit=lambda rows: self._admit(s, rows),
            questions=lambda ids: self._questions(conn, ids),
            beta=self.tuning.answer_weight,
            in_context=self.tuning.answer_in_context,
        )
        new = s.keep[held:]  # neighbours that joined: no keyword or vector part of their own
        if new:
            none = np.zeros(len(new))
            s.bn, s.vn, s.bm = (np.concatenate((a, none)) for a in (s.bn, s.vn, s.bm))
            s.cos = np.concatenate((s.cos, [s.sims.get(i, np.nan) for i in new]))
        s.side = None
        s.ev = evidence(s.bn, s.vn, self.tuning.w_evidence_keyword)

    def _questions(self, conn: Any, ids: Iterable[int]) -> set[int]:
        """The items among `ids` whose indexed text is a question (ends with ? or ？)."""
        return question_turns(self.backend.rows(conn, ids, full=True), self.keyword_text)

    def score(self, s: _Search) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """The spec score of every kept candidate, and the symbol match it used."""
        cfg, rows = self.config, list(map(s.rows.__getitem__, s.keep))
        n = len(rows)
        on_topic = np.zeros(n, dtype=bool)
        sym = np.zeros(n)
        if s.topic or s.symbols:
            for j, row in enumerate(rows):
                on_topic[j], sym[j] = self._topic_and_symbols(s, row, float(s.bn[j]))
        preference_query = is_preference_query(s.rq.query)
        v = s.rq.validity
        prior = prior_columns(rows, preference_query, v.as_of if v.as_of is not None else s.rq.now)
        parts = score_batch(
            config=cfg,
            now=s.rq.now,
            fused=s.fz,
            prior_scale=self._prior_scales(s),
            last_used=prior[0],
            access_count=prior[1],
            confidence=prior[2],
            preference_item=prior[3],
            preference_query=preference_query,
            on_topic=on_topic,
            symbol_match=sym,
            vector_norm=s.vn,
        )
        demoted = np.fromiter(map(v.demoted, rows), bool, n)
        parts["superseded"] = demoted.astype(np.float64)
        if demoted.any():  # superseded shown, or an episode a later statement replaced
            parts["score"] = np.where(demoted, parts["score"] * DEMOTION, parts["score"])
        return parts, sym

    def _topic_and_symbols(
        self, s: _Search, row: CandidateRow, bm25_norm: float
    ) -> tuple[bool, float]:
        """(on the current topic, symbol match) of one item; the coding profile without query
        symbols takes the keyword match for the symbol match."""
        value = json.loads(row.value or "null")
        on_topic = bool(s.topic & set(tokenize(self.keyword_text(value)))) if s.topic else False
        if s.symbols:
            item_syms = value.get("symbols")
            if not isinstance(item_syms, list):
                item_syms = extract_symbols(self.keyword_text(value))
            have = {str(x).lower() for x in item_syms}
            return on_topic, len(s.symbols & have) / len(s.symbols)
        if self.config.score.profile == "coding":
            return on_topic, bm25_norm
        return on_topic, 0.0

    def _prior_scale(self, s: _Search) -> float:
        """The query's scale (`query_evidence`); 1 under the coding profile, whose score
        takes no priors."""
        return 1.0 if self.config.score.profile == "coding" else s.top

    def _prior_scales(self, s: _Search) -> float | np.ndarray:
        """What each candidate's priors are multiplied by (scoring.prior_scales, gated at
        DEFAULT_FLOOR on the scale of the query's best evidence, the floor calibrated on it;
        no gate without a query vector, as no floor), kept on `s` for the explanation."""
        if self.config.score.profile == "coding" or s.rq.qvec is None:
            s.priors = self._prior_scale(s)
            return s.priors
        best = s.facts.best_evidence if s.facts is not None else s.top
        share = self.tuning.prior_gate_share
        s.priors = prior_scales(s.fz, s.ev, s.top, best, DEFAULT_FLOOR, share)
        return s.priors

    def explain(
        self, conn: Any, s: _Search, parts: dict[str, np.ndarray], sym: np.ndarray
    ) -> list[MemorySearchItem]:
        """The page of winners, best first (ties: newest item), each with its components
        (the fields of `ScoreParts`, in order; built when first read, store/ranking/explain.py)."""
        ids = np.asarray(s.keep, dtype=np.int64)
        order_list = np.lexsort((-ids, -parts["score"]))[: s.want].tolist()
        winners = [s.keep[j] for j in order_list]
        if not s.need_value:  # ranked on light rows: read the winners in full
            s.rows.update(self.backend.rows(conn, winners, full=True))
        newer = np.zeros(len(s.keep))
        recall = self.config.recall
        if recall.newer_versions_first and len(order_list) > 1:
            order_list = self._newer_first(s, parts, order_list, newer)
        order_list = order_list[s.rq.offset :]
        full_cos = s.side is not None and s.side.every  # every candidate has a vector
        columns = (
            parts["score"],
            s.fz,
            s.bn,  # `keyword`: the keyword evidence, as `bm25_norm` (kept for compatibility)
            s.bm,
            s.bn,
            s.cos if full_cos else np.where(np.isnan(s.cos), 0.0, s.cos),  # no vector: 0
            s.vn,
            s.ev,
            np.full(len(s.ev), self._prior_scale(s)),
            np.broadcast_to(np.asarray(s.priors, dtype=np.float64), s.ev.shape),
            *jd.judged_columns(s.facts, s.top, s.cos, len(s.ev)),
            parts["category_boost"],
            parts["recency"],
            parts["frequency"],
            parts["confidence"],
            parts["topic_boost"],
            sym,
            parts["superseded"],
            newer,
        )
        explanation = Explanation(columns, self.config.score.profile)
        return page(s.rows, s.keep, order_list, explanation)

    def _newer_first(
        self, s: _Search, parts: dict[str, np.ndarray], order: list[int], newer: np.ndarray
    ) -> list[int]:
        """The winners with a later version of the same thing put above the earlier
        (store/ranking/versions.py); `newer` marks the candidates moved."""
        rows = [s.rows[s.keep[j]] for j in order]
        keys = [str(r.key) for r in rows]
        values = [_value(r.value) for r in rows]
        weight = 0.0 if self.config.score.profile == "coding" else self.config.score.w_recency
        own = parts["score"] - s.priors * weight * parts["recency"]
        relevance = [float(own[j]) for j in order]
        moved_order, moved = newer_first(
            keys, values, relevance, self.config.recall.newer_version_share
        )
        for pos, was_moved in enumerate(moved):
            if was_moved:
                newer[order[pos]] = 1.0
        return [order[k] for k in moved_order]


def _value(raw: str | None) -> Any:
    """A stored value (None when unreadable: it then takes part in no version link)."""
    try:
        return json.loads(raw or "null")
    except ValueError:
        return None


def _aligned(values: Mapping[int, float], ids: Sequence[int], missing: float) -> np.ndarray:
    """The values of `ids` as a float64 array (`missing` where `values` has none)."""
    if len(ids) > 1 and len(values) >= len(ids):
        try:  # every id held (the usual case): one C-level lookup of all of them
            return np.array(operator.itemgetter(*ids)(values), dtype=np.float64)
        except KeyError:
            pass
    return np.fromiter(map(values.get, ids, repeat(missing)), np.float64, len(ids))
