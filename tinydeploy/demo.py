"""`make demo`: the main job, end to end, with what a newcomer should see."""

from __future__ import annotations

import sys

from tinydeploy.cli import main as cli


def main() -> int:
    return cli(["inspect", "tests/fixtures/dscnn_kws.tflite"])


if __name__ == "__main__":
    sys.exit(main())
