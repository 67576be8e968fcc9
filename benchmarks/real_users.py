"""The fixed cost of a search on real conversations (issue #12), with the bundled USE model.

scale.py, users_cpu.py and stage_costs.py time synthetic users: short generated sentences and
two- or three-word queries. Real memories are longer and name their speakers, and real queries
are questions or a whole conversation so far, so a search reads more candidates and terms and
runs stages the synthetic data rarely reaches (the common-word projection, the relevance
judgement, the session neighbours). Here every user is real text from the dev data:

- LoCoMo: each conversation cut into users of 100 consecutive turns (`speaker: text`, with the
  session each turn belongs to, as retrieval_quality.py stores them), each of the
  conversation's questions asked of one of its users in turn;
- MADial-Bench zh and en: each user's memories, queried with the dialogues (multi-line).

Each user is searched once first (warm-up); then, in rounds whose order alternates, with the
medians of the rounds reported: the USE model embedding each query alone (wall time; the text a search embeds:
a dialogue without the agent's labels, text/transcript.py), a search
with that embedding inside it, as an agent meets it (wall time: USE's BLAS threads make the
process's CPU time count its matrix products twice on longer texts), the store's own part with
the query vectors memoised (the calling thread's CPU time, the steadier A/B figure), and the
naive baseline (rank-bm25 + exact FAISS, scale.py) over the same user's items.

    python benchmarks/real_users.py --data ../shared/datasets [--rounds 3]
        [--out docs/results/real_users.json] [--md docs/results/real_users.md]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from langgraph.store.base import PutOp

sys.path.insert(0, str(Path(__file__).resolve().parent))

import retrieval_quality as rq
import scale
from _overrides import Overrides, store_fields
from _results import command_line, machine, publish
from stage_costs import VARIANTS, MemoEmbeddings

import langmem_plus
from langmem_plus import HybridStore
from langmem_plus.store.ranking.ranker import Ranker, RankQuery
from langmem_plus.store.seams import search_hit
from langmem_plus.text.tokenize import tokenize
from langmem_plus.text.transcript import text_to_embed

USER_TURNS = 100
SETS = ("locomo", "madial_zh", "madial_en")


class QueryEmbeddings(MemoEmbeddings):
    """The memoised USE model (item texts embedded once), whose queries are embedded by the
    model at every call when `live`: the same class, so the same model name, for both kinds of
    search of one store."""

    def __init__(self, memo: MemoEmbeddings, live: bool) -> None:
        self.inner, self.model_name, self.memo, self.live = (
            memo.inner,
            memo.model_name,
            memo.memo,
            live,
        )

    def embed_query(self, text: str) -> list[float]:
        if self.live:
            return self.inner.embed_query(text)
        return super().embed_query(text)


@dataclass
class User:
    """One namespace of real text: its items (key, text, extra fields) and its queries."""

    set_name: str
    ns: tuple[str, str]
    items: list[tuple[str, str, dict[str, str]]]
    queries: list[str]


def users_of(data: Path) -> list[User]:
    """LoCoMo conversations cut into 100-turn users; MADial zh and en users as they are."""
    out: list[User] = []
    for unit in rq.load_locomo(data):
        chunks = [unit.docs[i : i + USER_TURNS] for i in range(0, len(unit.docs), USER_TURNS)]
        chunks = [c for c in chunks if len(c) >= USER_TURNS // 2]
        for j, chunk in enumerate(chunks):
            qs = [q.text for q in unit.queries[j :: len(chunks)]]
            items = [(k, t, unit.meta.get(k, {})) for k, t in chunk]
            out.append(User("locomo", ("real", f"{unit.name}-{j}"), items, qs))
    for lang in ("zh", "en"):
        for unit in rq.load_madial(data, lang):
            items = [(k, t, {}) for k, t in unit.docs]
            qs = [q.text for q in unit.queries]
            out.append(User(f"madial_{lang}", ("real", f"{lang}-{unit.name}"), items, qs))
    return [u for u in out if len(u.queries) >= 2]


def build(users: Sequence[User], emb: QueryEmbeddings) -> Path:
    """One SQLite store holding every user, its vectors from the memoised USE model."""
    db = Path(tempfile.mkdtemp()) / "real.db"
    store = HybridStore(db, index={"embed": emb, "fields": ["text"]})
    ops = [PutOp(u.ns, k, {"text": t, **extra}) for u in users for k, t, extra in u.items]
    for start in range(0, len(ops), 500):
        store.batch(ops[start : start + 500])
    store.close()
    return db


def timed(
    clock: Callable[[], float], users: Sequence[User], one: Callable[[User, str], Any]
) -> dict[str, list[float]]:
    """ms per call of `one(user, query)` for each user's queries after its first, per set."""
    got: dict[str, list[float]] = {}
    for u in users:
        for q in u.queries[1:]:
            t0 = clock()
            one(u, q)
            got.setdefault(u.set_name, []).append((clock() - t0) * 1000)
    return got


def searches(
    db: Path,
    emb: Any,
    users: Sequence[User],
    clock: Callable[[], float],
    over: Overrides = Overrides(),
) -> Any:
    """Warm searches of every user (its first query the warm-up) with these embeddings."""
    store = HybridStore(db, index={"embed": emb, "fields": ["text"]}, **over.store_kwargs())
    for u in users:
        store.search(u.ns, query=u.queries[0], limit=10)
    got = timed(clock, users, lambda u, q: store.search(u.ns, query=q, limit=10))
    store.close()
    return got


def again(text: str) -> str:
    """The text of a turn written again after the store was built (the agent loop's write)."""
    return f"{text} (said again)"


def after_writes(db: Path, emb: Any, users: Sequence[User]) -> dict[str, list[float]]:
    """The agent loop on a copy of the store: each user writes a turn (one of its own, said
    again) before each of its queries after the first; the search after it, thread CPU ms."""
    copy = db.with_name(f"loop-{time.monotonic_ns()}.db")
    shutil.copyfile(db, copy)
    store = HybridStore(copy, index={"embed": emb, "fields": ["text"]})
    for u in users:
        store.search(u.ns, query=u.queries[0], limit=10)
    got: dict[str, list[float]] = {}
    for u in users:
        for j, q in enumerate(u.queries[1:]):
            _k, text, extra = u.items[j % len(u.items)]
            store.put(u.ns, f"again-{j}", {"text": again(text), **extra})
            t0 = time.thread_time()
            store.search(u.ns, query=q, limit=10)
            got.setdefault(u.set_name, []).append((time.thread_time() - t0) * 1000)
    store.close()
    for path in copy.parent.glob(copy.name + "*"):
        path.unlink()
    return got


def naive(users: Sequence[User], emb: MemoEmbeddings) -> dict[str, list[float]]:
    """The naive baseline over each user's items (wall ms)."""
    got: dict[str, list[float]] = {}
    for u in users:
        texts = [t for _, t, _ in u.items]
        base = scale.Naive(texts, np.asarray(emb.embed_documents(texts), dtype=np.float32))
        for q in u.queries[1:]:
            qv = np.asarray(emb.embed_query(q), dtype=np.float32)
            t0 = time.perf_counter()
            base.search(q, qv)
            got.setdefault(u.set_name, []).append((time.perf_counter() - t0) * 1000)
    return got


MEASURES = ("use", "search_with_use", "store_cpu", "after_write_cpu", "naive")


def one_round(
    db: Path, users: Sequence[User], memo: MemoEmbeddings, flip: bool, measures: Sequence[str]
) -> dict[str, Any]:
    """Each measure once, in this round's order: {measure: {set: p50 ms}}."""
    wall = time.perf_counter
    jobs: dict[str, Callable[[], dict[str, list[float]]]] = {
        "use": lambda: timed(wall, users, lambda _u, q: memo.inner.embed_query(text_to_embed(q))),
        "search_with_use": lambda: searches(db, QueryEmbeddings(memo, True), users, wall),
        "store_cpu": lambda: searches(db, QueryEmbeddings(memo, False), users, time.thread_time),
        "after_write_cpu": lambda: after_writes(db, QueryEmbeddings(memo, False), users),
        "naive": lambda: naive(users, memo),
    }
    out: dict[str, Any] = {}
    for name in reversed(measures) if flip else measures:
        got = jobs[name]()
        got["all"] = [v for vs in got.values() for v in vs]
        out[name] = {s: float(np.median(v)) for s, v in got.items()}
        out[f"{name}_mean"] = {s: float(np.mean(v)) for s, v in got.items()}
    return out


def table(res: dict[str, Any]) -> str:
    """The Markdown table: per set, the medians over rounds and the issue's two ratios."""
    lines = [
        f"Machine: {res['machine']}. Command: `{res['command']}`. {res['rounds']} rounds "
        "alternated; p50 ms per set, the median of the rounds (range over rounds). USE and the "
        "searches with it in wall time; the store's own part in the calling thread's CPU time "
        "with the query vectors memoised; after a write: the agent loop, a turn written before "
        "each search (its mean holds the garbage collector's pauses)"
        ".",
        "",
        "| set | users | queries | USE alone | search with USE | (search with USE) / USE "
        "| store's part (CPU) | naive | store's part / naive | after a write (CPU) p50 / mean |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s, v in res["sets"].items():
        lines.append(
            f"| {s} | {v['users']} | {v['queries']} | {v['use']:.2f} | "
            f"{v['search_with_use']:.2f} | **{v['with_use_over_use']:.2f}x** "
            f"({v['with_use_over_use_min']:.2f}-{v['with_use_over_use_max']:.2f}) | "
            f"{v['store_cpu']:.2f} | {v['naive']:.3f} | **{v['store_over_naive']:.1f}x** | "
            f"{v['after_write_cpu']:.2f} / {v['after_write_cpu_mean']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def _tokenise_only(ranker: Ranker, conn: Any, rq: RankQuery) -> list[Any]:
    """A search's floor: the query read, nothing ranked (no hits)."""
    ranker.start(rq)
    return []


def _bm25_page(ranker: Ranker, conn: Any, rq: RankQuery) -> list[Any]:
    """A search's floor with a page: BM25's top 10 and their items, nothing else ranked."""
    s = ranker.start(rq)
    be = ranker.backend
    ids = sorted(be.keyword_search(conn, rq.ns_ids, s.q, rq.limit, weights=s.qw))[: rq.limit]
    rows = be.rows(conn, ids, full=True)
    return [search_hit(rows[i], 1.0, (None, 0)) for i in ids if i in rows]


FLOORS: dict[str, Callable[[Ranker, Any, RankQuery], list[Any]]] = {
    "floor: the query read, no ranking, no hits": _tokenise_only,
    "floor: BM25 top 10 and their items, no other stage": _bm25_page,
}


def stage_rounds(
    db: Path, users: Sequence[User], memo: MemoEmbeddings, rounds: int
) -> dict[str, Any]:
    """stage_costs.py's variants on real text: the store's part (thread CPU ms, p50 per set,
    the median of the rounds; variants alternated) and USE alone (wall ms) in the same run;
    then the floors (`FLOORS`): what a search costs with the ranking taken out."""
    per: dict[str, list[dict[str, float]]] = {name: [] for name in [*VARIANTS, *FLOORS]}
    use: list[dict[str, float]] = []
    for r in range(rounds):
        names = list(VARIANTS)[:: -1 if r % 2 else 1]
        for name in names:
            over = store_fields(VARIANTS[name])
            got = searches(db, QueryEmbeddings(memo, False), users, time.thread_time, over)
            got["all"] = [v for vs in got.values() for v in vs]
            per[name].append({s: float(np.median(v)) for s, v in got.items()})
        for name, floor in FLOORS.items():  # the ranker swapped for a floor, then restored
            rank, Ranker.rank = Ranker.rank, floor  # type: ignore[method-assign,assignment]
            try:
                got = searches(db, QueryEmbeddings(memo, False), users, time.thread_time)
            finally:
                Ranker.rank = rank  # type: ignore[method-assign]
            got["all"] = [v for vs in got.values() for v in vs]
            per.setdefault(name, []).append({s: float(np.median(v)) for s, v in got.items()})
        wall = time.perf_counter
        got = timed(wall, users, lambda _u, q: memo.inner.embed_query(text_to_embed(q)))
        got["all"] = [v for vs in got.values() for v in vs]
        use.append({s: float(np.median(v)) for s, v in got.items()})
    sets = list(use[0])
    return {
        "use": {s: float(np.median([u[s] for u in use])) for s in sets},
        "variants": {
            name: {s: float(np.median([r[s] for r in got])) for s in sets}
            for name, got in per.items()
        },
    }


def stage_table(res: dict[str, Any]) -> str:
    """The Markdown table of `stage_rounds`: per variant and set, the store's part and what
    it would make of a search with USE (memoised: ~0.3 ms below a search right after USE)."""
    st = res["stages"]
    sets = list(st["use"])
    lines = [
        f"Machine: {res['machine']}. Command: `{res['command']}`. {res['rounds']} rounds, "
        "variants alternated; the store's part in thread CPU ms with the query vectors memoised "
        "(p50 per set, median of the rounds); in brackets (part + USE) / USE with this run's USE "
        "p50 (wall): " + ", ".join(f"{s} {st['use'][s]:.2f} ms" for s in sets) + ".",
        "",
        "| variant | " + " | ".join(sets) + " |",
        "|---|" + "---:|" * len(sets),
    ]
    for name, v in st["variants"].items():
        cells = [f"{v[s]:.2f} ({(v[s] + st['use'][s]) / st['use'][s]:.2f}x)" for s in sets]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Build the real users' store, time the rounds, print and write the table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path("../shared/datasets"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="a tiny run (tests)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--md", type=Path, default=None)
    ap.add_argument(
        "--measures", default=",".join(MEASURES), help="a comma list of " + ", ".join(MEASURES)
    )
    ap.add_argument("--stages", action="store_true", help="stage_costs.py's variants instead")
    args = ap.parse_args(argv)
    measures = [m for m in MEASURES if m in args.measures.split(",")]
    tokenize("预热 jieba warm-up")
    users = users_of(args.data)
    if args.smoke:  # two users of each set, four queries each
        users = [u for s in SETS for u in [v for v in users if v.set_name == s][:2]]
        for u in users:
            u.queries = u.queries[:4]
    memo = MemoEmbeddings()
    queries = [text_to_embed(q) for u in users for q in u.queries]  # what a search embeds
    texts = [t for u in users for _, t, _ in u.items]
    memo.prime(texts + [again(t) for t in texts] + queries)
    db = build(users, QueryEmbeddings(memo, False))
    if args.stages:
        res = {
            "machine": machine(),
            "command": command_line("real_users.py", argv),
            "rounds": args.rounds,
            "code": str(Path(langmem_plus.__file__).resolve().parents[1]),
            "stages": stage_rounds(db, users, memo, args.rounds),
        }
        publish(res, stage_table(res), args.out, args.md)
        return res
    rounds = [one_round(db, users, memo, bool(r % 2), measures) for r in range(args.rounds)]
    sets: dict[str, Any] = {}
    for s in [*dict.fromkeys(u.set_name for u in users), "all"]:
        mine = [u for u in users if s in ("all", u.set_name)]
        v: dict[str, Any] = {
            "users": len(mine),
            "queries": sum(len(u.queries) - 1 for u in mine),
        }
        for m in measures:
            v[m] = float(np.median([r[m][s] for r in rounds]))
            v[f"{m}_rounds"] = [r[m][s] for r in rounds]
            v[f"{m}_mean"] = float(np.median([r[f"{m}_mean"][s] for r in rounds]))
        if "use" in v and "search_with_use" in v:
            ratios = [r["search_with_use"][s] / r["use"][s] for r in rounds]
            v["with_use_over_use"] = v["search_with_use"] / v["use"]
            v["with_use_over_use_min"], v["with_use_over_use_max"] = min(ratios), max(ratios)
        if "store_cpu" in v and "naive" in v:
            v["store_over_naive"] = v["store_cpu"] / v["naive"]
        sets[s] = v
    res = {
        "machine": machine(),
        "command": command_line("real_users.py", argv),
        "rounds": args.rounds,
        # the tree timed (the script puts its own tree first on sys.path)
        "code": str(Path(langmem_plus.__file__).resolve().parents[1]),
        "sets": sets,
    }
    if set(measures) == set(MEASURES):
        publish(res, table(res), args.out, args.md)
    else:
        print(
            json.dumps(
                {s: {k: v[k] for m in measures for k in (m, f"{m}_mean")} for s, v in sets.items()}
                | {"code": res["code"]}
            )
        )
    return res


if __name__ == "__main__":
    main()
