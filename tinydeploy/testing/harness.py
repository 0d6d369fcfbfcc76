"""Host harness: run selected kernels on the host, compiled with sanitizers.

The golden and firmware test tiers compare the C kernels with the oracle byte for byte.
This module turns one or more graphs (each with its input arrays) into one C program: the
constant arrays and parameter structs come from `tinydeploy.codegen.cemit` (the same text
the firmware uses), every non-constant tensor and every scratch buffer is its own static
array (so AddressSanitizer puts a red zone around each: an out-of-bounds read of a kernel is
a crash, not a silent wrong byte), aliases (RESHAPE, SQUEEZE) share their source's array,
inputs are embedded as initializers, and outputs are written to stdout in order.

Kernel sources are compiled once per (source, headers, flags) hash into a cache directory
(``$TD_HARNESS_CACHE``, default ``$TMPDIR/tinydeploy-harness-<uid>``), so a tier of
hundreds of cases costs one compile per kernel plus one small program per batch.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tinydeploy.codegen import cemit
from tinydeploy.errors import ToolchainError
from tinydeploy.kernels.registry import Selection, select_kernels
from tinydeploy.model.ir import Graph
from tinydeploy.resources import firmware_dir
from tinydeploy.toolchain import DEBIAN_PACKAGES, SANITIZE_CFLAGS, Core, cflags

FIRMWARE_DIR = firmware_dir()
KERNEL_INCLUDE = FIRMWARE_DIR / "kernels"
SANITIZE = SANITIZE_CFLAGS
CFLAGS = cflags(Core.HOST, "-O1", stack_analysis=False, sanitize=True)
FILL = 0xA5   # outputs and scratch start with this byte: a kernel that skips one is caught


@dataclass(frozen=True)
class HostCase:
    """One graph with its input arrays (one per graph input, of the input's dtype/shape)."""

    graph: Graph
    inputs: tuple[np.ndarray, ...]
    selection: Selection | None = None


def _cc() -> str:
    cc = os.environ.get("CC", "gcc")
    if shutil.which(cc) is None:
        raise ToolchainError(f"host C compiler '{cc}' not found",
                             hint=f"install gcc (apt-get install {DEBIAN_PACKAGES['host']}) "
                                  "or set CC")
    return cc


def cache_dir() -> Path:
    d = os.environ.get("TD_HARNESS_CACHE")
    path = Path(d) if d else Path(tempfile.gettempdir()) / f"tinydeploy-harness-{os.getuid()}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _headers_digest(source_dir: Path | None = None) -> str:
    """Digest of the shared kernel headers and of the headers beside ``source_dir`` (private
    headers such as kernels/arm/td_simd.h): a changed header never reuses a stale object."""
    h = hashlib.sha256()
    dirs = [KERNEL_INCLUDE] + ([source_dir] if source_dir and source_dir != KERNEL_INCLUDE
                               else [])
    for d in dirs:
        for p in sorted(d.glob("*.h")):
            h.update(p.name.encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def _run(cmd: list[str], what: str) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(cmd, capture_output=True)
    if proc.returncode != 0:
        raise ToolchainError(f"{what} failed (exit {proc.returncode}): "
                             + proc.stderr.decode(errors="replace")[-4000:])
    return proc


def compile_kernel(source: str, cc: str | None = None) -> Path:
    """The cached sanitized object file of ``source`` (relative to firmware/)."""
    cc = cc or _cc()
    src = FIRMWARE_DIR / source
    if not src.is_file():
        raise ToolchainError(f"kernel source {source} does not exist under {FIRMWARE_DIR}")
    key = hashlib.sha256(
        "\0".join([cc, *CFLAGS, source, _headers_digest(src.parent)]).encode()
        + src.read_bytes()
    ).hexdigest()[:24]
    obj = cache_dir() / f"{Path(source).stem}-{key}.o"
    if not obj.exists():
        tmp = obj.with_suffix(f".{os.getpid()}.tmp.o")
        _run([cc, *CFLAGS, "-I", str(KERNEL_INCLUDE), "-c", str(src), "-o", str(tmp)],
             f"compiling {source}")
        os.replace(tmp, obj)
    return obj


def _ctype(dtype_c: str) -> str:
    return dtype_c


def _emit_case(k: int, case: HostCase, sel: Selection) -> tuple[str, str, list[int]]:
    """(definitions, body of case_k(), output byte counts) for one case."""
    g = case.graph
    defs: list[str] = [f"/* ---- case {k} ---- */\n"]
    body: list[str] = []
    arrays: dict[int, str] = {}
    input_ids = [t.index for t in g.inputs]
    if len(case.inputs) != len(input_ids):
        raise ValueError(f"case {k}: {len(case.inputs)} inputs for {len(input_ids)} graph inputs")
    feed = dict(zip(input_ids, case.inputs, strict=True))

    def array_of(ti: int) -> str:
        if ti in arrays:
            return arrays[ti]
        t = g.tensor(ti)
        name = f"c{k}_t{ti}"
        ctype = t.dtype.c_type
        n = max(1, t.size)
        if t.is_constant:
            arr = np.asarray(t.data).reshape(-1)
            if t.dtype.c_type == "float":
                vals = cemit.format_values(arr.astype(np.float32), "float")
            else:
                vals = cemit.format_values(arr.astype(np.int64), ctype)
            defs.append(f"static const {ctype} {name}[{n}] {cemit.ALIGN} = {{\n{vals}\n}};\n")
        elif ti in feed:
            arr = np.asarray(feed[ti]).astype(t.dtype.numpy).reshape(-1)
            if arr.size != t.size:
                raise ValueError(f"case {k}: input '{t.name}' has {arr.size} values, "
                                 f"{t.size} expected")
            vals = cemit.format_values(arr, ctype)
            defs.append(f"static {ctype} {name}[{n}] {cemit.ALIGN} = {{\n{vals}\n}};\n")
        elif t.is_variable:
            # state starts at TFLM's reset value (the zero point for int8), as on the device
            from tinydeploy.kernels.recurrent import variable_reset_value

            reset = np.full(n, variable_reset_value(t), dtype=np.int64)
            vals = cemit.format_values(reset, ctype)
            defs.append(f"static {ctype} {name}[{n}] {cemit.ALIGN} = {{\n{vals}\n}};\n")
        else:
            defs.append(f"static {ctype} {name}[{n}] {cemit.ALIGN};\n")
            body.append(f"    memset({name}, {FILL}, sizeof {name});\n")
        arrays[ti] = name
        return name

    for choice in sel.choices:
        op = g.operators[choice.op_index]
        if choice.variant.alias:
            src = op.inputs[0]
            arrays[op.outputs[0]] = array_of(src)
            continue
        call = choice.call
        assert call is not None
        prefix = f"c{k}_op{op.index}"
        defs.append(cemit.emit_consts(call, prefix, static=True))
        defs.append(cemit.emit_params(call, prefix, static=True))
        args: dict[str, str] = {}
        for a in call.args:
            arg = cemit.call_arg_tensor(a, op.inputs, op.outputs)
            if arg is not None:
                is_out, ti = arg
                const = "" if is_out else "const "
                args[a] = f"({const}{g.tensor(ti).dtype.c_type} *){array_of(ti)}"
            elif a == "scratch":
                sname = f"{prefix}_scratch"
                nbytes = max(16, call.scratch_bytes)
                defs.append(f"static uint8_t {sname}[{nbytes}] {cemit.ALIGN};\n")
                body.append(f"    memset({sname}, {FILL}, sizeof {sname});\n")
                args[a] = f"(void *){sname}"
            else:
                raise ValueError(f"{call.symbol}: unknown argument kind '{a}'")
        body.append("    " + cemit.emit_call(call, prefix, args).replace("\n", "\n    ") + "\n")
    sizes = []
    for t in g.outputs:
        name = array_of(t.index)
        body.append(f"    fwrite({name}, 1, {t.nbytes}, stdout);\n")
        sizes.append(t.nbytes)
    # memsets must come before the calls: move them to the front, keeping their order
    fills = [b for b in body if b.lstrip().startswith("memset(")]
    rest = [b for b in body if not b.lstrip().startswith("memset(")]
    fn = f"static void case_{k}(void)\n{{\n{''.join(fills + rest)}}}\n"
    return "".join(defs), fn, sizes


def harness_program(cases: Sequence[HostCase]) -> tuple[str, list[str], list[list[int]]]:
    """(C text of the program, the kernel .c sources it needs, output byte counts per case).

    The program writes every case's outputs, in order, with ``fwrite(..., stdout)``: the host
    runs it as it is; the target tier (`tinydeploy.testing.target_harness`) builds the same
    text for a Cortex-M with the writes redirected to semihosting."""
    sels = [c.selection or select_kernels(c.graph, None) for c in cases]
    # variants may list private headers among their sources: only .c files are compiled
    sources = sorted({s for sel in sels for s in sel.sources if s.endswith(".c")})
    parts = ["#include <stdio.h>\n#include <string.h>\n#include \"td_kernels.h\"\n\n"]
    fns, calls, layout = [], [], []
    for k, (case, sel) in enumerate(zip(cases, sels, strict=True)):
        defs, fn, sizes = _emit_case(k, case, sel)
        parts.append(defs)
        fns.append(fn)
        calls.append(f"    case_{k}();\n")
        layout.append(sizes)
    parts.extend(fns)
    parts.append("int main(void)\n{\n" + "".join(calls) + "    fflush(stdout);\n    return 0;\n}\n")
    return "".join(parts), sources, layout


def parse_outputs(cases: Sequence[HostCase], layout: list[list[int]], data: bytes
                  ) -> list[list[np.ndarray]]:
    """Split the program's output bytes into each case's output arrays."""
    results: list[list[np.ndarray]] = []
    pos = 0
    for case, sizes in zip(cases, layout, strict=True):
        outs = []
        for t, n in zip(case.graph.outputs, sizes, strict=True):
            chunk = data[pos:pos + n]
            if len(chunk) != n:
                raise ToolchainError(f"harness output truncated: {len(data)} bytes")
            outs.append(np.frombuffer(chunk, dtype=t.dtype.numpy).reshape(t.shape).copy())
            pos += n
        results.append(outs)
    return results


def run_host(cases: Sequence[HostCase], *, keep_dir: Path | None = None
             ) -> list[list[np.ndarray]]:
    """Run every case's graph on the host kernels; returns each case's outputs in order.

    All cases go into one sanitized program (one compile and link per call). Raises
    ToolchainError if the compiler fails or the program crashes (sanitizer report included).
    """
    cc = _cc()
    text, sources, layout = harness_program(cases)
    with ThreadPoolExecutor(max_workers=2) as ex:
        objs = list(ex.map(lambda s: compile_kernel(s, cc), sources))
    work = Path(tempfile.mkdtemp(prefix="td-harness-", dir=keep_dir))
    try:
        main_c = work / "main.c"
        main_c.write_text(text, encoding="utf-8")
        exe = work / "main"
        _run([cc, "-std=c99", "-O0", "-g", *SANITIZE, "-I", str(KERNEL_INCLUDE), str(main_c),
              *map(str, objs), "-o", str(exe), "-lm"], "compiling the harness program")
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0",
                   UBSAN_OPTIONS="print_stacktrace=1")
        proc = subprocess.run([str(exe)], capture_output=True, env=env, timeout=600)
        if proc.returncode != 0:
            raise ToolchainError(f"harness program crashed (exit {proc.returncode}): "
                                 + proc.stderr.decode(errors="replace")[-6000:])
        data = proc.stdout
    finally:
        if keep_dir is None:
            shutil.rmtree(work, ignore_errors=True)
    return parse_outputs(cases, layout, data)


def run_graph_host(graph: Graph, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Convenience: one graph, one run."""
    return run_host([HostCase(graph, tuple(inputs))])[0]


def run_overlapped(graph: Graph, inputs: Sequence[np.ndarray], selection: Selection,
                   shift: int, *, keep_dir: Path | None = None) -> np.ndarray:
    """Run a one-op graph with its output placed ``shift`` bytes after its input inside one
    buffer (negative: before), as an in-place plan would place them; returns output 0.

    The buffer has a byte of slack before and after the two tensors (filled with `FILL`), so
    the sanitizer still catches a kernel that reads or writes outside them; the scratch
    buffer, if any, is an array of its own. This is the real-C check of a variant's declared
    access order (`tinydeploy.kernels.access`): the result must equal the separate-buffer
    run for every shift the order tolerates."""
    cc = _cc()
    if len(graph.operators) != 1 or len(selection.choices) != 1:
        raise ValueError("run_overlapped takes a graph of one op")
    choice = selection.choices[0]
    call = choice.call
    assert call is not None
    op = graph.operators[0]
    src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    n_in, n_out = src.nbytes, dst.nbytes
    base = 16 * (-(-max(0, -shift) // 16) + 1)  # input offset: room for a lead, 16-aligned
    in_off, out_off = base, base + shift
    total = max(in_off + n_in, out_off + n_out) + 16
    data = np.asarray(inputs[0]).astype(src.dtype.numpy).reshape(-1)
    sources = sorted(s for s in selection.sources if s.endswith(".c"))
    objs = [compile_kernel(s, cc) for s in sources]
    args: dict[str, str] = {}
    lines = ["#include <stdio.h>\n#include <string.h>\n#include \"td_kernels.h\"\n\n",
             cemit.emit_consts(call, "op", static=True),
             cemit.emit_params(call, "op", static=True),
             f"static const int8_t input_data[{max(1, n_in)}] = {{\n"
             f"{cemit.format_values(data.astype(np.int64), 'int8_t')}\n}};\n",
             f"static uint8_t arena[{total}] {cemit.ALIGN};\n"]
    body = [f"    memset(arena, {FILL}, sizeof arena);\n",
            f"    memcpy(arena + {in_off}, input_data, {n_in});\n"]
    for a in call.args:
        if a == "in0":
            args[a] = f"(const int8_t *)(arena + {in_off})"
        elif a == "out0":
            args[a] = f"(int8_t *)(arena + {out_off})"
        elif a == "scratch":
            lines.append(f"static uint8_t scratch[{max(16, call.scratch_bytes)}] "
                         f"{cemit.ALIGN};\n")
            body.append(f"    memset(scratch, {FILL}, sizeof scratch);\n")
            args[a] = "(void *)scratch"
        else:
            raise ValueError(f"run_overlapped: {call.symbol} takes '{a}' (one input only)")
    body.append("    " + cemit.emit_call(call, "op", args).replace("\n", "\n    ") + "\n")
    body.append(f"    fwrite(arena + {out_off}, 1, {n_out}, stdout);\n")
    lines.append("int main(void)\n{\n" + "".join(body) + "    return 0;\n}\n")
    work = Path(tempfile.mkdtemp(prefix="td-overlap-", dir=keep_dir))
    try:
        main_c = work / "main.c"
        main_c.write_text("".join(lines), encoding="utf-8")
        exe = work / "main"
        _run([cc, "-std=c99", "-O0", "-g", *SANITIZE, "-I", str(KERNEL_INCLUDE), str(main_c),
              *map(str, objs), "-o", str(exe), "-lm"], "compiling the overlap program")
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0")
        proc = subprocess.run([str(exe)], capture_output=True, env=env, timeout=120)
        if proc.returncode != 0 or len(proc.stdout) != n_out:
            raise ToolchainError(f"overlap program failed (exit {proc.returncode}): "
                                 + proc.stderr.decode(errors="replace")[-4000:])
    finally:
        if keep_dir is None:
            shutil.rmtree(work, ignore_errors=True)
    return np.frombuffer(proc.stdout, dtype=dst.dtype.numpy).reshape(dst.shape).copy()
