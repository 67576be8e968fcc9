"""Query intent cues used by the score: does the query ask about preferences?"""

from __future__ import annotations

import re

__all__ = ["is_preference_query"]

_PREF_RE = re.compile(
    r"喜欢|爱吃|爱喝|爱好|偏好|口味|讨厌|不吃|不喝|想要|最爱|习惯"
    r"|\b(?:i|we|you|he|she|they)\s+(?:really\s+)?(?:like|love|enjoy|hate|prefer|dislike)s?\b"
    r"|\b(?:prefer(?:s|red|ence|ences)?|favou?rites?|likes?|dislikes?|taste|fond of)\b",
    re.IGNORECASE,
)


def is_preference_query(query: str) -> bool:
    """True when the query expresses or asks about a preference (我喜欢 / I like / prefer …)."""
    return bool(_PREF_RE.search(query or ""))
