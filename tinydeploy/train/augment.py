"""Training-time augmentation for keyword spotting: what a microphone in a room adds to a word.

Waveform ingredients, applied in this order to a 1 s int16 clip: speed/pitch perturbation
(resampling, so both change together, as a faster talker with a higher voice), time shift
(optionally only as far as keeps the word whole, as the windows of a stream see a word while
it is inside them), simulated room (convolution with a synthetic room impulse response: a
direct path, a few early reflections and an exponentially decaying diffuse tail for a random
RT60), background noise at a random SNR (slices of real recordings, e.g. Speech Commands'
``_background_noise_``, or the procedural noises of `tinydeploy.train.data.make_noise`), and a
random gain. Feature ingredient: SpecAugment-style masking of time frames and feature
channels of a batch of normalised features.

Every ingredient can be switched off (for the ablation that says what each one buys).
Deterministic: all randomness comes from the generator passed in, so a seeded run repeats.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tinydeploy.kws.wav import SAMPLE_RATE, resample
from tinydeploy.train.data import CLIP, fit_clip, make_noise


@dataclass(frozen=True)
class AugmentConfig:
    """Probabilities and ranges of every ingredient; ``p_* = 0`` switches one off."""

    p_speed: float = 0.7
    speed: tuple[float, float] = (0.85, 1.15)    # >1: faster and higher
    shift_ms: int = 150                          # uniform shift in [-shift, +shift]
    shift_keeps_word: bool = False               # only shifts that keep the word whole
    p_reverb: float = 0.4
    rt60_s: tuple[float, float] = (0.15, 0.8)
    p_noise: float = 0.8
    snr_db: tuple[float, float] = (0.0, 25.0)
    p_real_noise: float = 0.7                    # of noisy clips: a real recording's slice
    gain_db: tuple[float, float] = (-20.0, 6.0)  # of the clip's level
    p_specaug: float = 0.6                       # per clip in a batch
    time_masks: int = 2
    time_mask_frames: int = 6
    freq_masks: int = 1
    freq_mask_channels: int = 2

    def without(self, *names: str) -> AugmentConfig:
        """A copy with the named ingredients ('speed', 'shift', 'reverb', 'noise', 'gain',
        'specaug') switched off."""
        off: dict[str, dict[str, object]] = {
            "speed": {"p_speed": 0.0}, "shift": {"shift_ms": 0},
            "reverb": {"p_reverb": 0.0}, "noise": {"p_noise": 0.0},
            "gain": {"gain_db": (0.0, 0.0)}, "specaug": {"p_specaug": 0.0}}
        kw: dict[str, object] = {}
        for n in names:
            if n not in off:
                raise ValueError(f"unknown augmentation '{n}' (known: {', '.join(off)})")
            kw.update(off[n])
        return type(self)(**{**self.__dict__, **kw})


NONE = AugmentConfig(p_speed=0.0, shift_ms=0, p_reverb=0.0, p_noise=0.0, gain_db=(0.0, 0.0),
                     p_specaug=0.0)


def room_impulse(rng: np.random.Generator, rt60_s: float, rate: int = SAMPLE_RATE
                 ) -> np.ndarray:
    """A synthetic room impulse response, unit energy: a direct path, 3-6 early reflections
    (2-25 ms, decaying, random sign) and a diffuse tail of Gaussian noise whose envelope falls
    by 60 dB in ``rt60_s`` seconds, starting after the first reflection; length ``rt60_s``
    (at most 0.8 s). A lower RT60 is a small furnished room, a higher one a hall."""
    n = max(16, int(min(rt60_s, 0.8) * rate))
    h = np.zeros(n)
    h[0] = 1.0
    decay = 6.9078 / (rt60_s * rate)             # ln(1000): amplitude -60 dB at RT60
    for _ in range(int(rng.integers(3, 7))):
        d = int(rng.uniform(0.002, 0.025) * rate)
        if d < n:
            h[d] += rng.choice([-1.0, 1.0]) * rng.uniform(0.2, 0.7) * np.exp(-decay * d)
    start = int(0.002 * rate)
    t = np.arange(n - start)
    tail = rng.normal(size=n - start) * np.exp(-decay * t) * rng.uniform(0.15, 0.4)
    h[start:] += tail
    return h / np.sqrt(np.sum(h ** 2))


def _fft_convolve(x: np.ndarray, h: np.ndarray) -> np.ndarray:
    m = x.size + h.size - 1
    nfft = 1 << (m - 1).bit_length()
    return np.fft.irfft(np.fft.rfft(x, nfft) * np.fft.rfft(h, nfft), nfft)[:x.size]


def noise_slice(rng: np.random.Generator, noises: Sequence[np.ndarray], n: int = CLIP
                ) -> np.ndarray:
    """A random ``n``-sample slice of one of ``noises`` (float, zero-mean, unit RMS); the
    procedural noise when no recording is long enough."""
    usable = [x for x in noises if x.size >= n]
    if not usable:
        return make_noise(rng, n)
    src = usable[int(rng.integers(len(usable)))]
    start = int(rng.integers(0, src.size - n + 1))
    y = src[start:start + n].astype(np.float64)
    y = y - y.mean()
    return y / max(1e-9, float(np.sqrt(np.mean(y ** 2))))


WORD_FRAME = SAMPLE_RATE // 100                  # 10 ms
WORD_FLOOR_DB = -20.0                            # below the loudest frame


def word_extent(x: np.ndarray) -> tuple[int, int]:
    """Where the word in a clip is: ``(start, end)`` samples of the run from the first to the
    last 10 ms frame whose RMS is within 20 dB of the loudest frame's. A clip without any
    sound spans the whole clip, so a shift that keeps it whole is no shift."""
    n = x.size // WORD_FRAME
    if n == 0:
        return 0, x.size
    rms = np.sqrt(np.mean(np.square(x[:n * WORD_FRAME].astype(np.float64))
                          .reshape(n, WORD_FRAME), axis=1))
    if rms.max() <= 0:
        return 0, x.size
    loud = np.flatnonzero(rms >= rms.max() * 10 ** (WORD_FLOOR_DB / 20))
    return int(loud[0]) * WORD_FRAME, min(x.size, (int(loud[-1]) + 1) * WORD_FRAME)


def shift_clip(x: np.ndarray, samples: int) -> np.ndarray:
    """``x`` moved later by ``samples`` (earlier if negative), the same length: what moves
    out of the clip is lost and the gap it leaves is silence."""
    out = np.zeros_like(x)
    lo, hi = max(0, samples), min(x.size, x.size + samples)
    if lo < hi:
        out[lo:hi] = x[lo - samples:hi - samples]
    return out


def augment_clip(clip: np.ndarray, rng: np.random.Generator, cfg: AugmentConfig,
                 noises: Sequence[np.ndarray] = (), speech: bool = True) -> np.ndarray:
    """One augmented copy of a 1 s int16 clip (``speech=False`` for silence clips: only the
    gain changes). Output: int16, ``CLIP`` samples, clipped to the int16 range."""
    x = clip.astype(np.float64)
    if speech:
        if rng.random() < cfg.p_speed:
            f = rng.uniform(*cfg.speed)
            x = fit_clip(resample(x, SAMPLE_RATE, int(round(SAMPLE_RATE / f))))
        if cfg.shift_ms:
            back, ahead = cfg.shift_ms, cfg.shift_ms
            if cfg.shift_keeps_word:
                start, end = word_extent(x)
                back = min(back, start * 1000 // SAMPLE_RATE)
                ahead = min(ahead, (x.size - end) * 1000 // SAMPLE_RATE)
            x = shift_clip(x, int(rng.integers(-back, ahead + 1)) * SAMPLE_RATE // 1000)
        if rng.random() < cfg.p_reverb:
            x = _fft_convolve(x, room_impulse(rng, rng.uniform(*cfg.rt60_s)))
        if rng.random() < cfg.p_noise:
            loud = x[np.abs(x) > 0.1 * max(1.0, float(np.abs(x).max()))]
            rms = float(np.sqrt(np.mean(loud ** 2))) if loud.size else 0.0
            real = noises and rng.random() < cfg.p_real_noise
            nz = noise_slice(rng, noises) if real else make_noise(rng)
            x = x + nz * rms / 10 ** (rng.uniform(*cfg.snr_db) / 20)
    lo, hi = cfg.gain_db
    if hi > lo:
        x = x * 10 ** (rng.uniform(lo, hi) / 20)
    return np.clip(np.round(x), -32768, 32767).astype(np.int16)


def spec_augment(x: np.ndarray, rng: np.random.Generator, cfg: AugmentConfig) -> np.ndarray:
    """SpecAugment-style masks on a batch of normalised features ``[n, frames, channels]``
    (a copy): for a ``p_specaug`` share of the clips, ``time_masks`` runs of up to
    ``time_mask_frames`` frames and ``freq_masks`` runs of up to ``freq_mask_channels``
    channels are set to 0 (the training mean after normalisation)."""
    out = np.array(x, dtype=np.float32, copy=True)
    if cfg.p_specaug <= 0:
        return out
    n, frames, chans = out.shape[:3]
    for i in np.flatnonzero(np.asarray(rng.random(n)) < cfg.p_specaug):
        for _ in range(cfg.time_masks):
            w = int(rng.integers(0, cfg.time_mask_frames + 1))
            t0 = int(rng.integers(0, frames - w + 1))
            out[i, t0:t0 + w] = 0.0
        for _ in range(cfg.freq_masks):
            w = int(rng.integers(0, cfg.freq_mask_channels + 1))
            c0 = int(rng.integers(0, chans - w + 1))
            out[i, :, c0:c0 + w] = 0.0
    return out
