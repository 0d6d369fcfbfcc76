"""TensorFlow's environment, set before its lazy import: no start-up chatter on the output of
a command that only borrows one of its ops."""

from __future__ import annotations

import os


def quiet_tensorflow() -> None:
    """Errors only (TF_CPP_MIN_LOG_LEVEL=3), and TensorFlow's own float kernels instead of
    oneDNN's (TF_ENABLE_ONEDNN_OPTS=0), whose start-up notice ignores the log level and whose
    results may differ in the last bits with the order of computation: a reference should
    not. A value the user set is kept."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
