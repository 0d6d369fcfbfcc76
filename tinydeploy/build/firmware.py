"""build: model + board + app -> a project folder and firmware.elf/.hex/.bin with its figures.

The stages run in order — load, select, plan (with the board's RAM as capacity: a model that
does not fit fails here, before any compiler runs), render, make — and the result carries
every figure a report needs: flash and RAM by section, the arena, the measured worst-case
stack, each op's weights and kernel code. `manifest.json` in the folder records them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tinydeploy import __version__
from tinydeploy.apps import REQUIRED_HEADERS, App, parse_app
from tinydeploy.boards import Board, emulation_target
from tinydeploy.build.stack import StackReport, handler_names, worst_stack
from tinydeploy.errors import BudgetError, TinydeployError, ToolchainError
from tinydeploy.model.ir import Graph, Tensor
from tinydeploy.plan.budget import Budget
from tinydeploy.plan.lifetimes import GraphPlan
from tinydeploy.procs import run_tool

MANIFEST_FORMAT = 1
STACK_RULE = "bound + max(256 B, bound / 8), rounded up to 64 B"
DEFAULT_STACK_BYTES = 4096
SMALL_RAM_STACK_BYTES = 2048   # boards with at most 32 KB of RAM


def default_stack_bytes(board: Board) -> int:
    """The fixed stack reserved when the user gives none on a board whose RAM is not tight
    (the build checks the measured need against it)."""
    return SMALL_RAM_STACK_BYTES if board.ram_bytes <= 32 * 1024 else DEFAULT_STACK_BYTES


def stack_sized_from_bound(board: Board) -> bool:
    """True on boards where the stack reserve is the measured call-graph bound plus a margin
    (`tinydeploy.plan.budget.sized_stack_reserve`) rather than `default_stack_bytes`: every
    board with a linker script (the host build's stack is the operating system's)."""
    return not board.is_host

TOOLS_PACKAGE = {"arm-none-eabi-gcc": "gcc-arm-none-eabi libnewlib-arm-none-eabi",
                 "make": "make", "cc": "gcc"}


@dataclass(frozen=True)
class KernelUse:
    op_index: int
    type: str
    symbol: str
    impl: str
    weights_bytes: int
    code_bytes: int


@dataclass(frozen=True)
class BuildResult:
    project_dir: Path
    elf: Path
    hex: Path | None
    bin: Path | None
    board: Board
    requested_board: Board
    app: str
    flash_bytes: int
    ram_bytes: int
    arena_bytes: int
    stack_bytes: int
    stack: StackReport
    sections: dict[str, int]
    kernels: tuple[KernelUse, ...]
    manifest: dict[str, Any] = field(default_factory=dict)


def _which(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pkg = TOOLS_PACKAGE.get(tool, tool)
        raise ToolchainError(f"'{tool}' was not found on PATH",
                             hint=f"install it: sudo apt-get install {pkg} (or run make setup)")
    return path


def _run(cmd: list[str], cwd: Path | None, what: str) -> str:
    r = run_tool(cmd, what, cwd=cwd, timeout=900)
    if r.returncode != 0:
        tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-25:])
        raise ToolchainError(f"{what} failed (exit {r.returncode}):\n{tail}")
    return r.stdout


def _sections(elf: Path, board: Board, objdump: str) -> tuple[dict[str, int], int, int]:
    """Section sizes and the flash/RAM they occupy, classified by address."""
    out = subprocess.run([objdump, "-h", "-w", str(elf)], capture_output=True, text=True,
                         check=True).stdout
    sections: dict[str, int] = {}
    flash = ram = 0
    host = board.is_host
    f_reg, r_reg = board.region("flash"), board.region("ram")
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 7 or not parts[0].isdigit():
            continue
        name, size, vma, lma = parts[1], int(parts[2], 16), int(parts[3], 16), int(parts[4], 16)
        flags = " ".join(parts[7:])
        if "ALLOC" not in flags or size == 0:
            continue
        sections[name] = size
        if host:
            if "CODE" in flags or "READONLY" in flags:
                flash += size
            else:
                ram += size
            continue
        if r_reg.origin <= vma < r_reg.origin + r_reg.size:
            ram += size
        if "LOAD" in flags and f_reg.origin <= lma < f_reg.origin + f_reg.size:
            flash += size
    return sections, flash, ram


def _symbol_sizes(elf: Path, nm: str) -> dict[str, int]:
    out = subprocess.run([nm, "-S", "--defined-only", str(elf)], capture_output=True,
                         text=True, check=True).stdout
    sizes: dict[str, int] = {}
    for line in out.splitlines():
        p = line.split()
        if len(p) == 4:
            sizes[p[3]] = sizes.get(p[3], 0) + int(p[1], 16)
    return sizes


def defined_symbols(elf: Path, board: Board) -> set[str]:
    """Every symbol defined in the ELF (for checks such as 'no unused kernel is linked')."""
    nm = _which("nm" if board.is_host else "arm-none-eabi-nm")
    return set(_symbol_sizes(elf, nm))


def build_firmware(model: Path | bytes, board: Board, app: App | str, out_dir: Path, *,
                   emulate: bool = False, sanitize: bool = False, algorithm: str = "auto",
                   stack_bytes: int | None = None, opt: str = "-O2",
                   jobs: int | None = None, graph: Graph | None = None,
                   extra_context: dict[str, Any] | None = None,
                   generated_headers: dict[str, str] | None = None,
                   part_files: dict[str, tuple[str, ...]] | None = None,
                   cflags_extra: tuple[str, ...] = (),
                   optimize: str = "balanced", guards: bool = False,
                   app_buffers: Callable[[int, int], Sequence[tuple[str, int]]] | None = None,
                   streaming: bool = False, stream_axis: int | None = None,
                   stream_keep: str | None = None, chip: bool = False,
                   arena_limit: int | None = None) -> BuildResult:
    """``chip``: the firmware is for the real chip (flashed, not run here): a board that also
    has a QEMU machine (micro:bit v1, Netduino Plus 2) gets no emulator-only code
    (`tinydeploy.codegen.platform.qemu_variant`); ignored with ``emulate``."""
    from tinydeploy.codegen.project import render_project
    from tinydeploy.model.loader import load_tflite
    from tinydeploy.plan.budget import (
        check_budget,
        check_constants_fit,
        compute_budget,
        sized_stack_reserve,
        stack_estimate,
    )
    from tinydeploy.plan.choose import choose_kernels, layers_json

    requested = board
    if emulate:
        board = emulation_target(board)
    # On a tight board the reserve follows the stack bound: first the estimate's, then
    # (after the compiler measured it) the measured one's, relinking if it differs.
    requested_stack = stack_bytes
    sized = stack_bytes is None and stack_sized_from_bound(requested)
    if stack_bytes is None and not sized:
        stack_bytes = default_stack_bytes(board)
    if not board.emulated and emulate:
        raise TinydeployError(f"board '{board.id}' cannot be emulated here")
    host = board.is_host
    _which("make")
    cc = _which("cc" if host else "arm-none-eabi-gcc")
    del cc

    g = graph if graph is not None else load_tflite(model)
    check_constants_fit(g, board)
    # Selection weighed against the board's budget (--optimize), planned; the layout is
    # proved for choice.selection (twins put in), which is what gets rendered.
    choice = choose_kernels(g, board, optimize, algorithm=algorithm, app=app,
                            arena_limit_bytes=arena_limit)
    selection, plan = choice.selection, choice.plan
    if guards:
        from tinydeploy.codegen.guards import guarded_plan

        plan = guarded_plan(g, selection, plan, algorithm)   # a guard gap after every buffer
    # an arena beyond the board's RAM is reported by check_budget below, with the total RAM
    # figure that `plan` shows for the same model and board (one number for one verdict)
    if sized:
        stack_bytes = sized_stack_reserve(stack_estimate(selection, app))
    assert stack_bytes is not None
    splan = None
    if streaming:
        # The step function replaces the full window's op sequence: its own arena (state
        # and transient rows), planned and proved like the full window's.
        from tinydeploy.plan.stream import choose_stream

        splan = choose_stream(g, selection, board, str(app), stack_bytes=stack_bytes,
                              axis=stream_axis, keep=stream_keep, algorithm=algorithm,
                              speed=choice.optimize.value == "speed" and not choice.fallback)
        selection = splan.selection     # the streamed ops' kernels, chosen on row windows
    arena_bytes = plan.arena_bytes if splan is None else splan.arena_bytes
    input_bytes = sum(t.nbytes for t in g.inputs)
    if splan is not None:
        input_bytes = splan.schedule.input_rows_bytes
    # the app's buffers, when it sizes them itself: (model input bytes, arena bytes idle
    # between inferences: all of it unless the model keeps state there, as a streamed
    # model or one with state tensors does)
    stateful = splan is not None or any(t.is_variable for t in g.tensors)
    idle = 0 if stateful else arena_bytes
    bufs = app_buffers(input_bytes, idle) if app_buffers is not None else None
    if not board.is_host:
        # Every byte accounted for before the compiler runs: a model that does not fit
        # fails here with the figures and the boards where it would fit.
        check_budget(compute_budget(selection, arena_bytes, board, app,
                                    input_bytes=input_bytes,
                                    app_buffers=bufs,
                                    stack_reserved=stack_bytes))

    missing = [h for h in REQUIRED_HEADERS.get(parse_app(app), ()) if h not in
               (generated_headers or {})]
    if missing:
        raise TinydeployError(f"the {app} app needs generated headers: {', '.join(missing)}",
                              hint="build it through tinydeploy.pipeline.build_app (the CLI "
                                   "does), which renders them for the model")
    out_dir = Path(out_dir)
    # A folder is flashable only with its manifest, written last: a rebuild that is
    # interrupted cannot leave the previous manifest vouching for half-new files.
    (out_dir / "manifest.json").unlink(missing_ok=True)
    project = render_project(g, selection, plan, board, app, out_dir,
                             extra_context=extra_context, generated_headers=generated_headers,
                             part_files=part_files,
                             cflags_extra=cflags_extra, stack_bytes=stack_bytes,
                             guards=guards, stream=splan, chip=chip and not emulate)
    make = ["make", "-C", str(out_dir), f"-j{jobs or os.cpu_count() or 1}", f"OPT={opt}"]
    if sanitize:
        if not host:
            raise TinydeployError("--sanitize builds only for the host board")
        make.append("SANITIZE=1")
    objdump = _which("objdump" if host else "arm-none-eabi-objdump")
    nm = _which("nm" if host else "arm-none-eabi-nm")
    entry = "main" if host else "Reset_Handler"

    def bound(elf: Path) -> StackReport:
        files = sorted((out_dir / "obj").rglob("*.ci"))
        return worst_stack(files, entry, [] if host else handler_names(files),
                           fpu="fpu" in board.features, linked=set(_symbol_sizes(elf, nm)))

    if sized:
        # The bound needs the objects' call graphs and the linked symbol set, so a probe link
        # (obj/probe.elf, never under a final name) comes first; the reserve it gives goes
        # into linker.ld before the one link of firmware.elf.
        _run([*make, "obj/probe.elf"], None, f"building {out_dir} for {board.id}")
        reserve = sized_stack_reserve(bound(out_dir / "obj" / "probe.elf").bytes)
        if reserve != stack_bytes:
            from tinydeploy.codegen.linker import render_linker_script

            stack_bytes = reserve
            (out_dir / "linker.ld").write_text(render_linker_script(board, stack_bytes),
                                               encoding="utf-8")
    _run(make, None, f"building {out_dir} for {board.id}")

    elf = out_dir / "firmware.elf"
    sections, flash, ram = _sections(elf, board, objdump)
    stack = bound(elf)
    if not host and stack.bytes > stack_bytes:
        raise BudgetError(
            f"board '{board.id}': the measured worst-case stack is {stack.bytes} bytes but "
            f"{stack_bytes} are reserved (deepest path: {' > '.join(stack.path)})",
            hint=f"build again with --stack {sized_stack_reserve(stack.bytes)} (the bound "
                 f"plus its margin), or without --stack to size it so")
    sizes = _symbol_sizes(elf, nm)
    kernels = []
    stored: set[tuple[str, str, int, str]] = set()   # codegen stores equal constants once
    for ch in selection.choices:
        op = g.operators[ch.op_index]
        w = 0
        for c in ch.call.consts if ch.call else ():
            if c.key not in stored:
                stored.add(c.key)
                w += int(c.values.nbytes)
        symbol, impl = ("(alias)" if ch.variant.alias else ch.variant.symbol), ch.variant.impl
        if splan is not None and ch.op_index == splan.schedule.analysis.reduction.op_index:
            symbol, impl = "td_stream_avgpool_s8_ref", "ref"    # the streamed reduction
        kernels.append(KernelUse(ch.op_index, op.type_name, symbol, impl, w,
                                 sizes.get(symbol, 0)))
    # The linker script reserves the stack as a section of its own; static data is the rest.
    stack_section = sections.get(".stack", 0)
    ram_static = ram - stack_section
    ram_total = ram_static + (0 if host else stack_bytes)
    weights = sum(k.weights_bytes for k in kernels)
    pre = compute_budget(selection, arena_bytes, board, app, input_bytes=input_bytes,
                         app_buffers=bufs)
    budget = compute_budget(
        selection, arena_bytes, board, app, input_bytes=input_bytes, app_buffers=bufs,
        stack_bytes=stack.bytes,
        code_bytes=max(flash - weights, 0),
        static_bytes=max(ram_static - arena_bytes - pre.ram.buffers, 0),
        stack_reserved=None if host else stack_bytes)
    if not host:
        check_budget(budget)
    result = BuildResult(
        project_dir=out_dir, elf=elf,
        hex=None if host else out_dir / "firmware.hex",
        bin=None if host else out_dir / "firmware.bin",
        board=board, requested_board=requested, app=app,
        flash_bytes=flash, ram_bytes=ram_total, arena_bytes=arena_bytes,
        stack_bytes=stack.bytes, stack=stack, sections=sections, kernels=tuple(kernels),
    )
    manifest = make_manifest(result, g, plan, project.files, stack_bytes)
    from tinydeploy.codegen.platform import qemu_variant

    # which build this is: the emulator's (semihosting exit, no crystal) or the chip's
    manifest["variant"] = ("qemu" if qemu_variant(board, chip and not emulate)
                           else "host" if host else "chip")
    if guards:
        manifest["guards"] = True     # a debug build (tinydeploy.codegen.guards)
    if splan is not None:
        manifest["stream"] = stream_json(splan)
    manifest["budget"] = budget_json(budget, pre)
    manifest["selection"] = {"optimize": choice.optimize.value, "fallback": choice.fallback,
                             "reference_arena_bytes": choice.reference_arena_bytes,
                             "arena_limit_bytes": choice.arena_limit_bytes,
                             "layers": layers_json(choice)}
    manifest["stack_reserve"] = {
        "bytes": stack_bytes,
        "bound": stack.bytes,
        "margin": stack_bytes - stack.bytes,
        "rule": STACK_RULE if sized else ("given (--stack)" if requested_stack is not None
                                          else "fixed default for the board")}
    tmp = out_dir / "manifest.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, out_dir / "manifest.json")
    return BuildResult(**{**result.__dict__, "manifest": manifest})


def stream_json(splan: Any) -> dict[str, Any]:
    """The streamed build's schedule and arena (`tinydeploy.plan.stream.StreamPlan`)."""
    sched = splan.schedule
    return {"hop_frames": sched.hop, "window_frames": sched.window,
            "keep": sched.keep,
            "warmup_steps": sched.warmup_steps, "state_bytes": sched.state_bytes,
            "arena_bytes": splan.arena_bytes, "step_input_bytes": sched.input_rows_bytes,
            "step_input_offset": splan.step_input_offset,
            "buffers": [{"name": p.name, "offset": p.offset, "bytes": p.size,
                         "first_step": p.first, "last_step": p.last}
                        for p in sorted(splan.plan.placements, key=lambda p: p.name)]}


def budget_json(measured: Budget, estimated: Budget) -> dict[str, Any]:
    """The measured budget with the pre-build estimate beside it (how good the tables are)."""
    def one(b: Budget) -> dict[str, Any]:
        return {"ram": {"arena": b.ram.arena, "stack": b.ram.stack, "buffers": b.ram.buffers,
                        "static": b.ram.static, "total": b.ram.total,
                        "available": b.ram.available},
                "flash": {"weights": b.flash.weights, "code": b.flash.code,
                          "total": b.flash.total, "available": b.flash.available},
                "fits": b.fits}
    return {"measured": one(measured), "estimated": one(estimated)}


def make_manifest(r: BuildResult, g: Graph, plan: GraphPlan, files: tuple[str, ...],
                  reserved_stack: int) -> dict[str, Any]:
    inplace = {b.name: (b.inplace_of, b.inplace_shift) for b in plan.buffers
               if b.inplace_of is not None}
    return {
        "format_version": MANIFEST_FORMAT,
        "tinydeploy_version": __version__,
        "model_sha256": g.sha256,
        "board": r.board.id,
        "requested_board": r.requested_board.id,
        "emulated": r.board.id != r.requested_board.id,
        "qemu_machine": r.board.qemu_machine,
        "family": r.board.family,
        "app": r.app,
        "elf": "firmware.elf",
        "flash_bytes": r.flash_bytes,
        "ram_bytes": r.ram_bytes,
        "arena_bytes": r.arena_bytes,
        "stack_bytes": r.stack_bytes,
        "stack_reserved_bytes": reserved_stack,
        "stack_path": list(r.stack.path),
        "sections": dict(sorted(r.sections.items())),
        "kernels": [{"op_index": k.op_index, "type": k.type, "symbol": k.symbol,
                     "impl": k.impl, "weights_bytes": k.weights_bytes,
                     "code_bytes": k.code_bytes} for k in r.kernels],
        "plan": {
            "algorithm": plan.plan.algorithm,
            "arena_bytes": plan.arena_bytes,
            "lower_bound_bytes": plan.lower_bound_bytes,
            "buffers": [{"name": p.name, "offset": p.offset, "bytes": p.size,
                         "first_op": p.first, "last_op": p.last,
                         "inplace_of": inplace.get(p.name, (None, 0))[0],
                         "inplace_shift": inplace.get(p.name, (None, 0))[1]}
                        for p in sorted(plan.plan.placements, key=lambda p: p.name)],
        },
        "inputs": [_io(t, plan) for t in g.inputs],
        "outputs": [_io(t, plan) for t in g.outputs],
        "files": list(files),
    }


def _io(t: Tensor, plan: GraphPlan) -> dict[str, Any]:
    q = t.quant
    return {"name": t.name, "shape": list(t.shape), "dtype": t.dtype.name.lower(),
            "scale": q.scale[0] if q and not q.per_channel else None,
            "zero_point": q.zero_point[0] if q and not q.per_channel else None,
            "bytes": t.nbytes, "offset": plan.tensor_offset(t.index)}


