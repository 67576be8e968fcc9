"""Whether a user turn says that what the reply it answers assumed no longer holds ("ha no,
I sold that thing ages ago", "lol I never took that one"): the reply stated an old value,
and the turn is a newer version of what that reply said although it names nothing."""

from __future__ import annotations

import re

from langmem_plus.errors import ValidationError
from langmem_plus.text.clauses import strip_fillers

__all__ = ["denies_reply"]

# openers strip_fillers leaves (its list is shared with the clause rules)
_LEAD_RE = re.compile(r"^(?:ha+h?|heh|lmao|lmfao|rofl|xd)\b[\s,!.:]*", re.I)
# an offer, plan or thing the reply took as done that the user never took up
_NEVER_RE = re.compile(
    r"\bI (?:never|didn'?t(?: end up| actually)?) (?:took|take|taking|accepted|accept|joined|join|"
    r"bought|buy|signed|sign|went (?:for|with|through with)|go (?:for|with|through with))\b"
    r"(?! (?:a|an) )|"
    # the subject is often dropped: "never ended up starting there", "didn't end up going"
    r"(?:^|\bI )(?:never|didn'?t) end(?:ed)? up \w+ing\b",
    re.I,
)
# the thing the reply names is gone: "sold that thing", "got rid of it", "don't have it anymore"
_GONE_RE = re.compile(
    r"\b(?:sold|gave away|got rid of|returned|traded in) (?:that|it|them|those)\b|"
    r"\bdon'?t (?:have|own) (?:it|that|them|one) any ?more\b",
    re.I,
)
# the turn opens by saying it no longer holds: "not for a while now, I eat fish again",
# "not anymore, sold it", "不了，早戒了" is _ZH_GONE_RE's
_NOT_NOW_RE = re.compile(
    r"^(?:no+[,.!]?\s*|nope[,.!]?\s*)?not (?:any ?more|for (?:a (?:while|long time)|ages|years|months)"
    r"(?: now)?|since\b)",
    re.I,
)
_ZH_GONE_RE = re.compile(
    r"早(?:就)?(?:卖|送人|转手|退|没养|不养|没去|没接|没要|没买)|"
    r"(?:卖掉|送人|转手|退掉)(?:了|啦)|没(?:去|接|要|买|签)成"
)


def denies_reply(text: str) -> bool:
    """Whether user turn `text` says that what the reply it answers assumed does not hold:
    an offer or plan never taken up, the thing it names given away or sold, or an answer
    that opens with "not anymore" / "not for a while now"."""
    if not isinstance(text, str):
        raise ValidationError("text must be a string")
    prev, said = None, text
    while prev != said:
        prev = said
        said = strip_fillers(_LEAD_RE.sub("", said).strip())
    return bool(
        _NEVER_RE.search(said)
        or _GONE_RE.search(said)
        or _ZH_GONE_RE.search(said)
        or _NOT_NOW_RE.match(said)
    )
