"""Within `cut_once` (one search reading its query), each run of Chinese text is cut by jieba
once, and every reading gives the tokens it gives outside the block."""

from __future__ import annotations

import importlib

import pytest

from langmem_plus.text.tokenize import cut_once, query_terms, term_surfaces, tokenize

tok = importlib.import_module("langmem_plus.text.tokenize")

DIALOGUE = (
    "小林：我下周三要去杭州面试，有点紧张😅\n"
    "Assistant: 别担心，你准备得很充分了！\n"
    "小林：对了，面试完我想去西湖边吃饭，有什么推荐吗？"
)


def test_each_run_is_cut_once_and_reads_as_outside(monkeypatch: pytest.MonkeyPatch) -> None:
    outside = (
        tokenize(DIALOGUE),
        query_terms(DIALOGUE),
        tokenize(DIALOGUE.splitlines()[-1]),
        term_surfaces(DIALOGUE, ["西湖"]),
    )
    cuts: list[str] = []
    real = tok._cut

    def counting(text: str) -> list[str]:
        cuts.append(text)
        return real(text)

    monkeypatch.setattr(tok, "_cut", counting)
    with cut_once():
        inside = (
            tokenize(DIALOGUE),
            query_terms(DIALOGUE),
            tokenize(DIALOGUE.splitlines()[-1]),
            term_surfaces(DIALOGUE, ["西湖"]),
        )
    assert inside == outside
    assert len(cuts) == len(set(cuts)) > 0  # every run cut once
    assert cuts.count("小林") == 1  # named twice in the dialogue, cut once
    cuts.clear()
    tokenize(DIALOGUE)
    runs = len(cuts)
    tokenize(DIALOGUE)
    assert len(cuts) == 2 * runs > len(set(cuts))  # outside the block nothing is remembered
