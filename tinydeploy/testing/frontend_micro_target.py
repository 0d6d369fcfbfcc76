"""Run the micro-speech front end on an emulated Cortex-M (QEMU) to compare its bytes with the
host, and to count its instructions per frame.

The harness (``tinydeploy/testing/frontend_harness/fe_micro_semihost_main.c``) is bare metal,
streams the audio through semihosting a stride at a time (so a stream of any length fits the
16 KB of RAM of an nRF51 micro:bit) and depends on nothing but the front end, arm-none-eabi-gcc
and QEMU. It is compiled and linked as firmware is (one section per function, unused ones
dropped), so its image holds what a firmware's would. Under ``-icount shift=0`` SysTick ticks
are exact: instructions = ticks * 1e9 / clock.
"""

from __future__ import annotations

import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tinydeploy.errors import InputDataError, ToolchainError
from tinydeploy.frontend.hostlib import FIRMWARE_FRONTEND
from tinydeploy.frontend.micro import (
    CFLAGS,
    SOURCES,
    write_microspeech_header,
)
from tinydeploy.frontend.micro_config import MicroSpeechConfig
from tinydeploy.testing.semihost import HARNESS_DIR, need_tool, run_semihosted
from tinydeploy.toolchain import Core, core_flags, ldflags, ldlibs


@dataclass(frozen=True)
class MicroTarget:
    machine: str
    core: Core
    flash: tuple[int, int]        # origin, length
    ram: tuple[int, int]
    systick_hz: int               # SysTick clock under -icount shift=0


TARGETS = {
    "mps2-an386": MicroTarget("mps2-an386", Core.CORTEX_M4F, (0x0, 0x400000),
                              (0x20000000, 0x400000), 25_000_000),
    # nRF51822, Cortex-M0: no FPU, no hardware divide; 256 KB flash, 16 KB RAM
    "microbit": MicroTarget("microbit", Core.CORTEX_M0, (0x0, 0x40000), (0x20000000, 0x4000),
                            16_000_000),
}


@dataclass(frozen=True)
class DeviceFeatures:
    u16: np.ndarray               # [frames, channels] uint16
    s8: np.ndarray                # [frames, channels] int8
    instructions: np.ndarray      # [frames] instructions of each uint16 frame computation


def _linker_script(t: MicroTarget) -> str:
    return f"""/* front-end harness for QEMU {t.machine} */
MEMORY
{{
    FLASH (rx) : ORIGIN = {t.flash[0]:#x}, LENGTH = {t.flash[1]:#x}
    RAM (rwx)  : ORIGIN = {t.ram[0]:#x}, LENGTH = {t.ram[1]:#x}
}}
ENTRY(td_reset_handler)
SECTIONS
{{
    .text : {{ KEEP(*(.vectors)) *(.text*) *(.rodata*) . = ALIGN(4); }} > FLASH
    _sidata = LOADADDR(.data);
    .data : {{ . = ALIGN(4); _sdata = .; *(.data*) . = ALIGN(4); _edata = .; }} > RAM AT > FLASH
    .bss (NOLOAD) : {{ . = ALIGN(4); _sbss = .; *(.bss*) *(COMMON) . = ALIGN(4); _ebss = .; }} > RAM
    _estack = ORIGIN(RAM) + LENGTH(RAM);
}}
"""


def build_micro_harness(cfg: MicroSpeechConfig, target: MicroTarget, out_dir: Path) -> Path:
    need_tool("arm-none-eabi-gcc")
    write_microspeech_header(cfg, out_dir)
    (out_dir / "harness.ld").write_text(_linker_script(target))
    harness = HARNESS_DIR / "fe_micro_semihost_main.c"
    elf = out_dir / f"fe_micro_{target.machine}.elf"
    cmd = ["arm-none-eabi-gcc", *core_flags(target.core), *CFLAGS, "-ffreestanding",
           "-ffunction-sections", "-fdata-sections",
           f"-I{out_dir}", f"-I{FIRMWARE_FRONTEND}",
           *[str(FIRMWARE_FRONTEND / s) for s in SOURCES], str(harness),
           str(HARNESS_DIR / "td_semihost_start.c"),
           *ldflags(target.core, str(out_dir / "harness.ld")), *ldlibs(target.core),
           "-o", str(elf)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ToolchainError(f"building the micro-speech harness for {target.machine} failed:"
                             f"\n{proc.stderr.strip()}")
    return elf


def run_microspeech_on_qemu(audio: np.ndarray, cfg: MicroSpeechConfig | None = None,
                            machine: str = "mps2-an386",
                            timeout: float = 300.0) -> DeviceFeatures:
    """Features of one stream of int16 ``audio`` computed on the emulated board."""
    cfg = cfg or MicroSpeechConfig()
    if machine not in TARGETS:
        raise InputDataError(f"no micro-speech harness for machine '{machine}'",
                             hint=f"machines: {', '.join(TARGETS)}")
    need_tool("qemu-system-arm")
    target = TARGETS[machine]
    pcm = np.ascontiguousarray(audio, dtype="<i2").ravel()
    rec = np.dtype([("u16", "<u2", (cfg.channels,)), ("s8", "i1", (cfg.channels,)),
                    ("ticks", "<u4")], align=True)
    with tempfile.TemporaryDirectory(prefix="td-fe-micro-") as tmp:
        d = Path(tmp)
        elf = build_micro_harness(cfg, target, d)
        (d / "fe_in.bin").write_bytes(struct.pack("<i", pcm.size) + pcm.tobytes())
        run_semihosted(elf, machine, d, timeout, "micro-speech harness", f"{pcm.size} samples")
        out = np.frombuffer((d / "fe_out.bin").read_bytes(), dtype=rec)
    instr = out["ticks"].astype(np.int64) * 1_000_000_000 // target.systick_hz
    return DeviceFeatures(u16=out["u16"].copy(), s8=out["s8"].copy(), instructions=instr)
