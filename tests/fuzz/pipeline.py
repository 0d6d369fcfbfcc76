"""The fuzz target: untrusted `.tflite` bytes through load, inspect, select, plan and render.

`check_one(data)` is the whole contract (what `tinydeploy inspect`, `plan` and `build` reach:
the loader, every kernel variant's `accepts` for any core, the selection, the plan, the
render): for any bytes it either returns or raises a
`TinydeployError` (the toolkit's own, user-facing errors). Any other exception is a bug.
It is shared by the coverage-guided fuzzer (`tests/fuzz/run.py`, atheris) and the regular
test that replays the saved inputs (`tests/test_fuzz_regressions.py`).

The board follows from the input (its length), so one corpus exercises the reference,
Cortex-M4 DSP and Cortex-M55 MVE kernel selections and the host. Planning uses the greedy
planner only, with a short time limit: the exact search is bounded by its own timer and
would only slow every execution down.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

BOARDS = ("mps2-an386", "host", "mps3-an547", "microbit-v1")
_OUT: list[Path] = []


def _out_dir() -> Path:
    if not _OUT:
        base = Path("/dev/shm") if Path("/dev/shm").is_dir() else None
        _OUT.append(Path(tempfile.mkdtemp(prefix="td-fuzz-", dir=base)))
    return _OUT[0]


def cleanup() -> None:
    for d in _OUT:
        shutil.rmtree(d, ignore_errors=True)
    _OUT.clear()


def check_one(data: bytes, render: bool = True) -> None:
    """Run ``data`` through the pipeline; raises only TinydeployError (or a bug)."""
    from tinydeploy.boards import get_board
    from tinydeploy.commands.inspect import blocking_ops
    from tinydeploy.commands.plan import plan_report
    from tinydeploy.errors import TinydeployError
    from tinydeploy.kernels.registry import select_kernels, support_reason
    from tinydeploy.model.analysis import params_bytes, summarize_ops
    from tinydeploy.model.loader import load_tflite
    from tinydeploy.plan.budget import compute_budget
    from tinydeploy.plan.lifetimes import plan_graph

    try:
        graph = load_tflite(data)
        summarize_ops(graph, support_reason)
        params_bytes(graph)
        board = get_board(BOARDS[len(data) % len(BOARDS)])
        blocking_ops(graph, None)   # inspect: every variant of every op looks at the model
        blocking_ops(graph, board)
        selection = select_kernels(graph, board)
        gplan = plan_graph(graph, selection, None, "greedy-size", 16, time_limit_s=0.5)
        selection = gplan.selection or selection   # the kernels the layout is proved for
        budget = compute_budget(selection, gplan.arena_bytes, board, "validate",
                                input_bytes=sum(t.nbytes for t in graph.inputs),
                                stack_reserved=None if board.family == "host" else 4096)
        plan_report(Path("fuzz.tflite"), graph, gplan, budget)
        if render:
            from tinydeploy.codegen.project import render_project

            out = _out_dir()
            shutil.rmtree(out / "p", ignore_errors=True)
            render_project(graph, selection, gplan, board, "validate", out / "p")
    except TinydeployError:
        pass
