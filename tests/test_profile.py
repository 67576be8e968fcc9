"""One profile: the background is the user's current facts (one supersession path, the facts'),
language habits come from a running tally of the user's turns, hand edits are never
overwritten, and the injected profile never states a closed fact."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import HumanMessage

from langmem_plus import HybridStore
from langmem_plus.agent.engine import MemoryEngine
from langmem_plus.agent.postturn import PostTurnJob
from langmem_plus.model.records import UserProfile
from langmem_plus.processors import ProfileWriter
from langmem_plus.processors.analysis import habits_note, language_of, tallied

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
U = "u"
NS = ("memories", U)


def _turn(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "text": text}]


def test_the_background_is_the_current_facts_and_a_hand_edit_stays() -> None:
    pw = ProfileWriter()
    prof = pw.update(UserProfile(user_id=U), _turn("hi"), facts=["User lives in Rome"])
    assert prof.background == "User lives in Rome"
    prof = pw.update(prof, _turn("ok"), facts=["User lives in Rome", "User is a nurse"])
    assert prof.background == "User lives in Rome; User is a nurse"
    assert pw.update(prof, _turn("ok"), facts=[]).background == ""
    hand = UserProfile(user_id=U, background="written by me", edited_by_user=["background"])
    assert pw.update(hand, _turn("x"), facts=["User lives in Rome"]).background == "written by me"
    assert pw.update(prof, _turn("ok")).background == prof.background  # no facts given: kept


def test_language_habits_follow_the_tally_not_the_last_turn() -> None:
    pw = ProfileWriter()
    prof = UserProfile(user_id=U)
    for text in ["我住在北京", "我喜欢喝茶", "周末去爬山了", "今天好累", "明天开会"]:
        prof = pw.update(prof, _turn(text))
    assert prof.language_habits == "主要使用中文"
    prof = pw.update(prof, _turn("ok, see you tomorrow then"))  # one English turn: no flip
    assert prof.language_habits == "主要使用中文"
    assert prof.language_counts == {"zh": 5, "en": 1}
    for _ in range(6):
        prof = pw.update(prof, _turn("switching to English for work these days"))
    assert prof.language_habits == "Mixes English and Chinese"
    assert language_of("今天用 Python 写了 a quick script") == "mixed"
    assert language_of("123 !!") is None
    assert habits_note(tallied({}, [])) == ""
    hand = UserProfile(user_id=U, language_habits="我写的", edited_by_user=["language_habits"])
    assert pw.update(hand, _turn("English only")).language_habits == "我写的"


# ---------------------------------------------------------------------------- property
_SLOTS = {
    "city": ("I live in {}.", "I moved to {} last month."),
    "job": ("I work as a {}.", "I work as a {} now."),
}
_VALUES = {"city": ["Paris", "Rome", "Lyon", "Oslo"], "job": ["nurse", "teacher", "pilot"]}


@st.composite
def _statements(draw: st.DrawFn) -> list[str]:
    out = []
    for _ in range(draw(st.integers(2, 6))):
        slot = draw(st.sampled_from(sorted(_SLOTS)))
        first, change = _SLOTS[slot]
        value = draw(st.sampled_from(_VALUES[slot]))
        out.append((first if not out else change).format(value))
    return out


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_statements())
def test_the_injected_profile_never_states_a_closed_fact(said: list[str]) -> None:
    store = HybridStore(index=False)
    engine = MemoryEngine(store=store, clock=lambda: T0)
    log = store.conversations
    for i, text in enumerate(said):
        at = T0 + timedelta(days=i)
        log.add_turn(U, f"s{i}", "user", text, created_at=at)
        log.add_turn(U, f"s{i}", "assistant", "Noted.", created_at=at)
        engine.process(PostTurnJob(store, U, NS, f"s{i}", i + 1, log=log))
        facts = [
            it.value
            for it in store.search(NS, include_superseded=True, limit=200)
            if it.value.get("kind") == "semantic"
        ]
        current = {v["text"] for v in facts if not v.get("valid_to")}
        # a value said again after it changed is current again under the same words
        closed = {v["text"] for v in facts if v.get("valid_to")} - current
        prep = engine.prepare([HumanMessage("what do you know about me?")], None, store=store,
                              user_id=U)  # fmt: skip
        profile = prep.context.layers.get("profile", "") if prep.context else ""
        stated = {
            part.strip()
            for line in profile.splitlines()
            if line.startswith("background: ")
            for part in json.loads(line.removeprefix("background: ")).split(";")
        }
        assert not closed & stated, (closed, profile)
