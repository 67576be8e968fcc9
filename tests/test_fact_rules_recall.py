"""Readings of real chat the fact rules missed (issue #30, recall on unseen chat): shapes
people write in, each read by a general rule. Examples written for these tests, not dev-set
cases; each failed (no fact, or a garbled one) before its reading, and the negatives next to
them give no fact.
"""

from __future__ import annotations

import pytest

from langmem_plus.processors.facts.rules import rule_facts


def texts(text: str, context: str | None = None) -> list[str]:
    return [f.text for f in rule_facts([{"role": "user", "text": text}], context=context)]


# ------------------------------------------------ a request about how the assistant answers


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (
            "以后你回我消息别用那么多小标题了，直接说重点就行",
            "用户希望助手回复时别用那么多小标题了，直接说重点就行",
        ),
        ("以后回复我的时候少用表情", "用户希望助手回复时少用表情"),
        ("你以后回答我问题先给结论", "用户希望助手回复时先给结论"),
        ("以后跟我说话别用敬语", "用户希望助手跟用户说话别用敬语"),
    ],
)
def test_a_request_about_replies_names_the_assistant(text: str, want: str) -> None:
    assert texts(text) == [want]  # was "用户希望回用户消息…": the user answering themselves


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("以后订酒店记得选离地铁近的", "用户希望订酒店记得选离地铁近的"),
        ("以后给我推荐菜谱的时候记得避开香菜", "用户希望推荐菜谱的时候记得避开香菜"),
    ],
)
def test_remember_to_do_something_is_the_request_itself(text: str, want: str) -> None:
    assert texts(text) == [want]


def test_remember_that_the_user_is_something_is_still_a_fact() -> None:
    assert texts("以后推荐餐厅的时候记住我不吃辣") == ["用户不吃辣"]
