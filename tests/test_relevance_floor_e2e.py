"""The relevance floor as a user meets it (issue 14): through a real agent with the memory
middleware and through `Memory.recall`, with the bundled USE embeddings, a question the user's
memories know nothing about injects nothing, and a question about their life still injects the
memory it is about. The turns are written the way people type: long, several clauses, fillers,
Chinese and English mixed."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from _agent_fakes import scripted
from langchain.agents import create_agent

from langmem_plus import HybridStore, Memory
from langmem_plus.agent.middleware import MemoryMiddleware

USER = "mei"
# what the user said in earlier conversations (each exchange becomes memories: an episode and
# the facts derived from it)
PAST = [
    "I finally booked the flights for Kyoto, five days over the October holiday, "
    "still need a hotel near Gion though",
    "ugh my knee hurt after yesterday's run, the doctor said no running for two weeks",
    "我妹妹下个月在成都办婚礼，我是伴娘，得提前准备礼服",
    "Mochi 今天又打喷嚏了，三岁的猫这样正常吗？",
    "we moved the orders service to Go last quarter, Postgres is the bottleneck now",
    "我对花生过敏，吃了会起疹子，点外卖的时候总得备注",
    "my mom has high blood pressure so I've been cooking with less salt when she visits",
    "最近在读《三体》，第二部黑暗森林真的太好看了",
    "I've been trying to learn Japanese, just passed N4 last month, N3 is next",
    "我这周 on-call，昨晚凌晨三点又被告警叫醒，真的崩溃",
    "thinking about replacing my 2019 Civic with an EV, but charging at my apartment is a pain",
    "周六早上开始上吉他课了，手指按弦好疼",
]
# Not here, a known miss (docs/calibration.md): "今天巴黎天气怎么样啊？我朋友在那边出差，问我要不要带伞"
# injects the sneezing cat at the default floor (its top hit; the sister's wedding before the
# names fix).
UNRELATED = [
    "嗯…先不聊别的，我在写 OrderService，processOrder 函数总是抛 TypeError，"
    "stack trace 指到一个 None，怎么排查比较快？",
    "ok quick one, what's the difference between a mutex and a semaphore? "
    "I keep mixing them up, plain words please",
    "Can you explain what a Kubernetes CrashLoopBackOff means and how to fix it? "
    "our staging pods keep dying",
    "What did Caroline say about the adoption agencies she was looking at?",
    "柏林墙是哪一年倒塌的？我和朋友打赌了",
]
RELATED = ("下个月要去参加婚礼，我得提前订机票，是去哪个城市来着？", "成都")


def _ask(agent: Any, text: str, user: str, thread: str) -> dict[str, Any]:
    cfg = {"configurable": {"thread_id": thread, "user_id": user}}
    out: dict[str, Any] = agent.invoke({"messages": [{"role": "user", "content": text}]}, cfg)
    return out


@pytest.mark.slow
def test_the_middleware_injects_nothing_for_an_unrelated_turn_and_the_memory_for_a_related_one() -> (
    None
):
    with HybridStore() as store:  # the bundled USE embeddings
        mw = MemoryMiddleware(background=False)
        model = scripted(["ok"] * (len(PAST) + len(UNRELATED) + 1))
        agent = create_agent(model, system_prompt="You are helpful.", middleware=[mw], store=store)
        for i, text in enumerate(PAST):
            _ask(agent, text, USER, f"past-{i}")
        kept = store.search(("memories", USER), limit=1000)
        assert len(kept) >= len(PAST)
        # every question meets the same memories (its own exchange is kept after it)
        asked = [*UNRELATED, RELATED[0]]
        for i in range(len(asked)):
            for it in kept:
                store.put(("memories", f"{USER}{i}"), it.key, it.value)
        for i, text in enumerate(UNRELATED):
            out = _ask(agent, text, f"{USER}{i}", "now")
            injected = [m["text"] for m in out["memory_context"]["memories"]]
            assert injected == [], (text, injected)
            assert "<memories>" not in model.system_prompts[-1], text
        out = _ask(agent, RELATED[0], f"{USER}{len(UNRELATED)}", "now")
        injected = [m["text"] for m in out["memory_context"]["memories"]]
        assert injected and RELATED[1] in injected[0], injected
        assert RELATED[1] in model.system_prompts[-1]
        mw.close()


def test_recall_of_past_turns_answers_nothing_unrelated_and_finds_the_turn_asked_about() -> None:
    t0 = datetime(2026, 3, 2, 20, 0, tzinfo=timezone.utc)
    said = PAST[:5]
    with Memory() as mem:  # the bundled USE embeddings
        for i, text in enumerate(said):
            mem.add_turn(USER, f"s{i}", "user", text, created_at=t0 + timedelta(days=i))
        for text in UNRELATED:
            assert mem.recall(text, USER)["results"] == [], text
        got = mem.recall("那个去京都的旅行，酒店我订了没？好像还差住的地方", USER)["results"]
        assert got and "Kyoto" in got[0]["content"]
        got = mem.recall("妹妹的婚礼是在哪个城市来着？我要订机票", USER)["results"]
        assert got and "成都" in got[0]["content"]


def test_a_question_about_one_memory_injects_that_memory_alone() -> None:
    """The floor keeps the memory asked about and drops the next best, unrelated one (it was
    injected while the judgement took a transcript's "Wow" / "Put" for names)."""
    t0 = datetime(2026, 3, 2, 20, 0, tzinfo=timezone.utc)
    asked = {
        "my knee still feels weird, can I go for a run this weekend?": "knee",
        "Mochi 又在打喷嚏了，要不要带它去看医生？": "Mochi",
        "how's the Japanese study going, what level am I aiming for next?": "Japanese",
        "我吉他课学到哪了？": "吉他",
    }
    with Memory() as mem:  # the bundled USE embeddings
        for i, text in enumerate(PAST):
            mem.add_turn(USER, f"s{i}", "user", text, created_at=t0 + timedelta(days=i))
        for question, word in asked.items():
            got = [r["content"] for r in mem.recall(question, USER)["results"]]
            assert len(got) == 1 and word in got[0], (question, got)


def test_nothing_without_evidence_of_its_own_is_injected() -> None:
    """A memory no word or meaning ties to the question stays out, whatever its standing among
    the few candidates (it was injected with relevance 0.255 and evidence 0)."""
    t0 = datetime(2026, 3, 2, 20, 0, tzinfo=timezone.utc)
    with Memory() as mem:  # the bundled USE embeddings
        for i, text in enumerate(["User loves spicy Sichuan food", "My home is in Shanghai"]):
            mem.add(text, USER, infer=False, timestamp=t0 + timedelta(days=i))
        store = mem.store
        mw = MemoryMiddleware(debounce_s=0.0)
        agent = create_agent(scripted(["Shanghai."]), tools=[], middleware=[mw], store=store)
        out = _ask(agent, "Which city do I live in now?", USER, "t")
        mw.close()
        injected = [m["text"] for m in out["memory_context"]["memories"]]
        assert "My home is in Shanghai" in injected
        assert "User loves spicy Sichuan food" not in injected
        hits = {
            h.value["text"]: h
            for h in store.search(("memories", USER), query="Which city do I live in now?")
        }
        assert hits["User loves spicy Sichuan food"].components["evidence"] <= 0
