"""English clause rules for dated things: life events and plans with their day and time."""

from __future__ import annotations

import re

from langmem_plus.processors.facts.derived import DerivedFact
from langmem_plus.processors.facts.english_patterns import (
    AT_DAY,
    BABY,
    BAD_START,
    COMING,
    DAY_FIRST,
    EVENT,
    FRAGMENT,
    GOING,
    GOING_TO_DO,
    HAVE_PLAN,
    STARTING_AT,
    STARTS_AT,
    WE_STATE,
)
from langmem_plus.processors.facts.helpers import continuation, fact
from langmem_plus.processors.facts.patterns import EN_DAY, EN_REL_RE, WEEKDAYS_EN
from langmem_plus.text.clauses import Clause
from langmem_plus.text.person import en_third

# what 'X is Friday' says about a day rather than about a plan
_NOT_EVENT = re.compile(
    r"(?:today|tomorrow|tonight|yesterday|there|the weather|my day|the day|payday|day one)$", re.I
)


# a verb inside what a time fragment is about: a clause of its own, not a thing the user has
# ("planning is every other Monday at 10" is not "User has planning is every other ...")
_FINITE = re.compile(r"\b(?:is|are|was|were|isn't|aren't|wasn't|weren't)\b", re.I)
_EVERY = re.compile(r"\s+(every(?: other)?)$", re.I)


def _day(word: str) -> str:
    """A weekday abbreviation spelled out ("fri" -> "Friday", "tmrw" -> "tomorrow")."""
    if word.lower() in ("tmrw", "tmr"):
        return "tomorrow"
    w = word.lower().rstrip("s")
    return (
        WEEKDAYS_EN.get(w[:3] if w.endswith("day") else w, word.capitalize())
        if w[:3] in WEEKDAYS_EN
        else word
    )


def _when(m: re.Match[str]) -> str:
    """'Friday at 3pm' from a match whose group 2 is the day and group 3 the optional time."""
    return _day(m.group(2)) + (f" at {m.group(3)}" if m.group(3) else "")


def event(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """'Passed the bar exam!!!' / 'Baby girl arrived at 3:12am' -> a life event of the user."""
    t = cl[i].text
    if m := BABY.match(t):
        return [fact(f"User had a baby {m.group(1).lower()}", kind="event", slot=None)]
    if m := WE_STATE.match(t):
        state = m.group(1).lower()
        slot = "pregnancy" if state in ("pregnant", "expecting") else "marital_status"
        return [fact(f"User and their partner are {state}", kind="event", slot=slot, value=state)]
    if m := STARTING_AT.match(t):  # "I'm starting at Figma on March 3 as a designer"
        day = _day(m.group(2)) if m.group(2) else ""
        when = f"{' on' * (day not in ('tomorrow', 'tonight'))} {day}" * bool(day)
        job = f" as a {m.group(3)}" if m.group(3) else ""
        return [fact(f"User starts at {m.group(1)}{when}{job}", kind="event", slot="job",
                     value=m.group(1))]  # fmt: skip
    if (m := EVENT.match(t)) and not cl[i].question:
        rest = re.split(r",| so | and I ", m.group(2))[0].strip()
        return [fact(f"User {en_third(m.group(1).lower())} {en_third(rest)}", kind="event")]
    return []


def _starts_at(t: str) -> list[DerivedFact]:
    """'my flight lands at 7:40 on Sunday' -> when the user's (or team's) thing is."""
    m = STARTS_AT.match(t)
    if not m or BAD_START.match(m.group(2)):
        return []
    day = _day(m.group(5)) if m.group(5) else ""
    when = m.group(4) + (f" {day}" if day in ("tomorrow", "tonight") else f" on {day}" * bool(day))
    team = m.group(1).lower().startswith("our")
    owner = "The user's team's" if team else "User's"
    return [fact(f"{owner} {m.group(2)} {m.group(3)} at {when}", kind="plan",
                 subject="team" if team else "user", slot=f"{m.group(2).lower()}.time",
                 value=when)]  # fmt: skip


def _trip(cl: list[Clause], i: int, m: re.Match[str]) -> list[DerivedFact]:
    """'I'm flying to Denver sat morning for my cousin's wedding' -> the trip, its day (the
    next clause's, or the one said before for "that evening") and what it is for."""
    trip_day: str | None = m.group("day")
    if not trip_day and i + 1 < len(cl):
        nxt = re.match(r"^(?:on |this |next )?(" + EN_DAY + r")$", cl[i + 1].text, re.I)
        trip_day = nxt.group(1) if nxt else None
    day = _day(trip_day) if trip_day else ""
    when = f"{' on' * (day not in ('tomorrow', 'tonight'))} {day}{m.group('part') or ''}" * bool(
        day
    )
    if trip_day and trip_day.startswith("that "):  # "that evening": of the day said before
        said = re.search(EN_DAY, cl[i - 1].text, re.I) if i else None
        part = trip_day[5:].replace("day", "")
        when = f" on {_day(said.group())}{' in the ' + part if part else ''}" if said else ""
    if m.group("way") and not trip_day:
        return []  # "I'm heading out now": no trip
    where = f"to {m.group('place')}" if m.group("place") else m.group("way")
    why = en_third(m.group("why") or "")
    return [fact(f"User is {m.group('verb')} {where}{when}{why}", kind="plan",
                 slot=f"trip.{m.group('verb')}", value=m.group("place") or m.group("way"))]  # fmt: skip


# "…flying to Denver thurs night, back sunday": the way back of the trip just said
_BACK = re.compile(
    r"^(?:and |then )?(?:back|flying back|coming back|returning|home) (?:on )?(?P<following>the "
    r"following |next )?(?P<day>" + EN_DAY + r")$",
    re.I,
)
_TO_PLACE = re.compile(r"\bto ((?-i:[A-Z])\w+(?: (?-i:[A-Z])\w+)*)")


def _way_back(cl: list[Clause], i: int) -> list[DerivedFact]:
    """'back sunday' after a clause that goes to a named place -> when the user returns."""
    m = _BACK.match(cl[i].text)
    place = _TO_PLACE.search(cl[i - 1].text) if m and i > 0 else None
    if not m or not place:
        return []
    day = _day(m.group("day"))
    when = f"{m.group('following').lower()}{day}" if m.group("following") else f"on {day}"
    return [fact(f"User returns from {place.group(1)} {when}", kind="plan",
                 slot=f"trip.return.{place.group(1)}", value=day)]  # fmt: skip


def plan(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """'dinner w/ Sam fri 7' / "plumber's coming Tuesday" -> a plan with its time."""
    t = cl[i].text
    if way_back := _way_back(cl, i):
        return way_back
    if (
        (m := AT_DAY.match(t))
        and not BAD_START.match(m.group(1))
        and not _NOT_EVENT.match(m.group(1))
    ):
        when = _when(m)
        thing = en_third(m.group(1))
        # "my daughter's recital is Friday": the daughter's event, not the user's
        theirs = re.match(rf"(?:{EN_REL_RE})'s ", m.group(1), re.I)
        return [
            fact(
                f"User's {thing} is {when}",
                kind="plan",
                subject="third_person" if theirs else "user",
                slot=f"{m.group(1).lower()}.time",
                value=when,
            )
        ]
    if starts := _starts_at(t):
        return starts
    if m := COMING.match(t):
        who, day = m.group(1), _day(m.group(2))
        return [
            fact(
                f"The {who} is coming on {day}", kind="plan", slot=f"{who.lower()}.visit", value=day
            )
        ]
    if m := HAVE_PLAN.match(t):
        when = _when(m)
        return [
            fact(
                f"User has {m.group(1)} on {when}",
                kind="plan",
                slot=f"plan.{m.group(1)}",
                value=when,
            )
        ]
    if m := GOING.match(t):
        return _trip(cl, i, m)
    if (m := GOING_TO_DO.match(t)) and not cl[i].question:
        more = continuation(cl, i, zh=False, limit=1)
        what = en_third(m.group("what")) + (f", {more}" if more else "")
        return [fact(f"User is {m.group('verb').lower()} {what}", kind="plan", slot=None)]
    m = FRAGMENT.match(t) or DAY_FIRST.match(t)
    if not m or BAD_START.match(m.group("act")) or cl[i].question or _FINITE.search(m.group("act")):
        return []
    act, day, time = m.group("act"), _day(m.group("day")), m.group("time")
    if every := _EVERY.search(act):  # "yoga every Tuesday at 7": how often, not what
        act, day = act[: every.start()], f"{every.group(1).lower()} {day}"
    where = m.groupdict().get("where") or ""
    # the way back ("back sunday", "back to work tuesday") is a statement of its own
    goes_back = i + 1 < len(cl) and bool(re.match(r"(?:and |then )?back\b", cl[i + 1].text, re.I))
    more = "" if goes_back else continuation(cl, i, zh=False, limit=1)
    on = " on" * (not every)
    text = f"User has {act}{on} {day} at {time}{where}" + (f", {more}" if more else "")
    return [fact(text, kind="plan", slot=f"plan.{act}", value=f"{day} {time}")]
