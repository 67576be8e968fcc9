"""The write path on requests to forget, restatements and corrections that name the value
they deny (issue #30): a forget request removes the fact it names and stores nothing, a fact
said again is one fact with one more source, and "X, not Y" never makes Y current."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from _agent_fakes import Scripted
from langgraph.store.memory import InMemoryStore

from langmem_plus import HybridStore
from langmem_plus.episodic.episodes import EpisodeKeeper, Kept, record_of_item
from langmem_plus.memory import Memory
from langmem_plus.model.records import MemoryRecord
from langmem_plus.processors import FactDeriver

T0 = datetime(2026, 1, 5, 9, tzinfo=timezone.utc)
NS = ("memories", "u")


class Talk:
    """One user's exchanges kept a day apart by one keeper over one store."""

    def __init__(self, keeper: EpisodeKeeper | None = None) -> None:
        self.store = InMemoryStore()
        self.keeper = keeper or EpisodeKeeper()
        self.day = 0

    def say(self, text: str) -> Kept:
        self.day += 1
        turns = [{"role": "user", "text": text}]
        return self.keeper.keep(self.store, NS, turns, occurred_at=T0 + timedelta(self.day))

    def record(self, key: str) -> MemoryRecord | None:
        item = self.store.get(NS, key)
        return record_of_item(item) if item is not None else None

    def facts(self) -> list[tuple[str, bool]]:
        return sorted(
            (it.value["text"], it.value.get("valid_to") is None)
            for it in self.store.search(NS, limit=100)
            if it.value.get("kind") == "semantic"
        )


def test_a_forget_request_removes_the_fact_it_names_and_stores_nothing() -> None:
    talk = Talk()
    said = talk.say("我住在北京朝阳区，我喜欢喝美式")
    asked = talk.say("忘掉我住在北京这件事")
    assert asked.fact_ids == [] and asked.restated_ids == [] and len(asked.forgotten_ids) == 1
    assert talk.facts() == [("用户喜欢喝美式", True)]  # gone, not merely closed
    episode = talk.record(said.episode_id or "")
    assert episode is not None and episode.metadata["rejected_facts"] == ["用户住在北京朝阳区"]
    assert not episode.facts_superseded  # its other fact still holds
    # the forgotten fact is never derived again from the same words
    talk.keeper.rederive(talk.store, NS, episode)
    assert talk.facts() == [("用户喜欢喝美式", True)]


def test_an_episode_left_without_a_fact_is_ranked_as_superseded() -> None:
    talk = Talk()
    said = talk.say("Forget that? No: I live in Lisbon.")
    talk.say("Forget that I live in Lisbon")
    episode = talk.record(said.episode_id or "")
    assert talk.facts() == [] and episode is not None and episode.facts_superseded


def test_a_forget_request_for_another_value_or_nothing_known_removes_nothing() -> None:
    talk = Talk()
    talk.say("I live in Denver")
    assert talk.say("forget that I live in Boston").forgotten_ids == []
    assert talk.say("忘掉我喜欢猫这件事").forgotten_ids == []
    assert talk.facts() == [("User lives in Denver", True)]


def test_a_forget_request_then_the_new_value_in_the_same_turn() -> None:
    talk = Talk()
    talk.say("我在美团上班")
    kept = talk.say("忘了我在美团上班这件事吧，我已经离职了，现在在京东")
    assert len(kept.forgotten_ids) == 1
    assert [t for t, _ in talk.facts() if "美团" in t] == []
    assert any("京东" in t and current for t, current in talk.facts())


def test_the_model_can_ask_to_forget_too() -> None:
    answer = '{"facts": [{"text": "User lives in Denver", "slot": "home.location", "value": "Denver", "forget": "yes"}]}'
    talk = Talk(EpisodeKeeper(deriver=FactDeriver(model=Scripted(script=[answer]))))
    seeded = EpisodeKeeper().keep(
        talk.store, NS, [{"role": "user", "text": "I live in Denver"}], occurred_at=T0
    )
    kept = talk.say("please drop the Denver thing")
    assert kept.forgotten_ids == seeded.fact_ids and talk.facts() == []


def test_a_fact_said_again_without_a_slot_is_one_fact_with_two_sources() -> None:
    talk = Talk()
    first = talk.say("记住，我的车停在B2层56号")
    again = talk.say("记住，我的车停在B2层56号")
    assert again.fact_ids == [] and again.restated_ids == first.fact_ids
    fact = talk.record(first.fact_ids[0])
    assert fact is not None and fact.source_ids == [first.episode_id, again.episode_id]


def test_a_restated_value_in_other_words_is_no_new_fact() -> None:
    talk = Talk()
    talk.say("我女儿今年上小学一年级")
    assert talk.say("我女儿一年级嘛，作业倒是不多").fact_ids == []
    talk.say("I'm vegetarian")
    assert talk.say("like I said, I'm vegetarian, so no chicken stock please").fact_ids == []


def test_x_not_y_closes_y_and_never_makes_it_current() -> None:
    talk = Talk()
    talk.say("我住在北京")
    kept = talk.say("其实我现在住在上海，不是北京")
    assert len(kept.closed_ids) == 1
    assert set(talk.facts()) == {("用户现在住在上海", True), ("用户住在北京", False)}


def test_forget_through_memory_and_search() -> None:
    mem = Memory(store=HybridStore(index=False))
    mem.add("I live in Lisbon and work as a nurse.", user_id="u")
    mem.add("Forget that I live in Lisbon", user_id="u")
    texts = [r.text for r in mem.get_all("u").items if r.kind == "semantic"]
    assert texts == ["User works as a nurse"]  # gone from every version, not only closed
    hits = [h.text for h in mem.search("where does the user live", user_id="u")]
    assert "User lives in Lisbon" not in hits


def test_a_team_tool_said_again_is_a_restatement() -> None:
    talk = Talk()
    first = talk.say("我们组用 Slack 沟通")
    assert talk.say("嗯我们组还是用 Slack 沟通").restated_ids == first.fact_ids
