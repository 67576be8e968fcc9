"""Episodes are the ground truth, facts are derived from them.

`EpisodeKeeper.keep` stores one exchange verbatim as an episodic memory with its own
`occurred_at`, derives facts from it (a `FactDeriver` when a chat model is configured,
precision-first rules otherwise), records each fact's source episodes, and closes the current
facts that a new one replaces (`valid_to`, `superseded_by`) instead of overwriting them.
A turn that says an earlier statement was wrong, or reports a change, marks the older episode
about the same thing `corrected_by`. The read side is the store's: every search leaves
superseded facts out and ranks such episodes lower (store/seams.py `Validity`). Works over
any LangGraph `BaseStore`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from langgraph.store.base import BaseStore, PutOp

from langmem_plus.config import MemoryConfig
from langmem_plus.episodic.echoes import without_recall_quotes
from langmem_plus.episodic.values import changed_values
from langmem_plus.episodic.versions import FOLLOWS, earlier_episodes
from langmem_plus.model.records import MemoryRecord, utcnow
from langmem_plus.processors.facts.derived import DerivedFact
from langmem_plus.store.hybrid import HybridStore
from langmem_plus.store.plan import DocumentVectors
from langmem_plus.text import extract_symbols

__all__ = [
    "EPISODE_MAX_CHARS",
    "EpisodeKeeper",
    "Kept",
    "Turn",
    "current_only",
    "episode_record",
    "episode_turns",
    "exchanges",
    "is_verbatim",
    "record_of_item",
    "respanned",
    "without_echoes",
]


_LEAD_IN = re.compile(r"[:：]\s*$")


def without_echoes(
    said: Sequence[tuple[dict[str, str], int | None]], recalled: Sequence[str]
) -> list[tuple[dict[str, str], int | None]]:
    """An exchange's turns (with their log ids) less what the replies only repeat of the
    memories they were given: a reply line holding a recalled memory's text adds no evidence
    (after a correction it would restate the old value), nor does a lead-in line left alone
    ("From what I remember:"); a quote of memories recognised by its form goes too, recalled
    or not (`_unquoted`). A reply left empty is dropped; a shortened one loses its log
    id, so the log keeps its own text (nothing said is lost: the log holds every turn)."""
    said = _unquoted(said)
    # each line of a recalled memory (an episode holds several: a reply quotes them one by one)
    marks = [m for m in (_norm(ln) for r in recalled for ln in r.split("\n")) if len(m) >= 4]
    if not marks:
        return list(said)
    out: list[tuple[dict[str, str], int | None]] = []
    for turn, tid in said:
        if turn["role"] != "assistant":
            out.append((turn, tid))
            continue
        lines = turn["text"].split("\n")
        echo = [any(m in _norm(ln) for m in marks) for ln in lines]
        if not any(echo):
            out.append((turn, tid))
            continue
        kept = [
            ln
            for j, ln in enumerate(lines)
            if not echo[j]  # a lead-in to repeated memories goes with them
            and not (_LEAD_IN.search(ln) and j + 1 < len(lines) and echo[j + 1])
        ]
        text = "\n".join(kept).strip()
        if text:
            out.append(({"role": "assistant", "text": text}, None))
    return out


def _unquoted(
    said: Sequence[tuple[dict[str, str], int | None]],
) -> list[tuple[dict[str, str], int | None]]:
    """The turns less what the replies quote of recalled memories by their form alone
    (`echoes.without_recall_quotes`: "From what I remember: - User …")."""
    out: list[tuple[dict[str, str], int | None]] = []
    for turn, tid in said:
        text = turn["text"] if turn["role"] != "assistant" else without_recall_quotes(turn["text"])
        if text == turn["text"]:
            out.append((turn, tid))
        elif text:
            out.append(({"role": turn["role"], "text": text}, None))
    return out


def record_of_item(item: Any) -> MemoryRecord | None:
    """The `MemoryRecord` of a store item, or None when its value is not one."""
    try:
        return MemoryRecord.from_item(item)
    except Exception:
        return None


def current_only(items: Sequence[Any]) -> list[Any]:
    """The items whose value is no superseded fact (for a store that keeps no validity of
    its own: HybridStore's search leaves them out itself)."""
    out = []
    for it in items:
        value = it.value if isinstance(it.value, Mapping) else {}
        if value.get("kind") and (value.get("valid_to") or value.get("superseded_by")):
            continue
        out.append(it)
    return out


REJECTED = "rejected_facts"  # metadata of an episode: facts the user deleted, edited or forgot
EPISODE_IMPORTANCE = 0.6
CHITCHAT_IMPORTANCE = 0.2
_CATEGORY = {"preference": "preference"}
_PUNCT = re.compile(r"[\s\W_]+", re.UNICODE)
_MIN_RESTATED = 6  # characters a known fact must have to count as restated inside a longer one


@dataclass
class Kept:
    """What keeping one exchange did: the episode, the facts made, restated and closed."""

    episode_id: str | None = None
    fact_ids: list[str] = field(default_factory=list)
    restated_ids: list[str] = field(default_factory=list)
    closed_ids: list[str] = field(default_factory=list)
    forgotten_ids: list[str] = field(default_factory=list)  # removed at the user's request
    cost: dict[str, Any] = field(default_factory=dict)

    @property
    def ids(self) -> list[str]:
        """Every id created or changed, the episode first."""
        head = [self.episode_id] if self.episode_id else []
        return list(dict.fromkeys([*head, *self.fact_ids, *self.restated_ids]))


# ---------------------------------------------------------------------------- episodes
def episode_record(
    namespace: tuple[str, ...],
    turns: Sequence[Mapping[str, str]],
    *,
    session_id: str | None,
    occurred_at: datetime,
    turn_ids: Sequence[int] = (),
    chitchat: bool = False,
) -> MemoryRecord:
    """One exchange as an episodic memory: the turns' text verbatim, one line per turn."""
    texts = [str(t["text"]) for t in turns]
    spans, pos = [], 0
    for text in texts:
        spans.append([pos, pos + len(text)])
        pos += len(text) + 1
    meta: dict[str, Any] = {"roles": [str(t["role"]) for t in turns], "spans": spans}
    if chitchat:
        meta["chitchat"] = True
    if turn_ids:
        meta["turn_ids"] = list(turn_ids)
    joined = "\n".join(texts)
    return MemoryRecord(
        namespace=namespace,
        kind="episodic",
        category="episode",
        text=joined,
        who=str(turns[0]["role"]) if turns else "user",
        session_id=session_id,
        symbols=extract_symbols(joined),
        importance=CHITCHAT_IMPORTANCE if chitchat else EPISODE_IMPORTANCE,
        source="user_stated",
        created_at=occurred_at,
        updated_at=occurred_at,
        occurred_at=occurred_at,
        metadata=meta,
    )


def respanned(rec: MemoryRecord) -> MemoryRecord:
    """An episode whose text was edited, its turns read again: one turn a line when the
    lines match its roles, else the whole text as one user turn."""
    roles = rec.metadata.get("roles")
    lines = rec.text.split("\n")
    if not isinstance(roles, list) or len(roles) != len(lines):
        roles, lines = ["user"], [rec.text]
    spans, pos = [], 0
    for line in lines:
        spans.append([pos, pos + len(line)])
        pos += len(line) + 1
    rec.metadata = {**rec.metadata, "roles": [str(r) for r in roles], "spans": spans}
    return rec


def is_verbatim(rec: MemoryRecord) -> bool:
    """An exchange kept as said (ground truth), not a summarised episode."""
    return rec.kind == "episodic" and isinstance(rec.metadata.get("spans"), list)


def episode_turns(rec: MemoryRecord) -> list[dict[str, str]]:
    """The verbatim turns of an episode (role and text), from its text and spans."""
    roles = rec.metadata.get("roles")
    spans = rec.metadata.get("spans")
    if not isinstance(roles, list) or not isinstance(spans, list) or len(roles) != len(spans):
        return [{"role": rec.who, "text": rec.text}]
    return [
        {"role": str(r), "text": rec.text[s[0] : s[1]]} for r, s in zip(roles, spans, strict=True)
    ]


@dataclass(frozen=True)
class Turn:
    """One message as the write driver reads it: who said it, what, when (None: the time
    the caller gives) and its id in the conversation log (None: not logged)."""

    role: str
    text: str
    at: datetime | None = None
    turn_id: int | None = None


EPISODE_MAX_CHARS = 100_000
"""An episode's text at most (a record's text limit): a longer exchange is kept as several."""


def exchanges(turns: Sequence[Turn]) -> list[list[Turn]]:
    """Group turns into exchanges: a user turn (or several in a row) and the replies after
    it. Other roles (tool, system) and blank turns are left out. An exchange longer than
    `EPISODE_MAX_CHARS` goes on in a new one (a longer turn is cut into pieces): nothing said
    is lost. The one grouping of every entry point (`Memory.add`, the middleware, the nodes)."""
    out: list[list[Turn]] = []
    size = 0
    for whole in turns:
        if whole.role not in ("user", "assistant") or not whole.text.strip():
            continue
        for t in _pieces(whole):
            starts = not out or (t.role == "user" and out[-1][-1].role == "assistant")
            if starts or size + len(t.text) + 1 > EPISODE_MAX_CHARS:
                out.append([t])
                size = len(t.text)
            else:
                out[-1].append(t)
                size += len(t.text) + 1
    return out


def _pieces(turn: Turn) -> list[Turn]:
    """A turn, cut into pieces an episode can hold when it is longer than one."""
    if len(turn.text) <= EPISODE_MAX_CHARS:
        return [turn]
    cut = range(0, len(turn.text), EPISODE_MAX_CHARS)
    return [Turn(turn.role, turn.text[i : i + EPISODE_MAX_CHARS], turn.at) for i in cut]


# ---------------------------------------------------------------------------- facts
def _norm(value: str | None) -> str:
    return _PUNCT.sub("", (value or "").lower())


def _same_value(a: MemoryRecord, b: DerivedFact) -> bool:
    old = _norm(a.value if isinstance(a.value, str) else None) or _norm(a.text)
    new = _norm(b.value) or _norm(b.text)
    return bool(old) and bool(new) and (old == new or old in new or new in old)


def fact_record(
    namespace: tuple[str, ...], fact: DerivedFact, episode: MemoryRecord, at: datetime
) -> MemoryRecord:
    """A semantic memory for `fact`, sourced from `episode`, valid from `at`."""
    return MemoryRecord(
        namespace=namespace,
        kind="semantic",
        category=_CATEGORY.get(fact.kind, "fact"),  # type: ignore[arg-type]
        text=fact.text,
        value=fact.value,
        who=fact.subject,
        session_id=episode.session_id,
        symbols=extract_symbols(fact.text),
        confidence=fact.confidence,
        source="user_stated",
        created_at=at,
        updated_at=at,
        occurred_at=at,
        valid_from=at,
        source_ids=[episode.id],
        slot=fact.slot,
        metadata={"fact_kind": fact.kind, "subject": fact.subject},
    )


class EpisodeKeeper:
    """Keeps exchanges as episodes and maintains the facts derived from them."""

    def __init__(self, config: MemoryConfig | None = None, deriver: Any = None) -> None:
        self.config = config or MemoryConfig()
        self.deriver = deriver  # a FactDeriver (model) or None (rules)

    # -------------------------------------------------------------- the write driver
    def keep_turns(
        self,
        store: BaseStore,
        namespace: tuple[str, ...],
        turns: Sequence[Turn],
        *,
        session_id: str | None,
        at: datetime,
        context: str | None = None,
        log: Any = None,
        derive: bool = True,
        recalled: Sequence[str] = (),
        stamp: Callable[[MemoryRecord], MemoryRecord] | None = None,
    ) -> list[Kept]:
        """Keep a conversation's new turns: each exchange (`exchanges`) becomes an episode
        dated by its first turn (else `at`), with its facts derived and the facts they replace
        closed. `context` is the reply the first exchange answers (how an untied correction
        is read); each exchange's last reply is the next one's. `recalled`: the memories the
        reply was given (a reply that repeats them adds no evidence, `without_echoes`).
        `stamp`: applied to every record an exchange creates or restates before its one write
        (`Memory.add`'s metadata). The one write path of `Memory.add`, the middleware and the
        nodes."""
        out: list[Kept] = []
        for ex in exchanges(turns):
            out.append(
                self.keep(
                    store,
                    namespace,
                    [{"role": t.role, "text": t.text} for t in ex],
                    session_id=session_id,
                    occurred_at=ex[0].at or at,
                    context=context,
                    turn_ids=[t.turn_id for t in ex],
                    derive=derive,
                    log=log,
                    recalled=recalled,
                    stamp=stamp,
                )
            )
            replies = [t.text for t in ex if t.role == "assistant"]
            context = replies[-1] if replies else context
        return out

    # -------------------------------------------------------------- write side
    def keep(
        self,
        store: BaseStore,
        namespace: tuple[str, ...],
        turns: Sequence[Mapping[str, str]],
        *,
        session_id: str | None = None,
        occurred_at: datetime | None = None,
        context: str | None = None,
        turn_ids: Sequence[int | None] = (),
        derive: bool = True,
        log: Any = None,
        recalled: Sequence[str] = (),
        stamp: Callable[[MemoryRecord], MemoryRecord] | None = None,
    ) -> Kept:
        """Store the exchange as an episode; with `derive`, add its facts and close old ones.

        `turn_ids` are the exchange's turns in `log` (default: the store's own conversation
        log), one per turn (None: not logged); a log that can (`share_text`) then reads their
        text from the episode. `recalled`: the memories the reply was given; what the reply
        only repeats of them stays in the log, out of the episode (`without_echoes`)."""
        at = occurred_at or utcnow()
        ids = list(turn_ids) or [None] * len(turns)
        said = [
            ({"role": str(t["role"]), "text": str(t["text"])}, ids[i] if i < len(ids) else None)
            for i, t in enumerate(turns)
            if str(t.get("text", "")).strip() and t.get("role") in ("user", "assistant")
        ]
        said = without_echoes(said, recalled)
        dialogue = [d for d, _ in said]
        turn_ids = [i for _, i in said]
        kept = Kept()
        if not dialogue:
            return kept
        facts: list[DerivedFact] = []
        if derive:
            facts, kept.cost = self._derive(store, namespace, dialogue, context)
        episode = episode_record(
            namespace,
            dialogue,
            session_id=session_id,
            occurred_at=at,
            turn_ids=[i for i in turn_ids if i is not None],
            chitchat=derive and not facts and _is_chitchat(dialogue),
        )
        kept.episode_id = episode.id
        writes: dict[tuple[tuple[str, ...], str], MemoryRecord] = {}
        self._take(store, namespace, facts, episode, at, kept, writes)
        if derive and self._corrects(dialogue, facts, context):
            # a change report ("switched to mornings") is read on the user's words alone; only
            # a correction of the reply it answers is read with that reply
            about = context if self._corrects_reply(dialogue, facts, context) else None
            self._correct_older(store, namespace, dialogue, about, episode, kept, writes)
        # the episode's and its new facts' document vectors, in one embedding call: the
        # episode's is the dense side of its earlier-versions search, and the write stores
        # them all (a HybridStore; any other store embeds the search's words and the write)
        embedded = _embed_new(store, namespace, episode, kept, writes) if derive else {}
        docvec = embedded.get((namespace, episode.id))
        if derive:
            self._follow_earlier(
                store, namespace, dialogue, facts, context, episode, kept, writes, docvec
            )
        episode.derived_ids = [*kept.fact_ids, *kept.restated_ids]
        writes[(namespace, episode.id)] = episode
        _stamp(writes, namespace, kept.ids, stamp)
        if log is None:
            log = getattr(store, "conversations", None)
        self._write(
            store,
            writes,
            [(namespace, fid) for fid in kept.forgotten_ids],
            then=lambda: self._share_text(log, namespace, episode, turn_ids),
            new={(namespace, key) for key in (episode.id, *kept.fact_ids)},
            vectors=embedded or None,
        )
        return kept

    def rederive(self, store: BaseStore, namespace: tuple[str, ...], episode: MemoryRecord) -> Kept:
        """Derive the facts of an episode kept before (its text was edited): facts the user
        deleted or edited from it (`metadata.rejected_facts`) are not derived again; the new
        facts close the ones they replace, as when the exchange was first kept."""
        kept = Kept(episode_id=episode.id)
        dialogue = episode_turns(episode)
        facts, kept.cost = self._derive(store, namespace, dialogue, None)
        rejected = {_norm(t) for t in episode.metadata.get("rejected_facts") or ()}
        at = episode.occurred_at or episode.created_at
        writes: dict[tuple[tuple[str, ...], str], MemoryRecord] = {}
        facts = [f for f in facts if f.forget or _norm(f.text) not in rejected]
        self._take(store, namespace, facts, episode, at, kept, writes)
        kept_ids = [*kept.fact_ids, *kept.restated_ids]
        episode.derived_ids = list(dict.fromkeys([*episode.derived_ids, *kept_ids]))
        writes[(namespace, episode.id)] = episode
        self._write(store, writes, [(namespace, fid) for fid in kept.forgotten_ids])
        return kept

    @classmethod
    def _corrects(cls, dialogue: Any, facts: Sequence[DerivedFact], context: str | None) -> bool:
        """The user reports that something changed or was wrong: in so many words, or in a
        fact derived as a correction ("五一不去成都了，改去西安")."""
        from langmem_plus.processors.facts.rules import is_change

        said = " ".join(t["text"] for t in dialogue if t["role"] == "user")
        corrected = any(f.correction for f in facts)
        return corrected or cls._corrects_reply(dialogue, facts, context) or is_change(said)

    def _follow_earlier(
        self,
        store: BaseStore,
        namespace: tuple[str, ...],
        dialogue: Sequence[Mapping[str, str]],
        facts: Sequence[DerivedFact],
        context: str | None,
        episode: MemoryRecord,
        kept: Kept,
        writes: dict[tuple[tuple[str, ...], str], MemoryRecord],
        docvec: DocumentVectors | None = None,
    ) -> None:
        """Note the older exchanges this one is a newer version of (`earlier_episodes`) on
        it (only there: their rows are not rewritten, `versions.later_versions` finds this one
        from theirs); a reported change marks them corrected, written from the records the
        search read: not read again before the write. `docvec`: the episode's document
        vectors (its one indexed text), the search's dense side."""
        changed = self._corrects(dialogue, facts, context)
        earlier = earlier_episodes(
            store,
            namespace,
            episode,
            context,
            corrects_reply=self._corrects_reply(dialogue, facts, context),
            changed=changed,
            query_vector=docvec.vectors[0]
            if docvec is not None and len(docvec.texts) == 1
            else None,
        )
        if not earlier:
            return
        read = {(namespace, rec.id): rec for rec in earlier}
        follows = [rec.id for rec in earlier]
        episode.metadata = {**episode.metadata, FOLLOWS: follows}
        if changed and not episode.metadata.get("corrects"):
            self._correct_followed(store, namespace, episode, kept, follows, read, writes)

    def _correct_followed(
        self,
        store: BaseStore,
        namespace: tuple[str, ...],
        episode: MemoryRecord,
        kept: Kept,
        follows: Sequence[str],
        known: Mapping[tuple[tuple[str, ...], str], MemoryRecord],
        writes: dict[tuple[tuple[str, ...], str], MemoryRecord],
    ) -> None:
        """A change reported about what an earlier exchange said (the one it follows, found
        by `earlier_episodes`) and sharing at least two content words with what the user said
        now, or one word and a value said again different (a date, a time, an amount:
        `values.changed_values`), or the exchange of this conversation whose reply it says
        was wrong: that exchange is corrected by this one, so it is marked and ranked lower
        wherever it is shown. Its facts that state a changed value are closed (and reported
        in `kept.closed_ids`, as every fact a turn closes)."""
        now_said = _user_text(episode)
        said = _content_words(now_said)
        marked = []
        for key in follows:
            old = writes.get((namespace, key)) or known.get((namespace, key))
            if old is None or old.corrected_by is not None or old.kind != "episodic":
                continue
            # an exchange of this conversation is followed only as the one whose reply the
            # turn says was wrong (`versions.earlier_episodes`): it is what the turn corrects
            answered = old.session_id is not None and old.session_id == episode.session_id
            shared = len(said & _content_words(_user_text(old)))
            changed = changed_values(now_said, _user_text(old)) if shared == 1 else set()
            if not answered and shared < 2 and not changed:
                continue  # linked through the reply or in meaning only: too weak to mark
            old.corrected_by = episode.id
            writes[(namespace, old.id)] = old
            marked.append(old.id)
            for fid in old.derived_ids if changed else ():
                fact = writes.get((namespace, fid)) or record_of_item(store.get(namespace, fid))
                if fact is not None and fact.is_current and changed_values(now_said, fact.text):
                    self._close(store, namespace, fact, episode.id, episode.occurred_at, writes)
                    kept.closed_ids.append(fact.id)
        if marked:
            episode.metadata = {**episode.metadata, "corrects": marked}

    @staticmethod
    def _corrects_reply(
        dialogue: Sequence[Mapping[str, str]], facts: Sequence[DerivedFact], context: str | None
    ) -> bool:
        """The user says that something was wrong or is over: an untied correction (read
        against the reply it answers) or one in so many words."""
        from langmem_plus.processors.facts.denial import denies_reply
        from langmem_plus.processors.facts.rules import is_correction

        said = " ".join(t["text"] for t in dialogue if t["role"] == "user")
        untied = context is not None and any(f.correction and f.corrects for f in facts)
        # "lol I never took that one": what the reply assumed does not hold
        denied = bool(context and context.strip()) and denies_reply(said)
        return untied or denied or is_correction(said)

    def _correct_older(
        self,
        store: BaseStore,
        namespace: tuple[str, ...],
        dialogue: Sequence[Mapping[str, str]],
        context: str | None,
        episode: MemoryRecord,
        kept: Kept,
        writes: dict[tuple[tuple[str, ...], str], MemoryRecord],
    ) -> None:
        """A turn that says an earlier statement was wrong, is over, or has changed: the one
        older episode most about the same thing (sharing at least two content words, and not
        itself a replacement) is marked `corrected_by` and ranked lower, and its facts on those
        words are closed; the new episode notes what it replaced (`metadata.corrects`)."""
        said = " ".join(t["text"] for t in dialogue if t["role"] == "user")
        words = _content_words(said) | (_content_words(context) if context else set())
        query = f"{said} {context or ''}"[:2000]
        for it in store.search(namespace, query=query, filter={"kind": "episodic"}, limit=5):
            old = record_of_item(it)
            if old is None or old.id == episode.id or tuple(it.namespace) != namespace:
                continue
            if old.metadata.get("corrects"):
                continue  # it replaced an older statement itself: it holds the value now
            when = old.occurred_at or old.created_at
            user_words = _content_words(
                " ".join(t["text"] for t in episode_turns(old) if t["role"] == "user")
            )
            if when >= (episode.occurred_at or when) or len(words & user_words) < 2:
                continue
            old = writes.get((namespace, old.id), old)
            old.corrected_by = episode.id
            writes[(namespace, old.id)] = old
            episode.metadata = {**episode.metadata, "corrects": [old.id]}
            successor = kept.fact_ids[0] if kept.fact_ids else episode.id
            for fid in old.derived_ids:
                fact = writes.get((namespace, fid))
                if fact is None:
                    item = store.get(namespace, fid)
                    fact = record_of_item(item) if item is not None else None
                if fact is None or not fact.is_current or fact.id in kept.fact_ids:
                    continue
                if len(_content_words(fact.text) & words) >= 2:
                    self._close(store, namespace, fact, successor, episode.occurred_at, writes)
                    kept.closed_ids.append(fact.id)
            return

    @staticmethod
    def _share_text(
        log: Any,
        namespace: tuple[str, ...],
        episode: MemoryRecord,
        turn_ids: Sequence[int | None],
    ) -> None:
        """Logged turns read their text from the episode (one copy of what was said); a turn
        the episode shortened (None) keeps its own."""
        share = getattr(log, "share_text", None)
        spans = episode.metadata.get("spans") or []
        if share is None or len(turn_ids) != len(spans):
            return
        pairs = [(t, s[0], s[1]) for t, s in zip(turn_ids, spans, strict=True) if t is not None]
        if pairs:
            share(namespace, episode.id, pairs)

    def _derive(
        self,
        store: BaseStore,
        namespace: tuple[str, ...],
        dialogue: list[dict[str, str]],
        context: str | None,
    ) -> tuple[list[DerivedFact], dict[str, Any]]:
        from langmem_plus.processors.facts.rules import rule_facts

        if self.deriver is None:
            return rule_facts(dialogue, context=context), {"calls": 0, "fell_back": False}
        user_text = " ".join(t["text"] for t in dialogue if t["role"] == "user")[:2000]
        existing = [
            {"id": r.id, "text": r.text, "slot": r.slot or ""}
            for r in self._current_facts(store, namespace, user_text, limit=8)
        ]
        out = self.deriver.run(dialogue, existing, context=context)
        cost = {
            "calls": out.calls,
            "prompt_tokens": out.prompt_tokens,
            "completion_tokens": out.completion_tokens,
            "fell_back": out.fell_back,
        }
        return list(out.facts), cost

    def _current_facts(
        self, store: BaseStore, namespace: tuple[str, ...], query: str, limit: int
    ) -> list[MemoryRecord]:
        if not query.strip():
            return []
        found = []
        for it in store.search(
            namespace, query=query, filter={"kind": "semantic"}, limit=limit * 2
        ):
            rec = record_of_item(it)
            if rec is not None and rec.is_current and tuple(it.namespace) == namespace:
                found.append(rec)
        return found[:limit]

    def _same_slot(
        self, store: BaseStore, namespace: tuple[str, ...], slot: str
    ) -> list[MemoryRecord]:
        out = []
        for it in store.search(namespace, filter={"kind": "semantic", "slot": slot}, limit=100):
            rec = record_of_item(it)
            if rec is not None and rec.kind == "semantic" and rec.is_current:
                out.append(rec)
        return out

    def _apply(
        self,
        store: BaseStore,
        namespace: tuple[str, ...],
        fact: DerivedFact,
        episode: MemoryRecord,
        at: datetime,
        kept: Kept,
        writes: dict[tuple[tuple[str, ...], str], MemoryRecord],
    ) -> None:
        subject = fact.subject
        olds: dict[str, MemoryRecord] = {}
        if fact.slot:
            for rec in self._same_slot(store, namespace, fact.slot):
                if rec.metadata.get("subject", subject) == subject:
                    olds[rec.id] = writes.get((namespace, rec.id), rec)
        restated = [r for r in olds.values() if r.is_current and _same_value(r, fact)]
        if not restated and not fact.correction:
            restated = self._said_before(store, namespace, fact, writes)
        if restated and not fact.correction:
            rec = restated[0]
            rec.source_ids = list(dict.fromkeys([*rec.source_ids, episode.id]))
            writes[(namespace, rec.id)] = rec
            kept.restated_ids.append(rec.id)
            return
        closing = [r for r in olds.values() if r.is_current and not _same_value(r, fact)]
        closing += self._named_old(store, namespace, fact, olds, writes)
        new = fact_record(namespace, fact, episode, at)
        writes[(namespace, new.id)] = new
        kept.fact_ids.append(new.id)
        for old in {r.id: r for r in closing}.values():
            self._close(store, namespace, old, new.id, at, writes)
            kept.closed_ids.append(old.id)

    def _close(
        self,
        store: BaseStore,
        namespace: tuple[str, ...],
        old: MemoryRecord,
        by: str,
        at: datetime | None,
        writes: dict[tuple[tuple[str, ...], str], MemoryRecord],
    ) -> None:
        """Close `old`: valid until `at`, superseded by the fact (or correcting episode) `by`."""
        at = at or utcnow()
        old.valid_to = max(at, old.valid_from or at)
        old.superseded_by = by
        successor = writes.get((namespace, by))
        old.metadata = {
            **old.metadata,
            "updates": [
                *(old.metadata.get("updates") or []),
                {
                    "event": "SUPERSEDED",
                    "at": at.isoformat(),
                    "by": by,
                    "text": successor.text if successor is not None else None,
                },
            ],
        }
        writes[(namespace, old.id)] = old
        for eid in old.source_ids:
            ep = writes.get((namespace, eid))
            if ep is None:
                item = store.get(namespace, eid)
                ep = record_of_item(item) if item is not None else None
            if ep is None or ep.kind != "episodic":
                continue
            if all(self._closed(store, namespace, fid, writes) for fid in ep.derived_ids):
                ep.facts_superseded = True
                writes[(namespace, ep.id)] = ep

    @staticmethod
    def _closed(
        store: BaseStore,
        namespace: tuple[str, ...],
        fid: str,
        writes: dict[tuple[tuple[str, ...], str], MemoryRecord],
    ) -> bool:
        rec = writes.get((namespace, fid))
        if rec is None:
            item = store.get(namespace, fid)
            rec = record_of_item(item) if item is not None else None
        return rec is None or not rec.is_current

    def _take(
        self,
        store: BaseStore,
        namespace: tuple[str, ...],
        facts: Sequence[DerivedFact],
        episode: MemoryRecord,
        at: datetime,
        kept: Kept,
        writes: dict[tuple[tuple[str, ...], str], MemoryRecord],
    ) -> None:
        """Each derived fact stored (closing what it replaces) or, asked to be forgotten,
        removed (`_forget`)."""
        for fact in facts:
            if fact.forget:
                self._forget(store, namespace, fact, kept, writes)
            else:
                self._apply(store, namespace, fact, episode, at, kept, writes)

    def _named_old(
        self,
        store: BaseStore,
        namespace: tuple[str, ...],
        fact: DerivedFact,
        olds: Mapping[str, MemoryRecord],
        writes: dict[tuple[tuple[str, ...], str], MemoryRecord],
    ) -> list[MemoryRecord]:
        """The current facts `fact` names as replaced: the old value it corrects (`corrects`)
        and the ids it supersedes (`supersedes`, a model's answer)."""
        out = []
        if fact.corrects:
            for rec in self._current_facts(store, namespace, fact.corrects, limit=10):
                if rec.id in olds or _norm(fact.corrects) not in _norm(rec.text):
                    continue
                if rec.slot and fact.slot and rec.slot != fact.slot:
                    continue
                out.append(writes.get((namespace, rec.id), rec))
        for fid in fact.supersedes:
            item = store.get(namespace, fid)
            named = record_of_item(item) if item is not None else None
            if named is not None and named.kind == "semantic" and named.is_current:
                out.append(writes.get((namespace, named.id), named))
        return out

    def _said_before(
        self,
        store: BaseStore,
        namespace: tuple[str, ...],
        fact: DerivedFact,
        writes: dict[tuple[tuple[str, ...], str], MemoryRecord],
    ) -> list[MemoryRecord]:
        """A fact without a slot that a current fact already says, in the same words, in more
        of them, or with an aside added ("用户希望回答都用中文" said again "…，不要中英夹杂"): a
        restatement, not a new fact (the episode keeps the aside)."""
        if fact.slot:
            return []
        said = _norm(fact.text)
        found = []
        for rec in self._current_facts(store, namespace, fact.text, limit=5):
            known = _norm(rec.text)
            if rec.metadata.get("subject", "user") != fact.subject or not said:
                continue
            if said in known or (len(known) >= _MIN_RESTATED and known in said):
                found.append(writes.get((namespace, rec.id), rec))
        return found

    def _forget(
        self,
        store: BaseStore,
        namespace: tuple[str, ...],
        fact: DerivedFact,
        kept: Kept,
        writes: dict[tuple[tuple[str, ...], str], MemoryRecord],
    ) -> None:
        """The user asked to forget `fact`: the current facts that say it (same slot and value,
        or without a slot the same words) are removed, remembered as rejected on the episodes
        they came from (re-deriving those never brings them back), and an episode left with no
        current fact is ranked as superseded. Nothing is stored from the request."""
        if fact.slot:
            found = [
                r
                for r in self._same_slot(store, namespace, fact.slot)
                if r.metadata.get("subject", fact.subject) == fact.subject and _same_value(r, fact)
            ]
        else:
            found = self._said_before(store, namespace, fact, writes)
        for old in found:
            writes.pop((namespace, old.id), None)
            kept.forgotten_ids.append(old.id)
            for eid in old.source_ids:
                ep = writes.get((namespace, eid))
                if ep is None:
                    item = store.get(namespace, eid)
                    ep = record_of_item(item) if item is not None else None
                if ep is None or ep.kind != "episodic":
                    continue
                ep.derived_ids = [f for f in ep.derived_ids if f != old.id]
                rejected = [str(t) for t in ep.metadata.get(REJECTED) or ()]
                ep.metadata = {**ep.metadata, REJECTED: list(dict.fromkeys([*rejected, old.text]))}
                ep.facts_superseded = all(
                    self._closed(store, namespace, f, writes) for f in ep.derived_ids
                )
                writes[(namespace, ep.id)] = ep

    @staticmethod
    def _write(
        store: BaseStore,
        writes: Mapping[tuple[tuple[str, ...], str], MemoryRecord],
        gone: Sequence[tuple[tuple[str, ...], str]] = (),
        then: Callable[[], object] | None = None,
        new: Collection[tuple[tuple[str, ...], str]] = (),
        vectors: Mapping[tuple[tuple[str, ...], str], DocumentVectors] | None = None,
    ) -> None:
        """One write: a new record is dated by the store when it was said (its occurred_at);
        `then` (the turns' text shared with the episode) in the same transaction where the
        store has one (`HybridStore.write_with`), else after it. The records not `new` were
        read from the store and keep their text: their text is not embedded again; `vectors`
        (a HybridStore's `document_vectors` of new records) are stored, not embedded again."""
        ops = [
            *(PutOp(ns, key, rec.to_value()) for (ns, key), rec in writes.items()),
            *(PutOp(ns, key, None) for ns, key in gone),
        ]
        write_with = getattr(store, "write_with", None)
        if then is not None and write_with is not None:
            same = [k for k in writes if k not in new]
            if vectors:
                write_with(ops, then, same_text=same, vectors=vectors)
            else:
                write_with(ops, then, same_text=same)
            return
        store.batch(ops)
        if then is not None:
            then()


def _embed_new(
    store: BaseStore,
    namespace: tuple[str, ...],
    episode: MemoryRecord,
    kept: Kept,
    writes: Mapping[tuple[tuple[str, ...], str], MemoryRecord],
) -> dict[tuple[tuple[str, ...], str], DocumentVectors]:
    """The document vectors of an exchange's new records (its episode, its new facts), in one
    embedding call of a HybridStore; {} for any other store (it embeds them in its write)."""
    if not isinstance(store, HybridStore):
        return {}
    facts = [writes[(namespace, f)] for f in kept.fact_ids if (namespace, f) in writes]
    recs = [episode, *facts]
    got = store.document_vectors([r.to_value() for r in recs])
    return {(namespace, r.id): v for r, v in zip(recs, got, strict=True) if v is not None}


def _stamp(
    writes: dict[tuple[tuple[str, ...], str], MemoryRecord],
    namespace: tuple[str, ...],
    ids: Sequence[str],
    stamp: Callable[[MemoryRecord], MemoryRecord] | None,
) -> None:
    """The records `ids` among `writes`, stamped (`keep_turns`'s `stamp`) before the write."""
    if stamp is not None:
        for key in ids:
            writes[(namespace, key)] = stamp(writes[(namespace, key)])


def _user_text(rec: MemoryRecord) -> str:
    """What the user said in an episode (its user turns)."""
    return " ".join(t["text"] for t in episode_turns(rec) if t["role"] == "user")


def _content_words(text: str | None) -> set[str]:
    """Lower-cased search tokens of `text` without stop words and single characters."""
    from langmem_plus.text import tokenize

    return {t.lower() for t in tokenize(text or "") if len(t) > 1}


def _is_chitchat(dialogue: Sequence[Mapping[str, str]]) -> bool:
    from langmem_plus.text.clauses import is_chitchat

    users = [t["text"] for t in dialogue if t["role"] == "user"]
    return bool(users) and all(is_chitchat(u) for u in users)
