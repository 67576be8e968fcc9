"""`term_surfaces(text, wanted)` reads only as far as it must and gives each wanted token the
word the whole reading gives it (the common-word projection asks for a few tokens only)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langmem_plus.text.tokenize import term_surfaces, tokenize

WORDS = [
    "Caroline's",
    "Caroline",
    "caroline",
    "Melanie",
    "painting",
    "paints",
    "我",
    "喜欢",
    "画画",
    "北京",
    "parseJSON",
    "snake_case",
    "the",
    "running",
    "Run",
    "?",
    "🙂",
    "2024",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=14), st.data())
def test_wanted_tokens_get_the_words_of_a_full_reading(
    words: list[str], data: st.DataObject
) -> None:
    text = " ".join(words)
    full = term_surfaces(text)
    toks = sorted(set(tokenize(text)))
    if not toks:
        return
    wanted = data.draw(st.lists(st.sampled_from(toks), min_size=1, unique=True))
    got = term_surfaces(text, wanted)
    assert {t: got[t] for t in wanted} == {t: full[t] for t in wanted}


def test_reading_stops_once_every_wanted_token_has_its_word() -> None:
    got = term_surfaces("Caroline paints. Melanie runs.", ["carolin"])
    assert got["carolin"] == "Caroline"
    assert "melani" not in got
