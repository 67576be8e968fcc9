"""User ids become namespace labels injectively: adversarial pairs never share memories."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langmem_plus import Memory
from langmem_plus.agent.run_identity import namespace_for
from langmem_plus.errors import ValidationError
from langmem_plus.model.namespaces import escape_label, unescape_label, user_namespace

# pairs that a replace-based mapping (or a careless escape) would merge
PAIRS = [
    ("john.smith", "john_smith"),
    ("a.b", "a%2Eb"),
    ("a%2Eb", "a%252Eb"),
    ("x.", "x_"),
    ("用户.一", "用户_一"),
    ("tab\tid", "tab id"),
    ("rtl\u202eevil", "rtlevil"),
]


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_pairs_map_to_distinct_labels(a: str, b: str) -> None:
    assert escape_label(a) != escape_label(b)
    assert "." not in escape_label(a) and "." not in escape_label(b)
    assert unescape_label(escape_label(a)) == a
    assert namespace_for(("memories", "{user_id}"), a) != namespace_for(
        ("memories", "{user_id}"), b
    )


@given(st.text(min_size=1, max_size=40).filter(lambda s: s.strip()))
def test_escape_round_trips_and_never_holds_a_dot(uid: str) -> None:
    if any(0xD800 <= ord(c) <= 0xDFFF for c in uid):
        with pytest.raises(ValidationError):
            user_namespace(uid)
        return
    label = user_namespace(uid)[1]
    assert "." not in label
    assert unescape_label(label) == uid


@given(st.text(min_size=1, max_size=12), st.text(min_size=1, max_size=12))
def test_escape_is_injective(a: str, b: str) -> None:
    a = a.encode("utf-8", "replace").decode("utf-8")
    b = b.encode("utf-8", "replace").decode("utf-8")
    if a != b:
        assert escape_label(a) != escape_label(b)


def test_plain_ids_keep_their_namespace() -> None:
    assert user_namespace("alice") == ("memories", "alice")
    assert user_namespace("张三_01") == ("memories", "张三_01")


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_memory_keeps_adversarial_users_apart(a: str, b: str) -> None:
    with Memory(embeddings=False) as mem:
        mem.add(f"my PIN is 4821 ({a})", user_id=a, infer=False)
        mem.add("I like green tea", user_id=b, infer=False)
        assert all("4821" not in h.text for h in mem.search("PIN", user_id=b, limit=10))
        assert any("4821" in h.text for h in mem.search("PIN", user_id=a, limit=10))
        assert set(mem.users()) >= {a, b}
        mem.reset(b)
        assert mem.get_all(a).total == 1


def test_blank_and_invalid_user_ids_are_refused() -> None:
    with Memory(embeddings=False) as mem:
        for bad in ["", "   ", "x" * 300, "bad\ud800id", 3]:
            with pytest.raises(ValidationError):
                mem.add("hello", user_id=bad, infer=False)  # type: ignore[arg-type]
