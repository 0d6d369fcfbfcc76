"""Remove byte-identical copies of the same clip across Speech Commands folders (many public
repositories copy the same recordings): the first folder in sorted order keeps each clip.

    python examples/kws/dedup_clips.py DIR [DIR ...]

Prints how many files each folder gave up. Only files under the folders given are touched.
"""

from __future__ import annotations

import hashlib
import sys
from collections import Counter
from pathlib import Path


def main(argv: list[str]) -> int:
    seen: dict[str, Path] = {}
    removed: Counter[str] = Counter()
    for root in sorted(Path(a) for a in argv):
        for wav in sorted(root.rglob("*.wav")):
            if "_background_noise_" in wav.parts:
                continue
            digest = hashlib.sha256(wav.read_bytes()).hexdigest()
            if digest in seen:
                wav.unlink()
                removed[root.name] += 1
            else:
                seen[digest] = wav
    for name, n in sorted(removed.items()):
        print(f"{name}: {n} duplicates removed")
    print(f"{len(seen)} distinct clips")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
