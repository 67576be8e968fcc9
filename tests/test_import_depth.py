"""Import of deeply nested JSON: `json.loads` itself recurses, so a 10,000-deep file must end
in the project's ValidationError (never RecursionError) and leave the store as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from langmem_plus.errors import ValidationError
from langmem_plus.memory import Memory

DEEP = "[" * 10_000 + "]" * 10_000
DEEP_EXPORT = '{"format": "langmem_plus", "items": ' + DEEP + "}"


@pytest.fixture
def mem() -> Memory:
    m = Memory(embeddings=None)
    m.add("keep me: lake trip", "u", infer=False)
    yield m
    m.close()


@pytest.mark.parametrize("data", [DEEP, DEEP_EXPORT, DEEP.encode(), DEEP + "\n" + DEEP])
def test_import_of_deep_json_is_a_validation_error(mem: Memory, data: str | bytes) -> None:
    with pytest.raises(ValidationError, match="nested too deeply"):
        mem.import_(data)
    assert [r.text for r in mem.get_all("u").items] == ["keep me: lake trip"]


@pytest.mark.parametrize("name", ["log.json", "log.jsonl"])
def test_import_logs_of_deep_json_is_a_validation_error(
    mem: Memory, tmp_path: Path, name: str
) -> None:
    (tmp_path / name).write_text(DEEP, encoding="utf-8")
    with pytest.raises(ValidationError, match="nested too deeply"):
        mem.import_logs(tmp_path, "u", infer=False)
    assert [r.text for r in mem.get_all("u").items] == ["keep me: lake trip"]
