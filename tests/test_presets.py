"""Front-end presets: choosing one (name, JSON file, frontend.json beside the model), the files
a firmware build copies, and --labels checks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.errors import InputDataError
from tinydeploy.frontend.config import FrontendConfig
from tinydeploy.frontend.presets import (
    FrontendPreset,
    available_presets,
    choice_of,
    preset_spec,
    resolve_frontend,
)
from tinydeploy.kws.labels import load_labels

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "kws" / "dscnn_int8.tflite"


def test_default_is_frontend_json_beside_the_model() -> None:
    c = resolve_frontend(None, MODEL)
    assert c.preset is FrontendPreset.TINYDEPLOY
    assert c.config == FrontendConfig.load(MODEL.with_name("frontend.json"))
    assert c.source.endswith("frontend.json")


def test_preset_name_gives_its_defaults() -> None:
    for name in available_presets():
        c = resolve_frontend(name)
        assert c.preset.value == name
        assert c.config == preset_spec(name).default()
        assert choice_of(c.config).preset is c.preset


def test_json_file_with_and_without_the_preset_key(tmp_path: Path) -> None:
    d = json.loads(MODEL.with_name("frontend.json").read_text())
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(d))
    keyed = tmp_path / "keyed.json"
    keyed.write_text(json.dumps({"frontend": "tinydeploy", **d, "mel_bands": 32}))
    a, b = resolve_frontend(str(plain)), resolve_frontend(keyed)
    assert a.preset is b.preset is FrontendPreset.TINYDEPLOY
    assert a.config.mel_bands == 40 and b.config.mel_bands == 32


@pytest.mark.parametrize("text, words", [
    ("bogus", ["unknown front-end preset 'bogus'", "mlperf-kws"]),
    ("{not json", ["not JSON"]),
    ('{"frontend": "nope"}', ["unknown front-end preset 'nope'"]),
    ('{"frontend": 3}', ["must be a preset name"]),
    ('{"window": 9999}', ["window=9999"]),
])
def test_bad_choices_name_the_problem(tmp_path: Path, text: str, words: list[str]) -> None:
    arg: str = text
    if text != "bogus":
        f = tmp_path / "fe.json"
        f.write_text(text)
        arg = str(f)
    with pytest.raises(InputDataError) as e:
        resolve_frontend(arg)
    for w in words:
        assert w in e.value.message + str(e.value.hint)


def test_missing_preset_module_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from tinydeploy.frontend import presets

    monkeypatch.setitem(presets.PRESET_MODULES, FrontendPreset.MICRO_SPEECH,
                        "tinydeploy.frontend.no_such_frontend")
    with pytest.raises(InputDataError, match="not available in this installation"):
        preset_spec("micro-speech")
    assert "micro-speech" not in available_presets()


def test_every_preset_header_declares_its_api() -> None:
    fe = ROOT / "firmware" / "frontend"
    for name in available_presets():
        spec = preset_spec(name)
        cfg = spec.default()
        h = spec.render_header(cfg)
        assert h == spec.render_header(cfg)                       # reproducible
        for macro in ("SAMPLE_RATE", "CLIP_SAMPLES", "WINDOW", "STRIDE", "FRAMES", "OUT"):
            assert f"#define TD_FE_{macro} " in h, (name, macro)
        assert f"#define TD_FE_PRESET_{name.upper().replace('-', '_')} 1" in h
        assert "td_frontend_scratch_t;" in h
        assert spec.scratch_bytes(cfg) > 0
        assert "td_frontend.h" in spec.files
        for f in spec.files:
            assert (fe / f).is_file(), f


def test_every_preset_streams_like_its_clips() -> None:
    """A clip streamed frame by frame from a reset state gives the clip's own rows (the
    device's streaming path and the training path agree). The clip's largest sample comes
    first, so a peak-normalising preset knows it from the first frame on."""
    from tinydeploy.frontend.native import Quant
    from tinydeploy.kws.stream import stream_windows_of

    rng = np.random.default_rng(3)
    q = Quant(0.5, -3)
    for name in available_presets():
        spec = preset_spec(name)
        cfg = spec.default()
        host = spec.host(cfg)
        clip = (rng.standard_normal(cfg.clip_samples) * 3000).astype(np.int16)
        clip[3] = 32767
        whole = host.features_s8(clip[None], q)[0]
        rows = host.stream_s8(clip, q)
        assert rows.shape == whole.shape
        assert np.array_equal(rows, whole), name
        assert np.array_equal(host.stream_s8(clip, q), rows)      # reset between streams
        wins, steps = stream_windows_of(host, np.concatenate([clip, clip[:640]]), q)
        assert list(steps) == [cfg.frames, cfg.frames + 1, cfg.frames + 2]
        assert np.array_equal(wins[0], whole), name


def test_kws_build_copies_only_the_chosen_preset(tmp_path: Path) -> None:
    from tinydeploy.kws.device import kws_part_files

    files = kws_part_files(resolve_frontend(None, MODEL))["frontend"]
    assert files == ("td_fe_float.h", "td_frontend.c", "td_frontend.h")
    if "mlperf-kws" in available_presets():
        files = kws_part_files(resolve_frontend("mlperf-kws"))["frontend"]
        assert files == ("td_fe_float.h", "td_frontend.h", "td_frontend_mlperf.c")


def _tdp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tinydeploy", *args], capture_output=True,
                          text=True, timeout=300)


def test_labels_count_must_match_the_model(tmp_path: Path) -> None:
    three = tmp_path / "three.txt"
    three.write_text("a\nb\nc\n")
    with pytest.raises(InputDataError, match=r"3 labels but .* has 12 outputs"):
        load_labels(MODEL, three)
    dup = tmp_path / "dup.txt"
    dup.write_text("\n".join(["a"] * 12))
    with pytest.raises(InputDataError, match="lines 1 and 2"):
        load_labels(MODEL, dup)
    good = tmp_path / "good.txt"
    good.write_text("\n".join(f"w{i}" for i in range(12)) + "\n\n")
    assert load_labels(MODEL, good) == [f"w{i}" for i in range(12)]
    from tinydeploy.kws.wav import write_wav

    wav = tmp_path / "a.wav"
    write_wav(wav, np.zeros(16000, dtype=np.int16))
    r = _tdp("kws", "stream", str(wav), "--simulate", "--labels", str(three))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "3 labels" in r.stderr


def test_cli_unknown_preset_exits_1() -> None:
    r = _tdp("kws", "stream", "x.wav", "--simulate", "--frontend", "bogus")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "unknown front-end preset 'bogus'" in r.stderr


def test_keyword_range_from_labels() -> None:
    from tinydeploy.kws.labels import keyword_range

    assert keyword_range((ROOT / "models" / "kws" / "labels.txt").read_text().split()) == (2, 12)
    mlperf = ["Down", "Go", "Left", "No", "Off", "On", "Right", "Stop", "Up", "Yes", "Silence",
              "Unknown"]
    assert keyword_range(mlperf) == (0, 10)
    with pytest.raises(InputDataError, match="not contiguous"):
        keyword_range(["yes", "_silence_", "no"])
    with pytest.raises(InputDataError, match="no keyword"):
        keyword_range(["silence", "unknown"])


def test_model_input_must_match_the_front_end(tmp_path: Path) -> None:
    fe = tmp_path / "fe.json"
    d = json.loads(MODEL.with_name("frontend.json").read_text())
    fe.write_text(json.dumps({**d, "window": 480, "stride": 160}))     # 98 frames
    r = _tdp("kws", "score", "--data", str(tmp_path), "--model", str(MODEL), "--frontend",
             str(fe), "--simulate")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    err = " ".join(r.stderr.split())          # the console wraps long lines
    assert "98 x 10 = 980 features" in err and "490 values" in err


def test_every_preset_config_shares_the_base() -> None:
    """Each preset's config is a PresetConfig whose fields open with the clip's; frames and
    shape come from its own framing; a bad value names the preset."""
    from dataclasses import fields, replace

    from tinydeploy.frontend.config import FloatPresetConfig
    from tinydeploy.frontend.presets import PresetConfig, frame_count

    for name in available_presets():
        cfg = preset_spec(name).default()
        assert isinstance(cfg, PresetConfig)
        assert [f.name for f in fields(cfg)][:2] == ["sample_rate", "clip_samples"]
        short = replace(cfg, clip_samples=cfg.clip_samples // 2)
        n = frame_count(short.clip_samples, short.window, short.stride)
        assert n < cfg.frames and short.shape == (n, short.n_out)
        with pytest.raises(InputDataError) as err:
            replace(cfg, clip_samples=cfg.window - 1)
        assert str(err.value).startswith(cfg.ERROR_PREFIX + ": clip_samples=")
        if isinstance(cfg, FloatPresetConfig):     # the framing check the float presets share
            with pytest.raises(InputDataError, match=f"^{cfg.ERROR_PREFIX}: fft=1000 must be"):
                replace(cfg, fft=1000)
