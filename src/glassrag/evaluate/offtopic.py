"""The bundled off-topic questions: 400 general-knowledge questions of 20 SQuAD 1.1 train
articles (Beyoncé, Chopin, FC Barcelona, Napoleon, …; CC BY-SA 4.0, made by
scripts/squad_prepare.py, provenance in training/squad/PROVENANCE.md) that no corpus of this
project is about, nor the cross-encoder learned from. Whole articles alternate between the
splits: calibration reads the train half as more unanswerable questions, every evaluation
reports the share of the test half declined (topics the calibration never saw)."""

from __future__ import annotations

from pathlib import Path

from glassrag.evaluate.golden import Question, load_golden

PATH = Path(__file__).resolve().parent.parent / "data" / "offtopic.jsonl"


def offtopic_questions(split: str) -> list[Question]:
    """The bundled off-topic questions of `split` (train, test or all)."""
    return load_golden(PATH, split)
