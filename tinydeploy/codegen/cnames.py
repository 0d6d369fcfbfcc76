"""Making names from a model file safe for C.

A model file is untrusted: tensor and op names can contain quotes, backslashes, comment
terminators or non-ASCII. They only ever reach C through these functions.
"""

from __future__ import annotations

import re

_IDENT_BAD = re.compile(r"[^A-Za-z0-9_]")


def c_identifier(name: str, prefix: str = "t") -> str:
    """A valid C identifier derived from ``name`` (never starting with a digit, never empty)."""
    s = _IDENT_BAD.sub("_", name).strip("_") or prefix
    if s[0].isdigit():
        s = f"{prefix}_{s}"
    return s[:64]


def c_string(text: str, max_len: int = 64) -> str:
    """The body of a C string literal (without quotes): printable ASCII, escaped."""
    out = []
    for ch in text[:max_len]:
        if ch in "\\\"":
            out.append("\\" + ch)
        elif " " <= ch <= "~" and ch != "?":  # '?' avoided: no trigraphs
            out.append(ch)
        else:
            out.append("_")
    return "".join(out)


def c_comment(text: str, max_len: int = 80) -> str:
    """Text safe inside a /* */ comment on one line."""
    s = "".join(ch if " " <= ch <= "~" else "_" for ch in text[:max_len])
    return s.replace("*/", "*_").replace("/*", "/_")
