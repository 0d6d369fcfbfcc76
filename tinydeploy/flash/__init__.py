"""flash: firmware -> running device. One runner per method: QEMU and the host process for
emulated boards, pyOCD, nrfjprog and PlatformIO for real ones (the interface in runner.py,
the kinds' registry in registry.py)."""

from tinydeploy.flash.registry import runner_for
from tinydeploy.flash.runner import Device, Firmware, Runner, board_from_manifest_id

__all__ = ["Device", "Firmware", "Runner", "board_from_manifest_id", "runner_for"]
