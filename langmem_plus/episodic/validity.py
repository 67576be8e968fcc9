"""What replaced a memory that states a superseded value, so nothing stale is shown unmarked.

A search shows current facts, and episodes whose facts were superseded (or that a later turn
corrected) ranked lower: such an episode still states the old value in the user's words. Before
it goes into a model's context or a tool's output it is marked with the date it stopped being
true and the current value (`replacement`), or left out when no current value can be found. A
memory that a later exchange is about (an earlier version of the same thing, the link
`episodic/versions.py` makes on the later exchange and finds with `later_versions`) is shown
with that later statement (`newer_statement`). Works over any LangGraph `BaseStore`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langgraph.store.base import BaseStore

from langmem_plus.episodic.versions import later_versions
from langmem_plus.model.records import MemoryRecord

__all__ = ["Replacement", "is_stale", "newer_statement", "replacement"]

_MAX_HOPS = 20  # a supersession chain longer than this is cut (cycles cannot occur)


@dataclass(frozen=True)
class Replacement:
    """A stale memory's successor: when it stopped being true, and what is true now."""

    since: datetime | None
    now: str


def is_stale(value: Any) -> bool:
    """Whether a stored value states something a later statement replaced: a superseded
    fact, or an episode whose facts were superseded or that a later turn corrected."""
    if not isinstance(value, Mapping):
        return False
    if value.get("kind") == "semantic":
        return bool(value.get("valid_to") or value.get("superseded_by"))
    if value.get("kind") == "episodic":
        return bool(value.get("facts_superseded") or value.get("corrected_by"))
    return False


def replacement(store: BaseStore, namespace: tuple[str, ...], value: Any) -> Replacement | None:
    """The current value that replaced what `value` states, and since when: for a superseded
    fact, its successor; for an episode, the successors of those of its facts that were
    superseded (an episode stating an old value beside a current one is marked too), or what
    corrected it. None when nothing it states was replaced, or nothing current is found."""
    if not isinstance(value, Mapping) or not (
        is_stale(value) or (value.get("kind") == "episodic" and value.get("derived_ids"))
    ):
        return None
    try:
        rec = MemoryRecord.from_value(dict(value), id="_", namespace=namespace)
    except Exception:
        return None
    if rec.kind == "semantic":
        return _successor(store, namespace, rec)
    found: list[Replacement] = []
    for fid in rec.derived_ids:
        fact = _get(store, namespace, fid)
        if fact is not None and not fact.is_current:
            got = _successor(store, namespace, fact)
            if got is not None:
                found.append(got)
    if not found and rec.corrected_by:
        found += _from_episode(store, namespace, rec.corrected_by)
    if not found:
        return None
    since = min((r.since for r in found if r.since is not None), default=None)
    return Replacement(since, "; ".join(dict.fromkeys(r.now for r in found)))


def _successor(
    store: BaseStore, namespace: tuple[str, ...], fact: MemoryRecord
) -> Replacement | None:
    """Follow a superseded fact's chain to the current fact (or the correcting episode)."""
    since, cur = fact.valid_to, fact
    for _ in range(_MAX_HOPS):
        nxt = cur.superseded_by
        if nxt is None:
            break
        got = _get(store, namespace, nxt)
        if got is None:
            return None
        if got.kind == "episodic":  # closed by a correction with no fact of its own
            found = _from_episode(store, namespace, got.id, got)
            return Replacement(since, found[0].now) if found else None
        cur = got
    return Replacement(since, cur.text) if cur is not fact and cur.is_current else None


def _from_episode(
    store: BaseStore,
    namespace: tuple[str, ...],
    key: str,
    ep: MemoryRecord | None = None,
    *,
    facts: bool = True,
) -> list[Replacement]:
    """What a correcting episode says now: its current facts (with `facts`), else what the
    user said."""
    ep = ep or _get(store, namespace, key)
    if ep is None:
        return []
    texts: list[str] = []
    if facts:
        found = [f for f in (_get(store, namespace, i) for i in ep.derived_ids) if f is not None]
        texts = [f.text for f in found if f.is_current]
    return [Replacement(ep.occurred_at or ep.created_at, t) for t in texts or _user_said(ep)]


def _user_said(ep: MemoryRecord) -> list[str]:
    """What the user said in episode `ep` (its user turns; all its text without spans)."""
    roles, spans = ep.metadata.get("roles"), ep.metadata.get("spans")
    if isinstance(roles, list) and isinstance(spans, list) and len(roles) == len(spans):
        return [ep.text[s[0] : s[1]] for r, s in zip(roles, spans, strict=True) if r == "user"]
    return [ep.text]


def newer_statement(
    store: BaseStore, namespace: tuple[str, ...], value: Any, key: str
) -> Replacement | None:
    """The latest later exchange about what `value` says (a later version of an episode,
    `versions.later_versions`, or of a fact's source episodes): when it was said and what the user said then; None when
    there is none. A later statement may replace the value or stand beside it: it is shown
    with the memory, not instead of it."""
    if not isinstance(value, Mapping):
        return None
    starts: list[tuple[str, Mapping[str, Any] | None]]
    if value.get("kind") == "episodic":
        starts = [(key, value)]
    elif value.get("kind") == "semantic":
        starts = [(str(s), None) for s in value.get("source_ids") or ()]
    else:
        return None
    best: list[MemoryRecord] = []
    for eid, known in starts:
        ep = _record(known, eid, namespace) if known is not None else _get(store, namespace, eid)
        got = [v for v in _later_versions(store, namespace, ep, eid) if v.id not in dict(starts)]
        if got and (not best or _when(got[-1]) > _when(best[-1])):
            best = got
    if not best:
        return None
    said = [_user_said(v)[0] for v in best]
    return Replacement(_when(best[0]), "; ".join(dict.fromkeys(said)))


_MAX_SHOWN = 2  # later exchanges shown with a memory when none reports a change


def _when(rec: MemoryRecord) -> datetime:
    return rec.occurred_at or rec.created_at


def _later_versions(
    store: BaseStore, namespace: tuple[str, ...], ep: MemoryRecord | None, eid: str
) -> list[MemoryRecord]:
    """The later versions of episode `ep` to show with it ([] when there is none).
    Following its later versions (`versions.later_versions`): the newest later exchange that reports a change in so many
    words ("换了iPhone 15", "correction on the offsite"), and on from it; where none does,
    the first later conversation's exchanges about it (at most `_MAX_SHOWN`: where a change
    said without words shows, before the talk moves on to "got the rain jacket")."""
    start, seen = ep, {eid}
    for _ in range(_MAX_HOPS):
        later = later_versions(store, namespace, ep.id) if ep is not None else []
        nxt = sorted((r for r in later if r.id not in seen), key=_when)
        changes = [r for r in nxt if _reports_change(r)]
        if not changes:
            if ep is start and nxt:
                first = [r for r in nxt if _one_conversation(r, nxt[0])]
                return first[:_MAX_SHOWN]
            break
        ep = changes[-1]
        seen.add(ep.id)
    return [ep] if ep is not None and ep is not start else []


def _one_conversation(a: MemoryRecord, b: MemoryRecord) -> bool:
    """Said in one conversation (its session; without one, the same day)."""
    if a.session_id is not None and b.session_id is not None:
        return a.session_id == b.session_id
    return _when(a).date() == _when(b).date()


def _reports_change(ep: MemoryRecord) -> bool:
    """Whether the user in episode `ep` says in so many words that something changed, was
    wrong, or did not happen (or the episode corrected an earlier one)."""
    from langmem_plus.processors.facts.denial import denies_reply
    from langmem_plus.processors.facts.rules import is_change, is_correction

    if ep.metadata.get("corrects"):
        return True
    said = " ".join(_user_said(ep))
    return is_change(said) or is_correction(said) or denies_reply(said)


def _record(value: Mapping[str, Any], key: str, namespace: tuple[str, ...]) -> MemoryRecord | None:
    try:
        return MemoryRecord.from_value(dict(value), id=key, namespace=namespace)
    except Exception:
        return None


def _get(store: BaseStore, namespace: tuple[str, ...], key: str) -> MemoryRecord | None:
    item = store.get(namespace, key)
    if item is None:
        return None
    try:
        return MemoryRecord.from_item(item)
    except Exception:
        return None
