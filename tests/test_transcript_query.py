"""A query written as a transcript ("Bart: ...", "Assistant: ...") is embedded without the
agent's labels (text/transcript.py): "Assistant:" is layout, and embedded with the words it
pulls the query's vector towards any text written the same way; the user's or a person's label
says whose life the conversation is about and stays. Its latest user-side turn is embedded once
more, and its candidates are ordered with `tuning.w_fusion_keyword_transcript` (MADial-Bench
frac@10 zh 0.755 -> 0.772, en 0.748 -> 0.785 with the three, docs/benchmarks.md). Anything that
is not a transcript is embedded and ordered as before."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from conftest import HashEmbeddings
from hypothesis import given
from hypothesis import strategies as st

from langmem_plus import HybridStore
from langmem_plus.clock import ManualClock
from langmem_plus.embeddings import default_embeddings
from langmem_plus.store.tuning import StoreTuning
from langmem_plus.text.transcript import (
    is_transcript,
    speaker_labels,
    text_to_embed,
    without_role_labels,
)

DIALOGUE = (
    "Bart: I got a perfect score on my math test today! 😄\n"
    "Assistant: Wow, that's awesome! You must have studied hard, right?\n"
    "Bart: yeah, practice problems every day… how should I celebrate?"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            DIALOGUE,
            "Bart: I got a perfect score on my math test today! 😄\n"
            "Wow, that's awesome! You must have studied hard, right?\n"
            "Bart: yeah, practice problems every day… how should I celebrate?",
        ),
        (
            "用户：我膝盖又疼了\n助手：要注意休息\n用户：那周末还能跑步吗",
            "用户：我膝盖又疼了\n要注意休息\n用户：那周末还能跑步吗",
        ),
        ("user: my knee hurts\nAI:  sorry to hear", "user: my knee hurts\nsorry to hear"),
        # people's labels stay
        (
            "Caroline: hi!\nMelanie: hey\nCaroline: how was the race?",
            "Caroline: hi!\nMelanie: hey\nCaroline: how was the race?",
        ),
        # not transcripts: one labelled line, two different speakers once each, a stack trace
        ("Assistant: the deploy is on Friday", "Assistant: the deploy is on Friday"),
        ("User: hi\nMelanie hey", "User: hi\nMelanie hey"),
        (
            "TypeError: cannot read 'total' of null\nError: processOrder failed",
            "TypeError: cannot read 'total' of null\nError: processOrder failed",
        ),
        ("Time: 10:30\nPlace: room 4", "Time: 10:30\nPlace: room 4"),
        ("What did Caroline research?", "What did Caroline research?"),
    ],
)
def test_role_labels_are_removed_from_transcripts_only(text: str, expected: str) -> None:
    assert without_role_labels(text) == expected


def test_labels_and_blank_lines() -> None:
    text = "Bart: Wow!\n\n  Assistant:   ok\nBart: https://example.com/a:b stays"
    assert speaker_labels(text) == ["bart", "assistant", "bart"]
    assert without_role_labels(text) == "Bart: Wow!\n\nok\nBart: https://example.com/a:b stays"
    # a "label" too long to be a speaker is no label
    assert not is_transcript("this is a long sentence that ends: here\nand another one: there")
    assert is_transcript("Caroline: hi\nMelanie: hey\nCaroline: so?")
    assert not is_transcript("Caroline: hi\nMelanie: hey")


@given(st.text(alphabet=st.characters(blacklist_characters=":："), max_size=200))
def test_text_without_a_colon_is_never_changed(text: str) -> None:
    assert without_role_labels(text) == text


class Recording(HashEmbeddings):
    """HashEmbeddings that remember every query text they embed."""

    def __init__(self) -> None:
        super().__init__()
        self.queries: list[str] = []

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return super().embed_query(text)

    async def aembed_query(self, text: str) -> list[float]:
        return self.embed_query(text)


def test_the_store_embeds_a_transcript_query_without_its_role_labels() -> None:
    emb = Recording()
    index = {"dims": emb.dims, "embed": emb, "fields": ["text"]}
    with HybridStore(index=index, clock=ManualClock(1_700_000_000.0)) as store:
        store.put(("u",), "m1", {"text": "Bart won the math contest and felt very happy"})
        emb.queries.clear()
        hits = store.search(("u",), query=DIALOGUE)
        assert emb.queries == [text_to_embed(DIALOGUE)] != [DIALOGUE]
        assert [h.key for h in hits] == ["m1"]
        asyncio.run(store.asearch(("u",), query=DIALOGUE))
        assert emb.queries[-1] == text_to_embed(DIALOGUE)
        store.search(("u",), query="TypeError: x\nError: y")
        assert emb.queries[-1] == "TypeError: x\nError: y"


def test_use_embeds_the_same_text_on_the_sync_and_the_batched_async_path() -> None:
    """With the bundled USE model the async path embeds queries with the documents in one
    call: the cosine a hit reports is the one of `text_to_embed`'s text on both paths."""
    emb = default_embeddings()
    doc = "Bart won the math contest and felt very happy"
    with HybridStore(clock=ManualClock(1_700_000_000.0)) as store:  # the bundled USE model
        store.put(("u",), "m1", {"text": doc})
        sync = store.search(("u",), query=DIALOGUE)[0].components["vector"]

        async def both() -> float:
            got = await asyncio.gather(
                store.aput(("u",), "m2", {"text": "an unrelated note"}),
                store.asearch(("u",), query=DIALOGUE),
            )
            return float(got[1][0].components["vector"])

        asynced = asyncio.run(both())
    q, raw, d = (
        np.asarray(v) for v in emb.embed_documents([text_to_embed(DIALOGUE), DIALOGUE, doc])
    )
    expected = float(q @ d / (np.linalg.norm(q) * np.linalg.norm(d)))
    labelled = float(raw @ d / (np.linalg.norm(raw) * np.linalg.norm(d)))
    assert abs(expected - labelled) > 0.005, (expected, labelled)  # the label moves the cosine
    # the store keeps vectors in float16: equal to ~1e-4
    assert sync == pytest.approx(expected, abs=1e-3)
    assert asynced == pytest.approx(expected, abs=1e-3)


_LINE = st.one_of(
    st.sampled_from(
        ["Assistant: ", "assistant:", "Bart: ", "用户：", "助手：", "AI:  ", "Error: "]
    ),
    st.just(""),
).flatmap(lambda label: st.text(max_size=40).map(lambda rest: label + rest.replace("\n", " ")))


@given(st.lists(_LINE, min_size=0, max_size=8))
def test_only_agent_labels_at_line_starts_are_removed(lines: list[str]) -> None:
    text = "\n".join(lines)
    out = without_role_labels(text).split("\n")
    assert len(out) == len(text.split("\n"))
    for before, after in zip(text.split("\n"), out, strict=True):
        # a line is kept, or loses exactly its leading agent label (and the spaces after it)
        assert before.endswith(after)
        removed = before[: len(before) - len(after)]
        if removed:
            label = removed.strip().rstrip(":：").strip().lower()
            assert label in ("assistant", "ai", "助手"), (before, after)


def _ranked(config: dict[str, float], query: str) -> list[tuple[str, float]]:
    emb = HashEmbeddings()
    index = {"dims": emb.dims, "embed": emb, "fields": ["text"]}
    memories = [
        "Bart won the math contest and felt very happy",
        "Bart was nervous before the magic show at the party",
        "Bart and his mom baked cookies for the school fair",
        "Lisa painted a sunflower and her teacher praised her",
        "the team dinner moved to Friday at the noodle place",
        "Bart practised the trick with the cards every evening",
    ]
    with HybridStore(
        index=index,
        tuning=StoreTuning(**config),
        clock=ManualClock(1_700_000_000.0),
    ) as store:
        for i, text in enumerate(memories):
            store.put(("u",), f"m{i}", {"text": text})
        return [
            (h.key, round(h.components["relevance"], 9))
            for h in store.search(("u",), query=query, limit=6)
        ]


def test_a_transcript_query_is_ordered_with_its_own_fusion_weight() -> None:
    """`tuning.w_fusion_keyword_transcript` orders a transcript query, `w_fusion_keyword` every
    other query: each knob moves only its own kind of query."""
    line = "how should Bart prepare for the magic show with the cards?"
    dialogue = (
        "Bart: I'm doing a magic show at the party!\n"
        "Assistant: Wow, nice! Are you nervous?\n"
        "Bart: a bit… how should I practise the card trick?"
    )
    assert is_transcript(dialogue) and not is_transcript(line)
    keyword_led, vector_led = (
        {"w_fusion_keyword_transcript": 1.0},
        {"w_fusion_keyword_transcript": 0.0},
    )
    assert _ranked(keyword_led, dialogue) != _ranked(vector_led, dialogue)
    assert _ranked(keyword_led, line) == _ranked(vector_led, line)
    keyword_led, vector_led = {"w_fusion_keyword": 1.0}, {"w_fusion_keyword": 0.0}
    assert _ranked(keyword_led, line) != _ranked(vector_led, line)
    assert _ranked(keyword_led, dialogue) == _ranked(vector_led, dialogue)


def test_the_text_embedded_for_a_transcript_ends_with_its_latest_user_turn() -> None:
    assert text_to_embed(DIALOGUE) == (
        without_role_labels(DIALOGUE)
        + "\nBart: yeah, practice problems every day… how should I celebrate?"
    )
    # the latest turn that is not the agent's, even when the agent spoke last
    assert text_to_embed("用户：我膝盖疼\n助手：要注意休息\n用户：还能跑步吗\n助手：先别跑") == (
        "用户：我膝盖疼\n要注意休息\n用户：还能跑步吗\n先别跑\n用户：还能跑步吗"
    )
    for text in ("What did Caroline say?", "TypeError: x\nError: y", "Note: hi"):
        assert text_to_embed(text) == text
