"""The corrections benchmark's judges (benchmarks/corrections.py): what counts as the old
value shown, and what a question's `not_stale` mentions leave out."""

from __future__ import annotations

from _bench import load_benchmark

corr = load_benchmark("corrections")

CIVIC_NOW = '<memory n="1">"Also Eli already dented the Civic\'s bumper lol"</memory>'
CIVIC_THEN = '<memory n="2">"I drive a 2012 Honda Civic"</memory>'
MARKED = (
    '<memory n="3" superseded="2023-12-11" now="User drives a Model 3">"I drive a Civic"</memory>'
)


def test_unmarked_old_value_counts() -> None:
    assert corr.stale_unmarked(CIVIC_THEN, ["Model 3"], ["Civic"])
    assert not corr.stale_unmarked(MARKED, ["Model 3"], ["Civic"])
    assert not corr.stale_unmarked("User drives a Model 3, not the Civic", ["Model 3"], ["Civic"])


def test_not_stale_mention_is_left_out_and_only_it() -> None:
    spared = ["Eli already dented the Civic"]
    # before: a mention of the old car, now driven by someone else, counted as the old value
    assert corr.stale_unmarked(CIVIC_NOW, ["Model 3"], ["Civic"])
    assert not corr.stale_unmarked(CIVIC_NOW, ["Model 3"], ["Civic"], spared)
    # the old value stated elsewhere still counts, in the same context or the same line
    assert corr.stale_unmarked(f"{CIVIC_NOW}\n{CIVIC_THEN}", ["Model 3"], ["Civic"], spared)
    assert corr.stale_unmarked(
        "Eli already dented the Civic; I still drive the Civic", ["Model 3"], ["Civic"], spared
    )


def test_judge_leaves_out_not_stale_mentions() -> None:
    texts = ["Sure. Thursday team dinner, Wednesday dentist.", "Therapy weekly on Mondays at 6"]
    before = corr.judge(texts, ["Mondays"], ["Thursday"])
    assert before["lost"] and before["rank_old_only"] == 0
    after = corr.judge(texts, ["Mondays"], ["Thursday"], ["Thursday team dinner"])
    assert not after["lost"] and after["rank_old_only"] is None and after["rank_current"] == 1


def test_a_mark_without_the_current_value_counts_as_without_it() -> None:
    drifted = (
        '<memory n="4" newer="2024-05-03" newer_says="Got the rain jacket">'
        '"Weekend ride on my Trek"</memory>'
    )
    shown = '<memory n="4" newer="2024-04-22" newer_says="Just the VanMoof now">"my Trek"</memory>'
    assert not corr.stale_unmarked(drifted, ["VanMoof"], ["Trek"])
    assert corr.stale_without_current(drifted, ["VanMoof"], ["Trek"])
    assert not corr.stale_without_current(shown, ["VanMoof"], ["Trek"])
    assert corr.stale_without_current(CIVIC_NOW, ["Model 3"], ["Civic"])
    assert not corr.stale_without_current(
        CIVIC_NOW, ["Model 3"], ["Civic"], ["Eli already dented the Civic"]
    )
