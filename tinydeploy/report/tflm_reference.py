"""TensorFlow Lite Micro's figures for the DS-CNN keyword spotter on the emulated Cortex-M4:
the yardstick that the demo and the README compare tinydeploy's own measurements with.

Provenance (the one place these numbers are written in the code; ``docs/emulation.md``
describes the measurement): TFLM's interpreter built with arm-none-eabi-gcc 12.2.1 for QEMU
``mps2-an386`` (Cortex-M4F), the MLPerf Tiny DS-CNN reference architecture (Conv 10x4/2 x64,
4 x (DW 3x3 + 1x1 x64), average pool, FC 12, softmax; 49x10 input; 2.66 M MACs) in INT8,
instructions counted with SysTick under ``-icount shift=0`` (1 tick = 40 instructions), one
inference after start-up (model parsing and arena allocation cost another ~0.7 M).
These are recorded measurements, not something tinydeploy recomputes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TflmFigure:
    """One TFLM build's cost per inference of the DS-CNN on mps2-an386."""

    build: str
    instructions: int
    flash_bytes: int
    arena_bytes: int
    peak_stack_bytes: int


TFLM_DSCNN_M4: tuple[TflmFigure, ...] = (
    TflmFigure("reference kernels, -O2", 43_100_000, 99_428, 22_772, 768),
    TflmFigure("CMSIS-NN kernels, -O2", 7_700_000, 142_300, 22_820, 1_340),
    TflmFigure("CMSIS-NN kernels (int8 only), -Os", 9_220_000, 100_880, 22_820, 916),
)
TFLM_REFERENCE, TFLM_CMSIS_NN = TFLM_DSCNN_M4[0], TFLM_DSCNN_M4[1]


def mega(n: int) -> str:
    """Instructions in millions as the tables print them: 7.70 M, 43.1 M."""
    m = n / 1e6
    return f"{m:.2f} M" if m < 10 else f"{m:.1f} M"


@dataclass(frozen=True)
class TflmModelFigure:
    """TFLM + CMSIS-NN (int8-only op registrations, -O2) on mps2-an386 for one model shape:
    instructions per inference, flash of the application, arena, total RAM (arena + stack +
    static data). Provenance: docs/benchmarks.md."""

    model: str
    instructions: int
    flash_bytes: int
    arena_bytes: int
    ram_bytes: int


TFLM_CMSIS_NN_M4_MODELS: dict[str, TflmModelFigure] = {
    "dscnn": TflmModelFigure("MLPerf KWS DS-CNN", 7_697_160, 111_532, 22_820, 24_332),
    "micro_speech": TflmModelFigure("TFLM micro_speech", 1_495_440, 80_400, 6_836, 8_660),
    "ad01": TflmModelFigure("MLPerf AD01 autoencoder", 582_920, 312_468, 2_580, 4_148),
    "vww": TflmModelFigure("MLPerf VWW MobileNet-v1 0.25", 24_101_480, 390_884, 100_708,
                           102_220),
}
