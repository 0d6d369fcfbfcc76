"""A keyword model's outputs for every 20 ms window of a long stream, computed once, and the
streaming detector replayed on them: what `validate.py` and `curve.py` use to try a whole
grid of detector settings on hours of audio.

`fast_posteriors` runs the INT8 model with TF Lite's builtin kernels (checked against
tflite-micro on the first windows); `moving_average` and `fast_detect` are the device's
detector (`tinydeploy.kws.stream.Detector`) over precomputed outputs. A chosen setting is
always re-run exactly with the host twin (`tinydeploy.kws.stream.simulate_stream`).
"""

from __future__ import annotations

import numpy as np

from tinydeploy.frontend.config import FrontendConfig
from tinydeploy.kws.stream import Detection, DetectorConfig

CHECKED: dict[str, int] = {"windows": 0, "differ": 0, "max_lsb": 0}


def fast_posteriors(audio: np.ndarray, model: bytes, fcfg: FrontendConfig,
                    check: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """`stream_posteriors` (every 20 ms window), with TensorFlow Lite's builtin kernels
    (no delegate) instead of the tflite-micro interpreter: ~20x faster here, but not
    bit-exact (its optimised kernels round differently). The first ``check`` windows are
    compared with tflite-micro; the count of differing windows and the largest difference
    (in output steps of 1/256) go into `CHECKED` and the report. Only grid searches use
    these; a chosen setting is re-run with the exact twin."""
    from tflite_micro.python.tflite_micro import runtime

    from tinydeploy.frontend.native import HostFrontend
    from tinydeploy.kws.stream import stream_features
    from tinydeploy.model.loader import load_tflite
    from tinydeploy.train.kws import input_quant_of
    from tinydeploy.train.teacher import tflite_posteriors

    quant = load_tflite(model).outputs[0].quant
    assert quant is not None, "an INT8 model's output is quantized"
    scale, zp = float(quant.scale[0]), int(quant.zero_point[0])
    feats = stream_features(audio, HostFrontend(fcfg), input_quant_of(model))
    ends = np.arange(fcfg.frames, feats.shape[0] + 1)
    windows = [feats[f - fcfg.frames:f] for f in ends]      # views: no copy of the stream
    probs = tflite_posteriors(model, windows)
    micro = runtime.Interpreter.from_bytes(model)
    for j in range(min(check, len(windows))):
        micro.set_input(windows[j][None, :, :, None], 0)
        micro.invoke()
        ref = micro.get_output(0).reshape(-1).astype(np.int32) - zp
        lsb = np.abs(ref - np.round(probs[j] / scale).astype(np.int32))
        CHECKED["windows"] += 1
        if lsb.any():
            CHECKED["differ"] += 1
            CHECKED["max_lsb"] = max(CHECKED["max_lsb"], int(lsb.max()))
    times = ((ends - 1) * fcfg.stride + fcfg.window) // (fcfg.sample_rate // 1000)
    return probs, times.astype(np.int64)


def moving_average(probs: np.ndarray, w: int) -> np.ndarray:
    """The detector's average of the last ``w`` windows (rows before the ``w``-th are
    partial averages, as on the device)."""
    c = np.cumsum(probs.astype(np.float64), axis=0)
    out = np.empty_like(c)
    out[:w] = c[:w] / np.arange(1, w + 1)[:, None]
    out[w:] = (c[w:] - c[:-w]) / w
    return out


def fast_detect(avg: np.ndarray, times: np.ndarray, w: int, cfg: DetectorConfig
                ) -> list[Detection]:
    """The detector's decisions (`tinydeploy.kws.stream.Detector`) replayed on precomputed
    averages: only windows whose best keyword reaches the threshold are visited. Float64
    averages instead of the device's float32 sums, so a window exactly at the threshold may
    differ; the chosen setting is re-checked with the exact twin."""
    k0 = cfg.first_keyword
    thr = cfg.thresholds(avg.shape[1]).astype(np.float64)
    best = k0 + np.argmax(avg[:, k0:], axis=1)
    score = avg[np.arange(len(avg)), best]
    cand = np.nonzero((score >= thr[best]) & (np.arange(len(avg)) >= w - 1))[0]
    out: list[Detection] = []
    last_i: int | None = None
    last_t = last_l = 0
    for j in cand:
        if last_i is not None:
            released = bool((avg[last_i + 1:j + 1, last_l] < 0.5 * thr[last_l]).any())
            if (int(times[j]) - last_t) < cfg.suppress_ms or (best[j] == last_l
                                                              and not released):
                continue
        last_i, last_t, last_l = int(j), int(times[j]), int(best[j])
        out.append(Detection(last_l, float(score[j]), last_t))
    return out
