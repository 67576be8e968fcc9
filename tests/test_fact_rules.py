"""The precision-first offline fact rules (`rule_facts`, issue #13): what they store, what they
must not store, and that they never raise on any text."""

from __future__ import annotations

import pytest
from _bench import load_benchmark
from hypothesis import given, settings
from hypothesis import strategies as st

from langmem_plus.errors import ValidationError
from langmem_plus.processors.facts.derived import DerivedFact
from langmem_plus.processors.facts.rules import rule_facts


def facts_of(text: str, context: str | None = None) -> list[DerivedFact]:
    return rule_facts([{"role": "user", "text": text}], context=context)


def one(text: str, context: str | None = None) -> DerivedFact:
    found = facts_of(text, context)
    assert len(found) == 1, found
    return found[0]


# --------------------------------------------------------------------------- positives

# (text, context, subject, words that must all be in the fact, slot or None for "any")
POSITIVE = [
    # value changes without a marker word
    (
        "瑜伽课改到周六早上了，周四晚上那个老师走了",
        None,
        "user",
        ["瑜伽课", "周六早上"],
        "瑜伽课.time",
    ),
    ("嗯…搬到望京快两个月了，通勤方便多了😌", None, "user", ["望京"], "home.location"),
    ("房租涨到4800了，心累", None, "user", ["房租", "4800"], "rent"),
    (
        "been on a Pixel 8 since May, the camera is unreal tbh",
        None,
        "user",
        ["Pixel 8", "May"],
        "phone",
    ),
    (
        "standup got moved to 9:30 so mornings are rough now",
        None,
        "user",
        ["standup", "9:30"],
        "standup.time",
    ),
    (
        "Switched my editor from VS Code to Zed，启动快多了",
        None,
        "user",
        ["Zed", "VS Code"],
        "editor",
    ),
    # preferences without a like/hate verb
    ("香菜我是一口都不吃的，闻着就难受🤢", None, "user", ["不吃", "香菜"], None),
    ("甜豆花？不存在的，我只吃咸的", None, "user", ["只吃", "咸"], None),
    (
        "aisle seat or I'm cranky for the whole flight lol",
        None,
        "user",
        ["prefers", "aisle seat"],
        None,
    ),
    ("no dairy for me, it wrecks my stomach", None, "user", ["dairy"], None),
    (
        "I'm not a morning person at all, please don't book anything before 10",
        None,
        "user",
        ["not a morning person"],
        None,
    ),
    # team / project facts with a we/our subject
    ("我们公司用飞书，不用钉钉，别给我推荐钉钉的插件", None, "team", ["飞书"], None),
    (
        "我们 team 的 CI 跑在 GitHub Actions 上，self-hosted runner",
        None,
        "team",
        ["GitHub Actions"],
        None,
    ),
    ("our staging db is Postgres 15, prod is still on 13", None, "team", ["Postgres 15"], None),
    (
        "we deploy with ArgoCD to three clusters, so keep that in mind",
        None,
        "team",
        ["ArgoCD"],
        None,
    ),
    # life events told as news
    ("驾照终于拿到了！！科目三一把过🎉", None, "user", ["拿到", "驾照"], None),
    ("我下周一入职新公司啦😆", None, "user", ["入职"], "job"),
    ("Got engaged last night!!! 💍 still can't believe it", None, "user", ["engaged"], None),
    ("OMG we're pregnant!!! 😭", None, "user", ["pregnant"], "pregnancy"),
    ("Guess what, I got my driver's license!", None, "user", ["got their driver's license"], None),
    ("好消息！我们订婚了💍", None, "user", ["订婚"], "marital_status"),
    # standing instructions, including a garble-free rewrite of requests
    ("以后解释东西先给结论，再说原因，我没耐心看长篇", None, "user", ["希望", "先给结论"], None),
    ("从现在开始，给我推荐餐厅的时候避开海鲜", None, "user", ["希望", "避开海鲜"], None),
    (
        "from now on, answer in metric units, I don't do imperial",
        None,
        "user",
        ["metric units"],
        None,
    ),
    ("别再给我推荐健身房了，我不会去的", None, "user", ["希望", "别再", "推荐健身房"], None),
    (
        "please always reply in Spanish, I'm practicing",
        None,
        "user",
        ["always reply in Spanish"],
        None,
    ),
    ("don't use emojis with me, ever", None, "user", ["emojis with the user"], None),
    ("ok cool. also my team uses Terraform for everything", None, "team", ["Terraform"], None),
    ("你以后直接叫我小周", None, "user", ["用户希望被称为小周"], "user.preferred_name"),
    ("叫我老王就行，别叫哥", None, "user", ["用户希望被称为老王"], "user.preferred_name"),
    (
        "Please don't call me sir, I'm not 80 lol, just Dan",
        None,
        "user",
        ["called Dan", "not sir"],
        "user.preferred_name",
    ),
    ("I use she/her pronouns btw", None, "user", ["she/her"], "user.pronouns"),
    # third persons: the fact is about them, never the user
    (
        "介绍一下我家狗子：柯基，叫豆包，两岁，天天拆家🐶",
        None,
        "third_person",
        ["狗", "豆包"],
        "dog.name",
    ),
    ("我老婆在协和当护士，三班倒", None, "third_person", ["妻子", "协和", "护士"], None),
    (
        "my sister just moved to Austin for a job at Dell",
        None,
        "third_person",
        ["sister", "Austin"],
        None,
    ),
    (
        "Thanks for that, and btw my son's name is Leo, he's 7",
        None,
        "third_person",
        ["son", "Leo"],
        "son.name",
    ),
    # plans written as fragments
    ("周四下午四点 剪头发", None, "user", ["周四下午四点", "剪头发"], None),
    ("周五 3pm dentist，别让我忘了", None, "user", ["周五", "下午3点", "dentist"], None),
    ("dentist tmrw 9am ugh", None, "user", ["dentist", "tomorrow", "9am"], None),
    (
        "Thursday 6pm parent-teacher conference",
        None,
        "user",
        ["Thursday", "6pm", "parent-teacher"],
        None,
    ),
    (
        "I have a job interview on Friday at 2pm, wish me luck",
        None,
        "user",
        ["job interview", "Friday", "2pm"],
        None,
    ),
    # the second clause of a compound sentence
    ("哈哈好的，对了我下个月要去日本玩一周", None, "user", ["下个月", "日本"], None),
    (
        "ok thanks, btw I'm allergic to shellfish so keep that in mind",
        None,
        "user",
        ["allergic to shellfish"],
        "allergy.shellfish",
    ),
    (
        "Long day lol, also I'm vegetarian now so no chicken recipes",
        None,
        "user",
        ["vegetarian"],
        "diet",
    ),
    # remember ... (the aside after it is not part of the fact)
    ("记一下我的车位号是 B2-117，老是忘", None, "user", ["车位号", "B2-117"], "parking_spot"),
    ("记得我乳糖不耐受啊，奶制品就别推荐了", None, "user", ["乳糖不耐受"], "lactose"),
    (
        "remember I'm left-handed, so recommend tools accordingly",
        None,
        "user",
        ["left-handed"],
        "handedness",
    ),
    # long, filler-laden and mixed turns
    (
        "嗯嗯好的～对了跟你说下，我下个月开始在 Shopee 上班了，做数据分析😆",
        None,
        "user",
        ["Shopee", "上班"],
        "job",
    ),
    (
        "tbh I've been vegan since like 2019, so skip the meat stuff pls",
        None,
        "user",
        ["vegan"],
        "diet",
    ),
    (
        "btw our team switched from Jira to Linear last sprint, way less clunky",
        None,
        "team",
        ["Linear", "Jira"],
        "team.issue_tracker",
    ),
    (
        "ok so my partner Sam is allergic to nuts, keep that in mind for recipes",
        None,
        "third_person",
        ["Sam", "allergic to nuts"],
        None,
    ),
    ("Reminder: my passport expires in March 2025", None, "user", ["passport", "March 2025"], None),
    ("记得提醒我每周五交周报", None, "user", ["希望", "每周五交周报"], None),
    ("我妹今年考上了浙大，学计算机，全家都开心坏了", None, "third_person", ["妹妹", "浙大"], None),
    # a durable fact behind a mood
    ("心情好差，下周就要搬去成都了，舍不得这边的朋友", None, "user", ["下周", "成都"], None),
    # 'actually' / 其实 in a statement, not a question
    ("其实我对猫毛过敏，所以别推荐养猫", None, "user", ["猫毛", "过敏"], "allergy.猫毛"),
    (
        "Actually I'm allergic to penicillin, in case that matters",
        None,
        "user",
        ["penicillin"],
        None,
    ),
]


@pytest.mark.parametrize(("text", "context", "subject", "words", "slot"), POSITIVE)
def test_states_the_fact(
    text: str, context: str | None, subject: str, words: list[str], slot: str | None
) -> None:
    found = facts_of(text, context)
    hits = [f for f in found if f.subject == subject and all(w in f.text for w in words)]
    assert hits, found
    if slot is not None:
        assert hits[0].slot == slot
    assert all(f.source_turns == [0] for f in found)


def test_the_dog_name_is_never_the_users_name() -> None:
    found = facts_of("介绍一下我家狗子：柯基，叫豆包，两岁，天天拆家🐶")
    assert not any(f.subject == "user" and "豆包" in f.text for f in found)
    assert not any(f.slot == "user.name" for f in found)


def test_a_compound_relation_word_is_not_cut_in_half() -> None:
    assert not any(
        "brother -in-law" in f.text for f in facts_of("my brother-in-law is a cop in Dallas")
    )


def test_call_me_is_not_rewritten_into_a_garble() -> None:
    fact = one("你以后直接叫我小周")
    assert "用户叫用户" not in fact.text and "叫用户" not in fact.text
    assert fact.kind == "instruction" and fact.value == "小周"


def test_wife_birthday_and_reminder_are_two_facts() -> None:
    found = facts_of("记住 my wife 的生日是 9 月 3 号，提前一周提醒我")
    assert any(
        f.subject == "third_person" and "生日" in f.text and "9 月 3" in f.text for f in found
    )
    assert any(f.kind == "instruction" and "提醒" in f.text for f in found)


# --------------------------------------------------------------------------- corrections


@pytest.mark.parametrize(
    ("text", "new", "old"),
    [
        ("我的航班是CA1831，啊不是，CA1833，晚一个小时那班", "CA1833", "CA1831"),
        ("我住在3栋……不对，5栋，3栋是我以前住的", "5栋", "3栋"),
        ("plumber's coming Monday, no wait, Tuesday", "Tuesday", "Monday"),
        ("I'm 34, no, 35 as of last week lol", "35", "34"),
        ("会议定在3点，不对，4点", "4点", "3点"),
        ("我们约在星巴克，哦不对，是瑞幸", "瑞幸", "星巴克"),
        ("my flight's UA 882, no wait, UA 872", "UA 872", "UA 882"),
        ("我周三去体检……啊不对，是周四", "周四", "周三"),
        ("明天下午三点，哦不，四点，去医院复查", "四点", "三点"),
        ("我女儿今年五岁，哦不对，六岁了", "六岁", "五岁"),
        ("dinner with Jess is Friday, no wait, Saturday", "Saturday", "Friday"),
    ],
)
def test_self_correction_keeps_only_the_last_value(text: str, new: str, old: str) -> None:
    found = facts_of(text)
    assert found, text
    assert all(new in f.text and old not in f.text for f in found)
    assert all(f.correction and f.corrects == old for f in found)


def test_a_bare_no_is_not_a_self_correction() -> None:
    fact = one("我不喝酒，不，我是说啤酒都不碰")
    assert "不喝酒" in fact.text and not fact.correction


@pytest.mark.parametrize(
    "text",
    [
        "我想想啊，周一？周二？算了忘了",
        "the total is 45, wait no, let me recount",
        "刚刚那个不对，你重新生成一下",
    ],
)
def test_a_self_correction_that_never_settles_stores_nothing(text: str) -> None:
    assert facts_of(text) == []


@pytest.mark.parametrize(
    ("context", "text", "subject", "words", "old"),
    [
        (
            "你不是对花生过敏吗？",
            "不是那个，是腰果，花生吃了没事的",
            "user",
            ["腰果", "过敏"],
            "花生",
        ),
        ("你是菠萝过敏对吧？", "不是啦，是芒果过敏，菠萝没事", "user", ["芒果过敏"], "菠萝"),
        (
            "你老公在华为，可以让他帮忙看看？",
            "他早跳了啊，去年底去了小红书做推荐",
            "third_person",
            ["老公", "小红书"],
            "华为",
        ),
        ("你还在美团做后端吗？", "早就不在那了，年初跳去了蚂蚁", "user", ["蚂蚁"], None),
        (
            "How's your sister doing in Berlin?",
            "nope, she moved, she's in Lisbon now",
            "third_person",
            ["sister", "Lisbon"],
            None,
        ),
        (
            "Still at Google?",
            "nah I left Google in March, I'm at Stripe now",
            "user",
            ["Stripe"],
            "Google",
        ),
        (
            "你们组还在用 Jenkins 吗？",
            "早迁了，现在用 GitHub Actions",
            "team",
            ["GitHub Actions"],
            None,
        ),
        ("你爸还在银行上班吗？", "不在了，他去年退休了", "third_person", ["父亲", "退休"], None),
        (
            "也可以问问你在深圳做设计的表姐。",
            "害，她早就不在那边了，那都是老黄历了，前年就回杭州自己开工作室了",
            "third_person",
            ["表姐", "杭州"],
            None,
        ),
        ("你还住在上海吗？", "没有啦，我早就搬到杭州了", "user", ["杭州"], None),
        (
            "Want me to plan around your Tuesday yoga?",
            "haven't been in months, it's 6am spin twice a week now",
            "user",
            ["6am spin"],
            "Tuesday yoga",
        ),
    ],
)
def test_untied_correction_is_read_against_the_context(
    context: str, text: str, subject: str, words: list[str], old: str | None
) -> None:
    found = facts_of(text, context)
    hits = [f for f in found if f.subject == subject and all(w in f.text for w in words)]
    assert hits, found
    assert hits[0].correction
    if old is not None:
        assert hits[0].corrects == old


@pytest.mark.parametrize(
    ("context", "text"),
    [
        ("你说的是那家川菜馆吗？", "不是那家，是隔壁那家，算了不重要"),
        ("Is this the file you meant?", "no, the other one"),
        ("Was it the blue one?", "nah, never mind, doesn't matter"),
    ],
)
def test_a_transient_not_that_one_reply_stores_nothing(context: str, text: str) -> None:
    assert facts_of(text, context) == []


def test_an_untied_correction_closes_the_slot_of_the_fact_it_fixes() -> None:
    old = one("我表姐在深圳做室内设计")
    new = one(
        "害，她早就不在那边了，前年就回杭州自己开工作室了", "也可以问问你在深圳做设计的表姐。"
    )
    assert old.subject == new.subject == "third_person"
    assert old.slot == new.slot == "cousin.job"
    assert "不在" not in new.text and new.correction


def test_marker_correction_names_the_old_value() -> None:
    fact = one("更正一下，国庆不去成都了，改去西安")
    assert "西安" in fact.text and fact.correction and fact.corrects == "成都"


def test_a_later_value_of_the_same_slot_agrees_across_wordings() -> None:
    old = one("我住在望京")
    new = one("搬到回龙观快一个月了")
    assert old.slot == new.slot == "home.location"
    assert (old.value, new.value) == ("望京", "回龙观")


# --------------------------------------------------------------------------- negatives

NEGATIVE = [
    # one-off value changes and mood
    "这周在我妈家住几天，她做饭太香了，感觉要胖三斤",
    "今天换了条路线去公司，结果堵得更厉害",
    "今天 wifi 挂了只能开手机 hotspot 开会，卡成 PPT 了",
    "我今天换了个发型",
    "累死了😩",
    "今天好累啊，不想说话",
    "ugh mondays",
    "haha ok cool",
    "thanks, that's all for now",
    "搬家好累啊",
    # the same things without a stance
    "这家店的榴莲披萨好多人排队啊，网红店果然不一样",
    "The olives at this place look amazing in the photos",
    "我喜欢这个颜色",
    "I love this song",
    "我只吃了一口就饱了",
    "我不吃了，减肥",
    # one-off 'we' sentences and suggestions
    "咱们要不先聊点别的？这个话题有点沉重",
    "咱们组今天下午茶点的喜茶，葡萄那款好好喝",
    "我们组今天在 Slack 上吵了一下午",
    "We had a long meeting today and nothing got decided, as usual",
    "our PM is on vacation this week",
    "we had pizza for lunch",
    # news about others, not the user
    "新闻说今晚有台风要登陆，好吓人，窗户都贴上了",
    "刚刷到一个视频，有人考潜水证考哭了哈哈哈",
    "我同学今天拿到驾照了，羡慕",
    "What a day. Just... what a day.",
    # one-off requests
    "这次先给结论吧，我赶时间开会",
    "这次用英文回答吧",
    "Can you make this shorter?",
    "This time just give me the short version",
    "叫我起床好吗明天七点",
    # third persons without a durable fact, and questions
    "Some guy on the train was eating tuna out of the can, why",
    "my mom is driving me nuts",
    "my coworker keeps microwaving fish, why",
    "我妈说明天要降温",
    "隔壁 team 的人今天又在会议室吵起来了 lol",
    "How long do indoor cats usually live?",
    # a visit is not where the user lives; pets' and people's one-off news
    "快递拿到了",
    "同事今天离职了",
    "我爸妈下周来北京看我，住一周",
    "lol my dog just ate a whole sock",
    "我其实挺喜欢你这个回答的",
    "I love you, you're so helpful",
    "remember when we talked about Rust? anyway",
    "我们下周要不要一起吃饭？",
    # a time that is not a plan
    "四点了，好困",
    "现在剪个头发都要两百多，离谱",
    "haircuts are so expensive now, $60 for a trim??",
    "明天可能下雨吧",
    # remember ... as a question or a failure to remember
    "还记得上次那个电影叫啥吗？就是有个机器人的",
    "记不清了，算了",
    "I can't remember if I locked the door lol",
    # questions that contain actually / 其实
    "其实有没有更便宜一点的方案？",
    "Is it actually worth upgrading to the new iPhone?",
    "Actually, can you explain that again?",
    "其实 Rust 和 Go 哪个更适合写 CLI？",
    "你的 name 是什么？",
    "What should I call you?",
    "Call me when you're done? oh wait you can't lol",
    # one-off sarcastic complaints
    "Oh wonderful, it's raining on my one day off. Perfect.",
    "Sure, that went great /s",
    "嗯嗯，你说得都对🙂",
    "哇今天下雨了，我最喜欢下雨天出门了呢🙃",
    "I just love it when my code works on the first try /s",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_stores_nothing(text: str) -> None:
    assert facts_of(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "哇，又要加班到半夜，我可太爱加班了呢🙃",
        "我最喜欢周一早上的例会了，一开两小时，真棒呢",
        "又是 on-call 的周末，真是 best weekend ever 呢🙃",
        "Oh I just love 7am meetings /s",
        "我可太喜欢改需求了",
    ],
)
def test_sarcasm_is_stored_neither_literally_nor_reversed(text: str) -> None:
    assert facts_of(text) == []


def test_an_eye_roll_emoji_alone_is_not_irony() -> None:
    fact = one("vet for Biscuit — Wed 10:30, bring stool sample 🙃")
    assert fact.kind == "plan" and "Wednesday" in fact.text and "10:30" in fact.text


# --------------------------------------------------------------------------- exchanges


def test_facts_come_only_from_user_turns_with_their_indexes() -> None:
    turns = [
        {"role": "user", "text": "记一下我的车位号是 B2-117"},
        {"role": "assistant", "text": "好的，我叫小助手，我住在云端，我的车位号是 A1-001"},
        {"role": "user", "text": "周四下午四点 剪头发"},
    ]
    found = rule_facts(turns)
    assert [f.source_turns for f in found] == [[0], [2]]
    assert not any("A1-001" in f.text or "小助手" in f.text for f in found)


def test_an_assistant_turn_in_the_exchange_is_the_context_of_the_next_user_turn() -> None:
    turns = [
        {"role": "assistant", "text": "你不是对花生过敏吗？"},
        {"role": "user", "text": "不是那个，是腰果，花生吃了没事的"},
    ]
    (fact,) = rule_facts(turns)
    assert "腰果" in fact.text and fact.correction and fact.source_turns == [1]


@pytest.mark.parametrize(
    ("turns", "context"),
    [
        ("我叫小周", None),
        ([{"role": "system", "text": "x"}], None),
        ([{"role": "user", "text": 3}], None),
        ([{"role": "user"}], None),
        (["我叫小周"], None),
        ([{"role": "user", "text": "我叫小周"}], 5),
    ],
)
def test_bad_input_is_a_validation_error(turns: object, context: object) -> None:
    with pytest.raises(ValidationError):
        rule_facts(turns, context=context)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- properties

_ZH = "我的你他们是在叫去了吗呢吧不对以后记住周五下午三点狗猫老公喜欢讨厌过敏搬到改到其实"
_EN = "I my we our me call remember actually no wait from now on love hate is at Friday 3pm"
_PIECES = st.sampled_from(
    [
        *_ZH,
        *_EN.split(),
        " ",
        "，",
        ",",
        "。",
        "!",
        "…",
        "🙃",
        "😂",
        "/s",
        "lol",
        "哈哈",
        "3",
        "CA1833",
    ]
)
_TEXT = st.lists(_PIECES, max_size=40).map("".join) | st.text(max_size=200)
_SEPARATORS = set("，,。.!！?？;；…\n")


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["user", "assistant"]), _TEXT), max_size=5),
    st.none() | _TEXT,
)
def test_never_raises_and_never_reads_an_assistant_turn(
    turns: list[tuple[str, str]], context: str | None
) -> None:
    found = rule_facts([{"role": r, "text": t} for r, t in turns], context=context)
    users = {i for i, (r, _) in enumerate(turns) if r == "user"}
    for f in found:
        assert f.source_turns and set(f.source_turns) <= users
        assert f.text.strip()


@settings(max_examples=150, deadline=None)
@given(_TEXT, st.sampled_from(["?", "？", "吗？", " right?"]), st.none() | _TEXT)
def test_never_stores_a_question(body: str, mark: str, context: str | None) -> None:
    question = "".join(ch for ch in body if ch not in _SEPARATORS) + mark
    assert rule_facts([{"role": "user", "text": question}], context=context) == []


# --------------------------------------------------------------------------- benchmark


def test_heldout_precision_stays_at_or_above_target() -> None:
    result = load_benchmark("fact_extraction").evaluate("heldout")["heldout"]["all"]
    assert result["precision"] >= 0.90, result
    assert result["negative_fp_rate"] <= 0.05, result


# ------------------------------------------------- issue #30: wrong facts that used to pass


@pytest.mark.parametrize(
    ("text", "now", "old"),
    [
        ("其实我现在住在上海，不是北京", "上海", "北京"),
        ("目前我住在上海，不是北京。", "上海", "北京"),
        ("我说错了，我的生日是5月13号，不是5月3号", "5月13号", "5月3号"),
        ("其实我女儿今年六岁，不是五岁", "六岁", "五岁"),
        ("搞错了，我儿子是上三年级，不是二年级。", "三年级", "二年级"),
        ("Actually I live in Shanghai now, not Beijing", "Shanghai", "Beijing"),
        ("I live in Shanghai these days, not Beijing.", "Shanghai", "Beijing"),
        ("Actually, I work at Microsoft, not Google.", "Microsoft", "Google"),
        ("Correction: my flight is on Thursday, not Wednesday.", "Thursday", "Wednesday"),
    ],
)
def test_the_value_after_not_is_never_the_fact(text: str, now: str, old: str) -> None:
    # "住在上海，不是北京" once derived "用户现在住在北京": the value the user denied
    f = one(text)
    assert now in f.text and old not in f.text and old not in (f.value or "")
    assert f.correction and f.corrects == old


def test_a_self_correction_still_keeps_its_last_value() -> None:
    f = one("我周三去，不是，周四去")
    assert "周四" in f.text and "周三" not in f.text and f.corrects == "周三"


def test_statements_joined_by_and_are_read_one_by_one() -> None:
    got = [(f.text, f.slot, f.value) for f in facts_of("I live in Beijing and work as a nurse.")]
    assert got == [
        ("User lives in Beijing", "home.location", "Beijing"),
        ("User works as a nurse", "job", "as a nurse"),
    ]
    # the wife's hobby is never glued onto the user's
    assert [f.text for f in facts_of("I love hiking and my wife loves painting.")] == [
        "User loves hiking"
    ]


@pytest.mark.parametrize(
    "text",
    [
        "我每次报销都要填三张表，烦死了",
        "每次开会都要我来做记录，凭什么啊",
        "Ugh, my laptop fan sounds like a jet engine every time I open Slack, so annoying",
        "you always make these answers way too long, I'm so fed up",
    ],
)
def test_a_complaint_is_not_a_wish(text: str) -> None:
    assert [f for f in facts_of(text) if f.kind == "instruction"] == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("以后订机票你提醒我带护照", "用户希望订机票时提醒用户带护照"),
        (
            "以后我让你订酒店的时候，记得提醒我确认能不能免费取消",
            "用户希望订酒店时提醒用户确认能不能免费取消",
        ),
        ("你以后每次回答都先给结论", "用户希望每次回答都先给结论"),
    ],
)
def test_a_standing_request_to_the_assistant_reads_as_one(text: str, expected: str) -> None:
    f = one(text)
    assert (f.text, f.kind) == (expected, "instruction")
    assert "你" not in f.text


@pytest.mark.parametrize(
    "text",
    ["你帮我查一下明天上海的天气", "帮我把这段话翻译成英文", "Can you draft a polite email?"],
)
def test_a_one_off_request_to_the_assistant_is_no_fact(text: str) -> None:
    assert facts_of(text) == []


@pytest.mark.parametrize(
    ("text", "words", "slot"),
    [
        ("忘掉我住在北京这件事", ["北京"], "home.location"),
        ("把我喜欢喝美式这条忘掉吧", ["美式"], "likes.喝美式"),
        ("Forget that I live in Beijing", ["Beijing"], "home.location"),
        ("please forget I'm vegetarian", ["vegetarian"], "diet"),
        ("forget 我在学 Rust 这件事", ["Rust"], "learning.rust"),
    ],
)
def test_a_forget_request_names_the_fact_to_remove(text: str, words: list[str], slot: str) -> None:
    f = one(text)
    assert f.forget and f.slot == slot and all(w in f.text for w in words)


def test_a_forget_request_reads_the_rest_of_the_turn() -> None:
    got = facts_of("忘了我在美团上班这件事吧，我已经离职了，现在在京东")
    assert [f.forget for f in got] == [True, False]
    assert "美团" in got[0].text and "京东" in got[1].text


@pytest.mark.parametrize(
    "text",
    ["我今天忘了带工牌，被保安拦了半天", "I forgot my umbrella at the office again", "forget it"],
)
def test_forgetting_something_is_not_a_forget_request(text: str) -> None:
    assert [f for f in facts_of(text) if f.forget] == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("下周三我要去医院复查", "用户下周三要去医院复查"),
        ("My name is Alice.", "User's name is Alice"),
        ("我在成都住了五年了", "用户住在成都"),
        ("I don't drive", "User doesn't drive"),
        ("别忘了我对花生过敏", "用户对花生过敏"),
        ("请记住我叫李雷", "用户名叫李雷"),
        ("Don't forget that my locker code is 4512.", "User's locker code is 4512"),
    ],
)
def test_reads_that_were_garbled_or_missed(text: str, expected: str) -> None:
    assert one(text).text == expected


def test_a_name_has_one_slot_whatever_the_case() -> None:
    assert one("My name is Alice.").slot == one("my name is Alice").slot == "user.name"


# ------------------------------------- carried over from the retired knowledge monitor's tests


@pytest.mark.parametrize(
    ("text", "expected", "kind"),
    [
        ("我喜欢吃川菜", "用户喜欢吃川菜", "preference"),
        ("我不吃香菜", "用户不吃香菜", "preference"),
        ("I prefer dark mode.", "User prefers dark mode", "preference"),
        ("I hate mornings", "User hates mornings", "preference"),
        ("I don't eat pork.", "User doesn't eat pork", "preference"),
        ("我叫王芳", "用户名叫王芳", "profile"),
        ("我住在杭州西湖区", "用户住在杭州西湖区", "profile"),
        ("我的生日是3月5日", "用户的生日是3月5日", "fact"),
        ("I live in Lisbon.", "User lives in Lisbon", "profile"),
        ("I work as a nurse.", "User works as a nurse", "profile"),
        ("记住，我的车停在B2层56号", "用户的车停在B2层56号", "fact"),
        ("Remember that my locker code is 4512.", "User's locker code is 4512", "fact"),
        ("Like I said, I'm vegetarian.", "User is vegetarian", "preference"),
    ],
)
def test_plain_statements(text: str, expected: str, kind: str) -> None:
    f = one(text)
    assert (f.text, f.kind, f.subject) == (expected, kind, "user")


@pytest.mark.parametrize(
    "text",
    [
        "你好", "谢谢！", "嗯嗯", "好的", "为什么天空是蓝的？", "什么是量子计算", "帮我写一首诗",
        "Hi!", "thanks a lot", "ok", "What is the capital of France?", "Why is the sky blue?",
        "How do I sort a list in Python?", "lol", "the", "？？", "Do you remember my name?",
        "你还记得我叫什么吗？",
    ],
)  # fmt: skip
def test_small_talk_questions_and_fragments_give_nothing(text: str) -> None:
    assert facts_of(text) == []


def test_another_persons_fact_is_theirs() -> None:
    f = one("My dad is allergic to shellfish.")
    assert f.subject == "third_person" and "father" in f.text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("以后帮我写 SQL 的时候，先写注释再写语句", "用户希望写 SQL时先写注释再写语句"),
        ("Call me Jo", "User wants to be called Jo"),
        ("我表姐是做会计的，特别忙，经常加班", "用户的表姐是做会计的"),
    ],
)
def test_reads_found_on_unseen_chat(text: str, expected: str) -> None:
    assert one(text).text == expected


@pytest.mark.parametrize(
    "text", ["跟你说过我不喝酒的", "甲方周三上午就要，气死了", "现在就等着换工作了"]
)
def test_no_garbled_fact_from_a_reminder_a_deadline_or_a_wait(text: str) -> None:
    # "跟你说过" once lost "跟你说" as a filler and read "过我不喝酒" as "用户不喝过"
    assert facts_of(text) == []


def test_a_team_tool_is_the_slot_value_so_saying_it_again_is_known() -> None:
    first, again = one("我们组用 Slack 沟通"), one("我们组还是用 Slack 沟通")
    assert first.slot == again.slot == "team.chat" and first.value == again.value == "Slack"


def test_realistic_heldout_precision_stays_at_or_above_target() -> None:
    # issue #30: complaints, requests to the assistant, restatements, forget requests, long
    # turns; the fresh batch was written after the rules were changed for the realistic one
    result = load_benchmark("fact_extraction").evaluate("heldout")
    assert result["realistic heldout"]["all"]["precision"] >= 0.95, result["realistic heldout"]
    assert result["fresh heldout"]["all"]["precision"] >= 0.90, result["fresh heldout"]


def test_a_fan_of_something_is_not_a_kind_of_person() -> None:
    # "I'm a huge fan of old Hitchcock movies" once gave "User is a huge person"
    assert [f.text for f in facts_of("I'm a huge fan of old Hitchcock movies.")] == []
    assert one("I'm a cat person").text == "User is a cat person"
