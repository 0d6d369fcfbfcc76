"""Lay out Speech Commands clips found in a git repository in the Speech Commands folder
layout (``<word>/<speaker>_nohash_<n>.wav``, ``_background_noise_/``), for
`tinydeploy kws train --speech-commands`.

    python examples/kws/collect_speech_commands.py GIT_DIR OUT_DIR [--under PREFIX] [--rev REV]

Every ``*.wav`` blob at HEAD (or ``--rev``) whose name is ``<speaker>_nohash_<n>.wav`` (or
``<word>_<speaker>_nohash_<n>.wav``, as some repositories flatten the tree) is written to
``OUT_DIR/<word>/<speaker>_nohash_<n>.wav``; the word is the parent folder, or the file-name
prefix for flattened names. Files under a ``_background_noise_`` folder are copied as they are.
The audio is read with ``git cat-file``; nothing is modified in the repository. Prints the
commit and the number of files per word, and writes both to ``OUT_DIR/PROVENANCE``.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections import Counter
from pathlib import Path

NAME = re.compile(r"^(?:(?P<word>[a-z]+)_)?(?P<spk>[0-9a-f]{8}_nohash_\d+)\.wav$")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("git_dir", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--under", default="", help="only paths below this prefix")
    ap.add_argument("--rev", default="HEAD", help="the commit to read (default HEAD)")
    ap.add_argument("--repo", default="", help="owner/name for PROVENANCE (default: from "
                    "a path to a clone's .git directory)")
    a = ap.parse_args()
    git = ["git", f"--git-dir={a.git_dir}"]
    commit = subprocess.run([*git, "rev-parse", a.rev], capture_output=True, text=True,
                            check=True).stdout.strip()
    listing = subprocess.run([*git, "ls-tree", "-r", commit], capture_output=True, text=True,
                             check=True).stdout.splitlines()
    counts: Counter[str] = Counter()
    for line in sorted(listing):
        meta, path = line.split("\t", 1)
        if not path.lower().endswith(".wav") or not path.startswith(a.under):
            continue
        blob = meta.split()[2]
        parts = path.split("/")
        if len(parts) >= 2 and parts[-2] == "_background_noise_":
            rel = Path("_background_noise_") / parts[-1]
        else:
            m = NAME.match(parts[-1])
            if m is None or (m["word"] is None and len(parts) < 2):
                continue
            word = m["word"] or parts[-2]
            rel = Path(word) / f"{m['spk']}.wav"
        data = subprocess.run([*git, "cat-file", "blob", blob], capture_output=True,
                              check=True).stdout
        if not data.startswith(b"RIFF"):
            continue                    # a Git LFS pointer or an absent large file
        (a.out / rel.parent).mkdir(parents=True, exist_ok=True)
        (a.out / rel).write_bytes(data)
        counts[str(rel.parent)] += 1
    repo = a.repo or a.git_dir.resolve().parent.parent.name.replace("+", "/")
    (a.out / "PROVENANCE").write_text(f"repository: {repo}\ncommit: {commit}\n")
    print(f"{repo}: commit {commit}")
    for word, n in sorted(counts.items()):
        print(f"  {word}: {n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
