"""End-to-end memory benchmark: replay conversations through `Memory.add`, then ask.

This measures the memory a user actually gets, not one part of it. Each LoCoMo dev
conversation (read from the shared datasets folder, never copied into the repo) is replayed one
exchange at a time (a turn of the first speaker as the user message, the next turn of the other
speaker as the reply) through two `Memory` instances in the same run:

- **pipeline**: `Memory.add(..., infer=True)` with no chat model (the offline, rule-based
  processors: what a user gets by default);
- **reference**: `Memory.add(..., infer=False)`, the same turns stored as given.

Then every question (categories multi-hop, temporal, open-domain, single-hop) is asked with
`Memory.search(limit=10)` and scored:

- **evidence recall through provenance**: the share of the question's evidence turns covered by
  the top 10. A memory covers the turns of every exchange whose `add` created or changed it
  (the ids `add` returned), so a derived fact is credited with the turns it came from;
- **answer containment@10**: the answer's content words (the project tokenizer, stop words
  removed) all present in the top-10 texts (and the mean share of them present).

Also: memories per turn, ingest milliseconds per exchange (p50/p95, wall and without the
embedding calls), bytes per turn on disk. Messages are written ``"Speaker: text"`` (with the
image caption where a turn shares a photo), the same for both systems.

    python benchmarks/e2e_memory.py --data ../shared/datasets \
        --out docs/results/e2e_memory.json --md docs/results/e2e_memory.md
"""

from __future__ import annotations

import argparse
import inspect
import json
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import plots  # noqa: E402
from _results import command_line, machine, publish  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402
from langchain_core.language_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402

from langmem_plus import Memory  # noqa: E402
from langmem_plus.embeddings import default_embeddings  # noqa: E402
from langmem_plus.text.tokenize import tokenize  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "datasets"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
K = 10
_DIA_RE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")


# ============================================================================ data
@dataclass
class Exchange:
    """One user message and its reply, with the turns they are and when they were said."""

    session_id: str
    occurred_at: datetime | None
    messages: list[dict[str, str]]
    dia_ids: list[str]


@dataclass
class Question:
    """A question with its evidence turns and answer text."""

    text: str
    evidence: frozenset[str]
    answer: str
    category: str


@dataclass
class Conversation:
    """One LoCoMo conversation: its exchanges in order and its questions."""

    name: str
    exchanges: list[Exchange] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    turns: int = 0


def parse_session_date(raw: str | None) -> datetime | None:
    """LoCoMo's `"1:56 pm on 8 May, 2023"` as an aware UTC datetime (None if absent)."""
    if not raw:
        return None
    try:
        return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def _turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [{turn['blip_caption']}]"
    return text


def load_locomo(data: Path, max_convs: int | None, max_q: int | None) -> list[Conversation]:
    """LoCoMo dev as exchanges (first speaker's turn + the reply) and scorable questions."""
    samples = json.loads((data / "locomo" / "locomo_dev.json").read_text(encoding="utf-8"))
    convs: list[Conversation] = []
    for sample in samples[:max_convs]:
        raw = sample["conversation"]
        first = raw.get("speaker_a")
        conv = Conversation(sample["sample_id"])
        sessions = sorted(
            (k for k, v in raw.items() if re.fullmatch(r"session_\d+", k) and isinstance(v, list)),
            key=lambda k: int(k.split("_")[1]),
        )
        for skey in sessions:
            when = parse_session_date(raw.get(f"{skey}_date_time"))
            turns = raw[skey]
            conv.turns += len(turns)
            i = 0
            while i < len(turns):
                pair = [turns[i]]
                if turns[i]["speaker"] == first and i + 1 < len(turns):
                    pair.append(turns[i + 1])
                roles = ["user", "assistant"] if pair[0]["speaker"] == first else ["user"]
                msgs = [
                    {"role": r, "content": _turn_text(t)} for r, t in zip(roles, pair, strict=False)
                ]
                conv.exchanges.append(
                    Exchange(
                        f"{sample['sample_id']}-{skey}", when, msgs, [t["dia_id"] for t in pair]
                    )
                )
                i += len(pair)
        valid = {d for ex in conv.exchanges for d in ex.dia_ids}
        for qa in sample["qa"]:
            cat = CATEGORIES.get(int(qa["category"]))
            if cat is None or "answer" not in qa:
                continue
            gold = {
                f"D{int(s)}:{int(t)}"
                for ev in qa.get("evidence", [])
                for s, t in _DIA_RE.findall(str(ev))
            } & valid
            if gold:
                conv.questions.append(
                    Question(str(qa["question"]), frozenset(gold), str(qa["answer"]), cat)
                )
        conv.questions = conv.questions[:max_q]
        convs.append(conv)
    return convs


def load_memorybank(data: Path, max_convs: int | None, max_q: int | None) -> list[Conversation]:
    """MemoryBank-cn users with labelled questions: dated query/response exchanges, and the
    answers labelled in benchmarks/data/memorybank_cn_answers.jsonl (evidence = exchanges).

    The judgement word 不对 of false-premise answers is left out of the answer words: it is
    the answer's verdict, not something a memory says.
    """
    raw = json.loads((data / "memorybank" / "cn" / "memory_bank_cn.json").read_text("utf-8"))
    labels = [
        json.loads(line)
        for line in (ROOT / "benchmarks" / "data" / "memorybank_cn_answers.jsonl")
        .read_text("utf-8")
        .splitlines()
        if line.strip()
    ]
    users = list(dict.fromkeys(lab["user"] for lab in labels))[:max_convs]
    convs = []
    for user in users:
        conv = Conversation(user)
        for day in sorted(raw[user]["history"]):
            when = datetime.fromisoformat(day).replace(hour=20, tzinfo=timezone.utc)
            for i, ex in enumerate(raw[user]["history"][day]):
                msgs = [
                    {"role": "user", "content": str(ex["query"])},
                    {"role": "assistant", "content": str(ex["response"])},
                ]
                conv.exchanges.append(Exchange(f"{user}-{day}", when, msgs, [f"{day}#{i}"]))
                conv.turns += 2
        for lab in labels:
            if lab["user"] != user:
                continue
            gold = frozenset(f"{ev['date']}#{ev['turn_index']}" for ev in lab["evidence"])
            words = [w for w in lab["answer_words"] if w != "不对"]
            conv.questions.append(
                Question(lab["question_ref"]["question"], gold, " ".join(words), "memorybank-cn")
            )
        conv.questions = conv.questions[:max_q]
        convs.append(conv)
    return convs


# ============================================================================ systems
class TimedEmbeddings(Embeddings):
    """Wraps an embeddings model and adds up the seconds spent in it."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.model_name = getattr(inner, "model_name", type(inner).__name__)
        self.dims = getattr(inner, "dims", None)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        t = time.perf_counter()
        try:
            return self.inner.embed_documents(texts)
        finally:
            self.seconds += time.perf_counter() - t

    def embed_query(self, text: str) -> list[float]:
        t = time.perf_counter()
        try:
            return self.inner.embed_query(text)
        finally:
            self.seconds += time.perf_counter() - t


@dataclass
class Run:
    """One system's replay of one conversation: provenance and costs."""

    memory: Memory
    emb: TimedEmbeddings
    path: Path
    user: str
    sources: dict[str, set[str]] = field(default_factory=dict)
    ingest_ms: list[float] = field(default_factory=list)
    ingest_excl_ms: list[float] = field(default_factory=list)
    calls: int = 0
    prompt_tokens: int = 0


_ADD_TAKES_TIME = "timestamp" in inspect.signature(Memory.add).parameters


class StandInModel(BaseChatModel):
    """A deterministic chat model that answers every fact request with no facts: it shows
    what the model path costs per exchange (calls, prompt size), not what a model finds."""

    @property
    def _llm_type(self) -> str:
        return "stand-in"

    def _generate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, **kwargs: Any
    ) -> ChatResult:
        prompt = sum(len(str(m.content)) for m in messages)
        msg = AIMessage(
            '{"facts": []}',
            usage_metadata={
                "input_tokens": prompt // 4,
                "output_tokens": 4,
                "total_tokens": prompt // 4 + 4,
            },
        )
        return ChatResult(generations=[ChatGeneration(message=msg)])


def replay(
    conv: Conversation, infer: bool, inner: Embeddings, workdir: Path, model: Any = None
) -> Run:
    """Feed every exchange of `conv` to a fresh Memory; record what each add touched."""
    emb = TimedEmbeddings(inner)
    path = workdir / f"{conv.name}-{'pipeline' if infer else 'reference'}.db"
    run = Run(Memory(path, embeddings=emb, model=model if infer else None), emb, path, conv.name)
    for ex in conv.exchanges:
        kwargs: dict[str, Any] = {"session_id": ex.session_id, "infer": infer}
        if _ADD_TAKES_TIME and ex.occurred_at is not None:
            kwargs["timestamp"] = ex.occurred_at
        e0, t0 = emb.seconds, time.perf_counter()
        ids = run.memory.add(ex.messages, conv.name, **kwargs)
        wall = (time.perf_counter() - t0) * 1000
        run.ingest_ms.append(wall)
        run.ingest_excl_ms.append(wall - (emb.seconds - e0) * 1000)
        for mid in ids:
            run.sources.setdefault(mid, set()).update(ex.dia_ids)
        cost = run.memory.last_cost if infer else {}
        run.calls += int(cost.get("calls", 0))
        run.prompt_tokens += int(cost.get("prompt_tokens", 0))
    return run


def answer_words(text: str) -> set[str]:
    """The answer's content words as the project tokenizer sees them (stop words removed)."""
    return {t.lower() for t in tokenize(text)}


def score(run: Run, conv: Conversation) -> list[dict[str, Any]]:
    """Per question: evidence recall through provenance and answer containment@10."""
    rows = []
    for q in conv.questions:
        hits = run.memory.search(q.text, conv.name, limit=K)
        covered: set[str] = set()
        words: set[str] = set()
        for h in hits:
            covered |= run.sources.get(h.id, set())
            words |= answer_words(h.text)
        want = answer_words(q.answer)
        found = len(want & words) / len(want) if want else 1.0
        rows.append(
            {
                "category": q.category,
                "evidence_recall": len(q.evidence & covered) / len(q.evidence),
                "answer_all": float(found == 1.0),
                "answer_share": found,
            }
        )
    return rows


def _pct(xs: Sequence[float], p: float) -> float:
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


def _bytes_on_disk(path: Path) -> int:
    return sum(
        f.stat().st_size
        for f in path.parent.iterdir()
        if f.name == path.name or f.name.startswith(path.name + "-")
    )


def _bytes_excl_vectors(path: Path) -> int:
    """Bytes of the database's tables and indexes other than the vector ones (SQLite dbstat)."""
    con = sqlite3.connect(path)
    try:
        row = con.execute(
            "SELECT SUM(pgsize) FROM dbstat "
            "WHERE name NOT IN ('vectors', 'vectors_item', 'vec_log')"
        ).fetchone()
    finally:
        con.close()
    return int(row[0] or 0)


def _empty_database_bytes(workdir: Path, inner: Embeddings) -> int:
    """Bytes (vectors left out) of a database that holds nothing yet: its tables' and
    indexes' first pages, paid once per database whatever it stores."""
    path = workdir / "empty.db"
    Memory(path, embeddings=inner).close()
    return _bytes_excl_vectors(path)


def summarise(rows: list[dict[str, Any]], runs: list[Run], turns: int) -> dict[str, Any]:
    """Means over questions (overall and per category) and the per-turn costs."""

    def means(sel: list[dict[str, Any]]) -> dict[str, float]:
        return {
            k: round(statistics.fmean(r[k] for r in sel), 4) if sel else 0.0
            for k in ("evidence_recall", "answer_all", "answer_share")
        }

    cats = sorted({r["category"] for r in rows})
    ingest = [x for r in runs for x in r.ingest_ms]
    excl = [x for r in runs for x in r.ingest_excl_ms]
    items = sum(r.memory.store.count(r.memory.namespace(r.user)) for r in runs)
    exchanges = sum(len(r.ingest_ms) for r in runs)
    return {
        "questions": len(rows),
        **means(rows),
        "model_calls_per_exchange": round(sum(r.calls for r in runs) / max(1, exchanges), 3),
        "prompt_tokens_per_exchange": round(
            sum(r.prompt_tokens for r in runs) / max(1, exchanges), 1
        ),
        "by_category": {c: means([r for r in rows if r["category"] == c]) for c in cats},
        "memories": items,
        "memories_per_turn": round(items / max(1, turns), 3),
        "ingest_ms_p50": round(_pct(ingest, 50), 2),
        "ingest_ms_p95": round(_pct(ingest, 95), 2),
        "ingest_excl_embed_ms_p50": round(_pct(excl, 50), 2),
        "ingest_excl_embed_ms_p95": round(_pct(excl, 95), 2),
    }


# ============================================================================ report
def markdown(res: dict[str, Any]) -> str:
    """The result tables as Markdown."""
    out = [
        f"Command: `{res['command']}`  ",
        f"Machine: {res['machine']}; embeddings: {res['embeddings']}; set: {res.get('set')}; "
        f"{res['conversations']} conversations, {res['turns']} turns, "
        f"{res['exchanges']} exchanges.",
        "",
        "| system | evidence recall@10 | answer contained@10 (all words) | answer words found "
        "| memories | per turn | ingest p50 / p95 ms | excl. embedding p50 / p95 ms "
        "| bytes / turn | excl. vectors | stored per turn excl. vectors "
        "| model calls / tokens per exchange |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in ("pipeline", "reference"):
        s = res["systems"][name]
        out.append(
            f"| {name} | {s['evidence_recall']:.3f} | {s['answer_all']:.3f} "
            f"| {s['answer_share']:.3f} | {s['memories']} | {s['memories_per_turn']} "
            f"| {s['ingest_ms_p50']} / {s['ingest_ms_p95']} "
            f"| {s['ingest_excl_embed_ms_p50']} / {s['ingest_excl_embed_ms_p95']} "
            f"| {s['bytes_per_turn']} | {s['bytes_per_turn_excl_vectors']} "
            f"| {s.get('stored_bytes_per_turn_excl_vectors', '-')} "
            f"| {s['model_calls_per_exchange']} / {s['prompt_tokens_per_exchange']} |"
        )
    if "empty_database_bytes_excl_vectors" in res:
        out += [
            "",
            f"Each conversation is replayed into its own database; an empty database takes "
            f"{res['empty_database_bytes_excl_vectors']:,} bytes (its tables' and indexes' "
            "first pages, vectors left out), paid once per database. *Stored per turn* is "
            "what the turns add past that: (databases' bytes − databases × empty) / turns.",
        ]
    out += ["", "By category (evidence recall@10 / answer contained@10):", ""]
    cats = sorted(res["systems"]["pipeline"]["by_category"])
    out.append("| system | " + " | ".join(cats) + " |")
    out.append("|---|" + "---|" * len(cats))
    for name in ("pipeline", "reference"):
        bc = res["systems"][name]["by_category"]
        out.append(
            f"| {name} | "
            + " | ".join(
                f"{bc[c]['evidence_recall']:.3f} / {bc[c]['answer_all']:.3f}" for c in cats
            )
            + " |"
        )
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Replay, ask, print the tables; optionally write JSON and Markdown results."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--max-convs", type=int, default=None)
    ap.add_argument("--max-q", type=int, default=None)
    ap.add_argument("--set", choices=["locomo", "memorybank"], default="locomo")
    ap.add_argument(
        "--llm-standin",
        action="store_true",
        help="the pipeline uses a stand-in chat model (no facts): reports calls/tokens per exchange",
    )
    ap.add_argument("--out", type=Path)
    ap.add_argument("--md", type=Path)
    ap.add_argument("--plot", type=Path, help="draw the picture here (docs/e2e_memory.png)")
    args = ap.parse_args(argv)
    folder = "locomo" if args.set == "locomo" else "memorybank"
    if not (args.data / folder).exists():
        ap.error(f"no {folder} data under {args.data} (pass --data ../shared/datasets)")
    load = load_locomo if args.set == "locomo" else load_memorybank
    convs = load(args.data, args.max_convs, args.max_q)
    inner = default_embeddings()
    rows: dict[str, list[dict[str, Any]]] = {"pipeline": [], "reference": []}
    runs: dict[str, list[Run]] = {"pipeline": [], "reference": []}
    bytes_: dict[str, int] = {"pipeline": 0, "reference": 0}
    with tempfile.TemporaryDirectory() as tmp:
        for conv in convs:
            # interleaved: both systems replay the same conversation back to back
            for name, infer in (("pipeline", True), ("reference", False)):
                model = StandInModel() if args.llm_standin else None
                run = replay(conv, infer, inner, Path(tmp), model)
                rows[name] += score(run, conv)
                runs[name].append(run)
                print(
                    f"{conv.name} {name}: {run.memory.store.count(run.memory.namespace(conv.name))}"
                    f" memories of {conv.turns} turns",
                    flush=True,
                )
        turns = sum(c.turns for c in convs)
        empty = _empty_database_bytes(Path(tmp), inner)
        systems = {}
        for name in rows:
            systems[name] = summarise(rows[name], runs[name], turns)
            for r in runs[name]:
                r.memory.close()
                bytes_[name] += _bytes_on_disk(r.path)
            systems[name]["bytes_per_turn"] = round(bytes_[name] / max(1, turns))
            excl = sum(_bytes_excl_vectors(r.path) for r in runs[name])
            systems[name]["bytes_per_turn_excl_vectors"] = round(excl / max(1, turns))
            # what each stored turn adds: the databases' size past their empty schema
            systems[name]["stored_bytes_per_turn_excl_vectors"] = round(
                (excl - len(runs[name]) * empty) / max(1, turns)
            )
    res = {
        "command": command_line("e2e_memory.py", argv),
        "machine": machine(),
        "embeddings": getattr(inner, "model_name", type(inner).__name__),
        "set": args.set,
        "conversations": len(convs),
        "turns": sum(c.turns for c in convs),
        "exchanges": sum(len(c.exchanges) for c in convs),
        "empty_database_bytes_excl_vectors": empty,
        "systems": systems,
    }
    publish(res, markdown(res), args.out, args.md)
    if args.plot is not None:
        plots.e2e_memory(res, args.plot)
    return res


if __name__ == "__main__":
    main()
