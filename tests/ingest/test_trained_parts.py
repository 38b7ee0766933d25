"""What a re-ingest keeps of the reranker and the gate fitted on the previous index (issue 27,
item 4: "adding one unrelated document drops both the reranker and the gate"): an added
document keeps them, marked and said; a changed or removed one drops them, saying why."""

from __future__ import annotations

from pathlib import Path

from glassrag.config import Config
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline

from tests.conftest import write_corpus

CONFIG = Config().with_overrides(retrieve={"retrievers": ["bm25"]})
TRAINED = {"reranker": {"weights": [0.1]}, "gate": {"settings": {}, "score": None}, "reader": {"threshold": 0.3}}


def fitted(root: Path):
    index, _ = build_index([root], CONFIG)
    index.extra.update({k: dict(v) for k, v in TRAINED.items()})
    return index


def test_an_added_document_keeps_the_trained_parts_and_says_so(corpus: Path):
    first = fitted(corpus)
    (corpus / "canteen.md").write_text("# Canteen\n\nThe canteen opens at noon.\n")
    again, report = build_index([corpus], CONFIG, previous=first)
    assert report.added == ["canteen"] and not report.changed and not report.removed
    assert again.extra["reader"] == TRAINED["reader"]
    assert again.extra["reranker"] == {**TRAINED["reranker"], "added_since": ["canteen"]}
    assert again.extra["gate"] == {**TRAINED["gate"], "added_since": ["canteen"]}
    said = [w for w in report.warnings if w.startswith("kept the trained parts")]
    assert said == ["kept the trained parts (gate, reader, reranker), fitted before 1 document(s) were added "
                    "(canteen): BM25's word statistics moved, so their scores shift a little; run glassrag "
                    "rerank-train and glassrag calibrate again to refit them on this corpus"]
    # and every question's route says it
    notes = Pipeline(again, CONFIG.with_overrides(rerank={"method": "none"})).run("canteen").stage("analyze").notes
    assert any(n.startswith("the reranker and the gate were fitted before 1 document(s) were added (canteen)")
               for n in notes)
    # a second addition adds to the list
    (corpus / "parking.md").write_text("# Parking\n\nVisitors park at the gate.\n")
    third, _ = build_index([corpus], CONFIG, previous=again)
    assert third.extra["gate"]["added_since"] == ["canteen", "parking"]


def test_nothing_changed_keeps_them_unmarked(corpus: Path):
    first = fitted(corpus)
    again, report = build_index([corpus], CONFIG, previous=first)
    assert {k: again.extra[k] for k in TRAINED} == TRAINED and not report.warnings


def test_a_changed_or_removed_document_drops_them_and_names_it(tmp_path: Path):
    root = write_corpus(tmp_path / "docs")
    first = fitted(root)
    (root / "manual.md").write_text((root / "manual.md").read_text() + "\nOne more line.\n")
    again, report = build_index([root], CONFIG, previous=first)
    assert not set(TRAINED) & set(again.extra)
    assert report.warnings[-1] == ("the index's trained parts (gate, reader, reranker) were dropped because "
                                   "documents changed (manual) (a labelled passage may have changed or gone): "
                                   "run glassrag rerank-train and glassrag calibrate again")
    first = fitted(root)
    (root / "notes.txt").unlink()
    again, report = build_index([root], CONFIG, previous=first, prune=True)
    assert not set(TRAINED) & set(again.extra) and "documents were removed (notes)" in report.warnings[-1]


def test_other_chunking_drops_them(corpus: Path):
    first = fitted(corpus)
    again, report = build_index([corpus], CONFIG.with_overrides(chunk={"size": 120}), previous=first)
    assert not set(TRAINED) & set(again.extra)
    assert "because the chunking or analysis settings changed" in report.warnings[-1]
