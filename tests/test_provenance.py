"""Deletes and edits follow provenance: what was drawn from an episode goes with it, a fact
the user deleted is never derived again from the same words, edits re-derive."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from langmem_plus.cli import main
from langmem_plus.memory import Memory

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
U = "alice"


def _say(mem: Memory, text: str, day: int = 0, reply: str = "Noted.") -> list[str]:
    msgs = [{"role": "user", "content": text}, {"role": "assistant", "content": reply}]
    return mem.add(msgs, U, session_id=f"s{day}", timestamp=T0 + timedelta(days=day))


def _current(mem: Memory) -> list[str]:
    return sorted(r.text for r in mem.get_all(U).items if r.kind == "semantic" and r.is_current)


def _episode(mem: Memory, ids: list[str]) -> str:
    return next(i for i in ids if mem.get(i, U).kind == "episodic")


def test_deleting_an_episode_deletes_the_facts_it_alone_supports() -> None:
    mem = Memory(embeddings=False)
    ids = mem.add("我叫小明，我喜欢喝咖啡。I prefer dark mode.", user_id=U)
    assert "用户喜欢喝咖啡" in _current(mem)
    mem.delete(_episode(mem, ids), U)
    assert _current(mem) == []
    assert mem.get_all(U).items == []
    assert not any("咖啡" in h.text for h in mem.search("我喜欢喝什么", U))


def test_a_fact_with_another_source_loses_only_this_one() -> None:
    mem = Memory(embeddings=False)
    first = _episode(mem, _say(mem, "I am allergic to peanuts.", 0))
    second = _episode(mem, _say(mem, "Just so you know, I am allergic to peanuts.", 3))
    (fact,) = [r for r in mem.get_all(U).items if r.kind == "semantic"]
    assert set(fact.source_ids) == {first, second}
    mem.delete(first, U)
    assert mem.get(fact.id, U).source_ids == [second]
    assert _current(mem) == ["User is allergic to peanuts"]


def test_deleting_the_correction_makes_the_old_fact_current_again() -> None:
    mem = Memory(embeddings=False)
    paris = _episode(mem, _say(mem, "I live in Paris.", 0))
    rome = _episode(mem, _say(mem, "I moved to Rome last month.", 40))
    assert _current(mem) == ["User moved to Rome"] and mem.get(paris, U).facts_superseded
    mem.delete(rome, U)
    assert _current(mem) == ["User lives in Paris"]
    assert not mem.get(paris, U).facts_superseded
    events = [e["event"] for e in mem.history(mem.get_all(U).items[0].id, U)]
    assert events[-1] == "REOPENED"


def test_a_deleted_fact_is_never_derived_again_from_the_same_words() -> None:
    mem = Memory(embeddings=False)
    ep = _episode(mem, _say(mem, "I live in Paris. I am allergic to peanuts."))
    wrong = next(r for r in mem.get_all(U).items if r.text == "User lives in Paris")
    mem.delete(wrong.id, U)
    assert _current(mem) == ["User is allergic to peanuts"]
    assert mem.get(ep, U).metadata["rejected_facts"] == ["User lives in Paris"]
    # re-processing the episode (an edit of its reply) derives what it says, minus that fact
    mem.update(ep, U, text="I live in Paris. I am allergic to peanuts.\nNoted, thanks.")
    assert _current(mem) == ["User is allergic to peanuts"]


def test_editing_an_episode_derives_its_facts_again() -> None:
    mem = Memory(embeddings=False)
    ep = _episode(mem, _say(mem, "I live in Paris."))
    mem.update(ep, U, text="I live in Lyon.\nNoted.")
    assert _current(mem) == ["User lives in Lyon"]
    rec = mem.get(ep, U)
    assert [t["role"] for t in rec.metadata and _turns(rec)] == ["user", "assistant"]
    assert [r.text for r in mem.get_all(U).items if r.kind == "semantic"] == ["User lives in Lyon"]


def _turns(rec: object) -> list[dict[str, str]]:
    from langmem_plus.episodic.episodes import episode_turns

    return episode_turns(rec)  # type: ignore[arg-type]


def test_an_edited_fact_stays_the_users_own() -> None:
    mem = Memory(embeddings=False)
    ep = _episode(mem, _say(mem, "I live in Paris."))
    fact = next(r for r in mem.get_all(U).items if r.kind == "semantic")
    mem.update(fact.id, U, text="User lives in Paris, 11th arrondissement")
    assert mem.get(fact.id, U).metadata["edited"] is True
    # the episode edited later: the user's fact stays, the old derived text does not return
    mem.update(ep, U, text="I live in Paris!\nNoted.")
    assert _current(mem) == ["User lives in Paris, 11th arrondissement"]


def test_export_and_import_keep_sources_validity_and_rejections() -> None:
    mem = Memory(embeddings=False)
    _say(mem, "I live in Paris. I am allergic to peanuts.", 0)
    _say(mem, "I moved to Rome last month.", 40)
    wrong = next(r for r in mem.get_all(U).items if r.text == "User is allergic to peanuts")
    mem.delete(wrong.id, U)
    other = Memory(embeddings=False)
    other.import_(mem.export(U))
    before = {r.id: r for r in mem.get_all(U).items}
    after = {r.id: r for r in other.get_all(U).items}
    assert before.keys() == after.keys()
    for key, rec in before.items():
        got = after[key]
        assert (got.source_ids, got.valid_to, got.superseded_by) == (
            rec.source_ids,
            rec.valid_to,
            rec.superseded_by,
        )
        assert got.metadata.get("rejected_facts") == rec.metadata.get("rejected_facts")
    assert [h.text for h in other.search("where does the user live", U)][:1] == [
        "User moved to Rome"
    ]


# ---------------------------------------------------------------------------- every door
@pytest.fixture
def saved(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "m.db"
    with Memory(path, embeddings=False) as mem:
        ep = _episode(mem, _say(mem, "I live in Paris."))
    return path, ep


def _facts_in(path: Path) -> list[str]:
    with Memory(path, embeddings=False) as mem:
        return _current(mem)


def test_rest_delete_follows_provenance(saved: tuple[Path, str]) -> None:
    from fastapi.testclient import TestClient

    from langmem_plus.server import create_app

    path, ep = saved
    with (
        Memory(path, embeddings=False) as mem,
        TestClient(create_app(mem), base_url="http://localhost") as client,
    ):
        r = client.delete(f"/memory/long-term/{ep}", headers={"X-User-Id": U})
        assert r.status_code in (200, 204), r.text
    assert _facts_in(path) == []


def test_rest_update_follows_provenance(saved: tuple[Path, str]) -> None:
    from fastapi.testclient import TestClient

    from langmem_plus.server import create_app

    path, ep = saved
    with (
        Memory(path, embeddings=False) as mem,
        TestClient(create_app(mem), base_url="http://localhost") as client,
    ):
        r = client.patch(
            f"/memory/long-term/{ep}",
            json={"text": "I live in Lyon.\nNoted."},
            headers={"X-User-Id": U},
        )
        assert r.status_code == 200, r.text
    assert _facts_in(path) == ["User lives in Lyon"]


def test_mcp_delete_follows_provenance(saved: tuple[Path, str]) -> None:
    pytest.importorskip("mcp")
    from langmem_plus.mcp_server import build_server

    path, ep = saved
    with Memory(path, embeddings=False) as mem:
        server = build_server(mem, user=U)
        asyncio.run(server.call_tool("delete_memory", {"memory_id": ep}))
    assert _facts_in(path) == []


def test_cli_delete_follows_provenance(
    saved: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    path, ep = saved
    args = ["--db", str(path), "--embeddings", "none", "--user", U, "delete", ep, "--json"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["deleted"] is True
    assert _facts_in(path) == []
