"""`MemoryConfig`: every weight, limit and threshold of SPEC.md, nested by section.

The flat keywords of earlier releases (`MemoryConfig(keyword_candidates=80)`,
`config.keyword_candidates`) still work for one release: each use warns with
`ConfigDeprecationWarning` and names the nested path. `FLAT_FIELDS` (derived from the
sections, never written by hand) maps every flat name to its section and field; the codemod
`python -m langmem_plus.config.codemod` rewrites code with it.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, model_validator

from langmem_plus.config.sections import (
    ContextConfig,
    LifecycleConfig,
    LlmConfig,
    RecallConfig,
    ScoreConfig,
    Section,
    WindowConfig,
)
from langmem_plus.config.tuning import StoreTuning

__all__ = [
    "FLAT_FIELDS",
    "REMOVED_FIELDS",
    "SECTIONS",
    "ConfigDeprecationWarning",
    "FlatField",
    "MemoryConfig",
    "RemovedField",
]


class ConfigDeprecationWarning(DeprecationWarning):
    """A flat `MemoryConfig` keyword or attribute was used; the message names the new path."""


class MemoryConfig(BaseModel):
    """Tunable knobs of langmem_plus, with the source documents' defaults, by section.

    `MemoryConfig(score={"w_recency": 0.3}, store={"keyword_candidates": 80})`, or with the
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
    store: StoreTuning = Field(
        default_factory=StoreTuning, description="HybridStore's internal tuning and limits."
    )

    @model_validator(mode="before")
    @classmethod
    def _nest_flat_keywords(cls, data: Any) -> Any:
        return nest_flat(data) if isinstance(data, Mapping) else data

    def __getattr__(self, name: str) -> Any:
        """Deprecated flat reads (`config.keyword_candidates`): warn, read the nested field."""
        flat = FLAT_FIELDS.get(name)
        if flat is not None:
            _warn(f"MemoryConfig.{name} is deprecated; read MemoryConfig.{flat.path}")
            return getattr(getattr(self, flat.section), flat.field)
        removed = REMOVED_FIELDS.get(name)
        if removed is not None:
            _warn(f"MemoryConfig.{name} is deprecated and has no effect: {removed.reason}")
            return removed.value
        return super().__getattr__(name)  # type: ignore[misc]  # pydantic's, at runtime

    def __setattr__(self, name: str, value: Any) -> None:
        """Deprecated flat assignments set the nested field (validated); others as usual."""
        flat = FLAT_FIELDS.get(name)
        if flat is not None:
            _warn(f"MemoryConfig.{name} is deprecated; set MemoryConfig.{flat.path}")
            setattr(getattr(self, flat.section), flat.field, value)
            return
        removed = REMOVED_FIELDS.get(name)
        if removed is not None:
            _warn(f"MemoryConfig.{name} is deprecated and has no effect: {removed.reason}")
            return
        super().__setattr__(name, value)


class FlatField(NamedTuple):
    """Where a deprecated flat `MemoryConfig` field lives now."""

    section: str
    field: str

    @property
    def path(self) -> str:
        """`section.field`, as read from a `MemoryConfig`."""
        return f"{self.section}.{self.field}"


class RemovedField(NamedTuple):
    """A flat field that no longer exists: accepted with a warning, ignored."""

    value: Any
    """What reading it returns (its old default)."""
    reason: str


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

FLAT_FIELDS: Mapping[str, FlatField] = MappingProxyType(
    {
        cls.flat_name(field): FlatField(section, field)
        for section, cls in SECTIONS.items()
        for field in cls.model_fields
    }
)
"""Every old flat field name -> its section and field (derived from the section models)."""

REMOVED_FIELDS: Mapping[str, RemovedField] = MappingProxyType(
    {
        "eviction_threshold": RemovedField(
            None, "nothing read it; call lifecycle.evict(store, namespace, max_items)"
        ),
        "ivf_nprobe": RemovedField(
            64, "large namespaces use an HNSW graph; set store.hnsw_ef_search"
        ),
    }
)
"""Flat fields that were removed: accepted for one release with a warning, ignored."""

if len(FLAT_FIELDS) != sum(len(c.model_fields) for c in SECTIONS.values()) or (
    set(FLAT_FIELDS) & (set(SECTIONS) | set(REMOVED_FIELDS))
):
    raise TypeError("two MemoryConfig fields share a flat name")


def nest_flat(data: Mapping[str, Any]) -> dict[str, Any]:
    """`data` with every flat keyword moved into its section (each warns once).

    A flat keyword given beside its nested form with a different value is refused.
    """
    out = dict(data)
    for key in [k for k in out if k in FLAT_FIELDS or k in REMOVED_FIELDS]:
        value = out.pop(key)
        removed = REMOVED_FIELDS.get(key)
        if removed is not None:
            _warn(f"MemoryConfig({key}=...) is deprecated and ignored: {removed.reason}")
            continue
        flat = FLAT_FIELDS[key]
        _warn(
            f"MemoryConfig({key}=...) is deprecated; use "
            f"MemoryConfig({flat.section}={{{flat.field!r}: ...}}) (read it as "
            f"config.{flat.path})"
        )
        section, explicit = _section_values(flat.section, out.get(flat.section))
        if flat.field in explicit and explicit[flat.field] != value:
            raise ValueError(
                f"{key}={value!r} disagrees with {flat.path}={explicit[flat.field]!r}; "
                f"give only {flat.path}"
            )
        section[flat.field] = value
        out[flat.section] = section
    return out


def _section_values(name: str, given: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(all values, explicitly given values) of a section given as None, a mapping or a model."""
    if given is None:
        return {}, {}
    if isinstance(given, Section):
        values = given.model_dump()
        return values, {k: values[k] for k in given.model_fields_set}
    if isinstance(given, Mapping):
        return dict(given), dict(given)
    raise ValueError(f"{name} must be a mapping or a {SECTIONS[name].__name__}")


_INTERNAL = ("pydantic", "langmem_plus.config")


def _warn(message: str) -> None:
    """Warn with `ConfigDeprecationWarning`, attributed to the first frame outside
    pydantic and this package (the code that used the flat name)."""
    level = 1
    frame = sys._getframe(1)
    while frame.f_back is not None and str(frame.f_globals.get("__name__", "")).startswith(
        _INTERNAL
    ):
        frame = frame.f_back
        level += 1
    warnings.warn(message, ConfigDeprecationWarning, stacklevel=level + 1)
