"""A front-end preset's C sources compiled for the host as a shared library (loaded with
ctypes), so the features a model is trained and scored on are the device's own bytes.

Cached by content: the digest covers the rendered config header, every source file of the
preset, ``td_frontend.h``, the compiler and its flags; a library is written under a temporary
name and renamed into place, so concurrent builds never load a half-written one.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tinydeploy.errors import ToolchainError
from tinydeploy.frontend.header import write_header
from tinydeploy.resources import firmware_dir
from tinydeploy.toolchain import DEBIAN_PACKAGES

FIRMWARE_FRONTEND = firmware_dir() / "frontend"
API_HEADER = "td_frontend.h"


def cache_root() -> Path:
    """``$TINYDEPLOY_CACHE``, else ``tinydeploy-cache`` in the temporary folder."""
    default = Path(tempfile.gettempdir()) / "tinydeploy-cache"
    return Path(os.environ.get("TINYDEPLOY_CACHE", default))


def compile_host_library(cfg: Any, render: Callable[[Any], str], sources: tuple[str, ...],
                         host_cflags: tuple[str, ...], *, cc: str = "gcc", stem: str,
                         library: str, what: str) -> Path:
    """``library`` built from ``sources`` (files under firmware/frontend/; the .c ones are
    compiled) against ``render(cfg)`` as ``td_frontend_config.h``, in
    ``<cache>/<stem>-<digest>/``; ``what`` names the front end in the errors."""
    header = render(cfg)
    h = hashlib.sha256(header.encode())
    for src in (*sources, API_HEADER):
        h.update((FIRMWARE_FRONTEND / src).read_bytes())
    h.update(" ".join((cc, *host_cflags)).encode())
    out_dir = cache_root() / f"{stem}-{h.hexdigest()[:20]}"
    lib = out_dir / f"{library}.so"
    if lib.exists():
        return lib
    if shutil.which(cc) is None:
        raise ToolchainError(f"host C compiler '{cc}' not found; it builds the audio front end",
                             hint=f"install gcc (apt-get install {DEBIAN_PACKAGES['host']})")
    write_header(header, out_dir)
    tmp = out_dir / f"{library}.{os.getpid()}.so"
    cmd = [cc, *host_cflags, f"-I{out_dir}", f"-I{FIRMWARE_FRONTEND}",
           *[str(FIRMWARE_FRONTEND / s) for s in sources if s.endswith(".c")],
           "-lm", "-o", str(tmp)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ToolchainError(f"compiling the {what} front end failed ({cc} exit "
                             f"{proc.returncode}):\n{proc.stderr.strip()}")
    os.replace(tmp, lib)
    return lib
