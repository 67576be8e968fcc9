"""Speed on a busy host: the agent loop and the REST server beside a busy neighbour (issue #31).

Every variant runs in its own processes, interleaved round by round (the order rotates), beside
`--neighbours` processes that spin on a CPU each, so the variants share the same load:

* `default`: the shipped embedder (a query or a small batch on one BLAS thread).
* `all_threads`: every call on the threads the process allows (`USEEmbeddings(parallel_min=1)`,
  the embedder before issue #31).
* `one_thread`: the shipped embedder in a process started with `OPENBLAS_NUM_THREADS=1`.
* `no_embeddings`: keyword-only (`embeddings=False`).

Agent loop (one process per variant and round): `HybridStore.search` of LoCoMo questions in a
namespace of 100 LoCoMo turns, and `Memory.add` of one LoCoMo exchange (user turn + reply,
facts by the offline rules), one after the other as an agent does them. REST: `create_app`
under uvicorn (its own process), `--clients` client threads for `--seconds`, each request an
add of one exchange (30 %) or a search (70 %) for one of the clients' users (each holding 100
turns before the clock starts); afterwards every id an add returned is read back (lost writes).

    python benchmarks/busy_host.py --data ../shared/datasets [--neighbours 1] [--rounds 2]
        [--seconds 20] [--clients 8] [--out docs/results/busy_host.json --md docs/results/busy_host.md]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import command_line, machine, publish  # noqa: E402

VARIANTS = ("default", "all_threads", "one_thread", "no_embeddings")
PRELOAD = 100  # turns per user before the clock starts


# ============================================================================ data
def locomo(data: Path) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    """LoCoMo turns ('speaker: text'), exchanges (a turn and the reply to it) and questions."""
    convs = json.loads((data / "locomo" / "locomo_dev.json").read_text(encoding="utf-8"))
    turns: list[str] = []
    exchanges: list[tuple[str, str]] = []
    questions: list[str] = []
    for conv in convs:
        c = conv["conversation"]
        for key in sorted(k for k in c if k.startswith("session_") and not k.endswith("time")):
            sess = [t for t in c[key] if isinstance(t, dict) and t.get("text")]
            turns.extend(f"{t['speaker']}: {t['text']}" for t in sess)
            exchanges.extend(
                (a["text"], b["text"]) for a, b in zip(sess[::2], sess[1::2], strict=False)
            )
        questions.extend(str(q["question"]) for q in conv["qa"])
    return turns, exchanges, questions


def _pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs), q)) if xs else float("nan")


def _stats(xs: list[float]) -> dict[str, float]:
    return {"n": len(xs), "p50": _pct(xs, 50), "p95": _pct(xs, 95), "mean": float(np.mean(xs))}


# ============================================================================ children
def _memory(variant: str, path: str | None) -> Any:
    from langmem_plus.embeddings import USEEmbeddings
    from langmem_plus.memory import Memory

    if variant == "no_embeddings":
        return Memory(path, embeddings=False)
    if variant == "all_threads":
        return Memory(path, embeddings=USEEmbeddings(parallel_min=1))
    return Memory(path)


def child_agent(args: argparse.Namespace) -> None:
    """The agent loop: search (HybridStore.search), then keep the exchange (Memory.add)."""
    turns, exchanges, questions = locomo(Path(args.data))
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        mem = _memory(args.variant, str(Path(tmp) / "m.db"))
        user = "u0"
        mem.add([{"role": "user", "content": t} for t in turns[:PRELOAD]], user, infer=False)
        ns = mem.namespace(user)
        assert mem.store.search(ns, query="warm up", limit=5), "the namespace is empty"
        search_ms: list[float] = []
        add_ms: list[float] = []
        for i in range(args.loops):
            q = rng.choice(questions)
            t0 = time.perf_counter()
            mem.store.search(ns, query=q, limit=5)
            search_ms.append((time.perf_counter() - t0) * 1000)
            u, a = exchanges[(args.seed * 7919 + i) % len(exchanges)]
            msgs = [{"role": "user", "content": u}, {"role": "assistant", "content": a}]
            t0 = time.perf_counter()
            mem.add(msgs, user)
            add_ms.append((time.perf_counter() - t0) * 1000)
        mem.close()
    print(json.dumps({"search": _stats(search_ms), "add": _stats(add_ms)}))


def child_server(args: argparse.Namespace) -> None:
    """The REST server, its users preloaded; prints 'ready' once it listens."""
    import uvicorn

    from langmem_plus.server import create_app

    turns, _, _ = locomo(Path(args.data))
    with tempfile.TemporaryDirectory() as tmp:
        mem = _memory(args.variant, str(Path(tmp) / "m.db"))
        for c in range(args.clients):
            part = turns[c * PRELOAD : (c + 1) * PRELOAD]
            mem.add([{"role": "user", "content": t} for t in part], f"u{c}", infer=False)
        app = create_app(mem, rate_limit=None)
        config = uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning")
        server = uvicorn.Server(config)
        threading.Timer(0.5, lambda: print("ready", flush=True)).start()
        server.run()
        mem.close()


# ============================================================================ parent
def _env(variant: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    if variant == "one_thread":
        env["OPENBLAS_NUM_THREADS"] = "1"
    return env


def _child(args: argparse.Namespace, role: str, variant: str, *extra: str) -> list[str]:
    return [
        sys.executable, __file__, "--child", role, "--variant", variant, "--data", args.data,
        "--loops", str(args.loops), "--clients", str(args.clients), "--seed", str(args.seed),
        *extra,
    ]  # fmt: skip


def run_agent(args: argparse.Namespace, variant: str) -> dict[str, Any]:
    out = subprocess.run(
        _child(args, "agent", variant), env=_env(variant), capture_output=True, text=True,
        timeout=1800, check=False,
    )  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"agent child {variant} failed:\n{out.stderr[-3000:]}")
    res: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return res


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _request(conn: http.client.HTTPConnection, method: str, path: str, user: str,
             body: Any = None) -> tuple[int, Any]:  # fmt: skip
    headers = {"X-User-Id": user}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    conn.request(method, path, body=data, headers=headers)
    resp = conn.getresponse()
    raw = resp.read()
    return resp.status, (json.loads(raw) if raw else None)


def run_rest(args: argparse.Namespace, variant: str) -> dict[str, Any]:
    _, exchanges, questions = locomo(Path(args.data))
    port = _free_port()
    proc = subprocess.Popen(
        _child(args, "server", variant, "--port", str(port)), env=_env(variant),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"server {variant} did not start: {line!r} {proc.stderr.read()}")
        stop = time.perf_counter() + args.seconds
        lat: dict[str, list[float]] = {"add": [], "search": []}
        errors: list[str] = []
        acked: list[tuple[str, str]] = []
        lock = threading.Lock()

        def client(c: int) -> None:
            rng = random.Random(args.seed * 100 + c)
            user = f"u{c}"
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            while time.perf_counter() < stop:
                if rng.random() < 0.3:
                    u, a = rng.choice(exchanges)
                    kind, path = "add", "/memory/long-term"
                    body: Any = {"messages": [{"role": "user", "content": u},
                                              {"role": "assistant", "content": a}]}  # fmt: skip
                else:
                    kind, path = "search", "/memory/search"
                    body = {"query": rng.choice(questions), "limit": 5}
                t0 = time.perf_counter()
                try:
                    status, got = _request(conn, "POST", path, user, body)
                except (OSError, http.client.HTTPException) as exc:
                    with lock:
                        errors.append(f"{kind}: {exc!r}")
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                    continue
                ms = (time.perf_counter() - t0) * 1000
                with lock:
                    if status not in (200, 201):
                        errors.append(f"{kind}: HTTP {status}")
                        continue
                    lat[kind].append(ms)
                    if kind == "add":
                        acked.extend((user, i) for i in got["ids"])
            conn.close()

        t_start = time.perf_counter()
        threads = [threading.Thread(target=client, args=(c,)) for c in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t_start
        lost = 0
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for user, mid in acked:
            status, _ = _request(conn, "GET", f"/memory/long-term/{mid}", user)
            lost += status != 200
        conn.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    both = lat["add"] + lat["search"]
    return {
        "requests": len(both),
        "req_per_s": len(both) / wall,
        "all": _stats(both),
        "add": _stats(lat["add"]),
        "search": _stats(lat["search"]),
        "errors": len(errors),
        "error_samples": errors[:5],
        "acked_ids": len(acked),
        "lost_writes": lost,
    }


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path(
        "/proc/loadavg"
    ).exists() else "?"  # fmt: skip


def _spin() -> None:
    while True:
        pass


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="/work/shared/datasets")
    ap.add_argument("--neighbours", type=int, default=1, help="busy processes beside the run")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--loops", type=int, default=200, help="agent-loop iterations per run")
    ap.add_argument("--seconds", type=float, default=20.0, help="REST load per run")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--parts", default="agent,rest")
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--md", type=Path)
    ap.add_argument("--child", choices=("agent", "server", "spin"))
    ap.add_argument("--variant", choices=VARIANTS)
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args(argv)
    if args.child == "spin":
        _spin()
    if args.child == "agent":
        child_agent(args)
        return {}
    if args.child == "server":
        child_server(args)
        return {}

    variants = [v for v in args.variants.split(",") if v]
    parts = [p for p in args.parts.split(",") if p]
    spinners = [
        subprocess.Popen([sys.executable, __file__, "--child", "spin"])
        for _ in range(args.neighbours)
    ]
    rounds: list[dict[str, Any]] = []
    try:
        for r in range(args.rounds):
            order = variants[r % len(variants) :] + variants[: r % len(variants)]
            entry: dict[str, Any] = {"round": r + 1, "load_before": _load()}
            for part in parts:
                for v in order:
                    res = run_agent(args, v) if part == "agent" else run_rest(args, v)
                    entry.setdefault(part, {})[v] = res
                    print(f"round {r + 1} {part} {v}: {json.dumps(res)[:300]}", flush=True)
            entry["load_after"] = _load()
            rounds.append(entry)
    finally:
        for p in spinners:
            p.kill()
            p.wait()
    res = {
        "command": command_line("busy_host.py", argv),
        "machine": machine(),
        "cpus": os.cpu_count(),
        "neighbours": args.neighbours,
        "rounds": rounds,
    }
    publish(res, render(res, variants, parts), args.out, args.md)
    return res


def _ms(x: float) -> str:
    return f"{x:.1f}" if x < 100 else f"{x:,.0f}"


def render(res: dict[str, Any], variants: list[str], parts: list[str]) -> str:
    lines = [
        f"Command: `{res['command']}`",
        "",
        f"{res['machine']}, {res['cpus']} CPUs; {res['neighbours']} busy neighbour process(es) "
        "spinning beside the run; variants interleaved round by round. Load average "
        "(1/5/15 min) before / after each round: "
        + "; ".join(f"{e['load_before']} / {e['load_after']}" for e in res["rounds"])
        + ".",
        "",
    ]
    if "agent" in parts:
        lines += [
            "### Agent loop: `HybridStore.search` in a 100-turn namespace, `Memory.add` of one "
            "LoCoMo exchange",
            "",
            "| round | variant | search p50 / p95 ms | add p50 / p95 ms | add p95 / p50 | "
            "search p95 / one_thread's |",
            "|---|---|---|---|---|---|",
        ]
        for e in res["rounds"]:
            ag = e["agent"]
            base = ag.get("one_thread", {}).get("search", {}).get("p95")
            for v in variants:
                s, a = ag[v]["search"], ag[v]["add"]
                ratio = f"{s['p95'] / base:.2f}x" if base else "-"
                lines.append(
                    f"| {e['round']} | {v} | {_ms(s['p50'])} / {_ms(s['p95'])} | "
                    f"{_ms(a['p50'])} / {_ms(a['p95'])} | {a['p95'] / a['p50']:.2f} | {ratio} |"
                )
        lines.append("")
    if "rest" in parts:
        lines += [
            "### REST: 30 % adds, 70 % searches, client threads for the whole run",
            "",
            "| round | variant | req/s | vs one_thread | p50 / p95 ms | add p95 ms | "
            "search p95 ms | errors | acked ids | lost writes |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for e in res["rounds"]:
            rest = e["rest"]
            base = rest.get("one_thread", {}).get("req_per_s")
            for v in variants:
                x = rest[v]
                ratio = f"{x['req_per_s'] / base:.2f}x" if base else "-"
                lines.append(
                    f"| {e['round']} | {v} | {x['req_per_s']:.1f} | {ratio} | "
                    f"{_ms(x['all']['p50'])} / {_ms(x['all']['p95'])} | "
                    f"{_ms(x['add']['p95'])} | {_ms(x['search']['p95'])} | {x['errors']} | "
                    f"{x['acked_ids']} | {x['lost_writes']} |"
                )
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
