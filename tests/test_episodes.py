"""Episodes are kept verbatim; facts derived from them carry sources and validity intervals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.memory import InMemoryStore

from langmem_plus import Memory
from langmem_plus.agent.context import build_context
from langmem_plus.episodic.episodes import (
    EpisodeKeeper,
    current_only,
    episode_record,
    episode_turns,
)
from langmem_plus.processors.facts.derived import DerivedFact

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)


@dataclass
class _Out:
    facts: list[DerivedFact]
    calls: int = 1
    prompt_tokens: int = 10
    completion_tokens: int = 5
    fell_back: bool = False


@dataclass
class ScriptedDeriver:
    """Turns 'slot=value' user lines into facts (a stand-in for the model's one call)."""

    seen: list[list[dict[str, str]]] = field(default_factory=list)

    def run(
        self, turns: Sequence[Mapping[str, str]], existing: Any, *, context: str | None = None
    ) -> _Out:
        self.seen.append([dict(t) for t in turns])
        facts = []
        for i, t in enumerate(turns):
            if t["role"] != "user" or "=" not in t["text"]:
                continue
            slot, value = t["text"].split("=", 1)
            facts.append(
                DerivedFact(
                    text=f"user {slot} is {value}", slot=slot, value=value, source_turns=[i]
                )
            )
        return _Out(facts)


def _memory(tmp_path: Path | None = None) -> Memory:
    mem = Memory(None if tmp_path is None else tmp_path / "m.db", embeddings=False)
    mem.writer.episodes = EpisodeKeeper(mem.config, ScriptedDeriver())
    return mem


def _say(mem: Memory, text: str, at: datetime, user: str = "u1") -> list[str]:
    return mem.add(
        [{"role": "user", "content": text}, {"role": "assistant", "content": "noted 👍"}],
        user,
        session_id="s1",
        timestamp=at,
    )


def test_exchange_is_kept_verbatim_with_its_own_time() -> None:
    mem = _memory()
    text = "介绍一下我家狗子：柯基，叫豆包，两岁，天天拆家🐶\n还有一只猫"
    ids = mem.add(
        [{"role": "user", "content": text}, {"role": "assistant", "content": "好可爱！"}],
        "u1",
        session_id="s1",
        timestamp="2025-03-01T17:00:00+08:00",
    )
    ep = mem.get(ids[0], "u1")
    assert ep.kind == "episodic"
    assert episode_turns(ep) == [
        {"role": "user", "text": text},
        {"role": "assistant", "text": "好可爱！"},
    ]
    assert ep.occurred_at == T0
    assert ep.created_at == T0  # recency is computed from when it was said
    assert ep.session_id == "s1"
    # the turns are logged once (no searchable mirror beside the episode)
    assert mem.store.count(("conversations", "u1")) == 0
    assert len(mem.store.conversations.turns("u1", "s1")) == 2


@given(st.lists(st.text(min_size=1, max_size=30).filter(str.strip), min_size=1, max_size=4))
def test_episode_turns_round_trip(texts: list[str]) -> None:
    turns = [{"role": ("user", "assistant")[i % 2], "text": t} for i, t in enumerate(texts)]
    rec = episode_record(("m", "u"), turns, session_id=None, occurred_at=T0)
    assert episode_turns(rec) == turns


def test_a_later_value_closes_the_old_fact_and_search_hides_it() -> None:
    mem = _memory()
    first = _say(mem, "trip=Chengdu", T0)
    second = _say(mem, "trip=Xian", T0 + timedelta(days=3))
    old_fact, new_fact = first[1], second[1]
    old = mem.get(old_fact, "u1")
    assert old.superseded_by == new_fact
    assert old.valid_to == T0 + timedelta(days=3)
    new = mem.get(new_fact, "u1")
    assert new.is_current and new.source_ids == [second[0]]
    shown = [h.id for h in mem.search("trip", "u1", limit=10)]
    assert new_fact in shown and old_fact not in shown
    # the episode whose only fact was superseded is still found, demoted and marked
    hits = {h.id: h for h in mem.search("trip Chengdu", "u1", limit=10)}
    assert hits[first[0]].components["superseded"] == 1.0
    assert hits[second[0]].components["superseded"] == 0.0
    with_old = {h.id: h for h in mem.search("trip", "u1", limit=10, include_superseded=True)}
    assert with_old[old_fact].components["superseded"] == 1.0
    then = [h.id for h in mem.search("trip", "u1", limit=10, as_of=T0 + timedelta(days=1))]
    assert old_fact in then and new_fact not in then and second[0] not in then


def test_restating_a_value_adds_a_source_instead_of_a_copy() -> None:
    mem = _memory()
    first = _say(mem, "editor=vim", T0)
    again = _say(mem, "editor=vim", T0 + timedelta(days=1))
    assert again[1] == first[1]
    fact = mem.get(first[1], "u1")
    assert fact.source_ids == [first[0], again[0]] and fact.is_current


def test_history_shows_the_chain() -> None:
    mem = _memory()
    a = _say(mem, "city=Beijing", T0)[1]
    b = _say(mem, "city=Shanghai", T0 + timedelta(days=1))[1]
    c = _say(mem, "city=Hangzhou", T0 + timedelta(days=2))[1]
    for fid in (a, b, c):
        events = [(e["event"], e["id"]) for e in mem.history(fid, "u1")]
        assert events == [
            ("ADD", a),
            ("SUPERSEDED", a),
            ("ADD", b),
            ("SUPERSEDED", b),
            ("ADD", c),
        ]


def test_other_users_facts_are_never_closed() -> None:
    mem = _memory()
    a = _say(mem, "trip=Chengdu", T0, user="alice")[1]
    _say(mem, "trip=Xian", T0 + timedelta(days=1), user="bob")
    assert mem.get(a, "alice").is_current


def test_validity_survives_reopen_and_export_import(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    first = _say(mem, "trip=Chengdu", T0)
    second = _say(mem, "trip=Xian", T0 + timedelta(days=3))
    dump = mem.export("u1")
    mem.close()
    again = Memory(tmp_path / "m.db", embeddings=False)
    assert again.get(first[1], "u1").superseded_by == second[1]
    other = Memory(embeddings=False)
    other.import_(dump)
    old = other.get(first[1], "u1")
    assert old.superseded_by == second[1] and old.valid_to == T0 + timedelta(days=3)
    assert other.get(second[1], "u1").source_ids == [second[0]]
    assert other.get(first[0], "u1").facts_superseded


def test_a_record_written_before_episodes_reads_as_a_current_fact() -> None:
    mem = Memory(embeddings=False)
    mem.store.put(("memories", "u1"), "old", {"text": "User likes tea", "kind": "semantic"})
    rec = mem.get("old", "u1")
    assert rec.is_current and rec.source_ids == [] and rec.slot is None
    assert [h.id for h in mem.search("tea", "u1")] == ["old"]


def test_keeper_works_over_any_base_store() -> None:
    store = InMemoryStore()
    keeper = EpisodeKeeper(deriver=ScriptedDeriver())
    k1 = keeper.keep(store, ("m", "u"), [{"role": "user", "text": "pet=cat"}], occurred_at=T0)
    k2 = keeper.keep(
        store, ("m", "u"), [{"role": "user", "text": "pet=dog"}], occurred_at=T0 + timedelta(1)
    )
    assert k2.closed_ids == k1.fact_ids
    items = store.search(("m", "u"), limit=10)
    view = current_only(items)
    assert {it.key for it in view} == {k1.episode_id, k2.episode_id, *k2.fact_ids}


def test_injected_context_puts_facts_first_and_dates_episodes() -> None:
    mem = _memory()
    ids = _say(mem, "trip=Xian", T0)
    hits = mem.store.search(("memories", "u1"), query="trip Xian", limit=5)
    episode_first = sorted(hits, key=lambda h: h.value.get("kind") != "episodic")
    ctx = build_context(memories=episode_first)
    lines = ctx.layers["memories"].splitlines()
    assert 'n="1"' in lines[0] and 'kind="episode"' not in lines[0] and 'from="2"' in lines[0]
    assert 'kind="episode"' in lines[1] and 'date="2025-03-01"' in lines[1]
    assert [m.key for m in ctx.memories] == [ids[1], ids[0]]


# ---------------------------------------------------------------------------- properties
_STATEMENTS = st.lists(
    st.tuples(st.sampled_from(["trip", "pet", "city"]), st.sampled_from(["a", "b", "c", "d"])),
    min_size=1,
    max_size=12,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_STATEMENTS)
def test_validity_chain_invariants(statements: list[tuple[str, str]]) -> None:
    mem = _memory()
    said_at: list[tuple[datetime, str, str]] = []
    for i, (slot, value) in enumerate(statements):
        at = T0 + timedelta(hours=i)
        _say(mem, f"{slot}={value}", at)
        said_at.append((at, slot, value))
    facts = [
        r
        for r in (mem.get(k, "u1") for _, k in mem.store.keys(("memories", "u1")))
        if r.kind == "semantic"
    ]
    by_id = {f.id: f for f in facts}
    for f in facts:
        # current, or superseded by exactly one newer fact of the same slot
        assert (f.valid_to is None) == (f.superseded_by is None)
        if f.superseded_by is not None:
            newer = by_id[f.superseded_by]
            assert newer.slot == f.slot and newer.valid_from >= f.valid_from
        # no cycles: following superseded_by ends
        seen, cur = set(), f
        while cur.superseded_by:
            assert cur.id not in seen
            seen.add(cur.id)
            cur = by_id[cur.superseded_by]
    for slot in {s for _, s, _ in said_at}:
        current = [f for f in facts if f.slot == slot and f.is_current]
        last = [v for _, s, v in said_at if s == slot][-1]
        assert len(current) == 1 and current[0].value == last
    # as_of returns what was current then
    for at, slot, _ in said_at:
        want = [v for t, s, v in said_at if s == slot and t <= at][-1]
        valid = [f for f in facts if f.slot == slot and f.valid_at(at)]
        assert [f.value for f in valid] == [want]


@pytest.mark.parametrize("said", ["好的", "thanks!", "早上好"])
def test_chitchat_is_kept_with_low_importance(said: str) -> None:
    mem = Memory(embeddings=False)
    ids = mem.add([{"role": "user", "content": said}, {"role": "assistant", "content": "😊"}], "u")
    rec = mem.get(ids[0], "u")
    assert rec.kind == "episodic" and rec.text.startswith(said)
    assert rec.importance < mem.get(_say(mem, "trip=Rome", T0, user="u")[0], "u").importance


def test_logged_turns_share_the_episodes_text(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    said = "周一来，哦不对，是周二 🔧\nline two"
    ids = mem.add(
        [{"role": "user", "content": said}, {"role": "assistant", "content": "好的，周二见"}],
        "u1",
        session_id="s1",
    )
    raw = mem.store.db
    with raw.read() as conn:
        stored = [r[0] for r in conn.execute("SELECT content FROM turns ORDER BY id")]
    assert stored == ["", ""]  # one copy: the episode's
    assert [t.content for t in mem.store.conversations.turns("u1", "s1")] == [said, "好的，周二见"]
    mem.close()
    again = Memory(tmp_path / "m.db", embeddings=False)
    assert [t.content for t in again.store.conversations.turns("u1")] == [said, "好的，周二见"]
    assert again.get(ids[0], "u1").text == f"{said}\n好的，周二见"


def test_exchanges_survive_decay_and_consolidation_but_chitchat_decays() -> None:
    from langmem_plus.episodic.lifecycle import consolidate, decay

    mem = Memory(embeddings=False)
    said = [
        "I'm flying to Lisbon on May 3 for the offsite",
        "I'm flying to Lisbon on May 3 for the offsite!!",  # a near-duplicate, still kept
    ]
    kept = [mem.add(t, "u", timestamp=T0)[0] for t in said]
    chat = mem.add("thanks!", "u", timestamp=T0)[0]
    ns = ("memories", "u")
    consolidate(mem.store, ns, embeddings=None, now=T0 + timedelta(days=400))
    report = decay(mem.store, ns, now=T0 + timedelta(days=400))
    assert chat in report.deleted_ids
    assert [mem.get(k, "u").text for k in kept] == said


def test_a_marked_correction_ranks_the_corrected_episode_lower() -> None:
    mem = Memory(embeddings=False)
    first = mem.add(
        [
            {"role": "user", "content": "My sister Priya's wedding is June 21 in Austin, I'm a "
             "bridesmaid so I need to sort a dress and flights 😅"},
            {"role": "assistant", "content": "Congrats to Priya! June 21 in Austin, noted."},
        ],
        "u", session_id="s1", timestamp=T0,
    )  # fmt: skip
    mem.add("Booked my dentist cleaning for next Tuesday", "u", timestamp=T0 + timedelta(days=2))
    fix = mem.add(
        [
            {"role": "user", "content": "Oops, I told you wrong last week - Priya's wedding is "
             "June 14, not June 21. The 21st is the rehearsal for her friend's thing lol"},
            {"role": "assistant", "content": "Got it, June 14."},
        ],
        "u", session_id="s2", timestamp=T0 + timedelta(days=6),
    )  # fmt: skip
    old = mem.get(first[0], "u")
    assert old.corrected_by == fix[0]
    hits = mem.search("When is Priya's wedding?", "u", limit=5)
    assert hits[0].id == fix[0] or "June 14" in hits[0].text
    assert {h.id: h for h in hits}[first[0]].components["superseded"] == 1.0
    # the old episode is still there, word for word
    assert old.text.startswith("My sister Priya's wedding is June 21")


def test_an_ordinary_actually_does_not_correct_anything() -> None:
    mem = Memory(embeddings=False)
    first = mem.add("My sister Priya's wedding is June 21 in Austin", "u", timestamp=T0)
    mem.add(
        "Actually Priya's wedding playlist is done, June 21 will be fun",
        "u",
        timestamp=T0 + timedelta(days=1),
    )
    assert mem.get(first[0], "u").corrected_by is None


def test_metadata_on_add_keeps_the_episodes_time() -> None:
    mem = Memory(embeddings=False)
    ids = mem.add("we moved the standup to 9:30", "u", timestamp=T0, metadata={"tags": ["work"]})
    ep = mem.get(ids[0], "u")
    assert ep.tags == ["work"] and ep.created_at == T0 and ep.occurred_at == T0


def test_a_change_without_a_marker_ranks_the_older_statement_lower() -> None:
    mem = Memory(embeddings=False)
    old = mem.add(
        "I do the Tuesday evening yoga class at the community center, 7pm, it's the only "
        "thing that keeps my back ok",
        "u",
        timestamp=T0,
    )[0]
    new = mem.add(
        "Switched to the 6am spin class on Tuesdays and Thursdays at the community center, "
        "evenings just weren't working with the kid's bedtime",
        "u",
        timestamp=T0 + timedelta(days=40),
    )[0]
    assert mem.get(old, "u").corrected_by == new
    assert mem.get(new, "u").metadata["corrects"] == [old]
    # a later change does not demote the statement that replaced the first one
    mem.add("Moved my dentist appointment to Friday", "u", timestamp=T0 + timedelta(days=41))
    assert mem.get(new, "u").corrected_by is None


def test_a_change_about_something_else_demotes_nothing() -> None:
    mem = Memory(embeddings=False)
    first = mem.add("I painted a sunset over the lake last weekend", "u", timestamp=T0)[0]
    mem.add("Now I'm learning to bake sourdough bread", "u", timestamp=T0 + timedelta(days=3))
    assert mem.get(first, "u").corrected_by is None


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_STATEMENTS)
def test_search_as_of_shows_the_fact_current_then(statements: list[tuple[str, str]]) -> None:
    mem = _memory()
    said_at = []
    for i, (slot, value) in enumerate(statements):
        at = T0 + timedelta(days=i)
        _say(mem, f"{slot}={value}", at)
        said_at.append((at, slot, value))
    for at, slot, _ in said_at:
        want = [v for t, s, v in said_at if s == slot and t <= at][-1]
        hits = mem.search(f"user {slot}", "u1", limit=50, filters={"slot": slot}, as_of=at)
        facts = [h.memory for h in hits if h.memory.kind == "semantic"]
        assert [f.value for f in facts] == [want]


def test_a_change_report_is_read_on_the_users_words_not_the_reply_it_follows() -> None:
    mem = Memory(embeddings=False)
    therapy = mem.add(
        "My therapy sessions moved to Tuesdays at 6pm, works way better with my shifts tbh",
        "u", session_id="s1", timestamp=T0,
    )[0]  # fmt: skip
    mem.add(
        [
            {"role": "user", "content": "any tips for keeping a journal? I keep forgetting 😅"},
            {"role": "assistant", "content": "Try writing right after your Tuesday 6pm therapy "
             "sessions, while things are fresh."},
        ],
        "u", session_id="s2", timestamp=T0 + timedelta(days=5),
    )  # fmt: skip
    mem.add(
        [
            {"role": "user", "content": "hmm I switched to mornings for journaling, way calmer"},
            {"role": "assistant", "content": "Mornings work great for that."},
        ],
        "u", session_id="s2", timestamp=T0 + timedelta(days=5, hours=1),
    )  # fmt: skip
    # the journaling change says nothing about therapy, whatever the reply before it said
    assert mem.get(therapy, "u").corrected_by is None
