"""Build the ``kws`` application for a model: the front-end config the model was trained with
(``frontend.json`` beside the model) and the detector settings become generated headers
(``td_frontend_config_model.h``, ``td_kws_config.h``) that take precedence over the
committed defaults (see firmware/frontend/td_frontend.h and firmware/app/kws/main.c)."""

from __future__ import annotations

from pathlib import Path

from tinydeploy.boards import Board
from tinydeploy.build.firmware import BuildResult, build_firmware
from tinydeploy.errors import InputDataError
from tinydeploy.kws.frontend_config import FrontendConfig, render_frontend_header
from tinydeploy.kws.stream import DetectorConfig


def frontend_config_for(model: Path, override: Path | None = None) -> FrontendConfig:
    """The front-end config of ``model``: ``override``, else ``frontend.json`` next to it."""
    path = override or Path(model).with_name("frontend.json")
    if not path.exists():
        raise InputDataError(f"{model}: no front-end config at {path}",
                             hint="models trained by tinydeploy keep frontend.json beside the "
                                  ".tflite: copy it there (tinydeploy kws stream/score also "
                                  "take --frontend CONFIG.json)")
    return FrontendConfig.load(path)


def render_kws_header(cfg: DetectorConfig) -> str:
    return "\n".join([
        "#ifndef TD_KWS_CONFIG_H",
        "#define TD_KWS_CONFIG_H",
        f"#define TD_KWS_INFER_EVERY {cfg.infer_every}u",
        f"#define TD_KWS_AVG_WINDOWS {cfg.avg_windows}u",
        f"#define TD_KWS_THRESHOLD {float(cfg.threshold).hex()}f",
        f"#define TD_KWS_SUPPRESS_MS {cfg.suppress_ms}u",
        f"#define TD_KWS_FIRST_KEYWORD {cfg.first_keyword}u",
        "#endif",
        "",
    ])


def kws_headers(model: Path, det: DetectorConfig | None = None,
                fcfg: FrontendConfig | None = None) -> dict[str, str]:
    """The generated headers of the kws app for ``model`` (default detector settings and the
    model's own front-end config unless given)."""
    return {"td_frontend_config_model.h":
            render_frontend_header(fcfg or frontend_config_for(Path(model))),
            "td_kws_config.h": render_kws_header(det or DetectorConfig())}


def build_kws_firmware(model: Path, board: Board, out_dir: Path, det: DetectorConfig,
                       fcfg: FrontendConfig, *, emulate: bool = False,
                       sanitize: bool = False) -> BuildResult:
    """``sanitize``: address and undefined-behaviour sanitizers (host board only)."""
    return build_firmware(Path(model), board, "kws", out_dir, emulate=emulate,
                          sanitize=sanitize,
                          generated_headers=kws_headers(model, det, fcfg))
