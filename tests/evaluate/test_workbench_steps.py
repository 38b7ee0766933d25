"""A workbench tells its `steps` hook what it does, question by question: the index it builds,
the reranker and the gate it fits, the evaluation (issue 49, item 4: `experiment run` and
`sweep` ran for minutes without a word; cli/experiment.py and cli/sweep.py draw these steps)."""

from __future__ import annotations

from pathlib import Path

from glassrag.config import Config
from glassrag.evaluate.fitting import EXPERIMENT
from glassrag.evaluate.golden import load_golden
from glassrag.evaluate.offtopic import offtopic_questions
from glassrag.evaluate.workbench import Workbench
from glassrag.indexer import build_index
from tests.test_corpus_command import GOLDEN, prepared


def test_a_workbench_tells_each_step_and_its_questions(tmp_path: Path):
    folder = prepared(tmp_path, "tea")
    questions = load_golden(folder / "golden.jsonl")
    steps: list[tuple[str, int, int]] = []

    def build(config: Config):
        index, _ = build_index([folder / "docs"], config, progress=bench.steps)
        return index

    bench = Workbench(questions, "tea", build=build, fitting=EXPERIMENT)
    bench.steps = lambda what, done, total: steps.append((what, done, total))
    bench.run(Config(), "test")
    train = sum(q["split"] == "train" for q in GOLDEN)
    test = len(GOLDEN) - train
    told = {what for what, _, _ in steps}
    assert {"read", "training the reranker", "calibrating the gate", "evaluating (test)"} <= told
    # each fit and the evaluation count their questions up to their total: the reranker the train
    # split's answerable ones and unanswerable ones alike, the gate those and the bundled off-topic
    # train half, the evaluation the test split and the bundled off-topic test half
    last = {what: (done, total) for what, done, total in steps}
    assert last["training the reranker"] == (train, train)
    assert last["calibrating the gate"] == (train + len(offtopic_questions("train")),) * 2
    assert last["evaluating (test)"] == (test + len(offtopic_questions("test")),) * 2
    assert [what for what, _, _ in steps].index("read") < [what for what, _, _ in steps].index("evaluating (test)")

