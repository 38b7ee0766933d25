"""A golden set in either format: a golden JSONL file (golden.py) or a BEIR folder (beir.py),
loaded and validated the same way before an evaluation reads it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from glassrag.errors import GoldenError
from glassrag.evaluate.beir import load_beir_questions, unmeasured
from glassrag.evaluate.golden import Question, load_golden


def load_questions(golden: Path, split: str, documents: Mapping[str, Any] | None = None) -> list[Question]:
    """A golden set's questions, from a JSONL file or a BEIR folder, validated (against an
    index's `documents` too, when given) before use."""
    if golden.is_dir():
        questions = load_beir_questions(golden, split)
        if documents is not None:
            unmeasured(golden, questions, documents)
    else:
        questions = load_golden(golden, split, documents)
    if not questions:
        raise GoldenError(str(golden), [(0, "no questions" + ("" if split == "all" else f" in the {split} split")
                                         + ": an evaluation would measure nothing")])
    return questions
