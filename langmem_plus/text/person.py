"""First person to third, written once: what the user says of themselves ("我的狗", "my
dog") becomes what a memory says of the user ("用户的狗", "their dog")."""

from __future__ import annotations

import re

__all__ = ["en_third", "zh_third"]


def zh_third(text: str) -> str:
    """First person to third in a Chinese span (我的 -> 用户的, 给我 -> 给用户, 我们 -> 用户团队)."""
    text = re.sub(r"我们|咱们", "用户团队", text)
    return text.replace("我", "用户")


_EN_PRONOUNS = (
    (r"\bI'm\b", "they're"),
    (r"\bI am\b", "they are"),
    (r"\bI've\b", "they've"),
    (r"\bI'll\b", "they'll"),
    (r"\bI'd\b", "they'd"),
    (r"\bI\b", "they"),
    (r"\bmy\b", "their"),
    (r"\bMy\b", "Their"),
    (r"\bme\b", "them"),
    (r"\bmine\b", "theirs"),
    (r"\bmyself\b", "themselves"),
)


def en_third(text: str) -> str:
    """First person to third in an English span (I -> they, my -> their)."""
    for pat, rep in _EN_PRONOUNS:
        text = re.sub(pat, rep, text)
    return text
