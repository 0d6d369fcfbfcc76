"""Instruction counts of the reference and the dsp (SIMD) kernels on an emulated Cortex-M4.

For every op of a model (default: the MLPerf Tiny DS-CNN fixture) that has a dsp variant, one
bare-metal program for QEMU's mps2-an386 runs the reference kernel and the dsp kernel on the
same random input, times each with SysTick (under ``-icount shift=0`` one tick is exactly 40
instructions), checks on the device that both wrote the same bytes, and prints the counts
and their ratio. Counts under icount are deterministic: this script prints, never asserts.

    .venv/bin/python -m benchmarks.bench_kernels [model.tflite] [--json]

The program generator and runner below (`device_cases`, `run_on_device`) are also the
harness of tests/golden/test_dsp_target.py.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tinydeploy.boards import get_board
from tinydeploy.codegen import cemit
from tinydeploy.errors import ToolchainError
from tinydeploy.kernels.registry import KernelCall, select_kernels, variants
from tinydeploy.model.analysis import op_macs
from tinydeploy.model.ir import Graph
from tinydeploy.model.loader import load_tflite
from tinydeploy.resources import firmware_dir
from tinydeploy.toolchain import Core, cflags, ldflags

ROOT = Path(__file__).resolve().parent.parent   # the clone: benchmarks do not ship
FIRMWARE = firmware_dir()
TEST_RT = FIRMWARE / "kernels" / "arm" / "test"


@dataclass(frozen=True)
class DeviceTarget:
    """Where the kernel programs run: the QEMU machine (also the board id whose kernel
    selection is used), its core, the bare-metal runtime folder (``td_dsp_test_rt.c/.h`` and
    the linker script ``td_dsp_test.ld``) and how many instructions one SysTick tick is."""

    machine: str
    core: Core
    runtime: Path
    instructions_per_tick: int

    def compile_flags(self, opt: str = "-O2") -> tuple[str, ...]:
        """The toolchain's compile rule for the core (no stack analysis files)."""
        return cflags(self.core, opt, stack_analysis=False)


# 25 MHz SysTick, 1 ns per instruction under -icount shift=0: one tick is 40 instructions.
M4_TARGET = DeviceTarget("mps2-an386", Core.CORTEX_M4F, TEST_RT, 40)


@dataclass(frozen=True)
class DeviceCase:
    """One op to run on the device with both kernels on the same input."""

    name: str
    ref: KernelCall
    dsp: KernelCall
    ref_sources: tuple[str, ...]
    dsp_sources: tuple[str, ...]
    input: np.ndarray          # int8, flat
    out_bytes: int
    macs: int = 0


@dataclass(frozen=True)
class DeviceResult:
    name: str
    ref_instructions: int
    dsp_instructions: int
    equal: bool                # dsp bytes == ref bytes, checked on the device
    scratch_c: int             # the C ..._scratch_size() companion's answer
    dsp_output: np.ndarray     # int8, flat

    @property
    def ratio(self) -> float:
        return self.ref_instructions / max(1, self.dsp_instructions)


def device_cases(graph: Graph, name: str, seed: int = 0,
                 target: DeviceTarget = M4_TARGET) -> list[DeviceCase]:
    """A DeviceCase for every op of ``graph`` that gets a dsp kernel on ``target``."""
    board = get_board(target.machine)
    sel = select_kernels(graph, board)
    rng = np.random.default_rng(seed)
    cases = []
    for choice in sel.choices:
        if choice.variant.impl != "dsp" or choice.call is None:
            continue
        op = graph.operators[choice.op_index]
        ref = sorted((v for v in variants(op.opcode)
                      if v.impl == "ref" and v.accepts(graph, op) is None),
                     key=lambda v: (-v.priority, v.symbol))[0]
        inp, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        cases.append(DeviceCase(
            name=f"{name}#{op.index} {op.opcode} {'x'.join(map(str, inp.shape))}",
            ref=ref.prepare(graph, op), dsp=choice.call,
            ref_sources=tuple(s for s in ref.sources if s.endswith(".c")),
            dsp_sources=tuple(s for s in choice.variant.sources if s.endswith(".c")),
            input=rng.integers(-128, 128, size=inp.size).astype(np.int8),
            out_bytes=out.nbytes, macs=int(op_macs(graph, op))))
    return cases


def _args(call: KernelCall, k: int) -> str:
    names = {"in0": f"c{k}_in", "out0": "out", "scratch": f"c{k}_scratch"}
    return ", ".join(names[a] for a in call.args)


def render_program(cases: Sequence[DeviceCase]) -> str:
    """main.c: constants and params of every case (ref and dsp), then for each case: run
    ref, run dsp, compare, print "case <k> <ref ticks> <dsp ticks> <equal> <scratch>" and
    the dsp output in hex."""
    parts = ["#include <stdint.h>\n#include <string.h>\n#include \"td_kernels.h\"\n"
             "#include \"td_dsp_test_rt.h\"\n\n"]
    protos: dict[str, str] = {}
    for c in cases:
        for call in (c.ref, c.dsp):
            ptr_args = []
            for a in call.args:
                ptr_args.append({"in0": "const int8_t *", "out0": "int8_t *",
                                 "scratch": "void *"}[a])
            protos[call.symbol] = (f"void {call.symbol}(const {call.params_type} *p, "
                                   + ", ".join(ptr_args) + ");\n")
        protos[c.dsp.symbol + "_scratch_size"] = (
            f"int32_t {c.dsp.symbol}_scratch_size(const {c.dsp.params_type} *p);\n")
    parts.extend(protos[k] for k in sorted(protos))
    biggest = max(c.out_bytes for c in cases)
    parts.append(f"\nstatic int8_t ref_out[{biggest}] {cemit.ALIGN};\n"
                 f"static int8_t dsp_out[{biggest}] {cemit.ALIGN};\n")
    body = []
    for k, c in enumerate(cases):
        parts.append(cemit.emit_consts(c.ref, f"c{k}_ref", static=True))
        parts.append(cemit.emit_params(c.ref, f"c{k}_ref", static=True))
        parts.append(cemit.emit_consts(c.dsp, f"c{k}_dsp", static=True))
        parts.append(cemit.emit_params(c.dsp, f"c{k}_dsp", static=True))
        vals = cemit.format_values(c.input, "int8_t")
        parts.append(f"static const int8_t c{k}_in[{c.input.size}] {cemit.ALIGN} = {{\n"
                     f"{vals}\n}};\n")
        scratch = max(16, max(c.ref.scratch_bytes, c.dsp.scratch_bytes))
        parts.append(f"static uint8_t c{k}_scratch[{scratch}] {cemit.ALIGN};\n\n")
        ref_call = (f"{c.ref.symbol}(&c{k}_ref_params, "
                    + _args(c.ref, k).replace("out", "ref_out") + ");")
        dsp_call = (f"{c.dsp.symbol}(&c{k}_dsp_params, "
                    + _args(c.dsp, k).replace("out", "dsp_out") + ");")
        body.append(f"""    {{
        uint32_t t0, t1, t2, t3;
        memset(ref_out, 0x5A, sizeof ref_out);
        memset(dsp_out, 0xA5, sizeof dsp_out);
        t0 = td_rt_ticks();
        {ref_call}
        t1 = td_rt_ticks();
        memset(c{k}_scratch, 0xA5, sizeof c{k}_scratch);
        t2 = td_rt_ticks();
        {dsp_call}
        t3 = td_rt_ticks();
        td_rt_puts("case {k} ");
        td_rt_put_u32(td_rt_elapsed(t0, t1));
        td_rt_puts(" ");
        td_rt_put_u32(td_rt_elapsed(t2, t3));
        td_rt_puts(memcmp(ref_out, dsp_out, {c.out_bytes}) == 0 ? " 1 " : " 0 ");
        td_rt_put_u32((uint32_t){c.dsp.symbol}_scratch_size(&c{k}_dsp_params));
        td_rt_puts("\\n");
        td_rt_put_hex(dsp_out, {c.out_bytes});
    }}
""")
    parts.append("int main(void)\n{\n" + "".join(body) + "    td_rt_puts(\"end\\n\");\n"
                 "    return 0;\n}\n")
    return "".join(parts)


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ToolchainError(f"'{name}' was not found on PATH",
                             hint="apt-get install --no-install-recommends gcc-arm-none-eabi "
                                  "libnewlib-arm-none-eabi qemu-system-arm")
    return path


def build_program(cases: Sequence[DeviceCase], work: Path, opt: str = "-O2",
                  target: DeviceTarget = M4_TARGET) -> Path:
    """Compile the program for ``target``'s core (real SIMD intrinsics) into work/test.elf."""
    cc = _tool("arm-none-eabi-gcc")
    main_c = work / "main.c"
    main_c.write_text(render_program(cases), encoding="utf-8")
    sources = sorted({s for c in cases for s in c.ref_sources + c.dsp_sources})
    elf = work / "test.elf"
    rt = target.runtime
    cmd = [cc, *target.compile_flags(opt), "-I", str(FIRMWARE / "kernels"),
           "-I", str(FIRMWARE / "kernels" / "arm"), "-I", str(rt), str(main_c),
           str(rt / "td_dsp_test_rt.c"),
           *(str(FIRMWARE / s) for s in sources),
           *ldflags(target.core, str(rt / "td_dsp_test.ld")), "-o", str(elf)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ToolchainError("building the kernel test program failed:\n" + proc.stderr[-4000:])
    return elf


def run_on_device(cases: Sequence[DeviceCase], *, timeout: float = 300.0,
                  keep: Path | None = None, opt: str = "-O2",
                  target: DeviceTarget = M4_TARGET) -> list[DeviceResult]:
    """Build and run ``cases`` on ``target``'s QEMU machine with -icount shift=0; parse the
    results (instructions = SysTick ticks x ``target.instructions_per_tick``)."""
    qemu = _tool("qemu-system-arm")
    work = Path(tempfile.mkdtemp(prefix="td-dsp-", dir=keep))
    try:
        elf = build_program(cases, work, opt, target)
        proc = subprocess.run(
            [qemu, "-M", target.machine, "-nographic", "-monitor", "none", "-serial", "null",
             "-icount", "shift=0", "-semihosting-config", "enable=on,target=native",
             "-kernel", str(elf)], capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise ToolchainError(f"the kernel test program exited with {proc.returncode}:\n"
                                 + proc.stdout[-2000:] + proc.stderr[-2000:])
        lines = (proc.stdout + proc.stderr).splitlines()  # semihosting writes to stderr
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)
    results = []
    it = iter(lines)
    for line in it:
        if not line.startswith("case "):
            continue
        _, k, ref_t, dsp_t, eq, scratch = line.split()
        c = cases[int(k)]
        out = np.frombuffer(bytes.fromhex(next(it).strip()), dtype=np.int8)
        results.append(DeviceResult(c.name, int(ref_t) * target.instructions_per_tick,
                                    int(dsp_t) * target.instructions_per_tick, eq == "1",
                                    int(scratch), out.copy()))
    if len(results) != len(cases) or "end" not in lines:
        raise ToolchainError(f"the kernel test program reported {len(results)} of "
                             f"{len(cases)} cases:\n" + "\n".join(lines[-20:]))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", nargs="?", default=str(ROOT / "tests/fixtures/dscnn_kws.tflite"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--opt", default="-O2", help="compiler optimisation (default -O2)")
    ap.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    args = ap.parse_args(argv)
    graph = load_tflite(Path(args.model))
    cases = device_cases(graph, Path(args.model).stem, args.seed)
    if not cases:
        print("no op of this model has a dsp kernel", file=sys.stderr)
        return 1
    results = run_on_device(cases, opt=args.opt)
    rows = [{"op": r.name, "ref_kernel": c.ref.symbol, "dsp_kernel": c.dsp.symbol,
             "ref_instructions": r.ref_instructions, "dsp_instructions": r.dsp_instructions,
             "ratio": round(r.ratio, 2), "macs": c.macs, "bit_exact": r.equal}
            for c, r in zip(cases, results, strict=True)]
    tot_ref = sum(r.ref_instructions for r in results)
    tot_dsp = sum(r.dsp_instructions for r in results)
    if args.json:
        print(json.dumps({"machine": M4_TARGET.machine, "unit": "instructions", "kernels": rows,
                          "total_ref": tot_ref, "total_dsp": tot_dsp}, indent=2))
    else:
        print(f"{'op':<44} {'dsp kernel':<26} {'ref':>11} {'dsp':>11} {'ratio':>6} "
              f"{'dsp/MAC':>7}  exact")
        for c, r in zip(cases, results, strict=True):
            per_mac = f"{r.dsp_instructions / c.macs:.2f}" if c.macs else "-"
            print(f"{r.name:<44} {c.dsp.symbol:<26} {r.ref_instructions:>11,} "
                  f"{r.dsp_instructions:>11,} {r.ratio:>6.2f} {per_mac:>7}  "
                  f"{'yes' if r.equal else 'NO'}")
        print(f"{'total':<44} {'':<26} {tot_ref:>11,} {tot_dsp:>11,} "
              f"{tot_ref / max(1, tot_dsp):>6.2f}")
        print(f"(instructions on QEMU {M4_TARGET.machine} with -icount shift=0, SysTick "
              f"resolution {M4_TARGET.instructions_per_tick}; kernels built with {args.opt})")
    return 0 if all(r.equal for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
