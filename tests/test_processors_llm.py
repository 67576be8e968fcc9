"""Processors driven by scripted chat models: tool-calling structured output, plain-JSON
fallback, malformed answers falling back to rules, and retries with backoff (no real sleep)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest
from _agent_fakes import Scripted, ScriptedTools
from langchain_core.language_models.fake_chat_models import (
    FakeMessagesListChatModel,
    GenericFakeChatModel,
)
from langchain_core.messages import AIMessage

from langmem_plus.config import MemoryConfig
from langmem_plus.errors import ValidationError
from langmem_plus.model.records import MemoryRecord, UserProfile
from langmem_plus.processors import (
    EpisodeMerger,
    EpisodeSeparator,
    ProfileWriter,
    Reconsolidator,
    Reviewer,
    Summarizer,
    TurnAnalyzer,
)
from langmem_plus.processors.model.structured import StructuredLLM, extract_json, resolve_model
from langmem_plus.processors.schemas import RollingSummaryOut, TurnAnalysis


class ToolFake(GenericFakeChatModel):
    """GenericFakeChatModel that accepts tools, so `with_structured_output` uses tool calls."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def tool_msg(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": "call_1"}])


TEXT = "明天面试好紧张"
ANSWER = {"topic": "面试", "context_variables": {"time": "明天"}, "emotion": "anxious"}
RULES = TurnAnalyzer().analyze(TEXT)  # what the offline rules read


def test_tool_calling_structured_output() -> None:
    model = ToolFake(messages=iter([tool_msg("TurnAnalysis", ANSWER)]))
    assert TurnAnalyzer(model=model).analyze(TEXT) == TurnAnalysis(**ANSWER)


def test_plain_json_fallback_with_fences_and_trailing_comma() -> None:
    text = 'Sure! ```json\n{"topic": "面试", "emotion": "anxious",}\n```'
    model = GenericFakeChatModel(messages=iter([AIMessage(content=text)]))
    out = TurnAnalyzer(model=model).analyze(TEXT)
    assert (out.topic, out.emotion) == ("面试", "anxious")


def test_plain_prompt_carries_schema_and_language_rule() -> None:
    model = Scripted(script=[json.dumps(ANSWER)])
    TurnAnalyzer(model=model).analyze(TEXT)
    system = model.seen[0][0].content
    assert "JSON schema" in system and "Chinese" in system
    assert TEXT in model.seen[0][1].content


def test_malformed_answer_falls_back_to_rules() -> None:
    model = FakeMessagesListChatModel(responses=[AIMessage(content="I cannot answer that.")])
    assert TurnAnalyzer(model=model).analyze(TEXT) == RULES


def test_transient_errors_retry_with_backoff_then_succeed() -> None:
    sleeps: list[float] = []
    model = Scripted(script=[ConnectionError("boom"), TimeoutError("slow"), json.dumps(ANSWER)])
    out = TurnAnalyzer(model=model, sleep=sleeps.append).analyze(TEXT)
    assert out == TurnAnalysis(**ANSWER)
    assert sleeps == [1.0, 2.0]
    assert model.calls == 3


def test_retries_exhausted_fall_back_to_rules() -> None:
    sleeps: list[float] = []
    model = Scripted(script=[ConnectionError("down")])
    out = TurnAnalyzer(model=model, sleep=sleeps.append).analyze(TEXT)
    assert sleeps == [1.0, 2.0, 4.0]
    assert model.calls == 4  # first try + 3 retries
    assert out == RULES


def test_backoff_base_comes_from_config() -> None:
    sleeps: list[float] = []
    cfg = MemoryConfig(llm={"max_retries": 2, "backoff_base_s": 0.5})
    model = Scripted(script=[ConnectionError("down")])
    TurnAnalyzer(model=model, config=cfg, sleep=sleeps.append).analyze(TEXT)
    assert sleeps == [0.5, 1.0]


class _BadRequest(Exception):
    status_code = 400


def test_structured_output_rejected_switches_to_plain_json() -> None:
    model = ScriptedTools(script=[_BadRequest("response_format unsupported"), json.dumps(ANSWER)])
    sleeps: list[float] = []
    out = TurnAnalyzer(model=model, sleep=sleeps.append).analyze(TEXT)
    assert out == TurnAnalysis(**ANSWER)
    assert sleeps == []
    assert "JSON schema" in model.seen[1][0].content


def test_permanent_error_in_plain_mode_gives_up_at_once() -> None:
    model = Scripted(script=[_BadRequest("bad key")])
    sleeps: list[float] = []
    out = TurnAnalyzer(model=model, sleep=sleeps.append).analyze(TEXT)
    assert model.calls == 1 and sleeps == []
    assert out == RULES


def test_turn_analyzer_summarizer_profile_with_models() -> None:
    ta = TurnAnalyzer(
        model=Scripted(
            script=[
                json.dumps(
                    {
                        "topic": "面试",
                        "context_variables": {"time": "明天", "n": 3},
                        "emotion": "anxious",
                    }
                )
            ]
        )
    )
    out = ta.analyze("明天面试好紧张")
    assert out == TurnAnalysis(
        topic="面试", context_variables={"time": "明天", "n": "3"}, emotion="anxious"
    )
    summ = Summarizer(model=Scripted(script=['{"topics": ["面试", "游戏"], "summary": "x"}']))
    at = datetime(2026, 1, 3, 18, 0, tzinfo=timezone.utc)
    assert summ.episode([{"role": "user", "text": "聊聊面试和游戏"}], at) == (
        "[2026-01-03 18:00] 聊了面试、游戏"
    )
    summ = Summarizer(model=Scripted(script=['{"summary": "Fixed the bug", "key_symbols": []}']))
    rolling = summ.rolling([{"role": "user", "text": "processOrder throws TypeError"}])
    assert rolling.summary == "Fixed the bug"
    assert {"processOrder", "TypeError"} <= set(rolling.key_symbols)
    summ = Summarizer(model=Scripted(script=['{"title": "Interview prep", "snippet": "s"}']))
    assert summ.session_title([{"role": "user", "text": "help me prepare"}]) == (
        "Interview prep",
        "s",
    )
    pw = ProfileWriter(model=Scripted(script=['{"reply_style": "简短", "background": "model bg"}']))
    prof = pw.update(
        UserProfile(user_id="u", background="hand written", edited_by_user=["background"]),
        [{"role": "user", "text": "x"}],
    )
    assert prof.reply_style == "简短" and prof.background == "hand written"


def _episode(**kw: Any) -> MemoryRecord:
    base: dict[str, Any] = dict(
        kind="episodic",
        category="episode",
        text="用户周六去爬了香山",
        chat_id="c1",
        who="user",
        metadata={"time": "2026-01-03T10:00:00+00:00", "chatid": "c1", "who": "user"},
    )
    base.update(kw)
    return MemoryRecord(**base)


def test_reconsolidator_model_cannot_break_invariants() -> None:
    rec = _episode()
    answer = {"text": "用户周六去爬了香山，下次想去泰山", "update_desc": "plans"}
    new = Reconsolidator(model=Scripted(script=[json.dumps(answer)])).reconsolidate(rec, "想去泰山")
    assert new.text == answer["text"]
    assert (
        new.metadata["time"] == rec.metadata["time"] and new.chat_id == "c1" and new.who == "user"
    )
    assert len(new.metadata["updates"]) == 1


def test_merger_separator_with_models() -> None:
    a = _episode()
    b = _episode(
        id="b",
        chat_id="c2",
        text="周六用户爬香山",
        metadata={"time": "2026-01-02T10:00:00+00:00", "chatid": "c2"},
    )
    merged = EpisodeMerger(model=Scripted(script=['{"text": "合并后的记忆"}'])).merge(a, b)
    assert merged.text == "合并后的记忆"
    assert merged.metadata["time"] == "2026-01-02T10:00:00+00:00"
    assert set(merged.metadata["source_chat_ids"]) == {"c1", "c2"}
    sa, sb = EpisodeSeparator(
        model=Scripted(script=['{"text_a": "A版", "text_b": "B版"}'])
    ).separate(a, b)
    assert (sa.text, sb.text) == ("A版", "B版")


def test_reviewer_searches_up_to_max_rounds_then_decides() -> None:
    steps = [
        '{"action": "SEARCH", "query": "生日"}',
        '{"action": "SEARCH:家人"}',
        '{"action": "PROMOTE", "reason": "stable"}',
    ]
    model = Scripted(script=steps)
    queries: list[str] = []

    def search(q: str) -> list[str]:
        queries.append(q)
        return [f"related to {q}"]

    rec = MemoryRecord(text="用户的生日是5月3日", importance=2.6)
    decision = Reviewer(model=model).review(rec, search=search)
    assert decision.decision == "PROMOTE" and decision.rounds == 3
    assert queries == ["生日", "家人"]
    assert "related to 生日" in model.seen[1][1].content


def test_reviewer_search_rounds_are_capped() -> None:
    model = Scripted(script=['{"action": "SEARCH", "query": "q"}'])
    calls: list[str] = []
    rec = MemoryRecord(text="User is tired today", importance=0.4)
    decision = Reviewer(model=model).review(rec, search=lambda q: calls.append(q) or [])
    assert len(calls) == 3  # reviewer_max_rounds
    assert decision.decision in ("KEEP", "DELETE")  # rules decided after the cap


def test_reviewer_decay_mode_never_promotes() -> None:
    rec = MemoryRecord(text="用户喜欢猫", importance=0.3)
    out = Reviewer(model=Scripted(script=['{"action": "PROMOTE"}'])).review(rec)
    assert out.decision == "KEEP"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('prefix ```json\n{"a": [1, 2,],}\n``` suffix', {"a": [1, 2]}),
        ("{'a': 'x', 'b': True, 'c': None}", {"a": "x", "b": True, "c": None}),
        ('Here: {"a": {"b": "}"}} and more', {"a": {"b": "}"}}),
        ('{"a": [1, 2', {"a": [1, 2]}),
        ("no json here", None),
        ("", None),
    ],
)
def test_extract_json_repairs(text: str, expected: Any) -> None:
    assert extract_json(text) == expected


def test_resolve_model_validation() -> None:
    assert resolve_model(None) is None
    with pytest.raises(ValidationError):
        resolve_model("  ")
    with pytest.raises(ValidationError):
        resolve_model(42)
    with pytest.raises(ValidationError):
        StructuredLLM(None)


def test_structured_llm_returns_none_on_schema_mismatch() -> None:
    llm = StructuredLLM(Scripted(script=['{"summary": ["not", "a", "string"]}']))
    assert llm.call(RollingSummaryOut, "s", "u") is None
