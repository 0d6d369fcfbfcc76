"""Render examples/kws/demo.wav: four keywords and one unknown word spoken by synthetic
speakers that the committed model never heard in training, with noise gaps, and print
where each word lies. Reproducible (fixed seeds; needs espeak-ng).

    .venv/bin/python examples/kws/make_demo_audio.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tinydeploy.kws.stream import build_stream
from tinydeploy.kws.wav import write_wav
from tinydeploy.train.data import (
    LABELS,
    Split,
    SynthConfig,
    _clip_job,
    split_speakers,
    synthetic_speakers,
)

WORDS = ("yes", "_unknown_", "stop", "left", "go")
HERE = Path(__file__).resolve().parent


def main() -> int:
    speakers = split_speakers(synthetic_speakers(), SynthConfig())[Split.TEST]
    cfg = SynthConfig(seed=20261129, clean_fraction=1.0, peak_dbfs=(-12.0, -3.0))
    clips = [_clip_job((cfg, LABELS.index(w), i, speakers))[0] for i, w in enumerate(WORDS)]
    s = build_stream(np.stack(clips), np.asarray([LABELS.index(w) for w in WORDS]), seed=1,
                     gap_s=(0.3, 0.8))
    write_wav(HERE / "demo.wav", s.audio)
    print(f"{HERE / 'demo.wav'}: {s.audio.size / 16000:.2f} s")
    for w in s.words:
        print(f"  {LABELS[w.label]:6s} {w.start_ms:6d} .. {w.end_ms:6d} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
