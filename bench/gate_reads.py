"""How many passages the gate's answerability model reads when it reads only as far as its
decision needs (`read_to_decide`, what `glassrag ask` and the web app do), against reading
the top `gate.answerability_depth` every time (evaluation, calibration), and whether every
decision is the same.

    python bench/gate_reads.py                     # the five corpora of the experiment log
    python bench/gate_reads.py --corpus demo
    python bench/gate_reads.py --index .glassrag/demo   # bench/load.py's 200 questions (its settings
                                                        # left out) on a built index: gate_reads_index.*

For each corpus of experiments/corpora.toml: the index with glassrag's defaults, its reranker
and gate fitted on the train split (the experiment log's workbench, so indexes are shared with
`glassrag experiment run`), then every test question asked twice, one pipeline reading every
passage and one reading to decide, each with an empty memo of scored pairs. Reported: the
questions whose decision (declined or not), passage shown and "also found" differ (must be
0), the pairs the model scored, how the questions spread over 0, 1, … passages read, and the
CPU seconds of each pass (the process's, both of ONNX Runtime's threads counted).

Results: bench/results/gate_reads.json and gate_reads.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from bench.common import RESULTS  # noqa: E402
from glassrag.config import Config  # noqa: E402
from glassrag.experiment import work_folder  # noqa: E402
from glassrag.experiment.corpora import load_corpora, workbench  # noqa: E402
from glassrag.gate import answerability  # noqa: E402
from glassrag.pipeline import Pipeline  # noqa: E402
from glassrag.provenance import provenance  # noqa: E402

LOG = ROOT / "experiments"
CORPORA = ("demo", "ml-papers", "economics", "birds", "scifact-abstain")


def shown(answer) -> tuple:
    """What a user sees decided: declined or not, the passage and the also-found list."""
    return (answer.declined, answer.passage.chunk_id if answer.passage else None,
            tuple(h.chunk_id for h in answer.also_found))


def one_pass(index, questions: list[str], read_to_decide: bool, config: Config | None = None) -> dict:
    answerability._SCORED.clear()
    pipeline = Pipeline(index, config or index.config, read_to_decide=read_to_decide)
    t0 = time.process_time()
    answers = [pipeline.run(q) for q in questions]
    cpu = time.process_time() - t0
    gate = [next(t for t in a.trace if t.kind == "gate").params.get("signals") or {} for a in answers]
    return {"answers": answers, "cpu_s": round(cpu, 2), "pairs": len(answerability._SCORED),
            "read": Counter(int(s["answerability_read"]) for s in gate if "answerability_read" in s)}


def measure(name: str) -> dict:
    corpus = load_corpora(LOG)[name]
    bench = workbench(corpus, work_folder(LOG))
    index, how = bench.fitted(Config())
    questions = [q.question for q in bench.split("test")]
    Pipeline(index, Config()).run(questions[0])  # the model loaded and warm before either pass
    whole, enough = one_pass(index, questions, False, Config()), one_pass(index, questions, True, Config())
    differ = [q for q, a, b in zip(questions, whole["answers"], enough["answers"]) if shown(a) != shown(b)]
    declined = sum(a.declined for a in whole["answers"])
    return {"corpus": name, "calibrated": how, "questions": len(questions), "declined": declined,
            "differ": len(differ), "differing": differ[:5],
            "pairs_whole": whole["pairs"], "pairs_to_decide": enough["pairs"],
            "read": {str(k): v for k, v in sorted(enough["read"].items())},
            "cpu_s_whole": whole["cpu_s"], "cpu_s_to_decide": enough["cpu_s"]}


def measure_index(folder: Path) -> dict:
    """bench/load.py's burst of 200 questions (each asked under the index's own settings) on the
    index in `folder`, both ways."""
    from urllib.parse import parse_qsl, urlsplit

    from bench.load import requests_for
    from glassrag.store import open_store

    index = open_store(str(folder)).read()
    questions = [dict(parse_qsl(urlsplit(path).query))["q"] for _, path in requests_for(200)]
    Pipeline(index, index.config).run(questions[0])
    whole, enough = one_pass(index, questions, False), one_pass(index, questions, True)
    differ = [q for q, a, b in zip(questions, whole["answers"], enough["answers"]) if shown(a) != shown(b)]
    return {"corpus": str(folder), "calibrated": "index", "questions": len(questions),
            "declined": sum(a.declined for a in whole["answers"]), "differ": len(differ), "differing": differ[:5],
            "pairs_whole": whole["pairs"], "pairs_to_decide": enough["pairs"],
            "read": {str(k): v for k, v in sorted(enough["read"].items())},
            "cpu_s_whole": whole["cpu_s"], "cpu_s_to_decide": enough["cpu_s"]}


def markdown(rows: list[dict], prov: dict) -> str:
    lines = [f"The gate reading to decide against reading every passage, test splits; code {prov.get('code_version', '?')}",
             "",
             "| corpus | questions | declined | decisions that differ | pairs scored: every passage | to decide "
             "| passages read (questions) | CPU s: every passage | to decide |",
             "|---|---:|---:|---:|---:|---:|---|---:|---:|"]
    for r in rows:
        spread = ", ".join(f"{k}: {v}" for k, v in r["read"].items())
        lines.append(f"| {r['corpus']} | {r['questions']} | {r['declined']} | {r['differ']} | {r['pairs_whole']} | "
                     f"{r['pairs_to_decide']} | {spread} | {r['cpu_s_whole']} | {r['cpu_s_to_decide']} |")
    tot = {k: sum(r[k] for r in rows) for k in ("questions", "differ", "pairs_whole", "pairs_to_decide")}
    lines.append(f"| all | {tot['questions']} | | {tot['differ']} | {tot['pairs_whole']} | {tot['pairs_to_decide']} "
                 f"| | {sum(r['cpu_s_whole'] for r in rows):.1f} | {sum(r['cpu_s_to_decide'] for r in rows):.1f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append", choices=CORPORA, help="one corpus (repeatable; default: all five)")
    parser.add_argument("--index", type=Path, help="a built index instead, asked bench/load.py's 200 questions")
    args = parser.parse_args()
    rows = []
    for name in [None] if args.index else args.corpus or CORPORA:
        rows.append(measure_index(args.index) if args.index else measure(name))
        print(json.dumps({k: v for k, v in rows[-1].items() if k != "differing"}), flush=True)
    prov = provenance()
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = ("gate_reads_index" if args.index else "gate_reads" if not args.corpus
            else "gate_reads_" + "_".join(args.corpus))
    (RESULTS / f"{stem}.json").write_text(json.dumps({"provenance": prov, "rows": rows}, indent=2) + "\n")
    (RESULTS / f"{stem}.md").write_text(markdown(rows, prov))
    print(markdown(rows, prov))


if __name__ == "__main__":
    main()
