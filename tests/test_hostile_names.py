"""Names from a model file are untrusted: none of them may reach the generated C raw.

Every tensor, the subgraph, the model description and the signatures of the firmware-tier
op models are renamed to hostile strings (comment terminators, quotes, backslashes, newlines,
preprocessor lines, trigraphs, non-ASCII, 10 KB). The generated project must compile with
``-Wall -Wextra -Werror`` (``-std=c99``, so trigraphs are live) for the host and a Cortex-M
board, and no generated file may contain any of those strings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from opmodels import OP_MODELS

from tinydeploy.boards import get_board
from tinydeploy.build.firmware import build_firmware
from tinydeploy.model.loader import load_tflite
from tinydeploy.testing.builder import _schema

HOSTILE = [
    "end*/ int evil; /*",
    'quo"te\'s',
    "back\\slash\\",
    "new\nline\r\n#define X 1",
    '#include "/etc/passwd"',
    "??=define TRI ??/",
    "ünïcødé ☃ \u202e gnp.exe",
    "tab\there\x0bvt\x7f",
    "%s%n%x {{ banner }}",
    "L" * 10 * 1024 + "*/",
]
# fragments that are dangerous wherever they appear in generated C
RAW = ["*/ int evil", '"/etc/passwd"', "??=", "??/", "☃", "\u202e", "\\slash\\", "{{ banner",
       "%n%x", "quo\"te", "#define X", "L" * 100]


def _renamed(model: bytes) -> bytes:
    """``model`` with every name replaced by a hostile one (plus hostile signatures)."""
    import flatbuffers

    s = _schema()
    m = s.ModelT.InitFromPackedBuf(bytearray(model), 0)
    sg = m.subgraphs[0]
    for i, t in enumerate(sg.tensors):
        t.name = f"{HOSTILE[i % len(HOSTILE)]}{i}"
    sg.name = HOSTILE[0]
    m.description = HOSTILE[3] + HOSTILE[0]
    sig = s.SignatureDefT()
    sig.signatureKey = HOSTILE[4]
    sig.subgraphIndex = 0

    def tmap(name: str, index: int) -> Any:
        tm = s.TensorMapT()
        tm.name, tm.tensorIndex = name, index
        return tm

    sig.inputs = [tmap(HOSTILE[5] + str(k), i) for k, i in enumerate(sg.inputs)]
    sig.outputs = [tmap(HOSTILE[1] + str(k), i) for k, i in enumerate(sg.outputs)]
    m.signatureDefs = [sig]
    fb = flatbuffers.Builder(1024)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    return bytes(fb.Output())


@pytest.mark.parametrize("board_id", ["host", "mps2-an386"])
@pytest.mark.parametrize("model_name", sorted(OP_MODELS))
def test_hostile_names_compile_with_werror_and_never_appear_raw(
        model_name: str, board_id: str, tmp_path: Path) -> None:
    model = _renamed(OP_MODELS[model_name]())
    g = load_tflite(model)
    assert any("*/" in t.name for t in g.tensors)  # the names did get into the graph
    assert any(len(t.name) > 10_000 for t in g.tensors)
    out = tmp_path / "fw"
    build_firmware(model, get_board(board_id), "validate", out, graph=g,
                   cflags_extra=("-Werror", "-Wall", "-Wextra", "-Wtrigraphs", "-Wcomment"))
    assert (out / "firmware.elf").is_file()
    generated = [p for p in out.rglob("*") if p.is_file()
                 and (p.suffix in (".c", ".h", ".ld", ".ini") or p.name == "Makefile")]
    assert any(p.name == "model.c" for p in generated)
    for p in generated:
        text = p.read_text(encoding="utf-8")
        assert text.isascii() or p.parent.name != "model", f"{p}: non-ASCII in generated C"
        for frag in RAW:
            assert frag not in text, f"{p.relative_to(out)} contains {frag!r} raw"
        if p.parent.name == "model":
            for name in HOSTILE:
                assert name not in text, f"{p.relative_to(out)} contains {name[:40]!r} raw"
