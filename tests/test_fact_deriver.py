"""FactDeriver (#13 item 5): one structured call per exchange, deterministic failures fall
back to the rules at once, transient ones are retried, answers are cleaned, costs counted.
Scripted chat models only; the last tests drive ChatOpenAI against a 127.0.0.1 server."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from types import SimpleNamespace
from typing import Any

import pytest
from _agent_fakes import Scripted, ScriptedTools
from _openai_server import FakeOpenAI, chat_openai, completion, loopback, tool_completion
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessage

from langmem_plus.errors import ValidationError
from langmem_plus.processors import Derivation, FactDeriver, prompts
from langmem_plus.processors.facts import deriver as deriver_module
from langmem_plus.processors.facts.derived import DerivedFact


class Status(Exception):
    """An HTTP error as client libraries raise them (with `status_code`)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status_code = status


def usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "input_tokens": prompt,
        "output_tokens": completion,
        "total_tokens": prompt + completion,
    }


def facts_call(
    facts: list[dict[str, Any]], tokens: tuple[int, int] | None = (300, 40)
) -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[{"name": "FactsOut", "args": {"facts": facts}, "id": "call_1"}],
        usage_metadata=usage(*tokens) if tokens else None,
    )


TURNS = [
    {"role": "user", "text": "国庆不去成都了，改去西安。对了我家狗子叫豆包🐶"},
    {"role": "assistant", "text": "好的，西安很不错！"},
]
EXISTING = [
    {"id": "f1", "text": "用户国庆要去成都", "slot": "national_day_trip.destination"},
    {"id": "f2", "text": "用户喜欢吃川菜"},
]
GOOD = [
    {
        "text": "用户国庆要去西安",
        "kind": "plan",
        "slot": "national_day_trip.destination",
        "value": "西安",
        "supersedes": ["f1"],
        "source_turns": [0],
    },
    {"text": "用户的狗叫豆包", "kind": "relation", "slot": "dog.name", "value": "豆包"},
]
RULE_FACT = DerivedFact(text="用户的狗叫豆包", slot="dog.name", source_turns=[0])


@pytest.fixture
def rules(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[dict[str, str]], str | None]]:
    """Rules that always find the dog's name, recording what they were asked."""
    asked: list[tuple[list[dict[str, str]], str | None]] = []

    def fake_rules(
        turns: Sequence[dict[str, str]], *, context: str | None = None
    ) -> list[DerivedFact]:
        asked.append((list(turns), context))
        return [RULE_FACT]

    monkeypatch.setattr(deriver_module, "rule_facts", fake_rules)
    return asked


def test_good_answer_gives_facts_slots_and_supersession_in_one_call() -> None:
    model = ScriptedTools(script=[facts_call(GOOD)])
    out = FactDeriver(model=model).run(TURNS, EXISTING)
    assert [(f.text, f.kind, f.slot, f.value, f.supersedes) for f in out.facts] == [
        ("用户国庆要去西安", "plan", "national_day_trip.destination", "西安", ["f1"]),
        ("用户的狗叫豆包", "relation", "dog.name", "豆包", []),
    ]
    assert out.facts[0].source_turns == [0]
    assert out.facts[1].source_turns == [0]  # none given: the user turns
    assert model.calls == 1 and out.calls == 1
    assert (out.prompt_tokens, out.completion_tokens, out.tokens_estimated) == (300, 40, False)
    assert not out.fell_back and out.error is None


def test_one_call_per_exchange_and_only_the_fact_prompt() -> None:
    model = ScriptedTools(script=[facts_call(GOOD)] * 3)
    deriver = FactDeriver(model=model)
    results = [deriver.run(TURNS, EXISTING) for _ in range(3)]
    assert model.calls == 3 and [r.calls for r in results] == [1, 1, 1]
    assert {m[0].content for m in model.seen} == {prompts.FACT_DERIVER_PROMPT}


def test_request_carries_numbered_turns_known_facts_context_and_today() -> None:
    model = ScriptedTools(script=[facts_call([])])
    now = datetime(2026, 11, 25, 9, 0, tzinfo=timezone.utc)
    FactDeriver(model=model).run(TURNS, EXISTING, context="你国庆去哪儿？", now=now)
    user = model.seen[0][1].content
    assert "<today>2026-11-25 (Wednesday)</today>" in user
    assert '[f1] ("national_day_trip.destination") "用户国庆要去成都"' in user
    assert '[f2] "用户喜欢吃川菜"' in user
    assert '(before) assistant: "你国庆去哪儿？"' in user
    assert '[0] user: "国庆不去成都了' in user and '[1] assistant: "好的' in user


def test_prompt_is_compact_and_precision_first() -> None:
    text = prompts.FACT_DERIVER_PROMPT
    assert len(text) < 1500
    for rule in ("Precision", "supersedes", "both", "third_person", "never translated"):
        assert rule in text


def test_malformed_json_is_not_retried_and_rules_answer(rules: list[Any]) -> None:
    sleeps: list[float] = []
    model = Scripted(script=['{"facts": [{"text": 用户的狗叫豆包}]}', '{"facts": []}'])
    out = FactDeriver(model=model, sleep=sleeps.append).run(TURNS, EXISTING, context="hi")
    assert model.calls == 1 and sleeps == []
    assert out.fell_back and out.calls == 1
    assert out.error is not None and out.error.startswith("malformed answer")
    assert out.facts == [RULE_FACT]
    assert rules == [(TURNS, "hi")]


@pytest.mark.parametrize(
    "answer",
    [
        '{"facts": [{"text": "用户的狗叫豆',  # cut off: its last fact would be cut short
        "Sorry, I can't help with that.",
        '{"facts": "none"}',
        '{"answer": 42}',
        OutputParserException("bad tool args"),
    ],
    ids=["cut-off", "prose", "wrong-type", "wrong-schema", "parser-exception"],
)
def test_deterministic_bad_answers_fall_back_at_once(rules: list[Any], answer: Any) -> None:
    sleeps: list[float] = []
    model = Scripted(script=[answer, facts_call(GOOD)])
    out = FactDeriver(model=model, sleep=sleeps.append).run(TURNS, EXISTING)
    assert model.calls == 1 and sleeps == []
    assert out.fell_back and out.facts == [RULE_FACT]
    assert out.error is not None and out.error.startswith("malformed answer")


def test_refusal_falls_back_at_once(rules: list[Any]) -> None:
    refusal = AIMessage(content="", additional_kwargs={"refusal": "I can't share that."})
    model = ScriptedTools(script=[refusal, facts_call(GOOD)])
    out = FactDeriver(model=model, sleep=lambda s: None).run(TURNS, EXISTING)
    assert model.calls == 1
    assert out.fell_back and out.error == "refused: I can't share that."


@pytest.mark.parametrize(
    "error", [Status(401), Status(402), RuntimeError("model bug"), KeyError("choices")]
)
def test_permanent_and_unknown_errors_are_not_retried(
    rules: list[Any], error: BaseException
) -> None:
    sleeps: list[float] = []
    model = Scripted(script=[error, facts_call(GOOD)])
    out = FactDeriver(model=model, sleep=sleeps.append).run(TURNS, EXISTING)
    assert model.calls == 1 and sleeps == []
    assert out.fell_back and out.facts == [RULE_FACT]
    assert out.error is not None and out.error.startswith("failed: ")


def test_transient_errors_are_retried_with_backoff_then_succeed() -> None:
    sleeps: list[float] = []
    model = Scripted(
        script=[ConnectionError("reset"), Status(429), Status(503), json.dumps({"facts": GOOD})]
    )
    out = FactDeriver(model=model, sleep=sleeps.append).run(TURNS, EXISTING)
    assert sleeps == [1.0, 2.0, 4.0]
    assert model.calls == 4 and out.calls == 4
    assert not out.fell_back and out.error is None
    assert [f.text for f in out.facts] == ["用户国庆要去西安", "用户的狗叫豆包"]


def test_transient_errors_exhausted_fall_back(rules: list[Any]) -> None:
    sleeps: list[float] = []
    model = Scripted(script=[TimeoutError("slow")])
    out = FactDeriver(model=model, sleep=sleeps.append).run(TURNS, EXISTING)
    assert sleeps == [1.0, 2.0, 4.0] and out.calls == 4
    assert out.fell_back and out.facts == [RULE_FACT]
    assert out.error == "failed after 4 attempts: TimeoutError: slow"
    assert (out.prompt_tokens, out.completion_tokens) == (0, 0)  # no answer came back


def test_structured_output_refused_by_endpoint_is_asked_once_as_plain_json() -> None:
    model = ScriptedTools(script=[Status(400), json.dumps({"facts": GOOD[:1]})])
    out = FactDeriver(model=model, sleep=lambda s: None).run(TURNS, EXISTING)
    assert model.calls == 2 and out.calls == 2
    assert "JSON schema" in model.seen[1][0].content
    assert [f.supersedes for f in out.facts] == [["f1"]]


def test_answer_is_cleaned() -> None:
    answer = [
        {
            "text": "用户国庆要去西安",
            "supersedes": ["f1", "ghost", "f1", 7],
            "source_turns": [0, 9],
        },
        {"text": "  ", "supersedes": ["f2"]},
        {"text": None},
        {"text": "用户国庆要去西安"},  # duplicate
        {"text": "用户的狗叫豆包", "slot": "  Dog Name ", "source_turns": [-1, "1", 5]},
        {"text": "用户有两只猫", "kind": "pets", "subject": "we", "source_turns": ["x"]},
        "not a fact",
    ]
    model = ScriptedTools(script=[facts_call(answer)])
    out = FactDeriver(model=model).run(TURNS, EXISTING)
    assert [(f.text, f.supersedes, f.source_turns, f.slot) for f in out.facts] == [
        ("用户国庆要去西安", ["f1"], [0], None),
        ("用户的狗叫豆包", [], [1], "dog_name"),
        ("用户有两只猫", [], [0], None),
    ]
    assert (out.facts[2].kind, out.facts[2].subject) == ("fact", "team")
    assert not out.fell_back


def test_hallucinated_supersedes_with_no_existing_facts_is_dropped() -> None:
    model = ScriptedTools(script=[facts_call([{"text": "用户国庆要去西安", "supersedes": ["f1"]}])])
    out = FactDeriver(model=model).run(TURNS, [])
    assert [f.supersedes for f in out.facts] == [[]]


def test_tokens_are_estimated_when_the_model_reports_none() -> None:
    answer = json.dumps({"facts": GOOD}, ensure_ascii=False)
    model = Scripted(script=[answer])
    out = FactDeriver(model=model).run(TURNS, EXISTING)
    sent = sum(len(str(m.content)) for m in model.seen[0])
    assert out.tokens_estimated
    assert out.prompt_tokens == -(-sent // 4)
    assert out.completion_tokens == -(-len(answer) // 4)


def test_tokens_add_up_over_a_retry() -> None:
    model = ScriptedTools(script=[Status(400), AIMessage(content=json.dumps({"facts": GOOD}))])
    model.script[1].usage_metadata = usage(500, 60)
    out = FactDeriver(model=model, sleep=lambda s: None).run(TURNS, EXISTING)
    assert (out.calls, out.prompt_tokens, out.completion_tokens) == (2, 500, 60)
    assert not out.tokens_estimated


def test_offline_uses_rules_without_a_call(rules: list[Any]) -> None:
    out = FactDeriver().run(TURNS, EXISTING, context="你国庆去哪儿？")
    assert out == Derivation(facts=[RULE_FACT], fell_back=True)
    assert rules == [(TURNS, "你国庆去哪儿？")]


def test_offline_with_the_real_rules_returns_a_derivation() -> None:
    out = FactDeriver().run(TURNS, EXISTING)
    assert out.fell_back and out.calls == 0 and out.error is None
    assert all(f.text.strip() and f.source_turns for f in out.facts)


def test_exchange_without_user_text_makes_no_call(rules: list[Any]) -> None:
    model = ScriptedTools(script=[facts_call(GOOD)])
    out = FactDeriver(model=model).run([{"role": "assistant", "text": "Hello!"}], EXISTING)
    assert model.calls == 0 and out == Derivation() and rules == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"turns": "hello"}, "turns must be"),
        ({"existing": [{"text": "no id"}]}, "needs an id"),
        ({"existing": {"id": "f1", "text": "x"}}, "existing must be"),
        ({"existing": [{"id": "f1", "text": "x", "slot": 3}]}, "slot must be"),
        ({"context": 42}, "context must be"),
        ({"now": "2026-11-25"}, "now must be"),
    ],
)
def test_bad_input_gets_a_clear_error(kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"turns": TURNS, "existing": EXISTING} | kwargs
    turns, existing = args.pop("turns"), args.pop("existing")
    model = ScriptedTools(script=[facts_call(GOOD)])
    with pytest.raises(ValidationError, match=message):
        FactDeriver(model=model).run(turns, existing, **args)
    assert model.calls == 0


def test_existing_facts_accept_records_with_metadata_slot() -> None:
    record = SimpleNamespace(id="f9", text="用户住在上海", metadata={"slot": "home.city"})
    model = ScriptedTools(script=[facts_call([{"text": "用户住在杭州", "supersedes": ["f9"]}])])
    out = FactDeriver(model=model).run(TURNS, [record])
    assert '[f9] ("home.city") "用户住在上海"' in model.seen[0][1].content
    assert out.facts[0].supersedes == ["f9"]


fact_items = st.fixed_dictionaries(
    {},
    optional={
        "text": st.one_of(st.none(), st.text(max_size=30)),
        "supersedes": st.lists(st.sampled_from(["f1", "f2", "ghost", "", "f10"]), max_size=4),
        "source_turns": st.lists(st.integers(-3, 6), max_size=4),
        "slot": st.one_of(st.none(), st.text(max_size=10)),
        "kind": st.text(max_size=12),
    },
)


@settings(max_examples=60, deadline=None)
@given(st.lists(fact_items, max_size=6))
def test_cleaned_facts_always_point_inside_the_exchange(answer: list[dict[str, Any]]) -> None:
    model = ScriptedTools(script=[facts_call(answer)])
    out = FactDeriver(model=model).run(TURNS, EXISTING)
    assert not out.fell_back and out.calls == 1
    texts = [f.text.casefold() for f in out.facts]
    assert len(texts) == len(set(texts))
    for fact in out.facts:
        assert fact.text.strip() and set(fact.supersedes) <= {"f1", "f2"}
        assert fact.source_turns and all(0 <= i < len(TURNS) for i in fact.source_turns)


# --------------------------------------------------------------- ChatOpenAI over loopback
@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as srv:
        yield srv


def tool_answer(facts: list[dict[str, Any]]) -> dict[str, Any]:
    return tool_completion("FactsOut", {"facts": facts})


@loopback
def test_chat_openai_one_request_per_exchange(server: FakeOpenAI) -> None:
    server.script = [(200, tool_answer(GOOD))]
    out = FactDeriver(model=chat_openai(server)).run(TURNS, EXISTING)
    assert [(f.text, f.supersedes) for f in out.facts] == [
        ("用户国庆要去西安", ["f1"]),
        ("用户的狗叫豆包", []),
    ]
    assert (out.calls, out.prompt_tokens, out.completion_tokens) == (1, 321, 45)
    assert not out.tokens_estimated and not out.fell_back
    (body,) = server.bodies
    assert body["tools"][0]["function"]["name"] == "FactsOut"
    assert body["messages"][0]["content"] == prompts.FACT_DERIVER_PROMPT
    assert '[0] user: "国庆不去成都了' in body["messages"][1]["content"]


@loopback
def test_chat_openai_malformed_answer_is_one_request(server: FakeOpenAI, rules: list[Any]) -> None:
    server.script = [(200, completion({"role": "assistant", "content": "Sure! Here you go"}))]
    sleeps: list[float] = []
    out = FactDeriver(model=chat_openai(server), sleep=sleeps.append).run(TURNS, EXISTING)
    assert len(server.requests) == 1 and sleeps == []
    assert out.fell_back and out.facts == [RULE_FACT] and out.calls == 1
    assert (out.prompt_tokens, out.completion_tokens) == (321, 45)


@loopback
def test_chat_openai_bad_tool_arguments_are_one_request(
    server: FakeOpenAI, rules: list[Any]
) -> None:
    answer = tool_answer(GOOD)
    answer["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = '{"facts": [{'
    server.script = [(200, answer)]
    out = FactDeriver(model=chat_openai(server), sleep=lambda s: None).run(TURNS, EXISTING)
    assert len(server.requests) == 1
    assert out.fell_back and out.error is not None and out.error.startswith("malformed")


@loopback
def test_chat_openai_5xx_and_429_are_retried(server: FakeOpenAI) -> None:
    server.script = [
        (500, {"error": {"message": "boom"}}),
        (429, {"error": {"message": "slow down"}}),
        (200, tool_answer(GOOD[:1])),
    ]
    sleeps: list[float] = []
    out = FactDeriver(model=chat_openai(server), sleep=sleeps.append).run(TURNS, EXISTING)
    assert len(server.requests) == 3 and sleeps == [1.0, 2.0]
    assert out.calls == 3 and not out.fell_back
    assert [f.text for f in out.facts] == ["用户国庆要去西安"]
