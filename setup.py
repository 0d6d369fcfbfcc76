"""Build step that ships the top-level data folders inside the wheel.

The repository keeps ``boards/``, ``templates/``, ``firmware/``, ``models/`` and ``examples/``
at the top (the project's layout); a wheel must carry them as package data. This ``build_py``
copies them to ``tinydeploy/_data/<folder>`` in the build tree, the place
``tinydeploy.resources`` looks first. An editable install copies nothing: there the same
module finds the folders in the clone. Everything else is in pyproject.toml.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _resources():  # tinydeploy.resources, read without importing the package
    spec = importlib.util.spec_from_file_location("_td_resources",
                                                  HERE / "tinydeploy" / "resources.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class BuildPyWithData(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        res = _resources()
        target = Path(self.build_lib) / "tinydeploy" / res.DATA_PACKAGE_DIR
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.o", "*.elf")
        for folder in res.PACKAGED:
            dest = target / folder
            if dest.exists():
                shutil.rmtree(dest)
            shutil.copytree(HERE / folder, dest, ignore=ignore)


setup(cmdclass={"build_py": BuildPyWithData})
