"""Pydantic output schemas of the processors: what the LLM must return, and what the rule
implementations return too, so callers see one shape either way."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

__all__ = [
    "EpisodeOut",
    "MergeOut",
    "ProfileUpdateOut",
    "ReconsolidationOut",
    "ReviewDecision",
    "ReviewStep",
    "RollingSummaryOut",
    "SeparateOut",
    "SessionTitleOut",
    "SymbolInfo",
    "SymbolsOut",
    "TurnAnalysis",
]


class TurnAnalysis(BaseModel):
    """Working-memory fields read from one user turn."""

    topic: str = Field("", description="current topic, a few words")
    context_variables: dict[str, str] = Field(default_factory=dict)
    emotion: str = Field("neutral", description="one word: happy, sad, anxious, ...")

    @field_validator("context_variables", mode="before")
    @classmethod
    def _stringify(cls, v: Any) -> Any:
        if isinstance(v, dict):
            return {str(k): str(val) for k, val in v.items() if val is not None}
        return v


class RollingSummaryOut(BaseModel):
    """A rolling summary of a chunk of turns, with the symbols and decisions to keep."""

    summary: str
    key_symbols: list[str] = Field(default_factory=list)
    key_decisions: list[str] = Field(default_factory=list)


class EpisodeOut(BaseModel):
    """An episode summary's topics (the caller adds the time stamp)."""

    topics: list[str] = Field(default_factory=list)
    summary: str = ""


class SessionTitleOut(BaseModel):
    """Title and snippet of a session."""

    title: str
    snippet: str = ""


class ReconsolidationOut(BaseModel):
    """The reconsolidated text of an episodic memory plus a note of what changed."""

    text: str
    context: str = ""
    thing: str = ""
    update_desc: str = Field("", description="what the new context added")


class ReviewStep(BaseModel):
    """One reviewer round: search more, or decide."""

    action: Literal["SEARCH", "PROMOTE", "KEEP", "DELETE"]
    query: str = ""
    reason: str = ""

    @model_validator(mode="before")
    @classmethod
    def _upper(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("action"), str):
            data = dict(data)
            action = data["action"].strip().strip("[]").upper()
            if action.startswith("SEARCH:"):
                data.setdefault("query", action.partition(":")[2].strip())
                action = "SEARCH"
            data["action"] = action
        return data


class ReviewDecision(BaseModel):
    """The reviewer's final decision."""

    decision: Literal["PROMOTE", "KEEP", "DELETE"]
    reason: str = ""
    rounds: int = 0
    searches: list[str] = Field(default_factory=list)


class MergeOut(BaseModel):
    """Text of the record that replaces two duplicate episodes."""

    text: str
    context: str = ""
    thing: str = ""


class SeparateOut(BaseModel):
    """Rewritten texts of two similar but distinct episodes."""

    text_a: str
    text_b: str


class ProfileUpdateOut(BaseModel):
    """New values for profile sections; an empty string means "no change"."""

    reply_style: str = ""
    language_habits: str = ""
    background: str = ""
    # sections to empty (the rules' deletions); kept out of the model's JSON schema
    clear: SkipJsonSchema[list[str]] = Field(default_factory=list)


class SymbolInfo(BaseModel):
    """A code symbol with its kind and the sentence it came from."""

    name: str
    kind: Literal["function", "class", "path", "error", "technology"]
    context: str = ""


class SymbolsOut(BaseModel):
    """Symbols found in a text."""

    symbols: list[SymbolInfo] = Field(default_factory=list)
