"""Cut 1 s windows of other real speech, for the keyword spotter's "unknown" class, out of
transcribed recordings in a git repository (LibriSpeech, VCTK, Common Voice and the like).

    python examples/kws/collect_speech.py GIT_DIR OUT_DIR [--under PREFIX] [--commit REV]
        [--per-utterance K] [--max-windows N] [--seed S] [--repo OWNER/NAME]
        [--licence TEXT] [--said-by-folder]

An utterance is an audio blob (``*.wav``, ``*.flac``) with a transcript, found by the
audio's file name without its extension (its stem):

- LibriSpeech: ``<speaker>-<chapter>.trans.txt`` files, one ``<stem> <TEXT>`` a line;
- one ``<stem>.txt`` per utterance anywhere in the tree (VCTK: ``txt/p225/p225_001.txt``
  beside ``wav48/p225/p225_001.wav``);
- tab-separated ``*.tsv`` files with ``path`` and ``sentence`` columns (Common Voice);
- with ``--said-by-folder``, the name of the audio's folder (a folder per word or phrase,
  as wake-word collections such as Picovoice's wake-word benchmark are laid out).

An utterance is used only if no word of its transcript is a keyword or sounds like one
(`sounds_like_a_keyword`): a window of it then holds no keyword, whatever part of it the
window takes, and can be trained as "unknown" without a model to judge it. From each such
utterance (decoded to 16 kHz mono; FLAC through the ``flac`` tool) up to ``--per-utterance``
windows are cut at seeded places, none overlapping, each mostly speech rather than the pause
around it (`speech_windows`): a window of mostly background noise is silence, not
"unknown". They are written as ``OUT_DIR/<folder of the audio>/<stem>_<k>.wav``;
``OUT_DIR/PROVENANCE`` names the repository, commit and licence, and ``OUT_DIR/windows.tsv``
lists every window with the utterance and sample it was cut from. Nothing in the repository
is modified.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from collect_speech_commands import _read_blobs  # noqa: E402

from tinydeploy.errors import InputDataError  # noqa: E402
from tinydeploy.kws.labels import KEYWORDS  # noqa: E402
from tinydeploy.kws.wav import SAMPLE_RATE, decode_wav, encode_wav  # noqa: E402

AUDIO = (".wav", ".flac")
# words said exactly like a keyword, and the keyword's own inflections
HOMOPHONES = frozenset({"know", "knows", "noh", "write", "writes", "rite", "rites", "wright",
                        "ups", "goes", "going", "gone", "offs", "ons"})
WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def sounds_like_a_keyword(word: str) -> bool:
    """A transcript word that is a keyword, says one, or begins with one of three letters or
    more ("stopped", "leftover", "rightly", "downstairs", "yesterday"). Two-letter keywords
    (no, up, on, go) begin too many unlike words ("once", "only", "upon", "nothing"), so for
    them only the word itself, its inflections and its homophones count."""
    w = word.lower().strip("'")
    return (w in KEYWORDS or w in HOMOPHONES
            or any(len(k) >= 3 and w.startswith(k) for k in KEYWORDS))


def keyword_free(text: str) -> bool:
    return not any(sounds_like_a_keyword(w) for w in WORD.findall(text.lower()))


def transcripts(blobs: dict[str, bytes], audio_stems: set[str]) -> dict[str, str]:
    """{audio stem: transcript} from the transcript files in ``blobs`` (path: content)."""
    out: dict[str, str] = {}
    for path, data in sorted(blobs.items()):
        name = path.rsplit("/", 1)[-1]
        text = data.decode("utf-8", errors="replace")
        if name.endswith(".trans.txt"):
            for line in text.splitlines():
                stem, _, said = line.partition(" ")
                if stem and said:
                    out.setdefault(stem, said)
        elif name.endswith(".tsv"):
            rows = csv.DictReader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE)
            for row in rows:
                clip, sentence = row.get("path"), row.get("sentence")
                if clip and sentence:
                    out.setdefault(clip.rsplit("/", 1)[-1].rsplit(".", 1)[0], sentence)
        elif name.endswith(".txt") and name[:-4] in audio_stems:
            out.setdefault(name[:-4], " ".join(text.split()))
    return out


def decode(data: bytes, name: str) -> np.ndarray:
    """An audio blob as 16 kHz mono int16."""
    if name.lower().endswith(".flac"):
        if shutil.which("flac") is None:
            raise InputDataError(f"{name}: FLAC audio and no 'flac' tool to decode it",
                                 hint="apt-get install flac")
        proc = subprocess.run(["flac", "-d", "-c", "-s", "-"], input=data,
                              capture_output=True)
        if proc.returncode != 0:
            raise InputDataError(f"{name}: flac could not decode it "
                                 f"({proc.stderr.decode(errors='replace').strip()[:200]})")
        data = proc.stdout
    return decode_wav(data, name, SAMPLE_RATE)


def speech_windows(x: np.ndarray, k: int, rng: np.random.Generator,
                   floor_db: float = 20.0, enough_s: float = 0.5) -> list[int]:
    """Start samples of up to ``k`` non-overlapping 1 s windows of ``x`` that are mostly
    speech, not the pause around it: a 10 ms frame is speech if it is within ``floor_db`` of
    the utterance's loudest, and a window must hold ``enough_s`` of speech frames, or 80 %
    of them all when the utterance has fewer (a single word). The places are a seeded
    shuffle of the qualifying 10 ms offsets, taken greedily."""
    hop = SAMPLE_RATE // 100
    n = x.size // hop
    per = SAMPLE_RATE // hop
    if n < per:
        return []
    frames = x[:n * hop].astype(np.float64).reshape(n, hop)
    db = 10 * np.log10(np.mean(frames ** 2, axis=1) + 1.0)
    loud = np.concatenate([[0], np.cumsum(db >= db.max() - floor_db)])
    need = min(enough_s * 100, 0.8 * loud[-1])
    starts = np.arange(n - per + 1)
    ok = starts[loud[starts + per] - loud[starts] >= need]
    taken: list[int] = []
    for s in rng.permutation(ok):
        if len(taken) == k:
            break
        if all(abs(int(s) - t) >= per for t in taken):
            taken.append(int(s))
    return sorted(t * hop for t in taken)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("git_dir", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--under", default="", help="only paths below this prefix")
    ap.add_argument("--commit", default="HEAD", help="the commit to read (default HEAD)")
    ap.add_argument("--per-utterance", type=int, default=2,
                    help="windows cut from one utterance at most")
    ap.add_argument("--max-windows", type=int, default=0, help="stop after this many (0: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repo", default="", help="owner/name for PROVENANCE (default: from "
                    "the git directory's path, owner+name)")
    ap.add_argument("--licence", default="", help="the recordings' licence, for PROVENANCE")
    ap.add_argument("--said-by-folder", action="store_true",
                    help="what a recording says is the name of its folder (no transcripts)")
    a = ap.parse_args(argv)
    if a.per_utterance < 1 or a.max_windows < 0:
        ap.error("--per-utterance must be at least 1 and --max-windows at least 0")
    if a.out.exists() and any(a.out.iterdir()):
        ap.error(f"{a.out} is not empty: give a new folder (nothing is overwritten)")
    git = ["git", f"--git-dir={a.git_dir}"]
    rev = subprocess.run([*git, "rev-parse", a.commit], capture_output=True, text=True)
    if rev.returncode != 0:
        ap.error(f"{a.git_dir}: no commit {a.commit!r} ({rev.stderr.strip()[:200]})")
    commit = rev.stdout.strip()
    listing = subprocess.run([*git, "ls-tree", "-r", commit], capture_output=True, text=True,
                             check=True).stdout.splitlines()
    blobs = {}
    for line in listing:
        meta, path = line.split("\t", 1)
        if path.startswith(a.under):
            blobs[path] = meta.split()[2]
    audio = {p: b for p, b in blobs.items() if p.lower().endswith(AUDIO)}
    stems = {p.rsplit("/", 1)[-1].rsplit(".", 1)[0]: p for p in sorted(audio)}
    text_paths = [p for p in blobs if p.endswith((".txt", ".tsv"))]
    texts = _read_blobs(git, sorted({blobs[p] for p in text_paths}))
    said = transcripts({p: texts.get(blobs[p], b"") for p in text_paths}, set(stems))
    if a.said_by_folder:
        said.update((s, p.rsplit("/", 2)[-2]) for s, p in stems.items() if "/" in p)
    usable = sorted(s for s in stems if s in said and keyword_free(said[s]))
    print(f"{len(audio)} audio files, {sum(1 for s in stems if s in said)} with a transcript, "
          f"{len(usable)} of them without a keyword", file=sys.stderr)
    if not usable:
        print(f"error: no transcribed utterance without a keyword under {a.git_dir} "
              f"{a.under or ''}".rstrip() + "\n  hint: the layouts read are in --help",
              file=sys.stderr)
        return 2
    if any(stems[u].lower().endswith(".flac") for u in usable) and shutil.which("flac") is None:
        print("error: FLAC recordings and no 'flac' tool to decode them\n"
              "  hint: apt-get install flac", file=sys.stderr)
        return 2
    rng = np.random.default_rng(a.seed)
    order = [usable[i] for i in rng.permutation(len(usable))]
    a.out.mkdir(parents=True, exist_ok=True)
    skipped = 0

    def windows() -> Iterator[tuple[str, str, int, int, np.ndarray]]:
        """(stem, audio path, k, start sample, audio) of every window, in ``order``; the
        audio is read 64 utterances at a time."""
        nonlocal skipped
        cut = 0
        for b in range(0, len(order), 64):
            part = order[b:b + 64]
            data = _read_blobs(git, [audio[stems[s]] for s in part])
            for s in part:
                try:
                    x = decode(data.get(audio[stems[s]], b""), stems[s])
                except InputDataError:
                    skipped += 1          # a Git LFS pointer, an absent large file, bad audio
                    continue
                for k, start in enumerate(speech_windows(x, a.per_utterance, rng)):
                    cut += 1
                    yield s, stems[s], k, start, x
            print(f"  {min(b + 64, len(order))}/{len(order)} utterances, {cut} windows",
                  file=sys.stderr)

    rows, folders = [], set()
    for s, path, k, start, x in islice(windows(), a.max_windows or None):
        folder = path.rsplit("/", 2)[-2] if "/" in path else "."
        rel = Path(folder) / f"{s}_{k}.wav"
        (a.out / folder).mkdir(exist_ok=True)
        (a.out / rel).write_bytes(encode_wav(x[start:start + SAMPLE_RATE]))
        rows.append(f"{rel}\t{path}\t{start}\n")
        folders.add(folder)
    gd = a.git_dir.resolve()
    holder = gd.parent.parent if gd.name == ".git" else gd.parent
    repo = a.repo or holder.name.replace("+", "/")
    (a.out / "windows.tsv").write_text("window\tutterance\tstart sample\n" + "".join(rows))
    (a.out / "PROVENANCE").write_text(
        f"repository: {repo}\ncommit: {commit}\nlicence: {a.licence or 'see the repository'}\n"
        f"windows: {len(rows)} from {len(folders)} folders; utterances whose transcript "
        "has a keyword (or a word said like one) were left out\n")
    print(f"{repo}: commit {commit}: {len(rows)} windows in {len(folders)} folders"
          + (f"; {skipped} audio files could not be read" if skipped else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
