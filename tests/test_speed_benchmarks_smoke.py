"""Smoke runs of the busy-host, large-namespace and add-cost benchmarks at tiny sizes
(issues #31, #30)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _bench import load_benchmark

DATA = Path("/work/shared/datasets")
ROOT = Path(__file__).resolve().parents[1]


def _data() -> Path:
    for cand in (ROOT.parent / "shared" / "datasets", DATA):
        if (cand / "locomo" / "locomo_dev.json").exists():
            return cand
    pytest.skip("shared datasets not available")


@pytest.mark.slow
@pytest.mark.enable_socket
@pytest.mark.allow_hosts(["127.0.0.1"])
def test_busy_host_smoke(tmp_path: Path) -> None:
    bh = load_benchmark("busy_host")
    out, md = tmp_path / "b.json", tmp_path / "b.md"
    res = bh.main(
        ["--data", str(_data()), "--neighbours", "1", "--rounds", "1", "--loops", "3",
         "--seconds", "1", "--clients", "2", "--variants", "default,no_embeddings",
         "--out", str(out), "--md", str(md)]
    )  # fmt: skip
    assert out.exists() and md.exists()
    (rnd,) = res["rounds"]
    for v in ("default", "no_embeddings"):
        assert rnd["agent"][v]["search"]["n"] == 3 and rnd["agent"][v]["add"]["n"] == 3
        rest = rnd["rest"][v]
        assert rest["requests"] > 0 and rest["errors"] == 0 and rest["lost_writes"] == 0


@pytest.mark.slow
def test_large_namespace_smoke(tmp_path: Path) -> None:
    ln = load_benchmark("large_namespace")
    common = ["--data", str(_data()), "--sizes", "1500", "--queries", "4",
              "--cache", str(tmp_path / "cache")]  # fmt: skip
    rec = ln.main(["recall", *common, "--ef-search", "64", "--ivf", "--nprobe", "8"])
    kinds = {r["index"].split()[0] for r in rec["rows"]}
    assert kinds == {"exact", "HNSW", "IVF"}
    assert all(0.0 <= r["recall"] <= 1.0 for r in rec["rows"])
    lat = ln.main(["latency", *common])
    (row,) = lat["rows"]
    assert row["variants"]["hnsw"]["approximate"] and not row["variants"]["exact"]["approximate"]
    assert row["fts5"]["p95"] > 0 and row["variants"]["hnsw"]["top10_overlap_with_exact"] > 0.5


@pytest.mark.slow
def test_add_cost_smoke(tmp_path: Path) -> None:
    """Two rounds of a few exchanges against the same tree: the statements are counted
    (the same in both: they do not depend on timing) and the tables written."""
    ac = load_benchmark("add_cost")
    out, md = tmp_path / "a.json", tmp_path / "a.md"
    res = ac.main(
        ["--data", str(_data()), "--convs", "1", "--exchanges", "4", "--rounds", "2",
         "--baseline", str(ROOT), "--note", "smoke", "--out", str(out), "--md", str(md)]
    )  # fmt: skip
    assert out.exists() and "smoke" in md.read_text()
    this, base = res["trees"]["this"], res["trees"]["baseline"]
    assert this["adds"] == base["adds"] == 8 and this["statements_median"] > 0
    assert res["ratio"]["statements_median"] == 1.0
