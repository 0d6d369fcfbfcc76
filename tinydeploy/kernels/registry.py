"""The kernel registry: the single table of supported ops and the `select` stage.

Every op tinydeploy can compile is described by one or more `KernelVariant`s registered here
by the op modules listed in `VARIANT_MODULES`. A variant says which C symbol implements the
op, which sources it needs, which core features it requires, whether it accepts a given
operator (from static shapes, dtypes and quantization only) and how to prepare it: `prepare`
does all of TFLite's Prepare-time work in Python (multipliers, shifts, padding, activation
ranges, output shapes) and returns a `KernelCall` from which codegen emits C with no decision
left.

Invariants:

* `select_kernels` picks exactly one variant per operator, in op order; among the variants
  whose features the board has and whose `accepts` returns None, the highest `priority` wins,
  ties broken by `impl` then `symbol` (so the choice is reproducible);
* `SUPPORTED_OPS` is derived from the registry, never written by hand;
* an op without an accepting variant is an `UnsupportedError` naming the op index, its type
  and every variant's reason.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tinydeploy.errors import UnsupportedError
from tinydeploy.model.ir import Graph, Operator


@dataclass(frozen=True, eq=False)
class ConstArray:
    """A constant array emitted into model_data.c (const, 16-byte aligned).

    ``values`` is 1-D, in the layout the kernel reads; ``name`` is unique within the op.
    """

    name: str
    ctype: str
    values: np.ndarray

    @property
    def key(self) -> tuple[str, str, int, str]:
        """Equal keys: byte-identical arrays of one C type, which codegen stores once (a
        filter shared by several ops, a repeated requantization table)."""
        v = np.ascontiguousarray(np.asarray(self.values).reshape(-1))
        return self.ctype, v.dtype.str, v.size, hashlib.sha256(v.tobytes()).hexdigest()


@dataclass(frozen=True, eq=False)
class KernelCall:
    """Everything codegen needs to emit one op; no decision is left to the template.

    ``params`` maps struct fields to literals (int, float or str); a str value ``"@x"`` is a
    pointer to the op's ConstArray named ``x``, ``"NULL"`` a null pointer. ``args`` are the
    pointer arguments after ``&params``: ``"in0"``, ``"in1"``, ..., ``"out0"``, ``"scratch"``.
    """

    symbol: str
    params_type: str
    params: tuple[tuple[str, int | float | str], ...]
    consts: tuple[ConstArray, ...]
    args: tuple[str, ...]
    scratch_bytes: int = 0
    instructions: int = 0   # estimated instructions per run on a Cortex-M4 (0: no estimate)

    @property
    def const_bytes(self) -> int:
        """Flash taken by the op's constant arrays (weights, bias, requantization)."""
        return sum(int(c.values.nbytes) for c in self.consts)

    def const(self, name: str) -> ConstArray:
        for c in self.consts:
            if c.name == name:
                return c
        raise KeyError(f"{self.symbol} has no constant array '{name}'")

    def param(self, name: str) -> int | float | str:
        for k, v in self.params:
            if k == name:
                return v
        raise KeyError(f"{self.symbol} has no parameter '{name}'")


@dataclass(frozen=True)
class KernelVariant:
    """One implementation of one op. ``sources`` are relative to ``firmware/``.

    ``inplace``: output 0 may sit at input 0's offset (elementwise kernels).
    ``access``: the kernel's declared read/write order (a function of its `KernelCall`
    returning a `tinydeploy.kernels.access.AccessOrder`), from which the planner derives the
    partial overlaps of output 0 over input 0 it tolerates; None: no overlap at all.
    ``twins``: symbols of variants of the same op that accept the same operators and compute
    the same bytes at the same cost in another access order (front to back, back to front);
    the planner may put one in this variant's place to overlap buffers better.
    ``estimate``: the estimated instructions of one of this variant's calls with its rows
    changed (a streamed row window, which no op on those rows has: the kernel reads
    ``in_h`` rows with ``pad_h`` padded above); None: the call's own estimate stands for it.
    """

    op: str
    impl: str
    symbol: str
    sources: tuple[str, ...]
    requires: frozenset[str]
    accepts: Callable[[Graph, Operator], str | None] = field(compare=False)
    prepare: Callable[[Graph, Operator], KernelCall] = field(compare=False)
    inplace: bool = False
    alias: bool = False
    priority: int = 0
    access: Callable[[KernelCall], Any] | None = field(default=None, compare=False)
    code_bytes: int = 0   # measured .text of the kernel (-O2, its core) + ~10 %; 0: unknown
    twins: tuple[str, ...] = ()
    estimate: Callable[[KernelCall], int] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class KernelChoice:
    op_index: int
    variant: KernelVariant
    call: KernelCall | None  # None for aliases


@dataclass(frozen=True)
class Selection:
    """One choice per operator, in op order."""

    choices: tuple[KernelChoice, ...]

    @property
    def sources(self) -> tuple[str, ...]:
        """Sorted unique source files (relative to firmware/) of the chosen variants."""
        return tuple(sorted({s for c in self.choices for s in c.variant.sources}))

    @property
    def symbols(self) -> tuple[str, ...]:
        return tuple(sorted({c.variant.symbol for c in self.choices if not c.variant.alias}))


_VARIANTS: dict[str, list[KernelVariant]] = {}

# Modules of tinydeploy.kernels that register variants when imported. A listed module that
# does not exist (yet) is skipped, so the registry works while ops are being added.
VARIANT_MODULES: list[str] = [
    "conv",
    "depthwise",
    "fully_connected",
    "pooling",
    "softmax",
    "reshape",
]
VARIANT_MODULES += ["elementwise", "shape_ops", "activations", "recurrent"]
VARIANT_MODULES += ["portable", "arm_dsp"]
VARIANT_MODULES += ["arm_mve"]
VARIANT_MODULES += ["binary", "unary", "layout", "reduction", "resize", "matmul", "log_softmax",
                    "float_ops", "int16"]
VARIANT_MODULES += ["softmax_exp"]

_loaded = False


def register(variant: KernelVariant) -> KernelVariant:
    """Add a variant to the table; a second variant with the same op and symbol is an error."""
    lst = _VARIANTS.setdefault(variant.op, [])
    for v in lst:
        if v.symbol == variant.symbol:
            raise ValueError(f"kernel variant {variant.symbol} for {variant.op} registered twice")
    lst.append(variant)
    return variant


def variant_by_symbol(op: str, symbol: str) -> KernelVariant:
    """The registered variant of ``op`` named ``symbol`` (KeyError when there is none)."""
    _load()
    for v in _VARIANTS.get(op, ()):
        if v.symbol == symbol:
            return v
    raise KeyError(f"no kernel variant {symbol} for {op}")


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for name in VARIANT_MODULES:
        full = f"tinydeploy.kernels.{name}"
        if importlib.util.find_spec(full) is not None:
            importlib.import_module(full)


def variants(op: str) -> tuple[KernelVariant, ...]:
    """All registered variants of a builtin op (empty when unsupported)."""
    _load()
    return tuple(_VARIANTS.get(op, ()))


def all_variants() -> tuple[KernelVariant, ...]:
    _load()
    return tuple(v for op in sorted(_VARIANTS) for v in _VARIANTS[op])


def supported_ops() -> frozenset[str]:
    _load()
    return frozenset(op for op, lst in _VARIANTS.items() if lst)


def is_supported(name: str) -> bool:
    """True when at least one variant exists for the builtin op ``name``."""
    return name in supported_ops()


def __getattr__(name: str) -> object:
    # SUPPORTED_OPS is computed on first access so that importing the registry stays cheap
    # and op modules may import it to register themselves.
    if name == "SUPPORTED_OPS":
        return supported_ops()
    raise AttributeError(name)


def screen(graph: Graph, op: Operator, features: frozenset[str] | None
           ) -> tuple[list[KernelVariant], list[tuple[KernelVariant, str]]]:
    """The variants of ``op`` that accept it on a core with ``features`` (None: any core),
    and the others with the reason each one gives. The one candidate loop: selection and
    the support report (`support_reason`) both use it."""
    _load()
    ok: list[KernelVariant] = []
    rejected: list[tuple[KernelVariant, str]] = []
    for v in _VARIANTS.get(op.opcode, []):
        missing = v.requires - features if features is not None else frozenset()
        if missing:
            rejected.append((v, f"board lacks {', '.join(sorted(missing))}"))
            continue
        try:
            why = v.accepts(graph, op)
        except ValueError as e:    # e.g. a per-channel scale where one scale is needed
            why = str(e)
        if why is not None:
            rejected.append((v, why))
            continue
        ok.append(v)
    return ok, rejected


def support_reason(graph: Graph, op: Operator) -> str | None:
    """None when some kernel variant (for any core) accepts the op, else why none does."""
    ok, rejected = screen(graph, op, None)
    if ok:
        return None
    if not rejected:
        return "no kernel for this op type"
    return "; ".join(sorted({why for _, why in rejected}))


def select_kernels(graph: Graph, board: object | None = None) -> Selection:
    """Choose one kernel variant per operator of ``graph`` for ``board``.

    ``board`` is a `tinydeploy.boards.Board` (its ``features`` gate dsp/mve variants) or None
    for reference kernels only. Raises UnsupportedError naming the op index, type and reasons.
    """
    _load()
    features: frozenset[str] = frozenset(getattr(board, "features", frozenset()) or ())
    choices = []
    for op in graph.operators:
        cands = _VARIANTS.get(op.opcode, [])
        if not cands:
            raise UnsupportedError(
                f"op {op.index} ({op.type_name}): no kernel for this op type",
                hint="supported ops: " + ", ".join(sorted(supported_ops())))
        # no board: any core's reference kernels (and aliases), float ones included, so that
        # the reference plan of a float island exists wherever a board can run it
        ok, rejected = screen(graph, op, None if board is None else features)
        if board is None:   # the reference kernels only: no core-specific or optimised ones
            ok = [v for v in ok if v.impl in ("ref", "alias")]
        reasons = [f"{v.symbol}: {why}" for v, why in rejected]
        if not ok:
            raise UnsupportedError(
                f"op {op.index} ({op.type_name}): not supported: " + "; ".join(reasons),
                hint="tinydeploy compiles full-INT8 models; quantize the model with "
                     "'tinydeploy quantize' or check the op's options")
        best = sorted(ok, key=lambda v: (-v.priority, v.impl, v.symbol))[0]
        try:
            call = None if best.alias else best.prepare(graph, op)
        except (ValueError, OverflowError, ZeroDivisionError) as e:
            # parameters no fixed-point kernel can represent (a multiplier beyond Q31 from
            # extreme scales): the model's numbers, not a bug in the kernel
            raise UnsupportedError(f"op {op.index} ({op.type_name}): {best.symbol} cannot "
                                   f"represent its parameters: {e}",
                                   hint="check the op's quantization scales") from None
        choices.append(KernelChoice(op.index, best, call))
    return Selection(tuple(choices))
