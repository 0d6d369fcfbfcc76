"""Target tier for the eembc app: the EEMBC runner's text protocol on the host firmware and on
QEMU mps2-an386 over a real pseudo-terminal, compared with the tflite-micro oracle.

The expected result text is computed here independently of the firmware: the oracle's int8
outputs dequantized in float32 ((q - zero_point) * scale, as TFLM's Dequantize does) and
rounded half away from zero at the number of decimals the device prints, from the exact
binary value (Python's Decimal).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np
import pytest

from tinydeploy.boards import get_board
from tinydeploy.build.firmware import build_firmware
from tinydeploy.flash import Firmware, runner_for
from tinydeploy.link.eembc import EembcClient, EembcError
from tinydeploy.model.loader import load_tflite
from tinydeploy.oracle import run_oracle
from tinydeploy.resources import firmware_dir

MODEL = Path(__file__).parent / "fixtures" / "dscnn_small.tflite"
BOARDS = ("host", "mps2-an386")


@pytest.fixture(scope="module")
def firmwares(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Firmware]:
    out = {}
    for board_id in BOARDS:
        d = tmp_path_factory.mktemp(f"eembc-{board_id}")
        # the host build runs under AddressSanitizer and UndefinedBehaviorSanitizer: any
        # out-of-bounds access or overflow in the parser or formatter ends the process
        build_firmware(MODEL, get_board(board_id), "eembc", d, sanitize=board_id == "host")
        out[board_id] = Firmware.from_build_dir(d)
    return out


@contextmanager
def started(fw: Firmware) -> Iterator[EembcClient]:
    device = runner_for(fw.board).start(fw, timeout=60.0)
    try:
        port = device.open()
        try:
            client = EembcClient(port, timeout=10.0)
            banner = client.read_banner()
            assert "m-init-done" in banner.lines, banner
            assert not banner.errors, banner
            device.kick()   # QEMU: the first host->guest byte otherwise stalls ~1 s
            yield client
            assert device.poll() is None, f"the firmware exited: {device.log[-2000:]}"
        finally:
            port.close()
    finally:
        device.stop()


def expected_text(q: np.ndarray, scale: float, zero_point: int, decimals: int) -> list[str]:
    vals = (q.astype(np.int32) - np.int32(zero_point)).astype(np.float32) * np.float32(scale)
    step = Decimal(1).scaleb(-decimals)
    return [format(Decimal(float(v)).quantize(step, rounding=ROUND_HALF_UP), "f")
            for v in vals.reshape(-1)]


def decimals_of(text: tuple[str, ...]) -> int:
    counts = {len(v.partition(".")[2]) for v in text}
    assert len(counts) == 1, f"values printed with different decimals: {text}"
    (d,) = counts
    assert d >= 3, f"fewer decimals than the reference's three: {text}"
    return d


def oracle_case(seed: int) -> tuple[bytes, list[np.ndarray]]:
    """A random int8 input (as the bytes the runner sends) and the oracle's outputs."""
    graph = load_tflite(MODEL)
    (inp,) = graph.inputs
    x = np.random.default_rng(seed).integers(-128, 128, size=inp.shape, dtype=np.int8)
    return x.tobytes(), run_oracle(MODEL.read_bytes(), [x])


def expected_for(y: list[np.ndarray], decimals: int) -> list[str]:
    """The oracle's outputs as the device must print them with ``decimals`` (read from the
    device's reply: the count is the firmware's choice, the values are not)."""
    graph = load_tflite(MODEL)
    out = []
    for t, q in zip(graph.outputs, y, strict=True):
        assert t.quant is not None
        out += expected_text(q, t.quant.scale[0], t.quant.zero_point[0], decimals)
    return out


def check_inference(client: EembcClient, data: bytes, y: list[np.ndarray],
                    runs: int = 3, warmups: int = 1) -> None:
    client.load(data)
    assert client.db_print() == data
    assert client.db_print(100, 20) == data[100:120]
    r = client.infer(runs, warmups)
    d = decimals_of(r.results_text)
    assert list(r.results_text) == expected_for(y, d)
    # results% repeats the same outputs, and a second infer on the kept input agrees
    floats, text = client.results()
    assert text == r.results_text and floats == r.results
    assert client.infer(1, 0).results_text == r.results_text
    t = r.timing
    assert t.end_us >= t.start_us > 0
    assert t.ticks is not None and t.ticks > 0 and t.clock_hz
    # the m-lap-us pair and the raw counter describe the same interval
    assert abs(t.elapsed_us - t.ticks * 1e6 / t.clock_hz) <= 2 + 0.01 * t.elapsed_us


@pytest.mark.parametrize("board_id", BOARDS)
def test_runner_session_matches_oracle(board_id: str, firmwares: dict[str, Firmware]) -> None:
    graph = load_tflite(MODEL)
    with started(firmwares[board_id]) as c:
        assert c.name() == "tinydeploy"
        prof = c.profile()
        assert prof["model"] == "kws01"           # a 49 x 10 input: the KWS benchmark
        assert prof["profile"].startswith("ULPMark for tinyML")
        help_text = "\n".join(c.send("help").check().lines)
        for word in ("name", "profile", "timestamp", "db load", "db print", "infer",
                     "results"):
            assert word in help_text
        t0 = c.timestamp_us()
        assert c.timestamp_us() >= t0
        detail = next(line for line in c.send("profile").lines
                      if line.startswith("m-tinydeploy-"))
        assert graph.sha256 in detail and board_id in detail
        for seed in (1, 2):
            data, y = oracle_case(seed)
            check_inference(c, data, y)


@pytest.mark.parametrize("board_id", BOARDS)
def test_garbage_then_correct_inference(board_id: str, firmwares: dict[str, Firmware]) -> None:
    graph = load_tflite(MODEL)
    n = graph.inputs[0].nbytes
    data, y = oracle_case(7)

    def error(cmd: str, *words: str) -> None:
        reply = c.send(cmd)
        assert len(reply.errors) == 1, (cmd[:60], reply)
        for w in words:
            assert w in reply.errors[0], (cmd[:60], reply)

    with started(firmwares[board_id]) as c:
        # state errors: nothing loaded, nothing run
        error("results", "no inference")
        error("infer 1 0", "not loaded")
        error("db 00112233", "db load")
        error("db print", "db load")
        # unknown commands and binary garbage (no '%' inside), each answered and survived
        error("frobnicate 1 2", "Unknown command", "frobnicate")
        rng = np.random.default_rng(3)
        junk = bytes(b for b in rng.integers(0, 256, 300, dtype=np.uint8) if b != ord("%"))
        c.write_raw(b"\xff\x00" + junk[:100] + b"%")
        assert c.read_reply("junk").errors
        c.write_raw(junk + b"%")       # 300 bytes: over-long as well
        assert any("too long" in e for e in c.read_reply("junk").errors)
        # over-long line: rejected, the line after it works
        error("x" * 5000, "too long", "5000")
        assert c.name() == "tinydeploy"
        # empty commands are allowed (the runner flushes with '%')
        assert c.send("").lines == ()
        # db load: wrong sizes and arguments
        error(f"db load {n + 1}", str(n + 1), str(n))
        error("db load", "number of bytes")
        error("db load 99999999999999999999", "number of bytes")
        error("db", "subcommand")
        c.send(f"db load {n}").check()
        # the first half as one streamed line (far beyond the line buffer), blanks between
        # pairs allowed
        half = n // 2
        c.send("db " + " ".join(f"{b:02x}" for b in data[:half])).check()
        # bad hex, odd digits, too many bytes: each rejected whole, nothing appended (their
        # staged bytes past the first half are overwritten by the second half below)
        error("db 00zz11", "invalid hex digit 'z'")
        error("db 001", "odd number")
        error("db 0 0", "odd number")
        error("db " + "ab" * (n - half + 1), str(n - half + 1), "nothing loaded")
        error("db " + "ab" * 10 + "\x01", "invalid hex digit '?'")
        error("infer 1 0", f"{half} of {n}")
        error("db print 99999", "past")
        assert "m-load-done" in c.send("db " + data[half:].hex().upper()).check().lines
        assert c.db_print() == data
        error("infer 0 1", "N > 0")
        error("infer x", "N > 0")
        error("infer 1 -1", "W >= 0")
        error("infer 1 2 3", "N > 0")
        r = c.infer(2, 0)
        assert list(r.results_text) == expected_for(y, decimals_of(r.results_text))
        # a reload with the runner's framing still gives the oracle's answer
        check_inference(c, data, y, runs=1, warmups=0)


def test_client_raises_device_errors(firmwares: dict[str, Firmware]) -> None:
    with started(firmwares["host"]) as c:
        with pytest.raises(EembcError, match="db load 5"):
            c.load(b"12345")
        with pytest.raises(EembcError, match="no inference"):
            c.results()


FIRMWARE = firmware_dir()
FMT_DRIVER = r"""
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "td_eembc.h"
void td_uart_write(const uint8_t *buf, uint32_t n) { fwrite(buf, 1, n, stdout); }
int main(void)
{
    unsigned bits, decimals;
    while (scanf("%x %u", &bits, &decimals) == 2) {
        float v;
        uint32_t b = bits;
        memcpy(&v, &b, sizeof v);
        td_eembc_put_f32(v, decimals);
        td_eembc_endl();
    }
    return 0;
}
"""


def test_result_text_is_the_exact_value_rounded(tmp_path: Path) -> None:
    """The device's float printer against Decimal on the exact binary value: random bit
    patterns over the whole float32 range, ties, carries, subnormals, the extremes."""
    import shutil
    import subprocess
    from decimal import localcontext

    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a host C compiler is needed (Debian: gcc)"
    (tmp_path / "driver.c").write_text(FMT_DRIVER)
    exe = tmp_path / "fmt"
    subprocess.run([cc, "-std=c99", "-O1", "-Wall", "-Werror", "-fsanitize=address,undefined",
                    "-fno-sanitize-recover=all", f"-I{FIRMWARE / 'app' / 'eembc'}",
                    f"-I{FIRMWARE / 'platform'}", str(tmp_path / "driver.c"),
                    str(FIRMWARE / "app" / "eembc" / "td_eembc_text.c"), "-o", str(exe)],
                   check=True)
    rng = np.random.default_rng(11)
    special = np.array([0.0, -0.0, 0.5, 2.5, -2.5, 0.0078125, -0.0078125, 0.9999995, 0.99999994,
                        1e-7, 1.5e-45, 3.4028235e38, -3.4028235e38, 16777216.0, 123.456,
                        np.inf, -np.inf, np.nan], dtype=np.float32)
    ints = rng.integers(0, 2**32, 3000, dtype=np.uint64).astype(np.uint32)
    small = rng.integers(-255, 256, 1000).astype(np.float32) * np.float32(1 / 256)
    values = np.concatenate([special, ints.view(np.float32), small])
    decimals = [int(d) for d in rng.integers(0, 10, len(values))]
    decimals[:len(special)] = [6] * len(special)
    decimals[1:4] = [0, 0, 0]
    stdin = "".join(f"{int(v.view(np.uint32)):x} {d}\n" for v, d in zip(values, decimals,
                                                                         strict=True))
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True)
    got = out.stdout.splitlines()
    assert len(got) == len(values)
    with localcontext() as ctx:
        ctx.prec = 200
        for v, d, text in zip(values, decimals, got, strict=True):
            if np.isnan(v):
                want = "nan"
            elif np.isinf(v):
                want = "-inf" if v < 0 else "inf"
            else:
                exact = Decimal(float(v))
                want = format(exact.quantize(Decimal(1).scaleb(-d), rounding=ROUND_HALF_UP),
                              "f")
                if np.signbit(v) and not want.startswith("-"):
                    want = "-" + want
            assert text == want, (float(v), d)
