"""REST routes of long-term memories: list, add, clear, get, update, delete, history."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi import Path as PathParam

from langmem_plus.errors import MemoryNotFoundError
from langmem_plus.memory import MAX_LIMIT, Memory
from langmem_plus.model.records import MemoryRecord
from langmem_plus.server.auth import caller, charge_work, memory_of
from langmem_plus.server.schemas import NOT_FOUND, ROUTE_RESPONSES, AddIn, AddOut, PageOut, UpdateIn

__all__ = ["router"]

router = APIRouter(responses=ROUTE_RESPONSES)
memory_id = PathParam(..., min_length=1, max_length=256, description="memory id")


@router.get(
    "/memory/long-term", response_model=PageOut, tags=["long-term"],
    operation_id="listMemories",
)  # fmt: skip
def list_memories(
    uid: str = Depends(caller),
    limit: int = Query(20, ge=1, le=MAX_LIMIT),
    offset: int = Query(0, ge=0, le=10**12),
    mem: Memory = Depends(memory_of),
) -> Any:
    """List the user's long-term memories (oldest first) with the total for paging."""
    return mem.get_all(uid, limit=limit, offset=offset).model_dump()


@router.post(
    "/memory/long-term", response_model=AddOut, status_code=201, tags=["long-term"],
    operation_id="addMemories",
)  # fmt: skip
def add_memory(
    request: Request, body: AddIn, uid: str = Depends(caller), mem: Memory = Depends(memory_of)
) -> Any:
    """Remember a text or messages: each exchange kept as an episode, facts derived."""
    texts = [body.messages] if isinstance(body.messages, str) else [
        m.content for m in body.messages
    ]  # fmt: skip
    charge_work(request, len(texts), sum(map(len, texts)) + len(texts) - 1)
    msgs = body.messages if isinstance(body.messages, str) else [
        m.model_dump() for m in body.messages
    ]  # fmt: skip
    ids = mem.add(
        msgs,
        uid,
        session_id=body.session_id,
        metadata=body.metadata,
        infer=body.infer,
        timestamp=body.timestamp,
    )
    records = []
    for i in ids:
        try:
            records.append(mem.get(i, uid))
        except MemoryNotFoundError:  # an op of the same batch deleted it
            continue
    return {"ids": ids, "memories": records}


@router.delete("/memory/long-term", tags=["long-term"], operation_id="clearMemories")
def clear_memories(
    uid: str = Depends(caller),
    include_conversations: bool = Query(
        False, description="also delete turns, summaries and the profile"
    ),
    mem: Memory = Depends(memory_of),
) -> dict[str, int]:
    """Delete all long-term memories of the user (working memory stays until it expires)."""
    return mem.reset(uid, keep_conversations=not include_conversations)


@router.get(
    "/memory/long-term/{memory_id}", response_model=MemoryRecord, tags=["long-term"],
    responses=NOT_FOUND, operation_id="getMemory",
)  # fmt: skip
def get_memory(
    memory_id: str = memory_id, uid: str = Depends(caller), mem: Memory = Depends(memory_of)
) -> Any:
    """One memory; 404 when the user has no memory with this id."""
    return mem.get(memory_id, uid)


@router.patch(
    "/memory/long-term/{memory_id}", response_model=MemoryRecord, tags=["long-term"],
    responses=NOT_FOUND, operation_id="updateMemory",
)  # fmt: skip
def update_memory(
    request: Request,
    body: UpdateIn,
    memory_id: str = memory_id,
    uid: str = Depends(caller),
    mem: Memory = Depends(memory_of),
) -> Any:
    """Change a memory's text or fields; the change is kept in its history."""
    charge_work(request, 1, len(body.text or ""))
    return mem.update(memory_id, uid, text=body.text, data=body.data)


@router.delete(
    "/memory/long-term/{memory_id}", tags=["long-term"], responses=NOT_FOUND,
    operation_id="deleteMemory",
)  # fmt: skip
def delete_memory(
    memory_id: str = memory_id, uid: str = Depends(caller), mem: Memory = Depends(memory_of)
) -> dict[str, Any]:
    """Delete one memory from every index."""
    mem.delete(memory_id, uid)
    return {"deleted": True, "id": memory_id}


@router.get(
    "/memory/long-term/{memory_id}/history", tags=["long-term"], responses=NOT_FOUND,
    operation_id="getMemoryHistory",
)  # fmt: skip
def memory_history(
    memory_id: str = memory_id, uid: str = Depends(caller), mem: Memory = Depends(memory_of)
) -> list[dict[str, Any]]:
    """How a memory came to be: creation, then each change."""
    return mem.history(memory_id, uid)
