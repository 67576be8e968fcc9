"""The substring fallback of a search whose query words match no keyword: items whose indexed
text contains them, scored by how many it contains."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langmem_plus.store.seams import SearchBackend
from langmem_plus.text.stopwords import STOPWORDS

__all__ = ["like_scores"]


def like_scores(
    backend: SearchBackend,
    conn: Any,
    ns_ids: Sequence[int],
    query: str,
    k: int,
    keyword_text: Callable[[Mapping[str, Any]], str],
) -> tuple[dict[int, float], float]:
    """Items whose indexed text contains the query's words, scored by the number of words
    found; and the number of words looked for (the scale of the keyword evidence: all of them
    found is a full match, as for BM25).

    The backend pre-selects on the stored value; the match is confirmed on the item's
    indexed text (so keys and metadata never match). Stop words and single characters never
    match: as substrings they would be found inside unrelated words.
    """
    words = [w for w in (_core(w) for w in query.split()) if _can_match(w)][:8]
    scores: dict[int, float] = {}
    texts: dict[int, str] = {}
    for w in words:
        for rid, value in backend.substring_candidates(conn, ns_ids, w, k):
            if rid not in texts:
                texts[rid] = keyword_text(json.loads(value)).lower()
            if w.lower() in texts[rid]:
                scores[rid] = scores.get(rid, 0.0) + 1.0
    return scores, float(len(words))


_PUNCT = (
    "".join(chr(c) for c in range(0x21, 0x30)) + ":;<=>?@[\\]^_`{|}~，。！？、；：“”‘’（）《》…"
)


def _core(word: str) -> str:
    """A query word without the punctuation around it."""
    return word.strip(_PUNCT)


def _can_match(word: str) -> bool:
    """Whether a query word may be looked for as a substring: not a stop word, and longer
    than one character."""
    return len(word) > 1 and word.lower() not in STOPWORDS
