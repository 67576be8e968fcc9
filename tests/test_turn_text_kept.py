"""Nothing said is lost: a turn that reads its text from an item (an episode, or the mirror of
a logged turn) gets its copy back when that item is deleted or rewritten, by any path."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langmem_plus import Memory
from langmem_plus.episodic.lifecycle import decay
from langmem_plus.model.namespaces import user_namespace

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
TURN_ROOT = "conversations"  # where logged turns are mirrored for search


def _log(mem: Memory, user: str = "u") -> list[str]:
    return [t.content for t in mem.store.conversations.turns(user)]


def _stored(mem: Memory) -> list[str]:
    with mem.store.db.read() as conn:
        return [r[0] for r in conn.execute("SELECT content FROM turns ORDER BY id")]


def test_a_decayed_chitchat_episode_leaves_its_turns_in_the_log() -> None:
    mem = Memory(embeddings=False)
    said = ["thanks!", "you're welcome 😊"]
    ids = mem.add(
        [{"role": "user", "content": said[0]}, {"role": "assistant", "content": said[1]}],
        "u",
        session_id="s",
        timestamp=T0,
    )
    assert _stored(mem) == ["", ""]  # one copy while the episode holds it
    report = decay(mem.store, ("memories", "u"), now=T0 + timedelta(days=400))
    assert ids[0] in report.deleted_ids
    assert _log(mem) == said
    assert _stored(mem) == said


def test_deleting_or_rewriting_an_episode_keeps_what_was_said(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "m.db", embeddings=False)
    first = ["周一来修水管，哦不对，是周二 🔧", "好的，周二见"]
    second = ["I moved to Lisbon last spring", "nice, how is it?"]
    a = mem.add(
        [{"role": "user", "content": first[0]}, {"role": "assistant", "content": first[1]}],
        "u",
        session_id="s",
    )
    b = mem.add(
        [{"role": "user", "content": second[0]}, {"role": "assistant", "content": second[1]}],
        "u",
        session_id="s",
    )
    episode_a = next(i for i in a if mem.get(i, "u").kind == "episodic")
    episode_b = next(i for i in b if mem.get(i, "u").kind == "episodic")
    mem.delete(episode_a, "u")
    ns = ("memories", "u")
    value = dict(mem.store.get(ns, episode_b).value)
    mem.store.put(ns, episode_b, {**value, "text": "rewritten"})
    assert _log(mem) == first + second
    mem.close()
    again = Memory(tmp_path / "m.db", embeddings=False)
    assert _log(again) == first + second
    again.close()


def test_a_logged_turn_is_stored_once_and_survives_its_mirror() -> None:
    mem = Memory(embeddings=False)
    turn = mem.add_turn("u", "s1", "user", "processOrder throws TypeError on None 🐛")
    assert _stored(mem) == [""]  # the searchable mirror item holds the words
    assert _log(mem) == [turn.content]
    ns = user_namespace("u", TURN_ROOT)
    mem.store.delete(ns, f"turn-{turn.id}")
    assert _stored(mem) == [turn.content]
    assert _log(mem) == [turn.content]


_TEXT = (
    st.lists(st.sampled_from([*"ab 周二见🔧,.!\n", "thanks", "好的"]), min_size=1, max_size=12)
    .map("".join)
    .filter(lambda s: s.strip())
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ops=st.lists(
        st.one_of(
            st.tuples(st.just("add"), _TEXT, _TEXT),
            st.tuples(st.just("turn"), _TEXT, st.just("")),
            st.tuples(st.just("delete"), st.integers(0, 50), st.just("")),
            st.tuples(st.just("rewrite"), st.integers(0, 50), _TEXT),
        ),
        max_size=12,
    )
)
def test_the_log_always_holds_what_was_said(ops: list[tuple[str, object, object]]) -> None:
    mem = Memory(embeddings=False)
    said: list[str] = []
    items: list[tuple[tuple[str, ...], str]] = []
    for op, x, y in ops:
        if op == "add":
            assert isinstance(x, str) and isinstance(y, str)
            ids = mem.add(
                [{"role": "user", "content": x}, {"role": "assistant", "content": y}],
                "u",
                session_id="s",
            )
            said += [x, y]
            items += [(("memories", "u"), i) for i in ids]
        elif op == "turn":
            assert isinstance(x, str)
            turn = mem.add_turn("u", "s", "user", x)
            said.append(x)
            items.append((user_namespace("u", TURN_ROOT), f"turn-{turn.id}"))
        elif items:
            assert isinstance(x, int)
            ns, key = items[x % len(items)]
            if op == "delete":
                mem.store.delete(ns, key)
            else:
                got = mem.store.get(ns, key)
                if got is not None:
                    mem.store.put(ns, key, {**got.value, "text": str(y)})
        assert _log(mem) == said
    mem.close()
