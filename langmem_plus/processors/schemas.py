"""Pydantic output schemas of the processors: what the LLM must return, and what the rule
implementations return too, so callers see one shape either way."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

__all__ = [
    "EpisodeOut",
    "MemoryOp",
    "MergeOut",
    "OpKind",
    "OpsOut",
    "ProfileUpdateOut",
    "ReconsolidationOut",
    "ReviewDecision",
    "ReviewStep",
    "RollingSummaryOut",
    "SemanticExtraction",
    "SemanticFact",
    "SeparateOut",
    "SessionTitleOut",
    "SymbolInfo",
    "SymbolsOut",
    "TurnAnalysis",
    "WriteDecision",
]

OpKind = Literal["ADD", "UPDATE", "DELETE", "BOOST", "SKIP"]
_CATEGORIES = ("preference", "fact", "pattern", "episode")


class MemoryOp(BaseModel):
    """One knowledge-monitor operation: ADD text, UPDATE:id text, BOOST:id,
    DELETE:id or SKIP. Lenient on input (``"update:mem_1"``, lower case) so a model's
    answer is not thrown away for a formatting slip; `problem()` says if it is unusable."""

    model_config = ConfigDict(extra="ignore")

    op: OpKind = Field(description="ADD, UPDATE, DELETE, BOOST or SKIP")
    id: str | None = Field(None, description="memory id for UPDATE/DELETE/BOOST")
    text: str | None = Field(
        None, description="ADD/UPDATE: the memory, one short statement in the user's language"
    )
    category: Literal["preference", "fact", "pattern", "episode"] = Field(
        "fact", description="preference | fact | pattern | episode"
    )
    who: str = Field("user", description="whose memory: user, friend, sister, ...")
    confidence: float = Field(0.8, ge=0.0, le=1.0)
    reason: str = Field("", description="why, in a few words")
    # filled by the processors, not asked of the model (kept out of its JSON schema):
    # code symbols / technologies the memory names, and extra record metadata such as the
    # absolute date of a relative time phrase ({"time_phrase": "下周三", "resolved_date": ...})
    symbols: SkipJsonSchema[list[str]] = Field(default_factory=list)
    metadata: SkipJsonSchema[dict[str, Any]] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _lenient(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        op = data.get("op") or data.get("action") or data.get("type")
        if isinstance(op, str):
            op = op.strip().strip("[]")
            if ":" in op:
                op, _, ident = op.partition(":")
                if not data.get("id") and ident.strip():
                    data["id"] = ident.strip()
            data["op"] = op.strip().upper()
        for key in ("id", "text"):
            value = data.get(key)
            if value is not None and not isinstance(value, str):
                data[key] = str(value)
            if isinstance(data.get(key), str) and not data[key].strip():
                data[key] = None
        cat = data.get("category")
        if isinstance(cat, str):
            cat = cat.strip().lower()
            data["category"] = cat if cat in _CATEGORIES else "fact"
        elif cat is None:
            data.pop("category", None)
        if data.get("who") in (None, ""):
            data.pop("who", None)
        conf = data.get("confidence")
        if conf is None:
            data.pop("confidence", None)
        else:
            try:
                data["confidence"] = min(1.0, max(0.0, float(conf)))
            except (TypeError, ValueError):
                data.pop("confidence")
        return data

    def problem(self) -> str | None:
        """Why this op cannot be applied, or None when it can."""
        if self.op == "ADD" and not self.text:
            return "ADD without text"
        if self.op == "UPDATE" and not (self.id and self.text):
            return "UPDATE needs id and text"
        if self.op in ("DELETE", "BOOST") and not self.id:
            return f"{self.op} without id"
        return None


class OpsOut(BaseModel):
    """The knowledge monitor's answer: a list of operations (empty or [SKIP] = nothing)."""

    ops: list[MemoryOp] = Field(default_factory=list)


class WriteDecision(BaseModel):
    """Episodic write decision for one exchange."""

    write_episodic: bool = Field(description="store this exchange as an episodic memory?")
    reason: str = ""
    context: str = Field("", description="setting/background of the episode")
    thing: str = Field("", description="what happened, in the user's language")
    who: str = "user"


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


class SemanticFact(BaseModel):
    """One stable fact found in an episode."""

    fact: str
    category: Literal["preference", "fact", "pattern", "episode"] = "fact"
    who: str = "user"


class SemanticExtraction(BaseModel):
    """The semantic writer's answer: the facts drawn out of an episode."""

    facts: list[SemanticFact] = Field(default_factory=list)

    @property
    def has_fact(self) -> bool:
        """True when at least one fact was found."""
        return bool(self.facts)


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
