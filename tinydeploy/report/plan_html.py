"""The HTML report of `tinydeploy plan`: budget tables, the arena memory timeline and the live
bytes per op, in one self-contained file (the plots are embedded as base64 PNG).

Rendered from the plan command's report dictionary (plain data), so that the HTML says exactly
what ``--json`` says. Output is reproducible: no timestamps, PNG metadata stripped, colours
chosen by buffer order.
"""

from __future__ import annotations

import base64
import html
import io
from typing import Any

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.peak { background: #fff3cd; }
.over { color: #b00020; font-weight: bold; }
.ok { color: #1b7f2a; font-weight: bold; }
img { max-width: 100%; }
"""


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    return base64.b64encode(buf.getvalue()).decode("ascii")


def timeline_png(report: dict[str, Any]) -> str:
    """The memory timeline (x: op step, y: arena offset, one labelled rectangle per buffer)
    above the live bytes per op, as base64 PNG."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    tensors = report["tensors"]
    ops = report["ops"]
    steps = max(len(ops), 1)
    arena = max(report["arena_bytes"], 1)
    width = min(4 + 0.45 * steps, 40)
    fig = Figure(figsize=(width, 7.5))
    ax, bx = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    cmap = [
        "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
        "#ff9da7", "#9c755f", "#bab0ac",
    ]
    for n, t in enumerate(tensors):
        x0, x1 = t["first_op"] - 0.45, t["last_op"] + 0.45
        colour = "#cccccc" if t["kind"] == "scratch" else cmap[n % len(cmap)]
        ax.add_patch(Rectangle((x0, t["offset"]), x1 - x0, max(t["bytes"], 1),
                               facecolor=colour, edgecolor="#333333", linewidth=0.6,
                               alpha=0.85, hatch="//" if t["kind"] == "scratch" else None))
        if t["bytes"] >= 0.05 * arena:
            ax.text((x0 + x1) / 2, t["offset"] + t["bytes"] / 2, t["buffer"], ha="center",
                    va="center", fontsize=7, clip_on=True)
    ax.axhline(report["arena_bytes"], color="#b00020", linewidth=1)
    ax.text(-0.5, report["arena_bytes"], f" arena {report['arena_bytes']:,} B", va="bottom",
            fontsize=8, color="#b00020")
    if report["lower_bound_bytes"] != report["arena_bytes"]:
        ax.axhline(report["lower_bound_bytes"], color="#555555", linewidth=0.8, linestyle="--")
    ax.set_xlim(-0.6, steps - 0.4)
    ax.set_ylim(0, arena * 1.08)
    ax.set_ylabel("arena offset (bytes)")
    ax.set_title(f"arena layout: {report['algorithm']}, {report['arena_bytes']:,} B "
                 f"(lower bound {report['lower_bound_bytes']:,} B)", fontsize=10)
    peak = report["peak_op"]["index"] if report["peak_op"] else -1
    bx.bar([o["index"] for o in ops], [o["live_bytes"] for o in ops],
           color=["#e15759" if o["index"] == peak else "#4e79a7" for o in ops])
    bx.set_ylabel("live bytes")
    bx.set_xlabel("op step")
    if steps <= 60:
        bx.set_xticks(range(steps))
    fig.tight_layout()
    return _png(fig)


def _row(cells: list[tuple[Any, bool]], cls: str = "") -> str:
    tds = "".join(f'<td class="n">{html.escape(str(v))}</td>' if num
                  else f"<td>{html.escape(str(v))}</td>" for v, num in cells)
    return f'<tr class="{cls}">{tds}</tr>' if cls else f"<tr>{tds}</tr>"


def _budget_table(report: dict[str, Any]) -> str:
    r, f = report["ram"], report["flash"]
    est = set(report["estimated"])

    def note(k: str) -> str:
        return "estimate" if k in est else "measured"

    rows = [
        _row([("arena", False), (f"{r['arena']:,}", True), ("planned", False)]),
        _row([("stack", False), (f"{r['stack']:,}", True),
              (f"need {report['stack_need']:,} ({note('stack')})"
               + (f", reserved {report['stack_reserved']:,}"
                  if report["stack_reserved"] is not None else ""), False)]),
        _row([("application buffers", False), (f"{r['buffers']:,}", True),
              (", ".join(f"{b['name']} {b['bytes']:,}" for b in report["app_buffers"]),
               False)]),
        _row([("static data", False), (f"{r['static']:,}", True), (note("static"), False)]),
        _row([("RAM total", False), (f"{r['total']:,}", True),
              (f"of {r['available']:,}" + (f", over by {r['over']:,}" if r["over"] else ""),
               False)]),
        _row([("weights", False), (f"{f['weights']:,}", True), ("constant arrays", False)]),
        _row([("code", False), (f"{f['code']:,}", True), (note("code"), False)]),
        _row([("flash total", False), (f"{f['total']:,}", True),
              (f"of {f['available']:,}" + (f", over by {f['over']:,}" if f["over"] else ""),
               False)]),
    ]
    return ("<table><tr><th></th><th>bytes</th><th></th></tr>" + "".join(rows)
            + "</table>")


def render_plan_html(report: dict[str, Any]) -> str:
    """A self-contained HTML page for one plan report."""
    esc = html.escape
    verdict = ('<span class="ok">fits</span>' if report["fits"]
               else '<span class="over">does not fit</span>')
    trials = ", ".join(f"{t['algorithm']} {t['arena_bytes']:,} B"
                       + ("" if t["complete"] else " (search cut off)")
                       for t in report["trials"])
    peak = report["peak_op"]["index"] if report["peak_op"] else -1
    op_rows = "".join(
        _row([(o["index"], True), (o["type"], False), (f"{o['live_bytes']:,}", True)],
             "peak" if o["index"] == peak else "")
        for o in report["ops"])
    t_rows = "".join(
        _row([(t["buffer"], False), (t["name"], False), (f"{t['bytes']:,}", True),
              (f"{t['offset']:,}", True), (t["first_op"], True), (t["last_op"], True),
              (t["inplace_of"] or "", False)])
        for t in report["tensors"])
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>tinydeploy plan: {esc(report['model'])} on {esc(report['board'])}</title>
<style>{_CSS}</style></head><body>
<h1>Arena plan and memory budget</h1>
<p>model <code>{esc(report['model'])}</code> (sha256 <code>{esc(report['sha256'][:16])}</code>),
board <b>{esc(report['board'])}</b>, application <b>{esc(report['app'])}</b>: {verdict}</p>
{_budget_table(report)}
<p>arena <b>{report['arena_bytes']:,} B</b>, lower bound {report['lower_bound_bytes']:,} B
{'(optimal)' if report['optimal'] else ''}; kept: <b>{esc(report['algorithm'])}</b>
(tried: {esc(trials)})</p>
<h2>Memory timeline</h2>
<img alt="arena memory timeline" src="data:image/png;base64,{timeline_png(report)}">
<h2>Live bytes per op</h2>
<table><tr><th>op</th><th>type</th><th>live bytes</th></tr>{op_rows}</table>
<h2>Buffers</h2>
<table><tr><th>buffer</th><th>tensor</th><th>bytes</th><th>offset</th><th>first op</th>
<th>last op</th><th>in-place over</th></tr>{t_rows}</table>
</body></html>
"""
