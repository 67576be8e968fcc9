"""Small text helpers for the rule processors: language, clause splitting, first-person to
third-person rewriting (so a memory reads "用户喜欢川菜" / "User likes Sichuan food"), and
token overlap used to find which stored memory a turn refers to."""

from __future__ import annotations

import re
from collections.abc import Iterable

from langmem_plus.text import scripts, tokenize

__all__ = [
    "CJK",
    "align_value",
    "clean_clause",
    "content_tokens",
    "coverage",
    "detect_lang",
    "jaccard",
    "salient_tokens",
    "split_clauses",
    "split_sentences",
    "strip_present",
    "substitute_value",
    "to_third_person",
]

CJK = scripts.CJK
_CJK_RE = scripts.CJK_RE
detect_lang = scripts.detect_lang


_SENT_RE = re.compile(r"(?<=[。！？!?；;\n])|(?<=[.])\s+(?=[A-Z\"'(\u4e00-\u9fff])")


def split_sentences(text: str) -> list[str]:
    """Sentences of a turn (Chinese and English punctuation)."""
    parts = [p.strip() for p in _SENT_RE.split(text or "")]
    return [p for p in parts if p and not re.fullmatch(r"[\W_]+", p)]


_EN_CLAUSE_RE = re.compile(
    r",?\s+(?:and|but|so|while|although|though|because|since)\s+"
    r"(?=(?:I|I'm|I've|I'll|my|we|our|he|she|they|his|her|the (?:project|team))\b)"
    r"|,\s*(?=(?:I|I'm|I've|I'll|my|we|our|and I|but I)\b)"
    r"|\s+(?:and|but)\s+also\s+"
    r"|,\s*(?=(?:so|please)\s)"
    r"|,\s*(?=(?:what|how|why|when|where|which|who|can you|could you|do you|would you|any|"
    r"is there|should I|shall we)\b)",
)


def split_clauses(sentence: str) -> list[str]:
    """Split a sentence where a new subject (or a subject-less Chinese predicate) starts."""
    if detect_lang(sentence) == "zh":
        parts = re.split(r"[，,、]", sentence)
        merged: list[str] = []
        for part in parts:
            part = part.strip()
            if not part:
                continue
            # "不是X，是Y" and "X，不是Y" stay together (corrections)
            if (merged and (re.match(r"^(?:而)?是", part) and "不是" in merged[-1])) or (
                merged and part.startswith("不是") and len(part) <= 12
            ):
                merged[-1] += "，" + part
            else:
                merged.append(part)
        return merged
    parts = _EN_CLAUSE_RE.split(sentence)
    return [p.strip(" ,") for p in parts if p and p.strip(" ,")]


_ZH_FILLERS = re.compile(
    r"^(?:说实话|老实说|坦白说|讲真|实话说|对了|顺便说一下|顺便说|顺便|话说|说起来|那个|就是说|就是|然后|而且|并且|另外|还有|但是|"
    r"不过|所以|因为|由于|哦|噢|嗯|啊|哈哈+|嘿|喂|也|还|都|其实|那么|好吧|好的|OK|ok)[，,\s]*"
)
_EN_FILLERS = re.compile(
    r"^(?:oh|ok|okay|well|so|and|but|also|btw|by the way|anyway|hey|hi|hello|"
    r"just so you know|fyi|since|because|as|plus|then|um|uh|yeah|yes|no|"
    r"just a heads up|for the record|for context|honestly|basically)\b[,\s]*",
    re.IGNORECASE,
)


def clean_clause(clause: str) -> str:
    """Strip discourse fillers at the start and particles/punctuation at the end."""
    text = clause.strip()
    for _ in range(4):
        new = _ZH_FILLERS.sub("", text)
        new = _EN_FILLERS.sub("", new)
        if new == text:
            break
        text = new
    text = re.sub(r"[\s啊呀哦呢吧啦嘛哈~～!！。.，,、;；:：…]+$", "", text)
    return text.strip()


# ------------------------------------------------------------------ third person
_ZH_RELATIONS = (
    "好朋友|朋友|同事|老板|领导|室友|同学|邻居|妈妈|母亲|爸爸|父亲|老婆|妻子|媳妇|老公|丈夫|爱人|"
    "女儿|儿子|孩子|哥哥|姐姐|弟弟|妹妹|爷爷|奶奶|外公|外婆|姥姥|姥爷|男朋友|女朋友|对象|未婚妻|"
    "未婚夫|猫|狗|宠物|表哥|表姐|表弟|表妹|堂哥|堂姐|叔叔|阿姨|舅舅|姑姑|家人|父母|爸妈|导师|老师|"
    "妈|爸"
)


_CODE_HEAD_RE = re.compile(
    r"^(?:[A-Za-z_][\w-]*(?:[./][\w-]+)+|[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z]+[A-Z][A-Za-z0-9]*|"
    r"[a-z]+_[a-z0-9_]+)(?![A-Za-z0-9])"
)


def _zh_third_person(text: str) -> str:
    text = re.sub(r"我们的?(?=项目|团队|公司|代码|仓库|系统|服务|产品)", "用户的", text)
    text = text.replace("我们的", "用户的")
    text = text.replace("我们", "用户他们")
    text = re.sub(rf"我(?=(?:{_ZH_RELATIONS}))", "用户的", text)
    text = text.replace("我的", "用户的").replace("我", "用户")
    text = re.sub(r"(?<!助)你(?!们)", "助手", text)
    lead = text.split("用户", 1)[0] if "用户" in text else text
    subject_first = text.startswith("用户") or (
        len(lead) <= 8
        and re.fullmatch(
            r"[\d一二三四五六七八九十两今明后昨前下上这本每周星期礼拜月日号年天晚早午点半个末底初的时候"
            r"目现如最近平大，,\s]+",
            lead,
        )
    )
    if not subject_first:
        if re.match(r"^(?:项目|代码|仓库|后端|前端|服务|系统|数据库|团队|公司)", text):
            return text
        if _CODE_HEAD_RE.match(text):
            return text  # "processOrder 在 src/order.ts 里": the code symbol is the subject
        text = "用户" + text
    return text


_EN_ADVERBS = (
    "really|absolutely|also|usually|always|often|never|sometimes|just|still|totally|actually|"
    "mostly|generally|normally|typically|rarely|already|recently|definitely|truly|much|strongly|"
    "even|now|currently|kind of|sort of|only|especially|personally|honestly|seriously|"
    "secretly|occasionally|regularly|finally"
)
_MODALS = {"can", "could", "will", "would", "should", "must", "might", "may", "shall"}
_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "be": "is", "am": "is"}
_EN_I_SPECIAL = [
    (r"\bI'm\b|\bI am\b", "User is"),
    (r"\bI was\b", "User was"),
    (r"\bI've\b", "User has"),
    (r"\bI'll\b|\bI will\b", "User will"),
    (r"\bI'd\b|\bI would\b", "User would"),
    (r"\bI don't\b|\bI dont\b", "User doesn't"),
    (r"\bI do not\b", "User does not"),
    (r"\bI didn't\b", "User didn't"),
    (r"\bI can't\b|\bI cannot\b", "User can't"),
    (r"\bI haven't\b", "User hasn't"),
    (r"\bI'm not\b", "User is not"),
]


def _third_singular(verb: str) -> str:
    low = verb.lower()
    if low in _MODALS or low.endswith("ed") or low in ("was", "did", "had", "used"):
        return verb
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


# "next Friday the user will ...": a leading time phrase, then the subject
_EN_TIME_LEAD_RE = re.compile(
    r"^(?:(?:next|this|last|on|every) \w+|tomorrow|tonight|today|yesterday|the day after "
    r"tomorrow|in (?:\d+|an?|a few|two|three) \w+|(?:these|those) days|nowadays|now|"
    r"later today|soon)[,\s]+(?:the user|User)\b",
    re.IGNORECASE,
)


def _en_third_person(text: str) -> str:
    for pattern, repl in _EN_I_SPECIAL:
        text = re.sub(pattern, repl, text)

    def conj(m: re.Match[str]) -> str:
        adverbs = m.group(1) or ""
        return f"User {adverbs}{_third_singular(m.group(2))}"

    text = re.sub(rf"\bI\s+((?:(?:{_EN_ADVERBS})\s+)*)([a-z]+)\b", conj, text)
    text = re.sub(r"\bI\b", "User", text)
    text = re.sub(r"^(?:[Mm]y)\b", "User's", text)
    text = re.sub(r"\bmy\b|\bMy\b", "their", text)
    text = re.sub(r"\bmyself\b", "themselves", text)
    text = re.sub(r"\bmine\b", "theirs", text)
    text = re.sub(r"\bme\b", "them", text)
    text = re.sub(r"(?<=\w )User\b(?!')", "the user", text)
    text = re.sub(r"(?<=\w )User's\b", "the user's", text)
    text = re.sub(r"^(?:the user)", "User", text)
    if text.startswith("to "):
        text = "User needs " + text
    if (
        not re.match(r"^(?:User|The |the |User's)", text)
        and re.match(r"^[a-z]", text)
        and not _CODE_HEAD_RE.match(text)
        and not _EN_TIME_LEAD_RE.match(text)
    ):
        text = "User " + text
    if _CODE_HEAD_RE.match(text):
        return text
    return text[:1].upper() + text[1:]


def to_third_person(clause: str, lang: str | None = None) -> str:
    """Rewrite a first-person clause as a memory about the user, in the clause's language."""
    text = clean_clause(clause)
    if not text:
        return ""
    lang = lang or detect_lang(text)
    return _zh_third_person(text) if lang == "zh" else _en_third_person(text)


# ------------------------------------------------------------------ token overlap
_GENERIC = frozenset(
    {
        "用户", "user", "喜欢", "like", "love", "是", "在", "住", "live", "work", "叫", "name",
        "有", "have", "has", "prefer", "不", "吃", "eat", "要", "will", "会", "the", "is",
        "爱", "讨厌", "hate", "doe", "does", "not", "their", "user's", "一个", "很", "非常",
        "特别", "really", "also", "现在", "now", "助手", "assistant", "他们", "they",
    }
)  # fmt: skip


def content_tokens(text: str) -> set[str]:
    """Searchable tokens of a text (stop words removed), as a set. Chinese words of three or
    more characters also contribute their character bigrams, so "喝咖啡" meets "咖啡" even
    when jieba cuts the two texts differently."""
    tokens = {t for t in tokenize(text or "") if t.strip()}
    for tok in list(tokens):
        if len(tok) >= 3 and _CJK_RE.fullmatch(tok[0]) and _CJK_RE.fullmatch(tok[-1]):
            tokens.update(tok[i : i + 2] for i in range(len(tok) - 1))
    return tokens - {"用户", "user", "user's"}


def salient_tokens(text: str) -> set[str]:
    """Content tokens minus generic predicate words: what makes a memory distinctive."""
    return content_tokens(text) - _GENERIC


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """Jaccard similarity of two token collections (0 when both are empty)."""
    sa, sb = set(a), set(b)
    if not sa and not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


def coverage(part: Iterable[str], whole: Iterable[str]) -> float:
    """Share of `whole`'s tokens that occur in `part`."""
    sw = set(whole)
    if not sw:
        return 0.0
    return len(sw & set(part)) / len(sw)


# ------------------------------------------------------------------ corrections
_ZH_PRESENT_RE = re.compile(
    r"(?:现如今|如今|现在|目前|眼下|这些天|这几天|这阵子)(?:已经|都)?(?=[\u4e00-\u9fff])"
)
_EN_PRESENT_RE = re.compile(
    r"\s*\b(?:these days|nowadays|currently|at the moment|right now|at present|now)\b",
    re.IGNORECASE,
)


def strip_present(text: str, lang: str | None = None) -> str:
    """Drop present-time adverbs (now / these days / 现在 / 目前) from a corrected clause:
    "I live in Shanghai now" -> "I live in Shanghai"."""
    lang = lang or detect_lang(text)
    if lang == "zh":
        return _ZH_PRESENT_RE.sub("", text)
    out = _EN_PRESENT_RE.sub("", text)
    out = re.sub(r"([,:])(?:\s*[,:])+", r"\1", out)
    out = re.sub(r"\s+([,.!?])", r"\1", re.sub(r"\s{2,}", " ", out))
    return out.strip(" ,")


def _words(text: str) -> list[str]:
    return re.findall(r"[\w'./:-]+", text)


def _norm(word: str) -> str:
    return word.lower().strip("'.:")


def align_value(memory: str, old: str, source: str) -> str | None:
    """What `source` says where `memory` says `old`: the words after the longest tail of the
    memory's text before `old` that `source` repeats, cut before the memory's text after it.
    ("用户住在北京", "北京", "我住在上海") -> "上海"; ("User works at Google", "Google",
    "I work at Microsoft") -> "Microsoft". None when the two texts share no context."""
    low = memory.lower()
    pos = low.find(old.lower())
    if pos < 0 or not source.strip():
        return None
    left, right = memory[:pos], memory[pos + len(old) :]
    if _CJK_RE.search(old) or _CJK_RE.search(left[-1:] or "x"):
        value = None
        for k in range(min(len(left), 6), 0, -1):
            ctx = left[-k:]
            if ctx in ("用户", "户", "的") or not ctx.strip():
                continue
            at = source.rfind(ctx)
            if at >= 0:
                value = source[at + k :]
                break
        if value is None:
            return None
        for k in range(min(len(right), 6), 0, -1):
            j = value.find(right[:k])
            if j > 0:
                value = value[:j]
                break
        value = value.strip(" ，,。.！!？?")
        if not value or re.search(r"我|用户", value) or len(value) > 2 * len(old) + 6:
            return None
        return value
    lw = [_norm(w) for w in _words(left)]
    sw = _words(source)
    sl = [_norm(w) for w in sw]
    value_words: list[str] | None = None
    for k in range(min(len(lw), 4), 0, -1):
        wctx = lw[-k:]
        if wctx[0] in ("user", "user's") and k == 1:
            continue
        for i in range(len(sl) - k, -1, -1):
            if sl[i : i + k] == wctx:
                value_words = sw[i + k :]
                break
        if value_words is not None:
            break
    if not value_words:
        return None
    rw = [_norm(w) for w in _words(right)]
    for k in range(min(len(rw), 3), 0, -1):
        for j in range(1, len(value_words)):
            if [_norm(w) for w in value_words[j : j + k]] == rw[:k]:
                value_words = value_words[:j]
                break
        else:
            continue
        break
    value = " ".join(value_words).strip(" ,.!?")
    if not value or len(value_words) > len(_words(old)) + 4:
        return None
    return value


def substitute_value(memory: str, old: str, new: str) -> str | None:
    """`memory` with its first `old` (case-insensitive, whole words for Latin) set to `new`."""
    if not old:
        return None
    if re.search(r"[A-Za-z0-9]", old):
        pattern = re.compile(rf"(?<![\w]){re.escape(old)}(?![\w])", re.IGNORECASE)
        if pattern.search(memory):
            return pattern.sub(lambda _: new, memory, count=1)
        return None
    return memory.replace(old, new, 1) if old in memory else None
