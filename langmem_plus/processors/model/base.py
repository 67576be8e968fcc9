"""Shared constructor of every processor: an optional model (object or `init_chat_model`
string) and a `MemoryConfig`; without a model the processor runs its rules."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from langmem_plus.config import MemoryConfig
from langmem_plus.errors import ValidationError
from langmem_plus.processors.model.structured import StructuredLLM

__all__ = ["BaseProcessor", "normalize_turns"]


class BaseProcessor:
    """Holds the config and, when a model is given, a retrying structured-output caller."""

    def __init__(
        self,
        model: Any = None,
        config: MemoryConfig | None = None,
        *,
        sleep: Callable[[float], None] | None = None,
        asleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        if config is not None and not isinstance(config, MemoryConfig):
            raise ValidationError(f"config must be a MemoryConfig, got {type(config).__name__}")
        self.config: MemoryConfig = config or MemoryConfig()
        self.llm: StructuredLLM | None = (
            StructuredLLM(model, self.config, sleep=sleep, asleep=asleep)
            if model is not None
            else None
        )

    @property
    def uses_model(self) -> bool:
        """True when a chat model drives this processor (rules are the fallback)."""
        return self.llm is not None


def normalize_turns(turns: Any) -> list[dict[str, str]]:
    """Validate `[{"role": ..., "text": ...}]` (``content`` accepted for ``text``; LangChain
    messages accepted too) and return clean dicts."""
    if turns is None:
        return []
    if isinstance(turns, str) or not isinstance(turns, Iterable):
        raise ValidationError('turns must be a list of {"role": ..., "text": ...} dicts')
    out: list[dict[str, str]] = []
    for i, turn in enumerate(turns):
        if isinstance(turn, Mapping):
            role = turn.get("role", "user")
            text = turn.get("text", turn.get("content"))
        elif hasattr(turn, "content") and hasattr(turn, "type"):
            role = {"human": "user", "ai": "assistant"}.get(turn.type, turn.type)
            text = turn.content
        else:
            raise ValidationError(f"turn {i} must be a dict with role and text, got {turn!r}")
        if not isinstance(text, str):
            if isinstance(text, list):
                text = " ".join(
                    b.get("text", "") if isinstance(b, Mapping) else str(b) for b in text
                )
            else:
                raise ValidationError(f"turn {i} has no text")
        role = str(role).lower()
        if role in ("human",):
            role = "user"
        if role in ("ai",):
            role = "assistant"
        out.append({"role": role, "text": text})
    return out
