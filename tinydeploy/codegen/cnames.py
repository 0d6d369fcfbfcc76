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


# Characters a name keeps in C strings and comments: enough for TensorFlow's names
# ("sequential/conv2d/Conv2D;bias:0"), nothing that ends a comment or a string ("*/", '"'),
# escapes ("\\"), starts a trigraph ("??="), a preprocessor line ("#") or a printf
# conversion ("%"), or is outside printable ASCII. Everything else becomes "_".
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                  " _-./:;,=+()[]<>@!&|^~")


def _safe(text: str, max_len: int) -> str:
    return "".join(ch if ch in _SAFE else "_" for ch in text[:max_len])


def c_string(text: str, max_len: int = 64) -> str:
    """The body of a C string literal (without quotes): only `_SAFE` characters, so it needs
    no escapes and cannot be taken for a format, a trigraph or a comment."""
    return _safe(text, max_len)


def c_comment(text: str, max_len: int = 80) -> str:
    """Text safe inside a /* */ comment on one line (`_SAFE` characters; '/' never next to
    '*' because '*' is not among them)."""
    return _safe(text, max_len)
