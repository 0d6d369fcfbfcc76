"""Commands that agree: which app is built and why, the kws app's options on build and
run, and one JSON key per memory figure across plan, build, bench and validate."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest
from clirun import run_cli

from tinydeploy.commands.target import choose_app
from tinydeploy.errors import InputDataError
from tinydeploy.report.figures import MEMORY_KEYS
from tinydeploy.resources import models_dir

FIX = Path(__file__).parent / "fixtures"
KWS = models_dir() / "kws"


_cli = run_cli


def _ns(model: Path, **kw: object) -> argparse.Namespace:
    base = {"model": model, "app": None, "frontend": None, "labels": None,
            "infer_every": None, "json": True}
    return argparse.Namespace(**{**base, **kw})


def test_a_model_with_a_front_end_gets_the_kws_app_and_every_command_says_why() -> None:
    a = _ns(KWS / "dscnn_int8.tflite")
    assert choose_app(a, "validate") == "kws" and "frontend.json" in a.app_reason
    b = _ns(FIX / "mlp.tflite")
    assert choose_app(b, "validate") == "validate" and "default" in b.app_reason
    c = _ns(FIX / "mlp.tflite", frontend="mlperf-kws")
    assert choose_app(c, "bench") == "kws" and "--frontend" in c.app_reason
    d = _ns(FIX / "mlp.tflite", app="bench")
    assert choose_app(d, "validate") == "bench" and d.app_reason == "--app"
    with pytest.raises(InputDataError, match="only apply to the kws app"):
        choose_app(_ns(FIX / "mlp.tflite", app="bench", labels=Path("l.txt")), "validate")
    rc, out, err = _cli("plan", str(KWS / "dscnn_int8.tflite"), "--board", "mps2-an386",
                        "--json")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["app"] == "kws" and "frontend.json" in doc["app_reason"]
    rc, _, err = _cli("plan", str(FIX / "mlp.tflite"), "--board", "mps2-an386")
    assert rc == 0 and "app: bench (the default" in err


def test_build_and_run_take_the_kws_options() -> None:
    from tinydeploy.cli import build_parser

    p = build_parser()
    for cmd in ("build", "run"):
        a = p.parse_args([cmd, "m.tflite", "--board", "nucleo-f401re", "--app", "kws",
                          "--frontend", "mlperf-kws", "--labels", "labels.txt",
                          "--infer-every", "25"])
        assert (a.frontend, a.labels, a.infer_every) == ("mlperf-kws", Path("labels.txt"), 25)


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="needs the toolchain")
def test_a_keyword_model_without_frontend_json_builds_with_the_options(tmp_path: Path) -> None:
    model = tmp_path / "third_party_kws.tflite"
    model.write_bytes((KWS / "dscnn_int8.tflite").read_bytes())
    rc, _, err = _cli("build", str(model), "--board", "mps2-an386", "--app", "kws")
    assert rc == 1 and "--frontend" in err        # no front end known: the user is told how
    fe = tmp_path / "fe.json"
    fe.write_text((KWS / "frontend.json").read_text())
    out = tmp_path / "fw"
    rc, stdout, err = _cli("build", str(model), "--board", "mps2-an386", "--frontend",
                           str(fe), "--labels", str(KWS / "labels.txt"), "--infer-every",
                           "25", "-o", str(out), "--json")
    assert rc == 0, err
    doc = json.loads(stdout)
    assert doc["app"] == "kws" and doc["app_reason"] == "--frontend given"
    header = (out / "src" / "generated" / "td_kws_config.h").read_text()
    assert "#define TD_KWS_INFER_EVERY 25u" in header


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="needs the toolchain")
def test_plan_and_build_report_memory_under_the_same_keys(tmp_path: Path) -> None:
    model = str(FIX / "mlp.tflite")
    rc, out, err = _cli("plan", model, "--board", "mps2-an386", "--app", "validate",
                        "--json")
    assert rc == 0, err
    plan = json.loads(out)
    rc, out, err = _cli("build", model, "--board", "mps2-an386", "--json", "-o",
                        str(tmp_path / "b"))
    assert rc == 0, err
    build = json.loads(out)
    for doc in (plan, build):
        assert set(MEMORY_KEYS) <= set(doc)
        assert doc["stack_bound_bytes"] <= doc["stack_reserved_bytes"]
        assert doc["ram_available_bytes"] == 4 * 1024 * 1024
    assert plan["ram_bytes"] == plan["ram"]["total"]
    assert plan["arena_bytes"] == build["arena_bytes"]


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="needs the toolchain")
def test_plan_and_build_give_one_figure_for_a_model_too_big_for_the_board(
        tmp_path: Path) -> None:
    """An arena beyond the board's RAM: `build` says the same "over by" as `plan` (the total
    RAM), and no hint the user cannot act on."""
    from tinydeploy.testing.builder import ModelBuilder

    b = ModelBuilder()
    x = b.tensor("x", (1, 96, 96, 2), "int8", scale=0.05, zero_point=0)
    y = b.tensor("y", (1, 96, 96, 2), "int8", scale=0.05, zero_point=0)
    b.op("RELU", [x], [y])
    model = tmp_path / "big.tflite"
    model.write_bytes(b.build([x], [y]))
    rc, out, err = _cli("plan", str(model), "--board", "microbit-v1", "--app", "validate",
                        "--json")
    plan = json.loads(out)
    assert plan["fits"] is False and plan["ram"]["over"] > 0, err
    rc, _, err = _cli("build", str(model), "--board", "microbit-v1", "-o",
                      str(tmp_path / "b"))
    assert rc == 1
    assert f"over by {plan['ram']['over']:,}" in err, (plan["ram"], err)
    assert "in-place elementwise" not in err
