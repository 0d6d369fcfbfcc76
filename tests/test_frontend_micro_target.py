"""The micro-speech front end on emulated boards (QEMU): a Cortex-M4F (mps2-an386) and a
Cortex-M0 without FPU or divider (microbit, 16 KB RAM) give the host library's bytes, uint16
and int8, on one stream that carries the noise-reduction / PCAN state through speech-like
audio, clipping, DC offset, silence and very quiet input (and TFLM's yes/no clips when
present)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_frontend_micro import cases, micro_speech_dir, read_pcm

from tinydeploy.frontend.micro import HostMicroFrontend, reference_features
from tinydeploy.testing.frontend_micro_target import run_microspeech_on_qemu

pytestmark = pytest.mark.target


def _stream() -> np.ndarray:
    c = cases()
    parts = [c["speech_like"], c["clipping"][:8000], c["dc_offset"][:8000], c["silence"][:4000],
             c["very_quiet"][:8000], c["full_scale_square"][:4000], c["white_noise"][:4000]]
    d = micro_speech_dir()
    if d is not None:
        parts += [read_pcm(d / "yes_1000ms.wav"), read_pcm(d / "no_1000ms.wav")]
    return np.concatenate(parts)


@pytest.mark.parametrize("machine", ["mps2-an386", "microbit"])
def test_device_stream_is_byte_identical_to_host(machine: str) -> None:
    audio = _stream()
    dev = run_microspeech_on_qemu(audio, machine=machine)
    host = HostMicroFrontend()
    u16 = host.stream_u16(audio)
    assert dev.u16.shape == u16.shape
    bad = np.argwhere(dev.u16 != u16)
    assert bad.size == 0, f"{len(bad)} mismatches, first (frame, channel): {bad[:5].tolist()}"
    assert (dev.s8 == host.stream_s8(audio)).all()
    assert len(np.unique(u16)) > 200                     # the stream spans a wide range
    assert (dev.instructions > 10_000).all()             # the counter counted


def test_reference_agrees_on_the_device_stream() -> None:
    audio = _stream()[:24000]
    assert (reference_features(audio) == HostMicroFrontend().stream_u16(audio)).all()


def test_m0_radix2_config_is_byte_identical_too() -> None:
    """FFT 1024 (a radix-2 stage), 32 channels, 10 ms stride, no PCAN, on the Cortex-M0."""
    from tinydeploy.frontend.micro_config import MicroSpeechConfig

    cfg = MicroSpeechConfig(window_ms=40, stride_ms=10, channels=32, pcan=False)
    audio = _stream()[:20000]
    dev = run_microspeech_on_qemu(audio, cfg, machine="microbit")
    host = HostMicroFrontend(cfg)
    assert (dev.u16 == host.stream_u16(audio)).all()
    assert (dev.s8 == host.stream_s8(audio)).all()


def test_m0_build_is_integer_only(tmp_path: Path) -> None:
    """No floating-point helper (soft-float __aeabi_f*/__aeabi_d*) and no libm function is
    linked into the Cortex-M0 build: the front end is integer throughout."""
    import re
    import subprocess

    from tinydeploy.frontend.micro_config import MicroSpeechConfig
    from tinydeploy.testing.frontend_micro_target import TARGETS, build_micro_harness

    elf = build_micro_harness(MicroSpeechConfig(), TARGETS["microbit"], tmp_path)
    names = set(subprocess.run(["arm-none-eabi-nm", "--defined-only", "-j", str(elf)],
                               capture_output=True, text=True, check=True).stdout.split())
    assert "td_frontend_frame_u16" in names and "__aeabi_lmul" in names   # 64-bit products
    floats = sorted(n for n in names if re.fullmatch(r"__aeabi_[fd]\w+|__(add|mul|div|sub)[sd]f3"
                                                    r"|(cos|sin|log|log1p|pow|exp|sqrt|floor)f?",
                                                    n))
    assert floats == []
