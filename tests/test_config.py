"""MemoryConfig: nested sections, documented fields, and one release of flat compatibility."""
# config-codemod: skip (these tests use the deprecated flat names on purpose)

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import annotated_types
import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic.fields import FieldInfo

from langmem_plus.config import (
    FLAT_FIELDS,
    REMOVED_FIELDS,
    SECTIONS,
    ConfigDeprecationWarning,
    MemoryConfig,
    ScoreConfig,
    StoreTuning,
)

FLAT_NAMES = sorted(FLAT_FIELDS)


def _quiet(**kwargs: Any) -> MemoryConfig:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigDeprecationWarning)
        return MemoryConfig(**kwargs)


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
def flat_value(draw: st.DrawFn) -> tuple[str, Any]:
    name = draw(st.sampled_from(FLAT_NAMES))
    flat = FLAT_FIELDS[name]
    return name, draw(_values(SECTIONS[flat.section].model_fields[flat.field]))


def _outcome(build: Any) -> MemoryConfig | str:
    try:
        return build()
    except pydantic.ValidationError as exc:
        return f"invalid: {exc.errors()[0]['msg']}"


@settings(max_examples=300, deadline=None)
@given(flat_value())
def test_flat_keyword_equals_nested_keyword(item: tuple[str, Any]) -> None:
    name, value = item
    flat = FLAT_FIELDS[name]
    nested = _outcome(lambda: MemoryConfig(**{flat.section: {flat.field: value}}))
    with pytest.warns(ConfigDeprecationWarning, match=rf"config\.{flat.section}\.{flat.field}"):
        old = _outcome(lambda: MemoryConfig(**{name: value}))
    assert old == nested
    if isinstance(nested, MemoryConfig):  # (a value can break a cross-field rule: both refuse)
        assert getattr(getattr(nested, flat.section), flat.field) == value
        with pytest.warns(ConfigDeprecationWarning):
            assert getattr(nested, name) == value
        assert MemoryConfig.model_validate(nested.model_dump()) == nested


@settings(max_examples=200, deadline=None)
@given(st.from_regex(r"[a-z_][a-z0-9_]{0,20}", fullmatch=True))
def test_unknown_keys_are_refused(key: str) -> None:
    if key in FLAT_FIELDS or key in REMOVED_FIELDS or key in SECTIONS:
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


def test_sections_and_their_tuning() -> None:
    assert list(SECTIONS) == ["score", "recall", "window", "context", "lifecycle", "llm", "store"]
    cfg = MemoryConfig()
    assert cfg.score.w_keyword == 0.4 and cfg.recall.retrieval_limit == 5
    assert cfg.window.max_turns == 20 and cfg.context.profile is True
    assert cfg.lifecycle.merge_threshold == 0.81 and cfg.llm.max_retries == 3
    assert isinstance(cfg.store, StoreTuning) and cfg.store.keyword_candidates == 100
    assert "common_term_ratio" in StoreTuning.model_fields
    assert "expansion term" in (StoreTuning.model_fields["common_term_ratio"].description or "")
    assert FLAT_FIELDS["ctx_max_chars_summary"].path == "context.max_chars_summary"
    assert FLAT_FIELDS["window_max_turns"].path == "window.max_turns"
    assert FLAT_FIELDS["record_costs"].path == "llm.record_costs"
    assert FLAT_FIELDS["llm_backoff_base_s"].path == "llm.backoff_base_s"


def test_dump_is_nested_and_round_trips_through_json() -> None:
    cfg = MemoryConfig(score={"profile": "coding"}, store={"prf_terms": 0})
    data = cfg.model_dump()
    assert set(data) == set(SECTIONS)
    assert data["score"]["profile"] == "coding" and data["store"]["prf_terms"] == 0
    assert MemoryConfig.model_validate_json(cfg.model_dump_json()) == cfg
    assert MemoryConfig(score=ScoreConfig(profile="coding"), store={"prf_terms": 0}) == cfg


def test_an_old_flat_dict_still_loads_with_one_warning_per_key() -> None:
    old = {
        name: getattr(MemoryConfig(), flat.section).model_dump()[flat.field]
        for name, flat in FLAT_FIELDS.items()
    }
    old["eviction_threshold"] = 5
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        cfg = MemoryConfig(**old)
        from_json = MemoryConfig.model_validate_json(json.dumps(old))
    assert cfg == from_json == MemoryConfig()
    assert len([w for w in seen if w.category is ConfigDeprecationWarning]) == 2 * len(old)
    assert "eviction_threshold" not in json.dumps(cfg.model_dump())


def test_warning_points_at_the_caller() -> None:
    with pytest.warns(ConfigDeprecationWarning) as seen:
        MemoryConfig(keyword_candidates=80).keyword_candidates  # noqa: B018
    assert {w.filename for w in seen} == {__file__}


def test_removed_fields_are_accepted_ignored_and_warned() -> None:
    with pytest.warns(ConfigDeprecationWarning, match="ignored"):
        cfg = MemoryConfig(eviction_threshold=10)
    assert cfg == MemoryConfig()
    with pytest.warns(ConfigDeprecationWarning, match="no effect"):
        cfg.eviction_threshold = 3
    with pytest.warns(ConfigDeprecationWarning, match="no effect"):
        assert cfg.eviction_threshold is None


def test_flat_assignment_sets_the_nested_field_with_validation() -> None:
    cfg = MemoryConfig()
    with pytest.warns(ConfigDeprecationWarning, match="store.bm25_k1"):
        cfg.bm25_k1 = 2.0
    assert cfg.store.bm25_k1 == 2.0
    with pytest.warns(ConfigDeprecationWarning), pytest.raises(pydantic.ValidationError):
        cfg.bm25_k1 = -1
    with pytest.raises(pydantic.ValidationError):
        cfg.store.bm25_k1 = 0
    with pytest.raises(AttributeError):
        cfg.no_such_knob  # noqa: B018


def test_cross_field_rules_hold_nested_flat_and_on_assignment() -> None:
    with pytest.raises(pydantic.ValidationError, match="must not exceed"):
        MemoryConfig(lifecycle={"separate_threshold": 0.9, "merge_threshold": 0.8})
    with pytest.raises(pydantic.ValidationError, match="must not exceed"):
        _quiet(separate_threshold=0.9, merge_threshold=0.8)
    with pytest.raises(pydantic.ValidationError, match="keep_verbatim_turns"):
        MemoryConfig(window={"keep_verbatim_turns": 10})
    cfg = MemoryConfig()
    with pytest.raises(pydantic.ValidationError, match="must not exceed"):
        cfg.lifecycle.separate_threshold = 0.95
    assert cfg.lifecycle.separate_threshold == 0.55  # a refused assignment changes nothing


def test_flat_and_nested_forms_of_one_field_must_agree() -> None:
    assert _quiet(prf_terms=3, store={"prf_terms": 3}).store.prf_terms == 3
    assert _quiet(prf_terms=3, store={"bm25_k1": 2.0}).store.bm25_k1 == 2.0
    assert _quiet(prf_terms=3, store=StoreTuning()).store.prf_terms == 3  # defaults yield
    with pytest.raises(pydantic.ValidationError, match="disagrees"):
        _quiet(prf_terms=3, store={"prf_terms": 4})
    with pytest.raises(pydantic.ValidationError, match="disagrees"):
        _quiet(prf_terms=3, store=StoreTuning(prf_terms=4))
    with pytest.raises(pydantic.ValidationError, match="mapping"):
        _quiet(prf_terms=3, store=7)


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
            expected.append(
                f"| `{section}.{name}` | `{default!r}` | `{cls.flat_name(name)}` | {what} |"
            )
    assert rows == expected
