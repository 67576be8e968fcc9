"""AsyncMemory mirrors Memory: every public method has an async twin with the same
parameters, and each twin forwards every argument to the sync method unchanged."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any
from unittest import mock

import pytest

from langmem_plus.memory import AsyncMemory, Memory

# pure helpers that are the same (not coroutines) on both classes
SYNC_HELPERS = {"from_config", "namespace", "now"}


def public_methods(cls: type) -> dict[str, Any]:
    return {
        name: fn
        for name, fn in inspect.getmembers(cls, callable)
        if not name.startswith("_") and not inspect.isclass(fn)
    }


def test_every_public_method_has_an_async_twin_and_no_more() -> None:
    assert set(public_methods(Memory)) == set(public_methods(AsyncMemory))


@pytest.mark.parametrize("name", sorted(public_methods(Memory)))
def test_twin_has_the_same_parameters(name: str) -> None:
    sync_sig = inspect.signature(getattr(Memory, name))
    async_sig = inspect.signature(getattr(AsyncMemory, name))
    assert list(async_sig.parameters.values()) == list(sync_sig.parameters.values())
    assert inspect.iscoroutinefunction(getattr(AsyncMemory, name)) == (name not in SYNC_HELPERS)


def test_constructor_takes_every_memory_argument() -> None:
    sync_params = inspect.signature(Memory.__init__).parameters
    async_params = inspect.signature(AsyncMemory.__init__).parameters
    assert set(async_params) - set(sync_params) == {"memory"}
    for name, param in sync_params.items():
        assert async_params[name] == param


@pytest.mark.parametrize("name", sorted(set(public_methods(Memory)) - SYNC_HELPERS))
def test_twin_forwards_every_argument(name: str) -> None:
    spy = mock.create_autospec(Memory, instance=True)
    amem = AsyncMemory(memory=spy)
    sig = inspect.signature(getattr(Memory, name))
    args: dict[str, Any] = {}
    for pname, param in list(sig.parameters.items())[1:]:  # skip self
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            args["extra_section"] = object()
        else:
            args[pname] = object()
    asyncio.run(getattr(amem, name)(**args))
    called = getattr(spy, name)
    assert called.call_count == 1
    bound = sig.bind(spy, *called.call_args.args, **called.call_args.kwargs)
    got = dict(bound.arguments)
    got.pop("self")
    flat = {**{k: v for k, v in got.items() if k != "sections"}, **got.get("sections", {})}
    assert flat == args


def test_memory_argument_must_be_a_memory() -> None:
    from langmem_plus.errors import ValidationError

    with pytest.raises(ValidationError):
        AsyncMemory(memory="not a memory")  # type: ignore[arg-type]
