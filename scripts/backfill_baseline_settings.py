"""Record, in evidence written before evidence recorded it, every setting each corpus's baseline
ran with, so that `glassrag experiment report` can say which entries were measured against
defaults that have since moved (src/glassrag/experiment/drift.py).

The settings are reconstructed, not remembered: for a corpus measured by code at a commit of
this repository, the defaults of that commit's glassrag (its src/ read from git, imported in
a subprocess) with the entry's [baseline] table as the evidence records it. A corpus measured
by code with local changes (`+dirty`) or by an installed package cannot be reconstructed and is
left as it is (the report counts it as unable to say). Each reconstructed corpus says so
(`baseline_settings_from`).

    python scripts/backfill_baseline_settings.py [experiments]   # rewrites experiments/results/*.json
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

from glassrag.experiment import write_evidence
from glassrag.experiment.drift import flat

ROOT = Path(__file__).resolve().parent.parent

DEFAULTS = """
import json, sys
from glassrag.config import Config
base = Config().updated(json.loads(sys.argv[1]), "the evidence's [baseline]", "file")
print(json.dumps(base.to_dict(), default=str))
"""


def settings_at(commit: str, baseline: dict, work: Path, cache: dict) -> dict | None:
    """{"section.name": value} of the baseline glassrag at `commit` gives `baseline`, or None when
    that commit's glassrag cannot say (it is not in this repository, or its config fails)."""
    key = (commit, json.dumps(baseline, sort_keys=True))
    if key in cache:
        return cache[key]
    src = work / commit
    if not src.is_dir():
        archive = subprocess.run(["git", "archive", commit, "src"], cwd=ROOT, capture_output=True)
        if archive.returncode != 0:
            cache[key] = None
            return None
        with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
            tar.extractall(src, filter="data")
    done = subprocess.run([sys.executable, "-c", DEFAULTS, json.dumps(baseline)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(src / "src")})
    if done.returncode != 0:
        print(f"  {commit[:8]}: its config could not be read: {done.stderr.strip().splitlines()[-1:]}")
        cache[key] = None
        return None
    cache[key] = flat(json.loads(done.stdout))
    return cache[key]


def main(log: Path) -> int:
    cache: dict = {}
    counts = {"reconstructed": 0, "local changes": 0, "unknown code": 0, "recorded already": 0}
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted((log / "results").glob("*.json")):
            evidence = json.loads(path.read_text(encoding="utf-8"))
            if "corpora" not in evidence:
                continue
            changed = False
            for corpus, c in evidence["corpora"].items():
                if "skipped" in c:
                    continue
                if c.get("baseline_settings"):
                    counts["recorded already"] += 1
                    continue
                commit = (c.get("provenance") or evidence.get("provenance") or {}).get("code_version") or ""
                if not commit or commit.endswith("+dirty"):
                    counts["local changes" if commit else "unknown code"] += 1
                    continue
                settings = settings_at(commit, evidence.get("baseline") or {}, Path(tmp), cache)
                if settings is None:
                    counts["unknown code"] += 1
                    continue
                c["baseline_settings"] = settings
                c["baseline_settings_from"] = (f"reconstructed from code {commit[:12]}'s defaults and the "
                                               "evidence's [baseline] by scripts/backfill_baseline_settings.py")
                counts["reconstructed"] += 1
                changed = True
            if changed:
                write_evidence(log, evidence)
    print(", ".join(f"{n} {what}" for what, n in counts.items()) + " (corpora of evidence)")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "experiments"))
