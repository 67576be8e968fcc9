"""Precision-first offline fact rules: a fact only when sure, everything else stays in its episode.

`rule_facts` reads the user turns of one exchange and returns `DerivedFact`s, each with the
slot it is a value of (so a later value closes it), its source turn(s), and correction marks:
a mid-turn self-correction keeps only its last value, and an untied correction is read
against the assistant turn said before it. Questions, mood, chitchat, sarcasm taken
literally and one-off requests give no fact.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from langmem_plus.errors import ValidationError
from langmem_plus.processors.facts import guards
from langmem_plus.processors.facts.chinese import ZH_RULES, zh_ampm
from langmem_plus.processors.facts.corrections import Repair, self_correction, untied_correction
from langmem_plus.processors.facts.derived import DerivedFact
from langmem_plus.processors.facts.english import EN_RULES
from langmem_plus.processors.facts.helpers import fact, normalize
from langmem_plus.processors.facts.patterns import (
    EN_MARKER_RE,
    EN_REL_RE,
    EN_REMEMBER_RE,
    EN_UNTIED_RE,
    SARCASM_RE,
    ZH_MARKER_RE,
    ZH_REL_RE,
    ZH_REMEMBER_RE,
    ZH_UNTIED_RE,
)
from langmem_plus.text.clauses import Clause, split_clauses, strip_fillers
from langmem_plus.text.person import en_third, zh_third
from langmem_plus.text.scripts import CJK, CJK_RE, LATIN_RE

__all__ = ["is_change", "is_correction", "rule_facts"]

_ROLES = ("user", "assistant")
_PET_RE = re.compile(r"我(?:家|的)?(?:狗子|狗狗|狗|猫咪|猫)|\bmy (?:dog|cat|puppy|kitten)\b", re.I)
# 'not X, (it's) Y' / '不是X，是Y': X is the value a correction replaces
_NOT_BUT_RE = re.compile(
    r"(?:不是|并不是)\s*([^\s，,是]{1,10}?)\s*[，,]?\s*(?:而)?是|\bnot (\S+(?: \S+)?),\s*(?:it'?s|but)\b",
    re.I,
)
# "住在上海，不是北京" / "in Shanghai now, not Beijing": the value after 不是 / not is the one
# that does not hold
_DENIED_RE = re.compile(
    r"[，,]\s*(?:而|并)?不是\s*([^\s，,。！!？?]{1,12})[。.!！]*$|,\s*not\s+([\w .'-]{1,30}?)[.!]*$",
    re.I,
)
# "六岁不是五岁": the same, said without a pause
_GLUED_NOT_RE = re.compile(r"是[^\s，,。不]{1,8}?((?:而)?不是[^\s，,。！!？?]{1,8})(?=[。.!！]*$)")
# "忘掉我住在北京这件事" / "把X这条忘了吧" / "forget that I live in Beijing"
_ZH_FORGET_RE = re.compile(
    r"^(?:请|麻烦)?你?(?:帮我)?(?:(?:忘掉|忘记掉|删掉|删除|别再记着?|不要再记着?)(?P<what>[^，,。！!？?]+)"
    r"|(?:忘了|忘记)(?P<what2>[^，,。！!？?]+?(?:这件事|这条|那条|的事))|把(?P<what3>[^，,。！!？?]+?)"
    r"(?:给我)?(?:忘掉|忘了|删掉|删了|删除|forget\s*掉))(?:吧|了)?(?=$|[，,。！!])"
)
_EN_FORGET_RE = re.compile(
    r"^(?:please\s+)?(?:forget|delete|remove|erase)\s+(?!it\b|about it\b|everything\b)"
    r"(?:that\s+|about\s+|the fact that\s+|what I said about\s+)?(?P<what>[^,.!?]+?)"
    r"(?:\s+please)?(?=$|[,.!])",
    re.I,
)
_ABOUT_RE = re.compile(r"(?:这件事|这条|那条|的事|这个|那个|记忆|的记录|信息)+$|^(?:关于)")
_PRAISE_RE = re.compile(
    r"真棒|太好了|好开心|真开心|太爱|最喜欢|就喜欢|喜欢|新体验|perfect|wonderful|great|best|love|fantastic|amazing",
    re.I,
)
_ZH_SARCASM_LIKE = re.compile(r"我\S{0,3}(?:喜欢|爱)\S.*(?:呢|新体验|真棒|真好)[。！!~～]*$")


# strong correction words only: a bare "actually" / "其实" also opens ordinary sentences
_STRONG_ZH = re.compile(
    r"更正|纠正|说错了|记错了|搞错了|弄错了|口误|老黄历|早就不在|已经不在|早就不[用做干]|停用了"
)
_STRONG_EN = re.compile(
    r"\b(?:correction\s*[:,-]|I was wrong|I misspoke|I got (?:that|it) wrong|told you wrong|"
    r"scratch that|my bad|that was years ago|not there anymore|no longer (?:at|in|with|on)|"
    r"not (?:a thing )?any ?more\b|that'?s (?:over|done with)\b)",
    re.I,
)


def is_correction(text: str) -> bool:
    """Whether a user turn says, in so many words, that something said before was wrong or is
    over ("更正一下", "I told you wrong", "她早就不在那了"); ordinary openers do not count."""
    if not isinstance(text, str):
        raise ValidationError("text must be a string")
    return bool(_STRONG_ZH.search(text) or _STRONG_EN.search(text))


# a new value for something that was different before, said without a correction word
_CHANGE = re.compile(
    r"现在(?:都|已经|改|换|是|迷上)|搬到|搬去|换成|换了|改成|改到|挪到|调到|跳槽|入职|不再|"
    r"已经不|戒了|先停了|\bswitched (?:to|over)|\bmoved (?:my|the|it|to|over)\b|\bdown to\b|"
    r"\bchanged to\b|\bno longer\b|\bupgraded to\b|\binstead of\b|"
    r"\bnow (?:I|we|it'?s|on|at|in|use)\b|"
    # a clause that says how things are now and ends on 了: "现在基本都去超级猩猩了",
    # "现在周六上午改去学围棋了", "现在全切到 Cursor 了"
    r"现在[^，,。！!？?]{0,10}?(?:都去|都用|只去|改|换|切)[^，,。！!？?]{0,20}了|切到|往后推|推到|推迟到|"
    # the new state said with "now" at its end: "I'm fully remote now", "X is what I'm doing now"
    r"\bI'?m (?!(?:so|very|really|pretty|too|kinda|super)\b)[\w -]{1,30} now\b|\bis what I'?m \w+ now\b|"
    # a habit said as how it goes these days: "这阵子我都骑电动车上班", "these days I take the
    # 7:40 bus" (not a mood: "这阵子都挺忙", "these days I'm so tired")
    r"(?:这阵子|这段时间|这些天|这几(?:周|个月))[^，,。！!？?]{0,3}?都(?!很|挺|好|太|特别|比较|有点|没)|"
    r"\b(?:these days|nowadays),? I (?!'?m |am )",
    re.I,
)


def is_change(text: str) -> bool:
    """Whether a user turn reports a change of something that held before ("搬到回龙观了",
    "switched to the 6am spin class", "got it down to $450"), without saying it was wrong."""
    if not isinstance(text, str):
        raise ValidationError("text must be a string")
    return bool(_CHANGE.search(text))


def _lone_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def _validate(turns: object, context: object) -> list[tuple[str, str]]:
    if isinstance(turns, str | bytes) or not isinstance(turns, Sequence):
        raise ValidationError("turns must be a list of {'role', 'text'} mappings")
    if context is not None and not isinstance(context, str):
        raise ValidationError("context must be a string or None")
    if context is not None and _lone_surrogate(context):
        raise ValidationError("context must be valid Unicode (it holds a lone surrogate)")
    out = []
    for n, turn in enumerate(turns):
        if not isinstance(turn, Mapping):
            raise ValidationError(f"turn {n} must be a mapping with 'role' and 'text'")
        role, text = turn.get("role"), turn.get("text")
        if role not in _ROLES:
            raise ValidationError(f"turn {n}: role must be 'user' or 'assistant', got {role!r}")
        if not isinstance(text, str):
            raise ValidationError(f"turn {n}: text must be a string")
        if _lone_surrogate(text):
            raise ValidationError(
                f"turn {n}: text must be valid Unicode (it holds a lone surrogate)"
            )
        out.append((role, text))
    return out


def rule_facts(
    turns: Sequence[Mapping[str, str]], *, context: str | None = None
) -> list[DerivedFact]:
    """Facts stated in the user turns of one exchange (``[{"role", "text"}]``).

    `context` is the assistant turn said just before, which an untied correction answers;
    an assistant turn inside `turns` is the context of the user turn after it. Facts come
    only from user turns; `source_turns` holds the index of the turn that states each one.
    """
    checked = _validate(turns, context)
    out: list[DerivedFact] = []
    seen: set[object] = set()
    before = context
    for idx, (role, text) in enumerate(checked):
        if role == "assistant":
            before = text
            continue
        for found in _turn_facts(text, before):
            f = found if found.forget else guards.checked(found)
            if f is None or (not f.forget and guards.assistant_known(f, before)):
                continue
            key = (f.subject, f.slot, f.value) if f.slot and f.value else f.text
            if key not in seen:
                seen.add(key)
                out.append(f.model_copy(update={"source_turns": [idx]}))
    return out


# the one relation an assistant turn asks about ("How's your sister doing?", "你上次说女儿在读…")
_EN_ASKED_REL = re.compile(rf"\byour ({EN_REL_RE})\b", re.I)
_ZH_ASKED_REL = re.compile(rf"(?<![你我他她])(?:你的?|你家)?({ZH_REL_RE})")
_OPENING_HE_SHE = re.compile(
    r"^((?:(?:nah|no|nope|haha|oh|well|yeah|yes|lol|actually)\b[\s,!.]*)*)(she|he)\b(?!/)", re.I
)


_EN_SHE = re.compile(
    r"sister|mom|mum|mother|wife|daughter|girlfriend|fiancee|grandma|grandmother|aunt|niece|sis",
    re.I,
)
_EN_HE = re.compile(
    r"brother|dad|father|husband|son|boyfriend|fiance$|grandpa|grandfather|uncle|nephew|bro", re.I
)
_ZH_SHE = re.compile(r"女|妈|姐|妹|妻|婆|奶|姥|姑|姨|嫂")
_ZH_HE = re.compile(r"儿子|爸|哥|弟|夫|公|爷|叔|舅|伯|男")


def _fits(pronoun: str, rel: str) -> bool:
    """Whether he / she (他 / 她) can be `rel` ("she" is no brother; "partner" is either)."""
    she, he = (_ZH_SHE, _ZH_HE) if CJK_RE.search(rel) else (_EN_SHE, _EN_HE)
    if pronoun.lower() in ("she", "她"):
        return not he.search(rel) or bool(she.search(rel))
    return not she.search(rel) or bool(he.search(rel))


def _answered_relation(text: str, context: str | None) -> str:
    """The turn with a he / she that opens it, answering an assistant turn that asks about one
    relation ("How's your sister doing?" -> "nah she moved last year"), said as that relation
    ("my sister moved last year"); the turn as it is otherwise."""
    if not context:
        return text
    if CJK_RE.search(text[:2]):
        rels = {r for r in _ZH_ASKED_REL.findall(context)}
        if len(rels) == 1 and text[:1] in ("她", "他") and _fits(text[0], rel := rels.pop()):
            return "我" + rel + text[1:]
        return text
    rels = {r.lower() for r in _EN_ASKED_REL.findall(context)}
    m = _OPENING_HE_SHE.match(text)
    if len(rels) == 1 and m and _fits(m.group(2), next(iter(rels))):
        return f"my {rels.pop()}{text[m.end() :]}"  # "nah" still marks it a correction
    return text


def _turn_facts(raw: str, context: str | None) -> list[DerivedFact]:
    text = normalize(_without_material(raw))
    if not text or _sarcastic(raw, text):
        # irony is not stored: read literally it is false, and reading it backwards is a
        # guess (measured: the inverted stances were wrong more often than right on unseen
        # chat); the episode keeps what was said
        return []
    lead = strip_fillers(text)
    forgotten, lead = _forget_request(lead)
    if forgotten is not None:
        return forgotten + (_turn_facts(lead, context) if lead else [])
    remember = ZH_REMEMBER_RE.match(lead) or EN_REMEMBER_RE.match(lead)
    if remember:
        text = lead[remember.end() :]
    untied = untied_correction(lead, context)
    if untied is not None:
        return untied
    text = _answered_relation(text, context)
    repair = self_correction(text)
    if repair is False:
        return []
    if isinstance(repair, Repair):
        text = repair.text
    clauses = _and_split(_said_to_keep(_no_restated_consequence(split_clauses(text))))
    clauses = _with_subordinate(_dropped_subject(clauses))
    facts = _clause_facts(clauses, False) + _pet_name(text)
    if remember and clauses and not any(0 in f.source_turns for f in facts):
        facts = _remembered(clauses) + facts
    facts = [f.model_copy(update={"source_turns": []}) for f in facts]
    if isinstance(repair, Repair):
        return [
            f.model_copy(update={"correction": True, "corrects": repair.old})
            for f in facts
            if repair.new in f.text or zh_ampm(repair.new) in f.text  # "4pm" said as "下午4点"
        ]
    return _marked(facts, lead, text, context)


# a request to work on a text given after a colon ("帮我把这句翻成英文：…", "proofread this:
# …"): the text is material for the task, not something the user says about themselves
_MATERIAL = re.compile(
    r"(?:翻译|翻成|译成|润色|改写|校对|总结一?下|概括一?下|"
    r"\b(?:translate|proofread|rewrite|reword|polish|summari[sz]e|paraphrase)\b|"
    r"\b(?:edit|fix|check|reply to|respond to)\s+(?:this|the following|my (?:email|message|"
    r"text|draft|reply)))[^：:\n]{0,40}[：:]",
    re.I,
)


def _without_material(text: str) -> str:
    """`text` up to the colon of a request to work on a text given after it."""
    m = _MATERIAL.search(text)
    return text[: m.start()].rstrip(" ，,") if m else text


def _sarcastic(raw: str, text: str) -> bool:
    """Irony markers; 🙃 alone is an eye-roll, not irony, with praise it marks the praise as
    meant backwards."""
    return bool(
        SARCASM_RE.search(raw)
        or _ZH_SARCASM_LIKE.search(text)
        or ("🙃" in raw and _PRAISE_RE.search(raw))
    )


def _without_glued_denial(facts: list[DerivedFact], text: str) -> list[DerivedFact]:
    """ "我女儿是六岁不是五岁": the facts without the value that does not hold."""
    glued = _GLUED_NOT_RE.search(text)
    if not glued:
        return facts
    said = glued.group(1)
    return [
        f.model_copy(update={"text": f.text.replace(said, "").rstrip("，, ")})
        if said in f.text
        else f
        for f in facts
    ]


def _marked(
    facts: list[DerivedFact], lead: str, text: str, context: str | None
) -> list[DerivedFact]:
    """The facts marked as a correction when the turn says it is one ("更正一下", "not X,
    but Y", an untied reply), with the old value it names; "X, not Y" names Y as the value
    that does not hold (a fact that states it is dropped)."""
    denied = _DENIED_RE.search(text)
    old = denied.group(1) or denied.group(2) if denied else None
    if not denied:
        facts = _without_glued_denial(facts, text)
    if old:
        facts = [f for f in facts if old not in f.text]
    elif not (
        ZH_MARKER_RE.search(lead)
        or EN_MARKER_RE.search(lead)
        or (context and (ZH_UNTIED_RE.match(lead) or EN_UNTIED_RE.match(lead)))
    ):
        return facts
    else:
        not_but = _NOT_BUT_RE.search(text)
        old = next((g for g in not_but.groups() if g), None) if not_but else None
    return [
        f.model_copy(
            update={
                "correction": True,
                "corrects": f.corrects or (old if old and old not in f.text else None),
            }
        )
        for f in facts
    ]


def _forget_request(lead: str) -> tuple[list[DerivedFact] | None, str]:
    """A request to forget something said before ("忘掉我住在北京这件事", "forget that I live
    in Beijing"): the facts it names, marked `forget` (the write path removes the matching
    current fact and stores nothing from them), and the rest of the turn; (None, lead)
    when the turn opens with no such request."""
    m = _ZH_FORGET_RE.match(lead) or _EN_FORGET_RE.match(lead)
    if not m:
        return None, lead
    what = next((v for v in m.groupdict().values() if v), "")
    named = _ABOUT_RE.sub("", what.strip()).strip(" ,，")
    facts = _clause_facts(split_clauses(named), False) if named else []
    rest = lead[m.end() :].strip(" ,，。.!！")
    return [f.model_copy(update={"forget": True, "source_turns": []}) for f in facts], rest


_AND_VERBS = (
    r"work|works|live|lives|study|studies|teach|teaches|have|has|love|loves|hate|hates|prefer|"
    r"prefers|drive|drives|speak|speaks|own|owns|run|runs|play|plays|use|uses"
)
_AND_SPLIT_RE = re.compile(
    rf"^(?P<head>(?:I|I'm|I've|my|My|we|We|our|Our)\b.+?),? (?:and|but) "
    rf"(?:(?P<subj>(?:all |also )?(?:I|I'm|I've|my|we|our)\b.+|the \w+(?: \w+)? (?:is|are|runs?|uses?)\b.+)"
    rf"|(?P<verb>(?:{_AND_VERBS})\b.+))$"
)


_THE_TOO = re.compile(r"the (\w+(?: \w+)? (?:is|are|runs?|uses?)\b.+)$")


def _and_split(clauses: list[Clause]) -> list[Clause]:
    """English statements joined by "and"/"but" read one by one: "I live in Beijing and work
    as a nurse" is two facts about the user, "I love hiking and my wife loves painting" one
    about the user and one about the wife, "we deploy with Terraform and our CI is GitHub
    Actions" two about the team (a shared subject is said again)."""
    out: list[Clause] = []
    for c in clauses:
        m = None if c.question or CJK_RE.search(c.text) else _AND_SPLIT_RE.match(c.text)
        if m is None:
            out.append(c)
            continue
        second = m.group("subj") or "I " + m.group("verb")
        if the := _THE_TOO.match(second):
            if not re.match(r"(?:we|our)\b", c.text, re.I):
                out.append(c)
                continue
            second = "our " + the.group(1)  # "our API is in Go and the frontend is Next.js"
        out.extend([Clause(m.group("head"), False), *_and_split([Clause(second, False)])])
    return out


# English chat drops the subject when it is the speaker ("been doing my long runs on Sundays",
# "then flying to Denver sat morning", "starting at Halvorsen Labs on Jan 6"): the verb form
# says which "I" it was
_DROPPED = re.compile(
    r"^(?:then |and then |and |also |plus )?(?:(?P<been>been)|(?P<ing>flying|driving|heading|"
    r"starting|moving|leaving|going part-time|going full-time))\b",
    re.I,
)


# "Daniel (my brother in Denver) just got engaged", "the kids start school in January": the
# user's relation said by name first, or with "the" for the user's own household
_APPOSED = re.compile(rf"^([A-Z][a-z]+) \((?:my|our) ({EN_REL_RE})\b[^)]*\)", re.I)
_HOUSEHOLD = re.compile(r"^the (kids|children)\b", re.I)
# a relation a clause opens on, and a verb said of one person with no subject before it
_ONE_REL = re.compile(rf"^my (?!kids|children|parents)(?:{EN_REL_RE})\b", re.I)
_THEIR_VERB = re.compile(
    r"^(?:also |now )?(?:works|lives|teaches|studies|moved|started|retired|got (?:married|engaged|"
    r"promoted))\b",
    re.I,
)


def _dropped_subject(clauses: list[Clause]) -> list[Clause]:
    """English clauses with no subject, said while the turn is about the user, given their
    "I" back; after a clause about someone else they go on about that person, and are left.
    A relation said by name first, or as "the kids", is said as "my <relation>"."""
    out: list[Clause] = []
    topic, who = "user", ""
    for c in clauses:
        if not CJK_RE.search(c.text) and (
            (a := _APPOSED.match(c.text)) or (a := _HOUSEHOLD.match(c.text))
        ):
            said = f"my {a.group(2)} {a.group(1)}" if a.lastindex == 2 else f"my {a.group(1)}"
            c = Clause(said + c.text[a.end() :], c.question)
        english = not (c.question or CJK_RE.search(c.text))
        if english and (moved := _moved_mine(c.text)) != c.text:
            c = Clause(moved, False)
        m = _DROPPED.match(c.text) if english else None
        if m and topic == "user":
            verb = c.text[m.start("been") if m.group("been") else m.start("ing") :]
            c = Clause(("I've " if m.group("been") else "I'm ") + verb, False)
        elif english and who and topic == "third_person" and _THEIR_VERB.match(c.text):
            c = Clause(f"{who} {c.text}", False)  # "…, works at a hospital": the sister does
        out.append(c)
        topic = _named(c) or topic
        if rel := _ONE_REL.match(c.text):
            topic, who = "third_person", rel.group()
        elif _named(c):
            who = ""
    return out


# a fact said in passing, in a clause that gives a reason or a time ("since I work from home
# I'm freezing", "because my wife is pregnant"): read on its own after its clause;
# "if I …" / "when I …" is not said to hold
_SUBORDINATE = re.compile(
    r"\b(?:since|because|cause|cuz|now that) (?P<sub>(?:I|I'm|I've|my|we|we're|our|"
    r"they (?:moved|changed|switched|pushed|bumped) (?:my|our))\b.+?)"
    r"(?=,| (?:I|I'm|I've|so|but)\b|$)",
)
# someone who moved the user's thing: "they moved our office to Kendall Square", "the dentist
# moved my cleaning to Oct 3", "we moved the wedding to Sept 14" say the thing moved
_MOVED_MINE = re.compile(
    r"^(?:(?:we|I) (?P<v1>moved|pushed|changed|switched|bumped|rescheduled) (?P<t1>(?:my|our|the) "
    r"[\w' ]+?)|(?:they|the \w+|(?-i:[A-Z][a-z]+)) (?P<v2>moved|pushed|changed|switched|bumped|"
    r"rescheduled) (?P<t2>(?:my|our) [\w' ]+?)) to ",
    re.I,
)


def _moved_mine(text: str) -> str:
    """ "the dentist moved my cleaning to Oct 3" -> "my cleaning got moved to Oct 3"."""
    m = _MOVED_MINE.match(text)
    if not m:
        return text
    verb, thing = m.group("v1") or m.group("v2"), m.group("t1") or m.group("t2")
    return f"{thing} got {verb} to {text[m.end() :]}"


# "…surgery got moved up to Monday so I'm flying out Sunday", "…deadline on March 3 so that'll
# have to wait": a consequence said without a comma is a statement of its own
_SO = re.compile(r" so (?=(?:I|I'm|I've|I'll|we|we're|my|our|that|that'll|that's|it|it's)\b)")


def _with_subordinate(clauses: list[Clause]) -> list[Clause]:
    """Each clause, followed by the subordinate clause inside it that states something; a
    clause and its unpunctuated "so …" read as two (the "so …" kept as said, a consequence)."""
    out: list[Clause] = []
    for c in clauses:
        if (so := _SO.search(c.text)) and not c.question and not CJK_RE.search(c.text):
            out.extend([Clause(c.text[: so.start()], False), Clause(c.text[so.end() :], False)])
            continue
        out.append(c)
        m = None if c.question or CJK_RE.search(c.text) else _SUBORDINATE.search(c.text)
        if m and m.start() > 0:
            out.append(Clause(_moved_mine(m.group("sub")), False))
    return out


# the user saying they said it before: what follows from it ("so no cat cafe for me") is the
# request of the moment, not a new fact
_RESTATED = re.compile(
    r"\b(?:as I (?:said|mentioned|told you)|like I (?:said|told you)|I (?:already )?told you)\b|"
    r"我(?:之前|不是|早就)?(?:跟你)?说(?:过|了)|跟你说过",
    re.I,
)


def _no_restated_consequence(clauses: list[Clause]) -> list[Clause]:
    """The clauses without the consequences ("so ...", "所以…") of a restated fact."""
    if not any(_RESTATED.search(c.raw) for c in clauses):
        return clauses
    return [c for c in clauses if not re.match(r"(?:so|所以)\b", c.raw.strip(), re.I)]


def _said_to_keep(clauses: list[Clause]) -> list[Clause]:
    """A later clause that asks to keep something in mind ("…, keep in mind my daughter is
    7") is read as what it asks to keep: the asking is not part of the fact."""
    out = clauses[:1]
    for c in clauses[1:]:
        m = None if c.question else ZH_REMEMBER_RE.match(c.text) or EN_REMEMBER_RE.match(c.text)
        out.append(Clause(c.text[m.end() :], False) if m and c.text[m.end() :] else c)
    return out


def _remembered(clauses: list[Clause]) -> list[DerivedFact]:
    """What the user asked to remember, when no finer rule read it: its first clause only
    (an aside after it is not part of what was to be remembered)."""
    first = clauses[0]
    t = first.text
    if first.question or len(t) < 3 or re.search(r"你|吗|\byou\b|^[这那]", t):
        return []  # "记一下这个链接": what "这个" is, is not in the words
    if CJK_RE.search(t):
        if t.startswith(("我们", "咱们")):
            return [fact("用户团队" + zh_third(t[2:]), subject="team", confidence=0.8)]
        body = t[1:] if t.startswith("我") else t
        return [fact("用户" + zh_third(body), confidence=0.8)]
    m = re.match(r"^(?:my (.+)|I'?m (.+)|I am (.+)|I have (.+)|I'?ve got (.+))$", t, re.I)
    if not m:
        return []
    rest = en_third(next(g for g in m.groups() if g))
    lead = ("User's ", "User is ", "User is ", "User has ", "User has ")[m.lastindex - 1]  # type: ignore[operator]
    return [fact(lead + rest, confidence=0.8)]


# who a clause is about when it says so: he / she opens it (a third person), or the user is
# named in it ("我", "me", "we"; a he / she further in: the user doing something with them);
# "我女儿…" / "my wife…" opens on someone else
_THIRD_OPENS = re.compile(
    rf"^(?:[她他]|(?:she|he|they)\b|(?:我|我的|我家|my )(?:{guards.RELATIONS})(?!圈))", re.I
)
_OWN_SUBJECT = re.compile(
    r"我|咱|\b(?:I|I'm|I've|I'd|I'll|me|my|we|we're|us|our)\b|.[她他]|\b(?:him|her)\b"
)


def _named(clause: Clause) -> str | None:
    """Who `clause` says it is about: "third_person", "user", or None when it names no one."""
    if _THIRD_OPENS.match(clause.text):
        return "third_person"
    return "user" if _OWN_SUBJECT.search(clause.text) else None


def _clause_facts(clauses: list[Clause], sarcastic: bool) -> list[DerivedFact]:
    """The facts each statement clause gives (the first rule that fires on a clause); each
    fact's `source_turns` holds the index of its clause, for the caller to replace. A clause
    with no subject of its own goes on about the one before it: after a clause about a third
    person ("她都上初一了，现在住校，周末才回来") it gives no fact about the user."""
    out: list[DerivedFact] = []
    consumed: set[int] = set()
    topic = "user"
    for i, clause in enumerate(clauses):
        if clause.question or not clause.text or i in consumed:
            continue
        found = _first_rule(clauses, i, sarcastic)
        named = _named(clause)
        if topic == "third_person" and named is None:
            # a request is the user's whoever it is about; a statement goes on about them
            found = [f for f in found if f.subject != "user" or f.kind == "instruction"]
        if found:
            out.extend(f.model_copy(update={"source_turns": [i]}) for f in found)
            consumed.update(_taken(clauses, i, found))
        topic = named or (found[0].subject if found else topic)
    return out


def _first_rule(clauses: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """The facts of the first rule that fires on clause `i` ([] when none does)."""
    clause = clauses[i]
    rules: list[Callable[[list[Clause], int, bool], list[DerivedFact]]] = []
    if CJK_RE.search(clause.text):
        rules.extend(ZH_RULES)
    if LATIN_RE.search(clause.text):
        rules.extend(EN_RULES)
    for rule in rules:
        found = rule(clauses, i, sarcastic)
        if found:
            return found
    return []


def _taken(clauses: list[Clause], i: int, found: list[DerivedFact]) -> set[int]:
    """Indexes of the clauses after `i` that a fact already took in (its continuation)."""
    texts = " ".join(f.text for f in found)
    out: set[int] = set()
    for j in range(i + 1, len(clauses)):
        t = clauses[j].text
        if not t or not (t in texts or zh_third(t) in texts or en_third(t) in texts):
            break
        out.add(j)
    return out


def _pet_name(text: str) -> list[DerivedFact]:
    """'我家狗子：柯基，叫豆包' -> the pet is called 豆包 (never the user)."""
    pet = _PET_RE.search(text)
    if not pet:
        return []
    animal = "猫" if "猫" in pet.group() else "狗"
    for clause in split_clauses(text[pet.end() :]):
        if clause.question:
            continue
        if m := re.fullmatch(
            rf"(?:它|他|她)?叫\s*(?![了着过个声得起啊])([{CJK}]{{1,3}}|[A-Z][a-z]+)",
            clause.text,
        ):
            slot = "cat.name" if animal == "猫" else "dog.name"
            return [
                fact(
                    f"用户的{animal}叫{m.group(1)}",
                    kind="relation",
                    subject="third_person",
                    slot=slot,
                    value=m.group(1),
                )
            ]
    return []
