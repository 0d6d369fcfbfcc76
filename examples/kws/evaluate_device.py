"""Accuracy of the committed keyword spotter on the device, beside the host's INT8 figure.

Renders fresh clips of speakers the model never heard (the test split), makes features with
the C front end on the host, runs every clip through the firmware on a board (default: the
nRF52840 build emulated on its Cortex-M4) over the serial link, and through the tflite-micro
interpreter, and prints both accuracies and how many outputs agree byte for byte.

    .venv/bin/python examples/kws/evaluate_device.py --per-class 25
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from tinydeploy.boards import get_board
from tinydeploy.build.firmware import build_firmware
from tinydeploy.flash.runner import Firmware
from tinydeploy.frontend.config import FrontendConfig
from tinydeploy.frontend.native import HostFrontend
from tinydeploy.link.connect import connect
from tinydeploy.oracle import Oracle
from tinydeploy.train.data import render_unseen_clips
from tinydeploy.train.kws import input_quant_of

ROOT = Path(__file__).resolve().parent.parent.parent
MODEL = ROOT / "models" / "kws" / "dscnn_int8.tflite"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-class", type=int, default=25)
    ap.add_argument("--seed", type=int, default=777, help="render seed (not the training one)")
    ap.add_argument("--board", default="nrf52840")
    args = ap.parse_args()

    audio, y = render_unseen_clips(args.per_class, args.seed)
    model = MODEL.read_bytes()
    fe = HostFrontend(FrontendConfig.load(MODEL.with_name("frontend.json")))
    quant = input_quant_of(model)
    feats = [f.reshape(1, 49, 10, 1) for f in fe.features_s8(audio, quant)]

    oracle = Oracle(model)
    host = np.asarray([oracle.run([f])[0].reshape(-1) for f in feats])

    board = get_board(args.board)
    out = ROOT / "build" / "kws-device-accuracy"
    build_firmware(MODEL, board, "validate", out, emulate=not board.emulated)
    t0 = time.monotonic()
    with connect(Firmware.from_build_dir(out), timeout=3600) as conn:
        dev = np.asarray([conn.session.run([f], profile=False)[0][0].reshape(-1)
                          for f in feats])
    secs = time.monotonic() - t0
    same = int(np.sum(np.all(dev == host, axis=1)))
    acc_host = float(np.mean(host.argmax(1) == y))
    acc_dev = float(np.mean(dev.argmax(1) == y))
    print(f"{len(y)} clips of unseen speakers ({args.per_class} per label), board "
          f"{board.id}{' (emulated)' if not board.emulated else ''}: {secs:.0f} s on the device")
    print("| | accuracy |\n|---|---:|")
    print(f"| INT8, tflite-micro on the host | {100 * acc_host:.2f} % |")
    print(f"| INT8, firmware on the device | {100 * acc_dev:.2f} % |")
    print(f"outputs identical byte for byte: {same} of {len(y)}")
    return 0 if same == len(y) else 1


if __name__ == "__main__":
    sys.exit(main())
