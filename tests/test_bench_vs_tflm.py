"""Smoke test of benchmarks/bench_vs_tflm.py on one small model and one board (the full
run, four models on four cores, takes minutes: `python -m benchmarks.bench_vs_tflm`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import bench_vs_tflm

FIX = Path(__file__).parent / "fixtures"


@pytest.mark.target
def test_bench_script_on_the_fixture_dscnn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    # the fixture DS-CNN stands in for the built one (no TensorFlow in the default run)
    monkeypatch.setattr(bench_vs_tflm, "build_model", lambda name: FIX / "dscnn_kws.tflite")
    out = tmp_path / "b.json"
    assert bench_vs_tflm.main(["--models", "dscnn", "--boards", "mps2-an386,microbit-v1",
                               "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    m4 = doc["results"]["dscnn"]["mps2-an386"]
    assert m4["fits"] and m4["instructions"] > 1_000_000
    tflm = doc["tflm"]["dscnn"]
    assert m4["vs_tflm"]["arena"] == pytest.approx(m4["arena_bytes"] / tflm["arena_bytes"])
    assert doc["results"]["dscnn"]["microbit-v1"]["fits"]
    text = capsys.readouterr().out
    assert "mps2-an386" in text and "microbit-v1" in text and "x " in text


def test_the_documented_table_is_parsed_and_a_stale_figure_is_caught() -> None:
    """`--check-docs` compares docs/benchmarks.md's table with a fresh run: the table parses
    (every model on every board it lists), a run equal to it within the emulator's +-40
    instructions passes, and a flash figure off by one byte or instructions off by 41 fail."""
    text = bench_vs_tflm.DOCS_TABLE.read_text()
    rows = bench_vs_tflm.documented_rows(text)
    assert ("dscnn", "mps2-an386") in rows and len(rows) >= 10
    fresh: dict[str, dict[str, dict[str, object]]] = {}
    for (m, b), v in rows.items():
        fresh.setdefault(m, {})[b] = {"fits": True, **v}
    for per in fresh.values():
        for r in per.values():
            r["instructions"] += 40
    assert bench_vs_tflm.docs_disagreements(fresh, text) == []
    fresh["dscnn"]["mps2-an386"]["instructions"] += 1
    fresh["dscnn"]["mps2-an386"]["flash_bytes"] += 1
    bad = bench_vs_tflm.docs_disagreements(fresh, text)
    assert len(bad) == 2 and all("dscnn on mps2-an386" in b for b in bad)
