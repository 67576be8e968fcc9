"""A real chat-model client against a failing endpoint: requests sent and counted per
processor call, how long a call holds the post-turn worker, and how long `close` takes.

A local OpenAI-compatible server (tests/_openai_server.py, 127.0.0.1 only) answers every
request with HTTP 500 (retries) or never answers (a hung endpoint). The model is a real
`langchain_openai.ChatOpenAI` either as a user builds it (the client's own defaults, or
`max_retries=0` as docs/guides/models.md recommends) or as the library builds it from
`--model/--base-url` (`cli.options.chat_model`). One processor call is one
`Memory.add(..., infer=True)` of one exchange (the fact derivation); its cost record is
`Memory.last_cost`. The hung-endpoint run drives `MemoryMiddleware` inside `create_agent`
(a scripted agent model) over `--threads` threads and then closes it.

    python benchmarks/model_faults.py --out docs/results/model_faults.json \\
        --md docs/results/model_faults.md
"""

from __future__ import annotations

import argparse
import inspect
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "tests"))

from _openai_server import HANG, FakeOpenAI  # noqa: E402
from _results import command_line, machine, publish  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402

from langmem_plus import Memory, MemoryConfig  # noqa: E402

EXCHANGE = [
    {"role": "user", "content": "I live in Lisbon and I work as a nurse."},
    {"role": "assistant", "content": "Noted."},
]


def _config() -> MemoryConfig:
    """Short backoff so the run is quick; the counts do not depend on it."""
    return MemoryConfig(llm={"backoff_base_s": 0.05})  # type: ignore[arg-type]


def _built(server: FakeOpenAI) -> Any:
    """The model the library builds from --model/--base-url (cli.options.chat_model)."""
    from langmem_plus.cli.options import chat_model

    return chat_model(argparse.Namespace(model="test-model", base_url=server.base_url))


def setups(server: FakeOpenAI, timeout: float | None = None) -> dict[str, Any]:
    """The model setups measured, by name."""
    extra = {} if timeout is None else {"timeout": timeout}
    return {
        "ChatOpenAI(base_url=...) as a user builds it": ChatOpenAI(
            model="test-model", base_url=server.base_url, api_key="test", **extra
        ),
        "ChatOpenAI(..., max_retries=0)": ChatOpenAI(
            model="test-model", base_url=server.base_url, api_key="test", max_retries=0, **extra
        ),
        "built by the library (--model --base-url)": _built(server),
    }


def http_500() -> list[dict[str, Any]]:
    """Requests per processor call when every request gets HTTP 500."""
    rows = []
    with FakeOpenAI() as server:
        for name, model in setups(server).items():
            server.requests.clear()
            mem = Memory(model=model, config=_config(), embeddings=False)
            t0 = time.perf_counter()
            mem.add(EXCHANGE, user_id="u")
            s = time.perf_counter() - t0
            cost = mem.last_cost
            rows.append(
                {
                    "setup": name,
                    "requests_sent": len(server.requests),
                    "cost_record_calls": cost.calls if cost is not None else None,
                    "seconds": round(s, 2),
                }
            )
            mem.close()
    return rows


def hung(timeout: float, threads: int) -> dict[str, Any]:
    """One processor call against a hung endpoint, then the middleware's worker closed."""
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage

    from langmem_plus import HybridStore, MemoryMiddleware

    out: dict[str, Any] = {"request_timeout_s": timeout, "threads": threads}
    with FakeOpenAI() as server:
        server.fallback = HANG
        model = setups(server, timeout)["ChatOpenAI(base_url=...) as a user builds it"]
        mem = Memory(model=model, config=_config(), embeddings=False)
        t0 = time.perf_counter()
        mem.add(EXCHANGE, user_id="u")
        out["one_call_s"] = round(time.perf_counter() - t0, 2)
        out["one_call_requests"] = len(server.requests)
        mem.close()

        server.requests.clear()
        store = HybridStore(index=False)
        mw = MemoryMiddleware(model=model, config=_config(), debounce_s=0.0)
        agent_model = GenericFakeChatModel(messages=iter([AIMessage("ok")] * (threads * 2)))
        agent = create_agent(agent_model, middleware=[mw], store=store)
        for i in range(threads):
            cfg = {"configurable": {"thread_id": f"t{i}", "user_id": f"u{i}"}}
            agent.invoke({"messages": [HumanMessage("I live in Lisbon, I am a nurse.")]}, cfg)
        default = inspect.signature(mw.close).parameters["timeout"].default
        t0 = time.perf_counter()
        report = mw.close()  # as a user calls it: the default timeout
        out["close_timeout_s"] = default
        out["close_s"] = round(time.perf_counter() - t0, 2)
        out["close_returned"] = repr(report)
        out["requests_by_close"] = len(server.requests)
    return out


def render(res: dict[str, Any]) -> str:
    lines = [
        "# A chat model against a failing endpoint",
        "",
        f"`{res['command']}` on {res['machine']}.",
        "",
        "## HTTP 500 on every request: one processor call (`Memory.add`, one exchange)",
        "",
        "| model setup | requests sent | cost record's calls | seconds |",
        "|---|---:|---:|---:|",
    ]
    for r in res["http_500"]:
        lines.append(
            f"| {r['setup']} | {r['requests_sent']} | {r['cost_record_calls']} | {r['seconds']} |"
        )
    h = res["hung"]
    lines += [
        "",
        f"## A hung endpoint (the user's `ChatOpenAI(timeout={h['request_timeout_s']})`)",
        "",
        "| measure | value |",
        "|---|---:|",
        f"| one processor call held the caller (s) | {h['one_call_s']} |",
        f"| requests of that call | {h['one_call_requests']} |",
        f"| `close()` (default timeout {h['close_timeout_s']}) after {h['threads']} turns (s) | {h['close_s']} |",
        "",
        f"`close` returned: `{h['close_returned']}`",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=2.0, help="the client's request timeout")
    ap.add_argument("--threads", type=int, default=3, help="agent threads before close")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--md", type=Path)
    args = ap.parse_args(argv)
    res: dict[str, Any] = {
        "command": command_line("model_faults.py", argv),
        "machine": machine(),
        "http_500": http_500(),
        "hung": hung(args.timeout, args.threads),
    }
    publish(res, render(res), args.out, args.md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
