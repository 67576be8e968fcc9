"""Rule-based statement extraction for Chinese and English (the offline knowledge monitor).

`extract_statements(text)` reads one user turn and returns the memory-worthy statements in
it, each with a rule family (preference, personal, plan, code, other_person, state, habit,
event, remember), a category, `who`, a confidence and — for single-valued facts such as a
name or a home town — a slot key. `turn_signals(text)` additionally finds corrections
("不是X是Y", "actually", "I meant"), deletions ("忘掉…", "forget that…", "I no longer…") and
says why a clause is skipped (chitchat, knowledge question, request, fragment).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from langmem_plus.processors._patterns import (
    CHITCHAT_EN,
    CHITCHAT_ZH,
    EN_BARE_FAN,
    EN_BARE_PREF,
    EN_CODE,
    EN_CORR_MARK,
    EN_CORR_PAIR,
    EN_CORR_STRIP,
    EN_DELETE,
    EN_EVENT,
    EN_FORGET,
    EN_FUTURE,
    EN_HABIT,
    EN_ME_FIRST,
    EN_OBSOLETE,
    EN_OTHER,
    EN_OVER,
    EN_PERSONAL,
    EN_PLAN_VERB,
    EN_PREF,
    EN_REL_WHO,
    EN_REMEMBER,
    EN_STATE,
    EN_SYMBOL_WHERE,
    EN_TIME_PREFIX,
    QUESTION_EN,
    QUESTION_ZH,
    REQUEST_EN,
    REQUEST_ZH,
    SLOT_RULES,
    TECH_LEXICON,
    ZH_CODE,
    ZH_CODE_CONT,
    ZH_CORR_MARK,
    ZH_CORR_PAIR,
    ZH_CORR_PAIR_REV,
    ZH_CORR_STRIP,
    ZH_DELETE,
    ZH_EVENT,
    ZH_FUTURE,
    ZH_HABIT,
    ZH_OBSOLETE,
    ZH_OTHER,
    ZH_PERSONAL,
    ZH_PLAN_VERB,
    ZH_PREF,
    ZH_PROJECT_CODE,
    ZH_REL_RE,
    ZH_REL_WHO,
    ZH_REMEMBER,
    ZH_STATE,
    ZH_STYLE,
    ZH_SYMBOL_WHERE,
    ZH_TOPIC_FIRST,
)
from langmem_plus.processors._textutil import (
    clean_clause,
    content_tokens,
    detect_lang,
    split_clauses,
    split_sentences,
    strip_present,
    to_third_person,
)
from langmem_plus.text import extract_symbols

__all__ = [
    "Correction",
    "Deletion",
    "Statement",
    "TurnSignals",
    "extract_statements",
    "is_chitchat",
    "is_question",
    "slot_of",
    "tech_terms",
    "turn_signals",
]


# ------------------------------------------------------------------------ result types
@dataclass
class Statement:
    """A memory-worthy statement read from a user turn."""

    text: str
    family: str
    category: str = "fact"
    who: str = "user"
    confidence: float = 0.8
    slot: str | None = None
    symbols: list[str] = field(default_factory=list)
    lang: str = "en"
    source_clause: str = ""


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


@dataclass
class TurnSignals:
    """Everything the rules read from one user turn."""

    statements: list[Statement] = field(default_factory=list)
    corrections: list[Correction] = field(default_factory=list)
    deletions: list[Deletion] = field(default_factory=list)
    remember: bool = False
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (clause, reason)


# ------------------------------------------------------------------------ classifiers


def is_chitchat(clause: str) -> bool:
    """Greetings, thanks, acknowledgements and small talk with nothing to remember."""
    text = clause.strip()
    return bool(CHITCHAT_ZH.match(text) or CHITCHAT_EN.match(text))


def is_question(clause: str) -> bool:
    """A question or a task request (knowledge questions, 'explain…', '什么是…')."""
    text = clause.strip()
    if detect_lang(text) == "zh":
        return bool(QUESTION_ZH.search(text))
    return bool(QUESTION_EN.search(text))


def tech_terms(text: str) -> list[str]:
    """Technology names in a code-context sentence ("PostgreSQL 15" -> "PostgreSQL")."""
    found: list[str] = []
    for m in re.finditer(r"[A-Za-z][A-Za-z0-9+#.\-]*[A-Za-z0-9+#]|[A-Za-z]", text):
        word = m.group(0)
        low = word.lower()
        if (
            (
                low in TECH_LEXICON
                or (
                    word[0].isupper()
                    and len(word) > 1
                    and (any(c.isupper() for c in word[1:]) or low.endswith(("sql", "db", "js")))
                )
            )
            and word not in found
            and low not in ("i", "user", "the", "i'm")
        ):
            found.append(word)
    return found


# ---------------------------------------------------------------------------- slots


def slot_of(text: str, who: str = "user") -> str | None:
    """The single-valued attribute a statement sets (`who:name`, `who:home`, ...), if any."""
    for name, pattern in SLOT_RULES:
        if pattern.search(text):
            return f"{who}:{name}"
    return None


# ------------------------------------------------------------------------ corrections


def _statement_from_clause(clause: str, *, remember: bool = False) -> Statement | None:
    """Classify one clause into a rule family and render its memory text."""
    text = clean_clause(clause)
    if not text:
        return None
    lang = detect_lang(text)
    if lang == "zh":
        return _zh_statement(text, remember)
    return _en_statement(text, remember)


def _make(
    text: str,
    family: str,
    category: str,
    lang: str,
    *,
    who: str = "user",
    confidence: float = 0.85,
    source: str = "",
    rendered: str | None = None,
) -> Statement:
    if rendered is None and family == "code" and lang == "zh" and not re.search(r"我|咱", text):
        rendered = clean_clause(text)  # "支付回调在 handlers/pay.go 里": the code is the subject
    memory = rendered or to_third_person(text, lang)
    symbols = extract_symbols(text)
    if family == "code":
        for term in tech_terms(text):
            if term not in symbols:
                symbols.append(term)
    slot = slot_of(memory, who) if family in ("personal", "other_person") else None
    return Statement(memory, family, category, who, confidence, slot, symbols, lang, source)


def _zh_statement(text: str, remember: bool) -> Statement | None:
    m = ZH_OTHER.match(text)
    if m and not re.match(r"^(?:我|用户)(?:的)?(?:" + ZH_REL_RE + r")(?:和|跟)(?:我|用户)", text):
        rest = text[m.end() :]
        if len(rest) >= 2:
            who = ZH_REL_WHO[m.group(1)]
            cat = "preference" if re.search(r"喜欢|爱吃|爱喝|讨厌|不吃|不喝|过敏", rest) else "fact"
            return _make(text, "other_person", cat, "zh", who=who, source=text)
    if ZH_CODE.search(text) or ZH_PROJECT_CODE.search(text) or ZH_SYMBOL_WHERE.search(text):
        return _make(text, "code", "fact", "zh", source=text)
    topic = ZH_TOPIC_FIRST.match(text)
    if topic and not re.match(
        r"^(?:我|用户|这|那|它|他|她|什么|啥|哪|" + ZH_FUTURE + r")", topic.group("topic")
    ):
        rest = topic.group("rest")
        if ZH_PREF.search(rest):
            memory = _zh_topic_memory(topic.group("topic"), rest)
            return _make(text, "preference", "preference", "zh", source=text, rendered=memory)
    if ZH_PREF.search(text) or (
        ZH_STYLE.match(text)
        and re.search(
            r"简短|详细|中文|英文|表情|例子|简洁|"
            r"啰嗦|列表|口语",
            text,
        )
    ):
        return _make(text, "preference", "preference", "zh", source=text)
    if ZH_PERSONAL.search(text):
        return _make(text, "personal", "fact", "zh", confidence=0.9, source=text)
    if re.search(ZH_FUTURE, text) and re.search(ZH_PLAN_VERB, text):
        return _make(text, "plan", "fact", "zh", source=text)
    fragment = len(text) < 5 and not re.match(r"^(?:我|用户)", text)
    if ZH_HABIT.search(text) and not fragment:
        return _make(text, "habit", "pattern", "zh", source=text)
    if ZH_STATE.search(text) and not fragment:
        return _make(text, "state", "fact", "zh", confidence=0.7, source=text)
    starts_me = bool(re.match(r"^(?:我|用户)", text)) or bool(
        re.match(r"^(?:" + ZH_FUTURE + r"|今天|昨天|前天|上周|上个月|刚才|去年)(?:我|用户)", text)
    )
    if REQUEST_ZH.match(text):
        return _make(text, "remember", "fact", "zh", confidence=0.7) if remember else None
    if starts_me and ZH_EVENT.search(text) and len(content_tokens(text)) >= 2:
        return _make(text, "event", "fact", "zh", confidence=0.65, source=text)
    if remember and _has_code(text) and not re.match(r"^(?:我|用户)(?!们)", text):
        return _make(text, "code", "fact", "zh", source=text)
    if remember and len(content_tokens(text)) >= 1:
        return _make(text, "remember", "fact", "zh", confidence=0.8, source=text)
    return None


def _zh_topic_memory(topic: str, rest: str) -> str:
    """A preference said topic first, as a memory: "甜食" + "我一般不太碰" -> "用户一般不太碰甜食";
    "咖啡" + "我只喝美式" -> "用户喝咖啡只喝美式"; otherwise "关于电影，用户最喜欢科幻片"."""
    topic = topic.strip()
    if re.search(r"(?:碰|吃|喝|看|听|玩|用|穿|买|喜欢|爱|讨厌|受不了|感冒|来电)$", rest):
        return to_third_person(rest + topic, "zh")
    only = re.search(r"只(喝|吃|用|看|听|穿|买|玩|坐|选)", rest)
    if only:
        return to_third_person("我" + only.group(1) + topic + rest[1:], "zh")
    return f"关于{topic}，" + to_third_person(rest, "zh")


def _has_code(text: str) -> bool:
    """Code symbols or technology names: project content worth remembering as such."""
    return bool(extract_symbols(text) or tech_terms(text))


def _en_subjectless(text: str) -> str | None:
    """A subject-less preference as a first-person clause: "Tea over coffee for me, always"
    -> "I always prefer tea over coffee";
    "Love spicy food" -> "I love spicy food"; "Big fan of jazz" -> "I'm a big fan of jazz"."""
    m = EN_OVER.match(text)
    if m and not re.match(r"^(?:I|I'm|my|we|it|this|that|the|a|an)\b", text, re.I):
        a, b = m.group("a").strip(), m.group("b").strip()
        if len(a.split()) <= 4 and len(b.split()) <= 4:
            if a[:1].isupper() and a[1:2].islower() and a.lower() not in TECH_LEXICON:
                a = a[0].lower() + a[1:]
            always = "always " if m.group("always") else ""
            return f"I {always}prefer {a} over {b}"
    if EN_BARE_PREF.match(text):
        return "I " + text[0].lower() + text[1:]
    if EN_BARE_FAN.match(text):
        low = text[0].lower() + text[1:]
        return "I'm " + re.sub(
            r"^((?:\w+ )*?)(not )?(?:a )?((?:huge |big )?fan of)", r"\1\2a \3", low, flags=re.I
        )
    return None


def _en_statement(text: str, remember: bool) -> Statement | None:
    probe = EN_TIME_PREFIX.sub("", text)
    st = _en_statement_probe(probe, text, remember)
    if st is None:
        rewritten = _en_subjectless(text)
        if rewritten:
            st = _en_statement_probe(rewritten, rewritten, remember)
            if st is not None:
                st.source_clause = text
    return st


def _en_statement_probe(probe: str, text: str, remember: bool) -> Statement | None:
    """Match the rules on `probe` (leading time phrase removed), render `text`."""
    m = EN_OTHER.match(probe)
    if m:
        rest = probe[m.end() :]
        if len(rest.split()) >= 2:
            who = EN_REL_WHO[m.group(1).lower()]
            cat = (
                "preference"
                if re.search(
                    r"\b(?:likes?|loves?|hates?|enjoys?|prefers?|doesn't eat|allergic)\b",
                    rest,
                    re.I,
                )
                else "fact"
            )
            return _make(text, "other_person", cat, "en", who=who, source=text)
    if (EN_CODE.search(probe) and _has_code(probe)) or EN_SYMBOL_WHERE.search(probe):
        return _make(_en_code_subject(text), "code", "fact", "en", source=text)
    if EN_PREF.search(probe) and not re.search(
        r"\b(?:like|love|hate|enjoy)s? (?:it|that|this|them|you|your|to (?:know|ask))\b", text, re.I
    ):
        return _make(text, "preference", "preference", "en", source=text)
    if EN_PERSONAL.search(probe):
        return _make(text, "personal", "fact", "en", confidence=0.9, source=text)
    if (
        re.search(EN_FUTURE, text, re.I)
        and re.search(EN_PLAN_VERB, text, re.I)
        and re.search(r"\b(?:I|I'm|I'll|I've|my|we|we're|we'll|User)\b", text)
    ):
        return _make(text, "plan", "fact", "en", source=text)
    if EN_HABIT.search(probe):
        return _make(text, "habit", "pattern", "en", source=text)
    if EN_STATE.search(probe):
        return _make(text, "state", "fact", "en", confidence=0.7, source=text)
    if REQUEST_EN.match(probe):
        return _make(text, "remember", "fact", "en", confidence=0.7) if remember else None
    if EN_ME_FIRST.match(probe) and EN_EVENT.search(probe) and len(content_tokens(text)) >= 2:
        return _make(text, "event", "fact", "en", confidence=0.65, source=text)
    if remember and _has_code(text) and not EN_ME_FIRST.match(probe):
        return _make(_en_code_subject(text), "code", "fact", "en", source=text)
    if remember and len(content_tokens(text)) >= 1:
        return _make(text, "remember", "fact", "en", confidence=0.8, source=text)
    return None


def _en_code_subject(text: str) -> str:
    text = re.sub(r"^we(?:'re| are)?\s+(?:using|use)\b", "The project uses", text, flags=re.I)
    text = re.sub(r"^we(?:'re| are)?\s+(?:running|run)\b", "The project runs", text, flags=re.I)
    text = re.sub(
        r"^we(?:'re| are)?\s+(?:deploying|deploy)\b", "The project deploys", text, flags=re.I
    )
    text = re.sub(r"^we\s+(migrated|switched|moved)\b", r"The project \1", text, flags=re.I)
    text = re.sub(
        r"^our\s+(project|repo|repository|codebase|app|application|service|backend|frontend|"
        r"api|site|website|server|database|db|stack|pipeline|ci|cluster)\b",
        r"The \1",
        text,
        flags=re.I,
    )
    text = re.sub(r"^our\b", "The project's", text, flags=re.I)
    return text


# --------------------------------------------------------------------------- signals
def _first_statement(text: str) -> Statement | None:
    for clause in split_clauses(text) or [text]:
        statement = _statement_from_clause(clause, remember=True)
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


def _zh_correction(sentence: str) -> Correction | None:
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


def _en_correction(sentence: str) -> Correction | None:
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


def _deletion(clause: str) -> Deletion | None:
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


def turn_signals(text: str) -> TurnSignals:
    """Read one user turn: statements, corrections, deletions, remember requests, skips."""
    signals = TurnSignals()
    if not text or not text.strip():
        return signals
    for sentence in split_sentences(text):
        lang = detect_lang(sentence)
        # "记住 processOrder 在 src/order.ts 里": a Chinese request around English code
        rem = (ZH_REMEMBER if lang == "zh" else EN_REMEMBER).search(sentence) or (
            ZH_REMEMBER if lang != "zh" else EN_REMEMBER
        ).search(sentence)
        remember = bool(rem) and not re.search(
            r"(?:你还?记得|还记得|记得吗|do you remember|you remember|I remember|"
            r"remember when|remember me\?)",
            sentence,
            re.I,
        )
        body = sentence
        if remember and rem:
            body = (sentence[: rem.start()] + " " + sentence[rem.end() :]).strip()
            signals.remember = True
        correct = _zh_correction if lang == "zh" else _en_correction
        forget_request = bool((ZH_DELETE if lang == "zh" else EN_FORGET).search(body))
        if not forget_request:
            corr = correct(body)
            if corr and (corr.statement or corr.old_value or corr.bare):
                signals.corrections.append(corr)
                continue
        for clause in split_clauses(body):
            cleaned = clean_clause(clause)
            if not cleaned:
                continue
            if is_chitchat(cleaned) or is_chitchat(clause):
                signals.skipped.append((clause, "chitchat"))
                continue
            deletion = _deletion(cleaned)
            if deletion and deletion.content:
                signals.deletions.append(deletion)
                continue
            if forget_request:
                corr = correct(clause)
                if corr and corr.statement:
                    signals.corrections.append(corr)
                    continue
            if is_question(clause) and not remember:
                signals.skipped.append((clause, "question"))
                continue
            last = signals.statements[-1] if signals.statements else None
            if (
                last is not None
                and last.family == "code"
                and last.lang == "zh"
                and ZH_CODE_CONT.match(cleaned)
                and last.source_clause
            ):
                # "我们的项目用 PostgreSQL 15，部署在 k8s 上": one subject, one memory
                merged = _statement_from_clause(last.source_clause + "，" + cleaned)
                if merged is not None and merged.family == "code":
                    signals.statements[-1] = merged
                    continue
            statement = _statement_from_clause(cleaned, remember=remember)
            if statement:
                signals.statements.append(statement)
            else:
                reason = "fragment" if len(content_tokens(cleaned)) < 3 else "no-personal-info"
                signals.skipped.append((clause, reason))
    return signals


def extract_statements(text: str) -> list[Statement]:
    """Memory-worthy statements of a user turn (corrections included as plain statements)."""
    signals = turn_signals(text)
    out = list(signals.statements)
    out.extend(c.statement for c in signals.corrections if c.statement)
    return out
