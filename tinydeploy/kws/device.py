"""Build the ``kws`` application for a model: the front end the model was trained with (a
preset and its config, `tinydeploy.frontend.presets`; ``frontend.json`` beside the model unless
chosen) and the detector settings become generated headers (``td_frontend_config_model.h``,
``td_kws_config.h``) that take precedence over the committed defaults (see
firmware/frontend/td_frontend.h and firmware/app/kws/main.c); only that preset's C sources
are copied into the project."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tinydeploy.boards import Board
from tinydeploy.build.firmware import BuildResult, build_firmware
from tinydeploy.frontend.presets import FrontendChoice, choice_of, resolve_frontend
from tinydeploy.kws.stream import DetectorConfig


def frontend_for(model: Path, override: str | Path | None = None) -> FrontendChoice:
    """The front end of ``model``: ``override`` (a preset name or a JSON file), else
    ``frontend.json`` next to it."""
    return resolve_frontend(override, Path(model))


def frontend_config_for(model: Path, override: str | Path | None = None) -> Any:
    """The front-end config alone (any preset's config type)."""
    return frontend_for(model, override).config


def _choice(fcfg: Any) -> FrontendChoice:
    return fcfg if isinstance(fcfg, FrontendChoice) else choice_of(fcfg)


def render_kws_header(cfg: DetectorConfig) -> str:
    return "\n".join([
        "#ifndef TD_KWS_CONFIG_H",
        "#define TD_KWS_CONFIG_H",
        f"#define TD_KWS_INFER_EVERY {cfg.infer_every}u",
        f"#define TD_KWS_AVG_WINDOWS {cfg.avg_windows}u",
        f"#define TD_KWS_THRESHOLD {float(cfg.threshold).hex()}f",
        f"#define TD_KWS_SUPPRESS_MS {cfg.suppress_ms}u",
        f"#define TD_KWS_FIRST_KEYWORD {cfg.first_keyword}u",
        f"#define TD_KWS_KEYWORD_END {cfg.keyword_end}u",
        "#endif",
        "",
    ])


def kws_headers(model: Path, det: DetectorConfig | None = None,
                fcfg: Any = None) -> dict[str, str]:
    """The generated headers of the kws app for ``model`` (default detector settings and the
    model's own front end unless given; ``fcfg`` is a `FrontendChoice` or a config)."""
    choice = _choice(fcfg) if fcfg is not None else frontend_for(Path(model))
    return {"td_frontend_config_model.h": choice.spec.render_header(choice.config),
            "td_kws_config.h": render_kws_header(det or DetectorConfig())}


def kws_part_files(fcfg: Any) -> dict[str, tuple[str, ...]]:
    """The files of firmware/frontend/ the chosen preset needs (nothing else is copied)."""
    return {"frontend": _choice(fcfg).spec.files}


def build_kws_firmware(model: Path, board: Board, out_dir: Path, det: DetectorConfig,
                       fcfg: Any, *, emulate: bool = False,
                       sanitize: bool = False, chip: bool = False) -> BuildResult:
    """``fcfg``: a `FrontendChoice` or any preset's config. ``sanitize``: address and
    undefined-behaviour sanitizers (host board only). ``chip``: for the real chip, not the
    emulator (`build_firmware`)."""
    choice = _choice(fcfg)
    return build_firmware(Path(model), board, "kws", out_dir, emulate=emulate,
                          sanitize=sanitize, chip=chip,
                          generated_headers=kws_headers(model, det, choice),
                          part_files=kws_part_files(choice))
