"""What the SQLite and Milvus conversation logs share: the checks of a turn and of a deletion,
and the symbol entries of a turn."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langmem_plus.errors import ValidationError

__all__ = [
    "ROLES",
    "check_delete",
    "check_turn",
    "required_text",
    "symbol_entries",
]

ROLES = frozenset({"user", "assistant", "system", "tool"})


def required_text(name: str, value: Any) -> str:
    """`value` when it is a non-blank string, else a ValidationError naming `name`."""
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{name} must be a non-empty string, got {value!r}")
    return value


def check_turn(user_id: Any, session_id: Any, role: Any, content: Any) -> None:
    """A conversation log's `add_turn` arguments, checked the same way by every log."""
    required_text("user_id", user_id)
    required_text("session_id", session_id)
    if role not in ROLES:
        raise ValidationError(f"role must be one of {sorted(ROLES)}, got {role!r}")
    if not isinstance(content, str):
        raise ValidationError(f"content must be a string, got {type(content).__name__}")


def check_delete(user_id: Any, session_id: Any, older_than: Any) -> None:
    """A conversation log's `delete` needs at least one condition (all: `delete_all`)."""
    if user_id is None and session_id is None and older_than is None:
        raise ValidationError("give user_id, session_id or older_than (use delete_all())")


def symbol_entries(content: str, symbols: Sequence[str]) -> list[tuple[str, float, str]]:
    """Symbol-index entries of a turn: each symbol with its relevance (earlier mentions rank
    higher) and the text around its first mention."""
    return [(s, 1.0 / (1 + i * 0.25), _context(content, s)) for i, s in enumerate(symbols)]


def _context(content: str, symbol: str, width: int = 60) -> str:
    i = content.find(symbol)
    if i < 0:
        return content[:width]
    return content[max(0, i - width // 2) : i + len(symbol) + width // 2]
