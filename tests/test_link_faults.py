"""The serial link under faults: a flaky cable (tests/faultproxy.py) between the host and the
emulated board's pty, and board resets in the middle of an exchange.

Every inference either comes back equal, byte for byte, to the tflite-micro reference, or
fails with a LinkError saying what was lost; never a wrong number, never a hang (each case is
bounded by the session's timeouts and retries). The figures (faults injected, results
correct, results lost, retries) are printed with ``-s``.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from faultproxy import FaultProxy, Faults

from tinydeploy.boards import get_board
from tinydeploy.build.firmware import build_firmware
from tinydeploy.errors import LinkError
from tinydeploy.flash import Firmware, runner_for
from tinydeploy.link.session import Session, open_port
from tinydeploy.link.validate import random_inputs
from tinydeploy.model.loader import load_tflite
from tinydeploy.oracle import Oracle

FIX = Path(__file__).parent / "fixtures"
MODEL = FIX / "dscnn_small.tflite"      # a 490-byte input: three LOAD_INPUT chunks
BOARD = "mps2-an386"
CASES = 8

pytestmark = pytest.mark.target


@pytest.fixture(scope="module")
def firmware(tmp_path_factory: pytest.TempPathFactory) -> Firmware:
    d = tmp_path_factory.mktemp("faults")
    build_firmware(MODEL, get_board(BOARD), "validate", d)
    return Firmware.from_build_dir(d)


def _run_cases(session: Session, n: int, seed: int) -> tuple[int, list[str], int]:
    """(correct, lost messages, wrong) over ``n`` random cases (extremes first)."""
    graph = load_tflite(MODEL)
    oracle = Oracle(MODEL.read_bytes())
    correct, lost, wrong = 0, [], 0
    n_ops = len(graph.operators)
    for case in random_inputs(graph, n, seed=seed):
        want = oracle.run(case)
        try:
            got, res = session.run(case, profile=True)
            assert len(res.per_op) == n_ops, res.per_op   # a complete profile, or none
        except LinkError as e:
            lost.append(e.message)
            session.resync()
            continue
        same = len(got) == len(want) and all(
            np.array_equal(np.asarray(g).reshape(-1), np.asarray(w).reshape(-1))
            for g, w in zip(got, want, strict=False))
        correct += same
        wrong += not same

    return correct, lost, wrong


RATES = {
    "clean": Faults(),
    "drop": Faults(drop=0.002),
    "duplicate": Faults(duplicate=0.002),
    "flip": Faults(flip=0.002),
    "delay": Faults(delay=0.05, delay_s=0.05),
    "all": Faults(drop=0.001, duplicate=0.001, flip=0.001, delay=0.02, delay_s=0.05),
}


# the default run: no faults and bit flips; --sweep adds delays, drops, duplicates and all
DEFAULT = {"clean", "flip"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in DEFAULT else
                                               (pytest.mark.slow,)) for n in RATES])
def test_validate_through_a_flaky_cable(name: str, firmware: Firmware) -> None:
    faults = RATES[name]
    t0 = time.monotonic()
    with runner_for(firmware.board).start(firmware, timeout=240) as dev:
        ser = dev.open(timeout=0.02)
        with FaultProxy(ser, faults, seed=11) as proxy:
            host = open_port(proxy.port, firmware.board.uart.baud, 0.05)
            try:
                session = Session(host, timeout=1.5, retries=4)
                session.hello()
                correct, lost, wrong = _run_cases(session, CASES, seed=5)
                stats = session.stats
            finally:
                host.close()
        ser.close()
    took = time.monotonic() - t0
    print(f"\n{name}: faults {dict(proxy.counts)}; {correct}/{CASES} correct, {len(lost)} lost, "
          f"{wrong} wrong; {stats.retries} retries, {stats.bad_frames} bad frames; {took:.1f} s")
    assert wrong == 0, "a wrong number came back"
    assert correct + len(lost) == CASES
    for m in lost:
        assert "INVOKE" in m or "LOAD_INPUT" in m or "HELLO" in m, m   # names what was lost
    if name == "clean":
        assert correct == CASES and not proxy.counts
    else:
        assert sum(proxy.counts.values()) > 0, "no fault was injected"
        assert correct >= CASES // 2, lost


def test_board_reset_in_the_middle_of_loading_inputs(firmware: Firmware) -> None:
    """A reset after the first LOAD_INPUT chunk of each case: the device refuses the INVOKE
    (its input is half lost), the host loads the inputs again and gets the right result."""
    resets = 0
    with runner_for(firmware.board).start(firmware, timeout=240) as dev:
        ser = dev.open(timeout=0.02)
        state = {"chunks": 0}

        class ResettingPort:
            """The device's port, resetting the board after each case's first chunk."""

            def __init__(self) -> None:
                self.timeout = ser.timeout

            def read(self, size: int = 1) -> bytes:
                return ser.read(size)

            def write(self, data: bytes) -> int | None:
                nonlocal resets
                n = ser.write(data)
                ser.flush()
                state["chunks"] += 1
                if state["chunks"] == 2:          # HELLO is 1, the first LOAD_INPUT 2
                    time.sleep(0.3)               # the ACK is on its way
                    dev._qmp({"execute": "system_reset"})  # type: ignore[attr-defined]
                    resets += 1
                return n

            def flush(self) -> None:
                ser.flush()

            @property
            def in_waiting(self) -> int:
                return int(ser.in_waiting)

        port = ResettingPort()
        session = Session(port, timeout=2.0, retries=4)
        session.hello()
        correct, lost, wrong = _run_cases(session, 2, seed=9)
        ser.close()
    print(f"\nreset: {resets} reset(s); {correct}/2 correct, {len(lost)} lost, {wrong} wrong; "
          f"{session.stats.retries} retries")
    assert resets == 1
    assert wrong == 0
    assert correct == 2, lost


def test_bench_through_a_flaky_cable(tmp_path: Path) -> None:
    """BENCH under bit flips: every result has the same counts (and per-op profile, when the
    app sends one) as on a clean link (within the one SysTick tick a count may vary), or is a clear
    LinkError; a damaged PROFILE frame reruns the BENCH instead of shifting counts."""
    mlp = FIX / "mlp.tflite"
    build_firmware(mlp, get_board(BOARD), "bench", tmp_path / "b",
                   cflags_extra=("-DTD_BENCH_RUNS=1u",))
    fw = Firmware.from_build_dir(tmp_path / "b")
    tick = 1
    with runner_for(fw.board).start(fw, timeout=240) as dev:
        ser = dev.open(timeout=0.02)
        with FaultProxy(ser, Faults(), seed=3) as proxy:
            host = open_port(proxy.port, fw.board.uart.baud, 0.05)
            try:
                session = Session(host, timeout=1.5, retries=4)
                n_ops = session.hello().info.num_ops
                clean = session.bench(3)
                proxy.faults = Faults(flip=0.01)
                results, lost = [], []
                for _ in range(6):
                    try:
                        results.append(session.bench(3))
                    except LinkError as e:
                        lost.append(e.message)
                        session.resync()
            finally:
                host.close()
        ser.close()
    print(f"\nbench: faults {dict(proxy.counts)}; {len(results)}/6 complete, {len(lost)} lost; "
          f"{session.stats.retries} retries, {session.stats.bad_frames} bad frames")
    assert len(clean.per_op) == n_ops
    assert sum(proxy.counts.values()) > 0
    for r in results:
        assert len(r.per_op) == len(clean.per_op) and r.done.runs == 3
        assert all(abs(a - b) <= tick for a, b in zip(r.per_op, clean.per_op, strict=True)), (
            r.per_op, clean.per_op)
        assert abs(r.done.min - clean.done.min) <= tick and abs(r.done.max - clean.done.max) <= tick
    for m in lost:
        assert "BENCH" in m, m
    assert len(results) >= 3, lost
