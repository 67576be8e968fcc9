"""MCP server over stdio, driven by the official SDK's own client."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

mcp = pytest.importorskip("mcp")

ROOT = Path(__file__).resolve().parents[1]


def _client(db: Path):
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "langmem_plus.mcp_server", "--db", str(db), "--embeddings", "none"],
        env={"PYTHONPATH": str(ROOT)},
        cwd=str(ROOT),
    )
    return Client(params, read_timeout_seconds=60)


def _data(result) -> dict:
    assert not result.is_error, result.content
    return result.structured_content.get("result", result.structured_content)


def test_tools_over_stdio(tmp_path):
    async def go() -> None:
        async with _client(tmp_path / "m.db") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert {"search_memory", "add_memory", "recall_conversations", "delete_memory"} <= set(
                tools
            )
            assert "time" in tools["search_memory"].input_schema["properties"]

            added = _data(
                await client.call_tool(
                    "add_memory", {"text": "I prefer Rust for CLIs", "infer": False}
                )
            )
            (mid,) = added["ids"]
            _data(
                await client.call_tool(
                    "add_memory", {"text": "我喜欢川菜", "infer": False, "user_id": "bob"}
                )
            )

            found = _data(await client.call_tool("search_memory", {"query": "Rust", "limit": 3}))
            assert [r["id"] for r in found["results"]] == [mid]
            assert found["results"][0]["score"] > 0
            # time range: nothing was stored yesterday; the user is scoped
            assert (
                _data(
                    await client.call_tool("search_memory", {"query": "Rust", "time": "yesterday"})
                )["results"]
                == []
            )
            assert (
                _data(await client.call_tool("search_memory", {"query": "Rust", "user_id": "bob"}))[
                    "results"
                ]
                == []
            )

            recalled = _data(await client.call_tool("recall_conversations", {"query": "Rust"}))
            assert set(recalled) == {"results", "total_searched", "latency_ms"}

            bad = await client.call_tool("search_memory", {"query": "Rust", "time": "whenever"})
            assert bad.is_error
            assert (
                _data(await client.call_tool("delete_memory", {"memory_id": mid}))["deleted"]
                is True
            )
            assert (await client.call_tool("delete_memory", {"memory_id": mid})).is_error

    asyncio.run(go())
