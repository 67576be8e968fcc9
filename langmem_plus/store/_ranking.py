"""Read paths of HybridStore: hybrid ranking (keyword + vector candidates, fusion, the spec
score) and namespace listing."""

from __future__ import annotations

import functools
import json
import logging
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

import numpy as np
from langgraph.store.base import ListNamespacesOp, MatchCondition, SearchOp

from langmem_plus.errors import InvalidQueryError
from langmem_plus.store._common import (
    _LIKE_MAX_DOCS,
    _ROW_COLS,
    _SCAN_CAP,
    _SEP,
    MemorySearchItem,
    _as_epoch,
)
from langmem_plus.store.expansion import feedback, feedback_terms, fused_feedback
from langmem_plus.store.filters import matches
from langmem_plus.store.neighbours import with_neighbours
from langmem_plus.store.scoring import ScoreParts, fuse_arrays, score_batch
from langmem_plus.store.vector import ExactCosines, decode_vecs
from langmem_plus.store.workers import worker_pool
from langmem_plus.text.intent import is_preference_query
from langmem_plus.text.symbols import extract_symbols
from langmem_plus.text.tokenize import query_terms, tokenize

if TYPE_CHECKING:
    from langmem_plus.store.hybrid import HybridStore

logger = logging.getLogger("langmem_plus.store.hybrid")

P = ParamSpec("P")
R = TypeVar("R")


def _query_scoped(
    fn: Callable[Concatenate[HybridStore, P], R],
) -> Callable[Concatenate[HybridStore, P], R]:
    """Run `fn` inside the store's keyword `query_scope` (statistics read once per query)."""

    @functools.wraps(fn)
    def inner(store: HybridStore, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with store._kw.query_scope():
            return fn(store, *args, **kwargs)

    return inner


@_query_scoped
def ranked(
    store: HybridStore,
    conn: Any,
    ns_ids: Sequence[int],
    query: str,
    qvec: np.ndarray | None,
    flt: Mapping[str, Any] | None,
    limit: int,
    offset: int,
    now: float,
    *,
    current_topic: str | None = None,
    time_range: tuple[float | None, float | None] | None = None,
) -> list[Any]:
    """The hybrid ranking of one query over the namespaces: fused keyword and vector
    relevance, then the spec score (see docs/concepts.md); items carry their components."""
    query = query[: store.config.max_query_chars]
    want = offset + limit
    pool = max(store.config.keyword_candidates, want * 3)
    vpool = max(store.config.vector_candidates, want * 3)
    q = query_terms(query, store.config.max_query_chars)
    qw = q.qtf_weights(store.config.bm25_k3)  # repeated query terms weigh more (bm25_k3)
    qw = q.single_cjk_weights(store.config.cjk_single_char_weight, qw)
    sims: dict[int, float] = {}
    exact: ExactCosines | None = None
    pending: list[Callable[[], tuple[dict[int, float], ExactCosines]]] = []
    if qvec is not None and store._vec is not None:
        # The FAISS scans start first (on a worker thread when configured) and are collected
        # (`vector_hits`) as late as the keyword work allows: after the feedback terms are
        # chosen, or, without feedback, once the first pass has summed its postings.
        pending.append(
            store._vec.begin_search_items(
                conn,
                ns_ids,
                qvec,
                vpool,
                pool=worker_pool() if store.config.vector_search_thread else None,
            )
        )

    failed: list[BaseException] = []

    def vector_hits() -> Iterable[int]:
        nonlocal sims, exact
        if pending:
            try:
                sims, exact = pending.pop()()
            except Exception as exc:  # raised below, not taken for a keyword failure
                failed.append(exc)
        return sims.keys()

    bm25: dict[int, float] = {}
    try:
        if store.config.prf_terms:
            # Pseudo-relevance feedback (store/expansion.py): terms of the best keyword hits,
            # scored at a lower weight and added to the keyword scores. They are chosen before
            # the vector hits are collected (the best hits are keyword hits), which leaves the
            # background scan time to finish; the vector-only candidates' BM25 is then read
            # for them alone, the values the first pass would have given them.
            bm25 = store._kw.search(conn, ns_ids, q, pool, weights=qw)
            terms = feedback_terms(store, conn, ns_ids, q, bm25) if bm25 else {}
            vec_only = [i for i in vector_hits() if i not in bm25]
            if vec_only:
                got = store._kw.score_items(conn, ns_ids, q, vec_only, weights=qw)
                bm25.update((i, got.get(i, 0.0)) for i in vec_only)
            if bm25:
                q, qw, bm25 = feedback(
                    store,
                    conn,
                    ns_ids,
                    q,
                    qw,
                    bm25,
                    terms=terms,
                    search_k=None if sims else pool,  # no vector hits: search for more
                )
        else:
            bm25 = store._kw.search(conn, ns_ids, q, pool, extra_candidates=vector_hits, weights=qw)
    except Exception as exc:  # the keyword index cannot serve: substring fallback
        logger.warning("keyword index failed (%s); falling back to LIKE matching", exc)
        bm25 = _like(store, conn, ns_ids, query, pool)
    vector_hits()  # collected even when the keyword pass had nothing to score
    if failed:
        raise failed[0]
    if not any(v > 0 for v in bm25.values()) and (
        not q or store._kw.stats(conn, ns_ids).n_docs <= _LIKE_MAX_DOCS
    ):
        # No keyword evidence (only stop words, or terms no segmentation produced, e.g. a
        # sub-word of a jieba token): substring matching, bounded to small namespaces.
        like = _like(store, conn, ns_ids, query, pool)
        bm25 = {**bm25, **like}
    pref = is_preference_query(query)
    topic_tokens = set(tokenize(current_topic)) if current_topic else set()
    q_symbols = (
        {s.lower() for s in extract_symbols(query)} if store.config.profile == "coding" else set()
    )
    need_value = bool(topic_tokens or q_symbols or flt)  # else values are read for the winners
    cands = set(bm25) | set(sims)
    rows = (
        _rows(store, conn, cands, full=True)
        if need_value
        else _light_rows(store, conn, ns_ids, cands)
    )
    keep = _keep(store, rows, flt, time_range, now)
    if (flt or time_range) and len(keep) < want:
        scanned = store._scan(conn, ns_ids, flt, now, _SCAN_CAP)
        extra_ids = [r[0] for r in scanned if _in_range(r, time_range)]
        if extra_ids:
            bm25.update(
                store._kw.search(conn, ns_ids, q, pool, extra_candidates=extra_ids, weights=qw)
            )
            rows.update(_rows(store, conn, [i for i in extra_ids if i not in rows], full=True))
            keep = _keep(store, rows, flt, time_range, now)
    if not keep:
        return []
    missing = [i for i in keep if i not in sims]
    if qvec is not None and missing:
        got = exact.lookup(missing) if exact is not None else {}
        sims.update(got)
        rest = [i for i in missing if i not in got]
        if rest and not (exact is not None and exact.complete):
            sims.update(_cosines(store, conn, rest, qvec))  # IVF namespaces: from SQLite
    # Fusion on arrays aligned with `keep` (sorted: the same order as `fuse_relevance`).
    keep.sort()
    w_kw = store.config.w_fusion_keyword
    cos = np.array([sims.get(i, np.nan) for i in keep], dtype=np.float64)
    bm = np.array([bm25.get(i, 0.0) for i in keep], dtype=np.float64)
    fz, bn, vn = fuse_arrays(bm, cos, w_kw)
    if store.config.prf_terms and store.config.prf_fused_docs and qvec is not None and q:
        # Second feedback round from the best fused candidates (store/expansion.py).
        # It only re-scores the candidates already held (measured: new candidates it would
        # bring add ~0.003 LoCoMo frac@10 for ~0.35 ms more per query).
        more = fused_feedback(store, conn, ns_ids, q, dict(zip(keep, fz.tolist(), strict=True)))
        if more:
            bm = bm + np.array([more.get(i, 0.0) for i in keep], dtype=np.float64)
            fz, bn, vn = fuse_arrays(bm, cos, w_kw)
    if store.config.neighbour_weight > 0 and any(rows[i][12] is not None for i in keep):
        # conversation context (store/neighbours.py): only items that name a session
        fused = dict(
            zip(keep, zip(fz.tolist(), bn.tolist(), vn.tolist(), strict=True), strict=True)
        )
        bm_of = dict(zip(keep, bm.tolist(), strict=True))
        keep, fused = with_neighbours(
            store, conn, keep, rows, fused, flt, time_range, now, want, need_value
        )
        fz = np.array([fused[i][0] for i in keep], dtype=np.float64)
        bn = np.array([fused[i][1] for i in keep], dtype=np.float64)
        vn = np.array([fused[i][2] for i in keep], dtype=np.float64)
        bm = np.array([bm_of.get(i, 0.0) for i in keep], dtype=np.float64)
        cos = np.array([sims.get(i, np.nan) for i in keep], dtype=np.float64)
    n = len(keep)
    krows = [rows[rid] for rid in keep]
    last = np.array([r[6] if r[6] is not None else r[5] for r in krows], dtype=np.float64)
    count = np.array([r[7] for r in krows], dtype=np.float64)
    # confidence column: a number, or NULL (-> NaN: "none given")
    conf = np.array([r[10] if r[10] is not None else np.nan for r in krows], dtype=np.float64)
    pref_item = np.array([r[11] == "preference" for r in krows], dtype=bool)
    on_topic = np.zeros(n, dtype=bool)
    sym = np.zeros(n)
    for j, rid in enumerate(keep) if (topic_tokens or q_symbols) else ():
        value = json.loads(rows[rid][3])
        if topic_tokens:
            on_topic[j] = bool(topic_tokens & set(tokenize(_keyword_text(store, value))))
        if q_symbols:
            item_syms = value.get("symbols")
            if not isinstance(item_syms, list):
                item_syms = extract_symbols(_keyword_text(store, value))
            have = {str(x).lower() for x in item_syms}
            sym[j] = len(q_symbols & have) / len(q_symbols)
        elif store.config.profile == "coding":
            sym[j] = bn[j]
    fused_arr = fz
    vnorm = vn
    parts = score_batch(
        config=store.config,
        now=now,
        fused=fused_arr,
        last_used=last,
        access_count=count,
        confidence=conf,
        preference_item=pref_item,
        preference_query=pref,
        on_topic=on_topic,
        symbol_match=sym,
        vector_norm=vnorm,
    )
    ids = np.asarray(keep, dtype=np.int64)
    order = np.lexsort((-ids, -parts["score"]))[offset:want]
    if not need_value:  # candidates were ranked on light rows: read the winners in full
        rows.update(_rows(store, conn, [keep[j] for j in order.tolist()], full=True))
    out = []
    for j in order.tolist():
        rid = keep[j]
        comp = ScoreParts(
            score=float(parts["score"][j]),
            keyword=float(fused_arr[j]),
            bm25=float(bm[j]),
            bm25_norm=float(bn[j]),
            vector=0.0 if np.isnan(cos[j]) else float(cos[j]),
            vector_norm=float(vnorm[j]),
            category_boost=float(parts["category_boost"][j]),
            recency=float(parts["recency"][j]),
            frequency=float(parts["frequency"][j]),
            confidence=float(parts["confidence"][j]),
            topic_boost=float(parts["topic_boost"][j]),
            symbol_match=float(sym[j]),
            profile=store.config.profile,
        )
        out.append(
            store._row_item(
                rows[rid], MemorySearchItem, score=comp.score, components=comp.as_dict()
            )
        )
    return out


def _keyword_text(store: HybridStore, value: Mapping[str, Any]) -> str:
    return "\n".join(t for _, t in store._texts(value, None))


def _in_range(row: Sequence[Any], tr: tuple[float | None, float | None] | None) -> bool:
    if not tr:
        return True
    lo, hi = tr
    return (lo is None or row[4] >= lo) and (hi is None or row[4] <= hi)


def _keep(
    store: HybridStore,
    rows: Mapping[int, Any],
    flt: Mapping[str, Any] | None,
    tr: Any,
    now: float,
) -> list[int]:
    omit = store._omit_expired()
    out = []
    for rid, row in rows.items():
        if omit and row[9] is not None and row[9] < now:
            continue
        if not _in_range(row, tr):
            continue
        if flt and not matches(json.loads(row[3]), flt):
            continue
        out.append(rid)
    return out


_LIGHT_COLS = (
    "i.id, NULL, NULL, NULL, i.created_at, i.updated_at, i.last_accessed, "
    "i.access_count, i.ttl_minutes, i.expires_at"
)


def _rows(store: HybridStore, conn: Any, ids: Iterable[int], full: bool = True) -> dict[int, Any]:
    """Candidate rows: the item columns plus confidence, category and session (columns the
    write path fills from the value). `full=False` leaves out namespace, key and value."""
    ids = list(ids)
    out: dict[int, Any] = {}
    cols = _ROW_COLS if full else _LIGHT_COLS
    join = "JOIN namespaces n ON n.id=i.ns_id " if full else ""
    for i in range(0, len(ids), 500):
        part = ids[i : i + 500]
        marks = ",".join("?" * len(part))
        for row in conn.execute(
            f"SELECT {cols}, i.confidence, i.category, i.session "
            f"FROM items i {join}WHERE i.id IN ({marks})",
            part,
        ):
            out[row[0]] = row
    return out


_ROW_SELECT = f"SELECT {_LIGHT_COLS}, i.confidence, i.category, i.session FROM items i "


def _light_rows(
    store: HybridStore, conn: Any, ns_ids: Sequence[int], ids: Iterable[int]
) -> dict[int, Any]:
    """`_rows(full=False)` through the store's row cache (rowcache.py). Namespaces of up to
    `keyword_cache_warm_docs` items are loaded whole on first use, like their postings."""
    cache = store._rowcache
    if cache.max_rows <= 0:  # turned off (`row_cache_rows=0`)
        return _rows(store, conn, ids, full=False)
    cache.sync(conn)
    if (
        len(ns_ids) <= store._kw.cache_max_namespaces
        and store._kw.stats(conn, ns_ids).n_docs <= store.config.keyword_cache_warm_docs
    ):
        cache.warm(conn, ns_ids, _namespace_rows)
    return cache.get(conn, ids, lambda c, missing: _rows(store, c, missing, full=False))


def _namespace_rows(conn: Any, ns_ids: Sequence[int]) -> dict[int, Any]:
    """Light rows of every item of the namespaces."""
    marks = ",".join("?" * len(ns_ids))
    cur = conn.execute(f"{_ROW_SELECT}WHERE i.ns_id IN ({marks})", list(ns_ids))
    return {row[0]: row for row in cur}


def _cosines(
    store: HybridStore, conn: Any, item_ids: Sequence[int], qvec: np.ndarray
) -> dict[int, float]:
    """Exact cosine of the query with the stored vectors of items (max over an item's paths).

    Vectors of exact (flat) namespaces come from the in-memory index; the rest from SQLite.
    """
    q = qvec / (np.linalg.norm(qvec) or 1.0)
    out: dict[int, float] = {}
    pairs: list[tuple[int, int]] = []
    for i in range(0, len(item_ids), 500):
        part = list(item_ids[i : i + 500])
        marks = ",".join("?" * len(part))
        pairs.extend(
            conn.execute(f"SELECT id, item_id FROM vectors WHERE item_id IN ({marks})", part)
        )
    if not pairs:
        return out
    held = store._vec.reconstruct([p[0] for p in pairs]) if store._vec is not None else {}
    rest = [p[0] for p in pairs if p[0] not in held]
    blobs: dict[int, bytes] = {}
    for i in range(0, len(rest), 500):
        part = rest[i : i + 500]
        marks = ",".join("?" * len(part))
        blobs.update(conn.execute(f"SELECT id, vec FROM vectors WHERE id IN ({marks})", part))
    sims: dict[int, float] = {}
    if held:
        vids = list(held)
        mat = np.stack([held[v] for v in vids])
        sims.update(zip(vids, (mat @ q).tolist(), strict=True))
    if blobs:
        vids = list(blobs)
        mat = decode_vecs([blobs[v] for v in vids], store.dims)
        norms = np.linalg.norm(mat, axis=1)
        norms[norms == 0] = 1.0
        sims.update(zip(vids, ((mat @ q) / norms).tolist(), strict=True))
    for vid, item_id in pairs:
        sim = sims.get(vid)
        if sim is not None and sim > out.get(item_id, -math.inf):
            out[item_id] = sim
    return out


def _like(
    store: HybridStore, conn: Any, ns_ids: Sequence[int], query: str, k: int
) -> dict[int, float]:
    """Substring fallback: items whose indexed text contains the query's words (plain data).

    SQLite's LIKE pre-selects on the stored JSON; the match is then confirmed on the item's
    indexed text (so keys and metadata never match).
    """
    words = [w for w in query.split() if w][:8] or ([query.strip()] if query.strip() else [])
    if not words:
        return {}
    scores: dict[int, float] = {}
    texts: dict[int, str] = {}
    for i in range(0, len(ns_ids), 500):
        part = list(ns_ids[i : i + 500])
        marks = ",".join("?" * len(part))
        for w in words:
            pat = "%" + w.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            for rid, value in conn.execute(
                f"SELECT id, value FROM items WHERE ns_id IN ({marks}) AND indexed = 1 "
                f"AND value LIKE ? ESCAPE '\\' ORDER BY id DESC LIMIT ?",
                (*part, pat, k),
            ):
                if rid not in texts:
                    texts[rid] = _keyword_text(store, json.loads(value)).lower()
                if w.lower() in texts[rid]:
                    scores[rid] = scores.get(rid, 0.0) + 1.0
    return scores


def list_namespaces(
    store: HybridStore, conn: Any, op: ListNamespacesOp, now: float
) -> list[tuple[str, ...]]:
    sql = "SELECT n.ns FROM namespaces n WHERE EXISTS (SELECT 1 FROM items i WHERE i.ns_id=n.id"
    if store._omit_expired():
        sql += " AND (i.expires_at IS NULL OR i.expires_at >= ?))"
        rows = conn.execute(sql, (now,)).fetchall()
    else:
        rows = conn.execute(sql + ")").fetchall()
    namespaces = [tuple(r[0].split(_SEP)) for r in rows]
    if op.match_conditions:
        namespaces = [ns for ns in namespaces if all(_ns_match(c, ns) for c in op.match_conditions)]
    if op.max_depth is not None:
        namespaces = sorted({ns[: op.max_depth] for ns in namespaces})
    else:
        namespaces = sorted(namespaces)
    return namespaces[op.offset : op.offset + op.limit]


def _ns_match(cond: MatchCondition, ns: tuple[str, ...]) -> bool:
    path = cond.path
    if len(ns) < len(path):
        return False
    pairs = (
        zip(ns, path, strict=False)
        if cond.match_type == "prefix"
        else zip(reversed(ns), reversed(path), strict=False)
    )
    if cond.match_type not in ("prefix", "suffix"):
        raise InvalidQueryError(f"unsupported match type: {cond.match_type}")
    return all(p == "*" or k == p for k, p in pairs)


def extended_op(
    store: HybridStore,
    prefix: Any,
    query: Any,
    flt: Any,
    limit: Any,
    offset: Any,
    refresh: Any,
    time_range: Any,
) -> tuple[SearchOp, tuple[float | None, float | None] | None]:
    """Validate the extras of `search` (time range) and build the equivalent SearchOp."""
    tr = None
    if time_range is not None:
        if not isinstance(time_range, (tuple, list)) or len(time_range) != 2:
            raise InvalidQueryError(
                "time_range must be a (start, end) pair; use None for open ends"
            )
        try:
            tr = (_as_epoch(time_range[0]), _as_epoch(time_range[1]))
        except (TypeError, ValueError) as exc:
            raise InvalidQueryError(
                f"time_range bounds must be datetimes, epoch seconds or ISO strings: {exc}"
            ) from None
        if tr[0] is not None and tr[1] is not None and tr[0] > tr[1]:
            raise InvalidQueryError("time_range start is after its end")
    refresh_v = (
        refresh
        if refresh is not None
        else bool((store.ttl_config or {}).get("refresh_on_read", True))
    )
    op = SearchOp(tuple(prefix), flt, limit, offset, query, refresh_v)
    return op, tr


def run_extended(
    store: HybridStore, op: SearchOp, q_vecs: dict[str, np.ndarray], topic: str | None, tr: Any
) -> list[Any]:
    store._ensure_open()
    now = store.clock()
    hits: list[Any]
    with store._db.lock:
        with store._db.read() as conn:
            if store._vec is not None:
                store._vec.sync(conn)
            ns_ids = store._ns_ids(conn, op.namespace_prefix)
            if not ns_ids or op.limit == 0:
                return []
            if op.query:
                qv = q_vecs.get(op.query[: store.config.max_query_chars])
                hits = ranked(
                    store,
                    conn,
                    ns_ids,
                    op.query,
                    qv,
                    op.filter,
                    op.limit,
                    op.offset,
                    now,
                    current_topic=topic,
                    time_range=tr,
                )
            else:
                rows = [
                    r for r in store._scan(conn, ns_ids, op.filter, now, None) if _in_range(r, tr)
                ]
                hits = [
                    store._row_item(r, MemorySearchItem)
                    for r in rows[op.offset : op.offset + op.limit]
                ]
        if op.refresh_ttl and any(h._rowid is not None for h in hits):
            with store._db.write() as conn:
                store._refresh_ttl(conn, [h._rowid for h in hits if h._rowid is not None], now)
    return hits
