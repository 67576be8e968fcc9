"""Regression tests for reported gaps of the rule processors (Chinese and English):
corrections with time adverbs / "not X" tails / "I meant X", explicit remember requests with
code content, stale profile background, subject-less preferences, project facts, and
absolute dates for relative plan dates."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore

from langmem_plus.model.records import MemoryRecord
from langmem_plus.processors import (
    KnowledgeMonitor,
    MemoryOp,
    WriteDecider,
    apply_ops,
)

NS = ("memories", "u1")
NOW = datetime(2026, 1, 10, 12, 0, tzinfo=timezone.utc)  # a Saturday


def ops_of(text: str, existing: list[str] | None = None) -> list[MemoryOp]:
    mems = [{"id": f"m{i}", "text": t} for i, t in enumerate(existing or [])]
    return KnowledgeMonitor().run([{"role": "user", "text": text}], mems, now=NOW)


def brief(ops: list[MemoryOp]) -> list[tuple[Any, ...]]:
    return [(o.op, o.id, o.text) for o in ops]


# ----------------------------------------------------------------- 1. corrections
@pytest.mark.parametrize(
    ("text", "existing", "expected"),
    [
        # trailing / leading present-time adverbs, "not X" tails
        ("Actually I live in Shanghai now, not Beijing", ["User lives in Beijing"], "User lives in Shanghai"),
        ("I live in Shanghai these days, not Beijing.", ["User lives in Beijing"], "User lives in Shanghai"),
        ("Now I live in Shanghai, not Beijing", ["User lives in Beijing"], "User lives in Shanghai"),
        ("Actually I live in New York now, not Boston", ["User lives in Boston"], "User lives in New York"),
        (
            "Actually, these days I work at Microsoft, not Google",
            ["User works at Google as an engineer"],
            "User works at Microsoft as an engineer",
        ),
        ("其实我现在住在上海，不是北京", ["用户住在北京"], "用户住在上海"),
        ("目前我住在上海，不是北京。", ["用户住在北京"], "用户住在上海"),
        ("其实我目前在上海工作，不是北京", ["用户在北京工作"], "用户在上海工作"),
        # "I meant X" with a clause, and with a bare value
        ("Sorry, I meant I live in Shanghai now", ["User lives in Beijing"], "User lives in Shanghai"),
        ("I meant Shanghai, not Beijing", ["User lives in Beijing"], "User lives in Shanghai"),
        ("I meant Shanghai.", ["User lives in Beijing"], "User lives in Shanghai"),
        ("我是说上海，不是北京", ["用户住在北京"], "用户住在上海"),
        ("我的意思是上海", ["用户住在北京"], "用户住在上海"),
    ],
)  # fmt: skip
def test_corrections_give_clean_updates(text: str, existing: list[str], expected: str) -> None:
    noise = ["User likes tennis"] if existing[0].startswith("User") else ["用户喜欢爬山"]
    assert brief(ops_of(text, existing + noise)) == [("UPDATE", "m0", expected)]


def test_bare_value_correction_never_guesses() -> None:
    # two memories hold a place: "I meant X" alone does not say which one -> nothing written
    assert brief(ops_of("我是说上海", ["用户住在北京", "用户老家在西安"])) == [("SKIP", None, None)]
    assert brief(ops_of("I meant Shanghai", ["User likes tennis"])) == [("SKIP", None, None)]
    assert brief(ops_of("I meant Shanghai")) == [("SKIP", None, None)]


def test_present_state_change_is_still_not_a_correction() -> None:
    assert ops_of("I'm relaxed now.", ["User was stressed about exams"])[0].op == "ADD"
    assert ops_of("这几天我很放松", ["用户最近压力很大"])[0].op == "ADD"


# ----------------------------------------------------------- 2. remember + code
@pytest.mark.parametrize(
    ("text", "memory", "symbols"),
    [
        (
            "记住：我们的项目用 PostgreSQL 15，部署在 k8s 上",
            "用户的项目用 PostgreSQL 15，部署在 k8s 上",
            {"PostgreSQL", "k8s"},
        ),
        ("记住 processOrder 在 src/order.ts 里", "processOrder 在 src/order.ts 里", {"processOrder", "src/order.ts"}),
        ("别忘了 OrderService 依赖 Redis 和 Kafka", "OrderService 依赖 Redis 和 Kafka", {"OrderService", "Redis", "Kafka"}),
        ("记住：支付回调在 handlers/pay.go 里", "支付回调在 handlers/pay.go 里", {"handlers/pay.go"}),
        (
            "Remember: our project uses PostgreSQL 15 and is deployed on k8s",
            "The project uses PostgreSQL 15 and is deployed on k8s",
            {"PostgreSQL", "k8s"},
        ),
        ("Remember processOrder lives in src/order.ts", "processOrder lives in src/order.ts", {"processOrder", "src/order.ts"}),
        ("Don't forget: OrderService depends on Redis.", "OrderService depends on Redis", {"OrderService", "Redis"}),
    ],
)  # fmt: skip
def test_remember_with_code_content_is_stored(text: str, memory: str, symbols: set[str]) -> None:
    ops = ops_of(text)
    assert [(o.op, o.text, o.category) for o in ops] == [("ADD", memory, "fact")]
    assert symbols <= set(ops[0].symbols)
    decision = WriteDecider().decide([{"role": "user", "text": text}])
    assert decision.write_episodic and decision.reason == "explicit remember request"
    store = InMemoryStore()
    res = apply_ops(store, NS, ops, now=NOW)
    item = store.get(NS, res.created_ids[0])
    assert item is not None
    assert symbols <= set(MemoryRecord.from_item(item).symbols)


def test_remember_with_personal_content_keeps_its_family() -> None:
    assert brief(ops_of("记住，我的车停在B2层56号")) == [("ADD", None, "用户的车停在B2层56号")]
    ops = ops_of("Please remember my wife's name is Elena.")
    assert brief(ops) == [("ADD", None, "User's wife's name is Elena")]


# ------------------------------------------------------------- 3. profile writer
# (the background comes from the user's current facts: tests/test_profile.py)


# ------------------------------------------- 4. preferences without a subject, project facts
@pytest.mark.parametrize(
    ("text", "memory", "category"),
    [
        ("甜食我一般不太碰。", "用户一般不太碰甜食", "preference"),
        ("咖啡的话我只喝美式", "用户喝咖啡只喝美式", "preference"),
        ("辣的我不太吃", "用户不太吃辣的", "preference"),
        ("香菜我是一点都不吃", "用户是一点都不吃香菜", "preference"),
        ("电影的话我最喜欢科幻片", "关于电影，用户最喜欢科幻片", "preference"),
        ("Tea over coffee for me, always.", "User always prefers tea over coffee", "preference"),
        ("Python over Java for me", "User prefers Python over Java", "preference"),
        ("Love spicy food.", "User loves spicy food", "preference"),
        ("Big fan of jazz", "User is a big fan of jazz", "preference"),
        ("我们的服务部署在阿里云上", "用户的服务部署在阿里云上", "fact"),
        ("我们的后端跑在腾讯云上", "用户的后端跑在腾讯云上", "fact"),
        ("我们项目的 CI 跑在 GitHub Actions 上", "用户的项目的 CI 跑在 GitHub Actions 上", "fact"),
        ("我们的网站用 Next.js 写的，部署在 Vercel 上", "用户的网站用 Next.js 写的，部署在 Vercel 上", "fact"),
    ],
)  # fmt: skip
def test_subjectless_preferences_and_project_facts(text: str, memory: str, category: str) -> None:
    assert [(o.op, o.text, o.category) for o in ops_of(text)] == [("ADD", memory, category)]


@pytest.mark.parametrize(
    "text", ["Like I said.", "Love it!", "这个我不太懂", "Love you", "Like what?"]
)
def test_subjectless_rules_do_not_overfire(text: str) -> None:
    assert ops_of(text)[0].op == "SKIP"


# ------------------------------------------------------------------- 5. plan dates
@pytest.mark.parametrize(
    ("text", "memory", "metadata"),
    [
        ("下周三要去杭州面试", "用户下周三要去杭州面试", {"time_phrase": "下周三", "resolved_date": "2026-01-14"}),
        ("大后天我要考科目二", "大后天用户要考科目二", {"time_phrase": "大后天", "resolved_date": "2026-01-13"}),
        ("明天我要去医院复查", "明天用户要去医院复查", {"time_phrase": "明天", "resolved_date": "2026-01-11"}),
        ("我3月5日要交报告", "用户3月5日要交报告", {"time_phrase": "3月5日", "resolved_date": "2026-03-05"}),
        ("下个月我要搬家", "下个月用户要搬家", {"resolved_start": "2026-02-01", "resolved_end": "2026-03-01"}),
        ("next Friday I will fly to Tokyo", "Next Friday the user will fly to Tokyo",
         {"time_phrase": "Next Friday", "resolved_date": "2026-01-16"}),
        ("I have a dentist appointment tomorrow.", "User has a dentist appointment tomorrow",
         {"time_phrase": "tomorrow", "resolved_date": "2026-01-11"}),
        ("I'm flying to Berlin on March 3.", "User is flying to Berlin on March 3",
         {"time_phrase": "March 3", "resolved_date": "2026-03-03"}),
    ],
)  # fmt: skip
def test_plans_keep_words_and_get_absolute_dates(
    text: str, memory: str, metadata: dict[str, str]
) -> None:
    ops = ops_of(text)
    assert [(o.op, o.text) for o in ops] == [("ADD", memory)]
    assert metadata.items() <= ops[0].metadata.items()
    store = InMemoryStore()
    res = apply_ops(store, NS, ops, now=NOW)
    item = store.get(NS, res.created_ids[0])
    assert item is not None
    rec = MemoryRecord.from_item(item)
    assert rec.text == memory and metadata.items() <= rec.metadata.items()


@pytest.mark.parametrize(
    "text", ["我每周五打篮球", "我的生日是5月13号", "I usually code at night."]
)
def test_habits_and_birthdays_get_no_date(text: str) -> None:
    ops = ops_of(text)
    assert ops[0].op == "ADD" and "resolved_date" not in ops[0].metadata


def test_update_replaces_stale_date_metadata() -> None:
    store = InMemoryStore()
    first = apply_ops(store, NS, ops_of("下周三要去杭州面试"), now=NOW)
    key = first.created_ids[0]
    apply_ops(store, NS, [MemoryOp(op="UPDATE", id=key, text="用户要去杭州面试")], now=NOW)
    item = store.get(NS, key)
    assert item is not None
    meta = MemoryRecord.from_item(item).metadata
    assert "resolved_date" not in meta and "time_phrase" not in meta


def test_op_extras_stay_out_of_the_model_schema() -> None:
    props = MemoryOp.model_json_schema()["properties"]
    assert "symbols" not in props and "metadata" not in props
