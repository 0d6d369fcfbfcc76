"""RESHAPE and SQUEEZE: aliases, no code.

Both ops only change the shape a tensor is seen with; the bytes are identical (row-major,
densely packed). The output is therefore placed on the input's bytes (``alias=True``) and
no kernel runs. A constant shape tensor (RESHAPE's optional second input) is never read on
the device: the output shape is already static in the model.
"""

from __future__ import annotations

from tinydeploy.kernels.registry import KernelCall, KernelVariant, register
from tinydeploy.model.ir import Graph, Operator


def _accepts(graph: Graph, op: Operator) -> str | None:
    if not op.inputs or op.inputs[0] < 0 or len(op.outputs) != 1:
        return "needs one data input and one output"
    inp, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    if inp.dtype != out.dtype:
        return f"input is {inp.dtype.name} but output is {out.dtype.name}"
    if inp.size != out.size:
        return f"input has {inp.size} elements but output has {out.size}"
    if inp.quant != out.quant and inp.quant is not None and out.quant is not None:
        return "input and output quantization differ (a requantizing reshape)"
    if inp.is_constant:
        return f"input '{inp.name}' is constant (fold it before deployment)"
    return None


def _no_prepare(graph: Graph, op: Operator) -> KernelCall:
    raise AssertionError(f"op {op.index} ({op.opcode}) is an alias and has no kernel call")


RESHAPE_ALIAS = register(KernelVariant(
    op="RESHAPE", impl="alias", symbol="td_reshape_alias", sources=(), requires=frozenset(),
    accepts=_accepts, prepare=_no_prepare, alias=True))
SQUEEZE_ALIAS = register(KernelVariant(
    op="SQUEEZE", impl="alias", symbol="td_squeeze_alias", sources=(), requires=frozenset(),
    accepts=_accepts, prepare=_no_prepare, alias=True))
