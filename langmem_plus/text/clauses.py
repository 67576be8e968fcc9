"""What a user turn is made of, written once for every processor: sentences, clauses, the
fillers around them ("嗯", "btw", "哈哈"), whether a clause asks, and whether a turn is small
talk (greetings, thanks, "ok") with nothing to remember. Chinese and English."""

from __future__ import annotations

import re

from langmem_plus.text.scripts import CJK, has_cjk

__all__ = [
    "Clause",
    "is_chitchat",
    "is_question",
    "split_clauses",
    "split_sentences",
    "strip_fillers",
]

# ------------------------------------------------------------------------- sentences
_SENTENCE_RE = re.compile(rf"(?<=[。！？!?；;\n])|(?<=[.])\s+(?=[A-Z\"'({CJK}])")


def split_sentences(text: str) -> list[str]:
    """The sentences of a turn (Chinese and English punctuation), punctuation-only ones left
    out."""
    parts = [p.strip() for p in _SENTENCE_RE.split(text or "")]
    return [p for p in parts if p and not re.fullmatch(r"[\W_]+", p)]


# --------------------------------------------------------------------------- fillers
_ZH_FILLER_RE = re.compile(
    r"^(?:嗯+|哈+|啊+|哦+|噢+|呃+|诶|欸|唉|哇|害|嗨|咳|好吧|对了|另外|顺便说(?:一)?下|顺便|还有|不过|但是|但|可是|"
    r"而且|然后|所以|话说|其实|说真的|老实说|讲真|天[呐哪啊]|好消息|告诉你个好消息|跟你说(?!过)|你猜怎么着)[，,!！\s～~]*"
)
_ZH_TAIL_RE = re.compile(r"(?:哈+|呀|啊|啦|哦|呢|嘛|了吧|吧|哈哈+|嘿嘿|～|~|\s)+$")
_EN_FILLER_RE = re.compile(
    r"^(?:(?:um+|uh+|oh|ok(?:ay)?|so|well|lol|haha|tbh|btw|also|and|but|anyway|fyi|fwiw|tbf|"
    r"and btw|ngl|honestly|actually|ugh|ok thanks|thanks|omg|yay|woohoo|guess what|good news|"
    r"big news|news)\b[\s,!:]*)+",
    re.I,
)
_EN_TAIL_RE = re.compile(r"(?:\s*\b(?:lol|lmao|haha|tbh|btw|honestly|ngl|ugh|smh)\b)+\s*$", re.I)


def strip_fillers(text: str) -> str:
    """`text` without leading and trailing fillers (嗯, 哈哈, lol, btw, 对了 ...)."""
    prev = None
    while prev != text:
        prev = text
        text = _ZH_FILLER_RE.sub("", text).strip()
        text = _EN_FILLER_RE.sub("", text).strip()
    text = _ZH_TAIL_RE.sub("", text).strip() if has_cjk(text) else text
    return _EN_TAIL_RE.sub("", text).strip(" ,~～")


# ------------------------------------------------------------------------- questions
_ZH_QUESTION_RE = re.compile(
    r"(?:吗|么|呢|嘛)$|什么|啥|哪|谁|怎么|怎样|多少|几[点个号月天]|为什么|为啥|要不|是不是|"
    r"有没有|能不能|可不可以|好不好|对不对|行不行"
)
# a negative auxiliary opens a statement whose "I" was dropped ("can't make it Thursday",
# "didn't sleep at all") unless the one it asks follows it ("don't you think…", "isn't it?")
_EN_QUESTION_RE = re.compile(
    r"^(?:is|are|am|do|does|did|can|could|would|should|will|shall|what|how|why|when|where|"
    r"who|which|whose|have you|has|was|were|any idea)\b(?!n?'t\b)|"
    r"^(?:is|are|do|does|did|can|could|would|should|will|was|were|have|has|won|ca|sha)n'?t "
    r"(?:you|we|it|they|he|she|I|there|that|this)\b",
    re.I,
)


def is_question(text: str) -> bool:
    """Whether a clause asks rather than states (its form, not only its punctuation)."""
    if has_cjk(text):
        if _ZH_QUESTION_RE.search(text):
            return True
        return not re.search(r"[A-Za-z]{3,}\s+[A-Za-z]{3,}", text) and text.endswith("吗")
    return bool(_EN_QUESTION_RE.match(text))


# --------------------------------------------------------------------------- clauses
_CLAUSE_SPLIT_RE = re.compile(
    r"((?:[，。！!？?；;\n]|,(?!\d{3}\b))+|…+|\.{3,}|(?<=[^\d\s])\.(?=\s|$))"
)


class Clause:
    """One clause of a user turn: its text without fillers, and whether it was asked."""

    __slots__ = ("question", "raw", "text")

    def __init__(self, raw: str, question: bool) -> None:
        self.raw = raw
        self.text = strip_fillers(raw)
        self.question = question or is_question(self.text)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Clause({self.text!r}, q={self.question})"


def split_clauses(text: str) -> list[Clause]:
    """Clauses of `text`, each marked as a question when '?'/'？' ends it or its form asks."""
    parts = _CLAUSE_SPLIT_RE.split(text)
    out: list[Clause] = []
    for i in range(0, len(parts), 2):
        body = parts[i].strip()
        sep = parts[i + 1] if i + 1 < len(parts) else ""
        if body:
            out.append(Clause(body, "?" in sep or "？" in sep))
    return out


# ------------------------------------------------------------------------ small talk
_CHITCHAT_ZH = re.compile(
    r"^(?:你好|您好|嗨|哈喽|早上好|早安|中午好|下午好|晚上好|晚安|谢谢|多谢|感谢|谢啦|好的|好|嗯+|"
    r"哦+|哈+|呵呵|对|是的|没错|行|可以|OK|ok|再见|拜拜|回头见|明白了?|知道了|收到|不客气|没事|"
    r"没关系|辛苦了|厉害|太棒了|真棒|不错|哇|我很好|我挺好的?|还行|一般般|我也是|在吗|在不在|"
    r"你是谁|你好呀|哈哈哈+|好的呢|好滴|嗯嗯|了解|懂了|我明白了|我知道了|好吧|算了|继续|接着说)"
    r"[啊呀哦呢吧啦嘛哈~～!！。.，,\s]*$"
)
_CHITCHAT_EN = re.compile(
    r"^(?:hi|hello|hey|yo|good (?:morning|afternoon|evening|night)|thanks?(?: a lot| so much)?|"
    r"thank you(?: so much| very much)?|ok(?:ay)?|cool|nice|great|awesome|sure|yes|yeah|yep|no|"
    r"nope|bye|goodbye|see you|see ya|lol|haha+|got it|i see|makes sense|sounds good|"
    r"you're welcome|no problem|i'm (?:fine|good|ok|okay|great|doing well)|not bad|me too|"
    r"how are you|what's up|sup|good job|well done|perfect|alright|right|hmm+|wow|interesting|"
    r"that's (?:great|cool|nice|interesting|funny)|continue|go on|tell me more)"
    r"(?:[,!.?\s]+(?:thanks|thank you|bro|man|mate|buddy|again|very much))*[!.?\s]*$",
    re.IGNORECASE,
)


def is_chitchat(text: str) -> bool:
    """Greetings, thanks, acknowledgements and small talk with nothing to remember."""
    text = text.strip()
    return bool(_CHITCHAT_ZH.match(text) or _CHITCHAT_EN.match(text))
