"""`make demo`: the main job, end to end, as a newcomer should see it.

1. the committed INT8 DS-CNN keyword spotter (models/kws) and its RAM / flash budget on the
   nRF52840;
2. the kws firmware built for the nRF52840, run on the QEMU machine with the same core
   (Cortex-M4F, mps2-an386) and limited to the nRF52840's 256 KB RAM and 1 MB flash;
3. test audio (examples/kws/demo.wav: four keywords and one other word from synthetic speakers
   the model never heard) streamed over the firmware's serial port, detections shown live;
4. one inference checked byte for byte against TFLM's reference kernels, and its cost.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tinydeploy.cli import main as cli

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "kws" / "dscnn_int8.tflite"
AUDIO = ROOT / "examples" / "kws" / "demo.wav"
BOARD = "nrf52840"


def _step(n: int, text: str) -> None:
    from tinydeploy.report.output import stdout

    stdout.print(f"\n[bold cyan]── {n}. {text}[/]")


def main() -> int:
    from tinydeploy.report.output import stdout

    stdout.print("[bold]tinydeploy demo[/]: a DS-CNN keyword spotter on the nRF52840, run on "
                 "its emulated Cortex-M4 (QEMU mps2-an386) with the nRF52840's memory limits")
    _step(1, f"the model: tinydeploy inspect {MODEL.relative_to(ROOT)}")
    rc = cli(["inspect", str(MODEL)])
    _step(2, "the whole RAM / flash budget, planned on the host: tinydeploy plan --app kws")
    rc |= cli(["plan", str(MODEL), "--board", BOARD, "--app", "kws"])
    _step(3, "build, run on QEMU, stream test audio over the serial port: "
             "tinydeploy kws stream")
    stdout.print(f"{AUDIO.relative_to(ROOT)}: yes, (an unknown word), stop, left, go — "
                 "spoken by synthetic speakers the model never heard")
    rc |= cli(["kws", "stream", str(AUDIO), "--board", BOARD, "--emulate",
               "-o", str(ROOT / "build" / "demo-kws")])
    _step(4, "bit-exact with TFLM's reference kernels, and the cost per inference: "
             "tinydeploy validate / bench")
    rc |= cli(["validate", str(MODEL), "--board", BOARD, "--emulate", "--random", "4",
               "-o", str(ROOT / "build" / "demo-validate")])
    rc |= cli(["bench", str(MODEL), "--board", BOARD, "--emulate",
               "-o", str(ROOT / "build" / "demo-bench")])
    stdout.print("\n[bold]done.[/] For comparison on the same emulated Cortex-M4, TFLM needs "
                 "7.70 M instructions per inference of this architecture with CMSIS-NN "
                 "kernels and 43.1 M with its reference kernels, and a 22,820-byte arena.")
    return rc


if __name__ == "__main__":
    sys.exit(main())
