"""Times in text: ISO timestamps, and natural time references as date ranges.

`parse_iso` reads an ISO 8601 timestamp (a trailing ``Z`` accepted). For search,
`parse_time_range(text, now)` resolves the first past or explicit phrase (昨天, 上次, last
week, 2026-01-03, May 8 2023) to ``(start, end)`` aware datetimes (end exclusive),
``PREVIOUS_SESSION`` for "上次 / last time" (only the caller knows the sessions), or ``None``.
For memories, `resolve_time` / `date_metadata` resolve future-leaning phrases of plans
("下周三要去杭州面试", "next Friday I will fly to Tokyo") to absolute dates. Arbitrary text never
raises: a time phrase is a hint, never an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone, tzinfo
from typing import Final

__all__ = [
    "PREVIOUS_SESSION",
    "PreviousSession",
    "ResolvedTime",
    "TimeMatch",
    "date_metadata",
    "find_time_reference",
    "parse_iso",
    "parse_time_range",
    "resolve_time",
    "strip_time_reference",
]


class PreviousSession:
    """Marker for "上次 / last time": the caller resolves it with its session data."""

    _instance: PreviousSession | None = None

    def __new__(cls) -> PreviousSession:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "PREVIOUS_SESSION"


PREVIOUS_SESSION: Final = PreviousSession()

TimeRange = tuple[datetime, datetime]


@dataclass(frozen=True)
class TimeMatch:
    """A time phrase found in a text: where it is and what it means."""

    start: int
    end: int
    phrase: str
    value: TimeRange | PreviousSession


_MONTHS = {
    "jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4,
    "april": 4, "may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8,
    "sep": 9, "sept": 9, "september": 9, "oct": 10, "october": 10, "nov": 11,
    "november": 11, "dec": 12, "december": 12,
}  # fmt: skip
_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5,
              "六": 6, "七": 7, "八": 8, "九": 9}  # fmt: skip
_EN_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
               "seven": 7, "eight": 8, "nine": 9, "ten": 10, "couple of": 2, "few": 3,
               "a couple of": 2}  # fmt: skip
_MAX_DAYS_BACK = 36_600  # a century: larger counts are nonsense, not errors
_MAX_INPUT = 2_000

_MON = "|".join(sorted(_MONTHS, key=len, reverse=True))
_CN_NUM = r"[0-9]{1,3}|[零〇一二两三四五六七八九十百]{1,4}"
_EN_NUM = r"\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|couple of|few"

# (pattern, kind); tried in this order, the earliest match in the text wins.
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)"), "iso"),
    (re.compile(r"(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"), "cn_date"),
    (
        re.compile(rf"\b({_MON})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b", re.I),
        "en_md",
    ),
    (
        re.compile(
            rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MON})\.?(?:,?\s+(\d{{4}}))?\b", re.I
        ),
        "en_dm",
    ),
    (re.compile(rf"({_CN_NUM})\s*(天|日|周|星期|个?礼拜|个?月|年)(?:之|以)?前"), "cn_ago"),
    (re.compile(rf"\b({_EN_NUM})\s+(day|week|month|year)s?\s+ago\b", re.I), "en_ago"),
    (re.compile(r"大前天"), "d-3"),
    (re.compile(r"前天|day before yesterday", re.I), "d-2"),
    (re.compile(r"昨天|昨日|昨晚|yesterday|last night", re.I), "d-1"),
    (re.compile(r"今天|今日|今晚|\btoday\b|\btonight\b|this morning", re.I), "d0"),
    (re.compile(r"上上(?:个)?(?:周|星期|礼拜)"), "w-2"),
    (re.compile(r"上(?:个)?(?:周|星期|礼拜)|\blast week\b|\bprevious week\b", re.I), "w-1"),
    (re.compile(r"本周|这周|这个星期|这星期|\bthis week\b", re.I), "w0"),
    (re.compile(r"上上个月"), "m-2"),
    (re.compile(r"上(?:个)?月|\blast month\b|\bprevious month\b", re.I), "m-1"),
    (re.compile(r"本月|这个月|\bthis month\b", re.I), "m0"),
    (re.compile(r"去年|\blast year\b", re.I), "y-1"),
    (re.compile(r"今年|\bthis year\b", re.I), "y0"),
    (
        re.compile(
            r"上次|上一次|上回|上一回|上个会话|\blast time\b|\bprevious (?:session|conversation|chat)\b"
            r"|\blast (?:session|conversation|chat)\b",
            re.I,
        ),
        "prev",
    ),
    (re.compile(r"最近|近期|这几天|这些天|\brecently\b|\blately\b|\bthese days\b", re.I), "recent"),
]


def parse_iso(text: str) -> datetime:
    """An ISO 8601 timestamp (``Z`` read as UTC); ValueError when `text` is not one."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _cn_number(s: str) -> int | None:
    """Parse 3 / 十二 / 二十 / 两 / 一百 into an int (None if not a number)."""
    if s.isdigit():
        return int(s)
    if "百" in s:
        head, _, tail = s.partition("百")
        h = _CN_DIGITS.get(head, 1 if head == "" else -1)
        t = _cn_number(tail) if tail else 0
        return None if h < 0 or t is None else h * 100 + t
    if "十" in s:
        head, _, tail = s.partition("十")
        h = _CN_DIGITS.get(head, 1 if head == "" else -1)
        t = _CN_DIGITS.get(tail, 0 if tail == "" else -1)
        return None if h < 0 or t < 0 else h * 10 + t
    if len(s) == 1 and s in _CN_DIGITS:
        return _CN_DIGITS[s]
    return None


def _day_start(d: date, tz: tzinfo) -> datetime:
    return datetime(d.year, d.month, d.day, tzinfo=tz)


def _day(d: date, tz: tzinfo) -> TimeRange:
    start = _day_start(d, tz)
    return start, start + timedelta(days=1)


def _month(year: int, month: int, tz: tzinfo) -> TimeRange:
    start = datetime(year, month, 1, tzinfo=tz)
    nxt = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=tz)
    return start, nxt


def _shift_month(year: int, month: int, delta: int) -> tuple[int, int]:
    idx = year * 12 + (month - 1) + delta
    return idx // 12, idx % 12 + 1


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _date_without_year(month: int, day: int, now: datetime) -> date | None:
    """`1月3日` / `Jan 3`: this year's date, or last year's if that is still in the future."""
    d = _safe_date(now.year, month, day)
    if d is not None and d > now.date():
        d = _safe_date(now.year - 1, month, day)
    return d


def _ago(n: int, unit: str, now: datetime, tz: tzinfo) -> TimeRange | None:
    if n < 0:
        return None
    today = now.date()
    if unit in ("天", "日", "day"):
        if n > _MAX_DAYS_BACK:
            return None
        return _day(today - timedelta(days=n), tz)
    if unit in ("周", "星期", "礼拜", "个礼拜", "week"):
        if n * 7 > _MAX_DAYS_BACK:
            return None
        monday = today - timedelta(days=today.weekday()) - timedelta(weeks=n)
        return _day_start(monday, tz), _day_start(monday + timedelta(days=7), tz)
    if unit in ("月", "个月", "month"):
        if n > 1200:
            return None
        y, m = _shift_month(today.year, today.month, -n)
        return _month(y, m, tz) if y >= 1 else None
    if unit in ("年", "year"):
        y = today.year - n
        if n > 100 or y < 1:
            return None
        return datetime(y, 1, 1, tzinfo=tz), datetime(y + 1, 1, 1, tzinfo=tz)
    return None


def _resolve(kind: str, m: re.Match[str], now: datetime) -> TimeRange | PreviousSession | None:
    tz = now.tzinfo or timezone.utc
    today = now.date()
    if kind == "iso":
        d = _safe_date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        return None if d is None else _day(d, tz)
    if kind == "cn_date":
        month, day = int(m.group(2)), int(m.group(3))
        d = (
            _safe_date(int(m.group(1)), month, day)
            if m.group(1)
            else _date_without_year(month, day, now)
        )
        return None if d is None else _day(d, tz)
    if kind in ("en_md", "en_dm"):
        mon_s, day_s = (m.group(1), m.group(2)) if kind == "en_md" else (m.group(2), m.group(1))
        month, day = _MONTHS[mon_s.lower()], int(day_s)
        year = m.group(3)
        d = _safe_date(int(year), month, day) if year else _date_without_year(month, day, now)
        return None if d is None else _day(d, tz)
    if kind == "cn_ago":
        n = _cn_number(m.group(1))
        return None if n is None else _ago(n, m.group(2), now, tz)
    if kind == "en_ago":
        word = m.group(1).lower()
        n = int(word) if word.isdigit() else _EN_NUMBERS.get(word)
        return None if n is None else _ago(n, m.group(2).lower(), now, tz)
    if kind.startswith("d"):
        return _day(today - timedelta(days=-int(kind[1:])), tz)
    if kind.startswith("w"):
        return _ago(-int(kind[1:]), "week", now, tz)
    if kind.startswith("m"):
        return _ago(-int(kind[1:]), "month", now, tz)
    if kind.startswith("y"):
        return _ago(-int(kind[1:]), "year", now, tz)
    if kind == "prev":
        return PREVIOUS_SESSION
    if kind == "recent":
        return _day_start(today - timedelta(days=6), tz), _day_start(today, tz) + timedelta(days=1)
    return None


def _aware_now(now: datetime | None) -> datetime:
    if now is None:
        return datetime.now(timezone.utc)
    if not isinstance(now, datetime):
        raise TypeError(f"now must be a datetime, got {type(now).__name__}")
    return now if now.tzinfo is not None else now.replace(tzinfo=timezone.utc)


def find_time_reference(text: str, now: datetime | None = None) -> TimeMatch | None:
    """The earliest time phrase in `text` that resolves, with its span; None when there is none."""
    if not isinstance(text, str) or not text:
        return None
    ref = _aware_now(now)
    text = text[:_MAX_INPUT]
    best: TimeMatch | None = None
    for pattern, kind in _PATTERNS:
        for m in pattern.finditer(text):
            if best is not None and m.start() >= best.start:
                break
            try:
                value = _resolve(kind, m, ref)
            except (ValueError, OverflowError):
                value = None
            if value is not None:
                best = TimeMatch(m.start(), m.end(), m.group(0), value)
                break
    return best


def parse_time_range(text: str, now: datetime | None = None) -> TimeRange | PreviousSession | None:
    """Resolve the time phrase in `text` against `now` (default: now, UTC).

    Returns ``(start, end)`` (aware, end exclusive, in `now`'s time zone), ``PREVIOUS_SESSION``
    for 上次 / last time, or ``None`` when the text names no time. Never raises on text.
    """
    found = find_time_reference(text, now)
    return None if found is None else found.value


def strip_time_reference(text: str, now: datetime | None = None) -> tuple[str, TimeMatch | None]:
    """Split `text` into the words without the time phrase, and the phrase (or None)."""
    found = find_time_reference(text, now)
    if found is None:
        return text, None
    rest = (text[: found.start] + " " + text[found.end :]).strip()
    return re.sub(r"\s{2,}", " ", rest), found


# ---------------------------------------------------------------------------- plans
_ZH_WD = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}
_EN_WD = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5,
    "sunday": 6, "mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3,
    "fri": 4, "sat": 5, "sun": 6, "weekend": 5,
}  # fmt: skip

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


def _one_day(d: date) -> tuple[date, date]:
    return d, d + timedelta(days=1)


def _month_span(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year + (month == 12), month % 12 + 1, 1)


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
    return 3 if w in ("几", "few", "a few") else _EN_NUMBERS.get(w) or _cn_number(w)


def _future_span(kind: str, m: re.Match[str], today: date) -> tuple[date, date] | None:
    if kind == "md":
        d = _future_md(m.group(1), int(m.group(2)), int(m.group(3)), today)
        return None if d is None else _one_day(d)
    if kind in ("en_md", "en_dm"):
        mon, day = (m.group(1), m.group(2)) if kind == "en_md" else (m.group(2), m.group(1))
        d = _future_md(m.group(3), _MONTHS[mon[:3].lower()], int(day), today)
        return None if d is None else _one_day(d)
    if kind.startswith("d") and kind[1:].lstrip("+").isdigit():
        return _one_day(today + timedelta(days=int(kind[1:])))
    if kind in ("nnwd", "nwd", "twd", "wd"):
        key = m.group(1)
        wd = _ZH_WD.get(key, _EN_WD.get(key.lower(), -1))
        if wd < 0:
            return None
        d = _weekday(kind, wd, today)
        if key in ("末", "weekend") or key.lower() == "weekend":
            return d, d + timedelta(days=2)
        return _one_day(d)
    if kind == "nw":
        monday = today - timedelta(days=today.weekday()) + timedelta(weeks=1)
        return monday, monday + timedelta(weeks=1)
    if kind == "nm":
        y, mo = (today.year + 1, 1) if today.month == 12 else (today.year, today.month + 1)
        return _month_span(y, mo)
    if kind == "ny":
        return date(today.year + 1, 1, 1), date(today.year + 2, 1, 1)
    if kind == "in":
        return _in_span(m, today)
    if kind == "dom":
        return _day_of_month(int(m.group(1)), today)
    return None


def _in_span(m: re.Match[str], today: date) -> tuple[date, date] | None:
    """ "in 3 days" / "两个月后": the day (or month) that many units ahead."""
    n = _count(m.group(1))
    unit = m.group(2).lower()
    if n is None or n > 366:
        return None
    if unit in ("天", "day"):
        return _one_day(today + timedelta(days=n))
    if "月" in unit or unit == "month":
        y, mo = divmod(today.year * 12 + today.month - 1 + n, 12)
        return _month_span(y, mo + 1)
    return _one_day(today + timedelta(weeks=n))  # 周 / 星期 / 礼拜 / week


def _day_of_month(day: int, today: date) -> tuple[date, date] | None:
    """ "15号": that day of this month, or of the next when it has passed."""
    for delta in (0, 1):
        y, mo = divmod(today.year * 12 + today.month - 1 + delta, 12)
        try:
            d = date(y, mo + 1, day)
        except ValueError:
            return None
        if d >= today:
            return _one_day(d)
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
                span = _future_span(kind, m, today)
            except (ValueError, OverflowError):
                span = None
            if span is not None:
                best = (m.start(), ResolvedTime(m.group(0).strip(), span[0], span[1]))
                break
    if best is not None:
        return best[1]
    # explicit dates (2026-03-05) and past single days (昨天, 3 days ago): the search rules
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
