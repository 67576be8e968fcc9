"""Precision, recall and F1 of the offline fact rules (`rule_facts`) on the extraction dev set.

Data: `benchmarks/data/extraction_dev.jsonl` (issue #13), split into `rules` (the rules were
written looking at these) and `heldout` (only measured). Each case is one user turn, with
the assistant turn before it as context where there is one. The realistic batch of issue #30
(`evaldata.REALISTIC_CLASSES`: complaints, requests to the assistant, restatements, forget
requests, long turns) is reported apart, by the same two halves, and so are the later batches
(`evaldata.HELD_OUT_BATCHES`, all held out): `fresh`, of the same kinds, written after the rules
were changed for the realistic batch, and `unseen-2026-11-28`, 40 turns written without reading
the rules and committed before its first measurement (then read and tuned on, so its figure is
a tuned one now; see NOTES), `unseen-2026-11-28b`, 48 turns written the same way,
measured once, then read and tuned on too, and `unseen-2026-11-28c` and `unseen-2026-11-28d`,
48 more each, each measured once, then read and tuned on as well (their first measurements are
in NOTES). A case with `earlier` turns
runs through the write path (`EpisodeKeeper` over an in-memory LangGraph store, rules, no
model): the earlier turns are kept first, one exchange a day, and the predictions are the
facts the case's turn adds as new records (a restatement adds none; a forget request removes
the fact, adds none).

Matching rule (fixed before measuring, the same for every class): a predicted fact matches a
gold fact when

1. the subjects agree (user / team / third_person), and
2. at least half of the gold fact's key tokens occur in the predicted fact's text or value
   (case-insensitive substring, or one of its own tokens: a stem such as "shopifi" is no
   substring of "Shopify"), where key tokens are the gold text's search tokens
   (`langmem_plus.text.tokenize`: jieba for Chinese, stemmed English, stop words removed)
   minus the subject words (用户, user), minus tokens contained in a longer key token, and
3. the predicted fact is not a paraphrase of the whole turn: it has at most
   max(2 x gold key tokens, gold key tokens + 4) tokens of its own.

Each gold fact matches at most one prediction (best coverage first). Precision is matched
predictions / predictions, recall matched gold facts / gold facts; on negative cases (gold
`[]`) any prediction is a false positive, and the negatives' false-positive rate is the share
of negative cases with at least one prediction.

Also: over `benchmarks/data/corrections.jsonl`, how often the turn that states a corrected
value gives a fact whose slot equals the slot of a fact from the turn that stated the old
value (slot agreement is what lets a new fact close the old one), and how often that happens
in `both_stand` scenarios, where it would wrongly close a fact that still stands.

    python benchmarks/fact_extraction.py --out docs/results/fact_extraction.json \
        --md docs/results/fact_extraction.md [--show-errors] [--split heldout]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import write_json, write_text  # noqa: E402
from evaldata import (  # noqa: E402
    HELD_OUT_BATCHES,
    REALISTIC_CLASSES,
    CorrectionCase,
    ExtractionCase,
    load_corrections,
    load_extraction,
)
from langgraph.store.memory import InMemoryStore  # noqa: E402

from langmem_plus.episodic.episodes import EpisodeKeeper, record_of_item  # noqa: E402
from langmem_plus.processors.facts.derived import DerivedFact  # noqa: E402
from langmem_plus.processors.facts.rules import rule_facts  # noqa: E402
from langmem_plus.text import tokenize  # noqa: E402

NOTES = (
    "How the rules were written: against the `rules` split only, plus examples written "
    "for `tests/test_fact_rules.py`. After the first `heldout` measurement (P 0.73, "
    "R 0.22) the rules were broadened from new hand-written examples, not from heldout "
    "cases; per-class heldout totals and the *reasons* unmatched predictions failed "
    "(subject, coverage, length; no case text) were looked at, and led to five changes: "
    "'我是X' no longer read as a name, irony no longer stored (not even reversed), a "
    "bare '不，' no longer taken as a self-correction, and no guessing who 'she' is from "
    "a capitalised word, and an event's next clause appended only to a short event clause. So the heldout numbers are not fully unseen; the rules/heldout "
    "recall gap (0.90 vs 0.34) is the honest measure of how narrow rules are.",
    "",
    "The realistic batch (issue #30) was split before any rule was changed for it. Main's "
    "rules scored P 0.667 R 0.417 on its `rules` half and P 0.538 R 0.389 on its `heldout` "
    "half. The rules were then changed against the `rules` half only (P 1.000 R 0.667); "
    "the first measurement of the `heldout` half after that was P 0.538 R 0.389 again: "
    "nothing had carried over. Its six errors were then read, and the causes were fixed "
    "with new examples (a condition clause with spaces, 'Call me X' capitalised, "
    "'跟你说过' read as a filler, a wait read as an event, an aside making a restated "
    "instruction look new, a relation's possessive): its figure below is therefore tuned. "
    "The `fresh` batch (30 cases of the same kinds) was written after that and measured "
    "once: P 0.692 R 0.600 (main's rules: the same). Its errors were read too and led to "
    "four more fixes (a team's tool as its slot's value, a deadline in a complaint, an "
    "opinion ending a relation's continuation, 'a huge fan of' in the write-path cases), "
    "so its figure below is tuned as well. The honest estimate of precision on unseen "
    "realistic chat is the first measurements: 0.54 and 0.69.",
    "",
    "The `unseen-2026-11-28` batch (40 turns: zh 16, en 16, mixed 8; 26 positive with 43 gold "
    "facts, 14 negative; complaints, requests to the assistant, restatements after earlier "
    "turns, corrections and changes, plans, chit-chat, long turns, code talk) was written "
    "without reading the rule code, the rule tests or the other cases, committed before it "
    "was measured (d8beb50) and measured once on main's rules (b8b21bb). Its first "
    "measurement, the last figure on chat the rules had not seen:",
    "",
    "| unseen-2026-11-28 (first measurement, before it was read) | cases | predicted | gold | P | R "
    "| neg. FP rate |",
    "|---|---|---|---|---|---|---|",
    "| all | 40 | 14 | 43 | 0.714 | 0.233 | 0.071 (1/14) |",
    "| zh | 16 | 8 | 18 | 0.750 | 0.333 | 0.200 (1/5) |",
    "| en | 16 | 2 | 17 | 0.500 | 0.059 | 0.000 (0/6) |",
    "| mixed | 8 | 4 | 8 | 0.750 | 0.375 | 0.000 (0/3) |",
    "",
    'Its four false facts: a complaint read as a wish ("…以后再也不点这家了" → '
    '"用户希望再也不点这家了", on a negative, and "这家" names nothing); a request to the '
    'assistant kept whole with its "you" ("User wants: when you suggest recipes, keep in '
    "mind they don't eat pork and all they have is an air fryer and a microwave\", instead of "
    "the two facts inside it); and twice two true team facts left in one over-long fact "
    '("用户团队的后端全是Go写的，数据库用的PostgreSQL", "用户团队的前端用的是React + '
    'TypeScript，state management用Zustand，不用Redux"). Two predictions the matcher counts as '
    'right are flawed too: "用户现在用的是iPhone 15，不再上次说在用小米手机" (the assistant\'s '
    "words spliced in) and \"The user's team deploy everything with Terraform on AWS and our CI "
    'is GitHub Actions" (two facts, "our" kept). No restatement was stored as new. Issue '
    "#30's target (P >= 0.95 on held-out chat) was not met on unseen chat, and recall there "
    "was a quarter.",
    "",
    'That batch was then read and tuned on (issue #30, "precision first"), together with the '
    "`rules` split and about 230 new hand-written turns (`tests/test_fact_rules_precision.py` "
    "keeps the ones that became tests), so its figure below is a tuned one like the others. "
    "The changes are general rules, each with new examples: every kept fact is checked "
    "(`processors/facts/guards.py`: no first-person word left in it, trimmed to the clauses "
    'before one; no assistant "you" outside an instruction; no demonstrative that names '
    'nothing, "这家", "那个", "that one", "going back there"; no he/she with no one named; no '
    'plan verb with no object, "下周还想去"); a fact that only restates what the assistant\'s '
    'turn shows it knows ("你上次说…", "since you\'re…", "as you mentioned") is not new; a '
    'complaint or the user\'s own resolution ("以后再也不…", "never going back") is no '
    'instruction; a request to keep something in mind ("when you suggest recipes, keep in '
    "mind I don't eat pork and all I have is an air fryer\") gives the user facts inside it, "
    'and an instruction names "the assistant", never "you"; a team\'s second topic ("数据库用'
    '的PostgreSQL", "and our CI is…", "and the frontend is…") is its own fact; a consequence '
    '("so …", "所以…") or a new he/she statement is not appended to a fact, and nothing follows '
    'as new from a restated fact ("as I mentioned, …, so no X for me"); an untied correction '
    'no longer splices the assistant\'s "你上次说"; plus recall on the same kinds (a request '
    "said mid-turn, plans on a date or with a longer activity, when the user's thing starts or "
    'lands, "I\'m in X now" after leaving a place, "we live in" as the household, what the '
    'user studies, a new job said in passing, "在一家…公司做X", the tool the user does '
    'something with, a relation\'s age "now"). While '
    "checking changes, prediction diffs on `heldout` were printed, so four of its turns were "
    "seen (third_person-en-02, team_fact-en-02, team_fact-en-04, "
    'self_correction_midturn-en-02); one change came from one of them ("never on Fridays": '
    '"never" before a preposition is no request). A new unseen batch is the next honest '
    "figure.",
    "",
    "The `unseen-2026-11-28b` batch (48 turns: zh 18, en 18, mixed 12; 31 positive with 53 gold "
    "facts, 17 negative) was written by someone who had not seen those rules and measured once "
    "on them (main 0cc450f). Its first measurement, the honest figure on unseen chat:",
    "",
    "| unseen-2026-11-28b (first measurement, before it was read) | cases | predicted | gold | P "
    "| R | neg. FP rate |",
    "|---|---|---|---|---|---|---|",
    "| all | 48 | 18 | 53 | 0.667 | 0.226 | 0.059 (1/17) |",
    "| zh | 18 | 9 | 20 | 0.556 | 0.250 | 0.167 (1/6) |",
    "| en | 18 | 5 | 21 | 0.800 | 0.190 | 0.000 (0/6) |",
    "| mixed | 12 | 4 | 12 | 0.750 | 0.250 | 0.000 (0/5) |",
    "",
    "Nothing of the case-by-case fixes above had carried over. Its six false facts were of "
    'shapes no rule had been written against: a wish rewritten into nonsense ("用户希望用户问助手'
    '菜谱，别给用户写什么“盐适量”"), a wish cut off on a dangling "下" ("用户希望到时候提前一天提醒'
    '用户下"), a team\'s change reported as the user\'s wish ("用户希望standup 改成下午了"), a text '
    'given to translate read as the user\'s news ("用户本周五的评审会改为线上进行", on a negative), '
    'a daughter\'s fact given to the user ("用户周末才回来") and a fact naming nothing ("User got '
    'the job"). It was then read (so its figure below is tuned), and the fix was structural, '
    "not per case: checks that every kept fact passes, each with new hand-written examples "
    "(`tests/test_fact_well_formed.py`) and each checked on every batch (none lowered a "
    'figure anywhere): no fact ends cut off (on a dangling complement, "提醒用户下", or a '
    'function word, "the", "remind them to"); a wish is a request the assistant can act on (its '
    'body does not open with the user again, is not a change reported as done, "X 改成Y了", '
    '"moved to", and its verb has no subject of its own: "every time I call support they put me '
    'on hold" is a complaint); a fact names more than its verb ("User got the job", "User\'s son '
    'got into the university": a bare "the" noun); a place word right after a verb names no '
    'place ("去那边出差"); a clause with no subject of its own goes on about the one before it, '
    "so after a clause about a third person it gives no fact about the user; a fact that opens "
    "on a relation or the team is theirs, whichever rule wrote it; and a text given after a "
    "colon to translate, polish or proofread is material, not the user's news. No prediction "
    "on any other batch had these shapes, so the checks changed nothing there (no fact "
    "dropped, none added): they are shown to generalise by the new examples, not by the other "
    "batches. On about 220 further turns written while checking them (not committed, and many "
    "written to exercise the checks, so no unbiased estimate; the ones that became tests are in "
    "the test file) they removed 24 wrong facts, gave 2 facts their right subject and lost no "
    'right one (a first draft that dropped "from now on" requests was caught there). On the '
    "turns of the corrections scenarios (below) they drop two facts, both wrong: a girlfriend's "
    'new job given to the user ("用户上个月入职了，在上海 base", after "她早毕业回来啦") and "User '
    'cannot stand the texture" (of what?). Recall '
    "is unchanged on every batch. A new unseen batch (`unseen-2026-11-28c`) is the next honest "
    "figure.",
    "",
    "The `unseen-2026-11-28c` batch (48 turns: zh 18, en 18, mixed 12; 32 positive with 64 gold "
    "facts, 16 negative) was written while those checks were being made, by someone who had "
    "read neither the rules, their tests nor the other cases, committed before it was measured "
    "and measured once on main 1157432 (the checks above merged). Its first measurement, the "
    "honest figure on unseen chat:",
    "",
    "| unseen-2026-11-28c (first measurement, before it was read) | cases | predicted | gold | P | R "
    "| neg. FP rate |",
    "|---|---|---|---|---|---|---|",
    "| all | 48 | 14 | 64 | 0.857 | 0.188 | 0.000 (0/16) |",
    "| zh | 18 | 9 | 23 | 0.778 | 0.304 | 0.000 (0/6) |",
    "| en | 18 | 2 | 26 | 1.000 | 0.077 | 0.000 (0/6) |",
    "| mixed | 12 | 3 | 15 | 1.000 | 0.200 | 0.000 (0/4) |",
    "",
    "Precision on unseen chat rose from 0.54-0.71 (the earlier batches' first measurements) to "
    "0.857, with no false fact on a negative case; issue #30's 0.95 is not met. Its two "
    'unmatched facts are a right instruction in garbled words ("用户希望回用户消息别用那么多小标题'
    '和加粗了") and a fact the labels did not hold ("用户周末偶尔回上海看看爸妈"); recall is a '
    "fifth (English 0.08): what the rules miss stays in the episode and is found by search.",
    "",
    "That batch was then read (so its figure below is tuned), together with the misses of the "
    "two earlier unseen batches and, for the last change, the English misses of `heldout`. The "
    "misses were grouped by why no rule read them, and each group got one general reading "
    "with new hand-written examples (`tests/test_fact_rules_recall.py`: each failed before, "
    "and negatives beside it give no fact), kept only when it helped at least two batches and "
    "lowered no figure anywhere (one that helped only one batch, a consequence split before "
    "its 'that'll' was added, was dropped until it did; one kept change helps one batch and "
    "is said so below). English chat drops the 'I' ('been doing my long runs on Sundays "
    "lately', 'then flying to Denver sat morning for my cousin's wedding', 'starting at "
    "Halvorsen Labs on Jan 6'), and a clause with no subject after a relation goes on about "
    "them ('…, works at a hospital'); a habit 'I've been X-ing … lately / ever since …'; what "
    "the user is set to do on a day ('I'm finally doing the half marathon on May 18', 'going "
    "part-time … starting next month', 'switching to …'); a relation named first ('Daniel (my "
    "brother) just got engaged') or as 'the kids', and a he / she opening a turn that answers "
    "the assistant's question about one relation ('How's your sister?' - 'nah she moved…', "
    "'你上次说女儿…' - '她都上初一了'); a clause and its unpunctuated 'so I …' / 'so that'll …' "
    "read as two; someone who moved the user's thing ('the dentist moved my cleaning to Oct "
    "3', 'we moved the wedding…', 'since they moved our office to…'); a fact in a reason "
    "clause ('since I work from home I'm freezing'); a team's tool with any "
    "verb ('we pin Python to 3.11', a named tool required) and its participle clause ('…, "
    "deployed on GKE'); 'pls' / 'fwiw' read as their words; a he / she naming no one cuts a "
    "fact before its clause instead of dropping a clean request before it (one batch: b); "
    "'can't make it' opens a statement, not a question. In Chinese: a request about how the "
    "assistant answers names the assistant ('以后你回我消息别用…' -> '用户希望助手回复时别用…', "
    "the garbled instruction above), '记得 + a verb' is the request itself, a booking for a "
    "time ('下周四下午三点约了洗牙'), a relation's pregnancy, a thing replaced by a named "
    "product ('手机换成 Pixel 了', '早就换 Obsidian 了'), a team statement about a part of its "
    "work ('我们后端…', '我们 release 周期是两周') and a daily commute ('每天从燕郊坐班车到国贸'). "
    "Every kept fact still passes the checks of `processors/facts/guards.py`. On about 110 "
    "further hand-written turns (ordinary chat chosen to trip the new readings; not committed, "
    "the ones that became tests are in the test file) the readings gave three wrong or "
    "garbled facts, fixed before merging ('I'm doing great on Saturday', 'switching to the "
    "other tab', a 'wish me luck' appended), and 'on tomorrow'. Before and after this round, "
    "same matcher (precision / recall):",
    "",
    "| batch | before (main 48e2705) | after | gold facts |",
    "|---|---|---|---|",
    "| rules | 0.972 / 0.897 | 0.972 / 0.897 | 78 |",
    "| heldout | 0.964 / 0.370 | 0.968 / 0.411 | 73 |",
    "| realistic rules | 1.000 / 0.667 | 1.000 / 0.667 | 24 |",
    "| realistic heldout | 1.000 / 0.500 | 1.000 / 0.500 | 18 |",
    "| fresh | 1.000 / 0.667 | 1.000 / 0.667 | 15 |",
    "| unseen-2026-11-28 | 1.000 / 0.651 | 1.000 / 0.814 | 43 |",
    "| unseen-2026-11-28b | 1.000 / 0.226 | 1.000 / 0.491 | 53 |",
    "| unseen-2026-11-28c | 0.857 / 0.188 | 0.968 / 0.469 (en 0.077 -> 0.500) | 64 |",
    "",
    "The gains are on batches the readings were written from, so they say the readings work, "
    "not how far they carry: the next unseen batch (`unseen-2026-11-28d`, written meanwhile by "
    "someone who saw none of this) is the honest figure. c's one unmatched fact is the "
    "unlabelled true detail above.",
    "",
    "The `unseen-2026-11-28d` batch (48 turns: zh 18, en 18, mixed 12; 32 positive with 71 gold "
    "facts, 16 negative) was written while those readings were being made, by someone who had "
    "read neither the rules, their tests nor the other cases, committed before it was measured "
    "and measured once on main d0f979f (round 3 merged), before anyone read it: that first "
    "figure is the honest one on unseen chat.",
    "",
    "| unseen-2026-11-28d (first measurement, before it was read) | cases | predicted | gold | P | R | "
    "neg. FP rate |",
    "|---|---|---|---|---|---|---|",
    "| all | 48 | 20 | 71 | 0.850 | 0.239 | 0.000 (0/16) |",
    "| zh | 18 | 7 | 26 | 1.000 | 0.269 | 0.000 (0/6) |",
    "| en | 18 | 7 | 28 | 0.857 | 0.214 | 0.000 (0/6) |",
    "| mixed | 12 | 6 | 17 | 0.667 | 0.235 | 0.000 (0/4) |",
    "",
    "Against c's first measurement (0.857 / 0.188, English recall 0.077) recall on unseen chat "
    "rose to 0.239 (English 0.214) at the same precision; issue #30's 0.95 is not met. Its "
    'three unmatched facts: a typo read into nonsense ("planing" -> "User has planing is '
    'every other on Monday at 10"), a request with a deictic that names nothing '
    '("用户希望排 meal plan 都按这个来"; the 16:8 fast it points to was missed) and a right '
    'instruction the labels word otherwise ("用户希望 review 代码的时候先说 bug 再说 style").',
    "",
    "That batch was then read (so its figure below is tuned). Across the four unseen batches' "
    "first measurements 7 of 15 false facts were wishes or instructions, so the checks of "
    "this round are on that kind first, each structural, each with new hand-written examples "
    "(`tests/test_fact_rules_precision.py`, `tests/test_fact_well_formed.py`) and about 90 "
    "further hand-written requests, hopes and complaints tried on them (not committed; the "
    "ones that became tests are in the test files): a wish that only points at its content "
    '("都按这个来", "照上次那样写", "就这么办", "do it like that", "the same way") or whose '
    'only object is a pronoun ("stop doing that", "don\'t mention it") gives nothing; so does '
    'a wish that is only its condition, the request cut off ("用户希望每次用户问助手天气"), '
    'the user\'s own hope for later read as a request after 以后 ("老了想去大理住", '
    '"有机会一定要去…", "…再说"), and a statement after "from now on" ("I\'m only '
    'drinking decaf" is no request); a liking whose object is cut off ("用户不爱看") is '
    'dropped. Garbles: a time fragment whose thing has a verb of its own ("planing is every '
    'other Monday at 10", "yoga is every Tuesday at 7") is no plan: the check is on the '
    'verb, not on the spelling ("planing" is an English word, so no word list would have '
    'caught it); "every (other)" is said before the day; an intention to change '
    '("我们打算下半年把车换成电车") is no change made. Recall by general readings, each kept '
    "only when it helped two batches and lowered no figure: an intention with its time "
    '("我们打算年后…", "我打算周末去上…课"; fresh, b, d), what the user does lately '
    '("我最近在戒糖", "最近在准备 AWS 的认证考试"; fresh, d), a firm and the work done '
    'there with the subject dropped or the firm in English ("现在在一家…创业公司写后端", '
    '"在一家 startup 做 backend"; realistic, c), relations by marriage (姐夫, 婆婆, '
    "mother-in-law; c, d), a relation coming to live with the user and when (c, d), and the "
    'way back of a trip ("…flying to Denver thurs night, back sunday"; c, d). Readings that '
    "would have helped d alone were not written (a relation word with no 我 opening a clause, "
    '"老婆怀孕五个月了"; a condition and a request with no comma between, "when you give me '
    'recipes use grams"; money figures). Before and after, same matcher (precision / '
    "recall):",
    "",
    "| batch | before (main b8ad00e) | after | gold facts |",
    "|---|---|---|---|",
    "| rules | 0.972 / 0.897 | 0.972 / 0.897 | 78 |",
    "| heldout | 0.968 / 0.411 | 0.968 / 0.411 | 73 |",
    "| realistic rules | 1.000 / 0.667 | 1.000 / 0.667 | 24 |",
    "| realistic heldout | 1.000 / 0.500 | 1.000 / 0.556 | 18 |",
    "| fresh | 1.000 / 0.667 | 1.000 / 0.800 | 15 |",
    "| unseen-2026-11-28 | 1.000 / 0.814 | 1.000 / 0.814 | 43 |",
    "| unseen-2026-11-28b | 1.000 / 0.491 | 1.000 / 0.509 | 53 |",
    "| unseen-2026-11-28c | 0.968 / 0.469 | 0.971 / 0.516 | 64 |",
    "| unseen-2026-11-28d | 0.850 / 0.239 | 0.917 / 0.310 | 71 |",
    "",
    "d's two unmatched facts are true facts its labels word otherwise: \"用户希望 review 代码的"
    '时候先说 bug 再说 style" and "用户最近在 intermittent fasting" (labelled "用户在做16:8'
    '间歇性断食…"). The gains are on batches the readings and checks were written from; the '
    "next unseen batch (`unseen-2026-11-28e`, written meanwhile by someone who saw none of "
    "this) is the honest figure. On the corrections scenarios' turns (below; not read for "
    'this round) the checks drop two garbles and nothing else: "User has Dentist cleaning is '
    'booked for on Sept 26 at 10am" and "User wants: they\'re sticking with her, …".',
    "",
    "The `unseen-2026-11-28e` batch (48 turns: zh 18, en 18, mixed 12; 32 positive with 61 gold "
    "facts, 16 negative) was written while round 4 was being made, by someone who had read "
    "neither the rules, their tests nor the other cases, committed before it was measured and "
    "measured once on main 5e541cb (round 4 merged). It has not been tuned on: its figure is "
    "the honest one on unseen chat.",
    "",
    "| unseen-2026-11-28e (first and only measurement) | cases | predicted | gold | P | R | "
    "neg. FP rate |",
    "|---|---|---|---|---|---|---|",
    "| all | 48 | 19 | 61 | 0.895 | 0.279 | 0.062 (1/16) |",
    "| zh | 18 | 9 | 21 | 1.000 | 0.429 | 0.000 (0/6) |",
    "| en | 18 | 5 | 26 | 0.800 | 0.154 | 0.000 (0/6) |",
    "| mixed | 12 | 5 | 14 | 0.800 | 0.286 | 0.250 (1/4) |",
    "",
    "The blind batches' first measurements, each on the rules of its time: c 0.857 / 0.188, d "
    "0.850 / 0.239, e 0.895 / 0.279 (precision / recall): recall on unseen chat rises round "
    "by round and precision holds near 0.9; issue #30's 0.95 is not met. e's two unmatched "
    'facts: "用户周一 blues" on a negative (a mood, nothing to keep) and "User\'s standup '
    'moved to 8:15am" (right, but the team\'s: labelled "User\'s team standup is at 8:15am").',
)
SUBJECT_WORDS = frozenset({"用户", "user", "users", "user's"})
MIN_COVERAGE = 0.5


def key_tokens(text: str) -> list[str]:
    """The content tokens of a fact text, without subject words or contained duplicates."""
    toks = list(dict.fromkeys(t.lower() for t in tokenize(text) if t.lower() not in SUBJECT_WORDS))
    return [t for t in toks if not any(t != o and t in o for o in toks)]


def coverage(pred: DerivedFact, gold_text: str) -> float:
    """Share of the gold fact's key tokens found in the predicted fact's text or value."""
    keys = key_tokens(gold_text)
    if not keys:
        return 0.0
    hay = f"{pred.text} {pred.value or ''}".lower()
    # a stem that is no substring of its word ("shopifi" of "Shopify") is found among the
    # prediction's own tokens, made by the same tokenizer
    own = {t.lower() for t in tokenize(hay)}
    return sum(1 for k in keys if k in hay or k in own) / len(keys)


def matches(pred: DerivedFact, gold: dict[str, str]) -> float:
    """The coverage when `pred` matches `gold` under the stated rule, else 0."""
    if pred.subject != gold["subject"]:
        return 0.0
    n_gold = len(key_tokens(gold["text"]))
    if len(key_tokens(pred.text)) > max(2 * n_gold, n_gold + 4):
        return 0.0
    cov = coverage(pred, gold["text"])
    return cov if cov >= MIN_COVERAGE else 0.0


def _kept_facts(case: ExtractionCase) -> list[DerivedFact]:
    """The new facts the case's turn adds after its `earlier` turns, through the write path."""
    store, keeper, ns = InMemoryStore(), EpisodeKeeper(), ("memories", "bench")
    day = datetime(2026, 1, 5, 9, tzinfo=timezone.utc)
    for n, said in enumerate(case.earlier):
        keeper.keep(store, ns, [{"role": "user", "text": said}], occurred_at=day + timedelta(n))
    kept = keeper.keep(
        store,
        ns,
        [{"role": "user", "text": case.text}],
        occurred_at=day + timedelta(len(case.earlier)),
        context=case.context,
    )
    out = []
    for fid in kept.fact_ids:
        rec = record_of_item(store.get(ns, fid))
        if rec is not None:
            meta = rec.metadata
            out.append(
                DerivedFact(
                    text=rec.text,
                    kind=meta.get("fact_kind", "fact"),
                    subject=meta.get("subject", "user"),
                    slot=rec.slot,
                    value=rec.value if isinstance(rec.value, str) else None,
                )
            )
    return out


def predict(case: ExtractionCase) -> list[DerivedFact]:
    """What the offline rules store for a case: `rule_facts` of its turn, or, after earlier
    turns, the facts the write path adds."""
    if case.earlier:
        return _kept_facts(case)
    facts = rule_facts([{"role": "user", "text": case.text}], context=case.context)
    return [f for f in facts if not f.forget]  # a forget request stores nothing


def score_case(case: ExtractionCase) -> dict[str, Any]:
    """Predictions for one case and their matching against its gold facts."""
    preds = predict(case)
    gold = [{"text": f.text, "subject": f.subject, "kind": f.kind} for f in case.facts]
    pairs = sorted(
        ((matches(p, g), pi, gi) for pi, p in enumerate(preds) for gi, g in enumerate(gold)),
        reverse=True,
    )
    used_p: set[int] = set()
    used_g: set[int] = set()
    kind_ok = 0
    for cov, pi, gi in pairs:
        if cov <= 0 or pi in used_p or gi in used_g:
            continue
        used_p.add(pi)
        used_g.add(gi)
        kind_ok += preds[pi].kind == gold[gi]["kind"]
    return {
        "id": case.id,
        "tp": len(used_p),
        "fp": len(preds) - len(used_p),
        "fn": len(gold) - len(used_g),
        "kind_ok": kind_ok,
        "negative": not gold,
        "preds": [
            p.model_dump(include={"text", "subject", "kind", "slot", "value"}) for p in preds
        ],
        "unmatched_preds": [preds[i].text for i in range(len(preds)) if i not in used_p],
        "missed_gold": [gold[i]["text"] for i in range(len(gold)) if i not in used_g],
    }


def _prf(rows: list[dict[str, Any]]) -> dict[str, Any]:
    tp = sum(r["tp"] for r in rows)
    fp = sum(r["fp"] for r in rows)
    fn = sum(r["fn"] for r in rows)
    negs = [r for r in rows if r["negative"]]
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return {
        "cases": len(rows),
        "predicted": tp + fp,
        "gold": tp + fn,
        "tp": tp,
        "precision": round(p, 3),
        "recall": round(r, 3),
        "f1": round(2 * p * r / (p + r), 3) if p + r else 0.0,
        "negatives": len(negs),
        "negative_fp_rate": round(sum(1 for n in negs if n["tp"] + n["fp"]) / len(negs), 3)
        if negs
        else 0.0,
        "kind_agreement": round(sum(x["kind_ok"] for x in rows) / tp, 3) if tp else None,
    }


def _batch(case: ExtractionCase) -> str:
    if case.batch:
        return f"{case.batch} "
    return "realistic " if case.cls in REALISTIC_CLASSES else ""


def evaluate(split: str | None = None) -> dict[str, Any]:
    """Scores per split (issue #13's set, then the realistic batch apart), and per class and
    language within each split."""
    cases = load_extraction()
    out: dict[str, Any] = {}
    names = ("rules", "heldout") if split is None else (split,)
    parts = [(n, "") for n in names] + [(n, "realistic ") for n in names]
    parts += [("heldout", f"{b} ") for b in HELD_OUT_BATCHES] if "heldout" in names else []
    for name, batch in parts:
        rows = [(c, score_case(c)) for c in cases if c.split == name and _batch(c) == batch]
        by_cls: dict[str, list[dict[str, Any]]] = defaultdict(list)
        by_lang: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for c, r in rows:
            by_cls[c.cls].append(r)
            by_lang[c.lang].append(r)
        out[f"{batch}{name}"] = {
            "all": _prf([r for _, r in rows]),
            "by_class": {k: _prf(v) for k, v in sorted(by_cls.items())},
            "by_lang": {k: _prf(v) for k, v in sorted(by_lang.items())},
            "errors": [r for _, r in rows if r["fp"] or r["fn"]],
        }
    return out


def timing() -> dict[str, float]:
    """Milliseconds per `rule_facts` call over every dev case (p50/p95/max), after warm-up."""
    cases = load_extraction()
    for c in cases[:5]:
        rule_facts([{"role": "user", "text": c.text}], context=c.context)
    ms = []
    for c in cases:
        if c.earlier:
            continue
        t0 = time.perf_counter()
        rule_facts([{"role": "user", "text": c.text}], context=c.context)
        ms.append((time.perf_counter() - t0) * 1000)
    ms.sort()
    return {
        "p50_ms": round(ms[len(ms) // 2], 3),
        "p95_ms": round(ms[int(len(ms) * 0.95)], 3),
        "max_ms": round(ms[-1], 3),
    }


def _first_user(case: CorrectionCase, words: tuple[str, ...], after: int = -1) -> int | None:
    for i, t in enumerate(case.turns):
        if i > after and t.role == "user" and any(w.lower() in t.text.lower() for w in words):
            return i
    return None


def _turn_facts(case: CorrectionCase, i: int) -> list[DerivedFact]:
    prev = case.turns[i - 1].text if i > 0 and case.turns[i - 1].role == "assistant" else None
    return rule_facts([{"role": "user", "text": case.turns[i].text}], context=prev)


def corrections_slots() -> dict[str, Any]:
    """Per question: does the turn with the new value give a fact whose slot matches the old?"""
    per_cat: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    details = []
    for case in load_corrections():
        for q in case.questions:
            if case.category == "both_stand":
                old_i = _first_user(case, q.current[:1])
                new_i = _first_user(case, q.current[1:], after=old_i) if old_i is not None else None
            else:
                old_i = _first_user(case, q.superseded)
                # a self-correction states the old and the new value in the same turn
                same = 1 if case.category == "self_correction" else 0
                start = old_i - same if old_i is not None else -1
                new_i = _first_user(case, q.current, after=start)
            row = per_cat[case.category]
            row["questions"] += 1
            if old_i is None or new_i is None:
                continue
            old, new = _turn_facts(case, old_i), _turn_facts(case, new_i)
            same_turn = old_i == new_i  # a self-correction: nothing earlier to close
            old_slots = {f.slot for f in old if f.slot} if not same_turn else set()
            new_has_value = [f for f in new if any(w.lower() in f.text.lower() for w in q.current)]
            agree = [f for f in new if f.slot and f.slot in old_slots]
            old_values = {f.value for f in old if f.value}
            linked = agree or [f for f in new if f.corrects and f.corrects in old_values]
            row["old_fact"] += bool(old)
            row["new_fact"] += bool(new)
            row["new_fact_with_current_value"] += bool(new_has_value)
            row["slot_agrees"] += bool(agree)
            row["slot_or_corrects_link"] += bool(linked)
            row["marked_correction"] += any(f.correction for f in new)
            row["old_value_in_new_fact"] += any(
                w.lower() in f.text.lower() for f in new for w in q.superseded
            ) and not any(f.corrects for f in new)
            details.append(
                {
                    "id": case.id,
                    "category": case.category,
                    "old": [(f.slot, f.text) for f in old],
                    "new": [(f.slot, f.text) for f in new],
                    "slot_agrees": bool(agree),
                }
            )
    return {"by_category": {k: dict(v) for k, v in sorted(per_cat.items())}, "details": details}


def _md_table(title: str, groups: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        f"### {title}",
        "",
        "| group | cases | predicted | gold | precision | recall | F1 | negatives | neg. FP rate |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for k, m in groups.items():
        lines.append(
            f"| {k} | {m['cases']} | {m['predicted']} | {m['gold']} | {m['precision']:.3f} | "
            f"{m['recall']:.3f} | {m['f1']:.3f} | {m['negatives']} | {m['negative_fp_rate']:.3f} |"
        )
    return [*lines, ""]


def to_markdown(res: dict[str, Any], corr: dict[str, Any] | None, command: str) -> str:
    """The results as Markdown tables."""
    lines = ["# Offline fact rules: extraction dev set", "", f"Command: `{command}`", ""]
    lines.append(
        "Matching: same subject, ≥ 50 % of the gold fact's key tokens (search tokens minus "
        "stop and subject words) present in the predicted text or value (or among its own "
        "tokens: a stem such as 'shopifi' is no substring of 'Shopify'), and the prediction "
        "at most max(2×, +4) the gold's key-token count. See the script's docstring."
    )
    lines += ["", *NOTES, ""]
    for split, r in res.items():
        lines += _md_table(f"{split}: overall", {"all": r["all"]})
        lines += _md_table(f"{split}: by language", r["by_lang"])
        lines += _md_table(f"{split}: by class", r["by_class"])
    if corr:
        lines += [
            "### corrections.jsonl: slot agreement between the old and the new value's facts",
            "",
            "| category | questions | old turn gave a fact | new turn gave a fact | "
            "… with the current value | slots agree | slot or `corrects` links to old | "
            "marked as correction | old value restated |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for cat, row in corr["by_category"].items():
            lines.append(
                f"| {cat} | {row.get('questions', 0)} | {row.get('old_fact', 0)} | "
                f"{row.get('new_fact', 0)} | {row.get('new_fact_with_current_value', 0)} | "
                f"{row.get('slot_agrees', 0)} | {row.get('slot_or_corrects_link', 0)} | "
                f"{row.get('marked_correction', 0)} | "
                f"{row.get('old_value_in_new_fact', 0)} |"
            )
        lines += [
            "",
            "Per question: the old turn is the first user turn naming a superseded word, the new "
            "turn the first later one naming a current word (for `self_correction` the same turn, "
            "so no slot can agree there: what counts is that the old value is not restated as "
            "current). In `both_stand` (first and later current values) a slot agreement would "
            "close a fact that still stands, so lower is better there.",
            "",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("rules", "heldout"), default=None)
    ap.add_argument("--out", type=Path, default=None, help="JSON results path")
    ap.add_argument("--md", type=Path, default=None, help="Markdown results path")
    ap.add_argument("--show-errors", action="store_true", help="print every miss and false fact")
    args = ap.parse_args(argv)
    res = evaluate(args.split)
    corr = corrections_slots()
    speed = timing()
    command = "python benchmarks/fact_extraction.py " + " ".join(argv or sys.argv[1:])
    for split, r in res.items():
        a = r["all"]
        print(
            f"{split:18s} P={a['precision']:.3f} R={a['recall']:.3f} F1={a['f1']:.3f} "
            f"negFP={a['negative_fp_rate']:.3f} (pred {a['predicted']}, gold {a['gold']})"
        )
        for cls, m in r["by_class"].items():
            print(
                f"   {cls:26s} P={m['precision']:.3f} R={m['recall']:.3f} negFP={m['negative_fp_rate']:.3f}"
            )
        if args.show_errors:
            for e in r["errors"]:
                print(f"  {e['id']}: false={e['unmatched_preds']} missed={e['missed_gold']}")
    print(f"rule_facts per turn: {speed}")
    for cat, row in corr["by_category"].items():
        print(f"corrections {cat:16s} {dict(row)}")
    if args.show_errors:
        for d in corr["details"]:
            print(
                f"  {d['id']} {d['category']} agree={d['slot_agrees']} old={d['old']} new={d['new']}"
            )
    payload = {"command": command, "extraction": res, "corrections": corr, "timing": speed}
    write_json(args.out, payload, indent=1, newline=False)
    if args.md:
        md = to_markdown(res, corr, command)
        md += (
            f"\n### Speed\n\n`rule_facts` on one dev-set turn: p50 {speed['p50_ms']} ms, "
            f"p95 {speed['p95_ms']} ms, max {speed['max_ms']} ms (this machine, one process).\n"
        )
        write_text(args.md, md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
