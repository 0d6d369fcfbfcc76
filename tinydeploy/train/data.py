"""Keyword-spotting data: the Google Speech Commands v0.02 folder layout, and a synthetic set
in the same spirit rendered with espeak-ng.

Both give a `Dataset`: 1 s clips of 16 kHz int16 audio, a label index into `LABELS`
(silence, unknown, then the ten keywords), a split (train / validation / test) and a speaker
id. Splits are by speaker, so test speakers are never heard in training.

The synthetic generator is byte-reproducible: every clip draws from its own random stream
seeded by (seed, label, index), so the result does not depend on the number of worker
processes or their scheduling; speakers are assigned to splits by a seeded shuffle.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any

import numpy as np

from tinydeploy.errors import InputDataError, ToolchainError
from tinydeploy.kws.labels import KEYWORDS, LABELS, SILENCE, UNKNOWN
from tinydeploy.kws.wav import (
    SAMPLE_RATE,
    decode_wav,
    fit_clip,
    read_wav,
    resample,
    write_wav,
)

CLIP = SAMPLE_RATE   # samples per clip (1 s)


class Split(IntEnum):
    TRAIN = 0
    VALIDATION = 1
    TEST = 2


@dataclass(frozen=True)
class Dataset:
    """Clips and their labels. Invariant: all arrays have the same first dimension."""

    audio: np.ndarray        # int16 [n, CLIP]
    labels: np.ndarray       # int32 [n], index into LABELS
    split: np.ndarray        # int8 [n], a Split value
    speakers: np.ndarray     # str [n]

    def __post_init__(self) -> None:
        n = self.audio.shape[0]
        if not (self.labels.shape[0] == self.split.shape[0] == self.speakers.shape[0] == n):
            raise InputDataError("dataset arrays have different lengths")

    def __len__(self) -> int:
        return int(self.audio.shape[0])

    def subset(self, split: Split) -> Dataset:
        return self.take(self.split == int(split))

    def take(self, mask: np.ndarray) -> Dataset:
        """The clips where ``mask`` (bool [n]) is true, in order."""
        return Dataset(self.audio[mask], self.labels[mask], self.split[mask],
                       self.speakers[mask])

    @classmethod
    def concat(cls, parts: Sequence[Dataset]) -> Dataset:
        """The clips of every part, one part after the other."""
        return cls(*(np.concatenate([getattr(d, f) for d in parts])
                     for f in ("audio", "labels", "split", "speakers")))

    def counts(self) -> dict[str, dict[str, int]]:
        """{split: {label: count}} for reports."""
        out: dict[str, dict[str, int]] = {}
        for s in Split:
            m = self.split == int(s)
            out[s.name.lower()] = {LABELS[i]: int(((self.labels == i) & m).sum())
                                   for i in range(len(LABELS))}
        return out

    def save(self, path: Path) -> None:
        np.savez(path, audio=self.audio, labels=self.labels, split=self.split,
                 speakers=self.speakers.astype("U"))

    @classmethod
    def load(cls, path: Path) -> Dataset:
        try:
            z = np.load(path, allow_pickle=False)
            return cls(z["audio"], z["labels"], z["split"], z["speakers"])
        except (OSError, KeyError, ValueError) as err:
            raise InputDataError(f"{path}: not a tinydeploy KWS dataset ({err})",
                                 hint="make one with `tinydeploy kws data`") from err


# ---- Google Speech Commands v0.02 -----------------------------------------------------------

def _speaker_of(name: str) -> str:
    return name.split("_nohash_")[0]


MAX_NUM_WAVS_PER_CLASS = 2 ** 27 - 1   # the constant of the dataset's own split rule


def which_set(filename: str, validation_pct: float = 10.0, testing_pct: float = 10.0) -> Split:
    """The Speech Commands split of a clip, by the dataset's own rule (the same for v0.01
    and v0.02): SHA-1 of the speaker part of the file name (everything before ``_nohash_``),
    as an integer modulo 2**27, scaled to a percentage; below ``validation_pct`` is
    validation, below ``validation_pct + testing_pct`` is test, the rest is training.

    Depends on the speaker only, so every clip of one speaker lands in the same split,
    whichever repository or dataset version it comes from."""
    speaker = _speaker_of(Path(filename).name)
    h = int(hashlib.sha1(speaker.encode("utf-8")).hexdigest(), 16)
    pct = (h % (MAX_NUM_WAVS_PER_CLASS + 1)) * (100.0 / MAX_NUM_WAVS_PER_CLASS)
    if pct < validation_pct:
        return Split.VALIDATION
    if pct < validation_pct + testing_pct:
        return Split.TEST
    return Split.TRAIN


def _hash_split(speaker: str, validation_pct: float = 10.0, testing_pct: float = 10.0) -> Split:
    """Split for files not named in the lists: the dataset's speaker-hash rule."""
    return which_set(f"{speaker}_nohash_0.wav", validation_pct, testing_pct)


def _read_list(path: Path) -> set[str]:
    if not path.exists():
        return set()
    return {line.strip() for line in path.read_text().splitlines() if line.strip()}


def load_speech_commands(root: str | Path, *, unknown_fraction: float = 0.1,
                         silence_fraction: float = 0.1, seed: int = 0,
                         max_per_word: int | None = None) -> Dataset:
    """Load a Speech Commands v0.02 tree: one folder per word, ``_background_noise_/``,
    ``validation_list.txt`` and ``testing_list.txt`` (paths relative to ``root``; files in
    neither list are training files; without lists the split is a hash of the speaker).

    Keyword folders give their label; every other word folder gives UNKNOWN, subsampled per
    split to ``unknown_fraction`` of that split's clips; SILENCE clips (``silence_fraction``)
    are random 1 s slices of the background-noise files at a random gain (all zeros when
    there is no noise). Clips shorter than 1 s are zero-padded. Deterministic for a seed.
    """
    root = Path(root)
    if not root.is_dir():
        raise InputDataError(f"{root}: not a directory", hint="point at the folder that holds "
                             "yes/, no/, ..., _background_noise_/")
    val, test = _read_list(root / "validation_list.txt"), _read_list(root / "testing_list.txt")
    words = sorted(d.name for d in root.iterdir() if d.is_dir() and not d.name.startswith("_"))
    missing = [k for k in KEYWORDS if k not in words]
    if missing:
        raise InputDataError(f"{root}: keyword folders missing: {', '.join(missing)}",
                             hint="a Speech Commands tree has one folder per word")
    rng = np.random.default_rng(seed)
    entries: list[tuple[str, int, Split]] = []       # (relative path, label, split)
    unknown: list[tuple[str, int, Split]] = []
    for w in words:
        files = sorted(p.name for p in (root / w).glob("*.wav"))
        if max_per_word is not None:
            files = files[:max_per_word]
        label = LABELS.index(w) if w in KEYWORDS else LABELS.index(UNKNOWN)
        for f in files:
            rel = f"{w}/{f}"
            split = (Split.VALIDATION if rel in val else Split.TEST if rel in test else
                     Split.TRAIN if (val or test) else _hash_split(_speaker_of(f)))
            (entries if w in KEYWORDS else unknown).append((rel, label, split))
    chosen = list(entries)
    for s in Split:
        n_kw = sum(1 for e in entries if e[2] is s)
        pool = [e for e in unknown if e[2] is s]
        want = min(len(pool), int(round(n_kw * unknown_fraction / (1 - unknown_fraction
                                                                    - silence_fraction))))
        if want:
            idx = rng.choice(len(pool), size=want, replace=False)
            chosen.extend(pool[i] for i in sorted(idx))
    audio, labels, splits, speakers = [], [], [], []
    for rel, label, split in chosen:
        audio.append(fit_clip(read_wav(root / rel)))
        labels.append(label)
        splits.append(int(split))
        speakers.append(_speaker_of(Path(rel).name))
    noise = [read_wav(p) for p in sorted((root / "_background_noise_").glob("*.wav"))]
    for s in Split:
        n_s = sum(1 for c in chosen if c[2] is s)
        n_sil = int(round(n_s * silence_fraction / (1 - silence_fraction)))
        for i in range(n_sil):
            audio.append(_noise_slice(noise, rng))
            labels.append(LABELS.index(SILENCE))
            splits.append(int(s))
            speakers.append(f"silence-{int(s)}-{i}")
    return Dataset(np.stack(audio).astype(np.int16) if audio else np.zeros((0, CLIP), np.int16),
                   np.asarray(labels, np.int32), np.asarray(splits, np.int8),
                   np.asarray(speakers, dtype="U"))


@dataclass(frozen=True)
class RealClip:
    """One real recording: where it is, its word folder, label, speaker and split."""

    path: Path
    word: str
    label: int
    speaker: str
    split: Split
    source: str = ""          # the repository (owner/name) or folder it was taken from


def source_of(root: Path) -> str:
    """The ``repository:`` line of ``root/PROVENANCE`` (written by the collection script),
    else the folder's name."""
    prov = root / "PROVENANCE"
    if prov.exists():
        for line in prov.read_text().splitlines():
            if line.startswith("repository:"):
                return line.split(":", 1)[1].strip()
    return root.name


@dataclass(frozen=True)
class RealCorpus:
    """Real clips gathered from one or more Speech Commands-layout folders.

    Invariant: no clip of a test-split speaker is in ``clips`` (they are only counted in
    ``excluded``), so nothing built from a corpus can train, tune or pick thresholds on them.
    Clips are unique by (word, file name) and by content (SHA-256 of the file): the same clip
    found in two folders, or under two names, is kept once (the first folder wins). Clips
    named in the dataset's ``testing_list.txt`` (when given) are left out as well, whatever
    their speaker. ``noise`` holds the ``_background_noise_`` recordings, sorted
    by name, deduplicated the same way. ``speech`` holds 1 s windows of other real speech
    (`scan_speech_windows`): continuous speech whose transcript names no keyword, for the
    "unknown" class; its speakers are not the dataset's, so it has no split."""

    roots: tuple[Path, ...]
    clips: tuple[RealClip, ...]
    excluded: dict[str, int]              # word -> test-split clips left out
    duplicates: int
    noise: tuple[Path, ...]
    listed_test: int = 0                  # clips left out because testing_list.txt names them
    speech: tuple[Path, ...] = ()         # 1 s windows of other speech (no keyword in them)

    def counts(self) -> dict[str, dict[str, int]]:
        """{word: {"train": n, "validation": n, "test_excluded": n}}, words sorted."""
        words = sorted({c.word for c in self.clips} | set(self.excluded))
        out = {}
        for w in words:
            out[w] = {"train": sum(1 for c in self.clips
                                   if c.word == w and c.split is Split.TRAIN),
                      "validation": sum(1 for c in self.clips
                                        if c.word == w and c.split is Split.VALIDATION),
                      "test_excluded": self.excluded.get(w, 0)}
        return out

    def label_counts(self, split: Split) -> dict[str, int]:
        return {lab: sum(1 for c in self.clips if c.split is split and LABELS[c.label] == lab)
                for lab in LABELS}

    def file_list_sha256(self) -> str:
        """sha256 of the sorted 'word/file' names of the clips used (one per line), then of
        the speech windows' 'speech/<folder>/<file>' names when there are any."""
        names = sorted(f"{c.word}/{c.path.name}" for c in self.clips)
        names += sorted(f"speech/{p.parent.name}/{p.name}" for p in self.speech)
        return hashlib.sha256("".join(f"{n}\n" for n in names).encode()).hexdigest()

    def select(self, split: Split) -> tuple[RealClip, ...]:
        return tuple(c for c in self.clips if c.split is split)

    def clip_list(self, split: Split = Split.TRAIN,
                  clips: Sequence[RealClip] | None = None) -> str:
        """One line per clip of ``split`` (or of ``clips``, those trained on when some are
        left out): ``word/file<TAB>source``, sorted."""
        chosen = self.select(split) if clips is None else clips
        return "".join(f"{c.word}/{c.path.name}\t{c.source}\n" for c in
                       sorted(chosen, key=lambda c: (c.word, c.path.name)))


def read_name_list(path: str | Path) -> frozenset[str]:
    """A Speech Commands list file (``testing_list.txt``): one ``word/file.wav`` a line."""
    p = Path(path)
    if not p.is_file():
        raise InputDataError(f"{p}: no such list file",
                             hint="the dataset's testing_list.txt (word/file.wav per line)")
    return frozenset(line.strip() for line in p.read_text().splitlines() if line.strip())


def scan_speech_commands(roots: Sequence[str | Path], testing_list: str | Path | None = None
                         ) -> RealCorpus:
    """Find the real clips in Speech Commands-layout folders (``<word>/*.wav``,
    ``_background_noise_/*.wav``). A folder may hold any subset of the words; keyword
    folders give their label, every other word is UNKNOWN. The split of every clip is the
    dataset's speaker-hash rule (`which_set`), so test-split speakers are left out whatever
    list files a folder carries; clips that ``testing_list`` names are left out too. Every
    file is read once to deduplicate by content."""
    listed = read_name_list(testing_list) if testing_list is not None else frozenset()
    n_listed = 0
    hashes: set[str] = set()
    paths = [Path(r) for r in roots]
    for r in paths:
        if not r.is_dir():
            raise InputDataError(f"{r}: not a directory", hint="point at a folder that holds "
                                 "<word>/<speaker>_nohash_<n>.wav files")
    seen: set[tuple[str, str]] = set()
    clips: list[RealClip] = []
    excluded: dict[str, int] = {}
    dup = 0
    noise: dict[str, Path] = {}
    for root in paths:
        src = source_of(root)
        for d in sorted(q for q in root.iterdir() if q.is_dir()):
            if d.name == "_background_noise_":
                for f in sorted(d.glob("*.wav")):
                    noise.setdefault(f.name, f)
                continue
            if d.name.startswith((".", "_")):
                continue
            word = d.name.lower()
            label = LABELS.index(word) if word in KEYWORDS else LABELS.index(UNKNOWN)
            for f in sorted(d.glob("*.wav")):
                if "_nohash_" not in f.name:
                    continue
                key = (word, f.name)
                if key in seen:
                    dup += 1
                    continue
                seen.add(key)
                digest = hashlib.sha256(f.read_bytes()).hexdigest()
                if digest in hashes:
                    dup += 1
                    continue
                hashes.add(digest)
                split = which_set(f.name)
                if split is Split.TEST:
                    excluded[word] = excluded.get(word, 0) + 1
                    continue
                if f"{word}/{f.name}" in listed:
                    n_listed += 1
                    continue
                clips.append(RealClip(f, word, label, _speaker_of(f.name), split, src))
    if not clips:
        raise InputDataError(f"no Speech Commands clips (<word>/<speaker>_nohash_<n>.wav) "
                             f"outside the test split in {', '.join(map(str, paths))}",
                             hint="each folder holds one sub-folder per word")
    return RealCorpus(tuple(paths), tuple(clips), excluded, dup,
                      tuple(noise[k] for k in sorted(noise)), n_listed)


def scan_speech_windows(roots: Sequence[str | Path]) -> tuple[Path, ...]:
    """The 1 s windows of other speech under ``roots`` (``*.wav`` at any depth, as
    ``examples/kws/collect_speech.py`` writes them), sorted, each content once."""
    out: dict[str, Path] = {}
    for r in map(Path, roots):
        if not r.is_dir():
            raise InputDataError(f"{r}: not a directory", hint="point at a folder written by "
                                 "examples/kws/collect_speech.py")
        for f in sorted(r.rglob("*.wav")):
            out.setdefault(hashlib.sha256(f.read_bytes()).hexdigest(), f)
    if not out:
        raise InputDataError(f"no speech windows (*.wav) in {', '.join(map(str, roots))}",
                             hint="examples/kws/collect_speech.py writes them")
    return tuple(sorted(out.values()))


def read_clip(path: Path) -> np.ndarray:
    """A real clip as exactly 1 s of int16 (shorter clips zero-padded at the end)."""
    return fit_clip(read_wav(path))


def split_noise(noise: np.ndarray, split: Split, held_out: float = 0.2) -> np.ndarray:
    """The part of one background recording that belongs to ``split``: the first
    ``1 - held_out`` of it is for training, the rest for validation (the recordings have
    no speaker, so they are split in time; TEST gets nothing)."""
    cut = int(noise.size * (1 - held_out))
    if split is Split.TRAIN:
        return noise[:cut]
    if split is Split.VALIDATION:
        return noise[cut:]
    return noise[:0]


def _noise_slice(noise: Sequence[np.ndarray], rng: np.random.Generator) -> np.ndarray:
    usable = [n for n in noise if n.size >= CLIP]
    if not usable:
        return np.zeros(CLIP, np.int16)
    src = usable[int(rng.integers(len(usable)))]
    start = int(rng.integers(0, src.size - CLIP + 1))
    gain = rng.uniform(0.0, 1.0)
    return np.clip(src[start:start + CLIP] * gain, -32768, 32767).astype(np.int16)


# ---- synthetic speech commands with espeak-ng -------------------------------------------------

VOICES: tuple[str, ...] = ("en", "en-us", "en-gb-scotland", "en-gb-x-gbclan", "en-gb-x-rp",
                           "en-gb-x-gbcwmd", "en-029", "en-us-nyc")
UNKNOWN_WORDS: tuple[str, ...] = (
    "bed", "bird", "cat", "dog", "eight", "five", "four", "happy", "house", "marvin", "nine",
    "one", "seven", "sheila", "six", "three", "tree", "two", "wow", "zero", "backward",
    "forward", "follow", "learn", "visual", "yellow", "note", "open", "dune", "lift", "write",
    "stock", "goal", "yet", "know", "cup", "town", "often",
)


@dataclass(frozen=True)
class SynthConfig:
    """The synthetic set: ``per_class`` clips for each of the 12 labels."""

    per_class: int = 1000
    seed: int = 0                 # clip renders (speaker choice, speed, pitch, noise, ...)
    split_seed: int = 0           # which speakers are train / validation / test: keep it
    #                               fixed to render more clips of the same unseen speakers
    fractions: tuple[float, float, float] = (0.8, 0.1, 0.1)   # of speakers: train/val/test
    speed: tuple[int, int] = (110, 210)       # espeak-ng -s, words per minute
    pitch: tuple[int, int] = (15, 85)         # espeak-ng -p
    snr_db: tuple[float, float] = (5.0, 35.0)
    clean_fraction: float = 0.2               # clips without added noise
    peak_dbfs: tuple[float, float] = (-24.0, -1.0)
    workers: int = 2
    # share of training clips spoken by the flite / festival voices (when installed and
    # passed as ``extra_speakers``); 0 keeps the espeak-ng-only set of earlier releases
    extra_fraction: float = 0.0


def espeak_variants() -> tuple[str, ...]:
    """Voice variants espeak-ng offers, sorted (names with spaces cannot be selected)."""
    if shutil.which("espeak-ng") is None:
        raise ToolchainError("espeak-ng not found; it renders the synthetic speech set",
                             hint="apt-get install espeak-ng")
    out = subprocess.run(["espeak-ng", "--voices=variant"], capture_output=True, text=True,
                         check=True).stdout.splitlines()[1:]
    names = set()
    for line in out:
        parts = line.split()
        if len(parts) >= 5 and parts[4].startswith("!v/"):
            name = parts[4][3:]
            if " " not in name and name.isprintable():
                names.add(name)
    return tuple(sorted(names))


def synthetic_speakers(variants: Sequence[str] | None = None) -> tuple[str, ...]:
    """'voice+variant' for every usable pair, sorted."""
    variants = espeak_variants() if variants is None else variants
    return tuple(sorted(f"{v}+{x}" for v in VOICES for x in variants))


def split_speakers(speakers: Sequence[str], cfg: SynthConfig) -> dict[Split, tuple[str, ...]]:
    order = sorted(speakers)
    perm = np.random.default_rng([cfg.split_seed, 7]).permutation(len(order))
    shuffled = [order[i] for i in perm]
    n_val = max(1, int(round(len(order) * cfg.fractions[1])))
    n_test = max(1, int(round(len(order) * cfg.fractions[2])))
    return {Split.VALIDATION: tuple(sorted(shuffled[:n_val])),
            Split.TEST: tuple(sorted(shuffled[n_val:n_val + n_test])),
            Split.TRAIN: tuple(sorted(shuffled[n_val + n_test:]))}


# Other English synthesisers, as more distinct "speakers": Debian's flite (fast, one process
# per word) and festival (slow to start, so every word is rendered once per voice and speed
# in one batch, see `festival_bank`). Their speaker names are "flite:<voice>" and
# "festival:<voice>"; all of them are training speakers (there are too few to split).
FLITE_VOICES: tuple[str, ...] = ("awb", "kal", "kal16", "rms", "slt")
FESTIVAL_VOICES: tuple[str, ...] = ("cmu_us_slt_arctic_hts", "kal_diphone", "ked_diphone")
FESTIVAL_STRETCH: tuple[float, ...] = (0.8, 1.0, 1.25)
_FESTIVAL_BANK: dict[tuple[str, str, float], np.ndarray] = {}


def extra_speakers() -> tuple[str, ...]:
    """The flite and festival voices installed here, as speaker names (sorted)."""
    out: list[str] = []
    if shutil.which("flite") is not None:
        listed = subprocess.run(["flite", "-lv"], capture_output=True, text=True).stdout
        have = set(listed.replace("Voices available:", "").split())
        out += [f"flite:{v}" for v in FLITE_VOICES if v in have]
    if shutil.which("festival") is not None:
        for v in FESTIVAL_VOICES:
            if list(Path("/usr/share/festival/voices").glob(f"*/{v}")):
                out.append(f"festival:{v}")
    return tuple(sorted(out))


def _trim(x: np.ndarray) -> np.ndarray:
    loud = np.nonzero(np.abs(x) > 0.02 * max(1.0, np.abs(x).max()))[0]
    if loud.size:
        x = x[max(0, loud[0] - 160):loud[-1] + 160]
    return x


def festival_bank(voices: Sequence[str], words: Sequence[str]
                  ) -> dict[tuple[str, str, float], np.ndarray]:
    """Every word in every festival voice at every `FESTIVAL_STRETCH`, one festival
    process per voice: {(voice, word, stretch): float64 samples at 16 kHz, trimmed}."""
    bank: dict[tuple[str, str, float], np.ndarray] = {}
    if not voices:
        return bank
    if shutil.which("festival") is None:
        raise ToolchainError("festival not found; it renders part of the synthetic set",
                             hint="apt-get install festival festvox-kallpc16k")
    import tempfile

    with tempfile.TemporaryDirectory(prefix="td-festival-") as tmp:
        for v in sorted(voices):
            lines = [f"(voice_{v})"]
            jobs = []
            for si, st in enumerate(FESTIVAL_STRETCH):
                lines.append(f"(Parameter.set 'Duration_Stretch {st})")
                for wi, w in enumerate(words):
                    out = f"{tmp}/{v}-{si}-{wi}.wav"
                    lines.append(f'(utt.save.wave (utt.synth (Utterance Text "{w}")) '
                                 f'"{out}" \'riff)')
                    jobs.append((w, st, out))
            script = Path(tmp) / f"{v}.scm"
            script.write_text("\n".join(lines) + "\n")
            proc = subprocess.run(["festival", "--batch", str(script)], capture_output=True,
                                  text=True)
            for w, st, out in jobs:
                if not Path(out).exists():
                    raise ToolchainError(f"festival voice '{v}' did not render '{w}': "
                                         f"{proc.stderr.strip()[-300:]}")
                bank[(v, w, st)] = _trim(read_wav(out).astype(np.float64))
    return bank


def _set_festival_bank(bank: dict[tuple[str, str, float], np.ndarray]) -> None:
    _FESTIVAL_BANK.clear()
    _FESTIVAL_BANK.update(bank)


def _render_extra(word: str, speaker: str, speed: int, pitch: int) -> np.ndarray:
    engine, voice = speaker.split(":", 1)
    stretch = 160.0 / speed
    if engine == "festival":
        st = min(FESTIVAL_STRETCH, key=lambda s: abs(s - stretch))
        x = _FESTIVAL_BANK.get((voice, word, st))
        if x is None:
            raise ToolchainError(f"festival voice '{voice}': '{word}' was not pre-rendered")
    else:
        import tempfile

        with tempfile.NamedTemporaryFile(suffix=".wav") as f:
            proc = subprocess.run(["flite", "-voice", voice, "--setf",
                                   f"duration_stretch={stretch:.3f}", "-t", word, "-o",
                                   f.name], capture_output=True)
            if proc.returncode != 0:
                raise ToolchainError(f"flite failed for word '{word}' voice '{voice}': "
                                     f"{proc.stderr.decode(errors='replace').strip()}")
            x = _trim(read_wav(f.name).astype(np.float64))
    # pitch (15..85, as espeak-ng's -p) by resampling: +-12 % in frequency (and length)
    factor = 2.0 ** ((pitch - 50) / 35.0 * 0.17)
    return resample(x, SAMPLE_RATE, int(round(SAMPLE_RATE / factor)))


def render_word(word: str, speaker: str, speed: int, pitch: int) -> np.ndarray:
    """The rendering of ``word`` at 16 kHz by espeak-ng (or flite / festival for speakers
    named "flite:..." / "festival:..."), leading/trailing silence trimmed."""
    if speaker.startswith(("flite:", "festival:")):
        return _render_extra(word, speaker, speed, pitch)
    proc = subprocess.run(["espeak-ng", "-v", speaker, "-s", str(speed), "-p", str(pitch),
                           "--stdout", word], capture_output=True)
    if proc.returncode != 0 or not proc.stdout:
        raise ToolchainError(f"espeak-ng failed for word '{word}' voice '{speaker}': "
                             f"{proc.stderr.decode(errors='replace').strip()}")
    x = decode_wav(proc.stdout, f"espeak-ng {speaker} '{word}'").astype(np.float64)
    loud = np.nonzero(np.abs(x) > 0.02 * max(1.0, np.abs(x).max()))[0]
    if loud.size:
        x = x[max(0, loud[0] - 160):loud[-1] + 160]
    return x


def make_noise(rng: np.random.Generator, n: int = CLIP) -> np.ndarray:
    """One of several procedural background noises, unit RMS: white, pink, brown, mains hum
    with harmonics, band-limited rumble, or a mix."""
    kind = int(rng.integers(6))
    if kind == 0:
        x = rng.normal(size=n)
    elif kind in (1, 2, 4):
        spec = np.fft.rfft(rng.normal(size=n))
        f = np.maximum(np.arange(spec.size), 1.0)
        if kind == 1:
            spec /= np.sqrt(f)
        elif kind == 2:
            spec /= f
        else:
            lo, hi = sorted(rng.uniform(50, 6000, 2))
            band = (f * SAMPLE_RATE / n >= lo) & (f * SAMPLE_RATE / n <= hi + 100)
            spec *= band
        x = np.fft.irfft(spec, n)
    elif kind == 3:
        t = np.arange(n) / SAMPLE_RATE
        base = rng.choice([50.0, 60.0]) * rng.uniform(0.98, 1.02)
        x = sum(rng.uniform(0.2, 1) * np.sin(2 * np.pi * base * h * t + rng.uniform(0, 6.3))
                for h in range(1, 6)) + 0.1 * rng.normal(size=n)
    else:
        x = rng.normal(size=n) + 3 * np.cumsum(rng.normal(size=n)) / np.sqrt(n)
        x = x - np.convolve(x, np.ones(64) / 64, mode="same")
    x = x - x.mean()
    return x / max(1e-9, float(np.sqrt(np.mean(x ** 2))))


def _clip_job(args: tuple[Any, ...]) -> tuple[np.ndarray, str]:
    cfg, label, index, speakers = args[:4]
    extras: tuple[str, ...] = args[4] if len(args) > 4 else ()
    vocab: tuple[str, ...] = args[5] if len(args) > 5 else UNKNOWN_WORDS
    rng = np.random.default_rng([cfg.seed, label, index])
    speaker = speakers[int(rng.integers(len(speakers)))]
    if extras and rng.random() < cfg.extra_fraction:
        speaker = extras[int(rng.integers(len(extras)))]
    name = LABELS[label]
    noisy = rng.random() >= cfg.clean_fraction
    if name == SILENCE:
        level = 10 ** (rng.uniform(-80, -25) / 20) * 32768
        x = make_noise(rng) * level if rng.random() > 0.05 else np.zeros(CLIP)
        return np.clip(np.round(x), -32768, 32767).astype(np.int16), f"silence-{index}"
    word = vocab[int(rng.integers(len(vocab)))] if name == UNKNOWN else name
    speed = int(rng.integers(cfg.speed[0], cfg.speed[1] + 1))
    pitch = int(rng.integers(cfg.pitch[0], cfg.pitch[1] + 1))
    w = render_word(word, speaker, speed, pitch)
    if w.size > CLIP:
        w = fit_clip(w)
    x = np.zeros(CLIP)
    start = int(rng.integers(0, CLIP - w.size + 1))
    x[start:start + w.size] = w
    peak = 10 ** (rng.uniform(*cfg.peak_dbfs) / 20) * 32767
    x *= peak / max(1.0, np.abs(x).max())
    if noisy:
        rms = np.sqrt(np.mean(w ** 2)) * peak / max(1.0, np.abs(w).max())
        snr = rng.uniform(*cfg.snr_db)
        x += make_noise(rng) * rms / 10 ** (snr / 20)
    return np.clip(np.round(x), -32768, 32767).astype(np.int16), speaker


def _nice_init() -> None:
    try:
        os.nice(10)
    except OSError:
        pass


def _jobs(cfg: SynthConfig, splits: dict[Split, tuple[str, ...]],
          extras: tuple[str, ...] = ()) -> Iterator[tuple[Split, tuple[Any, ...]]]:
    cuts = np.cumsum(cfg.fractions) / sum(cfg.fractions)
    for label in range(len(LABELS)):
        for i in range(cfg.per_class):
            r = (i + 0.5) / cfg.per_class
            split = (Split.TRAIN if r < cuts[0] else Split.VALIDATION if r < cuts[1]
                     else Split.TEST)
            if extras and split is Split.TRAIN:
                yield split, (cfg, label, i, splits[split], extras)
            else:
                yield split, (cfg, label, i, splits[split])


def generate_synthetic(cfg: SynthConfig, speakers: Sequence[str] | None = None,
                       extras: Sequence[str] = ()) -> Dataset:
    """Render ``cfg.per_class`` clips per label with espeak-ng on ``cfg.workers`` processes;
    with ``extras`` (flite / festival speakers, see `extra_speakers`) and
    ``cfg.extra_fraction > 0``, that share of the training clips is spoken by them.

    Byte-reproducible for a given seed, speaker list and synthesiser versions."""
    speakers = synthetic_speakers() if speakers is None else tuple(sorted(speakers))
    if len(speakers) < 3:
        raise InputDataError(f"synthetic set needs >= 3 speakers to split by speaker, got "
                             f"{len(speakers)}")
    ex = tuple(sorted(extras)) if cfg.extra_fraction > 0 else ()
    splits = split_speakers(speakers, cfg)
    plan = list(_jobs(cfg, splits, ex))
    fest = [e.split(":", 1)[1] for e in ex if e.startswith("festival:")]
    bank = festival_bank(fest, sorted({*KEYWORDS, *UNKNOWN_WORDS})) if fest else {}
    if cfg.workers > 1:
        with ProcessPoolExecutor(cfg.workers, initializer=_worker_init,
                                 initargs=(bank,)) as pool:
            results = list(pool.map(_clip_job, [j for _, j in plan], chunksize=32))
    else:
        _set_festival_bank(bank)
        results = [_clip_job(j) for _, j in plan]
    return Dataset(np.stack([r[0] for r in results]),
                   np.asarray([j[1] for _, j in plan], np.int32),
                   np.asarray([int(s) for s, _ in plan], np.int8),
                   np.asarray([r[1] for r in results], dtype="U"))


def generate_other_words(cfg: SynthConfig, words: Sequence[str], count: int,
                         speakers: Sequence[str] | None = None, extras: Sequence[str] = (),
                         festival_words: int = 0) -> Dataset:
    """``count`` synthetic UNKNOWN training clips, each a word drawn from ``words``, spoken
    by the training-split espeak-ng speakers of ``cfg`` or (``cfg.extra_fraction`` of them)
    by the flite voices among ``extras``; every fourth clip is one of the first
    ``festival_words`` words instead, spoken by a festival voice at the same share (festival
    renders each of its words once per voice and stretch, so it gets the short head of the
    list). Rendered like `generate_synthetic`'s clips
    (speed, pitch, time shift, level, noise), from the stream ``cfg.seed``."""
    vocab = tuple(dict.fromkeys(w.strip().lower() for w in words if w.strip()))
    bad = [w for w in vocab if w in KEYWORDS or not w.isalpha()]
    if bad or not vocab:
        raise InputDataError(f"other-word list: {len(vocab)} words; keywords or non-words "
                             f"in it: {', '.join(bad[:8])}", hint="one plain word per line, "
                             "no keywords")
    speakers = synthetic_speakers() if speakers is None else tuple(sorted(speakers))
    train = split_speakers(speakers, cfg)[Split.TRAIN]
    fest = [e for e in extras if e.startswith("festival:")]
    flite = tuple(sorted(e for e in extras if not e.startswith("festival:")))
    head = vocab[:festival_words] if fest else ()
    label = LABELS.index(UNKNOWN)
    jobs: list[tuple[Any, ...]] = []
    for i in range(count):
        if head and i % 4 == 3:          # every fourth clip: a festival voice, a head word
            jobs.append((cfg, label, i, train, tuple(sorted(fest)), head))
        else:
            jobs.append((cfg, label, i, train, flite, vocab))
    bank = festival_bank([e.split(":", 1)[1] for e in fest], head) if head else {}
    if cfg.workers > 1:
        with ProcessPoolExecutor(cfg.workers, initializer=_worker_init,
                                 initargs=(bank,)) as pool:
            results = list(pool.map(_clip_job, jobs, chunksize=32))
    else:
        _set_festival_bank(bank)
        results = [_clip_job(j) for j in jobs]
    return Dataset(np.stack([r[0] for r in results]), np.full(count, label, np.int32),
                   np.full(count, int(Split.TRAIN), np.int8),
                   np.asarray([r[1] for r in results], dtype="U"))


def _worker_init(bank: dict[tuple[str, str, float], np.ndarray]) -> None:
    _nice_init()
    _set_festival_bank(bank)


def export_speech_commands(ds: Dataset, root: Path, noise_seconds: int = 30,
                           seed: int = 0) -> None:
    """Write ``ds`` in the Speech Commands folder layout (silence clips become background
    noise files; unknown clips go to an ``unknown`` word folder)."""
    root.mkdir(parents=True, exist_ok=True)
    lists: dict[Split, list[str]] = {Split.VALIDATION: [], Split.TEST: []}
    counter: dict[str, int] = {}
    for i in range(len(ds)):
        name = LABELS[int(ds.labels[i])]
        if name == SILENCE:
            continue
        word = "unknown" if name == UNKNOWN else name
        spk = hashlib.sha1(str(ds.speakers[i]).encode()).hexdigest()[:8]
        k = counter.get(f"{word}/{spk}", 0)
        counter[f"{word}/{spk}"] = k + 1
        rel = f"{word}/{spk}_nohash_{k}.wav"
        (root / word).mkdir(exist_ok=True)
        write_wav(root / rel, ds.audio[i])
        split = Split(int(ds.split[i]))
        if split in lists:
            lists[split].append(rel)
    (root / "validation_list.txt").write_text("".join(f"{r}\n" for r in lists[Split.VALIDATION]))
    (root / "testing_list.txt").write_text("".join(f"{r}\n" for r in lists[Split.TEST]))
    (root / "_background_noise_").mkdir(exist_ok=True)
    rng = np.random.default_rng(seed)
    noise = make_noise(rng, noise_seconds * SAMPLE_RATE) * 3000
    write_wav(root / "_background_noise_" / "noise.wav",
              np.clip(noise, -32768, 32767).astype(np.int16))


def render_unseen_clips(per_class: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``per_class`` clips of every label spoken by the test split's speakers (never heard in
    training), rendered now with render seed ``seed``: (int16 audio [n, CLIP], labels [n])."""
    cfg = SynthConfig(per_class=per_class, seed=seed)
    speakers = split_speakers(synthetic_speakers(), cfg)[Split.TEST]
    audio, labels = [], []
    for lab in range(len(LABELS)):
        for i in range(per_class):
            audio.append(_clip_job((cfg, lab, i, speakers))[0])
            labels.append(lab)
    return np.stack(audio), np.asarray(labels)
