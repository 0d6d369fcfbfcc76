"""Boards are data: one TOML file per board in ``boards/``, validated against schema 1.

A board says which core and features the firmware may use, where its memory is, how its
serial port is wired, how its cycles are counted and how it is flashed or emulated. The C
that differs per chip family lives in ``firmware/platform/<family>/``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from tinydeploy.errors import BoardError
from tinydeploy.resources import boards_dir
from tinydeploy.toolchain import CORE_FLAGS, core_flags

SCHEMA_VERSION = 1
BOARDS_DIR = boards_dir()

# core id -> gcc flags: the toolchain module owns them; "host" builds with the system compiler.
CORES: dict[str, tuple[str, ...]] = {c.value: flags for c, flags in CORE_FLAGS.items()}
FEATURES = frozenset({"dsp", "fpu", "mve"})


class Family(StrEnum):
    """Chip families: each has its C in ``firmware/platform/<family>/``. ``host`` is this
    computer (the system compiler, a pseudo-terminal as the UART)."""

    CMSDK = "cmsdk"
    STM32F4 = "stm32f4"
    NRF5 = "nrf5"
    HOST = "host"


class RunnerKind(StrEnum):
    """The ways to start a firmware (``runners = [{name = ...}]`` in a board file); the flash
    stage's registry has one runner per kind."""

    QEMU = "qemu"
    HOST = "host"
    PYOCD = "pyocd"
    NRFJPROG = "nrfjprog"
    PLATFORMIO = "platformio"


FAMILIES = frozenset(Family)
UART_KINDS = frozenset({"cmsdk-uart", "stm32-usart", "nrf-uart0", "pty"})
# [audio] kinds: a microphone the listening kws firmware reads (firmware/audio/<kind>/)
AUDIO_KINDS = frozenset({"nrf-pdm"})
AUDIO_FIELDS = frozenset({"kind", "clk_pin", "din_pin", "gain_db", "power_pin", "power_on_ms"})
UART_USB = frozenset({"probe", "adapter"})
CYCLE_COUNTERS = frozenset({"dwt", "systick", "timer0", "clock"})
RUNNERS = frozenset(RunnerKind)
MEMORY_KINDS = frozenset({"flash", "ram"})


@dataclass(frozen=True)
class MemoryRegion:
    name: str
    kind: str
    origin: int
    size: int


@dataclass(frozen=True)
class Uart:
    kind: str
    base: int = 0
    tx_pin: int | str | None = None
    rx_pin: int | str | None = None
    baud: int = 115200
    # The kws app streams 16 kHz int16 PCM over the link (>= 333 kbit/s with framing, see
    # tinydeploy/kws/realtime.py): its rate, when the board's UART and its USB bridge carry
    # more than ``baud``.
    kws_baud: int | None = None
    # Which USB serial port carries the link: "probe", the on-board debug probe's virtual COM
    # port, or "adapter", an external USB-serial adapter on the UART's pins.
    usb: str = "probe"

    def baud_for(self, app: str | None) -> int:
        """The link's rate for ``app`` (the firmware and the host side agree on it)."""
        if app == "kws" and self.kws_baud is not None:
            return self.kws_baud
        return self.baud


@dataclass(frozen=True)
class Audio:
    """The board's microphone: ``kind`` (`AUDIO_KINDS`), the PDM clock and data pins, the
    gain in dB (-20 .. +20 in 0.5 dB steps), and an optional GPIO that powers the microphone
    with its start-up time."""

    kind: str
    clk_pin: int
    din_pin: int
    gain_db: float = 0.0
    power_pin: int | None = None
    power_on_ms: int = 10

    @property
    def gain_register(self) -> int:
        """GAINL/GAINR: 0x28 is 0 dB, one step per 0.5 dB (nRF52840 PS 6.11.9.10)."""
        return 0x28 + round(self.gain_db * 2)


@dataclass(frozen=True)
class Runner:
    name: str
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Board:
    id: str
    name: str
    mcu: str
    family: Family
    core: str
    clock_hz: int
    cycle_counter: str
    memory: tuple[MemoryRegion, ...]
    uart: Uart
    aliases: tuple[str, ...] = ()
    features: frozenset[str] = frozenset()
    runners: tuple[Runner, ...] = ()
    qemu_machine: str | None = None
    emulate: str | None = None
    platformio: dict[str, str] = field(default_factory=dict)
    path: Path | None = None
    audio: Audio | None = None

    @property
    def is_host(self) -> bool:
        """The host "board": firmware built with the system compiler, run as a process."""
        return self.family == Family.HOST

    @property
    def emulated(self) -> bool:
        """True when the board itself runs here (QEMU machine or the host)."""
        return self.qemu_machine is not None or self.is_host

    @property
    def cflags(self) -> tuple[str, ...]:
        return core_flags(self.core)

    def region(self, kind: str) -> MemoryRegion:
        """The first (main) region of a kind: the one code/data are linked into."""
        for r in self.memory:
            if r.kind == kind:
                return r
        raise BoardError(f"board '{self.id}' has no {kind} region")

    @property
    def ram_bytes(self) -> int:
        return self.region("ram").size

    @property
    def flash_bytes(self) -> int:
        return self.region("flash").size

    def limited_to(self, real: Board) -> Board:
        """This (emulated) board with RAM and flash capped at ``real``'s sizes.

        Used by ``--emulate``: the firmware runs on the emulator with the real board's budget.
        """
        mem = []
        for r in self.memory:
            try:
                cap = real.region(r.kind).size
            except BoardError:
                cap = r.size
            mem.append(replace(r, size=min(r.size, cap)))
        return replace(self, memory=tuple(mem), id=f"{real.id}@{self.id}",
                       name=f"{real.name} emulated on {self.name}")


def _fail(path: Path, msg: str) -> BoardError:
    return BoardError(f"{path.name}: {msg}", hint="see boards/README.md for the board schema")


def _get(d: dict[str, Any], key: str, typ: type | tuple[type, ...], path: Path,
         where: str = "", default: Any = ...) -> Any:
    if key not in d:
        if default is not ...:
            return default
        raise _fail(path, f"missing required field '{where}{key}'")
    val = d[key]
    if isinstance(val, bool) and bool not in (typ if isinstance(typ, tuple) else (typ,)):
        raise _fail(path, f"field '{where}{key}' must be {_tname(typ)}, got {val!r}")
    if not isinstance(val, typ):
        raise _fail(path, f"field '{where}{key}' must be {_tname(typ)}, got {val!r}")
    return val


def _tname(typ: type | tuple[type, ...]) -> str:
    if isinstance(typ, tuple):
        return " or ".join(t.__name__ for t in typ)
    return typ.__name__


def parse_board(data: dict[str, Any], path: Path) -> Board:
    """Validate one board document; every problem is a BoardError naming file and field."""
    schema = _get(data, "schema", int, path)
    if schema != SCHEMA_VERSION:
        raise _fail(path, f"schema {schema} is not supported (this tinydeploy reads "
                          f"schema {SCHEMA_VERSION})")
    known = {"schema", "id", "name", "aliases", "mcu", "family", "core", "features",
             "clock_hz", "cycle_counter", "memory", "uart", "runners", "qemu", "emulate",
             "platformio", "audio"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise _fail(path, f"unknown field '{unknown[0]}'")
    bid = _get(data, "id", str, path)
    if path.suffix == ".toml" and path.stem != bid:
        raise _fail(path, f"id '{bid}' does not match the file name '{path.stem}'")
    core = _get(data, "core", str, path)
    if core not in CORES:
        raise _fail(path, f"unknown core '{core}' (known: {', '.join(sorted(CORES))})")
    family = _get(data, "family", str, path)
    if family not in FAMILIES:
        raise _fail(path, f"unknown family '{family}' (known: {', '.join(sorted(FAMILIES))})")
    features = _get(data, "features", list, path, default=[])
    for f in features:
        if f not in FEATURES:
            raise _fail(path, f"unknown feature '{f}' (known: {', '.join(sorted(FEATURES))})")
    clock = _get(data, "clock_hz", int, path)
    if clock <= 0:
        raise _fail(path, f"clock_hz must be positive, got {clock}")
    counter = _get(data, "cycle_counter", str, path)
    if counter not in CYCLE_COUNTERS:
        raise _fail(path, f"unknown cycle_counter '{counter}'")

    regions = []
    for i, m in enumerate(_get(data, "memory", list, path)):
        if not isinstance(m, dict):
            raise _fail(path, f"memory[{i}] must be a table")
        w = f"memory[{i}]."
        kind = _get(m, "kind", str, path, w)
        if kind not in MEMORY_KINDS:
            raise _fail(path, f"memory[{i}].kind '{kind}' must be flash or ram")
        origin = _get(m, "origin", int, path, w)
        size = _get(m, "size", int, path, w)
        if size <= 0 or origin < 0:
            raise _fail(path, f"memory[{i}] has origin {origin:#x} and size {size}: "
                              "origin must be ≥ 0 and size > 0")
        regions.append(MemoryRegion(_get(m, "name", str, path, w), kind, origin, size))
    for kind in ("flash", "ram"):
        if not any(r.kind == kind for r in regions):
            raise _fail(path, f"no {kind} memory region")
    ordered = sorted(regions, key=lambda r: r.origin)
    if family != Family.HOST:
        for a, b in zip(ordered, ordered[1:], strict=False):
            if a.origin + a.size > b.origin:
                raise _fail(path, f"memory regions '{a.name}' and '{b.name}' overlap")

    u = _get(data, "uart", dict, path)
    ukind = _get(u, "kind", str, path, "uart.")
    if ukind not in UART_KINDS:
        raise _fail(path, f"unknown uart.kind '{ukind}' (known: {', '.join(sorted(UART_KINDS))})")
    uart = Uart(ukind, _get(u, "base", int, path, "uart.", 0),
                _get(u, "tx_pin", (int, str), path, "uart.", None),
                _get(u, "rx_pin", (int, str), path, "uart.", None),
                _get(u, "baud", int, path, "uart.", 115200),
                _get(u, "kws_baud", int, path, "uart.", None),
                _get(u, "usb", str, path, "uart.", "probe"))
    if uart.usb not in UART_USB:
        raise _fail(path, f"unknown uart.usb '{uart.usb}' (known: {', '.join(sorted(UART_USB))})")
    for key in ("baud", "kws_baud"):
        v = getattr(uart, key)
        if v is not None and not 1200 <= v <= 12_000_000:
            raise _fail(path, f"uart.{key} = {v} is not a serial rate (1200 .. 12,000,000)")

    runners = []
    for i, r in enumerate(_get(data, "runners", list, path, default=[])):
        name = _get(r, "name", str, path, f"runners[{i}].")
        if name not in RUNNERS:
            raise _fail(path, f"unknown runner '{name}' (known: {', '.join(sorted(RUNNERS))})")
        args = _get(r, "args", list, path, f"runners[{i}].", [])
        runners.append(Runner(name, tuple(str(a) for a in args)))
    qemu = _get(data, "qemu", dict, path, default={})
    machine = _get(qemu, "machine", str, path, "qemu.", None) if qemu else None
    audio = _parse_audio(data, path)

    return Board(
        id=bid,
        name=_get(data, "name", str, path),
        mcu=_get(data, "mcu", str, path),
        family=Family(family),
        core=core,
        clock_hz=clock,
        cycle_counter=counter,
        memory=tuple(regions),
        uart=uart,
        aliases=tuple(_get(data, "aliases", list, path, default=[])),
        features=frozenset(features),
        runners=tuple(runners),
        qemu_machine=machine,
        emulate=_get(data, "emulate", str, path, default=None),
        platformio=dict(_get(data, "platformio", dict, path, default={})),
        path=path,
        audio=audio,
    )


def _parse_audio(data: dict[str, Any], path: Path) -> Audio | None:
    """The optional [audio] table (boards/README.md)."""
    a = _get(data, "audio", dict, path, default=None)
    if a is None:
        return None
    unknown = sorted(set(a) - AUDIO_FIELDS)
    if unknown:
        raise _fail(path, f"unknown field 'audio.{unknown[0]}'")
    kind = _get(a, "kind", str, path, "audio.")
    if kind not in AUDIO_KINDS:
        raise _fail(path, f"unknown audio.kind '{kind}' (known: {', '.join(sorted(AUDIO_KINDS))})")
    pins = {}
    for key in ("clk_pin", "din_pin", "power_pin"):
        v = _get(a, key, int, path, "audio.", None)
        if v is None and key != "power_pin":
            raise _fail(path, f"audio.{key} is required for audio.kind '{kind}'")
        if v is not None and not 0 <= v < 48:
            raise _fail(path, f"audio.{key} = {v} is not an nRF52840 pin (0..47: P0.n = n, "
                              f"P1.n = 32 + n)")
        pins[key] = v
    gain = _get(a, "gain_db", (int, float), path, "audio.", 0.0)
    if not -20.0 <= gain <= 20.0 or gain * 2 != round(gain * 2):
        raise _fail(path, f"audio.gain_db = {gain} must be -20 .. +20 in 0.5 dB steps")
    on_ms = _get(a, "power_on_ms", int, path, "audio.", 10)
    if not 0 <= on_ms <= 1000:
        raise _fail(path, f"audio.power_on_ms = {on_ms} must be 0 .. 1000")
    if len({pins["clk_pin"], pins["din_pin"]} | ({pins["power_pin"]} - {None})) < \
            2 + (pins["power_pin"] is not None):
        raise _fail(path, "audio pins must differ (clk_pin, din_pin, power_pin)")
    return Audio(kind, int(pins["clk_pin"]), int(pins["din_pin"]), float(gain),
                 pins["power_pin"], on_ms)


def load_board_file(path: Path) -> Board:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise _fail(path, f"not valid TOML: {e}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise BoardError(f"{path}: cannot read board file: {e}") from None
    return parse_board(data, path)


def list_boards(directory: Path = BOARDS_DIR) -> list[Board]:
    """All boards, sorted by id."""
    boards = [load_board_file(p) for p in sorted(directory.glob("*.toml"))]
    seen: dict[str, str] = {}
    for b in boards:
        for name in (b.id, *b.aliases):
            if name in seen:
                raise BoardError(f"board name '{name}' is used by both '{seen[name]}' "
                                 f"and '{b.id}'")
            seen[name] = b.id
    return boards


def get_board(name: str, directory: Path = BOARDS_DIR) -> Board:
    """A board by id or alias (case-insensitive), or a BoardError listing the known ids."""
    boards = list_boards(directory)
    key = name.lower()
    for b in boards:
        if key == b.id or key in (a.lower() for a in b.aliases):
            return b
    raise BoardError(f"unknown board '{name}'",
                     hint="known boards: " + ", ".join(b.id for b in boards)
                     + " (tinydeploy boards lists them)")


def emulation_target(board: Board, directory: Path = BOARDS_DIR) -> Board:
    """The emulated board that stands in for ``board`` under ``--emulate``, with ``board``'s
    memory limits."""
    if board.emulated:
        return board
    if not board.emulate:
        raise BoardError(f"board '{board.id}' has no emulated stand-in",
                         hint="its board file would need an 'emulate = \"<board id>\"' line")
    return get_board(board.emulate, directory).limited_to(board)
