"""Constants stored once per buffer: a filter shared by several ops (one tensor read by three
convolutions, or three tensors on one buffer of the file, as in MLPerf Tiny's str_ww model)
is counted once by `inspect`, once by the flash budget and stored once in model_data.c."""

from __future__ import annotations

import re
from pathlib import Path

import flatbuffers
import numpy as np

from tinydeploy.boards import get_board
from tinydeploy.codegen.project import render_project
from tinydeploy.kernels.registry import select_kernels
from tinydeploy.model.analysis import params_bytes
from tinydeploy.model.ir import Conv2DOptions, Padding
from tinydeploy.model.loader import load_tflite
from tinydeploy.plan.budget import weights_bytes
from tinydeploy.plan.lifetimes import plan_graph
from tinydeploy.testing.builder import ModelBuilder, _schema

C = 8


def _three_convs(share_tensor: bool) -> bytes:
    """x -> conv -> conv -> conv, all 1x1 with the same C x C filter values: one filter
    tensor read three times, or three filter tensors (each its own buffer)."""
    rng = np.random.default_rng(0)
    wdata = rng.integers(-127, 128, size=(C, 1, 1, C))
    b = ModelBuilder("shared filter")
    x = b.tensor("x", (1, 4, 4, C), "int8", scale=0.05, zero_point=0)
    filters = [b.tensor(f"w{k}", (C, 1, 1, C), "int8", scale=0.01, zero_point=0, data=wdata)
               for k in range(1 if share_tensor else 3)]
    cur = x
    for k in range(3):
        y = b.tensor(f"y{k}", (1, 4, 4, C), "int8", scale=0.05, zero_point=0)
        b.op("CONV_2D", [cur, filters[0 if share_tensor else k], -1], [y],
             Conv2DOptions(padding=Padding.SAME, stride_w=1, stride_h=1), version=3)
        cur = y
    return b.build(inputs=[x], outputs=[cur])


def _share_buffers(model: bytes) -> bytes:
    """The same model with tensors w1 and w2 pointing at w0's buffer."""
    schema = _schema()
    m = schema.ModelT.InitFromPackedBuf(model, 0)
    tensors = {t.name.decode() if isinstance(t.name, bytes) else t.name: t
               for t in m.subgraphs[0].tensors}
    tensors["w1"].buffer = tensors["w0"].buffer
    tensors["w2"].buffer = tensors["w0"].buffer
    fb = flatbuffers.Builder(1024)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    return bytes(fb.Output())


def _stored_filters(model: bytes, tmp_path: Path) -> tuple[int, int]:
    g = load_tflite(model)
    board = get_board("microbit-v1")
    sel = select_kernels(g, board)
    gp = plan_graph(g, sel)
    render_project(g, gp.selection, gp, board, "validate", tmp_path)
    text = (tmp_path / "model_data.c").read_text() if (tmp_path / "model_data.c").exists() \
        else next(tmp_path.rglob("model_data.c")).read_text()
    naive = sum(-(-int(c.values.nbytes) // 16) * 16 for ch in sel.choices if ch.call
                for c in ch.call.consts)
    return len(re.findall(r"const int8_t op\d+_filter\[", text)), naive - weights_bytes(sel)


def test_one_filter_buffer_is_counted_and_stored_once(tmp_path: Path) -> None:
    separate = _three_convs(share_tensor=False)
    shared_buffer = _share_buffers(separate)
    shared_tensor = _three_convs(share_tensor=True)
    g = load_tflite(shared_buffer)
    assert len({g.tensor(i).buffer for op in g.operators for i in op.inputs[1:2]}) == 1
    filt = C * C
    # three distinct buffers: three filters; one buffer or one tensor: one filter
    assert params_bytes(load_tflite(separate)) == 3 * filt
    assert params_bytes(g) == filt
    assert params_bytes(load_tflite(shared_tensor)) == filt
    for k, model in enumerate((separate, shared_buffer, shared_tensor)):
        # equal values are stored once even from three buffers, and the flash budget
        # counts them once: at least the two repeated filters are saved
        stored, saved = _stored_filters(model, tmp_path / str(k))
        assert stored == 1, f"model {k}: the filter is stored {stored} times"
        assert saved >= 2 * filt
