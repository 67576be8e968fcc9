"""Facts derived from episodes: the one shape that the offline rules and a chat model return.

An episode (one exchange, kept verbatim) is the ground truth; a `DerivedFact` is a short
third-person statement drawn from it, with what it is a value *of* (`slot`) so that a later
value of the same slot closes it instead of standing beside it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DerivedFact", "FactKind", "FactSubject"]

FactKind = Literal["preference", "fact", "plan", "instruction", "event", "relation", "profile"]
FactSubject = Literal["user", "team", "third_person"]


class DerivedFact(BaseModel):
    """One fact drawn from the user's turn(s), precise enough to be injected as truth."""

    model_config = ConfigDict(extra="ignore")

    text: str = Field(
        min_length=1,
        max_length=2000,
        description="one short third-person statement in the user's language "
        "('用户的狗叫豆包', 'The user's team builds with Bazel')",
    )
    kind: FactKind = Field(
        "fact", description="preference|fact|plan|instruction|event|relation|profile"
    )
    subject: FactSubject = Field("user", description="user, team (we/our) or third_person")
    slot: str | None = Field(
        None,
        description="what the fact is a value of, short and stable across wordings "
        "('dog.name', 'national_day_trip.destination', 'laptop'); a later fact with the "
        "same slot and another value replaces this one",
    )
    value: str | None = Field(None, description="the value itself as said ('豆包', 'Bazel')")
    correction: bool = Field(
        False, description="the turn presents this as correcting an earlier value"
    )
    corrects: str | None = Field(
        None, description="the old value it replaces, when the turn names it ('成都')"
    )
    forget: bool = Field(
        False,
        description="the user asks to forget this fact ('忘掉我住在北京这件事', 'forget that I "
        "live in Beijing'): the matching current fact is removed and nothing is stored",
    )
    supersedes: list[str] = Field(
        default_factory=list, description="ids of known current facts this one replaces"
    )
    source_turns: list[int] = Field(
        default_factory=list, description="0-based indexes of the turns that state it"
    )
    confidence: float = Field(0.9, ge=0.0, le=1.0)
