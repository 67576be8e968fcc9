"""Corrections in the fact rules: a mid-turn self-correction keeps only the last value, and
an untied correction ("nope, it's kombucha now") is read against the assistant turn before it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from langmem_plus.processors.facts.derived import DerivedFact
from langmem_plus.processors.facts.helpers import fact
from langmem_plus.processors.facts.patterns import (
    EN_REL,
    EN_REL_RE,
    EN_REL_SAY,
    EN_UNTIED_RE,
    TRANSIENT_RE,
    ZH_REL,
    ZH_REL_RE,
    ZH_REL_SAY,
    ZH_UNTIED_RE,
)
from langmem_plus.text.clauses import Clause, split_clauses
from langmem_plus.text.person import en_third, zh_third
from langmem_plus.text.scripts import CJK, CJK_RE, has_cjk

_ZH_MARK = re.compile(
    r"(?:\s*(?:……|…|\.\.\.)\s*(?:[啊哦噢呃]\s*)?|[，,]\s*(?:[啊哦噢呃]\s*)?|(?<=[\w\d])\s*[啊哦噢呃]\s*)"
    # "不是" marks a self-correction only when a pause or "是" follows it ("周三，不是，周四");
    # "住在上海，不是北京" says 北京 is the value that does NOT hold
    rf"(?:不对|不是(?=[，,。\s]|是)|不不|哦不|说错了|记错了|搞错了|等等|等一下|[啊哦噢]不(?=[，,]))(?![{CJK}]{{2,}}[了的])[，,。\s]*(?:应该是|是)?\s*"
)
_EN_MARK = re.compile(
    r"(?:[,，]|\.{3}|…)\s*(?:(?:no wait|wait,? no|no,? wait|oh wait|sorry,? I mean|I mean|I meant|"
    r"sorry,? I meant|scratch that|make that|oops,?|actually no|wait,? actually)[,，\s]|no,|sorry,)"
    r"\s*(?:是|it'?s\s)?\s*",
    re.I,
)
# value shapes: a corrected value replaces the last earlier value of the same shape
_SHAPES = (
    re.compile(r"[A-Z]{1,3}\s?\d{2,5}"),
    re.compile(r"(?:农历)?[一二三四五六七八九十\d]{1,3}月[初一二三四五六七八九十廿\d]{1,3}[日号]?"),
    re.compile(r"(?:周|星期|礼拜)[一二三四五六日天]"),
    re.compile(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b", re.I),
    re.compile(r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b", re.I),
    re.compile(r"\b\d{1,2}:\d{2}(?:\s*[ap]m)?\b", re.I),
    re.compile(r"[一二三四五六七八九十两]{1,3}(?:点半?|岁|号|栋|楼|层)"),
    re.compile(r"\d+(?:\.\d+)?(?:st|nd|rd|th)?\s*(?:栋|楼|号|层|室|岁|点|块|元|号楼)?"),
)


@dataclass(frozen=True)
class Repair:
    """A turn rewritten to its final value; `old` is the value it corrected."""

    text: str
    old: str
    new: str


def self_correction(text: str) -> Repair | bool | None:
    """The turn with a mid-turn self-correction applied, False when it never settles on a
    value (store nothing), or None when the turn has no self-correction."""
    m = _ZH_MARK.search(text) or _EN_MARK.search(text)
    if not m or not text[: m.start()].strip():
        return None
    before, after = text[: m.start()], text[m.end() :].strip()
    if not after or TRANSIENT_RE.search(after) or after.endswith(("?", "？")):
        return False
    for shape in _SHAPES:
        new = shape.match(after)
        if not new:
            continue
        olds = list(shape.finditer(before))
        if not olds:
            return False
        old = olds[-1]
        old_end = old.start() + len(old.group().rstrip())
        tail = before[old_end:]
        rest = after[new.end() :].strip()
        if rest and tail.strip().endswith(rest):
            rest = ""  # 'on 5th street, I mean 6th street': the rest repeats what follows
        first = re.split(r"[，,。]", rest)[0] if rest else ""
        if tail.strip() and first.endswith(tail.strip()):
            tail = (
                ""  # '周一来，哦不对，是周二上午来': the new value's own words replace the old tail
            )
        sep = " " if rest and re.match(r"[A-Za-z0-9]", rest) else ""
        fixed = before[: old.start()] + new.group().strip() + tail + sep + rest
        return Repair(fixed, old.group().strip(), new.group().strip())
    return _after_copula(before, after)


_COPULA = re.compile(
    r"(?:是|在|叫|去|到|定在|约在|改到|坐)(?=[^是在叫去到]{1,15}$)|(?:'s|\b(?:is|at|to|in|on))\s+(?=\S[^,]{0,24}$)"
)


def _after_copula(before: str, after: str) -> Repair | bool:
    """'约在星巴克，不对，是瑞幸' -> the value after the last copula replaced by the new one."""
    new = re.split(
        r"[，,。.!！\s]" if not re.search(r"[A-Za-z]", after[:1]) else r"[，,。.!！]", after
    )[0]
    new = new.strip()
    if not new or len(new) > 24 or re.search(r"我|你|吧|吗|呢|\b(?:I|you|let|me)\b", new):
        return False
    cops = list(_COPULA.finditer(before))
    if not cops:
        return False
    cop = cops[-1]
    old = before[cop.end() :].strip()
    if not old or old == new:
        return False
    rest = after[after.index(new) + len(new) :]
    return Repair(before[: cop.end()] + new + rest, old, new)


def _zh_old(context: str) -> tuple[str, str, str]:
    """(relation word, statement, old value) that the assistant's turn attributed to the user."""
    first = next((c.text for c in split_clauses(context) if "你" in c.text), "")
    if m := re.search(r"你(?:在|的)?([^，。,你]{1,12}?)的(" + ZH_REL_RE + r")", context):
        return m.group(2), m.group(1), re.sub(r"^(?:在|是)", "", m.group(1))
    if m := re.search(r"你的?(" + ZH_REL_RE + r")(.*)$", first):
        rest = re.sub(r"(?:对吧|对不对|是吧|吗|吧|呢)+$", "", m.group(2))
        rest = re.sub(r"^(?:还在|还是|还|现在)", "", rest)
        val = re.sub(r"^(?:还|现在)?(?:在|是|叫|去)", "", rest)
        val = re.sub(r"(?:上班|工作|读书|上学)$", "", val)
        return m.group(1), rest, val
    stmt = re.sub(
        r"^.*?你(?:们(?:组|团队|公司|项目|team)?)?(?:不是|还在|还是|还|是不是|是|的)?", "", first
    )
    stmt = re.sub(r"(?:对吧|对不对|是吧|没错吧|对|吗|吧|呢|了)+$", "", stmt)
    # "你上次说在用小米手机": what was said, without the assistant's "you said"
    stmt = re.sub(
        r"^(?:之前|上次|以前|刚才|前面)?(?:说过?|提到过?|讲过)(?:你)?(?:在(?=用))?", "", stmt
    )
    return "", stmt, stmt


def _en_old(context: str) -> tuple[str, str]:
    """(relation word, old value) from the assistant's turn ('your Tuesday yoga')."""
    if m := re.search(r"\byour (" + EN_REL_RE + r")\b", context, re.I):
        return m.group(1).lower(), ""
    if m := re.search(r"\byour ([\w -]{2,30}?)(?:\?|$| going| liking| still)", context, re.I):
        return "", m.group(1)
    if m := re.search(
        r"^(?:are you |you |is \w+ |does \w+ )?still (?:at|in|on|with|doing|using|living in) ([\w -]{2,30}?)\?",
        context,
        re.I,
    ):
        return "", m.group(1)
    if m := re.search(
        r"\b(?:how's|how is|how are) (?:the )?([\w -]{2,30}?) (?:going|doing)", context, re.I
    ):
        return "", m.group(1)
    return "", ""


def _zh_untied(clauses: list[Clause], context: str) -> list[DerivedFact]:
    rel, stmt, old = _zh_old(context)
    turn = "，".join(c.text for c in clauses)
    for c in clauses:
        t = c.text
        if c.question:
            continue
        if rel and (news := _zh_relation_news(rel, t, turn, old, moved=False)):
            return news
        if re.search(r"不在|不再|没有?|那边|那里|那儿|老黄历", t):
            continue  # what no longer holds, or a wave at the old value: not the new value
        if rel and (news := _zh_relation_news(rel, t, turn, old, moved=True)):
            return news
        if said := _zh_is_value(t, stmt, turn, old):
            return said
        if (m := re.search(r"(?:跳去了|跳到了?|去了|换到了?|转到了?)\s*(\S{2,12})$", t)) and stmt:
            slot = "job" if re.search(r"上班|工作|做|公司|干", stmt + context) else None
            text = "用户" + zh_third(t) + f"（之前：{zh_third(stmt)}）"
            return [_corr(fact(text, slot=slot, value=m.group(1)), stmt)]
        if re.match(r"(?:现在|改成|换成|改)", t) and stmt:
            who, subject = _zh_owner(context, rel)
            text = who + zh_third(t) + f"，不再{zh_third(stmt)}"
            return [_corr(fact(text, kind="preference", subject=subject, value=t), stmt)]  # type: ignore[arg-type]
    return []


def _zh_relation_news(rel: str, t: str, turn: str, old: str, *, moved: bool) -> list[DerivedFact]:
    """What the relation the assistant asked about did ("她早就退休了") or, `moved`, where they
    are now ("他去了腾讯"); [] when the clause says neither."""
    who = "用户的" + ZH_REL_SAY.get(ZH_REL[rel], rel)
    body = re.sub(r"^[他她](?:已经|早就)?", "", t)
    if not moved:
        if re.search(r"[他她]", t) and re.search(r"退休|结婚|离婚|搬|毕业|辞职|离职|生了", t):
            return [_corr(fact(who + zh_third(body), kind="event", subject="third_person",
                               value=body), old)]  # fmt: skip
        return []
    m = re.search(r"(?:去了|跳到了?|换到了?|现在在|回|搬到了?|搬去了?|在)(.{2,})$", t)
    if m and re.search(r"[他她]", turn):
        return [_corr(fact(who + zh_third(body), subject="third_person",
                           slot=f"{ZH_REL[rel]}.job", value=m.group(1)), old)]  # fmt: skip
    return []


def _zh_is_value(t: str, stmt: str, turn: str, old: str) -> list[DerivedFact]:
    """A bare value ("是芒果") against the assistant's "你对菠萝过敏吧": the statement with its
    value replaced."""
    m = re.match(r"^(?:而)?是\s*(\S{1,10})$", t)
    if not m or re.search(r"[那这]", m.group(1)):
        return []
    new = _drop_common_tail(m.group(1), stmt)
    shared = [w for w in re.findall(rf"[{CJK}]{{2,}}", stmt) if w in turn and w != new]
    shared = shared or [w for w in _cjk_words(stmt) if w in turn and w != new]
    if not stmt or not shared:
        return []
    return [_corr(fact("用户" + zh_third(stmt.replace(shared[0], new, 1)), value=new), shared[0])]


def _zh_owner(context: str, rel: str) -> tuple[str, str]:
    """Whose value the assistant's turn asked about: the user, their team, or a relation."""
    if rel:
        return "用户的" + ZH_REL_SAY.get(ZH_REL[rel], rel), "third_person"
    if re.search(r"你们(?:组|团队|公司|项目|team)?", context):
        return "用户团队", "team"
    return "用户", "user"


def _drop_common_tail(new: str, stmt: str) -> str:
    """'芒果过敏' against '菠萝过敏' -> '芒果': the part of the new value that differs."""
    n = 0
    while n < len(new) - 1 and n < len(stmt) and new[-1 - n] == stmt[-1 - n]:
        n += 1
    return new[: len(new) - n] if n >= 2 else new


def _cjk_words(text: str) -> list[str]:
    import jieba  # local: jieba loads its dictionary on first use

    return [w for w in jieba.lcut(text) if len(w) >= 2 and CJK_RE.match(w)]


def _en_untied(clauses: list[Clause], context: str) -> list[DerivedFact]:
    rel, old = _en_old(context)
    for c in clauses:
        t = c.text
        if rel and (m := re.match(r"^(?:she|he)(?:'s| is) (in|at|with) (.+?)(?: now)?$", t, re.I)):
            who = f"User's {EN_REL_SAY.get(EN_REL[rel], rel)}"
            return [_corr(fact(f"{who} is {m.group(1)} {m.group(2)} now", subject="third_person",
                               slot=f"{EN_REL[rel]}.location", value=m.group(2)), None)]  # fmt: skip
        if m := re.match(r"^I'?m (at|with|in|on|into) (.+?) now$", t, re.I):
            text = f"User is now {m.group(1)} {m.group(2)}" + (
                f", not {en_third(old)}" if old else ""
            )
            return [_corr(fact(text, value=m.group(2)), old)]
        if (
            m := re.match(
                r"^I'?m (?:just |now )?(doing|into|taking|learning|playing|on) (.+?)(?: now)?$",
                t,
                re.I,
            )
        ) and old:
            text = f"User is now {m.group(1)} {m.group(2)}, not {en_third(old)}"
            return [_corr(fact(text, kind="preference", value=m.group(2)), old)]
        m = re.match(r"^(?:it'?s|now it'?s|now|switched to|moved to) (.+?)(?: now)?$", t, re.I)
        if m and old and not re.search(r"\b(?:one|that|this|fine|ok|okay)\b", m.group(1), re.I):
            text = f"User now: {en_third(m.group(1))}, not {en_third(old)}"
            return [_corr(fact(text, kind="preference", value=m.group(1)), old)]
    return []


def _corr(f: DerivedFact, old: str | None) -> DerivedFact:
    return f.model_copy(update={"correction": True, "corrects": old or None})


def untied_correction(text: str, context: str | None) -> list[DerivedFact] | None:
    """Facts of a correction that answers `context` without naming what it fixes; [] when
    the turn only waves something away, None when the turn is no such correction."""
    if not context or not (ZH_UNTIED_RE.match(text) or EN_UNTIED_RE.match(text)):
        return None
    if TRANSIENT_RE.search(text):
        return []
    clauses = split_clauses(text)
    facts = _zh_untied(clauses, context) if has_cjk(text) else []
    return facts or _en_untied(clauses, context) or None
