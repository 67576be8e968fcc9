"""Deletes and edits follow provenance: what was drawn from an episode goes with it.

An episode is what the user said; a fact is drawn from its source episodes (`source_ids`,
and the episode's `derived_ids`). Deleting an episode deletes the facts it alone supports (a
fact with other sources loses this one); a fact that a deleted fact had superseded is current
again (the statement that replaced it is gone), an episode it had corrected is no longer
marked corrected, and the later episodes noted as its newer versions no longer name it. Deleting a fact the user says is wrong is remembered on its source episodes
(`metadata.rejected_facts`), so re-deriving them never brings it back; editing a fact is
remembered the same way, the edited fact kept as the user's own words (`metadata.edited`).
Editing an episode's text re-derives its facts. Works over any LangGraph `BaseStore`.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from langgraph.store.base import BaseStore, PutOp

from langmem_plus.episodic.episodes import REJECTED, EpisodeKeeper, Kept, record_of_item
from langmem_plus.episodic.lifecycle_base import every_version
from langmem_plus.episodic.versions import FOLLOWS, following
from langmem_plus.model.records import MemoryRecord
from langmem_plus.store.ranking.versions import follows_of

__all__ = ["Removal", "forget", "revise"]

EDITED = "edited"  # metadata of a fact: its text is the user's own edit


class Removal:
    """What one delete or edit changed: ids deleted, ids rewritten (reopened facts among
    them)."""

    def __init__(self) -> None:
        self.deleted: list[str] = []
        self.changed: list[str] = []
        self.reopened: list[str] = []


class _Batch:
    """Records read and changed within one delete or edit, written at the end in one batch."""

    def __init__(self, store: BaseStore, namespace: tuple[str, ...]) -> None:
        self.store, self.ns = store, namespace
        self.records: dict[str, MemoryRecord | None] = {}
        self.dirty: set[str] = set()
        self.gone: set[str] = set()

    def get(self, key: str) -> MemoryRecord | None:
        if key not in self.records:
            item = self.store.get(self.ns, key)
            self.records[key] = None if item is None else record_of_item(item)
        return None if key in self.gone else self.records[key]

    def put(self, rec: MemoryRecord) -> None:
        self.records[rec.id] = rec
        self.dirty.add(rec.id)

    def delete(self, key: str) -> None:
        self.gone.add(key)

    def superseded_by(self, key: str) -> list[MemoryRecord]:
        """The facts that `key` (a fact, or an episode that corrected them) closed."""
        out = []
        for it in self.store.search(
            self.ns, filter={"superseded_by": key}, limit=1000, **every_version(self.store)
        ):
            rec = self.get(it.key)
            if rec is not None:
                out.append(rec)
        return out

    def write(self, removal: Removal) -> None:
        ops = [PutOp(self.ns, key, None) for key in sorted(self.gone)]
        for key in sorted(self.dirty - self.gone):
            rec = self.records[key]
            if rec is not None:
                ops.append(PutOp(self.ns, key, rec.to_value()))
                removal.changed.append(key)
        removal.deleted = sorted(self.gone)
        self.store.batch(ops)


def forget(store: BaseStore, rec: MemoryRecord, *, now: datetime) -> Removal:
    """Delete `rec` and what only it supports (see the module docstring)."""
    batch = _Batch(store, rec.namespace)
    batch.records[rec.id] = rec
    removal = Removal()
    if rec.kind == "episodic":
        _drop_episode(batch, rec)
    else:
        _reject(batch, rec, rec.text)
        batch.delete(rec.id)
    _reopen(batch, removal, now)
    batch.write(removal)
    return removal


def revise(
    store: BaseStore,
    old: MemoryRecord,
    new: MemoryRecord,
    *,
    keeper: EpisodeKeeper,
    now: datetime,
) -> tuple[Removal, Kept | None]:
    """Write the edited record `new` (of `old`) and follow it through provenance: an
    episode's facts are derived again from its new text (those it alone supported first
    removed, the user's deleted and edited ones never again); a fact's old text is
    remembered as rejected on its sources and the new text kept as the user's own."""
    batch = _Batch(store, old.namespace)
    removal = Removal()
    if new.kind == "episodic" and new.text != old.text:
        batch.records[old.id] = new
        _drop_facts_of(batch, new)
        new.derived_ids = [f for f in new.derived_ids if f not in batch.gone]
        new.facts_superseded = False
        batch.put(new)
        _reopen(batch, removal, now)
        batch.write(removal)
        fresh = batch.get(new.id) or new
        return removal, keeper.rederive(store, new.namespace, fresh)
    if new.kind == "semantic" and new.text != old.text:
        _reject(batch, old, old.text)
        new.metadata = {**new.metadata, EDITED: True}
        for eid in new.source_ids:  # the edited fact stays one of its episodes' facts
            ep = batch.get(eid)
            if ep is not None and new.id not in ep.derived_ids:
                ep.derived_ids = [*ep.derived_ids, new.id]
                batch.put(ep)
    batch.put(new)
    batch.write(removal)
    return removal, None


def _drop_episode(batch: _Batch, ep: MemoryRecord) -> None:
    """Delete an episode, the facts it alone supports, and its marks on other episodes: the
    later episodes noted as its newer versions no longer name it (its own links, on its
    row, go with it)."""
    _drop_facts_of(batch, ep)
    for oid in ep.metadata.get("corrects") or ():
        old = batch.get(str(oid))
        if old is not None and old.corrected_by == ep.id:
            old.corrected_by = None
            batch.put(old)
    for found in following(batch.store, batch.ns, ep.id):
        later = batch.get(found.id)
        if later is None:
            continue
        rest = [k for k in follows_of(later.to_value()) if k != ep.id]
        meta = {k: v for k, v in later.metadata.items() if k != FOLLOWS}
        later.metadata = {**meta, FOLLOWS: rest} if rest else meta
        batch.put(later)
    batch.delete(ep.id)


def _drop_facts_of(batch: _Batch, ep: MemoryRecord) -> None:
    """The facts derived from `ep`: deleted when it is their only source (and the user did
    not write them), else they lose it as a source."""
    for fid in ep.derived_ids:
        fact = batch.get(fid)
        if fact is None or fact.kind != "semantic":
            continue
        rest = [s for s in fact.source_ids if s != ep.id]
        if rest or fact.metadata.get(EDITED):
            fact.source_ids = rest
            batch.put(fact)
        else:
            batch.delete(fid)


def _reject(batch: _Batch, fact: MemoryRecord, text: str) -> None:
    """Remember on each source episode that `text` must not be derived from it again."""
    for eid in fact.source_ids:
        ep = batch.get(eid)
        if ep is None:
            continue
        ep.metadata = {**ep.metadata, REJECTED: _added(ep.metadata.get(REJECTED), text)}
        ep.derived_ids = [f for f in ep.derived_ids if f != fact.id]
        batch.put(ep)


def _added(values: Any, text: str) -> list[str]:
    got = [str(v) for v in values] if isinstance(values, list) else []
    return got if text in got else [*got, text]


def _reopen(batch: _Batch, removal: Removal, now: datetime) -> None:
    """Facts closed by a fact or episode that is gone are current again; the episodes they
    come from are then no longer `facts_superseded`."""
    for key in sorted(batch.gone):
        for old in batch.superseded_by(key):
            if old.id in batch.gone:
                continue
            old.valid_to = None
            old.superseded_by = None
            old.metadata = {
                **old.metadata,
                "updates": [
                    *(old.metadata.get("updates") or []),
                    {"event": "REOPENED", "at": now.isoformat(), "by": key},
                ],
            }
            batch.put(old)
            removal.reopened.append(old.id)
            _unsupersede(batch, old.source_ids)


def _unsupersede(batch: _Batch, episode_ids: Iterable[str]) -> None:
    for eid in episode_ids:
        ep = batch.get(eid)
        if ep is not None and ep.facts_superseded:
            ep.facts_superseded = False
            batch.put(ep)
