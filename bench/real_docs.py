"""Extraction measured end to end on real public documents (issue 12).

    python bench/real_docs.py                   (writes bench/results/real_docs.json)
    PYTHONPATH=OTHER/src python bench/real_docs.py --label before --out /tmp/before.json

Ingests the ten documents of `tests/fixtures/real/docs/` (provenance in
`tests/fixtures/real/PROVENANCE.md`), asks the 48 questions of
`bench/real_docs_golden.jsonl`, and reports, per split and over all questions:

- hit@5: an answer's verbatim text is inside one of the five best chunks;
- locator hit@5: a shown passage cites the labelled place (page, slide, sheet region,
  heading path) — what a user needs to check the answer in the original;
- answer-visible@5: the answer's text can be read in what is shown.

The gate is switched off (`bench/configs/real_docs.toml`), so that the numbers isolate
extraction from the decision to answer. Only library functions that the base commit
728a6ca already had are used, so pointing PYTHONPATH at an older checkout's `src` measures
that checkout's extraction with the same questions ("before").
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from glassrag.config import load_config
from glassrag.evaluate.golden import load_golden
from glassrag.evaluate.runs import evaluate
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "tests" / "fixtures" / "real" / "docs"
GOLDEN = ROOT / "bench" / "real_docs_golden.jsonl"
CONFIG = ROOT / "bench" / "configs" / "real_docs.toml"
METRICS = ("hit@5", "locator_hit@5", "answer_visible@5", "mrr@10")


def measure(label: str) -> dict[str, Any]:
    import glassrag

    config = load_config(CONFIG)
    started = time.perf_counter()
    index, report = build_index([DOCS], config)
    ingest_s = time.perf_counter() - started
    if report.failed:
        raise SystemExit(f"ingest failed: {[str(e) for e in report.failed]}")
    pipeline = Pipeline(index, config)
    out: dict[str, Any] = {
        "label": label, "glassrag": str(Path(glassrag.__file__).parent),
        "documents": len(index.documents), "chunks": len(index.chunks),
        "ingest_seconds": round(ingest_s, 2), "splits": {},
    }
    for split in ("train", "test", "all"):
        questions = load_golden(GOLDEN, split)
        run = evaluate(pipeline, questions, str(GOLDEN), split)
        if not isinstance(run, dict):  # run format 2 (a Run): what was shown is its answer section
            run = run.to_dict()
            run["metrics"] = run["answer"]["metrics"]
            for r in run["questions"]:
                r["metrics"] = r["metrics"].get("answer", {})
        m = run["metrics"]
        out["splits"][split] = {
            "questions": len(questions),
            "answerable": sum(q.answerable for q in questions),
            **{name: m[name] for name in METRICS if name in m},
        }
        if split == "all":
            out["per_question"] = {
                r["id"]: {"hit": r.get("metrics", {}).get("hit@5"),
                          "locator_hit": r["locator_hit"], "visible": r["visible"]}
                for r in run["questions"] if r["answerable"]}
    return out


def table(result: dict[str, Any]) -> str:
    lines = [f"{result['label']}: {result['documents']} documents, {result['chunks']} chunks",
             "| split | answerable | hit@5 | locator hit@5 | answer-visible@5 |",
             "|---|---|---|---|---|"]
    for split, s in result["splits"].items():
        cells = [f"{s[n]['value']:.3f}" if n in s else "–"
                 for n in ("hit@5", "locator_hit@5", "answer_visible@5")]
        lines.append(f"| {split} | {s['answerable']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--label", default="after")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "real_docs.json")
    args = parser.parse_args(argv)
    result = measure(args.label)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    previous = json.loads(args.out.read_text()) if args.out.exists() else {}
    previous[args.label] = result
    args.out.write_text(json.dumps(previous, indent=1, ensure_ascii=False) + "\n")
    print(table(result))


if __name__ == "__main__":
    sys.exit(main())
