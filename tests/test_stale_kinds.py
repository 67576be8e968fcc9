"""Kinds of stale evidence that unseen chat showed (issue #30, "Nothing stale goes in
unmarked"): a reply quoting recalled memories in a transcript the write path was given
without them, an untied correction of such a reply, and change reports worded without the
usual words ("现在基本都去X了", "I'm fully remote now", "that's over"). Hand-written examples,
not the benchmark's."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from langmem_plus.episodic.echoes import without_recall_quotes
from langmem_plus.episodic.values import changed_values
from langmem_plus.errors import ValidationError
from langmem_plus.memory import Memory
from langmem_plus.processors.facts.denial import denies_reply
from langmem_plus.processors.facts.rules import is_change, is_correction

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
U = "u"
NS = ("memories", U)


@pytest.mark.parametrize(
    ("reply", "kept"),
    [
        (
            "我记得的是：- 用户每周三晚上上吉他课。建议周四去琴行。",
            "建议周四去琴行。",
        ),
        (
            "From what I remember: - User drives a Civic. - User lives in Leeds. "
            "Some road trips: the Dales, the coast.",
            "Some road trips: the Dales, the coast.",
        ),
        ("根据我的记忆，你用的是 Vim：可以试试 ALE 插件。", "可以试试 ALE 插件。"),
        ("As I recall:\n- User is vegetarian\nWant recipes?", "Want recipes?"),
        # the items on lines of their own after a lead-in ending on a colon
        ("我记得的是：\n- 用户每月房租三千八\n- 用户养了一只柯基", ""),
        ("早点睡。我记得的是：\n- 用户每天跑步五公里", "早点睡。"),
        # what is remembered may be about someone else than the user
        (
            "From what I remember:\n- Mochi eats 40 g of kibble twice a day\nAnything else?",
            "Anything else?",
        ),
        # no lead-in: an ordinary reply is kept whole, times and all
        ("Standup is at 9:30. See you there.", "Standup is at 9:30. See you there."),
        ("好的，16号搬家。- 用户记得带钥匙", "好的，16号搬家。- 用户记得带钥匙"),
    ],
)
def test_a_quote_of_recalled_memories_is_found_by_its_form(reply: str, kept: str) -> None:
    assert without_recall_quotes(reply) == kept


def test_without_recall_quotes_rejects_what_is_no_text() -> None:
    with pytest.raises(ValidationError):
        without_recall_quotes(None)  # type: ignore[arg-type]


def _add(mem: Memory, day: int, user: str, reply: str, sid: str | None = None) -> None:
    msgs = [{"role": "user", "content": user}, {"role": "assistant", "content": reply}]
    mem.add(msgs, U, session_id=sid or f"s{day}", timestamp=T0 + timedelta(days=day))


def test_a_transcript_reply_quoting_the_old_value_adds_no_evidence() -> None:
    """Given as a transcript (no recalled memories known), the reply's quote of the old value
    stays out of the episode; what the reply said besides stays in."""
    mem = Memory(embeddings=False)
    _add(mem, 0, "I drive a Civic these days.", "Nice.")
    _add(
        mem,
        30,
        "any road trip ideas?",
        "From what I remember: - User drives a Civic. Some road trips: the Dales, the coast.",
    )
    later = [h for h in mem.search("road trip ideas", U) if "road trip" in h.text]
    assert later and all("Civic" not in h.text for h in later)
    assert any("the Dales" in h.text for h in later)


def test_an_untied_correction_of_a_quoting_reply_marks_that_exchange() -> None:
    """An untied "nah that's over" answers a reply that built on a recalled memory: the exchange holding
    that reply (kept without its quote) is corrected by the answer."""
    mem = Memory(embeddings=False)
    _add(mem, 0, "started keto on Jan 2, no bread no rice", "Good luck!")
    sid = "s40"
    _add(
        mem,
        40,
        "need lunch ideas for work",
        "From what I remember: - User follows a keto diet. Some keto lunches: egg muffins.",
        sid,
    )
    _add(mem, 40, "nah that's over, Mediterranean is what I'm doing now", "Got it.", sid)
    lunch = [h for h in mem.search("lunch ideas egg muffins", U) if "egg muffins" in h.text]
    assert lunch and lunch[0].memory.corrected_by is not None


@pytest.mark.parametrize(
    "said",
    [
        "现在基本都去小区楼下新开的健身房了，走路两分钟",
        "现在周日下午改去学书法了，还是两点",
        "现在全切到 Neovim 了，插件少多了",
        "场地那天被包了，只能往后推，现在是12月6号",
        "good timing too bc I'm fully remote now, handed back my badge",
        "Mediterranean-ish is what I'm doing now, lots of beans",
        # a habit said as how it goes these days
        "这段时间我都走路去公司，半小时正好当锻炼",
        "these days I take the 7:40 bus, parking got silly",
    ],
)
def test_a_change_said_without_the_usual_words_is_a_change(said: str) -> None:
    assert is_change(said)


@pytest.mark.parametrize(
    "said",
    [
        "现在好累，不想动",
        "现在在吃饭",
        "现在去吃饭了",
        "I'm so tired now",
        "现在几点了？",
        "这阵子都挺忙的",
        "these days I'm always tired",
    ],
)
def test_mood_and_the_moment_are_no_change(said: str) -> None:
    assert not is_change(said)


def test_that_is_over_says_the_earlier_statement_no_longer_holds() -> None:
    assert is_correction("nah that's over, doctor wanted more whole grains")
    assert not is_correction("the game is over, we lost")


@pytest.mark.parametrize(
    ("new", "old", "changed"),
    [
        ("场地那天被包了，只能往后推，现在是12月6号", "婚礼定在11月2号了！场地在郊区", {"11月2号"}),
        ("standup 改成10:45了", "每天 standup 早上9:15", {"9:15"}),
        ("her birthday is Jun 21, not the 12th", "her birthday is Jun 12", {"jun12"}),
        ("rent goes up to $2,100 in May", "my rent is $1,900", {"$1900"}),
        # amounts in Chinese numerals, as rent and prices are said
        ("续租了，五千一，押一付三", "房租每月四千八，离公司近", {"四千八"}),
        ("还是四千八", "房租每月四千八", set()),
        # the same value again, or values of different forms, are no change
        ("搬家还是定在16号", "搬家定在16号", set()),
        ("dinner at 7:30", "dinner on Oct 3", set()),
        ("no numbers here", "my rent is $1,900", set()),
    ],
)
def test_changed_values_compares_values_of_one_form(new: str, old: str, changed: set[str]) -> None:
    assert changed_values(new, old) == changed


def test_changed_values_rejects_what_is_no_text() -> None:
    with pytest.raises(ValidationError):
        changed_values("x", None)  # type: ignore[arg-type]


def test_a_date_said_again_different_closes_the_fact_that_states_the_old_one() -> None:
    """A change report sharing one word with the statement it follows ("场地") and saying
    the date anew: the old statement is corrected and its dated fact closed."""
    mem = Memory(embeddings=False)
    _add(mem, 0, "婚礼定在11月2号了！场地是郊区一个花园，可以坐100人", "恭喜！")
    _add(mem, 60, "场地那天被别人包了，我们只能往后推，现在是12月6号", "辛苦了。")
    facts = [h for h in mem.search("婚礼 11月2号", U, limit=10) if h.memory.kind == "semantic"]
    assert all("11月2号" not in h.text for h in facts)
    old = [h for h in mem.search("婚礼定在11月2号", U, limit=10) if "11月2号" in h.text]
    assert old and all(h.memory.corrected_by is not None for h in old)


def test_a_denial_without_its_subject_denies_the_reply() -> None:
    """An assistant's "How's the new role at Lumen going?" answered "never ended up starting there": what
    the reply assumed does not hold."""
    assert denies_reply("never ended up starting there, they froze the position")
    assert denies_reply("I didn't end up going, it rained")
    assert not denies_reply("the meeting never ended, ugh")
    # an answer that opens by saying it no longer holds
    assert denies_reply("lol not for a while now, I eat chicken again since March")
    assert denies_reply("nope, not anymore, the gym closed")
    assert not denies_reply("not sure yet, maybe Friday")
    assert not denies_reply("I have not been there for a while")


def test_a_fact_closed_by_a_value_said_anew_is_reported_closed() -> None:
    """The facts a followed earlier exchange loses to a value said anew are in the turn's
    `Kept.closed_ids`, as every fact a turn closes (the post-turn report's "superseded")."""
    from langmem_plus.episodic.episodes import EpisodeKeeper, Turn
    from langmem_plus.store.hybrid import HybridStore

    store = HybridStore(index=False)
    keeper = EpisodeKeeper()
    day = timedelta(days=1)

    def keep(at: datetime, user: str, reply: str, sid: str) -> list[str]:
        turns = [Turn("user", user, at, None), Turn("assistant", reply, at, None)]
        (kept,) = keeper.keep_turns(store, NS, turns, session_id=sid, at=at)
        return kept.closed_ids

    keep(T0, "婚礼定在11月2号了！场地是郊区一个花园，可以坐100人", "恭喜！", "s1")
    old = [
        it for it in store.search(NS, query="婚礼 11月2号", limit=10)
        if it.value.get("kind") == "semantic" and "11月2号" in it.value["text"]
    ]  # fmt: skip
    assert old
    closed = keep(
        T0 + 60 * day, "场地那天被别人包了，我们只能往后推，现在是12月6号", "辛苦了。", "s2"
    )
    assert {it.key for it in old} <= set(closed)
