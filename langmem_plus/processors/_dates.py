"""Absolute dates for the relative time phrases of memories ("下周三要去杭州面试",
"next Friday I will fly to Tokyo"): the memory text keeps the user's words, the resolved date
goes into the op / record metadata.

`langmem_plus.text.timeparse` resolves past and explicit references (昨天, last week,
2026-01-03) for search; plans point forward, so this module resolves future phrases itself
and falls back to timeparse for explicit and past single-day references.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

from langmem_plus.text.timeparse import find_time_reference

__all__ = ["ResolvedTime", "date_metadata", "resolve_time"]

_ZH_WD = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}
_EN_WD = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5,
    "sunday": 6, "mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3,
    "fri": 4, "sat": 5, "sun": 6, "weekend": 5,
}  # fmt: skip
_EN_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
    "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_EN_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
           "seven": 7, "a few": 3, "few": 3, "couple of": 2, "a couple of": 2}  # fmt: skip
_CN_NUM = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
           "九": 9, "十": 10, "几": 3}  # fmt: skip

_WEEK = r"(?:周|星期|礼拜)"
_ZH_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?:(\d{4})年)?(\d{1,2})月(\d{1,2})[日号]"), "md"),
    (re.compile(r"大后天"), "d+3"),
    (re.compile(r"后天"), "d+2"),
    (re.compile(r"明天|明早|明晚|明日"), "d+1"),
    (re.compile(r"今天|今晚|今早|今日|待会|等会"), "d0"),
    (re.compile(r"下下个?" + _WEEK + r"([一二三四五六日天末])"), "nnwd"),
    (re.compile(r"下个?" + _WEEK + r"([一二三四五六日天末])"), "nwd"),
    (re.compile(r"(?:这|本)个?" + _WEEK + r"([一二三四五六日天末])"), "twd"),
    (re.compile(r"(?<![每个])" + _WEEK + r"([一二三四五六日天末])"), "wd"),
    (re.compile(r"下个?" + _WEEK), "nw"),
    (re.compile(r"下个?月"), "nm"),
    (re.compile(r"明年"), "ny"),
    (
        re.compile(
            r"(\d{1,2}|[一两二三四五六七八九十几])(天|个?星期|周|个?礼拜|个?月)(?:之|以)?后"
        ),
        "in",
    ),
    (re.compile(r"(\d{1,2})[日号]"), "dom"),
]
_EN_DAYS = "|".join(sorted(_EN_WD, key=len, reverse=True))
_EN_MON = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_EN_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"\b({_EN_MON})\.? (\d{{1,2}})(?:st|nd|rd|th)?(?:,? (\d{{4}}))?\b", re.I), "en_md"),
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?({_EN_MON})\b(?:,? (\d{{4}}))?", re.I),
     "en_dm"),
    (re.compile(r"\bthe day after tomorrow\b", re.I), "d+2"),
    (re.compile(r"\btomorrow\b", re.I), "d+1"),
    (re.compile(r"\b(?:today|tonight|this (?:morning|afternoon|evening)|later today)\b", re.I),
     "d0"),
    (re.compile(rf"\bnext ({_EN_DAYS})\b", re.I), "nwd"),
    (re.compile(rf"\bthis (?:coming )?({_EN_DAYS})\b", re.I), "twd"),
    (re.compile(rf"\b(?:on |this coming |coming )({_EN_DAYS})\b", re.I), "wd"),
    (re.compile(r"\bnext week\b", re.I), "nw"),
    (re.compile(r"\bnext month\b", re.I), "nm"),
    (re.compile(r"\bnext year\b", re.I), "ny"),
    (re.compile(r"\bin (\d{1,2}|an?|one|two|three|four|five|six|seven|a few|a couple of) "
                r"(day|week|month)s?\b", re.I), "in"),
]  # fmt: skip


@dataclass(frozen=True)
class ResolvedTime:
    """A time phrase and the absolute dates it stands for (end exclusive)."""

    phrase: str
    start: date
    end: date

    def metadata(self) -> dict[str, str]:
        """`time_phrase`, plus `resolved_date` for one day or `resolved_start/_end` for a span."""
        out = {"time_phrase": self.phrase}
        if self.end - self.start == timedelta(days=1):
            out["resolved_date"] = self.start.isoformat()
        else:
            out["resolved_start"] = self.start.isoformat()
            out["resolved_end"] = self.end.isoformat()
        return out


def _day(d: date) -> tuple[date, date]:
    return d, d + timedelta(days=1)


def _month_span(year: int, month: int) -> tuple[date, date]:
    start = date(year, month, 1)
    nxt = date(year + (month == 12), month % 12 + 1, 1)
    return start, nxt


def _future_md(year: str | None, month: int, day: int, today: date) -> date | None:
    try:
        if year:
            return date(int(year), month, day)
        d = date(today.year, month, day)
        return d if d >= today else date(today.year + 1, month, day)
    except ValueError:
        return None


def _weekday(kind: str, wd: int, today: date) -> date:
    monday = today - timedelta(days=today.weekday())
    if kind == "nnwd":
        return monday + timedelta(weeks=2, days=wd)
    if kind == "nwd":
        return monday + timedelta(weeks=1, days=wd)
    if kind == "twd":
        return monday + timedelta(days=wd)
    ahead = (wd - today.weekday()) % 7  # bare weekday: the next one (today counts)
    return today + timedelta(days=ahead)


def _count(word: str) -> int | None:
    w = word.lower()
    if w.isdigit():
        return int(w)
    return _EN_NUM.get(w) or _CN_NUM.get(w)


def _span(kind: str, m: re.Match[str], today: date) -> tuple[date, date] | None:
    if kind == "md":
        d = _future_md(m.group(1), int(m.group(2)), int(m.group(3)), today)
        return None if d is None else _day(d)
    if kind in ("en_md", "en_dm"):
        mon, day = (m.group(1), m.group(2)) if kind == "en_md" else (m.group(2), m.group(1))
        d = _future_md(m.group(3), _EN_MONTHS[mon[:3].lower()], int(day), today)
        return None if d is None else _day(d)
    if kind.startswith("d") and kind[1:].lstrip("+").isdigit():
        return _day(today + timedelta(days=int(kind[1:])))
    if kind in ("nnwd", "nwd", "twd", "wd"):
        key = m.group(1)
        wd = _ZH_WD.get(key, _EN_WD.get(key.lower(), -1))
        if wd < 0:
            return None
        d = _weekday(kind, wd, today)
        if key in ("末", "weekend") or key.lower() == "weekend":
            return d, d + timedelta(days=2)
        return _day(d)
    if kind == "nw":
        monday = today - timedelta(days=today.weekday()) + timedelta(weeks=1)
        return monday, monday + timedelta(weeks=1)
    if kind == "nm":
        y, mo = (today.year + 1, 1) if today.month == 12 else (today.year, today.month + 1)
        return _month_span(y, mo)
    if kind == "ny":
        return date(today.year + 1, 1, 1), date(today.year + 2, 1, 1)
    if kind == "in":
        n = _count(m.group(1))
        unit = m.group(2).lower()
        if n is None or n > 366:
            return None
        if unit in ("天", "day"):
            return _day(today + timedelta(days=n))
        if "月" in unit or unit == "month":
            y, mo = divmod(today.year * 12 + today.month - 1 + n, 12)
            return _month_span(y, mo + 1)
        return _day(today + timedelta(weeks=n))  # 周 / 星期 / 礼拜 / week
    if kind == "dom":
        day = int(m.group(1))
        for delta in (0, 1):
            y, mo = divmod(today.year * 12 + today.month - 1 + delta, 12)
            try:
                d = date(y, mo + 1, day)
            except ValueError:
                return None
            if d >= today:
                return _day(d)
    return None


def resolve_time(text: str, now: datetime | None = None) -> ResolvedTime | None:
    """The earliest relative or explicit time phrase of `text`, resolved against `now`
    (future-leaning: "周三" is the coming Wednesday, "3月5日" this year's or next year's)."""
    if not text:
        return None
    ref = now or datetime.now(timezone.utc)
    if ref.tzinfo is None:
        ref = ref.replace(tzinfo=timezone.utc)
    today = ref.date()
    best: tuple[int, ResolvedTime] | None = None
    for pattern, kind in (*_ZH_RULES, *_EN_RULES):
        for m in pattern.finditer(text):
            if best is not None and m.start() >= best[0]:
                break
            try:
                span = _span(kind, m, today)
            except (ValueError, OverflowError):
                span = None
            if span is not None:
                best = (m.start(), ResolvedTime(m.group(0).strip(), span[0], span[1]))
                break
    if best is not None:
        return best[1]
    # explicit dates (2026-03-05) and past single days (昨天, 3 days ago) via timeparse
    found = find_time_reference(text, ref)
    if found is not None and isinstance(found.value, tuple):
        start, end = found.value
        if end - start <= timedelta(days=1):
            return ResolvedTime(found.phrase, start.date(), end.date())
    return None


def date_metadata(text: str, now: datetime | None = None) -> dict[str, str]:
    """Metadata for a memory text: the phrase and its absolute date(s), or {}."""
    found = resolve_time(text, now)
    return found.metadata() if found else {}
