"""REST routes of a user's profile and of a session's working memory.

Working memory comes from a LangGraph checkpointer's latest checkpoint of the session (its
``thread_id``) when the app has one, else from the conversation log; a session idle past
``working_memory_ttl_minutes`` is gone (404), and so is one that is not the caller's: a
checkpoint whose working memory names no user, or names another, is never shown.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi import Path as PathParam

from langmem_plus.errors import MemoryNotFoundError
from langmem_plus.memory import Memory
from langmem_plus.model.records import UserProfile, utcnow
from langmem_plus.server.auth import caller, memory_of
from langmem_plus.server.schemas import ROUTE_RESPONSES, ErrorOut, ProfileIn, WorkingMemoryOut

__all__ = ["router"]

router = APIRouter(responses=ROUTE_RESPONSES)


@router.get(
    "/memory/profile", response_model=UserProfile, tags=["profile"],
    operation_id="getProfile",
)  # fmt: skip
def get_profile(uid: str = Depends(caller), mem: Memory = Depends(memory_of)) -> Any:
    """The user's profile document (empty sections when none was written)."""
    return mem.get_profile(uid)


@router.put(
    "/memory/profile", response_model=UserProfile, tags=["profile"],
    operation_id="updateProfile",
)  # fmt: skip
def put_profile(
    body: ProfileIn, uid: str = Depends(caller), mem: Memory = Depends(memory_of)
) -> Any:
    """Edit profile sections by hand; they are then protected from automatic rewrites."""
    return mem.put_profile(uid, **body.model_dump(exclude_none=True))


def _from_checkpointer(
    checkpointer: Any, state_key: str, user_id: str, session_id: str
) -> WorkingMemoryOut | None:
    from langmem_plus.agent.working import WorkingMemory

    tup = checkpointer.get_tuple({"configurable": {"thread_id": session_id}})
    if tup is None:
        return None
    wm = WorkingMemory.from_state((tup.checkpoint.get("channel_values") or {}).get(state_key))
    if wm is None:
        return None
    # Every owner the checkpoint names must be the caller, and it must name one: the working
    # memory's own (set by the run, however the graph got the user) or the run's config.
    owners = {
        wm.user_id,
        (tup.config.get("configurable") or {}).get("user_id"),
        (tup.metadata or {}).get("user_id"),
    } - {None}
    if {str(o) for o in owners} != {user_id}:
        return None
    data = wm.model_dump(exclude={"user_id", "last_human_id", "persisted_id"})
    return WorkingMemoryOut(**data, source="checkpointer")


def _from_log(mem: Memory, user_id: str, session_id: str) -> WorkingMemoryOut | None:
    turns = mem.store.conversations.turns(user_id, session_id)
    if not turns:
        return None
    return WorkingMemoryOut(
        session_id=session_id,
        turn_count=sum(1 for t in turns if t.role == "user"),
        created_at=turns[0].created_at,
        updated_at=turns[-1].created_at,
        source="conversation_log",
    )


@router.get(
    "/memory/working/{session_id}",
    response_model=WorkingMemoryOut,
    responses={
        404: {"model": ErrorOut, "description": "no active working memory for this session"}
    },
    tags=["working"],
    operation_id="getWorkingMemory",
)
def working(
    request: Request,
    session_id: str = PathParam(..., min_length=1, max_length=256),
    uid: str = Depends(caller),
    mem: Memory = Depends(memory_of),
) -> Any:
    """The session's working memory; 404 when absent or expired."""
    checkpointer = request.app.state.checkpointer
    if checkpointer is not None:
        wm = _from_checkpointer(checkpointer, request.app.state.state_key, uid, session_id)
    else:
        wm = _from_log(mem, uid, session_id)
    ttl = timedelta(minutes=mem.config.window.working_memory_ttl_minutes)
    if wm is None or utcnow() - wm.updated_at > ttl:
        raise MemoryNotFoundError(f"no active working memory for session {session_id!r}")
    return wm
