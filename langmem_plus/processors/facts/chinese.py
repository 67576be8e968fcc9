"""Chinese clause rules: each returns the facts one clause states, or [] when not sure."""

from __future__ import annotations

import re
from collections.abc import Callable

from langmem_plus.processors.facts.derived import DerivedFact
from langmem_plus.processors.facts.helpers import continuation, continued, fact, first_rule_facts
from langmem_plus.processors.facts.patterns import (
    ONE_OFF_ZH,
    ZH_ATTR,
    ZH_CLOCK,
    ZH_DAY,
    ZH_REL,
    ZH_REL_RE,
    ZH_REL_SAY,
    ZH_STANDING_RE,
    ZH_STATES,
    ZH_STATES_RE,
    device_name,
    device_slot,
)
from langmem_plus.processors.lexicon import JOBS_ZH, longest_first
from langmem_plus.text.clauses import Clause, split_clauses
from langmem_plus.text.person import zh_third
from langmem_plus.text.scripts import CJK

ZhRule = Callable[[list[Clause], int, bool], list[DerivedFact]]

_NAME = rf"([{CJK}]{{1,4}}?|[A-Z][a-z]{{1,12}})"
_CALL_ME = re.compile(
    r"(?<![别不要])(?:你)?(?:以后)?(?:可以|就|直接|还是)*叫我\s*(?![起吃去来回过出下上一做帮的干])"
    + _NAME
    + r"(?:就行|就好|就可以|吧)?$"
)
_MY_NAME = re.compile(r"^我(?:的名字)?叫\s*" + _NAME + r"$|^我的名字是\s*" + _NAME + "$")
_USE_ONLY = re.compile(
    rf"(?:都|一律|统一|全部)用\s*([A-Za-z][\w.+# ]{{0,20}}|[{CJK}]{{1,8}})\s*吧?$"
)
_STATE = re.compile(
    r"^我(?:已经|早就|现在|其实)?(?:是(?:个|一个|一名)?)?(?:有)?(" + ZH_STATES_RE + r")"
)
_QUIT = re.compile(
    r"^我(?:已经|早就|现在|其实|从来|完全|根本|一点都|平时)*(?:不再|不|戒了|戒|从不)(喝|吃|抽|碰)"
    r"(酒|烟|肉|咖啡|奶茶|辣|甜食|[^\s，,了]{1,6}?)(?:了)?$"
)
_ALLERGY = re.compile(r"^我(?:其实|从小|是|一直)*(?:对)?([^\s，,我你是对]{1,8}?)(?:严重)?过敏$")
_JOB = re.compile(
    r"^我(?:现在|目前|已经|"
    + ZH_DAY
    + r")?(?:开始)?在\s*([^\s，,]{2,12}?)\s*(上班|工作|实习|读研|读博|读书|念书)(?:了)?$"
)
# "我现在在一家做新能源车的公司做测试": where and as what the user works
# ("现在在一家 startup 做 backend", "在一家…创业公司写后端": the subject dropped, the firm
# named in English, the work said with 写)
_JOB_AT = re.compile(
    r"^我?(?:现在|目前)?在\s*(一家\S{0,14}?(?:公司|企业|外企|国企|央企|工厂|医院|学校|银行|工作室)"
    r"|一家\s*(?:startup|start-up)\b)\s*(做|当|写)\s*([^\s，,了]{2,8})$",
    re.I,
)
# "平时用Python写自动化脚本": the tool the user does something with
_USE_FOR = re.compile(
    rf"^我?(平时|一般|主要|日常|工作中)(?:都|也)?用\s*([A-Za-z][\w.+#]{{0,20}}|[{CJK}]{{2,6}})\s*"
    r"(写|做|开发|处理|画|剪|记)([^\s，,了]{1,12})$"
)
_NOW_USE = re.compile(r"^我?(?:现在|目前)(?:改|换)?(?:用|在用)\s*(\S.{0,15}?)(?:了)?$")
# "我在成都住了五年了": where the user has lived for years
_LIVED_IN = re.compile(r"^我(?:已经)?在\s*([^\s，,]{2,8}?)住了\S{0,6}$")
_HAVE_REL = re.compile(
    r"^我(?:家)?有(一个|一只|两个|两只|三个|个|只|一条)(" + ZH_REL_RE + r")(.{0,12})$"
)
_IDENTITY = re.compile(rf"^我(?:其实)?是(?:个|一个|一名)?([{CJK}]{{1,5}}(?:子|者|控|迷|党))$")
_HOMETOWN = re.compile(
    rf"^我(?:其实)?是([{CJK}]{{2,4}})人$|^我老家(?:是|在)\s*([{CJK}]{{2,8}}?)(?:的)?$"
)
_JOB_IS = re.compile(r"^我(?:现在|目前|其实)?是(?:个|一个|一名|做)?\s*(" + JOBS_ZH + r")(?:的)?$")
_DO_JOB = re.compile(r"^我(?:现在|目前)?是做\s*([^\s，,]{2,10}?)的$")
_AGE = re.compile(r"^我(?:今年)?([一二三四五六七八九十]{1,3}|\d{1,2})岁(?:了)?$")
_LEARNING = re.compile(
    r"^我?(?:最近|现在|这阵子)?(?:在学|在练|开始学|开始练|报了个?(?!\S*的[班课]))\s*([^\s，,了]{2,10})(?:了)?$"
)
# "另外我最近在戒糖", "我最近在准备 AWS 的认证考试": what the user is doing these weeks; a
# thought, a wait or a place is no practice ("我最近在想…", "最近在家")
_LATELY = re.compile(
    r"^(?:另外|然后|而且|还有)?我(?:最近|这阵子|这段时间|这几个月)(?:一直|也|还)?在\s*"
    r"(?!想|考虑|纠结|犹豫|琢磨|忙|等|看你|外面|家|路上|公司|医院|老家)(\S[^，,吗？?]{1,20}?)(?:呢|中)?$"
)
_PET = re.compile(
    r"^我(?:家)?(?:养了|有)(一只|两只|三只|只|一条|条)([^\s，,]{1,6}?)(猫|狗|鹦鹉|仓鼠|兔子|乌龟)"
)
_MY_ATTR = re.compile(r"^我的?\s*(" + longest_first(ZH_ATTR) + r")(?:是|为)\s*(\S.{0,24})$")
_LIVE = re.compile(
    r"^(?:我(?:现在|目前|已经|早就|早)?(?:住在|住)|我?(?:现在|目前|已经|早就|早)?(?:住在|搬到了|搬到|搬去了|搬家到))"
    r"\s*(?![得的着过一两几\d])([^\s，,了快]{1,12}?)(?:了|快.{0,6}了)?$"
)
_REL = re.compile(r"^(?:我(?:的|家)?|my)\s*(" + ZH_REL_RE + r")\s*([A-Z][a-z]+\s*)?(.*)$")
_TEAM = re.compile(
    r"^(?:我们|咱们)\s*(组里|组|团队|team|项目|公司|部门|这边|"
    # or the part of the team's work it is about: "我们后端…", "我们 release 周期…"
    r"(?P<part>后端|前端|代码|仓库|线上|测试|repo|release|backend|frontend|CI|deploy))\s*(?:的)?\s*(.+)$",
    re.I,
)
_TEAM_VERB = re.compile(
    r"是(?:每|[一二两三四五六七八九十\d])|[A-Za-z]{2,}\s*(?:上|里|部署|托管)|[用是]\s*[A-Za-z]|用的是?\s*[A-Za-z]|^用\S{2,8}$|都用|都是|都在|全在|在\s*\S+\s*上|在\S{2,6}(?:那边|附近|楼)|跑在|全部用|统一用|只用|"
    r"部署|托管|要求|必须|规定|是做|位于|每周|每天|每个月"
)

# a complaint: what it says happens is not what the user asks for
_COMPLAINT = re.compile(
    r"烦死|烦得|气死|凭什么|受不了|受够|服了|无语|崩溃|头秃|太过分|烦人|真的想砸|要命|气人|离谱|"
    rf"醉了|吐了|坑死|这个?破[{CJK}]|破[{CJK}]{{1,4}}又|又[^，,。！!]{{1,8}}了[，,。！!]"
)
# a request made to the assistant, which a complaint beside it does not cancel
_TO_ASSISTANT = re.compile(r"你|给我|帮我|提醒我|告诉我|叫我|回复我|回答我")
# "以后再也不点这家了", "以后我每天跑步": the user's own resolution, asked of no one
_RESOLUTION = re.compile(r"^(?:我|(?:就)?再也不|永远不|绝不|打死也?不|坚决不)")
# "推荐餐厅的时候记住我不吃辣": what the request asks to keep in mind is a fact about the user
# (when a statement about the user follows it; "记得避开花生" asks to do something)
_KEEP_IN_MIND = re.compile(r"(?:注意一下|注意|留意一下|留意|记住|记着|记得|别忘了)[，,\s]*")
_OPINION = re.compile(r"累|惨|忙|烦|好[^像]|太|真[的是]|哈|挺|超|卷|难|吵|无语|离谱|服了")
_EVENT = re.compile(
    r"(考过了|通过了|毕业了|结婚|订婚|离职|辞职|入职|升职|加薪|怀孕了|退休|领证|上岸了|"
    r"报名了|被录取|买了房|买房了|买车了|提车了|分手了|发表了|答辩通过|转正了|拿到了?绿卡)"
)
_EVENT_SLOT = {"离职": "job", "辞职": "job", "入职": "job", "结婚": "marital_status",
               "领证": "marital_status", "订婚": "marital_status", "分手": "relationship"}  # fmt: skip
_GOT = re.compile(
    r"^((?:[^我你他她，,]{0,8}?)(?:证|照|offer|Offer|通知书|签证|绿卡|学位|钥匙|奖|名额|房本|合同))\s*"
    r"(?:今天|终于|刚刚?|总算)?(?:拿到了|到手了|下来了)"
)
_LOVE_IT = re.compile(r"^(.{1,10}?)(?:是我的命|是我的最爱|我的最爱|一生推|yyds|永远的神)")
_CANT_LIVE = re.compile(
    r"^我(?:这人|这个人)?(?:真的|完全|根本)?(?:离不开|戒不掉|少不了)\s*([^\s，,了]{1,8})"
)
_CANT_STAND = re.compile(
    r"^(?P<obj>[^我你，,]{1,12}?)我(?:是|真的|实在|完全|一直)*(?:受不了|接受不了|欣赏不来|无感|不感冒)"
)
_NOW_HAS = re.compile(
    r"^我?(?:现在|目前)(?:改|换)?(开|骑|养|住)(?:的是|了)?\s*([^\s，,了]{2,12})(?:了)?$"
)
_WONT = re.compile(
    r"^(?P<obj>[^我你，,]{1,12}?)我(?:现在|是|从来|真的|完全|根本|一点都|一点也|一秒都|一口都|都|也)*"
    r"(?:(?:不|不再|从不|没法)(?P<v1>碰|吃|喝|看|听|玩|穿)|(?P<v2>碰|吃|喝|看|听|玩|穿)不了)"
)
_ONLY = re.compile(
    r"我(?:平时)?(?:只|就只)(喝|吃|用|穿|看|听|玩)(?![了过一几个])\s*([^\s，,了]{1,12})"
)
_LIKE = re.compile(
    r"我(?:可|真是|就|最|很|超|特别|超级|真的|非常|比较|还挺|挺|太)*(喜欢|爱|讨厌|受不了|不喜欢|不爱)"
    r"(?!你|吗)\s*(.{1,16}?)(?:了呢|了|呢)?$"
)
_SET_AT = re.compile(
    r"^(?:我们|咱们|我)?的?([^\s，,我你]{0,8}?)(定在|约在|安排在|改在|订在)\s*([^\s，,]{1,12})$"
)
_ROSE = re.compile(
    r"^(?:我家|我的|我)?([^\s，,我你]{1,6}?)(?:又)?(涨到|降到|涨成|变成|提到|加到|降成)了?\s*([^\s，,]{1,12}?)了?$"
)
_INSTEAD = re.compile(
    r"(?:不|不再)(去|用|在|做|买|报|吃|选)\s*([^\s，,了]{1,10})了?[，,]\s*(?:改|换)(?:成|去|用|为|到)?\s*([^\s，,了]{1,12})"
)
_MOVED = re.compile(
    r"^(?:我的?)?([^\s，,我你]{1,8}?)(?:已经)?(?:挪到|改到|换到|调到|改成|换成|改在)了?\s*(\S{1,15}?)\s*(?:了)?$"
)
# a switch to a named product said with no thing before it ("早就换 Obsidian 了", "已经换成
# Pixel 了"): a name in Latin letters, capitalised, is what is used now
_SWITCHED_TO = re.compile(
    r"^(?:我)?(?:早就|已经|早|最近|前阵子)?换(?:成|到|了)?\s*([A-Z][\w.+-]+(?: [A-Z0-9][\w.+-]*){0,2})\s*了$"
)
# how the user gets to work every day ("每天从燕郊坐班车到国贸", "天天挤10号线上班"): what
# follows it ("真的要命", "人都要废了") is how it feels, not how they go
_COMMUTE = re.compile(
    r"^我?(?:现在)?(?:每天|天天|平时|工作日)(?:都)?(?:从[^\s，,]{1,6}?)?"
    r"(?P<by>坐|挤|骑|开车|搭|打车|走路)[^\s，,]{0,8}?(?:上班|去公司|到[^\s，,真]{1,6}?(?=$|上班))(?:上班)?"
)
_FRAGMENT = re.compile(r"^(" + ZH_DAY + r")(\s*" + ZH_CLOCK + r")?(\s*)(\S.{0,23})$")
_PLAN = re.compile(
    r"^(?:我)?(?:"
    + ZH_DAY
    + r"(?:\d{1,2}[号日])?|接下来)[^\s在也都]{0,4}?(?:就要|打算|准备|计划|要|会|去|回|飞)"
    r"|^我?(?:约了|订了|预约了)\s*(?:" + ZH_DAY + ")"
)
# "我们打算年后把家从昌平搬到望京", "我打算周末去上 scuba 课": an intention with its time
_INTEND = re.compile(
    r"^(?:另外|然后|而且|还有)?我(?:们(?!组|团队|公司|部门))?(?:也|还)?(?:打算|准备|计划)"
    r"(?P<when>(?:明年|今年|年后|年底|年初|下半年|上半年|过完年|" + ZH_DAY + r")"
    r"(?:春天|夏天|秋天|冬天|初|底|前|后)?)(?P<act>[^你吗？?]{2,20})$"
)
# a value that names a day or a time of day (so the slot is the thing's time)
_TIMEY = re.compile(ZH_DAY + "|" + ZH_CLOCK + r"|早上|晚上|下午|上午")
_NOT_ACT = r"了|好|困|累|吗|你|怎么|热|冷|烦|哈|还是|就|也|都|再|还"
_VERB_SLOT = {"喝": "drink", "吃": "food", "用": "tool", "穿": "clothes", "看": "watch",
              "听": "music", "玩": "game", "碰": "food"}  # fmt: skip


def zh_ampm(text: str) -> str:
    """'3pm' -> '下午3点' inside a Chinese fact, so that it reads and matches as said in zh."""

    def rep(m: re.Match[str]) -> str:
        h, mins, ap = m.group(1), m.group(2), m.group(3).lower()
        return ("上午" if ap == "am" else "下午") + h + "点" + (mins or "")

    return re.sub(r"(\d{1,2})(?::(\d{2}))?\s*([ap]m)\b", rep, text, flags=re.I)


_GRADE = re.compile(
    r"(?:小学|初中|高中|大学)?(?:高[一二三]|初[一二三]|大[一二三四]|[一二三四五六]年级|研[一二三])"
)


def _rel_slot(rel: str, rest: str) -> str | None:
    """The attribute of a relation that a clause states (job, home, school year), when it is
    clear."""
    if re.search(r"在\S{1,10}(?:上班|工作|当|做)|跳槽|入职|离职|去了\S+(?:上班|工作|做)", rest):
        return f"{rel}.job"
    if re.search(r"住在|搬到|搬去", rest):
        return f"{rel}.home"
    if _GRADE.search(rest):
        return f"{rel}.school_year"
    return None


def _short(more: str, limit: int = 16) -> str:
    """A continuation kept only when short: an event fact stays one short statement."""
    return more if len(more) <= limit else ""


def names(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """叫我X -> wants to be called X (never rewritten into 用户叫用户); 我叫X -> name."""
    t = cl[i].text
    if m := _CALL_ME.search(t):
        return [fact(f"用户希望被称为{m.group(1)}", kind="instruction",
                     slot="user.preferred_name", value=m.group(1))]  # fmt: skip
    if m := _MY_NAME.match(t):
        name = next(g for g in m.groups() if g)
        if not re.match(r"[了过着的是个]", name):
            wants = any(re.search(r"叫(?:我的?)?名字", c.text) for c in cl)
            text = f"用户名叫{name}" + ("，希望被直接叫名字" if wants else "")
            return [fact(text, kind="profile", slot="user.name", value=name)]
    return []


# a request that opens on how the assistant answers the user ("你回我消息别用…", "回答我问题先
# …", "跟我说话别…"): the assistant is its subject, the user only who is answered
_REPLY_TO_USER = re.compile(
    r"^(?:你)?(?:(?P<reply>回|回复|回答|答复)我(?:的?(?:消息|信息|问题|话))?(?:的时候|时)?|"
    r"(?P<talk>(?:跟|和|对)我(?:说|讲|聊)))"
)


def _ask(text: str) -> str:
    """A request to the assistant said of the user: "订机票你提醒我带护照" -> "订机票时提醒用户带护照"
    (the assistant is who a request is made to; "你" is never rewritten as the user)."""
    if m := _REPLY_TO_USER.match(text):
        rest = text[m.end() :].lstrip("，, ")
        text = f"助手回复时{rest}" if m.group("reply") else f"助手{m.group('talk')}{rest}"
        return zh_third(text)
    text = re.sub(r"^(?:记得|请|麻烦你?|你|给我|帮我)+(?!的)", "", text)
    text = re.sub(
        r"^(\S+?)(?<!时)(?<!的时候)你(?=提醒|告诉|记得|帮|给|用|别|不要|先|再|都)", r"\1时", text
    )
    text = re.sub(r"(?<!助)你(?!们)", "助手", text)
    return zh_third(text)


def _when_then(cl: list[Clause], i: int, body: str) -> tuple[int, str]:
    """A standing request whose first clause only says when ("我让你订酒店的时候，记得提醒我…"):
    the condition joined to the request that follows it."""
    cond = re.fullmatch(r"(?:帮我|给我|我(?:让|叫|请)你)?\s*(\S.{1,14}?)\s*(?:的时候|时)", body)
    nxt = cl[i + 1] if i + 1 < len(cl) else None
    asks = nxt is not None and re.match(r"(?:记得|请)?(?:提醒|告诉|帮|给)", nxt.text)
    if cond and nxt is not None and (asks or not nxt.question):
        return i + 1, f"{cond.group(1)}时{re.sub(r'^(?:记得|请|你)+', '', nxt.text)}"
    # "每次我说'总结一下'，你就用三点总结": the condition and what the assistant is to do
    if re.match(r"(?:每次|每当|只要)\S", body) and nxt is not None and re.match(r"你", nxt.text):
        return i + 1, f"{body}，{nxt.text}"
    return i, body


def _said_inside(said: str) -> list[DerivedFact]:
    """The user facts a request asks to keep in mind, read by the clause rules on their own;
    none when it asks to keep in mind what the next clauses say (they are read on their own)
    or no rule is sure (the request is not stored spliced with them)."""
    parts = split_clauses(said)
    return first_rule_facts(parts, ZH_RULES, standing)


def _not_a_request(body: str) -> list[DerivedFact] | None:
    """What a standing clause gives when it asks nothing of the assistant: nothing for the
    user's own resolution, the facts inside for "keep in mind ..."; None for a request."""
    if _RESOLUTION.match(body) and not _TO_ASSISTANT.search(body):
        return []
    keep = _KEEP_IN_MIND.search(body)
    if keep and re.match(r"$|我|咱|家里", body[keep.end() :]):
        return _said_inside(body[keep.end() :])
    return None  # "记得避开花生": what to remember to do is the request itself


def standing(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """以后/从现在开始 + a request, or 都用X吧 -> a standing instruction; a complaint ("每次开会
    都要我来做记录，凭什么") is none."""
    t = cl[i].text
    if any(_COMPLAINT.search(c.raw) for c in cl) and not _TO_ASSISTANT.search(t):
        return []
    if re.search(r"叫我|称呼|这次|这回|先", t) and not ZH_STANDING_RE.match(t):
        return []
    if re.match(r"(?:你\S{0,10}?)?(?:别再|不要再|不用再|以后别)\S{2,}", t) or (
        re.match(r"每次\S{1,8}都\S{2,}", t) and re.search(r"你|给我|帮我|提醒我|告诉我", t)
    ):
        return [fact(f"用户希望{_ask(t)}", kind="instruction")]
    if ZH_STANDING_RE.match(t):
        body = ZH_STANDING_RE.sub("", t)
        if not body and i + 1 < len(cl) and not cl[i + 1].question:
            i, body = i + 1, cl[i + 1].text
        i, body = _when_then(cl, i, body)
        if "叫我" in body or len(body) < 3:
            return []
        if (instead := _not_a_request(body)) is not None:
            return instead
        more = [
            c.text
            for c in cl[i + 1 : i + 3]
            if re.match(r"再|然后|别|不要|并且|也|都|直接", c.text)
        ]
        text = "，".join([body, *more])
        return [fact(f"用户希望{_ask(text)}", kind="instruction", slot=None)]
    if re.search(r"提前\S{0,4}提醒我|^(?:记得|记住)?提醒我(?:每|在)", t):
        return [fact(f"用户希望{_ask(t)}", kind="instruction", slot=None)]
    if (m := _USE_ONLY.search(t)) and re.search(r"吧\W*$", cl[i].raw):
        val = m.group(1).strip()
        return [fact(f"用户希望{zh_third(t)}", kind="instruction", slot=device_slot(val) or
                     f"prefers.{t[: m.start()][-4:]}", value=val)]  # fmt: skip
    return []


_SINCE = re.compile(r"^(?:从(?:今天|现在|明天|今以后|下周|下个月|这周)(?:开始|起)|今天起)[，,]?\s*")
# a time or a manner put first ("从今天开始我不喝…", "其实我受不了…") is no object
_NOT_OBJECT = re.compile(r"从|开始|今天|明天|以后|现在|最近|每天|平时|其实|一直|已经|本来|真的")


def self_state(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """我乳糖不耐受 / 我已经不喝酒了 / 我是左撇子 -> durable facts about the user."""
    t = _SINCE.sub("", cl[i].text)  # "从今天开始我不喝咖啡了": from when is not what
    if m := _STATE.match(t):
        slot, kind = ZH_STATES[m.group(1)]
        if m.group(1) == "结婚" and re.search(r"结婚了", t) and not re.search(ZH_DAY, t):
            return [fact("用户已婚", kind="profile", slot=slot, value="已婚")]
        return [fact("用户" + zh_third(t[1:]), kind=kind, slot=slot, value=m.group(1))]  # type: ignore[arg-type]
    if (
        (m := _QUIT.match(t))
        and not ONE_OFF_ZH.search(t)
        and not re.search(r"[这那]|一口|了吧", m.group(2))
    ):
        obj = m.group(2)
        return [fact("用户" + zh_third(t[1:]), kind="preference", slot=f"{m.group(1)}{obj}",
                     value=f"不{m.group(1)}{obj}")]  # fmt: skip
    if (m := _ALLERGY.match(t)) and not re.search(r"什么|啥|是不是", t):
        what = m.group(1)
        return [fact(f"用户对{what}过敏", slot=f"allergy.{what}", value=what)]
    if m := _HOMETOWN.match(t):
        place = m.group(1) or m.group(2)
        return [fact(f"用户是{place}人", kind="profile", slot="hometown", value=place)]
    if m := _JOB_IS.match(t):
        return [fact(f"用户是{m.group(1)}", kind="profile", slot="job", value=m.group(1))]
    if m := _DO_JOB.match(t):
        return [fact(f"用户是做{m.group(1)}的", kind="profile", slot="job", value=m.group(1))]
    if m := _AGE.match(t):
        return [fact(f"用户{m.group(1)}岁", kind="profile", slot="age", value=m.group(1))]
    if (m := _LEARNING.match(t)) and not ONE_OFF_ZH.search(t):
        return [
            fact(
                f"用户在{'练' if '练' in t[: m.start(1)] else '学'}{m.group(1)}",
                kind="fact",
                slot=f"learning.{m.group(1)}",
                value=m.group(1),
            )
        ]
    if (m := _LATELY.match(t)) and not ONE_OFF_ZH.search(t):
        act = zh_third(m.group(1))
        return [fact(f"用户最近在{' ' * bool(re.match('[A-Za-z]', act))}{act}", slot=None)]
    if m := _PET.match(t):
        animal = m.group(3)
        return [fact(f"用户养了{m.group(1)}{m.group(2)}{animal}", kind="relation", subject="third_person",
                     slot=f"{'cat' if animal == '猫' else 'dog' if animal == '狗' else animal}.count")]  # fmt: skip
    if m := _IDENTITY.match(t):
        return [fact(f"用户是{m.group(1)}", kind="profile", slot=None, value=m.group(1))]
    if m := _COMMUTE.match(t):
        said = m.group(0)
        return [
            fact("用户" + zh_third(said.removeprefix("我")), slot="commute", value=m.group("by"))
        ]
    return []


def attributes(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """我的车位号是B2-117 / 我住在5栋 -> the user's attribute and its value."""
    t = re.sub(r"^(现在|目前|如今)我", r"我\1", cl[i].text)  # "目前我住在上海"
    if m := _MY_ATTR.match(t):
        key, val = m.group(1), m.group(2).strip()
        return [fact(f"用户的{key}是{val}", slot=ZH_ATTR[key], value=val)]
    switched = any(re.search(r"换工作|跳槽|换了份工作|入职", c.text) for c in cl)
    if switched and (m := re.match(rf"^(?:我)?现在在\s*([A-Za-z{CJK}]{{2,8}})$", t)):
        return [fact(f"用户现在在{m.group(1)}工作", kind="profile", slot="job", value=m.group(1))]
    if m := _JOB_AT.match(t):
        firm, verb, work = m.groups()
        sep = " " if re.search(r"[A-Za-z]$", firm) else ""
        return [fact(f"用户在{firm}{sep}{verb}{' ' * bool(re.match('[A-Za-z]', work))}{work}",
                     kind="profile", slot="job", value=work)]  # fmt: skip
    if (m := _USE_FOR.match(t)) and not ONE_OFF_ZH.search(t):
        how, tool, verb, what = m.groups()
        return [fact(f"用户{how}用{tool}{verb}{what}", kind="fact",
                     slot=device_slot(tool) or f"tool.{verb}{what}", value=tool)]  # fmt: skip
    if (m := _JOB.match(t)) and not ONE_OFF_ZH.search(t):
        slot = "job" if m.group(2) in ("上班", "工作", "实习") else "school"
        return [
            fact("用户" + zh_third(t[1:]).rstrip("了"), kind="profile", slot=slot, value=m.group(1))
        ]
    if m := _NOW_HAS.match(t):
        slot = {"开": "car", "骑": "bike", "养": "pet", "住": "home.location"}[m.group(1)]
        val = re.sub(r"^在", "", m.group(2)) if m.group(1) == "住" else m.group(2)
        return [fact(f"用户现在{m.group(1)}{m.group(2)}", kind="fact", slot=slot, value=val)]
    if (m := _NOW_USE.match(t)) and (dev := device_slot(m.group(1))):
        return [fact(f"用户现在用{m.group(1)}", kind="preference", slot=dev, value=m.group(1))]
    if m := _HAVE_REL.match(t):
        rel = ZH_REL[m.group(2)]
        return [fact(f"用户有{m.group(1)}{m.group(2)}{m.group(3)}", kind="relation",
                     subject="third_person", slot=f"{rel}.count")]  # fmt: skip
    m = _LIVE.match(t) or _LIVED_IN.match(t)
    if m and not re.search(r"几天|一晚|酒店|家住", t):
        return [
            fact(f"用户住在{m.group(1)}", kind="profile", slot="home.location", value=m.group(1))
        ]
    return []


def relation(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """我女朋友叫林晓 / 我爸上个月做了手术 -> a fact about that person, never the user."""
    m = _REL.match(cl[i].text)
    if not m:
        return []
    rel_word, name, rest = m.group(1), (m.group(2) or "").strip(), m.group(3).strip()
    rel = ZH_REL[rel_word]
    said = rel_word * 2 if rel_word in ("哥", "姐", "弟", "妹") else rel_word
    who = "用户的" + ZH_REL_SAY.get(rel, said) + (f" {name} " if name else "")
    if re.match(r"的?生日是", rest):
        val = re.sub(r"^的?生日是", "", rest)
        return [
            fact(f"{who}生日是{val}", subject="third_person", slot=f"{rel}.birthday", value=val)
        ]
    if nm := re.match(rf"叫\s*(?![了着过个声得起啊])([{CJK}]{{1,3}}|[A-Z][a-z]+)$", rest):
        more = continuation(cl, i, zh=True)
        text = f"{who}叫{nm.group(1)}" + (f"，{zh_third(more)}" if more else "")
        return [fact(text, kind="relation", subject="third_person", slot=f"{rel}.name",
                     value=nm.group(1))]  # fmt: skip
    if len(rest) < 3 or re.search(r"你|吗|家住|家$", rest) or rest.startswith("家"):
        return []
    if re.match(r"(?:说|觉得|让|问|叫我|给我|跟我|老是|又|总是|非要|也说|刚才|今天)", rest):
        return []
    if ONE_OFF_ZH.search(rest) or re.search(r"真的|太|好[累烦困]|又|老是|总是|挺|超", rest):
        return []
    durable = (
        r"叫|^是|在\S{1,10}(?:上班|工作|读|上学|当|做|住)|住在|做了\S*手术|退休|结婚|离婚|生了|去了|"
        r"考上|当|岁|比用户|比我|上个月|去年|下个月|开始|确诊|住院|出院|毕业|入职|离职|搬|怀孕|预产期"
    )
    if not re.search(durable, rest) and not _GRADE.search(rest):
        return []
    more = continuation(cl, i, zh=True)
    text = who + zh_third(rest) + (f"，{zh_third(more)}" if more else "")
    kind = (
        "event"
        if re.search(r"了", rest) and re.search(r"上个月|去年|昨天|刚|上周|前", rest)
        else "fact"
    )
    slot = _rel_slot(rel, rest)
    grade = _GRADE.search(rest) if slot and slot.endswith(".school_year") else None
    value = re.sub(r"^(?:小学|初中|高中|大学)", "", grade.group()) if grade else None
    return [fact(zh_ampm(text), kind=kind, subject="third_person", slot=slot, value=value)]  # type: ignore[arg-type]


# a clause that names its own topic and its value ("数据库用的PostgreSQL", "CI是Jenkins")
_OWN_TOPIC = re.compile(
    rf"^(?![不没也都还而但就每])[{CJK}A-Za-z][{CJK}A-Za-z /+.-]{{0,15}}?\s*(?:用的是|用的|用|是|在)\s*\S"
    rf"|^(?:每(?:周|天|个?月)|(?:周|星期|礼拜)[一二三四五六日天])"
)


def team(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """我们组的代码都在 GitLab 上 -> a standing fact about the user's team or project."""
    t = cl[i].text
    m = _TEAM.match(t)
    if not m or ONE_OFF_ZH.search(t) or re.search(r"要不|吧$|想|打算", t):
        return []
    unit, rest = m.group(1).lower(), m.group(3).strip()
    if not _TEAM_VERB.search(rest) or len(rest) < 3 or _OPINION.search(rest):
        return []
    if "了" in rest and not re.search(r"已经|都|全部|统一", rest):
        return []
    if not re.search(r"用|在|跑|部署|托管|是|要求|必须|规定|位于|每", rest):
        return []
    owner = {"项目": "用户的项目", "公司": "用户公司的"}.get(unit, "用户团队的")
    if part := m.group("part"):
        rest = f"{part} {rest}" if part.isascii() else part + rest
    # one fact per statement: "数据库用的PostgreSQL" after "后端全是Go写的" is the team's
    # second fact; "不用Redux" only qualifies the one before it
    stated = [rest]
    for more in continued(cl, i, zh=True):
        if _OWN_TOPIC.match(more):
            stated.append(more)
        else:
            stated[-1] += f"，{more}"
    out = []
    for said in stated:
        who = owner.rstrip("的") if re.match(r"每|周|星期|礼拜|用|在|不", said) else owner
        slot = device_slot(said)
        out.append(fact(who + zh_third(said), subject="team", slot=slot and f"team.{slot}",
                        value=device_name(said)))  # fmt: skip
    return out


def event(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """潜水证今天拿到了 / 我下个月结婚啦 / 今天正式离职了 -> a life event of the user."""
    t = cl[i].text
    if re.search(
        r"有人|新闻|视频|[他她]|别人|朋友|同事|要是|如果|想|希望|[你]|怕|担心|会不会|要不要|没|"
        r"等着|准备|打算",
        t,
    ):
        return []
    if m := _GOT.match(t):
        more = _short(continuation(cl, i, zh=True, limit=1))
        return [fact(f"用户拿到了{m.group(1)}" + (f"，{zh_third(more)}" if more else ""),
                     kind="event", slot=None, value=m.group(1))]  # fmt: skip
    m = _EVENT.search(t)
    if re.match(r"^我(?:的|家)?(?:" + ZH_REL_RE + ")", t):
        return []
    starts = re.match(r"我|今天|终于|刚|下个?月|昨天|上周|上个月|正式|总算|" + _EVENT.pattern, t)
    if not m or not (starts or len(t) <= 10) or m.start() > 8:
        return []
    body = t[1:] if t.startswith("我") else t
    body = body[1:] if body.startswith("们") else body  # 我们订婚了: the user's own event
    # a short event clause may need the next one ('结婚啦，婚礼在苏州'); a long one is enough
    more = _short(continuation(cl, i, zh=True, limit=1)) if len(body) <= 8 else ""
    slot = next((v for k, v in _EVENT_SLOT.items() if k in t), None)
    if len(re.sub(r"今天|终于|刚刚?|正式|总算|了|啦|我", "", body)) < 2:
        return []
    body = re.sub(r"终于|总算|正式|刚刚|啦|了吧", "", body)
    return [fact("用户" + zh_third(body) + (f"，{zh_third(more)}" if more else ""),
                 kind="event", slot=slot)]  # fmt: skip


def preference(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """Stances with and without like/hate verbs (none under sarcasm: irony is not a stance)."""
    t = cl[i].text
    if sarcastic:
        return []
    if m := _LOVE_IT.match(t):
        return [fact(f"用户非常喜欢{m.group(1)}", kind="preference", slot=f"likes.{m.group(1)}",
                     value="喜欢")]  # fmt: skip
    if m := _CANT_LIVE.match(t):
        return [fact(f"用户离不开{m.group(1)}", kind="preference", slot=f"likes.{m.group(1)}",
                     value="离不开")]  # fmt: skip
    if (m := _CANT_STAND.match(t)) and not _NOT_OBJECT.search(m.group("obj")):
        obj = m.group("obj").strip()
        return [fact(f"用户受不了{obj}", kind="preference", slot=f"likes.{obj}", value="不喜欢")]
    if (m := _WONT.match(t)) and not _NOT_OBJECT.search(m.group("obj")):
        verb, obj = m.group("v1") or m.group("v2"), m.group("obj").strip()
        return [
            fact(f"用户不{verb}{obj}", kind="preference", slot=f"likes.{obj}", value=f"不{verb}")
        ]
    if m := _ONLY.search(t):
        verb, obj = m.group(1), m.group(2)
        return [fact(f"用户只{verb}{obj}", kind="preference", slot=f"only.{_VERB_SLOT[verb]}",
                     value=obj)]  # fmt: skip
    # 可太/真是太/就喜欢 … 了 are how irony is said: taken literally they would store the opposite
    irony = re.search(r"可太|真是太|太\S{0,2}(?:喜欢|爱)\S*了|^我就(?:喜欢|爱)", t)
    if (
        (m := _LIKE.search(t))
        and t.startswith("我")
        and not irony
        and not re.search(r"这个|那个|一下|的话", t)
    ):
        verb, obj = m.group(1), m.group(2)
        return [fact(f"用户{verb}{obj}", kind="preference", slot=f"likes.{obj}", value=verb)]
    return []


def value_change(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """吉他课挪到周五晚上了 -> the thing's new value (a change without a marker word)."""
    t = cl[i].text
    joined = "，".join(c.text for c in cl[i : i + 2])
    if m := _INSTEAD.search(joined):
        verb, old, new = m.group(1), m.group(2), m.group(3)
        when = re.match(ZH_DAY + r"|五一|国庆|春节|端午|中秋|元旦|寒假|暑假", joined)
        slot = f"{'trip' if verb == '去' else verb}.{when.group() if when else old}"
        f = fact(f"用户{when.group() if when else ''}改{verb}{new}（不再{verb}{old}）", kind="plan",
                 slot=slot, value=new)  # fmt: skip
        return [f.model_copy(update={"correction": True, "corrects": old})]
    if (m := _SET_AT.match(t)) and not ONE_OFF_ZH.search(t):
        thing, verb, val = m.group(1), m.group(2), m.group(3)
        timey = _TIMEY.search(val)
        slot = f"{thing or 'meeting'}.{'time' if timey else 'place'}"
        return [
            fact(
                f"用户{'的' + thing if thing else ''}{verb}{val}", kind="plan", slot=slot, value=val
            )
        ]
    if (m := _ROSE.match(t)) and re.search(r"\d|[一二三四五六七八九十百千万]", m.group(3)):
        thing, verb, val = m.group(1), m.group(2), m.group(3)
        return [fact(f"用户的{thing}{verb}了{val}", slot=ZH_ATTR.get(thing, thing), value=val)]
    if m := _SWITCHED_TO.match(t):  # "早就换 Obsidian 了": what the user uses now
        val = m.group(1).strip()
        return [fact(f"用户现在用{val}", slot=device_slot(val), value=val)]
    team = re.match(r"(?:我们|咱们)(组里|组|团队|team|项目|公司|部门)?的?", t, re.I)
    m = _MOVED.match(t[team.end() :] if team else t)
    if (
        not m
        or ONE_OFF_ZH.search(m.group(1))
        # an intention ("打算下半年把车换成电车") is no change made
        or re.match(r"现在|已经|最近|后来|又|都|也|就|打算|准备|计划|想要|想", m.group(1))
    ):
        return []
    thing, val = m.group(1), m.group(2)
    if ONE_OFF_ZH.search(t):
        return []
    timey = _TIMEY.search(val)
    slot = f"{thing}.time" if timey else (device_slot(val) or thing)
    if team:  # "我们组周会改成周二了": the team's, not "用户的们组周会"
        return [
            fact(f"用户团队的{thing}改到了{val}", subject="team", slot=f"team.{slot}", value=val)
        ]
    said = "改到了" if timey else "换成了"  # "手机换成 Pixel 了": a thing is replaced, not moved
    return [fact(f"用户的{thing}{said}{val}", slot=slot, value=val)]


def plan(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """周四下午四点 剪头发 / 下周就要搬去成都了 -> a plan with its time."""
    t = cl[i].text
    m = _FRAGMENT.match(t)
    act = m.group(4).strip() if m else ""
    # "下周四下午三点约了洗牙": what was booked for the time is the plan
    booked = re.match(r"(?:约了|预约了|订了|约好了)(?=\S{2})", act)
    bare = act[booked.end() :] if booked else act
    if m and (m.group(2) or m.group(3)) and not re.search(_NOT_ACT, bare) and len(act) >= 2:
        if re.match(r"(?:师傅|人|快递)来", act) and i > 0 and not cl[i - 1].question:
            act = f"{act}（{zh_third(cl[i - 1].text)}）"
        more = continuation(cl, i, zh=True, limit=1)
        more = more if len(more) <= 6 else ""
        when = zh_ampm(m.group(1) + (m.group(2) or "").strip())
        sep = " " if re.match(r"[A-Za-z]", act) else ""
        act = zh_third(re.sub(r"^我(?!们)", "", act))  # "周六上午十点我要带我妈去…"
        text = f"用户{when}{sep}{act}" + (f"，{more}" if more else "")
        return [fact(text, kind="plan", slot=f"plan.{act.split('（')[0][:12]}", value=when)]
    if (
        (only := re.fullmatch(r"(" + ZH_DAY + r")\s*(" + ZH_CLOCK + r")", t))
        and i + 1 < len(cl)
        and re.match(r"^(?:去|回|到|看|做|开|上|见|接|送)\S{1,10}$", cl[i + 1].text)
    ):
        when = zh_ampm(only.group(1) + only.group(2))
        act = cl[i + 1].text
        return [fact(f"用户{when}{act}", kind="plan", slot=f"plan.{act[:12]}", value=when)]
    return _intention(cl[i]) or _day_plan(t)


def _intention(clause: Clause) -> list[DerivedFact]:
    """'我们打算年后把家从昌平搬到望京' -> what the user intends, with its time."""
    t = clause.text
    if (m := _INTEND.match(t)) and not clause.question and not re.search(r"如果|要是|再说", t):
        act = zh_third(m.group("act").strip())
        return [fact(f"用户打算{m.group('when')}{act}", kind="plan", slot=None)]
    return []


def _day_plan(t: str) -> list[DerivedFact]:
    """'下周就要搬去成都了' -> a plan said after its day."""
    # "周一早上就要" (a deadline in a complaint) says no action: no plan
    if _PLAN.match(t) and not re.search(
        r"你|吗|如果|要是|还要|还得|又要|又得|继续|(?:就要|要|得)$", t
    ):
        body = t[1:] if t.startswith("我") else t
        body = re.sub(rf"^({ZH_DAY})\s*我", r"\1", body)  # "下周三我要去" -> "下周三要去"
        day = re.search(ZH_DAY, body)
        trip = re.search(rf"(?:去|飞)\s*([{CJK}A-Za-z]{{2,8}}?)(?:玩|出差|旅游|旅行|度假|$)", body)
        slot = f"trip.{day.group()}" if day and trip else None
        return [
            fact(
                "用户" + zh_third(zh_ampm(body)),
                kind="plan",
                slot=slot,
                value=trip and trip.group(1),
            )
        ]
    return []


ZH_RULES: tuple[ZhRule, ...] = (
    names, standing, self_state, attributes, relation, team, value_change, event, plan, preference,
)  # fmt: skip
