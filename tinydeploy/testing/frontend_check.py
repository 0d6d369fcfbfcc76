"""Check a front-end preset's bytes on an emulated Cortex-M against the host and the reference.

``python -m tinydeploy.testing.frontend_check WAV... [--model M] [--frontend P]
[--machine mps2-an386|mps2-an385|mps2-an385-m0] [--json]``

Each WAV is fitted to one clip and run through the preset's C on the emulated board (the
harness of `frontend_target`), through the same C on the host, and through the preset's
reference (e.g. TensorFlow's ops for mlperf-kws), all quantized to the model's input. Reports,
per file and in total, how many int8 values differ between device and host (must be none) and
how far the device is from the reference. Exit status 1 when device and host differ; a bad
argument is a clear error with status 1, as in the CLI.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from tinydeploy.errors import InputDataError, TinydeployError
from tinydeploy.resources import models_dir

DEFAULT_MODEL = models_dir() / "kws" / "dscnn_int8.tflite"


def check_features(wavs: list[Path], model: Path, frontend: str | None,
                   machine: str = "mps2-an386") -> dict[str, Any]:
    from tinydeploy.frontend.native import input_quant_of
    from tinydeploy.frontend.presets import resolve_frontend
    from tinydeploy.kws.folder import fit_clips
    from tinydeploy.testing.frontend_target import run_frontend_on_qemu

    if not model.exists():
        raise InputDataError(f"{model}: no such model",
                             hint="--model gives the input quantization of the features")
    choice = resolve_frontend(frontend, model)
    quant = input_quant_of(model.read_bytes())
    clips = fit_clips(tuple(wavs), choice.config)
    _, dev = run_frontend_on_qemu(clips, quant, choice.config, machine)
    host = choice.spec.host(choice.config).features_s8(clips, quant)
    ref = np.stack([choice.spec.reference(c, choice.config, quant) for c in clips])
    rows = []
    for i, w in enumerate(wavs):
        dh = np.abs(dev[i].astype(np.int32) - host[i])
        dr = np.abs(dev[i].astype(np.int32) - ref[i])
        rows.append({"wav": str(w), "values": int(dh.size),
                     "host_mismatches": int((dh != 0).sum()), "host_max_diff": int(dh.max()),
                     "reference_max_diff": int(dr.max()),
                     "reference_within_1": float((dr <= 1).mean()),
                     "reference_equal": float((dr == 0).mean())})
    dh = np.abs(dev.astype(np.int32) - host)
    dr = np.abs(dev.astype(np.int32) - ref)
    return {"frontend": choice.preset.value, "machine": machine, "clips": len(rows),
            "values": int(dh.size), "host_mismatches": int((dh != 0).sum()),
            "host_max_diff": int(dh.max()), "reference_max_diff": int(dr.max()),
            "reference_within_1": float((dr <= 1).mean()),
            "reference_equal": float((dr == 0).mean()), "files": rows}


def main(argv: list[str] | None = None) -> int:
    import json

    from tinydeploy.testing.frontend_target import TARGETS

    p = argparse.ArgumentParser(prog="python -m tinydeploy.testing.frontend_check",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("wavs", type=Path, nargs="+", metavar="WAV")
    p.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    p.add_argument("--frontend", default=None, metavar="NAME|FILE.json")
    p.add_argument("--machine", default="mps2-an386", choices=sorted(TARGETS))
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    try:
        doc = check_features(args.wavs, args.model, args.frontend, args.machine)
    except TinydeployError as e:
        print(e.report(), file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        for r in doc["files"]:
            print(f"{r['wav']}: device vs host {r['host_mismatches']} of {r['values']} values "
                  f"differ (max {r['host_max_diff']}); vs reference max "
                  f"{r['reference_max_diff']} steps, {100 * r['reference_within_1']:.2f} % "
                  "within 1")
        print(f"{doc['clips']} clips on {doc['machine']} ({doc['frontend']}): device vs host "
              f"{doc['host_mismatches']} of {doc['values']} values differ; vs reference "
              f"{100 * doc['reference_within_1']:.2f} % within 1 step, "
              f"{100 * doc['reference_equal']:.2f} % equal")
    return 0 if doc["host_mismatches"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
