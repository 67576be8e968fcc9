"""The offline demo runs the real agent graph end to end, deterministically."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from langmem_plus.cli.demo import OFFLINE_LABEL, OfflineResponder, load_demo_conversation, run_demo


def test_demo_conversation_shape() -> None:
    data = load_demo_conversation()
    assert len(data["sessions"]) >= 3
    text = str(data)
    assert any("\u4e00" <= ch <= "\u9fff" for ch in text) and "Actually" in text
    assert "processOrder" in text


@pytest.mark.slow
def test_run_demo_offline(tmp_path: Any) -> None:
    lines: list[str] = []
    summary = run_demo(db_path=tmp_path / "demo.db", out=lines.append)
    output = "\n".join(lines)
    assert "NOT a language model" in output and "injected context" in output
    assert "relevance=" in output and "stored:" in output
    assert "episode" in output and "closed old fact 'User lives in Beijing'" in output
    assert summary["turns"] == sum(len(s["turns"]) for s in load_demo_conversation()["sessions"])
    # session 3 recalls the corrected fact, not the old one, and the session-1 preference
    s3 = summary["replies"][-3:]
    quoted = [line[2:] for line in s3[0].splitlines() if line.startswith("- ")]
    assert quoted[0] == "User lives in Shanghai"  # the current fact first
    assert "User lives in Beijing" not in s3[0]  # the superseded fact is not recalled
    assert "川菜" in s3[1]
    # nothing unrelated: the food question once reached the interview through a feedback term
    assert "面试" not in s3[1] and "interview" not in s3[1]
    assert "面试" not in s3[0]  # nor does "Where do I live these days?"
    assert "calcTotal" in s3[2]  # 上次 -> search_memory tool over the previous session
    assert all(r.startswith(OFFLINE_LABEL) for r in summary["replies"])
    assert summary["episodes"] == summary["turns"]  # every exchange kept verbatim
    assert {"User lives in Shanghai", "用户喜欢川菜"} <= set(summary["memories"])
    assert (tmp_path / "demo.db").exists()


def test_offline_responder_quotes_only_injected_memories() -> None:
    sys = SystemMessage('<memory n="1" category="fact">"User &lt;3 tea"</memory>')
    reply = OfflineResponder().invoke([sys, HumanMessage("what do I like?")])
    assert "User <3 tea" in reply.text and reply.text.startswith(OFFLINE_LABEL)
    assert "Noted" in OfflineResponder().invoke([HumanMessage("hi")]).text
