"""Which script a text is written in: CJK (Chinese) or Latin, written once for every layer."""

from __future__ import annotations

import re

__all__ = ["CJK", "CJK_RE", "LATIN_RE", "detect_lang", "has_cjk"]

CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
"""The CJK ideograph ranges (extension A, the unified block, compatibility ideographs), for
character classes."""
CJK_RE = re.compile(f"[{CJK}]")
LATIN_RE = re.compile(r"[A-Za-z]")

# identifiers, paths and versions ("processOrder", "src/order.ts", "k8s", "v1.2") say nothing
# about the language a sentence is written in
_CODE_TOKEN_RE = re.compile(
    r"[A-Za-z_][\w-]*(?:[./][\w-]+)+|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|\w*_\w+|"
    r"[A-Za-z]+\d[\w.]*|[A-Z]{2,}\b"
)


def has_cjk(text: str) -> bool:
    """Whether the text holds a CJK character."""
    return CJK_RE.search(text) is not None


def detect_lang(text: str) -> str:
    """'zh' when the text holds a meaningful share of CJK characters, else 'en'. Code
    identifiers, paths and acronyms in a Chinese sentence do not make it English."""
    cjk = len(CJK_RE.findall(text))
    if cjk == 0:
        return "en"
    latin = len(LATIN_RE.findall(_CODE_TOKEN_RE.sub(" ", text)))
    return "zh" if cjk * 3 >= latin else "en"
