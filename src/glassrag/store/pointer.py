"""DIR/CURRENT, the pointer to an index folder's live generation, read as untrusted data: an
index folder may be shared, and a write deletes the generation CURRENT named before it. So
CURRENT is read without following a link, at most POINTER_BYTES of it, never from a pipe or
a device, and accepted only as the name of a generation of the folder (`gen-` and letters,
digits, `-`, `_`, a real folder, not a link). A crafted `.`, `..`, `gen-x/..` or absolute path
made the next write delete the folder it named with the user's saved runs (issue 51.4); now the
index is "damaged" and nothing is read or deleted by it.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from glassrag.errors import StoreError, visible

POINTER_BYTES = 256  # CURRENT holds one generation's name (about 30 characters)
GENERATION = re.compile(r"gen-[A-Za-z0-9_-]{1,100}")


def read_pointer(pointer: Path) -> str | None:
    """What the pointer file says, stripped, as it says it (None when there is no such file;
    "" when it is a link or not a regular file)."""
    try:
        fd = os.open(pointer, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError:  # a link (ELOOP), or unreadable
        return "" if os.path.lexists(pointer) else None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, POINTER_BYTES).decode("utf-8", "replace").strip()
    finally:
        os.close(fd)


def live_generation(folder: Path, pointer: str) -> str | None:
    """The generation `folder/pointer` names, None when there is no pointer; StoreError
    ("index damaged") when it names anything but a generation of `folder`."""
    name = read_pointer(folder / pointer)
    if name is None:
        return None
    if not GENERATION.fullmatch(name) or (folder / name).is_symlink():
        raise StoreError(
            f"{folder}: index damaged: {pointer} names {visible(name[:80])!r}, which is not a "
            "generation of this folder (gen-…)",
            "the folder was changed by hand or by someone else; build the index again in a new "
            "folder (glassrag ingest PATH --index NEWDIR); nothing was read or deleted")
    return name
