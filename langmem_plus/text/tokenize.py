"""Tokenisation for BM25: jieba for Chinese, words and code identifiers for the rest.

Identifiers are indexed whole and by their parts (``processOrder`` -> ``processorder``,
``process``, ``order``; ``src/order.ts`` -> ``src/order.ts``, ``src``, ``order``, ``ts``), so a
query for either finds them. Every regular form of an English word meets at one stem (`stem`:
``movie``, ``movies`` -> ``movi``; ``study``, ``studies``, ``studied`` -> ``studi``;
``painted``, ``paint`` -> ``paint``), and an ``-ing`` form is kept too (``paintings`` ->
``painting``, ``paint``). The parts of identifiers and hyphenated words are folded by the same
rule as whole words (``e-bike`` -> ``e-bike``, ``e``, ``bik``, as ``bike`` -> ``bik``). A change
of any token bumps `TOKENIZER_VERSION`: a store indexed under another version rebuilds its
keyword index on open. Chinese runs are cut by jieba in search mode
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
    "TOKENIZER_VERSION",
    "QueryTerms",
    "is_stopword",
    "query_terms",
    "stem",
    "term_surfaces",
    "tokenize",
]

TOKENIZER_VERSION = 2
"""Which tokens a text gets; raised with every change to them. Stores stamp the version their
keyword index was built with and rebuild it when it differs (1: before the version existed)."""

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


def _plural(word: str) -> str:
    """A plural or possessive ending folded off: movies -> movi, boxes -> box, John's -> john."""
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-2]  # parties -> parti, movies -> movi: as party and movie fold (stem)
    if len(word) > 4 and word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    return _plain_s(word)


def _plain_s(word: str) -> str:
    """A final plural -s off (not of -ss, -us, -is: class, bus, analysis)."""
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The stem every regular form of an English word meets at (one rule for whole words and
    for the parts of identifiers): the plural or possessive ending off, then -ing / -ed, a
    final -e and a doubled final consonant, a final consonant + y as i, and a plural -s the
    inflection uncovered: movie, movies -> movi; party, parties, partied -> parti;
    study, studies, studied, studying -> studi; make, making -> mak; stop, stopped -> stop;
    bias, biased, biases -> bia. Words of other scripts, or with digits, lose only a plural -s."""
    word = _plural(word)
    if not word.isascii() or not word.isalpha():
        return word
    base = _inflection(word)
    if len(base) >= 3 and base.endswith("y") and base[-2] not in _VOWELS:
        base = base[:-1] + "i"  # party -> parti, as parties (_plural)
    return _plain_s(base) if base != word else base


_VOWELS = "aeiouy"
_VOWEL_RE = re.compile(r"[aeiouy]")


def _inflection(word: str) -> str:
    """-ing / -ed, final -e's and a doubled final consonant (not -ss) off until none is left:
    making -> mak, agreed -> agr, stopping -> stop, bleeding -> ble, fill -> fil."""
    while len(word) >= 4:
        before = word
        cut = 3 if word.endswith("ing") and len(word) >= 6 else 0
        cut = 2 if not cut and word.endswith("ed") and len(word) >= 5 else cut
        if cut and _VOWEL_RE.search(word[:-cut]):
            word = word[:-cut]
        elif word[-1] == "e" or (word[-1] == word[-2] and word[-1] not in "aious"):
            word = word[:-1]  # a final -e, or one of a doubled consonant
        if word == before:
            return word
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


def _emit_plain(low: str, out: list[str]) -> None:
    """A lower-case word, or a part of an identifier: its stem (an -ing form kept too)."""
    word = _plural(low)
    folded = stem(low)
    if folded != word and word.endswith("ing"):
        out.append(word)
    out.append(folded)


def _emit_parts(parts: list[str], out: list[str]) -> None:
    """The parts of an identifier or a hyphenated word, each folded as a plain word."""
    for p in parts:
        if p not in STOPWORDS:
            _emit_plain(p, out)


def _emit_word(raw: str, out: list[str]) -> None:
    low = raw.lower()
    if low.endswith("'s"):  # possessive: "John's" is "John"
        raw, low = raw[:-2], low[:-2]
    if low in STOPWORDS:  # also capitalised contractions ("I'm") before identifier splitting
        return
    parts = _identifier_parts(raw) if (raw != low and not raw.isupper()) or "_" in raw else []
    if len(parts) > 1:
        out.append(low)
        _emit_parts(parts, out)
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
            _emit_parts(_identifier_parts(raw), out)
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
