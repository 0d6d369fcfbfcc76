"""int8 BATCH_MATMUL, TRANSPOSE_CONV and L2_NORMALIZATION.

BATCH_MATMUL (``td_batch_matmul_s8_ref``): TFLM transposes operands into its arena when
adj_x is set or adj_y is not; tinydeploy folds both flags and the batch broadcast (up to
5-D, batch dims 1 broadcast) into element strides and per-batch offsets, so nothing is
copied and the arena holds only the output. The multiplier is TFLM's
``GetQuantizedConvolutionMultipler`` (the float32 product of the operand scales, widened,
over the output scale); there is no fused activation.

TRANSPOSE_CONV (``td_transpose_conv_s8_ref``): inputs (output_shape, weights, input[, bias]),
per-channel weights along axis 0, the padding TFLite computes for the equivalent forward
convolution from the output size, the int32 scatter buffer TFLM uses as scratch (4 bytes
per output element), TFLM's per-channel multipliers and fused-activation clamp.

L2_NORMALIZATION (``td_l2norm_s8_ref``): per row of the last dimension, the inverse square
root multiplier of the sum of squares (computed on the device: it depends on the data), as
TFLM; TFLM ignores the output quantization (the converter sets 1/128, 0).
"""

from __future__ import annotations

import numpy as np

from tinydeploy.fixedpoint import quantize_multiplier
from tinydeploy.kernels.activations import int8_per_tensor_reason
from tinydeploy.kernels.common import (
    activation_range,
    check_bias,
    check_filter,
    check_requant,
    compute_out_size,
    compute_padding,
    f32,
    int8_shifts,
    per_channel_multipliers,
    plan_reason,
    ref_variant,
    single_io,
)
from tinydeploy.kernels.registry import ConstArray, KernelCall, register
from tinydeploy.model.ir import (
    Activation,
    ActivationOptions,
    BatchMatMulOptions,
    Graph,
    Operator,
    Tensor,
    TransposeConvOptions,
)

MATMUL_MAX_RANK = 5


# --- BATCH_MATMUL ---------------------------------------------------------------------------


def _matmul_plan(graph: Graph, op: Operator) -> dict[str, object] | str:
    ins, outs = graph.op_inputs(op), graph.op_outputs(op)
    if len(ins) != 2 or len(outs) != 1:
        return f"expects 2 inputs and 1 output, has {len(ins)} and {len(outs)}"
    lhs, rhs, out = ins[0], ins[1], outs[0]
    for t, role in ((lhs, "lhs"), (rhs, "rhs"), (out, "output")):
        why = int8_per_tensor_reason(t, role)
        if why:
            return why
    assert lhs is not None and rhs is not None
    if lhs.is_constant and rhs.is_constant:
        return "both inputs are constant (fold the op before compiling)"
    for t, role in ((lhs, "lhs"), (rhs, "rhs")):
        if not 2 <= len(t.shape) <= MATMUL_MAX_RANK:
            return f"{role} rank {len(t.shape)} (TFLM supports 2..{MATMUL_MAX_RANK})"
    opts = op.options if isinstance(op.options, BatchMatMulOptions) else BatchMatMulOptions()
    rank = max(len(lhs.shape), len(rhs.shape))
    ls = (1,) * (rank - len(lhs.shape)) + lhs.shape
    rs = (1,) * (rank - len(rhs.shape)) + rhs.shape
    rows, depth = (ls[-1], ls[-2]) if opts.adj_x else (ls[-2], ls[-1])
    rdepth, cols = (rs[-1], rs[-2]) if opts.adj_y else (rs[-2], rs[-1])
    if depth != rdepth:
        return f"lhs depth {depth} differs from rhs depth {rdepth}"
    batch_shape = []
    for a, b in zip(ls[:-2], rs[:-2], strict=True):
        if a != b and a != 1 and b != 1:
            return f"batch dims {list(ls[:-2])} and {list(rs[:-2])} do not broadcast"
        batch_shape.append(max(a, b))
    want = tuple(batch_shape) + (rows, cols)
    if tuple(d for d in out.shape if d != 1) != tuple(d for d in want if d != 1) or \
            out.size != int(np.prod(want)):
        return f"output shape {list(out.shape)}, the product gives {list(want)}"

    def offsets(shape: tuple[int, ...]) -> list[int]:
        mat = shape[-1] * shape[-2]
        pitch = [0] * len(batch_shape)
        acc = mat
        for d in range(len(batch_shape) - 1, -1, -1):
            pitch[d] = acc if shape[d] != 1 else 0
            acc *= shape[d]
        idx = np.indices(batch_shape).reshape(len(batch_shape), -1).T if batch_shape else \
            np.zeros((1, 0), dtype=np.int64)
        return [int(sum(int(i) * p for i, p in zip(row, pitch, strict=True))) for row in idx]

    lhs_row, lhs_depth = (1, ls[-1]) if opts.adj_x else (ls[-1], 1)
    rhs_depth, rhs_col = (1, rs[-1]) if opts.adj_y else (rs[-1], 1)
    mult, shift = quantize_multiplier(f32(np.float32(lhs.scale) * np.float32(rhs.scale))
                                      / f32(out.scale))
    return {"lhs": lhs, "rhs": rhs, "batches": int(np.prod(batch_shape, dtype=np.int64)),
            "rows": rows, "cols": cols, "depth": depth, "lhs_row_stride": lhs_row,
            "lhs_depth_stride": lhs_depth, "rhs_depth_stride": rhs_depth,
            "rhs_col_stride": rhs_col, "lhs_offset": -lhs.zero_point,
            "rhs_offset": -rhs.zero_point, "out_offset": out.zero_point, "out_mult": mult,
            "out_shift": shift, "lhs_offsets": offsets(ls), "rhs_offsets": offsets(rs)}


def _accepts_matmul(graph: Graph, op: Operator) -> str | None:
    return plan_reason(_matmul_plan(graph, op))


def _prepare_matmul(graph: Graph, op: Operator) -> KernelCall:
    plan = _matmul_plan(graph, op)
    assert not isinstance(plan, str), plan
    lhs, rhs = plan["lhs"], plan["rhs"]
    assert isinstance(lhs, Tensor) and isinstance(rhs, Tensor)
    consts = [ConstArray("lhs_batch_offsets", "int32_t",
                         np.array(plan["lhs_offsets"], dtype=np.int32)),
              ConstArray("rhs_batch_offsets", "int32_t",
                         np.array(plan["rhs_offsets"], dtype=np.int32))]
    refs = {}
    for name, t in (("lhs", lhs), ("rhs", rhs)):
        if t.is_constant:
            assert t.data is not None
            consts.append(ConstArray(f"{name}_data", "int8_t",
                                     np.asarray(t.data, dtype=np.int8).reshape(-1)))
            refs[name] = f"@{name}_data"
        else:
            refs[name] = "NULL"
    arena = "in1" if lhs.is_constant else "in0"
    args = (arena if lhs.is_constant else "in0", arena if rhs.is_constant else "in1", "out0")
    fields = ("batches", "rows", "cols", "depth", "lhs_row_stride", "lhs_depth_stride",
              "rhs_depth_stride", "rhs_col_stride", "lhs_offset", "rhs_offset", "out_offset",
              "out_mult", "out_shift")
    params: list[tuple[str, int | float | str]] = [(f, int(plan[f])) for f in fields]  # type: ignore[call-overload]
    params += [("lhs_batch_offsets", "@lhs_batch_offsets"),
               ("rhs_batch_offsets", "@rhs_batch_offsets"),
               ("lhs_const", refs["lhs"]), ("rhs_const", refs["rhs"])]
    return KernelCall(symbol="td_batch_matmul_s8_ref", params_type="td_batch_matmul_params_t",
                      params=tuple(params), consts=tuple(consts), args=args)


# --- TRANSPOSE_CONV -----------------------------------------------------------------------


def _tconv_plan(graph: Graph, op: Operator) -> dict[str, object] | str:
    ins, outs = graph.op_inputs(op), graph.op_outputs(op)
    if len(ins) not in (3, 4) or len(outs) != 1:
        return f"expects 3 or 4 inputs and 1 output, has {len(ins)} and {len(outs)}"
    shape_t, filt, x = ins[0], ins[1], ins[2]
    bias = ins[3] if len(ins) == 4 else None
    out = outs[0]
    why = int8_per_tensor_reason(x, "input") or int8_per_tensor_reason(out, "output")
    if why:
        return why
    assert x is not None
    if len(x.shape) != 4 or len(out.shape) != 4:
        return f"input rank {len(x.shape)} (TFLM requires 4-D NHWC)"
    if shape_t is None or shape_t.data is None:
        return ("output_shape is not constant: the output shape would depend on data, and "
                "tinydeploy plans static shapes")
    if [int(v) for v in np.asarray(shape_t.data).reshape(-1)] != list(out.shape):
        return f"output_shape {list(np.asarray(shape_t.data))} differs from the output tensor"
    oc = out.shape[3]
    why = check_filter(filt, oc, 0) or check_bias(bias, oc)
    if why:
        return why
    assert filt is not None
    if len(filt.shape) != 4 or filt.shape[0] != oc or filt.shape[3] != x.shape[3]:
        return f"filter shape {list(filt.shape)} does not fit input {list(x.shape)}"
    if out.shape[0] != x.shape[0]:
        return "batch sizes differ"
    opts = op.options if isinstance(op.options, TransposeConvOptions) else \
        TransposeConvOptions()
    if opts.stride_h < 1 or opts.stride_w < 1:
        return f"strides {opts.stride_h}x{opts.stride_w}"
    rng = activation_range(opts.activation, out)
    if rng is None:
        return f"fused activation {opts.activation.name} is not supported"
    fh, fw = filt.shape[1], filt.shape[2]
    eq_h = compute_out_size(opts.padding, out.shape[1], fh, opts.stride_h)
    eq_w = compute_out_size(opts.padding, out.shape[2], fw, opts.stride_w)
    pad_h = compute_padding(opts.stride_h, 1, out.shape[1], fh, eq_h)
    pad_w = compute_padding(opts.stride_w, 1, out.shape[2], fw, eq_w)
    assert filt.quant is not None
    why = check_requant(x, filt, out, oc)
    if why:
        return why
    mult, shift = per_channel_multipliers(x.scale, filt.quant.scale, out.scale, oc)
    return {"x": x, "filt": filt, "bias": bias, "out": out, "pad_h": pad_h, "pad_w": pad_w,
            "opts": opts, "rng": rng, "mult": mult, "shift": shift}


def _accepts_tconv(graph: Graph, op: Operator) -> str | None:
    return plan_reason(_tconv_plan(graph, op))


def _prepare_tconv(graph: Graph, op: Operator) -> KernelCall:
    plan = _tconv_plan(graph, op)
    assert not isinstance(plan, str), plan
    x, filt, bias, out = plan["x"], plan["filt"], plan["bias"], plan["out"]
    opts, rng = plan["opts"], plan["rng"]
    assert isinstance(x, Tensor) and isinstance(filt, Tensor) and isinstance(out, Tensor)
    assert isinstance(opts, TransposeConvOptions) and isinstance(rng, tuple)
    assert filt.data is not None
    consts = [ConstArray("filter", "int8_t", np.asarray(filt.data, np.int8).reshape(-1)),
              ConstArray("mult", "int32_t", np.asarray(plan["mult"], np.int32)),
              ConstArray("shift", "int8_t", int8_shifts(np.asarray(plan["shift"])))]
    bias_ref = "NULL"
    if isinstance(bias, Tensor):
        assert bias.data is not None
        consts.append(ConstArray("bias", "int32_t", np.asarray(bias.data, np.int32)
                                 .reshape(-1)))
        bias_ref = "@bias"
    n, h, w, c = x.shape
    params: tuple[tuple[str, int | float | str], ...] = (
        ("batches", n), ("in_h", h), ("in_w", w), ("in_c", c), ("out_h", out.shape[1]),
        ("out_w", out.shape[2]), ("out_c", out.shape[3]), ("filter_h", filt.shape[1]),
        ("filter_w", filt.shape[2]), ("stride_h", opts.stride_h), ("stride_w", opts.stride_w),
        ("pad_h", int(plan["pad_h"])), ("pad_w", int(plan["pad_w"])),  # type: ignore[call-overload]
        ("input_offset", -x.zero_point), ("output_offset", out.zero_point),
        ("act_min", rng[0]), ("act_max", rng[1]), ("filter", "@filter"), ("bias", bias_ref),
        ("mult", "@mult"), ("shift", "@shift"))
    return KernelCall(symbol="td_transpose_conv_s8_ref",
                      params_type="td_transpose_conv_params_t", params=params,
                      consts=tuple(consts), args=("in2", "out0", "scratch"),
                      scratch_bytes=4 * out.size)


# --- L2_NORMALIZATION -----------------------------------------------------------------------


def _accepts_l2norm(graph: Graph, op: Operator) -> str | None:
    io = single_io(graph, op, 1, int8_per_tensor_reason, arena_input=False)
    if isinstance(io, str):
        return io
    x, y = io
    if len(x.shape) > 4 or len(x.shape) < 1:
        return f"input rank {len(x.shape)} (TFLM supports up to 4)"
    if x.shape != y.shape:
        return f"output shape {list(y.shape)} differs from the input's"
    act = op.options.activation if isinstance(op.options, ActivationOptions) else \
        Activation.NONE
    if act is not Activation.NONE:
        return f"fused activation {act.name} (TFLM requires NONE)"
    if x.shape[-1] * 255 * 255 >= (1 << 31):
        return f"last dimension {x.shape[-1]} overflows the int32 sum of squares"
    return None


def _prepare_l2norm(graph: Graph, op: Operator) -> KernelCall:
    x = graph.op_inputs(op)[0]
    assert x is not None
    depth = x.shape[-1]
    return KernelCall(symbol="td_l2norm_s8_ref", params_type="td_l2norm_params_t",
                      params=(("rows", x.size // depth), ("depth", depth),
                              ("input_zp", x.zero_point)),
                      consts=(), args=("in0", "out0"))


register(ref_variant("BATCH_MATMUL", "td_batch_matmul_s8_ref", _accepts_matmul,
                     _prepare_matmul))
register(ref_variant("TRANSPOSE_CONV", "td_transpose_conv_s8_ref", _accepts_tconv,
                     _prepare_tconv))
register(ref_variant("L2_NORMALIZATION", "td_l2norm_s8_ref", _accepts_l2norm, _prepare_l2norm,
                     inplace=True,
                     headers=("kernels/ref/td_inv_sqrt.h", "kernels/ref/td_gemmlowp.h")))
