"""`tinydeploy quantize MODEL --calibration DATA -o OUT.tflite`: full-INT8 post-training
quantization, with the op check and the cost of quantization measured."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from tinydeploy.quantize import QuantizeReport

NAME = "quantize"
HELP = "quantize a float Keras/SavedModel/.tflite model to full INT8 and check its ops"
DESCRIPTION = """\
Quantize a float model to a full-INT8 .tflite that tinydeploy can compile: int8 input and
output, int8 builtin ops only, per-channel weights, batch dimension fixed to 1 (so the graph
computes no shapes at run time). Every op is then checked against tinydeploy's kernel table.

MODEL is a Keras .keras/.h5 file, a SavedModel directory or a float .tflite; an INT8 .tflite
is only checked and copied. DATA is a .npy array of representative inputs, or a .npz with key
'x' and optional 'y' (class ids or one-hot). With labels, float and INT8 accuracy are reported
(INT8 measured with tflite-micro, i.e. what the firmware computes); per-layer SQNR always.

Nothing is written on error; the output is written atomically.

example:
  tinydeploy quantize kws.keras --calibration calib.npz -o kws_int8.tflite \\
      --labels silence,unknown,yes,no"""


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=Path,
                   help="Keras .keras/.h5 file, SavedModel directory, float/INT8 .tflite, or "
                        ".onnx model (NCHW as torch.onnx.export writes it; needs the onnx "
                        "extra)")
    p.add_argument("--calibration", "-c", type=Path, metavar="DATA",
                   help=".npy inputs or .npz with 'x' (and optional 'y' labels); required "
                        "unless MODEL is already INT8")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="OUT.tflite",
                   help="where to write the INT8 model (its directory must exist)")
    p.add_argument("--frontend", default=None, metavar="kws|NAME|FILE.json",
                   help="DATA is a folder of WAV files: compute the model's float input with "
                        "a keyword-spotting front end (firmware/frontend, the device's own): "
                        "kws (the tinydeploy preset, --frontend-config), a preset name "
                        "(tinydeploy, mlperf-kws) or a JSON file naming one")
    p.add_argument("--frontend-config", type=Path, default=None, metavar="JSON",
                   help="front-end parameters for --frontend kws (frontend.json written by "
                        "tinydeploy kws train; default: the 49x10 MFCC config)")
    p.add_argument("--force", action="store_true", help="overwrite OUT if it exists")
    p.add_argument("--labels", metavar="NAMES",
                   help="class names, comma-separated, or a text file with one per line "
                        "(for per-class accuracy)")
    p.add_argument("--samples", type=int, default=500, metavar="N",
                   help="calibrate on the first N samples (default 500)")
    p.add_argument("--sqnr-samples", type=int, default=32, metavar="N",
                   help="samples used for per-layer SQNR (default 32; 0 = skip)")
    p.add_argument("--activations", choices=("int8", "int16"), default="int8",
                   help="int8 (default), or int16: TensorFlow's 16x8 mode (int16 activations "
                        "and model input/output, int8 weights) for models int8 hurts")
    p.add_argument("--json", action="store_true", help="machine-readable report on stdout")


def parse_labels(value: str | None) -> list[str] | None:
    """Class names from ``a,b,c``, or from a file with one name per line (or comma-separated)."""
    if value is None:
        return None
    from tinydeploy.errors import InputDataError

    path = Path(value)
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise InputDataError(f"{path}: cannot read labels: {e}") from None
        names = [n.strip() for line in text.splitlines() if line.strip()
                 for n in line.split(",")]
    else:
        names = [n.strip() for n in value.split(",")]
    if not names or any(not n for n in names):
        raise InputDataError(f"--labels '{value}': empty class name",
                             hint="give names like yes,no,up,down or a file with one per line")
    return names


def run(args: argparse.Namespace) -> int:
    from tinydeploy.errors import InputDataError
    from tinydeploy.quantize import quantize_model
    from tinydeploy.report.output import emit_json, stdout

    if args.samples < 1:
        raise InputDataError(f"--samples must be ≥ 1, got {args.samples}")
    if args.sqnr_samples < 0:
        raise InputDataError(f"--sqnr-samples must be ≥ 0, got {args.sqnr_samples}")
    labels = parse_labels(args.labels)
    calibration: object = args.calibration
    if args.frontend is not None:
        from tinydeploy.frontend.presets import resolve_frontend
        from tinydeploy.kws.folder import wav_folder_features

        if args.calibration is None:
            raise InputDataError(f"--frontend {args.frontend} needs --calibration FOLDER "
                                 f"(WAV files)")
        if args.frontend == "kws":
            choice = resolve_frontend(args.frontend_config or "tinydeploy")
        elif args.frontend_config is not None:
            raise InputDataError("--frontend-config goes with --frontend kws",
                                 hint=f"--frontend {args.frontend} already names the config")
        else:
            choice = resolve_frontend(args.frontend)
        x, y = wav_folder_features(args.calibration, choice, labels)
        calibration = (x[..., None], y) if y is not None else x[..., None]
    elif args.frontend_config is not None:
        raise InputDataError("--frontend-config goes with --frontend kws")
    report = quantize_model(
        args.model, calibration, args.output, force=args.force,  # type: ignore[arg-type]
        labels=labels, max_calibration_samples=args.samples,
        sqnr_samples=args.sqnr_samples, progress=not args.json,
        activations=args.activations)
    if args.json:
        emit_json(report.to_dict())
        return 0
    _print(report, stdout)
    return 0


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100.0 * v:.2f}%"


def _print(report: QuantizeReport, out: Console) -> None:
    from rich.markup import escape
    from rich.table import Table

    i, o = report.input, report.output_tensor
    head = "checked and copied (already INT8)" if report.passthrough else "quantized"
    out.print(f"[bold]{escape(report.source)}[/] {head} -> {escape(report.output)} "
              f"({report.size_bytes} bytes, sha256 {report.sha256[:12]}…)")
    out.print(f"  input  {escape(i.name)}: {'x'.join(map(str, i.shape))} {i.dtype} "
              f"scale {i.scale:.6g} zero point {i.zero_point}")
    out.print(f"  output {escape(o.name)}: {'x'.join(map(str, o.shape))} {o.dtype} "
              f"scale {o.scale:.6g} zero point {o.zero_point}")
    counts: dict[str, int] = {}
    for op in report.ops:
        counts[op] = counts.get(op, 0) + 1
    out.print("  ops    " + ", ".join(f"{k}×{v}" for k, v in sorted(counts.items()))
              + "  (all supported)")
    if report.passthrough:
        return
    out.print(f"  calibrated on {report.calibration_samples} samples")
    if report.float_accuracy is not None:
        drop = report.accuracy_drop
        out.print(f"  accuracy on {report.evaluated_samples} samples: float "
                  f"{_pct(report.float_accuracy)}, int8 (tflite-micro) "
                  f"{_pct(report.int8_accuracy)}, drop {drop:+.2f} points")
    if report.classes and any(c.label != str(c.class_id) for c in report.classes):
        ct = Table(title="per-class accuracy", title_justify="left")
        for col in ("class", "samples", "float", "int8"):
            ct.add_column(col, justify="left" if col == "class" else "right")
        for c in report.classes:
            ct.add_row(escape(c.label), str(c.samples), _pct(c.float_accuracy),
                       _pct(c.int8_accuracy))
        out.print(ct)
    if report.layers:
        worst = report.worst_layer
        t = Table(title="per-layer SQNR (float vs dequantized int8, accumulated)",
                  title_justify="left")
        for col, just in (("#", "right"), ("op", "left"), ("SQNR dB", "right"),
                          ("layers (or output tensor)", "left")):
            t.add_column(col, justify=just)  # type: ignore[arg-type]
        for layer in report.layers:
            db = "exact" if layer.sqnr_db is None else f"{layer.sqnr_db:.1f}"
            mark = " ◀ lowest" if worst is not None and layer is worst else ""
            name = ", ".join(layer.layers) or layer.tensor
            name = name if len(name) <= 60 else name[:57] + "…"
            t.add_row(str(layer.op_index), layer.op_type, db + mark, escape(name))
        out.print(t)
    for note in report.notes:
        out.print(f"[yellow]note:[/] {escape(note)}")
