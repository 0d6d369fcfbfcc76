"""Coverage-guided fuzzing (atheris, libFuzzer) of the model loader and the inspect, plan and
codegen path, seeded with the test models.

    .venv/bin/python tests/fuzz/run.py --seconds 60        # what CI runs
    make fuzz FUZZ_SECONDS=1800                             # a longer run

A failure is any exception other than the toolkit's own errors, an input that runs longer than
10 s, or a process above 1 GB of memory. libFuzzer saves such an input under
``tests/fixtures/fuzz_regressions/`` (``crash-*``, ``timeout-*``, ``oom-*``), the run exits
non-zero, and ``tests/test_fuzz_regressions.py`` replays every saved input from then on.
The corpus grows in ``build/fuzz-corpus`` (not committed); the seeds are the fixtures'
models, the KWS model and the firmware tier's op models.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
REGRESSIONS = ROOT / "tests" / "fixtures" / "fuzz_regressions"
TIMEOUT_S = 10
RSS_LIMIT_MB = 1024


def seeds() -> dict[str, bytes]:
    """Seed inputs by name: every committed test model and the op models."""
    sys.path.insert(0, str(ROOT / "tests"))
    from opmodels import OP_MODELS

    out = {p.name: p.read_bytes() for p in sorted((ROOT / "tests" / "fixtures").glob("*.tflite"))}
    out["kws_dscnn_int8.tflite"] = (ROOT / "models" / "kws" / "dscnn_int8.tflite").read_bytes()
    for name, make in sorted(OP_MODELS.items()):
        out[f"{name}.tflite"] = make()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=int, default=60, help="total fuzzing time (default 60)")
    ap.add_argument("--corpus", type=Path, default=ROOT / "build" / "fuzz-corpus")
    ap.add_argument("--runs", type=int, default=-1, help="stop after N inputs (default: none)")
    args, extra = ap.parse_known_args(argv)
    try:
        import atheris
    except ImportError:
        print("error: atheris is not installed\nhint: .venv/bin/pip install -e '.[fuzz]' "
              "(or make setup)", file=sys.stderr)
        return 1
    args.corpus.mkdir(parents=True, exist_ok=True)
    REGRESSIONS.mkdir(parents=True, exist_ok=True)
    for name, data in seeds().items():
        (args.corpus / f"seed-{name}").write_bytes(data)

    # cemit only formats constant arrays value by value: instrumenting it adds no coverage
    # worth having and makes big models ten times slower to render
    with atheris.instrument_imports(include=["tinydeploy"],
                                    exclude=["tinydeploy.codegen.cemit"]):
        import tinydeploy.boards  # noqa: F401
        import tinydeploy.codegen.project  # noqa: F401
        import tinydeploy.commands.plan  # noqa: F401
        import tinydeploy.kernels.registry  # noqa: F401
        import tinydeploy.model.analysis  # noqa: F401
        import tinydeploy.model.loader  # noqa: F401
        import tinydeploy.plan.budget  # noqa: F401
        import tinydeploy.plan.lifetimes  # noqa: F401
    sys.path.insert(0, str(HERE))
    from pipeline import check_one, cleanup

    def target(data: bytes) -> None:
        try:
            check_one(data)
        except Exception:
            # Saved here, not by libFuzzer's crash path (which can be cut short by its own
            # timeout alarm while the interpreter shuts down): the input, then the report.
            path = REGRESSIONS / f"crash-{hashlib.sha1(data).hexdigest()}"
            path.write_bytes(data)
            traceback.print_exc()
            print(f"fuzz: an exception other than TinydeployError; input saved to {path}",
                  file=sys.stderr, flush=True)
            os._exit(1)

    libfuzzer = [sys.argv[0], f"-max_total_time={args.seconds}", f"-timeout={TIMEOUT_S}",
                 f"-rss_limit_mb={RSS_LIMIT_MB}", f"-artifact_prefix={REGRESSIONS}/",
                 "-max_len=65536", "-print_final_stats=1", f"-runs={args.runs}", *extra,
                 str(args.corpus)]
    try:
        atheris.Setup(libfuzzer, target)
        atheris.Fuzz()
    finally:
        cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
