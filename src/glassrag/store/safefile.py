"""Files glassrag opens for writing in a folder that may be shared (an index folder in a
repository or on a network drive), where an entry found is not trusted: a symbolic link
planted in place of a lock file or a temporary file would otherwise have glassrag create,
truncate or write whatever file it points to.

- `open_lock_file`: a lock file opened without following a link (O_NOFOLLOW) and refused
  unless it is a regular file;
- `replace_file`: a file written through a new temporary file made exclusively (O_EXCL,
  which never follows a link), then renamed over the target (a rename replaces a link
  itself, never what it points to).

No fcntl here, so the lab's lock (which runs unlocked where fcntl does not exist) can use it.
"""

from __future__ import annotations

import os
import stat
import uuid
from pathlib import Path

from glassrag.errors import LockFileError, StoreError


def open_lock_file(path: Path, what: str = "", hint: str = "check that the folder is writable by you") -> int:
    """A descriptor of the lock file `path`, opened for reading and writing and created when
    missing, never through a symbolic link (O_NOFOLLOW) and never blocking on a pipe
    (O_NONBLOCK); a LockFileError when `path` is a link or anything but a regular file, a
    StoreError (`what`: "writer lock"; `hint`) when it cannot be opened."""
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) \
        | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as e:
        if os.path.islink(path):  # O_NOFOLLOW on a link: ELOOP (EMLINK on some BSDs)
            raise LockFileError(path, "a symbolic link") from None
        if os.path.exists(path) and not os.path.isfile(path):
            raise LockFileError(path, "not a regular file") from None
        raise StoreError(f"{path.parent}: cannot take the {what or 'lock ' + path.name} ({e.strerror})",
                         hint) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise LockFileError(path, "not a regular file")
    return fd


def replace_file(target: Path, data: bytes, sync: bool = False) -> None:
    """`target` holds `data`, written to `.NAME.<random>.tmp` beside it, made exclusively (so a
    planted link or file of that name is never opened), fsynced when `sync`, then renamed over
    `target`. On an error the temporary file is removed and the error raised; `target` is as it was."""
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if sync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
