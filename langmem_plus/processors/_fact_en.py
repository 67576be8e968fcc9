"""English clause rules: each returns the facts one clause states, or [] when not sure."""

from __future__ import annotations

import re
from collections.abc import Callable

from langmem_plus.processors._fact_patterns import (
    DEVICE_SLOTS,
    EN_ATTR,
    EN_DAY,
    EN_REL,
    EN_REL_RE,
    EN_REL_SAY,
    EN_STANDING_RE,
    EN_STATES,
    EN_STATES_RE,
    EN_TIME,
    ONE_OFF_EN,
    WEEKDAYS_EN,
)
from langmem_plus.processors._fact_text import Clause, continuation, en_third, fact
from langmem_plus.processors._patterns import _JOBS_EN
from langmem_plus.processors.derived import DerivedFact

EnRule = Callable[[list[Clause], int, bool], list[DerivedFact]]
_I = re.IGNORECASE

_CALL_ME = re.compile(r"\bcall me ([A-Z][a-z]+)\b(?! (?:when|if|later|back|tomorrow))")
_NOT_CALL = re.compile(r"\bdon'?t call me (\w+)", _I)
_JUST_NAME = re.compile(r"^just ([A-Z][a-z]+)$")
_ITS_NAME = re.compile(r"^(?i:it'?s) ([A-Z][a-z]+)\b(.*)$")
_MY_NAME = re.compile(r"\bmy name(?:'s| is) ([A-Z][a-z]+)\b")
_PRONOUNS = re.compile(
    r"\b(?:I use|my pronouns are) (she/her|he/him|they/them|she/they|he/they)", _I
)
_STATE = re.compile(
    r"\bI(?:'m| am)\s+(?:now\s+|actually\s+|also\s+|officially\s+)?(?:a\s+)?("
    + EN_STATES_RE
    + r")\b",
    _I,
)
_ALLERGY = re.compile(
    r"\bI(?:'m| am)\s+(?:\w+\s+)?allergic to ([a-z][\w -]{1,30}?)(?=$|,| in | so | and | but )", _I
)
_AGE = re.compile(
    r"^I(?:'m| am) (\d{1,2})\b(?! ?(?:min|minutes|hours?|mins|percent|%|k\b))(.*)$", _I
)
_DONT = re.compile(
    r"^I (?:don'?t|do not|never) (drink|eat|smoke|use|watch) ([a-z][\w -]{1,25}?)(?: at all| anymore)?$",
    _I,
)
_PERSON = re.compile(r"^(?:a |more of a )?([a-z]+) person$", _I)
_MY_ATTR = re.compile(r"\bmy (" + "|".join(EN_ATTR) + r")(?:'s| is) (.{1,40})$", _I)
_LIVE = re.compile(r"^I (?:live|moved) (?:in|to) ([A-Z][\w ]{1,30})$")
_REL = re.compile(
    r"\bmy (" + EN_REL_RE + r")\b(?:'s name is ([A-Z][a-z]+))?((?-i: [A-Z][a-z]+))?(.*)$", _I
)
_TEAM = re.compile(
    r"^(?:our|we)\b ?(\w+(?: \w+)?)? (runs?|is|are|uses?|deploys?|lives?|ships?|builds? with|"
    r"build on|host|hosts|are on|use|run|deploy to|deploy) (.+)$",
    _I,
)
_EVENT = re.compile(
    r"^(?:I |we )?(?:just |finally |officially )?(passed|graduated(?: from)?|got engaged|got married|got promoted|got into|"
    r"got accepted (?:to|into)|started my new job(?: at)?|"
    r"got the job|got an offer|quit my job|retired|started at|bought a house|closed on|adopted|"
    r"signed the lease on)\b(.*)$",
    _I,
)
_BABY = re.compile(r"^(?:our |the )?baby (girl|boy) (?:arrived|is here|was born)", _I)
_HARD_NO = re.compile(
    r"^(.{1,30}?) (?:is|are) (?:a )?(?:hard |firm |big |definite )?(?:no(?: for me)?|pass(?: for me)?|dealbreaker)$"
    r"|^(?:hard pass on|never again with) (.{1,30})$",
    _I,
)
_BETTER = re.compile(r"^([a-z][\w ]{0,20}?) > ([a-z][\w ]{0,20}?)(?:,? always| forever)?$", _I)
_IM_JOB = re.compile(
    r"^I'?m (?:a|an) (" + _JOBS_EN + r")(?: at ([A-Z][\w&.-]*(?: [A-Z][\w&.-]*)*))?$"
)
_FROM = re.compile(r"^I'?m (?:originally )?from ([A-Z][\w]*(?: [A-Z]\w*)*)$")
_YEARS_OLD = re.compile(r"^I'?m (\d{1,2}) (?:years old|yo)\b", _I)
_LEARNING = re.compile(
    r"^I'?(?:m|ve been) (?:learning|studying|taking lessons in) ([a-z][\w -]{1,25})$", _I
)
_A_NOW = re.compile(r"^I'?m (?:a|an) ([\w -]{2,25}?) now\b", _I)
_DRIVE_NOW = re.compile(r"^I (drive|ride|use|have) (?:a |an )?(.{2,30}?) now$", _I)
_DOING_NOW = re.compile(
    r"^I'?m (?:just |now )?(?:doing|into|taking|learning|playing) (.{2,30}?)(?: now)?$", _I
)
_AT_DAY = re.compile(
    r"^(?:my |our |the )?([a-z][\w' ]{1,24}?)(?:'s| is) (?:at |on )?("
    + EN_DAY
    + r"|"
    + EN_TIME
    + r")(?: at ("
    + EN_TIME
    + r"))?$",
    _I,
)
_OR_ELSE = re.compile(r"^(.{1,30}?) or I'?m (?:miserable|dead|grumpy|useless|cranky|done)", _I)
_LIKE = re.compile(
    r"^I (?:really |absolutely |just |totally )?(love|hate|prefer|can'?t stand|adore|despise|"
    r"don'?t like|don'?t eat|avoid) (.{2,40})$",
    _I,
)
_SINCE = re.compile(r"\b(?:I'?ve |I have )?been (?:on|using) (?:a |an |the )?(.+?) since (\w+)", _I)
_SWITCH = re.compile(
    r"^(?:I )?(?:switched|moved|migrated|changed) (?:my |our )?(\w+(?: \w+)?) from (.+?) to (\S+(?: [A-Z]\S*)?)",
    _I,
)
_NOW = re.compile(
    r"^(?:my )?([A-Za-z][\w-]{1,20}(?: [a-z][\w-]{1,20})?)(?:'s| is| are) (.{1,30}?) now\b(.*)$", _I
)
_NOW_STOP = re.compile(
    r"^(?:it|that|this|he|she|they|there|everything|life|weather|the weather|traffic|what|who|which|today)$",
    _I,
)
_COMING = re.compile(
    r"^(?:the |my )?(\w+)(?:'s| is) coming(?: over| in| by)? (?:on )?(" + EN_DAY + r")", _I
)
_FRAGMENT = re.compile(
    r"^(?P<act>[a-z][\w/&' ]{1,30}?) (?:on )?(?P<day>"
    + EN_DAY
    + r") (?:at )?(?P<time>"
    + EN_TIME
    + r")$",
    _I,
)
_WORK = re.compile(
    r"\b(?:I work|working|work|works) (night shifts?|nights|days) at (?:the )?([a-z][\w ]{1,25}?)\b(?:\s+all week|\s+again)*$|^(?:\w+ )*?night shifts? at (?:the )?([a-z]\w+)",
    _I,
)
_JOB = re.compile(
    r"^I (?:work|am working|'m working|now work) (from home|remotely|as an? [\w -]{2,25}|at [A-Z][\w&.-]*(?: [A-Z][\w&.-]*)*|"
    r"for [A-Z][\w&.-]*(?: [A-Z][\w&.-]*)*)"
)
_HAVE_REL = re.compile(
    r"^I (?:have|'ve got|got) (a|an|one|two|three|four|\d) ((?:"
    + EN_REL_RE
    + r"|puppy|kitten)s?)\b(.{0,40})$",
    _I,
)
_MY_THING = re.compile(
    r"^(.{1,30}?) (?:is|are) (?:literally |honestly )?my (jam|thing|fave|favorite|favourite|nemesis)\b",
    _I,
)
_NO_FOR_ME = re.compile(r"^(?:no|zero) (.{2,25}) for me\b", _I)
_KIND_OF_PERSON = re.compile(
    r"^I'?m (not )?(?:a|an|more of a|totally a|such a) ([\w-]+) (?:person|guy|girl|fan)\b", _I
)
_RATHER = re.compile(r"^I'?d (?:much )?rather (.{2,30}?) than (.{2,30})$", _I)
_HAVE_PLAN = re.compile(
    r"^I(?:'ve| have)(?: got)? (?:a |an |my |the )?([a-z][\w' ]{1,30}?) (?:on |this |next )?("
    + EN_DAY
    + r")(?: at ("
    + EN_TIME
    + r"))?$",
    _I,
)
_GOING = re.compile(
    r"^I'?m (flying|going|driving|heading|moving|traveling|travelling) to ([A-Z][\w]*(?: [A-Z]\w*)*)"
    r"(?: (?:on |this |next )?(" + EN_DAY + r"|next (?:week|month)))?$",
)
_DAY_FIRST = re.compile(
    r"^(?P<day>"
    + EN_DAY
    + r")(?: at)? (?P<time>"
    + EN_TIME
    + r"),? (?P<act>[a-z][\w/&' -]{1,30})$",
    _I,
)
_MOVED_TO = re.compile(
    r"^(?:I )?(?:just |finally )?(?:moved|relocated) to ([A-Z][\w]*(?: [A-Z]\w*)*)"
)
_ON_NOW = re.compile(r"^I'?m (?:on|using|running) (.{2,30}?) now$", _I)
_RESCHEDULED = re.compile(
    r"^(?:my |our |the )?([a-z][\w' ]{2,24}?) (?:got |has been |was |is )?(?:moved|changed|pushed|switched|bumped) to (.+)$",
    _I,
)
_BAD_START = re.compile(
    r"^(?:i|i'm|we|it|it's|that|this|they|he|she|you|what|how|so|and|but|oh)\b", _I
)


def _device_slot(value: str) -> str | None:
    return next((slot for pat, slot in DEVICE_SLOTS if pat.search(value)), None)


def _day(word: str) -> str:
    if word.lower() in ("tmrw", "tmr"):
        return "tomorrow"
    w = word.lower().rstrip("s")
    return (
        WEEKDAYS_EN.get(w[:3] if w.endswith("day") else w, word.capitalize())
        if w[:3] in WEEKDAYS_EN
        else word
    )


def names(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """'call me Dan' -> wants to be called Dan; 'my name is X' / pronouns -> profile."""
    t = cl[i].text
    if (m := _CALL_ME.search(t)) and not cl[i].question:
        return [fact(f"User wants to be called {m.group(1)}", kind="instruction",
                     slot="user.preferred_name", value=m.group(1))]  # fmt: skip
    if m := _NOT_CALL.search(t):
        for c in cl[i + 1 :]:
            if n := _JUST_NAME.match(c.text):
                return [fact(f"User wants to be called {n.group(1)}, not {m.group(1)}",
                             kind="instruction", slot="user.preferred_name", value=n.group(1))]  # fmt: skip
    if (
        re.search(r"\bcall(?:ed)? me\b", t)
        and i + 1 < len(cl)
        and (n := _ITS_NAME.match(cl[i + 1].text))
    ):
        return []  # the answer is read by `name_fix` on the next clause
    if i > 0 and re.search(r"\bcall(?:ed)? me\b", cl[i - 1].text) and (n := _ITS_NAME.match(t)):
        text = f"User's name is {n.group(1)}" + (
            f" ({n.group(2).strip(' ,')})" if n.group(2).strip(" ,") else ""
        )
        return [fact(text, kind="profile", slot="user.name", value=n.group(1))]
    if m := _MY_NAME.search(t):
        return [
            fact(f"User's name is {m.group(1)}", kind="profile", slot="user.name", value=m.group(1))
        ]
    if m := _PRONOUNS.search(t):
        return [fact(f"User uses {m.group(1).lower()} pronouns", kind="profile", slot="user.pronouns",
                     value=m.group(1).lower())]  # fmt: skip
    return []


def standing(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """'from now on, keep answers short' -> a standing instruction (one-off requests are not)."""
    t = cl[i].text
    m = EN_STANDING_RE.search(t)
    if not m or m.group(0).lower() in ("always", "never") or cl[i].question:
        return []
    body = (
        [EN_STANDING_RE.sub("", t).strip(" ,")]
        if m.group(0).lower() not in ("whenever i", "every time i")
        else [t]
    )
    for c in cl[i + 1 : i + 4]:
        if (
            re.match(r"(?:I|I'm|I am|it's|that's|because|since|as|lol|so)\b", c.text, _I)
            or c.question
        ):
            break
        body.append(c.text)
    text = re.sub(r"\bplease\b\s*", "", ", ".join(b for b in body if b), flags=_I).strip(" ,")
    if len(text) < 6:
        return []
    if neg := re.match(r"(?:don'?t|do not|never|no more)\s+(.+)$", text, _I):
        return [
            fact(f"User doesn't want the assistant to {en_third(neg.group(1))}", kind="instruction")
        ]
    return [fact(f"User wants: {en_third(text)}", kind="instruction", slot=None)]


def self_state(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """I'm vegetarian now / allergic to penicillin / 35 / I don't drink coffee -> the user's state."""
    t = cl[i].text
    if m := _ALLERGY.search(t):
        what = m.group(1).strip()
        return [fact(f"User is allergic to {what}", slot=f"allergy.{what}", value=what)]
    if m := _STATE.search(t):
        slot, kind = EN_STATES[m.group(1).lower()]
        state = m.group(1).lower()
        text = f"User is {state}" + (" (doesn't drink alcohol)" if state == "sober" else "")
        return [fact(text, kind=kind, slot=slot, value=state)]  # type: ignore[arg-type]
    if m := _IM_JOB.match(t):
        text = f"User is a {m.group(1)}" + (f" at {m.group(2)}" if m.group(2) else "")
        return [fact(text, kind="profile", slot="job", value=m.group(1))]
    if m := _FROM.match(t):
        return [
            fact(f"User is from {m.group(1)}", kind="profile", slot="hometown", value=m.group(1))
        ]
    if m := _YEARS_OLD.match(t):
        return [fact(f"User is {m.group(1)}", kind="profile", slot="age", value=m.group(1))]
    if m := _LEARNING.match(t):
        return [
            fact(f"User is learning {m.group(1)}", slot=f"learning.{m.group(1)}", value=m.group(1))
        ]
    if m := _AGE.match(t):
        return [fact(f"User is {m.group(1)}", kind="profile", slot="age", value=m.group(1))]
    if m := _DONT.match(t):
        verb, obj = m.group(1).lower(), m.group(2).strip()
        nxt = _PERSON.match(cl[i + 1].text) if i + 1 < len(cl) else None
        more = f", prefers {nxt.group(1)}" if nxt else ""
        return [
            fact(
                f"User doesn't {verb} {obj}{more}",
                kind="preference",
                slot=f"likes.{obj}",
                value=f"no {obj}",
            )
        ]
    return []


def attributes(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """'my birthday is May 3' / 'I live in Denver' -> the user's attribute and its value."""
    t = cl[i].text
    if (m := _MY_ATTR.search(t)) and not re.search(r"\bmy (?:" + EN_REL_RE + r")'s", t, _I):
        key, val = m.group(1).lower(), m.group(2).strip()
        return [fact(f"User's {key} is {val}", slot=EN_ATTR[key], value=val)]
    if m := _JOB.match(t):
        return [fact(f"User works {m.group(1)}", kind="profile", slot="job", value=m.group(1))]
    if m := _HAVE_REL.match(t):
        rest = m.group(3).strip(" ,")
        text = f"User has {m.group(1)} {m.group(2)}" + (
            f" {en_third(rest)}" if rest and len(rest.split()) <= 5 else ""
        )
        return [fact(text, kind="relation", subject="third_person", slot=None)]
    if m := _MOVED_TO.match(t):
        return [
            fact(
                f"User moved to {m.group(1)}",
                kind="profile",
                slot="home.location",
                value=m.group(1),
            )
        ]
    if (m := _ON_NOW.match(t)) and (dev := _device_slot(m.group(1))):
        return [fact(f"User is on {m.group(1)} now", kind="preference", slot=dev, value=m.group(1))]
    if m := _LIVE.match(t):
        return [
            fact(
                f"User lives in {m.group(1)}",
                kind="profile",
                slot="home.location",
                value=m.group(1),
            )
        ]
    return []


def relation(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """'my nephew Jonah just started at MIT' -> about the nephew, never about the user."""
    t = cl[i].text
    m = _REL.search(t)
    if not m or cl[i].question or re.search(r"\b(?:ask|tell|call|text|help|remind) my\b", t, _I):
        return []
    rel_word = m.group(1).lower()
    rel = EN_REL[rel_word]
    who = f"User's {EN_REL_SAY.get(rel, rel_word)}"
    more = continuation(cl, i, zh=False)
    if m.group(2):
        text = f"{who} is {m.group(2)}" + (f", {en_third(more)}" if more else "")
        return [
            fact(
                text, kind="relation", subject="third_person", slot=f"{rel}.name", value=m.group(2)
            )
        ]
    name, rest = (m.group(3) or "").strip(), m.group(4).strip()
    if len(rest.split()) < 2 or re.match(r"(?:and|or|to|for|with|is\?)\b", rest, _I):
        return []
    durable = (
        r"\b(?:is (?:a|an|\d+|in|from|allergic|pregnant|retired|turning|getting married|(?-i:[A-Z])\w*)|"
        r"works|lives|just started|started|retired|passed away|moved|has|was born|turns|"
        r"turned|graduated|had (?:surgery|a baby)|got (?:married|engaged|promoted|into)|starts|"
        r"lands|arrives|name)\b|^'s (?:name|birthday|flight|job|school|wedding|surgery|new)"
    )
    if (
        ONE_OFF_EN.search(rest)
        or not re.search(durable, rest, _I)
        or re.search(r"\b(?:so|really|always|keeps?)\b", rest, _I)
    ):
        return []
    if t[: m.start()].strip() and not re.match(
        r"^(?:and|btw|also|oh|so)$", t[: m.start()].strip(), _I
    ):
        return []
    subj = f"{who} {name}" if name else who
    if rest.startswith("'s "):
        subj, rest = f"{who}'s", rest[3:]
    text = f"{subj} {en_third(rest)}" + (f", {en_third(more)}" if more else "")
    kind = (
        "event"
        if re.search(r"\b(?:retired|passed away|had|got|started|moved|died)\b", rest, _I)
        else "fact"
    )
    return [fact(text, kind=kind, subject="third_person", slot=None)]  # type: ignore[arg-type]


def team(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """'our builds run on Bazel' -> a standing fact about the user's team."""
    t = cl[i].text
    m = _TEAM.match(t)
    if (
        not m
        or ONE_OFF_EN.search(t)
        or re.search(
            r"\b(?:let's|should|could|maybe|had|did|going to|gonna|might|were|was)\b", t, _I
        )
    ):
        return []
    if m.group(2).lower() in ("is", "are") and not re.search(r"\d|\b[A-Z][\w.]+", m.group(3)):
        return []
    if not t.lower().startswith("our") and m.group(2).lower() in ("is", "are", "run", "runs"):
        return []
    noun = (m.group(1) or "").strip()
    what = (
        f"The user's team's {noun}" if noun and t.lower().startswith("our") else "The user's team"
    )
    value = re.split(r",| so | but | because ", m.group(3))[0].strip()
    slot = _device_slot(value)
    return [
        fact(
            f"{what} {m.group(2)} {value}",
            subject="team",
            slot=slot and f"team.{slot}",
            value=value,
        )
    ]


def event(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """'Passed the bar exam!!!' / 'Baby girl arrived at 3:12am' -> a life event of the user."""
    t = cl[i].text
    if m := _BABY.match(t):
        return [fact(f"User had a baby {m.group(1).lower()}", kind="event", slot=None)]
    if (m := _EVENT.match(t)) and not cl[i].question:
        rest = re.split(r",| so | and I ", m.group(2))[0].strip()
        return [fact(f"User {m.group(1).lower()} {rest}", kind="event", slot=None)]
    return []


def preference(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """'olives are a hard no for me', 'window seat or I'm miserable', 'I love X' (not sarcastic)."""
    t = cl[i].text
    if sarcastic:
        return []
    if m := _BETTER.match(t):
        return [fact(f"User prefers {m.group(1)} over {m.group(2)}", kind="preference",
                     slot=f"prefers.{m.group(2)}", value=m.group(1))]  # fmt: skip
    if m := _HARD_NO.match(t):
        what = m.group(1) or m.group(2)
        return [fact(f"User dislikes {what}", kind="preference", slot=f"likes.{what}", value="no")]
    if m := _MY_THING.match(t):
        verb = "dislikes" if m.group(2).lower() == "nemesis" else "loves"
        return [
            fact(
                f"User {verb} {m.group(1)}",
                kind="preference",
                slot=f"likes.{m.group(1)}",
                value=verb,
            )
        ]
    if m := _NO_FOR_ME.match(t):
        return [
            fact(
                f"User avoids {m.group(1)}",
                kind="preference",
                slot=f"likes.{m.group(1)}",
                value="no",
            )
        ]
    if m := _KIND_OF_PERSON.match(t):
        text = f"User is {'not ' if m.group(1) else ''}a {m.group(2)} person"
        return [fact(text, kind="preference", slot=f"person.{m.group(2)}", value=m.group(2))]
    if m := _RATHER.match(t):
        return [
            fact(
                f"User would rather {en_third(m.group(1))} than {en_third(m.group(2))}",
                kind="preference",
                slot=None,
            )
        ]
    if m := _OR_ELSE.match(t):
        return [fact(f"User prefers {m.group(1)}", kind="preference", slot=f"prefers.{m.group(1)}",
                     value=m.group(1))]  # fmt: skip
    if (m := _LIKE.match(t)) and not re.search(r"\b(?:this|that|it|you|when)\b", m.group(2), _I):
        verb = m.group(1).lower().replace("can't", "cannot").replace("cant", "cannot")
        verb = {"love": "loves", "hate": "hates", "prefer": "prefers", "adore": "adores",
                "despise": "despises", "avoid": "avoids"}.get(verb, verb.replace("don't", "doesn't"))  # fmt: skip
        return [
            fact(
                f"User {verb} {m.group(2)}",
                kind="preference",
                slot=f"likes.{m.group(2)}",
                value=verb,
            )
        ]
    return []


def value_change(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """'been on a MacBook Air since March', 'rent's $2,150 now', 'switched notes from A to B'."""
    t = cl[i].text
    if m := _A_NOW.match(t):
        return [fact(f"User is a {m.group(1)} now", kind="profile", slot="job", value=m.group(1))]
    if m := _DRIVE_NOW.match(t):
        what = m.group(2)
        return [fact(f"User {m.group(1)}s {what} now", slot=_device_slot(what) or what, value=what)]
    if m := _SINCE.search(t):
        what = re.split(r" and | but |,", m.group(1))[0]
        return [
            fact(
                f"User has used {what} since {m.group(2)}",
                slot=_device_slot(what) or what,
                value=what,
            )
        ]
    if m := _SWITCH.match(t):
        thing, old, new = m.group(1), m.group(2), m.group(3)
        f = fact(f"User now uses {new} instead of {old} for {en_third(thing)}", kind="preference",
                 slot=_device_slot(new) or thing, value=new)  # fmt: skip
        return [f.model_copy(update={"corrects": old})]
    if (m := _RESCHEDULED.match(t)) and not ONE_OFF_EN.search(t):
        thing, val = m.group(1), re.split(r" so | but | because | and |,", m.group(2))[0]
        return [fact(f"User's {en_third(thing)} moved to {val}", slot=f"{thing}.time", value=val)]
    m = _NOW.match(t)
    if not m or _NOW_STOP.match(m.group(1)) or cl[i].question or ONE_OFF_EN.search(t):
        return []
    thing, val = m.group(1), m.group(2)
    if not re.search(
        r"\d|\$|\b[A-Z]|\b(?:weekly|daily|monthly|biweekly|yearly|every|twice|once)\b", val
    ):
        return []
    more = continuation(cl, i, zh=False, limit=1)
    text = f"User's {thing} is {val} now" + (f", {more}" if more else "")
    return [fact(text, slot=thing, value=val)]


def plan(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """'dinner w/ Sam fri 7' / "plumber's coming Tuesday" -> a plan with its time."""
    t = cl[i].text
    if (m := _AT_DAY.match(t)) and not _BAD_START.match(m.group(1)):
        when = _day(m.group(2)) + (f" at {m.group(3)}" if m.group(3) else "")
        thing = en_third(m.group(1))
        return [
            fact(
                f"User's {thing} is {when}",
                kind="plan",
                slot=f"{m.group(1).lower()}.time",
                value=when,
            )
        ]
    if m := _COMING.match(t):
        who, day = m.group(1), _day(m.group(2))
        return [
            fact(
                f"The {who} is coming on {day}", kind="plan", slot=f"{who.lower()}.visit", value=day
            )
        ]
    if m := _HAVE_PLAN.match(t):
        when = _day(m.group(2)) + (f" at {m.group(3)}" if m.group(3) else "")
        return [
            fact(
                f"User has {m.group(1)} on {when}",
                kind="plan",
                slot=f"plan.{m.group(1)}",
                value=when,
            )
        ]
    if m := _GOING.match(t):
        trip_day: str | None = m.group(3)
        if not trip_day and i + 1 < len(cl):
            nxt = re.match(r"^(?:on |this |next )?(" + EN_DAY + r")$", cl[i + 1].text, _I)
            trip_day = nxt.group(1) if nxt else None
        when = f" on {_day(trip_day)}" if trip_day else ""
        return [fact(f"User is {m.group(1)} to {m.group(2)}{when}", kind="plan",
                     slot=f"trip.{m.group(1)}", value=m.group(2))]  # fmt: skip
    m = _FRAGMENT.match(t) or _DAY_FIRST.match(t)
    if not m or _BAD_START.match(m.group("act")) or cl[i].question:
        return []
    act, day, time = m.group("act"), _day(m.group("day")), m.group("time")
    more = continuation(cl, i, zh=False, limit=1)
    text = f"User has {act} on {day} at {time}" + (f", {more}" if more else "")
    return [fact(text, kind="plan", slot=f"plan.{act}", value=f"{day} {time}")]


def work(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """'night shifts at the hospital' -> where and how the user works."""
    m = _WORK.search(cl[i].text)
    if not m or cl[i].question:
        return []
    shift, place = (m.group(1) or "night shifts"), (m.group(2) or m.group(3))
    return [fact(f"User works {shift.lower()} at a {place}", slot="job", value=place)]


EN_RULES: tuple[EnRule, ...] = (
    names, standing, self_state, attributes, relation, team, value_change, event, plan, work,
    preference,
)  # fmt: skip
