"""The reader's coverage threshold, chosen by hand-counted accuracy (issue 13: mutation testing
of evaluate/; the reranker's and the gate's fits are tested in tests/rerank/ and tests/gate/)."""

from glassrag.evaluate.tune import _calibrate_reader


def test_the_threshold_with_the_best_accuracy_is_chosen():
    # (answerable, best coverage, quote correct)
    reads = [(True, 0.8, True), (True, 0.6, False), (False, 0.7, False), (False, 0.3, False)]
    got = _calibrate_reader(reads)
    # right: an answerable question whose correct quote passes (cov ≥ t); an unanswerable
    # one whose coverage stays below t
    assert got["sweep"] == [{"threshold": 0.0, "accuracy": 1 / 4}, {"threshold": 0.3, "accuracy": 1 / 4},
                            {"threshold": 0.6, "accuracy": 2 / 4}, {"threshold": 0.7, "accuracy": 2 / 4},
                            {"threshold": 0.8, "accuracy": 3 / 4}, {"threshold": 1.01, "accuracy": 2 / 4}]
    assert (got["threshold"], got["accuracy"], got["questions"]) == (0.8, 3 / 4, 4)


def test_a_tie_goes_to_the_lower_threshold():
    reads = [(True, 0.9, True), (True, 0.5, False), (False, 0.2, False)]
    got = _calibrate_reader(reads)
    assert [r["accuracy"] for r in got["sweep"]] == [1 / 3, 1 / 3, 2 / 3, 2 / 3, 1 / 3]
    assert (got["threshold"], got["accuracy"]) == (0.5, 2 / 3)


def test_no_reads_keep_every_answer():
    assert _calibrate_reader([]) == {"threshold": 0.0, "accuracy": 0.0, "questions": 0,
                                     "sweep": [{"threshold": 0.0, "accuracy": 0.0},
                                               {"threshold": 1.01, "accuracy": 0.0}]}
