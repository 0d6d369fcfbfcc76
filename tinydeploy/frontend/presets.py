"""Front-end presets: which feature pipeline a keyword model was trained with.

A keyword model is only as good as the match between the features it was trained on and the
features the device computes. Public models were trained with other people's pipelines, so the
front end is chosen per model, from a small closed set of presets:

- ``tinydeploy``: the project's own float32 MFCC / log-mel (``firmware/frontend/td_frontend.c``,
  config `tinydeploy.frontend.config.FrontendConfig`);
- ``mlperf-kws``: MLPerf Tiny's keyword-spotting MFCCs (``td_frontend_mlperf.c``);
- ``micro-speech``: TensorFlow's audio microfrontend as TFLM's micro_speech example uses it.

Each preset lives in its own module, which exposes ``PRESET_SPEC`` (a `PresetSpec`); this
registry imports it only when the preset is asked for, so a preset whose module is absent is
reported as such instead of breaking the others. Every preset implements the same C API
(``firmware/frontend/td_frontend.h``) in its own sources, so the kws app and the host library
never know which one they run.

Choosing a preset (``--frontend NAME|FILE.json``, see `resolve_frontend`): a preset name gives
that preset's defaults; a JSON file names its preset under ``"frontend"`` and carries that
preset's parameters; a file without the key is a ``tinydeploy`` config (so every existing
``frontend.json`` keeps working). Without ``--frontend``, ``frontend.json`` beside the model.

Invariants: every spec's ``sources`` are files under ``firmware/frontend/`` (the API header
``td_frontend.h`` is implied); its rendered config header defines every ``TD_FE_*`` macro the
API names, ``td_frontend_scratch_t`` and ``TD_FE_PRESET_<NAME>``; ``render_header`` of the same
config is byte-identical on every run.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, Protocol, Self

import numpy as np

from tinydeploy.errors import InputDataError

API_HEADER = "td_frontend.h"
PRESET_KEY = "frontend"


class FrontendPreset(StrEnum):
    TINYDEPLOY = "tinydeploy"
    MLPERF_KWS = "mlperf-kws"
    MICRO_SPEECH = "micro-speech"


def frame_count(samples: int, window: int, stride: int) -> int:
    """Whole frames of ``window`` samples, ``stride`` apart, in ``samples`` samples (0 when
    they do not hold one window): the framing of every preset, clip or stream."""
    return 0 if samples < window else 1 + (samples - window) // stride


@dataclass(frozen=True)
class PresetConfig(ABC):
    """The base of every preset's config: what the kws app, the simulation and the scorers
    read from any of them. Its two fields open every preset's field list (and so its JSON):
    the sample rate and the clip one model input covers. A preset gives its framing
    (``window``, ``stride``: fields, or derived from its own) and its features per frame;
    ``frames`` and ``shape`` follow from them alike for every preset. A bad value is an
    InputDataError (`error`) that names the preset (``ERROR_PREFIX``) and its docs
    (``ERROR_HINT``)."""

    ERROR_PREFIX: ClassVar[str] = "front-end config"
    ERROR_HINT: ClassVar[str] = "see docs/frontend.md"

    sample_rate: int = 16000
    clip_samples: int = 16000     # one model input covers this many samples (1 s)

    @property
    @abstractmethod
    def window(self) -> int:
        """Samples per frame."""

    @property
    @abstractmethod
    def stride(self) -> int:
        """Samples from the start of one frame to the next."""

    @property
    def frames(self) -> int:
        return frame_count(self.clip_samples, self.window, self.stride)

    @property
    @abstractmethod
    def n_out(self) -> int:
        """Features per frame."""

    @property
    def shape(self) -> tuple[int, int]:
        return (self.frames, self.n_out)

    @abstractmethod
    def to_json(self) -> str:
        """The config as the JSON a ``--frontend`` file holds."""

    @classmethod
    @abstractmethod
    def from_dict(cls, d: dict[str, Any], source: str) -> Self:
        """The config of a JSON object (the ``"frontend"`` key removed), or an
        InputDataError naming ``source``."""

    def error(self, msg: str, hint: str | None = None) -> InputDataError:
        """The error of a bad parameter value, ``msg`` naming it and its range (``hint``:
        what to change, else the preset's docs)."""
        return InputDataError(f"{self.ERROR_PREFIX}: {msg}", hint=hint or self.ERROR_HINT)


class HostFeatures(Protocol):
    """A preset's C front end on the host (the device's own code via ctypes)."""

    cfg: Any

    def features_s8(self, audio: np.ndarray, quant: Any) -> np.ndarray:
        """int8 features of whole clips [n, frames, n_out] (``td_frontend_clip_s8``)."""
        ...

    def stream_s8(self, audio: np.ndarray, quant: Any) -> np.ndarray:
        """int8 rows of every frame of a long stream, computed frame by frame in time order
        from a reset state (``td_frontend_frame_s8``), as the kws app does: [frames, n_out]."""
        ...


@dataclass(frozen=True)
class PresetSpec:
    """Everything tinydeploy needs to know about one preset.

    ``config`` is the preset's config class: its defaults are `default`, a JSON object (the
    ``"frontend"`` key removed) becomes a config through `from_dict`; ``host`` compiles and
    loads the C front end for a config; ``reference(audio, cfg, quant)`` is the independent
    reference of one int16 clip, int8 [frames, n_out] (the float values quantized as TFLite
    quantizes an input); ``sources`` are the C files under ``firmware/frontend/`` the
    firmware compiles; ``render_header`` gives the config header's text (written as
    ``td_frontend_config_model.h``)."""

    preset: FrontendPreset
    summary: str
    sources: tuple[str, ...]
    config: type[PresetConfig]
    host: Callable[[Any], HostFeatures]
    reference: Callable[[np.ndarray, Any, Any], np.ndarray]
    render_header: Callable[[Any], str]
    scratch_bytes: Callable[[Any], int]
    # float features of clips [n, clip_samples] -> [n, frames, n_out], the float model's input
    # (calibration); None when the preset has no float form
    float_features: Callable[[Any, np.ndarray], np.ndarray] | None = None

    def default(self) -> PresetConfig:
        return self.config()

    def from_dict(self, d: dict[str, Any], source: str) -> PresetConfig:
        return self.config.from_dict(d, source)

    @property
    def files(self) -> tuple[str, ...]:
        """The files of ``firmware/frontend/`` a firmware with this preset needs."""
        return tuple(sorted({API_HEADER, *self.sources}))


# Where each preset's PRESET_SPEC lives (imported on first use).
PRESET_MODULES: dict[FrontendPreset, str] = {
    FrontendPreset.TINYDEPLOY: "tinydeploy.frontend.native",
    FrontendPreset.MLPERF_KWS: "tinydeploy.frontend.mlperf",
    FrontendPreset.MICRO_SPEECH: "tinydeploy.frontend.micro",
}


def parse_preset(name: str) -> FrontendPreset:
    try:
        return FrontendPreset(name)
    except ValueError:
        raise InputDataError(f"unknown front-end preset '{name}'",
                             hint="presets: " + ", ".join(p.value for p in FrontendPreset)
                             + " (or a JSON file)") from None


def preset_spec(preset: FrontendPreset | str) -> PresetSpec:
    """The spec of ``preset``; an InputDataError when this installation lacks it."""
    p = parse_preset(str(preset))
    module = PRESET_MODULES[p]
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as err:
        if err.name != module:
            raise
        raise InputDataError(f"front-end preset '{p.value}' is not available in this "
                             f"installation ({module} is missing)",
                             hint="available: " + ", ".join(available_presets())) from None
    spec = getattr(mod, "PRESET_SPEC", None)
    if not isinstance(spec, PresetSpec) or spec.preset is not p:
        raise InputDataError(f"front-end preset '{p.value}': {module} defines no PRESET_SPEC "
                             f"for it")
    return spec


def available_presets() -> list[str]:
    """Presets whose module is present (sorted as declared)."""
    out = []
    for p, module in PRESET_MODULES.items():
        if importlib.util.find_spec(module) is not None:
            out.append(p.value)
    return out


@dataclass(frozen=True)
class FrontendChoice:
    """A preset and its config, and where the choice came from (for messages)."""

    preset: FrontendPreset
    config: Any
    source: str

    @property
    def spec(self) -> PresetSpec:
        return preset_spec(self.preset)


def load_frontend_json(text: str, source: str) -> FrontendChoice:
    """A front-end JSON document: ``"frontend"`` names the preset (absent: tinydeploy)."""
    try:
        d = json.loads(text)
    except ValueError as err:
        raise InputDataError(f"{source}: not JSON ({err})",
                             hint="a front-end file is a JSON object, see docs/frontend.md") \
            from err
    if not isinstance(d, dict):
        raise InputDataError(f"{source}: a front-end file is a JSON object, got "
                             f"{type(d).__name__}")
    name = d.pop(PRESET_KEY, FrontendPreset.TINYDEPLOY.value)
    if not isinstance(name, str):
        raise InputDataError(f"{source}: \"{PRESET_KEY}\" must be a preset name, got {name!r}")
    preset = parse_preset(name)
    return FrontendChoice(preset, preset_spec(preset).from_dict(d, source), source)


def load_frontend_file(path: Path) -> FrontendChoice:
    try:
        text = Path(path).read_text()
    except OSError as err:
        raise InputDataError(f"{path}: cannot read front-end config ({err.strerror})",
                             hint="--frontend takes a preset name ("
                                  + ", ".join(p.value for p in FrontendPreset)
                                  + ") or a JSON file") from err
    return load_frontend_json(text, str(path))


def resolve_frontend(spec: str | Path | None, model: Path | None = None) -> FrontendChoice:
    """``--frontend``: a preset name, a JSON file, or (None) ``frontend.json`` beside
    ``model``."""
    if spec is None:
        if model is None:
            return FrontendChoice(FrontendPreset.TINYDEPLOY,
                                  preset_spec(FrontendPreset.TINYDEPLOY).default(), "default")
        path = Path(model).with_name("frontend.json")
        if not path.exists():
            raise InputDataError(f"{model}: no front-end config at {path}",
                                 hint="pass --frontend NAME (" + ", ".join(
                                     p.value for p in FrontendPreset) + ") or --frontend "
                                 "FILE.json; models trained by tinydeploy keep frontend.json "
                                 "beside the .tflite")
        return load_frontend_file(path)
    text = str(spec)
    if text in {p.value for p in FrontendPreset}:
        preset = FrontendPreset(text)
        return FrontendChoice(preset, preset_spec(preset).default(), f"preset {text}")
    path = Path(text)
    if not path.exists() and path.suffix.lower() != ".json":
        parse_preset(text)          # raises: neither a preset nor a file
    return load_frontend_file(path)


def choice_of(config: Any) -> FrontendChoice:
    """The choice for a config object of any preset (its type says which)."""
    for p, module in PRESET_MODULES.items():
        mod = importlib.import_module(module) if importlib.util.find_spec(module) else None
        spec = getattr(mod, "PRESET_SPEC", None) if mod else None
        if spec is not None and isinstance(config, type(spec.default())):
            return FrontendChoice(p, config, "config")
    raise InputDataError(f"not a front-end config: {type(config).__name__}")


def check_model_input(choice: FrontendChoice, shape: tuple[int, ...], what: str) -> None:
    """The model's input must hold one clip's features: frames x n_out int8 values."""
    cfg = choice.config
    n = int(np.prod(shape)) if len(shape) else 0
    if n != cfg.frames * cfg.n_out:
        raise InputDataError(
            f"{what}: input {'x'.join(map(str, shape))} ({n} values) does not match the "
            f"'{choice.preset.value}' front end's {cfg.frames} x {cfg.n_out} = "
            f"{cfg.frames * cfg.n_out} features ({choice.source})",
            hint="pick the front end the model was trained with (--frontend NAME|FILE.json)")
