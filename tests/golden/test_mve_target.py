"""Target tier of the MVE (Helium) kernels: compiled for the Cortex-M55 and run on QEMU
mps3-an547 with -icount.

The MVE kernels' sources require MVE (``#error`` otherwise), so there is no host tier: every
case runs on the device. Cases are the DSP tiers' declared specs of the same ops (odd channel
counts, not multiples of 16, strides, batches, zero points at the int8 extremes, per-channel
scales over many octaves, fused activations, large biases) plus random ones, each with a
random input and the two extreme inputs (all -128, all 127). For every case one program runs
the reference kernel and the MVE kernel on the same input and compares both outputs on the
device; here the MVE bytes are also compared with the tflite-micro oracle, and the C scratch
size companion with the host's plan. The program generator and runner are those of
benchmarks/bench_kernels.py (the DSP target tier's harness), given a DeviceTarget whose
machine, core and linker script are the Cortex-M55's.

In-place execution is checked on the device too: every mve kernel and the pointwise
kernel's back-to-front twin run with their output overlapping their input at the shifts
their declared access orders tolerate (and at one they do not, which must change the
result), compared with the oracle.

The ARM toolchain and QEMU are required (CI installs them): their absence fails the tier.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest
from test_dsp_host import C1, DW, DWL, SPECS, Spec, build_model, mismatch, random_specs

from benchmarks.bench_kernels import DeviceCase, DeviceTarget, run_on_device
from tinydeploy.boards import Board, get_board
from tinydeploy.codegen import cemit
from tinydeploy.kernels.access import overlap_violation, tolerated_shifts
from tinydeploy.kernels.registry import (
    KernelCall,
    KernelVariant,
    select_kernels,
    variant_by_symbol,
    variants,
)
from tinydeploy.model.analysis import op_macs
from tinydeploy.model.loader import load_tflite
from tinydeploy.oracle import run_oracle
from tinydeploy.resources import firmware_dir
from tinydeploy.toolchain import Core, ldflags

pytestmark = pytest.mark.target

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[2]
MVE_BOARD = get_board("mps3-an547")
MACHINE = "mps3-an547"
# the SysTick counts the 32 MHz clock: 1000 / 32 instructions per tick under -icount shift=0;
# the private harness reports ticks (its INSTRUCTIONS_PER_TICK is an int), see instructions()
INSTRUCTIONS_PER_TICK = 1000 / 32

# ITCM for code and constants, DTCM for data (docs/emulation.md, mps3-an547)
AN547_LD = """/* kernel test programs on QEMU mps3-an547: 512 K ITCM, 512 K DTCM */
MEMORY
{
    FLASH (rx) : ORIGIN = 0x10000000, LENGTH = 512K
    RAM (rwx)  : ORIGIN = 0x30000000, LENGTH = 512K
}
"""

MVE_OF = {C1: "td_conv2d_1x1_s8_mve", DW: "td_dwconv2d_3x3_s8_mve",
          DWL: "td_dwconv2d_3x3_s8_mve"}


def mve_specs(pool: tuple[Spec, ...]) -> tuple[Spec, ...]:
    """The specs of ``pool`` whose op has an MVE kernel, expecting the MVE symbol."""
    return tuple(replace(s, expect=MVE_OF[s.expect]) for s in pool if s.expect in MVE_OF)


# the DSP tiers' declared specs, then random ones (two seeds)
DECLARED_SPECS = mve_specs(SPECS)
MVE_SPECS = DECLARED_SPECS + mve_specs(tuple(random_specs(48, seed=11)) + tuple(
    replace(s, id=f"{s.id}_b") for s in random_specs(48, seed=29)))


@pytest.fixture(scope="module", autouse=True)
def _tools() -> None:
    for tool in ("arm-none-eabi-gcc", "qemu-system-arm"):
        if shutil.which(tool) is None:
            pytest.fail(f"the mve target tier needs {tool} (apt-get install gcc-arm-none-eabi "
                        "libnewlib-arm-none-eabi qemu-system-arm)")


def runtime_target(work: Path, machine: str, core: Core, script: str) -> DeviceTarget:
    """benchmarks/bench_kernels.py's device target for ``machine``: the shared bare-metal
    runtime plus the linker script text ``script`` under the runtime's name, in ``work``;
    results count SysTick ticks (instructions_per_tick 1)."""
    rt = work / "rt"
    rt.mkdir(parents=True, exist_ok=True)
    src_rt = firmware_dir() / "kernels" / "arm" / "test"
    for name in ("td_dsp_test_rt.c", "td_dsp_test_rt.h"):
        shutil.copyfile(src_rt / name, rt / name)
    (rt / "td_dsp_test.ld").write_text(script, encoding="utf-8")
    return DeviceTarget(machine, core, rt, 1)


def m55_target(work: Path) -> DeviceTarget:
    """The device target for the Cortex-M55 on mps3-an547: an AN547 memory map before the
    runtime's sections; ticks converted by instructions()."""
    an386_ld = (firmware_dir() / "kernels" / "arm" / "test" / "td_dsp_test.ld").read_text(
        encoding="utf-8")
    return runtime_target(work, MACHINE, Core.CORTEX_M55,
                          AN547_LD + an386_ld[an386_ld.index("ENTRY("):])


REQUANT_CHECK = r"""
#include KERNEL_SOURCE
#include "td_dsp_test_rt.h"

static uint32_t td_state = 0x9E3779B9u;

static uint32_t td_rand(void)
{
    td_state ^= td_state << 13;
    td_state ^= td_state >> 17;
    td_state ^= td_state << 5;
    return td_state;
}

int main(void)
{
    uint32_t lanes = 0, bad = 0, ties = 0;
    for (uint32_t it = 0; it < ITERATIONS; ++it) {
        int32_t x[4], m[4], s[4], got[4];
        for (int j = 0; j < 4; ++j) {
            const uint32_t kind = td_rand() % 4u;
            s[j] = (int32_t)(td_rand() % 62u) - 31;
            m[j] = td_rand() % 16u == 0 ? 0 : (int32_t)((1u << 30) + (td_rand() >> 2));
            const int32_t e = s[j] < 0 ? -s[j] : 0;
            if (kind == 0 && e >= 1 && e <= 28) {
                /* an exact tie of the final rounding shift: m = 0.5 halves x exactly */
                const int32_t q = (int32_t)(td_rand() & ((1u << (28 - e)) - 1u));
                const int32_t h = (q << e) + (1 << (e - 1));
                m[j] = 1 << 30;
                x[j] = (td_rand() & 1u) ? -2 * h : 2 * h;
                ++ties;
            } else if (kind == 0) {
                /* an exact tie of the doubling high multiply: odd x times 0.5, no left shift */
                m[j] = 1 << 30;
                s[j] = -(int32_t)(td_rand() % 3u);
                x[j] = (int32_t)(td_rand() | 1u);
                ++ties;
            } else if (kind == 1) {
                x[j] = (int32_t)td_rand();
            } else if (kind == 2) {
                x[j] = (int32_t)(td_rand() % 2001u) - 1000;
            } else {
                x[j] = (int32_t)td_rand() >> (td_rand() % 31u);
            }
        }
        vst1q_s32(got, td_requantize_x4_mve(vld1q_s32(x), vld1q_s32(m), vld1q_s32(s)));
        for (int j = 0; j < 4; ++j, ++lanes) {
            if (got[j] != td_requantize(x[j], m[j], s[j])) {
                if (bad++ < 8) {
                    td_rt_puts("mismatch ");
                    td_rt_put_hex(&x[j], 4);
                }
            }
        }
    }
    td_rt_puts("requant ");
    td_rt_put_u32(lanes);
    td_rt_puts(" ");
    td_rt_put_u32(bad);
    td_rt_puts(" ");
    td_rt_put_u32(ties);
    td_rt_puts("\n");
    return 0;
}
"""


@pytest.mark.parametrize("kernel", sorted(MVE_OF.values()))
def test_vector_requantize_equals_td_requantize(kernel: str, tmp_path: Path) -> None:
    """``kernel``'s td_requantize_x4_mve gives td_requantize's result on every lane: random
    operands over the whole range (multipliers in [2^30, 2^31) and 0, shifts in [-31, 30],
    wrapping left shifts) and exact ties of the high multiply and of the final rounding shift,
    of both signs."""
    target = m55_target(tmp_path)
    src = tmp_path / "requant_check.c"
    src.write_text(REQUANT_CHECK, encoding="utf-8")
    elf = tmp_path / "requant.elf"
    rt = target.runtime
    cmd = ["arm-none-eabi-gcc", *target.compile_flags("-O2"), "-DITERATIONS=40000u",
           f'-DKERNEL_SOURCE="{kernel}.c"',
           "-I", str(ROOT / "firmware" / "kernels"), "-I", str(ROOT / "firmware" / "kernels" /
                                                                "arm"),
           "-I", str(rt), str(src), str(rt / "td_dsp_test_rt.c"),
           *ldflags(target.core, str(rt / "td_dsp_test.ld")), "-o", str(elf)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = subprocess.run(["qemu-system-arm", "-M", MACHINE, "-nographic", "-monitor", "none",
                           "-serial", "null", "-semihosting-config", "enable=on,target=native",
                           "-kernel", str(elf)], capture_output=True, text=True, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-2000:]
    line = next(ln for ln in out.splitlines() if ln.startswith("requant "))
    lanes, bad, ties = (int(v) for v in line.split()[1:])
    assert lanes == 4 * 40000 and ties > 30000, line
    assert bad == 0, out[-2000:]


def instructions(ticks: int) -> int:
    """Guest instructions of a SysTick interval on mps3-an547 under -icount shift=0."""
    return round(ticks * INSTRUCTIONS_PER_TICK)


def mve_cases(model: bytes, name: str, seed: int) -> list[DeviceCase]:
    """bench DeviceCases (ref kernel vs the selected mve kernel) of the single-op ``model``:
    one random input and the two extremes."""
    graph = load_tflite(model)
    sel = select_kernels(graph, MVE_BOARD)
    choice = sel.choices[0]
    op = graph.operators[0]
    assert choice.call is not None
    ref = sorted((v for v in variants(op.opcode)
                  if v.impl == "ref" and v.accepts(graph, op) is None),
                 key=lambda v: (-v.priority, v.symbol))[0]
    inp, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    rng = np.random.default_rng(seed + 1000)
    inputs = {"random": rng.integers(-128, 128, size=inp.size).astype(np.int8),
              "all_min": np.full(inp.size, -128, np.int8),
              "all_max": np.full(inp.size, 127, np.int8)}
    return [DeviceCase(
        name=f"{name} {label}", ref=ref.prepare(graph, op), dsp=choice.call,
        ref_sources=tuple(s for s in ref.sources if s.endswith(".c")),
        dsp_sources=tuple(s for s in choice.variant.sources if s.endswith(".c")),
        input=arr, out_bytes=out.nbytes, macs=int(op_macs(graph, op)))
        for label, arr in inputs.items()]


def split_by_size(items: Sequence[T], size: Callable[[T], int], budget: int) -> list[list[T]]:
    """``items`` in order, split into runs whose ``size`` sums stay under ``budget`` (an
    item larger than the budget alone)."""
    out: list[list[T]] = [[]]
    used = 0
    for item in items:
        n = size(item)
        if out[-1] and used + n > budget:
            out.append([])
            used = 0
        out[-1].append(item)
        used += n
    return out


def chunks(cases: list, budget: int = 256 * 1024) -> list[list]:  # type: ignore[type-arg]
    """``cases`` in order, split into programs whose constant data (inputs, ref and mve
    constants) stays under ``budget`` bytes: the AN547's 512 K ITCM holds code and
    constants."""
    return split_by_size(cases, lambda c: c.input.nbytes + sum(
        a.values.nbytes for call in (c.ref, c.dsp) for a in call.consts), budget)


@pytest.fixture(scope="module")
def device_run(tmp_path_factory: pytest.TempPathFactory) -> dict:  # type: ignore[type-arg]
    """Every spec's cases in one program on mps3-an547: {spec id: [(case, result)]}."""
    target = m55_target(tmp_path_factory.mktemp("m55"))
    flat = []
    for s in MVE_SPECS:
        model = build_model(s)
        flat += [(s.id, model, c) for c in mve_cases(model, s.id, s.seed)]
    results = []
    for chunk in chunks([c for _, _, c in flat]):
        results += run_on_device(chunk, target=target)
    out: dict = {}  # type: ignore[type-arg]
    for (sid, model, case), res in zip(flat, results, strict=True):
        out.setdefault(sid, []).append((model, case, res))
    return out


@pytest.mark.parametrize("spec", MVE_SPECS, ids=[s.id for s in MVE_SPECS])
def test_mve_kernel_on_cortex_m55(spec: Spec, device_run: dict) -> None:  # type: ignore[type-arg]
    graph = load_tflite(build_model(spec))
    chosen = select_kernels(graph, MVE_BOARD).choices[0].variant
    assert chosen.symbol == spec.expect and chosen.impl == "mve", (
        f"{spec.id}: selected {chosen.symbol}, expected {spec.expect}")
    failures = []
    for model, case, res in device_run[spec.id]:
        expected = run_oracle(model, [case.input.reshape(graph.inputs[0].shape)])[0]
        got = res.dsp_output.reshape(expected.shape)
        if not res.equal:
            failures.append(f"{case.name}: mve and reference kernels differ on the device")
        if not np.array_equal(got, expected):
            failures.append(f"{case.name} vs oracle: {mismatch(got, expected)}")
        if res.scratch_c != case.dsp.scratch_bytes:
            failures.append(f"{case.name}: C scratch size {res.scratch_c}, host planned "
                            f"{case.dsp.scratch_bytes}")
        if not (res.dsp_instructions > 0 and res.ref_instructions > 0):
            failures.append(f"{case.name}: no instructions counted")
    assert not failures, f"{spec.id} ({spec})\n" + "\n".join(failures)


def test_mve_faster_than_reference_on_dscnn_shapes(device_run: dict) -> None:  # type: ignore[type-arg]
    """On DS-CNN's own shapes the MVE kernel must beat the reference clearly (counts under
    icount are exact, so this is no timing flake)."""
    for sid in ("pw_dscnn", "dw_dscnn"):
        for _, case, res in device_run[sid]:
            ratio = res.ref_instructions / res.dsp_instructions
            print(f"{case.name}: ref {instructions(res.ref_instructions):,} mve "
                  f"{instructions(res.dsp_instructions):,} instructions, ratio {ratio:.2f}")
            assert ratio > 2.0, f"{case.name}: ref/mve instruction ratio {ratio:.2f}"


# --- overlapping buffers (in-place execution) on the device --------------------------------

OVERLAP_SPECS = tuple(s for s in MVE_SPECS if s in DECLARED_SPECS or s.id.endswith("_b"))


@dataclass(frozen=True)
class OverlapCase:
    """One mve kernel call run with its output ``shift`` bytes after its input in one
    buffer; ``safe``: the kernel's declared access order proves the shift safe."""

    spec: Spec
    call: KernelCall
    sources: tuple[str, ...]
    input: np.ndarray
    out_bytes: int
    shift: int
    safe: bool


def overlap_cases(spec: Spec, rng: np.random.Generator, board: Board = MVE_BOARD,
                  variant: KernelVariant | None = None) -> list[OverlapCase]:
    """For the kernel ``board`` selects for ``spec`` (default: the mve one) and each of its
    twins that accepts it (the back-to-front pointwise kernel), or for ``variant`` alone: the
    tightest lead and trail its access order tolerates on a 1-byte grid, both on the
    planner's 16-byte grid, one more safe shift at random, and the unsafe shift 16 bytes
    inside the tightest lead (where the buffers still overlap)."""
    graph = load_tflite(build_model(spec))
    op = graph.operators[0]
    chosen = select_kernels(graph, board).choices[0].variant
    kernels = [variant] if variant is not None else [chosen] + [
        t for t in (variant_by_symbol(chosen.op, n) for n in chosen.twins)
        if t.accepts(graph, op) is None]
    inp = rng.integers(-128, 128, size=graph.tensor(op.inputs[0]).size).astype(np.int8)
    n_out = graph.tensor(op.outputs[0]).nbytes
    out: list[OverlapCase] = []
    for v in kernels:
        assert v.access is not None, v.symbol
        call = v.prepare(graph, op)
        order = v.access(call)
        lead, trail = tolerated_shifts(order, 1)
        shifts = {lead, trail, *tolerated_shifts(order, 16)}
        pool = [s for s in range(lead - 48, trail + 48)
                if -n_out < s < inp.size and overlap_violation(order, s) is None]
        if pool:
            shifts.add(int(rng.choice(pool)))
        if -n_out < lead + 16 < inp.size:
            shifts.add(lead + 16)
        srcs = tuple(x for x in v.sources if x.endswith(".c"))
        out += [OverlapCase(spec, call, srcs, inp, n_out, sh,
                            overlap_violation(order, sh) is None) for sh in sorted(shifts)]
    return out


def render_overlap_program(cases: Sequence[OverlapCase]) -> str:
    """main.c: for each case, the input copied into one buffer, the kernel called with its
    output ``shift`` bytes from it, "ov <k>" and the output bytes in hex printed."""
    size = max(16 + c.out_bytes + max(c.input.size, c.shift + c.out_bytes) + 16 for c in cases)
    scratch = max(16, max(c.call.scratch_bytes for c in cases))
    parts = ['#include <stdint.h>\n#include <string.h>\n#include "td_kernels.h"\n'
             '#include "td_dsp_test_rt.h"\n\n',
             f"static int8_t buf[{size}] {cemit.ALIGN};\n"
             f"static uint8_t scratch[{scratch}] {cemit.ALIGN};\n"]
    body = []
    for k, c in enumerate(cases):
        parts.append(cemit.emit_consts(c.call, f"c{k}", static=True))
        parts.append(cemit.emit_params(c.call, f"c{k}", static=True))
        vals = cemit.format_values(c.input, "int8_t")
        parts.append(f"static const int8_t c{k}_in[{c.input.size}] = {{\n{vals}\n}};\n")
        base = 16 + c.out_bytes
        call = cemit.emit_call(c.call, f"c{k}", {"in0": f"buf + {base}",
                                                  "out0": f"buf + {base + c.shift}",
                                                  "scratch": "scratch"})
        body.append(f"""    memset(buf, 0x5A, sizeof buf);
    memcpy(buf + {base}, c{k}_in, sizeof c{k}_in);
    {call}
    td_rt_puts("ov {k}\\n");
    td_rt_put_hex(buf + {base + c.shift}, {c.out_bytes});
""")
    parts.append("int main(void)\n{\n" + "".join(body) + '    td_rt_puts("end\\n");\n'
                 "    return 0;\n}\n")
    return "".join(parts)


def run_overlapped_on_device(cases: Sequence[OverlapCase], work: Path,
                             target: DeviceTarget | None = None) -> list[np.ndarray]:
    """Build and run the overlap program on ``target`` (default: the Cortex-M55 on
    mps3-an547); the output bytes of every case."""
    target = target or m55_target(work)
    main_c = work / "overlap.c"
    main_c.write_text(render_overlap_program(cases), encoding="utf-8")
    sources = sorted({s for c in cases for s in c.sources})
    rt = target.runtime
    elf = work / "overlap.elf"
    cmd = ["arm-none-eabi-gcc", *target.compile_flags("-O2"),
           "-I", str(firmware_dir() / "kernels"), "-I", str(firmware_dir() / "kernels" / "arm"),
           "-I", str(rt), str(main_c), str(rt / "td_dsp_test_rt.c"),
           *(str(firmware_dir() / s) for s in sources),
           *ldflags(target.core, str(rt / "td_dsp_test.ld")), "-o", str(elf)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = subprocess.run(["qemu-system-arm", "-M", target.machine, "-nographic", "-monitor",
                           "none", "-serial", "null", "-semihosting-config",
                           "enable=on,target=native", "-kernel", str(elf)],
                          capture_output=True, text=True, timeout=300)
    lines = (proc.stdout + proc.stderr).splitlines()
    assert proc.returncode == 0 and "end" in lines, "\n".join(lines[-20:])
    outs = [np.frombuffer(bytes.fromhex(lines[i + 1].strip()), dtype=np.int8)
            for i, ln in enumerate(lines) if ln.startswith("ov ")]
    assert len(outs) == len(cases), f"{len(outs)} of {len(cases)} cases reported"
    return outs


def overlap_chunks(cases: list[OverlapCase], budget: int = 192 * 1024
                   ) -> list[list[OverlapCase]]:
    """``cases`` split into programs whose constants and inputs stay under ``budget``."""
    return split_by_size(cases, lambda c: c.input.nbytes + sum(
        a.values.nbytes for a in c.call.consts), budget)


def test_mve_kernels_with_overlapping_buffers(tmp_path: Path) -> None:
    """In-place execution of the mve kernels on the Cortex-M55: each kernel (and the
    pointwise kernel's back-to-front twin) run with its output overlapping its input at the
    tightest lead and trail its declared access order tolerates, on the planner's grid and at
    a random safe shift, must give the tflite-micro oracle's bytes; the unsafe shift 16 bytes
    inside the lead must change the result on the DS-CNN shapes (so the check can fail)."""
    rng = np.random.default_rng(12)
    cases = [c for s in OVERLAP_SPECS for c in overlap_cases(s, rng)]
    assert {c.call.symbol for c in cases} == set(MVE_OF.values()) | {
        "td_conv2d_1x1_back_s8_mve"}
    check_overlapped(cases, tmp_path, ("pw_dscnn", "dw_dscnn"))


def check_overlapped(cases: list[OverlapCase], work: Path, must_change: tuple[str, ...],
                     target: Callable[[Path], DeviceTarget] = m55_target,
                     budget: int = 192 * 1024) -> None:
    """Run ``cases`` on ``target`` (in programs under ``budget`` bytes of constants and
    inputs): every safe shift must give the oracle's bytes, and for each spec id in
    ``must_change`` every kernel's unsafe shift must change them."""
    outs = []
    for i, chunk in enumerate(overlap_chunks(cases, budget)):
        sub = work / f"p{i}"
        sub.mkdir()
        outs += run_overlapped_on_device(chunk, sub, target(sub))
    expected: dict[str, np.ndarray] = {}
    failures, unsafe_changed = [], set()
    for c, got in zip(cases, outs, strict=True):
        if c.spec.id not in expected:
            g = load_tflite(build_model(c.spec))
            expected[c.spec.id] = run_oracle(build_model(c.spec), [
                c.input.reshape(g.inputs[0].shape)])[0].reshape(-1)
        exp = expected[c.spec.id]
        if c.safe and not np.array_equal(got, exp):
            failures.append(f"{c.spec.id} {c.call.symbol} shift {c.shift:+d}: "
                            f"{mismatch(got, exp)}")
        if not c.safe and not np.array_equal(got, exp):
            unsafe_changed.add((c.spec.id, c.call.symbol))
    assert not failures, "\n".join(failures)
    for sid in must_change:
        syms = {c.call.symbol for c in cases if c.spec.id == sid}
        for sym in syms:
            assert (sid, sym) in unsafe_changed, f"{sid} {sym}: the unsafe shift went unseen"


@pytest.mark.parametrize("opt", ["-O0", "-Os", "-O3"])
def test_mve_kernels_at_other_optimisation_levels(opt: str, tmp_path: Path) -> None:
    """The intrinsics must compile, and stay exact, whatever the optimisation level (declared
    specs, random input; the device compares with the reference kernel)."""
    target = m55_target(tmp_path)
    cases = [mve_cases(build_model(s), s.id, s.seed)[0] for s in DECLARED_SPECS]
    bad = []
    for chunk in chunks(cases):
        results = run_on_device(chunk, opt=opt, target=target)
        bad += [c.name for c, r in zip(chunk, results, strict=True) if not r.equal]
    assert not bad, f"{opt}: mve and reference kernels differ on the device for {bad}"


def test_no_mve_feature_keeps_dsp_or_reference() -> None:
    """Boards without MVE never get an MVE kernel: the M4F keeps its dsp kernel."""
    g = load_tflite(build_model(SPECS[0]))
    assert select_kernels(g, get_board("mps2-an386")).choices[0].variant.impl == "dsp"
    assert select_kernels(g, None).choices[0].variant.impl == "ref"
    assert select_kernels(g, MVE_BOARD).choices[0].variant.impl == "mve"


def test_dscnn_end_to_end_with_mve_kernels(tmp_path: Path) -> None:
    """DS-CNN built by `tinydeploy build` (the default, balanced) for mps3-an547 runs every
    depthwise and pointwise layer on the mve kernels (the pointwise ones back to front, the
    forward kernel's twin, so that the in-place chain stays within the arena limit) and
    validates bit-exact against tflite-micro over the serial protocol."""
    from tinydeploy.build.firmware import build_firmware
    from tinydeploy.flash.runner import Firmware
    from tinydeploy.link.connect import connect
    from tinydeploy.link.validate import random_inputs, validate_cases

    model = ROOT / "tests" / "fixtures" / "dscnn_kws.tflite"
    graph = load_tflite(model)
    result = build_firmware(model, MVE_BOARD, "validate", tmp_path / "fw")
    symbols = {k.symbol for k in result.kernels}
    assert {"td_dwconv2d_3x3_s8_mve", "td_conv2d_1x1_back_s8_mve"} <= symbols, symbols
    assert not {"td_conv2d_s8_ref", "td_dwconv2d_s8_ref"} & symbols, symbols
    with connect(Firmware.from_build_dir(tmp_path / "fw"), timeout=120) as conn:
        report = validate_cases(conn.session.run, model.read_bytes(),
                                random_inputs(graph, 4, seed=3))
    assert report.bit_exact_cases == report.cases == 4, report.first_mismatch
