"""The language tools every processor shares, written once in `langmem_plus.text`: sentences,
clauses, fillers, questions, small talk, first to third person, token overlap, scripts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langmem_plus.text.clauses import (
    is_chitchat,
    is_question,
    split_clauses,
    split_sentences,
    strip_fillers,
)
from langmem_plus.text.overlap import content_tokens, coverage, jaccard
from langmem_plus.text.person import en_third, zh_third
from langmem_plus.text.scripts import detect_lang, has_cjk


def test_sentences_split_on_both_scripts_punctuation() -> None:
    assert split_sentences("我住在杭州。你呢？I like tea. And you!") == [
        "我住在杭州。",
        "你呢？",
        "I like tea.",
        "And you!",
    ]
    assert split_sentences("……。。") == [] and split_sentences("") == []


def test_clauses_carry_their_question_mark_and_lose_fillers() -> None:
    got = [(c.text, c.question) for c in split_clauses("嗯，我住在杭州，你呢？btw I like tea lol")]
    assert got == [("", False), ("我住在杭州", False), ("你", True), ("I like tea", False)]
    # a thousands separator is not a clause boundary
    assert [c.text for c in split_clauses("rent is $2,150 now")] == ["rent is $2,150 now"]


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("你周末去哪", True),
        ("是不是下周", True),
        ("好吃吗", True),
        ("我住在杭州", False),
        ("what time is it", True),
        ("Is it raining", True),
        ("I live in Denver", False),
    ],
)
def test_questions_by_form(text: str, asks: bool) -> None:
    assert is_question(text) is asks


def test_fillers_both_ends() -> None:
    assert strip_fillers("哈哈哈，其实我挺喜欢的呀") == "我挺喜欢的"
    assert strip_fillers("ok so honestly I love it lol") == "I love it"


@pytest.mark.parametrize(
    "text", ["你好", "谢谢！", "嗯嗯", "好的呢", "thanks a lot", "ok!", "Good night"]
)
def test_small_talk(text: str) -> None:
    assert is_chitchat(text)


@pytest.mark.parametrize("text", ["我住在杭州", "thanks, I live in Denver now", "好的，我明天去"])
def test_not_small_talk(text: str) -> None:
    assert not is_chitchat(text)


def test_third_person() -> None:
    assert zh_third("我的狗和我们组") == "用户的狗和用户团队组"
    assert zh_third("带我妈去医院") == "带用户的妈去医院"
    assert en_third("I'm sure my dog likes me") == "they're sure their dog likes them"


def test_overlap() -> None:
    assert "咖啡" in content_tokens("用户喝咖啡")  # bigrams of a longer Chinese word
    assert "用户" not in content_tokens("用户喝咖啡")
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)
    assert jaccard([], []) == 0.0
    assert coverage({"a"}, {"a", "b"}) == 0.5 and coverage({"a"}, []) == 0.0


def test_scripts() -> None:
    assert has_cjk("abc 中") and not has_cjk("abc")
    assert detect_lang("我在 src/order.ts 里改了 processOrder") == "zh"
    assert detect_lang("I really like 火锅 a lot") == "en"


@given(st.text(max_size=200))
def test_the_tools_never_fail(text: str) -> None:
    split_sentences(text)
    for clause in split_clauses(text):
        assert clause.text == strip_fillers(clause.raw)
    is_chitchat(text)
    is_question(text)
    zh_third(text)
    en_third(text)
