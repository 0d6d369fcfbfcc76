"""Build the ``kws`` application for a model: the front end the model was trained with (a
preset and its config, `tinydeploy.frontend.presets`; ``frontend.json`` beside the model unless
chosen) and the detector settings become generated headers (``td_frontend_config_model.h``,
``td_kws_config.h``) that take precedence over the committed defaults (see
firmware/frontend/td_frontend.h and firmware/app/kws/main.c); only that preset's C sources
are copied into the project."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tinydeploy.boards import Board, emulation_target
from tinydeploy.build.firmware import BuildResult, build_firmware
from tinydeploy.errors import InputDataError
from tinydeploy.frontend.presets import FrontendChoice, FrontendPreset, choice_of, resolve_frontend
from tinydeploy.kws.stream import DetectorConfig

# Folders of firmware/audio/ per source kind (a board file's ``[audio] kind``).
AUDIO_SOURCE_DIRS: dict[str, str] = {"virtual": "virtual", "nrf-pdm": "nrf_pdm"}
AUDIO_API_HEADER = "td_audio.h"
AUDIO_SHARED = ("td_audio_slots.h", "td_audio_slots.c")   # every source's ring bookkeeping


@dataclass(frozen=True)
class ListenSettings:
    """How the listening firmware is laid out: its audio source (a key of
    `AUDIO_SOURCE_DIRS`) and its ring of ``audio_blocks`` blocks of one stride each (sized by
    `tinydeploy.kws.realtime.choose_schedule`)."""

    source: str
    audio_blocks: int


def frontend_for(model: Path, override: str | Path | None = None) -> FrontendChoice:
    """The front end of ``model``: ``override`` (a preset name or a JSON file), else
    ``frontend.json`` next to it."""
    return resolve_frontend(override, Path(model))


def frontend_config_for(model: Path, override: str | Path | None = None) -> Any:
    """The front-end config alone (any preset's config type)."""
    return frontend_for(model, override).config


def _choice(fcfg: Any) -> FrontendChoice:
    return fcfg if isinstance(fcfg, FrontendChoice) else choice_of(fcfg)


def fe_scratch_in_arena(choice: FrontendChoice) -> bool:
    """Whether the preset's scratch may borrow the model's idle arena between inferences: only
    a preset that keeps no state from frame to frame and has no window pass (tinydeploy)."""
    return choice.spec.preset is FrontendPreset.TINYDEPLOY


def render_kws_header(cfg: DetectorConfig, listen: ListenSettings | None = None,
                      choice: FrontendChoice | None = None, labels: int = 0) -> str:
    lines = [
        "#ifndef TD_KWS_CONFIG_H",
        "#define TD_KWS_CONFIG_H",
        f"#define TD_KWS_INFER_EVERY {cfg.infer_every}u",
        f"#define TD_KWS_AVG_WINDOWS {cfg.avg_windows}u",
        f"#define TD_KWS_THRESHOLD {float(cfg.threshold).hex()}f",
        f"#define TD_KWS_SUPPRESS_MS {cfg.suppress_ms}u",
        f"#define TD_KWS_FIRST_KEYWORD {cfg.first_keyword}u",
        f"#define TD_KWS_KEYWORD_END {cfg.keyword_end}u",
    ]
    if cfg.class_thresholds:
        lines.append("#define TD_KWS_CLASS_THRESHOLDS {" + ", ".join(
            f"{float(t).hex()}f" for t in cfg.class_thresholds) + "}")
    if listen is not None:
        assert choice is not None
        lines += [
            "#define TD_KWS_LISTEN 1",
            f"#define TD_KWS_AUDIO_BLOCKS {listen.audio_blocks}u",
            # the detector's history sized to the model and the averaging
            f"#define TD_KWS_MAX_AVG {cfg.avg_windows}u",
            f"#define TD_KWS_MAX_LABELS {labels}u",
        ]
        if fe_scratch_in_arena(choice):
            lines += ["#define TD_KWS_FE_IN_ARENA 1",
                      f"#define TD_KWS_FE_SCRATCH_BYTES "
                      f"{choice.spec.scratch_bytes(choice.config)}u"]
    return "\n".join([*lines, "#endif", ""])


def kws_headers(model: Path, det: DetectorConfig | None = None,
                fcfg: Any = None, listen: ListenSettings | None = None) -> dict[str, str]:
    """The generated headers of the kws app for ``model`` (default detector settings and the
    model's own front end unless given; ``fcfg`` is a `FrontendChoice` or a config)."""
    choice = _choice(fcfg) if fcfg is not None else frontend_for(Path(model))
    labels = 0
    if listen is not None:
        from tinydeploy.model.loader import load_tflite

        labels = int(load_tflite(Path(model)).outputs[0].nbytes)
    return {"td_frontend_config_model.h": choice.spec.render_header(choice.config),
            "td_kws_config.h": render_kws_header(det or DetectorConfig(), listen, choice,
                                                 labels)}


def kws_part_files(fcfg: Any, listen: ListenSettings | None = None
                   ) -> dict[str, tuple[str, ...]]:
    """The files of firmware/frontend/ the chosen preset needs and of firmware/audio/ the
    source needs (nothing else is copied)."""
    audio: tuple[str, ...] = (AUDIO_API_HEADER,)
    if listen is not None:
        folder = AUDIO_SOURCE_DIRS[listen.source]
        audio += (*AUDIO_SHARED, f"{folder}/td_audio_{folder}.c")
    return {"frontend": _choice(fcfg).spec.files, "audio": audio}


def audio_source_for(board: Board, emulate: bool = False) -> str:
    """The audio source the listening firmware uses on ``board``: the virtual microphone on
    an emulated board (or under ``--emulate``), else the board file's ``[audio]`` kind."""
    if emulate or board.qemu_machine:
        target = emulation_target(board) if emulate else board
        if not target.qemu_machine:
            raise InputDataError(f"board '{board.id}' has no emulated stand-in")
        return "virtual"
    audio = getattr(board, "audio", None)
    if audio is None:
        raise InputDataError(f"board '{board.id}' has no microphone (no [audio] section in "
                             f"its board file)",
                             hint="run it emulated (--emulate), stream audio over serial with "
                                  "`tinydeploy kws stream`, or describe its microphone in "
                                  "an [audio] table (boards/README.md)")
    kind = str(audio.kind)
    if kind not in AUDIO_SOURCE_DIRS:
        raise InputDataError(f"board '{board.id}': unknown audio source '{kind}'",
                             hint="known: " + ", ".join(sorted(AUDIO_SOURCE_DIRS)))
    return kind


def listen_buffers(model: Path, choice: FrontendChoice, audio_blocks: int,
                   avg_windows: int = 8) -> Any:
    """``app_buffers(input_bytes, idle_arena_bytes)`` of the listening firmware for the
    budget (`tinydeploy.plan.budget.kws_app_buffers`)."""
    from tinydeploy.model.loader import load_tflite
    from tinydeploy.plan.budget import kws_app_buffers

    scratch = choice.spec.scratch_bytes(choice.config)
    labels = int(load_tflite(Path(model)).outputs[0].nbytes)
    in_arena = fe_scratch_in_arena(choice)

    def buffers(input_bytes: int, idle_bytes: int) -> tuple[tuple[str, int], ...]:
        return kws_app_buffers(input_bytes, scratch, listen_blocks=audio_blocks,
                               stride=choice.config.stride, window=choice.config.window,
                               fe_in_arena=in_arena and scratch <= idle_bytes,
                               avg_windows=avg_windows, labels=labels)

    return buffers


def build_kws_firmware(model: Path, board: Board, out_dir: Path, det: DetectorConfig,
                       fcfg: Any, *, emulate: bool = False,
                       sanitize: bool = False,
                       listen: ListenSettings | None = None,
                       streaming: bool = False, chip: bool = False,
                       optimize: str = "balanced") -> BuildResult:
    """``fcfg``: a `FrontendChoice` or any preset's config. ``sanitize``: address and
    undefined-behaviour sanitizers (host board only). ``listen``: the listening firmware
    (its microphone, continuous) instead of the serial one (AUDIO frames). ``streaming``:
    the model streamed (docs/streaming.md): a step every hop, ``det.infer_every`` must be
    the hop. ``chip``: for the real chip, not the emulator (`build_firmware`). ``optimize``:
    the kernel trade-off (--optimize)."""
    from tinydeploy.plan.budget import kws_app_buffers

    choice = _choice(fcfg)
    scratch = choice.spec.scratch_bytes(choice.config)
    buffers = (listen_buffers(model, choice, listen.audio_blocks, det.avg_windows)
               if listen is not None else
               lambda input_bytes, idle: kws_app_buffers(input_bytes, scratch,
                                                         window=choice.config.window))
    return build_firmware(Path(model), board, "kws", out_dir, emulate=emulate,
                          sanitize=sanitize, chip=chip,
                          generated_headers=kws_headers(model, det, choice, listen),
                          part_files=kws_part_files(choice, listen),
                          app_buffers=buffers, streaming=streaming, optimize=optimize)
