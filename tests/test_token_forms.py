"""Every regular form of an English word meets at one token, in whole words and in the parts
of identifiers and hyphenated words (text/tokenize.py `stem`)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langmem_plus.text.stopwords import STOPWORDS
from langmem_plus.text.tokenize import stem, tokenize

_V = "aeiou"
_ONSETS = (
    "b c d f g h j k l m n p r s t v w z bl br ch cl cr dr fl fr gl gr pl pr sh sl sp st str th tr"
)
_NUCLEI = "a e i o u ai ea ee oo ou"
_CODAS = "b d g k l m n p r t x ck ng nd nt st sh ch ll ss ff rk rm lt mp"


@st.composite
def english_words(draw: st.DrawFn) -> str:
    """An English-shaped base word: one to three syllables, maybe a silent -e or a final -y.

    Left out, as no rule without a dictionary reads them: a word ending in -i or -u (is
    ``menus`` the plural of ``menu`` or a word like ``bonus``?) and a silent -e after no vowel.
    """
    n = draw(st.integers(1, 3))
    word = ""
    for i in range(n):
        word += draw(st.sampled_from(_ONSETS.split(" "))) + draw(
            st.sampled_from(_NUCLEI.split(" "))
        )
        if i == n - 1 or draw(st.booleans()):
            word += draw(st.sampled_from(_CODAS.split(" ")))
    if word[-1] not in _V:
        end = draw(st.sampled_from(["", "", "e", "y"]))
        if end != "e" or (word[-2] in _V and word[-3:-2] not in _V):
            word += end
    bare = word[:-1] if word.endswith("e") else word
    if len(word) < 4 or word in STOPWORDS or word[-1] in "iu" or not set(bare) & set(_V + "y"):
        return draw(st.nothing())
    return word


def _cvc(w: str) -> bool:
    """Ends consonant-vowel-consonant: the final consonant may double (stop -> stopped)."""
    return len(w) >= 3 and w[-1] not in _V + "wxys" and w[-2] in _V and w[-3] not in _V


def regular_forms(w: str) -> list[str]:
    """The regular plural, -ed and -ing forms by English spelling rules (with and without a
    doubled final consonant where it may double: visited, stopped)."""
    cons_y = w.endswith("y") and w[-2] not in _V
    if w.endswith(("s", "x", "z", "ch", "sh")):
        forms = [w + "es"]
    else:
        forms = [w[:-1] + "ies" if cons_y else w + "s"]
    if w.endswith("e"):
        forms.append(w + "d")
    elif cons_y:
        forms.append(w[:-1] + "ied")
    else:
        forms += [w + "ed"] + ([w + w[-1] + "ed"] if _cvc(w) else [])
    if w.endswith("e") and not w.endswith(("ee", "ie", "oe", "ye")):
        forms.append(w[:-1] + "ing")
    elif not w.endswith("ie"):
        forms += [w + "ing"] + ([w + w[-1] + "ing"] if _cvc(w) else [])
    return forms


@settings(max_examples=400)
@given(english_words())
def test_a_word_and_its_regular_forms_share_a_token(word: str) -> None:
    toks = set(tokenize(word))
    for form in regular_forms(word):
        assert toks & set(tokenize(form)), (word, tokenize(word), form, tokenize(form))


@settings(max_examples=200)
@given(english_words(), st.sampled_from(["e-", "x-", "new_", "get", "src/"]))
def test_a_part_folds_as_the_whole_word(word: str, head: str) -> None:
    """A part of a hyphenated word, an identifier or a path gets the word's own tokens."""
    for form in [word, *regular_forms(word)]:
        joined = head + (form.capitalize() if head == "get" else form)
        assert set(tokenize(form)) <= set(tokenize(joined)), (joined, tokenize(joined))


@pytest.mark.parametrize(
    "forms",
    [
        ("movie", "movies", "Movies"),
        ("cookie", "cookies"),
        ("party", "parties", "partied"),
        ("study", "studies", "studied", "studying"),
        ("try", "tries", "tried", "trying"),
        ("paint", "paints", "painted", "painting", "paintings"),
        ("make", "makes", "making"),
        ("stop", "stops", "stopped", "stopping"),
        ("agree", "agrees", "agreed", "agreeing"),
        ("bias", "biases", "biased"),
        ("close", "closes", "closed", "closing"),
        ("box", "boxes", "boxed"),
        ("play", "plays", "played", "playing"),
    ],
)
def test_forms_meet(forms: tuple[str, ...]) -> None:
    stems = {stem(f.lower()) for f in forms}
    assert len(stems) == 1, {f: tokenize(f) for f in forms}
    assert all(stems <= set(tokenize(f)) for f in forms)


def test_the_reported_misses_meet() -> None:
    """'movies' and 'movie', 'cookies' and 'cookie', 'e-bike' and 'bike' share a token."""
    assert set(tokenize("I love horror movies")) & set(tokenize("what movie"))
    assert set(tokenize("cookies")) & set(tokenize("cookie"))
    assert set(tokenize("my e-bike")) & set(tokenize("bike"))
    assert set(tokenize("e-bikes")) & set(tokenize("bike"))


def test_identifiers_whole_and_by_folded_parts() -> None:
    toks = tokenize("parseMovies in src/movies_list.ts, get_user_by_id and loadingState")
    for t in ("parsemovies", stem("parse"), "movi", "src/movies_list.ts", "src", "list", "ts"):
        assert t in toks, t
    assert {"get_user_by_id", "get", "user", "id"} <= set(toks)
    # an -ing part is kept too, as an -ing word is
    assert {"loadingstate", "loading", "load", "stat"} <= set(toks)
    assert set(tokenize("parse the movie")) <= set(toks)


def test_inflection_keeps_what_it_promised() -> None:
    assert {"painting", "paint"} <= set(tokenize("paintings"))
    assert tokenize("我喜欢看电影") == ["喜欢", "电影"]  # Chinese: jieba's words, untouched
    assert tokenize("我喜欢看电影movies") == ["喜欢", "电影", "movi"]
    assert stem("café") == "café" and stem("cafés") == "café"  # other scripts: plural only
    assert tokenize("2024s") == ["2024"]
