"""Run a streamed model's step function on the host, step after step, from a C driver.

The driver links the generated project's model and kernel sources (under ASan/UBSan), reads
``hop`` frames per step from stdin, calls td_model_step() and writes td_model_output(0) per
step to stdout. It can flip the bits of arena bytes before one step (``corrupt``), so that
a test can show that a state row matters for later steps.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np

from tinydeploy.errors import ToolchainError

DRIVER = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "model.h"

uint32_t td_cycles_now(void) { return 0u; }

int main(int argc, char **argv)
{
    long corrupt_step = argc > 1 ? atol(argv[1]) : -1;
    long corrupt_off = argc > 2 ? atol(argv[2]) : 0;   /* from the step input */
    long corrupt_len = argc > 3 ? atol(argv[3]) : 0;
    long k = 0;
    td_model_reset();
    while (fread(td_model_step_input(), 1, TD_MODEL_STEP_INPUT_BYTES, stdin)
           == TD_MODEL_STEP_INPUT_BYTES) {
        if (k == corrupt_step) {
            uint8_t *p = (uint8_t *)td_model_step_input() + corrupt_off;
            for (long i = 0; i < corrupt_len; ++i) {
                p[i] ^= 0x5a;
            }
        }
        td_model_step();
        fwrite(td_model_output(0), 1, TD_MODEL_OUTPUT_BYTES, stdout);
        ++k;
    }
    return 0;
}
"""


def compile_stream_driver(project_dir: Path, out: Path) -> Path:
    """Compile the driver against ``project_dir`` (a host-board project rendered with
    --streaming); returns the executable."""
    cc = shutil.which("cc")
    if cc is None:
        raise ToolchainError("'cc' was not found on PATH")
    src = Path(project_dir) / "src"
    out.mkdir(parents=True, exist_ok=True)
    (out / "driver.c").write_text(DRIVER, encoding="utf-8")
    sources = sorted(str(p) for p in (src / "model").glob("*.c"))
    sources += sorted(str(p) for p in (src / "kernels").rglob("*.c"))
    incs = sorted({str(p.parent) for p in src.rglob("*.h")
                   if "model" in p.parts or "kernels" in p.parts or "platform" in p.parts})
    exe = out / "stream_driver"
    cmd = [cc, "-std=c99", "-O1", "-g", "-fsanitize=address,undefined",
           "-fno-sanitize-recover=all", *(f"-I{i}" for i in incs), str(out / "driver.c"),
           *sources, "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise ToolchainError(f"compiling the stream driver failed:\n{r.stderr[-3000:]}")
    return exe


def run_stream_driver(exe: Path, frames: np.ndarray, hop: int, out_bytes: int,
                      corrupt: tuple[int, int, int] | None = None) -> np.ndarray:
    """Outputs per step (steps x out_bytes, int8) for ``frames`` (whole steps of ``hop``).
    ``corrupt`` = (step, offset from the step input in bytes, length)."""
    steps = len(frames) // hop
    data = np.ascontiguousarray(frames[:steps * hop]).tobytes()
    args = [str(exe)] + ([str(v) for v in corrupt] if corrupt else [])
    r = subprocess.run(args, input=data, capture_output=True, timeout=300)
    if r.returncode != 0:
        raise ToolchainError(f"stream driver failed ({r.returncode}):\n"
                             f"{r.stderr.decode(errors='replace')[-3000:]}")
    return np.frombuffer(r.stdout, dtype=np.int8).reshape(steps, out_bytes)
