"""MemoryConfig: nested sections of product settings, each field documented; the store's
fitted constants apart from them (StoreTuning)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import annotated_types
import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic.fields import FieldInfo

from langmem_plus import HybridStore
from langmem_plus.config import SECTIONS, MemoryConfig, ScoreConfig, StoreConfig
from langmem_plus.errors import ValidationError
from langmem_plus.store.tuning import StoreTuning


def _values(info: FieldInfo) -> st.SearchStrategy[Any]:
    """Valid values of a field, from its annotation and its ge/gt/le/lt bounds."""
    ann = info.annotation
    if get_origin(ann) is Literal:
        return st.sampled_from(get_args(ann))
    if ann is bool:
        return st.booleans()
    if ann is str:  # names (store.milvus_collection)
        return st.from_regex(r"[a-z_][a-z0-9_]{0,10}", fullmatch=True)
    if ann == tuple[str, ...]:
        names = st.text(alphabet="abcdefghij_", min_size=1, max_size=8)
        return st.lists(names, min_size=1, max_size=4, unique=True).map(tuple)
    optional = ann == float | None  # None: a default taken from elsewhere (e.g. the model)
    if optional:
        ann = float
    lo = hi = None
    lo_open = hi_open = False
    for m in info.metadata:
        if isinstance(m, annotated_types.Ge):
            lo = m.ge
        elif isinstance(m, annotated_types.Gt):
            lo, lo_open = m.gt, True
        elif isinstance(m, annotated_types.Le):
            hi = m.le
        elif isinstance(m, annotated_types.Lt):
            hi, hi_open = m.lt, True
    if ann is int:
        low = None if lo is None else int(lo) + int(lo_open)
        return st.integers(low, None if hi is None else int(hi) - int(hi_open))
    assert ann is float, ann
    floats = st.floats(
        lo,
        1e6 if hi is None else hi,
        exclude_min=lo_open,
        exclude_max=hi_open,
        allow_nan=False,
    )
    return st.none() | floats if optional else floats


@st.composite
def setting(draw: st.DrawFn) -> tuple[str, str, Any]:
    """A section, one of its fields and a valid value of it."""
    section = draw(st.sampled_from(sorted(SECTIONS)))
    field = draw(st.sampled_from(sorted(SECTIONS[section].model_fields)))
    return section, field, draw(_values(SECTIONS[section].model_fields[field]))


@settings(max_examples=300, deadline=None)
@given(setting())
def test_a_valid_value_of_any_field_round_trips(item: tuple[str, str, Any]) -> None:
    section, field, value = item
    try:
        cfg = MemoryConfig(**{section: {field: value}})
    except pydantic.ValidationError as exc:  # only a cross-field rule may refuse it
        assert "must" in str(exc), exc
        return
    assert getattr(getattr(cfg, section), field) == value
    assert MemoryConfig.model_validate(cfg.model_dump()) == cfg
    assert MemoryConfig.model_validate_json(cfg.model_dump_json()) == cfg


@settings(max_examples=200, deadline=None)
@given(st.from_regex(r"[a-z_][a-z0-9_]{0,20}", fullmatch=True))
def test_unknown_keys_are_refused(key: str) -> None:
    if key in SECTIONS:
        return
    with pytest.raises(pydantic.ValidationError, match="Extra inputs are not permitted"):
        MemoryConfig(**{key: 1})
    for section in ("score", "store"):
        if key not in SECTIONS[section].model_fields:
            with pytest.raises(pydantic.ValidationError, match="Extra inputs are not permitted"):
                MemoryConfig(**{section: {key: 1}})


def test_every_field_is_documented() -> None:
    for name, info in MemoryConfig.model_fields.items():
        assert info.description, name
    for section, cls in SECTIONS.items():
        assert cls.__doc__, section
        for name, info in cls.model_fields.items():
            assert info.description and len(info.description) > 10, f"{section}.{name}"


def test_sections_hold_settings_and_the_tuning_stands_apart() -> None:
    assert list(SECTIONS) == ["score", "recall", "window", "context", "lifecycle", "llm", "store"]
    cfg = MemoryConfig()
    assert cfg.score.w_keyword == 0.4 and cfg.recall.retrieval_limit == 5
    assert cfg.window.max_turns == 20 and cfg.context.profile is True
    assert cfg.lifecycle.merge_threshold == 0.81 and cfg.llm.max_retries == 3
    assert isinstance(cfg.store, StoreConfig) and cfg.store.vector_storage == "int8"
    # the fitted constants are no setting: refused in MemoryConfig, kept by StoreTuning
    assert not set(StoreConfig.model_fields) & set(StoreTuning.model_fields)
    for name in ("bm25_k1", "prf_terms", "keyword_candidates", "neighbour_weight"):
        with pytest.raises(pydantic.ValidationError, match="Extra inputs"):
            MemoryConfig(store={name: 1})
    assert StoreTuning().keyword_candidates == 100


def test_every_tuning_constant_is_documented_validated_and_immutable() -> None:
    for name, info in StoreTuning.model_fields.items():
        assert info.description and len(info.description) > 10, name
    with pytest.raises(pydantic.ValidationError):
        StoreTuning(bm25_k1=0)
    with pytest.raises(pydantic.ValidationError, match="Extra inputs"):
        StoreTuning(retrieval_limit=3)
    tuning = StoreTuning(prf_terms=0)
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        tuning.prf_terms = 3  # type: ignore[misc]


def test_a_store_takes_its_tuning_and_refuses_anything_else() -> None:
    store = HybridStore(index=False, tuning=StoreTuning(prf_terms=0))
    assert store.tuning.prf_terms == 0 and store._ranker.tuning is store.tuning
    store.close()
    assert HybridStore(index=False).tuning == StoreTuning()
    with pytest.raises(ValidationError, match="tuning must be a StoreTuning"):
        HybridStore(index=False, tuning={"prf_terms": 0})  # type: ignore[arg-type]


def test_dump_is_nested_and_round_trips_through_json() -> None:
    cfg = MemoryConfig(score={"profile": "coding"}, store={"vector_storage": "float16"})
    data = cfg.model_dump()
    assert set(data) == set(SECTIONS)
    assert data["score"]["profile"] == "coding" and data["store"]["vector_storage"] == "float16"
    assert MemoryConfig.model_validate_json(cfg.model_dump_json()) == cfg
    assert (
        MemoryConfig(score=ScoreConfig(profile="coding"), store={"vector_storage": "float16"})
        == cfg
    )


def test_assignment_is_validated_and_a_refused_one_changes_nothing() -> None:
    cfg = MemoryConfig()
    cfg.score.w_recency = 0.3
    assert cfg.score.w_recency == 0.3
    with pytest.raises(pydantic.ValidationError):
        cfg.score.w_recency = -1
    assert cfg.score.w_recency == 0.3
    with pytest.raises(AttributeError):
        cfg.no_such_knob  # noqa: B018


def test_cross_field_rules_hold_nested_and_on_assignment() -> None:
    with pytest.raises(pydantic.ValidationError, match="must not exceed"):
        MemoryConfig(lifecycle={"separate_threshold": 0.9, "merge_threshold": 0.8})
    with pytest.raises(pydantic.ValidationError, match="keep_verbatim_turns"):
        MemoryConfig(window={"keep_verbatim_turns": 10})
    cfg = MemoryConfig()
    with pytest.raises(pydantic.ValidationError, match="must not exceed"):
        cfg.lifecycle.separate_threshold = 0.95
    assert cfg.lifecycle.separate_threshold == 0.55  # a refused assignment changes nothing


def test_the_configuration_page_lists_every_field_as_the_code_has_it() -> None:
    page = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"
    rows = [
        line for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("| `")
    ]
    cfg = MemoryConfig()
    expected = []
    for section, cls in SECTIONS.items():
        for name, info in cls.model_fields.items():
            default = getattr(getattr(cfg, section), name)
            what = (info.description or "").replace("|", "\\|")
            expected.append(f"| `{section}.{name}` | `{default!r}` | {what} |")
    assert rows == expected
