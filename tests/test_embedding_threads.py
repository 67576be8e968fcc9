"""The library runs its small work on one BLAS thread (USEEmbeddings' queries and small batches,
a store batch), large embedding batches on more, and leaves the process's own thread settings as
it found them (issue #31)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController, threadpool_limits

from langmem_plus.embeddings import PARALLEL_MIN_TEXTS, USEEmbeddings, default_embeddings
from langmem_plus.errors import ValidationError
from langmem_plus.store.hybrid import HybridStore
from langmem_plus.threads import blas_limit


def _blas_threads() -> int:
    info = ThreadpoolController().select(user_api="blas").info()
    assert info, "NumPy's BLAS is not visible to threadpoolctl"
    return min(int(i["num_threads"]) for i in info)


@pytest.fixture()
def two_threads() -> Iterator[None]:
    """The process's BLAS set to 2 threads (the default on a 2-core host)."""
    with threadpool_limits(limits=2, user_api="blas"):
        if _blas_threads() != 2:
            pytest.skip("this BLAS cannot run 2 threads here")
        yield


class _Spy:
    """Stands in for the model: records the BLAS threads each call ran with."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.seen: list[int] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.seen.append(_blas_threads())
        return np.asarray(self.model.encode(texts), np.float32)


def _spied(emb: USEEmbeddings) -> _Spy:
    spy = _Spy(emb._model)
    emb._model = spy
    return spy


def _fresh(**kw: Any) -> USEEmbeddings:
    """A USEEmbeddings sharing the loaded model's weights (cheap to make per test)."""
    emb = USEEmbeddings(**kw)
    emb._model = default_embeddings()._model
    return emb


def test_a_query_runs_on_one_thread_and_restores_the_setting(two_threads: None) -> None:
    emb = _fresh()
    spy = _spied(emb)
    emb.embed_query("where does the user live?")
    emb.embed_documents(["one exchange", "and its reply"])
    assert spy.seen == [1, 1]
    assert _blas_threads() == 2


def test_a_large_batch_uses_the_threads_the_process_allows(two_threads: None) -> None:
    emb = _fresh()
    spy = _spied(emb)
    emb.embed_documents([f"memory number {i}" for i in range(PARALLEL_MIN_TEXTS)])
    assert spy.seen and set(spy.seen) == {2}
    assert _blas_threads() == 2


def test_threads_caps_a_large_batch(two_threads: None) -> None:
    emb = _fresh(threads=1, parallel_min=3)
    spy = _spied(emb)
    emb.embed_documents(["a", "b"])
    emb.embed_documents(["a", "b", "c"])
    assert spy.seen == [1, 1]
    assert _blas_threads() == 2


def test_never_raises_the_processs_setting() -> None:
    emb = _fresh(threads=8, parallel_min=2)
    spy = _spied(emb)
    with threadpool_limits(limits=1, user_api="blas"):
        emb.embed_documents(["a", "b", "c"])
        assert _blas_threads() == 1
    assert spy.seen == [1]


def test_the_setting_comes_back_when_the_model_fails(two_threads: None) -> None:
    emb = _fresh()

    class Boom:
        def encode(self, texts: list[str]) -> np.ndarray:
            assert _blas_threads() == 1
            raise RuntimeError("model failed")

    emb._model = Boom()
    with pytest.raises(RuntimeError, match="model failed"):
        emb.embed_query("q")
    assert _blas_threads() == 2


def test_vectors_do_not_depend_on_the_thread_count(two_threads: None) -> None:
    texts = [f"the user visited city number {i} last week" for i in range(6)]
    one = _fresh(parallel_min=100).embed_array(texts)
    two = _fresh(parallel_min=2).embed_array(texts)
    np.testing.assert_allclose(one, two, atol=1e-5)


@pytest.mark.parametrize(
    "kw", [{"threads": 0}, {"threads": 1.5}, {"threads": True}, {"parallel_min": 0}]
)
def test_bad_settings_are_refused(kw: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        USEEmbeddings(**kw)


def test_interleaved_blocks_restore_the_setting_once_the_last_ends(two_threads: None) -> None:
    """Thread A lowers, B lowers, A leaves first: still lowered for B, restored after B."""
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, int] = {}

    def a() -> None:
        with blas_limit(1):
            a_in.set()
            b_in.wait(10)
        a_out.set()

    def b() -> None:
        a_in.wait(10)
        with blas_limit(1):
            b_in.set()
            a_out.wait(10)
            seen["b after a left"] = _blas_threads()

    ts = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(10)
    assert seen == {"b after a left": 1}
    assert _blas_threads() == 2


def test_nested_limits_take_the_smallest_and_unwind(two_threads: None) -> None:
    with blas_limit(2):
        assert _blas_threads() == 2
        with blas_limit(1):
            assert _blas_threads() == 1
        assert _blas_threads() == 2
    assert _blas_threads() == 2


def test_a_store_batch_runs_on_one_thread(two_threads: None) -> None:
    store = HybridStore(index=False)
    seen: list[int] = []
    rank = store._ranker.rank

    def spy(*args: Any, **kw: Any) -> Any:
        seen.append(_blas_threads())
        return rank(*args, **kw)

    store._ranker.rank = spy  # type: ignore[method-assign]
    store.put(("u",), "k", {"text": "I live in Shanghai"})
    assert store.search(("u",), query="Shanghai")
    assert seen == [1]
    assert _blas_threads() == 2
    store.close()
