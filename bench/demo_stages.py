"""Each stage after retrieval added in turn, on the demo golden set's TEST split.

    python bench/demo_stages.py       (writes bench/results/demo_stages.json and .md)

What is learned (the reranker's weights, the gate's threshold) is fitted on the train
split only. Each row adds one stage to the row above and is compared with it on the
same questions: exact McNemar for any-hit@5 and answer-visible@5, a paired
randomisation test for MRR@10 and source recall@5.
"""

from __future__ import annotations

import copy
import sys
from typing import Any

from glassrag.config import Config
from glassrag.demo import demo_docs, demo_golden
from glassrag.evaluate.compare import compare_runs
from glassrag.evaluate.fitting import EXPERIMENT
from glassrag.evaluate.golden import load_golden
from glassrag.evaluate.workbench import Workbench
from glassrag.indexer import build_index

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from common import RESULTS, save  # noqa: E402

OFF = {"versions": {"mode": "off"}, "rerank": {"method": "none"}, "mmr": {"relevance": None},
       "cap": {"per_document": 0}, "gate": {"enabled": False}}
ROWS: list[tuple[str, dict[str, Any]]] = [
    ("BM25 (LSA observed)", {}),
    ("+ prefer current versions (demote)", {"versions": {"mode": "demote"}}),
    ("+ learned reranker", {"rerank": {"method": "learned"}}),
    # the default gate, whole (its rule, cost, off-topic threshold), with the learned reranker above
    (f"+ the default gate (rule {Config().gate.rule}, c = {Config().gate.cost:g})", {"gate": Config().to_dict()["gate"]}),
    ("+ MMR λ = 0.7", {"mmr": {"relevance": 0.7}}),
    ("+ cap 2 per document", {"cap": {"per_document": 2}}),
]
# the answer after the gate (what was shown), and MRR@10 of the ranking before it
COLUMNS = ("answer hit@5", "ranking mrr@10", "answer source_recall@5", "answer answer_visible@5",
           "answer declined_unanswerable")


def main() -> None:
    questions = load_golden(demo_golden())
    test = [q for q in questions if q.split == "test"]
    # every row fitted for itself on the train split (the reranker where it is learned, the gate
    # where it is on), as the experiment log fits, and evaluated on test through one stage cache
    workbench = Workbench(questions, "demo", fitting=EXPERIMENT, build=lambda c: build_index([demo_docs()], c)[0])
    overrides: dict[str, dict[str, Any]] = copy.deepcopy(OFF)
    rows, previous = [], None
    for name, change in ROWS:
        for section, values in change.items():
            overrides[section] = {**overrides.get(section, {}), **values}
        config = Config().with_overrides(**overrides)
        run = workbench.run(config, "test")
        flat = run.flat_metrics()
        row = {"name": name, "metrics": {c: dict(flat[c]) for c in COLUMNS},
               "losses": {c: len(ids) for c, ids in run.losses.items()}}
        if previous is not None:
            cmp = {r["metric"]: r for r in compare_runs(previous, run)["rows"]}
            row["vs_above"] = {c: {"p": cmp[c]["p"], "improved": cmp[c]["improved"],
                                   "degraded": cmp[c]["degraded"]} for c in COLUMNS if c in cmp}
        rows.append(row)
        previous = run
    lines = ["| pipeline | answer hit@5 | ranking MRR@10 | source recall@5 | answer visible@5 | unanswerable declined | vs row above (p) |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        m = row["metrics"]
        cells = [f"{m[c]['value']:.3f} [{m[c]['low']:.2f}, {m[c]['high']:.2f}]" for c in COLUMNS]
        vs = row.get("vs_above")
        note = "—" if vs is None else ", ".join(
            f"{c.split(' ')[-1].split('@')[0].replace('_', ' ')} {v['p']:.2g} (+{v['improved']}/−{v['degraded']})"
            for c, v in vs.items() if v["improved"] or v["degraded"]) or "no question changed"
        lines.append(f"| {row['name']} | " + " | ".join(cells) + f" | {note} |")
    table = "\n".join(lines)
    print(f"demo test split: {len(test)} questions "
          f"({sum(q.answerable for q in test)} answerable, {sum(not q.answerable for q in test)} unanswerable)")
    print(table)
    save("demo_stages", {"rows": rows})
    (RESULTS / "demo_stages.md").write_text(table + "\n")


if __name__ == "__main__":
    main()
