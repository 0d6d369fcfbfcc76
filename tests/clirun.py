"""The CLI run in this process for tests (a test helper beside the tests: the CLI sits above
every package tinydeploy.testing may import): exit status, stdout and stderr as text."""

from __future__ import annotations

import contextlib
import io


def run_cli(*argv: str) -> tuple[int, str, str]:
    """``tinydeploy ARGV...`` in-process: (exit status, stdout, stderr); argparse's usage
    errors (SystemExit) become their exit status."""
    from tinydeploy.cli import main

    out, err = io.StringIO(), io.StringIO()
    rc = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(list(argv))
        except SystemExit as e:
            rc = int(e.code or 0)
    return rc, out.getvalue(), err.getvalue()
