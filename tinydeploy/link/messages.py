"""Typed messages of the serial protocol (docs/protocol.md, "Messages").

Each message is a frozen dataclass with a ``TYPE`` and ``pack()`` / ``unpack(payload)``;
those whose payload is fixed fields and then nothing, bytes or text declare only that layout
(`_Laid`: ``FIELDS``, ``REST``), the others (INVOKE, AUDIO, STOP, INFO, TENSOR, PROFILE, DONE)
write their own.
All integers are little-endian; strings are ``u8 length`` followed by UTF-8 bytes (the device
sends ASCII). `decode_message` turns a `Frame` into its dataclass and raises `LinkError`
naming the type and the byte counts when a payload does not match its layout, so a device
bug shows up as a clear error instead of a wrong number.
"""

from __future__ import annotations

import builtins
import dataclasses
import enum
import struct
from dataclasses import dataclass
from typing import ClassVar, Self

from tinydeploy.errors import LinkError
from tinydeploy.link.frame import MAX_PAYLOAD, Frame

PROTOCOL_VERSION = 2
#: Versions this host reads: 1 had no stack figures in DONE.
SUPPORTED_VERSIONS = (1, 2)
#: Data bytes per LOAD_INPUT / OUTPUT chunk (5 bytes of header keep a chunk ≤ MAX_PAYLOAD).
CHUNK_BYTES = 240
#: Per-op counts per PROFILE frame.
PROFILE_PER_FRAME = 48


class MsgType(enum.IntEnum):
    """Frame types. Host requests are 0x01..0x3F, device messages 0x80..0xBF."""

    HELLO = 0x01
    LOAD_INPUT = 0x02
    INVOKE = 0x03
    BENCH = 0x04
    AUDIO = 0x05
    PING = 0x06
    STOP = 0x07
    ACK = 0x80
    INFO = 0x81
    TENSOR = 0x82
    OUTPUT = 0x83
    PROFILE = 0x84
    DONE = 0x85
    EVENT = 0x86
    LOG = 0x87
    ERROR = 0x88
    STATUS = 0x89


class ErrorCode(enum.IntEnum):
    """ERROR frame codes; 1..5 are the frame faults of `tinydeploy.link.frame.FrameFault`."""

    CRC = 1
    COBS = 2
    TRUNCATED = 3
    LENGTH = 4
    OVERSIZED = 5
    UNKNOWN_TYPE = 6
    BAD_ARG = 7
    STATE = 8
    INTERNAL = 9


class LogLevel(enum.IntEnum):
    DEBUG = 0
    INFO = 1
    WARN = 2
    ERROR = 3
    FAULT = 4


def _name(enum_type: type[enum.IntEnum], value: int) -> str:
    try:
        return enum_type(value).name
    except ValueError:
        return f"0x{value:02x}"


def type_name(value: int) -> str:
    return _name(MsgType, value)


def _pack_str(s: str, limit: int = 255) -> bytes:
    b = s.encode("utf-8")[:limit]
    return bytes([len(b)]) + b


class _Reader:
    """Bounds-checked payload reader; every overrun is a LinkError naming the message."""

    def __init__(self, what: str, payload: bytes) -> None:
        self.what = what
        self.data = payload
        self.pos = 0

    def take(self, fmt: str) -> tuple:
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise LinkError(f"{self.what} payload too short: needs {self.pos + size} bytes, "
                            f"got {len(self.data)}", hint="host and device protocol differ?")
        vals = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return vals

    def one(self, fmt: str) -> int | float:
        return self.take(fmt)[0]

    def take_bytes(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise LinkError(f"{self.what} payload too short: needs {self.pos + n} bytes, "
                            f"got {len(self.data)}")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return bytes(b)

    def rest(self) -> bytes:
        b = self.data[self.pos:]
        self.pos = len(self.data)
        return bytes(b)

    def take_str(self) -> str:
        n = int(self.one("<B"))
        return self.take_bytes(n).decode("utf-8", errors="replace")

    def end(self) -> None:
        if self.pos != len(self.data):
            raise LinkError(f"{self.what} payload has {len(self.data) - self.pos} unexpected "
                            f"trailing bytes ({len(self.data)} in all)")


class _Rest(enum.Enum):
    """What follows a `_Laid` message's fixed fields: nothing, raw bytes, or UTF-8 text."""

    NONE = "none"
    BYTES = "bytes"
    TEXT = "text"


@dataclass(frozen=True)
class _Laid:
    """A message laid out as its table says: the fields, in declaration order, packed with
    ``FIELDS`` (a struct format), then per ``REST`` nothing (the payload must end there), the
    last field's bytes, or its text (UTF-8, cut to what fits one frame; undecodable bytes
    read as U+FFFD). Messages of any other layout write their own pack/unpack."""

    TYPE: ClassVar[MsgType]
    FIELDS: ClassVar[str] = "<"
    REST: ClassVar[_Rest] = _Rest.NONE

    def pack(self) -> bytes:
        values = [getattr(self, f.name) for f in dataclasses.fields(self)]
        if self.REST is _Rest.NONE:
            return struct.pack(self.FIELDS, *values)
        head = struct.pack(self.FIELDS, *values[:-1])
        if self.REST is _Rest.BYTES:
            return head + values[-1]
        return head + values[-1].encode("utf-8")[:MAX_PAYLOAD - len(head)]

    @classmethod
    def unpack(cls, payload: bytes) -> Self:
        r = _Reader(cls.TYPE.name, payload)
        values = list(r.take(cls.FIELDS))
        if cls.REST is _Rest.NONE:
            r.end()
        elif cls.REST is _Rest.BYTES:
            values.append(r.rest())
        else:
            values.append(r.rest().decode("utf-8", errors="replace"))
        return cls(*values)


@dataclass(frozen=True)
class Hello(_Laid):
    TYPE: ClassVar[MsgType] = MsgType.HELLO


@dataclass(frozen=True)
class _Chunk(_Laid):
    """A tensor chunk, both directions: u8 tensor, u32 byte offset, then the data bytes.
    Subclasses differ only in TYPE (and so in direction)."""

    FIELDS: ClassVar[str] = "<BI"
    REST: ClassVar[_Rest] = _Rest.BYTES
    tensor: int
    offset: int
    data: bytes


@dataclass(frozen=True)
class LoadInput(_Chunk):
    """Bytes ``data`` written at ``offset`` into input tensor ``tensor``."""

    TYPE: ClassVar[MsgType] = MsgType.LOAD_INPUT


@dataclass(frozen=True)
class Invoke:
    TYPE: ClassVar[MsgType] = MsgType.INVOKE
    profile: bool = True

    def pack(self) -> bytes:
        return bytes([1 if self.profile else 0])

    @classmethod
    def unpack(cls, payload: bytes) -> Invoke:
        r = _Reader("INVOKE", payload)
        flags = int(r.one("<B"))
        r.end()
        return cls(bool(flags & 1))


@dataclass(frozen=True)
class Bench(_Laid):
    TYPE: ClassVar[MsgType] = MsgType.BENCH
    FIELDS: ClassVar[str] = "<I"
    runs: int


@dataclass(frozen=True)
class Audio:
    """16-bit little-endian PCM samples; ``first_sample`` is the stream index of the first."""

    TYPE: ClassVar[MsgType] = MsgType.AUDIO
    first_sample: int
    pcm: bytes

    def pack(self) -> bytes:
        if len(self.pcm) % 2:
            raise ValueError("AUDIO payload must hold whole 16-bit samples")
        return struct.pack("<I", self.first_sample) + self.pcm

    @classmethod
    def unpack(cls, payload: bytes) -> Audio:
        r = _Reader("AUDIO", payload)
        first = int(r.one("<I"))
        pcm = r.rest()
        if len(pcm) % 2:
            raise LinkError(f"AUDIO payload has {len(pcm)} PCM bytes, not whole samples")
        return cls(first, pcm)


@dataclass(frozen=True)
class Ping(_Laid):
    TYPE: ClassVar[MsgType] = MsgType.PING
    REST: ClassVar[_Rest] = _Rest.BYTES
    data: bytes = b""


@dataclass(frozen=True)
class Stop:
    TYPE: ClassVar[MsgType] = MsgType.STOP

    def pack(self) -> bytes:
        return b""

    @classmethod
    def unpack(cls, payload: bytes) -> Stop:
        return cls()


@dataclass(frozen=True)
class Ack(_Laid):
    """Success reply to ``acked`` (a request type); PING's ACK echoes its bytes in ``data``."""

    TYPE: ClassVar[MsgType] = MsgType.ACK
    FIELDS: ClassVar[str] = "<B"
    REST: ClassVar[_Rest] = _Rest.BYTES
    acked: int
    data: bytes = b""


@dataclass(frozen=True)
class Info:
    """The device's self-description, first reply to HELLO (TENSOR frames follow)."""

    TYPE: ClassVar[MsgType] = MsgType.INFO
    version: int
    num_inputs: int
    num_outputs: int
    arena_bytes: int
    num_ops: int
    model_sha256: str
    board: str
    unit: str
    app: str

    def pack(self) -> bytes:
        return (struct.pack("<BBBBIH", self.version, self.num_inputs, self.num_outputs, 0,
                            self.arena_bytes, self.num_ops)
                + bytes.fromhex(self.model_sha256.ljust(64, "0"))
                + _pack_str(self.board) + _pack_str(self.unit) + _pack_str(self.app))

    @classmethod
    def unpack(cls, payload: bytes) -> Info:
        r = _Reader("INFO", payload)
        ver, n_in, n_out, _, arena, n_ops = r.take("<BBBBIH")
        sha = r.take_bytes(32).hex()
        board, unit, app = r.take_str(), r.take_str(), r.take_str()
        r.end()
        return cls(ver, n_in, n_out, arena, n_ops, sha, board, unit, app)


@dataclass(frozen=True)
class TensorDesc:
    """One I/O tensor as the firmware sees it (mirrors ``td_tensor_desc_t``)."""

    TYPE: ClassVar[MsgType] = MsgType.TENSOR
    is_output: bool
    index: int
    dtype: int
    shape: tuple[int, ...]
    scale: float
    zero_point: int
    bytes: int
    name: str

    def pack(self) -> builtins.bytes:
        return (struct.pack("<BBBB", int(self.is_output), self.index, self.dtype,
                            len(self.shape))
                + struct.pack(f"<{len(self.shape)}i", *self.shape)
                + struct.pack("<fiI", self.scale, self.zero_point, self.bytes)
                + _pack_str(self.name, 64))

    @classmethod
    def unpack(cls, payload: builtins.bytes) -> TensorDesc:
        r = _Reader("TENSOR", payload)
        out, idx, dtype, rank = r.take("<BBBB")
        if rank > 6:
            raise LinkError(f"TENSOR descriptor of rank {rank} (at most 6)")
        shape = tuple(int(d) for d in r.take(f"<{rank}i"))
        scale, zp, nbytes = r.take("<fiI")
        name = r.take_str()
        r.end()
        return cls(bool(out), idx, dtype, shape, float(scale), zp, nbytes, name)


@dataclass(frozen=True)
class Output(_Chunk):
    """Bytes ``data`` of output tensor ``tensor`` from byte ``offset`` on."""

    TYPE: ClassVar[MsgType] = MsgType.OUTPUT


@dataclass(frozen=True)
class Profile:
    """Counts of ops ``first .. first+len(counts)-1`` out of ``total`` ops, in ``unit``."""

    TYPE: ClassVar[MsgType] = MsgType.PROFILE
    unit: str
    first: int
    total: int
    counts: tuple[int, ...]

    def pack(self) -> bytes:
        return (_pack_str(self.unit) + struct.pack("<HH", self.first, self.total)
                + struct.pack(f"<{len(self.counts)}I", *self.counts))

    @classmethod
    def unpack(cls, payload: bytes) -> Profile:
        r = _Reader("PROFILE", payload)
        unit = r.take_str()
        first, total = r.take("<HH")
        rest = r.rest()
        if len(rest) % 4:
            raise LinkError(f"PROFILE counts take {len(rest)} bytes, not a multiple of 4")
        counts = struct.unpack(f"<{len(rest) // 4}I", rest)
        return cls(unit, first, total, tuple(counts))


@dataclass(frozen=True)
class Done:
    """End of an INVOKE or BENCH: ``runs`` inferences, min/max/total of their counts; from
    protocol 2 on, the device's stack high-water mark and reserve in bytes (None from a
    version-1 device; 0 where the platform does not own the stack)."""

    TYPE: ClassVar[MsgType] = MsgType.DONE
    request: int
    runs: int
    min: int
    max: int
    total: int
    unit: str
    stack_peak: int | None = None
    stack_size: int | None = None

    @property
    def mean(self) -> float:
        return self.total / self.runs if self.runs else 0.0

    def pack(self) -> bytes:
        stack = (b"" if self.stack_peak is None
                 else struct.pack("<II", self.stack_peak, self.stack_size or 0))
        return (struct.pack("<BIIIQ", self.request, self.runs, self.min, self.max, self.total)
                + _pack_str(self.unit) + stack)

    @classmethod
    def unpack(cls, payload: bytes) -> Done:
        r = _Reader("DONE", payload)
        req, runs, lo, hi, total = r.take("<BIIIQ")
        unit = r.take_str()
        peak = size = None
        if r.pos < len(r.data):
            peak, size = r.take("<II")
        r.end()
        return cls(req, runs, lo, hi, total, unit, peak, size)


@dataclass(frozen=True)
class Event(_Laid):
    """An application event, e.g. a keyword detection: label index, score, device time."""

    TYPE: ClassVar[MsgType] = MsgType.EVENT
    FIELDS: ClassVar[str] = "<HfI"
    label: int
    score: float
    timestamp_ms: int


@dataclass(frozen=True)
class Log(_Laid):
    TYPE: ClassVar[MsgType] = MsgType.LOG
    FIELDS: ClassVar[str] = "<B"
    REST: ClassVar[_Rest] = _Rest.TEXT
    level: int
    text: str


@dataclass(frozen=True)
class Error(_Laid):
    """The device rejected a frame: ``code`` (ErrorCode), ``ref_type`` the offending type."""

    TYPE: ClassVar[MsgType] = MsgType.ERROR
    FIELDS: ClassVar[str] = "<BB"
    REST: ClassVar[_Rest] = _Rest.TEXT
    code: int
    ref_type: int
    text: str = ""

    @property
    def code_name(self) -> str:
        return _name(ErrorCode, self.code)


@dataclass(frozen=True)
class Status:
    """A listening application's periodic figures (unsolicited): audio heard so far, windows
    (inferences), frames, detections, samples lost to overruns, and counts in ``unit`` of the
    time it was busy, of all the time, and of the front end and the model. ``final``: the
    audio source has ended (the last STATUS of a finite stream)."""

    TYPE: ClassVar[MsgType] = MsgType.STATUS
    final: bool
    audio_ms: int
    windows: int
    frames: int
    detections: int
    overruns: int
    busy: int
    elapsed: int
    frontend: int
    model: int
    unit: str

    @property
    def duty_cycle(self) -> float:
        return self.busy / self.elapsed if self.elapsed else 0.0

    def pack(self) -> bytes:
        return (struct.pack("<BIIIIIQQQQ", int(self.final), self.audio_ms, self.windows,
                            self.frames, self.detections, self.overruns, self.busy,
                            self.elapsed, self.frontend, self.model) + _pack_str(self.unit))

    @classmethod
    def unpack(cls, payload: bytes) -> Status:
        r = _Reader("STATUS", payload)
        flags, ms, win, frames, det, over, busy, el, fe, model = r.take("<BIIIIIQQQQ")
        unit = r.take_str()
        r.end()
        return cls(bool(flags & 1), ms, win, frames, det, over, busy, el, fe, model, unit)


Message = (Hello | LoadInput | Invoke | Bench | Audio | Ping | Stop | Ack | Info | TensorDesc
           | Output | Profile | Done | Event | Log | Error | Status)

MESSAGE_CLASSES: dict[int, type] = {
    cls.TYPE: cls for cls in (Hello, LoadInput, Invoke, Bench, Audio, Ping, Stop, Ack, Info,
                              TensorDesc, Output, Profile, Done, Event, Log, Error, Status)
}


def decode_message(frame: Frame) -> Message:
    """The typed message in ``frame``; LinkError for an unknown type or a bad payload."""
    cls = MESSAGE_CLASSES.get(frame.type)
    if cls is None:
        raise LinkError(f"unknown frame type 0x{frame.type:02x} (seq {frame.seq}, "
                        f"{len(frame.payload)} payload bytes)")
    return cls.unpack(frame.payload)  # type: ignore[attr-defined,no-any-return]


def message_frame(msg: Message, seq: int) -> Frame:
    return Frame(int(msg.TYPE), seq, msg.pack())


def to_json(msg: Message, seq: int | None = None) -> dict[str, object]:
    """A JSON-friendly dict of a message (bytes as hex), used by ``monitor --json``."""
    out: dict[str, object] = {"type": msg.TYPE.name}
    if seq is not None:
        out["seq"] = seq
    for f in dataclasses.fields(msg):
        v = getattr(msg, f.name)
        if isinstance(v, bytes):
            v = v.hex()
        elif isinstance(v, tuple):
            v = list(v)
        out[f.name] = v
    if isinstance(msg, Error):
        out["code_name"] = msg.code_name
        out["ref_type_name"] = type_name(msg.ref_type)
    if isinstance(msg, Log):
        out["level_name"] = _name(LogLevel, msg.level)
    return out

