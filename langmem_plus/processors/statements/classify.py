"""Classify one clause into a rule family and render it as a memory `Statement`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from langmem_plus.processors.lexicon import TECH_LEXICON
from langmem_plus.processors.statements.patterns import (
    EN_BARE_FAN,
    EN_BARE_PREF,
    EN_CODE,
    EN_EVENT,
    EN_FUTURE,
    EN_HABIT,
    EN_ME_FIRST,
    EN_OTHER,
    EN_OVER,
    EN_PERSONAL,
    EN_PLAN_VERB,
    EN_PREF,
    EN_REL_WHO,
    EN_STATE,
    EN_SYMBOL_WHERE,
    EN_TIME_PREFIX,
    REQUEST_EN,
    REQUEST_ZH,
    SLOT_RULES,
    ZH_CODE,
    ZH_EVENT,
    ZH_FUTURE,
    ZH_HABIT,
    ZH_OTHER,
    ZH_PERSONAL,
    ZH_PLAN_VERB,
    ZH_PREF,
    ZH_PROJECT_CODE,
    ZH_REL_RE,
    ZH_REL_WHO,
    ZH_STATE,
    ZH_STYLE,
    ZH_SYMBOL_WHERE,
    ZH_TOPIC_FIRST,
)
from langmem_plus.processors.statements.textutil import (
    clean_clause,
    content_tokens,
    detect_lang,
    to_third_person,
)
from langmem_plus.text import extract_symbols

__all__ = ["Statement", "slot_of", "statement_from_clause", "tech_terms"]


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


def statement_from_clause(clause: str, *, remember: bool = False) -> Statement | None:
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
