"""Unit tests of the host side of the protocol: COBS, CRC, frames, messages, monitor."""

from __future__ import annotations

import io
import json
import os
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tinydeploy.errors import LinkError
from tinydeploy.link import cobs
from tinydeploy.link.crc import crc16
from tinydeploy.link.frame import (
    MAX_ENCODED,
    MAX_PAYLOAD,
    BadFrame,
    Frame,
    FrameDecoder,
    FrameFault,
    encode_frame,
    frame_body,
    parse_block,
)
from tinydeploy.link.messages import (
    Ack,
    Audio,
    Bench,
    Done,
    Error,
    Event,
    Info,
    Invoke,
    LoadInput,
    Log,
    Output,
    Ping,
    Profile,
    TensorDesc,
    decode_message,
    message_frame,
)
from tinydeploy.link.monitor import JsonSink, Monitor


def test_crc16_check_value() -> None:
    # the published check value of CRC-16/CCITT-FALSE
    assert crc16(b"123456789") == 0x29B1
    assert crc16(b"") == 0xFFFF


def test_cobs_known_vectors() -> None:
    # vectors from the COBS paper / Wikipedia examples
    assert cobs.encode(b"\x00") == b"\x01\x01"
    assert cobs.encode(b"\x00\x00") == b"\x01\x01\x01"
    assert cobs.encode(b"\x11\x22\x00\x33") == b"\x03\x11\x22\x02\x33"
    assert cobs.encode(b"\x11\x00\x00\x00") == b"\x02\x11\x01\x01\x01"
    block = bytes(range(1, 255))
    assert cobs.encode(block) == b"\xff" + block + b"\x01"


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=700))
def test_cobs_round_trip(data: bytes) -> None:
    enc = cobs.encode(data)
    assert 0 not in enc
    assert len(enc) <= cobs.encoded_size_max(len(data))
    assert cobs.decode(enc) == data


def test_cobs_rejects_overrun() -> None:
    with pytest.raises(cobs.CobsError):
        cobs.decode(b"\x05\x01\x02")


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 255), st.integers(0, 255), st.binary(max_size=MAX_PAYLOAD))
def test_frame_round_trip(ftype: int, seq: int, payload: bytes) -> None:
    wire = encode_frame(ftype, seq, payload)
    assert wire.endswith(b"\x00") and 0 not in wire[:-1]
    dec = FrameDecoder()
    assert dec.feed(wire) == [Frame(ftype, seq, payload)]


def test_frame_payload_limit() -> None:
    with pytest.raises(ValueError):
        encode_frame(1, 1, bytes(MAX_PAYLOAD + 1))


def test_decoder_classifies_each_fault() -> None:
    good = frame_body(0x06, 7, b"abc")
    flipped = bytearray(good)
    flipped[5] ^= 0x01
    wrong_len = bytearray(good)
    wrong_len[2] = 9
    wrong_len[-2:] = struct.pack("<H", crc16(bytes(wrong_len[:-2])))
    cases = {
        FrameFault.CRC: cobs.encode(bytes(flipped)),
        FrameFault.LENGTH: cobs.encode(bytes(wrong_len)),
        FrameFault.TRUNCATED: cobs.encode(good[:4]),
        FrameFault.COBS: b"\x09\x01",
        FrameFault.OVERSIZED: b"\x01" * (MAX_ENCODED + 1),
    }
    for fault, block in cases.items():
        item = parse_block(block)
        assert isinstance(item, BadFrame) and item.fault == fault, (fault, item)
        # the streaming decoder agrees and recovers for the next frame
        dec = FrameDecoder()
        out = dec.feed(block + b"\x00" + encode_frame(0x06, 8, b"ok"))
        assert [type(o) for o in out] == [BadFrame, Frame]
        assert out[0].fault == fault and out[1] == Frame(0x06, 8, b"ok")


def test_decoder_resyncs_after_noise_split_anywhere() -> None:
    rng = __import__("random").Random(5)
    frames = [Frame(0x83, i, os.urandom(rng.randrange(0, 200))) for i in range(1, 40)]
    stream = bytearray()
    for f in frames:
        stream += bytes(rng.randrange(1, 256) for _ in range(rng.randrange(0, 30))) + b"\x00"
        stream += f.encode()
    dec = FrameDecoder()
    got: list[Frame] = []
    pos = 0
    while pos < len(stream):  # arbitrary chunking, as a serial port delivers it
        n = rng.randrange(1, 64)
        got += [x for x in dec.feed(bytes(stream[pos:pos + n])) if isinstance(x, Frame)]
        pos += n
    assert got == frames


def test_oversized_stream_memory_bounded() -> None:
    dec = FrameDecoder()
    for _ in range(100):
        assert dec.feed(b"\x01" * 1000) == []
    assert len(dec._buf) <= MAX_ENCODED
    (item,) = dec.feed(b"\x00")
    assert isinstance(item, BadFrame) and item.fault == FrameFault.OVERSIZED


MESSAGES = [
    LoadInput(1, 480, b"\x01\x02\x03"),
    Invoke(True),
    Invoke(False),
    Bench(25),
    Audio(16000, struct.pack("<4h", -32768, -1, 0, 32767)),
    Ping(b"\x00\x01"),
    Ack(0x02),
    Info(1, 2, 1, 22772, 13, "ab" * 32, "mps2-an386", "cycles", "validate"),
    TensorDesc(True, 0, 9, (1, 49, 10, 1), 0.25, -128, 490, "input_1"),
    Output(0, 240, bytes(range(16))),
    Profile("cycles", 48, 60, (1, 2, 3, 2**32 - 1)),
    Done(0x04, 10, 100, 120, 1100, "cycles"),              # protocol 1: no stack figures
    Done(0x04, 10, 100, 120, 1100, "cycles", 704, 1600),   # protocol 2: peak and reserve
    Event(3, 0.875, 123456),
    Log(1, "ready"),
    Error(1, 0x02, "CRC mismatch"),
]


@pytest.mark.parametrize("msg", MESSAGES, ids=lambda m: type(m).__name__)
def test_message_round_trip(msg: object) -> None:
    frame = message_frame(msg, 9)  # type: ignore[arg-type]
    dec = FrameDecoder().feed(frame.encode())
    assert decode_message(dec[0]) == msg  # type: ignore[arg-type]


def test_message_errors_are_link_errors() -> None:
    with pytest.raises(LinkError, match="too short"):
        decode_message(Frame(0x85, 1, b"\x04\x01"))
    # a DONE with a stack figure cut short is refused, not read as protocol 1
    v2 = Done(0x04, 1, 5, 5, 5, "cycles", 704, 1600).pack()
    with pytest.raises(LinkError, match="too short"):
        decode_message(Frame(0x85, 1, v2[:-3]))
    with pytest.raises(LinkError, match="unknown frame type 0x7f"):
        decode_message(Frame(0x7F, 1, b""))
    with pytest.raises(LinkError, match="not whole samples"):
        decode_message(Frame(0x05, 1, b"\x00\x00\x00\x00\x01"))


class _FakePort:
    """A port that delivers chunks, then fails (a vanished device)."""

    def __init__(self, chunks: list[bytes], fail_at_end: bool) -> None:
        self.chunks = list(chunks)
        self.fail = fail_at_end
        self.closed = False

    @property
    def in_waiting(self) -> int:
        return len(self.chunks[0]) if self.chunks else 0

    def read(self, n: int) -> bytes:
        if self.chunks:
            return self.chunks.pop(0)
        if self.fail:
            raise OSError(5, "device disconnected")
        return b""

    def write(self, data: bytes) -> int:
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def test_monitor_survives_port_loss_without_losing_frames() -> None:
    f = [message_frame(Log(1, f"line {i}"), 0).encode() for i in range(6)]
    # port 1: three frames and the first half of a fourth, then it disappears
    first = _FakePort([f[0] + f[1], f[2] + f[3][:5]], fail_at_end=True)
    second = _FakePort([f[4], f[5]], fail_at_end=False)
    opens: list[object] = [first, LinkError("gone"), LinkError("gone"), second]

    def opener() -> object:
        item = opens.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    out = io.StringIO()
    mon = Monitor(opener, JsonSink(out), retry=0.01)
    stats = mon.run(duration=2.0, count=5)
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    texts = [x["text"] for x in lines if x["type"] == "LOG"]
    assert texts == ["line 0", "line 1", "line 2", "line 4", "line 5"]
    assert stats.reconnects == 1 and first.closed
    assert any(x["type"] == "STATUS" and "port lost" in x["text"] for x in lines)


class _FakeDevice:
    """A port with a tiny device behind it: answers PING with ACK; the first ``damage``
    replies are corrupted on the way, the first ``crc_errors`` requests are answered with
    ERROR CRC (as if the device had received them damaged)."""

    def __init__(self, damage: int = 0, crc_errors: int = 0) -> None:
        self.damage = damage
        self.crc_errors = crc_errors
        self.rx = FrameDecoder()
        self.out = bytearray()
        self.requests = 0
        self.timeout = 0.01

    @property
    def in_waiting(self) -> int:
        return len(self.out)

    def read(self, n: int = 1) -> bytes:
        data, self.out[:] = bytes(self.out[:n]), self.out[n:]
        return data

    def write(self, data: bytes) -> int:
        for f in self.rx.feed(data):
            assert isinstance(f, Frame)
            self.requests += 1
            if self.crc_errors:
                self.crc_errors -= 1
                reply = message_frame(Error(1, f.type, "CRC mismatch"), f.seq).encode()
            else:
                reply = message_frame(Ack(f.type, f.payload), f.seq).encode()
            if self.damage:
                self.damage -= 1
                reply = reply[:3] + bytes([reply[3] ^ 0x40]) + reply[4:]
            self.out += reply
        return len(data)

    def flush(self) -> None:
        pass


def test_session_retries_transient_failures() -> None:
    from tinydeploy.link.session import Session

    dev = _FakeDevice(damage=1)
    s = Session(dev, timeout=0.2, retries=1)
    assert s.ping(b"abc") == b"abc"
    assert dev.requests == 2 and s.stats.bad_frames == 1 and s.stats.retries == 1

    dev = _FakeDevice(crc_errors=1)
    s = Session(dev, timeout=0.2, retries=1)
    assert s.ping(b"x") == b"x" and dev.requests == 2

    dev = _FakeDevice(damage=2)
    s = Session(dev, timeout=0.2, retries=1)
    with pytest.raises(LinkError, match="after 2 attempts"):
        s.ping(b"x")

    dev = _FakeDevice(damage=1)
    s = Session(dev, timeout=0.2, retries=0)
    with pytest.raises(LinkError, match="no reply to PING"):
        s.ping(b"x")
