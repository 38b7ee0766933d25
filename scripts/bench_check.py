"""Do the committed figures still reproduce? (`make bench-check`)

Re-runs the cheap benchmarks (each about a minute here) into a temporary folder and fails
when a result file differs from the committed one, when the stage table of docs/results.md is not
the one bench/demo_stages.py writes, or when docs/measurements.md is not what the experiment log
generates. With --experiments it also re-measures every experiment of the log (tens of
minutes) and fails when a verdict differs from the one recorded.

    .venv/bin/python scripts/bench_check.py [--experiments]
"""

from __future__ import annotations

import argparse
import difflib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
# benchmark -> the result files it writes that must reproduce byte for byte
CHEAP = {"bench/demo_stages.py": ["demo_stages.md"], "bench/demo_defaults.py": ["demo_defaults.md"]}


def differs(committed: Path, fresh: Path) -> list[str]:
    a = committed.read_text(encoding="utf-8").splitlines() if committed.is_file() else []
    b = fresh.read_text(encoding="utf-8").splitlines() if fresh.is_file() else []
    return list(difflib.unified_diff(a, b, str(committed), f"{fresh} (re-run)", lineterm="", n=0))


def check_benchmarks(out: Path) -> list[str]:
    problems = []
    env = {**os.environ, "GLASSRAG_BENCH_RESULTS": str(out), "HF_HUB_OFFLINE": "1"}
    for script, files in CHEAP.items():
        print(f"re-running {script}", flush=True)
        done = subprocess.run([PYTHON, script], cwd=ROOT, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            problems.append(f"{script} failed:\n{done.stderr[-2000:]}")
            continue
        for name in files:
            diff = differs(ROOT / "bench" / "results" / name, out / name)
            if diff:
                problems.append(f"bench/results/{name} no longer reproduces:\n" + "\n".join(diff))
    return problems


# the page that shows the stage table (it was the README's until issue 49 moved it)
STAGE_TABLE_PAGE = ROOT / "docs" / "results.md"


def check_stage_table(fresh: Path, page: Path = STAGE_TABLE_PAGE) -> list[str]:
    """Every line of the stage table bench/demo_stages.py writes is on `page`."""
    shown = page.read_text(encoding="utf-8").splitlines()
    missing = [line for line in fresh.read_text(encoding="utf-8").splitlines() if line and line not in shown]
    return [f"{page.relative_to(ROOT)} lacks the stage table line: {line}" for line in missing]


def check_report() -> list[str]:
    done = subprocess.run([PYTHON, "-m", "glassrag.cli", "experiment", "report", "--check"], cwd=ROOT,
                          capture_output=True, text=True)
    return [] if done.returncode == 0 else [done.stderr.strip() or done.stdout.strip()]


def check_experiments() -> list[str]:
    done = subprocess.run([PYTHON, "-m", "glassrag.cli", "experiment", "run", "--all"], cwd=ROOT,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"}, text=True)
    return [] if done.returncode == 0 else ["an experiment's verdict differs from the log's (see above)"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiments", action="store_true", help="also re-measure every experiment")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        problems = check_benchmarks(out)
        if (out / "demo_stages.md").is_file():
            problems += check_stage_table(out / "demo_stages.md")
    problems += check_report()
    if args.experiments:
        problems += check_experiments()
    for p in problems:
        print(f"\nFAIL {p}")
    print("\nbench-check: " + ("every committed figure reproduces" if not problems else f"{len(problems)} problem(s)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
