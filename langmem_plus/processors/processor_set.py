"""The typed set of processors the memory engine runs, built once from the model and config."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from langmem_plus.config import MemoryConfig
from langmem_plus.processors import (
    FactDeriver,
    ProfileWriter,
    Reconsolidator,
    Summarizer,
    TurnAnalyzer,
)

__all__ = ["Processors"]

logger = logging.getLogger("langmem_plus.engine")
P = TypeVar("P")


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
        """The processors of `model` (None = rules only) under `config`.

        A model whose provider package is missing (ImportError) is logged and the processors
        run their rules instead."""
        deriver = _with_model(FactDeriver, model, config) if model is not None else None
        summarizer = _with_model(Summarizer, model, config) or Summarizer(None, config)
        return cls(
            model=model,
            analyzer=TurnAnalyzer(None, config),
            profile_writer=ProfileWriter(None, config),
            reconsolidator=Reconsolidator(None, config),
            summarizer=summarizer,
            deriver=deriver,
        )


def _with_model(
    factory: Callable[[Any, MemoryConfig], P], model: Any, config: MemoryConfig
) -> P | None:
    """`factory(model, config)`, or None (logged) when the model's package cannot load."""
    try:
        return factory(model, config)
    except ImportError as exc:
        logger.warning("model unavailable for %s (%s); rules used", factory.__name__, exc)
        return None
