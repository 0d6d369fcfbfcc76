"""The kernel framework itself: selection errors, source lists, C emission, and a multi-op
graph (with an alias) through the host harness against the oracle."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from tinydeploy.codegen import cemit
from tinydeploy.errors import ToolchainError, UnsupportedError
from tinydeploy.kernels import registry
from tinydeploy.kernels.registry import ConstArray, KernelCall, Selection, select_kernels
from tinydeploy.model.ir import (
    Conv2DOptions,
    FullyConnectedOptions,
    Padding,
    Pool2DOptions,
    ReshapeOptions,
    SoftmaxOptions,
)
from tinydeploy.model.loader import load_tflite
from tinydeploy.oracle import run_oracle
from tinydeploy.testing.builder import ModelBuilder
from tinydeploy.testing.harness import FIRMWARE_DIR, HostCase, run_graph_host, run_host


def _float_conv() -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", (1, 4, 4, 2), "float32")
    w = b.tensor("w", (3, 3, 3, 2), "float32", data=np.ones(54))
    y = b.tensor("y", (1, 4, 4, 3), "float32")
    b.tensor("unused", (1,), "float32")
    b.op("CONV_2D", [x, w, -1], [y], Conv2DOptions(padding=Padding.SAME))
    return b.build([x], [y])


def _chain(seed: int = 0) -> bytes:
    """conv (per-channel) -> reshape -> fully connected -> softmax."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.tensor("x", (1, 6, 5, 2), "int8", scale=0.04, zero_point=-7)
    fs = [0.002, 0.03, 0.0007]
    w = b.tensor("w", (3, 3, 3, 2), "int8", scale=fs, data=rng.integers(-127, 128, 54))
    bias = b.tensor("b", (3,), "int32", scale=[0.04 * f for f in fs],
                    data=rng.integers(-300, 300, 3))
    c = b.tensor("conv", (1, 3, 3, 3), "int8", scale=0.05, zero_point=4)
    b.op("CONV_2D", [x, w, bias], [c], Conv2DOptions(padding=Padding.SAME, stride_h=2,
                                                     stride_w=2))
    shp = b.tensor("shape", (2,), "int32", data=[1, 27])
    r = b.tensor("flat", (1, 27), "int8", scale=0.05, zero_point=4)
    b.op("RESHAPE", [c, shp], [r], ReshapeOptions(new_shape=(1, 27)))
    fw = b.tensor("fw", (10, 27), "int8", scale=0.01, data=rng.integers(-127, 128, 270))
    fb = b.tensor("fb", (10,), "int32", scale=0.0005, data=rng.integers(-900, 900, 10))
    logits = b.tensor("logits", (1, 10), "int8", scale=0.1, zero_point=-3)
    b.op("FULLY_CONNECTED", [r, fw, fb], [logits], FullyConnectedOptions())
    p = b.tensor("probs", (1, 10), "int8", scale=1 / 256, zero_point=-128)
    b.op("SOFTMAX", [logits], [p], SoftmaxOptions(beta=1.0))
    return b.build([x], [p])


def test_unsupported_float_conv_names_op_index_and_type() -> None:
    with pytest.raises(UnsupportedError) as e:
        select_kernels(load_tflite(_float_conv()), None)
    msg = e.value.message
    assert "op 0" in msg and "CONV_2D" in msg and "FLOAT32" in msg


def test_unknown_op_type_is_unsupported() -> None:
    b = ModelBuilder()
    x = b.tensor("x", (1, 4), "int8", scale=0.1)
    y = b.tensor("y", (1, 4), "int8", scale=0.1)
    b.op("EXP", [x], [y])
    with pytest.raises(UnsupportedError, match=r"op 0 \(EXP\)"):
        select_kernels(load_tflite(b.build([x], [y])), None)


def test_selection_lists_only_the_selected_sources() -> None:
    sel = select_kernels(load_tflite(_chain()), None)
    assert [c.variant.op for c in sel.choices] == ["CONV_2D", "RESHAPE", "FULLY_CONNECTED",
                                                   "SOFTMAX"]
    assert sel.sources == ("kernels/ref/td_accum.h", "kernels/ref/td_conv2d_body.h",
                           "kernels/ref/td_conv2d_s8_ref.c",
                           "kernels/ref/td_fully_connected_body.h",
                           "kernels/ref/td_fully_connected_s8_ref.c",
                           "kernels/ref/td_gemmlowp.h", "kernels/ref/td_requant64.h",
                           "kernels/ref/td_softmax_body.h",
                           "kernels/ref/td_softmax_s8_ref.c")
    assert sel.choices[1].call is None and sel.choices[1].variant.alias
    for s in sel.sources:
        assert (FIRMWARE_DIR / s).is_file()


def test_supported_ops_table_is_derived_from_the_registry() -> None:
    ops = registry.SUPPORTED_OPS
    for op in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D",
               "MAX_POOL_2D", "SOFTMAX", "RESHAPE", "SQUEEZE"):
        assert op in ops and registry.is_supported(op)
    assert not registry.is_supported("EXP")
    assert ops == frozenset(v.op for v in registry.all_variants())


def test_every_registered_source_exists_and_names_its_symbol() -> None:
    for v in registry.all_variants():
        texts = [(FIRMWARE_DIR / s).read_text() for s in v.sources]   # each file must exist
        if v.alias:
            assert not v.sources
            continue
        assert any(re.search(rf"\b{v.symbol}\s*\(", t) for t in texts), v.symbol


def test_multi_op_graph_with_alias_matches_oracle() -> None:
    model = _chain(3)
    g = load_tflite(model)
    rng = np.random.default_rng(9)
    for x in (rng.integers(-128, 128, (1, 6, 5, 2)), np.full((1, 6, 5, 2), 127)):
        x = x.astype(np.int8)
        got = run_graph_host(g, [x])[0]
        want = run_oracle(model, [x])[0]
        assert np.array_equal(got, want), (got, want)


def _call() -> KernelCall:
    return KernelCall(
        "td_demo_s8_ref", "td_demo_params_t",
        (("n", 3), ("lo", -(1 << 31)), ("gain", 0.5), ("w", "@w"), ("bias", "NULL")),
        (ConstArray("w", "int32_t", np.arange(-40, 40, dtype=np.int32) * 12345678),),
        ("in0", "out0"))


def test_cemit_is_deterministic_and_readable() -> None:
    call = _call()
    a = cemit.emit_consts(call, "op7") + cemit.emit_params(call, "op7")
    assert a == cemit.emit_consts(_call(), "op7") + cemit.emit_params(_call(), "op7")
    assert "const int32_t op7_w[80] __attribute__((aligned(16))) = {" in a
    assert ".lo = (-2147483647 - 1)," in a and ".w = op7_w," in a and ".bias = NULL," in a
    assert ".gain = 0.5f," in a
    assert all(len(line) <= 100 for line in a.splitlines())
    assert "-493827120" in a   # decimal, not hex
    assert cemit.emit_call(call, "op7", {"in0": "a", "out0": "b"}) == \
        "td_demo_s8_ref(&op7_params, a, b);"
    assert cemit.emit_const_declarations(call, "op7") == "extern const int32_t op7_w[80];\n"


def test_cemit_rejects_missing_arrays_args_and_out_of_range_values() -> None:
    bad = KernelCall("f", "t", (("w", "@nope"),), (), ())
    with pytest.raises(ValueError, match="nope"):
        cemit.emit_params(bad, "op0")
    with pytest.raises(KeyError, match="out0"):
        cemit.emit_call(_call(), "op0", {"in0": "a"})
    with pytest.raises(ValueError, match="int8_t"):
        cemit.emit_const_array(ConstArray("x", "int8_t", np.array([200])), "op0")


def test_harness_sanitizer_catches_an_out_of_bounds_write() -> None:
    """A kernel call whose shapes disagree with the tensors (here: one output row too many)
    must crash the sanitized program, not produce plausible bytes."""
    b = ModelBuilder()
    x = b.tensor("x", (1, 4, 4, 3), "int8", scale=0.1)
    y = b.tensor("y", (1, 2, 2, 3), "int8", scale=0.1)
    b.op("MAX_POOL_2D", [x], [y], Pool2DOptions(padding=Padding.VALID, stride_h=2,
                                                  stride_w=2, filter_h=2, filter_w=2))
    g = load_tflite(b.build([x], [y]))
    sel = select_kernels(g, None)
    good = sel.choices[0]
    assert good.call is not None
    params = tuple((k, 3 if k == "out_h" else v) for k, v in good.call.params)
    bad = replace(good, call=replace(good.call, params=params))
    case = HostCase(g, (np.zeros((1, 4, 4, 3), np.int8),), Selection((bad,)))
    with pytest.raises(ToolchainError, match="buffer-overflow"):
        run_host([case])
    # the untampered selection runs
    assert run_host([replace(case, selection=sel)])[0][0].shape == (1, 2, 2, 3)
