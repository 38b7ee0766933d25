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


def on_terminal(*args: object, cwd: Path | None = None, timeout: float = TIMEOUT_S) -> tuple[int, str, str]:
    """`glassrag ARGS` with its stderr on a real terminal (the far end of a pseudo-terminal, 100
    columns, TERM=xterm) and its stdout on a pipe: (exit code, all the terminal received, stdout).
    A progress bar is drawn on stderr only where stderr is a terminal (cli/common.py)."""
    import fcntl
    import pty
    import select
    import struct
    import termios
    import time

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")} | {"TERM": "xterm"}
    child = subprocess.Popen([*CLI, *map(str, args)], stdout=subprocess.PIPE, stderr=slave, cwd=cwd, env=env)
    os.close(slave)
    got, deadline = b"", time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if select.select([master], [], [], 0.5)[0]:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                got += chunk
            elif child.poll() is not None:
                break
        stdout = child.stdout.read().decode("utf-8") if child.stdout else ""
        code = child.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if child.poll() is None:
            child.kill()
        os.close(master)
    return code, got.decode("utf-8", "replace"), stdout
