"""Values that changed between two statements: a date, a time or an amount said again
different ("婚礼定在10月3号" → "往后推，现在是11月8号", "rent is $1,850" → "$1,950 from May").

A change report that shares only one word with the statement it follows is too weak to mark
that statement corrected on words alone; a value of the same form said anew, different,
is the evidence a word count misses (issue #30: numbers and dates that change).
"""

from __future__ import annotations

import re

from langmem_plus.errors import ValidationError

__all__ = ["changed_values"]

_ZH_DIGITS = "一二两三四五六七八九"
_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
# each form a value can take; a value is compared only with values of its own form
_FORMS = {
    "zh_date": re.compile(r"\d{1,2}\s*月\s*\d{1,2}\s*[号日]"),
    "zh_day": re.compile(r"(?<![\d月])\d{1,2}\s*[号日](?!\d)"),
    "en_date": re.compile(rf"\b{_MONTHS} \d{{1,2}}(?:st|nd|rd|th)?\b", re.I),
    "clock": re.compile(r"(?<![\d:])\d{1,2}[:：]\d{2}(?!\d)|\d{1,2}点(?:半|\d{1,2}分?)?"),
    "money": re.compile(r"[$¥£€]\s?\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:\.\d+)?\s?(?:元|块钱|块)"),
    # an amount in Chinese numerals, as rent and prices are said: "四千二", "两千八", "三百五"
    "zh_amount": re.compile(
        rf"(?<![{_ZH_DIGITS}十百千万])[{_ZH_DIGITS}]+[百千万][{_ZH_DIGITS}]?(?![{_ZH_DIGITS}十百千万])"
    ),
}


def _norm(value: str) -> str:
    return re.sub(r"[\s,.]", "", value.lower()).replace("：", ":").replace("日", "号")


def _values(text: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for form, rx in _FORMS.items():
        found = {_norm(m.group(0)) for m in rx.finditer(text)}
        if found:
            out[form] = found
    if "zh_date" in out:  # "10月3号" is not also the day "3号"
        days = {d[d.index("月") + 1 :] for d in out["zh_date"]}
        out["zh_day"] = out.get("zh_day", set()) - days
        if not out["zh_day"]:
            del out["zh_day"]
    return out


def changed_values(new: str, old: str) -> set[str]:
    """The values of `old` (as written there, normalised) that `new` says again in the same
    form with a different value: a form both hold, where no value of one is in the other."""
    if not isinstance(new, str) or not isinstance(old, str):
        raise ValidationError("new and old must be strings")
    now, before = _values(new), _values(old)
    out: set[str] = set()
    for form, olds in before.items():
        news = now.get(form)
        if news and not news & olds:
            out |= olds
    return out
