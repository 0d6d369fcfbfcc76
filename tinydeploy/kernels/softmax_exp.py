"""SOFTMAX, int8 in -> int8 out, with the exp computed on the device: `td_softmax_s8_exp_ref`.

`td_softmax_s8_ref` reads the exp of every possible difference to the row maximum from a
256 x int32 table computed here on the host (1,024 B of flash for any depth). This variant
stores no table: the kernel rescales each difference with TFLite's multiplier and left shift
(``PreprocessSoftmaxScaling``), drops those below ``diff_min`` (``CalculateInputRadius``) and
evaluates gemmlowp's ``exp_on_negative_values`` per element, twice (for the sum, then for the
output), exactly as TFLM's int8 reference does, so the two variants give the same bytes.

It accepts what the table variant accepts. Its priority is below the table variant's, so the
plain priority selection keeps the table; `tinydeploy.plan.choose` weighs the two: the table
saves ~2 x ``EXP_INSTRUCTIONS`` per element, which pays for its 1,024 B only on wide rows.
"""

from __future__ import annotations

from dataclasses import replace

from tinydeploy.fixedpoint import calculate_input_radius, preprocess_softmax_scaling
from tinydeploy.kernels.common import REF_DIR, f32, ref_variant
from tinydeploy.kernels.registry import KernelCall, register
from tinydeploy.kernels.softmax import SCALED_DIFF_INTEGER_BITS, SOFTMAX_S8_REF
from tinydeploy.model.ir import Graph, Operator, SoftmaxOptions

# Cortex-M4 instructions (-O2, QEMU icount) of one scaled difference and its exp (rescale,
# polynomial, barrel shifter), computed twice per element: the DS-CNN's 12-class softmax
# takes 4,080 instructions with this kernel, 920 with the table (+3,160 = 12 x 2 x ~132).
# Data-dependent: a difference below diff_min skips its exp, so the same 10 or 12 classes
# measure 243 to 329 per element on different inputs (MLPerf's ResNet, the DS-CNN); 124 puts
# the estimate between them.
EXP_INSTRUCTIONS = 124
# ... plus the table kernel's own cost per element, as `tinydeploy.plan.choose` models it for
# the table variant (40 per output, 12 per input element), so the two estimates differ by
# the exps alone
ELEMENT_INSTRUCTIONS = 52


def _prepare(graph: Graph, op: Operator) -> KernelCall:
    assert isinstance(op.options, SoftmaxOptions)
    inp = graph.tensor(op.inputs[0])
    mult, shift = preprocess_softmax_scaling(f32(op.options.beta), f32(inp.scale),
                                             SCALED_DIFF_INTEGER_BITS)
    diff_min = -calculate_input_radius(SCALED_DIFF_INTEGER_BITS, shift)
    depth = inp.shape[-1]
    rows = inp.size // depth if depth else 0
    params = (("rows", rows), ("depth", depth), ("multiplier", mult), ("left_shift", shift),
              ("diff_min", max(diff_min, -256)))
    return KernelCall("td_softmax_s8_exp_ref", "td_softmax_exp_params_t", params, (),
                      ("in0", "out0"),
                      instructions=inp.size * (ELEMENT_INSTRUCTIONS + 2 * EXP_INSTRUCTIONS))


SOFTMAX_S8_EXP_REF = register(replace(
    ref_variant("SOFTMAX", "td_softmax_s8_exp_ref", SOFTMAX_S8_REF.accepts, _prepare,
                headers=(f"{REF_DIR}/td_gemmlowp.h",)),
    priority=-1, code_bytes=930))   # 848 B measured (-O2, Cortex-M4) + ~10 %
