"""Corrections ("不是X是Y", "actually", "I meant") and deletions ("忘掉…", "forget that…",
"I no longer…") read from one sentence or clause of a user turn."""

from __future__ import annotations

import re
from dataclasses import dataclass

from langmem_plus.processors.statements.classify import Statement, statement_from_clause
from langmem_plus.processors.statements.patterns import (
    EN_CORR_MARK,
    EN_CORR_PAIR,
    EN_CORR_STRIP,
    EN_DELETE,
    EN_OBSOLETE,
    ZH_CORR_MARK,
    ZH_CORR_PAIR,
    ZH_CORR_PAIR_REV,
    ZH_CORR_STRIP,
    ZH_DELETE,
    ZH_OBSOLETE,
)
from langmem_plus.processors.statements.textutil import (
    clean_clause,
    detect_lang,
    split_clauses,
    strip_present,
)

__all__ = ["Correction", "Deletion", "en_correction", "find_deletion", "zh_correction"]


@dataclass
class Correction:
    """A correction: the new statement, plus the replaced value when the turn names it.

    `new_clause` is the corrected clause without markers and present-time adverbs ("I live in
    Shanghai"); the monitor reads the new value out of it where the stored memory held the
    old one. `bare` marks "I meant Shanghai" / "我是说上海": a value without a predicate."""

    statement: Statement | None
    old_value: str | None
    new_value: str | None
    clause: str
    new_clause: str | None = None
    bare: bool = False


@dataclass
class Deletion:
    """A request to forget, or a statement that a fact no longer holds."""

    content: str
    strong: bool
    clause: str
    lang: str


def _first_statement(text: str) -> Statement | None:
    """The first clause of `text` that reads as a statement."""
    for clause in split_clauses(text) or [text]:
        statement = statement_from_clause(clause, remember=True)
        if statement:
            return statement
    return None


def _bare_value(cleaned: str, statement: Statement | None, lang: str) -> str | None:
    """The corrected value of a predicate-less correction ("上海" out of "我是说上海",
    "Shanghai" out of "I meant Shanghai"); None when the clause says more than a value."""
    value = clean_clause(cleaned)
    if not value or (statement is not None and statement.family != "remember"):
        return None
    if lang == "zh":
        ok = len(value) <= 12 and not re.search(r"我|用户|你", value)
    else:
        ok = len(value.split()) <= 4 and not re.search(
            r"\b(?:I|I'm|my|me|we|our|you|your)\b", value, re.I
        )
    return value if ok else None


def zh_correction(sentence: str) -> Correction | None:
    """The correction a Chinese sentence makes ("不是X是Y", "我是说…"), or None."""
    sentence = sentence.strip().rstrip("。！!.…~～ ")
    pair = ZH_CORR_PAIR.search(sentence) or ZH_CORR_PAIR_REV.search(sentence)
    if not pair and not ZH_CORR_MARK.search(sentence):
        return None
    old = pair.group("old").strip() if pair else None
    new = pair.group("new").strip() if pair else None
    # "现在 / 目前" in a correction says the fact is current, it is not part of the fact
    cleaned = strip_present(ZH_CORR_STRIP.sub("", sentence), "zh")
    if pair:
        # keep the subject before "不是" and the new value: "我不是住上海，是住杭州" -> "我住杭州"
        head = cleaned[: cleaned.find("不是")] if "不是" in cleaned else ""
        if ZH_CORR_PAIR_REV.search(sentence) and not ZH_CORR_PAIR.search(sentence):
            cleaned = re.sub(r"[，,]\s*(?:而)?不是.*$", "", cleaned)
            new = clean_clause(cleaned) or new  # "其实我现在住在上海" -> "我住在上海"
        else:
            cleaned = head + (new or "")
    statement = _first_statement(cleaned)
    bare = _bare_value(cleaned, statement, "zh") if not pair else None
    if bare:
        return Correction(None, None, bare, sentence, new_clause=bare, bare=True)
    return Correction(statement, old, new, sentence, new_clause=clean_clause(cleaned) or None)


def en_correction(sentence: str) -> Correction | None:
    """The correction an English sentence makes ("actually…", "X, not Y", "I meant…"), or None."""
    body = strip_present(sentence.rstrip(".!"), "en")
    pair = EN_CORR_PAIR.search(body)
    if not EN_CORR_MARK.search(sentence) and not (
        pair and re.search(r"\b(?:I|my|I'm)\b", sentence)
    ):
        return None
    old = new = None
    cleaned = EN_CORR_STRIP.sub("", body).strip(" ,")
    if pair:
        old = (pair.group("old") or pair.group("old2") or "").strip() or None
        new = (pair.group("new") or pair.group("new2") or "").strip() or None
        cleaned = re.sub(r",?\s+not [\w .'-]{1,40}$", "", cleaned.rstrip(".!"))
        cleaned = re.sub(r"\bnot ([\w .'-]{1,40}?),? but\s+", "", cleaned)
    statement = _first_statement(cleaned)
    if not pair:
        bare = _bare_value(cleaned, statement, "en")
        if bare:
            return Correction(None, None, bare, sentence, new_clause=bare, bare=True)
    if new and old:
        # "my birthday is May 13, not May 3": the new value is the tail as long as the old one
        # (the monitor first reads it out of `new_clause` where the memory holds the old one)
        words = new.split()
        width = len(old.split())
        if len(words) > width:
            new = " ".join(words[-width:])
    return Correction(statement, old, new, sentence, new_clause=cleaned.strip(" ,.!") or None)


def find_deletion(clause: str) -> Deletion | None:
    """A request to forget ("忘掉…", "forget that…") or a fact that no longer holds, or None."""
    lang = detect_lang(clause)
    if lang == "zh":
        m = ZH_DELETE.search(clause)
        if (
            m
            and not re.search(r"我(?:忘|忘记)", clause[: m.end()])
            and (re.search(r"记忆|那条|这条|这件事|的事|关于|我", clause) or m.start() == 0)
        ):
            content = ZH_DELETE.sub("", clause)
            content = re.sub(
                r"(?:那条|这条|这个|那个)?(?:关于)?|(?:的)?(?:记忆|事情|这件事|那件事|信息|记录)|吧$",
                "",
                content,
            )
            return Deletion(content.strip("，,。 "), True, clause, lang)
        m = ZH_OBSOLETE.search(clause)
        if m:
            strong = not m.group(0).startswith(("现在", "如今", "目前")) and not re.fullmatch(
                r"不.{1,8}了", m.group(0)
            )
            content = clause[m.end() :] if not m.group(0).endswith("了") else m.group(0)[1:-1]
            if m.group(0).endswith("了") and len(m.group(0)) > 2:
                content = m.group(0)[1:-1]
            content = re.sub(r"了$", "", content)
            return Deletion(content.strip("，,。 "), strong, clause, lang)
        return None
    m = EN_DELETE.search(clause)
    if (
        m
        and not re.search(
            r"\bI (?:forgot|forget)\b|\bdon't forget\b|\bdo not forget\b", clause, re.I
        )
        and re.search(r"\b(?:forget|delete|remove|erase)\b", clause, re.I)
    ):
        content = clause[m.end() :]
        content = re.sub(r"\b(?:please|it|memory|that)\b", "", content, flags=re.I)
        return Deletion(content.strip(" ,.!"), True, clause, lang)
    m = EN_OBSOLETE.search(clause)
    if m:
        content = re.sub(
            r"\b(?:no longer|anymore|any more|not anymore|stopped|quit|don't|doesn't|do not|"
            r"am not|I'm not|I|I've|have)\b",
            " ",
            clause,
            flags=re.I,
        )
        return Deletion(re.sub(r"\s+", " ", content).strip(" ,.!"), True, clause, lang)
    return None
