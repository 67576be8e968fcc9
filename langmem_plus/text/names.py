"""The names a text mentions: people, places, products, code identifiers.

A query that names something its memory store has never seen ("What did Caroline research?"
against a store with no Caroline) is rarely answered there; the store's relevance judgement
(store/ranking/judgement.py) counts such names. A name here is a word written like one, not a word
that only opens a sentence: a capitalised or all-capital word inside a sentence
("... with Oskar", "我在写 OrderService"), a camelCase identifier ("processOrder"), or a
transcript's speaker label at the start of a line ("Bart: ..."). The word right after such a
label opens the utterance, so it is no name ("Bart: Wow, ..."; the price: "Note: Caroline
called" loses Caroline). Calendar words, role labels ("User:", "Assistant:") and stop words
are not names. Chinese names written in Chinese
characters are not recognised (no reliable mark without a tagger).
"""

from __future__ import annotations

import re

from langmem_plus.text.tokenize import tokenize
from langmem_plus.text.transcript import ROLES, SPEAKER_RE

__all__ = ["name_terms"]

_WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9]+")
# what ends a sentence (a word after one of these opens a sentence, unless it is a label)
_SENTENCE_END = frozenset(".!?。！？\n")
_OPENERS = "\"'“‘(（[【「『-–—*•"
_LABEL_RE = re.compile(r"\s*[:：]")
_CALENDAR = frozenset(
    "january february march april may june july august september october november december "  # noqa: SIM905
    "jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday "
    "saturday sunday mon tue tues wed thu thur thurs fri sat sun".split()
)


def _opens_sentence(text: str, start: int) -> bool:
    """Whether the word at `start` is the first of its sentence (only spaces and opening
    quotes or brackets between it and the sentence's end, the text's start, or a speaker
    label that opens its line: "Bart: Wow, ..." — "Wow" opens Bart's utterance)."""
    i = start - 1
    while i >= 0 and (text[i] in " \t\r" or text[i] in _OPENERS):
        i -= 1
    if i < 0 or text[i] in _SENTENCE_END:
        return True
    if text[i] in ":：":
        line_start = text.rfind("\n", 0, i) + 1
        return bool(SPEAKER_RE.fullmatch(text, line_start, i))
    return False


def _is_name(text: str, m: re.Match[str]) -> bool:
    word = m.group(0)
    low = word.lower()
    if low in _CALENDAR or low in ROLES:
        return False
    capital = word[0].isupper()
    camel = not capital and any(c.isupper() for c in word[1:])
    if not (capital or camel):
        return False
    if camel or not _opens_sentence(text, m.start()):
        return True
    # a sentence's first word is a name only as a speaker label ("Bart: ...")
    return bool(_LABEL_RE.match(text, m.end()))


def name_terms(text: str) -> list[str]:
    """The index terms (tokenize's first token of each name) of the names in `text`, in
    order of first mention, each once."""
    out: dict[str, None] = {}
    for m in _WORD_RE.finditer(text):
        if _is_name(text, m):
            toks = tokenize(m.group(0))
            if toks:
                out.setdefault(toks[0])
    return list(out)
