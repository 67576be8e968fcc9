"""Word lists of the rule processors: relations (and who each one is), jobs, technology names."""

from __future__ import annotations

import re
from collections.abc import Iterable


def longest_first(words: Iterable[str]) -> str:
    """A regex alternation of `words`, longest first, so that a word wins over its prefix
    (表哥 over 哥, best friend over friend)."""
    return "|".join(sorted(words, key=len, reverse=True))


ZH_REL_WHO = {
    "好朋友": "friend", "朋友": "friend", "同事": "colleague", "老板": "boss", "领导": "boss",
    "室友": "roommate", "同学": "classmate", "邻居": "neighbor", "妈妈": "mother",
    "母亲": "mother", "妈": "mother", "爸爸": "father", "父亲": "father", "爸": "father",
    "老婆": "wife", "妻子": "wife", "媳妇": "wife", "老公": "husband", "丈夫": "husband",
    "爱人": "partner", "对象": "partner", "女儿": "daughter", "儿子": "son", "孩子": "child",
    "哥哥": "brother", "弟弟": "brother", "姐姐": "sister", "妹妹": "sister",
    "爷爷": "grandfather", "外公": "grandfather", "姥爷": "grandfather",
    "奶奶": "grandmother", "外婆": "grandmother", "姥姥": "grandmother",
    "男朋友": "boyfriend", "女朋友": "girlfriend", "未婚妻": "fiancee", "未婚夫": "fiance",
    "猫": "cat", "狗": "dog", "宠物": "pet", "表哥": "cousin", "表姐": "cousin",
    "表弟": "cousin", "表妹": "cousin", "堂哥": "cousin", "堂姐": "cousin", "叔叔": "uncle",
    "舅舅": "uncle", "阿姨": "aunt", "姑姑": "aunt", "父母": "parents", "爸妈": "parents",
    "导师": "advisor", "老师": "teacher",
}  # fmt: skip

EN_REL_WHO = {
    "best friend": "friend", "friend": "friend", "sister": "sister", "brother": "brother",
    "mom": "mother", "mum": "mother", "mother": "mother", "dad": "father", "father": "father",
    "wife": "wife", "husband": "husband", "partner": "partner", "son": "son",
    "daughter": "daughter", "kid": "child", "kids": "children", "children": "children",
    "boyfriend": "boyfriend", "girlfriend": "girlfriend", "fiance": "fiance",
    "fiancee": "fiancee", "colleague": "colleague", "coworker": "colleague",
    "co-worker": "colleague", "boss": "boss", "manager": "boss", "roommate": "roommate",
    "neighbor": "neighbor", "neighbour": "neighbor", "grandma": "grandmother",
    "grandmother": "grandmother", "grandpa": "grandfather", "grandfather": "grandfather",
    "aunt": "aunt", "uncle": "uncle", "cousin": "cousin", "cat": "cat", "dog": "dog",
    "parents": "parents", "advisor": "advisor", "teacher": "teacher",
}  # fmt: skip

JOBS_EN = (
    "engineer|developer|programmer|teacher|doctor|nurse|student|designer|manager|lawyer|"
    "accountant|chef|cook|writer|artist|scientist|researcher|professor|analyst|architect|"
    "consultant|pharmacist|dentist|pilot|driver|musician|photographer|journalist|editor|"
    "translator|entrepreneur|founder|intern|salesperson|marketer|freelancer|nurse|surgeon|"
    "therapist|firefighter|officer|cashier|barista|waiter|waitress|librarian|mechanic|"
    "electrician|plumber|farmer|vet|veterinarian|economist|banker|trader|tutor|coach|"
    "[a-z]+ist|[a-z]+ian|PhD student|postdoc|undergrad|graduate student|data scientist|"
    "product manager|CTO|CEO|PM|SRE|DevOps engineer"
)

JOBS_ZH = (
    "工程师|老师|教师|医生|护士|律师|设计师|程序员|学生|研究生|博士生|博士|本科生|大学生|高中生|"
    "经理|会计|厨师|司机|记者|作家|销售|产品经理|架构师|分析师|科学家|研究员|教授|主管|老板|"
    "创业者|公务员|运营|编辑|摄影师|翻译|实习生|开发|前端|后端|测试|码农|咨询师|警察|演员|"
    "主播|画家|音乐人|外卖员|快递员|导游|药剂师|牙医|兽医|心理咨询师|自由职业者"
)

TECH_LEXICON = frozenset(
    [
        "python",
        "java",
        "javascript",
        "typescript",
        "go",
        "golang",
        "rust",
        "ruby",
        "php",
        "kotlin",
        "swift",
        "scala",
        "c++",
        "c#",
        "node",
        "nodejs",
        "deno",
        "bun",
        "react",
        "vue",
        "angular",
        "svelte",
        "nextjs",
        "nuxt",
        "django",
        "flask",
        "fastapi",
        "spring",
        "rails",
        "laravel",
        "express",
        "nestjs",
        "postgres",
        "postgresql",
        "mysql",
        "sqlite",
        "mongodb",
        "redis",
        "kafka",
        "rabbitmq",
        "elasticsearch",
        "docker",
        "kubernetes",
        "k8s",
        "helm",
        "terraform",
        "aws",
        "gcp",
        "azure",
        "nginx",
        "graphql",
        "grpc",
        "rest",
        "tailwind",
        "webpack",
        "vite",
        "jest",
        "pytest",
        "npm",
        "pnpm",
        "yarn",
        "pip",
        "poetry",
        "uv",
        "git",
        "github",
        "gitlab",
        "jenkins",
        "langchain",
        "langgraph",
        "pytorch",
        "tensorflow",
        "numpy",
        "pandas",
        "celery",
        "airflow",
        "spark",
        "hadoop",
        "linux",
        "ubuntu",
        "windows",
        "macos",
        "android",
        "ios",
        "flutter",
        "electron",
        "prisma",
        "sqlalchemy",
        "jquery",
        "bootstrap",
        "milvus",
        "faiss",
        "clickhouse",
        "oracle",
        "mariadb",
        "cassandra",
        "dynamodb",
        "supabase",
        "firebase",
        "vercel",
    ]
)


def tech_terms(text: str) -> list[str]:
    """Technology names in a code-context sentence ("PostgreSQL 15" -> "PostgreSQL")."""
    found: list[str] = []
    for m in re.finditer(r"[A-Za-z][A-Za-z0-9+#.\-]*[A-Za-z0-9+#]|[A-Za-z]", text):
        word = m.group(0)
        low = word.lower()
        known = low in TECH_LEXICON or (
            word[0].isupper()
            and len(word) > 1
            and (any(c.isupper() for c in word[1:]) or low.endswith(("sql", "db", "js")))
        )
        if known and word not in found and low not in ("i", "user", "the", "i'm"):
            found.append(word)
    return found
