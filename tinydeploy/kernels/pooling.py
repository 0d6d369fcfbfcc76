"""AVERAGE_POOL_2D and MAX_POOL_2D, int8: `td_avgpool2d_s8_ref`, `td_maxpool2d_s8_ref`.

TFLM semantics (reference integer_ops/pooling.h): windows are clipped to the image (padding
taps are not counted); the average divides the int32 sum by the count of *valid* taps with
rounding half away from zero; both clamp to the fused activation range of the output. No
requantization happens (TFLite requires equal input and output quantization; bytes are
passed through as TFLM does).
"""

from __future__ import annotations

from collections.abc import Callable

from tinydeploy.kernels.common import (
    INT8_MAX,
    INT8_MIN,
    REF_DIR,
    activation_range,
    check_activation,
    check_io_int8,
    check_window_output,
    padding_params,
    ref_variant,
)
from tinydeploy.kernels.registry import KernelCall, register
from tinydeploy.model.ir import Graph, Operator, Pool2DOptions, Tensor


def pool_reason(graph: Graph, op: Operator,
                io_reason: Callable[[Tensor | None, Tensor | None], str | None] = check_io_int8
                ) -> str | None:
    """TFLM's pooling checks; ``io_reason`` checks the input and output element type
    (int8 here, int16 for the 16x8 kernels in `int16.py`)."""
    opts = op.options
    if not isinstance(opts, Pool2DOptions):
        return "missing Pool2DOptions"
    inp, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    r = io_reason(inp, out)
    if r:
        return r
    if len(inp.shape) != 4 or len(out.shape) != 4:
        return "input and output must be 4-D (NHWC)"
    if min(opts.filter_h, opts.filter_w, opts.stride_h, opts.stride_w) < 1:
        return "filter and stride sizes must be >= 1"
    return check_activation(opts.activation, out) or check_window_output(
        out, opts.padding, inp.shape, (opts.filter_h, opts.filter_w),
        (opts.stride_h, opts.stride_w), (1, 1), inp.shape[3])


def pool_prepare(symbol: str, limits: tuple[int, int] = (INT8_MIN, INT8_MAX),
                 cost: tuple[float, float] | None = None
                 ) -> Callable[[Graph, Operator], KernelCall]:
    """The pooling kernels' prepare: window, strides, TFLite's padding and the clamp of the
    fused activation within ``limits`` (the output type's range); ``cost``: instructions per
    output and per window tap read, when measured (else the selector's generic model)."""
    def prepare(graph: Graph, op: Operator) -> KernelCall:
        opts = op.options
        assert isinstance(opts, Pool2DOptions)
        inp, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        n, h, w, c = inp.shape
        _, oh, ow, _ = out.shape
        act = activation_range(opts.activation, out, limits)
        assert act is not None
        params = (
            ("batches", n), ("in_h", h), ("in_w", w), ("channels", c),
            ("out_h", oh), ("out_w", ow),
            ("filter_h", opts.filter_h), ("filter_w", opts.filter_w),
            ("stride_h", opts.stride_h), ("stride_w", opts.stride_w),
            *padding_params((h, w), (opts.filter_h, opts.filter_w), (oh, ow),
                            (opts.stride_h, opts.stride_w)),
            ("act_min", act[0]), ("act_max", act[1]),
        )
        estimate = 0
        if cost is not None:
            outputs = n * oh * ow * c
            estimate = round(outputs * (cost[0] + cost[1] * opts.filter_h * opts.filter_w))
        return KernelCall(symbol, "td_pool2d_params_t", params, (), ("in0", "out0"),
                          instructions=estimate)
    return prepare


# td_maxpool2d_s8_ref per output and per window tap, fitted on the residual test model's
# 2x2/2 pool of 12x12x16 (60,360 measured; the generic model said 50,938)
MAXPOOL_COST = (40.0, 16.0)


# private headers of the pooling kernels (loop body, window bounds), copied with their sources
WINDOW_HEADERS = (f"{REF_DIR}/td_pool2d_body.h", f"{REF_DIR}/td_pool2d_window.h")

AVGPOOL2D_S8_REF = register(ref_variant("AVERAGE_POOL_2D", "td_avgpool2d_s8_ref",
                                        pool_reason, pool_prepare("td_avgpool2d_s8_ref"),
                                        headers=WINDOW_HEADERS))
MAXPOOL2D_S8_REF = register(ref_variant("MAX_POOL_2D", "td_maxpool2d_s8_ref",
                                        pool_reason,
                                        pool_prepare("td_maxpool2d_s8_ref", cost=MAXPOOL_COST),
                                        headers=WINDOW_HEADERS))
