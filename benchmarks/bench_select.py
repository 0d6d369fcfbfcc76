"""How long kernel selection and `tinydeploy plan` take, per model, board and mode.

Run: .venv/bin/python -m benchmarks.bench_select MODEL.tflite [...] [--board nucleo-f401re]
     [--repeats 3]

For each model: the selection (`choose_kernels`, the search that trades kernels against the
arena) in each ``--optimize`` mode, best of ``--repeats`` runs in this process (the model
loaded once), with the arena and the estimated instructions it chose; then the whole
``tinydeploy plan MODEL --board B`` command (a fresh interpreter: imports, loading, the
three modes of its "modes" line, the budget) once. Wall clock on this machine.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from tinydeploy.boards import get_board
    from tinydeploy.model.loader import load_tflite
    from tinydeploy.plan.choose import (
        _PREPARED,
        OPTIMIZE_CHOICES,
        choose_kernels,
        estimated_instructions,
    )

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", type=Path, nargs="+")
    p.add_argument("--board", default="nucleo-f401re")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    board = get_board(args.board)
    for model in args.models:
        if not model.is_file():
            print(f"{model}: no such file", file=sys.stderr)
            return 1
        graph = load_tflite(model)
        for mode in OPTIMIZE_CHOICES:
            best = float("inf")
            for _ in range(max(1, args.repeats)):
                _PREPARED.clear()   # each run costs the candidates and plans R afresh
                t0 = time.perf_counter()
                c = choose_kernels(graph, board, mode)
                best = min(best, time.perf_counter() - t0)
            print(f"{model.name:28s} {args.board:14s} select {mode:8s} {best:6.2f} s  arena "
                  f"{c.plan.arena_bytes:>7,} B  estimated {estimated_instructions(c):>12,} "
                  f"instructions  ({c.plans} plans)")
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "tinydeploy", "plan", str(model),
                               "--board", args.board], capture_output=True, text=True)
        print(f"{model.name:28s} {args.board:14s} tinydeploy plan  "
              f"{time.perf_counter() - t0:6.2f} s  (exit {done.returncode})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
