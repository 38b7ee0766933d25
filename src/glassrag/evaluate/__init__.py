"""Evaluation: golden sets, relevance, metrics, statistics, diagnosis."""

# what `glassrag sweep` chooses the best configuration by unless told: here, so that the
# command's help names it without importing the sweep (tests/test_startup.py)
DEFAULT_METRIC = "ranking mrr@10"
