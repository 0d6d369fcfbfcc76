"""End to end over a real pseudo-terminal: the stub-model firmware on the host process and on
the QEMU boards, driven through pyserial by the host session; garbage never breaks it; the
flash and monitor commands."""

from __future__ import annotations

import json
import random
import struct
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.boards import get_board
from tinydeploy.cli import main as cli_main
from tinydeploy.errors import LinkError
from tinydeploy.flash import Firmware, runner_for
from tinydeploy.link import cobs
from tinydeploy.link.crc import crc16
from tinydeploy.link.frame import MAX_ENCODED, BadFrame, Frame, FrameDecoder, parse_block
from tinydeploy.link.messages import Ack, Error, ErrorCode, Log, LogLevel, MsgType, decode_message
from tinydeploy.link.session import Session
from tinydeploy.resources import firmware_dir

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "stub_model"))
from stubfw import STUB_SHA256, build_stub, expected_outputs, random_input  # noqa: E402

QEMU_BOARDS = ["mps2-an386", "netduinoplus2", "microbit-v1", "mps2-an500", "mps3-an547"]


@pytest.fixture(scope="module")
def fw_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fw")


def _firmware(fw_dir: Path, board_id: str, app: str = "validate") -> Firmware:
    out = fw_dir / f"{board_id}-{app}"
    if (out / "firmware.elf").exists():
        return Firmware.from_elf(out / "firmware.elf", get_board(board_id))
    return build_stub(board_id, app, out, sanitize=board_id == "host")


def _check_session(s: Session, board_id: str, seeds: tuple[int, ...]) -> None:
    dev = s.hello()
    assert dev.info.board == board_id
    assert dev.info.model_sha256 == STUB_SHA256
    assert dev.info.app == "validate" and dev.info.num_ops == 3
    assert [d.shape for d in dev.inputs] == [(1, 300)]
    assert [d.shape for d in dev.outputs] == [(1, 300), (1, 1)]
    assert dev.inputs[0].scale == 0.5 and dev.inputs[0].zero_point == -3
    for seed in seeds:
        x = random_input(seed)
        outs, res = s.run([x])
        want0, want1 = expected_outputs(x)
        assert np.array_equal(outs[0], want0), f"seed {seed}: output 0 differs"
        assert np.array_equal(outs[1], want1), f"seed {seed}: output 1 differs"
        assert len(res.per_op) == 3 and res.per_op[2] == 0
        assert res.per_op[0] > 0 and res.per_op[1] > 0
        assert res.done.runs == 1 and res.done.total >= res.per_op[0] + res.per_op[1]
    assert s.ping(b"\x00\xffping") == b"\x00\xffping"
    assert s.stats.bad_frames == 0


@pytest.mark.target
@pytest.mark.parametrize("board_id", ["host", *QEMU_BOARDS])
def test_validate_firmware_over_pty(board_id: str, fw_dir: Path) -> None:
    fw = _firmware(fw_dir, board_id)
    with runner_for(fw.board).start(fw, timeout=60) as dev:
        ser = dev.open()
        try:
            s = Session(ser, timeout=10)
            _check_session(s, board_id, seeds=(1, 2))
            # the ready message sent at start-up was not lost (device started paused)
            assert any(isinstance(m, Log) and m.text == "validate ready"
                       for m in s.unsolicited)
            unit = s.device.info.unit if s.device else ""
            assert unit == ("ns" if board_id == "host" else "cycles")
            s.stop()
            assert dev.wait(10) == 0, dev.log  # semihosting exit status / process status
        finally:
            ser.close()


@pytest.mark.target
def test_qemu_counts_are_deterministic(fw_dir: Path) -> None:
    """Under -icount shift=0 SysTick counts are instructions x clock / 1 GHz: the same work
    gives the same count to within one tick (the phase of the tick at the start depends on
    how long the firmware idled waiting for the host, which is real time)."""
    fw = _firmware(fw_dir, "mps2-an386")
    x = random_input(3)
    totals = []
    for _ in range(2):
        with runner_for(fw.board).start(fw, timeout=60) as dev:
            ser = dev.open()
            try:
                s = Session(ser, timeout=10)
                _, res = s.run([x])
                totals.append((res.done.total, res.per_op))
            finally:
                ser.close()
    (t0, ops0), (t1, ops1) = totals
    assert abs(t0 - t1) <= 1
    assert all(abs(a - b) <= 1 for a, b in zip(ops0, ops1, strict=True))
    assert t0 > 0


def _garbage_items(rng: random.Random, n: int) -> list[bytes]:
    """n delimited items: random, truncated, corrupted, oversized, unknown-type and
    wrong-length frames, each ending in 0x00, none of them a valid known request."""
    items: list[bytes] = []
    while len(items) < n:
        kind = rng.randrange(7)
        payload = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 60)))
        body = struct.pack("<BBH", rng.choice([1, 2, 3, 6]), rng.randrange(1, 256),
                           len(payload)) + payload
        body += struct.pack("<H", crc16(body))
        if kind == 0:    # random bytes, may hold zeros (several blocks)
            item = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80))) + b"\x00"
        elif kind == 1:  # truncated encoded frame
            enc = cobs.encode(body)
            item = enc[:rng.randrange(1, len(enc))] + b"\x00"
        elif kind == 2:  # one bit flipped in the body
            b = bytearray(body)
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
            item = cobs.encode(bytes(b)) + b"\x00"
        elif kind == 3:  # oversized block
            item = bytes(rng.randrange(1, 256) for _ in range(MAX_ENCODED + rng.randrange(1, 90)))
            item += b"\x00"
        elif kind == 4:  # valid frame of an unknown type
            t = rng.choice([0x00, 0x08, 0x3F, 0x80, 0x88, 0xC0, 0xFF])
            p = payload[:20]
            raw = struct.pack("<BBH", t, rng.randrange(1, 256), len(p)) + p
            item = cobs.encode(raw + struct.pack("<H", crc16(raw))) + b"\x00"
        elif kind == 5:  # length field lies, CRC right
            raw = bytearray(body[:-2])
            raw[2] = (raw[2] + rng.randrange(1, 9)) & 0xFF
            item = cobs.encode(bytes(raw) + struct.pack("<H", crc16(bytes(raw)))) + b"\x00"
        else:            # bad COBS: a code byte pointing past the end
            item = bytes([rng.randrange(20, 255)]) + bytes(rng.randrange(1, 256)
                                                           for _ in range(rng.randrange(0, 10)))
            item += b"\x00"
        if all(_expected_reply(block) is not None for block in item.split(b"\x00")[:-1]
               if block):
            items.append(item)
    return items


def _expected_reply(block: bytes) -> int | None:
    """The ERROR code the device must answer ``block`` with, None if it is a valid request
    the device would serve (never generated)."""
    item = parse_block(block)
    if isinstance(item, BadFrame):
        return int(item.fault)
    if item.type in (0x00, 0x08, 0x3F, 0x80, 0x88, 0xC0, 0xFF):
        return int(ErrorCode.UNKNOWN_TYPE)
    return None


def _blast(dev_ser: object, items: list[bytes], batch_bytes: int = 1500) -> tuple[Counter,
                                                                                    Counter]:
    """Send items in batches, read every reply; returns (expected, received) error codes."""
    ser = dev_ser
    expected: Counter = Counter()
    got: Counter = Counter()
    dec = FrameDecoder()
    pending = 0
    i = 0
    while i < len(items):
        batch = bytearray()
        while i < len(items) and len(batch) < batch_bytes:
            for block in items[i].split(b"\x00")[:-1]:
                if block:
                    expected[_expected_reply(block)] += 1
                    pending += 1
            batch += items[i]
            i += 1
        ser.write(bytes(batch))  # type: ignore[attr-defined]
        deadline = time.monotonic() + 15
        while pending and time.monotonic() < deadline:
            data = ser.read(max(1, ser.in_waiting))  # type: ignore[attr-defined]
            for f in dec.feed(data):
                assert isinstance(f, Frame), f"device sent a corrupted frame: {f}"
                msg = decode_message(f)
                if isinstance(msg, Log):
                    continue
                assert isinstance(msg, Error), f"unexpected reply {msg}"
                got[msg.code] += 1
                pending -= 1
        assert pending == 0, f"{pending} replies missing after a batch ({got} so far)"
    return expected, got


def _robustness(dev: object, board_id: str, n: int) -> None:
    ser = dev.open()  # type: ignore[attr-defined]
    try:
        s = Session(ser, timeout=10)
        s.hello()
        items = _garbage_items(random.Random(1234), n)
        t0 = time.monotonic()
        expected, got = _blast(ser, items)
        dt = time.monotonic() - t0
        names = {ErrorCode(k).name: v for k, v in sorted(got.items())}
        print(f"\n{board_id}: {len(items)} garbage items, {sum(got.values())} ERROR replies "
              f"in {dt:.1f} s: {names}")
        assert got == expected
        # every frame fault and the unknown type were exercised and answered
        assert set(got) == {ErrorCode.CRC, ErrorCode.COBS, ErrorCode.TRUNCATED,
                            ErrorCode.LENGTH, ErrorCode.OVERSIZED, ErrorCode.UNKNOWN_TYPE}
        # the device still serves a valid request correctly
        x = random_input(99)
        outs, _ = s.run([x])
        assert np.array_equal(outs[0], expected_outputs(x)[0])
        assert dev.poll() is None, "the firmware exited"  # type: ignore[attr-defined]
    finally:
        ser.close()


@pytest.mark.target
def test_garbage_never_breaks_qemu_firmware(fw_dir: Path) -> None:
    fw = _firmware(fw_dir, "mps2-an386")
    with runner_for(fw.board).start(fw, timeout=120) as dev:
        _robustness(dev, "mps2-an386", 2000)


@pytest.mark.target
def test_garbage_never_breaks_sanitized_host_firmware(fw_dir: Path) -> None:
    fw = _firmware(fw_dir, "host")
    with runner_for(fw.board).start(fw, timeout=120) as dev:
        _robustness(dev, "host", 3000)
        log = dev.log
    assert "ERROR: AddressSanitizer" not in log and "runtime error" not in log, log


@pytest.mark.target
def test_bench_app_reports_per_op_counts(fw_dir: Path) -> None:
    fw = _firmware(fw_dir, "microbit-v1", "bench")
    with runner_for(fw.board).start(fw, timeout=60) as dev:
        ser = dev.open()
        try:
            s = Session(ser, timeout=10)
            res = s.bench(7)
            assert res.done.runs == 7 and res.done.request == MsgType.BENCH
            assert 0 < res.done.min <= res.done.max
            assert res.done.total >= 7 * res.done.min
            assert len(res.per_op) == 3 and res.per_op[2] == 0
            # the boot-time run was reported unsolicited
            kinds = [type(m).__name__ for m in s.unsolicited]
            assert "Done" in kinds and "Profile" in kinds
        finally:
            ser.close()


@pytest.mark.target
def test_device_rejects_bad_arguments(fw_dir: Path) -> None:
    fw = _firmware(fw_dir, "host")
    with runner_for(fw.board).start(fw, timeout=60) as dev:
        ser = dev.open()
        try:
            s = Session(ser, timeout=10)
            s.hello()
            from tinydeploy.link.messages import Bench, Invoke, LoadInput

            with pytest.raises(LinkError, match="BAD_ARG"):
                s.request(LoadInput(0, 290, bytes(20)), MsgType.ACK)   # past the end
            with pytest.raises(LinkError, match="BAD_ARG"):
                s.request(LoadInput(5, 0, b"\x01"), MsgType.ACK)       # no such input
            with pytest.raises(LinkError, match="UNKNOWN_TYPE"):
                s.request(Bench(3), MsgType.DONE)                       # not a bench app
            ack = s.request(LoadInput(0, 299, b"\x7f"), MsgType.ACK)[0]
            assert isinstance(ack, Ack) and ack.acked == MsgType.LOAD_INPUT
            with pytest.raises(LinkError, match="STATE"):             # 299 bytes never loaded
                s.invoke(profile=False)
            s.request(LoadInput(0, 0, bytes(200)), MsgType.ACK)
            s.request(LoadInput(0, 200, bytes(99)), MsgType.ACK)
            res = s.invoke(profile=False)
            assert res.per_op == () and res.outputs[0][299] == 127
            del Invoke
        finally:
            ser.close()


def test_monitor_nonexistent_port(capsys: pytest.CaptureFixture[str]) -> None:
    rc = cli_main(["monitor", "--port", "/dev/tinydeploy-no-such-port"])
    err = capsys.readouterr().err
    assert rc == 1
    assert "does not exist" in err and "Traceback" not in err


@pytest.mark.target
def test_monitor_busy_port(fw_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fw = _firmware(fw_dir, "host")
    with runner_for(fw.board).start(fw, timeout=30) as dev:
        ser = dev.open()
        try:
            rc = cli_main(["monitor", "--port", dev.port, "--duration", "0.5"])
        finally:
            ser.close()
    assert rc == 1
    assert "busy" in capsys.readouterr().err


@pytest.mark.target
def test_flash_command_runs_and_monitors_emulated_build(fw_dir: Path) -> None:
    fw = _firmware(fw_dir, "netduinoplus2", "bench")
    (fw.elf.parent / "manifest.json").write_text(json.dumps({"board": "netduinoplus2"}))
    r = subprocess.run([sys.executable, "-m", "tinydeploy", "flash", str(fw.elf.parent),
                        "--monitor", "--timeout", "2", "--json"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    types = [x["type"] for x in lines if "type" in x]
    assert types[:3] == ["LOG", "PROFILE", "DONE"], types
    done = next(x for x in lines if x.get("type") == "DONE")
    assert done["runs"] == 10 and done["min"] > 0
    assert lines[-1]["board"] == "netduinoplus2" and lines[-1]["runner"] == "qemu"


def test_flash_command_missing_build_dir(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["flash", str(tmp_path / "nope")]) == 1
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "b").mkdir()
    assert cli_main(["flash", str(tmp_path / "b")]) == 1
    assert "manifest.json" in capsys.readouterr().err


def test_hardware_runners_need_their_tools(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from tinydeploy.errors import ToolchainError
    from tinydeploy.flash import hardware

    monkeypatch.setattr(hardware.shutil, "which", lambda name: None)
    board = get_board("nrf52840dk")
    elf = tmp_path / "firmware.elf"
    elf.write_bytes(b"")
    fw = Firmware(elf, board, tmp_path / "firmware.hex", None, tmp_path)
    for name, needle in (("nrfjprog", "nRF Command Line Tools"), ("pyocd", "pip install pyocd"),
                         ("platformio", "pip install platformio")):
        with pytest.raises(ToolchainError) as e:
            runner_for(board, name).start(fw)
        assert needle in (e.value.hint or ""), name


def test_fault_report_frame_is_decodable() -> None:
    """What the fault handler sends (a LOG frame at FAULT level) decodes on the host."""
    frame = Frame(int(MsgType.LOG), 0, bytes([LogLevel.FAULT]) + b"fault HardFault pc=0x1")
    msg = decode_message(FrameDecoder().feed(frame.encode())[0])
    assert isinstance(msg, Log) and msg.level == LogLevel.FAULT


def _build_fault_firmware(board_id: str, out: Path) -> Firmware:
    from tinydeploy.build.toolchain import compile_firmware, platform_sources
    from tinydeploy.codegen.linker import render_linker_script
    from tinydeploy.codegen.platform import board_defines
    from tinydeploy.flash.runner import Firmware as Fw

    board = get_board(board_id)
    fault_dir = Path(__file__).parent / "fixtures" / "stub_model" / "fault"
    link_dir = firmware_dir() / "link"
    psrc, pinc = platform_sources(board)
    out.mkdir(parents=True, exist_ok=True)
    ld = None
    if board.family != "host":
        ld = out / "linker.ld"
        ld.write_text(render_linker_script(board, 2048))
    elf = compile_firmware([fault_dir / "main.c", link_dir / "td_link.c", *psrc],
                           [*pinc, link_dir], board_defines(board), board, out, ld)
    return Fw.from_elf(elf, board)


@pytest.mark.target
@pytest.mark.parametrize("board_id", ["mps2-an386", "microbit-v1", "host"])
def test_fault_is_reported_over_the_link(board_id: str, fw_dir: Path) -> None:
    fw = _build_fault_firmware(board_id, fw_dir / f"fault-{board_id}")
    with runner_for(fw.board).start(fw, timeout=30) as dev:
        ser = dev.open()
        try:
            s = Session(ser, timeout=10)
            assert s.ping(b"alive") == b"alive"
            s.send(Log(0, ""))  # any frame but PING makes it fault
            deadline = time.monotonic() + 10
            fault = None
            while fault is None and time.monotonic() < deadline:
                try:
                    f = s.read_frame(0.5)
                except LinkError:
                    break  # QEMU closed the pty as the firmware exited
                if f is not None:
                    m = decode_message(f)
                    if isinstance(m, Log) and m.level == LogLevel.FAULT:
                        fault = m
        finally:
            ser.close()
        status = dev.wait(10)
    assert fault is not None, dev.log
    if board_id == "host":
        assert fault.text.startswith("fault signal")
    else:
        # Cortex-M0 has no UsageFault: everything escalates to HardFault; M4 reports the
        # UsageFault, or HardFault when it is disabled (the reset default)
        assert fault.text.startswith("fault HardFault") or "UsageFault" in fault.text
        assert "pc=0x" in fault.text
    assert status == 1


@pytest.mark.target
def test_monitor_ctrl_c_exits_cleanly(fw_dir: Path) -> None:
    import signal

    fw = _firmware(fw_dir, "host")
    with runner_for(fw.board).start(fw, timeout=60) as dev:
        dev.resume()  # runs without us: the monitor opens the port
        proc = subprocess.Popen([sys.executable, "-m", "tinydeploy", "monitor", "--port",
                                 dev.port, "--json", "--hello"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            first = json.loads(proc.stdout.readline())  # INFO, answer to --hello
            assert first["type"] == "INFO" and first["board"] == "host"
            time.sleep(0.3)
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=20)
            out = proc.stdout.read()
            err = proc.stderr.read() if proc.stderr else ""
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    lines = [json.loads(x) for x in out.splitlines()]  # every line is one JSON object
    assert [x["type"] for x in lines[:3]] == ["TENSOR", "TENSOR", "TENSOR"]
    assert lines[-1]["type"] == "STATUS" and "frames" in lines[-1]["text"]


@pytest.mark.slow
@pytest.mark.target
@pytest.mark.parametrize("board_id", ["netduinoplus2", "microbit-v1", "mps2-an500",
                                      "mps3-an547"])
def test_garbage_sweep_other_uarts(board_id: str, fw_dir: Path) -> None:
    """The same garbage test on the STM32 USART, the Nordic UART and the other cores
    (--sweep: ~20 s per board)."""
    fw = _firmware(fw_dir, board_id)
    with runner_for(fw.board).start(fw, timeout=300) as dev:
        _robustness(dev, board_id, 2000)
