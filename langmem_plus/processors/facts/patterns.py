"""Lexicons and regexes of the precision-first fact rules (`processors/facts/`), Chinese and
English.

Each pattern is written to fire only on a statement about the user, their team or a named
relation; anything vaguer is left to the episode it was said in.
"""

from __future__ import annotations

import re

from langmem_plus.processors.lexicon import EN_REL_WHO, ZH_REL_WHO, longest_first

# --------------------------------------------------------------------------- lexicons

ZH_REL = {**ZH_REL_WHO, "哥": "brother", "姐": "sister", "弟": "brother", "妹": "sister",
          "闺蜜": "friend", "发小": "friend", "死党": "friend", "兄弟": "friend", "狗子": "dog", "狗狗": "dog", "猫咪": "cat", "老妈": "mother",
          "老爸": "father", "经理": "boss", "manager": "boss", "wife": "wife",
          "husband": "husband", "侄子": "nephew", "外甥": "nephew", "侄女": "niece",
          "外甥女": "niece", "姐夫": "brother-in-law", "妹夫": "brother-in-law",
          "嫂子": "sister-in-law", "弟媳": "sister-in-law", "岳父": "father-in-law",
          "岳母": "mother-in-law", "公公": "father-in-law", "婆婆": "mother-in-law",
          "丈母娘": "mother-in-law"}  # fmt: skip
EN_REL = {**EN_REL_WHO, "nephew": "nephew", "niece": "niece", "stepdad": "stepfather",
          "stepmom": "stepmother", "sis": "sister", "bro": "brother", "puppy": "dog",
          "pup": "dog", "kitten": "cat", "golden": "dog", "golden retriever": "dog",
          "mother-in-law": "mother-in-law", "father-in-law": "father-in-law",
          "sister-in-law": "sister-in-law", "brother-in-law": "brother-in-law",
          "in-laws": "in-laws"}  # fmt: skip
# how a relation is written in a fact (one word for father/mother so that wordings agree)
ZH_REL_SAY = {"father": "父亲", "mother": "母亲", "boss": "经理", "wife": "妻子", "dog": "狗",
              "cat": "猫"}  # fmt: skip
EN_REL_SAY = {"father": "father", "mother": "mother", "boss": "manager"}

ZH_REL_RE = longest_first(ZH_REL)
EN_REL_RE = longest_first(EN_REL)

# attribute words of a person or the user -> slot suffix
ZH_ATTR = {"生日": "birthday", "名字": "name", "航班": "flight", "车位号": "parking_spot",
           "车位": "parking_spot", "手机号": "phone", "电话": "phone", "车牌": "license_plate",
           "车牌号": "license_plate", "邮箱": "email", "工号": "employee_id", "房租": "rent",
           "血型": "blood_type", "星座": "zodiac", "生日是": "birthday", "工作": "job",
           "学校": "school", "专业": "major", "地址": "address", "身高": "height",
           "体重": "weight"}  # fmt: skip
EN_ATTR = {"birthday": "birthday", "name": "name", "flight": "flight", "rent": "rent",
           "email": "email", "phone number": "phone", "address": "address",
           "parking spot": "parking_spot", "job": "job", "school": "school",
           "weight": "weight", "height": "height", "blood type": "blood_type"}  # fmt: skip
DEVICE_SLOTS = (
    (re.compile(r"macbook|thinkpad|xps|laptop|笔记本", re.I), "laptop"),
    (re.compile(r"iphone|pixel|galaxy|android phone|手机", re.I), "phone"),
    (
        re.compile(r"neovim|vim|emacs|vs ?code|pycharm|intellij|cursor|zed|sublime|编辑器", re.I),
        "editor",
    ),
    (re.compile(r"notion|obsidian|evernote|logseq|onenote|笔记", re.I), "notes_app"),
    (re.compile(r"bazel|gradle|maven|cmake|webpack|vite", re.I), "build_tool"),
    (
        re.compile(
            r"civic|tesla|model [3ysx]|corolla|camry|prius|truck|\bcar\b|特斯拉|比亚迪|汽车", re.I
        ),
        "car",
    ),
    (re.compile(r"\bbike\b|bicycle|自行车|电动车", re.I), "bike"),
    (
        re.compile(r"jenkins|github actions|gitlab ci|circleci|argo ?cd|travis|buildkite", re.I),
        "ci",
    ),
    (re.compile(r"jira|linear|飞书项目|trello|asana|tapd|禅道", re.I), "issue_tracker"),
    (re.compile(r"slack|飞书|钉钉|企业微信|microsoft teams|discord", re.I), "chat"),
    (re.compile(r"github|gitlab|bitbucket|gitee", re.I), "code_host"),
    (
        re.compile(r"postgres|mysql|sqlite|mongodb|oracle|sql server|tidb|clickhouse", re.I),
        "database",
    ),
    (re.compile(r"python ?\d|java ?\d|node ?\d|go ?1\.\d|django|rails|spring", re.I), "runtime"),
)


def device_slot(value: str) -> str | None:
    """The slot of the first device or tool `value` names (laptop, editor, ci...), if any."""
    return next((slot for pat, slot in DEVICE_SLOTS if pat.search(value)), None)


def device_name(value: str) -> str | None:
    """The device or tool `value` names, as said ("Jira" in "还是用 Jira 管需求"), if any: the
    value of its slot, so that saying it again is known as a restatement."""
    m = next((m for pat, _ in DEVICE_SLOTS if (m := pat.search(value))), None)
    if m is None:
        return None
    # the whole name it begins ("PostgreSQL", not "PostgreS")
    whole = re.match(r"[A-Za-z0-9.+#-]*", value[m.end() :])
    return m.group() + whole.group() if m.group()[-1:].isascii() and whole else m.group()


EN_STATES = {
    "vegetarian": ("diet", "preference"), "vegan": ("diet", "preference"),
    "pescatarian": ("diet", "preference"), "sober": ("alcohol", "fact"),
    "left-handed": ("handedness", "profile"), "right-handed": ("handedness", "profile"),
    "lactose intolerant": ("lactose", "fact"), "diabetic": ("diabetes", "fact"),
    "married": ("marital_status", "profile"), "divorced": ("marital_status", "profile"),
    "engaged": ("marital_status", "profile"), "single": ("marital_status", "profile"),
    "pregnant": ("pregnancy", "fact"), "retired": ("job", "profile"),
    "colorblind": ("colorblind", "profile"), "gluten-free": ("diet", "preference"),
}  # fmt: skip
ZH_STATES = {
    "左撇子": ("handedness", "profile"), "素食者": ("diet", "preference"),
    "吃素": ("diet", "preference"), "乳糖不耐受": ("lactose", "fact"),
    "结婚": ("marital_status", "profile"), "已婚": ("marital_status", "profile"),
    "离婚": ("marital_status", "profile"), "单身": ("marital_status", "profile"),
    "怀孕": ("pregnancy", "fact"), "近视": ("eyesight", "profile"),
    "色盲": ("colorblind", "profile"), "糖尿病": ("diabetes", "fact"),
}  # fmt: skip
ZH_STATES_RE = longest_first(ZH_STATES)
EN_STATES_RE = longest_first(EN_STATES)
WEEKDAYS_EN = {"mon": "Monday", "tue": "Tuesday", "tues": "Tuesday", "wed": "Wednesday",
               "thu": "Thursday", "thur": "Thursday", "thurs": "Thursday", "fri": "Friday",
               "sat": "Saturday", "sun": "Sunday"}  # fmt: skip

# --------------------------------------------------------------------------- text shape

EMOJI_RE = re.compile(
    "[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\ufe0f\u200d\U0001f1e6-\U0001f1ff]+"
)
TRANSIENT_RE = re.compile(
    r"算了|不重要|无所谓|never ?mind|doesn'?t matter|the other one|this one|that one|"
    r"重新生成|let me (?:re)?(?:check|count|recount|think)|忘了|记不清|不记得",
    re.I,
)

# --------------------------------------------------------------------------- time phrases

ZH_DAY = (
    r"(?:(?:下|这|本|上)?(?:个)?(?:周|星期|礼拜)[一二三四五六日天末]|明天|明早|明晚|后天|大后天|"
    r"今晚|下周|下个?月|月底|周末|\d{1,2}月\d{1,2}[日号]|[一二三四五六七八九十]{1,3}月"
    r"[一二三四五六七八九十]{1,3}[日号]?)"
)
ZH_CLOCK = (
    r"(?:(?:早上|上午|中午|下午|晚上|傍晚|凌晨)?\s*(?:(?:\d{1,2}|[一二三四五六七八九十两]{1,3})"
    r"[点:：](?:\d{1,2}分?|半|[一二三四五]十分?)?|\d{1,2}(?::\d{2})?\s*[ap]m)|"
    r"(?:早上|上午|中午|下午|晚上|傍晚|凌晨))"
)
EN_DAY = (
    r"\b(?:(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thur|"
    r"thurs|fri|sat|sun)s?|tomorrow|tmrw|tmr|tonight|"
    r"next (?:week|month|(?:mon|tues|wednes|thurs|fri|satur|sun)day)|"
    # a date: "the 14th", "March 3", "Jun 5th"
    r"the \d{1,2}(?:st|nd|rd|th)|(?:january|february|march|april|may|june|july|august|september|"
    r"october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.? "
    r"\d{1,2}(?:st|nd|rd|th)?)\b"
)
EN_TIME = r"\b(?:\d{1,2}(?::\d{2})?\s*(?:am|pm)|\d{1,2}:\d{2}|noon|\d{1,2})\b"
ONE_OFF_ZH = re.compile(r"今天|昨天|刚才|刚刚|上午|下午茶|这次|这回|今晚")
ONE_OFF_EN = re.compile(r"\b(?:today|yesterday|tonight|this (?:time|morning)|just now)\b", re.I)

# --------------------------------------------------------------------------- markers

SARCASM_RE = re.compile(
    r"/s\b|真棒呢|真好呢|可太\S{1,6}了呢|best \w+ ever|yeah right|oh (?:great|wonderful|perfect)",
    re.I,
)
ZH_MARKER_RE = re.compile(
    r"更正一下|纠正一下|之前说错了|我说错了|刚才说错了|说错了|搞错了|记错了|改一下"
)
EN_MARKER_RE = re.compile(
    r"^(?:correction|update|actually|scratch that)\b|\b(?:I was wrong|I misspoke|I got that wrong|my bad)\b",
    re.I,
)
ZH_REMEMBER_RE = re.compile(
    r"^(?:请|麻烦你?)?(?:帮我)?(?:记一下|记住|记得|记着|记下|你记一下|别忘了|不要忘了|别忘记)[，,:：\s]*(?!吗)"
)
EN_REMEMBER_RE = re.compile(
    r"^(?:please )?(?:remember|reminder|note|keep in mind|fyi|for the record|(?:don'?t|do not) "
    r"forget)(?: that)?[,:\s]+",
    re.I,
)
ZH_STANDING_RE = re.compile(r"^(?:你)?(?:以后|今后|往后|从现在开始|从今以后|之后)[，,\s]*")
EN_STANDING_RE = re.compile(
    r"\b(?:from now on|going forward|from here on(?: out)?|in (?:the )?future|whenever i|"
    r"every time i|always|never)\b",
    re.I,
)
ZH_UNTIED_RE = re.compile(
    r"^(?:不是(?:那个|这个|啦|的)?|不对|没有啦?|不在了|早(?:就)?不?[^\s，,]{1,3}了|[他她](?:早|已经)[^，,。]{0,6}了|早没\S{0,3}了)"
)
EN_UNTIED_RE = re.compile(
    r"^(?:nope|no|nah|not anymore|not a thing anymore|haven'?t been|that was years ago|"
    r"not really|not since)\b",
    re.I,
)
