"""`tinydeploy inspect MODEL`: what a model contains and whether tinydeploy can compile it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

NAME = "inspect"
HELP = "show a model's ops, shapes, MACs, parameters, quantization and op support"
DESCRIPTION = """\
Show what a .tflite model contains: every op with its version, shapes and MACs, the
parameter bytes, the inputs and outputs with their quantization, and which ops tinydeploy
has kernels for. For a model that cannot be compiled, every blocking op is listed with the
dtypes of its tensors, the reason, and whether another board (--board: the one you target)
or re-quantizing with 'tinydeploy quantize' would help. Exit status 0 even when ops are
unsupported (see "unsupported_ops" and "blocking")."""


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=Path, help="a .tflite file")
    p.add_argument("--board", default=None, metavar="ID",
                   help="also check the kernels this board's core can run (FPU, DSP, MVE)")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def _io(t: Any) -> dict[str, Any]:
    q = t.quant
    return {
        "name": t.name,
        "shape": list(t.shape),
        "dtype": t.dtype.name.lower(),
        "scale": (q.scale[0] if q and not q.per_channel else (list(q.scale) if q else None)),
        "zero_point": (q.zero_point[0] if q and not q.per_channel
                       else (list(q.zero_point) if q else None)),
    }


_QUANTIZE_HINT = ("re-quantize the float model with 'tinydeploy quantize MODEL --calibration "
                  "DATA' (full int8: int8 activations, per-channel int8 weights)")


def _dtypes(graph: Any, op: Any) -> dict[str, list[str]]:
    return {"inputs": [t.dtype.name.lower() for t in graph.op_inputs(op)
                       if t is not None and not t.is_constant],
            "outputs": [t.dtype.name.lower() for t in graph.op_outputs(op)]}


def blocking_ops(graph: Any, board: Any = None) -> list[dict[str, Any]]:
    """Every op that stops ``graph`` from compiling (for ``board``, or for any core when
    None): its index, type, tensor dtypes, the reason, and what would help."""
    from tinydeploy.boards import list_boards
    from tinydeploy.kernels.registry import variants

    features = frozenset(getattr(board, "features", ()) or ()) if board is not None else None
    out = []
    for op in graph.operators:
        cands = variants(op.opcode)
        dt = _dtypes(graph, op)
        entry = {"index": op.index, "op": op.type_name, "dtypes": dt}
        if not cands:
            out.append({**entry, "reason": "no kernel for this op type",
                        "help": "no board or quantize option helps: tinydeploy has no kernel "
                                f"for {op.type_name}; remove or replace it in the model"})
            continue
        reasons = {v.symbol: v.accepts(graph, op) for v in cands}
        accepting = [v for v in cands if reasons[v.symbol] is None]
        if accepting:
            if features is None or any(v.requires <= features for v in accepting):
                continue
            missing: list[frozenset[str]] = [frozenset(v.requires - features) for v in accepting]
            fewest = min(len(m) for m in missing)
            need = sorted(next(m for m in missing if len(m) == fewest))
            fits = sorted(b.id for b in list_boards()
                          if any(v.requires <= b.features for v in accepting))
            out.append({**entry, "reason": f"board {board.id} lacks {', '.join(need)}",
                        "help": "another board helps: " + ", ".join(fits)})
            continue
        used = set(dt["inputs"]) | set(dt["outputs"])
        why = "; ".join(f"{k}: {v}" for k, v in sorted(reasons.items()))
        if "int16" in used:
            hint = ("this op has no int16 (16x8) kernel yet: " + _QUANTIZE_HINT
                    + " without --activations int16")
        elif used & {"uint8", "float16", "int64", "int4"}:
            hint = _QUANTIZE_HINT
        elif "float32" in used and any("int8" in (r or "").lower() for r in reasons.values()):
            hint = _QUANTIZE_HINT
        else:
            hint = ("no board or quantize option helps: the op's options or quantization are "
                    "outside what TFLM's kernels accept (see the reason)")
        out.append({**entry, "reason": why, "help": hint})
    return out


def is_float_model(graph: Any) -> bool:
    """A model trained in float and not quantized: float32 weights (a constant float32 input
    of more than one element) or float32 inputs with no QUANTIZE op to turn them into int8.
    Quantizing it is the one thing that helps, so that is said first."""
    from tinydeploy.model.ir import DType

    for op in graph.operators:
        for t in graph.op_inputs(op):
            if t is not None and t.is_constant and t.dtype == DType.FLOAT32 and t.size > 1:
                return True
    return (bool(graph.inputs) and all(t.dtype == DType.FLOAT32 for t in graph.inputs)
            and not any(op.type_name == "QUANTIZE" for op in graph.operators))


def inspect_model(path: Path, board: Any = None) -> dict[str, Any]:
    from tinydeploy.kernels.registry import support_reason
    from tinydeploy.model.analysis import params_bytes, summarize_ops
    from tinydeploy.model.loader import load_tflite

    graph = load_tflite(path)
    ops = summarize_ops(graph, support_reason)
    per_channel = sorted({s.index for s in ops if s.weights_quant == "per-channel"})
    return {
        "model": str(path),
        "sha256": graph.sha256,
        "subgraphs": len(graph.subgraphs),
        "ops": [
            {
                "index": s.index, "type": s.type, "version": s.version, "macs": s.macs,
                "inputs": [None if sh is None else list(sh) for sh in s.input_shapes],
                "outputs": [list(sh) for sh in s.output_shapes],
                "weights_quantization": s.weights_quant,
                "supported": s.supported,
                **({"reason": s.reason} if s.reason else {}),
            }
            for s in ops
        ],
        "params_bytes": params_bytes(graph),
        "macs": sum(s.macs for s in ops),
        "inputs": [_io(t) for t in graph.inputs],
        "outputs": [_io(t) for t in graph.outputs],
        "unsupported_ops": sorted({s.type for s in ops if not s.supported}),
        "per_channel_ops": per_channel,
        "board": getattr(board, "id", None),
        "float_model": is_float_model(graph),
        "blocking": blocking_ops(graph, board),
    }


def run(args: argparse.Namespace) -> int:
    from tinydeploy.report.output import emit_json, stdout

    board = None
    if args.board is not None:
        from tinydeploy.boards import get_board

        board = get_board(args.board)
    info = inspect_model(args.model, board)
    if args.json:
        emit_json(info)
        return 0
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=f"{args.model.name}  (sha256 {info['sha256'][:12]}…)", title_justify="left")
    for col, just in (("#", "right"), ("op", "left"), ("v", "right"), ("inputs", "left"),
                      ("output", "left"), ("MACs", "right"), ("weights", "left"), ("", "left")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for o in info["ops"]:
        ins = " ".join("-" if s is None else "x".join(map(str, s)) for s in o["inputs"])
        outs = " ".join("x".join(map(str, s)) for s in o["outputs"])
        mark = ("[green]ok[/]" if o["supported"] else "[red]float32[/]" if info["float_model"]
                else f"[red]unsupported[/] {o.get('reason', '')}")
        t.add_row(str(o["index"]), o["type"], str(o["version"]), ins, outs,
                  f"{o['macs']:,}" if o["macs"] else "", o["weights_quantization"], mark)
    stdout.print(t)
    for kind in ("inputs", "outputs"):
        for io in info[kind]:
            stdout.print(f"{kind[:-1]:6} {io['name']}: {io['dtype']} "
                         f"{'x'.join(map(str, io['shape']))} scale={io['scale']} "
                         f"zero_point={io['zero_point']}")
    stdout.print(f"parameters: {info['params_bytes']:,} bytes    MACs: {info['macs']:,}    "
                 f"ops: {len(info['ops'])}")
    quantize_first = info["float_model"] and info["blocking"]
    if quantize_first:
        stdout.print("[red]float model:[/] quantize it first: " + _QUANTIZE_HINT)
    if info["unsupported_ops"]:
        stdout.print("[red]unsupported ops:[/] " + ", ".join(info["unsupported_ops"]))
    if info["blocking"]:
        where = f" on {info['board']}" if info["board"] else ""
        stdout.print(f"[red]{len(info['blocking'])} op(s) block compiling{where}:[/]")
        for b in info["blocking"]:
            dts = ", ".join(b["dtypes"]["inputs"]) + " -> " + ", ".join(b["dtypes"]["outputs"])
            if quantize_first and b["help"] == _QUANTIZE_HINT:
                # the kernels' per-variant rejections all say "float32, int8 required"
                stdout.print(f"  op {b['index']} {b['op']} ({dts}): quantize (see above)")
                continue
            stdout.print(f"  op {b['index']} {b['op']} ({dts}): {escape(b['reason'])}")
            stdout.print(f"    [yellow]help:[/] {escape(b['help'])}")
    else:
        stdout.print("[green]all ops supported[/]"
                     + (f" on {info['board']}" if info["board"] else ""))
    return 0
