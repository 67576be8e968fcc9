"""Nothing stale goes in unmarked: a memory that states a superseded value is injected with
the date and the current value, or left out; a reply that only repeated recalled memories
adds no evidence of the old value."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from _agent_fakes import FakeClock, scripted
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langmem_plus import HybridStore
from langmem_plus.agent.context import InjectedMemory, build_context, mark_stale
from langmem_plus.agent.middleware import MemoryMiddleware
from langmem_plus.agent.tools import create_search_memory_tool
from langmem_plus.episodic.episodes import EpisodeKeeper, Turn, without_echoes
from langmem_plus.episodic.validity import replacement
from langmem_plus.errors import ValidationError
from langmem_plus.memory import Memory
from langmem_plus.processors.facts.denial import denies_reply

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
U = "u"
NS = ("memories", U)


def _moved(mem: Memory) -> None:
    for day, said in ((0, "I live in Paris."), (40, "I moved to Rome last month.")):
        msgs = [{"role": "user", "content": said}, {"role": "assistant", "content": "Noted."}]
        mem.add(msgs, U, session_id=f"s{day}", timestamp=T0 + timedelta(days=day))


def test_a_stale_episode_is_marked_with_the_date_and_the_current_value() -> None:
    mem = Memory(embeddings=False)
    _moved(mem)
    hits = mem.store.search(NS, query="Paris")
    paris = next(h for h in hits if "I live in Paris" in h.value["text"])
    got = replacement(mem.store, NS, paris.value)
    assert got is not None and got.now == "User moved to Rome"
    assert got.since == T0 + timedelta(days=40)
    marked = mark_stale(mem.store, hits)
    ctx = build_context(memories=marked)
    for line in ctx.layers["memories"].splitlines():
        if "Paris" in line:
            assert 'superseded="2025-04-10"' in line and "now=" in line and "Rome" in line
    # the search result says it too
    (hit,) = [h for h in mem.search("Paris", U) if "Paris" in h.text]
    assert hit.now == "User moved to Rome" and hit.superseded_since == T0 + timedelta(days=40)


def test_a_stale_memory_whose_current_value_is_unknown_is_left_out() -> None:
    store = InMemoryStore()
    store.put(NS, "e", {"kind": "episodic", "text": "I live in Paris", "facts_superseded": True})
    (item,) = store.search(NS)
    assert mark_stale(store, [item]) == []
    fresh = {"kind": "semantic", "text": "User likes tea"}
    store.put(NS, "f", fresh)
    assert [m.key for m in mark_stale(store, store.search(NS))] == ["f"]


def test_the_search_tool_marks_stale_hits() -> None:
    mem = Memory(embeddings=False)
    _moved(mem)
    tool = create_search_memory_tool(mem.store, default_user_id=U)
    text = str(tool.invoke({"query": "Paris"}))
    lines = [ln for ln in text.splitlines() if "Paris" in ln]
    assert lines and all("[superseded 2025-04-10; now: " in ln for ln in lines)


def test_injected_context_never_states_the_old_value_unmarked() -> None:
    store = HybridStore(index=False)
    clock = FakeClock(T0)
    mw = MemoryMiddleware(clock=clock, debounce_s=0.0)
    model = scripted(["Paris is lovely.", "Rome, how exciting!", "You live in Rome."])
    agent = create_agent(
        model, tools=[], middleware=[mw], store=store, checkpointer=InMemorySaver()
    )
    cfg: Any = {"configurable": {"thread_id": "t", "user_id": U}}
    for i, said in enumerate(["I live in Paris.", "I moved to Rome last month.", "Where is home?"]):
        clock.now = T0 + i * timedelta(days=20)
        out = agent.invoke({"messages": [HumanMessage(said)]}, cfg)
        mw.flush()
    mw.close()
    prompt = model.system_prompts[-1]
    for line in prompt.splitlines():
        if "Paris" in line:
            assert "superseded=" in line and "Rome" in line, line
    assert all(
        not m["text"].startswith("User lives in Paris") for m in out["memory_context"]["memories"]
    )


def test_a_reply_that_repeats_recalled_memories_adds_no_evidence() -> None:
    said = [
        ({"role": "user", "text": "what do you know about me?"}, 1),
        (
            {
                "role": "assistant",
                "text": "From what I remember:\n- User lives in Beijing.\n- User likes tea\nAsk away!",
            },
            2,
        ),
    ]
    got = without_echoes(said, ["User lives in Beijing", "User likes tea"])
    assert got == [said[0], ({"role": "assistant", "text": "Ask away!"}, None)]
    only = [({"role": "assistant", "text": "From what I remember:\n- User lives in Beijing"}, 3)]
    assert without_echoes(only, ["User lives in Beijing"]) == []
    # given no recalled memories, a quote is still known by its form (episodic/echoes.py)
    assert without_echoes(said, []) == [said[0], ({"role": "assistant", "text": "Ask away!"}, None)]
    plain = [({"role": "assistant", "text": "You live in Beijing, right?"}, 4)]
    assert without_echoes(plain, []) == plain


def test_the_echo_stays_in_the_log_and_out_of_the_episode() -> None:
    store = HybridStore(index=False)
    log = store.conversations
    t_user = log.add_turn(U, "s", "user", "where do I live again?", created_at=T0)
    reply = "From what I remember:\n- User lives in Beijing"
    t_bot = log.add_turn(U, "s", "assistant", reply, created_at=T0)
    keeper = EpisodeKeeper()
    (kept,) = keeper.keep_turns(
        store,
        NS,
        [Turn("user", t_user.content, T0, t_user.id), Turn("assistant", reply, T0, t_bot.id)],
        session_id="s",
        at=T0,
        log=log,
        recalled=["User lives in Beijing"],
    )
    ep = store.get(NS, kept.episode_id)
    assert ep is not None and "Beijing" not in ep.value["text"]
    assert [t.content for t in log.turns(U, "s")] == ["where do I live again?", reply]
    assert store.search(NS, query="Beijing") == []


def test_memory_add_reads_the_reply_against_the_last_search() -> None:
    mem = Memory(embeddings=False)
    mem.add("I live in Beijing.", U, timestamp=T0)
    hits = mem.search("where do I live", U)
    assert any("Beijing" in h.text for h in hits)
    mem.add(
        [
            {"role": "user", "content": "remind me where I live"},
            {"role": "assistant", "content": "From what I remember:\n- User lives in Beijing"},
        ],
        U,
        timestamp=T0 + timedelta(days=1),
    )
    episodes = [r for r in mem.get_all(U).items if r.kind == "episodic"]
    assert [e.text for e in episodes][-1] == "remind me where I live"
    assert isinstance(InjectedMemory, type)


def test_a_memory_a_later_exchange_is_about_carries_that_statement() -> None:
    mem = Memory(embeddings=False)
    said = [
        (0, "s1", "My work laptop is a ThinkPad X1 Carbon running Ubuntu, battery is toast"),
        (40, "s2", "Been on a MacBook Air for work since March, best laptop I have had"),
    ]
    for day, sid, text in said:
        msgs = [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]
        mem.add(msgs, U, session_id=sid, timestamp=T0 + timedelta(days=day))
    old = next(
        h for h in mem.store.search(NS, query="ThinkPad laptop") if "ThinkPad" in h.value["text"]
    )
    # the link is on the later exchange alone, found through the store's lookup
    assert "followed_by" not in old.value["metadata"]
    assert mem.store.followers(NS, [old.key])[old.key]
    (marked,) = [m for m in mark_stale(mem.store, [old])]
    assert marked.newer is not None and "MacBook Air" in marked.newer
    line = build_context(memories=[marked]).layers["memories"]
    assert 'newer="2025-04-10"' in line and "newer_says=" in line
    tool = create_search_memory_tool(mem.store, default_user_id=U)
    text = str(tool.invoke({"query": "ThinkPad"}))
    assert any("ThinkPad" in ln and "[newer 2025-04-10: " in ln for ln in text.splitlines())


def test_not_anymore_answering_a_reply_marks_what_it_ended() -> None:
    """ "nope, not anymore" to a reply that assumed the old state is a correction: the
    earlier exchange that stated it is shown with the later statement, never unmarked."""
    mem = Memory(embeddings=False)
    later = T0 + timedelta(days=30)
    turns = [
        ("s0", T0, "My dad's on dialysis three times a week, I drive him when I can", "A lot."),
        (
            "s1",
            later,
            "I want to plan a family trip to the lake in June",
            "Will dialysis suit your dad?",
        ),
        ("s1", later + timedelta(minutes=1), "nope not anymore, he got a transplant", "Great."),
    ]
    for session, at, said, reply in turns:
        msgs = [{"role": "user", "content": said}, {"role": "assistant", "content": reply}]
        mem.add(msgs, U, session_id=session, timestamp=at)
    hits = mem.store.search(NS, query="is my dad on dialysis", filter={"kind": "episodic"})
    first = next(h for h in hits if "three times a week" in h.value["text"])
    assert first.value.get("corrected_by") or mem.store.followers(NS, [first.key])[first.key]
    ctx = build_context(memories=mark_stale(mem.store, hits))
    for line in ctx.layers["memories"].splitlines():
        if "three times a week" in line:
            assert "transplant" in line, line


def test_denies_reply_reads_what_the_reply_assumed() -> None:
    for said in (
        "haha no, sold it last spring, it's a Brompton now",
        "lol I never accepted that offer, stayed at Globex",
        "I didn't end up taking the Lisbon flat",
        "don't have it anymore, my sister took it",
        "哈哈早就卖了，现在骑电动车",
        "那套房子最后没买成",
    ):
        assert denies_reply(said), said
    for said in (
        "No thanks, I'm good",
        "I never thought about it that way",
        "I sold my first guitar at 15 and still regret it",
        "never mind, it's fine",
        "我卖了很多年保险",
        "I never take a day off in December",
    ):
        assert not denies_reply(said), said
    with pytest.raises(ValidationError):
        denies_reply(None)  # type: ignore[arg-type]


def _untied(mem: Memory, first: str, opener: str, reply: str, answer: str) -> None:
    """`first` in one conversation; 60 days later a reply that assumes it, and the answer."""
    later = T0 + timedelta(days=60)
    for sid, at, said, back in (
        ("s0", T0, first, "Noted."),
        ("s1", later, opener, reply),
        ("s1", later + timedelta(minutes=2), answer, "Got it."),
    ):
        msgs = [{"role": "user", "content": said}, {"role": "assistant", "content": back}]
        mem.add(msgs, U, session_id=sid, timestamp=at)


def _unmarked(mem: Memory, query: str, old: str) -> list[str]:
    hits = mem.store.search(NS, query=query, filter={"kind": "episodic"}, limit=10)
    ctx = build_context(memories=mark_stale(mem.store, hits)).layers.get("memories", "")
    return [
        ln
        for ln in ctx.splitlines()
        if old in ln and "newer=" not in ln and "superseded=" not in ln
    ]


def test_an_answer_denying_the_reply_marks_the_reply_and_what_it_named() -> None:
    """ "lol I never took that one" to a reply about the old value: the exchange holding
    that reply and the earlier one stating the value are shown with the newer statement."""
    mem = Memory(embeddings=False)
    _untied(
        mem,
        "Got offered a studio on Elm Street, radiator clanks all night but rent is fine",
        "Finally sleeping properly these days",
        "Did the Elm Street radiator finally get fixed?",
        "lol I never took that one, I'm in a loft on Harbor Road",
    )
    assert _unmarked(mem, "Elm Street radiator studio", "Elm Street") == []
    mem = Memory(embeddings=False)
    _untied(
        mem,
        "我有一辆白色的比亚迪，每天开车上班",
        "这周末想去郊外露营",
        "开比亚迪去吗？后备箱应该够大。",
        "哈哈早就卖了，现在骑电动车上班",
    )
    assert _unmarked(mem, "比亚迪 开车", "比亚迪") == []


def _chain(links: dict[str, list[str]], said: dict[str, tuple[int, str, str]]) -> InMemoryStore:
    """Episodes `said` (key: day, session, user turn) with their links (`links`: earlier
    key -> the later keys that follow it, noted on the later ones as `follows`)."""
    from langmem_plus.episodic.episodes import episode_record

    store = InMemoryStore()
    for key, (day, sid, text) in said.items():
        turns = [{"role": "user", "text": text}, {"role": "assistant", "text": "Ok."}]
        rec = episode_record(NS, turns, session_id=sid, occurred_at=T0 + timedelta(days=day))
        follows = [k for k, later in links.items() if key in later]
        if follows:
            rec.metadata = {**rec.metadata, "follows": follows}
        store.put(NS, key, rec.to_value())
    return store


def _newer(store: InMemoryStore, key: str) -> str:
    from langmem_plus.episodic.validity import newer_statement

    item = store.get(NS, key)
    assert item is not None
    got = newer_statement(store, NS, item.value, key)
    assert got is not None
    return got.now


def test_the_newer_statement_is_the_change_not_where_the_talk_went_next() -> None:
    said = {
        "a": (0, "s0", "I drive a 2015 Corolla to work, 40 minutes each way"),
        "b": (30, "s1", "Switched to the bus, sold the Corolla to my neighbour"),
        "c": (31, "s2", "The bus wifi is surprisingly decent for email"),
        "d": (60, "s3", "Reading a lot more on the commute these days"),
    }
    # the change, then talk that follows it and the first statement: the change is shown
    store = _chain({"a": ["b", "d"], "b": ["c"]}, said)
    assert _newer(store, "a") == said["b"][2]
    # a change of a change: the last one
    said["c"] = (31, "s2", "Now I bike instead of the bus, the 7 line is too crowded")
    store = _chain({"a": ["b", "d"], "b": ["c"]}, said)
    assert _newer(store, "a") == said["c"][2]


def test_without_a_change_word_the_first_later_conversation_is_shown() -> None:
    said = {
        "a": (0, "s0", "Our cat Miso eats the salmon kibble from the corner shop"),
        "b": (30, "s1", "Took Miso to the vet, she is a bit heavy"),
        "c": (30, "s1", "Miso eats the duck pate from the vet these days, 40 g a day"),
        "d": (60, "s2", "Miso learned to open the cupboard lol"),
    }
    store = _chain({"a": ["b", "c", "d"]}, said)
    assert _newer(store, "a") == f"{said['b'][2]}; {said['c'][2]}"
