"""`tinydeploy plan MODEL --board BOARD`: the arena layout and the RAM/flash budget."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tinydeploy.commands.target import add_target_arguments
from tinydeploy.plan.arena import ALGORITHMS
from tinydeploy.plan.budget import APPS

NAME = "plan"
HELP = "plan the static arena and check the model's RAM/flash budget against a board"
DESCRIPTION = """\
Plan the model's static arena (an offset for every tensor and scratch buffer, decided here
and checked for overlaps) and add up the board's RAM (arena + stack + application buffers +
static data) and flash (weights + code). Stack and code are estimates until a build measures
them. Exit status 1 when the model does not fit, with every figure and the boards where it
would fit (under --json the report is still printed, with "fits": false)."""



def _align(text: str) -> int:
    try:
        n = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
    if n < 1 or n & (n - 1) or n > 4096:
        raise argparse.ArgumentTypeError(f"alignment {n} must be a power of two in 1..4096")
    return n


def configure(p: argparse.ArgumentParser) -> None:
    add_target_arguments(p)
    p.add_argument("--app", choices=APPS, default=None,
                   help="the application whose buffers count towards RAM (default: kws when the "
                        "model has a front end - frontend.json beside it or --frontend - "
                        "else bench)")
    p.add_argument("--algorithm", choices=ALGORITHMS, default="auto",
                   help="arena planning algorithm (default: auto, the best of all)")
    p.add_argument("--align", type=_align, default=16, metavar="N",
                   help="alignment of every arena buffer in bytes (default: 16)")
    p.add_argument("--stack", type=int, default=None, metavar="BYTES",
                   help="stack the build will reserve (default: the build's default for the "
                        "board); RAM counts the larger of this and the estimated need")
    p.add_argument("--frontend", default=None, metavar="NAME|FILE.json",
                   help="--app kws: the front end (default: frontend.json beside the model)")
    p.add_argument("--infer-every", type=int, default=None, metavar="FRAMES",
                   help="--app kws: frames (strides) between inferences for the real-time "
                        "check (default: the kws app's default)")
    p.add_argument("--kws-instructions", default=None, metavar="FRONTEND,MODEL",
                   help="--app kws: instructions per front-end frame and per inference "
                        "(default: measured by running the kws app on the board's emulated "
                        "stand-in)")
    from tinydeploy.commands.target import add_stream_arguments

    add_stream_arguments(p)
    p.add_argument("--frame-ms", type=float, default=20.0, metavar="MS",
                   help="--streaming: milliseconds between input frames, for instructions "
                        "per second of audio (default 20)")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also every kernel considered per layer, its cost and why it was "
                        "passed over")
    p.add_argument("--html", type=Path, metavar="FILE",
                   help="also write an HTML report with the memory timeline")


def plan_model(model: Path, board_name: str, app: str = "bench", algorithm: str = "auto",
               align: int = 16, stack: int | None = None, optimize: str = "balanced",
               streaming: dict[str, Any] | None = None,
               app_buffers: Any = None,
               arena_limit: int | None = None) -> tuple[dict[str, Any], Any]:
    """Load, select kernels, plan and budget: the report as plain data (JSON-ready) and the
    `Budget`. ``app_buffers(input_bytes, idle_arena_bytes)``: the app's buffers when it sizes
    them itself (the listening kws app)."""
    from tinydeploy.boards import get_board
    from tinydeploy.model.loader import load_tflite
    from tinydeploy.plan.budget import check_constants_fit, compute_budget
    from tinydeploy.plan.choose import choose_kernels, estimated_instructions, layers_json

    board = get_board(board_name)
    graph = load_tflite(model)
    check_constants_fit(graph, board)
    given_stack = stack
    choice = choose_kernels(graph, board, optimize, algorithm=algorithm, align=align, app=app,
                            arena_limit_bytes=arena_limit)
    selection, gplan = choice.selection, choice.plan
    from tinydeploy.build.firmware import default_stack_bytes, stack_sized_from_bound

    if stack is None and not board.is_host:
        from tinydeploy.plan.budget import sized_stack_reserve, stack_estimate

        # the build reserves the stack bound plus a margin, not a fixed size
        stack = (sized_stack_reserve(stack_estimate(selection, app))
                 if stack_sized_from_bound(board) else default_stack_bytes(board))
    input_bytes = sum(t.nbytes for t in graph.inputs)
    idle = 0 if any(t.is_variable for t in graph.tensors) else gplan.arena_bytes
    budget = compute_budget(selection, gplan.arena_bytes, board, app,
                            input_bytes=input_bytes, stack_reserved=stack,
                            app_buffers=app_buffers(input_bytes, idle) if app_buffers else None)
    report = plan_report(model, graph, gplan, budget)
    report["selection"] = {"optimize": choice.optimize.value, "fallback": choice.fallback,
                           "reference_arena_bytes": choice.reference_arena_bytes,
                           "arena_limit_bytes": choice.arena_limit_bytes,
                           "estimated_instructions": estimated_instructions(choice),
                           "modes": _other_modes(graph, board, choice, algorithm, align, app),
                           "layers": layers_json(choice)}
    if given_stack is not None:
        report["stack_rule"] = "given (--stack)"
    elif not board.is_host:
        from tinydeploy.build.firmware import STACK_RULE

        report["stack_rule"] = STACK_RULE if stack_sized_from_bound(board) else "fixed default"
    report["stack_margin"] = (None if budget.stack_reserved is None
                              else budget.stack_reserved - budget.stack_need)
    if streaming is not None:
        from tinydeploy.plan.stream import compare_schedules

        per_op = {int(la["op_index"]): int(next(
            (a["instructions"] for a in la["alternatives"] if a["symbol"] == la["chosen"]), 0)
            or 0) for la in report["selection"]["layers"]}
        streamed = compare_schedules(
            graph, selection, per_op, gplan.arena_bytes, board=board, app=app,
            stack_bytes=stack or 0, algorithm=algorithm,
            speed=choice.optimize.value == "speed" and not choice.fallback, **streaming)
        # the firmware built --streaming has the streamed arena (state included, none of it
        # idle between steps) and a step's input rows: the budget is that one's, as the
        # build computes it; the tensor layout above stays the full window's
        arena = int(streamed["streamed"]["arena_bytes"])
        rows = int(streamed["streamed"]["input_rows_bytes"])   # what the app writes a step
        budget = compute_budget(selection, arena, board, app, input_bytes=rows,
                                stack_reserved=stack,
                                app_buffers=app_buffers(rows, 0) if app_buffers else None)
        report.update(budget_report(budget, arena))
        report["layout_arena_bytes"] = gplan.arena_bytes   # "tensors", "trials": full window
        report["streaming"] = streamed
    return report, budget


def _other_modes(graph: Any, board: Any, choice: Any, algorithm: str, align: int, app: str
                 ) -> dict[str, dict[str, Any]]:
    """What each --optimize mode gives (estimated instructions, arena, flash of the
    weights), this choice's own included, for the line that lets the user choose."""
    from tinydeploy.errors import TinydeployError
    from tinydeploy.plan.budget import weights_bytes
    from tinydeploy.plan.choose import OPTIMIZE_CHOICES, choose_kernels, estimated_instructions

    out: dict[str, dict[str, Any]] = {}
    for mode in OPTIMIZE_CHOICES:
        try:
            c = (choice if mode == choice.optimize.value and choice.fallback is None
                 else choose_kernels(graph, board, mode, algorithm=algorithm, align=align,
                                     app=app))
        except TinydeployError as e:
            out[mode] = {"error": e.message}
            continue
        out[mode] = {"instructions": estimated_instructions(c),
                     "arena_bytes": c.plan.arena_bytes,
                     "weights_bytes": weights_bytes(c.selection), "fallback": c.fallback}
    return out


def budget_report(budget: Any, arena: int) -> dict[str, Any]:
    """The report's keys that follow from the budget (and the arena it was made with)."""
    from tinydeploy.report.figures import memory_figures

    r, f = budget.ram, budget.flash
    return {
        **memory_figures(flash=f.total, flash_available=f.available, ram=r.total,
                         ram_available=r.available, arena=arena,
                         stack_bound=budget.stack_need, stack_reserved=budget.stack_reserved),
        "fits": budget.fits,
        "ram": {"arena": r.arena, "stack": r.stack, "buffers": r.buffers, "static": r.static,
                "total": r.total, "available": r.available, "over": r.over},
        "flash": {"weights": f.weights, "code": f.code, "total": f.total,
                  "available": f.available, "over": f.over},
        "estimated": sorted(budget.estimated),
        "stack_need": budget.stack_need,
        "stack_reserved": budget.stack_reserved,
        "app_buffers": [{"name": n, "bytes": b} for n, b in budget.app_buffers],
    }


def plan_report(model: Path, graph: Any, gplan: Any, budget: Any) -> dict[str, Any]:
    plan = gplan.plan
    ops = graph.operators
    live = gplan.live_bytes()
    by_buffer: dict[str, list[int]] = {}
    for i, name in gplan.tensor_buffers:
        by_buffer.setdefault(name, []).append(i)
    inplace = {b.name: b.inplace_of for b in gplan.buffers}
    shifts = {b.name: b.inplace_shift for b in gplan.buffers}
    tensors = []
    for p in plan.placements:
        entry: dict[str, Any]
        if p.name.startswith("scratch"):
            k = int(p.name[len("scratch"):])
            entry = {"name": f"scratch of op {k} ({ops[k].type_name})", "buffer": p.name,
                     "kind": "scratch", "tensor": None}
        else:
            idx = int(p.name[1:])
            t = graph.tensor(idx)
            entry = {"name": t.name, "buffer": p.name,
                     "kind": "variable" if t.is_variable else "tensor", "tensor": idx,
                     "aliases": [i for i in by_buffer.get(p.name, []) if i != idx]}
        entry.update({"bytes": p.size, "offset": p.offset, "first_op": p.first,
                      "last_op": p.last, "inplace_of": inplace.get(p.name),
                      "inplace_shift": shifts.get(p.name, 0)})
        tensors.append(entry)
    peak = gplan.peak_op
    return {
        "model": str(model),
        "sha256": graph.sha256,
        "board": budget.board,
        "app": budget.app,
        **budget_report(budget, plan.arena_bytes),
        "lower_bound_bytes": plan.lower_bound_bytes,
        "optimal": plan.optimal,
        "algorithm": plan.algorithm,
        "requested_algorithm": plan.requested,
        "trials": [{"algorithm": t.algorithm, "arena_bytes": t.arena_bytes,
                    "complete": t.complete} for t in plan.trials],
        "peak_op": ({"index": peak, "type": ops[peak].type_name, "live_bytes": live[peak]}
                    if ops else None),
        "ops": [{"index": op.index, "type": op.type_name, "live_bytes": live[op.index]}
                for op in ops],
        "tensors": tensors,
    }


def print_selection(sel: dict[str, Any], verbose: bool = True) -> None:
    """The kernel chosen per layer (marked *) and, with ``verbose``, below it what each
    alternative would cost and why it was passed over (otherwise one short line per layer:
    the kernel names are what the user reads, so they are never cut)."""
    from rich.table import Table

    from tinydeploy.report.output import stdout

    if not verbose:
        short = Table(title=f"kernels per layer (--optimize {sel['optimize']}; --verbose: "
                            "the alternatives)", title_justify="left", box=None)
        for col, just in (("#", "right"), ("op", "left"), ("kernel", "left"),
                          ("instr. (est.)", "right")):
            short.add_column(col, justify=just, no_wrap=True)  # type: ignore[arg-type]
        for layer in sel["layers"]:
            chosen = next((a for a in layer["alternatives"] if a["passed_over"] is None), None)
            short.add_row(str(layer["op_index"]), layer["type"], layer["chosen"],
                          f"{chosen['instructions']:,}" if chosen else "")
        stdout.print(short)
    else:
        title = f"kernels per layer (--optimize {sel['optimize']}"
        title += f"; {sel['fallback']})" if sel.get("fallback") else ")"
        t = Table(title=title, title_justify="left")
        for col, just in (("#", "right"), ("op", "left"), ("kernel", "left"),
                          ("instr. (est.)", "right"),
                          ("flash", "right"), ("scratch", "right"), ("why not", "left")):
            t.add_column(col, justify=just)  # type: ignore[arg-type]
        for layer in sel["layers"]:
            alts = sorted(layer["alternatives"], key=lambda a: a["passed_over"] is not None)
            for n, a in enumerate(alts):
                mark = "*" if a["passed_over"] is None else " "
                t.add_row(str(layer["op_index"]) if n == 0 else "",
                          layer["type"] if n == 0 else "",
                          mark + (layer["chosen"] if a["passed_over"] is None else a["symbol"]),
                          f"{a['instructions']:,}", f"{a['const_bytes'] + a['code_bytes']:,}",
                          f"{a['scratch_bytes']:,}", a["passed_over"] or "")
        stdout.print(t)
    if "estimated_instructions" in sel:
        est = sel["estimated_instructions"]
        m = sel.get("measured")
        if m is None:
            stdout.print(f"estimated instructions per inference: {est:,}"
                         " (the cost models; `tinydeploy bench` measures them)")
        else:
            off = 100 * (est / m["per_inference"] - 1) if m["per_inference"] else 0.0
            stdout.print(f"estimated instructions per inference: {est:,} (the cost models); "
                         f"measured by bench: {m['per_inference']:,} {m['unit']} on "
                         f"{m['board']} (estimate {off:+.1f} %; {m['record']})")
    modes = sel.get("modes") or {}
    if modes:
        parts = []
        for name, m in modes.items():
            if "error" in m:
                parts.append(f"{name}: {m['error']}")
                continue
            mark = "*" if name == sel["optimize"] else ""
            parts.append(f"{mark}{name} {m['instructions']:,} instr. / arena "
                         f"{m['arena_bytes']:,} B / weights {m['weights_bytes']:,} B")
        stdout.print("modes (estimates): " + "; ".join(parts))
        mine, base = modes.get(sel["optimize"], {}), modes.get("balanced", {})
        if sel["optimize"] == "speed" and "instructions" in mine and "instructions" in base:
            stdout.print(
                f"speed over balanced: {mine['instructions'] - base['instructions']:+,} "
                f"instructions, arena {mine['arena_bytes'] - base['arena_bytes']:+,} B, "
                f"weights {mine['weights_bytes'] - base['weights_bytes']:+,} B")


def _print(report: dict[str, Any], verbose: bool = False) -> None:
    from rich.table import Table

    from tinydeploy.report.output import stdout

    def row(t: Table, label: str, used: int, avail: int | None = None, over: int = 0,
            note: str = "") -> None:
        t.add_row(label, f"{used:,}", "" if avail is None else f"{avail:,}",
                  "" if avail is None else (f"[red]over by {over:,}[/]" if over
                                            else f"{100 * used / avail:.1f} %"), note)

    r, f = report["ram"], report["flash"]
    est = set(report["estimated"])
    t = Table(title=f"{Path(report['model']).name} on {report['board']} "
                    f"(app {report['app']})", title_justify="left")
    for col, just in (("", "left"), ("bytes", "right"), ("available", "right"),
                      ("used", "right"), ("", "left")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    row(t, "  arena", r["arena"])
    need = (f"need {report['stack_need']:,} "
            + ("(estimate)" if "stack" in est else "(measured)"))
    if report["stack_reserved"] is not None:
        need += (f", margin {report['stack_margin']:,}, reserved "
                 f"{report['stack_reserved']:,}")
        if report.get("stack_rule"):
            need += f" ({report['stack_rule']})"
    row(t, "  stack", r["stack"], note=need)
    row(t, "  app buffers", r["buffers"])
    row(t, "  static data", r["static"], note="estimate" if "static" in est else "measured")
    row(t, "RAM", r["total"], r["available"], r["over"])
    row(t, "  weights", f["weights"])
    row(t, "  code", f["code"], note="estimate" if "code" in est else "measured")
    row(t, "flash", f["total"], f["available"], f["over"])
    stdout.print(t)
    if report.get("selection"):
        print_selection(report["selection"], verbose)
        sel = report["selection"]
        limit = sel.get("arena_limit_bytes")
        stdout.print(f"reference kernels' arena {sel['reference_arena_bytes']:,} B; "
                     f"--optimize {sel['optimize']} arena limit "
                     + (f"{limit:,} B" if limit is not None else "none (host)"))
    bound = ("= lower bound (optimal)" if report["optimal"]
             else f"lower bound {report['lower_bound_bytes']:,}")
    tried = ", ".join(f"{x['algorithm']} {x['arena_bytes']:,}"
                      + ("" if x["complete"] else " (search cut off)")
                      for x in report["trials"])
    # streamed: the budget above has the step function's arena; this layout is the full
    # window's (the streaming lines below compare the two)
    layout = report.get("streaming", {}).get("full_window", {}).get("arena_bytes")
    what = (f"full-window arena {layout:,} B" if layout is not None
            else f"arena {report['arena_bytes']:,} B")
    stdout.print(f"{what} {bound}; algorithm {report['algorithm']} (tried: {tried})")
    peak = report["peak_op"]
    if peak is not None:
        live = [x for x in report["tensors"]
                if x["first_op"] <= peak["index"] <= x["last_op"]]
        live.sort(key=lambda x: -x["bytes"])
        names = ", ".join(f"{x['buffer']} {x['bytes']:,}" for x in live[:4])
        stdout.print(f"{'full-window ' if layout is not None else ''}peak at op "
                     f"{peak['index']} ({peak['type']}): {peak['live_bytes']:,} B "
                     f"live ({names})")
    stdout.print("[green]fits[/]" if report["fits"] else "[red]does not fit[/]")


def run(args: argparse.Namespace) -> int:
    from tinydeploy.report.output import emit_json, stderr

    if args.stack is not None and not 0 < args.stack <= 1 << 24:
        from tinydeploy.errors import InputDataError

        raise InputDataError(f"--stack {args.stack}: must be between 1 and {1 << 24} bytes")
    from tinydeploy.commands.target import choose_app, streaming_wanted

    choose_app(args, "bench")
    stream = ({"frame_ms": args.frame_ms, "axis": args.stream_axis, "keep": args.stream_keep}
              if streaming_wanted(args) else None)
    from tinydeploy.report.output import slow_work

    with slow_work(f"choosing kernels and planning the arena ({args.optimize})"):
        report, budget = plan_model(args.model, args.board, args.app, args.algorithm,
                                    args.align, args.stack, args.optimize, stream,
                                    arena_limit=args.arena_limit)
    report["app_reason"] = args.app_reason
    verdict = sched = None
    if args.app == "kws" and budget.fits:
        verdict, sched = _realtime(args, stream is not None)
        report["realtime"] = verdict.as_dict()
        if sched is not None:
            # the listening firmware's own buffers: the budget a doorbell pays
            report, budget = plan_model(args.model, args.board, args.app, args.algorithm,
                                        args.align, args.stack, args.optimize,
                                        streaming=stream,
                                        app_buffers=_listen_buffers(args, sched),
                                        arena_limit=args.arena_limit)
            report["realtime"] = verdict.as_dict()
            report["listen"] = sched.as_dict()
    _add_measured(report, args, stream is not None)
    if args.html:
        from tinydeploy.report.plan_html import render_plan_html

        try:
            args.html.write_text(render_plan_html(report), encoding="utf-8")
        except OSError as e:
            from tinydeploy.errors import InputDataError

            raise InputDataError(f"{args.html}: cannot write the HTML report: "
                                 f"{e.strerror}") from None
        stderr.print(f"wrote {args.html}")
    if args.json:
        emit_json(report)
    else:
        _print(report, args.verbose)
        if "streaming" in report:
            _print_streaming(report["streaming"])
        if verdict is not None:
            from tinydeploy.report.output import stdout

            stdout.print(sched.text() if sched is not None else verdict.text())
    if not budget.fits:
        from tinydeploy.plan.budget import check_budget

        check_budget(budget)
    return 0


def _add_measured(report: dict[str, Any], args: argparse.Namespace, streamed: bool) -> None:
    """The total `bench` measured for this model, board and mode, when it has run (its
    record in the default bench folder), beside the estimate: report["selection"]
    ["measured"]."""
    from tinydeploy.boards import get_board
    from tinydeploy.commands.bench import measured_by_bench

    found = measured_by_bench(args.model, get_board(args.board).id, args.optimize, streamed)
    if found is None:
        return
    path, doc = found
    report["selection"]["measured"] = {"per_inference": doc["per_inference"],
                                       "unit": doc["unit"], "board": doc["board"],
                                       "record": str(path)}


def _listen_buffers(args: argparse.Namespace, sched: Any) -> Any:
    from tinydeploy.frontend.presets import resolve_frontend
    from tinydeploy.kws.device import listen_buffers
    from tinydeploy.kws.stream import model_detector

    return listen_buffers(args.model, resolve_frontend(args.frontend, args.model),
                          sched.audio_blocks,
                          avg_windows=model_detector(args.model).avg_windows)


def _print_streaming(s: dict[str, Any]) -> None:
    from tinydeploy.report.output import stdout

    f, st = s["full_window"], s["streamed"]
    stdout.print(f"streaming: hop {s['hop_frames']} frames ({s['hop_frames'] * s['frame_ms']:g} "
                 f"ms), window {s['window_frames']}, warm-up {s['warmup_steps']} steps, "
                 f"keeps {s['keep']}")
    stdout.print(f"  full window every hop: {f['instructions_per_inference']:,} instructions "
                 f"per inference, {f['instructions_per_second']:,} per second of audio; "
                 f"arena {f['arena_bytes']:,} B")
    stdout.print(f"  streamed:              {st['per_step_instructions']:,} instructions "
                 f"per step, {st['instructions_per_second']:,} per second of audio; arena "
                 f"{st['arena_bytes']:,} B of which state {st['state_bytes']:,} B "
                 f"(estimates from the kernels' cost models)")


def _realtime(args: argparse.Namespace, streamed: bool) -> tuple[Any, Any]:
    """The kws app's real-time verdict and, where the board can listen (a microphone, or an
    emulated one), the listening schedule (tinydeploy/kws/realtime.py); ``streamed``: of the
    model streamed, a step every hop (plan --streaming)."""
    import tempfile

    from tinydeploy.boards import get_board
    from tinydeploy.errors import InputDataError
    from tinydeploy.frontend.presets import resolve_frontend
    from tinydeploy.kws.device import audio_source_for
    from tinydeploy.kws.realtime import (
        KwsLoad,
        choose_schedule,
        measure_kws_load,
        realtime_verdict,
    )

    board = get_board(args.board)
    choice = resolve_frontend(args.frontend, args.model)
    if args.kws_instructions:
        try:
            fe, model = (float(v) for v in args.kws_instructions.split(","))
        except ValueError:
            raise InputDataError(f"--kws-instructions {args.kws_instructions!r}: expected "
                                 "FRONTEND,MODEL (two numbers)") from None
        if fe <= 0 or model <= 0:
            raise InputDataError("--kws-instructions: both figures must be > 0")
        load = KwsLoad(fe, model, "given: --kws-instructions")
    else:
        # --streaming: the listening schedule of the streamed model (a step every hop)
        with tempfile.TemporaryDirectory(prefix="td-kws-rt-") as tmp:
            load = measure_kws_load(args.model, board, choice, Path(tmp) / "fw",
                                    streaming=streamed)
    from tinydeploy.kws.stream import model_detector

    sched = None
    try:
        audio_source_for(board, emulate=not board.qemu_machine and board.emulate is not None)
        can_listen = True
    except InputDataError:
        can_listen = False
    if can_listen:
        try:
            sched = choose_schedule(board, load, choice.config, args.infer_every)
        except InputDataError as e:
            # no schedule keeps up: the plan stands, the verdict below says why
            from tinydeploy.report.output import stderr

            stderr.print(f"listening: {e.message}")
    every = (sched.infer_every if sched is not None else model_detector(args.model).infer_every
             if args.infer_every is None else args.infer_every)
    return realtime_verdict(board, load, choice.config, every), sched
