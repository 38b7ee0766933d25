"""No test id is long: pytest puts the running test's id into the environment variable
PYTEST_CURRENT_TEST, and a 200 kB parameter id made every subprocess of that test fail with
E2BIG (argument list too long) in some environments (issue 27)."""

import subprocess
import sys
from pathlib import Path

import pytest

# it collects the whole suite in a separate pytest process
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
LONGEST = 500  # characters; the longest id today has 250


def test_every_collected_test_id_is_short():
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests"],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    ids = [line for line in r.stdout.splitlines() if "::" in line]
    assert len(ids) > 100, r.stdout[-2000:] + r.stderr[-2000:]
    assert [i[:120] + "…" for i in ids if len(i) > LONGEST] == []
