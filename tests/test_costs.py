"""Cost per stage (#15): model calls, tokens and milliseconds of recall, context assembly and
each post-turn step, from the middleware and `Memory.add`; callback, reports, persistence and
`langmem-plus stats --costs`. No assertion is made on wall time (only that ms are present)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _agent_fakes import FakeClock, Scripted, ScriptedTools, scripted
from hypothesis import given
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langmem_plus import HybridStore, Memory
from langmem_plus.agent.middleware import MemoryMiddleware
from langmem_plus.cli import main
from langmem_plus.errors import ValidationError
from langmem_plus.model.costs import TurnCost, summarize_costs, usage_meter

PRE_STAGES = {"recall", "context"}


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "input_tokens": prompt,
        "output_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _facts(tokens: tuple[int, int]) -> AIMessage:
    fact = {"text": "The user lives in Berlin", "kind": "fact", "slot": "home.city"}
    return AIMessage(
        content="",
        tool_calls=[{"name": "FactsOut", "args": {"facts": [fact]}, "id": "c1"}],
        usage_metadata=_usage(*tokens),  # type: ignore[arg-type]
    )


def _title(tokens: tuple[int, int]) -> AIMessage:
    args = {"title": "Moving to Berlin", "snippet": "Noted."}
    return AIMessage(
        content="",
        tool_calls=[{"name": "SessionTitleOut", "args": args, "id": "c2"}],
        usage_metadata=_usage(*tokens),  # type: ignore[arg-type]
    )


def _agent(mw: MemoryMiddleware, store: Any, replies: list[str]) -> Any:
    return create_agent(
        scripted(replies), middleware=[mw], store=store, checkpointer=InMemorySaver()
    )


def _say(agent: Any, text: str, user: str = "alice", thread: str = "t1") -> dict[str, Any]:
    cfg = {"configurable": {"thread_id": thread, "user_id": user}}
    return agent.invoke({"messages": [{"role": "user", "content": text}]}, cfg)


def _by_stage(cost: TurnCost | dict[str, Any]) -> dict[str, dict[str, Any]]:
    stages = cost.as_dict()["stages"] if isinstance(cost, TurnCost) else cost["stages"]
    return {s["stage"]: s for s in stages}


# ---------------------------------------------------------------- middleware
def test_middleware_turn_reports_each_stage_with_the_models_calls_and_tokens() -> None:
    store = HybridStore(index=False)
    got: list[TurnCost] = []
    memory_model = ScriptedTools(script=[_facts((300, 40)), _title((50, 8))])
    mw = MemoryMiddleware(
        model=memory_model, background=False, clock=FakeClock(), on_cost=got.append
    )
    out = _say(_agent(mw, store, ["Noted, Berlin."]), "I live in Berlin.")

    pre = out["memory_context"]["cost"]
    assert pre["phase"] == "prepare" and set(_by_stage(pre)) == PRE_STAGES
    assert pre["calls"] == 0 and pre["user_id"] == "alice"  # the agent's own call is not ours
    report = mw.reports[-1]["stage_costs"]
    stages = _by_stage(report)
    assert report["phase"] == "post_turn"
    assert {"knowledge", "profile", "session"} <= set(stages)
    know = stages["knowledge"]
    assert (know["calls"], know["prompt_tokens"], know["completion_tokens"]) == (1, 300, 40)
    sess = stages["session"]
    assert (sess["calls"], sess["prompt_tokens"], sess["completion_tokens"]) == (1, 50, 8)
    assert stages["profile"]["calls"] == 0  # per-turn processors run their rules
    assert memory_model.calls == 2
    assert (report["calls"], report["prompt_tokens"], report["completion_tokens"]) == (2, 350, 48)
    assert all(s["ms"] >= 0 for s in [*pre["stages"], *report["stages"]])

    # the callback got the same records, in order
    assert [c.phase for c in got] == ["prepare", "post_turn"]
    assert [c.as_dict() for c in got] == [pre, report]
    # and the HybridStore persisted them, one row per stage
    rows = store.conversations.cost_rows(user_id="alice")
    assert {(r["phase"], r["stage"]) for r in rows} == {("prepare", s) for s in PRE_STAGES} | {
        ("post_turn", s) for s in stages
    }
    assert sum(r["calls"] for r in rows) == 2


def test_offline_turn_reports_zero_calls_and_every_step_that_ran() -> None:
    store = HybridStore(index=False)
    mw = MemoryMiddleware(background=False, clock=FakeClock())
    agent = _agent(mw, store, ["Nice.", "Sure."])
    _say(agent, "My dog is called Bao.")
    out = _say(agent, "What is my dog called?")
    assert set(_by_stage(out["memory_context"]["cost"])) == PRE_STAGES
    report = mw.reports[-1]["stage_costs"]
    assert {"knowledge", "profile", "reconsolidate", "rolling", "session"} == set(_by_stage(report))
    assert report["calls"] == 0 and report["prompt_tokens"] == 0
    assert mw.reports[-1]["episodes"]  # the step really ran


def test_other_stores_report_through_the_callback_without_persisting() -> None:
    got: list[TurnCost] = []
    mw = MemoryMiddleware(background=False, clock=FakeClock(), on_cost=got.append)
    with pytest.warns(UserWarning, match="no conversation log"):
        _say(_agent(mw, InMemoryStore(), ["Hi."]), "Hello there.")
    assert [c.phase for c in got] == ["prepare"]  # no conversation log: no post-turn steps
    assert {s.stage for s in got[0].stages} == PRE_STAGES


def test_on_cost_must_be_callable() -> None:
    with pytest.raises(ValidationError, match="on_cost"):
        MemoryMiddleware(on_cost="print")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="on_cost"):
        Memory(embeddings=False, on_cost=3)  # type: ignore[arg-type]


# ---------------------------------------------------------------- Memory.add
def test_memory_add_reports_its_cost_to_last_cost_the_callback_and_the_table() -> None:
    got: list[TurnCost] = []
    model = ScriptedTools(script=[_facts((120, 9))])
    with Memory(model=model, embeddings=False, on_cost=got.append) as mem:
        ids = mem.add(
            [{"role": "user", "content": "I live in Berlin."}], user_id="bob", session_id="s1"
        )
        assert ids
        cost = mem.last_cost
        assert isinstance(cost, TurnCost) and got == [cost]
        assert (cost.phase, cost.user_id, cost.session_id) == ("add", "bob", "s1")
        know = cost.stage("knowledge")
        assert know is not None
        assert (know.calls, know.prompt_tokens, know.completion_tokens) == (1, 120, 9)
        assert cost.get("calls") == 1 and cost.get("prompt_tokens") == 120  # old dict reads
        assert cost.get("nope", 7) == 7

        mem.add("plain note", user_id="bob", infer=False)
        raw = mem.last_cost
        assert raw is not None and [s.stage for s in raw.stages] == ["store"]
        assert raw.calls == 0 and len(got) == 2

        rows = mem.store.conversations.cost_rows(user_id="bob")
        assert [(r["phase"], r["stage"], r["calls"]) for r in rows] == [
            ("add", "knowledge", 1),
            ("add", "store", 0),
        ]
        # deleting the user's conversations takes their cost rows too
        mem.store.conversations.delete(user_id="bob")
        assert mem.store.conversations.cost_rows(user_id="bob") == []


def test_offline_add_costs_no_calls_and_a_failing_callback_loses_nothing() -> None:
    def boom(cost: TurnCost) -> None:
        raise RuntimeError("callback broke")

    with Memory(embeddings=False, on_cost=boom) as mem:
        ids = mem.add("My dog is called Bao.", user_id="carol")
        assert ids and mem.get(ids[0], "carol") is not None
        assert mem.last_cost is not None and mem.last_cost.calls == 0
        assert mem.last_cost.stage("knowledge") is not None


# ---------------------------------------------------------------- metering
def test_usage_meter_counts_calls_and_tokens_inside_the_block_only() -> None:
    model = Scripted(script=[AIMessage(content="a", usage_metadata=_usage(11, 2))])  # type: ignore[arg-type]
    model.invoke([HumanMessage(content="outside")])
    with usage_meter() as meter:
        model.invoke([HumanMessage(content="one")])
        with usage_meter() as inner:
            model.invoke([HumanMessage(content="two")])
    assert (meter.calls, meter.prompt_tokens, meter.completion_tokens) == (1, 11, 2)
    assert (inner.calls, inner.prompt_tokens) == (1, 11)
    assert model.calls == 3


# ---------------------------------------------------------------- stats --costs
def test_stats_costs_summarises_the_persisted_rows(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("LANGMEM_PLUS_EMBEDDINGS", "none")
    path = tmp_path / "m.db"
    with Memory(path, model=ScriptedTools(script=[_facts((100, 10))]), embeddings=False) as mem:
        for text in ("I live in Berlin.", "I like tea.", "I work at Acme."):
            mem.add(text, user_id="dana")
    with Memory(path, embeddings=False) as mem:
        mem.add("note", user_id="erin", infer=False)

    assert main(["stats", "--costs", "--json", "--db", str(path), "--user", "dana"]) == 0
    data = json.loads(capsys.readouterr().out)
    add = data["phases"]["add"]
    assert add["turns"] == 3 and add["calls_per_turn"] == 1.0
    assert add["prompt_tokens_per_turn"] == 100.0 and add["completion_tokens_per_turn"] == 10.0
    assert add["p50_ms"] <= add["p95_ms"]
    (stage,) = data["stages"]
    assert (stage["stage"], stage["runs"], stage["calls_per_turn"]) == ("knowledge", 3, 1.0)

    assert main(["stats", "--costs", "--json", "--db", str(path)]) == 0
    every = json.loads(capsys.readouterr().out)
    assert every["phases"]["add"]["turns"] == 4
    assert {s["stage"] for s in every["stages"]} == {"knowledge", "store"}

    assert main(["stats", "--costs", "--db", str(path)]) == 0
    text = capsys.readouterr().out
    assert "knowledge" in text and "p95_ms" in text


def test_stats_costs_on_a_database_without_costs(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("LANGMEM_PLUS_EMBEDDINGS", "none")
    path = tmp_path / "empty.db"
    assert main(["init", "--db", str(path)]) == 0
    capsys.readouterr()
    assert main(["stats", "--costs", "--db", str(path)]) == 0
    assert "no turn costs" in capsys.readouterr().out
    assert main(["stats", "--costs", "--json", "--db", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["stages"] == []


_row = st.fixed_dictionaries(
    {
        "cost_id": st.sampled_from(["a", "b", "c", "d"]),
        "phase": st.sampled_from(["prepare", "post_turn", "add"]),
        "stage": st.sampled_from(["recall", "context", "knowledge"]),
        "ms": st.floats(min_value=0, max_value=1e4, allow_nan=False),
        "calls": st.integers(0, 5),
        "prompt_tokens": st.integers(0, 10_000),
        "completion_tokens": st.integers(0, 1000),
    }
)


@given(st.lists(_row, max_size=40))
def test_summary_percentiles_are_ordered_and_calls_add_up(rows: list[dict[str, Any]]) -> None:
    out = summarize_costs(rows)
    for s in out["stages"]:
        ms = [r["ms"] for r in rows if (r["phase"], r["stage"]) == (s["phase"], s["stage"])]
        assert s["runs"] == len(ms)
        assert min(ms) - 1e-3 <= s["p50_ms"] <= s["p95_ms"] <= max(ms) + 1e-3
    for phase, p in out["phases"].items():
        mine = [r for r in rows if r["phase"] == phase]
        assert p["turns"] == len({r["cost_id"] for r in mine})
        assert p["calls_per_turn"] == round(sum(r["calls"] for r in mine) / p["turns"], 3)


def test_a_version_8_database_gains_the_cost_table(tmp_path) -> None:
    import sqlite3

    from langmem_plus.store.db.database import SCHEMA_VERSION

    path = tmp_path / "v8.db"
    with Memory(path, embeddings=False) as mem:
        mem.add("I like tea.", user_id="fay")
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE turn_costs")
    conn.execute("DROP INDEX items_slot")  # migration 014 and its columns
    conn.execute("DROP INDEX items_follows0")  # migration 018 (they read `kind`)
    conn.execute("DROP INDEX items_follows1")
    for col in ("kind", "slot", "said_at", "valid_from", "valid_to", "stale", "index_key"):
        conn.execute(f"ALTER TABLE items DROP COLUMN {col}")
    conn.execute("DELETE FROM schema_version WHERE version > 8")
    conn.commit()
    conn.close()
    with Memory(path, embeddings=False) as mem:
        assert mem.store.conversations.cost_rows() == []
        mem.add("I like coffee.", user_id="fay")
        assert [r["stage"] for r in mem.store.conversations.cost_rows()] == ["knowledge"]
    with sqlite3.connect(path) as conn:
        version = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0]
    assert version == SCHEMA_VERSION >= 9


def test_recording_costs_can_be_turned_off() -> None:
    from langmem_plus import Memory, MemoryConfig

    seen: list[object] = []
    mem = Memory(
        embeddings=False, config=MemoryConfig(llm={"record_costs": False}), on_cost=seen.append
    )
    mem.add("I keep bees on the roof", "u")
    assert len(seen) == 1  # the callback still hears of it
    with mem.store.db.read() as conn:
        assert conn.execute("SELECT COUNT(*) FROM turn_costs").fetchone()[0] == 0


def test_loading_models_is_not_the_first_turns_cost(monkeypatch) -> None:
    """What a process loads on its first write (the segmenter's dictionary, the embedding
    model, the chat model's client) happens before the turn's timer starts, so a one-shot
    CLI call (`add`, then `stats --costs`) records the turn, not the load."""
    from conftest import HashEmbeddings

    import langmem_plus.memory.core as core
    import langmem_plus.memory.writes as writes

    events: list[str] = []

    class Recording(HashEmbeddings):
        def embed_query(self, text: str) -> list[float]:
            events.append("embed")
            return super().embed_query(text)

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            events.append("embed")
            return super().embed_documents(texts)

    class Timer(core.CostTimer):
        def __init__(self) -> None:
            events.append("timer")
            super().__init__()

    cut: list[str] = []
    real_tokenize = writes.tokenize
    monkeypatch.setattr(core, "CostTimer", Timer)
    monkeypatch.setattr(writes, "tokenize", lambda t: cut.append(t) or real_tokenize(t))
    with Memory(embeddings=Recording(), model=Scripted(script=["{}"])) as mem:
        events.clear()
        mem.add("我喜欢川菜", user_id="u")
        assert events.index("embed") < events.index("timer")  # loaded before timing
        assert cut[0] == "我喜欢川菜"  # the write's own text: Chinese loads the dictionary
        assert mem.writer.episodes is not None  # the model's processor was built first
        events.clear()
        mem.add("我喜欢湘菜", user_id="u")
        assert events[0] == "timer"  # once per process: no load before later turns
