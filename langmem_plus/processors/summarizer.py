"""Summariser: episode summaries ("[2026-01-03 18:00] 聊了面试、游戏"),
rolling summaries with key symbols and decisions, and a session title + snippet."""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime
from typing import Any

from langmem_plus.errors import ValidationError
from langmem_plus.processors import prompts
from langmem_plus.processors.model.base import BaseProcessor, normalize_turns
from langmem_plus.processors.schemas import EpisodeOut, RollingSummaryOut, SessionTitleOut
from langmem_plus.text import extract_symbols, is_stopword
from langmem_plus.text.clauses import is_chitchat, split_sentences, strip_fillers
from langmem_plus.text.scripts import detect_lang

__all__ = ["Summarizer", "keywords"]

_MAX_SUMMARY_CHARS = 600
_EN_WEAK = frozenset(
    [
        "want",
        "need",
        "know",
        "think",
        "like",
        "get",
        "make",
        "go",
        "going",
        "use",
        "using",
        "help",
        "please",
        "thanks",
        "thank",
        "tell",
        "say",
        "said",
        "ask",
        "asked",
        "try",
        "trying",
        "look",
        "good",
        "great",
        "yes",
        "yeah",
        "okay",
        "ok",
        "sure",
        "really",
        "just",
        "also",
        "would",
        "could",
        "should",
        "can",
        "will",
        "one",
        "thing",
        "things",
        "something",
        "anything",
        "way",
        "lot",
        "much",
        "many",
        "well",
        "hi",
        "hello",
        "hey",
        "let",
        "today",
        "tomorrow",
        "yesterday",
        "time",
        "now",
    ]
)
_ZH_WEAK = frozenset(
    [
        "想要",
        "知道",
        "觉得",
        "喜欢",
        "可以",
        "一下",
        "什么",
        "怎么",
        "这个",
        "那个",
        "今天",
        "明天",
        "昨天",
        "现在",
        "谢谢",
        "你好",
        "帮忙",
        "有点",
        "会儿",
        "一点",
        "东西",
        "事情",
        "时候",
        "问题",
        "准备",
        "需要",
        "应该",
        "还是",
        "就是",
        "感觉",
        "开始",
        "没有",
        "看看",
        "告诉",
    ]
)
_DECISION_RE = re.compile(
    r"决定|就用|采用|改成|改用|换成|选择|确定|定下来|那就|就这么|统一用|"
    r"\bdecided?\b|\blet's (?:go with|use)\b|\bwe(?:'ll| will) (?:use|go with)\b|"
    r"\bswitch(?:ed)? to\b|\bgoing with\b|\bagreed\b|\bwe chose\b|\bsettled on\b",
    re.IGNORECASE,
)


def keywords(texts: list[str], limit: int = 4) -> list[str]:
    """Topic words of some texts: TF-IDF nouns for Chinese (jieba.analyse), frequent content
    words for English; most important first."""
    counts: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    ranked_zh: list[str] = []
    zh_counts: Counter[str] = Counter()
    zh_first: dict[str, int] = {}
    for text in texts:
        if detect_lang(text) != "zh":
            continue
        import jieba.posseg as pseg

        for pair in pseg.cut(text, HMM=False):
            word, flag = pair.word, pair.flag
            if len(word) < 2 or word in _ZH_WEAK or not flag.startswith(("n", "v", "eng")):
                continue
            zh_counts[word] += 2 if flag.startswith("n") or flag == "vn" else 1
            zh_first.setdefault(word, len(zh_first))
    ranked_zh = sorted(zh_counts, key=lambda w: (-zh_counts[w], zh_first[w]))
    for text in texts:
        if detect_lang(text) == "zh":
            continue
        for raw in re.findall(r"[A-Za-z][A-Za-z'-]+", text):
            w = raw.lower()
            if len(w) < 3 or w in _EN_WEAK or is_stopword(w):
                continue
            counts[w] += 1
            first_seen.setdefault(w, len(first_seen))
    ranked_en = sorted(counts, key=lambda w: (-counts[w], first_seen[w]))
    return (ranked_zh + ranked_en)[:limit]


def _clean(text: str) -> str:
    """A sentence without its fillers and closing punctuation, for a summary line or title."""
    return strip_fillers(text).rstrip("。.！!，,；;：:…~～ ")


def _user_texts(turns: list[dict[str, str]]) -> list[str]:
    texts = [t["text"] for t in turns if t["role"] == "user" and not is_chitchat(t["text"])]
    return texts or [t["text"] for t in turns]


def _lang(turns: list[dict[str, str]]) -> str:
    return detect_lang(" ".join(t["text"] for t in turns if t["role"] == "user") or "x")


def _shorten(text: str, limit: int) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _stamp(at: datetime) -> str:
    return f"[{at.strftime('%Y-%m-%d %H:%M')}]"


def _episode_line(at: datetime, topics: list[str], lang: str) -> str:
    if not topics:
        return f"{_stamp(at)} " + ("闲聊" if lang == "zh" else "small talk")
    if lang == "zh":
        return f"{_stamp(at)} 聊了" + "、".join(topics)
    return f"{_stamp(at)} talked about " + ", ".join(topics)


def _rule_rolling(turns: list[dict[str, str]]) -> RollingSummaryOut:
    lang = _lang(turns)
    lines: list[str] = []
    for t in turns:
        if is_chitchat(t["text"]):
            continue
        first = (split_sentences(t["text"]) or [t["text"]])[0]
        who = (
            ("用户" if t["role"] == "user" else "助手")
            if lang == "zh"
            else ("User" if t["role"] == "user" else "Assistant")
        )
        lines.append(f"{who}: {_shorten(_clean(first) or first, 120)}")
    summary = ("；" if lang == "zh" else "; ").join(lines) or (
        "闲聊" if lang == "zh" else "small talk"
    )
    symbols: list[str] = []
    decisions: list[str] = []
    for t in turns:
        for sym in extract_symbols(t["text"]):
            if sym not in symbols:
                symbols.append(sym)
        for sentence in split_sentences(t["text"]):
            if _DECISION_RE.search(sentence):
                decision = _shorten(_clean(sentence) or sentence, 160)
                if decision not in decisions:
                    decisions.append(decision)
    return RollingSummaryOut(
        summary=_shorten(summary, _MAX_SUMMARY_CHARS), key_symbols=symbols, key_decisions=decisions
    )


def _rule_title(turns: list[dict[str, str]]) -> tuple[str, str]:
    users = _user_texts(turns)
    lang = _lang(turns)
    first = users[0] if users else ""
    sentence = _clean((split_sentences(first) or [first])[0]) if first else ""
    sentence = sentence.rstrip("?？")
    if lang == "zh":
        title = _shorten(sentence or "新对话", 16)
    else:
        words = sentence.split()
        title = " ".join(words[:8]) + ("…" if len(words) > 8 else "") if words else ""
        title = title or "New conversation"
    replies = [t["text"] for t in turns if t["role"] == "assistant"]
    snippet_source = replies[0] if replies else sentence
    return title, _shorten(snippet_source, 120)


class Summarizer(BaseProcessor):
    """Writes episode summaries, rolling summaries and session titles."""

    def episode(self, turns: Any, at: datetime) -> str:
        """One line like ``[2026-01-03 18:00] talked about interviews, games``."""
        if not isinstance(at, datetime):
            raise ValidationError("at must be a datetime")
        t = normalize_turns(turns)
        lang = _lang(t)
        if self.llm is not None and t:
            out = self.llm.call(EpisodeOut, prompts.EPISODE_PROMPT, prompts.render_turns(t))
            if out is not None and out.topics:
                return _episode_line(at, [s.strip() for s in out.topics if s.strip()][:4], lang)
        return _episode_line(at, keywords(_user_texts(t)), lang)

    def rolling(self, turns: Any) -> RollingSummaryOut:
        """Summary of a chunk of turns with its key symbols and decisions."""
        t = normalize_turns(turns)
        if self.llm is not None and t:
            out = self.llm.call(
                RollingSummaryOut, prompts.ROLLING_SUMMARY_PROMPT, prompts.render_turns(t)
            )
            if out is not None and out.summary.strip():
                rules = _rule_rolling(t)
                # symbols the text really holds are never dropped by the model
                for sym in rules.key_symbols:
                    if sym not in out.key_symbols:
                        out.key_symbols.append(sym)
                return out
        return _rule_rolling(t)

    def session_title(self, turns: Any) -> tuple[str, str]:
        """(title, snippet) of a new session, from its first exchange."""
        t = normalize_turns(turns)
        if self.llm is not None and t:
            out = self.llm.call(
                SessionTitleOut, prompts.SESSION_TITLE_PROMPT, prompts.render_turns(t)
            )
            if out is not None and out.title.strip():
                return out.title.strip(), out.snippet.strip()
        return _rule_title(t)
