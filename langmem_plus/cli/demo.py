"""A runnable, offline demo: a bilingual three-session conversation through a real
`create_agent` graph with HybridStore, SqliteSaver and `MemoryMiddleware`.

Without a model it answers with `OfflineResponder`, a deterministic stand-in that is NOT a
language model: it only quotes the memories injected into its prompt (and calls the
recall_memories tool for 上次 / last time questions). With `model="openai:gpt-4o-mini"` or
`base_url=...` a real chat model answers instead. Post-turn processors are rule-based.
"""

from __future__ import annotations

import json
import re
import sqlite3
import tempfile
import time
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from langmem_plus.errors import ValidationError
from langmem_plus.model.quoting import unquote_data
from langmem_plus.text.scripts import has_cjk

__all__ = ["OfflineResponder", "load_demo_conversation", "run_demo"]

OFFLINE_LABEL = "[offline responder: not an LLM, it only quotes recalled memories]"
_MEMORY_RE = re.compile(r"<memory [^>]*>(\".*?\")</memory>")
_LAST_TIME_RE = re.compile(r"上次|上一次|last time|previous (?:session|conversation)", re.I)


def _unquote(quoted: str) -> str:
    """The stored text of a quoted memory, first line only (an episode's user turn)."""
    try:
        text = unquote_data(quoted)
    except ValueError:
        text = quoted.strip('"')
    return text.split("\n", 1)[0]


class OfflineResponder(BaseChatModel):
    """Deterministic offline stand-in for a chat model (NOT an LLM).

    Composes its reply from the memories in the injected `<memory_context>`, so the demo and
    tests show what memory contributed. Asks the recall_memories tool about 上次 / last time.
    """

    use_tools: bool = True

    @property
    def _llm_type(self) -> str:
        return "langmem-offline-responder"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> OfflineResponder:
        """Accept tools (create_agent binds them); only recall_memories is ever called."""
        names = {getattr(t, "name", None) for t in tools}
        return self.model_copy(update={"use_tools": "recall_memories" in names})

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages))])

    def _reply(self, messages: list[BaseMessage]) -> AIMessage:
        system = next((m for m in messages if isinstance(m, SystemMessage)), None)
        last = messages[-1] if messages else HumanMessage("")
        human = next((m for m in reversed(messages) if isinstance(m, HumanMessage)), last)
        zh = has_cjk(str(human.content))
        if isinstance(last, ToolMessage):
            found = str(last.content).strip()
            head = "我查了记忆：" if zh else "I searched my memory:"
            return AIMessage(f"{OFFLINE_LABEL} {head}\n{found}")
        if (
            self.use_tools
            and isinstance(last, HumanMessage)
            and _LAST_TIME_RE.search(str(last.content))
        ):
            call = {
                "name": "recall_memories",
                "args": {"query": str(last.content)},
                "id": "search-1",
            }
            return AIMessage("", tool_calls=[call])
        memories = _MEMORY_RE.findall(system.text if system else "")
        if not memories:
            text = "记下了。" if zh else "Noted."
            return AIMessage(f"{OFFLINE_LABEL} {text}")
        head = "根据我记得的：" if zh else "From what I remember:"
        lines = "\n".join(f"- {_unquote(q)}" for q in memories[:3])
        return AIMessage(f"{OFFLINE_LABEL} {head}\n{lines}")


def load_demo_conversation() -> dict[str, Any]:
    """The bundled demo conversation (langmem_plus/data/demo_conversation.json)."""
    text = (
        resources.files("langmem_plus")
        .joinpath("data/demo_conversation.json")
        .read_text(encoding="utf-8")
    )
    data: dict[str, Any] = json.loads(text)
    return data


def _chat_model(model: str | None, base_url: str | None) -> Any:
    if base_url:
        from langchain_openai import ChatOpenAI

        name = model.split(":", 1)[-1] if model else "gpt-4o-mini"
        return ChatOpenAI(model=name, base_url=base_url)
    if model:
        from langchain.chat_models import init_chat_model

        return init_chat_model(model)
    return OfflineResponder()


def _fmt_parts(components: dict[str, Any]) -> str:
    keys = ("relevance", "category_boost", "recency", "frequency", "confidence", "topic_boost")
    return ", ".join(
        f"{k}={components[k]:.2f}" for k in keys if isinstance(components.get(k), (int, float))
    )


def _stored_lines(store: Any, namespace: tuple[str, ...], report: dict[str, Any]) -> list[str]:
    """What the turn stored: the episode, each derived fact, each fact it superseded."""
    lines = [f"episode {e[:8]} (the exchange, verbatim)" for e in report.get("episodes", [])]
    for fid in report.get("facts", []):
        item = store.get(namespace, fid)
        if item is not None:
            lines.append(
                f"fact {item.value.get('text')!r} from episode {report['episodes'][-1][:8]}"
            )
    for fid in report.get("superseded", []):
        item = store.get(namespace, fid)
        if item is not None:
            lines.append(f"closed old fact {item.value.get('text')!r} (superseded)")
    return lines


def _intro(offline: bool, model: str | None, base_url: str | None) -> str:
    """The demo's first line: who answers."""
    if offline:
        who = (
            "OFFLINE - replies come from OfflineResponder, a deterministic "
            "stand-in that is NOT a language model; it only quotes the "
            "memories injected into its prompt."
        )
    else:
        who = f"replies from the real model {model or 'gpt-4o-mini'}" + (
            f" at {base_url}" if base_url else ""
        )
    return "langmem_plus demo: " + who


def _show_recall(state: dict[str, Any], out: Callable[[str], Any]) -> list[str]:
    """Print what the turn recalled (with score parts) and the injected context; returns
    the recalled texts."""
    ctx = state.get("memory_context") or {}
    recalled = ctx.get("memories") or []
    if recalled:
        out(
            "  recalled (score = 0.4 relevance + 0.2 category + 0.15 recency "
            "+ 0.1 frequency + 0.15 confidence; facts first, then episodes):"
        )
        for m in recalled:
            out(f"    {m['score']:.3f} {m['text']}  [{_fmt_parts(m['components'])}]")
    else:
        out("  recalled: nothing")
    if ctx.get("text"):
        out(
            "  injected context:\n"
            + "\n".join("    | " + line for line in ctx["text"].splitlines())
        )
    return [m["text"] for m in recalled]


def _turn_stored(store: Any, user_id: str, middleware: Any) -> list[str]:
    """What the finished turn's post-turn processing stored, one line each."""
    middleware.flush()
    report = middleware.reports[-1] if middleware.reports else {}
    stored = _stored_lines(store, ("memories", user_id), report)
    stored += [f"rolling summary {r['turns']}" for r in report.get("rolling_summaries", [])]
    if report.get("session_summary"):
        stored.append(f"session summary: {report['session_summary']['title']}")
    if report.get("profile_updated"):
        stored.append("user profile updated")
    return stored


def _one_turn(
    agent: Any, text: str, cfg: dict[str, Any], out: Callable[[str], Any]
) -> tuple[dict[str, Any], str]:
    """Run one user turn through the agent and print the exchange; returns (state, reply)."""
    state = agent.invoke({"messages": [{"role": "user", "content": text}]}, cfg)
    reply = state["messages"][-1]
    out(f"\nuser> {text}")
    for tm in (m for m in state["messages"][-3:] if isinstance(m, ToolMessage)):
        out(f"  tool {tm.name} -> {str(tm.content)[:200]}")
    out(f"assistant> {reply.text}")
    return state, reply.text


def _show_long_term(store: Any, user_id: str, out: Callable[[str], Any]) -> dict[str, Any]:
    """Print the user's long-term memory after the conversation; returns its facts and the
    number of episodes."""
    items = store.search(("memories", user_id), limit=200, include_superseded=True)
    facts = [it for it in items if it.value.get("kind") != "episodic"]
    episodes = len(items) - len(facts)
    out(f"\nlong-term memory of {user_id}: {episodes} episodes (every exchange, verbatim) and")
    out(f"{len(facts)} facts derived from them:")
    for it in facts:
        state_ = "superseded" if it.value.get("superseded_by") else "current"
        sources = len(it.value.get("source_ids") or [])
        out(f"  - [{state_}] {it.value.get('text')}  (from {sources} episode(s))")
    return {"memories": [it.value.get("text") for it in facts], "episodes": episodes}


def _play_turn(
    agent: Any,
    memory: tuple[Any, Any],
    text: str,
    cfg: dict[str, Any],
    summary: dict[str, Any],
    out: Callable[[str], Any],
) -> None:
    """One user turn: the exchange, what was recalled and what was stored, printed and added
    to `summary`; `memory` is the (store, middleware) pair."""
    store, middleware = memory
    state, reply = _one_turn(agent, text, cfg, out)
    summary["turns"] += 1
    summary["replies"].append(reply)
    summary["recalled"].append(_show_recall(state, out))
    stored = _turn_stored(store, cfg["configurable"]["user_id"], middleware)
    summary["stored"].append(stored)
    out("  stored: " + ("; ".join(stored) if stored else "nothing new"))


def run_demo(
    db_path: str | Path | None = None,
    model: str | None = None,
    base_url: str | None = None,
    out: Callable[[str], Any] = print,
) -> dict[str, Any]:
    """Run the demo conversation; print per turn what was recalled (with score parts), the
    injected context and what was stored. Returns a summary (for tests)."""
    from langchain.agents import create_agent
    from langgraph.checkpoint.sqlite import SqliteSaver

    from langmem_plus.agent.middleware import MemoryMiddleware
    from langmem_plus.store import HybridStore

    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise ValidationError(
            "model must be an init_chat_model string such as 'openai:gpt-4o-mini'"
        )
    t0 = time.perf_counter()
    tmp = None
    if db_path is None:
        tmp = tempfile.TemporaryDirectory(prefix="langmem-demo-")
        db_path = Path(tmp.name) / "demo.db"
    db_path = Path(db_path)
    data = load_demo_conversation()
    user_id = str(data["user_id"])
    chat = _chat_model(model, base_url)
    out(_intro(isinstance(chat, OfflineResponder), model, base_url))
    out("memory processors: offline rule-based; store: " + str(db_path))
    store = HybridStore(db_path)
    conn = sqlite3.connect(str(db_path) + ".checkpoints.sqlite", check_same_thread=False)
    middleware = MemoryMiddleware(debounce_s=0.0, tools=True)
    agent: Any = create_agent(
        chat,
        system_prompt="You are a helpful bilingual assistant. Answer briefly.",
        middleware=[middleware],
        store=store,
        checkpointer=SqliteSaver(conn),
    )
    summary: dict[str, Any] = {"turns": 0, "replies": [], "recalled": [], "stored": []}
    summary["db_path"] = str(db_path)
    try:
        for s_idx, session in enumerate(data["sessions"], 1):
            out(f"\n=== {session['name']} ===")
            cfg = {"configurable": {"thread_id": f"demo-session-{s_idx}", "user_id": user_id}}
            for text in session["turns"]:
                _play_turn(agent, (store, middleware), text, cfg, summary, out)
        summary.update(_show_long_term(store, user_id, out))
        summary["elapsed_s"] = round(time.perf_counter() - t0, 2)
        out(f"\ndone in {summary['elapsed_s']} s")
    finally:
        middleware.close(timeout=30)
        conn.close()
        store.close()
        if tmp is not None:
            tmp.cleanup()
    return summary
