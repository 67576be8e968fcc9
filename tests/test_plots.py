"""The docs' pictures are drawn from the results JSON alone (benchmarks/plots.py), so they
are redrawn without rerunning a benchmark; the docs show them."""

from __future__ import annotations

from pathlib import Path

from _bench import load_benchmark

ROOT = Path(__file__).resolve().parents[1]


def test_every_picture_is_drawn_from_the_committed_json(tmp_path: Path) -> None:
    plots = load_benchmark("plots")
    drawn = plots.main(["--out", str(tmp_path)])
    assert sorted(p.name for p in drawn) == sorted(t for _, _, t in plots.PLOTS.values())
    for path in drawn:
        data = path.read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000, path
    again = plots.main(["--out", str(tmp_path / "again"), "--only", "retrieval"])
    assert again[0].read_bytes() == (tmp_path / "retrieval_quality.png").read_bytes()


def test_the_docs_show_the_pictures() -> None:
    plots = load_benchmark("plots")
    pages = {
        "retrieval_quality.png": ROOT / "docs" / "benchmarks.md",
        "e2e_memory.png": ROOT / "docs" / "memory_quality.md",
        "calibration_reliability.png": ROOT / "docs" / "calibration.md",
    }
    assert set(pages) == {t for _, _, t in plots.PLOTS.values()}
    for picture, page in pages.items():
        assert f"]({picture})" in page.read_text(encoding="utf-8"), (picture, page)
        assert (ROOT / "docs" / picture).is_file(), picture
