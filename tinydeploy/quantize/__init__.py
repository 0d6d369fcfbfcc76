"""The quantize stage: float Keras / SavedModel / `.tflite` + representative data -> a
full-INT8 `.tflite` that tinydeploy can compile, with the cost of quantization measured.

TensorFlow is imported lazily, inside this package only. The fixed-point helpers
(multiplier/shift) are `tinydeploy.fixedpoint`, below the kernels that use them; this stage
sits above the kernels because it checks a model against their table.
"""

from tinydeploy.quantize.calibration import CalibrationData, load_calibration, make_calibration
from tinydeploy.quantize.evaluate import LayerSQNR
from tinydeploy.quantize.opcheck import OpProblem, check_ops, find_problems
from tinydeploy.quantize.quantizer import quantize_model
from tinydeploy.quantize.report import ClassAccuracy, QuantizeReport, TensorInfo
from tinydeploy.quantize.tfconvert import SourceKind

__all__ = [
    "CalibrationData", "ClassAccuracy", "LayerSQNR", "OpProblem", "QuantizeReport",
    "SourceKind", "TensorInfo", "check_ops", "find_problems", "load_calibration",
    "make_calibration", "quantize_model",
]
