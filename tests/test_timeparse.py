"""Natural time references resolved against a fixed `now`."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langmem_plus.text.timeparse import (
    PREVIOUS_SESSION,
    date_metadata,
    find_time_reference,
    parse_iso,
    parse_time_range,
    resolve_time,
    strip_time_reference,
)

NOW = datetime(2026, 1, 15, 10, 30, tzinfo=timezone.utc)  # a Thursday


def _day(y: int, m: int, d: int) -> tuple[datetime, datetime]:
    start = datetime(y, m, d, tzinfo=timezone.utc)
    return start, start + timedelta(days=1)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("昨天我们聊了什么", _day(2026, 1, 14)),
        ("前天的事", _day(2026, 1, 13)),
        ("今天", _day(2026, 1, 15)),
        ("3天前说过", _day(2026, 1, 12)),
        ("十天前", _day(2026, 1, 5)),
        ("what did I say yesterday?", _day(2026, 1, 14)),
        ("today", _day(2026, 1, 15)),
        ("2 days ago", _day(2026, 1, 13)),
        ("2026-01-03 的会议", _day(2026, 1, 3)),
        ("1月3日", _day(2026, 1, 3)),
        ("2025年12月31日", _day(2025, 12, 31)),
        ("12月20号", _day(2025, 12, 20)),  # no year and still ahead this year: last year
        ("Jan 3", _day(2026, 1, 3)),
        ("May 8 2023", _day(2023, 5, 8)),
        ("on 8 May, 2023", _day(2023, 5, 8)),
    ],
)
def test_days(text: str, expected: tuple[datetime, datetime]) -> None:
    assert parse_time_range(text, NOW) == expected


def test_weeks_months_recent() -> None:
    monday = datetime(2026, 1, 12, tzinfo=timezone.utc)
    assert parse_time_range("上周", NOW) == (monday - timedelta(days=7), monday)
    assert parse_time_range("last week", NOW) == (monday - timedelta(days=7), monday)
    assert parse_time_range("上个月", NOW) == (
        datetime(2025, 12, 1, tzinfo=timezone.utc),
        datetime(2026, 1, 1, tzinfo=timezone.utc),
    )
    assert parse_time_range("last month", NOW) == parse_time_range("上月", NOW)
    start, end = parse_time_range("最近在忙什么", NOW)  # type: ignore[misc]
    assert start == datetime(2026, 1, 9, tzinfo=timezone.utc) and end > NOW
    assert parse_time_range("recently", NOW) == (start, end)


def test_previous_session_marker_and_none() -> None:
    assert parse_time_range("上次说的那个 bug", NOW) is PREVIOUS_SESSION
    assert parse_time_range("like last time", NOW) is PREVIOUS_SESSION
    assert parse_time_range("hello there", NOW) is None
    assert parse_time_range("", NOW) is None
    assert parse_time_range("2026-02-30", NOW) is None  # impossible date: no range


def test_timezone_of_now_is_kept_and_naive_now_is_utc() -> None:
    tz = timezone(timedelta(hours=8))
    start, _end = parse_time_range("昨天", datetime(2026, 1, 15, 1, 0, tzinfo=tz))  # type: ignore[misc]
    assert start == datetime(2026, 1, 14, tzinfo=tz) and start.tzinfo is tz
    start, _ = parse_time_range("today", datetime(2026, 1, 15, 1, 0))  # type: ignore[misc]
    assert start.tzinfo is not None


def test_earliest_phrase_wins_and_strip() -> None:
    m = find_time_reference("上周和昨天", NOW)
    assert m is not None and m.phrase == "上周"
    rest, found = strip_time_reference("昨天 Python 代码", NOW)
    assert rest == "Python 代码" and found is not None and found.phrase == "昨天"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_never_raises_on_arbitrary_text(text: str) -> None:
    out = parse_time_range(text, NOW)
    assert out is None or out is PREVIOUS_SESSION or (out[0] < out[1])


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=0, max_value=10**9), st.sampled_from(["天前", " days ago", "个月前"]))
def test_large_counts_never_raise(n: int, unit: str) -> None:
    out = parse_time_range(f"{n}{unit}", NOW)
    assert out is None or isinstance(out, tuple)


def test_parse_iso_reads_z_as_utc_and_refuses_other_text() -> None:
    assert parse_iso("2026-01-15T10:30:00Z") == NOW
    assert parse_iso("2026-01-15T10:30:00+00:00") == NOW
    with pytest.raises(ValueError):
        parse_iso("yesterday")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("下周三要去杭州面试", {"time_phrase": "下周三", "resolved_date": "2026-01-21"}),
        (
            "next Friday I fly to Tokyo",
            {"time_phrase": "next Friday", "resolved_date": "2026-01-23"},
        ),
        ("in a few days", {"time_phrase": "in a few days", "resolved_date": "2026-01-18"}),
        ("三天后见", {"time_phrase": "三天后", "resolved_date": "2026-01-18"}),
        ("昨天去了医院", {"time_phrase": "昨天", "resolved_date": "2026-01-14"}),
        ("no time here", {}),
    ],
)
def test_plans_resolve_forward_and_past_days_through_the_search_rules(
    text: str, expected: dict[str, str]
) -> None:
    assert date_metadata(text, NOW) == expected


def test_resolve_time_spans_a_month() -> None:
    found = resolve_time("下个月搬家", NOW)
    assert found is not None
    assert (found.start.isoformat(), found.end.isoformat()) == ("2026-02-01", "2026-03-01")
