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
has kernels for. Exit status 0 even when ops are unsupported (see "unsupported_ops")."""


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=Path, help="a .tflite file")
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


def inspect_model(path: Path) -> dict[str, Any]:
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
    }


def run(args: argparse.Namespace) -> int:
    from tinydeploy.report.output import emit_json, stdout

    info = inspect_model(args.model)
    if args.json:
        emit_json(info)
        return 0
    from rich.table import Table

    t = Table(title=f"{args.model.name}  (sha256 {info['sha256'][:12]}…)", title_justify="left")
    for col, just in (("#", "right"), ("op", "left"), ("v", "right"), ("inputs", "left"),
                      ("output", "left"), ("MACs", "right"), ("weights", "left"), ("", "left")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for o in info["ops"]:
        ins = " ".join("-" if s is None else "x".join(map(str, s)) for s in o["inputs"])
        outs = " ".join("x".join(map(str, s)) for s in o["outputs"])
        mark = "[green]ok[/]" if o["supported"] else f"[red]unsupported[/] {o.get('reason', '')}"
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
    if info["unsupported_ops"]:
        stdout.print("[red]unsupported ops:[/] " + ", ".join(info["unsupported_ops"]))
    else:
        stdout.print("[green]all ops supported[/]")
    return 0
