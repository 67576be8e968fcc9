"""Readings of real chat the fact rules missed (issue #30, recall on unseen chat): shapes
people write in, each read by a general rule. Examples written for these tests, not dev-set
cases; each failed (no fact, or a garbled one) before its reading, and the negatives next to
them give no fact.
"""

from __future__ import annotations

import pytest
from _bench import load_benchmark

from langmem_plus.processors.facts.derived import DerivedFact
from langmem_plus.processors.facts.rules import rule_facts


def texts(text: str, context: str | None = None) -> list[str]:
    return [f.text for f in rule_facts([{"role": "user", "text": text}], context=context)]


# ------------------------------------------------ a request about how the assistant answers


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (
            "以后你回我消息别用那么多小标题了，直接说重点就行",
            "用户希望助手回复时别用那么多小标题了，直接说重点就行",
        ),
        ("以后回复我的时候少用表情", "用户希望助手回复时少用表情"),
        ("你以后回答我问题先给结论", "用户希望助手回复时先给结论"),
        ("以后跟我说话别用敬语", "用户希望助手跟用户说话别用敬语"),
    ],
)
def test_a_request_about_replies_names_the_assistant(text: str, want: str) -> None:
    assert texts(text) == [want]  # was "用户希望回用户消息…": the user answering themselves


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("以后订酒店记得选离地铁近的", "用户希望订酒店记得选离地铁近的"),
        ("以后给我推荐菜谱的时候记得避开香菜", "用户希望推荐菜谱的时候记得避开香菜"),
    ],
)
def test_remember_to_do_something_is_the_request_itself(text: str, want: str) -> None:
    assert texts(text) == [want]


def test_remember_that_the_user_is_something_is_still_a_fact() -> None:
    assert texts("以后推荐餐厅的时候记住我不吃辣") == ["用户不吃辣"]


# ------------------------------------------- English chat drops the "I" it is said by


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (
            "been doing yoga on tuesday nights lately",
            ["User has been doing yoga on tuesday nights"],
        ),
        (
            "Been taking the bus to school for the past few weeks",
            ["User has been taking the bus to school"],
        ),
        (
            "meeting w/ the landlord mon 9am, then driving to Boston sun afternoon for a "
            "friend's birthday",
            [
                "User has meeting w/ the landlord on Monday at 9am",
                "User is driving to Boston on Sunday afternoon for a friend's birthday",
            ],
        ),
        (
            "dentist on the 3rd at 10, then flying to Miami that evening for my aunt's funeral",
            [
                "User has dentist on the 3rd at 10",
                "User is flying to Miami on the 3rd in the evening for their aunt's funeral",
            ],
        ),
        (
            "starting at Figma on March 3 as a product designer!!",
            ["User starts at Figma on March 3 as a product designer"],
        ),
        (
            "train to Leeds sat 7:15am out of Kings Cross",
            ["User has train to Leeds on Saturday at 7:15am out of Kings Cross"],
        ),
    ],
)
def test_a_clause_with_its_subject_dropped_is_the_users(text: str, want: list[str]) -> None:
    assert texts(text) == want


@pytest.mark.parametrize(
    "text",
    [
        "I've been waiting for an hour",
        "been feeling awful lately",
        "been there done that",
        "heading out now",
        "starting to think this was a bad idea",
        "leaving the office now, ttyl",
    ],
)
def test_a_wait_a_mood_or_a_moment_is_no_habit_or_plan(text: str) -> None:
    assert texts(text) == []


def test_a_dropped_subject_after_someone_else_goes_on_about_them() -> None:
    # "been working at a hospital" is the brother's, never the user's
    assert not any(
        t.startswith("User ")
        for t in texts("my brother moved to Austin, been working at a hospital there ever since")
    )


# ------------------------------------------------ a fact said in a reason or a time clause


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (
            "the upstairs neighbours are drilling again and since I work from home I hear all of it",
            ["User works from home"],
        ),
        (
            "can't come to the bbq because I'm vegetarian and they only do burgers",
            ["User is vegetarian"],
        ),
        (
            "I've been walking to work ever since the office moved to Midtown",
            ["User has been walking to work", "User's office moved to Midtown"],
        ),
        (
            "mornings are chaos since they moved my shift to 6am",
            ["User's shift moved to 6am"],
        ),
    ],
)
def test_a_fact_in_a_subordinate_clause_is_read(text: str, want: list[str]) -> None:
    assert texts(text) == want


@pytest.mark.parametrize(
    "text",
    [
        "if I work from home I get more done",
        "when I live in Berlin I'll learn German",
        "I'm cranky since I didn't sleep",
    ],
)
def test_a_condition_or_a_passing_state_is_no_fact(text: str) -> None:
    assert texts(text) == []


@pytest.mark.parametrize(
    ("text", "question"),
    [
        ("can't make it thursday", False),
        ("didn't sleep at all", False),
        ("don't you think so", True),
        ("isn't it a holiday", True),
        ("can I ask something", True),
    ],
)
def test_a_negative_auxiliary_opens_a_statement_unless_it_asks_someone(
    text: str, question: bool
) -> None:
    from langmem_plus.text.clauses import is_question

    assert is_question(text) is question


# ------------------------------------------ a relation said by name first, or as "the kids"


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (
            "Priya (my sister in Leeds) just got promoted to head nurse!!",
            "User's sister Priya just got promoted to head nurse",
        ),
        ("Mochi (my kitten) turned 1 yesterday", "User's kitten Mochi turned 1 yesterday"),
        (
            "the kids start at the new swim club in March",
            "User's kids start at the new swim club in March",
        ),
        ("the children switch schools in September", "User's children switch schools in September"),
    ],
)
def test_a_relation_named_first_or_as_the_kids_is_the_users(text: str, want: str) -> None:
    found = rule_facts([{"role": "user", "text": text}])
    assert [(f.text, f.subject) for f in found] == [(want, "third_person")]


@pytest.mark.parametrize(
    "text",
    [
        "the kids were so loud at the park today",
        "Sam (my coworker) is so annoying",
        "the kids start school tomorrow",
        "my golden years are behind me",
    ],
)
def test_a_passing_remark_about_a_relation_is_no_fact(text: str) -> None:
    assert texts(text) == []


# ------------------------------------------------------- what the user is set to do, and when


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (
            "anyway I'm finally running the Berlin marathon on Sept 21",
            "User is running the Berlin marathon on Sept 21",
        ),
        (
            "and I'm going full-time at the bakery starting next month",
            "User is going full-time at the bakery starting next month",
        ),
        ("I'm switching to the night shift", "User is switching to the night shift"),
    ],
)
def test_what_the_user_is_set_to_do_is_a_plan(text: str, want: str) -> None:
    assert texts(text) == [want]


@pytest.mark.parametrize(
    "text",
    [
        "I'm doing nothing this weekend",
        "I'm doing laundry",
        "I'm running late",
        "I'm starting to hate this job",
        "I'm taking it easy on Sunday",
        "I'm doing great on Saturday lol",
        "I'm switching to the other tab",
    ],
)
def test_a_moment_or_nothing_named_is_no_plan(text: str) -> None:
    assert texts(text) == []


# ------------------------------------------------------------ chat spellings and openers


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("pls stop suggesting mushroom dishes", "User wants: stop suggesting mushroom dishes"),
        ("plz always answer in bullet points", "User wants: always answer in bullet points"),
        ("fwiw our builds run on Bazel", "The user's team's builds run on Bazel"),
        ("tbf I live in Leeds", "User lives in Leeds"),
    ],
)
def test_chat_spellings_read_as_their_words(text: str, want: str) -> None:
    assert texts(text) == [want]


def test_a_request_is_cut_before_a_reason_about_someone_unnamed() -> None:
    # the request stands; "she never reads past that" names no one, so it is not kept
    assert texts(
        "from now on when you write to my landlord keep it short, she never reads past line two"
    ) == ["User wants: when the assistant writes to their landlord keep it short"]
    assert texts("don't mention her anymore") == []  # the head itself names no one


# --------------------------------------------------------- a team's tools, said with any verb


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("we track bugs in Linear", ["The user's team tracks bugs in Linear"]),
        ("we write everything in Rust", ["The user's team writes everything in Rust"]),
        (
            "our frontend is React, hosted on Vercel",
            [
                "The user's team's frontend is React",
                "The user's team's frontend is hosted on Vercel",
            ],
        ),
    ],
)
def test_a_team_tool_said_with_another_verb_or_a_participle(text: str, want: list[str]) -> None:
    assert texts(text) == want


@pytest.mark.parametrize(
    "text", ["we test it tomorrow", "we write a lot of tests", "we store stuff wherever"]
)
def test_a_team_verb_without_a_named_tool_is_no_fact(text: str) -> None:
    assert texts(text) == []


# ------------------------------------------------------------- Chinese and code-switched


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("下周三上午十点约了复查", "用户下周三上午十点约了复查"),
        ("我姐怀孕了，预产期是明年五月", "用户的姐姐怀孕了，预产期是明年五月"),
        ("我嫂子下个月预产期", "用户的嫂子下个月预产期"),  # a relation by marriage (round 4)
        ("我表姑下个月预产期", None),  # 表姑 is no relation the rules know: nothing guessed
        ("电脑换成 ThinkPad 了，旧的 Mac 给我爸了", "用户的电脑换成了ThinkPad"),
        ("早就换 Arc 了，Chrome 太吃内存", "用户现在用Arc"),
    ],
)
def test_chinese_plans_relations_and_switches(text: str, want: str | None) -> None:
    assert texts(text) == ([want] if want else [])


@pytest.mark.parametrize("text", ["早就换了", "换 A 了", "下周三上午十点约了", "我同事又怀孕了吗"])
def test_a_switch_or_a_booking_that_names_nothing_is_no_fact(text: str) -> None:
    assert texts(text) == []


# ------------------------------------ he / she answering the relation the assistant asked about


def test_she_answering_the_assistants_question_is_that_relation() -> None:
    found = rule_facts(
        [{"role": "user", "text": "nope she moved in May, Denver now. works at a middle school"}],
        context="How's your aunt doing in Boise?",
    )
    assert [(f.text, f.subject) for f in found] == [
        ("User's aunt moved in May, Denver now", "third_person"),
        ("User's aunt works at a middle school", "third_person"),
    ]
    assert all(f.correction for f in found)  # "nope" still says the old value is over


def test_ta_answering_the_assistants_question_is_that_relation() -> None:
    assert texts("她都上高一了，现在住校", context="你上次说儿子在读初三，他最近怎么样？") == []
    assert texts("她都上高一了，现在住校", context="你上次说女儿在读初三，她最近怎么样？") == [
        "用户的女儿都上高一了，现在住校"
    ]


@pytest.mark.parametrize(
    ("text", "context"),
    [
        ("she is great", "How are your mom and your sister?"),  # two relations: whose?
        ("she moved last year", "How's the new job going?"),  # no relation asked about
        ("he retired last month", None),
    ],
)
def test_he_or_she_with_no_one_relation_asked_about_gives_nothing(
    text: str, context: str | None
) -> None:
    assert texts(text, context=context) == []


def test_a_relations_clause_is_not_continued_by_a_wish_or_another_relation() -> None:
    assert texts("the kids start school in September, wish me luck") == [
        "User's kids start school in September"
    ]
    assert texts("my nephew Jonah just started at MIT, my niece is at Yale") == [
        "User's nephew Jonah just started at MIT"
    ]


def test_a_clause_with_no_subject_after_a_relation_goes_on_about_them() -> None:
    assert texts("my brother moved to Austin, works at a hospital there") == [
        "User's brother moved to Austin",
        "User's brother works at a hospital there",
    ]


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("我们前端统一用 Vue 了", "用户团队的前端统一用 Vue 了"),
        ("我们 release 周期是每周一次，其实太频繁了", "用户团队的release 周期是每周一次"),
        ("天天从回龙观骑车到西二旗，风雨无阻", "用户天天从回龙观骑车到西二旗"),
        ("我每天挤4号线上班，真的累", "用户每天挤4号线上班"),
    ],
)
def test_chinese_team_parts_and_commutes(text: str, want: str) -> None:
    assert texts(text) == [want]


@pytest.mark.parametrize(
    "text", ["我们后端今天又挂了", "我们 release 又延期了", "每天坐地铁", "今天坐地铁上班"]
)
def test_a_team_incident_or_a_trip_of_the_day_is_no_fact(text: str) -> None:
    assert texts(text) == []


# ----------------------------------------- a consequence said without a comma is its own


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (
            "I've got a thesis defense on May 9 so that'll have to wait",
            ["User has thesis defense on May 9"],
        ),
        (
            "my mom's surgery got moved to Friday so I'm flying home Thursday to be there",
            [
                "User's mother's surgery got moved to Friday",
                "User is flying home on Thursday to be there",
            ],
        ),
    ],
)
def test_a_clause_and_its_so_are_read_apart(text: str, want: list[str]) -> None:
    assert texts(text) == want


@pytest.mark.parametrize(
    "text", ["it's raining so it's a movie night", "I'm heading out now so ttyl"]
)
def test_a_consequence_of_the_moment_is_no_fact(text: str) -> None:
    assert texts(text) == []


# ------------------------------------------- someone moved the user's thing; a job's first day


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("the vet moved my appointment to Nov 2, same time", "User's appointment moved to Nov 2"),
        ("we moved the party to Sept 20, the venue double-booked", "User's party moved to Sept 20"),
        ("first day at Notion tomorrow, wish me luck", "User starts at Notion tomorrow"),
        ("my first day at Canva is Monday", "User's first day at Canva is Monday"),
    ],
)
def test_someone_moved_the_users_thing_and_a_first_day(text: str, want: str | None) -> None:
    assert texts(text) == ([want] if want else [])


@pytest.mark.parametrize(
    "text",
    [
        "they moved the patient to ICU",
        "we moved the couch to the bedroom",
        "Sarah moved my meeting to 3pm today",
    ],
)
def test_someone_elses_thing_or_a_move_of_the_day_is_no_fact(text: str) -> None:
    assert texts(text) == []


# ------------------------------------------------------------------ the dev set, as a floor


def test_the_matcher_finds_a_stem_that_is_no_substring_of_its_word() -> None:
    # the tokenizer stems "Shopify" to "shopifi": found among the prediction's own tokens
    fe = load_benchmark("fact_extraction")
    pred = DerivedFact(text="User starts at Shopify tomorrow", kind="event")
    assert fe.coverage(pred, "User starts a new job at Shopify") >= 0.5


def test_the_unseen_batches_keep_precision_and_this_rounds_recall() -> None:
    # issue #30: read for recall in this round, they stay at P >= 0.95, and recall does not
    # fall below what the readings reached (0.651 / 0.226 / 0.188 before them)
    res = load_benchmark("fact_extraction").evaluate()
    floors = {"": 0.81, "b": 0.49, "c": 0.46}
    for suffix, recall in floors.items():
        part = res[f"unseen-2026-11-28{suffix} heldout"]["all"]
        assert part["precision"] >= 0.95, (suffix, part)
        assert part["recall"] >= recall, (suffix, part)
    assert res["heldout"]["all"]["precision"] >= 0.95, res["heldout"]["all"]


# ------------------------------------------------ round 4: intentions, practices, firms


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("我打算过完年去考个潜水证，最近在攒钱", "用户打算过完年去考个潜水证"),
        ("然后我们打算下半年把车换成电车", "用户打算下半年把车换成电车"),
        ("我准备周末去上陶艺课", "用户打算周末去上陶艺课"),
    ],
)
def test_an_intention_with_its_time_is_a_plan(text: str, want: str) -> None:
    assert want in texts(text)


@pytest.mark.parametrize(
    "text",
    [
        "我们组打算下个月上线新版本",  # the team's, not the user's
        "我打算明年要是有钱就换车",  # a condition, no plan
        "你打算周末干嘛",
        "我打算周末去吗？",
    ],
)
def test_an_intention_that_is_not_the_users_plan_gives_no_plan(text: str) -> None:
    assert not any(t.startswith("用户打算") for t in texts(text))


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("另外我这阵子在减脂，每周练三次", "用户最近在减脂"),
        ("我最近在备考 CFA 二级", "用户最近在备考 CFA 二级"),
        ("我最近在 keto diet", "用户最近在 keto diet"),
    ],
)
def test_what_the_user_is_doing_lately_is_a_fact(text: str, want: str) -> None:
    assert want in texts(text)


@pytest.mark.parametrize(
    "text", ["我最近在想要不要辞职", "我最近在家", "我最近在忙", "我最近在等你回复"]
)
def test_a_thought_a_wait_or_a_place_lately_gives_nothing(text: str) -> None:
    assert texts(text) == []


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("现在在一家做智能家居的公司写前端，挺累的", "用户在一家做智能家居的公司写前端"),
        ("我现在在一家 startup 做 growth", "用户在一家 startup 做 growth"),
    ],
)
def test_a_firm_and_the_work_done_there_with_the_subject_dropped(text: str, want: str) -> None:
    assert want in texts(text)


# ------------------------------------------------ round 4: relations by marriage, moving in


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("对了我姐夫是牙医，有事可以问他", "用户的姐夫是牙医"),
        ("我婆婆退休了", "用户的婆婆退休了"),
        ("my sister-in-law works at Stripe", "User's sister-in-law works at Stripe"),
    ],
)
def test_a_relation_by_marriage_is_a_relation(text: str, want: str) -> None:
    assert want in texts(text)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (
            "oh and my father-in-law is moving in with us next month, wish me luck",
            "User's father-in-law is moving in with the user next month",
        ),
        (
            "my dad is coming to live with us in the fall since the stairs at his place are too much",
            "User's father is moving in with the user in the fall",
        ),
    ],
)
def test_a_relation_coming_to_live_with_the_user(text: str, want: str) -> None:
    assert texts(text) == [want]


@pytest.mark.parametrize(
    "text", ["my brother is coming to stay with me next week", "my mom is moving in with us"]
)
def test_a_visit_or_an_undated_move_in_is_no_moving_in(text: str) -> None:
    assert not any("moving in" in t for t in texts(text))


# ------------------------------------------------ round 4: the way back of a trip


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (
            "flying to Chicago fri morning for a conference, back monday",
            "User returns from Chicago on Monday",
        ),
        (
            "train to Boston sat 9am, back the following tues",
            "User returns from Boston the following Tuesday",
        ),
    ],
)
def test_the_way_back_after_a_trip_is_its_own_plan(text: str, want: str) -> None:
    found = texts(text)
    assert want in found
    assert not any("back" in t for t in found)


@pytest.mark.parametrize("text", ["back sunday", "gym mon 7am, back to work tuesday"])
def test_back_with_no_trip_before_it_is_no_return(text: str) -> None:
    assert not any("returns" in t or "back" in t for t in texts(text))
