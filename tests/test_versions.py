"""A later exchange about the same thing is shown before the earlier one (no marker words)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from langmem_plus import Memory, MemoryConfig
from langmem_plus.store.ranking.versions import FOLLOWS, newer_first

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)


SHARE = 0.5  # the default of `recall.newer_version_share`


@dataclass
class _Hit:
    key: str
    value: dict[str, Any]
    score: float


def _episode(key: str, score: float, follows: list[str] | None = None) -> _Hit:
    meta = {FOLLOWS: follows} if follows else {}
    return _Hit(key, {"kind": "episodic", "text": key, "metadata": meta}, score)


def _fact(key: str, score: float, sources: list[str]) -> _Hit:
    return _Hit(key, {"kind": "semantic", "text": key, "source_ids": sources}, score)


def _reordered(items: list[_Hit], share: float = SHARE) -> tuple[list[_Hit], list[bool]]:
    order, moved = newer_first(
        [h.key for h in items], [h.value for h in items], [h.score for h in items], share
    )
    return [items[k] for k in order], moved


def test_a_newer_version_moves_just_above_what_it_follows() -> None:
    items = [
        _fact("old-fact", 0.9, ["old"]),
        _episode("old", 0.8),
        _episode("other", 0.7),
        _episode("new", 0.6, follows=["old"]),
    ]
    out, moved = _reordered(items)
    assert [h.key for h in out] == ["new", "old-fact", "old", "other"]
    assert moved == [False, False, False, True]


def test_a_newer_version_far_less_relevant_stays_where_it_is() -> None:
    weak = SHARE * 0.8 - 0.01
    items = [_episode("old", 0.8), _episode("chat", 0.5), _episode("new", weak, ["old"])]
    assert [h.key for h in _reordered(items)[0]] == ["old", "chat", "new"]


_KEYS = [f"e{i}" for i in range(8)]


@st.composite
def _results(draw: st.DrawFn) -> list[_Hit]:
    keys = draw(st.permutations(_KEYS))
    out = []
    for k in keys:
        earlier = [e for e in _KEYS if e < k]
        follows = draw(st.lists(st.sampled_from(earlier), max_size=2)) if earlier else []
        out.append(_episode(k, draw(st.floats(0.0, 1.0)), follows or None))
    return out


@settings(max_examples=60, deadline=None)
@given(_results())
def test_only_the_order_changes(items: list[_Hit]) -> None:
    out, moved = _reordered(list(items))
    assert sorted(h.key for h in out) == sorted(h.key for h in items)
    # items that did not move keep their order; a moved item sits above what it follows
    moved_keys = {h.key for h, m in zip(items, moved, strict=True) if m}
    still = [h.key for h in out if h.key not in moved_keys]
    assert still == [h.key for h in items if h.key in still]
    pos = {h.key: i for i, h in enumerate(out)}
    for h in out:
        if h.key in moved_keys:
            assert any(pos[h.key] < pos[f] for f in h.value["metadata"][FOLLOWS])


# ----------------------------------------------------------------------------- end to end
def _laptop(mem: Memory) -> tuple[str, str]:
    old = mem.add(
        "My work laptop is a ThinkPad X1 Carbon running Ubuntu, battery is toast honestly",
        "u", session_id="s1", timestamp=T0,
    )[0]  # fmt: skip
    mem.add("Looking for a standing desk under $400 btw", "u", session_id="s1", timestamp=T0)
    new = mem.add(
        "Been on a MacBook Air for work since March, best laptop I have had, battery is unreal",
        "u", session_id="s2", timestamp=T0 + timedelta(days=40),
    )[0]  # fmt: skip
    return old, new


def _any_share() -> MemoryConfig:
    # keyword-only scores here are all-or-nothing; the share itself is tested above
    return MemoryConfig(recall={"newer_version_share": 0.0})


def test_a_value_changed_without_a_marker_is_shown_first() -> None:
    mem = Memory(embeddings=False, config=_any_share())
    old, new = _laptop(mem)
    assert mem.get(new, "u").metadata[FOLLOWS] == [old]
    hits = mem.search("laptop for work running ubuntu", "u", limit=5)
    ids = [h.id for h in hits]
    assert ids.index(new) < ids.index(old)  # the old statement is still there, below
    assert {h.id: h for h in hits}[new].components["newer_version"] == 1.0


def test_a_later_turn_of_the_same_conversation_is_no_new_version() -> None:
    mem = Memory(embeddings=False)
    first = mem.add("My work laptop is a ThinkPad running Ubuntu", "u", session_id="s1",
                    timestamp=T0)[0]  # fmt: skip
    then = mem.add("The ThinkPad keyboard is great though", "u", session_id="s1",
                   timestamp=T0 + timedelta(minutes=3))[0]  # fmt: skip
    assert first and FOLLOWS not in mem.get(then, "u").metadata


def test_both_values_that_stand_stay_shown() -> None:
    mem = Memory(embeddings=False)
    mem.add("We adopted a beagle named Biscuit, he howls at every delivery", "u",
            session_id="s1", timestamp=T0)  # fmt: skip
    mem.add("We got a second dog! a greyhound named Pepper, total opposite of Biscuit", "u",
            session_id="s2", timestamp=T0 + timedelta(days=90))  # fmt: skip
    texts = " ".join(h.text for h in mem.search("what dogs do I have", "u", limit=5))
    assert "Biscuit" in texts and "Pepper" in texts


def test_links_survive_reopen_and_export_import(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "m.db", embeddings=False, config=_any_share())
    old, new = _laptop(mem)
    dump = mem.export("u")
    mem.close()
    again = Memory(tmp_path / "m.db", embeddings=False, config=_any_share())
    assert again.get(new, "u").metadata[FOLLOWS] == [old]
    other = Memory(embeddings=False, config=_any_share())
    other.import_(dump)
    ids = [h.id for h in other.search("laptop for work running ubuntu", "u", limit=5)]
    assert ids.index(new) < ids.index(old)


def test_the_reordering_can_be_switched_off() -> None:
    mem = Memory(embeddings=False, config=MemoryConfig(recall={"newer_versions_first": False}))
    old, new = _laptop(mem)
    hits = mem.search("laptop for work running ubuntu", "u", limit=5)
    ids = [h.id for h in hits]
    assert ids.index(old) < ids.index(new)  # as scored: the older statement matches better
    assert all(h.components["newer_version"] == 0.0 for h in hits)


def test_recency_does_not_count_twice() -> None:
    # the newer statement, far less relevant but for its recency term, stays below
    mem = Memory(embeddings=False, config=MemoryConfig(recall={"newer_version_share": 0.99}))
    old, new = _laptop(mem)
    hits = mem.search("laptop for work running ubuntu", "u", limit=5)
    comps = {h.id: h.components for h in hits}
    assert comps[new]["recency"] > comps[old]["recency"]
    ids = [h.id for h in hits]
    assert ids.index(old) < ids.index(new) and comps[new]["newer_version"] == 0.0


def _exchange(user: str, reply: str | None = None) -> list[dict[str, str]]:
    turns = [{"role": "user", "content": user}]
    return turns + ([{"role": "assistant", "content": reply}] if reply else [])


def test_a_turn_that_names_its_subject_is_not_tied_to_the_last_topic() -> None:
    mem = Memory(embeddings=False)
    latte = mem.add(_exchange("every morning I need an oat latte 🥛 from the cafe"
                              " downstairs, can't function without it"),
                    "u", session_id="s1", timestamp=T0)[0]  # fmt: skip
    show = mem.add(_exchange("lately watching a show called Beef, so good"), "u",
                   session_id="s1", timestamp=T0)[0]  # fmt: skip
    mem.add(_exchange("ok Beef done, that ending tho 😮", "Beef's ending got people talking, a show worth watching lately."),
            "u", session_id="s2", timestamp=T0 + timedelta(days=40))  # fmt: skip
    new = mem.add(_exchange("ugh stomach's off, doc says so lately my morning coffee is an"
                            " iced americano, way better"),
                  "u", session_id="s2", timestamp=T0 + timedelta(days=40))[0]  # fmt: skip
    # the reply before it was about the show: the user named their own subject (coffee)
    assert mem.get(new, "u").metadata[FOLLOWS] == [latte] != [show]


def test_an_untied_correction_follows_the_reply_it_answers() -> None:
    mem = Memory(embeddings=False, config=_any_share())
    mem.add(_exchange("my college roommate Lena is an SRE at Google, gets paged every night lol"),
            "u", session_id="s1", timestamp=T0)  # fmt: skip
    asked = mem.add(_exchange("thinking of switching jobs, anyone who could refer me for infra?",
                              "You could ask Lena, she is an SRE at Google."),
                    "u", session_id="s2", timestamp=T0 + timedelta(days=300))[0]  # fmt: skip
    fix = mem.add(_exchange("nope, that was years ago, Lena left Google, she's at Stripe now"),
                  "u", session_id="s2", timestamp=T0 + timedelta(days=300))[0]  # fmt: skip
    assert asked in mem.get(fix, "u").metadata[FOLLOWS]
    ids = [h.id for h in mem.search("where does Lena work, Google?", "u", limit=5)]
    assert ids.index(fix) < ids.index(asked)  # the stale reply is still there, below


def test_a_same_conversation_turn_that_is_no_correction_follows_no_reply() -> None:
    mem = Memory(embeddings=False)
    asked = mem.add(_exchange("any ideas for a Lena birthday gift? she's into climbing",
                              "Maybe a chalk bag, Lena would like that."),
                    "u", session_id="s1", timestamp=T0)[0]  # fmt: skip
    then = mem.add(_exchange("hmm Lena has three chalk bags already 😂 something else?"),
                   "u", session_id="s1", timestamp=T0)[0]  # fmt: skip
    assert asked not in (mem.get(then, "u").metadata.get(FOLLOWS) or [])


@dataclass
class _Found:
    key: str
    value: dict[str, Any]
    namespace: tuple[str, ...]
    created_at: datetime
    updated_at: datetime
    components: dict[str, Any]
    score: float = 0.0


class _Ranked:
    """A store whose search returns fixed hits in a fixed order (a store's ranking is
    not under test here, only which of its hits a new episode is linked to)."""

    def __init__(self, hits: list[_Found]) -> None:
        self.hits = hits

    def search(self, namespace: tuple[str, ...], **_: Any) -> list[_Found]:
        return list(self.hits)


def _said(text: str, session: str, day: int, evidence: float | None) -> tuple[Any, _Found]:
    from langmem_plus.episodic.episodes import episode_record

    ns = ("memories", "u")
    rec = episode_record(ns, [{"role": "user", "text": text}], session_id=session,
                         occurred_at=T0 + timedelta(days=day))  # fmt: skip
    comps = {} if evidence is None else {"evidence": evidence}
    return rec, _Found(rec.id, rec.to_value(), ns, rec.created_at, rec.updated_at, comps)


def test_a_link_on_one_common_word_gives_way_to_one_that_matches_in_meaning() -> None:
    from langmem_plus.episodic.versions import NO_EVIDENCE, earlier_episodes

    new, _ = _said("最近早上改喝 americano 了，冰的，肚子舒服多了☕", "s2", 40, None)
    _, show = _said("最近在看一个 Netflix 的剧，太好看了", "s1", 0, NO_EVIDENCE / 10)
    _, latte = _said("每天早上一杯 oat latte 才能开机", "s1", 0, 0.3)
    # the store ranked the show first (a shared common word); the latte matches in meaning
    assert _ids(earlier_episodes(_Ranked([show, latte]), new.namespace, new)) == [latte.key]  # type: ignore[arg-type]
    # both with some evidence, or a store that gives none: the store's order stands
    _, show2 = _said("最近在看一个 Netflix 的剧，太好看了", "s1", 0, NO_EVIDENCE)
    assert _ids(earlier_episodes(_Ranked([show2, latte]), new.namespace, new)) == [show2.key]  # type: ignore[arg-type]
    _, bare = _said("最近在看一个 Netflix 的剧，太好看了", "s1", 0, None)
    assert _ids(earlier_episodes(_Ranked([bare, latte]), new.namespace, new)) == [bare.key]  # type: ignore[arg-type]


def test_a_change_report_sharing_no_word_is_linked_by_meaning_only() -> None:
    from langmem_plus.episodic.versions import MEANING_EVIDENCE, earlier_episodes

    new, _ = _said("换了iPhone 15之后拍娃清楚多了哈哈，就是微信迁移折腾了一晚上😂", "s3", 40, None)
    _, phone = _said("我现在用的是小米13，拍照还行就是续航有点拉", "s1", 0, MEANING_EVIDENCE)
    _, weak = _said("我爸想换个老人机，按键大点的", "s1", 0, MEANING_EVIDENCE / 2)
    ns = new.namespace
    assert _ids(earlier_episodes(_Ranked([phone]), ns, new, changed=True)) == [phone.key]  # type: ignore[arg-type]
    # no change reported, or too weak a match in meaning: no word shared, no link
    assert _ids(earlier_episodes(_Ranked([phone]), ns, new)) == []  # type: ignore[arg-type]
    assert _ids(earlier_episodes(_Ranked([weak]), ns, new, changed=True)) == []  # type: ignore[arg-type]
    # a store that gives no evidence: words only
    _, bare = _said("我现在用的是小米13，拍照还行就是续航有点拉", "s1", 0, None)
    assert _ids(earlier_episodes(_Ranked([bare]), ns, new, changed=True)) == []  # type: ignore[arg-type]


def _ids(found: list[Any]) -> list[str]:
    """The ids of the earlier episodes found."""
    return [rec.id for rec in found]


class _ByQuery:
    """A store whose search returns the hits filed under the first key found in the query
    (a multi-topic turn finds one thing, the clause that reports a change another)."""

    def __init__(self, hits: dict[str, list[_Found]]) -> None:
        self.hits = hits

    def search(self, namespace: tuple[str, ...], *, query: str = "", **_: Any) -> list[_Found]:
        return next((list(h) for k, h in self.hits.items() if k in query), [])


def test_a_change_reported_in_one_clause_of_a_turn_follows_what_changed() -> None:
    from langmem_plus.episodic.versions import MEANING_EVIDENCE, earlier_episodes

    new, _ = _said(
        "家长会开完了，老师夸她作文好，这段时间我都走路去公司，顺便送她上学", "s2", 30, None
    )
    _, meeting = _said("下周三开家长会，得请半天假", "s1", 0, 0.5)
    _, bus = _said("我同事每天开车去公司，说比公交还慢", "s1", 0, 0.3)
    _, commute = _said("每天挤公交去公司，单程四十分钟", "s1", 0, MEANING_EVIDENCE)
    store = _ByQuery({"家长会": [meeting, commute], "走路去公司": [bus, commute, meeting]})
    found = _ids(earlier_episodes(store, new.namespace, new, changed=True))  # type: ignore[arg-type]
    # the clause's best two come first (the store finds a later version by its first two
    # follows): the user's own commute is followed even if ranked second
    assert found == [bus.key, commute.key]
    # no change reported: the whole turn's best match only
    assert _ids(earlier_episodes(store, new.namespace, new)) == [meeting.key]  # type: ignore[arg-type]


def test_a_value_said_again_different_follows_where_it_was_said_before() -> None:
    from langmem_plus.episodic.versions import earlier_episodes

    new, _ = _said("带狗去打了疫苗，还行。房东来电话，续签了，五千一，押一付三", "s2", 30, None)
    _, dog = _said("我家狗狗最近不爱吃饭，是不是该打疫苗了", "s1", 0, 0.4)
    _, rent = _said("刚交了房租，每月四千八，房东人还行", "s1", 0, 0.1)
    _, same = _said("刚交了房租，每月五千一，房东人还行", "s1", 0, 0.1)
    # the whole turn's best (the dog), and where the rent was said before at another amount
    store = _Ranked([dog, rent])
    assert _ids(earlier_episodes(store, new.namespace, new)) == [dog.key, rent.key]  # type: ignore[arg-type]
    # the same amount again is no other version of it
    assert _ids(earlier_episodes(_Ranked([dog, same]), new.namespace, new)) == [dog.key]  # type: ignore[arg-type]


def test_the_reply_a_turn_corrects_is_followed_before_what_its_clauses_name() -> None:
    from langmem_plus.episodic.episodes import episode_record
    from langmem_plus.episodic.versions import earlier_episodes

    ns = ("memories", "u")
    reply = "How's the new job at Brightwave going?"
    asked = episode_record(
        ns,
        [{"role": "user", "text": "long week"}, {"role": "assistant", "text": reply}],
        session_id="s2",
        occurred_at=T0 + timedelta(days=30),
    )
    asked_hit = _Found(asked.id, asked.to_value(), ns, asked.created_at, asked.updated_at, {})
    new, _ = _said(
        "never ended up starting there, these days I work at Corvid Labs", "s2", 30, None
    )
    _, offer = _said("accepted the offer at Brightwave, start in March", "s1", 0, 0.5)
    _, notice = _said("gave notice at my old job, last day Friday", "s1", 0, 0.4)
    store = _ByQuery({reply: [asked_hit], "Corvid": [offer, notice]})
    found = earlier_episodes(store, ns, new, reply, corrects_reply=True, changed=True)  # type: ignore[arg-type]
    assert _ids(found)[0] == asked.id and len(found) == 2
