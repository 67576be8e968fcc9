"""The engine's processors: one typed field each, built once from the model and config."""

from __future__ import annotations

from typing import Any

import pytest
from _agent_fakes import scripted

from langmem_plus import MemoryConfig
from langmem_plus.agent.engine import MemoryEngine
from langmem_plus.processors import processor_set as pset
from langmem_plus.processors.processor_set import Processors


def test_without_a_model_every_processor_runs_its_rules() -> None:
    procs = Processors.build(None, MemoryConfig())
    assert procs.deriver is None
    assert not procs.summarizer.uses_model
    assert not procs.analyzer.uses_model


def test_with_a_model_summaries_and_facts_use_it_per_turn_steps_do_not() -> None:
    procs = Processors.build(scripted(["ok"]), MemoryConfig())
    assert procs.deriver is not None and procs.deriver.uses_model
    assert procs.summarizer.uses_model
    for rules in (procs.analyzer, procs.profile_writer, procs.reconsolidator):
        assert not rules.uses_model


def test_the_engine_builds_its_set_once() -> None:
    engine = MemoryEngine(model=scripted(["ok"]))
    assert engine.processors is engine.processors


def test_a_model_whose_package_is_missing_falls_back_to_rules(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    class Missing:
        def __init__(self, model: Any, config: MemoryConfig) -> None:
            if model is not None:
                raise ImportError("no provider package")

    monkeypatch.setattr(pset, "FactDeriver", Missing)
    monkeypatch.setattr(pset, "Summarizer", Missing)
    procs = Processors.build("someprovider:model", MemoryConfig())
    assert procs.deriver is None
    assert isinstance(procs.summarizer, Missing)  # the rule-based one
    assert "model unavailable" in caplog.text
