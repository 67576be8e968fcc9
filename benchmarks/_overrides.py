"""`--set-config SECTION.FIELD=JSON` for the benchmarks: config overrides for experiments."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langmem_plus.config import FLAT_FIELDS, MemoryConfig

__all__ = ["parse_overrides"]


def parse_overrides(items: Sequence[str]) -> MemoryConfig | None:
    """`section.field=value` (or an old flat `field=value`) pairs into a MemoryConfig (None:
    none given, the defaults)."""
    if not items:
        return None
    kwargs: dict[str, dict[str, Any]] = {}
    for item in items:
        key, _, raw = item.partition("=")
        flat = FLAT_FIELDS.get(key)
        section, _, field = flat.path.partition(".") if flat else key.partition(".")
        if not field:
            raise SystemExit(f"--set-config: {key!r} is not SECTION.FIELD or a known field")
        kwargs.setdefault(section, {})[field] = json.loads(raw)
    return MemoryConfig(**kwargs)  # type: ignore[arg-type]
