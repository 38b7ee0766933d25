"""The writer lock of an index folder: one writer at a time, and no lock outlives its writer.

The lock is `fcntl.flock` on `DIR/.writer.lock`. The kernel releases a flock when the
process that holds it ends, however it ends (`kill -9`, a crash, a power cut), so a lock
can never be stale. The file's content only names the holder (pid, host, command, time)
for the message a second writer gets; it is rewritten by every writer that takes the lock.

A second writer polls for a bounded time (`wait` seconds), then fails with a StoreError
that names the holder. Readers never take the lock: generations are written beside the
live one and switched to with one atomic rename.

An index folder may be shared (a repository, a network drive), so its lock file is not
trusted: it is opened without following a symbolic link and refused unless it is a regular
file (`open_lock_file`), as a link planted there would otherwise have the writer truncate
whatever file it points to.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from pathlib import Path
from typing import Callable

from glassrag.errors import StoreError
from glassrag.store.safefile import open_lock_file

LOCK_FILE = ".writer.lock"
POLL_SECONDS = 0.1


class WriterLock:
    """Re-entrant within one object: `with lock:` nested in `with lock:` holds it once."""

    def __init__(self, folder: Path, wait: float = 60.0,
                 notify: Callable[[str], None] | None = None) -> None:
        self.path = folder / LOCK_FILE
        self.wait = wait
        self.notify = notify  # told once, with the holder, when this writer has to wait
        self._fd: int | None = None
        self._depth = 0

    def __enter__(self) -> "WriterLock":
        if self._depth == 0:
            self._fd = self._acquire()
        self._depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            fd, self._fd = self._fd, None
            os.ftruncate(fd, 0)  # no holder is named once nobody holds it
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _acquire(self) -> int:
        deadline = time.monotonic() + max(self.wait, 0.0)
        told = False
        fd = self._open()
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if self._still_linked(fd):
                    break
                # the holder removed the folder it had created and wrote nothing: start over
                os.close(fd)
                fd = self._open()
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = self.holder(fd)
                    os.close(fd)
                    raise StoreError(
                        f"{self.path.parent} is being written by another glassrag ({holder}); "
                        f"waited {self.wait:g} s",
                        "let it finish and run this again, or wait longer with --wait SECONDS"
                    ) from None
                if not told and self.notify is not None:
                    self.notify(self.holder(fd))
                    told = True
                time.sleep(POLL_SECONDS)
            except BaseException:
                os.close(fd)
                raise
        import socket  # only to write a lock: a question reads an index without one

        me = {"pid": os.getpid(), "host": socket.gethostname(),
              "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]])[:300],
              "since": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode("utf-8", "replace"), 0)
        return fd

    def _open(self) -> int:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(f"{self.path.parent}: cannot take the writer lock ({e.strerror})",
                             "check that the index folder is writable by you") from None
        return open_lock_file(self.path, "writer lock", "check that the index folder is writable by you")

    def _still_linked(self, fd: int) -> bool:
        """The locked file is the one at `path` (not one unlinked, or replaced by a link,
        while this writer waited)."""
        try:
            return os.lstat(self.path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            return False

    def remove_folder_if_unused(self) -> None:
        """While holding the lock: remove the folder when the lock file is all it holds
        (a first write that wrote nothing leaves no folder behind)."""
        folder = self.path.parent
        if self._fd is None or [p.name for p in folder.iterdir()] != [LOCK_FILE]:
            return
        self.path.unlink()
        folder.rmdir()

    def holder(self, fd: int) -> str:
        """Who holds the lock, as the holder wrote it in the file open as `fd`:
        `pid 123 on host: glassrag ingest …, since …`."""
        try:
            data = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
            return f"pid {data['pid']} on {data['host']}: {data['command']}, since {data['since']}"
        except (OSError, ValueError, KeyError, TypeError):
            return "a writer that has not yet said who it is"

