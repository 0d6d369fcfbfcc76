"""One number, one unit: a device's counts read the same in every command.

The firmware counts SysTick ticks and says "cycles"; under QEMU (``-icount shift=0``) one
tick is clock / 1 GHz instructions' worth, so the host converts. `run`, `flash --monitor`,
`validate` and `bench` must print the same figure in the same unit for the same inference.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from clirun import run_cli

from tinydeploy.boards import get_board
from tinydeploy.link.messages import Done, Info, Profile
from tinydeploy.link.units import host_count, message_converter, milliseconds

FIX = Path(__file__).parent / "fixtures"


def test_qemu_counts_become_instructions_and_hardware_counts_stay_cycles() -> None:
    mps2 = get_board("mps2-an386")            # 25 MHz: 40 instructions per tick
    conv = message_converter(mps2)
    assert conv is not None
    done = conv(Done(2, 5, 75054, 75060, 5 * 75055, "cycles", 100, 200))
    assert isinstance(done, Done)
    assert (done.min, done.max, done.total, done.unit) == (
        75054 * 1_000_000_000 // mps2.clock_hz, 75060 * 40, 5 * 75055 * 40, "instructions")
    assert (done.stack_peak, done.stack_size) == (100, 200)
    prof = conv(Profile("cycles", 0, 2, (10, 20)))
    assert isinstance(prof, Profile) and prof.counts == (400, 800)
    assert prof.unit == "instructions"
    info = conv(Info(2, 1, 1, 100, 3, "ab", "mps2-an386", "cycles", "bench"))
    assert isinstance(info, Info) and info.unit == "instructions"
    assert conv(done) == done                 # converting twice changes nothing
    assert host_count(75054, "cycles", mps2) == (3002160.0, "instructions")
    real = get_board("nucleo-f401re")
    assert message_converter(real) is None
    assert host_count(1000, "cycles", real) == (1000, "cycles")
    ms = milliseconds(3002160, "instructions", mps2)
    assert ms is not None and abs(ms - 120.0864) < 1e-9


_cli = run_cli


@pytest.mark.target
@pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="needs qemu-system-arm")
def test_run_validate_and_bench_say_the_same_figure_in_the_same_unit(tmp_path: Path) -> None:
    model = FIX / "mlp.tflite"
    rc, out, err = _cli("bench", str(model), "--board", "mps2-an386", "--runs", "2", "--json",
                        "-o", str(tmp_path / "b"))
    assert rc == 0, err
    bench = json.loads(out)
    assert bench["unit"] == "instructions"
    assert bench["per_inference"] == bench["instructions_per_inference"] > 1000
    assert bench["ms_per_inference"] == pytest.approx(bench["per_inference"] / 25e3, rel=1e-3)
    rc, out, err = _cli("run", str(model), "--board", "mps2-an386", "--app", "bench",
                        "--json", "--timeout", "8", "-o", str(tmp_path / "r"))
    assert rc == 0, err
    frames = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    dones = [f for f in frames if f.get("type") == "DONE"]
    assert dones, out
    assert all(d["unit"] == "instructions" for d in dones), dones
    # the run app times 5 inferences at start-up, bench 2: the same inference, the same count
    # within one SysTick tick (40 instructions on mps2: the tick's phase moves with what ran
    # before, docs/protocol.md)
    assert abs(dones[0]["min"] - bench["min"]) <= 40, (dones[0], bench)
    rc, out, err = _cli("validate", str(model), "--board", "mps2-an386", "--random", "1",
                        "--json", "-o", str(tmp_path / "v"))
    assert rc == 0, err
    assert json.loads(out)["unit"] == "instructions"


def test_monitor_learns_the_unit_from_the_device_info() -> None:
    """`monitor --port` knows no board: the INFO frame names it, and an emulated board's
    DONE frames after it read in instructions."""
    from tinydeploy.link.frame import encode_frame
    from tinydeploy.link.monitor import Monitor

    frames = [Info(2, 1, 1, 100, 3, "ab", "mps2-an386", "cycles", "bench"),
              Done(2, 1, 10, 10, 10, "cycles", 0, 0)]
    data = b"".join(b"\x00" + encode_frame(int(m.TYPE), 1, m.pack()) for m in frames)
    seen: list[object] = []

    class Sink:
        def message(self, t: float, msg: object, seq: int) -> None:
            seen.append(msg)

        def bad(self, t: float, bad: object) -> None:
            raise AssertionError(bad)

        def status(self, t: float, text: str) -> None:
            pass

    mon = Monitor(lambda: None, Sink(), learn_units=True)
    mon._feed(data)
    done = seen[-1]
    assert isinstance(done, Done) and (done.min, done.unit) == (400, "instructions")
