"""The step function's C: the schedule's row calls, the time reduction, the slide.

`stream_context` returns what `model_context` returns for a full-window model (ops with
their constants, parameters and call text; placements; input and output descriptors; state
to reset), so the same templates render it, plus ``stream``: hop, warm-up, the slide of the
persistent buffers. Each row call is the op's own kernel call with the geometry of its row
window: ``in_h`` rows from a pointer to the first row it reads, ``pad_h`` rows of padding
above them, ``out_h`` rows out; rows past ``in_h`` are padding below, which every kernel
already skips (td_kernels.h: taps outside the image are not read). Constants are the op's,
stored once.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from tinydeploy.codegen import cemit
from tinydeploy.errors import TinydeployError
from tinydeploy.kernels.common import activation_range
from tinydeploy.kernels.registry import ConstArray, KernelCall, Selection
from tinydeploy.model.ir import Graph, Pool2DOptions, Tensor
from tinydeploy.plan.stream import StreamPlan, cone_name, tail_name
from tinydeploy.stream.analysis import ROW_WINDOW_PARAMS, StreamError
from tinydeploy.stream.schedule import RowCall

STREAM_AVGPOOL_SOURCE = "kernels/ref/td_stream_avgpool_s8_ref.c"


def _set(params: tuple[tuple[str, Any], ...], **values: Any) -> tuple[tuple[str, Any], ...]:
    names = {k for k, _ in params}
    missing = set(values) - names
    if missing:
        raise TinydeployError(f"parameters {sorted(missing)} missing from a row-window call")
    return tuple((k, values.get(k, v)) for k, v in params)


def row_window_call(call: KernelCall, rc: RowCall,
                    folded_pad: tuple[int, int, int] | None = None) -> KernelCall:
    """``call`` with the geometry of the row call ``rc`` (and of a folded PAD: the input's
    unpadded width, the left padding grown by the PAD's)."""
    if call.params_type == "td_pad_params_t":
        consts = []
        for c in call.consts:
            if c.name in ("in_dims", "out_dims"):
                v = np.array(c.values, dtype=np.int64)
                v[2] = rc.in_rows if c.name == "in_dims" else rc.out_rows
                consts.append(ConstArray(c.name, c.ctype, v.astype(np.int32)))
            else:
                consts.append(c)
        return replace(call, consts=tuple(consts))
    # a folded PAD's op was prepared on the unpadded features with its padding
    # (`tinydeploy.plan.stream.folded_graph`): only the rows change
    del folded_pad
    return replace(call, params=_set(call.params, in_h=rc.in_rows, out_h=rc.out_rows,
                                     pad_h=rc.pad_top))


def check_row_windows(graph: Graph, selection: Selection, plan: StreamPlan) -> None:
    """Refuse a streamed op whose chosen kernel has no row-window form."""
    choices = {c.op_index: c for c in selection.choices}
    for lay in plan.schedule.analysis.layers:
        ch = choices[lay.op_index]
        if ch.call is None or ch.call.params_type not in ROW_WINDOW_PARAMS:
            raise StreamError(f"op {lay.op_index} ({lay.op_type}): kernel "
                              f"{ch.variant.symbol} takes no row window")


def stream_context(graph: Graph, selection: Selection, plan: StreamPlan,
                   desc: Any) -> dict[str, Any]:
    """The model templates' data for the step function (see the module docstring).
    ``desc(tensor, offset, shape)`` renders a tensor descriptor (the project's)."""
    check_row_windows(graph, selection, plan)
    sched = plan.schedule
    an = sched.analysis
    choices = {c.op_index: c for c in selection.choices}
    tensors = sched.tensors

    def row_ptr(position: int, region: str, row: int, const: bool) -> str:
        t = tensors[position]
        if region == "cone":
            name, first = cone_name(position), 0
        else:
            name, first = tail_name(position), t.tail_first
        off = plan.offset(name) + (row - first) * t.row_bytes
        if row < first or (region == "tail" and row > t.rows):
            raise TinydeployError(f"row {row} of chain tensor {position} is not in its "
                                  f"{region} buffer")
        ptr = "const void *" if const else "void *"
        return f"({ptr})(td_arena + {off}u)"

    stored: dict[tuple[str, str, int, str], str] = {}
    weights = 0

    def own_consts(call: KernelCall, prefix: str) -> tuple[str, dict[str, str]]:
        nonlocal weights
        text, symbols = [], {}
        for c in call.consts:
            if c.key not in stored:
                sym = cemit.const_symbol(prefix, c.name)
                while sym in stored.values():     # a row window's own dims array
                    sym += "_"
                stored[c.key] = sym
                text.append(cemit.emit_const_array(
                    ConstArray(sym[len(prefix) + 1:], c.ctype, c.values), prefix,
                    static=True))
                weights += int(c.values.nbytes)
            symbols[c.name] = stored[c.key]
        return "".join(text), symbols

    by_op: dict[int, list[RowCall]] = {}
    for rc in sched.calls:
        by_op.setdefault(an.layers[rc.layer].op_index, []).append(rc)
    folded = {lay.folded_pad[0]: lay.op_index for lay in an.layers if lay.folded_pad}
    emitted = [rc for op in graph.operators for rc in by_op.get(op.index, [])]
    if emitted != list(sched.calls):
        # the plan's lifetimes follow sched.calls: the C must run the calls in that order
        raise TinydeployError("the step schedule's call order is not the op order")
    ops: list[dict[str, Any]] = []
    for op in graph.operators:
        ch = choices[op.index]
        entry: dict[str, Any] = {
            "index": op.index, "type": op.type_name, "version": op.version,
            "alias": ch.call is None, "prefix": f"op{op.index}",
            "output_label": ", ".join(graph.tensor(i).name for i in op.outputs),
            "symbol": ch.variant.symbol,
        }
        if op.index in by_op:
            assert ch.call is not None
            consts, params, calls = [], [], []
            for rc in by_op[op.index]:
                prefix = f"op{op.index}_{rc.region}"
                call = row_window_call(ch.call, rc, an.layers[rc.layer].folded_pad)
                c_text, symbols = own_consts(call, f"op{op.index}")
                consts.append(c_text)
                params.append(cemit.emit_params(call, prefix, static=False, symbols=symbols))
                args = {"in0": row_ptr(rc.layer, rc.in_region, rc.in_first, True),
                        "out0": row_ptr(rc.layer + 1, rc.region, rc.out_first, False)}
                if "scratch" in call.args:
                    args["scratch"] = (f"(void *)(td_arena + {plan.offset(f'scratch{op.index}')}u)"
                                       if call.scratch_bytes else "(void *)0")
                calls.append(f"/* rows {rc.out_first}..{rc.out_first + rc.out_rows - 1} "
                             f"({rc.region}) from rows {rc.in_first}.."
                             f"{rc.in_first + rc.in_rows - 1}, {rc.pad_top} padded above */\n"
                             + cemit.emit_call(call, prefix, args))
            entry.update(params_type=ch.call.params_type, consts="".join(consts),
                         params="".join(params),
                         param_names=[f"op{op.index}_{rc.region}_params"
                                      for rc in by_op[op.index]],
                         call="\n".join(calls).replace("\n", "\n    "))
        elif op.index in folded:
            entry.update(alias=True, output_label=entry["output_label"] + " (folded into op "
                         f"{folded[op.index]})")
        elif op.index == an.reduction.op_index:
            entry.update(_reduction_entry(graph, op.index, plan, row_ptr))
            entry["symbol"] = "td_stream_avgpool_s8_ref"
        elif ch.call is not None:
            call = ch.call
            c_text, symbols = own_consts(call, entry["prefix"])
            args = {}
            for name in call.args:
                arg = cemit.call_arg_tensor(name, op.inputs, op.outputs)
                if name == "scratch":
                    args[name] = (f"(void *)(td_arena + {plan.offset(f'scratch{op.index}')}u)"
                                  if call.scratch_bytes else "(void *)0")
                elif arg is not None:
                    is_out, t = arg
                    ptr = "void *" if is_out else "const void *"
                    args[name] = f"({ptr})(td_arena + {plan.offset(plan.tensor_buffer(t))}u)"
                else:
                    raise TinydeployError(f"op {op.index}: unknown argument '{name}'")
            entry.update(params_type=call.params_type, consts=c_text,
                         params=cemit.emit_params(call, entry["prefix"], static=False,
                                                  symbols=symbols),
                         call=cemit.emit_call(call, entry["prefix"], args).replace(
                             "\n", "\n    "))
        ops.append(entry)
    # state: reset to the zero point (tails), 0 (ring). Not the input's newest hop rows: they
    # are the step input, which the application may have written before the first step (the
    # first td_model_step() resets the state): clearing them lost that step's frames, and
    # the first window all of real frames differed from the full window's (the frames of
    # step 0 are in it)
    state = []
    for rows in tensors:
        if rows.persistent:
            zp = graph.tensor(rows.tensor).zero_point
            n = rows.tail_bytes - (rows.hop * rows.row_bytes if rows.position == 0 else 0)
            if n <= 0:
                continue
            state.append({"name": f"{tail_name(rows.position)} "
                                  f"({graph.tensor(rows.tensor).name})",
                          "offset": plan.offset(tail_name(rows.position)),
                          "bytes": n, "byte": zp & 0xFF})
    if sched.reduction.ring:
        state.append({"name": "ring (row sums)", "offset": plan.offset("ring"),
                      "bytes": sched.reduction.ring_bytes, "byte": 0})
    placements = [{"offset": p.offset, "size": p.size, "first": p.first, "last": p.last,
                   "label": _label(graph, plan, p.name)}
                  for p in sorted(plan.plan.placements, key=lambda p: (p.offset, p.name))]
    x = graph.inputs[0]
    in_off = plan.step_input_offset
    step_shape = (1, sched.hop, *x.shape[2:])
    y = graph.outputs[0]
    return {
        "sha256": graph.sha256,
        "model_name": graph.description or "model",
        "num_ops": len(graph.operators),
        "arena_bytes": plan.arena_bytes,
        "lower_bound_bytes": plan.plan.lower_bound_bytes,
        "plan_algorithm": plan.plan.algorithm,
        "placements": placements,
        "inputs": [desc(x, in_off, step_shape)],
        "outputs": [desc(y, plan.offset(plan.tensor_buffer(y.index)), None)],
        "ops": ops,
        "state": state,
        "weights_bytes": weights,
        "stream": {"hop": sched.hop, "window": sched.window, "warmup": sched.warmup_steps,
                   "state_bytes": sched.state_bytes, "input_offset": in_off,
                   "slides": _slides(plan)},
    }


def _label(graph: Graph, plan: StreamPlan, name: str) -> str:
    if name.startswith("t") and name[1:].isdigit():
        return graph.tensor(int(name[1:])).name
    return name


def _slides(plan: StreamPlan) -> list[dict[str, Any]]:
    """The memmove of each persistent buffer after a step: rows move up by the hop."""
    out = []
    for t in plan.schedule.tensors:
        if not t.persistent:
            continue
        keep = (t.tail_rows - t.hop) * t.row_bytes
        if keep > 0:
            base = plan.offset(tail_name(t.position))
            out.append({"name": tail_name(t.position), "dst": base,
                        "src": base + t.hop * t.row_bytes, "bytes": keep})
    return out


def _reduction_entry(graph: Graph, op_index: int, plan: StreamPlan,
                     row_ptr: Any) -> dict[str, Any]:
    sched = plan.schedule
    red = sched.reduction
    op = graph.operators[op_index]
    opts = op.options
    assert isinstance(opts, Pool2DOptions)
    out: Tensor = graph.tensor(op.outputs[0])
    act = activation_range(opts.activation, out)
    if act is None:
        raise StreamError(f"op {op_index} ({op.type_name}): activation {opts.activation.name} "
                          f"has no clamp form")
    n = len(sched.analysis.layers)
    prefix = f"op{op_index}"
    params = (("channels", red.channels), ("cols", red.cols), ("top_rows", red.top),
              ("ring_rows", red.ring), ("new_rows", red.new), ("bottom_rows", red.bottom),
              ("count", red.count), ("act_min", act[0]), ("act_max", act[1]))
    call = KernelCall("td_stream_avgpool_s8_ref", "td_stream_avgpool_params_t", params, (),
                      ("top", "tail", "ring", "out0"))
    t = sched.tensors[n]
    args = {
        "top": row_ptr(n, "cone", 0, True) if red.top else "(const void *)0",
        "tail": row_ptr(n, "tail", t.new_first, True),
        "ring": (f"(void *)(td_arena + {plan.offset('ring')}u)" if red.ring
                 else "(void *)0"),
        "out0": f"(void *)(td_arena + {plan.offset(plan.tensor_buffer(out.index))}u)",
    }
    slide = "\n".join(f"memmove(td_arena + {s['dst']}u, td_arena + {s['src']}u, "
                      f"{s['bytes']}u); /* slide {s['name']} by one hop */"
                      for s in _slides(plan))
    return {"params_type": call.params_type, "consts": "",
            "params": cemit.emit_params(call, prefix, static=False),
            "call": (cemit.emit_call(call, prefix, args) + "\n" + slide).replace(
                "\n", "\n    ")}
