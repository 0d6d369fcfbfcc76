"""float32 ELU, ABS, LOGISTIC and TANH for cores with an FPU.

A full-integer conversion can still leave some ops in float between a DEQUANTIZE and a
QUANTIZE (the converter's fallback for ops it has no int8 kernel for, e.g. ELU in some
versions). TFLite Micro then runs its float reference kernels; tinydeploy does the same with
these variants, which require the board feature ``fpu``: on a core without one (Cortex-M0)
the op is refused at selection with "board lacks fpu", instead of being emulated in software
at a cost nobody chose.

Bit-exactness: ABS is exact; ELU, LOGISTIC and TANH call the C library's expm1f/expf/tanhf as
TFLM does, so they equal the oracle wherever the device's libm agrees with the host's; the
target tier checks them on the emulated Cortex-M4F (newlib) against the interpreter.
"""

from __future__ import annotations

from collections.abc import Callable

from tinydeploy.kernels.common import REF_DIR
from tinydeploy.kernels.registry import KernelCall, KernelVariant, register
from tinydeploy.model.ir import DType, Graph, Operator

FPU = frozenset({"fpu"})


def _accepts(graph: Graph, op: Operator) -> str | None:
    ins, outs = graph.op_inputs(op), graph.op_outputs(op)
    if len(ins) != 1 or len(outs) != 1 or ins[0] is None:
        return f"expects 1 input and 1 output, has {len(ins)} and {len(outs)}"
    x, y = ins[0], outs[0]
    for t, role in ((x, "input"), (y, "output")):
        if t.dtype is not DType.FLOAT32:
            return f"{role} '{t.name}' is {t.dtype.name}, not FLOAT32 (float variant)"
    if x.size != y.size:
        return f"input has {x.size} elements, output {y.size}"
    return None


def _prepare(symbol: str) -> Callable[[Graph, Operator], KernelCall]:
    def prepare(graph: Graph, op: Operator) -> KernelCall:
        return KernelCall(symbol=symbol, params_type="td_unary_f32_params_t",
                          params=(("size", graph.op_outputs(op)[0].size),), consts=(),
                          args=("in0", "out0"))
    return prepare


for _op, _sym in (("ELU", "td_elu_f32_ref"), ("ABS", "td_abs_f32_ref"),
                  ("LOGISTIC", "td_logistic_f32_ref"), ("TANH", "td_tanh_f32_ref")):
    register(KernelVariant(op=_op, impl="ref", symbol=_sym, sources=(f"{REF_DIR}/{_sym}.c",),
                           requires=FPU, accepts=_accepts, prepare=_prepare(_sym),
                           inplace=True))
