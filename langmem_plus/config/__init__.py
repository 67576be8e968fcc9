"""MemoryConfig: every weight, limit and threshold of SPEC.md, nested by section.

Sections: `score`, `recall`, `window`, `context`, `lifecycle`, `llm` (product settings) and
`store` (HybridStore's internal tuning). Old flat keywords work for one release with a
`ConfigDeprecationWarning`; `python -m langmem_plus.config.codemod PATH...` rewrites them.
"""

from __future__ import annotations

from langmem_plus.config.model import (
    FLAT_FIELDS,
    REMOVED_FIELDS,
    SECTIONS,
    ConfigDeprecationWarning,
    FlatField,
    MemoryConfig,
    RemovedField,
)
from langmem_plus.config.sections import (
    ContextConfig,
    LifecycleConfig,
    LlmConfig,
    RecallConfig,
    ScoreConfig,
    ScoreProfile,
    WindowConfig,
)
from langmem_plus.config.tuning import StoreTuning

__all__ = [
    "FLAT_FIELDS",
    "REMOVED_FIELDS",
    "SECTIONS",
    "ConfigDeprecationWarning",
    "ContextConfig",
    "FlatField",
    "LifecycleConfig",
    "LlmConfig",
    "MemoryConfig",
    "RecallConfig",
    "RemovedField",
    "ScoreConfig",
    "ScoreProfile",
    "StoreTuning",
    "WindowConfig",
]
