"""Host and device front ends give byte-identical features (QEMU, hard and soft float)."""

from __future__ import annotations

import numpy as np
import pytest

from tinydeploy.frontend.native import HostFrontend, Quant
from tinydeploy.testing.frontend_target import run_frontend_on_qemu

pytestmark = pytest.mark.target


def _clips(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(16000) / 16000
    out = []
    for i in range(n):
        gain = 10 ** rng.uniform(-3, 0) * 32767
        kind = i % 4
        if kind == 0:
            x = rng.normal(0, gain / 4, 16000)
        elif kind == 1:
            x = gain * np.sin(2 * np.pi * rng.uniform(50, 7900) * t)
        elif kind == 2:
            x = gain * np.sign(np.sin(2 * np.pi * rng.uniform(50, 500) * t)) * (t > rng.random())
        else:
            x = np.zeros(16000) + rng.integers(-3, 3, 16000)
        out.append(np.clip(x, -32768, 32767).astype(np.int16))
    return np.stack(out)


def _speech(n: int) -> np.ndarray:
    """Synthetic spoken words (espeak-ng) with noise, as in the training data."""
    from tinydeploy.train.data import SynthConfig, _clip_job, synthetic_speakers

    speakers = synthetic_speakers()
    cfg = SynthConfig(seed=2024)
    return np.stack([_clip_job((cfg, 2 + i % 10, i, speakers))[0] for i in range(n)])


@pytest.mark.parametrize("machine, n", [("mps2-an386", 64), ("mps2-an385", 8)])
def test_device_features_are_byte_identical_to_host(machine: str, n: int) -> None:
    seed = sum(machine.encode())
    clips = np.concatenate([_clips(n, seed=seed), _speech(n // 4)])
    quant = Quant(0.0789, -7)
    dev_f, dev_q = run_frontend_on_qemu(clips, quant, machine=machine)
    host = HostFrontend()
    host_f = host.features(clips)
    host_q = host.features_s8(clips, quant)
    bad = np.nonzero(dev_f.view(np.uint32) != host_f.view(np.uint32))
    assert bad[0].size == 0, f"float mismatches at {list(zip(*bad, strict=True))[:5]}"
    assert (dev_q == host_q).all()
    assert len(np.unique(host_q)) > 50      # the clips exercise a wide range of codes


def test_log_mel_variant_is_byte_identical_too() -> None:
    from tinydeploy.frontend.config import FeatureKind, FrontendConfig

    cfg = FrontendConfig(kind=FeatureKind.LOG_MEL, fft=512, window=480)
    clips = _clips(8, seed=77)
    quant = Quant(0.11, 20)
    dev_f, dev_q = run_frontend_on_qemu(clips, quant, cfg=cfg)
    host = HostFrontend(cfg)
    assert dev_f.shape == (8, 49, 40)
    assert (dev_f.view(np.uint32) == host.features(clips).view(np.uint32)).all()
    assert (dev_q == host.features_s8(clips, quant)).all()
