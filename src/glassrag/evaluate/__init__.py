"""Evaluation: golden sets, relevance, metrics, statistics, diagnosis."""
