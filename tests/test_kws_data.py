"""WAV reading, the Speech Commands loader (on a fake tree) and the synthetic generator."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.errors import InputDataError
from tinydeploy.kws.wav import decode_wav, encode_wav, read_wav, write_wav
from tinydeploy.train.data import (
    KEYWORDS,
    LABELS,
    SILENCE,
    UNKNOWN,
    Dataset,
    Split,
    SynthConfig,
    export_speech_commands,
    generate_synthetic,
    load_speech_commands,
    split_speakers,
)


def _wav(samples: bytes, *, tag: int = 1, channels: int = 1, rate: int = 16000,
         bits: int = 16, data_size: int | None = None) -> bytes:
    fmt = struct.pack("<HHIIHH", tag, channels, rate, rate * channels * bits // 8,
                      channels * bits // 8, bits)
    size = len(samples) if data_size is None else data_size
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + \
        struct.pack("<I", size) + samples
    return b"RIFF" + struct.pack("<I", len(body)) + body


def _tone(freq: float, rate: int, n: int, amp: float = 10000) -> np.ndarray:
    return amp * np.sin(2 * np.pi * freq * np.arange(n) / rate)


def _peak_hz(x: np.ndarray, rate: int = 16000) -> float:
    spec = np.abs(np.fft.rfft(x.astype(np.float64)))
    return float(np.argmax(spec) * rate / x.size)


# ---- WAV ---------------------------------------------------------------------------------------

def test_wav_roundtrip_16k_int16(tmp_path: Path) -> None:
    x = np.random.default_rng(0).integers(-32768, 32767, 5000).astype(np.int16)
    write_wav(tmp_path / "a.wav", x)
    assert (read_wav(tmp_path / "a.wav") == x).all()


def test_wav_8bit_24bit_float_and_stereo_convert_to_int16() -> None:
    x = _tone(440, 16000, 1600).astype(np.int16)
    u8 = ((x.astype(np.int32) >> 8) + 128).astype(np.uint8).tobytes()
    got8 = decode_wav(_wav(u8, bits=8))
    assert np.abs(got8.astype(np.int32) - x).max() <= 256
    v24 = x.astype(np.int32) * 256 + 17
    b24 = np.stack([v24 & 255, (v24 >> 8) & 255, (v24 >> 16) & 255], 1).astype(np.uint8)
    assert np.abs(decode_wav(_wav(b24.tobytes(), bits=24)).astype(np.int32) - x).max() <= 1
    f32 = (x / 32768.0).astype("<f4").tobytes()
    assert np.abs(decode_wav(_wav(f32, tag=3, bits=32)).astype(np.int32) - x).max() <= 1
    st = np.stack([x, np.zeros_like(x)], 1).astype("<i2").tobytes()
    mono = decode_wav(_wav(st, channels=2))
    assert np.abs(mono.astype(np.int32) - x // 2).max() <= 1


@pytest.mark.parametrize("rate", [8000, 22050, 44100, 48000])
def test_other_rates_are_resampled_keeping_pitch_and_length(rate: int) -> None:
    x = _tone(1000, rate, rate).astype("<i2").tobytes()      # 1 s at 1 kHz
    y = decode_wav(_wav(x, rate=rate))
    assert y.size == 16000
    assert abs(_peak_hz(y) - 1000) <= 2
    assert 9000 < np.abs(y[1000:-1000]).max() < 11000


def test_streaming_placeholder_sizes_are_read_to_end_of_file() -> None:
    x = _tone(300, 16000, 800).astype("<i2").tobytes()
    data = _wav(x, data_size=0x7FFFF000)
    assert decode_wav(data).size == 800


@pytest.mark.parametrize("data, word", [
    (b"", "empty file"),
    (b"RIFF\x00\x00\x00\x00WAVX", "not a RIFF/WAVE"),
    (b"hello world, not audio", "not a RIFF/WAVE"),
    (b"RIFF\x04\x00\x00\x00WAVE", "no fmt chunk"),
    (_wav(b"")[:36], "no data chunk"),
    (_wav(b""), "no samples"),
    (_wav(b"\x00" * 64, tag=0x11, bits=4), "unsupported sample format"),
    (_wav(np.array([np.nan, 1.0], "<f4").tobytes(), tag=3, bits=32), "NaN"),
])
def test_bad_wavs_are_input_errors(tmp_path: Path, data: bytes, word: str) -> None:
    p = tmp_path / "bad.wav"
    p.write_bytes(data)
    with pytest.raises(InputDataError, match=word) as err:
        read_wav(p)
    assert "bad.wav" in err.value.message


def test_missing_wav_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputDataError, match="cannot read"):
        read_wav(tmp_path / "nope.wav")


# ---- Speech Commands layout --------------------------------------------------------------------

def _fake_tree(root: Path) -> dict[str, Split]:
    """Each keyword: 6 files from 3 speakers; 'bed' and 'cat': 10 files each; lists put
    speaker s1 in validation and s2 in testing."""
    rng = np.random.default_rng(1)
    expected = {}
    for w in (*KEYWORDS, "bed", "cat"):
        (root / w).mkdir(parents=True)
        n = 10 if w in ("bed", "cat") else 6
        for i in range(n):
            spk = f"s{i % 3}"
            name = f"{w}/{spk}_nohash_{i // 3}.wav"
            length = 16000 if i % 2 else 12000                 # some short clips
            write_wav(root / name, rng.integers(-2000, 2000, length).astype(np.int16))
            expected[name] = [Split.TRAIN, Split.VALIDATION, Split.TEST][i % 3]
    (root / "validation_list.txt").write_text(
        "".join(f"{k}\n" for k, v in expected.items() if v is Split.VALIDATION))
    (root / "testing_list.txt").write_text(
        "".join(f"{k}\n" for k, v in expected.items() if v is Split.TEST))
    (root / "_background_noise_").mkdir()
    write_wav(root / "_background_noise_" / "white.wav",
              rng.integers(-8000, 8000, 40000).astype(np.int16))
    (root / "README.md").write_text("not a word folder")
    return expected


def test_speech_commands_loader_on_a_fake_tree(tmp_path: Path) -> None:
    _fake_tree(tmp_path)
    ds = load_speech_commands(tmp_path, unknown_fraction=0.1, silence_fraction=0.1, seed=3)
    assert ds.audio.shape[1] == 16000 and ds.audio.dtype == np.int16
    counts = ds.counts()
    for w in KEYWORDS:
        assert counts["train"][w] == counts["validation"][w] == counts["test"][w] == 2
    # unknown: 10 % of the split after silence, from 'bed' and 'cat' only
    for split in ("train", "validation", "test"):
        n_kw = sum(counts[split][w] for w in KEYWORDS)        # 20
        assert counts[split][UNKNOWN] == round(n_kw * 0.1 / 0.8)
        total = n_kw + counts[split][UNKNOWN]
        assert counts[split][SILENCE] == round(total * 0.1 / 0.9)
    # validation and test speakers follow the lists, and never appear in training
    train_spk = set(ds.subset(Split.TRAIN).speakers) - {s for s in ds.speakers
                                                        if s.startswith("silence")}
    assert train_spk == {"s0"}
    assert set(ds.subset(Split.TEST).speakers) - {s for s in ds.speakers
                                                  if s.startswith("silence")} == {"s2"}
    # short clips are zero-padded at the end
    yes = ds.audio[ds.labels == LABELS.index("yes")]
    assert (np.abs(yes[:, 12000:]).sum(axis=1) == 0).any()
    # same seed, same data
    again = load_speech_commands(tmp_path, unknown_fraction=0.1, silence_fraction=0.1, seed=3)
    assert (again.audio == ds.audio).all() and (again.labels == ds.labels).all()


def test_speech_commands_missing_keyword_folder(tmp_path: Path) -> None:
    (tmp_path / "yes").mkdir()
    with pytest.raises(InputDataError, match="keyword folders missing: no, up"):
        load_speech_commands(tmp_path)


def test_speech_commands_not_a_directory(tmp_path: Path) -> None:
    with pytest.raises(InputDataError, match="not a directory"):
        load_speech_commands(tmp_path / "absent")


def test_corrupt_wav_inside_tree_names_the_file(tmp_path: Path) -> None:
    _fake_tree(tmp_path)
    (tmp_path / "go" / "s0_nohash_9.wav").write_bytes(b"")
    with pytest.raises(InputDataError, match=r"go/s0_nohash_9.wav: empty file"):
        load_speech_commands(tmp_path)


# ---- synthetic generator -----------------------------------------------------------------------

SPEAKERS = ("en+m3", "en-us+f2", "en-gb-x-rp+m1", "en-029+f4", "en-us-nyc+m7", "en+croak",
            "en-gb-scotland+f1", "en-us+whisper", "en+m2", "en-us+f1")


@pytest.fixture(scope="module")
def tiny() -> Dataset:
    return generate_synthetic(SynthConfig(per_class=5, seed=11, workers=2), SPEAKERS)


def test_synthetic_is_byte_reproducible_across_worker_counts(tiny: Dataset) -> None:
    again = generate_synthetic(SynthConfig(per_class=5, seed=11, workers=1), SPEAKERS)
    assert again.audio.tobytes() == tiny.audio.tobytes()
    assert (again.labels == tiny.labels).all() and (again.speakers == tiny.speakers).all()
    other = generate_synthetic(SynthConfig(per_class=1, seed=12, workers=1), SPEAKERS)
    assert other.audio[0].tobytes() != tiny.audio[0].tobytes()


def test_synthetic_shapes_labels_and_content(tiny: Dataset) -> None:
    assert tiny.audio.shape == (5 * len(LABELS), 16000)
    assert np.bincount(tiny.labels).tolist() == [5] * len(LABELS)
    speech = tiny.labels >= 2
    peaks = np.abs(tiny.audio.astype(np.int32)).max(axis=1)
    assert (peaks[speech] > 1000).all()           # words were rendered
    assert len({a.tobytes() for a in tiny.audio}) == len(tiny)    # every clip differs


def test_synthetic_split_by_speaker(tiny: Dataset) -> None:
    parts = split_speakers(SPEAKERS, SynthConfig(seed=11))
    assert not set(parts[Split.TRAIN]) & set(parts[Split.TEST])
    assert not set(parts[Split.TRAIN]) & set(parts[Split.VALIDATION])
    assert sorted(sum(parts.values(), ())) == sorted(SPEAKERS)
    words = tiny.labels >= 1
    for s in (Split.VALIDATION, Split.TEST):
        m = words & (tiny.split == int(s))
        assert set(tiny.speakers[m]) <= set(parts[s])


def test_export_then_load_keeps_the_clips(tiny: Dataset, tmp_path: Path) -> None:
    export_speech_commands(tiny, tmp_path)
    ds = load_speech_commands(tmp_path, unknown_fraction=0.1, silence_fraction=0.1)
    original = {a.tobytes() for a, lab in zip(tiny.audio, tiny.labels, strict=True) if lab >= 2}
    loaded = {a.tobytes() for a, lab in zip(ds.audio, ds.labels, strict=True) if lab >= 2}
    assert loaded == original
    assert encode_wav(tiny.audio[0])[:4] == b"RIFF"


def test_dataset_save_load(tiny: Dataset, tmp_path: Path) -> None:
    tiny.save(tmp_path / "d.npz")
    back = Dataset.load(tmp_path / "d.npz")
    assert back.audio.tobytes() == tiny.audio.tobytes()
    (tmp_path / "x.npz").write_bytes(b"junk")
    with pytest.raises(InputDataError, match="not a tinydeploy KWS dataset"):
        Dataset.load(tmp_path / "x.npz")


def test_dataset_take_and_concat_keep_every_array_in_step() -> None:
    n = 5
    d = Dataset(np.arange(n * 4, dtype=np.int16).reshape(n, 4), np.arange(n, dtype=np.int32),
                np.array([0, 1, 0, 2, 0], np.int8), np.array([f"s{i}" for i in range(n)]))
    t = d.take(np.array([True, False, True, False, False]))
    assert t.labels.tolist() == [0, 2] and t.speakers.tolist() == ["s0", "s2"]
    assert np.array_equal(t.audio, d.audio[[0, 2]])
    c = Dataset.concat([t, d.subset(Split.TEST)])
    assert c.labels.tolist() == [0, 2, 3] and c.split.tolist() == [0, 0, 2]
    assert c.audio.shape == (3, 4) and c.speakers.tolist() == ["s0", "s2", "s3"]
