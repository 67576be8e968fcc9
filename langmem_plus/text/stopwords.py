"""Stop words of English and Chinese removed before keyword indexing."""

from __future__ import annotations

EN_STOPWORDS = frozenset(
    """
a about above after again against all am an and any are aren't as at be because been before
being below between both but by can can't cannot could couldn't did didn't do does doesn't doing
don't down during each few for from further had hadn't has hasn't have haven't having he he'd
he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into
is isn't it it's its itself let's me more most mustn't my myself no nor not of off on once only or
other ought our ours ourselves out over own same shan't she she'd she'll she's should shouldn't so
some such than that that's the their theirs them themselves then there there's these they they'd
they'll they're they've this those through to too under until up very was wasn't we we'd we'll
we're we've were weren't what what's when when's where where's which while who who's whom why
why's with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves
s t d ll m o re ve y just also really yeah yes oh ok okay hey hi hello thanks thank will
""".split()
)

ZH_STOPWORDS = frozenset(
    """
的 了 和 是 就 都 而 及 与 着 或 一个 没有 我们 你们 他们 她们 它们 是否 这个 那个 这些 那些 这样 那样
之 与 于 也 在 有 被 把 让 给 从 向 对 吗 呢 吧 啊 呀 哦 嗯 哈 么 嘛 啦 哇 噢 之类 什么 怎么 怎样 如何
为什么 哪 哪里 哪儿 哪个 谁 多少 几 这 那 其 此 各 每 某 所 所以 因为 但是 但 可是 然而 而且 并且
如果 虽然 即使 还是 或者 然后 接着 于是 一些 一点 一下 一直 已经 曾经 正在 将 会 能 可以 要 想 应该
得 地 很 太 非常 比较 更 最 又 再 还 只 才 刚 就是 不过 而已 等 等等 个 们 自己 这里 那里 时候 一样
我 你 他 她 它 您 咱们 咱 上 下 中 里 过 来 去 到 说 看 做 用 并 却 且 嘛 诶 哎 呃 唉 喔 对于 关于
""".split()
)

STOPWORDS = EN_STOPWORDS | ZH_STOPWORDS
