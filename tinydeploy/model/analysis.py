"""Static figures of a graph: MACs per op, parameter bytes, quantization summary.

MACs count multiply-accumulates of the three ops that dominate small models, as the field
counts them: CONV_2D = out_h·out_w·out_c·k_h·k_w·in_c (per batch), DEPTHWISE_CONV_2D =
out_h·out_w·out_c·k_h·k_w, FULLY_CONNECTED = batches·out·in. Other ops count 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from tinydeploy.model.ir import Graph, Operator, Tensor


def _prod(xs: tuple[int, ...]) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


def op_macs(graph: Graph, op: Operator) -> int:
    ins = graph.op_inputs(op)
    outs = graph.op_outputs(op)
    if not outs or len(ins) < 2 or ins[1] is None:
        return 0
    out, w = outs[0], ins[1]
    if op.opcode == "CONV_2D" and len(w.shape) == 4:
        _, kh, kw, cin = w.shape
        return _prod(out.shape) * kh * kw * cin
    if op.opcode == "DEPTHWISE_CONV_2D" and len(w.shape) == 4:
        _, kh, kw, _ = w.shape
        return _prod(out.shape) * kh * kw
    if op.opcode == "FULLY_CONNECTED" and len(w.shape) == 2:
        return _prod(out.shape) * w.shape[1]
    return 0


def params_bytes(graph: Graph) -> int:
    """Bytes of constant tensors used by the main subgraph's operators (each counted once)."""
    used: set[int] = set()
    for op in graph.operators:
        used.update(i for i in op.inputs if i >= 0)
    return sum(graph.tensor(i).nbytes for i in sorted(used) if graph.tensor(i).is_constant)


def quant_kind(t: Tensor) -> str:
    if t.quant is None:
        return "none"
    return "per-channel" if t.quant.per_channel else "per-tensor"


@dataclass(frozen=True)
class OpSummary:
    index: int
    type: str
    version: int
    input_shapes: tuple[tuple[int, ...] | None, ...]
    output_shapes: tuple[tuple[int, ...], ...]
    macs: int
    weights_quant: str
    supported: bool
    reason: str | None


def support_reason(graph: Graph, op: Operator) -> str | None:
    """None when some kernel variant (for any core) accepts the op, else why none does."""
    from tinydeploy.kernels.registry import variants

    cands = variants(op.opcode)
    if not cands:
        return "no kernel for this op type"
    reasons = []
    for v in cands:
        try:
            why = v.accepts(graph, op)
        except ValueError as e:    # e.g. a per-channel scale where one scale is needed
            why = str(e)
        if why is None:
            return None
        reasons.append(why)
    return "; ".join(sorted(set(reasons)))


def summarize_ops(graph: Graph) -> list[OpSummary]:
    out = []
    for op in graph.operators:
        ins = graph.op_inputs(op)
        consts = [t for t in ins if t is not None and t.is_constant and t.quant is not None]
        wq = quant_kind(consts[0]) if consts else "-"
        reason = support_reason(graph, op)
        out.append(OpSummary(
            index=op.index, type=op.type_name, version=op.version,
            input_shapes=tuple(None if t is None else t.shape for t in ins),
            output_shapes=tuple(t.shape for t in graph.op_outputs(op)),
            macs=op_macs(graph, op), weights_quant=wq,
            supported=reason is None, reason=reason,
        ))
    return out
