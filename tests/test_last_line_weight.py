"""A query of several lines (the conversation so far) weighs its last line's terms more
(`store.last_line_weight`): the latest turn is what needs answering."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langmem_plus import HybridStore
from langmem_plus.clock import ManualClock
from langmem_plus.store.tuning import StoreTuning
from langmem_plus.text.tokenize import query_terms, tokenize

MEMORIES = [
    "The plumber who fixed the kitchen sink charged 300 euros",
    "My sister Ana would love a pottery wheel class for her birthday",
    "I'm learning Portuguese on Duolingo before the trip to Lisbon",
    "My dad collects vinyl records, mostly 70s jazz",
    "We get groceries delivered every Tuesday evening",
    "I run 5k on Saturday mornings along the canal",
]
CONVERSATION = (
    "User: the plumber finally fixed the kitchen sink yesterday\n"
    "Assistant: Glad to hear it! Anything else on your mind?\n"
    "User: yes, I still need a birthday present for my sister Ana"
)


def _keys(query: str, weight: float | None) -> list[tuple[str, float]]:
    tuning = None if weight is None else StoreTuning(last_line_weight=weight)
    store = HybridStore(tuning=tuning, clock=ManualClock(1_700_000_000.0))
    for i, text in enumerate(MEMORIES):
        store.put(("u",), f"m{i}", {"text": text})
    got = [(h.key, h.score or 0.0) for h in store.search(("u",), query=query, limit=6)]
    store.close()
    return got


def test_the_last_line_of_a_conversation_decides_between_two_matches() -> None:
    # written as one line, nothing marks the latest turn: the plumber memory matches more words
    assert _keys(CONVERSATION.replace("\n", " "), None)[0][0] == "m0"
    # as a conversation the last turn, about the sister's present, decides (the keyword side
    # weighs its words more; the vector side embeds it once more, text/transcript.py)
    assert _keys(CONVERSATION, None)[0][0] == "m1"
    # the keyword side's part: without the last line's weight the sister's memory scores less
    with_weight, without = dict(_keys(CONVERSATION, None)), dict(_keys(CONVERSATION, 0.0))
    assert with_weight["m1"] > without["m1"]


def test_a_one_line_query_is_ranked_as_before() -> None:
    one_line = CONVERSATION.replace("\n", " ")
    assert _keys(one_line, None) == _keys(one_line, 0.0)


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(
        st.lists(
            st.sampled_from(["ana", "sister", "plumber", "sink", "姐姐", "生日", "the"]), max_size=5
        ).map(" ".join),
        min_size=1,
        max_size=4,
    ),
    weight=st.floats(0, 3),
)
def test_only_the_last_lines_terms_weigh_more_and_only_in_several_lines(
    lines: list[str], weight: float
) -> None:
    query = "\n".join(lines)
    q = query_terms(query)
    base = {t: 1.0 for t in q.terms}
    got = q.last_line_weights(query, weight, base)
    several = sum(1 for ln in lines if ln.strip()) >= 2
    last = set(tokenize([ln for ln in lines if ln.strip()][-1])) if several else set()
    for t in q.terms:
        want = 1.0 + weight if (several and t in last) else 1.0
        assert got.get(t, 1.0) == pytest.approx(want)
