"""Run the C front end on an emulated Cortex-M (QEMU mps2) to compare its bytes with the host.

The harness (``tinydeploy/testing/frontend_harness/``) is bare metal and exchanges files through
semihosting, so it depends on nothing but the front end, arm-none-eabi-gcc and QEMU.
"""

from __future__ import annotations

import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tinydeploy.errors import ToolchainError
from tinydeploy.frontend.config import FrontendConfig
from tinydeploy.frontend.hostlib import FIRMWARE_FRONTEND
from tinydeploy.frontend.native import (
    DETERMINISTIC_CFLAGS,
    Quant,
)
from tinydeploy.frontend.presets import PresetSpec, choice_of
from tinydeploy.testing.semihost import HARNESS_DIR, need_tool, run_semihosted
from tinydeploy.toolchain import Core, core_flags, ldflags, ldlibs


@dataclass(frozen=True)
class QemuTarget:
    machine: str
    core: Core

    @property
    def cflags(self) -> tuple[str, ...]:
        return core_flags(self.core)


# M4F with its FPU (hard float) and M3 without one (soft float through libgcc).
TARGETS = {
    "mps2-an386": QemuTarget("mps2-an386", Core.CORTEX_M4F),
    "mps2-an385": QemuTarget("mps2-an385", Core.CORTEX_M3),
    # an ARMv6-M binary (no FPU, no divider: libgcc soft float) executes the same instructions
    # on the M3 machine: its instruction count is the Cortex-M0's
    "mps2-an385-m0": QemuTarget("mps2-an385", Core.CORTEX_M0),
}
SYSTICK_HZ = 25_000_000      # mps2 machines' processor clock as QEMU models it


def _spec_of(cfg: Any) -> PresetSpec:
    return choice_of(cfg).spec


def build_frontend_harness(cfg: Any, target: QemuTarget, out_dir: Path) -> Path:
    """The harness for any float preset's config (it calls td_frontend_clip_f32 and
    td_frontend_clip_s8)."""
    need_tool("arm-none-eabi-gcc")
    spec = _spec_of(cfg)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "td_frontend_config.h").write_text(spec.render_header(cfg))
    elf = out_dir / f"fe_{target.machine}.elf"
    cmd = ["arm-none-eabi-gcc", *target.cflags, *DETERMINISTIC_CFLAGS, "-ffreestanding",
           f"-I{out_dir}", f"-I{FIRMWARE_FRONTEND}",
           *[str(FIRMWARE_FRONTEND / s) for s in spec.sources if s.endswith(".c")],
           str(HARNESS_DIR / "fe_semihost_main.c"), str(HARNESS_DIR / "td_semihost_start.c"),
           *ldflags(target.core, str(HARNESS_DIR / "fe_semihost.ld")),
           *ldlibs(target.core), "-o", str(elf)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ToolchainError(f"building the front-end harness for {target.machine} failed:\n"
                             f"{proc.stderr.strip()}")
    return elf


def run_frontend_on_qemu(clips: np.ndarray, quant: Quant, cfg: Any = None,
                         machine: str = "mps2-an386",
                         timeout: float = 120.0) -> tuple[np.ndarray, np.ndarray]:
    f, q, _ = run_frontend_on_qemu_timed(clips, quant, cfg, machine, timeout)
    return f, q


def run_frontend_on_qemu_timed(clips: np.ndarray, quant: Quant, cfg: Any = None,
                               machine: str = "mps2-an386", timeout: float = 120.0
                               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features of ``clips`` [n, clip_samples] int16 computed on the emulated board:
    (float32 [n, frames, n_out], int8 [n, frames, n_out]), plus the instructions
    ``td_frontend_clip_s8`` took per clip (SysTick under -icount shift=0, 40 instructions a
    tick on mps2)."""
    cfg = cfg or FrontendConfig()
    need_tool("qemu-system-arm")
    target = TARGETS[machine]
    machine = target.machine
    clips = np.ascontiguousarray(clips, dtype=np.int16).reshape(-1, cfg.clip_samples)
    n = clips.shape[0]
    with tempfile.TemporaryDirectory(prefix="td-fe-") as tmp:
        d = Path(tmp)
        elf = build_frontend_harness(cfg, target, d)
        (d / "fe_in.bin").write_bytes(struct.pack("<ifi", n, quant.scale, quant.zero_point)
                                      + clips.astype("<i2").tobytes())
        run_semihosted(elf, machine, d, timeout, "front-end harness", f"{n} clips")
        raw = (d / "fe_out.bin").read_bytes()
        ticks = np.frombuffer((d / "fe_ticks.bin").read_bytes(), dtype="<u4").astype(np.int64)
    per = cfg.frames * cfg.n_out
    rec = np.frombuffer(raw, dtype=np.uint8).reshape(n, per * 5)
    f = rec[:, :per * 4].copy().view("<f4").reshape(n, *cfg.shape)
    q = rec[:, per * 4:].copy().view(np.int8).reshape(n, *cfg.shape)
    return f, q, ticks * (1_000_000_000 // SYSTICK_HZ)
