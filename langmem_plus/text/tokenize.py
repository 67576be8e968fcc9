"""Tokenisation for BM25: jieba for Chinese, words and code identifiers for the rest.

Identifiers are indexed whole and by their parts (``processOrder`` -> ``processorder``,
``process``, ``order``; ``src/order.ts`` -> ``src/order.ts``, ``src``, ``order``, ``ts``), so a
query for either finds them. English plurals are folded (``paintings`` -> ``painting``), and
regular ``-ed``/``-ing`` inflections meet at one stem (``painted``, ``paint`` -> ``paint``;
``painting`` is kept and also emits ``paint``). Chinese runs are cut by jieba in search mode
(long words also yield their sub-words: ``圣诞节晚会`` -> ``圣诞``, ``圣诞节``, ``晚会`` …). Latin
words never swallow adjacent Chinese (``Bart在晚会`` -> ``bart``, ``晚会``). Stop words of both
languages are removed. See docs/benchmarks.md for the measured effect of each rule.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache

from langmem_plus.text.scripts import CJK, CJK_RE
from langmem_plus.text.stopwords import STOPWORDS

__all__ = [
    "QueryTerms",
    "is_stopword",
    "query_terms",
    "stem",
    "term_surfaces",
    "tokenize",
]

_CJK = CJK
# Word characters that are not CJK: "Bart在晚会上" must split into "Bart" + jieba("在晚会上"),
# not stay one token (\w matches CJK too).
_W = rf"[^\W{_CJK}]"
_TOKEN_RE = re.compile(
    rf"(?P<cjk>[{_CJK}]+)"
    rf"|(?P<code>[A-Za-z_$](?:{_W}|\$)*(?:(?:\.|/|::|->|-)(?:{_W}|\$)+)+)"
    rf"|(?P<word>[^\W_{_CJK}]+(?:_+[^\W_{_CJK}]+)*(?:'[a-z]+)?)",
    re.UNICODE,
)
_PREFIX_RE = re.compile(rf"([A-Za-z0-9_{_CJK}]+)\*")
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_SPLIT_RE = re.compile(r"[._/\-:>$]+")

_jieba_lock = threading.Lock()
_jieba_ready = False


def _cut(text: str) -> list[str]:
    global _jieba_ready
    import jieba

    if not _jieba_ready:
        with _jieba_lock:
            if not _jieba_ready:
                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _jieba_ready = True
    # Search mode: a long word also yields its dictionary sub-words, so a memory about a
    # "圣诞节晚会" is found by "晚会" (measured: MADial-Bench zh BM25 frac@10 0.566 -> 0.619).
    return jieba.lcut_for_search(text, HMM=True)


def is_stopword(token: str) -> bool:
    """True for English and Chinese function words that carry no search signal."""
    return token in STOPWORDS


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Fold English plural and possessive endings; leave everything else alone."""
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "'s")):
        return word[:-1]
    return word


def _identifier_parts(raw: str) -> list[str]:
    parts: list[str] = []
    for chunk in _SPLIT_RE.split(raw):
        if not chunk:
            continue
        for sub in chunk.split("_"):
            if sub:
                parts.extend(p.lower() for p in _CAMEL_RE.findall(sub))
    return parts


_VOWEL_RE = re.compile(r"[aeiouy]")


@lru_cache(maxsize=65536)
def _fold(word: str) -> str:
    """Regular -ed/-ing inflections and a final -e to one stem: making, make -> mak."""
    if len(word) < 4 or not word.isalpha() or not word.isascii():
        return word
    base = None
    if word.endswith("ing") and len(word) >= 6:
        base = word[:-3]
    elif word.endswith("ed") and len(word) >= 5:
        base = word[:-2]
    if base is not None and _VOWEL_RE.search(base):
        if len(base) >= 3 and base[-1] == base[-2] and base[-1] not in "lsz":
            base = base[:-1]  # running -> run
        word = base
    if len(word) >= 4 and word.endswith("e"):
        word = word[:-1]
    return word


def _emit_plain(low: str, out: list[str]) -> None:
    """A plain English word: plural-folded, then inflection-folded (-ing forms kept too)."""
    word = stem(low)
    folded = _fold(word)
    if folded != word and word.endswith("ing"):
        out.append(word)
    out.append(folded)


def _emit_word(raw: str, out: list[str]) -> None:
    low = raw.lower()
    if low.endswith("'s"):  # possessive: "John's" is "John"
        raw, low = raw[:-2], low[:-2]
    if low in STOPWORDS:  # also capitalised contractions ("I'm") before identifier splitting
        return
    parts = _identifier_parts(raw) if (raw != low and not raw.isupper()) or "_" in raw else []
    if len(parts) > 1:
        out.append(low)
        out.extend(stem(p) for p in parts if p not in STOPWORDS)
    elif low:
        _emit_plain(low, out)


def tokenize(text: str) -> list[str]:
    """Search tokens of `text`, in order, stop words removed (duplicates kept for BM25 tf)."""
    out: list[str] = []
    if not text:
        return out
    for m in _TOKEN_RE.finditer(text):
        kind = m.lastgroup
        raw = m.group()
        if kind == "cjk":
            for tok in _cut(raw):
                tok = tok.strip()
                if tok and tok not in STOPWORDS:
                    out.append(tok)
        elif kind == "code":
            out.append(raw.lower())
            out.extend(stem(p) for p in _identifier_parts(raw) if p not in STOPWORDS)
        else:
            _emit_word(raw, out)
    return out


def term_surfaces(text: str, wanted: Collection[str] | None = None) -> dict[str, str]:
    """Each search token of `text` -> the word it was read from, as written (the first one):
    "Caroline's" gives ``carolin`` -> "Caroline", a Chinese token is its own surface. What a
    token *means* is better embedded from the word than from its stem. With `wanted`, the
    text is read only until each of those tokens has its word (the others may be missing)."""
    out: dict[str, str] = {}
    left = None if wanted is None else set(wanted)
    for m in _TOKEN_RE.finditer(text or ""):
        raw = m.group()
        if m.lastgroup == "cjk":
            toks, word = tokenize(raw), None
        else:
            toks, word = tokenize(raw), raw[:-2] if raw.lower().endswith("'s") else raw
        for tok in toks:
            out.setdefault(tok, tok if word is None else word)
        if left is not None:
            left.difference_update(toks)
            if not left:
                break
    return out


@dataclass(frozen=True)
class QueryTerms:
    """A query as the keyword index sees it: exact terms plus prefix terms (``Pyth*``).

    `counts[i]` is how often `terms[i]` occurs in the query (its query term frequency; empty
    when unknown, meaning 1 each): a dialogue that names a person three times.
    """

    terms: tuple[str, ...]
    prefixes: tuple[str, ...]
    counts: tuple[int, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.terms or self.prefixes)

    def single_cjk_weights(self, weight: float, base: dict[str, float]) -> dict[str, float]:
        """`base` (term -> query weight) with every one-character Chinese term times `weight`."""
        if weight == 1.0:
            return base
        out = dict(base)
        for t in self.terms:
            if len(t) == 1 and CJK_RE.match(t):
                out[t] = out.get(t, 1.0) * weight
        return out

    def last_line_weights(
        self, query: str, weight: float, base: dict[str, float]
    ) -> dict[str, float]:
        """`base` with the terms of the query's last line times 1 + `weight`, when the query
        has several non-empty lines (a conversation so far: its latest turn is what needs
        answering)."""
        lines = [ln for ln in query.splitlines() if ln.strip()] if weight > 0 else []
        if len(lines) < 2:
            return base
        last = set(tokenize(lines[-1]))
        out = dict(base)
        for t in self.terms:
            if t in last:
                out[t] = out.get(t, 1.0) * (1.0 + weight)
        return out

    def qtf_weights(self, k3: float) -> dict[str, float]:
        """BM25's query-term-frequency factor (k3 + 1)·qtf / (k3 + qtf) for repeated terms.

        k3 = 0 counts every term once; a large k3 counts repeats linearly (as rank-bm25 does
        with a token list). Only terms occurring more than once are returned (others: 1.0).
        """
        if k3 <= 0 or not self.counts:
            return {}
        return {
            t: (k3 + 1.0) * n / (k3 + n)
            for t, n in zip(self.terms, self.counts, strict=True)
            if n > 1
        }


def query_terms(query: str, max_chars: int = 10_000) -> QueryTerms:
    """Parse a user query into distinct terms and prefixes; any string is valid data."""
    query = query[:max_chars]
    prefixes = tuple(dict.fromkeys(p.lower() for p in _PREFIX_RE.findall(query) if len(p) >= 2))
    tf = Counter(tokenize(_PREFIX_RE.sub(" ", query) if prefixes else query))
    return QueryTerms(terms=tuple(tf), prefixes=prefixes, counts=tuple(tf.values()))
