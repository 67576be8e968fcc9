"""Ranking snapshot: every dev query's top 10 (keys, scores, components), to prove a refactor
changed nothing.

`--out F` writes the snapshot; `--compare F` rebuilds it on the current code and lists every
query whose ranking, score or a component differs (beyond `--tol`). Exit status 1 on a
difference. Uses the retrieval-quality loaders and cached embeddings, plus a few searches with
filters, `current_topic`, `time_range`, offsets and sessions so every search path is covered.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _overrides import Overrides, parse_overrides
from langgraph.store.base import PutOp
from retrieval_quality import CachedEmbeddings, Unit, load_locomo, load_madial

from langmem_plus.store.hybrid import HybridStore

K = 10
DIGITS: int | None = 6  # None (`--full-precision`): scores and components as computed


def _round(x: float) -> float:
    return x if DIGITS is None else round(x, DIGITS)


def _hits(store: HybridStore, ns: tuple[str, ...], **kw: Any) -> list[dict[str, Any]]:
    out = []
    for h in store.search(ns, limit=kw.pop("limit", K), **kw):
        comp = getattr(h, "components", None) or {}
        out.append(
            {
                "key": h.key,
                "score": _round(float(h.score or 0.0)),
                "components": {
                    k: _round(v) if isinstance(v, float) else v for k, v in comp.items()
                },
            }
        )
    return out


def snapshot_unit(
    unit: Unit, emb: CachedEmbeddings, max_q: int | None, over: Overrides = Overrides()
) -> dict[str, Any]:
    """The unit's rankings: each query plain, and a sample under every search option."""
    index = {"dims": 512, "embed": emb, "fields": ["text"]}
    store = HybridStore(index=index, **over.store_kwargs())  # type: ignore[arg-type]
    ns = ("bench", unit.name)
    store.batch(
        [PutOp(ns, key, {"text": text, **unit.meta.get(key, {})}) for key, text in unit.docs]
    )
    queries = unit.queries[:max_q] if max_q else unit.queries
    out: dict[str, Any] = {}
    for i, q in enumerate(queries):
        out[f"{i}"] = _hits(store, ns, query=q.text)
        if i % 7 == 0:
            out[f"{i}/offset"] = _hits(store, ns, query=q.text, offset=3, limit=5)
            out[f"{i}/topic"] = _hits(store, ns, query=q.text, current_topic=queries[0].text)
            sess = next(iter(unit.meta.values()), {})
            if sess:
                out[f"{i}/filter"] = _hits(store, ns, query=q.text, filter=dict(sess))
    store.close()
    return out


def build(data: Path, max_q: int | None, over: Overrides = Overrides()) -> dict[str, Any]:
    """The snapshot over LoCoMo dev and MADial zh/en (`over`: the store's config and tuning,
    default shipped)."""
    emb = CachedEmbeddings()
    units = load_locomo(data) + load_madial(data, "zh") + load_madial(data, "en")
    return {u.name: snapshot_unit(u, emb, max_q, over) for u in units}


def diff(old: dict[str, Any], new: dict[str, Any], tol: float) -> list[str]:
    """Human-readable differences between two snapshots."""
    out = []
    for unit, queries in old.items():
        for q, hits in queries.items():
            got = new.get(unit, {}).get(q)
            if got is None:
                out.append(f"{unit} {q}: missing")
                continue
            if [h["key"] for h in hits] != [h["key"] for h in got]:
                out.append(
                    f"{unit} {q}: order {[h['key'] for h in hits]} -> {[h['key'] for h in got]}"
                )
                continue
            for a, b in zip(hits, got, strict=True):
                for name, va in {"score": a["score"], **a["components"]}.items():
                    vb = b["score"] if name == "score" else b["components"].get(name)
                    bad = (
                        abs(va - vb) > tol
                        if isinstance(va, float) and isinstance(vb, float)
                        else va != vb
                    )
                    if bad:
                        out.append(f"{unit} {q} {a['key']}: {name} {va} -> {vb}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    # Recency depends on "now": every write and search sees one fixed time, so two runs agree.
    time.time = lambda: 1_800_000_000.0
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default="../shared/datasets")
    ap.add_argument("--max-q", type=int, default=None, help="queries per unit (default: all)")
    ap.add_argument("--out")
    ap.add_argument("--compare")
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument(
        "--full-precision",
        action="store_true",
        help="keep scores unrounded (with --tol 0: a speed change must give the same floats)",
    )
    ap.add_argument(
        "--set-config",
        nargs="*",
        default=[],
        metavar="SECTION.FIELD=JSON",
        help="settings or tuning.FIELD constants (e.g. a new ranking step switched off: it "
        "must give the old snapshot)",
    )
    args = ap.parse_args(argv)
    global DIGITS
    if args.full_precision:
        DIGITS = None
    snap = build(Path(args.data), args.max_q, parse_overrides(args.set_config))
    if args.out:
        Path(args.out).write_text(json.dumps(snap, ensure_ascii=False))
        print(f"wrote {args.out}: {sum(len(v) for v in snap.values())} rankings")
    if args.compare:
        problems = diff(json.loads(Path(args.compare).read_text()), snap, args.tol)
        for line in problems[:50]:
            print(line)
        print(f"{len(problems)} differences")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
