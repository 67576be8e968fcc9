"""Elliptical follow-ups: an answer takes its question's relevance in context
(`store.answer_in_context`, store/ranking/neighbours.py).

"ha, fine, I'll bring snacks then" and "那就这么定了，按第二个方案来" share no word with the
question asked later; the turn before them is a question with no subject either ("so who's doing
it this time?", "你们觉得哪个好？"). Only the turn before the question names the subject. The
examples were written for issue #14 and run on the bundled USE embeddings.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langmem_plus import HybridStore
from langmem_plus.clock import ManualClock
from langmem_plus.store.ranking.neighbours import inherit
from langmem_plus.store.tuning import StoreTuning

PICNIC = [
    (
        "s1",
        "Mia: hey all, quick one before I forget, for Saturday's picnic at Lake Merritt the "
        "drinks and plates are sorted and Jonas is bringing his speaker, but nobody has signed "
        "up for food yet and I really don't want to end up buying everything last minute again "
        "like in June",
    ),
    ("s1", "Dev: hmm ok, so who's doing it this time?"),
    (
        "s1",
        "Sam: ha, fine, I'll bring snacks then, probably those spicy chips everyone fought "
        "over last time",
    ),
    ("s1", "Mia: lol perfect, thank you!! also can someone check the weather on Friday night"),
    ("s1", "Dev: will do, the forecast app said sunny but it always lies"),
    (
        "s2",
        "Jonas: the food truck festival downtown was amazing, we had tacos and those crazy "
        "mango desserts",
    ),
    ("s2", "Mia: I'm so jealous, I was stuck at work until 9 fixing a deploy"),
    ("s2", "Sam: next time we should all go together, maybe make a day of it at the lake"),
    ("s3", "Dev: btw my sister is visiting this weekend so I might leave the picnic early"),
    ("s3", "Mia: no worries, bring her along if she wants, the more the merrier"),
    ("s3", "Dev: she's vegan though, is that ok for food?"),
    ("s3", "Mia: sure, I'll grab some hummus and veggies for her on the way"),
]
OFFSITE = [
    (
        "s1",
        "阿杰：周五团建我列了两个方案：第一个是去郊外徒步然后烧烤，第二个是在市区玩密室逃脱"
        "再吃火锅，预算都差不多，大家看看",
    ),
    ("s1", "小雨：嗯……你们觉得哪个好？"),
    ("s1", "阿杰：那就这么定了，按第二个方案来，我今晚订位"),
    ("s1", "小雨：好嘞，记得问一下有没有人不吃辣"),
    ("s2", "小雨：上次郊外徒步把我累坏了，腿疼了三天"),
    ("s2", "阿杰：哈哈哈那次确实走太远了，烧烤倒是挺好吃"),
    ("s2", "小雨：下次再去徒步我就请假了"),
    ("s3", "老王：周五下午的周会挪到四点，大家注意一下"),
    ("s3", "阿杰：收到，团建那天我四点前得走"),
    ("s3", "老王：没问题，记得把周报先交了"),
]
OFF = StoreTuning(answer_in_context=False)
# (turns, question, the question turn, its elliptical answer, the answer's rank at worst)
CASES = [
    (PICNIC, "who is taking care of the food for the lake picnic?", "t1", "t2", 6),
    (OFFSITE, "周五团建最后定了什么活动？", "t1", "t2", 4),
    (OFFSITE, "那个Friday团建最后选的是哪个活动？", "t1", "t2", 4),
]


def _ranking(turns: Sequence[tuple[str, str]], query: str, tuning: StoreTuning | None) -> list[str]:
    store = HybridStore(tuning=tuning, clock=ManualClock(1_700_000_000.0))
    for i, (session, text) in enumerate(turns):
        store.put(("chat",), f"t{i}", {"text": text, "session": session})
    keys = [h.key for h in store.search(("chat",), query=query, limit=len(turns))]
    store.close()
    return keys


@pytest.mark.parametrize(
    ("turns", "query", "question", "answer", "worst"), CASES, ids=[c[1][:20] for c in CASES]
)
def test_an_elliptical_answer_ranks_with_its_question_in_context(
    turns: list[tuple[str, str]], query: str, question: str, answer: str, worst: int
) -> None:
    old = _ranking(turns, query, OFF)
    new = _ranking(turns, query, None)
    # before: the subject-less question passed on only its own (low) relevance
    assert old.index(answer) > old.index(question)
    assert old.index(answer) + 1 > worst
    # now: the answer stands at least where its question stands in context
    assert new.index(answer) < new.index(question)
    assert new.index(answer) + 1 <= worst


@settings(max_examples=200, deadline=None)
@given(
    fused=st.dictionaries(st.integers(0, 9), st.floats(0, 1), min_size=1),
    pairs=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=6),
    alpha=st.floats(0, 1),
    beta=st.floats(0, 1),
)
def test_in_context_never_lowers_a_relevance_and_is_the_old_rule_without_context(
    fused: dict[int, float], pairs: list[tuple[int, int]], alpha: float, beta: float
) -> None:
    nbrs: dict[int, list[int]] = {}
    for i, j in pairs:
        if i != j:
            nbrs.setdefault(i, []).append(j)
    answers = {i: i + 1 for i in fused if i + 1 in fused or i + 1 in nbrs.get(i, [])}
    old = inherit(fused, nbrs, alpha, answers, beta, in_context=False)
    new = inherit(fused, nbrs, alpha, answers, beta, in_context=True)
    assert old.keys() == new.keys()
    for k in old:
        assert new[k] >= old[k]
    # with no neighbours to lend context, the two rules agree
    assert inherit(fused, {}, alpha, answers, beta, True) == inherit(
        fused, {}, alpha, answers, beta, False
    )
