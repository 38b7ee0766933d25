"""The one way the tests start glassrag's command line as a user does: a separate process,
`python -m glassrag.cli ARGS`, with this interpreter (so with the code under test). Every test
that calls it starts a process that imports glassrag afresh (a second or more on a loaded
machine): such tests are marked `slow` (pyproject.toml; `make check` leaves them out).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Mapping

CLI = (sys.executable, "-m", "glassrag.cli")
TIMEOUT_S = 600  # a guard against a hung command, not a measurement: a loaded CI box is slow


def glassrag(*args: object, cwd: Path | None = None, env: Mapping[str, str] | None = None,
             input: str | None = None, timeout: float = TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """`glassrag ARGS` run to its end in `cwd`, its output captured as text; `env`: variables
    set besides the test process's own."""
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, **env} if env else None, input=input, timeout=timeout)


def started(*args: object, cwd: Path | None = None) -> subprocess.Popen[str]:
    """`glassrag ARGS` started and left running (its output on pipes): the caller waits for it."""
    return subprocess.Popen([*CLI, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=cwd)
