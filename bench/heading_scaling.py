"""Ingest time of a Markdown file of 10k, 20k and 40k headings (issue 28, item 5).

Heading locators once compared every section's heading path with every other's (28 / 101 /
587 s in the audit); now they are one pass over the paths' ends. Each file is ingested by
`glassrag ingest` in its own process (default settings), timed by the wall clock; linear
work means each doubling of the headings costs about 2× (the issue asks ≤ 2.3×). The file is
deterministic: `# Part p` every 100 headings, `## Topic i` and, under every topic, a
`### Notes` heading (the same name everywhere, so every one needs its path to be told apart),
each followed by a short paragraph: about 210 bytes per heading, as in the audit.

    python bench/heading_scaling.py                  # 10k, 20k, 40k headings
    python bench/heading_scaling.py --headings 2000 4000
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest_scaling import RESULTS, code_version, run_once  # noqa: E402


def make_markdown(headings: int) -> str:
    """`headings` headings of three levels, each with a paragraph; the same for the same count."""
    parts: list[str] = []
    n = 0
    while n < headings:
        if n % 100 == 0:
            parts.append(f"# Part {n // 100}\n\nThe part numbered {n // 100} opens here.\n")
        elif n % 2:
            parts.append(f"## Topic {n}\n\nTopic {n} describes item E-{1000 + n % 9000} and how it is "
                         f"checked, signed off and stored, with the form number F{n} and its owner.\n")
        else:
            parts.append(f"### Notes\n\nNotes on topic {n - 1}: keep the receipt, file form F{n - 1} "
                         "within ten days and tell the owner of the change.\n")
        n += 1
    return "\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--headings", type=int, nargs="+", default=[10_000, 20_000, 40_000])
    parser.add_argument("--name", default="heading_scaling", help="result file name in bench/results")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="glassrag-headings-") as tmp:
        for count in args.headings:
            md = Path(tmp) / f"headings-{count}.md"
            md.write_text(make_markdown(count), encoding="utf-8")
            row = {"headings": count, "mb": round(md.stat().st_size / 2**20, 2),
                   **run_once(md, Path(tmp) / f"index-{count}")}
            if rows:
                row["time_factor"] = round(row["seconds"] / rows[-1]["seconds"], 2)
            rows.append(row)
            print(json.dumps(row), flush=True)
    result = {"what": "glassrag ingest of one Markdown file of N headings, default settings, fresh index",
              "code": code_version(), "python": platform.python_version(),
              "packages": {p: version(p) for p in ("glassrag", "numpy", "scipy")}, "rows": rows}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = ["| headings | MB | seconds | peak RSS (MB) | time × per 2× headings |", "|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['headings']} | {r['mb']} | {r['seconds']:.1f} | {r['peak_rss_mb']:.0f} | "
              f"{r.get('time_factor', '—')} |" for r in rows]
    (RESULTS / f"{args.name}.md").write_text(
        f"{result['what']}; code {result['code']}, Python {result['python']}, "
        + ", ".join(f"{k} {v}" for k, v in result["packages"].items()) + "\n\n" + "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
