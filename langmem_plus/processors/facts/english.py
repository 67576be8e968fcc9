"""English clause rules: each returns the facts one clause states, or [] when not sure."""

from __future__ import annotations

import re
from collections.abc import Callable

from langmem_plus.processors.facts.derived import DerivedFact
from langmem_plus.processors.facts.english_patterns import (
    A_NOW,
    AGE,
    ALLERGY,
    BETTER,
    CALL_ME,
    DONT,
    DRIVE_NOW,
    FROM,
    HABIT,
    HARD_NO,
    HAVE_REL,
    IM_JOB,
    IN_NOW,
    ITS_NAME,
    JOB,
    JUST_NAME,
    KIND_OF_PERSON,
    LEARNING,
    LIKE,
    LIVE,
    MOVED_TO,
    MY_ATTR,
    MY_NAME,
    MY_THING,
    NEW_JOB,
    NO_FOR_ME,
    NO_HABIT,
    NOT_CALL,
    NOW,
    NOW_STOP,
    ON_NOW,
    ONLY_HAVE,
    OR_ELSE,
    PERSON,
    PRONOUNS,
    RATHER,
    REL,
    RESCHEDULED,
    SINCE,
    STATE,
    STUDENT,
    SWITCH,
    TEAM,
    TEAM_PARTICIPLE,
    WORK,
    YEARS_OLD,
)
from langmem_plus.processors.facts.english_plans import event, plan
from langmem_plus.processors.facts.helpers import continuation, fact, first_rule_facts
from langmem_plus.processors.facts.patterns import (
    EN_ATTR,
    EN_REL,
    EN_REL_RE,
    EN_REL_SAY,
    EN_STANDING_RE,
    EN_STATES,
    ONE_OFF_EN,
    device_slot,
)
from langmem_plus.text.clauses import Clause
from langmem_plus.text.person import en_third

# requests that hold for good: 'please always reply in Spanish', 'stop recommending podcasts',
# "don't use emojis with me"
_STANDING_IMPERATIVE = re.compile(
    r"^(?:please )?(?:always|never) (?!(?:been|on|in|at|for|with|the|a|an|this|that|so|again|am|is|"
    r"are|was|were|\w+ing)\b)[a-z]+\b.{2,}|^(?:please )?stop [a-z]+ing\b.{2,}|"
    r"^(?:please )?(?:don'?t|do not) .{2,}\b(?:with me|for me|ever|anymore|again)\b",
    re.I,
)

EnRule = Callable[[list[Clause], int, bool], list[DerivedFact]]
# a complaint: what it says happens is not what the user asks for
_COMPLAINT = re.compile(
    r"\b(?:ugh|so annoying|annoying|losing my mind|unbelievable|seriously|typical|drives me "
    r"crazy|sick of|fed up|can't stand it|awful|terrible|horrible|the worst|nightmare|"
    r"never going back)\b",
    re.I,
)
# what a request to the assistant says; a verb with a subject of its own ("they put me on
# hold") states, it does not ask
_ASKS = re.compile(
    r"(?<!\bthey )(?<!\bhe )(?<!\bshe )(?<!\bit )(?<!\bI )(?<!\bwe )"
    r"\b(?:you|your|please|remind|tell|give|show|send|use|keep|don'?t|do not|make sure|"
    r"always|never|include|add|write|put|answer|reply|respond|explain|skip|start with|link|"
    r"list|format|mention|suggest|recommend|default to)\b",
    re.I,
)


def names(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """'call me Dan' -> wants to be called Dan; 'my name is X' / pronouns -> profile."""
    t = cl[i].text
    if (m := CALL_ME.search(t)) and not cl[i].question:
        return [fact(f"User wants to be called {m.group(1)}", kind="instruction",
                     slot="user.preferred_name", value=m.group(1))]  # fmt: skip
    if m := NOT_CALL.search(t):
        for c in cl[i + 1 :]:
            if n := JUST_NAME.match(c.text):
                return [fact(f"User wants to be called {n.group(1)}, not {m.group(1)}",
                             kind="instruction", slot="user.preferred_name", value=n.group(1))]  # fmt: skip
    if (
        re.search(r"\bcall(?:ed)? me\b", t)
        and i + 1 < len(cl)
        and (n := ITS_NAME.match(cl[i + 1].text))
    ):
        return []  # the answer is read by `name_fix` on the next clause
    if i > 0 and re.search(r"\bcall(?:ed)? me\b", cl[i - 1].text) and (n := ITS_NAME.match(t)):
        text = f"User's name is {n.group(1)}" + (
            f" ({n.group(2).strip(' ,')})" if n.group(2).strip(" ,") else ""
        )
        return [fact(text, kind="profile", slot="user.name", value=n.group(1))]
    if m := MY_NAME.search(t):
        return [
            fact(f"User's name is {m.group(1)}", kind="profile", slot="user.name", value=m.group(1))
        ]
    if m := PRONOUNS.search(t):
        return [fact(f"User uses {m.group(1).lower()} pronouns", kind="profile", slot="user.pronouns",
                     value=m.group(1).lower())]  # fmt: skip
    return []


def standing(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """'from now on, keep answers short' -> a standing instruction (one-off requests are not,
    and neither is a complaint about what happens 'every time I ...')."""
    t = cl[i].text
    if cl[i].question or any(_COMPLAINT.search(c.raw) for c in cl):
        return []
    if _STANDING_IMPERATIVE.match(t):
        ask = re.sub(r"^please\s+|,?\s+please$", "", re.sub(r"\bme\b", "the user", t), flags=re.I)
        return [fact(f"User wants: {en_third(ask)}", kind="instruction")]
    m = EN_STANDING_RE.search(t)
    if not m or m.group(0).lower() in ("always", "never"):
        return []
    when = m.group(0).lower() in ("whenever i", "every time i")
    if when and not _ASKS.search(" ".join(c.text for c in cl[i:])):
        return []  # "every time I open Slack the fan roars": a habit of things, not a request
    body = [t] if when else [EN_STANDING_RE.sub("", t).strip(" ,")]
    for c in cl[i + 1 : i + 4]:
        if (
            re.match(
                r"(?:I|I'm|I am|my|we|we're|our|all I|it's|that's|because|since|as|lol|so)\b",
                c.text,
                re.I,
            )
            or c.question
        ):
            break
        body.append(c.text)
    text = re.sub(r"\bplease\b\s*", "", ", ".join(b for b in body if b), flags=re.I).strip(" ,")
    if len(text) < 6:
        return []
    if inner := _KEEP_IN_MIND.search(text):
        return _said_inside(inner.group("said"))
    if re.fullmatch(r"(?:when|whenever|if|before|after|once) you [^,]+", text, re.I):
        return []  # only when, nothing asked: what follows is read by its own rules
    if neg := re.match(r"(?:don'?t|do not|never|no more)\s+(.+)$", text, re.I):
        return [
            fact(
                f"User doesn't want the assistant to {_to_assistant(en_third(neg.group(1)))}",
                kind="instruction",
            )
        ]
    return [fact(f"User wants: {_to_assistant(en_third(text))}", kind="instruction", slot=None)]


# a request that carries what the user is: "when you suggest recipes, keep in mind I don't eat
# pork" says a fact about the user, the request is only why it was said
_KEEP_IN_MIND = re.compile(
    r"\b(?:keep in mind|remember|bear in mind|note|be aware|don'?t forget)(?: that)?,? "
    r"(?P<said>(?:all |also )?(?:I|I'm|I've|my|we|we're|our)\b.+)$",
    re.I,
)
_INNER_SPLIT = re.compile(r",? (?:and|but|plus) (?=(?:all |also )?(?:I|I'm|I've|my|we|our)\b)|, ")


def _said_inside(said: str) -> list[DerivedFact]:
    """The user facts a request carries, each read by the clause rules on its own (none when
    no rule is sure: the request itself is not stored spliced with them)."""
    parts = [Clause(p, False) for p in _INNER_SPLIT.split(said) if p.strip()]
    return first_rule_facts(parts, EN_RULES, standing)


_NOT_S = frozenset(
    ("is", "was", "can", "could", "will", "would", "should", "must", "might", "may", "did",
     "does", "has", "had", "always", "never", "also", "just", "really", "still", "already")
)  # fmt: skip
_IRREGULAR = {"are": "is", "do": "does", "have": "has", "don't": "doesn't", "were": "was"}


def _to_assistant(text: str) -> str:
    """The assistant named in a request to it ("when you suggest recipes" -> "when the
    assistant suggests recipes"): "you" in a memory would read as the reader."""

    def subj(m: re.Match[str]) -> str:
        verb = m.group(3)
        if verb in _IRREGULAR:
            verb = _IRREGULAR[verb]
        elif verb not in _NOT_S and not verb.endswith("s") and verb.isalpha():
            verb = (
                verb[:-1] + "ies"
                if re.search(r"[^aeiou]y$", verb)
                else verb + ("es" if verb.endswith(("sh", "ch", "x", "o")) else "s")
            )
        return f"{m.group(1)}{'The' if m.group(2)[0].isupper() else 'the'} assistant {verb}"

    text = re.sub(r"\byou're\b", "the assistant is", text, flags=re.I)
    text = re.sub(r"\byour\b", "the assistant's", text, flags=re.I)
    text = re.sub(
        r"(^|\b(?:when|if|whenever|before|after|once|unless) )(you) ([a-z']+)", subj, text
    )
    return re.sub(r"\byou\b", "the assistant", text, flags=re.I)


def self_state(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """I'm vegetarian now / allergic to penicillin / 35 / I don't drink coffee -> the user's state."""
    t = cl[i].text
    if m := ALLERGY.search(t):
        what = m.group(1).strip()
        return [fact(f"User is allergic to {what}", slot=f"allergy.{what}", value=what)]
    if m := STATE.search(t):
        slot, kind = EN_STATES[m.group(1).lower()]
        state = m.group(1).lower()
        text = f"User is {state}" + (" (doesn't drink alcohol)" if state == "sober" else "")
        if but := re.search(r"\bbut (.+)$", t[m.end() :], re.I):
            text += f", but {en_third(but.group(1))}"
        return [fact(text, kind=kind, slot=slot, value=state)]  # type: ignore[arg-type]
    if m := IM_JOB.match(t):
        text = f"User is a {m.group(1)}" + (f" at {m.group(2)}" if m.group(2) else "")
        return [fact(text, kind="profile", slot="job", value=m.group(1))]
    if m := STUDENT.match(t):
        at = f" at {m.group(2)}" if m.group(2) else ""
        return [fact(f"User is a {m.group(1)}{at}", kind="profile", slot="school",
                     value=m.group(2) or m.group(1))]  # fmt: skip
    if (
        (m := NEW_JOB.search(t))
        and not cl[i].question
        and not re.search(r"\b(?:if|when|maybe|might)\b", t, re.I)
    ):
        return [fact(f"User started a new job at {m.group(1)}", kind="event", slot="job",
                     value=m.group(1))]  # fmt: skip
    if m := FROM.match(t):
        return [
            fact(f"User is from {m.group(1)}", kind="profile", slot="hometown", value=m.group(1))
        ]
    if m := YEARS_OLD.match(t):
        return [fact(f"User is {m.group(1)}", kind="profile", slot="age", value=m.group(1))]
    if m := LEARNING.match(t):
        return [
            fact(f"User is learning {m.group(1)}", slot=f"learning.{m.group(1)}", value=m.group(1))
        ]
    if m := AGE.match(t):
        return [fact(f"User is {m.group(1)}", kind="profile", slot="age", value=m.group(1))]
    if m := ONLY_HAVE.match(t):
        what = m.group(1).strip()
        return [fact(f"User only has {en_third(what)}", slot=None, value=what)]
    if m := NO_HABIT.match(t):
        verb = m.group(1).lower()
        return [fact(f"User doesn't {verb}", slot=verb, value="no")]
    if m := DONT.match(t):
        verb, obj = m.group(1).lower(), m.group(2).strip()
        nxt = PERSON.match(cl[i + 1].text) if i + 1 < len(cl) else None
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
    if (m := MY_ATTR.search(t)) and not re.search(r"\bmy (?:" + EN_REL_RE + r")'s", t, re.I):
        key, val = m.group(1).lower(), m.group(2).strip()
        return [fact(f"User's {key} is {val}", slot=EN_ATTR[key], value=val)]
    if m := JOB.match(t):
        return [fact(f"User works {m.group(1)}", kind="profile", slot="job", value=m.group(1))]
    if m := HAVE_REL.match(t):
        rest = m.group(3).strip(" ,")
        text = f"User has {m.group(1)} {m.group(2)}" + (
            f" {en_third(rest)}" if rest and len(rest.split()) <= 5 else ""
        )
        return [fact(text, kind="relation", subject="third_person", slot=None)]
    if m := MOVED_TO.match(t):
        return [
            fact(
                f"User moved to {m.group(1)}",
                kind="profile",
                slot="home.location",
                value=m.group(1),
            )
        ]
    if (m := ON_NOW.match(t)) and (dev := device_slot(m.group(1))):
        return [fact(f"User is on {m.group(1)} now", kind="preference", slot=dev, value=m.group(1))]
    left = any(re.search(r"\b(?:left|moved (?:out of|away from))\b", c.text, re.I) for c in cl)
    if left and (m := IN_NOW.match(t)):  # "I left Denver two years ago, I'm in Austin now"
        return [fact(f"User lives in {m.group(1)}", kind="profile", slot="home.location",
                     value=m.group(1))]  # fmt: skip
    if m := LIVE.match(t):
        return [
            fact(
                f"User lives in {m.group(1)}",
                kind="profile",
                slot="home.location",
                value=m.group(1),
            )
        ]
    return []


# a relation coming to live with the user, and when ("is moving in with us in the spring")
_MOVING_IN = re.compile(
    r"^is (?:moving in|coming to live|going to live|moving) with (?:us|me)"
    r"(?: for good)? ((?:in|on|next|this|from) (?:the )?\w+)",
    re.I,
)


def relation(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """'my nephew Jonah just started at MIT' -> about the nephew, never about the user."""
    t = cl[i].text
    m = REL.search(t)
    if not m or cl[i].question or re.search(r"\b(?:ask|tell|call|text|help|remind) my\b", t, re.I):
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
    if len(rest.split()) < 2 or re.match(r"(?:and|or|to|for|with|is\?)\b", rest, re.I):
        return []
    durable = (
        r"\b(?:is (?:a|an|\d+|in|from|allergic|pregnant|retired|turning|getting married|(?-i:[A-Z])\w*)|"
        r"works|lives|just started|started|retired|passed away|moved|has|was born|turns|"
        r"turned|graduated|had (?:surgery|a baby)|got (?:married|engaged|promoted|into)|starts|"
        # a plural relation's dated change: "my kids start at the new school in January"
        r"(?:start|switch|change) (?:at|schools?|to)\b.*\b(?:in|on|from|next) \w+|"
        r"lands|arrives|name|is (?:moving in|coming to live|going to live|moving) with)\b|^'s (?:name|birthday|flight|job|school|wedding|surgery|new)"
    )
    if (
        (ONE_OFF_EN.search(rest) and not re.search(r"\bturned \d", rest))  # an age holds on
        or not re.search(durable, rest, re.I)
        or re.search(r"\b(?:so|really|always|keeps?|again)\b", rest, re.I)
    ):
        return []
    if t[: m.start()].strip() and not re.match(
        r"^(?:(?:and|btw|also|oh|so|nah|no|nope|yeah|yes|well)\b[\s,]*)+$",
        t[: m.start()].strip(" ,"),
        re.I,
    ):
        return []
    subj = f"{who} {name}" if name else who
    if moving := _MOVING_IN.match(rest):  # "is coming to live with us in the spring"
        return [fact(f"{subj} is moving in with the user {moving.group(1)}", kind="plan",
                     subject="third_person", slot=None)]  # fmt: skip
    if rest.startswith("'s "):
        subj, rest = f"{who}'s", rest[3:]
    text = f"{subj} {en_third(rest)}" + (f", {en_third(more)}" if more else "")
    kind = (
        "event"
        if re.search(r"\b(?:retired|passed away|had|got|started|moved|died)\b", rest, re.I)
        else "fact"
    )
    slot = None
    if re.search(r"\b(?:works (?:at|for|as)|job at|started at|is a|is an)\b", rest, re.I):
        slot = f"{rel}.job"
    elif re.search(r"\b(?:lives in|moved to|is in)\b", rest, re.I):
        slot = f"{rel}.location"
    return [fact(text, kind=kind, subject="third_person", slot=slot)]  # type: ignore[arg-type]


# what "we <verb>" says of the team, said of it in the singular
_WE_VERB = {"are": "is", "are on": "is on", "use": "uses", "run": "runs", "deploy": "deploys",
            "deploy to": "deploys to", "host": "hosts", "build on": "builds on",
            "build with": "builds with", "ship": "ships", "live": "lives"}  # fmt: skip


def team(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """'our builds run on Bazel' -> a standing fact about the user's team."""
    t = cl[i].text
    m = TEAM.match(t)
    if (
        not m
        or ONE_OFF_EN.search(t)
        or re.search(
            r"\b(?:let's|should|could|maybe|had|did|going to|gonna|might|were|was)\b", t, re.I
        )
    ):
        return []
    # a verb that says how, not what with, names a tool or a number to be a team fact
    if re.match(r"is|are|pin|write|store|track|test", m.group(2), re.I) and not re.search(
        r"\d|\b[A-Z][\w.]+", m.group(3)
    ):
        return []
    if not t.lower().startswith("our") and m.group(2).lower() in ("is", "are", "run", "runs"):
        return []
    if re.match(r"we live\b", t, re.I):
        # "we live in ..." is the user's household, not their team
        return [fact(f"User lives {m.group(3)}", kind="profile", slot="home.location")]
    noun = (m.group(1) or "").strip()
    noun = "" if noun.lower() in ("team", "company", "group", "org") else noun
    what = (
        f"The user's team's {noun}" if noun and t.lower().startswith("our") else "The user's team"
    )
    value = re.split(r",| so | but | because ", m.group(3))[0].strip()
    slot = device_slot(value)
    verb = m.group(2)
    if re.match(r"we\b", t, re.I):  # "we deploy" -> "The user's team deploys"
        verb = _WE_VERB.get(verb.lower(), verb if verb.endswith("s") else verb + "s")
    out = [fact(f"{what} {verb} {value}", subject="team", slot=slot and f"team.{slot}",
                value=value)]  # fmt: skip
    nxt = TEAM_PARTICIPLE.match(cl[i + 1].text) if noun and i + 1 < len(cl) else None
    if nxt:  # "…, deployed on GKE": how the same thing is run
        out.append(fact(f"{what} is {nxt.group(1)}", subject="team"))
    return out


def preference(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """'olives are a hard no for me', 'window seat or I'm miserable', 'I love X' (not sarcastic)."""
    t = cl[i].text
    if sarcastic:
        return []
    if m := BETTER.match(t):
        return [fact(f"User prefers {m.group(1)} over {m.group(2)}", kind="preference",
                     slot=f"prefers.{m.group(2)}", value=m.group(1))]  # fmt: skip
    if m := HARD_NO.match(t):
        what = m.group(1) or m.group(2)
        return [fact(f"User dislikes {what}", kind="preference", slot=f"likes.{what}", value="no")]
    if m := MY_THING.match(t):
        verb = "dislikes" if m.group(2).lower() == "nemesis" else "loves"
        return [
            fact(
                f"User {verb} {m.group(1)}",
                kind="preference",
                slot=f"likes.{m.group(1)}",
                value=verb,
            )
        ]
    if m := NO_FOR_ME.match(t):
        return [
            fact(
                f"User avoids {m.group(1)}",
                kind="preference",
                slot=f"likes.{m.group(1)}",
                value="no",
            )
        ]
    if m := KIND_OF_PERSON.match(t):
        text = f"User is {'not ' if m.group(1) else ''}a {m.group(2)} person"
        return [fact(text, kind="preference", slot=f"person.{m.group(2)}", value=m.group(2))]
    if m := RATHER.match(t):
        return [
            fact(
                f"User would rather {en_third(m.group(1))} than {en_third(m.group(2))}",
                kind="preference",
                slot=None,
            )
        ]
    if m := OR_ELSE.match(t):
        return [fact(f"User prefers {m.group(1)}", kind="preference", slot=f"prefers.{m.group(1)}",
                     value=m.group(1))]  # fmt: skip
    if (m := LIKE.match(t)) and not re.search(r"\b(?:this|that|it|you|when)\b", m.group(2), re.I):
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
    if m := A_NOW.match(t):
        return [fact(f"User is a {m.group(1)} now", kind="profile", slot="job", value=m.group(1))]
    if m := DRIVE_NOW.match(t):
        what = m.group(2)
        return [fact(f"User {m.group(1)}s {what} now", slot=device_slot(what) or what, value=what)]
    if m := SINCE.search(t):
        what = re.split(r" and | but |,", m.group(1))[0]
        return [
            fact(
                f"User has used {what} since {m.group(2)}",
                slot=device_slot(what) or what,
                value=what,
            )
        ]
    if m := SWITCH.match(t):
        return [_switched(m)]
    if m := HABIT.match(t):
        # "ever since the office moved to Southside" is read on its own too
        since = [Clause(m.group("since"), False)] if m.group("since") else []
        habit = fact(f"User has been {en_third(m.group(1))}", slot=None)
        return [habit, *first_rule_facts(since, EN_RULES)]
    if (m := RESCHEDULED.match(t)) and not ONE_OFF_EN.search(t):
        thing, val = m.group(1), re.split(r" so | but | because | and |,", m.group(2))[0]
        return [fact(f"User's {en_third(thing)} moved to {val}", slot=f"{thing}.time", value=val)]
    return _now_value(cl, i)


def _switched(m: re.Match[str]) -> DerivedFact:
    """'we switched CI from Jenkins to GitHub Actions': the new tool, replacing the old."""
    who, thing, old, new = (
        (m.group(1) or "").strip().lower(),
        m.group(2) or "",
        m.group(3),
        m.group(4),
    )
    team = who.startswith(("we", "our"))
    new = re.split(r"\s(?:last|this|next|yesterday|today)\b|,", new)[0]
    if not thing and not team and re.search(r"\bmoved from\b", m.group(0), re.I):
        # "I moved from Chicago to Denver": where the user lives, not a tool
        f = fact(f"User moved from {old} to {new}", kind="profile", slot="home.location", value=new)
        return f.model_copy(update={"corrects": old})
    owner = "The user's team" if team else "User"
    verb = "uses" if team else "now uses"
    purpose = f" for {en_third(thing)}" if thing else ""
    slot = device_slot(new) or thing or None
    f = fact(f"{owner} {verb} {new} instead of {old}{purpose}", kind="fact" if team else "preference",
             subject="team" if team else "user", slot=slot and (f"team.{slot}" if team else slot),
             value=new)  # fmt: skip
    return f.model_copy(update={"corrects": old})


def _now_value(cl: list[Clause], i: int) -> list[DerivedFact]:
    """ "rent's $2,150 now", "our standup is at 9:30 now": a thing's value as it is now."""
    t = cl[i].text
    m = NOW.match(t)
    if not m or NOW_STOP.match(m.group(2)) or cl[i].question or ONE_OFF_EN.search(t):
        return []
    team = (m.group(1) or "").strip().lower() == "our"
    thing, val = m.group(2), m.group(3)
    if not re.search(
        r"\d|\$|\b[A-Z]|\b(?:weekly|daily|monthly|biweekly|yearly|every|twice|once)\b", val
    ):
        return []
    more = continuation(cl, i, zh=False, limit=1)
    owner = "The user's team's" if team else "User's"
    text = f"{owner} {thing} is {val} now" + (f", {more}" if more else "")
    if rel := EN_REL.get(thing.lower()):  # "my son's 7 now": the son's, not the user's
        slot = f"{rel}.age" if re.fullmatch(r"\d{1,3}", val) else f"{rel}.{thing.lower()}"
        return [fact(text, subject="third_person", slot=slot, value=val)]
    slot = f"team.{thing}" if team else thing
    return [fact(text, subject="team" if team else "user", slot=slot, value=val)]


def work(cl: list[Clause], i: int, sarcastic: bool) -> list[DerivedFact]:
    """'night shifts at the hospital' -> where and how the user works."""
    m = WORK.search(cl[i].text)
    if not m or cl[i].question:
        return []
    shift, place = (m.group(1) or "night shifts"), (m.group(2) or m.group(3))
    return [fact(f"User works {shift.lower()} at a {place}", slot="job", value=place)]


EN_RULES: tuple[EnRule, ...] = (
    names, standing, self_state, attributes, relation, team, value_change, event, plan, work,
    preference,
)  # fmt: skip
