"""KernelCall -> C text: constant arrays, the parameter-struct initializer and the call.

The model template (`model.c.j2`, `model_data.c.j2`) and the host kernel harness both emit
kernels through these functions, so the firmware and the tests run the same C. Output is
deterministic (same call, same text: reproducible builds) and readable: integers in decimal,
arrays wrapped at about 100 columns, one struct field per line with designated initializers.

Names: the caller passes a ``prefix`` unique per op (e.g. ``"op3"``); constant array ``x`` of
that op is the C symbol ``<prefix>_x``. A parameter value ``"@x"`` becomes a pointer to it,
``"NULL"`` stays a null pointer, other strings are emitted verbatim (C expressions such as
enum names), ints as decimal literals, floats with 9 significant digits and an ``f`` suffix.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from tinydeploy.kernels.registry import ConstArray, KernelCall

WRAP_COLUMNS = 100
ALIGN = "__attribute__((aligned(16)))"

_INT_RANGE = {
    "int8_t": (-(1 << 7), (1 << 7) - 1),
    "uint8_t": (0, (1 << 8) - 1),
    "int16_t": (-(1 << 15), (1 << 15) - 1),
    "uint16_t": (0, (1 << 16) - 1),
    "int32_t": (-(1 << 31), (1 << 31) - 1),
    "uint32_t": (0, (1 << 32) - 1),
    "int64_t": (-(1 << 63), (1 << 63) - 1),
}


def c_int(v: int) -> str:
    """A decimal C literal; the most negative int32/int64 values are written as expressions
    because ``-2147483648`` is not an int literal in C."""
    v = int(v)
    if v == -(1 << 31):
        return "(-2147483647 - 1)"
    if v == -(1 << 63):
        return "(-9223372036854775807LL - 1)"
    if v > (1 << 31) - 1 or v < -(1 << 31):
        return f"{v}LL"
    return str(v)


def c_float(v: float) -> str:
    if math.isnan(v) or math.isinf(v):
        raise ValueError(f"cannot emit {v!r} as a C float literal")
    s = f"{float(v):.9g}"
    if "e" not in s and "." not in s:
        s += ".0"
    return s + "f"


def c_value(v: int | float | str, prefix: str,
            symbols: Mapping[str, str] | None = None) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int | np.integer):
        return c_int(int(v))
    if isinstance(v, float | np.floating):
        return c_float(float(v))
    if isinstance(v, str):
        if v.startswith("@"):
            if symbols is not None and v[1:] in symbols:
                return symbols[v[1:]]
            return const_symbol(prefix, v[1:])
        return v
    raise TypeError(f"parameter value {v!r} has no C form")


def const_symbol(prefix: str, name: str) -> str:
    return f"{prefix}_{name}"


def format_values(values: np.ndarray, ctype: str, indent: str = "    ",
                  width: int = WRAP_COLUMNS) -> str:
    """The comma-separated initializer list of ``values``, wrapped at ``width`` columns."""
    flat = np.asarray(values).reshape(-1)
    if ctype == "float":
        items = [c_float(float(x)) for x in flat]
    else:
        bounds = _INT_RANGE.get(ctype)
        ints = [int(x) for x in flat]
        if bounds is not None and ints and (min(ints) < bounds[0] or max(ints) > bounds[1]):
            raise ValueError(f"value out of range for {ctype}: [{min(ints)}, {max(ints)}]")
        items = [c_int(x) for x in ints]
    lines: list[str] = []
    cur = indent
    for i, it in enumerate(items):
        tok = it + ("," if i < len(items) - 1 else "")
        if len(cur) + len(tok) + 1 > width and cur.strip():
            lines.append(cur.rstrip())
            cur = indent
        cur += tok + " "
    if cur.strip():
        lines.append(cur.rstrip())
    return "\n".join(lines)


def emit_const_array(arr: ConstArray, prefix: str, *, static: bool = False) -> str:
    """``const <ctype> <prefix>_<name>[n] aligned(16) = {...};`` (an empty array gets one
    zero element so that the symbol still exists)."""
    values = np.asarray(arr.values).reshape(-1)
    n = values.size
    storage = "static " if static else ""
    sym = const_symbol(prefix, arr.name)
    if n == 0:
        return f"{storage}const {arr.ctype} {sym}[1] {ALIGN} = {{0}};\n"
    body = format_values(values, arr.ctype)
    return f"{storage}const {arr.ctype} {sym}[{n}] {ALIGN} = {{\n{body}\n}};\n"


def emit_const_declaration(arr: ConstArray, prefix: str) -> str:
    """The ``extern`` declaration matching `emit_const_array` (for model_data.h)."""
    n = max(1, int(np.asarray(arr.values).size))
    return f"extern const {arr.ctype} {const_symbol(prefix, arr.name)}[{n}];\n"


def emit_consts(call: KernelCall, prefix: str, *, static: bool = False) -> str:
    return "".join(emit_const_array(c, prefix, static=static) for c in call.consts)


def emit_const_declarations(call: KernelCall, prefix: str) -> str:
    return "".join(emit_const_declaration(c, prefix) for c in call.consts)


def params_symbol(prefix: str) -> str:
    return f"{prefix}_params"


def emit_params(call: KernelCall, prefix: str, *, static: bool = True,
                symbols: Mapping[str, str] | None = None) -> str:
    """The parameter struct as a const object with designated initializers. ``symbols`` maps
    a constant array's name to the C symbol that holds it when another op stored it first."""
    names = {c.name for c in call.consts}
    lines = []
    for field_name, value in call.params:
        if isinstance(value, str) and value.startswith("@") and value[1:] not in names:
            raise ValueError(f"{call.symbol}: parameter {field_name} names a missing constant "
                             f"array '{value[1:]}'")
        lines.append(f"    .{field_name} = {c_value(value, prefix, symbols)},")
    storage = "static " if static else ""
    body = "\n".join(lines)
    return f"{storage}const {call.params_type} {params_symbol(prefix)} = {{\n{body}\n}};\n"


def emit_call(call: KernelCall, prefix: str, args: Mapping[str, str]) -> str:
    """``symbol(&<prefix>_params, <args>);`` where ``args`` maps each name of ``call.args``
    ("in0", "out0", "scratch", ...) to a C expression of the right pointer type."""
    missing = [a for a in call.args if a not in args]
    if missing:
        raise KeyError(f"{call.symbol}: no C expression for argument(s) {', '.join(missing)}")
    parts = [f"&{params_symbol(prefix)}"] + [args[a] for a in call.args]
    one_line = f"{call.symbol}({', '.join(parts)});"
    if len(one_line) + 4 <= WRAP_COLUMNS:
        return one_line
    sep = ",\n" + " " * (len(call.symbol) + 1)
    return f"{call.symbol}({sep.join(parts)});"


def call_arg_tensor(name: str, inputs: tuple[int, ...], outputs: tuple[int, ...]
                    ) -> tuple[bool, int] | None:
    """The tensor a kernel call's argument ``name`` points at: ``in<k>`` is input k of the
    op, ``out<k>`` output k, as (is_output, tensor index); None for any other name (the
    caller places ``scratch`` and refuses the rest)."""
    if name.startswith("in"):
        return False, inputs[int(name[2:])]
    if name.startswith("out"):
        return True, outputs[int(name[3:])]
    return None
