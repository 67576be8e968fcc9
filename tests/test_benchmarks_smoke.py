"""Smoke runs of the benchmark scripts at tiny sizes (the full runs are not unit tests)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _bench import load_benchmark

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow  # each runs a benchmark script: the slow lane (`-m slow`)


@pytest.fixture
def data() -> Path:
    """The shared datasets folder (the test is skipped where there is none)."""
    found = _datasets()
    if found is None:
        pytest.skip("shared datasets not available")
    return found


def _datasets() -> Path | None:
    """The shared datasets folder beside the clone, or /work/shared; None when absent."""
    for cand in (ROOT.parent / "shared" / "datasets", Path("/work/shared/datasets")):
        if (cand / "locomo" / "locomo_dev.json").exists():
            return cand
    return None


def test_retrieval_quality_smoke(data: Path, tmp_path: Path) -> None:
    rq = load_benchmark("retrieval_quality")
    out = tmp_path / "q.json"
    pic = tmp_path / "q.png"
    res = rq.main(["--data", str(data), "--smoke", "--out", str(out), "--plot", str(pic)])
    assert out.exists() and pic.read_bytes().startswith(b"\x89PNG")
    for set_name in ("locomo", "madial_zh", "madial_en"):
        systems = res["sets"][set_name]["systems"]
        assert set(systems) == set(rq.SYSTEMS)
        for r in systems.values():
            assert r["n"] > 0 and 0.0 <= r["frac@10"] <= 1.0


def test_real_users_smoke(data: Path, tmp_path: Path) -> None:
    ru = load_benchmark("real_users")
    md = tmp_path / "r.md"
    res = ru.main(["--data", str(data), "--smoke", "--rounds", "1", "--md", str(md)])
    assert md.exists() and "(search with USE) / USE" in md.read_text(encoding="utf-8")
    assert res["code"] == str(ROOT)  # the tree timed is this one
    for name in (*ru.SETS, "all"):
        v = res["sets"][name]
        assert v["users"] == (6 if name == "all" else 2) and v["queries"] > 0
        assert v["search_with_use"] > 0 and v["use"] > 0 and v["store_cpu"] > 0
        assert v["after_write_cpu_mean"] >= v["after_write_cpu"] * 0.5 > 0
        assert v["with_use_over_use"] == v["search_with_use"] / v["use"]


def test_real_users_stages_smoke(data: Path) -> None:
    ru = load_benchmark("real_users")
    res = ru.main(["--data", str(data), "--smoke", "--rounds", "1", "--stages"])
    got = res["stages"]["variants"]
    assert list(got) == [*ru.VARIANTS, *ru.FLOORS]
    assert all(v["all"] > 0 for v in got.values())
    assert got["all of them off"]["all"] < got["default"]["all"]  # the stages cost something
    assert all(got[f]["all"] < got["all of them off"]["all"] for f in ru.FLOORS)


def test_locomo_evidence_normalisation() -> None:
    rq = load_benchmark("retrieval_quality")
    valid = {"D8:6", "D9:17", "D9:1", "D4:4", "D4:6", "D11:26", "D30:5"}
    assert rq.normalise_evidence(["D8:6; D9:17"], valid) == ["D8:6", "D9:17"]
    assert rq.normalise_evidence(["D9:1 D4:4 D4:6"], valid) == ["D9:1", "D4:4", "D4:6"]
    assert rq.normalise_evidence(["D:11:26", "D30:05"], valid) == ["D11:26", "D30:5"]
    assert rq.normalise_evidence(["D", "D10:19"], valid) == []


def test_scale_smoke(tmp_path: Path) -> None:
    sc = load_benchmark("scale")
    out = tmp_path / "s.json"
    res = sc.main(["--smoke", "--out", str(out), "--plot", str(tmp_path / "p.png")])
    assert out.exists() and (tmp_path / "p.png").exists()
    r = res["sizes"]["200"]
    assert r["insert"]["items"] == 200
    assert r["search_ms_excl_query_embedding"]["p50"] > 0
    assert "naive" in r and r["disk"]["per_item_excl_vectors"] > 0
    per = r["disk"]["per_item_excl_vectors"]
    verdict = "PASS" if per <= 1024 else "FAIL"
    assert f"{verdict}: bytes per item excl. vectors at 200: {per:.0f} <= 1 KB" in res["checks"]
    t = res["turns"]  # the turn-memory floors on real turns (Memory.add_turn, USE embeddings)
    assert t["turns"] == 110 and t["store_ms"]["p95"] > 0 and "100" in t["recall_ms"]
    assert t["disk"]["per_turn_bytes"] > t["disk"]["per_turn_bytes_excl_vectors"] > 0
    assert any("turn-memory floor: recall at 100 turns" in line for line in res["checks"])


def test_scale_checks_give_the_verdict_each_figure_earns() -> None:
    sc = load_benchmark("scale")

    def size(w95: float, ips: float, put95: float, per: float) -> dict:
        return {
            "namespaces": 1, "items_per_namespace": 1000,
            "search_ms_with_query_embedding": {"p95": w95},
            "search_ms_warm_with_query_embedding": {"p95": w95},
            "insert": {"items_per_s_excl_embedding": ips},
            "single_put_ms": {"p95": put95}, "disk": {"per_item_excl_vectors": per},
        }  # fmt: skip

    results = {"use_query_ms": {"p50": 3.0}, "sizes": {"1000": size(250.0, 5000.0, 1.0, 2048.0)}}
    verdicts = [line.split(":", 1)[0] for line in sc.checks(results)]
    # insert rate passes, single put passes, bytes per item fails, search at 1k fails
    assert verdicts == ["PASS", "PASS", "FAIL", "FAIL"]
    results["sizes"]["1000"] = size(10.0, 100.0, 30.0, 512.0)
    verdicts = [line.split(":", 1)[0] for line in sc.checks(results)]
    assert verdicts == ["FAIL", "FAIL", "PASS", "PASS"]


def test_vector_recall_smoke(data: Path, tmp_path: Path) -> None:
    vr = load_benchmark("vector_recall")
    out, md = tmp_path / "v.json", tmp_path / "v.md"
    res = vr.main(["--data", str(data), "--smoke", "--out", str(out), "--md", str(md)])
    assert out.exists() and md.exists()
    assert res["storage"]["all"]["docs"] > 0
    for fmt in ("int8", "float16"):
        r = res["storage"]["all"][fmt]
        assert 0.9 <= r["recall@10"] <= 1.0 and r["cos_abs_err_mean"] < 1e-2
    assert res["storage"]["all"]["int8"]["bytes_per_vector"] == 516
    (ivf,) = res["ivf"]["sizes"].values()
    rows = next(iter(ivf["queries"].values()))["nprobe"]
    assert set(rows) == {"8", "16", "32", "64"}
    assert all(0.0 <= v["recall@10_vs_float32"] <= 1.0 for v in rows.values())


def test_corrections_smoke(tmp_path: Path) -> None:
    cb = load_benchmark("corrections")
    out = tmp_path / "c.json"
    res = cb.main(["--max-cases", "3", "--embeddings", "none", "--out", str(out)])
    assert out.exists() and res["scenarios"] == 3
    for s in res["systems"].values():
        assert 0.0 <= s["superseded_wins"] <= 1.0 and s["questions"] >= 3
        assert 0.0 <= s["stale_unmarked"] <= s["stale_without_current"] <= 1.0


def test_corrections_judge() -> None:
    cb = load_benchmark("corrections")
    # the old value alone ranks first: superseded wins
    assert cb.judge(["moved from Porto", "offsite in Lisbon"], ["Lisbon"], ["Porto"])["lost"]
    # a hit holding both values counts for the current one
    assert not cb.judge(["Lisbon, not Porto", "Porto"], ["Lisbon"], ["Porto"])["lost"]
    # both stand: every value must be found
    assert cb.judge(["10k in 52 min"], ["52", "49"], [])["lost"]


def test_e2e_memory_smoke(data: Path, tmp_path: Path) -> None:
    e2e = load_benchmark("e2e_memory")
    res = e2e.main(
        ["--data", str(data), "--set", "memorybank", "--max-convs", "1", "--max-q", "2",
         "--llm-standin", "--out", str(tmp_path / "e.json"), "--plot", str(tmp_path / "e.png")]
    )  # fmt: skip
    assert (tmp_path / "e.png").read_bytes().startswith(b"\x89PNG")
    pipe = res["systems"]["pipeline"]
    assert pipe["model_calls_per_exchange"] == 1.0 and pipe["prompt_tokens_per_exchange"] > 0
    assert 0.0 <= pipe["evidence_recall"] <= 1.0 and pipe["bytes_per_turn_excl_vectors"] > 0


def test_async_batching_smoke(tmp_path: Path) -> None:
    from conftest import HashEmbeddings

    ab = load_benchmark("async_batching")
    res = ab.main(
        ["--n", "4", "--rounds", "1", "--corpus", "20", "--out", str(tmp_path / "a.json")],
        embeddings=HashEmbeddings(),
    )
    assert res


def test_calibration_smoke(data: Path, tmp_path: Path) -> None:
    cal = load_benchmark("calibration")
    args = ["--data", str(data), "--smoke", "--out", str(tmp_path / "c.json"),
            "--md", str(tmp_path / "c.md"), "--plot", str(tmp_path / "c.png"),
            "--turns", str(tmp_path / "turns.json")]  # fmt: skip
    res = cal.main(args)
    assert (tmp_path / "c.png").stat().st_size > 0
    # the searches' cache is plain JSON (reading it runs no code) and gives the same results;
    # a run writing elsewhere without --plot leaves the docs' figure alone
    assert json.loads((tmp_path / "turns.json").read_text(encoding="utf-8"))
    figure = Path(cal.__file__).parents[1] / "docs" / "calibration_reliability.png"
    before = figure.stat().st_mtime_ns
    assert json.dumps(cal.main(args[:-4] + args[-2:])) == json.dumps(res)
    assert figure.stat().st_mtime_ns == before
    for lang in ("en", "zh"):
        r = res["languages"][lang]
        assert 0.0 <= r["auc_relevance"] <= 1.0
        assert sum(b["n"] for b in r["bins"]) == r["hits"]
        assert r["floors"][0]["relevant_kept"] == 1.0  # floor 0 keeps everything


def test_layer_costs_smoke(data: Path) -> None:
    lc = load_benchmark("layer_costs")
    names = ["default", "no_patch", "no_row_cache"]
    res = lc.main(
        ["--data", str(data), "--part", "real", "--smoke", "--rounds", "1",
         "--variants", ",".join(names)]
    )  # fmt: skip
    assert list(res["real"]) == names
    for v in res["real"].values():
        assert set(v) == {"store", "loop"} and all(x > 0 for x in v["store"].values())
    res = lc.main(["--part", "scale", "--sizes", "300", "--rounds", "1", "--variants", "default"])
    passes = res["scale"]["300"]["default"]
    assert set(passes) == {"first", "warm", "loop"} and passes["warm"][0] > 0
