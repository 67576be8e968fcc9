"""Newer versions of the same thing: a later exchange about what an earlier one said.

People rarely announce that a value changed ("been on a MacBook Air since March", "吉他课挪到
周五晚上了"), so no word list can say when a later statement replaces an earlier one. What
can be seen without words is that a later exchange is about the same thing as an earlier
one. Write side (`earlier_episodes`): when an exchange is kept, the older episodes of the
same user that a search with its user turns finds, and that share at least two content words
with them, are noted on the new episode (`metadata.follows`), and only there: the earlier
row is not rewritten. Read side: the later versions of an episode (`later_versions`) are
found by a lookup over the newer episodes (`HybridStore.followers`, indexed on every
backend); wherever the earlier one is shown, the newer statement is shown with it
(episodic/validity.py). HybridStore's ranker (store/ranking/versions.py) shows the later
first when both are among a search's winners. Works over any LangGraph `BaseStore`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.store.base import BaseStore, GetOp

from langmem_plus.episodic.echoes import without_recall_quotes
from langmem_plus.episodic.lifecycle_base import namespace_items
from langmem_plus.episodic.values import changed_values
from langmem_plus.model.records import MemoryRecord
from langmem_plus.store.hybrid import HybridStore
from langmem_plus.store.ranking.versions import FOLLOWS, FOLLOWS_INDEXED, follows_of
from langmem_plus.text import tokenize
from langmem_plus.text.clauses import split_clauses

__all__ = [
    "FOLLOWS",
    "MAX_FOLLOWS",
    "MAX_LATER",
    "MEANING_EVIDENCE",
    "MIN_SHARED_WORDS",
    "NO_EVIDENCE",
    "asks_only",
    "earlier_episodes",
    "following",
    "later_versions",
]

MAX_FOLLOWS = 1  # earlier episodes noted per exchange: the best match of its search
MAX_LATER = 4  # later versions of an episode read where it is shown (the newest kept)
MIN_SHARED_WORDS = 1  # content words the user turns of both must share (beyond meaning)
_SEARCH = 5
_SAME_SESSION_S = 6 * 3600  # without session ids: turns this close are one conversation
# HybridStore evidence (calibrated against the embedding model's background, so not tied
# to one model) below which a hit matched next to nothing: one shared common word
NO_EVIDENCE = 0.05
# evidence at which a change report is linked to an older episode without a shared word
MEANING_EVIDENCE = 0.2
_CHANGE_CLAUSES = 2  # clauses of one exchange that report a change, searched on their own
CLAUSE_FOLLOWS = 2  # earlier episodes noted per such clause


def _record(item: Any) -> MemoryRecord | None:
    try:
        return MemoryRecord.from_item(item)
    except Exception:
        return None


def _user_turns(rec: MemoryRecord) -> list[str]:
    """The user turns of an episode, from the turns' spans (its text, without them)."""
    roles, spans = rec.metadata.get("roles"), rec.metadata.get("spans")
    if not isinstance(roles, list) or not isinstance(spans, list) or len(roles) != len(spans):
        return [rec.text] if rec.who == "user" else []
    return [rec.text[s[0] : s[1]] for r, s in zip(roles, spans, strict=True) if r == "user"]


def _user_said(rec: MemoryRecord) -> str:
    """What the user said in an episode (its user turns)."""
    return " ".join(_user_turns(rec))


def asks_only(turns: list[str]) -> bool:
    """Whether every one of the user's turns (at least one) is a question: such an exchange
    states nothing newer about what it follows."""
    users = [t.strip() for t in turns]
    return bool(users) and all(u.endswith(("?", "？")) for u in users)


def following(store: BaseStore, namespace: tuple[str, ...], key: str) -> list[MemoryRecord]:
    """The episodes whose `follows` names episode `key`, in the order they were kept.
    HybridStore finds them with one index lookup (`followers`); another BaseStore keeps no
    index of the links, so its namespace is read whole."""
    if isinstance(store, HybridStore):
        keys = store.followers(namespace, [key]).get(key, [])
        items = store.batch([GetOp(namespace, k) for k in keys]) if keys else []
    else:
        items = [
            it
            for it in namespace_items(store, namespace)
            if key in follows_of(it.value)[:FOLLOWS_INDEXED]
        ]
    return [r for r in map(_record, items) if r is not None and r.kind == "episodic"]


def later_versions(store: BaseStore, namespace: tuple[str, ...], key: str) -> list[MemoryRecord]:
    """The later exchanges noted as newer versions of episode `key` (`following`) that state
    something (not questions only), the newest `MAX_LATER`, in the order they were kept."""
    found = following(store, namespace, key)
    return [r for r in found if not asks_only(_user_turns(r))][-MAX_LATER:]


def _words(text: str) -> set[str]:
    return {t.lower() for t in tokenize(text) if len(t) > 1}


def earlier_episodes(
    store: BaseStore,
    namespace: tuple[str, ...],
    episode: MemoryRecord,
    context: str | None = None,
    *,
    corrects_reply: bool = False,
    changed: bool = False,
    query_vector: Any = None,
) -> list[MemoryRecord]:
    """The older episodes in `namespace` most about what `episode`'s user turns say, as
    the search read them (the write side links them without reading them again).

    Found by a search with those turns alone, then (when that finds none) with `context`
    too (the reply they answer, which names what an untied "nope, she moved" is about): a
    user who names their own subject is not about the previous topic of the conversation.
    Kept when said in an earlier conversation and sharing at least `MIN_SHARED_WORDS`
    content words with what the user said now (with `corrects_reply`, the search with the
    reply may share them with the reply: "ha no, I sold that thing" is about the Trek the
    reply named); the best `MAX_FOLLOWS`, best first. With
    `corrects_reply` (the turn says the reply it answers was wrong), the exchange that
    holds that reply is followed too, even within the conversation: the correction is a
    newer version of what that reply said. With `changed` (the turn says a value changed
    or was wrong: "换了iPhone 15", which shares no word with "我现在用的是小米13"), an older
    episode its words alone find is kept without a shared word when it matches in meaning
    (evidence at least `MEANING_EVIDENCE`); and when the change is one clause of a turn
    about several things ("朵朵开放日去了，…，这阵子我都骑电动车上班，…"), that clause is
    searched on its own too, so the older episode about what changed is followed beside
    the best match of the whole turn. `query_vector` (a HybridStore only: the episode's own
    document vector, which its write stores) is the dense side of the search with the
    user's turns, whose words stay its keyword side: no second embedding."""
    said = _user_said(episode)
    answered: list[MemoryRecord] = []
    if corrects_reply and context and context.strip():
        found = _answered(store, namespace, episode, context.strip())
        answered = [found] if found is not None else []
    clauses: list[MemoryRecord] = []
    for clause in _change_clauses(said) if changed else ():
        clauses += _best_earlier(
            store, namespace, episode, clause, _words(clause), MEANING_EVIDENCE, most=CLAUSE_FOLLOWS
        )
    whole = _whole_turn(store, namespace, episode, context, corrects_reply, changed, query_vector)
    # the store finds a later version by its first `FOLLOWS_INDEXED`: the reply it corrects,
    # then what a clause says changed, then the whole turn's best
    out: dict[str, MemoryRecord] = {}
    for rec in [*answered, *clauses, *whole]:
        out.setdefault(rec.id, rec)
    return list(out.values())[:FOLLOWS_INDEXED]


def _whole_turn(
    store: BaseStore,
    namespace: tuple[str, ...],
    episode: MemoryRecord,
    context: str | None,
    corrects_reply: bool,
    changed: bool,
    query_vector: Any,
) -> list[MemoryRecord]:
    """The older episodes the search with `episode`'s user turns finds (then, when it finds
    none, the search with `context` too), as `earlier_episodes` describes."""
    said = _user_said(episode)
    words = _words(said)
    if len(words) < MIN_SHARED_WORDS:
        return []
    queries = [said[:2000]] + ([f"{said} {context}"[:2000]] if context else [])
    for n, query in enumerate(queries):
        meaning = MEANING_EVIDENCE if changed and n == 0 else None
        # a turn that says the reply was wrong is about what that reply named ("the Trek")
        shared = words | _words(context) if n == 1 and corrects_reply and context else words
        vec = query_vector if n == 0 else None
        out = _best_earlier(store, namespace, episode, query, shared, meaning, vec)
        if out:
            return out
    return []


def _change_clauses(said: str) -> list[str]:
    """The clauses of `said` that report a change (at most `_CHANGE_CLAUSES`), when it has
    more than one clause; none when the whole of it is the one change."""
    from langmem_plus.processors.facts.rules import is_change

    clauses = [c.text for c in split_clauses(said) if not c.question and c.text]
    if len(clauses) < 2:
        return []
    return [c for c in clauses if is_change(c)][:_CHANGE_CLAUSES]


def _best_earlier(
    store: BaseStore,
    namespace: tuple[str, ...],
    episode: MemoryRecord,
    query: str,
    words: set[str],
    meaning: float | None = None,
    vector: Any = None,
    most: int = MAX_FOLLOWS,
) -> list[MemoryRecord]:
    """The best `most` older episodes of other conversations a search with `query`
    finds that share `MIN_SHARED_WORDS` of `words` with what the user said there, in the
    search's order, except that one with next to no evidence of its own (HybridStore's
    `components["evidence"]` under `NO_EVIDENCE`: a shared common word, no match in
    meaning) comes after those with some; a store that gives no evidence keeps its order.
    Beside them, the best other one where `episode`'s user says again, different, a value
    of a form said there (a date, a time, an amount: `values.changed_values`)."""
    when = episode.occurred_at or episode.created_at
    found: list[tuple[float, int, MemoryRecord]] = []
    flt = {"kind": "episodic"}
    hits: Sequence[Any]
    if vector is not None and isinstance(store, HybridStore):
        hits = store.search(namespace, query=query, filter=flt, limit=_SEARCH, query_vector=vector)
    else:
        hits = store.search(namespace, query=query, filter=flt, limit=_SEARCH)
    for n, it in enumerate(hits):
        old = _record(it)
        if old is None or old.id == episode.id or tuple(it.namespace) != namespace:
            continue
        if (old.occurred_at or old.created_at) >= when or _same_session(old, episode):
            continue
        shared = len(words & _words(_user_said(old))) >= MIN_SHARED_WORDS
        if shared or (meaning is not None and _evidence(it, 0.0) >= meaning):
            found.append((float(_evidence(it) < NO_EVIDENCE), n, old))
    ranked = [rec for _, _, rec in sorted(found, key=lambda f: f[:2])]
    best = ranked[:most]
    # one more: the best of the rest that holds a value of a form the query says again,
    # different ("签了一年，四千五" after "房租每月四千二"): what that value was before
    said = _user_said(episode)
    more = [r for r in ranked[most:] if changed_values(said, _user_said(r))]
    return best + more[:1]


def _evidence(item: Any, unknown: float = 1.0) -> float:
    """A hit's own evidence (`unknown` from a store that gives none)."""
    comps = getattr(item, "components", None)
    value = comps.get("evidence") if isinstance(comps, dict) else None
    return float(value) if isinstance(value, (int, float)) else unknown


def _answered(
    store: BaseStore, namespace: tuple[str, ...], episode: MemoryRecord, reply: str
) -> MemoryRecord | None:
    """The older exchange of `episode`'s conversation whose text holds `reply`, if found."""
    when = episode.occurred_at or episode.created_at
    for it in store.search(
        namespace, query=reply[:2000], filter={"kind": "episodic"}, limit=_SEARCH
    ):
        old = _record(it)
        if old is None or old.id == episode.id or tuple(it.namespace) != namespace:
            continue
        said_before = (old.occurred_at or old.created_at) <= when
        # the episode keeps the reply less what it quoted of recalled memories
        held = reply in old.text or without_recall_quotes(reply) in old.text
        if said_before and _same_session(old, episode) and held:
            return old
    return None


def _same_session(a: MemoryRecord, b: MemoryRecord) -> bool:
    """Said in one conversation: a later turn there continues, it is not a new version."""
    if a.session_id is not None and b.session_id is not None:
        return a.session_id == b.session_id
    ta, tb = a.occurred_at or a.created_at, b.occurred_at or b.created_at
    return abs((tb - ta).total_seconds()) < _SAME_SESSION_S
