"""Static figures of a graph: MACs per op, parameter bytes, quantization summary.

MACs count multiply-accumulates of the three ops that dominate small models, as the field
counts them: CONV_2D = out_h·out_w·out_c·k_h·k_w·in_c (per batch), DEPTHWISE_CONV_2D =
out_h·out_w·out_c·k_h·k_w, FULLY_CONNECTED = batches·out·in, and the LSTMs
(UNIDIRECTIONAL_SEQUENCE_LSTM, LSTM) = steps · (every input-to-gate, recurrent and projection
weight matrix's elements + the peephole weights), steps = batches · time. Other ops count 0.
"""

from __future__ import annotations

from collections.abc import Callable
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
    if op.opcode in ("UNIDIRECTIONAL_SEQUENCE_LSTM", "LSTM") and out.shape:
        return _lstm_macs(ins, out)
    return 0


# LSTM inputs: 1-4 input-to-gate weights, 5-8 recurrent weights, 9-11 peephole weights,
# 16 projection weights (TFLite's lstm_shared.h numbering; absent ones are None)
_LSTM_WEIGHTS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16)


def _lstm_macs(ins: tuple[Tensor | None, ...], out: Tensor) -> int:
    """Per step, one MAC per weight (each input-to-gate and recurrent matrix multiplies a
    vector, peepholes multiply elementwise, the projection maps cells to outputs); the
    output holds one vector of ``n_output`` per step."""
    n_output = out.shape[-1]
    if n_output <= 0:
        return 0
    per_step = 0
    for k in _LSTM_WEIGHTS:
        w = ins[k] if k < len(ins) else None
        if w is not None:
            per_step += _prod(w.shape)
    return _prod(out.shape) // n_output * per_step


def params_bytes(graph: Graph) -> int:
    """Bytes of constant data used by the main subgraph's operators, each buffer of the file
    counted once (several tensors may share one buffer, e.g. one filter used by three ops)."""
    used: set[int] = set()
    for op in graph.operators:
        used.update(i for i in op.inputs if i >= 0)
    seen: set[int] = set()
    total = 0
    for i in sorted(used):
        t = graph.tensor(i)
        if not t.is_constant:
            continue
        if t.buffer:
            if t.buffer in seen:
                continue
            seen.add(t.buffer)
        total += t.nbytes
    return total


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


def summarize_ops(graph: Graph,
                  support_reason: Callable[[Graph, Operator], str | None]
                  ) -> list[OpSummary]:
    """One row per op; ``support_reason`` (the kernel table's, passed in by the caller: the
    model layer does not import the kernels) says why an op has no kernel, None if it has."""
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
