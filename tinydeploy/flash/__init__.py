"""flash: firmware -> running device. One runner per method: QEMU and the host process for
emulated boards, pyOCD, nrfjprog and PlatformIO for real ones (see runner.py)."""

from tinydeploy.flash.runner import Device, Firmware, Runner, board_from_manifest_id, runner_for

__all__ = ["Device", "Firmware", "Runner", "board_from_manifest_id", "runner_for"]
