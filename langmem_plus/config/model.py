"""`MemoryConfig`: the product's settings, nested by section, each field documented."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, Field

from langmem_plus.config.sections import (
    ContextConfig,
    LifecycleConfig,
    LlmConfig,
    RecallConfig,
    ScoreConfig,
    Section,
    StoreConfig,
    WindowConfig,
)

__all__ = ["SECTIONS", "MemoryConfig"]


class MemoryConfig(BaseModel):
    """The settings of langmem_plus, with the source documents' defaults, by section.

    `MemoryConfig(score={"w_recency": 0.3}, recall={"retrieval_limit": 8})`, or with the
    section models (`score=ScoreConfig(w_recency=0.3)`); read them as
    `config.score.w_recency`. `model_dump()` is nested. Unknown keys are refused.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    score: ScoreConfig = Field(
        default_factory=ScoreConfig, description="The final score of a search hit."
    )
    recall: RecallConfig = Field(
        default_factory=RecallConfig, description="What a turn recalls; query length."
    )
    window: WindowConfig = Field(
        default_factory=WindowConfig, description="The working-memory window and summaries."
    )
    context: ContextConfig = Field(
        default_factory=ContextConfig, description="The layers of the injected context."
    )
    lifecycle: LifecycleConfig = Field(
        default_factory=LifecycleConfig,
        description="Consolidation, decay and review of stored memories.",
    )
    llm: LlmConfig = Field(
        default_factory=LlmConfig, description="Model calls of the processors; cost records."
    )
    store: StoreConfig = Field(
        default_factory=StoreConfig,
        description="How the store keeps items: embedding scale, sessions, vectors, limits, "
        "Milvus.",
    )


def _sections() -> dict[str, type[Section]]:
    out: dict[str, type[Section]] = {}
    for name, info in MemoryConfig.model_fields.items():
        cls = info.annotation
        if not (isinstance(cls, type) and issubclass(cls, Section)):
            raise TypeError(f"MemoryConfig.{name} must be a config Section")
        out[name] = cls
    return out


SECTIONS: Mapping[str, type[Section]] = MappingProxyType(_sections())
"""Section name -> its model, in `MemoryConfig`'s field order."""
