"""How often the bold of the first shown passage marks the labelled answer (issue 27, item 8).

    python bench/highlight.py                         (writes bench/results/highlight.json)
    PYTHONPATH=OTHER/src python bench/highlight.py --label before --out /tmp/before.json

Builds the demo index (BM25, the default settings, gate and reranker off so that every
answerable question shows passages), asks every answerable question of the demo's golden
set and looks at the first passage's excerpt. The labelled answer words are the question's
`must_contain` strings that hold a word the question does not (an error code the question
names is how the right passage is found, not the answer). Over the questions whose excerpt
shows one of them, per split:

- overlap: a bold span overlaps an answer string;
- precision: the share of bold characters that lie inside an answer string;
- bold words: words in bold per excerpt (the old rule bolded most of the best sentence);

and the same over the questions that do not ask for a quantity (how long, how many, ...).

Questions that ask what something is called get no bold (present/highlight.py) and count
as a miss.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from glassrag.config import Config
from glassrag.demo import demo_docs, demo_golden
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline
from glassrag.present.highlight import asks_for_a_quantity

ROOT = Path(__file__).resolve().parents[1]


def answer_strings(question: str, strings: list[str], analyze) -> list[str]:
    asked = set(analyze(question))
    return [s for s in strings if set(analyze(s)) - asked]


def measure(pipeline: Pipeline, questions: list[dict[str, Any]]) -> dict[str, Any]:
    analyze = pipeline.index.analyzer
    by_split: dict[str, list[dict[str, Any]]] = {}
    for q in questions:
        wanted = answer_strings(q["question"], q.get("must_contain", []), analyze)
        if not q["answerable"] or not wanted:
            continue
        p = pipeline.run(q["question"]).passage
        if p is None:
            continue
        shown = p.excerpt.lower()
        where = [(m.start(), m.end()) for s in wanted for m in re.finditer(re.escape(s.lower()), shown)]
        if not where:
            continue
        bold = [set(range(a, b)) for a, b in p.highlights]
        inside = set().union(*(set(range(a, b)) for a, b in where))
        chars = set().union(*bold) if bold else set()
        by_split.setdefault(q["split"], []).append({
            "id": q["id"], "quantity": asks_for_a_quantity(q["question"]), "overlap": bool(chars & inside),
            "precision": len(chars & inside) / len(chars) if chars else 0.0,
            "bold_words": sum(len(p.excerpt[a:b].split()) for a, b in p.highlights),
            "bold": [p.excerpt[a:b] for a, b in p.highlights]})
    out: dict[str, Any] = {}
    for split, rows in sorted(by_split.items()):
        other = [r for r in rows if not r["quantity"]]
        out[split] = {**_figures(rows), "not_quantity": _figures(other), "rows": rows}
    return out


def _figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows) or 1
    return {"questions": len(rows), "overlap": sum(r["overlap"] for r in rows) / n,
            "precision": sum(r["precision"] for r in rows) / n,
            "bold_words": sum(r["bold_words"] for r in rows) / n}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--label", default="now")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "highlight.json")
    args = ap.parse_args()
    config = Config().with_overrides(gate={"enabled": False}, rerank={"method": "none"})
    index, _ = build_index([demo_docs()], config)
    pipeline = Pipeline(index, config)
    questions = [json.loads(line) for line in demo_golden().read_text(encoding="utf-8").splitlines() if line.strip()]
    result = {"label": args.label, "splits": measure(pipeline, questions)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for split, r in result["splits"].items():
        print(f"{args.label} {split}: {r['questions']} questions whose first excerpt shows the answer; bold overlaps "
              f"it in {r['overlap']:.1%}, {r['precision']:.1%} of bold characters inside it, "
              f"{r['bold_words']:.1f} bold words an excerpt; of them not asking for a quantity: "
              f"{r['not_quantity']['questions']}, overlap {r['not_quantity']['overlap']:.1%}, precision "
              f"{r['not_quantity']['precision']:.1%}")


if __name__ == "__main__":
    main()
