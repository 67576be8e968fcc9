"""One structured-output call shared by every processor, with retries and JSON repair.

`StructuredLLM.call(Schema, system, user)` asks a LangChain chat model for a `Schema`
instance. It first uses the model's own structured output (`with_structured_output`, tool
calling or response_format); models without it, or endpoints that reject it, get a plain
prompt and the JSON is cut out of the text and repaired. Transient errors are retried with
exponential backoff (base, 2x base, 4x base); after the last failure the call logs and
returns ``None`` so the caller falls back to its rules and the turn is never lost.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from langmem_plus.config import MemoryConfig
from langmem_plus.errors import ValidationError

__all__ = [
    "StructuredLLM",
    "extract_json",
    "parse_into",
    "resolve_model",
]

logger = logging.getLogger("langmem_plus.processors")

T = TypeVar("T", bound=BaseModel)

# HTTP statuses that will not get better by asking again.
_PERMANENT_STATUS = frozenset({400, 401, 403, 404, 405, 413, 422})
_PLAIN_SUFFIX = (
    "\n\nAnswer with ONE JSON object and nothing else (no prose, no code fences). "
    "It must match this JSON schema:\n{schema}"
)


def resolve_model(model: Any) -> BaseChatModel | None:
    """Turn a chat model object or an `init_chat_model` string ("openai:gpt-4o-mini") into a
    model; ``None`` stays ``None`` (rules only)."""
    if model is None:
        return None
    if isinstance(model, str):
        if not model.strip():
            raise ValidationError("model string must not be empty, e.g. 'openai:gpt-4o-mini'")
        from langchain.chat_models import init_chat_model

        return init_chat_model(model)
    if isinstance(model, BaseChatModel) or hasattr(model, "invoke"):
        return model  # type: ignore[no-any-return]
    raise ValidationError(
        f"model must be a LangChain chat model or an init_chat_model string, got {type(model)!r}"
    )


# --------------------------------------------------------------------------- JSON repair
_FENCE_RE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA_RE = re.compile(r",\s*([}\]])")
_SINGLE_QUOTED_RE = re.compile(r"'((?:[^'\\]|\\.)*)'")
_PY_LITERALS = ((r"\bTrue\b", "true"), (r"\bFalse\b", "false"), (r"\bNone\b", "null"))


def _balanced_object(text: str) -> str | None:
    """The first balanced {...} (or [...]) block of `text`, respecting strings; a block cut
    off mid-answer is closed."""
    start = next((i for i, ch in enumerate(text) if ch in "{["), -1)
    if start < 0:
        return None
    pairs = {"{": "}", "[": "]"}
    stack: list[str] = []
    in_str: str | None = None
    escape = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == in_str:
                in_str = None
            continue
        if ch in "\"'":
            in_str = ch
        elif ch in pairs:
            stack.append(pairs[ch])
        elif stack and ch == stack[-1]:
            stack.pop()
            if not stack:
                return text[start : i + 1]
    tail = in_str or ""
    return text[start:] + tail + "".join(reversed(stack))


def _repairs(block: str) -> list[str]:
    fixed = _TRAILING_COMMA_RE.sub(r"\1", block)
    candidates = [block, fixed]
    quoted = _SINGLE_QUOTED_RE.sub(lambda m: json.dumps(m.group(1)), fixed)
    for pattern, repl in _PY_LITERALS:
        quoted = re.sub(pattern, repl, quoted)
    candidates.append(quoted)
    return candidates


def extract_json(text: str) -> Any:
    """The first JSON object/array found in a model's text answer, repaired if needed
    (code fences, prose around it, trailing commas, single quotes, Python literals).
    Returns ``None`` when nothing parses."""
    if not isinstance(text, str) or not text.strip():
        return None
    sources = [m.group(1) for m in _FENCE_RE.finditer(text)] + [text]
    for source in sources:
        block = _balanced_object(source)
        if block is None:
            continue
        for candidate in _repairs(block):
            try:
                return json.loads(candidate)
            except (ValueError, TypeError):
                continue
    return None


def _message_text(message: Any) -> str:
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "".join(parts)
    return str(content)


def parse_into(schema: type[T], data: Any) -> T | None:
    """Validate `data` (a dict, a JSON string, or a list for single-list schemas) as
    `schema`; ``None`` when it does not fit."""
    if isinstance(data, schema):
        return data
    if isinstance(data, str):
        data = extract_json(data)
    if data is None:
        return None
    if isinstance(data, list):
        list_fields = [
            name
            for name, field in schema.model_fields.items()
            if getattr(field.annotation, "__origin__", None) is list
        ]
        if len(list_fields) != 1:
            return None
        data = {list_fields[0]: data}
    if isinstance(data, dict) and len(data) == 1:
        # some models wrap the answer: {"Schema": {...}} or {"properties": {...}}
        ((key, inner),) = data.items()
        if key not in schema.model_fields and isinstance(inner, dict):
            data = inner
    try:
        return schema.model_validate(data)
    except PydanticValidationError:
        return None


def _from_raw(schema: type[T], raw: Any) -> T | None:
    """Recover a schema instance from a raw AIMessage: tool-call args first, then text."""
    if isinstance(raw, AIMessage):
        for call in raw.tool_calls or []:
            parsed = parse_into(schema, call.get("args"))
            if parsed is not None:
                return parsed
    return parse_into(schema, _message_text(raw))


def _is_malformed(exc: BaseException) -> bool:
    """The model answered, but the answer did not parse (some clients parse inside the call)."""
    from langchain_core.exceptions import OutputParserException

    return isinstance(exc, PydanticValidationError | json.JSONDecodeError | OutputParserException)


def _is_permanent(exc: BaseException) -> bool:
    if isinstance(exc, NotImplementedError | TypeError | ValidationError):
        return True
    status = getattr(exc, "status_code", None)
    if status is None:
        response = getattr(exc, "response", None)
        status = getattr(response, "status_code", None)
    return isinstance(status, int) and status in _PERMANENT_STATUS


def _structured(model: Any, schema: type[BaseModel]) -> Any:
    """`with_structured_output` preferring tool calling (non-strict function calling works on
    most OpenAI-compatible servers; strict json_schema rejects optional fields), then the
    model's own default; None when the model has no structured output."""
    for kwargs in ({"method": "function_calling"}, {}):
        try:
            return model.with_structured_output(schema, include_raw=True, **kwargs)
        except NotImplementedError:
            return None
        except (TypeError, ValueError, AttributeError):
            continue
    return None


class _Plan:
    """The retry/fallback state machine; sync and async drivers only do the I/O."""

    def __init__(self, llm: StructuredLLM, schema: type[BaseModel], system: str, user: str):
        self.llm = llm
        self.schema = schema
        self.attempt = 0
        self.mode = "structured" if llm.use_structured else "plain"
        self.structured_runnable: Any = None
        if self.mode == "structured":
            self.structured_runnable = _structured(llm.model, schema)
            if self.structured_runnable is None:
                self.mode = "plain"
        self.structured_messages: list[BaseMessage] = [
            SystemMessage(content=system),
            HumanMessage(content=user),
        ]
        schema_json = json.dumps(schema.model_json_schema(), ensure_ascii=False)
        self.plain_messages: list[BaseMessage] = [
            SystemMessage(content=system + _PLAIN_SUFFIX.format(schema=schema_json)),
            HumanMessage(content=user),
        ]

    def interpret(self, result: Any) -> BaseModel | None:
        if self.mode == "structured" and isinstance(result, dict) and "raw" in result:
            parsed = result.get("parsed")
            if isinstance(parsed, self.schema):
                return parsed
            return _from_raw(self.schema, result.get("raw"))
        if isinstance(result, self.schema):
            return result
        return _from_raw(self.schema, result)

    def on_error(self, exc: BaseException) -> float | None:
        """Seconds to wait before the next attempt, or None to give up."""
        if _is_malformed(exc):
            logger.warning(
                "malformed %s answer (%s); falling back to rules", self.schema.__name__, exc
            )
            return None
        if self.mode == "structured" and _is_permanent(exc):
            logger.info("structured output rejected (%s); retrying as plain JSON", exc)
            self.mode = "plain"
            return 0.0
        if _is_permanent(exc):
            logger.warning("%s call failed permanently: %s", self.schema.__name__, exc)
            return None
        if self.attempt >= self.llm.max_retries:
            logger.warning(
                "%s call failed after %d attempts: %s",
                self.schema.__name__,
                self.attempt + 1,
                exc,
            )
            return None
        delay = self.llm.backoff_base_s * (2**self.attempt)
        self.attempt += 1
        logger.info("transient LLM error (%s); retry %d in %.1fs", exc, self.attempt, delay)
        return delay


class StructuredLLM:
    """Structured calls to one chat model with retry, backoff and JSON repair.

    `sleep` / `asleep` are injectable so tests run instantly; malformed answers are not
    retried (they fall back to rules at once), transient errors are.
    """

    def __init__(
        self,
        model: Any,
        config: MemoryConfig | None = None,
        *,
        sleep: Callable[[float], None] | None = None,
        asleep: Callable[[float], Awaitable[None]] | None = None,
        use_structured: bool = True,
    ) -> None:
        resolved = resolve_model(model)
        if resolved is None:
            raise ValidationError("StructuredLLM needs a model; use the rules when there is none")
        cfg = config or MemoryConfig()
        self.model: Any = resolved
        self.max_retries = cfg.llm_max_retries
        self.backoff_base_s = cfg.llm_backoff_base_s
        self.sleep = sleep or time.sleep
        self.asleep = asleep or asyncio.sleep
        self.use_structured = use_structured

    def _invoke_once(self, plan: _Plan) -> Any:
        if plan.mode == "structured":
            return plan.structured_runnable.invoke(plan.structured_messages)
        return self.model.invoke(plan.plain_messages)

    async def _ainvoke_once(self, plan: _Plan) -> Any:
        if plan.mode == "structured":
            return await plan.structured_runnable.ainvoke(plan.structured_messages)
        return await self.model.ainvoke(plan.plain_messages)

    def call(self, schema: type[T], system: str, user: str) -> T | None:
        """Ask for a `schema` instance; ``None`` after the last failure (logged)."""
        plan = _Plan(self, schema, system, user)
        while True:
            try:
                result = self._invoke_once(plan)
            except Exception as exc:
                delay = plan.on_error(exc)
                if delay is None:
                    return None
                if delay:
                    self.sleep(delay)
                continue
            parsed = plan.interpret(result)
            if parsed is None:
                logger.warning("malformed %s answer; falling back to rules", schema.__name__)
            return parsed  # type: ignore[return-value]

    async def acall(self, schema: type[T], system: str, user: str) -> T | None:
        """Async twin of `call`."""
        plan = _Plan(self, schema, system, user)
        while True:
            try:
                result = await self._ainvoke_once(plan)
            except Exception as exc:
                delay = plan.on_error(exc)
                if delay is None:
                    return None
                if delay:
                    await self.asleep(delay)
                continue
            parsed = plan.interpret(result)
            if parsed is None:
                logger.warning("malformed %s answer; falling back to rules", schema.__name__)
            return parsed  # type: ignore[return-value]
