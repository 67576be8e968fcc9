"""Compiled regexes of the English fact rules (`processors/facts/english.py`)."""

from __future__ import annotations

import re

from langmem_plus.processors.facts.patterns import (
    EN_ATTR,
    EN_DAY,
    EN_REL_RE,
    EN_STATES_RE,
    EN_TIME,
)
from langmem_plus.processors.lexicon import JOBS_EN

_I = re.IGNORECASE
# an optional ' at <time>' closing a day pattern: the group after the day (`_when` in _fact_en)
_AT_TIME_END = r"(?: at (" + EN_TIME + r"))?$"

CALL_ME = re.compile(r"\b(?i:call me) ([A-Z][a-z]+)\b(?! (?:when|if|later|back|tomorrow))")
NOT_CALL = re.compile(r"\bdon'?t call me (\w+)", _I)
JUST_NAME = re.compile(r"^just ([A-Z][a-z]+)$")
ITS_NAME = re.compile(r"^(?i:it'?s) ([A-Z][a-z]+)\b(.*)$")
MY_NAME = re.compile(r"\b(?i:my name)(?:'s| is) ([A-Z][a-z]+)\b")
PRONOUNS = re.compile(
    r"\b(?:I use|my pronouns are) (she/her|he/him|they/them|she/they|he/they)", _I
)
STATE = re.compile(
    r"\bI(?:'m| am|'ve been| have been)\s+(?:now\s+|actually\s+|also\s+|officially\s+)?(?:a\s+)?("
    + EN_STATES_RE
    + r")\b",
    _I,
)
ALLERGY = re.compile(
    r"\bI(?:'m| am)\s+(?:\w+\s+)?allergic to ([a-z][\w -]{1,30}?)(?=$|,| in | so | and | but )", _I
)
AGE = re.compile(
    r"^I(?:'m| am) (\d{1,2})\b(?! ?(?:min|minutes|hours?|mins|percent|%|k\b))(.*)$", _I
)
NO_HABIT = re.compile(r"^I (?:don'?t|do not|never) (drive|smoke|drink)(?: at all| anymore)?$", _I)
DONT = re.compile(
    r"^I (?:don'?t|do not|never) (drink|eat|smoke|use|watch) ([a-z][\w -]{1,25}?)(?: at all| anymore)?$",
    _I,
)
PERSON = re.compile(r"^(?:a |more of a )?([a-z]+) person$", _I)
MY_ATTR = re.compile(r"\bmy (" + "|".join(EN_ATTR) + r")(?:'s| is) (.{1,40})$", _I)
LIVE = re.compile(r"^I (?:live|moved) (?:in|to|on) ([A-Z0-9][\w ]{1,30})$")
REL = re.compile(
    r"\bmy (" + EN_REL_RE + r")\b(?!-)(?:'s name is ([A-Z][a-z]+))?((?-i: [A-Z][a-z]+))?(.*)$", _I
)
TEAM = re.compile(
    r"^(?:our|we|my team|my company)\b ?(\w+(?: \w+)?)? (runs?|is|are|uses?|deploys?|lives?|ships?|builds? with|"
    r"build on|host|hosts|are on|use|run|deploy to|deploy|pins?|writes?|stores?|tracks?|tests?) (.+)$",
    _I,
)
EVENT = re.compile(
    r"^(?:I |we )?(?:just |finally |officially )?(passed|graduated(?: from)?|got engaged|got married|got promoted|got into|"
    r"got accepted (?:to|into)|started my new job(?: at)?|"
    r"got the job|got an offer|quit my job|retired|started at|bought a house|closed on|adopted|"
    r"signed the lease on|bought (?:a|my first|our first) (?:house|car|condo|apartment|flat)|"
    r"got my (?:license|driver's license|degree|visa|green card|phd|diploma|black belt|certification)|"
    r"defended my (?:thesis|dissertation)|got a raise)\b(.*)$",
    _I,
)
# a team fact's next clause said with its participle only ("our backend is Go, deployed on GKE")
TEAM_PARTICIPLE = re.compile(
    r"^(?:all |also )?((?:deployed|hosted|built|written|tested|stored|managed) (?:on|in|with|via|to) "
    r".*(?-i:[A-Z0-9]).*)$",
    _I,
)
WE_STATE = re.compile(r"^we'?re (?:officially )?(pregnant|expecting|engaged|married)\b(.*)$", _I)
BABY = re.compile(r"^(?:our |the )?baby (girl|boy) (?:arrived|is here|was born)", _I)
HARD_NO = re.compile(
    r"^(.{1,30}?) (?:is|are) (?:a )?(?:hard |firm |big |definite )?(?:no(?: for me)?|pass(?: for me)?|dealbreaker)$"
    r"|^(?:hard pass on|never again with) (.{1,30})$",
    _I,
)
BETTER = re.compile(r"^([a-z][\w ]{0,20}?) > ([a-z][\w ]{0,20}?)(?:,? always| forever)?$", _I)
IM_JOB = re.compile(
    r"^I'?m (?:a|an) (" + JOBS_EN + r")(?: at ([A-Z][\w&.-]*(?: [A-Z][\w&.-]*)*))?$"
)
FROM = re.compile(r"^I'?m (?:originally )?from ([A-Z][\w]*(?: [A-Z]\w*)*)$")
YEARS_OLD = re.compile(r"^I'?m (\d{1,2}) (?:years old|yo)\b", _I)
LEARNING = re.compile(
    r"^I'?(?:m|ve been) (?:learning|studying|taking lessons in) ([a-z][\w -]{1,25})$", _I
)
A_NOW = re.compile(r"^I'?m (?:a|an) ([\w -]{2,25}?) now\b", _I)
DRIVE_NOW = re.compile(r"^I (drive|ride|use|have) (?:a |an )?(.{2,30}?) now$", _I)
AT_DAY = re.compile(
    r"^(?:my |our |the )?([a-z][\w' ]{1,24}?)(?:'s| is) (?:at |on )?("
    + EN_DAY
    + r"|"
    + EN_TIME
    + r")"
    + _AT_TIME_END,
    _I,
)
OR_ELSE = re.compile(r"^(.{1,30}?) or I'?m (?:miserable|dead|grumpy|useless|cranky|done)", _I)
LIKE = re.compile(
    r"^I (?:really |absolutely |just |totally )?(love|hate|prefer|can'?t stand|adore|despise|"
    r"don'?t like|don'?t eat|avoid) (.{2,40})$",
    _I,
)
SINCE = re.compile(r"\b(?:I'?ve |I have )?been (?:on|using) (?:a |an |the )?(.+?) since (\w+)", _I)
SWITCH = re.compile(
    r"^(I |we |our team |our \w+ )?(?:switched|moved|migrated|changed) (?:my |our )?(\w+(?: \w+)?)?\s*from (.+?) to (\S+(?: [A-Z]\S*)?)",
    _I,
)
NOW = re.compile(
    r"^(my |our )?([A-Za-z][\w-]{1,20}(?: [a-z][\w-]{1,20})?)(?:'s| is| are) (.{1,30}?) now\b(.*)$",
    _I,
)
NOW_STOP = re.compile(
    r"^(?:it|that|this|he|she|they|there|everything|life|weather|the weather|traffic|what|who|which|today)$",
    _I,
)
COMING = re.compile(
    r"^(?:the |my )?(\w+)(?:'s| is) coming(?: over| in| by)? (?:on )?(" + EN_DAY + r")", _I
)
FRAGMENT = re.compile(
    r"^(?P<act>[a-z][\w/&' ]{1,30}?) (?:on )?(?P<day>"
    + EN_DAY
    + r") (?:at )?(?P<time>"
    + EN_TIME
    + r")"
    # where from or where at, said after the time: "fri 6:40am out of Newark"
    + r"(?P<where> (?:out of|from|at|in) (?-i:[A-Z])[\w]*(?: (?-i:[A-Z])\w*)*)?$",
    _I,
)
WORK = re.compile(
    r"\b(?:I work|working|work|works) (night shifts?|nights|days) at (?:the )?([a-z][\w ]{1,25}?)\b(?:\s+all week|\s+again)*$|^(?:\w+ )*?night shifts? at (?:the )?([a-z]\w+)",
    _I,
)
JOB = re.compile(
    r"^I (?:work|am working|'m working|now work) (from home|remotely|as an? [\w -]{2,25}|at [A-Z][\w&.-]*(?: [A-Z][\w&.-]*)*|"
    r"for [A-Z][\w&.-]*(?: [A-Z][\w&.-]*)*)"
)
HAVE_REL = re.compile(
    r"^I (?:have|'ve got|got) (a|an|one|two|three|four|\d) ((?:"
    + EN_REL_RE
    + r"|puppy|kitten)s?)\b(.{0,40})$",
    _I,
)
MY_THING = re.compile(
    r"^(.{1,30}?) (?:is|are) (?:literally |honestly )?my (jam|thing|fave|favorite|favourite|nemesis)\b",
    _I,
)
NO_FOR_ME = re.compile(r"^(?:no|zero) (.{2,25}) for me\b", _I)
KIND_OF_PERSON = re.compile(
    # "a cat person", "a morning guy"; "a huge fan of X" names X, not a kind of person
    r"^I'?m (not )?(?:a|an|more of a|totally a|such a) ([\w-]+) (?:person|guy|girl|fan(?! of))\b",
    _I,
)
RATHER = re.compile(r"^I'?d (?:much )?rather (.{2,30}?) than (.{2,30})$", _I)
HAVE_PLAN = re.compile(
    r"^I(?:'ve| have)(?: got)? (?:a |an |my |the )?([a-z][\w' ]{1,30}?) (?:on |this |next )?("
    + EN_DAY
    + r")"
    + _AT_TIME_END,
    _I,
)
GOING = re.compile(
    r"^I'?m (?P<verb>flying|going|driving|heading|moving|traveling|travelling) "
    # where to, or only which way ("flying out Sunday to help out", "driving home Friday")
    r"(?:to (?P<place>[A-Z][\w]*(?: [A-Z]\w*)*)|(?P<way>out|home|back)(?= \w))"
    r"(?: (?:on |this |next |in )?(?P<day>" + EN_DAY + r"|next (?:week|month)|(?-i:[A-Z][a-z]+)|"
    r"that (?:morning|afternoon|evening|night|day))"
    # the part of the day and why: "sat morning for my cousin's wedding"
    r"(?P<part> (?:morning|afternoon|evening|night))?)?"
    r"(?P<why> (?:for (?:a |an |my |the )|to )[\w' -]{3,30})?$",
)
DAY_FIRST = re.compile(
    r"^(?P<day>"
    + EN_DAY
    + r")(?: at)? (?P<time>"
    + EN_TIME
    + r"),? (?P<act>[a-z][\w/&' -]{1,30})$",
    _I,
)
MOVED_TO = re.compile(
    r"^(?:I |we )?(?:just |finally )?(?:moved|relocated) to ([A-Z][\w]*(?: [A-Z]\w*)*)"
)
ON_NOW = re.compile(r"^I'?m (?:on|using|running) (.{2,30}?) now$", _I)
RESCHEDULED = re.compile(
    r"^(?:my |our |the )?([a-z][\w' ]{2,24}?) (?:got |has been |was |is )?(?:moved|changed|pushed|switched|bumped) to (.+)$",
    _I,
)
BAD_START = re.compile(
    r"^(?:i|i'm|we|it|it's|that|this|they|he|she|you|what|how|so|and|but|oh)\b", _I
)
# "all I have is an air fryer and a microwave": what the user has, and nothing else
ONLY_HAVE = re.compile(
    r"^(?:all (?:I|we) (?:have|own|'ve got|got) (?:is|are)|I (?:only|just) have) (.{3,60})$", _I
)
# "my flight lands at 7:40 on Sunday", "the meeting starts at 10 tomorrow": a thing's time
STARTS_AT = re.compile(
    r"^(my |our )([a-z][\w' ]{1,24}?) (lands|leaves|departs|starts|begins|ends|arrives) "
    r"(?:at )?(" + EN_TIME + r")(?: (?:on )?(" + EN_DAY + r"))?"
    r"(?: (?:they|it|he|she|we|so|but|because)\b.*)?$",  # a dash's aside after it is dropped
    _I,
)
# "I'm in Austin now" after "I left Denver": where the user lives now
IN_NOW = re.compile(
    r"^I'?m (?:in|based in|living in) ((?-i:[A-Z][a-z]+)(?: (?-i:[A-Z][a-z]+))*) now$", _I
)
# "I'm a second-year PhD student in computational biology at UW": where and what the user studies
STUDENT = re.compile(
    r"^I'?m (?:a|an) ((?:(?:first|second|third|fourth|fifth|final|\d(?:st|nd|rd|th))[- ]year )?"
    r"(?:PhD|Ph\.D\.|master'?s|grad|graduate|undergrad|undergraduate|college|university|med|"
    r"medical|law|high school|MBA) student(?: in [a-z][\w -]{2,30}?)?)"
    r"(?: at ((?-i:[A-Z])[\w&.-]*(?: (?-i:[A-Z])[\w&.-]*)*))?$",
    _I,
)
# "first week at the new job at Stripe", "just started a new job at Figma": the user's new job
# "I'm starting at Halvorsen Labs on Jan 6 as a data engineer": the user's job to come
STARTING_AT = re.compile(
    r"^(?:I'?m (?:officially |finally )?starting at|(?:it'?s )?(?:my )?first day at) "
    r"((?-i:[A-Z])[\w&.-]*(?: (?-i:[A-Z])[\w&.-]*)*)"
    r"(?: (?:on |in |next )?(" + EN_DAY + r"|(?-i:[A-Z][a-z]+)(?: \d{1,2})?))?"
    r"(?: as (?:a |an )?([a-z][\w -]{2,30}))?$",
    _I,
)
# "I've been biking to work ever since …", "been doing my long runs on Sundays lately": what
# the user does these days (a mood, a wait or an attempt is no habit)
HABIT = re.compile(
    r"^I(?:'ve| have) been (?!(?:feeling|thinking|wondering|trying|meaning|dying|waiting|looking|"
    r"struggling|dealing|going|getting|having|worrying|stressing|hoping|planning|considering|"
    r"meaning|so|really|kinda|pretty|super)\b)([a-z]+ing (?:[\w'/-]+ ){0,6}?[\w'/-]+)"
    r"(?: instead)?(?: (?:lately|recently|these days|for (?:the past |a few |\d+ )?\w+ "
    r"(?:years?|months?|weeks?)|ever since (?P<since>.+)))(?: instead| now)?$",
    _I,
)
# "I'm finally doing the Providence half marathon on May 18", "I'm going part-time at the clinic
# starting next month", "I'm switching to the hybrid schedule": what the user is set to do, on a
# day said with it (a switch needs none); "I'm doing nothing this weekend" names nothing
GOING_TO_DO = re.compile(
    r"^I'?m (?:finally |officially |also )?(?P<verb>switching to|going (?:part-time|full-time)|"
    r"(?:doing|running|taking|hosting|starting|moving to|going back to)(?= .*\b(?:on|in|from|"
    r"starting|next|this) (?:" + EN_DAY + r"|next \w+|(?-i:[A-Z][a-z]+)|\d)))"
    r" (?!(?:nothing|anything|something|it|that|this|a break|the day|my best|the other|another|a "
    r"different|great|well|fine|good|ok|okay|better|worse|badly|alright)\b)(?P<what>.{3,80})$",
    _I,
)
NEW_JOB = re.compile(
    r"\b(?:first (?:day|week|month) (?:at|of) (?:the |my )?new job|(?:just )?started (?:a |my |the )?"
    r"new job) at ((?-i:[A-Z])[\w&.-]*(?: (?-i:[A-Z])[\w&.-]*)*)",
    _I,
)
