"""The kws app on an emulated Cortex-M4F (QEMU mps2-an386) and as a sanitized host process:
streamed audio gives exactly the detections of the host simulation (same front-end bytes,
same model bytes, same detector decisions), and per-window counts are reported."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tinydeploy.boards import get_board
from tinydeploy.flash.runner import Firmware
from tinydeploy.frontend.config import FrontendConfig
from tinydeploy.kws.device import build_kws_firmware
from tinydeploy.kws.stream import DetectorConfig, build_stream, simulate_stream, stream_to_device
from tinydeploy.link.connect import connect
from tinydeploy.resources import models_dir
from tinydeploy.train.data import (
    LABELS,
    Split,
    SynthConfig,
    _clip_job,
    split_speakers,
    synthetic_speakers,
)

pytestmark = pytest.mark.target

MODELS = models_dir() / "kws"


def _stream_audio() -> tuple[np.ndarray, list[int]]:
    speakers = split_speakers(synthetic_speakers(), SynthConfig())[Split.TEST]
    cfg = SynthConfig(seed=31337, clean_fraction=1.0)
    words = ["yes", "_unknown_", "stop", "left"]
    clips = [_clip_job((cfg, LABELS.index(w), i, speakers))[0] for i, w in enumerate(words)]
    labels = [LABELS.index(w) for w in words]
    s = build_stream(np.stack(clips), np.asarray(labels), seed=2, gap_s=(0.3, 0.6))
    return s.audio, labels


@pytest.mark.parametrize("board_id, infer_every", [
    ("mps2-an386", 3),      # Cortex-M4F on QEMU
    ("host", 1),            # the same C as a host process, with ASan and UBSan
])
def test_device_detections_equal_host_simulation(tmp_path: Path, board_id: str,
                                                 infer_every: int) -> None:
    model = MODELS / "dscnn_int8.tflite"
    fcfg = FrontendConfig.load(MODELS / "frontend.json")
    det = DetectorConfig(infer_every=infer_every, avg_windows=3, threshold=0.5)
    audio, _ = _stream_audio()
    expected = simulate_stream(audio, model.read_bytes(), fcfg, det)
    board = get_board(board_id)
    build_kws_firmware(model, board, tmp_path / "fw", det, fcfg, sanitize=board_id == "host")
    with connect(Firmware.from_build_dir(tmp_path / "fw"), timeout=600) as conn:
        assert conn.info.info.app == "kws"
        res = stream_to_device(conn.session, audio)
    got = [(d.label, d.time_ms, np.float32(d.score)) for d in res.detections]
    want = [(d.label, d.time_ms, np.float32(d.score)) for d in expected]
    assert got == want
    assert len(want) >= 2          # the stream's keywords are found at all
    frames = 1 + (audio.size - fcfg.window) // fcfg.stride
    assert res.windows == (frames - fcfg.frames) // det.infer_every + 1
    assert 0 < res.per_window_min <= res.per_window_mean <= res.per_window_max
    assert res.frontend_total > 0 and res.model_total > res.frontend_total
