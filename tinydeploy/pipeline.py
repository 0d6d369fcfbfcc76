"""The whole pipeline for one device application: the build stage plus what the application
itself contributes (headers generated for the model, a choice among its firmware files),
composed here, above the stages and the kws application, so that no stage needs to know an
application.

`APP_SOURCES` is the registry of those contributions: one function per app that has any,
from the model path to its `AppSources`; every app in `tinydeploy.apps.REQUIRED_HEADERS` has
an entry (checked in the tests).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tinydeploy.apps import App, parse_app
from tinydeploy.boards import Board
from tinydeploy.build.firmware import BuildResult, build_firmware
from tinydeploy.errors import TinydeployError
from tinydeploy.kws.device import frontend_for, kws_headers, kws_part_files


@dataclass(frozen=True)
class AppSources:
    """What an app adds to its project for one model: ``{header name: text}`` written to
    ``src/generated/``, and ``{firmware part: files}`` restricting a part to those files."""

    headers: dict[str, str] = field(default_factory=dict)
    part_files: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class KwsOptions:
    """What `build`/`run --app kws` take for a model trained elsewhere: the front end (a
    preset name or a JSON file; default frontend.json beside the model), the label file
    (default labels.txt beside it) and the frames between inferences (default the
    detector's)."""

    frontend: str | Path | None = None
    labels: Path | None = None
    infer_every: int | None = None


def _kws_sources(model: Path, kws: KwsOptions | None = None) -> AppSources:
    kws = kws or KwsOptions()
    choice = frontend_for(model, kws.frontend)   # the front end the model was trained with
    from dataclasses import replace

    from tinydeploy.kws.labels import keyword_range, load_labels
    from tinydeploy.kws.stream import model_detector

    names = load_labels(model, kws.labels)
    first, end = keyword_range(names)
    base = model_detector(model, names)    # its detector.json, if it has one
    det = replace(base, infer_every=kws.infer_every or base.infer_every,
                  first_keyword=first, keyword_end=end)
    return AppSources(kws_headers(model, det, choice), kws_part_files(choice))


APP_SOURCES: dict[App, Callable[..., AppSources]] = {
    App.KWS: _kws_sources,
}


def app_sources(app: App | str, model: Path | bytes, kws: KwsOptions | None = None
                ) -> AppSources | None:
    """What ``app`` adds for ``model`` (None when it adds nothing); ``kws``: the kws app's
    options."""
    hook = APP_SOURCES.get(parse_app(app))
    if hook is None:
        return None
    if not isinstance(model, Path):
        raise TinydeployError(f"the {app} app needs the model's path (what it adds is derived "
                              "from files beside it, e.g. frontend.json)")
    return hook(model, kws) if kws is not None else hook(model)


def build_app(model: Path | bytes, board: Board, app: App | str, out_dir: Path, *,
              emulate: bool = False, algorithm: str = "auto", stack_bytes: int | None = None,
              opt: str = "-O2", optimize: str = "balanced",
              guards: bool = False, streaming: bool = False, stream_axis: int | None = None,
              stream_keep: str | None = None, chip: bool = False,
              arena_limit: int | None = None, kws: KwsOptions | None = None) -> BuildResult:
    """`build_firmware` for ``app`` with what the app adds for the model (``kws``: the kws
    app's options). The kws app on a board with a microphone (an ``[audio]`` table) is the
    listening firmware, its schedule chosen to keep up with the board's clock
    (docs/listening.md)."""
    if parse_app(app) is App.KWS and board.audio is not None and not emulate and \
            isinstance(model, Path):
        from tinydeploy.kws.listen import build_listening
        from tinydeploy.report.output import stderr

        opts = kws or KwsOptions()
        res, _ = build_listening(model, board, out_dir, choice=frontend_for(model, opts.frontend),
                                 labels=opts.labels, infer_every=opts.infer_every,
                                 log=lambda m: stderr.print(f"listening firmware: {m}"))
        return res
    extra = app_sources(app, model, kws)
    return build_firmware(model, board, app, out_dir, emulate=emulate, algorithm=algorithm,
                          stack_bytes=stack_bytes, opt=opt, optimize=optimize, guards=guards,
                          streaming=streaming, stream_axis=stream_axis,
                          stream_keep=stream_keep, chip=chip, arena_limit=arena_limit,
                          generated_headers=extra.headers if extra else None,
                          part_files=extra.part_files if extra else None)
