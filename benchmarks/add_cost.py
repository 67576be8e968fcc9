"""What one `Memory.add` of an exchange costs: SQL statements and wall time without the
embedding, on real conversations, against another tree of the code in the same run.

LoCoMo dev conversations are replayed exchange by exchange (a speaker's turn and the reply,
with the session's date) into a fresh file store with the bundled USE embeddings, as
`benchmarks/e2e_memory.py` does. For each `add`: the embedding model's calls (a query, or a
batch of documents; a conversation's first add also warms the model up: one call more) and
the time spent in them, the SQL statements the store's connection ran (its trace callback; a
trigger's program, which the callback reports as the statement that fired it again, not
counted) and the wall time less the time spent in the embedding model. With `--baseline
TREE`, rounds alternate between this tree and the other one (each run in its own process
with that tree first on `PYTHONPATH`), so both are measured under the same load.

    python benchmarks/add_cost.py --data ../shared/datasets --baseline /path/to/old/tree \
        --out docs/results/add_cost.json --md docs/results/add_cost.md
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from _results import command_line, machine, publish  # noqa: E402


class _Counted:
    """Counts the embedding model's calls (a query or a batch of documents: one call each)."""

    def __init__(self, timed: Any) -> None:
        self.timed = timed
        self.calls = 0

    def wrap(self) -> Any:
        timed, counter = self.timed, self
        docs, query = timed.embed_documents, timed.embed_query

        def embed_documents(texts: list[str]) -> list[list[float]]:
            counter.calls += 1
            return docs(texts)

        def embed_query(text: str) -> list[float]:
            counter.calls += 1
            return query(text)

        timed.embed_documents, timed.embed_query = embed_documents, embed_query
        return timed


def measure(data: Path, convs: int, exchanges: int) -> dict[str, Any]:
    """Replay the first `exchanges` exchanges of `convs` conversations; per add: statements,
    milliseconds without the embedding and the embedding model's calls."""
    # langmem_plus first: the tree on PYTHONPATH (e2e_memory puts this tree on sys.path)
    from langmem_plus import Memory
    from langmem_plus.embeddings import default_embeddings

    from e2e_memory import TimedEmbeddings, load_locomo  # isort: skip

    inner = default_embeddings()
    statements: list[int] = []
    ms: list[float] = []
    embed_calls: list[int] = []
    embed_ms: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for conv in load_locomo(data, convs, 0):
            counted = _Counted(TimedEmbeddings(inner))
            emb = counted.wrap()
            mem = Memory(Path(tmp) / f"{conv.name}.db", embeddings=emb)
            count = [0]
            last = [""]

            def trace(sql: str, count: list[int] = count, last: list[str] = last) -> None:
                # a trigger's program is traced as "-- TRIGGER ..." or (Python 3.11's
                # expanded SQL) as the statement that fired it again: counted once
                if not sql.startswith("--") and sql != last[0]:
                    count[0] += 1
                last[0] = sql

            mem.store._db.conn.set_trace_callback(trace)
            for ex in conv.exchanges[:exchanges]:
                kwargs: dict[str, Any] = {"session_id": ex.session_id}
                if ex.occurred_at is not None:
                    kwargs["timestamp"] = ex.occurred_at
                count[0], last[0] = 0, ""
                c0, e0, t0 = counted.calls, emb.seconds, time.perf_counter()
                mem.add(ex.messages, conv.name, **kwargs)
                wall = time.perf_counter() - t0
                ms.append((wall - (emb.seconds - e0)) * 1000)
                statements.append(count[0])
                embed_calls.append(counted.calls - c0)
                embed_ms.append((emb.seconds - e0) * 1000)
            mem.close()
    import langmem_plus

    return {
        "statements": statements,
        "ms": ms,
        "embed_calls": embed_calls,
        "embed_ms": embed_ms,
        "code": str(Path(langmem_plus.__file__).parents[1]),
    }


def _child(tree: Path, args: argparse.Namespace) -> dict[str, Any]:
    """`measure` in a process of its own that imports the code of `tree`."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--data", str(args.data)]
    cmd += ["--convs", str(args.convs), "--exchanges", str(args.exchanges)]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _commit(tree: Path) -> list[str]:
    """The tree's commit, and "+changes" when its tracked files differ from it."""
    git = ["git", "-C", str(tree)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run([*git, "diff", "--quiet", "HEAD"], capture_output=True).returncode
    return [head.stdout.strip() or "?", *(["+changes"] if dirty else [])]


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    st = [s for r in runs for s in r["statements"]]
    ms = [m for r in runs for m in r["ms"]]
    return {
        "adds": len(st),
        "statements_median": statistics.median(st),
        "statements_mean": statistics.fmean(st),
        "ms_p50": statistics.median(ms),
        "ms_mean": statistics.fmean(ms),
        "ms_p95": sorted(ms)[int(0.95 * (len(ms) - 1))],
        "embed_calls_mean": statistics.fmean(c for r in runs for c in r["embed_calls"]),
        "embed_ms_mean": statistics.fmean(m for r in runs for m in r["embed_ms"]),
    }


def markdown(res: dict[str, Any]) -> str:
    rows = [
        "| tree | adds | SQL statements (median / mean) | ms without embedding (p50 / mean / p95) "
        "| embedding calls / ms per add (mean) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, s in res["trees"].items():
        rows.append(
            f"| {name} | {s['adds']} | {s['statements_median']:.0f} / {s['statements_mean']:.1f} "
            f"| {s['ms_p50']:.2f} / {s['ms_mean']:.2f} / {s['ms_p95']:.2f} "
            f"| {s['embed_calls_mean']:.2f} / {s['embed_ms_mean']:.2f} |"
        )
    if "ratio" in res:
        r = res["ratio"]
        rows.append("")
        rows.append(
            f"this / baseline: statements {r['statements_median']:.2f}x (median), "
            f"time {r['ms_p50']:.2f}x (p50), {r['ms_mean']:.2f}x (mean); "
            f"time in the embedding {r['embed_ms_mean']:.2f}x (mean)"
        )
    trees = ", ".join(f"{name}: {' '.join(c)}" for name, c in res["commits"].items())
    rows += ["", f"`{res['command']}` — {res['machine']}; load: {res['load']}; {trees}"]
    if res.get("note"):
        rows += ["", res["note"]]
    return "\n".join(rows) + "\n"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "datasets")
    ap.add_argument("--convs", type=int, default=2, help="LoCoMo conversations replayed")
    ap.add_argument("--exchanges", type=int, default=80, help="exchanges per conversation")
    ap.add_argument("--rounds", type=int, default=3, help="rounds per tree, alternated")
    ap.add_argument("--baseline", type=Path, help="another tree of the code, measured beside")
    ap.add_argument("--note", help="what else ran on the machine (written with the table)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--md", type=Path)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.data, args.convs, args.exchanges)))
        return {}
    trees = {"this": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for r in range(args.rounds):
        order = list(trees) if r % 2 == 0 else list(reversed(trees))
        for name in order:
            runs[name].append(_child(trees[name], args))
    res: dict[str, Any] = {
        "command": command_line("add_cost.py", argv),
        "machine": machine(),
        "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "code": {name: sorted({r["code"] for r in rs}) for name, rs in runs.items()},
        "commits": {name: _commit(tree) for name, tree in trees.items()},
        "note": args.note,
        "trees": {name: _summary(rs) for name, rs in runs.items()},
    }
    if "baseline" in res["trees"]:
        this, base = res["trees"]["this"], res["trees"]["baseline"]
        res["ratio"] = {
            k: this[k] / base[k]
            for k in ("statements_median", "ms_p50", "ms_mean", "embed_ms_mean")
        }
    publish(res, markdown(res), args.out, args.md)
    return res


if __name__ == "__main__":
    main()
