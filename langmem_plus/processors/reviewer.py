"""Memory reviewer: at importance >= review_high decide PROMOTE (to core) or KEEP;
below review_low decide KEEP (reset to review_low) or DELETE. With a model it may search
memory for up to `reviewer_max_rounds` rounds before deciding."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Literal

from langmem_plus.errors import ValidationError
from langmem_plus.model.records import MemoryRecord
from langmem_plus.processors import prompts
from langmem_plus.processors.model.base import BaseProcessor
from langmem_plus.processors.schemas import ReviewDecision, ReviewStep
from langmem_plus.text.overlap import content_tokens, jaccard

__all__ = ["ReviewMode", "Reviewer", "SearchFn"]

ReviewMode = Literal["promote", "decay"]
SearchFn = Callable[[str], Sequence[str]]

_STABLE = re.compile(
    r"名字|叫|生日|出生|过敏|老家|住在|家在|工作|职业|女儿|儿子|妻子|丈夫|老婆|老公|妈妈|爸爸|一直|总是|"
    r"从来|不吃|喜欢|讨厌|约定|答应|\bname\b|\bbirthday\b|\bborn\b|\ballergic\b|\blives? in\b|"
    r"\bworks?\b|\bwife\b|\bhusband\b|\bdaughter\b|\bson\b|\bmother\b|\bfather\b|\balways\b|"
    r"\bnever\b|\bprefers?\b|\blikes?\b|\bloves?\b|\bhates?\b|\bdoesn't eat\b|\bpromised?\b|"
    r"\bagreed\b",
    re.IGNORECASE,
)
_TEMPORARY = re.compile(
    r"今天|今晚|明天|昨天|刚才|刚刚|这周|本周|这几天|最近|现在|暂时|待会|下周|\btoday\b|\btonight\b|"
    r"\btomorrow\b|\byesterday\b|\bright now\b|\bcurrently\b|\bthis week\b|\bthese days\b|"
    r"\bnext week\b|\bat the moment\b|\bfor now\b|\blately\b",
    re.IGNORECASE,
)
SUPERSEDED_JACCARD = 0.5  # a related memory this close (and different) may replace this one
# what a derived fact's kind (`metadata.fact_kind`) says about how long it holds
_LASTING_KINDS = frozenset({"profile", "preference", "relation", "instruction"})
_PASSING_KINDS = frozenset({"plan", "event"})


class Reviewer(BaseProcessor):
    """Decides the fate of a memory whose importance crossed a review threshold."""

    def mode_for(self, memory: MemoryRecord) -> ReviewMode | None:
        """'promote' at importance >= review_high, 'decay' below review_low, else None."""
        if memory.tier != "normal":
            return None
        if memory.importance >= self.config.lifecycle.review_high:
            return "promote"
        if memory.importance < self.config.lifecycle.review_low:
            return "decay"
        return None

    def review(
        self,
        memory: MemoryRecord,
        *,
        mode: ReviewMode | None = None,
        related: Sequence[str] = (),
        search: SearchFn | None = None,
    ) -> ReviewDecision:
        """PROMOTE / KEEP / DELETE for `memory`; `search(query)` gives more memory texts."""
        if not isinstance(memory, MemoryRecord):
            raise ValidationError("memory must be a MemoryRecord")
        mode = mode or self.mode_for(memory) or "decay"
        if mode not in ("promote", "decay"):
            raise ValidationError("mode must be 'promote' or 'decay'")
        seen = [str(r) for r in related]
        searches: list[str] = []
        if self.llm is not None:
            for round_no in range(self.config.lifecycle.reviewer_max_rounds + 1):
                user = self._message(memory, mode, seen, round_no)
                step = self.llm.call(ReviewStep, prompts.REVIEWER_PROMPT, user)
                if step is None:
                    break
                if step.action == "SEARCH":
                    if search is None or round_no >= self.config.lifecycle.reviewer_max_rounds:
                        continue
                    query = step.query.strip() or memory.text
                    searches.append(query)
                    for text in search(query):
                        if text not in seen:
                            seen.append(str(text))
                    continue
                return self._valid(
                    ReviewDecision(
                        decision=step.action,
                        reason=step.reason,
                        rounds=round_no + 1,
                        searches=searches,
                    ),
                    mode,
                )
        if search is not None and not seen and not searches:
            seen.extend(str(t) for t in search(memory.text))
            searches.append(memory.text)
        decision = self._rules(memory, mode, seen)
        decision.searches = searches
        return decision

    def _message(self, memory: MemoryRecord, mode: ReviewMode, related: list[str], rnd: int) -> str:
        task = "PROMOTE-REVIEW" if mode == "promote" else "DECAY-REVIEW"
        left = self.config.lifecycle.reviewer_max_rounds - rnd
        return (
            f"Task: {task}\n{prompts.render_record(memory)}\n"
            f"{prompts.render_texts('related', related)}\nSearches left: {max(left, 0)}"
        )

    @staticmethod
    def _valid(decision: ReviewDecision, mode: ReviewMode) -> ReviewDecision:
        if mode == "decay" and decision.decision == "PROMOTE":
            decision.decision = "KEEP"
        if mode == "promote" and decision.decision == "DELETE":
            # promotion review never deletes: a frequently used memory is kept
            decision.decision = "KEEP"
        return decision

    @staticmethod
    def _rules(memory: MemoryRecord, mode: ReviewMode, related: list[str]) -> ReviewDecision:
        text = memory.text
        kind = memory.metadata.get("fact_kind")
        stable = (
            bool(_STABLE.search(text)) or memory.category == "preference" or kind in _LASTING_KINDS
        )
        temporary = (
            bool(_TEMPORARY.search(text)) or memory.category == "episode" or kind in _PASSING_KINDS
        )
        if mode == "promote":
            if stable and not temporary:
                return ReviewDecision(decision="PROMOTE", reason="stable long-term fact")
            return ReviewDecision(decision="KEEP", reason="temporary or not a lasting fact")
        if not memory.is_current:
            return ReviewDecision(decision="DELETE", reason="replaced by a later value")
        tokens = content_tokens(text)
        for other in related:
            if other.strip() == text.strip():
                continue
            if jaccard(tokens, content_tokens(other)) >= SUPERSEDED_JACCARD:
                return ReviewDecision(decision="DELETE", reason="replaced by a related memory")
        if stable and not temporary:
            return ReviewDecision(decision="KEEP", reason="still a lasting fact")
        return ReviewDecision(decision="DELETE", reason="outdated or trivial")
