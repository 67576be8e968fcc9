"""Last checks on a rule's fact before it is kept: one fact in the user's voice, said in the
third person, that names what it is about. A fact that fails is trimmed to the part that
passes, or dropped: a wrong fact is worse than a missing one, and the episode keeps the words.
"""

from __future__ import annotations

import re

from langmem_plus.processors.facts.derived import DerivedFact
from langmem_plus.processors.facts.helpers import tidy
from langmem_plus.text.scripts import CJK

__all__ = ["RELATIONS", "assistant_known", "checked", "well_formed"]

# the people a user talks about: a fact or clause that opens on one of them is about them
RELATIONS = (
    r"女儿|儿子|老婆|老公|妻子|丈夫|爸爸|妈妈|爸|妈|父亲|母亲|哥哥|姐姐|弟弟|妹妹|哥|姐|弟|妹|孩子|"
    r"朋友|同事|室友|男朋友|女朋友|daughter|son|wife|husband|mom|dad|mother|father|brother|"
    r"sister|kids?|partner|friend|boyfriend|girlfriend|roommate|coworker|colleague"
)

# first-person words a rewritten fact must not keep ("... when she's eating with us")
_EN_FIRST = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|me|my|mine|myself|we|we're|us|our|ours)\b")
_ZH_FIRST = re.compile(r"我(?!们)|咱")
# the assistant, left in a fact that is not an instruction to it
_YOU = re.compile(r"\byou(?:'re|'ve|'ll|r|rs)?\b|(?<!迷)你(?!们)", re.I)  # 迷你: "mini"
# a demonstrative that points at something named elsewhere: followed by no noun ("再也不点这家了",
# "喜欢那个", "moved there"), or a way to do a thing that is only pointed at ("都按这个来", "照
# 上次那样写"); a place word only right after a verb ("静安寺那边" names its place)
_ZH_DEICTIC = re.compile(
    r"[这那](?:家|个|款|位|间|种|样)(?=$|[了的吧啊呢嘛啦哦，,。！!？?\s])"
    r"|(?:按|照|像|跟)(?:着|照)?(?:上次|之前)?[这那](?:个|样|种|么)?(?=[来做办弄写排走改])"
    r"|(?<=[点去买用吃喝住选换找到来看订坐搬回在])[这那](?:里|儿|边)"
)
_EN_DEICTIC = re.compile(
    r"\b(?:(?:this|that) (?:one|place|guy|thing|shop|spot)|(?:go|went|going|moved|live|living|"
    r"work|working|stay|staying|back) (?:there|here))\b"
    # a way to do a thing only pointed at, ending the clause ("do it like that", "the same way")
    r"|\b(?:like (?:this|that)|(?:this|that) way|the same(?: way)?)(?=\s*(?:pls|please)?[.!?]*$)",
    re.I,
)
# a plan, wish or liking whose verb ends it, with nothing it is about
# ("下周还想去", "我不爱看"); "去" after a place is a whole plan ("下周去成都")
_ZH_NO_OBJECT = re.compile(
    r"(?:想|要|会|打算|准备|还|爱|喜欢)(?:再)?(?:去|来|回|做|买|吃|喝|看|听|玩|弄|试试)了?$"
)
# a way of doing pointed at with 这么 / 那样 and a bare verb ("就这么办", "那样做")
_ZH_SO = re.compile(r"(?:^|就|都)[这那](?:么|样)(?:办|做|来|弄|写|定)(?:吧|了)?$")
# he / she with no one named in the fact it is said in ("don't mention her anymore")
_PRONOUN = re.compile(
    r"(?<!/)\b(?:he|she|him|her|his|hers)\b(?!/)|(?:^|[，,\s]|给|跟|和|让|叫|提|说)[他她](?!们)",
    re.I,
)
_NAMED = re.compile(r"\bUser's \w+|用户的\S|\b(?!User\b|The\b)[A-Z][a-z]+")
_CLAUSE_SEP = re.compile(r"[，,；;]\s*")


def _bad(text: str, kind: str) -> bool:
    """Whether one clause of a fact keeps a first-person word, the assistant or a deictic."""
    if _EN_FIRST.search(text) or _ZH_FIRST.search(text):
        return True
    if kind != "instruction" and _YOU.search(text):
        return True
    if _ZH_NO_OBJECT.search(text) or _ZH_SO.search(text):
        return True
    return bool(_ZH_DEICTIC.search(text) or _EN_DEICTIC.search(text))


# the body of a wish or instruction ("用户希望…", "User wants: …")
_WISH = re.compile(
    r"^(?:用户希望|User wants:?\s*|User doesn't want the assistant to\s)(?P<body>.+)$"
)
# a wish whose body opens with the user again: a condition rewritten into a second subject
# ("用户希望用户问助手菜谱，…"); "用户的…" ("给用户的例子") is an object
_WISH_SELF = re.compile(
    r"^(?:用户(?!的)|User\b(?!'s)|the user\b(?!'s)|they(?:'re|'ll|'d|'ve)?\b)", re.I
)
# the user's own hopes for later, read as a request because they follow 以后 ("用户希望老了想去
# 大理住", "用户希望有机会一定要去冰岛", "用户希望孩子大了再说"), or what the assistant said
# ("就按助手说的办"): nothing the assistant is asked to do, or nothing named
_ZH_WISH_OWN = re.compile(
    r"(?<!不)想|打算|一定要|再说$|^(?:等)?(?:老了|有机会|有钱了?|有空|退休|孩子大了)|按助手说的"
)
# a wish that is only its condition, the request cut off ("用户希望每次用户问助手天气",
# "User wants: whenever they ask for a workout")
_WISH_IF_ONLY = re.compile(
    r"^(?:每次|每当|当|如果|要是|下次)用户(?!的)(?!.*(?:就|[，,]))|"
    r"^(?:when|whenever|if|every time|each time)\b[^,]*$",
    re.I,
)
# a request whose only object is a pronoun ("stop doing that", "don't mention it")
_EN_PRONOUN_ONLY = re.compile(r"^(?:\S+ ){0,3}\S+ (?:it|that|this|them|those|these)$", re.I)
# a fact that ends before what it says: a verb's complement with no verb after it
# ("…提醒用户下", "…提醒用户一下"), a function word that cannot end it ("use the", "remind
# them to"); "on", "in", "that" and a stranded "to" can ("from now on", "log in", "don't do
# that", "places that need a car to get to"), and so can a verb's 一下 ("先检查一下")
_DANGLING = re.compile(
    r"(?:用户|助手)一?下$|\b(?:the|a|an|and|or|of|my|your|their)$|"
    r"\b(?:them|him|her|the user|the assistant) to$",
    re.I,
)
# a change reported as done ("standup 改成下午了", "the call moved to 3pm"): news, no request;
# a wish that asks not to ("别再用Java了") keeps its 了
_ZH_CHANGE_DONE = re.compile(r"(?:改成|改为|改到|换成|换到|调到|挪到|搬到|变成)[^别]*了$")
_EN_CHANGE_DONE = re.compile(
    r"\b(?:moved|changed|switched|shifted|got (?:moved|changed|pushed)|was (?:moved|changed|pushed))"
    r" (?:to|over|back)\b",
    re.I,
)
# an event that names nothing of its own: a verb and a bare definite noun ("User got the
# job": which job?); a capitalised name ("sold the Civic") or any more words names it
_EN_BARE = re.compile(r"^(?:The )?User(?:'s(?: [a-z]+){1,2})? (?:\w+ ){1,2}the [a-z]+[.!]*$")


# a fact whose owner is the user's team is the team's, one that opens on a relation is theirs,
# whichever rule wrote it ("用户老婆怀孕了")
_TEAM_OWNED = re.compile(r"^(?:The )?(?:user's team\b|用户(?:的)?团队)", re.I)
_RELATION_OWNED = re.compile(
    rf"^(?:用户(?:的)?(?:{RELATIONS})(?![们圈a-z])|(?:The )?User's (?:{RELATIONS})\b)", re.I
)


def well_formed(f: DerivedFact) -> bool:
    """Whether `f` says something whole on its own: not cut off, a wish whose body is a
    request (not the user again as its subject, not a change reported as done), and a fact
    with content beyond its verb. What fails is not stored; the episode keeps the words."""
    if _DANGLING.search(f.text.strip().rstrip("。.!！")):
        return False
    wish = _WISH.match(f.text)
    if wish:
        body = wish.group("body").strip().rstrip("。.!！")
        if _WISH_SELF.match(body) or _WISH_IF_ONLY.match(body) or _EN_PRONOUN_ONLY.match(body):
            return False
        if f.text.startswith("用户希望") and _ZH_WISH_OWN.search(body):
            return False
        if _ZH_CHANGE_DONE.search(body) or _EN_CHANGE_DONE.search(body):
            return False
    return not _EN_BARE.match(f.text)


def checked(f: DerivedFact) -> DerivedFact | None:
    """`f` when it is one clean fact; trimmed to its first clauses when a later clause carries
    the user's or the assistant's own words ("..., no shrimp recipes when she's eating with
    us") or a he / she that names no one; None when its head does, or when it is not well
    formed (`well_formed`)."""
    if not well_formed(f):
        return None
    if f.subject == "user" and f.kind != "instruction":
        if _TEAM_OWNED.match(f.text):
            f = f.model_copy(update={"subject": "team"})  # "User's team moved to pnpm"
        elif _RELATION_OWNED.match(f.text):
            f = f.model_copy(update={"subject": "third_person"})
    # he / she with no one named: the fact is cut before the clause that says it ("…, keep
    # it under 5 sentences, she never reads past that"), dropped when its head does
    unnamed = not _NAMED.search(f.text)
    parts = _CLAUSE_SEP.split(f.text)
    keep: list[str] = []
    for part in parts:
        if _bad(part, f.kind) or (unnamed and _PRONOUN.search(part)):
            break
        keep.append(part)
    if len(keep) == len(parts):
        return f
    if not keep:
        return None
    sep = "，" if re.search(rf"[{CJK}]", f.text) else ", "
    text = tidy(sep.join(keep))
    if f.value and f.value not in text:
        return None  # what it states went with the trimmed words
    return f.model_copy(update={"text": text})


# an assistant turn that shows it already knows what the user says ("你上次说在用小米手机",
# "since you're in Denver", "as you mentioned")
_KNOWN = re.compile(
    r"你(?:之前|上次|以前|刚才|前面)?(?:说过|说|提到过?|讲过)|记得你|\b(?:you (?:said|mentioned|told me)|"
    r"as you (?:said|mentioned)|since you(?:'re| are| have|'ve)?)\b",
    re.I,
)
_KEY = re.compile(rf"[{CJK}]{{2,}}|[A-Za-z][\w+#.-]*\d*|\d[\w:.]*")
_EN_STOP = frozenset(
    ("user", "user's", "the", "a", "an", "is", "are", "was", "has", "have", "their", "they",
     "them", "in", "at", "on", "of", "to", "and", "for", "with", "now", "still")
)  # fmt: skip


def assistant_known(f: DerivedFact, context: str | None) -> bool:
    """Whether `f` only restates what the assistant's turn before it shows it already knows:
    every content word of the fact is in that turn, which says it knows ("你上次说…")."""
    if not context or not _KNOWN.search(context) or f.correction:
        return False
    ctx = context.lower()
    words = [w.lower() for w in _KEY.findall(f.text)]
    words = [w for w in words if w not in _EN_STOP]
    for w in words:
        if re.search(rf"[{CJK}]", w):
            w = re.sub(r"^用户的?|现在|目前|还是|一直|已经|仍然|还|也|都", "", w)
            # a Chinese run is read in pairs: each two-character piece must be in the turn
            if any(w[k : k + 2] not in ctx for k in range(max(1, len(w) - 1))):
                return False
        elif w not in ctx:
            return False
    return bool(words)
