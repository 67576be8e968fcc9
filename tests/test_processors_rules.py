"""Offline (rule-based) processors: knowledge monitor families in Chinese and English,
apply_ops on a LangGraph store, summaries, turn analysis, symbols, profile, reviewer."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore

from langmem_plus.config import MemoryConfig
from langmem_plus.errors import ValidationError
from langmem_plus.model.records import MemoryRecord, UserProfile
from langmem_plus.processors import (
    EpisodeMerger,
    EpisodeSeparator,
    KnowledgeMonitor,
    MemoryOp,
    ProfileWriter,
    Reconsolidator,
    Reviewer,
    SemanticWriter,
    Summarizer,
    SymbolExtractor,
    TurnAnalyzer,
    WriteDecider,
    aapply_ops,
    apply_ops,
)

NS = ("memories", "u1")
NOW = datetime(2026, 1, 10, 12, 0, tzinfo=timezone.utc)


def run(
    text: str, existing: list[dict[str, str]] | None = None, reply: str | None = None
) -> list[tuple[Any, ...]]:
    turns = [{"role": "user", "text": text}]
    if reply:
        turns.append({"role": "assistant", "text": reply})
    ops = KnowledgeMonitor().run(turns, existing or [])
    return [(o.op, o.id, o.text, o.category, o.who) for o in ops]


@pytest.mark.parametrize(
    ("text", "memory", "category"),
    [
        ("我喜欢吃川菜", "用户喜欢吃川菜", "preference"),
        ("我不吃香菜", "用户不吃香菜", "preference"),
        ("我最讨厌早起", "用户最讨厌早起", "preference"),
        ("I prefer dark mode.", "User prefers dark mode", "preference"),
        ("I hate mornings", "User hates mornings", "preference"),
        ("I don't eat pork.", "User doesn't eat pork", "preference"),
        ("我叫王芳", "用户叫王芳", "fact"),
        ("我住在杭州西湖区", "用户住在杭州西湖区", "fact"),
        ("我的生日是3月5日", "用户的生日是3月5日", "fact"),
        ("My name is Alice.", "User's name is Alice", "fact"),
        ("I live in Lisbon.", "User lives in Lisbon", "fact"),
        ("I work as a nurse.", "User works as a nurse", "fact"),
        ("下周三我要去医院复查", "下周三用户要去医院复查", "fact"),
        ("Next Friday I will fly to Tokyo.", "Next Friday the user will fly to Tokyo", "fact"),
        ("我每天早上跑步", "用户每天早上跑步", "pattern"),
        ("I usually code at night.", "User usually codes at night", "pattern"),
    ],
)
def test_statement_families(text: str, memory: str, category: str) -> None:
    assert run(text) == [("ADD", None, memory, category, "user")]


@pytest.mark.parametrize(
    "text",
    [
        "你好",
        "谢谢！",
        "嗯嗯",
        "好的",
        "为什么天空是蓝的？",
        "什么是量子计算",
        "帮我写一首诗",
        "Hi!",
        "thanks a lot",
        "ok",
        "What is the capital of France?",
        "Why is the sky blue?",
        "How do I sort a list in Python?",
        "lol",
        "the",
        "？？",
    ],
)
def test_skip_chitchat_questions_fragments(text: str) -> None:
    assert [op[0] for op in run(text)] == ["SKIP"]


@pytest.mark.parametrize(
    ("text", "memory"),
    [
        ("记住，我的车停在B2层56号", "用户的车停在B2层56号"),
        ("别忘了我对花生过敏", "用户对花生过敏"),
        ("Remember that my locker code is 4512.", "User's locker code is 4512"),
        ("Don't forget I take my coffee black.", "User takes their coffee black"),
    ],
)
def test_explicit_remember_is_stored(text: str, memory: str) -> None:
    ops = run(text)
    assert ops[0][0] == "ADD" and ops[0][2] == memory


def test_remember_question_is_not_a_request() -> None:
    assert run("Do you remember my name?")[0][0] == "SKIP"
    assert run("你还记得我叫什么吗？")[0][0] == "SKIP"


@pytest.mark.parametrize(
    ("text", "existing", "target", "new_text"),
    [
        ("不对，我不是住在上海，是住在杭州", ["用户住在上海", "用户喜欢爬山"], 0, "用户住在杭州"),
        (
            "我说错了，我的生日是5月13号，不是5月3号",
            ["用户的生日是5月3号", "用户喜欢猫"],
            0,
            "用户的生日是5月13号",
        ),
        (
            "Actually, I work at Microsoft, not Google.",
            ["User likes tennis", "User works at Google"],
            1,
            "User works at Microsoft",
        ),
        (
            "Correction: my flight is on Thursday, not Wednesday.",
            ["User's flight is on Wednesday", "User prefers window seats"],
            0,
            "User's flight is on Thursday",
        ),
    ],
)
def test_corrections_update_best_match(
    text: str, existing: list[str], target: int, new_text: str
) -> None:
    mems = [{"id": f"m{i}", "text": t} for i, t in enumerate(existing)]
    assert run(text, mems) == [("UPDATE", f"m{target}", new_text, "fact", "user")]


def test_single_valued_slot_change_updates() -> None:
    ops = run("I moved to Berlin.", [{"id": "m1", "text": "User lives in Paris"}])
    assert ops[0][:2] == ("UPDATE", "m1")


def test_change_over_time_is_not_a_conflict() -> None:
    existing = [{"id": "m1", "text": "User was stressed about exams"}]
    assert run("I'm relaxed now.", existing)[0][0] == "ADD"
    existing = [{"id": "m1", "text": "用户最近压力很大"}]
    assert run("这几天我很放松", existing)[0][0] == "ADD"


@pytest.mark.parametrize(
    ("text", "who"),
    [
        ("我朋友小王喜欢打篮球", "friend"),
        ("我妹妹在读医学院", "sister"),
        ("My sister likes K-pop.", "sister"),
        ("My dad is allergic to shellfish.", "father"),
    ],
)
def test_other_people_are_attributed(text: str, who: str) -> None:
    ops = run(text)
    assert ops[0][0] == "ADD" and ops[0][4] == who


def test_code_facts_fill_symbols() -> None:
    ops = KnowledgeMonitor().run([{"role": "user", "text": "The project uses PostgreSQL 15."}], [])
    assert ops[0].text == "The project uses PostgreSQL 15" and ops[0].category == "fact"
    store = InMemoryStore()
    res = apply_ops(store, NS, ops)
    assert res.added == 1
    ops = KnowledgeMonitor().run([{"role": "user", "text": "项目用的是 Vue 3"}], [])
    assert ops[0].op == "ADD" and "Vue" in ops[0].text
    symbols = [s.name for s in SymbolExtractor().extract("项目用的是 Vue 3，数据库是 PostgreSQL")]
    assert {"Vue", "PostgreSQL"} <= set(symbols)


def test_boost_when_reply_uses_memory() -> None:
    existing = [{"id": "m1", "text": "用户喜欢吃川菜"}, {"id": "m2", "text": "用户住在上海"}]
    assert run("晚饭吃什么？", existing, reply="你喜欢川菜的话，可以试试水煮鱼。") == [
        ("BOOST", "m1", None, "fact", "user")
    ]
    existing = [{"id": "m1", "text": "User enjoys painting"}]
    assert run("Weekend plans?", existing, reply="Maybe a bike ride?")[0][0] == "SKIP"


def test_restatement_boosts_instead_of_duplicating() -> None:
    assert run("Like I said, I'm vegetarian.", [{"id": "m1", "text": "User is vegetarian"}]) == [
        ("BOOST", "m1", None, "fact", "user")
    ]


@pytest.mark.parametrize(
    ("text", "existing", "target"),
    [
        ("忘掉我喜欢猫这件事", ["用户喜欢猫", "用户住在北京"], 0),
        ("我已经不喝咖啡了", ["用户喜欢跑步", "用户每天早上喝咖啡"], 1),
        ("Forget that I like jazz.", ["User likes jazz", "User lives in Boston"], 0),
        ("I no longer work at Google.", ["User likes tennis", "User works at Google"], 1),
    ],
)
def test_delete_obsolete_or_forgotten(text: str, existing: list[str], target: int) -> None:
    mems = [{"id": f"m{i}", "text": t} for i, t in enumerate(existing)]
    assert ("DELETE", f"m{target}") in [op[:2] for op in run(text, mems)]


def test_monitor_input_validation() -> None:
    with pytest.raises(ValidationError):
        KnowledgeMonitor().run("just a string", [])
    with pytest.raises(ValidationError):
        KnowledgeMonitor().run([{"role": "user", "text": "hi"}], [{"text": "no id"}])
    with pytest.raises(ValidationError):
        KnowledgeMonitor(config={"merge_threshold": 1})  # type: ignore[arg-type]
    assert KnowledgeMonitor().run([], [])[0].op == "SKIP"


def test_async_run_matches_sync() -> None:
    turns = [{"role": "user", "text": "I love hiking and my wife loves painting."}]
    sync = KnowledgeMonitor().run(turns, [])
    assert asyncio.run(KnowledgeMonitor().arun(turns, [])) == sync
    assert [o.who for o in sync] == ["user", "wife"]


# ----------------------------------------------------------------------------- apply_ops
def _put(store: InMemoryStore, rec: MemoryRecord) -> None:
    store.put(NS, rec.id, rec.to_value())


def test_apply_ops_all_kinds() -> None:
    store = InMemoryStore()
    old = MemoryRecord(id="m1", text="用户住在上海", created_at=NOW - timedelta(days=3))
    boost = MemoryRecord(id="m2", text="用户喜欢猫", category="preference", importance=2.3)
    gone = MemoryRecord(id="m3", text="用户喝咖啡")
    for r in (old, boost, gone):
        _put(store, r)
    ops = [
        MemoryOp(op="ADD", text="用户喜欢吃川菜", category="preference", confidence=0.7),
        MemoryOp(op="UPDATE", id="m1", text="用户住在杭州", reason="correction"),
        MemoryOp(op="BOOST", id="m2"),
        MemoryOp(op="DELETE", id="m3"),
        MemoryOp(op="SKIP"),
        MemoryOp(op="BOOST", id="missing"),
    ]
    res = apply_ops(store, NS, ops, session_id="s1", now=NOW)
    assert (res.added, res.updated, res.boosted, res.deleted, res.skipped) == (1, 1, 1, 1, 2)
    assert res.changed_ids == ["m1", "m2"] and res.deleted_ids == ["m3"]
    assert res.review_ids == ["m2"]  # 2.3 + 0.3 reached review_high
    added = MemoryRecord.from_item(store.get(NS, res.created_ids[0]))
    assert added.source == "user_stated" and added.confidence == 0.7
    assert added.category == "preference" and added.kind == "semantic"
    assert added.metadata["source_chatid"] == "s1" and added.metadata["first_seen"] == "2026-01-10"
    upd = MemoryRecord.from_item(store.get(NS, "m1"))
    assert upd.text == "用户住在杭州"
    assert upd.created_at == old.created_at
    assert upd.metadata["updates"] == [
        {"time": NOW.isoformat(), "old_text": "用户住在上海", "desc": "correction"}
    ]
    assert MemoryRecord.from_item(store.get(NS, "m2")).importance == pytest.approx(2.6)
    assert store.get(NS, "m3") is None


def test_apply_ops_episode_category_makes_episodic_record() -> None:
    store = InMemoryStore()
    res = apply_ops(
        store,
        NS,
        [MemoryOp(op="ADD", text="聊了面试", category="episode")],
        session_id="c9",
        now=NOW,
    )
    rec = MemoryRecord.from_item(store.get(NS, res.created_ids[0]))
    assert rec.kind == "episodic" and rec.metadata["time"] == NOW.isoformat()
    assert rec.metadata["source_chat_ids"] == ["c9"]


def test_apply_ops_validation_and_async() -> None:
    store = InMemoryStore()
    with pytest.raises(ValidationError):
        apply_ops(store, "memories", [])  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        apply_ops(store, NS, MemoryOp(op="SKIP"))  # type: ignore[arg-type]
    res = asyncio.run(aapply_ops(store, NS, [MemoryOp(op="ADD", text="User likes tea")]))
    assert res.added == 1 and len(store.search(NS)) == 1


def test_memory_op_is_lenient() -> None:
    op = MemoryOp.model_validate(
        {"op": "update:abc", "text": "x", "category": "weird", "confidence": "0.4"}
    )
    assert (op.op, op.id, op.category, op.confidence) == ("UPDATE", "abc", "fact", 0.4)
    assert MemoryOp(op="ADD").problem() == "ADD without text"


# ---------------------------------------------------------------------------- others
def test_write_decider_rules() -> None:
    wd = WriteDecider()
    assert not wd.decide([{"role": "user", "text": "你好"}]).write_episodic
    assert not wd.decide([{"role": "user", "text": "什么是区块链？"}]).write_episodic
    out = wd.decide([{"role": "user", "text": "请记住我是北京大学的学生"}])
    assert out.write_episodic and "北京大学" in out.thing


def test_summarizer_rules() -> None:
    s = Summarizer()
    at = datetime(2026, 1, 3, 18, 0)
    zh = [
        {"role": "user", "text": "我明天有个面试，有点紧张"},
        {"role": "user", "text": "面试完想打会儿游戏，最近在玩塞尔达"},
    ]
    line = s.episode(zh, at)
    assert line.startswith("[2026-01-03 18:00] 聊了") and "面试" in line and "游戏" in line
    en = [
        {"role": "user", "text": "I have an interview tomorrow"},
        {"role": "user", "text": "Then I will play games after the interview"},
    ]
    line = s.episode(en, at)
    assert line.startswith("[2026-01-03 18:00] talked about interview")
    code = [
        {"role": "user", "text": "processOrder in src/order.ts throws TypeError"},
        {"role": "assistant", "text": "Let's switch to zod for validation."},
        {"role": "user", "text": "OK, we decided to use zod."},
    ]
    rolling = s.rolling(code)
    assert rolling.key_symbols[:3] == ["processOrder", "src/order.ts", "TypeError"]
    assert any("zod" in d for d in rolling.key_decisions)
    title, snippet = s.session_title(
        [
            {"role": "user", "text": "如何准备技术面试？"},
            {"role": "assistant", "text": "先复习算法。"},
        ]
    )
    assert title == "如何准备技术面试" and snippet == "先复习算法。"
    with pytest.raises(ValidationError):
        s.episode(zh, "2026-01-03")  # type: ignore[arg-type]


def test_turn_analyzer_rules() -> None:
    out = TurnAnalyzer().analyze("明天下午我要在北京开会，好紧张")
    assert out.emotion == "anxious" and out.context_variables["time"] == "明天"
    assert "北京" in out.context_variables["place"]
    out = TurnAnalyzer().analyze("processOrder in src/order.ts throws TypeError, so frustrating")
    assert out.emotion == "frustrated"
    assert out.context_variables["file"] == "src/order.ts"
    assert TurnAnalyzer().analyze("ok").emotion == "neutral"


def test_symbol_extractor_kinds() -> None:
    kinds = {
        s.name: s.kind
        for s in SymbolExtractor().extract(
            "processOrder in src/order.ts raised TypeError inside OrderService"
        )
    }
    assert kinds == {
        "processOrder": "function",
        "src/order.ts": "path",
        "TypeError": "error",
        "OrderService": "class",
    }


def test_profile_writer_respects_hand_edits() -> None:
    pw = ProfileWriter()
    prof = pw.update(
        UserProfile(user_id="u"),
        [{"role": "user", "text": "请回答简短一点。我是前端工程师"}],
        facts=["用户是前端工程师"],
    )
    assert "简短" in prof.reply_style and "前端工程师" in prof.background
    assert prof.language_habits == "主要使用中文"
    hand = UserProfile(user_id="u", background="手写的背景", edited_by_user=["background"])
    prof = pw.update(
        hand,
        [{"role": "user", "text": "I'm a data scientist. Keep your answers short."}],
        facts=["User is a data scientist"],
    )
    assert prof.background == "手写的背景" and "short" in prof.reply_style
    same = pw.update(prof, [{"role": "user", "text": "hello"}])
    assert same.reply_style == prof.reply_style


def _episode(id: str, text: str, chat: str, time: str, who: str = "user") -> MemoryRecord:
    return MemoryRecord(
        id=id,
        kind="episodic",
        category="episode",
        text=text,
        chat_id=chat,
        who=who,
        metadata={"time": time, "chatid": chat, "who": who},
    )


def test_episodic_processors_rules() -> None:
    a = _episode("a", "用户周六和小李去爬了香山，用户喜欢爬山。", "c1", "2026-01-03T10:00:00+00:00")
    b = _episode("b", "周六用户跟小李一起去香山爬山了。", "c2", "2026-01-02T10:00:00+00:00")
    merged = EpisodeMerger().merge(a, b, now=NOW)
    assert merged.text == "周六用户跟小李一起去香山爬山了。用户喜欢爬山。"
    assert merged.metadata["time"] == "2026-01-02T10:00:00+00:00"
    assert merged.metadata["source_chat_ids"] == ["c2", "c1"]
    assert merged.metadata["merged_from_ids"] == ["b", "a"]
    sa, sb = EpisodeSeparator().separate(a, b, now=NOW)
    assert sa.text != sb.text and sa.metadata["separated_from"] == ["b"]
    again = EpisodeSeparator().separate(sa, sb, now=NOW)
    assert again[0].text == sa.text  # labels are not stacked
    new = Reconsolidator().reconsolidate(a, "用户说下次想去泰山。", now=NOW)
    assert "泰山" in new.text and len(new.metadata["updates"]) == 1
    assert new.metadata["time"] == a.metadata["time"] and new.chat_id == "c1"
    facts = SemanticWriter().write(a, now=NOW)
    assert [f.text for f in facts] == ["用户喜欢爬山"]
    assert facts[0].metadata == {
        "fact": "用户喜欢爬山",
        "source_chatid": "c1",
        "first_seen": "2026-01-03",
        "source_memory_id": "a",
    }


def test_reviewer_rules() -> None:
    rv = Reviewer()
    assert rv.review(MemoryRecord(text="用户的生日是5月3日", importance=2.6)).decision == "PROMOTE"
    assert rv.review(MemoryRecord(text="User is tired today", importance=2.6)).decision == "KEEP"
    assert rv.review(MemoryRecord(text="User is tired today", importance=0.4)).decision == "DELETE"
    assert rv.review(MemoryRecord(text="User's name is Tom", importance=0.4)).decision == "KEEP"
    superseded = rv.review(
        MemoryRecord(text="User lives in Paris", importance=0.4),
        related=["User lives in Berlin now"],
    )
    assert superseded.decision == "DELETE"
    assert rv.mode_for(MemoryRecord(text="x", importance=1.0)) is None
    assert (
        Reviewer(config=MemoryConfig(lifecycle={"review_high": 2.0})).mode_for(
            MemoryRecord(text="x", importance=2.0)
        )
        == "promote"
    )
