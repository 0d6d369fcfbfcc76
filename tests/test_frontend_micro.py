"""The micro-speech front end: C (host library) == numpy reference == TensorFlow's
``audio_microfrontend`` op, byte for byte, on speech, silence, clipping, DC offset, very quiet
input, white noise and long streams (noise-reduction / PCAN state carried across frames).

TFLM's own micro_speech test clips are used when present (``TD_MICRO_SPEECH_DIR``, default
``.cache/public-models/micro_speech`` in the clone: the WAVs
of tensorflow/tflite-micro's ``tensorflow/lite/micro/examples/micro_speech/testdata/``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.errors import InputDataError
from tinydeploy.frontend.micro import (
    HostMicroFrontend,
    fft_plan,
    reference_features,
    tf_features,
    to_int8,
)
from tinydeploy.frontend.micro_config import (
    MicroSpeechConfig,
    compute_tables,
    fft_input_order,
    render_microspeech_header,
)

ROOT = Path(__file__).resolve().parent.parent
CLIPS = ("yes_1000ms", "no_1000ms", "silence_1000ms", "noise_1000ms", "yes_30ms", "no_30ms")


def micro_speech_dir() -> Path | None:
    """Where TFLM's micro_speech model and test clips were put, or None."""
    for d in (os.environ.get("TD_MICRO_SPEECH_DIR"),
              str(ROOT / ".cache" / "public-models" / "micro_speech")):
        if d and (Path(d) / "yes_1000ms.wav").exists():
            return Path(d)
    return None


def read_pcm(path: Path) -> np.ndarray:
    from tinydeploy.kws.wav import read_wav

    return read_wav(path, 16000)


def _speech_like(n: int, rng: np.random.Generator) -> np.ndarray:
    """Voiced bursts: harmonics of a gliding pitch under a syllable envelope, plus noise."""
    t = np.arange(n) / 16000
    f0 = 110 + 60 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(f0) / 16000
    voice = sum(np.sin(k * phase) / k for k in range(1, 12))
    env = np.clip(np.sin(2 * np.pi * 3.1 * t), 0, None) ** 2
    x = 6000 * voice * env + rng.normal(0, 40, n)
    return np.clip(x, -32768, 32767).astype(np.int16)


def cases() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    n = 16000
    return {
        "speech_like": _speech_like(n, rng),
        "silence": np.zeros(n, dtype=np.int16),
        "clipping": np.clip(rng.normal(0, 40000, n), -32768, 32767).astype(np.int16),
        "full_scale_square": np.where(np.arange(n) % 40 < 20, 32767, -32768).astype(np.int16),
        "dc_offset": (9000 + rng.integers(-200, 200, n)).astype(np.int16),
        "very_quiet": rng.integers(-2, 3, n).astype(np.int16),
        "white_noise": rng.integers(-32768, 32768, n).astype(np.int16),
        "short_30ms": rng.integers(-3000, 3000, 480).astype(np.int16),
        # 6 s: speech, then a step to loud noise, then near silence: the noise estimate and
        # PCAN gain carry across all 299 frames
        "long_stream": np.concatenate([_speech_like(32000, rng),
                                       rng.integers(-20000, 20000, 32000).astype(np.int16),
                                       _speech_like(16000, rng) // 50,
                                       rng.integers(-4, 5, 16000).astype(np.int16)]),
    }


@pytest.fixture(scope="module")
def host() -> HostMicroFrontend:
    return HostMicroFrontend()


def _mismatch(a: np.ndarray, b: np.ndarray) -> str:
    bad = np.argwhere(a != b)
    return f"{len(bad)} of {a.size} differ; first (frame, channel, c, ref): " + ", ".join(
        f"({f}, {c}, {a[f, c]}, {b[f, c]})" for f, c in bad[:5])


@pytest.mark.parametrize("name", list(cases()))
def test_c_equals_reference(host: HostMicroFrontend, name: str) -> None:
    audio = cases()[name]
    c, ref = host.stream_u16(audio), reference_features(audio)
    assert c.shape == ref.shape == (1 + (audio.size - 480) // 320, 40)
    assert (c == ref).all(), _mismatch(c, ref)
    assert (host.stream_s8(audio) == to_int8(ref)).all()


@pytest.mark.tf
@pytest.mark.parametrize("name", list(cases()))
def test_reference_equals_tensorflow_op(name: str) -> None:
    audio = cases()[name]
    ref, op = reference_features(audio), tf_features(audio)
    assert (ref == op).all(), _mismatch(ref, op)


@pytest.mark.tf
@pytest.mark.parametrize("name", CLIPS)
def test_tflm_test_clips_byte_identical(host: HostMicroFrontend, name: str) -> None:
    d = micro_speech_dir()
    if d is None:
        pytest.skip("TFLM micro_speech test clips not found: put tflite-micro's "
                    "tensorflow/lite/micro/examples/micro_speech/testdata/*.wav in "
                    ".cache/public-models/micro_speech or set TD_MICRO_SPEECH_DIR")
    audio = read_pcm(d / f"{name}.wav")
    c, op = host.stream_u16(audio), tf_features(audio)
    assert (c == op).all(), _mismatch(c, op)
    assert (host.stream_s8(audio) == to_int8(op)).all()


def test_state_carries_across_frames(host: HostMicroFrontend) -> None:
    """The stream is not a sequence of independent frames: the noise estimate changes the
    output of a later frame, and a continued stream equals one long call."""
    audio = cases()["long_stream"]
    whole = host.stream_u16(audio)
    tail = audio[16000 * 4:]
    fresh = host.stream_u16(tail)
    assert (fresh != whole[200:200 + fresh.shape[0]]).any()
    host.stream_u16(audio[:16000 * 4 + 160])          # 4 s of the stream: frames 0..199
    cont = host.stream_u16(tail, reset=False)         # carried on with frame 200 onwards
    assert (cont == whole[200:]).all()


def test_int8_mapping_is_tflm_formula() -> None:
    v = np.arange(0, 1200, dtype=np.uint16)
    q = to_int8(v)
    expect = np.clip((v.astype(np.int64) * 256 + 333) // 666 - 128, -128, 127)
    assert (q == expect).all() and q.min() == -128 and q.max() == 127


@pytest.mark.tf
@pytest.mark.parametrize("cfg", [
    MicroSpeechConfig(window_ms=40, stride_ms=10, channels=32),     # FFT 1024: a radix-2 stage
    MicroSpeechConfig(pcan=False),
    MicroSpeechConfig(pcan=False, log=False),
    MicroSpeechConfig(sample_rate=8000, window_ms=25, stride_ms=10, channels=20,
                      upper_hz=3800.0, scale_shift=4),
], ids=["fft1024", "no_pcan", "linear", "8khz"])
def test_other_configs_match_tensorflow(cfg: MicroSpeechConfig) -> None:
    audio = cases()["speech_like"][:12000] + cases()["white_noise"][:12000] // 64
    c, op = HostMicroFrontend(cfg).stream_u16(audio), tf_features(audio, cfg)
    assert (c == op).all(), _mismatch(c, op)


def test_config_json_round_trip_and_errors(tmp_path: Path) -> None:
    cfg = MicroSpeechConfig(channels=32, pcan=False)
    p = tmp_path / "frontend.json"
    p.write_text(cfg.to_json())
    assert json.loads(p.read_text())["frontend"] == "micro-speech"
    assert MicroSpeechConfig.load(p) == cfg
    with pytest.raises(InputDataError, match="unknown micro-speech parameter"):
        MicroSpeechConfig.from_json('{"frontend": "micro-speech", "mel_bands": 40}')
    with pytest.raises(InputDataError, match="window_ms=30"):
        MicroSpeechConfig(sample_rate=11025, upper_hz=5000.0)      # 330.75 samples
    with pytest.raises(InputDataError, match="band"):
        MicroSpeechConfig(upper_hz=9000.0)


def test_header_reproducible_and_tables_in_range() -> None:
    cfg = MicroSpeechConfig()
    assert render_microspeech_header(cfg) == render_microspeech_header(MicroSpeechConfig())
    t = compute_tables(cfg)
    assert t.window.max() <= 4096 and t.window.min() >= 0
    assert (np.diff(t.bin_channel.astype(int)) >= 0).all()       # bins feed channels in order
    assert ((t.bin_weight >= 0) & (t.bin_weight <= 4096)).all()
    assert 0 < t.bin_start < t.bin_end <= cfg.fft // 2


def test_registry_resolves_the_preset_and_its_json(tmp_path: Path) -> None:
    from tinydeploy.frontend.presets import check_model_input, resolve_frontend

    named = resolve_frontend("micro-speech")
    assert named.config == MicroSpeechConfig() and named.spec.files == (
        "td_frontend.h", "td_frontend_micro.c")
    assert named.spec.scratch_bytes(named.config) == HostMicroFrontend().scratch_bytes
    p = tmp_path / "fe.json"
    p.write_text(json.dumps({"frontend": "micro-speech", "channels": 32, "pcan": False}))
    choice = resolve_frontend(str(p))
    assert choice.config == MicroSpeechConfig(channels=32, pcan=False)
    assert choice.spec.scratch_bytes(choice.config) == HostMicroFrontend(
        choice.config).scratch_bytes
    check_model_input(named, (1, 1960), "micro_speech")              # 49 x 40 fits
    with pytest.raises(InputDataError, match="49 x 32 = 1568"):
        check_model_input(choice, (1, 1960), "micro_speech")
    p.write_text(json.dumps({"frontend": "micro-speech", "fft": 1024}))
    with pytest.raises(InputDataError, match="unknown micro-speech parameter"):
        resolve_frontend(str(p))


def _random_config(rng: np.random.Generator) -> MicroSpeechConfig | None:
    sr = int(rng.choice([8000, 16000, 32000, 48000]))
    window_ms = int(rng.integers(10, 65 if sr <= 32000 else 80))
    kw = dict(sample_rate=sr, window_ms=window_ms,
              stride_ms=int(rng.integers(5, window_ms + 1)),
              clip_samples=sr, channels=int(rng.integers(4, 81)),
              lower_hz=float(np.float32(rng.uniform(0, 400))),
              upper_hz=float(np.float32(rng.uniform(sr / 4, sr / 2 - 100))),
              smoothing_bits=int(rng.integers(6, 13)),
              even_smoothing=float(np.float32(rng.uniform(0.005, 0.2))),
              odd_smoothing=float(np.float32(rng.uniform(0.005, 0.2))),
              min_signal_remaining=float(np.float32(rng.uniform(0.0, 0.3))),
              pcan=bool(rng.random() < 0.7),
              pcan_strength=float(np.float32(rng.uniform(0.5, 0.99))),
              pcan_offset=float(np.float32(rng.uniform(10, 200))),
              gain_bits=int(rng.integers(18, 24)), log=bool(rng.random() < 0.85),
              scale_shift=int(rng.integers(2, 9)))
    try:
        from tinydeploy.frontend.micro_config import compute_tables

        cfg = MicroSpeechConfig(**kw)
        compute_tables(cfg)
        return cfg
    except InputDataError:
        return None


@pytest.mark.tf
@pytest.mark.slow
def test_sweep_random_configs_and_signals_match_tensorflow() -> None:
    """Random parameters (rates, windows, bands, smoothing, PCAN, log) on random signals."""
    rng = np.random.default_rng(2024)
    done = 0
    while done < 40:
        cfg = _random_config(rng)
        if cfg is None:
            continue
        n = int(cfg.window + cfg.stride * rng.integers(5, 40))
        gain = 10 ** rng.uniform(0, 4.5)
        x = rng.normal(0, gain, n) * (1 + np.sin(np.arange(n) / rng.uniform(50, 5000)))
        audio = np.clip(x + rng.uniform(-3000, 3000), -32768, 32767).astype(np.int16)
        c, op = HostMicroFrontend(cfg).stream_u16(audio), tf_features(audio, cfg)
        assert (c == op).all(), (cfg, _mismatch(c, op))
        done += 1


@pytest.mark.tf
@pytest.mark.slow
def test_sweep_real_speech_folder_matches_tensorflow() -> None:
    """Every WAV below ``TD_REAL_SPEECH_DIR`` (e.g. Speech Commands clips of real people), at
    its own length, through the C front end and TensorFlow's op: every value identical."""
    folder = os.environ.get("TD_REAL_SPEECH_DIR")
    if not folder or not Path(folder).is_dir():
        pytest.skip("TD_REAL_SPEECH_DIR is not set to a folder of WAV files (real speech to "
                    "compare the micro-speech front end with TensorFlow's op on)")
    files = sorted(Path(folder).rglob("*.wav"))
    host = HostMicroFrontend()
    values = 0
    for f in files:
        audio = read_pcm(f)
        if audio.size < 480:
            continue
        c, op = host.stream_u16(audio), tf_features(audio)
        assert (c == op).all(), (str(f), _mismatch(c, op))
        assert (host.stream_s8(audio) == to_int8(op)).all(), str(f)
        values += op.size
    print(f"{len(files)} files, {values} uint16 values identical")
    assert values > 0



@pytest.mark.parametrize("ncfft", [4, 8, 256, 512, 2048])
def test_fft_input_order_is_the_reference_permutation(ncfft: int) -> None:
    """td_fe_fft_order, the C's digit-reversed input order, is the permutation the Python
    reference's FFT plan derives by walking its radices (radix 4, then 2 when needed)."""
    assert np.array_equal(fft_input_order(ncfft), fft_plan(ncfft)[0])


def test_header_carries_the_fft_input_order() -> None:
    cfg = MicroSpeechConfig()
    t = compute_tables(cfg)
    assert t.fft_order.dtype == np.uint16 and np.array_equal(t.fft_order, fft_plan(256)[0])
    assert "static const uint16_t td_fe_fft_order[256]" in render_microspeech_header(cfg)
