"""A corpus of hostile inputs for the Python API (HybridStore, Memory, the fact rules).

Each `HostileCase` calls one public entry with one bad argument. The contract, checked by
tests/test_hostile_inputs.py and reusable by benchmarks/reliability.py: a case either works
(the input was only unusual data) or raises one of the project's errors
(`is_project_error`); it never raises anything else, never hangs (every input is bounded so
a call that checks first finishes at once) and never loses what was stored before (the
sentinel planted by `plant_sentinel` stays intact). Cases marked `reject=True` must be
refused, not stored or silently reinterpreted.

No pytest here: `cases()`, `run_case`, `plant_sentinel` and `sentinel_intact` are plain
functions over a `Subjects` (a store and a Memory on it) that the caller builds.
"""

from __future__ import annotations

import asyncio
import math
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp

import langmem_plus.errors as errors_mod

__all__ = [
    "DEEP",
    "HUGE",
    "HostileCase",
    "Subjects",
    "cases",
    "deep_dict",
    "deep_list",
    "hostile_strings",
    "is_project_error",
    "plant_sentinel",
    "run_case",
    "sentinel_intact",
]

DEEP = 10_000  # nesting depth of the deep values
HUGE = 10_000_000  # characters of the huge text (the size that once embedded for minutes)

SENTINEL_NS = ("sentinel",)
SENTINEL_KEY = "s1"
SENTINEL_VALUE = {"text": "the sentinel memory about zebras survives", "n": 1}
SENTINEL_USER = "sentinel-user"
SENTINEL_TEXT = "I keep a zebra called Ziggy"


@dataclass
class Subjects:
    """What the cases run against: a HybridStore and a Memory over the same store."""

    store: Any
    memory: Any
    memory_id: str = ""  # the sentinel memory's id, set by plant_sentinel


@dataclass(frozen=True)
class HostileCase:
    """One call with one hostile argument; `reject`: it must raise a project error."""

    id: str
    call: Callable[[Subjects], Any]
    reject: bool = True


def deep_dict(depth: int = DEEP) -> dict[str, Any]:
    """{"a": {"a": ... {"a": 1}}}, `depth` levels (built without recursion)."""
    node: Any = 1
    for _ in range(depth):
        node = {"a": node}
    return node  # type: ignore[no-any-return]


def deep_list(depth: int = DEEP) -> list[Any]:
    """[[[...[1]...]]], `depth` levels."""
    node: Any = 1
    for _ in range(depth):
        node = [node]
    return node  # type: ignore[no-any-return]


def _cyclic() -> dict[str, Any]:
    d: dict[str, Any] = {"text": "loop"}
    d["self"] = d
    return d


def is_project_error(exc: BaseException) -> bool:
    """True for the errors langmem_plus raises on purpose (every class `errors` exports)."""
    exported = tuple(
        getattr(errors_mod, name)
        for name in errors_mod.__all__
        if isinstance(getattr(errors_mod, name), type)
    )
    return isinstance(exc, exported)


# ---------------------------------------------------------------- hostile values
def hostile_strings() -> list[tuple[str, str, bool]]:
    """(id, string, must_reject_as_identifier): strings that break naive code."""
    return [
        ("empty", "", True),
        ("blank", "   ", False),
        ("nul", "\x00", True),
        ("nul_inside", "a\x00b", True),
        ("surrogate", "\ud800", True),
        ("surrogate_inside", "ok\udfffok", True),
        ("control", "\x01\x1b[31mred\x07", False),
        ("bidi", "\u202egnp.exe", False),
        ("line_sep", "a\u2028SYSTEM: b", False),
        ("zero_width", "\u200b\ufeff", False),
        ("tag_chars", "\U000e0041\U000e0042", False),
        ("dot", "a.b", False),
        ("percent", "%2E%00", False),
        ("sql", "'); DROP TABLE items;--", False),
        ("emoji", "😀🔥", False),
        ("cjk", "中文记忆", False),
        ("long", "k" * 5000, True),
    ]


def _not_strings() -> list[tuple[str, Any]]:
    return [
        ("none", None),
        ("int", 7),
        ("neg_int", -1),
        ("huge_int", 10**400),
        ("float", 1.5),
        ("nan", math.nan),
        ("inf", math.inf),
        ("bool", True),
        ("bytes", b"bytes"),
        ("bytearray", bytearray(b"x")),
        ("list", ["a"]),
        ("dict", {"a": 1}),
        ("set", {"a"}),
        ("object", object()),
    ]


def _bad_ints() -> list[tuple[str, Any]]:
    return [
        ("neg", -1),
        ("huge", 10**18),
        ("str", "x"),
        ("float", 2.5),
        ("nan", math.nan),
        ("inf", math.inf),
        ("bool", True),
        ("none", None),
        ("bignum", 10**400),
    ]


def _bad_values() -> list[tuple[str, Any]]:
    return [
        ("deep_dict", deep_dict()),
        ("deep_list", {"text": "x", "l": deep_list()}),
        ("depth_101", deep_dict(101)),
        ("cyclic", _cyclic()),
        ("bytes_leaf", {"text": b"raw"}),
        ("set_leaf", {"text": "x", "s": {1, 2}}),
        ("object_leaf", {"text": "x", "o": object()}),
        ("nan_leaf", {"text": "x", "f": math.nan}),
        ("inf_leaf", {"text": "x", "f": -math.inf}),
        ("huge_int_leaf", {"text": "x", "n": 10**400}),
        ("int_65bit", {"text": "x", "confidence": 2**64}),
        ("int_key", {"text": "x", 1: "one"}),
        ("tuple_key", {"text": "x", (1, 2): "pair"}),
        ("surrogate_text", {"text": "bad \ud800 text"}),
        ("surrogate_key", {"text": "x", "k\udc00": 1}),
        ("huge_text", {"text": "x" * HUGE}),
        ("huge_json", {"text": "short", "blob": "y" * 2_000_000}),
        ("not_a_dict_list", ["text"]),
        ("not_a_dict_str", "text"),
        ("not_a_dict_none", None),
    ]


# ---------------------------------------------------------------- store cases
def _store_cases() -> list[HostileCase]:
    out: list[HostileCase] = []
    ns = ("hostile",)
    good = {"text": "a plain memory"}

    def add(cid: str, fn: Callable[[Subjects], Any], reject: bool = True) -> None:
        out.append(HostileCase(f"store.{cid}", fn, reject))

    for sid, s, bad in hostile_strings():
        add(f"put.key.{sid}", lambda x, s=s: x.store.put(ns, s, good), bad)
        add(f"put.label.{sid}", lambda x, s=s: x.store.put((s,), "k", good), bad or "." in s)
        add(f"put.text.{sid}", lambda x, s=s: x.store.put(ns, "t", {"text": s}), "\ud800" in s
            or "\udfff" in s)  # fmt: skip
        add(f"search.query.{sid}", lambda x, s=s: x.store.search(ns, query=s),
            "\ud800" in s or "\udfff" in s)  # fmt: skip
    for sid, v in _not_strings():
        add(f"put.key.{sid}", lambda x, v=v: x.store.put(ns, v, good))
        add(f"get.key.{sid}", lambda x, v=v: x.store.get(ns, v))
        add(f"delete.key.{sid}", lambda x, v=v: x.store.delete(ns, v))
        add(f"put.namespace.{sid}", lambda x, v=v: x.store.put(v, "k", good), sid != "list")
        add(f"search.query_type.{sid}", lambda x, v=v: x.store.search(ns, query=v),
            v is not None)  # fmt: skip
    for sid, v in [("str", "hostile"), ("empty", ()), ("nested", (("a",),)), ("label_int", (1,))]:
        add(f"put.namespace_shape.{sid}", lambda x, v=v: x.store.put(v, "k", good))
    add("put.namespace.too_many", lambda x: x.store.put(tuple("l" * 65), "k", good))
    add("put.namespace.long_label", lambda x: x.store.put(("l" * 5000,), "k", good))
    add("put.namespace.langgraph_root", lambda x: x.store.put(("langgraph",), "k", good))
    for sid, v in _bad_values():
        add(f"put.value.{sid}", lambda x, v=v: x.store.put(ns, "v", v))
        add(f"aput.value.{sid}", lambda x, v=v: asyncio.run(x.store.aput(ns, "v", v)))
    for sid, v in [("str", "text"), ("true", True), ("ints", [1]), ("surrogate", ["\ud800"]),
                   ("empty_path", [""])]:  # fmt: skip
        add(f"put.index.{sid}", lambda x, v=v: x.store.put(ns, "i", good, index=v))
    for sid, v in [("neg", -5), ("zero", 0), ("nan", math.nan), ("inf", math.inf),
                   ("str", "10"), ("bool", True)]:  # fmt: skip
        add(f"put.ttl.{sid}", lambda x, v=v: x.store.put(ns, "ttl", good, ttl=v))
    for sid, v in _bad_ints():
        add(f"search.limit.{sid}", lambda x, v=v: x.store.search(ns, query="q", limit=v))
        add(f"search.offset.{sid}", lambda x, v=v: x.store.search(ns, offset=v), sid != "huge")
        add(f"list_namespaces.limit.{sid}", lambda x, v=v: x.store.list_namespaces(limit=v),
            sid != "huge")  # fmt: skip
        add(f"list_namespaces.offset.{sid}", lambda x, v=v: x.store.list_namespaces(offset=v),
            sid != "huge")  # fmt: skip
    for sid, v in [("zero", 0), ("neg", -1), ("str", "2"), ("float", 1.5)]:
        add(f"list_namespaces.max_depth.{sid}", lambda x, v=v: x.store.list_namespaces(max_depth=v))
    for sid, v in [("str", "abc"), ("int", 5), ("dot", ("a.b",)), ("surrogate", ("\ud800",)),
                   ("nul", ("a\x00",))]:  # fmt: skip
        add(f"list_namespaces.prefix.{sid}", lambda x, v=v: x.store.list_namespaces(prefix=v))
        add(f"list_namespaces.suffix.{sid}", lambda x, v=v: x.store.list_namespaces(suffix=v))
    for sid, f in [
        ("deep", deep_dict()),
        ("deep_list", {"a": deep_list()}),
        ("deep_in_op", {"a": {"$eq": deep_list()}}),
        ("not_dict", ["a"]),
        ("str", "text=1"),
        ("bad_op", {"a": {"$where": "1"}}),
        ("in_not_list", {"a": {"$in": 5}}),
        ("int_key", {1: "a"}),
        ("cyclic", _cyclic()),
    ]:
        add(f"search.filter.{sid}", lambda x, f=f: x.store.search(ns, filter=f))
        add(f"asearch.filter.{sid}", lambda x, f=f: asyncio.run(x.store.asearch(ns, filter=f)))
    add("search.filter.huge_gt", lambda x: x.store.search(ns, filter={"n": {"$gt": 10**400}}),
        False)  # fmt: skip
    add("search.query.huge_text", lambda x: x.store.search(ns, query="q" * HUGE), False)
    add("search.query.nul_only", lambda x: x.store.search(ns, query="\x00"), False)
    for sid, tr in [
        ("not_pair", (1, 2, 3)),
        ("str", "yesterday"),
        ("bad_iso", ("not a date", None)),
        ("surrogate", ("\ud800", None)),
        ("huge_int", (10**400, None)),
        ("nan", (math.nan, None)),
        ("inf", (None, math.inf)),
        ("reversed", (datetime(2030, 1, 1, tzinfo=timezone.utc), 0)),
        ("object", (object(), None)),
    ]:
        add(f"search.time_range.{sid}", lambda x, tr=tr: x.store.search(ns, query="q",
            time_range=tr))  # fmt: skip
    for sid, t in [("int", 5), ("surrogate", "\ud800"), ("bytes", b"t")]:
        add(f"search.current_topic.{sid}", lambda x, t=t: x.store.search(ns, query="q",
            current_topic=t))  # fmt: skip
    add("search.prefix.str_extended", lambda x: x.store.search("hostile", query="q",
        current_topic="t"))  # fmt: skip
    add("search.prefix.int", lambda x: x.store.search(5))
    add("search.refresh_ttl.str", lambda x: x.store.search(ns, refresh_ttl="yes"))
    add("get.refresh_ttl.int", lambda x: x.store.get(ns, "k", refresh_ttl=3))
    add("get.namespace.surrogate", lambda x: x.store.get(("\ud800",), "k"))
    add("delete.namespace.int", lambda x: x.store.delete(5, "k"))
    add("adelete.key.surrogate", lambda x: asyncio.run(x.store.adelete(ns, "\ud800")))
    add("aget.key.none", lambda x: asyncio.run(x.store.aget(ns, None)))
    add("alist_namespaces.limit.str", lambda x: asyncio.run(x.store.alist_namespaces(limit="x")))
    add("asearch.query.surrogate", lambda x: asyncio.run(x.store.asearch(ns, query="\ud800")))
    # batch: the raw op protocol
    add("batch.not_iterable", lambda x: x.store.batch(5))
    add("batch.str", lambda x: x.store.batch("ops"))
    add("batch.not_an_op", lambda x: x.store.batch([{"op": "put"}]))
    add("batch.put_int_key", lambda x: x.store.batch([PutOp(ns, 5, good)]))  # type: ignore[arg-type]
    add("batch.put_deep", lambda x: x.store.batch([PutOp(ns, "k", deep_dict())]))
    add("batch.put_then_bad", lambda x: x.store.batch([PutOp(ns, "ok", good),
        PutOp(ns, "bad", {"text": "\ud800"})]))  # fmt: skip
    add("batch.get_surrogate_key", lambda x: x.store.batch([GetOp(ns, "\ud800")]))
    add("batch.search_limit_str", lambda x: x.store.batch([SearchOp(ns, limit="x")]))  # type: ignore[arg-type]
    add("batch.search_query_window", lambda x: x.store.batch([SearchOp(ns, query="q",
        limit=10**9)]))  # fmt: skip
    add("batch.list_bad_condition", lambda x: x.store.batch([ListNamespacesOp(
        match_conditions=(MatchCondition("middle", ("a",)),))]))  # type: ignore[arg-type]  # fmt: skip
    add("abatch.put_nan", lambda x: asyncio.run(x.store.abatch([PutOp(ns, "k",
        {"f": math.nan})])))  # fmt: skip
    add("mark_used.keys_str", lambda x: x.store.mark_used(ns, "abc"))
    add("mark_used.keys_int", lambda x: x.store.mark_used(ns, [1]))
    add("mark_used.now_str", lambda x: x.store.mark_used(ns, ["k"], now="today"))  # type: ignore[arg-type]
    add("count.prefix_int", lambda x: x.store.count(5))  # type: ignore[arg-type]
    add("restore_item_stats.short_row", lambda x: x.store.restore_item_stats([(ns,)]))  # type: ignore[list-item]
    add("restore_item_stats.int", lambda x: x.store.restore_item_stats(5))  # type: ignore[arg-type]
    add("restore_item_stats.bad_count", lambda x: x.store.restore_item_stats(
        [(ns, "k", datetime.now(timezone.utc), datetime.now(timezone.utc), None, -1)]))  # fmt: skip
    add("start_ttl_sweeper.str", lambda x: x.store.start_ttl_sweeper("x"))  # type: ignore[arg-type]
    add("stop_ttl_sweeper.nan", lambda x: x.store.stop_ttl_sweeper(math.nan))
    for sid, kwargs in [
        ("path_int", {"path": 5}),
        ("path_nul", {"path": "a\x00b.db"}),
        ("path_surrogate", {"path": "\ud800.db"}),
        ("path_dir", {"path": tempfile.gettempdir()}),
        ("path_bytes", {"path": b"m.db"}),
        ("config_str", {"config": "x"}),
        ("index_str", {"index": "x"}),
        ("index_dims", {"index": {"dims": -1}}),
        ("index_embed", {"index": {"embed": 5}}),
        ("index_fields", {"index": {"fields": "text"}}),
        ("ttl_str", {"ttl": "x"}),
        ("ttl_interval", {"ttl": {"sweep_interval_minutes": "x"}}),
        ("ttl_default_neg", {"ttl": {"default_ttl": -1}}),
        ("read_only_str", {"read_only": "yes"}),
        ("read_only_in_memory", {"read_only": True}),
    ]:
        add(f"init.{sid}", lambda x, kw=kwargs: _open_store(**kw))
    add("keys.prefix_str", lambda x: x.store.keys("hostile"))  # type: ignore[arg-type]
    return out


def _open_store(**kwargs: Any) -> None:
    from langmem_plus import HybridStore

    HybridStore(**kwargs).close()


# ---------------------------------------------------------------- Memory cases
def _memory_cases() -> list[HostileCase]:
    out: list[HostileCase] = []
    user = "hostile-user"

    def add(cid: str, fn: Callable[[Subjects], Any], reject: bool = True) -> None:
        out.append(HostileCase(f"memory.{cid}", fn, reject))

    for sid, s, _bad in hostile_strings():
        surrogate = "\ud800" in s or "\udfff" in s
        add(f"add.text.{sid}", lambda x, s=s: x.memory.add(s, user, infer=False),
            surrogate or not s.strip())  # fmt: skip
        add(f"add.user.{sid}", lambda x, s=s: x.memory.add("hello", s, infer=False),
            surrogate or not s.strip() or len(s) > 256)  # fmt: skip
        add(f"search.query.{sid}", lambda x, s=s: x.memory.search(s, user),
            surrogate or not s.strip())  # fmt: skip
    for sid, v in _not_strings():
        add(f"add.messages.{sid}", lambda x, v=v: x.memory.add(v, user, infer=False))
        add(f"get.id.{sid}", lambda x, v=v: x.memory.get(v, user))
        add(f"search.user.{sid}", lambda x, v=v: x.memory.search("q", v))
    add("add.text.huge", lambda x: x.memory.add("x" * HUGE, user, infer=False))
    add("add.text.huge_infer", lambda x: x.memory.add("word " * 1_000_000, user))
    add("add.messages.deep", lambda x: x.memory.add([{"role": "user",
        "content": deep_list()}], user))  # fmt: skip
    add("add.messages.bad_role", lambda x: x.memory.add([{"role": "root", "content": "hi"}], user))
    add("add.messages.empty_list", lambda x: x.memory.add([], user))
    add("add.metadata.deep", lambda x: x.memory.add("hi", user, metadata={"d": deep_dict()},
        infer=False))  # fmt: skip
    add("add.metadata.surrogate", lambda x: x.memory.add("hi", user,
        metadata={"note": "\ud800"}, infer=False))  # fmt: skip
    add("add.metadata.nan", lambda x: x.memory.add("hi", user, metadata={"f": math.nan},
        infer=False))  # fmt: skip
    add("add.metadata.bytes", lambda x: x.memory.add("hi", user, metadata={"b": b"\xff"},
        infer=False))  # fmt: skip
    add("add.metadata.bad_category", lambda x: x.memory.add("hi", user,
        metadata={"category": "\ud800"}, infer=False))  # fmt: skip
    add("add.metadata.confidence", lambda x: x.memory.add("hi", user,
        metadata={"confidence": 7}, infer=False))  # fmt: skip
    add("add.session.surrogate", lambda x: x.memory.add("hi", user, session_id="\ud800"))
    add("add.session.int", lambda x: x.memory.add("hi", user, session_id=5))
    add("add.infer.str", lambda x: x.memory.add("hi", user, infer="yes"))
    for sid, v in _bad_ints():
        add(f"search.limit.{sid}", lambda x, v=v: x.memory.search("q", user, limit=v))
        add(f"get_all.offset.{sid}", lambda x, v=v: x.memory.get_all(user, offset=v))
    add("search.filters.deep", lambda x: x.memory.search("q", user, filters=deep_dict()))
    add("search.filters.list", lambda x: x.memory.search("q", user, filters=["a"]))
    add("search.time_range.bad", lambda x: x.memory.search("q", user, time_range=("x", "y")))
    add("search.time_range.huge", lambda x: x.memory.search("q", user,
        time_range=(10**400, None)))  # fmt: skip
    add("search.time_range.surrogate", lambda x: x.memory.search("q", user,
        time_range="\ud800"))  # fmt: skip
    add("update.text.surrogate", lambda x: x.memory.update(x.memory_id, SENTINEL_USER,
        text="\ud800"))  # fmt: skip
    add("update.text.huge", lambda x: x.memory.update(x.memory_id, SENTINEL_USER,
        text="x" * HUGE))  # fmt: skip
    add("update.data.deep", lambda x: x.memory.update(x.memory_id, SENTINEL_USER,
        data={"metadata": deep_dict()}))  # fmt: skip
    add("update.data.bad_field", lambda x: x.memory.update(x.memory_id, SENTINEL_USER,
        data={"id": "other"}))  # fmt: skip
    add("update.data.nan_confidence", lambda x: x.memory.update(x.memory_id, SENTINEL_USER,
        data={"confidence": math.nan}))  # fmt: skip
    add("update.data.tags_str", lambda x: x.memory.update(x.memory_id, SENTINEL_USER,
        data={"tags": 5}))  # fmt: skip
    add("delete.id.surrogate", lambda x: x.memory.delete("\ud800", user))
    add("delete.user.surrogate", lambda x: x.memory.delete(x.memory_id, "\ud800"))
    add("reset.user.int", lambda x: x.memory.reset(5))
    add("export.format", lambda x: x.memory.export(format="xml"))
    add("export.user.surrogate", lambda x: x.memory.export("\ud800"))
    for sid, data in [
        ("deep_json", '{"a":' * DEEP + "1" + "}" * DEEP),
        ("deep_list_json", "[" * DEEP + "]" * DEEP),
        ("deep_parsed", {"format": "langmem_plus.export", "version": 1,
                         "items": [{"namespace": ["memories", "x"], "key": "k",
                                    "value": deep_dict()}]}),
        ("surrogate_value", {"format": "langmem_plus.export", "version": 1,
                             "items": [{"namespace": ["memories", "x"], "key": "k",
                                        "value": {"text": "\ud800"}}]}),
        ("surrogate_text", '{"format": "langmem_plus.export", "version": 1, "items": [{'
                           '"namespace": ["memories", "x"], "key": "k", "value": '
                           '{"text": "\\ud800"}}]}'),
        ("bad_utf8", b"\xff\xfe{}"),
        ("bad_namespace", {"format": "langmem_plus.export", "version": 1,
                           "items": [{"namespace": "memories", "key": "k", "value": {}}]}),
        ("bad_key", {"format": "langmem_plus.export", "version": 1,
                     "items": [{"namespace": ["m"], "key": None, "value": {"text": "t"}}]}),
        ("bad_date", {"format": "langmem_plus.export", "version": 1,
                      "items": [{"namespace": ["m"], "key": "k", "value": {"text": "t"},
                                 "created_at": "yesterday"}]}),
        ("bad_count", {"format": "langmem_plus.export", "version": 1,
                       "items": [{"namespace": ["m"], "key": "k", "value": {"text": "t"},
                                  "created_at": "2024-01-01", "access_count": "many"}]}),
        ("item_not_dict", {"format": "langmem_plus.export", "version": 1, "items": [5]}),
        ("bad_turn", {"format": "langmem_plus.export", "version": 1,
                      "turns": [{"user_id": "u", "session_id": "s", "role": "root",
                                 "content": "c"}]}),
        ("surrogate_turn", {"format": "langmem_plus.export", "version": 1,
                            "turns": [{"user_id": "\ud800", "session_id": "s", "role": "user",
                                       "content": "c"}]}),
        ("bad_profile", {"format": "langmem_plus.export", "version": 1,
                         "profiles": [{"user_id": 5, "reply_style": deep_list()}]}),
        ("bad_summary", {"format": "langmem_plus.export", "version": 1,
                         "rolling_summaries": [{"user_id": "u", "start_turn": -1}]}),
        ("huge_version", {"format": "langmem_plus.export", "version": 10**400}),
        ("nan_json", '{"format": "langmem_plus.export", "version": NaN}'),
        ("int", 5),
        ("none", None),
    ]:  # fmt: skip
        add(f"import.{sid}", lambda x, data=data: x.memory.import_(data))
    add("add_turn.role", lambda x: x.memory.add_turn(user, "s", "root", "hi"))
    add("add_turn.content_surrogate", lambda x: x.memory.add_turn(user, "s", "user", "\ud800"))
    add("add_turn.content_huge", lambda x: x.memory.add_turn(user, "s", "user", "x" * HUGE))
    add("add_turn.created_at", lambda x: x.memory.add_turn(user, "s", "user", "hi",
        created_at="soon"))  # fmt: skip
    add("recall.query_surrogate", lambda x: x.memory.recall("\ud800", user))
    add("recall.limit", lambda x: x.memory.recall("q", user, limit=-1))
    add("put_profile.surrogate", lambda x: x.memory.put_profile(user, reply_style="\ud800"))
    add("summarize.from_turn", lambda x: x.memory.summarize(user, "s", from_turn="one"))
    for sid, span in [("nan", math.nan), ("huge", 10**400), ("max", timedelta.max), ("str", "x"),
                      ("neg", -1)]:  # fmt: skip
        add(f"cleanup.older_than.{sid}", lambda x, span=span: x.memory.cleanup(older_than=span))
    add("import_logs.int", lambda x: x.memory.import_logs(5))
    add("import_logs.missing", lambda x: x.memory.import_logs("/nonexistent/\ud800"))
    add("history.surrogate", lambda x: x.memory.history("\ud800", user))
    add("recall.time_range_huge", lambda x: x.memory.recall("q", user, time_range=(10**400, None)))
    add("recall.session_surrogate", lambda x: x.memory.recall("q", user, session_id="\ud800"))
    add("consolidate.user_int", lambda x: x.memory.consolidate(user_id=5))
    add("get_profile.none", lambda x: x.memory.get_profile(None))
    add("init.path_int", lambda x: _open_memory(5))
    add("init.config_str", lambda x: _open_memory(None, config="x"))
    return out


def _open_memory(path: Any, **kwargs: Any) -> None:
    from langmem_plus import Memory

    Memory(path, embeddings=False, **kwargs).close()


# ---------------------------------------------------------------- fact rules cases
def _facts_cases() -> list[HostileCase]:
    from langmem_plus.processors import FactDeriver
    from langmem_plus.processors.facts.rules import is_change, is_correction, rule_facts

    out: list[HostileCase] = []
    user = [{"role": "user", "text": "I live in Lisbon"}]
    for sid, turns, reject in [
        ("huge_text", [{"role": "user", "text": "I live in Lisbon. " + "x" * HUGE}], False),
        ("surrogate_text", [{"role": "user", "text": "我住在\ud800杭州"}], True),
        ("bad_role", [{"role": "system", "text": "t"}], True),
        ("text_int", [{"role": "user", "text": 5}], True),
        ("text_bytes", [{"role": "user", "text": b"\xff"}], True),
        ("not_list", 5, True),
        ("string", "I live in Lisbon", True),
        ("dict", {"role": "user", "text": "t"}, True),
        ("item_int", [5], True),
    ]:  # fmt: skip
        out.append(HostileCase(f"facts.rules.{sid}",
                               lambda x, turns=turns: rule_facts(turns), reject))  # fmt: skip
    out.append(HostileCase("facts.rules.context_int", lambda x: rule_facts(user, context=5)))  # type: ignore[arg-type]
    for sid, kwargs in [
        ("existing_int", {"existing": 5}),
        ("existing_no_id", {"existing": [{"text": "no id"}]}),
        ("context_list", {"context": ["x"]}),
        ("now_str", {"now": "2026-01-01"}),
    ]:  # fmt: skip
        out.append(HostileCase(f"facts.deriver.{sid}",
                               lambda x, kw=kwargs: FactDeriver().run(user, **kw)))  # fmt: skip
    out.append(HostileCase("facts.is_correction.int", lambda x: is_correction(5)))  # type: ignore[arg-type]
    out.append(HostileCase("facts.is_change.none", lambda x: is_change(None)))  # type: ignore[arg-type]
    return out


def cases() -> list[HostileCase]:
    """Every hostile case (store, Memory, the fact rules); ids are unique."""
    out = [*_store_cases(), *_memory_cases(), *_facts_cases()]
    assert len({c.id for c in out}) == len(out), "duplicate case ids"
    return out


# ---------------------------------------------------------------- running
def plant_sentinel(subjects: Subjects) -> None:
    """Store the items every case must leave intact (a store item and a user's memory)."""
    subjects.store.put(SENTINEL_NS, SENTINEL_KEY, dict(SENTINEL_VALUE))
    ids = subjects.memory.add(SENTINEL_TEXT, SENTINEL_USER, infer=False)
    subjects.memory_id = ids[0]


def sentinel_intact(subjects: Subjects) -> bool:
    """True when both sentinels read back unchanged and search still finds the store's."""
    item = subjects.store.get(SENTINEL_NS, SENTINEL_KEY)
    if item is None or item.value != SENTINEL_VALUE:
        return False
    if subjects.memory.get(subjects.memory_id, SENTINEL_USER).text != SENTINEL_TEXT:
        return False
    hits = subjects.store.search(SENTINEL_NS, query="zebras", limit=3)
    return any(h.key == SENTINEL_KEY for h in hits)


def run_case(case: HostileCase, subjects: Subjects) -> str:
    """'ok' (accepted), 'rejected:<Error>' (a project error) or 'raw:<Error>: <message>'."""
    try:
        case.call(subjects)
    except Exception as exc:
        name = type(exc).__name__
        if is_project_error(exc):
            return f"rejected:{name}"
        return f"raw:{name}: {str(exc)[:200]}"
    return "ok"
