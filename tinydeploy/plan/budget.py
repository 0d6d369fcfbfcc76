"""The RAM and flash budget: every byte accounted for before anything is built.

RAM = arena (the planned layout) + stack + application buffers (serial frames, the audio ring
of ``kws``) + static data (``.data``/``.bss`` of platform, application and kernels).
Flash = weights and constants (every `ConstArray` the kernels emit, each 16-byte aligned)
+ code (kernels, the generated op sequence with its parameter structs, platform, application).

Before a build, stack, code and static data are *estimates* from the tables below (per kernel
op and implementation, per application, per chip family; the application buffers mirror the
statics of ``firmware/app/*/main.c``); they err on the generous side so that
"fits" here rarely turns into "does not fit" after the build. After a build, the build stage
passes the measured figures (``-fstack-usage`` call-chain maximum, section sizes from the ELF)
and the budget is exact. `Budget.estimated` says which figures are estimates.

A model that does not fit is a `BudgetError` naming the board, each figure, how much it is
over, and the boards that would fit it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tinydeploy.apps import App
from tinydeploy.boards import Board
from tinydeploy.errors import BudgetError
from tinydeploy.kernels.registry import Selection
from tinydeploy.model.ir import Graph

CONST_ALIGN = 16
APPS: tuple[str, ...] = tuple(a.value for a in App)   # plain strings: argparse shows them

# Stack frame (bytes) of one kernel call including its callees (requantize, inner helpers),
# by builtin op; optimised implementations keep more values in registers and spill more.
KERNEL_STACK: Mapping[str, int] = {
    "CONV_2D": 136, "DEPTHWISE_CONV_2D": 128, "FULLY_CONNECTED": 96,
    "AVERAGE_POOL_2D": 88, "MAX_POOL_2D": 80, "SOFTMAX": 152, "ADD": 112, "MUL": 104,
    "SUB": 112, "CONCATENATION": 80, "MEAN": 96, "PAD": 72, "SVDF": 160,
    "UNIDIRECTIONAL_SEQUENCE_LSTM": 256, "LOGISTIC": 96, "TANH": 96,
}
KERNEL_STACK_DEFAULT = 160
# dsp kernels keep their work buffers in their frames (the pointwise, window and
# td_conv2d_s8_dsp rows buffer with its state: 832 B; the 3x3 lines depthwise's ring of
# lines: 384 B) instead of arena scratch
IMPL_STACK_EXTRA: Mapping[str, int] = {"ref": 0, "dsp": 1008, "mve": 96, "alias": 0}

# Code bytes per kernel symbol, by builtin op: the reference kernels' measured sizes (arm-none-
# eabi-gcc 12, -O2, Cortex-M0 and M4) plus ~10 %; DSP/MVE variants unroll, by op or a factor.
KERNEL_CODE: Mapping[str, int] = {
    "CONV_2D": 820, "DEPTHWISE_CONV_2D": 740, "FULLY_CONNECTED": 440,
    "AVERAGE_POOL_2D": 460, "MAX_POOL_2D": 440, "SOFTMAX": 1_320, "ADD": 980, "MUL": 800,
    "SUB": 980, "CONCATENATION": 160, "MEAN": 600, "PAD": 400, "SVDF": 1_400,
    "UNIDIRECTIONAL_SEQUENCE_LSTM": 3_000, "LOGISTIC": 700, "TANH": 700,
}
KERNEL_CODE_DSP: Mapping[str, int] = {   # measured per symbol (-O2, Cortex-M4) + ~10 %
    "CONV_2D": 2_600, "DEPTHWISE_CONV_2D": 1_900, "FULLY_CONNECTED": 2_450,
}
KERNEL_CODE_DEFAULT = 1_200
IMPL_CODE_FACTOR: Mapping[str, float] = {"ref": 1.0, "dsp": 2.2, "mve": 2.5, "alias": 0.0}
REQUANT_CODE = 200           # the one requantize primitive, shared
PER_OP_CODE = 24             # one call in td_model_invoke (+ profiling hook)
PER_PARAM_BYTES = 4          # one literal field of a const parameter struct

# Per chip family: startup, vector table, UART, cycle counter, libgcc helpers.
PLATFORM_CODE: Mapping[str, int] = {"cmsdk": 2_000, "stm32f4": 2_400, "nrf5": 2_200,
                                    "host": 0}
PLATFORM_STACK = 96          # reset handler + one exception frame (with FP context: 104)
PLATFORM_STATIC = 64
# Per application (with the serial link): code, stack frames above td_model_invoke and the
# link, static data. Measured: bench ~6.3 KB of code with the platform, 1.53-1.56 KB of stack.
APP_CODE: Mapping[str, int] = {"bench": 4_400, "validate": 5_000, "kws": 16_000}
APP_STACK: Mapping[str, int] = {"bench": 192, "validate": 256, "kws": 384}
APP_STATIC: Mapping[str, int] = {"bench": 96, "validate": 128, "kws": 256}
INVOKE_STACK = 32            # td_model_invoke itself

# Application buffers outside the arena, mirroring the statics of firmware/app/*/main.c.
LINK_STATE_BYTES = 276       # td_link_t: rx block (TD_LINK_ENCODED_MAX = 264) + counters
LINK_STACK = 600             # a reply on its way out (td_link_sendf: fields COBS-encoded as packed)
KWS_FRONTEND_BYTES = 4 * (1_024 + 40)          # td_frontend_scratch_t: FFT + mel bands


def kws_detector_bytes(avg_windows: int = 16, labels: int = 16) -> int:
    """sizeof(td_kws_detector_t) with its history sized TD_KWS_MAX_AVG x TD_KWS_MAX_LABELS:
    configuration (a threshold per label), score history, counters, last event, averages
    (tests/test_budget_sizes.py checks it against the compiler's sizeof)."""
    return 5 * 4 + 4 * labels + 4 * avg_windows * labels + 3 * 4 + 4 + 4 * labels


KWS_DETECTOR_BYTES = kws_detector_bytes()


def kws_app_buffers(input_bytes: int, fe_scratch: int, *, listen_blocks: int | None = None,
                    stride: int = 320, window: int = 640, fe_in_arena: bool = False,
                    avg_windows: int | None = None, labels: int = 16
                    ) -> tuple[tuple[str, int], ...]:
    """The kws app's buffers outside the arena (firmware/app/kws/): the serial mode's ring of
    one analysis window (``listen_blocks`` None), or the listening mode's ring of
    ``listen_blocks`` blocks of one stride; the feature rows; the front end's scratch unless
    it borrows the idle arena; the detector (sized to ``avg_windows`` x ``labels`` when
    listening, else the default maxima)."""
    link = ("serial link state", LINK_STATE_BYTES)
    if listen_blocks is None:
        audio = ("audio ring (one window)", 2 * window)
        det = KWS_DETECTOR_BYTES
    else:
        audio = (f"audio blocks ({listen_blocks} x {stride} samples)",
                 2 * listen_blocks * stride)
        det = kws_detector_bytes(avg_windows or 16, labels)
    bufs = [link, audio, ("feature rows", input_bytes)]
    if not fe_in_arena:
        bufs.append(("front-end scratch", fe_scratch))
    bufs.append(("detector", det))
    return tuple(bufs)

class _Parts:
    """A memory's budget: every field but ``available`` is a part of ``total``, which is
    ``over`` by what exceeds ``available`` (0 when it fits)."""

    available: int

    @property
    def total(self) -> int:
        return sum(v for k, v in vars(self).items() if k != "available")

    @property
    def over(self) -> int:
        return max(0, self.total - self.available)


@dataclass(frozen=True)
class RamBudget(_Parts):
    arena: int
    stack: int
    buffers: int
    static: int
    available: int


@dataclass(frozen=True)
class FlashBudget(_Parts):
    weights: int
    code: int
    available: int


@dataclass(frozen=True)
class Budget:
    """The figures for one model on one board with one application."""

    board: str
    app: str
    ram: RamBudget
    flash: FlashBudget
    app_buffers: tuple[tuple[str, int], ...]
    estimated: frozenset[str]  # which of "stack", "code", "static" are table estimates
    stack_need: int = 0        # the deepest call chain (estimated or measured)
    stack_reserved: int | None = None  # what the linker script reserves, when known

    @property
    def fits(self) -> bool:
        return self.ram.over == 0 and self.flash.over == 0

    def on(self, board: Board) -> Budget:
        """The same figures checked against another board's memory."""
        return Budget(board.id, self.app,
                      RamBudget(self.ram.arena, self.ram.stack, self.ram.buffers,
                                self.ram.static, board.ram_bytes),
                      FlashBudget(self.flash.weights, self.flash.code, board.flash_bytes),
                      self.app_buffers, self.estimated, self.stack_need, self.stack_reserved)


def weights_bytes(selection: Selection) -> int:
    """Flash taken by the constant arrays of the selected kernels (each 16-byte aligned),
    byte-identical arrays counted once: codegen stores them once."""
    total = 0
    seen: set[tuple[str, str, int, str]] = set()
    for c in selection.choices:
        if c.call is None:
            continue
        for arr in c.call.consts:
            if arr.key in seen:
                continue
            seen.add(arr.key)
            total += -(-int(arr.values.nbytes) // CONST_ALIGN) * CONST_ALIGN
    return total


# Every board reserves the stack from its call-graph bound plus a margin instead of a fixed
# size (`--stack` overrides it): a fixed 4 KB was 2.7x the DS-CNN's need.
STACK_MARGIN_MIN = 256   # bytes; or an eighth of the bound, whichever is larger
STACK_RESERVE_ALIGN = 64


def stack_margin(bound: int) -> int:
    """Head room over a stack bound, max(256 B, bound / 8), for what the call graph cannot see.

    The bound (`tinydeploy.build.stack.worst_stack`) already holds the deepest path from
    ``Reset_Handler`` (calls through the link's handler pointer resolved to their possible
    targets), the deepest interrupt handler and one exception entry: 32 B, or 104 B with the
    FP context on a core with an FPU (M4F, M7, M33, M55: lazy stacking reserves the space
    whenever FP registers are live). What the graph misses: libgcc calls the compiler inserts
    (``__aeabi_uldivmod`` and ``__udivmoddi4``, 40 B; the Cortex-M0's division helpers,
    16 B), a second exception entry of a fault taken inside an interrupt (104 B), and
    newlib leaf functions counted at a flat 64 B that may use a little more. Their sum stays
    below 256 B; the bound / 8 term covers larger builds' proportional slack. A fault report
    itself (the fault handler formatting and sending one LOG frame) is not covered: it
    ends the program, and the stack sits at the bottom of RAM, so running out there faults
    instead of corrupting data. The device's painted high-water mark checks all of it
    (tests/test_stack_peak.py)."""
    return max(STACK_MARGIN_MIN, bound // 8)


def sized_stack_reserve(bound: int) -> int:
    """The stack reserved: the bound plus `stack_margin`, rounded up to 64."""
    n = bound + stack_margin(bound)
    return -(-n // STACK_RESERVE_ALIGN) * STACK_RESERVE_ALIGN


def stack_estimate(selection: Selection, app: str) -> int:
    """Deepest call chain: platform + app + the deeper of (td_model_invoke + the hungriest
    kernel) and (a serial reply being sent)."""
    deepest = 0
    for c in selection.choices:
        v = c.variant
        if v.alias:
            continue
        frame = KERNEL_STACK.get(v.op, KERNEL_STACK_DEFAULT) + IMPL_STACK_EXTRA.get(v.impl, 64)
        deepest = max(deepest, frame)
    return PLATFORM_STACK + APP_STACK.get(app, 256) + max(INVOKE_STACK + deepest, LINK_STACK)


def code_estimate(selection: Selection, app: str, family: str) -> int:
    """Kernels (each symbol once) + the op sequence and its parameter structs + platform +
    application."""
    kernels: dict[str, int] = {}
    per_op = 0
    for c in selection.choices:
        v = c.variant
        if v.alias:
            continue
        if v.code_bytes:
            size = float(v.code_bytes)
        elif v.impl == "dsp" and v.op in KERNEL_CODE_DSP:
            size = float(KERNEL_CODE_DSP[v.op])
        else:
            size = KERNEL_CODE.get(v.op, KERNEL_CODE_DEFAULT) * IMPL_CODE_FACTOR.get(v.impl, 2.2)
        kernels[v.symbol] = int(size)
        params = len(c.call.params) if c.call is not None else 0
        per_op += PER_OP_CODE + PER_PARAM_BYTES * params
    return (sum(kernels.values()) + (REQUANT_CODE if kernels else 0) + per_op
            + PLATFORM_CODE.get(family, 2_000) + APP_CODE.get(app, 4_000))


def eembc_input_buffer(ram_bytes: int) -> int:
    """TD_EEMBC_DB_BYTES of firmware/app/eembc/td_eembc.h, chosen by the board's RAM."""
    return 1024 if ram_bytes <= 32 * 1024 else 4096 if ram_bytes <= 256 * 1024 else 32768


def default_app_buffers(app: str, input_bytes: int = 0, num_ops: int = 0,
                        ram_bytes: int = 0) -> tuple[tuple[str, int], ...]:
    """Buffers the application keeps outside the arena (they must survive between
    inferences, or be written while an inference runs). ``input_bytes`` sizes the kws
    feature rows, ``num_ops`` the per-op cycle counters, ``ram_bytes`` (the board's) the
    eembc input buffer."""
    if app not in APPS:
        raise BudgetError(f"unknown application '{app}'", hint="known: " + ", ".join(APPS))
    link = ("serial link state", LINK_STATE_BYTES)
    if app == "bench":
        return (link, ("per-op counters", 12 * num_ops))
    if app == "validate":
        return (link, ("per-op counters", 4 * num_ops))
    if app == "eembc":
        return (("input buffer", eembc_input_buffer(ram_bytes)),
                ("command line and output text", 129 + 96 + 40))
    return kws_app_buffers(input_bytes, KWS_FRONTEND_BYTES)


def compute_budget(selection: Selection, arena_bytes: int, board: Board, app: str = "bench", *,
                   input_bytes: int = 0,
                   app_buffers: Sequence[tuple[str, int]] | None = None,
                   stack_bytes: int | None = None, code_bytes: int | None = None,
                   static_bytes: int | None = None,
                   stack_reserved: int | None = None) -> Budget:
    """All RAM and flash figures for a planned model on ``board``.

    ``stack_bytes``, ``code_bytes`` and ``static_bytes`` are measured figures from a build;
    when None the tables' estimates are used (and named in ``Budget.estimated``).
    ``stack_reserved`` is the stack the firmware's linker script sets aside (the build's
    ``--stack``); RAM then counts the larger of the need and the reservation.
    """
    bufs = tuple(app_buffers) if app_buffers is not None else default_app_buffers(
        app, input_bytes, len(selection.choices), board.ram_bytes)
    estimated = set()
    if stack_bytes is None:
        stack_bytes = stack_estimate(selection, app)
        estimated.add("stack")
    if code_bytes is None:
        code_bytes = code_estimate(selection, app, board.family)
        estimated.add("code")
    if static_bytes is None:
        static_bytes = PLATFORM_STATIC + APP_STATIC.get(app, 128)
        estimated.add("static")
    stack = max(stack_bytes, stack_reserved or 0)
    ram = RamBudget(arena_bytes, stack, sum(n for _, n in bufs), static_bytes,
                    board.ram_bytes)
    flash = FlashBudget(weights_bytes(selection), code_bytes, board.flash_bytes)
    return Budget(board.id, app, ram, flash, bufs, frozenset(estimated), stack_bytes,
                  stack_reserved)


def boards_that_fit(budget: Budget, boards: Iterable[Board]) -> list[str]:
    """Ids of the boards (other than the budget's own) whose RAM and flash hold the model."""
    return [b.id for b in boards if b.id != budget.board and not b.is_host
            and budget.on(b).fits]


def describe(budget: Budget) -> str:
    r, f = budget.ram, budget.flash
    ram = (f"RAM {r.total:,} B (arena {r.arena:,} + stack {r.stack:,} + buffers "
           f"{r.buffers:,} + static {r.static:,}) of {r.available:,}")
    ram += f": over by {r.over:,}" if r.over else ": ok"
    flash = (f"flash {f.total:,} B (weights {f.weights:,} + code {f.code:,}) of "
             f"{f.available:,}")
    flash += f": over by {f.over:,}" if f.over else ": ok"
    return f"{ram}; {flash}"


def check_budget(budget: Budget, boards: Iterable[Board] | None = None) -> None:
    """Raise BudgetError when the model does not fit, with every figure and the boards that
    would hold it (from ``boards``, default: every board in boards/)."""
    if budget.fits:
        return
    if boards is None:
        from tinydeploy.boards import list_boards

        boards = list_boards()
    fit = boards_that_fit(budget, boards)
    hint = ("fits on: " + ", ".join(fit)) if fit else (
        "no known board holds it: shrink the model (fewer channels, smaller input)")
    if budget.stack_reserved is not None and budget.ram.over:
        hint += (f"; the stack reservation is {budget.stack_reserved:,} B for an estimated "
                 f"need of {budget.stack_need:,} B (build --stack)")
    if "stack" in budget.estimated or "code" in budget.estimated:
        hint += "; stack and code are estimates until built"
    raise BudgetError(f"model does not fit board '{budget.board}' with app "
                      f"'{budget.app}': {describe(budget)}", hint=hint)


def check_constants_fit(graph: Graph, board: Board) -> None:
    """Fail before kernel selection when the model's constant data alone exceeds the board's
    flash: preparing kernels transforms every weight, which for a model far too large (a
    100 MB constant) costs seconds of work whose only outcome is this same verdict."""
    if board.is_host:
        return
    used: set[int] = set()
    total = 0
    for op in graph.operators:
        for i in op.inputs:
            if i >= 0 and i not in used and graph.tensor(i).data is not None:
                used.add(i)
                total += graph.tensor(i).nbytes
    flash = board.region("flash").size
    if total > flash:
        raise BudgetError(f"model does not fit board '{board.id}': its constants are "
                          f"{total:,} B, the board has {flash:,} B of flash",
                          hint="shrink the model (fewer channels, smaller layers), or pick a "
                               "board with more flash (tinydeploy boards)")
