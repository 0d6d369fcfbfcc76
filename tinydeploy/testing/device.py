"""Build a model's validate app for an emulated board, run it and compare ``cases`` random
inputs with the tflite-micro oracle over the serial protocol: the one on-device
bit-exactness check that op, quantizer and import tests share."""

from __future__ import annotations

from pathlib import Path

from tinydeploy.boards import get_board
from tinydeploy.build.firmware import build_firmware
from tinydeploy.flash.runner import Firmware
from tinydeploy.link.connect import connect
from tinydeploy.link.validate import ValidationReport, random_inputs, validate_cases
from tinydeploy.model.loader import load_tflite


def validate_on_board(model: Path, board_id: str, out: Path, cases: int, seed: int
                      ) -> ValidationReport:
    """The report of ``cases`` random inputs (``seed``) of ``model``, built into ``out`` for
    ``board_id``, each invocation in a row on one device (state carries over)."""
    graph = load_tflite(model)
    build_firmware(model, get_board(board_id), "validate", out, graph=graph)
    with connect(Firmware.from_build_dir(out), timeout=120) as conn:
        return validate_cases(conn.session.run, model.read_bytes(),
                              random_inputs(graph, cases, seed=seed))
