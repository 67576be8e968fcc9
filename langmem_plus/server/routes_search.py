"""REST routes that search: hybrid search of memories, recall of past conversation turns."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query

from langmem_plus.errors import ValidationError
from langmem_plus.memory import MAX_LIMIT, Memory
from langmem_plus.server.auth import caller, memory_of
from langmem_plus.server.schemas import ROUTE_RESPONSES, RecallOut, SearchIn, SearchOut, TimeRangeIn

__all__ = ["router"]

router = APIRouter(responses=ROUTE_RESPONSES)


@router.post(
    "/memory/search", response_model=SearchOut, tags=["search"],
    operation_id="searchMemories",
)  # fmt: skip
def search(body: SearchIn, uid: str = Depends(caller), mem: Memory = Depends(memory_of)) -> Any:
    """Hybrid search, best first; each hit explains its score. `offset` pages on."""
    tr: Any = body.time_range
    if isinstance(tr, TimeRangeIn):
        tr = (tr.start, tr.end)
    if body.offset + body.limit > MAX_LIMIT:
        raise ValidationError(
            f"offset + limit must be at most {MAX_LIMIT}, got {body.offset} + {body.limit}"
        )
    hits = mem.search(
        body.query, uid, limit=body.offset + body.limit, filters=body.filters, time_range=tr
    )
    return {"results": [h.model_dump() for h in hits[body.offset :]]}


@router.get(
    "/memory/recall", response_model=RecallOut, tags=["search"],
    operation_id="recallConversations",
)  # fmt: skip
def recall(
    query: str = Query(..., min_length=1, max_length=10_000),
    limit: int = Query(5, ge=1, le=MAX_LIMIT),
    session_id: str | None = Query(None, min_length=1, max_length=256),
    uid: str = Depends(caller),
    mem: Memory = Depends(memory_of),
) -> Any:
    """Relevant past conversation turns and summaries, best first."""
    return mem.recall(query, uid, limit=limit, session_id=session_id)
