"""Lay out Speech Commands clips found in a git repository in the Speech Commands folder
layout (``<word>/<speaker>_nohash_<n>.wav``, ``_background_noise_/``), for
`tinydeploy kws train --speech-commands`.

    python examples/kws/collect_speech_commands.py GIT_DIR OUT_DIR [--under PREFIX]
        [--commit REV] [--history]

Every ``*.wav`` blob at HEAD (or ``--commit``) whose name is ``<speaker>_nohash_<n>.wav`` (or
``<word>_<speaker>_nohash_<n>.wav``, as some repositories flatten the tree) is written to
``OUT_DIR/<word>/<speaker>_nohash_<n>.wav``; the word is the parent folder, or the file-name
prefix for flattened names. Files under a ``_background_noise_`` folder are copied as they are.
The audio is read with ``git cat-file``; nothing is modified in the repository. Prints the
commit and the number of files per word, and writes both to ``OUT_DIR/PROVENANCE``.

``--commit REV`` reads that commit instead of HEAD. ``--history`` also takes every ``*.wav``
blob reachable from any ref (``git rev-list --objects --all``), for repositories whose data
was deleted at HEAD; blobs absent from the copy are skipped. A path met twice keeps its
first blob (the tree of the chosen commit first).
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections import Counter
from pathlib import Path

NAME = re.compile(r"^(?:(?P<word>[a-z]+)_)?(?P<spk>[0-9a-f]{8}_nohash_\d+)\.wav$")


def _read_blobs(git: list[str], shas: list[str]) -> dict[str, bytes]:
    """The contents of ``shas`` through one ``git cat-file --batch``; absent objects are
    left out."""
    proc = subprocess.run([*git, "cat-file", "--batch"], input="".join(f"{s}\n" for s in shas)
                          .encode(), capture_output=True, check=True)
    out, buf, pos = {}, proc.stdout, 0
    while pos < len(buf):
        end = buf.index(b"\n", pos)
        head = buf[pos:end].decode().split()
        pos = end + 1
        if len(head) < 3 or head[1] == "missing":
            continue
        size = int(head[2])
        if head[1] == "blob":
            out[head[0]] = buf[pos:pos + size]
        pos += size + 1
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("git_dir", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--under", default="", help="only paths below this prefix")
    ap.add_argument("--commit", default="HEAD", help="the commit to read (default HEAD)")
    ap.add_argument("--history", action="store_true",
                    help="also take *.wav blobs found only in the history")
    ap.add_argument("--repo", default="", help="owner/name for PROVENANCE (default: from "
                    "a path to a clone's .git directory)")
    a = ap.parse_args()
    git = ["git", f"--git-dir={a.git_dir}"]
    commit = subprocess.run([*git, "rev-parse", a.commit], capture_output=True, text=True,
                            check=True).stdout.strip()
    listing = subprocess.run([*git, "ls-tree", "-r", commit], capture_output=True, text=True,
                             check=True).stdout.splitlines()
    blobs: dict[str, str] = {}
    for line in sorted(listing):
        meta, path = line.split("\t", 1)
        blobs.setdefault(path, meta.split()[2])
    if a.history:
        objs = subprocess.run([*git, "rev-list", "--objects", "--all", "--missing=allow-any"],
                              capture_output=True, text=True, check=True).stdout.splitlines()
        for line in sorted(objs):
            sha, _, path = line.partition(" ")
            if path:
                blobs.setdefault(path, sha)
    wanted = {p: b for p, b in blobs.items()
              if p.lower().endswith(".wav") and p.startswith(a.under)}
    contents = _read_blobs(git, sorted(set(wanted.values())))
    counts: Counter[str] = Counter()
    for path in sorted(wanted):
        blob = wanted[path]
        parts = path.split("/")
        if len(parts) >= 2 and parts[-2] == "_background_noise_":
            rel = Path("_background_noise_") / parts[-1]
        else:
            m = NAME.match(parts[-1])
            if m is None or (m["word"] is None and len(parts) < 2):
                continue
            word = m["word"] or parts[-2]
            rel = Path(word) / f"{m['spk']}.wav"
        data = contents.get(blob, b"")
        if not data.startswith(b"RIFF"):
            continue                    # a Git LFS pointer or an absent large file
        (a.out / rel.parent).mkdir(parents=True, exist_ok=True)
        (a.out / rel).write_bytes(data)
        counts[str(rel.parent)] += 1
    gd = a.git_dir.resolve()
    holder = gd.parent.parent if gd.name == ".git" else gd.parent   # clone/.git or owner+name/repo
    repo = a.repo or holder.name.replace("+", "/")
    (a.out / "PROVENANCE").write_text(f"repository: {repo}\ncommit: {commit}\n")
    print(f"{repo}: commit {commit}")
    for word, n in sorted(counts.items()):
        print(f"  {word}: {n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
