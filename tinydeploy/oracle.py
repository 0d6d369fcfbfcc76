"""The numeric oracle: TensorFlow Lite Micro's reference kernels via the tflite-micro
Python interpreter.

Every kernel test compares tinydeploy's bytes with this function's bytes (DESIGN invariant
1). tflite-micro is imported lazily so that the rest of tinydeploy works without it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tinydeploy.errors import ToolchainError


class Oracle:
    """One tflite-micro interpreter kept across invocations: state tensors (SVDF, LSTM) carry
    over from one call to the next, as they do on the device, and the model is parsed once."""

    def __init__(self, model_bytes: bytes) -> None:
        try:
            from tflite_micro.python.tflite_micro import runtime
        except ImportError as e:
            raise ToolchainError("the reference interpreter (tflite-micro) is not installed",
                                 hint="pip install tflite-micro (a dependency of tinydeploy: "
                                      "reinstall tinydeploy with its dependencies)") from e
        from tinydeploy.model.loader import load_tflite

        graph = load_tflite(bytes(model_bytes))
        self.num_outputs = len(graph.outputs)
        # every non-constant tensor live at once, twice over, plus the interpreter's own
        # records: generous, but the default arena is too small for large tensors
        arena = 2 * sum(t.nbytes for t in graph.tensors if not t.is_constant) + (256 << 10)
        try:
            self.interp = runtime.Interpreter.from_bytes(bytes(model_bytes), arena_size=arena)
        except Exception as e:  # the interpreter raises RuntimeError/ValueError with its log
            raise ToolchainError(f"tflite-micro rejected the model: {e}".strip()) from e

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        for i, arr in enumerate(inputs):
            self.interp.set_input(np.ascontiguousarray(arr), i)
        try:
            self.interp.invoke()
        except Exception as e:
            raise ToolchainError(f"tflite-micro failed to invoke the model: {e}".strip()) from e
        return [np.array(self.interp.get_output(i), copy=True)
                for i in range(self.num_outputs)]


def run_oracle(model_bytes: bytes, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run ``model_bytes`` once, from a fresh interpreter, on ``inputs`` (one array per graph
    input, in order, already of the input tensors' dtype and shape) and return copies of all
    graph outputs."""
    return Oracle(model_bytes).run(inputs)
