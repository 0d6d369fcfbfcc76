"""A request/response session with a device over a serial port (docs/protocol.md, "Flow").

The protocol is stop-and-wait: the host sends one request and reads until its final reply
before sending the next, so neither side ever needs more than one frame of buffering and a
polled UART without FIFO cannot overrun. Replies carry the request's sequence number (1..255);
frames with sequence 0 are unsolicited (LOG, EVENT, a boot INFO) and are collected in
``unsolicited`` (and passed to ``on_message``) whenever they arrive. Stale replies (another
sequence) are counted and dropped, corrupted frames are counted and skipped: the session
resynchronises on the next delimiter by construction.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from tinydeploy.errors import LinkError
from tinydeploy.flash.port import open_port, port_error
from tinydeploy.link.frame import BadFrame, Frame, FrameDecoder, encode_frame
from tinydeploy.link.messages import (
    CHUNK_BYTES,
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    Ack,
    Audio,
    Bench,
    Done,
    Error,
    ErrorCode,
    Hello,
    Info,
    Invoke,
    LoadInput,
    Log,
    LogLevel,
    Message,
    MsgType,
    Output,
    Ping,
    Profile,
    Stop,
    TensorDesc,
    decode_message,
    type_name,
)

_NUMPY_OF_DTYPE = {9: np.int8, 3: np.uint8, 7: np.int16, 2: np.int32, 0: np.float32}


class Port(Protocol):
    """What a session needs from a port: pyserial's Serial satisfies it."""

    timeout: float | None

    def read(self, size: int = 1) -> bytes: ...
    def write(self, data: bytes) -> int | None: ...
    def flush(self) -> None: ...
    @property
    def in_waiting(self) -> int: ...


@dataclass(frozen=True)
class DeviceInfo:
    """INFO plus the I/O tensor descriptors that follow it."""

    info: Info
    inputs: tuple[TensorDesc, ...]
    outputs: tuple[TensorDesc, ...]


@dataclass(frozen=True)
class InvokeResult:
    outputs: tuple[bytes, ...]
    per_op: tuple[int, ...]       # empty when not profiled
    done: Done

    @property
    def unit(self) -> str:
        return self.done.unit

    @property
    def count(self) -> int:
        return self.done.total


@dataclass(frozen=True)
class BenchResult:
    done: Done
    per_op: tuple[int, ...]       # mean count per op per inference


@dataclass
class LinkStats:
    frames: int = 0
    bad_frames: int = 0
    stale: int = 0
    retries: int = 0
    errors: list[Error] = field(default_factory=list)


class _Transient(LinkError):
    """A failure a resend may cure: no reply in time, or the device saw our frame damaged."""


class _InputLost(LinkError):
    """The device refused INVOKE because its inputs are not loaded since its last inference
    (which may have overwritten them: the arena reuses input bytes) or since it restarted.
    INVOKE is not idempotent: a resend must load the inputs again."""


_FRAME_FAULTS = frozenset({ErrorCode.CRC, ErrorCode.COBS, ErrorCode.TRUNCATED,
                           ErrorCode.LENGTH, ErrorCode.OVERSIZED})


def gather_profile(messages: Sequence[Message]) -> tuple[dict[int, int], int | None,
                                                         Done | None]:
    """From the replies to one request: the per-op counts of its PROFILE frames ({op index:
    count}), the op total the last of them names (None without one) and its last DONE."""
    counts: dict[int, int] = {}
    total: int | None = None
    done: Done | None = None
    for m in messages:
        if isinstance(m, Profile):
            counts.update({m.first + i: c for i, c in enumerate(m.counts)})
            total = m.total
        elif isinstance(m, Done):
            done = m
    return counts, total, done


def _check_profile(counts: dict[int, int], total: int | None, what: str) -> None:
    """A per-op profile must cover ops 0..total-1: a PROFILE frame lost to a damaged byte
    would otherwise shift every later op's count onto the wrong op."""
    if total is not None and sorted(counts) != list(range(total)):
        raise _Transient(f"PROFILE of {what}: counts for {len(counts)} of {total} ops arrived")


class Session:
    """Typed requests over one port. ``timeout`` bounds the wait for each reply frame;
    ``retries`` is how many times a request is resent after a timeout, a damaged reply or
    the device reporting our frame damaged (CRC/COBS/LENGTH/TRUNCATED/OVERSIZED)."""

    def __init__(self, port: Port, timeout: float = 5.0,
                 on_message: Callable[[Message, int], None] | None = None,
                 retries: int = 1,
                 convert: Callable[[Message], Message] | None = None) -> None:
        self.port = port
        self.convert = convert   # the device's counts into the host's unit (link/units.py)
        self.timeout = timeout
        self.retries = retries
        self._synced = False
        self.on_message = on_message
        self.decoder = FrameDecoder()
        self.stats = LinkStats()
        self.unsolicited: list[Message] = []
        self._seq = 0
        self._pending: list[Frame] = []
        self.device: DeviceInfo | None = None

    # -- low level ----------------------------------------------------------------------
    def resync(self) -> None:
        """Flush the device's partial frame (a lone delimiter) and drop stale input."""
        self.port.write(b"\x00")
        self.port.flush()
        self.decoder.reset()
        self._pending.clear()

    def next_seq(self) -> int:
        self._seq = self._seq % 255 + 1
        return self._seq

    def send(self, msg: Message, seq: int | None = None) -> int:
        seq = self.next_seq() if seq is None else seq
        lead = b"" if self._synced else b"\x00"  # first frame: flush a partial frame first
        self._synced = True
        self.port.write(lead + encode_frame(int(msg.TYPE), seq, msg.pack()))
        self.port.flush()
        return seq

    def read_frame(self, timeout: float) -> Frame | None:
        """The next valid frame within ``timeout`` seconds, or None."""
        deadline = time.monotonic() + timeout
        while True:
            if self._pending:
                return self._pending.pop(0)
            if time.monotonic() > deadline:
                return None
            try:
                data = self.port.read(max(1, self.port.in_waiting))
            except (OSError, ValueError) as e:  # SerialException is an OSError
                raise LinkError(f"serial port closed or disconnected: {e}",
                                hint="did the device stop, or the cable come out?") from None
            if not data:
                continue
            for item in self.decoder.feed(data):
                if isinstance(item, BadFrame):
                    self.stats.bad_frames += 1
                else:
                    self.stats.frames += 1
                    self._pending.append(item)

    def _replies(self, seq: int, what: str) -> Any:
        """Yield the typed replies to request ``seq``; unsolicited frames go aside."""
        while True:
            frame = self.read_frame(self.timeout)
            if frame is None:
                raise _Transient(f"no reply to {what} (seq {seq}) within {self.timeout:g} s",
                                 hint="is the firmware running and the baud rate right?")
            msg = decode_message(frame)
            if self.convert is not None:
                msg = self.convert(msg)
            if frame.seq == 0:
                self.unsolicited.append(msg)
                if self.on_message:
                    self.on_message(msg, 0)
                if isinstance(msg, Error) and msg.code in _FRAME_FAULTS:
                    # a block the device could not even read a header from (COBS, TRUNCATED,
                    # OVERSIZED): while a request is pending it is most likely that request,
                    # so resend now rather than wait for the timeout (a resend is safe)
                    self.stats.errors.append(msg)
                    raise _Transient(f"device could not read {what}: {msg.code_name} "
                                     f"({msg.text or 'no detail'})")
                if isinstance(msg, Log) and msg.level == LogLevel.FAULT:
                    # the device reported a fault (a CPU fault, a sanitizer, a --guards
                    # violation) and stops: no reply will come, say why instead of waiting
                    raise LinkError(f"the device stopped during {what} (seq {seq}): "
                                    f"{msg.text}",
                                    hint="a debug build (--guards) names the op; the "
                                         "firmware's fault line gives pc and lr")
                continue
            if frame.seq != seq:
                self.stats.stale += 1
                continue
            if isinstance(msg, Error):
                self.stats.errors.append(msg)
                err = (_Transient if msg.code in _FRAME_FAULTS else
                       _InputLost if msg.code == ErrorCode.STATE and what == "INVOKE" else
                       LinkError)
                raise err(f"device rejected {what}: {msg.code_name} "
                          f"({msg.text or 'no detail'})")
            yield msg

    def _retrying(self, what: str, attempt: Callable[[], Any]) -> Any:
        """Run ``attempt``; after a transient failure resynchronise and run it again, up to
        ``retries`` more times. Every request is idempotent, so a resend is safe."""
        for k in range(self.retries + 1):
            try:
                return attempt()
            except _Transient as e:
                self.stats.retries += 1
                if k == self.retries:
                    raise LinkError(e.message + (f" (after {k + 1} attempts)" if k else ""),
                                    hint=e.hint) from None
                self.resync()
        raise AssertionError("unreachable")

    def request(self, msg: Message, final: MsgType) -> list[Message]:
        """Send ``msg`` and collect every reply up to and including one of type ``final``
        (resent after a transient failure, see ``retries``)."""
        what = type_name(int(msg.TYPE))

        def attempt() -> list[Message]:
            seq = self.send(msg)
            out: list[Message] = []
            for reply in self._replies(seq, what):
                out.append(reply)
                if reply.TYPE == final:
                    return out
            raise AssertionError("unreachable")

        return self._retrying(what, attempt)  # type: ignore[no-any-return]

    # -- requests -----------------------------------------------------------------------
    def hello(self) -> DeviceInfo:
        """INFO and the tensor descriptors; also checks the protocol version."""
        return self._retrying("HELLO", self._hello_once)  # type: ignore[no-any-return]

    def _hello_once(self) -> DeviceInfo:
        what = "HELLO"
        seq = self.send(Hello())
        replies = self._replies(seq, what)
        info = next(replies)
        if not isinstance(info, Info):
            # the device answers HELLO with INFO and then its TENSOR descriptors: a first
            # reply of another type means the INFO frame was lost (a damaged frame is
            # dropped), so ask again rather than fail
            raise _Transient(f"HELLO answered with {info.TYPE.name} first: its INFO was lost")
        if info.version not in SUPPORTED_VERSIONS:
            raise LinkError(f"device speaks protocol version {info.version}, this host "
                            f"speaks {PROTOCOL_VERSION}", hint="rebuild the firmware")
        ins: list[TensorDesc] = []
        outs: list[TensorDesc] = []
        while len(ins) < info.num_inputs or len(outs) < info.num_outputs:
            d = next(replies)
            if not isinstance(d, TensorDesc):
                raise LinkError(f"expected TENSOR after INFO, got {d.TYPE.name}")
            (outs if d.is_output else ins).append(d)
        self.device = DeviceInfo(info, tuple(sorted(ins, key=lambda d: d.index)),
                                 tuple(sorted(outs, key=lambda d: d.index)))
        return self.device

    def ping(self, data: bytes = b"") -> bytes:
        (ack,) = self.request(Ping(data), MsgType.ACK)
        assert isinstance(ack, Ack)
        return ack.data

    def load_input(self, index: int, data: bytes) -> None:
        """Write a whole input tensor in CHUNK_BYTES pieces, each acknowledged."""
        for off in range(0, max(len(data), 1), CHUNK_BYTES):
            self.request(LoadInput(index, off, bytes(data[off:off + CHUNK_BYTES])),
                         MsgType.ACK)

    def invoke(self, profile: bool = True) -> InvokeResult:
        """Run one inference; the outputs arrive as OUTPUT chunks, then PROFILE, then DONE.
        A damaged OUTPUT chunk makes the whole inference run again (see ``retries``): the
        device refuses that resend (ERROR STATE) when the inference consumed its inputs, and
        `run` loads them again."""
        dev = self.device or self.hello()
        return self._retrying(  # type: ignore[no-any-return]
            "INVOKE", lambda: self._invoke_once(dev, profile))

    def _invoke_once(self, dev: DeviceInfo, profile: bool) -> InvokeResult:
        bufs = [bytearray(d.bytes) for d in dev.outputs]
        got = [0] * len(bufs)
        replies = self.request(Invoke(profile), MsgType.DONE)
        for m in replies:
            if isinstance(m, Output):
                self._place(bufs, got, m)
        counts, total, done = gather_profile(replies)
        assert done is not None
        # a profiled INVOKE owes one count per op, even when every PROFILE frame was lost
        _check_profile(counts, dev.info.num_ops if profile and dev.info.num_ops else total,
                       "INVOKE")
        for i, (b, n) in enumerate(zip(bufs, got, strict=True)):
            if n != len(b):
                raise _Transient(f"output {i}: received {n} of {len(b)} bytes")
        per_op = tuple(counts.get(k, 0) for k in range(len(counts))) if counts else ()
        return InvokeResult(tuple(bytes(b) for b in bufs), per_op, done)

    @staticmethod
    def _place(bufs: list[bytearray], got: list[int], m: Output) -> None:
        if m.tensor >= len(bufs) or m.offset + len(m.data) > len(bufs[m.tensor]):
            raise LinkError(f"OUTPUT chunk for tensor {m.tensor} at offset {m.offset} "
                            f"({len(m.data)} bytes) is outside the described outputs")
        bufs[m.tensor][m.offset:m.offset + len(m.data)] = m.data
        got[m.tensor] += len(m.data)

    def run(self, inputs: Sequence[np.ndarray], profile: bool = True) -> tuple[
            list[np.ndarray], InvokeResult]:
        """Load ``inputs`` (checked against the descriptors), invoke, return typed outputs."""
        dev = self.device or self.hello()
        if len(inputs) != len(dev.inputs):
            raise LinkError(f"model has {len(dev.inputs)} inputs, {len(inputs)} given")
        raws = []
        for d, arr in zip(dev.inputs, inputs, strict=True):
            raw = np.ascontiguousarray(arr).tobytes()
            if len(raw) != d.bytes:
                raise LinkError(f"input {d.index} '{d.name}' takes {d.bytes} bytes "
                                f"(shape {list(d.shape)}), got {len(raw)}")
            raws.append((d.index, raw))
        for attempt in range(self.retries + 1):
            for index, raw in raws:
                self.load_input(index, raw)
            try:
                res = self.invoke(profile)
                break
            except _InputLost as e:
                # a damaged reply made invoke() resend INVOKE, or the device restarted while
                # we loaded: the inputs are gone, load them again
                self.stats.retries += 1
                if attempt == self.retries:
                    raise LinkError(f"{e.message}: lost the inputs {attempt + 1} times (damaged "
                                    "replies or device restarts); no result was computed",
                                    hint="check the cable, the baud rate and the board's "
                                         "power") from None
        outs = []
        for d, raw in zip(dev.outputs, res.outputs, strict=True):
            dt = _NUMPY_OF_DTYPE.get(d.dtype, np.uint8)
            arr = np.frombuffer(raw, dtype=dt)
            if d.shape and arr.size == int(np.prod(d.shape)):
                arr = arr.reshape(d.shape)
            outs.append(arr)
        return outs, res

    def bench(self, runs: int) -> BenchResult:
        """Time ``runs`` inferences. A damaged PROFILE frame makes the whole BENCH run again
        (it is idempotent): a per-op profile is complete or not returned."""
        return self._retrying(  # type: ignore[no-any-return]
            "BENCH", lambda: self._bench_once(runs))

    def _bench_once(self, runs: int) -> BenchResult:
        counts, total, done = gather_profile(self.request(Bench(runs), MsgType.DONE))
        assert done is not None
        # BENCH always ends with the per-op means (docs/protocol.md): one count per op owed
        n_ops = self.device.info.num_ops if self.device is not None else 0
        _check_profile(counts, n_ops or total, "BENCH")
        return BenchResult(done, tuple(counts[k] for k in sorted(counts)))

    def send_audio(self, first_sample: int, pcm: bytes) -> None:
        self.request(Audio(first_sample, pcm), MsgType.ACK)

    def stop(self) -> None:
        """Ask the firmware to exit. It acknowledges first, but an emulator may close the
        port as the firmware exits and take the ACK with it: a closed port counts as done."""
        try:
            self.request(Stop(), MsgType.ACK)
        except LinkError as e:
            if "closed or disconnected" not in e.message:
                raise


__all__ = ["BenchResult", "DeviceInfo", "ErrorCode", "InvokeResult", "LinkStats", "Port",
           "Session", "gather_profile", "open_port", "port_error"]
