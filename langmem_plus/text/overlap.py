"""How much two texts say the same: their content tokens and the overlap of two token sets."""

from __future__ import annotations

from collections.abc import Iterable

from langmem_plus.text.scripts import CJK_RE
from langmem_plus.text.tokenize import tokenize

__all__ = ["content_tokens", "coverage", "jaccard"]

_SUBJECT = frozenset({"用户", "user", "user's"})


def content_tokens(text: str) -> set[str]:
    """Searchable tokens of a text (stop words and the word "user" removed), as a set. Chinese
    words of three or more characters also contribute their character bigrams, so "喝咖啡"
    meets "咖啡" even when jieba cuts the two texts differently."""
    tokens = {t for t in tokenize(text or "") if t.strip()}
    for tok in list(tokens):
        if len(tok) >= 3 and CJK_RE.fullmatch(tok[0]) and CJK_RE.fullmatch(tok[-1]):
            tokens.update(tok[i : i + 2] for i in range(len(tok) - 1))
    return tokens - _SUBJECT


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """Jaccard similarity of two token collections (0 when both are empty)."""
    sa, sb = set(a), set(b)
    if not sa and not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


def coverage(part: Iterable[str], whole: Iterable[str]) -> float:
    """Share of `whole`'s tokens that occur in `part`."""
    sw = set(whole)
    if not sw:
        return 0.0
    return len(sw & set(part)) / len(sw)
