"""The question sets benchmarks/calibration.py asks, beyond retrieval_quality's loaders.

* MemoryBank-cn: each labelled user's dated exchanges (one document per query/response
  exchange), asked the probing questions labelled in benchmarks/data/memorybank_cn_answers.jsonl
  (gold: the evidence exchanges). Short first-person questions that name no one: the questions
  a user asks an assistant that remembers.
* MemoryBank-en: the same kind of store, asked its unlabelled probing questions (every one is
  about the user's own history: it should inject something).
* MADial-Bench with the user's name masked ("Bart" -> "User" / "用户") in memories and
  dialogues: what the middleware sees (it never sends a speaker label), a stress test.
* Questions no memory of these stores answers, written for this benchmark.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import retrieval_quality as rq

load_memorybank_cn = rq.load_memorybank_cn  # the labelled set is one of retrieval_quality's

__all__ = ["UNRELATED", "load_memorybank_cn", "load_memorybank_en", "masked"]

_LABEL = re.compile(r"([^:：\n]+)[:：]")

# Questions no memory of these conversations answers (written for this benchmark; the first
# eight of each language were the only ones before, the rest added with the judgement).
UNRELATED = {
    "en": (
        "I'm writing OrderService and processOrder keeps throwing a TypeError, how do I debug it?",
        "What is the weather in Paris today?",
        "How do I convert a pandas DataFrame column to datetime?",
        "What's the capital of Australia?",
        "Explain the difference between TCP and UDP.",
        "How many grams of flour are in a cup?",
        "Can you recommend a good SQL index for a range query on timestamps?",
        "Why does my Kubernetes pod keep restarting with CrashLoopBackOff?",
        "What's a good regex to validate an email address?",
        "How do I reverse a linked list in Java?",
        "What year did the Berlin Wall fall?",
        "How long should I boil an egg for a soft yolk?",
        "What is the difference between a mutex and a semaphore?",
        "Translate 'good morning' into Japanese.",
        "How do I set up SSH keys for GitHub?",
        "What is the boiling point of water at high altitude?",
        "Write a SQL query that returns the second highest salary.",
        "How does compound interest work?",
        "What is the population of Canada?",
        "Why is my React component rendering twice in development?",
        "How do I fix a 'permission denied' error when running a shell script?",
        "What are the main causes of inflation?",
        "How do I center a div with CSS?",
        "What is the time complexity of quicksort?",
    ),
    "zh": (
        "我在写 OrderService，processOrder 函数总是抛 TypeError，怎么排查？",
        "今天巴黎天气怎么样？",
        "pandas 怎么把一列转换成日期时间？",
        "澳大利亚的首都是哪里？",
        "TCP 和 UDP 有什么区别？",
        "一杯面粉大概多少克？",
        "Kubernetes 的 pod 一直 CrashLoopBackOff 是什么原因？",
        "Python 的 GIL 是什么？",
        "怎么用正则表达式校验邮箱地址？",
        "Java 里怎么反转链表？",
        "柏林墙是哪一年倒塌的？",
        "溏心蛋要煮几分钟？",
        "互斥锁和信号量有什么区别？",
        "把“早上好”翻译成日语。",
        "GitHub 的 SSH 密钥怎么配置？",
        "高海拔地区水的沸点是多少？",
        "写一个查询第二高工资的 SQL。",
        "复利是怎么计算的？",
        "加拿大有多少人口？",
        "React 组件在开发模式下为什么渲染两次？",
        "运行 shell 脚本提示 permission denied 怎么办？",
        "通货膨胀的主要原因是什么？",
        "CSS 怎么让 div 居中？",
        "快速排序的时间复杂度是多少？",
    ),
}


def load_memorybank_en(data: Path, max_q: int | None = None) -> list[rq.Unit]:
    """One unit per MemoryBank-en user, asked its (unlabelled: no gold) probing questions."""
    root = data / "memorybank" / "en"
    raw = json.loads((root / "memory_bank_en.json").read_text("utf-8"))
    questions: dict[str, list[str]] = {}
    for line in (root / "probing_questions_en.jsonl").read_text("utf-8").splitlines():
        if line.strip():
            questions.update(json.loads(line))
    units = []
    for user, value in raw.items():
        asked = questions.get(user.strip())  # four user keys carry stray spaces
        if not asked:
            continue
        unit = rq.Unit(f"mbe-{user.strip()}", rq.exchanges(value["history"]))
        unit.queries = [rq.Query(q, frozenset(), "memorybank-unlabelled") for q in asked][:max_q]
        units.append(unit)
    return units


def masked(units: list[rq.Unit], lang: str) -> list[rq.Unit]:
    """MADial units with each user's name (the speaker label of their dialogues) replaced by
    "User" / "用户" in every memory and dialogue."""
    to = "User" if lang == "en" else "用户"
    names = {m.group(1) for u in units for q in u.queries[:1] if (m := _LABEL.match(q.text))}

    def mask(text: str) -> str:
        for name in names:
            text = text.replace(name, to)
        return text

    return [
        dataclasses.replace(
            u,
            docs=[(k, mask(t)) for k, t in u.docs],
            queries=[dataclasses.replace(q, text=mask(q.text)) for q in u.queries],
        )
        for u in units
    ]
