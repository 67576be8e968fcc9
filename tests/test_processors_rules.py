"""Offline (rule-based) processors: summaries, turn analysis, symbols, profile, episodic
rewriters, reviewer. (The fact rules are tested in tests/test_fact_rules.py.)"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

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
    SymbolExtractor,
    TurnAnalyzer,
)

NOW = datetime(2026, 1, 10, 12, 0, tzinfo=timezone.utc)


# ---------------------------------------------------------------------------- others
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
    # the name and the intent come from the fact rules and the shared clause reading
    assert TurnAnalyzer().analyze("你以后直接叫我小周").context_variables["user_name"] == "小周"
    assert TurnAnalyzer().analyze("my name is Alice").context_variables["user_name"] == "Alice"
    assert TurnAnalyzer().analyze("周末去哪玩好呢？").context_variables["intent"] == "question"
    assert (
        TurnAnalyzer().analyze("记住我的车位号是B2-117").context_variables["intent"] == "remember"
    )


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


def test_reviewer_rules() -> None:
    rv = Reviewer()
    assert rv.review(MemoryRecord(text="用户的生日是5月3日", importance=2.6)).decision == "PROMOTE"
    assert rv.review(MemoryRecord(text="User is tired today", importance=2.6)).decision == "KEEP"
    assert rv.review(MemoryRecord(text="User is tired today", importance=0.4)).decision == "DELETE"
    assert rv.review(MemoryRecord(text="User's name is Tom", importance=0.4)).decision == "KEEP"
    # a fact a later value closed goes at decay review; so does one a related memory repeats
    closed = MemoryRecord(
        text="User lives in Paris", importance=0.4, valid_to=NOW, superseded_by="f2"
    )
    assert rv.review(closed, related=["User lives in Berlin"]).decision == "DELETE"
    assert rv.review(MemoryRecord(text="User lives in Paris", importance=0.4)).decision == "KEEP"
    repeated = rv.review(
        MemoryRecord(text="用户养了一只猫叫年糕", importance=0.4),
        related=["用户养了一只猫，叫年糕"],
    )
    assert repeated.decision == "DELETE"
    # a derived fact's kind says how long it holds
    plan = MemoryRecord(text="用户去杭州", importance=2.6, metadata={"fact_kind": "plan"})
    assert rv.review(plan).decision == "KEEP"
    job = MemoryRecord(text="用户是护士", importance=2.6, metadata={"fact_kind": "profile"})
    assert rv.review(job).decision == "PROMOTE"
    assert rv.mode_for(MemoryRecord(text="x", importance=1.0)) is None
    assert (
        Reviewer(config=MemoryConfig(lifecycle={"review_high": 2.0})).mode_for(
            MemoryRecord(text="x", importance=2.0)
        )
        == "promote"
    )
