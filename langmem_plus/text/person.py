"""First person to third, written once: what the user says of themselves ("我的狗", "my
dog") becomes what a memory says of the user ("用户的狗", "their dog")."""

from __future__ import annotations

import re

__all__ = ["en_third", "zh_third"]


# kin and pets said without 的 ("我妈", "我老公"): theirs, so "用户的妈", never "用户妈"
_ZH_KIN = re.compile(
    r"我(?=(?:妈妈?|爸爸?|老妈|老爸|老婆|老公|媳妇|爱人|对象|女儿|儿子|孩子|哥哥?|姐姐?|弟弟?|妹妹?|"
    r"爷爷|奶奶|外公|外婆|姥姥|姥爷|男朋友|女朋友|家人|父母|爸妈|猫|狗|同事|老板|室友|朋友))"
)


def zh_third(text: str) -> str:
    """First person to third in a Chinese span (我的 -> 用户的, 我妈 -> 用户的妈, 给我 -> 给用户,
    我们 -> 用户团队)."""
    text = re.sub(r"我们|咱们", "用户团队", text)
    text = _ZH_KIN.sub("用户的", text)
    return text.replace("我", "用户")


_EN_PRONOUNS = (
    (r"\bI'm\b", "they're"),
    (r"\bI am\b", "they are"),
    (r"\bI've\b", "they've"),
    (r"\bI'll\b", "they'll"),
    (r"\bI'd\b", "they'd"),
    (r"\bI\b", "they"),
    (r"\bmy\b", "their"),
    (r"\bMy\b", "Their"),
    (r"\bme\b", "them"),
    (r"\bmine\b", "theirs"),
    (r"\bmyself\b", "themselves"),
)


def en_third(text: str) -> str:
    """First person to third in an English span (I -> they, my -> their)."""
    for pat, rep in _EN_PRONOUNS:
        text = re.sub(pat, rep, text)
    return text
