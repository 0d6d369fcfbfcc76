"""The whole pipeline for one device application: the build stage plus what the application
itself contributes (headers generated for the model), composed here, above the stages and the
kws application, so that no stage needs to know an application.

`APP_HEADERS` is the registry of those contributions: one function per app that has any,
from the model path to ``{header name: text}``; every app in `tinydeploy.apps.REQUIRED_HEADERS`
has an entry (checked in the tests).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tinydeploy.apps import App, parse_app
from tinydeploy.boards import Board
from tinydeploy.build.firmware import BuildResult, build_firmware
from tinydeploy.errors import TinydeployError
from tinydeploy.kws.device import kws_headers

APP_HEADERS: dict[App, Callable[[Path], dict[str, str]]] = {
    App.KWS: kws_headers,
}


def app_headers(app: App | str, model: Path | bytes) -> dict[str, str] | None:
    """The generated headers ``app`` needs for ``model`` (None when it needs none)."""
    hook = APP_HEADERS.get(parse_app(app))
    if hook is None:
        return None
    if not isinstance(model, Path):
        raise TinydeployError(f"the {app} app needs the model's path (its generated headers "
                              "are derived from files beside it)")
    return hook(model)


def build_app(model: Path | bytes, board: Board, app: App | str, out_dir: Path, *,
              emulate: bool = False, algorithm: str = "auto", stack_bytes: int | None = None,
              opt: str = "-O2") -> BuildResult:
    """`build_firmware` for ``app`` with the headers the app generates for the model."""
    return build_firmware(model, board, app, out_dir, emulate=emulate, algorithm=algorithm,
                          stack_bytes=stack_bytes, opt=opt,
                          generated_headers=app_headers(app, model))
