"""The bundled demo corpus: a fictional company handbook and its golden questions."""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).parent / "data"
DEMO = DATA / "demo"

# the questions `glassrag demo` asks (ids from golden.jsonl): an error code whose near-twin
# belongs to another product, a paraphrase whose answer BM25 and LSA both rank too low,
# and a question the handbook cannot answer, which the calibrated gate declines (q132; the gym
# question q131 passes since rerank auto stopped using a reranker its cross-validation did not
# support, which moved the calibrated threshold from -2.421 to -2.999: issue 27, item 3)
SHOWCASE: tuple[str, ...] = ("q012", "q101", "q132")


def demo_docs() -> Path:
    return DEMO / "docs"


def demo_golden() -> Path:
    return DEMO / "golden.jsonl"


def bundled_log() -> Path:
    """The experiment log that chose glassrag's defaults, as shipped inside the package (in a
    source checkout a link to experiments/; in the wheel a copy), so an installed glassrag's
    development page shows the measurements its docstrings cite."""
    return DATA / "experiments"


def default_log(cwd: Path | None = None) -> Path | None:
    """The log `serve` shows without --log: ./experiments when the folder it runs in has one
    (a checkout being worked on), else the bundled one, else none."""
    here = (cwd or Path.cwd()) / "experiments"
    if here.is_dir():
        return here
    return bundled_log() if bundled_log().is_dir() else None


def demo_questions() -> list[str]:
    """The showcase questions, read from the golden set so they stay in step with it."""
    if not demo_golden().exists():
        return ["What does error E-4107 mean?"]
    by_id = {}
    for line in demo_golden().read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            by_id[q["id"]] = q["question"]
    chosen = [by_id[i] for i in SHOWCASE if i in by_id] or list(by_id.values())[:3]
    # and one question about something else entirely: the bundled off-topic set's first test one
    from glassrag.evaluate.offtopic import offtopic_questions

    return [*chosen, *[q.question for q in offtopic_questions("test")[:1]]]
