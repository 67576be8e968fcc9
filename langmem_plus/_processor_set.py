"""The typed set of processors the memory engine runs, built once from the model and config."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langmem_plus.config import MemoryConfig
from langmem_plus.processors import (
    FactDeriver,
    ProfileWriter,
    Reconsolidator,
    Summarizer,
    TurnAnalyzer,
)

__all__ = ["Processors"]


@dataclass(frozen=True)
class Processors:
    """One field per processor the engine uses.

    With a model, a turn makes one model call (the `FactDeriver`): the processors that run on
    every turn (analysis, profile, reconsolidation) use their rules; summaries use the model.
    Without one, every processor runs its offline rules and `deriver` is None.
    """

    model: Any
    analyzer: TurnAnalyzer
    profile_writer: ProfileWriter
    reconsolidator: Reconsolidator
    summarizer: Summarizer
    deriver: FactDeriver | None

    @classmethod
    def build(cls, model: Any, config: MemoryConfig) -> Processors:
        """The processors of `model` (None = rules only) under `config`."""
        return cls(
            model=model,
            analyzer=TurnAnalyzer(None, config),
            profile_writer=ProfileWriter(None, config),
            reconsolidator=Reconsolidator(None, config),
            summarizer=Summarizer(model, config),
            deriver=FactDeriver(model, config) if model is not None else None,
        )
