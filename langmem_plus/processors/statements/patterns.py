"""Compiled patterns of the rule-based processors (Chinese and English): time phrases,
chitchat, questions, requests, slots and one regex per rule family."""

from __future__ import annotations

import re

from langmem_plus.processors.lexicon import (
    EN_REL_WHO,
    JOBS_EN,
    JOBS_ZH,
    ZH_REL_WHO,
    longest_first,
)

ZH_REL_RE = longest_first(ZH_REL_WHO)

_EN_REL_RE = longest_first(EN_REL_WHO)

ZH_FUTURE = (
    r"明天|后天|大后天|今晚|明晚|明早|明天早上|下周[一二三四五六日天末]?|下个?星期[一二三四五六日天]?|"
    r"下个?礼拜[一二三四五六日天]?|下个?月|下半年|明年|这周[一二三四五六日天末]|这个?星期[一二三四五六日天]|"
    r"周[一二三四五六日末]|星期[一二三四五六日天]|礼拜[一二三四五六日天]|\d{1,2}月\d{1,2}[日号]|"
    r"\d{1,2}[日号]|月底|月初|年底|过几天|过两天|今天(?:晚上|下午|上午)?|待会|等会|周末"
)

ZH_PLAN_VERB = r"要|会|打算|准备|计划|得|需要|约了|想去|将|必须|安排|预约|有(?:个|一个|场)"

EN_FUTURE = (
    r"tomorrow|tonight|next (?:week|month|year|weekend|monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday|spring|summer|fall|autumn|winter)|this (?:weekend|evening|"
    r"afternoon|monday|tuesday|wednesday|thursday|friday|saturday|sunday|coming \w+)|"
    r"on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|in (?:\d+|a few|two|"
    r"three) (?:days|weeks|months)|later today|the day after tomorrow|on (?:jan|feb|mar|apr|"
    r"may|jun|jul|aug|sep|oct|nov|dec)[a-z]* \d{1,2}|at \d{1,2}(?::\d\d)?\s?(?:am|pm)"
)

EN_PLAN_VERB = (
    r"\bwill\b|'ll\b|going to|gonna|plan(?:ning)? to|have to|need to|intend to|"
    r"scheduled|'m (?:\w+ing)\b|am (?:\w+ing)\b|have (?:an?|my) (?:appointment|meeting|"
    r"interview|exam|flight|test|date|call|presentation|deadline|surgery)|is due"
)

CHITCHAT_ZH = re.compile(
    r"^(?:你好|您好|嗨|哈喽|早上好|早安|中午好|下午好|晚上好|晚安|谢谢|多谢|感谢|谢啦|好的|好|嗯+|"
    r"哦+|哈+|呵呵|对|是的|没错|行|可以|OK|ok|再见|拜拜|回头见|明白了?|知道了|收到|不客气|没事|"
    r"没关系|辛苦了|厉害|太棒了|真棒|不错|哇|我很好|我挺好的?|还行|一般般|我也是|在吗|在不在|"
    r"你是谁|你好呀|哈哈哈+|好的呢|好滴|嗯嗯|了解|懂了|我明白了|我知道了|好吧|算了|继续|接着说)"
    r"[啊呀哦呢吧啦嘛哈~～!！。.，,\s]*$"
)

CHITCHAT_EN = re.compile(
    r"^(?:hi|hello|hey|yo|good (?:morning|afternoon|evening|night)|thanks?(?: a lot| so much)?|"
    r"thank you(?: so much| very much)?|ok(?:ay)?|cool|nice|great|awesome|sure|yes|yeah|yep|no|"
    r"nope|bye|goodbye|see you|see ya|lol|haha+|got it|i see|makes sense|sounds good|"
    r"you're welcome|no problem|i'm (?:fine|good|ok|okay|great|doing well)|not bad|me too|"
    r"how are you|what's up|sup|good job|well done|perfect|alright|right|hmm+|wow|interesting|"
    r"that's (?:great|cool|nice|interesting|funny)|continue|go on|tell me more)"
    r"(?:[,!.?\s]+(?:thanks|thank you|bro|man|mate|buddy|again|very much))*[!.?\s]*$",
    re.IGNORECASE,
)

QUESTION_ZH = re.compile(
    r"(?:吗|呢|么|嘛)[？?]?$|[？?]$|^(?:什么|为什么|为啥|怎么|怎样|如何|哪|谁|多少|几|是不是|能不能|"
    r"可不可以|有没有|请问|你知道|你觉得|你会|你能|你可以|帮我|给我|告诉我|解释|介绍一下|翻译)"
)

QUESTION_EN = re.compile(
    r"\?\s*$|^(?:what|why|how|who|whom|whose|when|where|which|is|are|was|were|do|does|did|"
    r"can|could|would|will|should|shall|may|might|explain|tell me|describe|define|give me|"
    r"show me|write|translate|summarize|help me|please (?:explain|tell|write|help|give|show))\b",
    re.IGNORECASE,
)

REQUEST_EN = re.compile(
    r"^(?:I (?:want|need|would like|'d like) (?:to (?:know|ask|learn|understand|see)|help|you)|"
    r"I(?:'m| am) (?:wondering|curious|asking|trying to (?:understand|figure))|I wonder|"
    r"I was wondering|I have a question|I think|I guess|I suppose|I believe|I know|I see|"
    r"I understand|I agree|I mean|I'm not sure|I am not sure|I don't know|I forgot|let me|"
    r"let's|I'll try|I will try|I'd like to ask)\b",
    re.IGNORECASE,
)

REQUEST_ZH = re.compile(
    r"^(?:我想(?:问|知道|了解|请教|让你|要你)|我要问|请问|我需要你|我想请|我觉得|我认为|我猜|我感觉|"
    r"我看看|我试试|我来|我知道|我明白|我不知道|我不确定|我忘了问|麻烦你|请你|帮我)"
)

SLOT_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("name", re.compile(r"(?:名字|姓名)(?:是|叫)|^(?:用户|我)(?:的)?(?:叫|姓)|(?:\bname is\b|\bname's\b|"
                        r"\bcalled\b|\bcall (?:me|them)\b)", re.I)),
    ("birthday", re.compile(r"生日|出生于|\d+月\d+[日号]出生|\bbirthday\b|\bborn on\b", re.I)),
    ("age", re.compile(r"(?:今年|已经)?\d{1,3}岁|\b\d{1,3} years old\b|\bis \d{1,3}\b", re.I)),
    ("home", re.compile(r"住在|家在|住址|定居|搬到|搬去|\blives? in\b|\bliving in\b|\bmoved to\b|"
                        r"\bbased in\b|\bhome is in\b|\baddress is\b|\breside", re.I)),
    ("hometown", re.compile(r"老家|来自|\bfrom\b|\bgrew up in\b|\bhometown\b", re.I)),
    ("work", re.compile(r"工作|上班|职业|(?:是|做)(?:一名|一个|个|名)?\S{0,6}(?:"
                        + JOBS_ZH + r")|\bworks? (?:as|at|for|in)\b|\bjob\b|\bprofession\b|"
                        r"\bis an? (?:[\w-]+ ){0,2}(?:" + JOBS_EN + r")\b", re.I)),
]  # fmt: skip

_ZH_TIME_PREFIX = (
    r"(?:今天|昨天|前天|最近|这几天|这段时间|这阵子|现在|目前|上周|上个月|去年|今年|刚才|刚刚|这周|周末|"
    r"平时|如今|以前|之前|后来)"
)

_ZH_SUBJ = r"^" + _ZH_TIME_PREFIX + r"?(?:我|用户)?(?:的)?"

_ZH_ADV = r"(?:很|特别|非常|最|超|超级|真的|比较|更|挺|蛮|一直|还|也|都|从小就?|向来|本来就?)*"

_ZH_PREF_ADV = r"(?:一般|平时|通常|基本上?|向来|从来|总是|只|就|都|也|还|很|比较|挺|是|一点儿?都|一点儿?也|根本|完全)*"

ZH_PREF = re.compile(
    _ZH_SUBJ
    + _ZH_ADV
    + _ZH_PREF_ADV
    + r"(?:(?:不太|不大|不)?喜欢|(?:不太|不大|很少|从不|基本不|几乎不|一般不)(?:碰|吃|喝|看|听|玩|用|穿)|"
    r"只(?:喝|吃|用|看|听|穿|买|玩|坐|选)|爱吃|爱喝|爱看|爱玩|爱听|热爱|偏爱|偏好|钟爱|迷上|喜爱|"
    r"讨厌|厌恶|受不了|不吃|不喝|不爱|不碰|忌口|吃不了|吃不惯|不能吃|怕辣|怕冷|怕热|倾向于|习惯用|"
    r"(?<!可)爱(?!人|情|心)|是(?:个)?(?:素食者|素食主义者|吃货|猫奴|狗派|猫派)|对.{1,8}过敏|"
    r"最喜欢的.{1,8}是|不喜欢)"
)

ZH_STYLE = re.compile(
    r"(?:希望|请|以后|麻烦)?(?:你|助手)?(?:的)?(?:回答|回复|说话)(?:要|能|请|尽量)?"
)

ZH_PERSONAL = re.compile(
    _ZH_SUBJ + r"(?:现在|目前|已经)?(?:(?:名字|姓名)(?:是|叫)|叫|姓|今年\d+岁|\d+岁|生日|出生|住在|"
    r"家在|住址|定居|搬到|搬去|来自|老家|是.{0,6}人$|在.{1,14}(?:工作|上班|实习|上学|读书|读研|读博|念书)|"
    r"在.{1,12}(?:做|当|担任).{1,10}|"
    r"(?:工作|职业)是|做.{1,10}(?:工作|的)|是(?:一名|一个|个|名)?.{0,8}(?:" + JOBS_ZH + r")|"
    r"学的是|专业是|有(?:一|两|三|四|五|\d)?(?:个|只|条|辆|套|位)|养了|结婚|单身|离婚|怀孕|血型|"
    r"属|星座|身高|体重|会说|母语)"
)

ZH_HABIT = re.compile(
    _ZH_SUBJ
    + r"(?:平时|通常|一般|经常|常常|每天|每周|每晚|每个?月|每年|总是|习惯|一向|从来不|基本上)"
)

ZH_STATE = re.compile(
    _ZH_SUBJ
    + r"(?:最近|现在|这几天|今天|这段时间|一直|这阵子|这周|昨天|前几天|上周)?(?:有点儿?|很|特别|"
    r"非常|好|挺|比较|超级|真的|太|压力|终于|已经|又|开始|感觉|觉得)*(?:好多了|好些了|轻松多了|紧张|焦虑|压力(?:很|好|特别|非常)?大|累|疲惫|开心|高兴|难过|伤心|"
    r"放松|轻松|郁闷|烦|生气|兴奋|失眠|生病|感冒|发烧|不舒服|孤独|无聊|抑郁|崩溃|沮丧|心情不好|心情很好)"
)

ZH_CODE = re.compile(
    r"^(?:我们|用户|我)?(?:的)?(?:(?:这个)?(?:项目|仓库|代码库|代码|后端|前端|服务|系统|数据库|团队|公司|"
    r"技术栈|框架)){0,3}(?:现在|目前)?.{0,4}?(?:用的是|使用的?是?|采用了?|基于|用了|依赖|跑在|部署在|是用|写的是|"
    r"用的|数据库是|框架是|语言是|版本是|用)\s*[A-Za-z]"
)

ZH_PROJECT_CODE = re.compile(
    r"^(?:我们|用户|我|咱们)?(?:的)?(?:这个|那个)?\s*(?:[A-Za-z][\w-]*\s*)?(?:项目|仓库|代码库|代码|后端|前端|服务|"
    r"系统|数据库|网关|接口|集群|应用|网站|小程序|App|app|API|api|微服务|中间件|测试环境|生产环境|线上环境)"
    r"(?:的\s*[A-Za-z][\w-]*\s*)?(?:现在|目前|都|也|还|一直)?\s*(?:部署在|部署到|跑在|运行在|托管在|放在|上线在|迁移到|迁到|搬到|"
    r"用的是|使用的?是?|采用了?|基于|依赖|是用|写的是|用了|用)"
)

# "部署在 k8s 上" after "我们的项目用 PostgreSQL 15": the same code subject goes on
ZH_CODE_CONT = re.compile(
    r"^(?:也|还|并且|而且|同时)?(?:部署在|部署到|跑在|运行在|托管在|上线在|迁移到|用的是|使用|采用|基于|依赖|"
    r"数据库(?:是|用)|缓存用|版本是)"
)

# "processOrder 在 src/order.ts 里": a symbol and where it lives
ZH_SYMBOL_WHERE = re.compile(
    r"^\s*[A-Za-z_][\w.]*\s*(?:在|位于|定义在|放在|写在|实现在)\s*[\w./-]+[/.][\w./-]+"
)
EN_SYMBOL_WHERE = re.compile(
    r"^[A-Za-z_][\w.]*\s+(?:lives|is|sits|is defined|is located|is implemented)\s+in\s+"
    r"[\w./-]+[/.][\w./-]+",
)

# "甜食我一般不太碰" / "咖啡的话我只喝美式": a topic first, then the speaker
ZH_TOPIC_FIRST = re.compile(
    r"^(?P<topic>[\u4e00-\u9fffA-Za-z0-9 ]{1,10}?)(?P<mark>的话|这种东西|这类东西|嘛|呢|啊)?[，,]?\s*"
    r"(?P<rest>我.+)$"
)

# "Tea over coffee for me, always": a preference without a subject
EN_OVER = re.compile(
    r"^(?:definitely |always |honestly )?(?P<a>[\w' -]{1,30}?) over (?P<b>[\w' -]{1,30}?)"
    r"(?:,? for me)?(?P<always>,? (?:always|every time|any day|all day(?: long)?|every day))?"
    r"(?:,? for me)?$",
    re.IGNORECASE,
)
EN_BARE_PREF = re.compile(
    r"^(?:(?:really|absolutely|totally|just|honestly|also) )*(?:love|hate|prefer|enjoy|adore|"
    r"can't stand|cannot stand|don't like|never eat|never drink)\s+"
    r"(?!(?:I|you|we|he|she|they|it|that|this|what|how|when|if|to|the way you)\b)\w",
    re.IGNORECASE,
)
EN_BARE_FAN = re.compile(
    r"^(?:(?:really|absolutely|totally|just|honestly|also) )*(?:(?:not )?(?:a )?(?:huge |big )?fan of|"
    r"allergic to|obsessed with)\s+\w",
    re.IGNORECASE,
)

ZH_EVENT = re.compile(
    _ZH_SUBJ + r"(?:今天|昨天|前天|上周|上个月|刚才|刚刚|最近|去年|前几天|这周|周末)?.{0,4}?"
    r"(?:去了|去|参加了?|买了|看了|完成了|结束了|开始|换了|搬|考|拿到|收到|生了|辞职|离职|入职|毕业|"
    r"分手|结婚|领养|养|学|报名|旅游|旅行|出差|回|见了|遇到|做了|写完|通过|升职|加薪)"
)

ZH_OTHER = re.compile(r"^(?:我|用户)(?:的)?(" + ZH_REL_RE + r")")

_EN_SUBJ = r"^(?:I|User|the user)\s+"

_EN_ADV = (
    r"(?:(?:really|absolutely|also|totally|kind of|sort of|do|still|much|just|actually|"
    r"definitely|genuinely|truly|secretly|especially|generally|strongly|honestly|now|always|"
    r"usually|mostly|normally)\s+)*"
)

EN_PREF = re.compile(
    r"(?:^(?:I|User|the user)\s+" + _EN_ADV + r"(?:likes?|loves?|enjoys?|prefers?|adores?|hates?|"
    r"dislikes?|detests?|can't stand|cannot stand|don't like|doesn't like|do not like|"
    r"don't eat|doesn't eat|do not eat|never eats?|don't drink|doesn't drink|avoids?|can't eat|"
    r"(?:am|is|'m) (?:allergic|into|obsessed with|a (?:huge |big )?fan of|vegetarian|vegan|"
    r"lactose intolerant|a (?:cat|dog) person|not a fan of))\b"
    r"|^(?:I'm|I am)\s+" + _EN_ADV + r"(?:allergic|into|obsessed with|a (?:huge |big )?fan of|"
    r"vegetarian|vegan|lactose intolerant|a (?:cat|dog) person|not a fan of)\b"
    r"|^(?:my|User's|the user's) (?:favou?rite|go-to|preferred) \w+(?: \w+)? (?:is|are)\b"
    r"|^(?:please )?(?:keep|make) (?:your )?(?:answers|replies|responses|explanations)\b"
    r"|^(?:please )?(?:reply|answer|respond|talk to me) in\b|^(?:please )?(?:don't|do not|never) "
    r"use (?:emojis|emoji|jargon)\b)",
    re.IGNORECASE,
)

EN_PERSONAL = re.compile(
    r"^(?:my|User's|the user's) (?:name|full name|birthday|address|home ?town|job|profession|"
    r"occupation|major|blood type|height|native language|first language|email|phone)\b"
    r"|^(?:I|User|the user)\s+" + _EN_ADV + r"(?:was born|lives?|moved|grew up|work(?:s|ed)? "
    r"(?:as|at|for|in)|study|studies|major(?:s)? in|teach(?:es)?|(?:have|has|'ve) (?:got )?(?:an?|two|"
    r"three|\d+) (?!question|problem|idea|doubt|suggestion|minute|moment|look|bug|error|issue|"
    r"feeling|meeting|appointment|interview|exam|flight|test)\w+|speak|speaks|got married|"
    r"am married|'m married|am single|'m single|got divorced|come from|comes from)\b"
    r"|^(?:I'm|I am|User is|the user is)\s+(?:a |an )?(?:\d{1,3}(?: years old)?\b|from\b|"
    r"(?:currently |now )?(?:living|based|working|studying|married|single|pregnant)\b|"
    r"(?:[\w-]+ ){0,2}(?:" + JOBS_EN + r")\b)"
    r"|^(?:I'm|I am) [A-Z][a-z]+$|^(?:call me|you can call me) \w+",
    re.IGNORECASE,
)

EN_HABIT = re.compile(
    _EN_SUBJ + r"(?:usually|always|often|normally|typically|generally|regularly|never|"
    r"tend to|every (?:day|morning|night|evening|week|weekend)|mostly|rarely)\b",
    re.IGNORECASE,
)

EN_STATE = re.compile(
    r"^(?:I|User|the user)(?:'m|'ve been| am| was| feel| felt| have been| is| has been| "
    r"feels| been|'m feeling| am feeling| is feeling|'ve been feeling| have been feeling)\s+(?:so |very |really |a bit |a little |kind of |pretty |quite |super |"
    r"extremely |totally |incredibly |much more |more |finally |now |really really )*"
    r"(?:stressed|anxious|nervous|worried|tired|exhausted|happy|sad|depressed|relaxed|excited|"
    r"lonely|bored|sick|ill|overwhelmed|burned out|burnt out|frustrated|angry|upset|calm|"
    r"homesick|heartbroken|scared|afraid|stressed out|under (?:a lot of )?pressure|"
    r"down|miserable|thrilled|proud|grateful|confused|sleepless)\b",
    re.IGNORECASE,
)

EN_CODE = re.compile(
    r"^(?:the|this|our|my|User's|the user's)\s+(?:\w+\s+)?(?:project|repo|repository|codebase|"
    r"app|application|service|backend|frontend|api|site|website|server|database|db|stack|team|"
    r"pipeline|ci|cluster)\s+(?:uses|is using|runs on|is built (?:on|with)|is written in|"
    r"depends on|targets|requires|is deployed (?:on|to)|deploys to|stores|is on|is|relies on)\b"
    r"|^we(?:'re| are)?\s+(?:use|using|run|running|deploy|deploying|build|building|write|writing|"
    r"migrated|switched|moved|rely|relying)\b",
    re.IGNORECASE,
)

EN_EVENT = re.compile(
    r"^(?:I've|I have|User has) (?:been \w+ing|started|begun|joined|adopted|moved|finished|"
    r"decided|signed up)\b|"
    + _EN_SUBJ
    + r"(?:just |recently |finally |already )*(?:went|visited|bought|finished|started|"
    r"got|adopted|moved|joined|quit|left|graduated|passed|failed|won|lost|met|saw|watched|"
    r"read|traveled|travelled|returned|came back|signed up|broke up|had|took|ran|completed|"
    r"launched|published|learned|learnt|tried|cooked|built|fixed|painted|wrote|celebrated)\b",
    re.IGNORECASE,
)

EN_OTHER = re.compile(
    r"^(?:my|User's|the user's) (" + _EN_REL_RE + r")\b(?!\s+and (?:I|me)\b)", re.IGNORECASE
)

EN_ME_FIRST = re.compile(r"^(?:I|I'm|I've|I'll|I'd|I was|my|me)\b", re.IGNORECASE)

ZH_REMEMBER = re.compile(
    r"(?:请|帮我|你要|你得|一定要|务必)?(?:记住|记下来?|记一下|记好|记着|别忘了|不要忘了|不要忘记|别忘记|"
    r"帮我记)(?:了)?[：:，,\s]*|^记得(?!吗)"
)

EN_REMEMBER = re.compile(
    r"(?:^|\b(?:please|can you|could you|will you|would you|you should|you need to|"
    r"make sure (?:you|to))\s+)(?:please\s+)?(?:remember|memorize|note down|keep in mind|"
    r"make a note|take note)(?:\s+(?:of\s+)?(?:that|this))?[:,\s]*"
    r"|\b(?:don't|do not|never) forget(?: that)?[:,\s]*|^(?:note|fyi)(?: that)?[:,]\s*",
    re.IGNORECASE,
)

ZH_DELETE = re.compile(
    r"(?:请|帮我|你)?(?:把)?(?:忘掉|忘记掉?|忘了吧|删掉|删除|清除|抹掉|别再记|不要再记|别记)(?:吧|掉)?"
)

ZH_OBSOLETE = re.compile(
    r"(?:已经|早就|早已)不再?|不再|再也不|(?:现在|如今|目前)不|已经没(?:有)?|不.{1,8}了$"
)

EN_DELETE = re.compile(
    r"\b(?:forget|delete|remove|erase|drop|clear)\b(?:\s+(?:about|that|the fact that|the memory|"
    r"the note|what I said about|my))*\s*",
    re.IGNORECASE,
)

EN_FORGET = re.compile(r"\b(?:forget|delete|remove|erase)\b(?! to\b)", re.IGNORECASE)

EN_OBSOLETE = re.compile(
    r"\bno longer\b|\banymore\b|\bany more\b|\bnot \w+ anymore\b|\b(?:I've|I have|I) "
    r"(?:stopped|quit)\b|\bnot anymore\b",
    re.IGNORECASE,
)

ZH_CORR_PAIR = re.compile(
    r"不是(?P<old>[^，,。！？!?]{1,20})[，,]?\s*(?:而|其实|应该)?是(?P<new>[^，,。！？!?]{1,30})"
)

ZH_CORR_PAIR_REV = re.compile(
    r"(?P<new>[^，,。！？!?]{1,30})[，,]\s*(?:而)?不是(?P<old>[^，,。！？!?]{1,20})$"
)

ZH_CORR_MARK = re.compile(
    r"其实|我是说|我的意思是|我指的是|说错了|我说错|记错了|搞错了|弄错了|纠正一下|更正一下|更正|应该是|准确地说|准确来说|不对|口误"
)

EN_CORR_PAIR = re.compile(
    r"\bnot (?P<old>[\w .'-]{1,40}?),? but (?P<new>[\w .'-]{1,40})$"
    r"|(?P<new2>[\w .'-]{1,40}?),? not (?P<old2>[\w .'-]{1,40})$",
    re.IGNORECASE,
)

EN_CORR_MARK = re.compile(
    r"\bactually\b|\bI meant\b|\bI mean\b|\bcorrection\b|\bto correct\b|\bI misspoke\b|"
    r"\bthat's (?:wrong|not right|incorrect)\b|\bthat is (?:wrong|not right|incorrect)\b|"
    r"\bwrong\b|\bI said .* but\b|\bsorry, it's\b|\bmy mistake\b|\bscratch that\b",
    re.IGNORECASE,
)

EN_CORR_STRIP = re.compile(
    r"^(?:sorry|no|oh|wait|oops)[,!\s]+|\b(?:actually|correction|to correct|I meant|I mean|"
    r"I misspoke|my mistake|scratch that|that's (?:wrong|not right|incorrect)|that is "
    r"(?:wrong|not right|incorrect))\b[:,!\s]*",
    re.IGNORECASE,
)

ZH_CORR_STRIP = re.compile(
    r"^(?:不对|不是的|错了|哦|啊|抱歉|不好意思)[，,！!\s]*|其实|我是说|我的意思是|我指的是|我说错了|说错了|我记错了|记错了|搞错了|弄错了|"
    r"纠正一下|更正一下|更正|准确地说|准确来说|口误[，,]?"
)

EN_TIME_PREFIX = re.compile(
    r"^(?:these days|nowadays|lately|recently|currently|right now|today|tonight|this (?:week|"
    r"month|year|morning)|now|yesterday|last (?:week|month|night|year)|so far)[,\s]+",
    re.IGNORECASE,
)
