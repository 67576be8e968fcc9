"""Per-turn analysis: the working memory's topic / context variables / emotion,
code symbols for the symbol index, and the editable user profile."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langmem_plus.errors import ValidationError
from langmem_plus.model.records import UserProfile, utcnow
from langmem_plus.processors import prompts
from langmem_plus.processors.facts.patterns import EN_REMEMBER_RE, ZH_REMEMBER_RE
from langmem_plus.processors.facts.rules import rule_facts
from langmem_plus.processors.lexicon import tech_terms
from langmem_plus.processors.model.base import BaseProcessor, normalize_turns
from langmem_plus.processors.schemas import ProfileUpdateOut, SymbolInfo, SymbolsOut, TurnAnalysis
from langmem_plus.processors.summarizer import keywords
from langmem_plus.text import extract_symbols
from langmem_plus.text.clauses import split_clauses, split_sentences, strip_fillers
from langmem_plus.text.person import en_third, zh_third
from langmem_plus.text.scripts import CJK, CJK_RE, detect_lang
from langmem_plus.text.symbols import symbol_kind

__all__ = ["ProfileWriter", "SymbolExtractor", "TurnAnalyzer"]

_EMOTIONS: list[tuple[str, re.Pattern[str]]] = [
    ("anxious", re.compile(r"紧张|焦虑|担心|害怕|不安|慌|压力|\bnervous\b|\banxious\b|\bworried\b|"
                           r"\bstressed\b|\bscared\b|\bafraid\b|\bpanic", re.I)),
    ("angry", re.compile(r"生气|气死|愤怒|火大|烦死|\bangry\b|\bfurious\b|\bpissed\b|\bannoyed\b", re.I)),
    ("frustrated", re.compile(r"郁闷|崩溃|搞不定|受够|无语|\bfrustrat|\bstuck\b|\bugh\b|"
                              r"\bdoesn't work\b|\bnot working\b", re.I)),
    ("sad", re.compile(r"难过|伤心|哭|失落|沮丧|心情不好|抑郁|\bsad\b|\bdepressed\b|\bupset\b|"
                       r"\bheartbroken\b|\bcry", re.I)),
    ("tired", re.compile(r"累|疲惫|困|没精神|熬夜|\btired\b|\bexhausted\b|\bsleepy\b|\bburn(?:ed|t) out\b",
                         re.I)),
    ("excited", re.compile(r"兴奋|激动|期待|太棒|\bexcited\b|\bcan't wait\b|\bthrilled\b|!{2,}", re.I)),
    ("grateful", re.compile(r"谢谢|感谢|多谢|\bthanks?\b|\bthank you\b|\bgrateful\b|\bappreciate", re.I)),
    ("happy", re.compile(r"开心|高兴|快乐|哈哈|幸福|\bhappy\b|\bglad\b|\bgreat\b|\bawesome\b|\blove it\b|"
                         r"😀|😄|😊", re.I)),
    ("relaxed", re.compile(r"放松|轻松|悠闲|舒服|\brelaxed\b|\bcalm\b|\bchill\b", re.I)),
]  # fmt: skip

_ZH_TIME = re.compile(
    r"(?:今天|明天|后天|昨天|前天|今晚|明晚|下周[一二三四五六日天末]?|上周[一二三四五六日天末]?|"
    r"下个?月|周[一二三四五六日末]|星期[一二三四五六日天]|\d{1,2}月\d{1,2}[日号]|\d{1,2}点(?:\d{1,2}分|半)?)"
)
_EN_TIME = re.compile(
    r"\b(?:today|tomorrow|tonight|yesterday|next (?:week|month|year|monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday)|last (?:week|month|night|year)|on (?:monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday)|at \d{1,2}(?::\d\d)?\s?(?:am|pm)?|"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* \d{1,2}(?:st|nd|rd|th)?)\b",
    re.I,
)
_ZH_PLACE = re.compile(
    rf"(?:在|去|到|住在|来自)([{CJK}]{{2,6}}?)(?:的|工作|上班|出差|玩|旅游|开会|参加|见|吃|上学|读书|[，,。]|$)"
)
_EN_PLACE = re.compile(r"\b(?:in|to|at|from) ((?:[A-Z][a-z]+)(?: [A-Z][a-z]+)?)\b")


def _rule_analysis(text: str) -> TurnAnalysis:
    symbols = extract_symbols(text)
    topics = symbols[:3] or keywords([text], limit=3)
    lang = detect_lang(text)
    topic = ("、" if lang == "zh" else ", ").join(topics)
    variables: dict[str, str] = {}
    times = (_ZH_TIME if lang == "zh" else _EN_TIME).findall(text)
    if times:
        variables["time"] = times[0]
    place = (_ZH_PLACE if lang == "zh" else _EN_PLACE).search(text)
    if place:
        variables["place"] = place.group(1)
    for sym in symbols:
        key = {"path": "file", "error": "error"}.get(symbol_kind(sym), "symbol")
        variables.setdefault(key, sym)
    for fact in rule_facts([{"role": "user", "text": text}]):
        if fact.slot in ("user.name", "user.preferred_name") and fact.value:
            variables["user_name"] = fact.value
    lead = strip_fillers(text)
    if any(c.question for c in split_clauses(text)):
        variables["intent"] = "question"
    elif ZH_REMEMBER_RE.match(lead) or EN_REMEMBER_RE.match(lead):
        variables["intent"] = "remember"
    emotion = "neutral"
    for label, pattern in _EMOTIONS:
        if pattern.search(text):
            emotion = label
            break
    return TurnAnalysis(topic=topic, context_variables=variables, emotion=emotion)


class TurnAnalyzer(BaseProcessor):
    """Reads one user turn into the working memory's topic, variables and emotion."""

    def analyze(self, text: str) -> TurnAnalysis:
        """`TurnAnalysis(topic, context_variables, emotion)` of one user message."""
        if not isinstance(text, str):
            raise ValidationError("text must be a string")
        if self.llm is not None and text.strip():
            out = self.llm.call(
                TurnAnalysis, prompts.TURN_ANALYZER_PROMPT, prompts.render_text("message", text)
            )
            if out is not None:
                return out
        return _rule_analysis(text)


def _rule_symbols(text: str) -> list[SymbolInfo]:
    out: list[SymbolInfo] = []
    sentences = split_sentences(text) or [text]

    def context_of(name: str) -> str:
        for s in sentences:
            if name in s:
                return s.strip()[:200]
        return ""

    for sym in extract_symbols(text):
        kind = symbol_kind(sym)
        out.append(
            SymbolInfo(
                name=sym,
                kind=kind if kind in ("function", "class", "path", "error") else "function",
                context=context_of(sym),
            )
        )
    names = {s.name for s in out}
    for term in tech_terms(text):
        if term not in names and not any(term in n for n in names):
            out.append(SymbolInfo(name=term, kind="technology", context=context_of(term)))
    return out


class SymbolExtractor(BaseProcessor):
    """Functions, classes, paths, error types and technologies for the symbol index."""

    def extract(self, text: str) -> list[SymbolInfo]:
        """Symbols of `text` with kind and context; the model only adds to what rules find."""
        if not isinstance(text, str):
            raise ValidationError("text must be a string")
        found = _rule_symbols(text)
        if self.llm is not None and text.strip():
            out = self.llm.call(
                SymbolsOut, prompts.SYMBOL_PROMPT, prompts.render_text("text", text)
            )
            if out is not None:
                names = {s.name for s in found}
                found += [s for s in out.symbols if s.name not in names and s.name in text]
        return found


# ------------------------------------------------------------------------------ profile
_STYLE_ZH = re.compile(
    r"(?:回答|回复|说话|解释)[^。！？]{0,12}(?:简短|简洁|详细|具体|通俗|口语|正式|幽默)|"
    r"(?:用|说)(?:中文|英文|英语)(?:回答|回复|交流)|(?:别|不要)用(?:表情|emoji|术语)|"
    r"多举(?:点)?例子|(?:列表|要点)(?:形式)?(?:回答|列出)|少说废话|直接给(?:答案|代码)"
)
_STYLE_EN = re.compile(
    r"\b(?:keep|make) (?:your |the )?(?:answers?|repl(?:y|ies)|responses?)\b.*|"
    r"\b(?:reply|answer|respond|talk to me) in \w+|\bno emojis?\b|"
    r"\b(?:don't|do not) use (?:emojis?|jargon)\b|\buse bullet points\b|"
    r"\bbe (?:concise|brief|more detailed|direct)\b|\bmore examples\b|"
    r"\bprefer (?:short|brief|detailed|concise) (?:answers|replies|responses)\b|"
    r"\bjust (?:give|show) me the code\b",
    re.I,
)
_SECTION_LIMIT = 300
_BACKGROUND_LIMIT = 600
_MAJORITY = 0.7  # share of the user's turns in one language that makes it their habit


def _append(section: str, sentence: str, lang: str) -> str:
    sentence = sentence.strip()
    if not sentence or sentence in section:
        return section
    sep = "；" if lang == "zh" else "; "
    parts = [p for p in re.split(r"[；;]\s*", section) if p.strip()] + [sentence]
    text = sep.join(parts)
    while len(text) > _SECTION_LIMIT and len(parts) > 1:
        parts.pop(0)  # the oldest note leaves first
        text = sep.join(parts)
    return text[:_SECTION_LIMIT]


_ASKED_ZH = re.compile(r"^(?:请|希望|麻烦|以后|今后|你)+")
_ASKED_EN = re.compile(r"^(?:please|from now on|going forward)[,\s]+", re.I)


def _style_note(clause: str, lang: str) -> str:
    """What a clause asks of replies, said of the user ("请回答简短一点" -> "用户希望回答简短一点")."""
    if lang == "zh":
        return "用户希望" + zh_third(_ASKED_ZH.sub("", clause))
    return "User wants: " + en_third(_ASKED_EN.sub("", clause))


def _rule_style(style: str, users: list[str]) -> str:
    """The reply-style section with what the user's turns ask of replies added."""
    for text in users:
        for clause in split_clauses(text):
            lang = detect_lang(clause.text)
            if (_STYLE_ZH if lang == "zh" else _STYLE_EN).search(clause.text):
                style = _append(style, _style_note(clause.text, lang), lang)
    return style


def language_of(text: str) -> str | None:
    """The language of one user turn: "zh", "en", "mixed", or None (no words)."""
    cjk = len(CJK_RE.findall(text))
    latin = len(re.findall(r"[A-Za-z]{2,}", text))
    if cjk == 0 and latin == 0:
        return None
    if cjk and latin >= 3:
        return "mixed"
    return "zh" if cjk else "en"


def tallied(counts: dict[str, int], users: list[str]) -> dict[str, int]:
    """The running tally of the user's turns by language, with `users` counted in."""
    out = dict(counts)
    for text in users:
        lang = language_of(text)
        if lang is not None:
            out[lang] = out.get(lang, 0) + 1
    return out


def habits_note(counts: dict[str, int]) -> str:
    """The language habit the tally shows: one language in at least 70 % of the turns, else
    mixed (said in the language the user uses more); "" before any turn was counted."""
    zh, en, mixed = counts.get("zh", 0), counts.get("en", 0), counts.get("mixed", 0)
    total = zh + en + mixed
    if total == 0:
        return ""
    if zh >= _MAJORITY * total:
        return "主要使用中文"
    if en >= _MAJORITY * total:
        return "Writes in English"
    return "中英文混用" if zh + mixed >= en else "Mixes English and Chinese"


class ProfileWriter(BaseProcessor):
    """Keeps the user-profile document current without overwriting hand-edited sections:
    the reply style from what the user asks of replies (the model's or the rules' reading),
    the language habits from a running tally of the user's turns (not the last one), and the
    background from the user's current facts, given by the caller: a fact a later statement
    superseded is never in it (one supersession path: the facts')."""

    SECTIONS = ("reply_style", "language_habits", "background")

    def update(
        self, profile: UserProfile, turns: Any, facts: Sequence[str] | None = None
    ) -> UserProfile:
        """A new profile with sections updated from `turns` and the current `facts` (None:
        the background stays as it is); sections in `profile.edited_by_user` never change."""
        if not isinstance(profile, UserProfile):
            raise ValidationError("profile must be a UserProfile")
        t = normalize_turns(turns)
        users = [x["text"] for x in t if x["role"] == "user"]
        style = None
        if self.llm is not None and t:
            user = prompts.render_profile(profile) + "\n" + prompts.render_turns(t)
            out = self.llm.call(ProfileUpdateOut, prompts.PROFILE_PROMPT, user)
            style = out.reply_style.strip() if out is not None else None
        if not style:
            style = _rule_style(profile.reply_style, users)
        counts = tallied(profile.language_counts, users)
        changes: dict[str, Any] = {"language_counts": counts}
        proposed = {"reply_style": style, "language_habits": habits_note(counts)}
        if facts is not None:
            proposed["background"] = "; ".join(dict.fromkeys(facts))[-_BACKGROUND_LIMIT:]
        for section, value in proposed.items():
            if section in profile.edited_by_user:
                continue  # hand-edited: never overwritten by the writer
            limit = _BACKGROUND_LIMIT if section == "background" else _SECTION_LIMIT
            if value[:limit] != getattr(profile, section):
                changes[section] = value[:limit]
        if changes.keys() == {"language_counts"} and counts == profile.language_counts:
            return profile.model_copy(deep=True)
        return profile.model_copy(update={**changes, "updated_at": utcnow()}, deep=True)
