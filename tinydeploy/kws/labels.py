"""Label names of a keyword model: one per line, in the model's output order.

A user's model comes with its own label order (MLPerf Tiny's puts "Silence" and "Unknown"
last, this project's puts them first), so names are data, never assumed. The file must have
exactly as many names as the model has outputs: a wrong count would silently shift every name.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tinydeploy.errors import InputDataError

# The committed model's labels, in its output order: Speech Commands' ten keywords after the
# two filler classes.
KEYWORDS: tuple[str, ...] = ("yes", "no", "up", "down", "left", "right", "on", "off",
                             "stop", "go")
SILENCE, UNKNOWN = "_silence_", "_unknown_"
LABELS: tuple[str, ...] = (SILENCE, UNKNOWN, *KEYWORDS)

# Names that mean "no keyword" (compared case-insensitively, surrounding underscores ignored).
FILLER_NAMES = ("silence", "unknown", "background", "noise")


def is_filler(name: str) -> bool:
    return name.strip("_").lower() in FILLER_NAMES


def read_labels(path: Path) -> list[str]:
    """Non-empty lines, stripped; an InputDataError for an unreadable file or duplicates."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise InputDataError(f"{path}: cannot read labels ({err})",
                             hint="--labels takes a text file, one label per line") from err
    names = [line.strip() for line in text.splitlines() if line.strip()]
    if not names:
        raise InputDataError(f"{path}: no labels in the file",
                             hint="one label per line, in the model's output order")
    seen: dict[str, int] = {}
    for i, n in enumerate(names):
        if n in seen:
            raise InputDataError(f"{path}: label '{n}' appears on lines {seen[n] + 1} and "
                                 f"{i + 1}")
        seen[n] = i
    return names


def model_output_count(model: Path | bytes) -> int:
    from tinydeploy.model.loader import load_tflite

    g = load_tflite(model)
    return int(np.prod(g.outputs[0].shape))


def load_labels(model: Path, labels: Path | None = None) -> list[str]:
    """``labels`` (else ``labels.txt`` beside the model, else the project's 12 labels),
    checked against the number of model outputs."""
    path = labels if labels is not None else Path(model).with_name("labels.txt")
    if labels is None and not path.exists():
        names = list(LABELS)
        source = "the default labels"
    else:
        names = read_labels(path)
        source = str(path)
    if Path(model).exists():
        n = model_output_count(Path(model))
        if n != len(names):
            raise InputDataError(
                f"{source}: {len(names)} labels but {model} has {n} outputs",
                hint="--labels FILE: one label per line, exactly one per model output, in the "
                     "model's output order")
    return names


def keyword_range(names: list[str]) -> tuple[int, int]:
    """[first, end) of the keyword labels: every label that is not a filler (silence,
    unknown, ...); the detector needs them contiguous (fillers first or last)."""
    kw = [i for i, n in enumerate(names) if not is_filler(n)]
    if not kw:
        raise InputDataError(f"labels {', '.join(names)}: no keyword among them",
                             hint="silence/unknown/background/noise are not keywords")
    first, end = kw[0], kw[-1] + 1
    if len(kw) != end - first:
        raise InputDataError(f"labels {', '.join(names)}: the keywords are not contiguous "
                             f"(fillers at {[i for i in range(first, end) if i not in kw]})",
                             hint="the detector takes labels [first, end) as keywords: order "
                                  "the filler labels first or last")
    return first, end
