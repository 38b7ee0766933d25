"""`glassrag serve --build NAME…`: prepared corpora built beside the server, so that `make demo`
serves the demo first and each prepared corpus appears once it is built (issue 49, item 4: the
demo served after 40 minutes of corpus builds on a busy machine).

The builds run in one child process, `glassrag corpus build NAME…`, one corpus after another
(in parallel they would share the same cores with each other and with the server), its output
in a log file. The child is in the server's process group, so a terminal's Ctrl-C reaches it as
it reaches the server; on Linux it gets SIGTERM when the server's process ends in any way (a
SIGTERM to the server ends it without its clean-up: uvicorn raises the signal again once it has
stopped), elsewhere the server stops it on its way out (`stop`). The server serves each index
once its folder holds a saved run (web/catalog.py `Catalog.pending`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Sequence

from glassrag.prepared import INDEXES, PreparedCorpus, find_corpus

LOG = INDEXES / "build.log"  # where the builds' output goes, beside their indexes


def corpora(names: Sequence[str]) -> list[PreparedCorpus]:
    """The prepared corpora named (ConfigError naming the valid names for a wrong one)."""
    return [find_corpus(name) for name in names]


def start(chosen: Sequence[PreparedCorpus], log: Path = LOG) -> subprocess.Popen[bytes]:
    """`glassrag corpus build` of every corpus of `chosen`, started and left running; its output
    (and any error) goes to `log`."""
    log.parent.mkdir(parents=True, exist_ok=True)
    parent = os.getpid()

    def with_parent() -> None:  # in the child, before it runs the builds
        if sys.platform.startswith("linux"):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the server ended before the line above
            os._exit(0)

    with open(log, "wb") as out:  # the child holds its own copy of the file
        return subprocess.Popen([sys.executable, "-m", "glassrag.cli", "corpus", "build",
                                 *(str(c.folder) for c in chosen)],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                preexec_fn=with_parent)


def stop(child: subprocess.Popen[bytes] | None, wait_s: float = 10.0) -> None:
    """Ends the builds if they still run (the server is stopping)."""
    if child is None or child.poll() is not None:
        return
    child.terminate()
    try:
        child.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
