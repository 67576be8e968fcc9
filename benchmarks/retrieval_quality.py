"""Evidence-recall benchmark: HybridStore against BM25, dense, InMemoryStore and RRF baselines.

Data comes from the shared datasets folder (never copied into the repo):
LoCoMo dev (one namespace per conversation, one item per turn, questions as queries, gold =
evidence dialog ids), MADial-Bench zh/en (query = dialogue before the first test turn,
corpus = that user's memories, gold = relevant ids) and MemoryBank-cn's labelled probing
questions (one namespace per user, one item per exchange; gold = the evidence exchanges
labelled in benchmarks/data/memorybank_cn_answers.jsonl; categories by the question's form:
preference, dated, told by the assistant, own history). Every system sees the same documents,
the same tokenizer and the same cached USE embeddings; only the ranking differs. Each set has
a part to tune on and a held-out part (--locomo-part, --madial-part, --memorybank-part).

    python benchmarks/retrieval_quality.py [--data ../shared/datasets] [--smoke]
"""

from __future__ import annotations

import argparse
import atexit
import json
import platform
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import faiss  # noqa: E402
import plots  # noqa: E402
from _overrides import Overrides, parse_overrides  # noqa: E402
from _results import write_json, write_text  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402
from langgraph.store.base import PutOp  # noqa: E402
from langgraph.store.memory import InMemoryStore  # noqa: E402
from rank_bm25 import BM25Okapi  # noqa: E402

from langmem_plus.config import MemoryConfig  # noqa: E402
from langmem_plus.embeddings import USE_MODEL_NAME, USEEmbeddings, default_embeddings  # noqa: E402
from langmem_plus.store.hybrid import HybridStore  # noqa: E402
from langmem_plus.store.tuning import StoreTuning  # noqa: E402
from langmem_plus.text.tokenize import tokenize  # noqa: E402
from langmem_plus.text.transcript import text_to_embed  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "datasets"
K_LIST = 10
LOCOMO_CATEGORIES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
SYSTEMS = ("hybrid", "bm25", "dense", "inmemory", "rrf")


# ============================================================================ data
@dataclass
class Query:
    """One question: its text, gold item keys and category label."""

    text: str
    gold: frozenset[str]
    category: str


@dataclass
class Unit:
    """One namespace: its documents (key, text) and the queries asked against it."""

    name: str
    docs: list[tuple[str, str]]
    queries: list[Query] = field(default_factory=list)
    # extra fields stored with a document (LoCoMo: the session a turn belongs to)
    meta: dict[str, dict[str, str]] = field(default_factory=dict)


SESSION_KEY = ["session"]  # the value key LoCoMo turns name their session with (--session-key)
# HybridStore path: None (SQLite in memory) or a Milvus Lite folder (--backend)
BACKEND_PATH: list[str | None] = [None]
PER_UNIT = [0]  # milvus-per-unit: the count of collections made so far (0: off)
_DIA_RE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")


def normalise_evidence(raw: Sequence[str], valid: set[str]) -> list[str]:
    """Fix LoCoMo label slips: several ids in one string, `D:11:26`, `D30:05`; drop unknown ids."""
    out: list[str] = []
    for s in raw:
        for sess, turn in _DIA_RE.findall(str(s)):
            dia = f"D{int(sess)}:{int(turn)}"
            if dia in valid and dia not in out:
                out.append(dia)
    return out


def load_locomo(data: Path, max_convs: int | None = None, max_q: int | None = None) -> list[Unit]:
    """LoCoMo dev: one unit per conversation, one doc per turn (`speaker: text [caption]`)."""
    samples = json.loads((data / "locomo" / "locomo_dev.json").read_text(encoding="utf-8"))
    units: list[Unit] = []
    for sample in samples[:max_convs]:
        conv = sample["conversation"]
        docs: list[tuple[str, str]] = []
        session_of: dict[str, dict[str, str]] = {}
        sessions = sorted(
            (k for k, v in conv.items() if re.fullmatch(r"session_\d+", k) and isinstance(v, list)),
            key=lambda k: int(k.split("_")[1]),
        )
        for skey in sessions:
            for turn in conv[skey]:
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [{turn['blip_caption']}]"
                docs.append((turn["dia_id"], text))
                session_of[turn["dia_id"]] = {SESSION_KEY[0]: skey}
        valid = {k for k, _ in docs}
        unit = Unit(sample["sample_id"], docs, meta=session_of)
        for qa in sample["qa"]:
            gold = normalise_evidence(qa.get("evidence", []), valid)
            if not gold:
                continue  # no valid evidence left: not scorable
            cat = LOCOMO_CATEGORIES.get(int(qa["category"]), str(qa["category"]))
            unit.queries.append(Query(str(qa["question"]), frozenset(gold), cat))
        unit.queries = unit.queries[:max_q]
        units.append(unit)
    return units


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


_LINE_RE = re.compile(r'^<([^>]+)>:\s*"?(.*?)"?\s*$', re.S)


def _dialogue_text(lines: Sequence[str]) -> str:
    """`<Bart>:"…"` lines as `Bart: …`, markers dropped, joined by newlines."""
    out = []
    for line in lines:
        line = line.strip()
        if line in ("<BOD>", "<EOD>") or not line:
            continue
        m = _LINE_RE.match(line)
        out.append(f"{m.group(1)}: {m.group(2)}" if m else line)
    return "\n".join(out)


def load_madial(data: Path, lang: str, max_q: int | None = None, part: str = "all") -> list[Unit]:
    """MADial-Bench: one unit per user; the en memory file has no user-id, so each en memory
    takes the user-id of the zh memory with the same id (checked against the name it mentions).
    `part`: the dialogues with an even (tuning) or odd (held-out) index in the file, or all;
    every user keeps all memories."""
    root = data / "madial_bench"
    zh_mem = {}
    for row in _read_jsonl(root / "zh" / "MADial-Bench-zh-memory.json"):
        ((mid, mem),) = row.items()
        zh_mem[str(mid)] = mem
    mem_rows = _read_jsonl(root / lang / f"MADial-Bench-{lang}-memory.json")
    dialogues = _read_jsonl(root / lang / f"MADial-Bench-{lang}-dialogue.json")
    names: dict[int, str] = {}
    for d in _read_jsonl(root / "zh" / "MADial-Bench-zh-dialogue.json"):
        m = _LINE_RE.match(d["dialogue"][1].strip())
        if m:
            names[int(d["user-id"])] = m.group(1)
    by_user: dict[int, list[tuple[str, str]]] = {}
    for row in mem_rows:
        ((mid, mem),) = row.items()
        uid = mem.get("user-id", zh_mem[str(mid)]["user-id"])
        uid = int(uid)
        if lang == "en" and names.get(uid) and names[uid] not in mem["event"]:
            raise ValueError(f"en memory {mid} does not mention user {names[uid]}")
        by_user.setdefault(uid, []).append((str(mid), mem["event"]))
    units = {uid: Unit(f"{lang}-user{uid}", docs) for uid, docs in sorted(by_user.items())}
    for i, d in enumerate(dialogues):
        if part != "all" and i % 2 != (part == "odd"):
            continue
        turn = int(d["test-turn"][0])
        gold = frozenset(str(r) for r in d["relevant-id"])
        n = len(gold)
        cat = "gold=1" if n == 1 else "gold=2" if n == 2 else "gold>=3"
        units[int(d["user-id"])].queries.append(
            Query(_dialogue_text(d["dialogue"][:turn]), gold, cat)
        )
    out = list(units.values())
    if max_q is not None:
        for u in out:
            u.queries = u.queries[: max(1, max_q // len(out))]
    return out


MEMORYBANK_LABELS = Path(__file__).resolve().parent / "data" / "memorybank_cn_answers.jsonl"
_DATED = re.compile(r"\d+月\d+[号日]")
_TOLD = re.compile(r"你.{0,6}(推荐|建议|告诉|分享|教|给)")


def memorybank_category(question: str) -> str:
    """A MemoryBank-cn probing question's category, by its form: a preference the user stated
    (喜欢), a day it names, something the assistant told or recommended, else the user's own
    history."""
    if "喜欢" in question:
        return "preference"
    if _DATED.search(question):
        return "dated"
    if _TOLD.search(question):
        return "told by the assistant"
    return "own history"


def exchanges(history: dict[str, list[dict[str, str]]]) -> list[tuple[str, str]]:
    """A MemoryBank user's exchanges as documents keyed `date#index`."""
    return [
        (f"{day}#{i}", f"{ex['query']}\n{ex['response']}")
        for day in sorted(history)
        for i, ex in enumerate(history[day])
    ]


def load_memorybank_cn(data: Path, max_q: int | None = None) -> list[Unit]:
    """One unit per labelled MemoryBank-cn user, asked its labelled probing questions."""
    raw = json.loads((data / "memorybank" / "cn" / "memory_bank_cn.json").read_text("utf-8"))
    labels = _read_jsonl(MEMORYBANK_LABELS)
    units = []
    for user in dict.fromkeys(lab["user"] for lab in labels):
        unit = Unit(f"mb-{user}", exchanges(raw[user]["history"]))
        for lab in labels:
            if lab["user"] == user:
                gold = frozenset(f"{e['date']}#{e['turn_index']}" for e in lab["evidence"])
                q = lab["question_ref"]["question"]
                unit.queries.append(Query(q, gold, memorybank_category(q)))
        unit.queries = unit.queries[:max_q]
        units.append(unit)
    return units


PREFERENCES = Path(__file__).resolve().parent / "data" / "preferences.jsonl"


def load_preferences(path: Path = PREFERENCES, part: str = "all") -> list[Unit]:
    """The hand-written preference set (benchmarks/data/README.md): one unit per language, a
    user's preferences and facts, asked questions mostly in other words than the memory.
    Category: preference or fact (the gold memory's kind), and whether the question shares a
    word (the project tokenizer's terms) with a gold memory. `part`: the questions with an
    even (tuning) or odd (held-out) index, or all."""
    units = []
    for row in _read_jsonl(path):
        docs = [(m["key"], m["text"]) for m in row["memories"]]
        text = dict(docs)
        unit = Unit(f"pref-{row['lang']}", docs)
        for i, q in enumerate(row["questions"]):
            if part != "all" and i % 2 != (part == "odd"):
                continue
            gold = frozenset(q["gold"])
            kind = "preference" if any(k.startswith("p") for k in gold) else "fact"
            words = set(tokenize(q["question"]))
            shared = any(words & set(tokenize(text[k])) for k in gold)
            cat = f"{kind}, {'shares a word' if shared else 'other words'}"
            unit.queries.append(Query(q["question"], gold, cat))
        units.append(unit)
    return units


# ============================================================================ embeddings
class CachedEmbeddings(Embeddings):
    """USE embeddings computed once per distinct text and shared by every system."""

    # the model it caches: the store applies what is fitted for it (the relevance judgement)
    model_name = USE_MODEL_NAME
    dims = 512
    background_cosine = USEEmbeddings.background_cosine

    def __init__(self) -> None:
        self.base = default_embeddings()
        self.cache: dict[str, np.ndarray] = {}

    def warm(self, texts: Sequence[str]) -> float:
        """Embed the texts not yet cached in batches; returns seconds spent."""
        todo = list(dict.fromkeys(t for t in texts if t not in self.cache))
        t0 = time.perf_counter()
        if todo:
            for text, vec in zip(todo, self.base.embed_array(todo), strict=True):
                self.cache[text] = vec
        return time.perf_counter() - t0

    def vec(self, text: str) -> np.ndarray:
        if text not in self.cache:
            self.warm([text])
        return self.cache[text]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.warm(texts)
        return [self.cache[t].tolist() for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.vec(text).tolist()


# ============================================================================ systems
class System:
    """A retrieval system over one unit: `build` once, then `search` returns ranked keys."""

    name = "system"

    def build(self, unit: Unit, emb: CachedEmbeddings) -> None:
        raise NotImplementedError

    def search(self, query: str, k: int) -> list[str]:
        raise NotImplementedError

    def close(self) -> None:
        """Release resources held for the unit."""


class HybridSystem(System):
    """langmem_plus HybridStore with the given (default: shipped) config and tuning."""

    name = "hybrid"

    def __init__(self, over: Overrides = Overrides()) -> None:
        self.config = over.config or MemoryConfig()
        self.tuning = over.tuning

    def build(self, unit: Unit, emb: CachedEmbeddings) -> None:
        if PER_UNIT[0]:  # a collection of its own: BM25 statistics of this unit alone
            PER_UNIT[0] += 1
            store_cfg = {**self.config.store.model_dump(), "milvus_collection": f"u{PER_UNIT[0]}"}
            self.config = self.config.model_copy(
                update={"store": type(self.config.store)(**store_cfg)}
            )
        self.store = HybridStore(
            BACKEND_PATH[0],
            index={"dims": 512, "embed": emb, "fields": ["text"]},
            config=self.config,
            tuning=self.tuning,
        )
        self.ns = ("bench", unit.name)
        self.store.batch(
            [
                PutOp(self.ns, key, {"text": text, **unit.meta.get(key, {})})
                for key, text in unit.docs
            ]
        )

    def search(self, query: str, k: int) -> list[str]:
        return [h.key for h in self.store.search(self.ns, query=query, limit=k)]

    def close(self) -> None:
        self.store.close()


class BM25System(System):
    """rank-bm25 BM25Okapi over langmem_plus.text.tokenize tokens, with the store's k1 and b."""

    name = "bm25"

    def __init__(self, over: Overrides = Overrides()) -> None:
        self.tuning = over.tuning or StoreTuning()

    def build(self, unit: Unit, emb: CachedEmbeddings) -> None:
        self.keys = [k for k, _ in unit.docs]
        self.bm25 = BM25Okapi(
            [tokenize(t) or ["\x00"] for _, t in unit.docs],
            k1=self.tuning.bm25_k1,
            b=self.tuning.bm25_b,
            epsilon=self.tuning.bm25_epsilon,
        )

    def scores(self, query: str) -> np.ndarray:
        toks = tokenize(query)
        if not toks:
            return np.zeros(len(self.keys))
        return np.asarray(self.bm25.get_scores(toks))

    def ranked(self, query: str, k: int) -> list[int]:
        s = self.scores(query)
        order = np.argsort(-s, kind="stable")
        return [int(i) for i in order[:k] if s[i] > 0]

    def search(self, query: str, k: int) -> list[str]:
        return [self.keys[i] for i in self.ranked(query, k)]


class DenseSystem(System):
    """FAISS IndexFlatIP over USE vectors (exact cosine)."""

    name = "dense"

    def build(self, unit: Unit, emb: CachedEmbeddings) -> None:
        self.emb = emb
        self.keys = [k for k, _ in unit.docs]
        mat = np.vstack([emb.vec(t) for _, t in unit.docs]).astype(np.float32)
        faiss.normalize_L2(mat)
        self.index = faiss.IndexFlatIP(mat.shape[1])
        self.index.add(mat)

    def ranked(self, query: str, k: int) -> list[int]:
        q = np.asarray(self.emb.vec(query), np.float32)[None, :].copy()
        faiss.normalize_L2(q)
        _s, ids = self.index.search(q, min(k, len(self.keys)))
        return [int(i) for i in ids[0] if i >= 0]

    def search(self, query: str, k: int) -> list[str]:
        return [self.keys[i] for i in self.ranked(query, k)]


class InMemorySystem(System):
    """LangGraph InMemoryStore with the same embeddings (its own cosine ranking)."""

    name = "inmemory"

    def build(self, unit: Unit, emb: CachedEmbeddings) -> None:
        self.store = InMemoryStore(index={"dims": 512, "embed": emb, "fields": ["text"]})
        self.ns = ("bench", unit.name)
        # One put at a time: InMemoryStore.batch fails when two puts share a text (it embeds
        # distinct texts but indexes every put; langgraph 1.x).
        for key, text in unit.docs:
            self.store.put(self.ns, key, {"text": text})

    def search(self, query: str, k: int) -> list[str]:
        return [h.key for h in self.store.search(self.ns, query=query, limit=k)]


class RRFSystem(System):
    """Weighted reciprocal-rank fusion (c=60, equal weights) of the BM25 and dense lists."""

    name = "rrf"

    def __init__(self, over: Overrides = Overrides(), depth: int = 100, c: int = 60) -> None:
        self.config = over
        self.depth = depth
        self.c = c

    def build(self, unit: Unit, emb: CachedEmbeddings) -> None:
        self.bm25 = BM25System(self.config)
        self.dense = DenseSystem()
        self.bm25.build(unit, emb)
        self.dense.build(unit, emb)
        self.keys = self.bm25.keys

    def search(self, query: str, k: int) -> list[str]:
        fused: dict[int, float] = {}
        for weight, ranked in (
            (0.5, self.bm25.ranked(query, self.depth)),
            (0.5, self.dense.ranked(query, self.depth)),
        ):
            for rank, i in enumerate(ranked, start=1):
                fused[i] = fused.get(i, 0.0) + weight / (self.c + rank)
        top = sorted(fused, key=lambda i: (-fused[i], i))[:k]
        return [self.keys[i] for i in top]


def make_system(name: str, config: Overrides) -> System:
    """A fresh system by name."""
    factories: dict[str, Callable[[], System]] = {
        "hybrid": lambda: HybridSystem(config),
        "bm25": lambda: BM25System(config),
        "dense": DenseSystem,
        "inmemory": InMemorySystem,
        "rrf": lambda: RRFSystem(config),
    }
    return factories[name]()


# ============================================================================ metrics
def question_metrics(ranked: Sequence[str], gold: frozenset[str]) -> dict[str, float]:
    """any@5, all@5, frac@10 and reciprocal rank (within the top 10) of one question."""
    top5 = set(ranked[:5])
    top10 = set(ranked[:10])
    rr = 0.0
    for rank, key in enumerate(ranked[:10], start=1):
        if key in gold:
            rr = 1.0 / rank
            break
    return {
        "any@5": float(bool(top5 & gold)),
        "all@5": float(gold <= top5),
        "frac@10": len(top10 & gold) / len(gold),
        "mrr": rr,
    }


def _mean(rows: Sequence[dict[str, float]], key: str) -> float:
    return float(statistics.fmean(r[key] for r in rows)) if rows else 0.0


def summarise(rows: list[dict[str, Any]], lat_ms: list[float]) -> dict[str, Any]:
    """Aggregate per-question rows overall and per category, plus latency percentiles."""
    keys = ("any@5", "all@5", "frac@10", "mrr")
    out: dict[str, Any] = {"n": len(rows), **{k: _mean(rows, k) for k in keys}}
    cats: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        cats.setdefault(r["category"], []).append(r)
    out["by_category"] = {
        c: {"n": len(rs), **{k: _mean(rs, k) for k in keys}} for c, rs in sorted(cats.items())
    }
    lat = np.asarray(lat_ms) if lat_ms else np.zeros(1)
    out["latency_ms"] = {"p50": float(np.percentile(lat, 50)), "p95": float(np.percentile(lat, 95))}
    return out


def evaluate(
    units: list[Unit], systems: Sequence[str], emb: CachedEmbeddings, config: Overrides
) -> dict[str, Any]:
    """Run every system over every unit; returns per-system summaries."""
    out: dict[str, Any] = {}
    for name in systems:
        rows: list[dict[str, Any]] = []
        lat: list[float] = []
        for unit in units:
            system = make_system(name, config)
            system.build(unit, emb)
            for q in unit.queries:
                t0 = time.perf_counter()
                ranked = system.search(q.text, K_LIST)
                lat.append((time.perf_counter() - t0) * 1000)
                rows.append({"category": q.category, **question_metrics(ranked, q.gold)})
            system.close()
        out[name] = summarise(rows, lat)
    return out


def query_embed_cost(
    emb: CachedEmbeddings, queries: Sequence[str], n: int = 40
) -> dict[str, float]:
    """Uncached USE cost of embedding one query (ms), measured on up to `n` queries."""
    times = []
    for q in list(queries)[:n]:
        t0 = time.perf_counter()
        emb.base.embed_query(q)
        times.append((time.perf_counter() - t0) * 1000)
    arr = np.asarray(times or [0.0])
    return {"p50": float(np.percentile(arr, 50)), "p95": float(np.percentile(arr, 95))}


# ============================================================================ report
def markdown(results: dict[str, Any]) -> str:
    """Tables: one overview row per set and system, then per-category frac@10."""
    lines = [
        "| set | system | n | any@5 | all@5 | frac@10 | MRR@10 | p50 ms | p95 ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for set_name, res in results["sets"].items():
        for sys_name, r in res["systems"].items():
            lat = r["latency_ms"]
            lines.append(
                f"| {set_name} | {sys_name} | {r['n']} | {r['any@5']:.3f} | {r['all@5']:.3f} | "
                f"{r['frac@10']:.3f} | {r['mrr']:.3f} | {lat['p50']:.2f} | {lat['p95']:.2f} |"
            )
    for set_name, res in results["sets"].items():
        sys_names = list(res["systems"])
        cats = list(next(iter(res["systems"].values()))["by_category"])
        lines += [
            "",
            f"any@5 / frac@10 by category, {set_name}:",
            "",
            "| category | n | " + " | ".join(sys_names) + " |",
            "|---|---|" + "---|" * len(sys_names),
        ]
        for c in cats:
            n = res["systems"][sys_names[0]]["by_category"][c]["n"]
            vals = " | ".join(
                "{any:.3f} / {frac:.3f}".format(
                    any=res["systems"][s]["by_category"][c]["any@5"],
                    frac=res["systems"][s]["by_category"][c]["frac@10"],
                )
                for s in sys_names
            )
            lines.append(f"| {c} | {n} | {vals} |")
    lines += ["", "USE query embedding cost (uncached, ms, not included above):", ""]
    for set_name, res in results["sets"].items():
        e = res["query_embedding_ms"]
        lines.append(f"- {set_name}: p50 {e['p50']:.2f}, p95 {e['p95']:.2f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Command-line entry: load data, run systems, print tables, write JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="datasets folder")
    ap.add_argument("--smoke", action="store_true", help="one conversation, a few questions")
    ap.add_argument("--sets", default="locomo,madial_zh,madial_en,memorybank_cn,preferences")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument(
        "--locomo-part",
        choices=("all", "even", "odd"),
        default="all",
        help="LoCoMo conversations by index: even (tuning) or odd (held out)",
    )
    ap.add_argument(
        "--madial-part",
        choices=("all", "even", "odd"),
        default="all",
        help="MADial dialogues by index in the file: even (tuning) or odd (held out)",
    )
    ap.add_argument(
        "--memorybank-part",
        choices=("all", "even", "odd"),
        default="all",
        help="MemoryBank-cn users by index: even (tuning) or odd (held out)",
    )
    ap.add_argument(
        "--preferences-part",
        choices=("all", "even", "odd"),
        default="all",
        help="the preference set's questions by index: even (tuning) or odd (held out)",
    )
    ap.add_argument("--set-config", nargs="*", default=[], metavar="SECTION.FIELD=JSON")
    ap.add_argument(
        "--session-key",
        default="session",
        help="value key that names a LoCoMo turn's session (session, session_id, thread_id, ...)",
    )
    ap.add_argument(
        "--backend",
        choices=("sqlite", "milvus", "milvus-per-unit"),
        default="sqlite",
        help="HybridStore's storage: SQLite in memory, or one Milvus Lite file for the whole "
        "run (every unit a namespace of the same collection, as users in production; "
        "milvus-per-unit: a collection per unit, so BM25 statistics are the unit's as on SQLite)",
    )
    ap.add_argument("--out", type=Path, default=None, help="JSON results path")
    ap.add_argument("--md", type=Path, default=None, help="also write the tables here")
    ap.add_argument(
        "--plot", type=Path, default=None, help="draw the picture here (docs/retrieval_quality.png)"
    )
    args = ap.parse_args(argv)
    SESSION_KEY[0] = args.session_key
    PER_UNIT[0] = int(args.backend == "milvus-per-unit")
    if args.backend != "sqlite":
        lite_dir = tempfile.mkdtemp(prefix="rq-milvus-")
        atexit.register(shutil.rmtree, lite_dir, True)
        BACKEND_PATH[0] = str(Path(lite_dir) / "bench.milvus.db")
    if not (args.data / "locomo").exists():
        raise SystemExit(f"no datasets at {args.data} (pass --data)")
    config = parse_overrides(args.set_config)
    systems = [s for s in args.systems.split(",") if s]
    loaders: dict[str, Callable[[], list[Unit]]] = {
        "locomo": lambda: load_locomo(
            args.data, max_convs=1 if args.smoke else None, max_q=40 if args.smoke else None
        ),
        "madial_zh": lambda: load_madial(
            args.data, "zh", max_q=20 if args.smoke else None, part=args.madial_part
        ),
        "madial_en": lambda: load_madial(
            args.data, "en", max_q=20 if args.smoke else None, part=args.madial_part
        ),
        "memorybank_cn": lambda: load_memorybank_cn(args.data, max_q=4 if args.smoke else None),
        "preferences": lambda: load_preferences(part=args.preferences_part),
    }
    emb = CachedEmbeddings()
    results: dict[str, Any] = {
        "machine": {
            "nproc": __import__("os").cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "config": (config.config or MemoryConfig()).model_dump(),
        "tuning": (config.tuning or StoreTuning()).model_dump(),
        "smoke": args.smoke,
        "backend": args.backend,
        "session_key": args.session_key,
        "parts": {
            "locomo": args.locomo_part,
            "madial": args.madial_part,
            "memorybank_cn": args.memorybank_part,
            "preferences": args.preferences_part,
        },
        "sets": {},
    }
    for set_name in args.sets.split(","):
        units = loaders[set_name]()
        if set_name == "locomo" and args.locomo_part != "all":
            units = units[args.locomo_part == "odd" :: 2]
        if set_name == "memorybank_cn" and args.memorybank_part != "all":
            units = units[args.memorybank_part == "odd" :: 2]
        queries = [q.text for u in units for q in u.queries]
        # the store embeds a transcript query as text_to_embed gives it: cache those too
        texts = [t for u in units for _, t in u.docs] + queries
        texts += [t for t in map(text_to_embed, queries) if t not in queries]
        embed_s = emb.warm(texts)
        res = evaluate(units, systems, emb, config)
        results["sets"][set_name] = {
            "units": len(units),
            "docs": sum(len(u.docs) for u in units),
            "queries": sum(len(u.queries) for u in units),
            "embed_seconds": embed_s,
            "query_embedding_ms": query_embed_cost(emb, [q.text for u in units for q in u.queries]),
            "systems": res,
        }
    table = markdown(results)
    print(table)
    write_json(args.out, results, newline=False)
    write_text(args.md, table + "\n")
    if args.plot is not None:
        plots.retrieval_quality(results, args.plot)
    return results


if __name__ == "__main__":
    main()
