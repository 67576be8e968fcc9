"""One structured-output call shared by every processor, with retries and JSON repair.

`StructuredLLM.call(Schema, system, user)` asks a LangChain chat model for a `Schema`
instance. It first uses the model's own structured output (`with_structured_output`, tool
calling or response_format); models without it, or endpoints that reject it, get a plain
prompt and the JSON is cut out of the text and repaired. Only transient errors (timeouts,
connection errors, HTTP 408/409/425/429/5xx) are retried, with exponential backoff (base,
2x base, 4x base); a deterministic failure (an answer that does not parse or fit the schema, a
refusal, a permanent 4xx, any other error) is not, since asking again gets the same answer.
After the last failure, or once the call's deadline (`llm.call_deadline_s`) has passed, the
call logs and returns ``None`` so the caller falls back to its rules and the turn is never
lost. `call_traced` also reports the requests sent and the tokens.

One retry policy: the library retries, the model's client does not, so every request is
counted. Models the library builds (`build_model`: strings, `from_config`, the CLI) get
``max_retries=0`` and a request timeout; a passed OpenAI-family model (langchain-openai) is
used through a copy of its client with retries off (and the timeout when it had none); a
passed model whose client still retries on its own is not retried by the library on top
(its requests stay bounded by its own setting) and is reported once in the log.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from langmem_plus.config import MemoryConfig
from langmem_plus.errors import ValidationError
from langmem_plus.model.messages import message_text
from langmem_plus.processors.model.json_repair import extract_json, parse_into

__all__ = [
    "CallTrace",
    "StructuredLLM",
    "build_model",
    "client_retries",
    "extract_json",
    "parse_into",
    "resolve_model",
    "without_client_retries",
]

logger = logging.getLogger("langmem_plus.processors")

T = TypeVar("T", bound=BaseModel)

# HTTP statuses that will not get better by asking again.
_PERMANENT_STATUS = frozenset({400, 401, 403, 404, 405, 413, 422})
# HTTP statuses worth asking again (timeout, conflict, too early, rate limit); 5xx too.
_TRANSIENT_STATUS = frozenset({408, 409, 425, 429})
# Client-library error classes (matched by name along the MRO so that no optional client
# has to be imported) that mean "the request did not get through, try again": openai,
# anthropic, httpx, requests, google-api-core.
_TRANSIENT_NAMES = frozenset(
    {
        "APIConnectionError",
        "APITimeoutError",
        "RateLimitError",
        "InternalServerError",
        "OverloadedError",
        "ServiceUnavailableError",
        "TransportError",
        "TimeoutException",
        "Timeout",
        "ConnectionError",
        "ServiceUnavailable",
        "DeadlineExceeded",
        "ResourceExhausted",
        "TooManyRequests",
    }
)
_PLAIN_SUFFIX = (
    "\n\nAnswer with ONE JSON object and nothing else (no prose, no code fences). "
    "It must match this JSON schema:\n{schema}"
)


def build_model(name: str, config: MemoryConfig | None = None, **kwargs: Any) -> BaseChatModel:
    """The chat model `init_chat_model(name)` as the library builds it: its client does not
    retry (the library does, counting every request) and each request times out after
    `llm.request_timeout_s`. `kwargs` (``base_url``, ``api_key``, ``temperature`` …) go to
    the provider's class; a provider that takes no retry or timeout setting is built
    without them."""
    if not isinstance(name, str) or not name.strip():
        raise ValidationError("model string must not be empty, e.g. 'openai:gpt-4o-mini'")
    from langchain.chat_models import init_chat_model

    cfg = config or MemoryConfig()
    try:
        return init_chat_model(
            name, **{"max_retries": 0, "timeout": cfg.llm.request_timeout_s, **kwargs}
        )
    except (TypeError, PydanticValidationError) as exc:
        logger.info("%s takes no max_retries/timeout (%s); built without them", name, exc)
        return init_chat_model(name, **kwargs)


def client_retries(model: Any) -> int:
    """How many times the model's own client retries a failed request (0: never, or not
    known). langchain-openai's ``max_retries=None`` means the openai client's default."""
    value = getattr(model, "max_retries", 0)
    if value is None:
        value = getattr(getattr(model, "root_client", None), "max_retries", 0)
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return max(0, value)


def without_client_retries(model: Any, timeout_s: float | None = None) -> Any:
    """A passed model whose client does not retry, when that takes no rebuilding: a
    langchain-openai model (ChatOpenAI, AzureChatOpenAI, and those built on them) is copied
    with its openai clients' retries off (``with_options``), and `timeout_s` as the request
    timeout when it had none. Any other model is returned as it is."""
    root: Any = getattr(model, "root_client", None)
    aroot: Any = getattr(model, "root_async_client", None)
    if client_retries(model) == 0 and getattr(model, "request_timeout", 0) is not None:
        return model
    if not (hasattr(root, "with_options") and hasattr(model, "model_copy")):
        return model
    options: dict[str, Any] = {"max_retries": 0}
    if getattr(model, "request_timeout", 0) is None and timeout_s is not None:
        options["timeout"] = timeout_s
    try:
        copy = model.model_copy(update={"max_retries": 0})
        copy.root_client = root.with_options(**options)
        copy.client = copy.root_client.chat.completions
        if aroot is not None and hasattr(aroot, "with_options"):
            copy.root_async_client = aroot.with_options(**options)
            copy.async_client = copy.root_async_client.chat.completions
        if "timeout" in options:
            copy.request_timeout = timeout_s
    except (AttributeError, TypeError, ValueError) as exc:  # another client layout
        logger.info("could not turn off the client's retries of %s (%s)", type(model).__name__, exc)
        return model
    return copy


def resolve_model(model: Any, config: MemoryConfig | None = None) -> BaseChatModel | None:
    """Turn a chat model object or an `init_chat_model` string ("openai:gpt-4o-mini") into a
    model; ``None`` stays ``None`` (rules only). A string is built by `build_model`; an
    object is used as it is (see `without_client_retries` for what `StructuredLLM` does)."""
    if model is None:
        return None
    if isinstance(model, str):
        return build_model(model, config)
    if isinstance(model, BaseChatModel) or hasattr(model, "invoke"):
        return model  # type: ignore[no-any-return]
    raise ValidationError(
        f"model must be a LangChain chat model or an init_chat_model string, got {type(model)!r}"
    )


def _from_raw(schema: type[T], raw: Any, close_truncated: bool = True) -> T | None:
    """Recover a schema instance from a raw AIMessage: tool-call args first, then text."""
    if isinstance(raw, AIMessage):
        for call in raw.tool_calls or []:
            parsed = parse_into(schema, call.get("args"), close_truncated=close_truncated)
            if parsed is not None:
                return parsed
    return parse_into(schema, message_text(raw), close_truncated=close_truncated)


def _is_malformed(exc: BaseException) -> bool:
    """The model answered, but the answer did not parse (some clients parse inside the call)."""
    from langchain_core.exceptions import OutputParserException

    return isinstance(exc, PydanticValidationError | json.JSONDecodeError | OutputParserException)


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if status is None:
        status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) and not isinstance(status, bool) else None


def _is_permanent(exc: BaseException) -> bool:
    """The request itself is refused (bad request, auth, unsupported feature)."""
    if isinstance(exc, NotImplementedError | TypeError | ValidationError):
        return True
    return _status(exc) in _PERMANENT_STATUS


def _is_transient(exc: BaseException) -> bool:
    """Asking again may work: timeouts, dropped connections, rate limits, server errors.
    Everything else is deterministic and is not retried."""
    status = _status(exc)
    if status is not None:
        return status in _TRANSIENT_STATUS or 500 <= status <= 599
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    return any(cls.__name__ in _TRANSIENT_NAMES for cls in type(exc).__mro__)


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def _chars(messages: Sequence[BaseMessage]) -> int:
    return sum(len(message_text(m)) for m in messages)


def _answer_chars(raw: Any) -> int:
    size = len(message_text(raw))
    if isinstance(raw, AIMessage):
        size += sum(len(json.dumps(c.get("args"), ensure_ascii=False)) for c in raw.tool_calls)
    return size


def _reported_usage(raw: Any) -> tuple[int, int] | None:
    """(prompt, completion) tokens as the model reported them, when it did."""
    usage = getattr(raw, "usage_metadata", None)
    if isinstance(usage, dict) and "input_tokens" in usage:
        return int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
    meta = getattr(raw, "response_metadata", None) or {}
    usage = meta.get("token_usage") or meta.get("usage") if isinstance(meta, dict) else None
    if isinstance(usage, dict) and "prompt_tokens" in usage:
        return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    return None


def _estimate(chars: int) -> int:
    """Tokens guessed from characters (about 4 per token), used only when none are reported."""
    return (chars + 3) // 4


@dataclass
class CallTrace(Generic[T]):
    """How one `StructuredLLM` call ended and what it cost.

    `calls` counts every request sent (retries included); tokens count the answers that came
    back (an errored request reports none) and are an estimate, characters/4, when
    `tokens_estimated` is set. `error` says why `value` is ``None``.
    """

    value: T | None = None
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens_estimated: bool = False
    error: str | None = None


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

    def __init__(
        self,
        llm: StructuredLLM,
        schema: type[BaseModel],
        system: str,
        user: str,
        close_truncated: bool = True,
    ) -> None:
        self.llm = llm
        self.schema = schema
        self.close_truncated = close_truncated
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
        self.schema_chars = len(schema_json)
        self.trace: CallTrace[Any] = CallTrace()
        self.sent_chars = 0
        self.deadline = llm.clock() + llm.call_deadline_s

    def remaining(self) -> float:
        """Seconds left before the call's deadline (0 when it has passed)."""
        return max(0.0, self.deadline - self.llm.clock())

    def before_call(self) -> None:
        """Count the request about to be sent (and its size, for a token estimate)."""
        self.trace.calls += 1
        if self.mode == "structured":
            self.sent_chars = _chars(self.structured_messages) + self.schema_chars
        else:
            self.sent_chars = _chars(self.plain_messages)

    def on_result(self, result: Any) -> BaseModel | None:
        """Count the answer's tokens and parse it; a malformed answer ends the call."""
        raw = result.get("raw") if isinstance(result, dict) and "raw" in result else result
        usage = _reported_usage(raw)
        if usage is None:
            usage = (_estimate(self.sent_chars), _estimate(_answer_chars(raw)))
            self.trace.tokens_estimated = True
        self.trace.prompt_tokens += usage[0]
        self.trace.completion_tokens += usage[1]
        parsed = self.interpret(result)
        self.trace.value = parsed
        if parsed is None:
            refusal = getattr(raw, "additional_kwargs", {}).get("refusal")
            problem = result.get("parsing_error") if isinstance(result, dict) else None
            if refusal:
                self.trace.error = f"refused: {str(refusal)[:200]}"
            elif problem is not None:
                self.trace.error = f"malformed answer: {_describe(problem)}"
            else:
                self.trace.error = f"malformed answer: no {self.schema.__name__} in it"
            logger.warning(
                "%s call: %s; falling back to rules", self.schema.__name__, self.trace.error
            )
        return parsed

    def interpret(self, result: Any) -> BaseModel | None:
        if self.mode == "structured" and isinstance(result, dict) and "raw" in result:
            parsed = result.get("parsed")
            if isinstance(parsed, self.schema):
                return parsed
            return _from_raw(self.schema, result.get("raw"), self.close_truncated)
        if isinstance(result, self.schema):
            return result
        return _from_raw(self.schema, result, self.close_truncated)

    def on_error(self, exc: BaseException) -> float | None:
        """Seconds to wait before the next attempt, or None to give up: only transient
        errors are retried; a structured-output request the endpoint refuses is asked once
        more as plain JSON; everything else is deterministic and ends the call."""
        if _is_malformed(exc):
            self.trace.error = f"malformed answer: {_describe(exc)}"
            logger.warning(
                "malformed %s answer (%s); falling back to rules", self.schema.__name__, exc
            )
            return None
        if self.mode == "structured" and _is_permanent(exc):
            logger.info("structured output rejected (%s); retrying as plain JSON", exc)
            self.mode = "plain"
            return 0.0
        if not _is_transient(exc):
            self.trace.error = f"failed: {_describe(exc)}"
            logger.warning("%s call failed (not retried): %s", self.schema.__name__, exc)
            return None
        delay = self.llm.backoff_base_s * (2**self.attempt)
        if self.attempt >= self.llm.max_retries or delay >= self.remaining():
            why = "attempts" if self.attempt >= self.llm.max_retries else "attempts (deadline)"
            self.trace.error = f"failed after {self.attempt + 1} {why}: {_describe(exc)}"
            logger.warning(
                "%s call failed after %d %s: %s",
                self.schema.__name__,
                self.attempt + 1,
                why,
                exc,
            )
            return None
        self.attempt += 1
        logger.info("transient LLM error (%s); retry %d in %.1fs", exc, self.attempt, delay)
        return delay


_warned: set[str] = set()


def _warn_client_retries(model: Any, retries: int) -> None:
    """Say once per model class that its client retries and the library does not add to it."""
    name = type(model).__name__
    if name in _warned:
        return
    _warned.add(name)
    logger.warning(
        "%s retries failed requests itself (max_retries=%d): the library does not retry it "
        "on top, and the cost records count one call per attempt it made; pass "
        "max_retries=0 to let the library retry with backoff and count every request "
        "(docs/guides/models.md)",
        name,
        retries,
    )


class StructuredLLM:
    """Structured calls to one chat model with retry, backoff and JSON repair.

    `sleep` / `asleep` / `clock` (monotonic seconds, for the deadline) are injectable so
    tests run instantly; only transient errors are retried; malformed answers, refusals and
    other deterministic failures fall back to the rules at once. `client_retries` is how
    often the model's own client still retries (0 once turned off; then the library does
    not retry on top of it).
    """

    def __init__(
        self,
        model: Any,
        config: MemoryConfig | None = None,
        *,
        sleep: Callable[[float], None] | None = None,
        asleep: Callable[[float], Awaitable[None]] | None = None,
        clock: Callable[[], float] | None = None,
        use_structured: bool = True,
    ) -> None:
        cfg = config or MemoryConfig()
        resolved = resolve_model(model, cfg)
        if resolved is None:
            raise ValidationError("StructuredLLM needs a model; use the rules when there is none")
        self.model: Any = without_client_retries(resolved, cfg.llm.request_timeout_s)
        self.client_retries = client_retries(self.model)
        self.max_retries = cfg.llm.max_retries
        if self.client_retries:
            _warn_client_retries(self.model, self.client_retries)
            self.max_retries = 0
        self.backoff_base_s = cfg.llm.backoff_base_s
        self.call_deadline_s = cfg.llm.call_deadline_s
        self.sleep = sleep or time.sleep
        self.asleep = asleep or asyncio.sleep
        self.clock = clock or time.monotonic
        self.use_structured = use_structured

    def _invoke_once(self, plan: _Plan) -> Any:
        if plan.mode == "structured":
            return plan.structured_runnable.invoke(plan.structured_messages)
        return self.model.invoke(plan.plain_messages)

    async def _ainvoke_once(self, plan: _Plan) -> Any:
        """One request, cut at the call's deadline (raising TimeoutError)."""
        if plan.mode == "structured":
            coro = plan.structured_runnable.ainvoke(plan.structured_messages)
        else:
            coro = self.model.ainvoke(plan.plain_messages)
        return await asyncio.wait_for(coro, timeout=max(plan.remaining(), 0.001))

    def call(self, schema: type[T], system: str, user: str) -> T | None:
        """Ask for a `schema` instance; ``None`` after the last failure (logged)."""
        return self.call_traced(schema, system, user).value

    async def acall(self, schema: type[T], system: str, user: str) -> T | None:
        """Async twin of `call`."""
        return (await self.acall_traced(schema, system, user)).value

    def call_traced(
        self, schema: type[T], system: str, user: str, *, close_truncated: bool = True
    ) -> CallTrace[T]:
        """`call`, reporting the requests sent, the tokens and why it failed. With
        `close_truncated` false, a plain-JSON answer cut off mid-way counts as malformed
        instead of being closed (its last item may be cut short)."""
        plan = _Plan(self, schema, system, user, close_truncated)
        while True:
            plan.before_call()
            try:
                result = self._invoke_once(plan)
            except Exception as exc:
                delay = plan.on_error(exc)
                if delay is None:
                    return plan.trace
                if delay:
                    self.sleep(delay)
                continue
            plan.on_result(result)
            return plan.trace

    async def acall_traced(
        self, schema: type[T], system: str, user: str, *, close_truncated: bool = True
    ) -> CallTrace[T]:
        """Async twin of `call_traced`."""
        plan = _Plan(self, schema, system, user, close_truncated)
        while True:
            plan.before_call()
            try:
                result = await self._ainvoke_once(plan)
            except Exception as exc:
                delay = plan.on_error(exc)
                if delay is None:
                    return plan.trace
                if delay:
                    await self.asleep(delay)
                continue
            plan.on_result(result)
            return plan.trace
