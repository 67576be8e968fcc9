"""Overrides for experiments: `--set-config SECTION.FIELD=JSON` (a setting of `MemoryConfig`)
or `--set-config tuning.FIELD=JSON` (a fitted constant of the store, `StoreTuning`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from langmem_plus.config import SECTIONS, MemoryConfig
from langmem_plus.memory import Memory
from langmem_plus.store.hybrid import HybridStore
from langmem_plus.store.tuning import StoreTuning

__all__ = ["Overrides", "OwnMemory", "open_memory", "parse_overrides", "store_fields"]


class Overrides(NamedTuple):
    """A store's config and tuning (None: the defaults)."""

    config: MemoryConfig | None = None
    tuning: StoreTuning | None = None

    def store_kwargs(self) -> dict[str, Any]:
        """`HybridStore(..., **kwargs)` for these overrides."""
        return {"config": self.config, "tuning": self.tuning}


def parse_overrides(items: Sequence[str]) -> Overrides:
    """`section.field=value` and `tuning.field=value` pairs (none given: the defaults)."""
    config: dict[str, dict[str, Any]] = {}
    tuning: dict[str, Any] = {}
    for item in items:
        key, _, raw = item.partition("=")
        section, _, field = key.partition(".")
        if not field or (section != "tuning" and section not in SECTIONS):
            raise SystemExit(
                f"--set-config: {key!r} is neither SECTION.FIELD ({', '.join(SECTIONS)}) "
                "nor tuning.FIELD"
            )
        value = json.loads(raw)
        if section == "tuning":
            tuning[field] = value
        else:
            config.setdefault(section, {})[field] = value
    return Overrides(
        MemoryConfig(**config) if config else None,  # type: ignore[arg-type]
        StoreTuning(**tuning) if tuning else None,
    )


def store_fields(fields: Mapping[str, Any]) -> Overrides:
    """Store fields by bare name, each sent where it lives: a setting of `MemoryConfig.store`
    or a constant of `StoreTuning`."""
    store = {k: v for k, v in fields.items() if k in SECTIONS["store"].model_fields}
    tuning = {k: v for k, v in fields.items() if k not in store}
    return Overrides(
        MemoryConfig(store=store) if store else None,  # type: ignore[arg-type]
        StoreTuning(**tuning) if tuning else None,
    )


class OwnMemory(Memory):
    """A `Memory` over a store made for it (`open_memory`): closing it closes the store."""

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.store.close()


def open_memory(
    path: str | Path | None, embeddings: Any, over: Overrides = Overrides(), **kwargs: Any
) -> Memory:
    """`Memory(path, embeddings=..., config=...)` with the store's tuning overridden too
    (`embeddings` None: the default model, False: none)."""
    index: Any = embeddings if embeddings in (None, False) else {"embed": embeddings}
    store = HybridStore(path, index=index, **over.store_kwargs())
    return OwnMemory(store=store, config=over.config, **kwargs)
