"""MemoryConfig: the product's settings, nested by section (docs/configuration.md).

Sections: `score`, `recall`, `window`, `context`, `lifecycle`, `llm` and `store`. The store's
fitted ranking constants and internal thresholds are not settings: they live beside the
store's code, in `langmem_plus.store.tuning.StoreTuning`.
"""

from __future__ import annotations

from langmem_plus.config.model import SECTIONS, MemoryConfig
from langmem_plus.config.sections import (
    ContextConfig,
    LifecycleConfig,
    LlmConfig,
    RecallConfig,
    ScoreConfig,
    ScoreProfile,
    StoreConfig,
    WindowConfig,
)

__all__ = [
    "SECTIONS",
    "ContextConfig",
    "LifecycleConfig",
    "LlmConfig",
    "MemoryConfig",
    "RecallConfig",
    "ScoreConfig",
    "ScoreProfile",
    "StoreConfig",
    "WindowConfig",
]
