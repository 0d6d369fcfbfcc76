"""The mlperf-kws front end against TensorFlow's ops (MLPerf Tiny's feature graph), on
speech-like audio and the edge cases (silence, clipping, DC offset, very quiet input); its
streaming form against the clip form; and its bytes on an emulated Cortex-M4 against the host.

Real Speech Commands clips join the cases when ``TINYDEPLOY_SPEECH_DIR`` names a folder of
WAV files (searched recursively, the first 40 sorted paths)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.frontend.mlperf import (
    MlperfConfig,
    MlperfHost,
    dct_matrix,
    mel_weight_matrix,
    numpy_reference_features,
    tf_reference_features,
)
from tinydeploy.frontend.native import Quant, reference_quantize

CFG = MlperfConfig()
# kws_ref_model.tflite's input quantization (MLPerf Tiny's reference DS-CNN)
QUANT = Quant(0.5847029089927673, 83)


def _speechlike(rng: np.random.Generator, loud: float = 12000.0) -> np.ndarray:
    """Voiced harmonics under a syllable envelope, with noise: spectra like speech."""
    t = np.arange(16000) / 16000.0
    f0 = 110 + 80 * rng.random()
    x = sum(np.sin(2 * np.pi * f0 * h * t + rng.random() * 6) / h for h in range(1, 25))
    env = np.exp(-((t - 0.3 - 0.4 * rng.random()) / 0.15) ** 2)
    y = loud * env * x / 3 + rng.normal(0, 60, t.size)
    return np.clip(np.round(y), -32768, 32767).astype(np.int16)


def _cases() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    t = np.arange(16000) / 16000.0
    sine = np.sin(2 * np.pi * 440 * t)
    cases = {f"speech{i}": _speechlike(rng) for i in range(4)}
    cases["silence"] = np.zeros(16000, np.int16)
    cases["clipping"] = np.clip(np.round(4 * 32767 * sine * np.exp(-((t - .5) / .2) ** 2)),
                                -32768, 32767).astype(np.int16)
    cases["dc_offset"] = (_speechlike(rng, 6000).astype(np.int32) + 9000).clip(
        -32768, 32767).astype(np.int16)
    cases["very_quiet"] = np.round(rng.normal(0, 1.5, 16000)).astype(np.int16)
    cases["negative_only"] = (-np.abs(_speechlike(rng, 4000).astype(np.int32)) - 1).astype(
        np.int16)
    cases["short_padded"] = np.concatenate([_speechlike(rng)[:9000],
                                            np.zeros(7000, np.int16)])
    folder = os.environ.get("TINYDEPLOY_SPEECH_DIR")
    if folder:
        from tinydeploy.kws.wav import read_wav
        from tinydeploy.train.data import fit_clip

        for p in sorted(Path(folder).rglob("*.wav"))[:40]:
            cases[f"real:{p.parent.name}/{p.name}"] = fit_clip(read_wav(p), 16000)
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def host() -> MlperfHost:
    return MlperfHost(CFG)


@pytest.mark.tf
def test_tables_equal_tensorflows() -> None:
    import tensorflow as tf

    w = tf.signal.linear_to_mel_weight_matrix(40, 257, 16000, 20.0, 4000.0).numpy()
    ours = mel_weight_matrix(CFG)
    assert ours.shape == w.shape
    assert np.abs(ours - w).max() < 1e-5
    assert np.array_equal(ours > 0, w > 0)          # the same bins feed the same bands
    x = np.random.default_rng(0).standard_normal((5, 40)).astype(np.float32)
    dct = tf.signal.mfccs_from_log_mel_spectrograms(x).numpy()[:, :10]
    assert np.abs(x.astype(np.float64) @ dct_matrix(CFG).T - dct).max() < 1e-5


@pytest.mark.tf
@pytest.mark.parametrize("name", sorted(CASES))
def test_host_c_matches_tensorflow(host: MlperfHost, name: str) -> None:
    clip = CASES[name]
    ref = tf_reference_features(clip, CFG)
    assert np.isfinite(ref).all()
    got = host.features(clip)
    # float: the C's single precision against TF's, in units of the model's input step
    assert np.abs(got - ref).max() < 0.05 * QUANT.scale, name
    q = host.features_s8(clip, QUANT).astype(np.int32)
    r = reference_quantize(ref, QUANT).astype(np.int32)
    d = np.abs(q - r)
    assert d.max() <= 1, (name, d.max())
    assert (d == 0).mean() >= 0.99, (name, (d == 0).mean())


def test_numpy_reference_agrees_with_host(host: MlperfHost) -> None:
    """Without TensorFlow: the float64 numpy statement of the same math."""
    for name in ("speech0", "dc_offset", "clipping", "silence"):
        ref = numpy_reference_features(CASES[name], CFG)
        assert np.abs(host.features(CASES[name]) - ref).max() < 0.02 * QUANT.scale, name


def test_peak_normalisation_is_by_the_signed_maximum(host: MlperfHost) -> None:
    """Scaling a clip does not change its features; MLPerf divides by max(x), not max |x|."""
    clip = CASES["speech1"]
    half = (clip // 2).astype(np.int16)
    assert np.abs(host.features(half) - host.features(clip)).max() < 0.05
    flipped = (-clip.astype(np.int32)).clip(-32768, 32767).astype(np.int16)
    ratio = float(np.max(flipped)) / float(np.max(clip))
    c0_shift = host.features(flipped)[:, 0] - host.features(clip)[:, 0]
    # the magnitude spectrum of -x is that of x: only the divisor moved coefficient 0
    assert np.allclose(c0_shift, -np.sqrt(80) * np.log(ratio), atol=0.05)


def test_stream_windows_equal_the_clip(host: MlperfHost) -> None:
    """A clip streamed frame by frame: the window the app runs equals the clip's features
    after td_frontend_window_s8; without it coefficient 0 of the rows before the loud part is
    off (the rows were normalised by a smaller peak)."""
    rng = np.random.default_rng(5)
    clip = np.concatenate([_speechlike(rng, 800)[:8000], _speechlike(rng, 20000)[8000:]])
    whole = host.features_s8(clip, QUANT).astype(np.int32)
    wins, steps = host.stream_windows_s8(clip, QUANT)
    assert list(steps) == [CFG.frames] and wins.shape == (1, *CFG.shape)
    d = np.abs(wins[0].astype(np.int32) - whole)
    assert d.max() <= 1 and (d == 0).mean() >= 0.99
    raw = host.stream_s8(clip, QUANT).astype(np.int32)
    assert np.abs(raw[:, 0] - whole[:, 0]).max() > 5          # the fix-up matters
    assert np.abs(raw[:, 1:] - whole[:, 1:]).max() <= 1       # only coefficient 0 moved


@pytest.mark.skipif(shutil.which("qemu-system-arm") is None
                    or shutil.which("arm-none-eabi-gcc") is None,
                    reason="needs qemu-system-arm and arm-none-eabi-gcc (scripts/setup.sh "
                           "installs both)")
def test_emulated_m4_bytes_equal_host(host: MlperfHost) -> None:
    from tinydeploy.testing.frontend_target import run_frontend_on_qemu

    names = ["speech0", "silence", "clipping", "dc_offset", "very_quiet", "negative_only"]
    clips = np.stack([CASES[n] for n in names])
    f, q = run_frontend_on_qemu(clips, QUANT, CFG, "mps2-an386")
    assert np.array_equal(f.view(np.uint32), host.features(clips).view(np.uint32))
    assert np.array_equal(q, host.features_s8(clips, QUANT))


@pytest.mark.tf
@pytest.mark.skipif(shutil.which("qemu-system-arm") is None
                    or shutil.which("arm-none-eabi-gcc") is None,
                    reason="needs qemu-system-arm and arm-none-eabi-gcc (scripts/setup.sh "
                           "installs both)")
def test_features_check_command(tmp_path: Path) -> None:
    """The feature check (python -m tinydeploy.testing.frontend_check): device (emulated M4)
    vs host vs TF reference on WAV files."""
    import json
    import subprocess
    import sys

    from tinydeploy.kws.wav import write_wav

    wavs = []
    for name in ("speech2", "clipping", "very_quiet"):
        wavs.append(tmp_path / f"{name}.wav")
        write_wav(wavs[-1], CASES[name])
    model = Path(__file__).resolve().parent.parent / "models" / "kws" / "dscnn_int8.tflite"
    r = subprocess.run([sys.executable, "-m", "tinydeploy.testing.frontend_check",
                        *map(str, wavs), "--model", str(model), "--frontend", "mlperf-kws",
                        "--json"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["clips"] == 3 and d["values"] == 3 * 490
    assert d["host_mismatches"] == 0 and d["reference_max_diff"] <= 1
    assert d["reference_within_1"] == 1.0 and d["reference_equal"] >= 0.99
    assert [f["wav"] for f in d["files"]] == [str(w) for w in wavs]
