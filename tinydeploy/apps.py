"""The device applications: the closed set of firmware apps a project can be built with.

Each app is a folder ``firmware/app/<name>/`` plus the other firmware parts it links
(`APP_PARTS`), and may need headers generated for the model (`REQUIRED_HEADERS`: the kws app's
front-end and detector settings, rendered by ``tinydeploy.kws``; ``tinydeploy.pipeline``
supplies them). This module is data only (it imports only the errors), so every stage may
name an app.
"""

from __future__ import annotations

from enum import StrEnum

from tinydeploy.errors import TinydeployError


class App(StrEnum):
    BENCH = "bench"          # timed inferences
    VALIDATE = "validate"    # tensors in and out over the serial protocol
    KWS = "kws"              # audio in, features, inference, smoothing, detections out
    EEMBC = "eembc"          # MLPerf Tiny / EEMBC runner protocol (docs/eembc.md)


# What each application needs from firmware/ besides the model, kernels and platform.
APP_PARTS: dict[App, tuple[str, ...]] = {
    App.BENCH: ("app/bench", "link"),
    App.VALIDATE: ("app/validate", "link"),
    App.KWS: ("app/kws", "link", "frontend", "audio"),
    App.EEMBC: ("app/eembc",),
}

# Headers that must be generated for the model before the app is built.
REQUIRED_HEADERS: dict[App, tuple[str, ...]] = {
    App.KWS: ("td_frontend_config_model.h", "td_kws_config.h"),
}


def parse_app(name: App | str) -> App:
    """``name`` as an `App`, or a TinydeployError listing the apps."""
    try:
        return App(name)
    except ValueError:
        raise TinydeployError(f"unknown app '{name}'",
                              hint="apps: " + ", ".join(App)) from None
