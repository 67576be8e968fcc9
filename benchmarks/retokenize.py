"""How long opening a store takes when its keyword index was built by another tokenizer
version (the one-time rebuild of store/sqlite/maintenance.py `keep_tokens_current`, and
Milvus Lite's `MilvusStorage._keep_tokens_current`), against a plain open of the same store.

Items: LoCoMo dev turns (`speaker: text [caption]`, read from --data, cycled to --items with a
counter appended so every text differs), put into 100-item namespaces, keyword-only (the
rebuild never touches vectors). Each round stamps the store with version 1 and opens it
(rebuild), then opens it once more (current: no rebuild), alternating. On SQLite it also
records the longest write transaction of each open (BEGIN IMMEDIATE to COMMIT): how long
another process's write would wait on it (the busy timeout is 5 s).

    python benchmarks/retokenize.py --data ../shared/datasets --items 10000 \
        --out docs/results/retokenize.json --md docs/results/retokenize.md
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import retrieval_quality as rq  # noqa: E402
from _results import command_line, machine, publish  # noqa: E402
from langgraph.store.base import PutOp  # noqa: E402

from langmem_plus import HybridStore  # noqa: E402
from langmem_plus.store.db.database import Database  # noqa: E402
from langmem_plus.store.sqlite.maintenance import TOKENIZER_META  # noqa: E402

_PER_NS = 100


def _texts(data: Path, n: int) -> list[str]:
    turns = [t for unit in rq.load_locomo(data) for _id, t in unit.docs]
    return [f"{turns[i % len(turns)]} #{i}" for i in range(n)]


def _fill(store: HybridStore, texts: list[str]) -> None:
    for i in range(0, len(texts), _PER_NS):
        ns = ("memories", f"u{i // _PER_NS}")
        store.batch(
            [PutOp(ns, f"k{i + j}", {"text": t}) for j, t in enumerate(texts[i : i + _PER_NS])]
        )


def _open_s(path: Path) -> float:
    t0 = time.perf_counter()
    HybridStore(path, index=False).close()
    return time.perf_counter() - t0


@contextmanager
def _write_spans(spans: list[float]) -> Iterator[None]:
    """Within: the seconds of each outermost `Database.write` transaction go to `spans`."""
    plain = Database.write

    @contextmanager
    def timed(self: Database) -> Iterator[Any]:
        outer = not self._writing
        t0 = time.perf_counter()
        with plain(self) as conn:
            yield conn
        if outer:
            spans.append(time.perf_counter() - t0)

    Database.write = timed  # type: ignore[method-assign]
    try:
        yield
    finally:
        Database.write = plain  # type: ignore[method-assign]


def _open_locked_s(path: Path) -> tuple[float, float]:
    """(seconds to open, seconds of its longest write transaction)."""
    spans: list[float] = []
    with _write_spans(spans):
        took = _open_s(path)
    return took, max(spans, default=0.0)


def sqlite_rounds(texts: list[str], rounds: int, tmp: Path) -> dict[str, Any]:
    path = tmp / "r.db"
    s = HybridStore(path, index=False)
    _fill(s, texts)
    s.close()
    rebuild, plain, locked = [], [], []
    for _ in range(rounds):
        conn = sqlite3.connect(path)
        conn.execute("UPDATE meta SET value='1' WHERE key=?", (TOKENIZER_META,))
        conn.commit()
        conn.close()
        took, held = _open_locked_s(path)
        rebuild.append(took)
        locked.append(held)
        plain.append(_open_s(path))
    return {"rebuild_s": rebuild, "plain_open_s": plain, "write_lock_s": locked}


def milvus_rounds(texts: list[str], rounds: int, tmp: Path) -> dict[str, Any]:
    from langmem_plus.store.milvus import storage as ms

    path = tmp / "r.milvus.db"
    s = HybridStore(path, index=False)
    _fill(s, texts)
    s.close()
    rebuild, plain = [], []
    for _ in range(rounds):
        s = HybridStore(path, index=False)
        st: Any = s._storage
        st.client.alter_collection_properties(
            st.names.items, properties={ms._TOKENIZER_PROPERTY: "1"}
        )
        s.close()
        rebuild.append(_open_s(path))
        plain.append(_open_s(path))
    return {"rebuild_s": rebuild, "plain_open_s": plain}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=rq.DEFAULT_DATA)
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--milvus", action="store_true", help="also Milvus Lite (slow to fill)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--md", type=Path, default=None)
    args = ap.parse_args(argv)
    texts = _texts(args.data, args.items)
    res: dict[str, Any] = {
        "command": command_line("retokenize.py", argv),
        "machine": machine(),
        "items": args.items,
        "date": time.strftime("%Y-%m-%d"),
    }
    with tempfile.TemporaryDirectory() as tmp:
        res["sqlite"] = sqlite_rounds(texts, args.rounds, Path(tmp))
        if args.milvus:
            res["milvus_lite"] = milvus_rounds(texts, args.rounds, Path(tmp))
    lines = [
        f"Opening a store of {args.items:,} items whose keyword index was built by another "
        f"tokenizer version (median of {args.rounds}; {res['machine']}, {res['date']})",
        "",
        "| backend | open with rebuild, s | plain open, s | rebuild per 10k items, s "
        "| write lock held per 10k items, s |",
        "|---|---|---|---|---|",
    ]
    for name in ("sqlite", "milvus_lite"):
        if name in res:
            r = statistics.median(res[name]["rebuild_s"])
            p = statistics.median(res[name]["plain_open_s"])
            res[name]["per_10k_s"] = round((r - p) * 10_000 / args.items, 3)
            held = "n/a (no write lock)"
            if "write_lock_s" in res[name]:
                w = statistics.median(res[name]["write_lock_s"])
                res[name]["write_lock_per_10k_s"] = round(w * 10_000 / args.items, 3)
                held = f"{res[name]['write_lock_per_10k_s']:.2f}"
            lines.append(f"| {name} | {r:.2f} | {p:.2f} | {res[name]['per_10k_s']:.2f} | {held} |")
    lines += ["", f"`{res['command']}`", ""]
    publish(res, "\n".join(lines), args.out, args.md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
