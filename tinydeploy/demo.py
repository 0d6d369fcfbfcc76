"""`make demo`: the main job, end to end, as a newcomer should see it.

1. the committed INT8 DS-CNN keyword spotter that listens (models/kws-stream: trained without
   padding along time, so that it streams exactly) and its RAM / flash budget on the nRF52840;
2. the listening kws firmware built for the nRF52840, with a schedule chosen on the host to
   keep up with its 64 MHz clock, run on the QEMU machine with the same core (Cortex-M4F,
   mps2-an386) paced at 64 MHz and limited to the nRF52840's 256 KB RAM and 1 MB flash;
3. test audio (examples/kws/demo.wav: four keywords and one other word from synthetic speakers
   the model never heard) heard through the virtual microphone, detections streamed back over
   serial as they happen, overruns and duty cycle reported;
4. the MLPerf Tiny-shaped DS-CNN (models/kws) checked byte for byte against TFLM's reference
   kernels, and its cost beside TFLM's on the same core; the listening model's cost per
   streamed step.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tinydeploy.cli import main as cli
from tinydeploy.report.tflm_reference import TFLM_CMSIS_NN, TFLM_REFERENCE, mega
from tinydeploy.resources import data_root, examples_dir, models_dir

MODEL = models_dir() / "kws" / "dscnn_int8.tflite"               # MLPerf Tiny's shape
LISTEN = models_dir() / "kws-stream" / "dscnn_stream_int8.tflite"   # what listens
AUDIO = examples_dir() / "kws" / "demo.wav"
OUT = Path("build")   # beside the user's work, like every command's default output
BOARD = "nrf52840"


def _step(n: int, text: str) -> None:
    from tinydeploy.report.output import stdout

    stdout.print(f"\n[bold cyan]── {n}. {text}[/]")


def main() -> int:
    from tinydeploy.report.output import stdout

    stdout.print("[bold]tinydeploy demo[/]: a DS-CNN keyword spotter on the nRF52840, run on "
                 "its emulated Cortex-M4 (QEMU mps2-an386) with the nRF52840's memory limits")
    _step(1, f"the model that listens: tinydeploy inspect {LISTEN.relative_to(data_root())}")
    rc = cli(["inspect", str(LISTEN)])
    _step(2, "the whole RAM / flash budget of the listening app and its real-time schedule, "
             "planned on the host: tinydeploy plan --app kws")
    rc |= cli(["plan", str(LISTEN), "--board", BOARD, "--app", "kws", "--streaming"])
    _step(3, "build, run on QEMU at the nRF52840's clock, let it listen through its (virtual) "
             "microphone: tinydeploy kws listen")
    stdout.print(f"{AUDIO.relative_to(data_root())}: yes, (an unknown word), stop, left, go — "
                 "spoken by synthetic speakers the model never heard")
    rc |= cli(["kws", "listen", "--board", BOARD, "--emulate", "--wav", str(AUDIO),
               "-o", str(OUT / "demo-kws")])
    _step(4, "MLPerf Tiny's DS-CNN shape (models/kws) bit-exact with TFLM's reference kernels, "
             "its cost per inference, and the listening model's per streamed step: "
             "tinydeploy validate / bench")
    rc |= cli(["validate", str(MODEL), "--board", BOARD, "--emulate", "--random", "4",
               "-o", str(OUT / "demo-validate")])
    rc |= cli(["bench", str(MODEL), "--board", BOARD, "--emulate",
               "-o", str(OUT / "demo-bench")])
    rc |= cli(["bench", str(LISTEN), "--board", BOARD, "--emulate", "--streaming",
               "-o", str(OUT / "demo-bench-streamed")])
    stdout.print("\n[bold]done.[/] For comparison on the same emulated Cortex-M4, TFLM needs "
                 f"{mega(TFLM_CMSIS_NN.instructions)} instructions per inference of this "
                 f"architecture with CMSIS-NN kernels and {mega(TFLM_REFERENCE.instructions)} "
                 f"with its reference kernels, and a {TFLM_CMSIS_NN.arena_bytes:,}-byte arena "
                 "(docs/emulation.md says how they were measured).")
    return rc


if __name__ == "__main__":
    sys.exit(main())
