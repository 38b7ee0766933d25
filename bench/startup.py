"""What a glassrag command costs as a whole process, against `python -c "import numpy,
scipy.sparse"` (issue 30's reference; an ask now imports numpy and no scipy) and `python -c
"import numpy"` in the same run.

    python bench/startup.py --index DIR [--repeats 9]
        DIR: the demo index, built by `glassrag demo --index DIR`
        writes bench/results/startup.json and .md

Each command runs as a child process, the commands in turn, `--repeats` rounds; its cost is
the child's CPU time (user + system, from os.wait4), and a command's figure is the median of
its rounds. The machine's other work moves wall time more than CPU time, and both ends of
each ratio are measured in the same rounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
from common import save  # noqa: E402

QUESTION = "What does error E-4107 mean on the TX-200?"
# declined on the demo after the gate's answerability model read all five passages: the
# dearest ask (QUESTION passes without the model: no logit it can give would decline it)
DECLINED = "Does Fennick pay towards a gym membership?"


def child_env() -> dict[str, str]:
    """The children's environment: bytecode written and read, as in an installed wheel (pip
    compiles it at install), under a folder of its own, whatever PYTHONDONTWRITEBYTECODE says here
    (this machine sets it, and every child then compiled glassrag's modules anew: 0.24 CPU s)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="startup-pyc-")
    return env


def cpu_of(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, exit code) of one child process."""
    t0 = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, time.perf_counter() - t0, child.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", required=True, help="the demo index (glassrag demo --index DIR)")
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args()
    py = sys.executable
    gate_off = Path(tempfile.mkdtemp()) / "gate-off.toml"
    gate_off.write_text("[gate]\nenabled = false\n", encoding="utf-8")
    env = child_env()
    commands = {
        "python -c 'import numpy, scipy.sparse'": [py, "-c", "import numpy, scipy.sparse"],
        "python -c 'import numpy'": [py, "-c", "import numpy"],
        "build the parser": [py, "-c", "from glassrag.cli import build_parser; build_parser()"],
        "glassrag --help": [py, "-m", "glassrag.cli", "--help"],
        "glassrag ask --help": [py, "-m", "glassrag.cli", "ask", "--help"],
        "glassrag ask (demo index)": [py, "-m", "glassrag.cli", "ask", QUESTION, "--index", args.index],
        "glassrag ask, gate off (no cross-encoder)": [py, "-m", "glassrag.cli", "ask", QUESTION, "--index",
                                                      args.index, "--config", str(gate_off)],
        "glassrag ask, declined after five passages read": [py, "-m", "glassrag.cli", "ask", DECLINED, "--index",
                                                            args.index],
    }
    for name, argv in commands.items():  # once, untimed: files in the page cache, .pyc written
        _, _, code = cpu_of(argv, env)
        if code != 0:
            raise SystemExit(f"{name} exited with {code}: {' '.join(argv)}")
    rounds: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for r in range(args.repeats):
        for name, argv in commands.items():
            cpu, wall, _ = cpu_of(argv, env)
            rounds[name].append((cpu, wall))
        print(f"round {r + 1}: " + ", ".join(f"{n} {rounds[n][-1][0]:.3f}" for n in commands), flush=True)
    base = statistics.median(c for c, _ in rounds["python -c 'import numpy, scipy.sparse'"])
    figures = {name: {"cpu_s": round(statistics.median(c for c, _ in rs), 4),
                      "wall_s": round(statistics.median(w for _, w in rs), 4),
                      "ratio_to_numpy_scipy_sparse": round(statistics.median(c for c, _ in rs) / base, 3),
                      "cpu_s_rounds": [round(c, 4) for c, _ in rs]} for name, rs in rounds.items()}
    print()
    for name, f in figures.items():
        print(f"{name:40s} {f['cpu_s']:.3f} CPU s  {f['wall_s']:.3f} s  {f['ratio_to_numpy_scipy_sparse']:.2f}x")
    result = {"repeats": args.repeats, "question": QUESTION, "declined": DECLINED, "figures": figures,
              "command": "python bench/startup.py --index DIR" + (
                  f" --repeats {args.repeats}" if args.repeats != 9 else "")}
    path = save("startup", result)
    lines = ["# Whole-process cost of glassrag commands (bench/startup.py)", "",
             f"`{result['command']}` (DIR: `glassrag demo --index DIR`): child CPU time (user + system), "
             f"median of {args.repeats} rounds; bytecode written once and read after, as in an installed wheel.", "",
             "| command | CPU s | wall s | × `import numpy, scipy.sparse` |", "|---|---|---|---|"]
    lines += [f"| {n} | {f['cpu_s']:.3f} | {f['wall_s']:.3f} | {f['ratio_to_numpy_scipy_sparse']:.2f} |"
              for n, f in figures.items()]
    path.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"\nwrote {path} and {path.with_suffix('.md')}")


if __name__ == "__main__":
    main()
