"""Fact deriver (#13): the facts one exchange states, with their source turns and the known
facts they replace, in ONE structured model call per exchange at most.

`FactDeriver.run(turns, existing)` asks the chat model once for a list of facts (text, kind,
subject, slot, value, superseded ids, source turns). Without a model, or when the call fails,
the precision-first rules (`rule_facts`) answer instead: a malformed answer, a refusal or a
permanent error falls back at once, and so does an answer cut off mid-way (its last fact may
be cut short); only transient errors are retried (see `_llm`). Whatever
the source, the facts are cleaned the same way: empty texts dropped, superseded ids limited
to the facts the caller passed in, source turns limited to the exchange.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic import ValidationError as PydanticValidationError

from langmem_plus.errors import ValidationError
from langmem_plus.processors import prompts
from langmem_plus.processors.facts.derived import DerivedFact, FactKind, FactSubject
from langmem_plus.processors.facts.rules import rule_facts
from langmem_plus.processors.model.base import BaseProcessor, normalize_turns
from langmem_plus.processors.model.structured import CallTrace, StructuredLLM

__all__ = ["Derivation", "FactDeriver", "FactsOut", "normalize_facts"]

_KINDS: frozenset[str] = frozenset(get_args(FactKind))
_SUBJECTS: frozenset[str] = frozenset(get_args(FactSubject))
_SUBJECT_ALIASES = {"we": "team", "our": "team", "i": "user", "me": "user", "third": "third_person"}


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str | int) and not isinstance(value, bool):
        return [value]
    return list(value) if isinstance(value, list | tuple) else []


class FactOut(BaseModel):
    """One fact."""

    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True)

    text: str = Field(description="short third-person statement")
    kind: FactKind = "fact"
    subject: FactSubject = "user"
    slot: str | None = Field(None, description="what it is a value of")
    value: str | None = None
    supersedes: list[str] = Field(default_factory=list, description="ids from <facts>")
    source_turns: list[int] = Field(default_factory=list, description="turn numbers")
    forget: bool = Field(False, description="true when the user asks to forget this fact")

    @model_validator(mode="before")
    @classmethod
    def _missing_text(cls, data: Any) -> Any:
        # required in the schema the model sees; a fact without one is dropped, not fatal
        if isinstance(data, Mapping) and data.get("text") is None:
            return {**data, "text": ""}
        return data

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, v: Any) -> str:
        key = str(v or "").strip().lower()
        return key if key in _KINDS else "fact"

    @field_validator("subject", mode="before")
    @classmethod
    def _subject(cls, v: Any) -> str:
        key = re.sub(r"[\s-]+", "_", str(v or "").strip().lower())
        key = _SUBJECT_ALIASES.get(key, key)
        return key if key in _SUBJECTS else "user"

    @field_validator("slot", "value", mode="before")
    @classmethod
    def _optional_text(cls, v: Any) -> Any:
        return None if isinstance(v, list | dict) else v

    @field_validator("forget", mode="before")
    @classmethod
    def _flag(cls, v: Any) -> bool:
        return v if isinstance(v, bool) else str(v).strip().lower() in ("true", "1", "yes")

    @field_validator("supersedes", mode="before")
    @classmethod
    def _ids(cls, v: Any) -> list[str]:
        return [str(x) for x in _as_list(v) if isinstance(x, str | int) and str(x).strip()]

    @field_validator("source_turns", mode="before")
    @classmethod
    def _turns(cls, v: Any) -> list[int]:
        out = []
        for x in _as_list(v):
            if isinstance(x, bool):
                continue
            if isinstance(x, int) or (isinstance(x, str) and x.strip().lstrip("-").isdigit()):
                out.append(int(x))
        return out


class FactsOut(BaseModel):
    """Facts derived from one exchange."""

    model_config = ConfigDict(extra="ignore")

    # required: an answer without `facts` did not follow the schema (not "no facts")
    facts: list[FactOut]

    @field_validator("facts", mode="before")
    @classmethod
    def _dicts_only(cls, v: Any) -> Any:
        return [x for x in v if isinstance(x, Mapping | FactOut)] if isinstance(v, list) else v


class Derivation(BaseModel):
    """The facts of one exchange and what deriving them cost.

    `calls` counts model requests (retries included; 0 offline); the tokens are the model's
    own usage figures, or characters/4 when `tokens_estimated`. `fell_back` says the rules
    produced `facts` (no model, or the model failed: then `error` says why).
    """

    facts: list[DerivedFact] = Field(default_factory=list)
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens_estimated: bool = False
    fell_back: bool = False
    error: str | None = None


def normalize_facts(existing: Any) -> list[dict[str, str]]:
    """Validate the caller's current facts: `[{"id", "text", "slot"?}]` (objects with those
    attributes, or a `slot` in their metadata, accepted too)."""
    if existing is None:
        return []
    if isinstance(existing, str | bytes | Mapping) or not isinstance(existing, Iterable):
        raise ValidationError('existing must be a list of {"id", "text", "slot"} dicts')
    out: list[dict[str, str]] = []
    for i, item in enumerate(existing):
        if isinstance(item, Mapping):
            ident, text, slot = item.get("id"), item.get("text"), item.get("slot")
            meta = item.get("metadata")
        else:
            ident, text = getattr(item, "id", None), getattr(item, "text", None)
            slot, meta = getattr(item, "slot", None), getattr(item, "metadata", None)
        if slot is None and isinstance(meta, Mapping):
            slot = meta.get("slot")
        if ident is None or not str(ident).strip() or not isinstance(text, str):
            raise ValidationError(f"existing[{i}] needs an id and a text")
        if slot is not None and not isinstance(slot, str):
            raise ValidationError(f"existing[{i}].slot must be a string or None")
        fact = {"id": str(ident), "text": text}
        if slot:
            fact["slot"] = slot
        out.append(fact)
    return out


def _slot(slot: str | None) -> str | None:
    if slot is None:
        return None
    cleaned = re.sub(r"\s+", "_", slot.strip().lower())
    return cleaned or None


@dataclass
class _Job:
    """One validated exchange: what the model is asked and how its answer is cleaned."""

    turns: list[dict[str, str]]
    existing: list[dict[str, str]]
    context: str | None
    now: datetime | None

    @property
    def user_turns(self) -> list[int]:
        return [i for i, t in enumerate(self.turns) if t["role"] == "user" and t["text"].strip()]

    def message(self) -> str:
        parts = []
        if self.now is not None:
            parts.append(f"<today>{self.now.date().isoformat()} ({self.now:%A})</today>")
        parts.append(prompts.render_facts(self.existing))
        parts.append(prompts.render_numbered_turns(self.turns, self.context))
        return "\n".join(parts)

    def clean(self, facts: Iterable[FactOut | DerivedFact]) -> list[DerivedFact]:
        """Drop empty facts, unknown superseded ids and out-of-range source turns; a fact
        left without a source gets the exchange's user turns."""
        known = {f["id"] for f in self.existing}
        out: list[DerivedFact] = []
        seen: set[str] = set()
        for fact in facts:
            data = fact.model_dump()
            text = " ".join(str(data.get("text") or "").split())
            if not text or text.casefold() in seen:
                continue
            data["text"] = text
            data["slot"] = _slot(data.get("slot"))
            data["supersedes"] = list(dict.fromkeys(i for i in data["supersedes"] if i in known))
            sources = sorted({i for i in data["source_turns"] if 0 <= i < len(self.turns)})
            data["source_turns"] = sources or self.user_turns
            try:
                derived = DerivedFact.model_validate(data)
            except PydanticValidationError:
                continue
            seen.add(text.casefold())
            out.append(derived)
        return out

    def rules(self, trace: CallTrace[FactsOut] | None = None) -> Derivation:
        facts = self.clean(rule_facts(self.turns, context=self.context))
        return _derivation(facts, trace, fell_back=True)

    def finish(self, trace: CallTrace[FactsOut]) -> Derivation:
        if trace.value is None:
            return self.rules(trace)
        return _derivation(self.clean(trace.value.facts), trace, fell_back=False)


def _derivation(
    facts: list[DerivedFact], trace: CallTrace[FactsOut] | None, *, fell_back: bool
) -> Derivation:
    if trace is None:
        return Derivation(facts=facts, fell_back=fell_back)
    return Derivation(
        facts=facts,
        calls=trace.calls,
        prompt_tokens=trace.prompt_tokens,
        completion_tokens=trace.completion_tokens,
        tokens_estimated=trace.tokens_estimated,
        fell_back=fell_back,
        error=trace.error,
    )


class FactDeriver(BaseProcessor):
    """Derives the facts of one exchange: one structured model call, or the rules."""

    def _start(
        self, turns: Any, existing: Any, context: Any, now: Any
    ) -> Derivation | tuple[_Job, StructuredLLM]:
        """The arguments checked, then the answer when no call is needed (no user text, or
        no model: the rules), else the job and the model to ask."""
        if context is not None and not isinstance(context, str):
            raise ValidationError("context must be the previous assistant turn's text or None")
        if now is not None and not isinstance(now, datetime):
            raise ValidationError("now must be a datetime or None")
        job = _Job(normalize_turns(turns), normalize_facts(existing), context or None, now)
        if not job.user_turns:
            return Derivation()
        if self.llm is None:
            return job.rules()
        return job, self.llm

    def run(
        self,
        turns: Any,
        existing: Any = None,
        *,
        context: str | None = None,
        now: datetime | None = None,
    ) -> Derivation:
        """Facts stated in `turns` (one exchange, `[{"role", "text"}]`) given the user's
        current facts `existing` (`[{"id", "text", "slot"}]`, the ones a new fact may
        supersede); `context` is the assistant turn before, `now` dates relative plans.
        An exchange without user text yields no facts and makes no call."""
        start = self._start(turns, existing, context, now)
        if isinstance(start, Derivation):
            return start
        job, llm = start
        return job.finish(
            llm.call_traced(
                FactsOut, prompts.FACT_DERIVER_PROMPT, job.message(), close_truncated=False
            )
        )
