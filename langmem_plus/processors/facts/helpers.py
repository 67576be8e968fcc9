"""Helpers shared by the Chinese and English fact rules: the turn's normal form, the tidy
`DerivedFact` constructor and a statement's continuation clauses. Clauses, fillers, questions
and third-person rewriting are the text layer's (`langmem_plus.text.clauses`, `.person`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from langmem_plus.processors.facts.derived import DerivedFact, FactKind, FactSubject
from langmem_plus.processors.facts.patterns import EMOJI_RE
from langmem_plus.text.clauses import Clause

MAX_TURN_CHARS = 2000


def normalize(text: str) -> str:
    """The turn with emoji dropped, dashes as commas, "pls" as "please" and spaces collapsed
    (length capped)."""
    text = EMOJI_RE.sub(" ", text[:MAX_TURN_CHARS])
    text = re.sub(r"\s/s\b", " ", text)
    text = re.sub(r"\b(?:pls|plz|pleas+e+)\b", "please", text, flags=re.I)  # one spelling
    text = re.sub(r"\s+[—–-]+\s+|——", " ", text)
    text = text.replace("：", "，").replace(": ", ", ")
    return re.sub(r"[ \t]+", " ", text).strip()


def tidy(text: str) -> str:
    """A fact text without dangling punctuation or doubled spaces."""
    text = re.sub(r"\s+", " ", text).strip(" ，,。.!！~～、")
    return re.sub(r"\s+([，,])", r"\1", text)


def fact(
    text: str,
    *,
    kind: FactKind = "fact",
    subject: FactSubject = "user",
    slot: str | None = None,
    value: str | None = None,
    confidence: float = 0.9,
) -> DerivedFact:
    """A `DerivedFact` with its text tidied; `slot` lowercased and spaces as underscores."""
    if slot is not None:
        slot = re.sub(r"\s+", "_", slot.strip().lower())[:80] or None
    if value is not None:  # "Shanghai now" -> "Shanghai": the time of saying is not the value
        value = re.sub(
            r"\s+(?:now|these days|nowadays|at the moment)$", "", value.strip(), flags=re.I
        )
    value = value.strip(" ，,。.") or None if value is not None else None
    return DerivedFact(
        text=tidy(text)[:2000],
        kind=kind,
        subject=subject,
        slot=slot,
        value=value,
        confidence=confidence,
    )


def continuation(clauses: list[Clause], start: int, *, zh: bool, limit: int = 2) -> str:
    """Short descriptive clauses right after `start` that belong to the same statement."""
    taken = continued(clauses, start, zh=zh, limit=limit)
    return "，".join(taken) if zh else ", ".join(taken)


def continued(clauses: list[Clause], start: int, *, zh: bool, limit: int = 2) -> list[str]:
    """The texts of `continuation`'s clauses, one by one."""
    taken: list[str] = []
    for c in clauses[start + 1 : start + 1 + limit]:
        t = c.text
        if c.question or not t or re.match(r"(?:而|并)?不是|not\b", t, re.I):
            break  # "，不是五岁" / ", not July": the value that does not hold
        if re.match(r"(?:so|but|because|所以|但是|不过|因为|可是)\b", c.raw.strip(), re.I):
            break  # ", so homework time is a battle": a consequence is a statement of its own
        if zh:
            if re.search(
                r"你|吗|吧|哈|[我他她]们?(?!的)|到时候|好[累困烦]|^也?太|太\S*了$|打算|准备|计划|想|倒是|忙|"
                r"开心|高兴|难过|激动|坏了|死了|哭了|笑死|羡慕|全家",
                t,
            ):
                break
            if len(t) > 24:
                break
        elif (
            re.match(
                # a new "she ..." is a statement of its own; "he's 7" still says who he is
                r"(?:I|I'm|we|we're|my|it's|that's|so|but|because|which|and I|ouch|wow|"
                r"(?:she|he)(?!'s \d| is \d)|they|they're|"
                r"everyone|anything|honestly|no idea|keep|remember|please|pls|don't|make|"
                r"tell|let|skip|give|lol|proud|happy|glad|excited|sad|worried|nervous|scared|"
                r"stressed|annoyed|yay|omg|can't wait|not looking forward|wish|pray|fingers crossed)\b",
                t,
                re.I,
            )
            or len(t.split()) > 8
        ):
            break
        taken.append(t)
    return taken


def first_rule_facts(
    parts: list[Clause],
    rules: Sequence[Callable[[list[Clause], int, bool], list[DerivedFact] | None]],
    skip: object = None,
) -> list[DerivedFact]:
    """Each clause read by the first of `rules` (except `skip`) that is sure of it: the facts
    a request carries, each clause on its own, in Chinese and in English alike."""
    out: list[DerivedFact] = []
    for k in range(len(parts)):
        for rule in rules:
            if rule is not skip and (found := rule(parts, k, False)):
                out.extend(found)
                break
    return out
