"""Target tier of the DSP kernels: compiled for the Cortex-M4 (real SIMD instructions) and run
on QEMU mps2-an386 with -icount.

1. td_simd.h: the same check program built for the host (portable twins, sanitizers) and for
   the Cortex-M4 (ACLE intrinsics) prints identical results for corner and random operands.
2. Kernels: every single-op case of the host golden tier runs on the device with the reference
   kernel and with the dsp kernel on the same input; the device compares both outputs, and the
   dsp bytes are also compared with the tflite-micro oracle here. The C scratch-size companion
   must equal the scratch the host planned.

The ARM toolchain and QEMU are required (CI installs them): their absence fails the tier.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from test_dsp_host import (
    C1_SPECS,
    DISPLACED,
    FRAME_SPECS,
    LINES_EDGE_SPECS,
    PARTIAL_SPECS,
    SPECS,
    WIDE_NOBIAS_SPECS,
    WIDE_SPECS,
    build_model,
    c1_selection,
    frame_selection,
    lines_selection,
    mismatch,
    random_specs,
    selection_with,
    wide_selection,
)

from tinydeploy.model.loader import load_tflite
from tinydeploy.oracle import run_oracle
from tinydeploy.toolchain import Core, ldflags

pytestmark = pytest.mark.target

# the host tier's declared cases plus random ones, all run natively
TARGET_SPECS = SPECS + tuple(random_specs(24, seed=11))

ROOT = Path(__file__).resolve().parents[2]
TEST_RT = ROOT / "firmware" / "kernels" / "arm" / "test"


def _bench() -> ModuleType:
    """benchmarks/bench_kernels.py: its program generator and runner are this tier's harness."""
    from benchmarks import bench_kernels

    return bench_kernels


@pytest.fixture(scope="module", autouse=True)
def _tools() -> None:
    for tool in ("arm-none-eabi-gcc", "qemu-system-arm", "gcc"):
        if shutil.which(tool) is None:
            pytest.fail(f"the dsp target tier needs {tool} (apt-get install gcc-arm-none-eabi "
                        "libnewlib-arm-none-eabi qemu-system-arm)")


def _run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)  # type: ignore
    assert proc.returncode == 0, f"{' '.join(cmd[:3])}... failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def test_simd_twins_equal_the_instructions(tmp_path: Path) -> None:
    src = TEST_RT / "td_simd_check.c"
    inc = ["-I", str(ROOT / "firmware" / "kernels" / "arm"), "-I", str(TEST_RT),
           "-I", str(ROOT / "firmware" / "kernels")]
    host = tmp_path / "host"
    _run(["gcc", "-std=c99", "-O1", "-DTD_SIMD_CHECK_HOST", "-Wall", "-Wextra",
          "-fsanitize=address,undefined", "-fno-sanitize-recover=all", *inc, str(src),
          "-o", str(host)])
    host_out = _run([str(host)]).stdout.split()
    bench = _bench()
    elf = tmp_path / "simd.elf"
    _run(["arm-none-eabi-gcc", *bench.M4_TARGET.compile_flags("-O2"), *inc, str(src),
          str(TEST_RT / "td_dsp_test_rt.c"),
          *ldflags(Core.CORTEX_M4F, str(TEST_RT / "td_dsp_test.ld")), "-o", str(elf)])
    disasm = _run(["arm-none-eabi-objdump", "-d", str(elf)]).stdout
    # (SMLABT x, y is SMLATB y, x: the compiler may emit either)
    for insn in ("smlad", "smlabb", "smlatt", "smlatb", "sadd16", "sxtb16", "sxtab16", "smmulr",
                 "smmlar", "ldrd"):
        assert insn in disasm, f"{insn} not used on the Cortex-M4 build"
    proc = _run(["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-monitor", "none",
                 "-serial", "null", "-icount", "shift=0", "-semihosting-config",
                 "enable=on,target=native", "-kernel", str(elf)])
    dev_out = (proc.stdout + proc.stderr).split()
    assert dev_out[-1] == "end"
    dev_out = dev_out[:-1]
    assert len(dev_out) == len(host_out) == 12
    names = ["sxtb16/sxtb16_ror8/read", "sxtab16", "sxtab16_ror8", "rounding form",
             "rounding form (and its SMMLAR fold) mismatches", "smlad", "smlabb", "smlatt",
             "sadd16", "smlabt", "smlatb", "load2"]
    assert host_out[4] == "00000000", "the rounding form differs from td_requantize (host)"
    for name, h, d in zip(names, host_out, dev_out, strict=True):
        assert h == d, f"{name}: host twin and Cortex-M4 instruction differ"


def _device_cases() -> list:  # type: ignore[type-arg]
    bench = _bench()
    cases = []
    models = {}
    for s in TARGET_SPECS:
        model = build_model(s)
        models[s.id] = model
        cs = bench.device_cases(load_tflite(model), s.id, seed=s.seed)
        assert len(cs) == 1, f"{s.id}: no dsp kernel selected"
        cases.append((s, model, cs[0]))
    return cases


@pytest.fixture(scope="module")
def device_run() -> tuple[list, list]:  # type: ignore[type-arg]
    cases = _device_cases()
    return cases, _bench().run_on_device([c for _, _, c in cases])


@pytest.mark.parametrize("opt", ["-O0", "-Os", "-O3"])
def test_dsp_kernels_at_other_optimisation_levels(opt: str) -> None:
    """The inline assembly must assemble, and stay exact, whatever the register allocation."""
    cases = _device_cases()
    results = _bench().run_on_device([c for _, _, c in cases], opt=opt)
    bad = [s.id for (s, _, _), r in zip(cases, results, strict=True) if not r.equal]
    assert not bad, f"{opt}: dsp and reference kernels differ on the device for {bad}"


@pytest.mark.parametrize("index", range(len(TARGET_SPECS)), ids=[s.id for s in TARGET_SPECS])
def test_dsp_kernel_on_cortex_m4(index: int, device_run: tuple[list, list]) -> None:  # type: ignore[type-arg]
    cases, results = device_run
    spec, model, case = cases[index]
    res = results[index]
    assert case.dsp.symbol == spec.expect
    assert res.equal, f"{spec.id}: dsp and reference kernels differ on the device"
    graph = load_tflite(model)
    inp = case.input.reshape(graph.inputs[0].shape)
    expected = run_oracle(model, [inp])[0]
    got = res.dsp_output.reshape(expected.shape)
    assert np.array_equal(got, expected), f"{spec.id} vs oracle: {mismatch(got, expected)}"
    assert res.scratch_c == case.dsp.scratch_bytes, (
        f"{spec.id}: C scratch size {res.scratch_c}, host planned {case.dsp.scratch_bytes}")
    assert res.dsp_instructions > 0 and res.ref_instructions > 0


def test_pointwise_back_twin_on_cortex_m4() -> None:
    """Every pointwise case again with the back-to-front twin (the in-place planner's pick for
    the DS-CNN), which shares the forward kernel's group product but visits the groups in the
    other order: same bytes as the reference kernel on the device and as the oracle."""
    from dataclasses import replace

    back = "td_conv2d_1x1_back_s8_dsp"
    cases = []
    for s, model, c in _device_cases():
        if c.dsp.symbol != "td_conv2d_1x1_s8_dsp":
            continue
        sources = tuple(f.replace("td_conv2d_1x1_s8_dsp", back) for f in c.dsp_sources)
        cases.append((s, model, replace(c, dsp=replace(c.dsp, symbol=back),
                                        dsp_sources=sources)))
    assert len(cases) >= 20, len(cases)
    results = _bench().run_on_device([c for _, _, c in cases])
    for (spec, model, case), res in zip(cases, results, strict=True):
        assert res.equal, f"{spec.id}: {back} and the reference kernel differ on the device"
        graph = load_tflite(model)
        expected = run_oracle(model, [case.input.reshape(graph.inputs[0].shape)])[0]
        got = res.dsp_output.reshape(expected.shape)
        assert np.array_equal(got, expected), f"{spec.id} vs oracle: {mismatch(got, expected)}"


def test_pointwise_kernels_with_overlapping_buffers(tmp_path: Path) -> None:
    """In-place execution of the dsp pointwise kernel and its back-to-front twin on the
    Cortex-M4 (the assembly channel loop, which the host tier's C twin does not run): output
    overlapping input at the tightest lead and trail each declared access order tolerates, on
    the planner's grid and at a random safe shift, gives the oracle's bytes; the unsafe shift
    16 bytes inside the lead changes the DS-CNN layer's result (so the check can fail)."""
    from dataclasses import replace

    from test_mve_target import check_overlapped, overlap_cases

    from tinydeploy.boards import get_board
    from tinydeploy.kernels.access import overlap_violation
    from tinydeploy.kernels.registry import variant_by_symbol

    rng = np.random.default_rng(13)
    specs = [s for s in SPECS if s.expect == "td_conv2d_1x1_s8_dsp"
             and (s.id in ("pw_dscnn", "pw_odd_c", "pw_c64_odd_px") or s.id.startswith("pw_asm"))]
    cases = [c for s in specs for c in overlap_cases(s, rng, get_board("mps2-an386"))]
    assert {c.call.symbol for c in cases} == {"td_conv2d_1x1_s8_dsp",
                                              "td_conv2d_1x1_back_s8_dsp"}
    # the twin tolerates its output at or after its input: 16 bytes before it is unsafe
    back = variant_by_symbol("CONV_2D", "td_conv2d_1x1_back_s8_dsp")
    dscnn_back = [c for c in cases if c.spec.id == "pw_dscnn" and c.call.symbol == back.symbol]
    lead = min(c.shift for c in dscnn_back if c.safe)
    assert back.access is not None
    assert overlap_violation(back.access(dscnn_back[0].call), lead - 16) is not None
    cases.append(replace(dscnn_back[0], shift=lead - 16, safe=False))
    # every safe shift gives the oracle's bytes; both kernels' unsafe shifts change pw_dscnn
    check_overlapped(cases, tmp_path, ("pw_dscnn",), target=lambda _: _bench().M4_TARGET)


def test_lines_kernel_with_overlapping_buffers(tmp_path: Path) -> None:
    """In-place execution of the 3x3 lines depthwise on the Cortex-M4 (its assembly line
    block, which the host tier's C twin does not run): output overlapping input at the
    tightest lead and trail its declared access order tolerates, on the planner's grid and at
    a random safe shift, gives the oracle's bytes (lines along either side, batches, a
    clamped activation); the unsafe shift 16 bytes inside the lead changes the DS-CNN
    layer's result."""
    from test_mve_target import check_overlapped, overlap_cases

    from tinydeploy.boards import get_board

    rng = np.random.default_rng(17)
    ids = ("dw_dscnn", "dw_c5", "dwl_valid_b2", "dwl_relu6_cols", "dw3_zp_lo")
    specs = [s for s in SPECS if s.id in ids]
    assert {s.expect for s in specs} == {"td_dwconv2d_3x3_lines_s8_dsp"}, specs
    cases = [c for s in specs for c in overlap_cases(s, rng, get_board("mps2-an386"))]
    check_overlapped(cases, tmp_path, ("dw_dscnn",), target=lambda _: _bench().M4_TARGET)


def test_window_kernel_with_overlapping_buffers(tmp_path: Path) -> None:
    """In-place execution of the window kernels (td_conv2d_window_s8_dsp and its fewer-rows
    form td_conv2d_window_frame_s8_dsp) on the Cortex-M4:
    its output overlapping its input at the tightest lead and trail its declared access order
    (conv_rows_order: a group's receptive fields are read before its outputs are written)
    tolerates, on the planner's grid and at a random safe shift, gives the oracle's bytes; the
    unsafe shift 16 bytes inside the lead changes the results of two of them (so the check can
    fail)."""
    from test_mve_target import check_overlapped, overlap_cases

    from tinydeploy.boards import get_board

    rng = np.random.default_rng(17)
    kernels = {"td_conv2d_window_s8_dsp", "td_conv2d_window_frame_s8_dsp"}
    specs = [s for s in SPECS if s.expect in kernels]
    cases = [c for s in specs for c in overlap_cases(s, rng, get_board("mps2-an386"))]
    assert {c.call.symbol for c in cases} == kernels
    assert any(not c.safe for c in cases)
    check_overlapped(cases, tmp_path, ("cw_c4_3x3", "c1_bigbias", "cwf_3x3x16_b2"),
                     target=lambda _: _bench().M4_TARGET)


def test_dscnn_end_to_end_with_dsp_kernels(tmp_path: Path) -> None:
    """DS-CNN built by `tinydeploy build` (default: --optimize balanced) for mps2-an386 uses
    the dsp kernels for every convolution, depthwise and the classifier, with no larger an
    arena than the reference kernels' plan (its convolutions take no arena scratch), and
    validates bit-exact against tflite-micro over the serial protocol."""
    from tinydeploy.boards import get_board
    from tinydeploy.build.firmware import build_firmware
    from tinydeploy.flash.runner import Firmware
    from tinydeploy.link.connect import connect
    from tinydeploy.link.validate import random_inputs, validate_cases

    model = ROOT / "tests" / "fixtures" / "dscnn_kws.tflite"
    graph = load_tflite(model)
    result = build_firmware(model, get_board("mps2-an386"), "validate", tmp_path / "fw")
    symbols = {k.symbol for k in result.kernels}
    # (the 64 -> 12 classifier: balanced leaves it to the reference kernel, the DSP one's
    # 2 KB more code saving only ~10,000 instructions; tinydeploy/plan/choose.py)
    assert {"td_conv2d_window_s8_dsp", "td_dwconv2d_3x3_lines_s8_dsp",
            "td_fully_connected_s8_ref"} <= symbols, symbols
    # the pointwise layers: the forward kernel or its back-to-front twin (the planner's pick)
    assert {"td_conv2d_1x1_s8_dsp", "td_conv2d_1x1_back_s8_dsp"} & symbols, symbols
    assert not {"td_conv2d_s8_ref", "td_dwconv2d_s8_ref"} & symbols
    sel = result.manifest["selection"]
    assert sel["optimize"] == "balanced"
    assert result.arena_bytes <= sel["arena_limit_bytes"], sel
    assert result.arena_bytes <= sel["reference_arena_bytes"], sel
    with connect(Firmware.from_build_dir(tmp_path / "fw"), timeout=120) as conn:
        report = validate_cases(conn.session.run, model.read_bytes(),
                                random_inputs(graph, 4, seed=3))
    assert report.bit_exact_cases == report.cases == 4, report.first_mismatch


def _forced_on_device(specs: list, select, opt: str = "-O2") -> list[str]:  # type: ignore[type-arg]
    """Run ``specs`` on the device (built with ``opt``) with the kernel ``select`` puts in
    place of the selected one; the ids whose bytes differ from the reference kernel's or the
    oracle's."""
    from dataclasses import replace

    bench = _bench()
    cases, models = [], {}
    for s in specs:
        model = build_model(s)
        g = load_tflite(model)
        (case,) = bench.device_cases(g, s.id, seed=s.seed)
        choice = select(g).choices[0]
        cases.append(replace(case, dsp=choice.call, dsp_sources=tuple(
            f for f in choice.variant.sources if f.endswith(".c"))))
        models[s.id] = (model, g)
    results = bench.run_on_device(cases, opt=opt)
    bad = []
    for s, case, res in zip(specs, cases, results, strict=True):
        model, g = models[s.id]
        x = case.input.reshape(g.inputs[0].shape)
        expected = run_oracle(model, [x])[0]
        if not res.equal or not np.array_equal(res.dsp_output.reshape(expected.shape), expected):
            bad.append(s.id)
    return bad


@pytest.mark.parametrize("opt", ["-O2", "-Os"])
def test_partial_groups_on_cortex_m4(opt: str) -> None:
    """Every group size of the pointwise and window kernels' product (the host tier's
    PARTIAL_SPECS: the five-row assembly loop for partial groups, the six-row one for full
    ones) on the device, and the pointwise cases again with the back-to-front twin, whose
    partial group comes first: the reference kernel's bytes, which are the oracle's."""
    from tinydeploy.boards import get_board
    from tinydeploy.kernels.registry import select_kernels

    board = get_board("mps2-an386")
    bad = _forced_on_device(list(PARTIAL_SPECS), lambda g: select_kernels(g, board), opt)
    assert not bad, f"{opt}: partial groups differ on the device for {bad}"
    pointwise = [s for s in PARTIAL_SPECS if s.expect == "td_conv2d_1x1_s8_dsp"]
    bad = _forced_on_device(pointwise, selection_with("td_conv2d_1x1_back_s8_dsp"), opt)
    assert not bad, f"{opt}: the back twin's partial groups differ on the device for {bad}"


def test_lines_kernel_on_edge_shapes_on_cortex_m4() -> None:
    """The 3x3 lines kernel on the shapes its cost model leaves to other kernels (the host
    tier's LINES_EDGE_SPECS), put in place of the selected kernel: on the device it writes
    the reference kernel's bytes, which are the oracle's."""
    bad = _forced_on_device(list(LINES_EDGE_SPECS), lines_selection)
    assert not bad, f"lines kernel differs on the device for {bad}"


def test_displaced_cases_on_their_own_kernels_on_cortex_m4() -> None:
    """The declared cases of the unrolled and the general kernel that the lines kernel's cost
    model now takes (the host tier's DISPLACED), on the kernel they were written for."""
    for symbol in sorted(set(DISPLACED.values())):
        specs = [s for s in SPECS if DISPLACED.get(s.id) == symbol]
        bad = _forced_on_device(specs, selection_with(symbol))
        assert not bad, f"{symbol} differs on the device for {bad}"


def test_c1_kernel_on_window_shapes_on_cortex_m4() -> None:
    """The one-channel kernel on the shapes the window kernel takes (the host tier's
    C1_SPECS), put in place of the selected kernel."""
    bad = _forced_on_device(list(C1_SPECS), c1_selection)
    assert not bad, f"one-channel kernel differs on the device for {bad}"


def test_frame_kernel_on_deep_layers_on_cortex_m4() -> None:
    """The frame-only matrix product (three, two or one row per pass) on the host tier's
    FRAME_SPECS, put in place of the selected kernel."""
    bad = _forced_on_device(list(FRAME_SPECS), frame_selection)
    assert not bad, f"frame kernel differs on the device for {bad}"


def test_frame_kernel_with_overlapping_buffers(tmp_path: Path) -> None:
    """In-place execution of td_conv2d_frame_s8_dsp on the Cortex-M4 at the shifts its access
    order (groups of its row count) tolerates gives the oracle's bytes; the unsafe shift 16
    bytes inside the lead changes the result of the layer whose output is as large as its
    input (so the check can fail)."""
    from test_mve_target import check_overlapped, overlap_cases

    from tinydeploy.boards import get_board
    from tinydeploy.kernels import arm_dsp

    rng = np.random.default_rng(23)
    specs = [s for s in FRAME_SPECS if s.k == (1, 1)]
    cases = [c for s in specs for c in overlap_cases(s, rng, get_board("mps2-an386"),
                                                     arm_dsp.CONV2D_FRAME_S8_DSP)]
    assert {c.call.symbol for c in cases} == {"td_conv2d_frame_s8_dsp"}
    assert any(not c.safe for c in cases)
    check_overlapped(cases, tmp_path, ("fr_pw128_square",), target=lambda _: _bench().M4_TARGET)


def test_wide_kernel_on_cortex_m4() -> None:
    """The kernel on widened weights (its asm: inner and border columns) on the host tier's
    WIDE_SPECS, put in place of the selected kernel: the reference kernel's bytes, which are
    the oracle's; the bias-less cases against the reference kernel alone; the same at the
    other optimisation levels (the asm's operands in other registers and frames)."""
    from dataclasses import replace

    bad = _forced_on_device(list(WIDE_SPECS), wide_selection)
    assert not bad, f"wide kernel differs on the device for {bad}"
    bench = _bench()
    cases = []
    for s in WIDE_NOBIAS_SPECS + WIDE_SPECS[:5]:
        g = load_tflite(build_model(s))
        (case,) = bench.device_cases(g, s.id, seed=s.seed)
        choice = wide_selection(g).choices[0]
        cases.append(replace(case, dsp=choice.call, dsp_sources=tuple(
            f for f in choice.variant.sources if f.endswith(".c"))))
    for opt in ("-O2", "-Os", "-O3"):
        results = bench.run_on_device(cases, opt=opt)
        differ = [c.name for c, r in zip(cases, results, strict=True) if not r.equal]
        assert not differ, f"{opt}: wide kernel differs from the reference for {differ}"


def test_wide_kernel_with_overlapping_buffers(tmp_path: Path) -> None:
    """In-place execution of the kernel on widened weights on the Cortex-M4: its output over
    its input at the tightest lead and trail its access order (dwconv_lanes_order(4): a
    group's nine taps are read before its four outputs are written) tolerates, on the
    planner's grid and at a random safe shift, gives the oracle's bytes; the unsafe shift 16
    bytes inside the lead changes the streamed row's result."""
    from test_mve_target import check_overlapped, overlap_cases

    from tinydeploy.boards import get_board
    from tinydeploy.kernels import arm_dsp

    rng = np.random.default_rng(29)
    ids = ("dww_row5_c64", "dww_rows2_w7_c128", "dww_same_3x5_c64", "dww_same_s2_b2")
    specs = [s for s in WIDE_SPECS if s.id in ids]
    cases = [c for s in specs for c in overlap_cases(s, rng, get_board("mps2-an386"),
                                                     arm_dsp.DWCONV2D_3X3_WIDE_S8_DSP)]
    assert any(not c.safe for c in cases)
    check_overlapped(cases, tmp_path, ("dww_row5_c64",), target=lambda _: _bench().M4_TARGET)
