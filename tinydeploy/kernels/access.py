"""The order in which a kernel reads its input and writes its output, and the overlaps it
therefore tolerates between the two.

A kernel whose output may share bytes with its input (in-place execution) declares its
access order as a sequence of *steps*: at each step it first reads some input bytes, then
writes some output bytes, never reading the input again in that step once it has started
writing. `AccessOrder` records, for every byte of input 0, the last step that reads it, and
for every byte of output 0, the step that writes it. With the output placed ``shift`` bytes
after the input (``shift`` = output offset - input offset, negative: the output *leads*),
output byte ``p`` lands on input byte ``q = p + shift``, and the layout is safe exactly when

    last_read[q] <= write_step[p]   for every p with 0 <= p + shift < len(input),

i.e. no input byte is overwritten before its last read. `overlap_violation` is that proof
(run by the planner's verifier on every placed op); `tolerated_shifts` finds the overlaps
closest to full (the smallest lead and the smallest trail) on an alignment grid.

The builders below state each kernel's loop order; they are derived from the C sources
(`firmware/kernels/ref/td_dwconv2d_s8_ref.c`, `td_conv2d_s8_ref.c`, the DSP and MVE kernels
in `firmware/kernels/arm/`) and checked by running the real kernels on overlapping buffers
(tests/golden/test_inplace_host.py). Only int8 input and output tensors are modelled (one
byte per element).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tinydeploy.kernels.registry import KernelCall


@dataclass(frozen=True, eq=False)
class AccessOrder:
    """Per input byte the step of its last read (-1: never read), per output byte the step
    that writes it. Steps are in execution order; reads of a step precede its writes."""

    last_read: np.ndarray
    write_step: np.ndarray

    @property
    def in_bytes(self) -> int:
        return int(self.last_read.size)

    @property
    def out_bytes(self) -> int:
        return int(self.write_step.size)


@dataclass(frozen=True)
class Violation:
    """An input byte overwritten before its last read: output byte ``out_byte`` (written at
    step ``write_step``) lands on input byte ``in_byte`` (last read at step ``last_read``)."""

    out_byte: int
    in_byte: int
    write_step: int
    last_read: int


def overlap_violation(order: AccessOrder, shift: int) -> Violation | None:
    """The first unsafe byte with the output ``shift`` bytes after the input, or None."""
    n_in, n_out = order.in_bytes, order.out_bytes
    lo = max(0, -shift)
    hi = min(n_out, n_in - shift)
    if hi <= lo:
        return None
    w = order.write_step[lo:hi]
    r = order.last_read[lo + shift:hi + shift]
    bad = np.flatnonzero(r > w)
    if bad.size == 0:
        return None
    p = lo + int(bad[0])
    return Violation(p, p + shift, int(order.write_step[p]), int(order.last_read[p + shift]))


def tolerated_shifts(order: AccessOrder, align: int = 1) -> tuple[int, int]:
    """``(lead, trail)``: the largest safe shift <= 0 and the smallest safe shift >= 0 that
    are multiples of ``align``. Without overlap every shift is safe, so ``lead`` is at least
    ``-out_bytes`` rounded down to the grid and ``trail`` at most ``in_bytes`` rounded up.

    When the write steps never decrease along the output (every kernel here writes its output
    front to back), input byte q is safe under shift s exactly when q - s >= p0(q), the first
    output byte written at or after q's last read; so lead = min(q - p0(q)), and a trail s is
    safe when s <= q - p0(q) for every q >= s. Otherwise the shifts are tried one by one."""
    w, r = order.write_step, order.last_read
    if w.size and np.all(np.diff(w) >= 0):
        read = np.flatnonzero(r >= 0)
        if read.size == 0:
            return 0, 0
        g = np.full(r.size, np.iinfo(np.int64).max, dtype=np.int64)
        g[read] = read - np.searchsorted(w, r[read], side="left")
        lead = min(0, int(g.min()))
        lead = (lead // align) * align
        suffix = np.minimum.accumulate(g[::-1])[::-1]
        cands = np.arange(0, r.size, align)
        ok = cands <= suffix[cands]
        trail = int(cands[np.argmax(ok)]) if ok.any() else -(-r.size // align) * align
        return lead, trail
    lead = 0
    while overlap_violation(order, lead) is not None:
        lead -= align
    trail = 0
    while overlap_violation(order, trail) is not None:
        trail += align
    return lead, trail


# --- loop orders of the kernels ---------------------------------------------------------


def _p(call: KernelCall, name: str) -> int:
    return int(call.param(name))


def _last_reader_pixel(call: KernelCall) -> np.ndarray:
    """[batches * in_h * in_w]: the last output pixel (flat b, y, x order) whose window reads
    each input pixel, -1 for none (taps in the padding are not reads)."""
    b, ih, iw = _p(call, "batches"), _p(call, "in_h"), _p(call, "in_w")
    oh, ow = _p(call, "out_h"), _p(call, "out_w")
    fh, fw = _p(call, "filter_h"), _p(call, "filter_w")
    sh, sw = _p(call, "stride_h"), _p(call, "stride_w")
    dh, dw = _p(call, "dilation_h"), _p(call, "dilation_w")
    ph, pw = _p(call, "pad_h"), _p(call, "pad_w")
    last = np.full(b * ih * iw, -1, dtype=np.int64)
    bb, oy, ox = np.meshgrid(np.arange(b), np.arange(oh), np.arange(ow), indexing="ij")
    pix = (bb * oh + oy) * ow + ox
    for ky in range(fh):
        iy = oy * sh - ph + ky * dh
        for kx in range(fw):
            ix = ox * sw - pw + kx * dw
            ok = (iy >= 0) & (iy < ih) & (ix >= 0) & (ix < iw)
            np.maximum.at(last, ((bb * ih + iy) * iw + ix)[ok], pix[ok])
    return last


def _combine(call: KernelCall, in_c: int, out_c: int,
             read_step: Callable[[np.ndarray, np.ndarray], np.ndarray],
             write: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> AccessOrder:
    """Build an order from per-(pixel, channel) rules: ``read_step(last_pixel, channel)`` is
    the last step reading input channel ``channel`` of a pixel whose last reader is
    ``last_pixel`` (>= 0), ``write(pixel, channel)`` the step writing an output element."""
    last_pix = _last_reader_pixel(call)
    ci = np.arange(in_c)
    lp = np.repeat(last_pix, in_c)
    cc = np.tile(ci, last_pix.size)
    last_read = np.where(lp >= 0, read_step(np.maximum(lp, 0), cc), -1)
    n_out_pix = _p(call, "batches") * _p(call, "out_h") * _p(call, "out_w")
    op = np.repeat(np.arange(n_out_pix), out_c)
    oc = np.tile(np.arange(out_c), n_out_pix)
    return AccessOrder(last_read.astype(np.int64), write(op, oc).astype(np.int64))


def dwconv_ref_order(call: KernelCall) -> AccessOrder:
    """td_dwconv2d_s8_ref: one step per output element in NHWC order (pixel, then input
    channel i, then multiplier m: channel o = i * dm + m); input channel i of a pixel is last
    read by its last reader pixel's channel i * dm + dm - 1."""
    in_c, out_c, dm = _p(call, "in_c"), _p(call, "out_c"), _p(call, "depth_multiplier")
    return _combine(call, in_c, out_c, lambda lp, c: lp * out_c + c * dm + dm - 1,
                    lambda px, o: px * out_c + o)


def dwconv_lanes_order(lanes: int) -> Callable[[KernelCall], AccessOrder]:
    """The 3x3 DSP (unrolled and wide) and MVE depthwise kernels (depth multiplier 1): one
    step per (pixel, group of ``lanes`` channels): the nine taps of the group are read, then
    its outputs are written."""
    def order(call: KernelCall) -> AccessOrder:
        c = _p(call, "in_c")
        groups = -(-c // lanes)
        return _combine(call, c, c, lambda lp, ch: lp * groups + ch // lanes,
                        lambda px, o: px * groups + o // lanes)
    return order


DW3L_LINE = 64   # twin of TD_DW3L_LINE (td_dwconv2d_3x3_lines_s8_dsp.c): int16 per line


def dw3l_lines(call: KernelCall) -> tuple[bool, int, int]:
    """td_dwconv2d_3x3_lines_s8_dsp's geometry: (along the rows?, outputs per line, int16
    values widened per line). The lines run along the output's longer side (rows on a tie)."""
    rows = _p(call, "out_w") >= _p(call, "out_h")
    out_a, s_a = ((_p(call, "out_w"), _p(call, "stride_w")) if rows
                  else (_p(call, "out_h"), _p(call, "stride_h")))
    return rows, out_a, ((out_a - 1) * s_a + 5) & ~1


def dwconv_lines_order(call: KernelCall) -> AccessOrder:
    """td_dwconv2d_3x3_lines_s8_dsp: one step per (batch, channel, output line); input line
    u of a channel is read (widened: along positions below ``width - pad``) at the first
    output line whose window [j * s - pad, j * s - pad + 3) reaches it, and never again; the
    line's outputs of that channel are written at its step."""
    b, ih, iw, c = (_p(call, k) for k in ("batches", "in_h", "in_w", "in_c"))
    oh, ow = _p(call, "out_h"), _p(call, "out_w")
    rows, _, width = dw3l_lines(call)
    if rows:
        n_x, pad_x, s_x, out_x, n_a, pad_a = ih, _p(call, "pad_h"), _p(call, "stride_h"), oh, \
            iw, _p(call, "pad_w")
    else:
        n_x, pad_x, s_x, out_x, n_a, pad_a = iw, _p(call, "pad_w"), _p(call, "stride_w"), ow, \
            ih, _p(call, "pad_h")
    first = np.full(n_x, -1, dtype=np.int64)     # the output line that widens input line u
    nxt = -pad_x
    for j in range(out_x):
        u0 = j * s_x - pad_x
        nxt = max(nxt, u0)
        for u in range(nxt, u0 + 3):
            if 0 <= u < n_x:
                first[u] = j
        nxt = u0 + 3
    bb = np.arange(b)[:, None, None, None]
    cc = np.arange(c)[None, None, None, :]
    yy = np.arange(ih)[None, :, None, None]
    xx = np.arange(iw)[None, None, :, None]
    across, along = (yy, xx) if rows else (xx, yy)
    line = first[across]
    read = (line >= 0) & (along < min(n_a, width - pad_a))
    last_read = np.where(read, (bb * c + cc) * out_x + line, -1)
    oy = np.arange(oh)[None, :, None, None]
    ox = np.arange(ow)[None, None, :, None]
    write = (bb * c + cc) * out_x + (oy if rows else ox)
    return AccessOrder(np.broadcast_to(last_read, (b, ih, iw, c)).reshape(-1).astype(np.int64),
                       np.broadcast_to(write, (b, oh, ow, c)).reshape(-1).astype(np.int64))


def conv_ref_order(call: KernelCall) -> AccessOrder:
    """td_conv2d_s8_ref: one step per output element in NHWC order; the window's channels of
    group g are read for every output channel of that group, so input channel i of a pixel is
    last read by its last reader pixel's last output channel of i's group."""
    in_c, out_c, fc = _p(call, "in_c"), _p(call, "out_c"), _p(call, "filter_c")
    per_group = out_c // (in_c // fc)
    return _combine(call, in_c, out_c,
                    lambda lp, c: lp * out_c + (c // fc + 1) * per_group - 1,
                    lambda px, o: px * out_c + o)


def conv_rows_order(rows: int) -> Callable[[KernelCall], AccessOrder]:
    """td_conv2d_1x1_s8_dsp and td_conv2d_s8_dsp (also for a one-channel depthwise): one
    step per group of ``rows`` output pixels (flat order): the group's input windows are
    widened into scratch, then its output pixels are written."""
    def order(call: KernelCall) -> AccessOrder:
        in_c, out_c = _p(call, "in_c"), _p(call, "out_c")
        return _combine(call, in_c, out_c, lambda lp, c: lp // rows, lambda px, o: px // rows)
    return order


def conv_rows_back_order(rows: int) -> Callable[[KernelCall], AccessOrder]:
    """td_conv2d_1x1_back_s8_dsp: groups of ``rows`` output pixels taken from the last pixel
    to the first (the group of the last ``rows`` pixels first, a partial group of the first
    pixels last), so output pixel ``px`` of ``n`` is written, and its input pixel read, at
    step (n - 1 - px) // rows."""
    def order(call: KernelCall) -> AccessOrder:
        in_c, out_c = _p(call, "in_c"), _p(call, "out_c")
        n = _p(call, "batches") * _p(call, "out_h") * _p(call, "out_w")

        def step(px: np.ndarray) -> np.ndarray:
            return (n - 1 - px) // rows
        return _combine(call, in_c, out_c, lambda lp, c: step(lp), lambda px, o: step(px))
    return order


C1_ROWS = 12   # twin of TD_C1_ROWS (td_conv2d_c1_s8_dsp.c): kernel rows gathered at a time


def _c1_row_ranges(call: KernelCall) -> tuple[np.ndarray, np.ndarray]:
    """Per output pixel (flat order) the kernel rows [k0, k1) inside the image, as
    td_tap_range gives them (k1 == k0 when none)."""
    b, oh, ow = _p(call, "batches"), _p(call, "out_h"), _p(call, "out_w")
    fh, dh, sh = _p(call, "filter_h"), _p(call, "dilation_h"), _p(call, "stride_h")
    iy0 = np.arange(oh) * sh - _p(call, "pad_h")
    k0 = np.clip(-(iy0 // dh), 0, fh)            # ceil(-iy0 / dh), at least 0
    k1 = np.clip((_p(call, "in_h") - 1 - iy0) // dh + 1, 0, fh)
    k1 = np.maximum(k1, k0)
    per_pixel = np.repeat(np.arange(oh), ow)
    return np.tile(k0[per_pixel], b), np.tile(k1[per_pixel], b)


def conv_c1_order(lanes: int) -> Callable[[KernelCall], AccessOrder]:
    """td_conv2d_c1_s8_dsp: output pixels in pairs (2j, 2j + 1) of flat order, a pair whose
    pixels see different kernel rows one pixel after the other; per pair (or single pixel) one
    sub-step per group of ``lanes`` output channels and one for an odd rest. With at most
    C1_ROWS kernel rows the pair's windows are all read (gathered) before its first output;
    taller kernels gather again for every group, so the windows are last read at the pair's
    last sub-step."""
    def order(call: KernelCall) -> AccessOrder:
        in_c, out_c = _p(call, "in_c"), _p(call, "out_c")
        k0, k1 = _c1_row_ranges(call)
        n = k0.size
        px = np.arange(n)
        mate = np.minimum(px ^ 1, n - 1)
        matched = (k0 == k0[mate]) & (k1 == k1[mate])
        step = np.where(matched, px & ~1, px)
        groups = -(-out_c // lanes)
        last = 0 if _p(call, "filter_h") <= C1_ROWS else groups - 1
        return _combine(call, in_c, out_c, lambda lp, c: step[lp] * groups + last,
                        lambda p, o: step[p] * groups + o // lanes)
    return order


def conv_1x1_back_ref_order(call: KernelCall) -> AccessOrder:
    """td_conv2d_1x1_back_s8_ref: one step per output element, pixels from the last to the
    first, channels in order; each step reads the whole input pixel, so an input pixel's
    last read is its output pixel's last channel."""
    in_c, out_c = _p(call, "in_c"), _p(call, "out_c")
    n = _p(call, "batches") * _p(call, "out_h") * _p(call, "out_w")
    return _combine(call, in_c, out_c, lambda lp, c: (n - 1 - lp) * out_c + out_c - 1,
                    lambda px, o: (n - 1 - px) * out_c + o)


def conv_1x1_lanes_order(lanes: int) -> Callable[[KernelCall], AccessOrder]:
    """td_conv2d_1x1_s8_mve: one step per (pixel, group of ``lanes`` output channels); each
    step reads the whole input pixel, so its last read is at the pixel's last group."""
    def order(call: KernelCall) -> AccessOrder:
        in_c, out_c = _p(call, "in_c"), _p(call, "out_c")
        groups = -(-out_c // lanes)
        return _combine(call, in_c, out_c, lambda lp, c: lp * groups + groups - 1,
                        lambda px, o: px * groups + o // lanes)
    return order


def conv_1x1_lanes_back_order(lanes: int) -> Callable[[KernelCall], AccessOrder]:
    """td_conv2d_1x1_back_s8_mve: `conv_1x1_lanes_order` with the output pixels taken from
    the last to the first (``n`` pixels: pixel ``px`` is step block ``n - 1 - px``; within a
    pixel the groups of ``lanes`` output channels go in order, each reading the whole input
    pixel)."""
    def order(call: KernelCall) -> AccessOrder:
        in_c, out_c = _p(call, "in_c"), _p(call, "out_c")
        groups = -(-out_c // lanes)
        n = _p(call, "batches") * _p(call, "out_h") * _p(call, "out_w")
        return _combine(call, in_c, out_c, lambda lp, c: (n - 1 - lp) * groups + groups - 1,
                        lambda px, o: (n - 1 - px) * groups + o // lanes)
    return order


def elementwise_order(n: int) -> AccessOrder:
    """Elementwise kernels (ADD, MUL, lookup tables): element i is read, then written."""
    steps = np.arange(n, dtype=np.int64)
    return AccessOrder(steps, steps.copy())
