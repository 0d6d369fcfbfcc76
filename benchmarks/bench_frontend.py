"""Instructions per frame of every front-end preset on an emulated Cortex-M, and whether the
device's int8 features are the host library's bytes.

Each preset's own bare-metal harness (``tinydeploy/testing/frontend_target.py`` for the float
presets, ``frontend_micro_target.py`` for micro-speech) runs on QEMU (default ``mps2-an386``,
a Cortex-M4F) under ``-icount shift=0``, where SysTick ticks are exact instruction counts.
The float presets are timed over ``td_frontend_clip_s8`` of whole 1-second clips (divided by
the frames of a clip), micro-speech over each streamed frame; tinydeploy with the shipped
``models/kws/frontend.json``, the other presets with their defaults. The audio is the first
seconds of ``examples/kws/demo.wav`` (real-time: the counts hardly depend on it). Counts
are deterministic: this script prints, it does not assert.

    .venv/bin/python -m benchmarks.bench_frontend [--seconds 3] [--machine mps2-an386] [--json]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from tinydeploy.frontend.config import FrontendConfig
from tinydeploy.frontend.native import Quant
from tinydeploy.frontend.presets import FrontendPreset, available_presets, preset_spec
from tinydeploy.kws.wav import read_wav
from tinydeploy.resources import models_dir

ROOT = Path(__file__).resolve().parent.parent   # the clone: benchmarks do not ship
DEMO = ROOT / "examples" / "kws" / "demo.wav"
QUANT = Quant(0.1, 0)


@dataclass(frozen=True)
class PresetCost:
    preset: str
    machine: str
    frames: int                  # frames timed
    per_frame_mean: float        # instructions
    per_frame_min: float
    per_frame_max: float
    host_equal: bool             # the device's int8 bytes are the host library's


def measure(preset: str, audio: np.ndarray, machine: str) -> PresetCost | None:
    """The preset's per-frame instructions on ``machine`` (None when its harness has no
    target for that machine)."""
    spec = preset_spec(preset)
    shipped = models_dir() / "kws" / "frontend.json"
    cfg = (FrontendConfig.load(shipped) if preset == FrontendPreset.TINYDEPLOY.value
           else spec.default())
    host = spec.host(cfg)
    if preset == FrontendPreset.MICRO_SPEECH.value:
        from tinydeploy.testing.frontend_micro_target import TARGETS, run_microspeech_on_qemu
        if machine not in TARGETS:
            return None
        dev = run_microspeech_on_qemu(audio, cfg, machine)
        per = dev.instructions.astype(np.float64)
        equal = bool(np.array_equal(dev.s8, host.stream_s8(audio, QUANT)))
    else:
        from tinydeploy.testing.frontend_target import TARGETS as FLOAT_TARGETS
        from tinydeploy.testing.frontend_target import run_frontend_on_qemu_timed
        if machine not in FLOAT_TARGETS:
            return None
        clips = audio[:audio.size // cfg.clip_samples * cfg.clip_samples]
        clips = clips.reshape(-1, cfg.clip_samples)
        _, q, ticks = run_frontend_on_qemu_timed(clips, QUANT, cfg, machine)
        per = ticks.astype(np.float64) / cfg.frames
        equal = bool(np.array_equal(q, host.features_s8(clips, QUANT)))
    return PresetCost(preset, machine, int(per.size if preset == "micro-speech"
                                           else per.size * cfg.frames),
                      float(per.mean()), float(per.min()), float(per.max()), equal)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=int, default=3, help="audio from demo.wav (default 3)")
    ap.add_argument("--machine", default="mps2-an386",
                    help="QEMU machine (mps2-an386: M4F; mps2-an385: M3; mps2-an385-m0, "
                         "microbit: M0)")
    ap.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    args = ap.parse_args(argv)
    audio = read_wav(DEMO)[:16000 * max(1, args.seconds)]
    rows = [r for p in available_presets() if (r := measure(p, audio, args.machine))]
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=2))
        return 0
    print(f"{'preset':<14} {'instructions / frame':>21} {'min':>9} {'max':>9} {'frames':>7}"
          f"  device = host")
    for r in rows:
        print(f"{r.preset:<14} {r.per_frame_mean:>21,.0f} {r.per_frame_min:>9,.0f} "
              f"{r.per_frame_max:>9,.0f} {r.frames:>7}  {'yes' if r.host_equal else 'NO'}")
    print(f"(QEMU {args.machine}, -icount shift=0, SysTick; tinydeploy: the shipped "
          f"models/kws/frontend.json, the others their defaults; {args.seconds} s of "
          f"{DEMO.name})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
