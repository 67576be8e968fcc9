"""What a memory turn cost, per stage: model calls, prompt/completion tokens, milliseconds.

`MemoryEngine` (middleware, graph nodes) and `Memory.add` time each stage — recall and
context assembly before the model, each post-turn step after it — and count the model calls
made inside it. The result is a `TurnCost`: handed to an `on_cost` callback, kept in the
reports, and persisted to the ``turn_costs`` table of a `HybridStore` so that
``langmem-plus stats --costs`` can summarise it. Milliseconds are wall durations
(`time.perf_counter`); calls and tokens come from the FactDeriver's trace or, for the other
processors, from a LangChain callback that sees every chat model run inside a stage.
"""

from __future__ import annotations

import logging
import math
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult
from langchain_core.tracers.context import register_configure_hook

from langmem_plus.config import MemoryConfig
from langmem_plus.errors import ReadOnlyStoreError, ValidationError

__all__ = [
    "CostCallback",
    "CostTimer",
    "Phase",
    "StageCost",
    "TurnCost",
    "check_on_cost",
    "deliver",
    "summarize_costs",
    "usage_meter",
]

logger = logging.getLogger("langmem_plus.model.costs")

Phase = Literal["prepare", "post_turn", "add"]
_PHASES = ("prepare", "post_turn", "add")
_TOTAL_KEYS = ("calls", "prompt_tokens", "completion_tokens", "ms")


@dataclass(frozen=True)
class StageCost:
    """One stage of a turn: how long it took and what its model calls used."""

    stage: str
    ms: float
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict."""
        return {
            "stage": self.stage,
            "ms": round(self.ms, 3),
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


@dataclass(frozen=True)
class TurnCost:
    """The stages of one turn's phase (`prepare`: before the model; `post_turn`: the
    processors after it; `add`: one `Memory.add`), with totals."""

    user_id: str
    session_id: str | None
    phase: Phase
    stages: tuple[StageCost, ...]
    at: datetime
    id: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def calls(self) -> int:
        """Model calls over all stages."""
        return sum(s.calls for s in self.stages)

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens over all stages."""
        return sum(s.prompt_tokens for s in self.stages)

    @property
    def completion_tokens(self) -> int:
        """Completion tokens over all stages."""
        return sum(s.completion_tokens for s in self.stages)

    @property
    def ms(self) -> float:
        """Milliseconds over all stages."""
        return sum(s.ms for s in self.stages)

    def stage(self, name: str) -> StageCost | None:
        """The stage called `name`, if it ran."""
        return next((s for s in self.stages if s.stage == name), None)

    def get(self, key: str, default: Any = None) -> Any:
        """A total by name (``calls``, ``prompt_tokens``, ``completion_tokens``, ``ms``): the
        dict-style read `Memory.last_cost` offered before it became a `TurnCost`."""
        return getattr(self, key) if key in _TOTAL_KEYS else default

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict: identity, totals and the stages."""
        return {
            "id": self.id,
            "user_id": self.user_id,
            "session_id": self.session_id,
            "phase": self.phase,
            "at": self.at.isoformat(),
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "ms": round(self.ms, 3),
            "stages": [s.as_dict() for s in self.stages],
        }


CostCallback = Callable[[TurnCost], None]


def check_on_cost(value: Any) -> CostCallback | None:
    """`value` as an `on_cost` callback (None allowed); anything else is refused."""
    if value is not None and not callable(value):
        raise ValidationError(f"on_cost must be callable (receives a TurnCost), got {value!r}")
    return value  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------- model usage
class _UsageMeter(BaseCallbackHandler):
    """Counts chat model / LLM runs and the tokens their answers report."""

    def __init__(self) -> None:
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        """A chat model request: one call."""
        self.calls += 1

    def on_llm_start(self, serialized: Any, prompts: Any, **kwargs: Any) -> None:
        """A completion-model request: one call."""
        self.calls += 1

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        """Add the tokens the answer reports (`usage_metadata`)."""
        for gens in response.generations:
            for gen in gens:
                usage = getattr(getattr(gen, "message", None), "usage_metadata", None)
                if isinstance(usage, Mapping):
                    self.prompt_tokens += int(usage.get("input_tokens") or 0)
                    self.completion_tokens += int(usage.get("output_tokens") or 0)


_METER: ContextVar[_UsageMeter | None] = ContextVar("langmem_plus_usage_meter", default=None)
register_configure_hook(_METER, inheritable=True)


@contextmanager
def usage_meter() -> Iterator[_UsageMeter]:
    """Count the model calls and reported tokens of every LangChain model run in this block
    (this thread/task only); nested blocks each see their own runs."""
    meter = _UsageMeter()
    token = _METER.set(meter)
    try:
        yield meter
    finally:
        _METER.reset(token)


# ---------------------------------------------------------------------------- timing
@dataclass
class _Tally:
    ms: float = 0.0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add_usage(self, usage: Mapping[str, Any]) -> None:
        """Add calls/tokens from a mapping such as `Kept.cost` (other keys ignored)."""
        for key in ("calls", "prompt_tokens", "completion_tokens"):
            val = usage.get(key)
            if isinstance(val, int) and not isinstance(val, bool):
                setattr(self, key, getattr(self, key) + val)


class CostTimer:
    """Collects the stages of one phase; a stage named twice adds up into one."""

    def __init__(self) -> None:
        self._tallies: dict[str, _Tally] = {}

    @contextmanager
    def stage(self, name: str, *, meter: bool = True) -> Iterator[_Tally]:
        """Time the block as stage `name`; with `meter`, count its model calls and tokens
        (off where the stage reports them itself through the yielded tally's `add_usage`)."""
        tally = self._tallies.setdefault(name, _Tally())
        counter = _UsageMeter() if meter else None
        token = _METER.set(counter) if counter is not None else None
        t0 = time.perf_counter()
        try:
            yield tally
        finally:
            tally.ms += (time.perf_counter() - t0) * 1000
            if counter is not None and token is not None:
                _METER.reset(token)
                tally.add_usage(vars(counter))

    def finish(
        self, *, user_id: str, session_id: str | None, phase: Phase, at: datetime
    ) -> TurnCost:
        """The `TurnCost` of the stages timed so far."""
        stages = tuple(
            StageCost(n, t.ms, t.calls, t.prompt_tokens, t.completion_tokens)
            for n, t in self._tallies.items()
        )
        at = at if at.tzinfo is not None else at.replace(tzinfo=timezone.utc)
        return TurnCost(user_id=user_id, session_id=session_id, phase=phase, stages=stages, at=at)


def deliver(cost: TurnCost, *, on_cost: CostCallback | None, store: Any) -> None:
    """Hand `cost` to the callback and, when the store keeps a conversation log (HybridStore),
    persist it. Neither may break the turn: failures are logged."""
    if on_cost is not None:
        try:
            on_cost(cost)
        except Exception as exc:
            logger.warning("on_cost callback failed: %s", exc)
    try:
        log = getattr(store, "conversations", None)
    except Exception:
        log = None
    writer = getattr(log, "add_costs", None)
    config = getattr(store, "config", None)
    keep = config.llm.record_costs if isinstance(config, MemoryConfig) else True
    if writer is None or not cost.stages or not keep:
        return
    rows = [
        (
            cost.id,
            cost.phase,
            cost.user_id,
            cost.session_id,
            s.stage,
            s.ms,
            s.calls,
            s.prompt_tokens,
            s.completion_tokens,
            cost.at.timestamp(),
        )
        for s in cost.stages
    ]
    try:
        writer(rows)
    except ReadOnlyStoreError:
        logger.debug("read-only store: turn costs not recorded")
    except Exception as exc:
        logger.warning("could not record turn costs: %s", exc)


# ---------------------------------------------------------------------------- summary
def _percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of `values` (q in (0, 1]); 0.0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def summarize_costs(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """p50/p95 milliseconds per stage and model calls/tokens per turn, from persisted rows
    (dicts with cost_id, phase, stage, ms, calls, prompt_tokens, completion_tokens)."""
    by_stage: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    turns: dict[str, dict[str, dict[str, float]]] = {p: {} for p in _PHASES}
    for r in rows:
        phase = str(r["phase"])
        by_stage.setdefault((phase, str(r["stage"])), []).append(r)
        per = turns.setdefault(phase, {}).setdefault(
            str(r["cost_id"]), {k: 0.0 for k in _TOTAL_KEYS}
        )
        for k in _TOTAL_KEYS:
            per[k] += float(r[k] or 0)
    stages = []
    for (phase, stage), rs in sorted(by_stage.items(), key=lambda kv: (_order(kv[0][0]), kv[0][1])):
        n_turns = len(turns[phase]) or 1
        ms = [float(r["ms"]) for r in rs]
        stages.append(
            {
                "phase": phase,
                "stage": stage,
                "runs": len(rs),
                "p50_ms": round(_percentile(ms, 0.5), 3),
                "p95_ms": round(_percentile(ms, 0.95), 3),
                "calls_per_turn": round(sum(int(r["calls"]) for r in rs) / n_turns, 3),
                "prompt_tokens_per_turn": round(
                    sum(int(r["prompt_tokens"]) for r in rs) / n_turns, 1
                ),
                "completion_tokens_per_turn": round(
                    sum(int(r["completion_tokens"]) for r in rs) / n_turns, 1
                ),
            }
        )
    phases = {}
    for phase, per_turn in turns.items():
        if not per_turn:
            continue
        vals = list(per_turn.values())
        n = len(vals)
        phases[phase] = {
            "turns": n,
            "p50_ms": round(_percentile([v["ms"] for v in vals], 0.5), 3),
            "p95_ms": round(_percentile([v["ms"] for v in vals], 0.95), 3),
            "calls_per_turn": round(sum(v["calls"] for v in vals) / n, 3),
            "prompt_tokens_per_turn": round(sum(v["prompt_tokens"] for v in vals) / n, 1),
            "completion_tokens_per_turn": round(sum(v["completion_tokens"] for v in vals) / n, 1),
        }
    return {"phases": phases, "stages": stages}


def _order(phase: str) -> int:
    return _PHASES.index(phase) if phase in _PHASES else len(_PHASES)
