"""Runs onnx2tf in a process of its own (see `onnximport.convert_onnx` for why).

    python -m tinydeploy.quantize.onnx2tf_child MODEL.onnx OUT_DIR SAMPLE.npy NAME:D0,D1,...

Exit status: 0 converted, 3 onnx2tf cannot be imported, 2 onnx2tf gave up (its own
``sys.exit``), 1 it raised; its messages go to stderr. onnx2tf would download sample images
for a 3-channel input; it is given SAMPLE.npy (the user's calibration samples) instead, so the
conversion never touches the network.
"""

from __future__ import annotations

import contextlib
import sys
import traceback

import numpy as np


def main(argv: list[str]) -> int:
    model, out, sample_file, shape = argv
    try:
        import onnx2tf
        import onnx2tf.onnx2tf as o2t
    except Exception as e:  # noqa: BLE001 - a broken install raises anything at import
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        return 3
    sample = np.load(sample_file)
    o2t.download_test_image_data = lambda: sample
    try:
        with contextlib.redirect_stdout(sys.stderr):
            onnx2tf.convert(input_onnx_file_path=model, output_folder_path=out,
                            non_verbose=True, overwrite_input_shape=[shape])
    except SystemExit as e:
        print(f"onnx2tf exited with {e.code}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - the converter raises anything
        traceback.print_exception(e, limit=3, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
