"""Small text helpers shared by the Chinese and English fact rules: clauses, fillers,
questions, first-to-third-person rewriting and the `DerivedFact` constructor."""

from __future__ import annotations

import re

from langmem_plus.processors.facts.derived import DerivedFact, FactKind, FactSubject
from langmem_plus.processors.facts.patterns import (
    CJK_RE,
    CLAUSE_SPLIT_RE,
    EMOJI_RE,
    EN_FILLER_RE,
    EN_Q_RE,
    EN_TAIL_RE,
    ZH_FILLER_RE,
    ZH_Q_RE,
    ZH_TAIL_RE,
)

MAX_TURN_CHARS = 2000


class Clause:
    """One clause of a user turn: its text without fillers, and whether it was asked."""

    __slots__ = ("question", "raw", "text")

    def __init__(self, raw: str, question: bool) -> None:
        self.raw = raw
        self.text = strip_fillers(raw)
        self.question = question or is_question(self.text)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Clause({self.text!r}, q={self.question})"


def normalize(text: str) -> str:
    """The turn with emoji dropped, dashes as commas and spaces collapsed (length capped)."""
    text = EMOJI_RE.sub(" ", text[:MAX_TURN_CHARS])
    text = re.sub(r"\s/s\b", " ", text)
    text = re.sub(r"\s+[—–-]+\s+|——", " ", text)
    text = text.replace("：", "，").replace(": ", ", ")
    return re.sub(r"[ \t]+", " ", text).strip()


def split_clauses(text: str) -> list[Clause]:
    """Clauses of `text`, each marked as a question when '?'/'？' ends it or its form asks."""
    parts = CLAUSE_SPLIT_RE.split(text)
    out: list[Clause] = []
    for i in range(0, len(parts), 2):
        body = parts[i].strip()
        sep = parts[i + 1] if i + 1 < len(parts) else ""
        if body:
            out.append(Clause(body, "?" in sep or "？" in sep))
    return out


def strip_fillers(text: str) -> str:
    """`text` without leading and trailing fillers (嗯, 哈哈, lol, btw, 对了 ...)."""
    prev = None
    while prev != text:
        prev = text
        text = ZH_FILLER_RE.sub("", text).strip()
        text = EN_FILLER_RE.sub("", text).strip()
    text = ZH_TAIL_RE.sub("", text).strip() if CJK_RE.search(text) else text
    return EN_TAIL_RE.sub("", text).strip(" ,~～")


def is_question(text: str) -> bool:
    """Whether a clause asks rather than states (its form, not only its punctuation)."""
    if CJK_RE.search(text):
        if ZH_Q_RE.search(text):
            return True
        return not re.search(r"[A-Za-z]{3,}\s+[A-Za-z]{3,}", text) and text.endswith("吗")
    return bool(EN_Q_RE.match(text))


def zh_third(text: str) -> str:
    """First person to third in a Chinese span (我的 -> 用户的, 给我 -> 给用户)."""
    text = re.sub(r"我们|咱们", "用户团队", text)
    return text.replace("我", "用户")


_EN_PRONOUNS = (
    (r"\bI'm\b", "they're"),
    (r"\bI am\b", "they are"),
    (r"\bI've\b", "they've"),
    (r"\bI'll\b", "they'll"),
    (r"\bI'd\b", "they'd"),
    (r"\bI\b", "they"),
    (r"\bmy\b", "their"),
    (r"\bMy\b", "Their"),
    (r"\bme\b", "them"),
    (r"\bmine\b", "theirs"),
    (r"\bmyself\b", "themselves"),
)


def en_third(text: str) -> str:
    """First person to third in an English span (I -> they, my -> their)."""
    for pat, rep in _EN_PRONOUNS:
        text = re.sub(pat, rep, text)
    return text


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
    taken: list[str] = []
    for c in clauses[start + 1 : start + 1 + limit]:
        t = c.text
        if c.question or not t:
            break
        if zh:
            if re.search(
                r"你|吗|吧|哈|[我他她]们?(?!的)|到时候|好[累困烦]|太\S*了$|打算|准备|计划|想|"
                r"开心|高兴|难过|激动|坏了|死了|哭了|笑死|羡慕|全家",
                t,
            ):
                break
            if len(t) > 24:
                break
        elif (
            re.match(
                r"(?:I|I'm|we|we're|it's|that's|so|but|because|which|and I|ouch|wow|"
                r"everyone|anything|honestly|no idea|keep|remember|please|pls|don't|make|"
                r"tell|let|skip|give|lol)\b",
                t,
                re.I,
            )
            or len(t.split()) > 8
        ):
            break
        taken.append(t)
    return "，".join(taken) if zh else ", ".join(taken)
