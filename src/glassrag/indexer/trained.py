"""Step 5 of an ingest: what the new index keeps of the previous one's trained parts
(reranker, gate, reader) and of its documents' extraction-quality checks."""

from __future__ import annotations

from typing import Iterable

from glassrag.config import Config
from glassrag.ingest.report import IngestReport
from glassrag.store.base import Index


def kept_extra(previous: Index | None, config: Config, report: IngestReport, documents: Iterable[str]) -> dict:
    """The new index's `extra`: the trained parts kept (`kept_trained_parts`) and the quality
    check of each of `documents`, this ingest's or, for a document not read again, the
    previous index's."""
    quality = {**(previous.extra.get("quality", {}) if previous else {}), **report.quality}
    quality = {d: quality[d] for d in documents if d in quality}
    extra = kept_trained_parts(previous, config, report)
    if quality:
        extra["quality"] = quality
    return extra


def kept_trained_parts(previous: Index | None, config: Config, report: IngestReport) -> dict:
    """What the new index keeps of the previous one's trained parts (reranker, gate, reader).

    - Nothing changed: all of them.
    - Documents only added (none changed or removed, same chunking and analysis): all of
      them, each marked with the documents added since it was fitted (`added_since`), and
      a warning. The train questions' labelled passages are unchanged; what moves is BM25's
      corpus statistics (idf, mean length), so the scores the reranker and the gate read
      shift slightly and a new document can enter the candidate lists; the figures they were
      fitted with are then approximate, not wrong, and the route says so.
    - A document changed or removed, or other chunking or analysis: none, with a warning
      that names why (a labelled passage may be gone, every chunk id may differ).
    """
    trained = sorted(set(previous.extra) - {"quality"}) if previous is not None else []
    if previous is None or not trained:
        return {}
    kept = {k: v for k, v in previous.extra.items() if k != "quality"}
    same_text = previous.config.chunk == config.chunk and previous.config.analyze == config.analyze
    if same_text and not (report.added or report.changed or report.removed):
        return kept
    if same_text and report.added and not (report.changed or report.removed):
        for part in ("reranker", "gate"):
            if isinstance(kept.get(part), dict):
                kept[part] = {**kept[part], "added_since": sorted({*kept[part].get("added_since", []),
                                                                 *report.added})}
        report.warnings.append(
            f"kept the trained parts ({', '.join(trained)}), fitted before {len(report.added)} document(s) "
            f"were added ({', '.join(report.added[:5])}{' …' if len(report.added) > 5 else ''}): BM25's word "
            "statistics moved, so their scores shift a little; run glassrag rerank-train and glassrag "
            "calibrate again to refit them on this corpus")
        return kept
    why = "the chunking or analysis settings changed" if not same_text else " and ".join(
        f"{what} ({', '.join(ids[:5])}{' …' if len(ids) > 5 else ''})"
        for what, ids in (("documents changed", report.changed), ("documents were removed", report.removed)) if ids)
    report.warnings.append(
        f"the index's trained parts ({', '.join(trained)}) were dropped because {why} (a labelled passage may "
        "have changed or gone): run glassrag rerank-train and glassrag calibrate again")
    return {}
