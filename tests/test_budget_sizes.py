"""The RAM budget's sizes of C structs are the compiler's: each constant of `plan.budget` that
mirrors a struct of the firmware is checked against ``sizeof`` as arm-none-eabi-gcc lays it
out for a Cortex-M4F (a compile-time assertion; nothing runs, well under a second)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tinydeploy.plan import budget
from tinydeploy.resources import firmware_dir
from tinydeploy.toolchain import Core, core_flags

pytestmark = pytest.mark.target

# (budget constant, C type, the header that defines it)
STRUCTS = (
    ("LINK_STATE_BYTES", "td_link_t", "td_link.h"),
    ("KWS_DETECTOR_BYTES", "td_kws_detector_t", "td_kws_detect.h"),
)


def test_budget_struct_sizes_match_the_c_layout(tmp_path: Path) -> None:
    cc = shutil.which("arm-none-eabi-gcc")
    assert cc, "arm-none-eabi-gcc is needed (apt-get install gcc-arm-none-eabi)"
    fw = firmware_dir()
    src = tmp_path / "sizes.c"
    src.write_text("".join(f'#include "{h}"\n' for _, _, h in STRUCTS) + "".join(
        f'_Static_assert(sizeof({c}) == {getattr(budget, name)}u, '
        f'"plan/budget.py {name} = {getattr(budget, name)} is not sizeof({c})");\n'
        for name, c, _ in STRUCTS))
    proc = subprocess.run([cc, *core_flags(Core.CORTEX_M4F), "-std=c99", "-fsyntax-only",
                           f"-I{fw / 'link'}", f"-I{fw / 'platform'}",
                           f"-I{fw / 'app' / 'kws'}", str(src)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_sized_detector_matches_the_c_layout(tmp_path: Path) -> None:
    """The listening app sizes the detector's history to the model and the averaging
    (TD_KWS_MAX_AVG x TD_KWS_MAX_LABELS): `kws_detector_bytes` must follow."""
    cc = shutil.which("arm-none-eabi-gcc")
    assert cc, "arm-none-eabi-gcc is needed (apt-get install gcc-arm-none-eabi)"
    src = tmp_path / "det.c"
    want = budget.kws_detector_bytes(5, 12)
    src.write_text('#include "td_kws_detect.h"\n'
                   f'_Static_assert(sizeof(td_kws_detector_t) == {want}u, "sized detector");\n')
    proc = subprocess.run([cc, *core_flags(Core.CORTEX_M4F), "-std=c99", "-fsyntax-only",
                           "-DTD_KWS_MAX_AVG=5u", "-DTD_KWS_MAX_LABELS=12u",
                           f"-I{firmware_dir() / 'app' / 'kws'}", str(src)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
