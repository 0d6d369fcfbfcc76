"""Where the files that tinydeploy ships beside its code are found: board files, templates,
firmware sources, the committed KWS model and the demo audio.

The repository keeps them in top-level folders (``boards/``, ``templates/``, ``firmware/``,
``models/``, ``examples/``), where the project's layout promises them. A wheel carries the same
folders as package data under ``tinydeploy/_data/<folder>`` (``setup.py`` copies them at build
time). This module is the only one that knows both layouts; every other module asks it.

Invariants: a wheel's ``_data`` wins when it is there, else the clone (or editable install) is
used; the answer is a real directory on disk, because compilers, ``make`` and Jinja2's
``FileSystemLoader`` need paths (pip always installs a wheel unzipped). This module imports
nothing from tinydeploy at module level, so that ``setup.py`` can read `PACKAGED` from it.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

# The top-level folders that ship as package data, in the order setup.py copies them.
PACKAGED: tuple[str, ...] = ("boards", "templates", "firmware", "models", "examples")
DATA_PACKAGE_DIR = "_data"


@functools.cache
def data_root() -> Path:
    """The folder that holds `PACKAGED`: ``tinydeploy/_data`` in a wheel, else the clone."""
    packaged = Path(str(resources.files("tinydeploy"))) / DATA_PACKAGE_DIR
    if (packaged / "boards").is_dir():
        return packaged
    clone = Path(__file__).resolve().parent.parent
    if (clone / "boards").is_dir() and (clone / "firmware").is_dir():
        return clone
    from tinydeploy.errors import TinydeployError

    raise TinydeployError(f"tinydeploy's data folders ({', '.join(PACKAGED)}) are neither in "
                          f"{packaged} nor in {clone}",
                          hint="reinstall tinydeploy from a wheel built with "
                               "'python -m build --wheel', or run it from a clone")


def boards_dir() -> Path:
    """The board files, ``boards/<id>.toml``."""
    return data_root() / "boards"


def templates_dir() -> Path:
    """The Jinja2 templates, each named after the file it renders."""
    return data_root() / "templates"


def firmware_dir() -> Path:
    """The static C sources copied into generated projects (kernels, platform, link, apps)."""
    return data_root() / "firmware"


def models_dir() -> Path:
    """The committed models (``models/kws``: the demo keyword spotter and its front end)."""
    return data_root() / "models"


def examples_dir() -> Path:
    """The examples (``examples/kws/demo.wav`` is the demo's test audio)."""
    return data_root() / "examples"
