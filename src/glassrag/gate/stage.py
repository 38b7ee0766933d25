"""The gate as a stage (issue 29): it measures the question's signals from the trace so far
(gate/signals.py, and the answerability model's, gate/answerability.py), decides with the
calibrated threshold (gate/threshold.py `Gate.decide`), and passes the last ranking on, or
nothing when it declines.

Its signals cost most (the answerability model reads the top passages) and depend on fewer
settings than its decision, so the loop keeps them in the stage cache under `measure_id()`:
a sweep that calibrates each configuration measures a question once, decides once per
calibration.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from glassrag.gate import answerability
from glassrag.gate import signals as gate_signals
from glassrag.gate.threshold import Gate, scoring_settings
from glassrag.query import Query
from glassrag.rerank import chosen
from glassrag.schema import RANKING_KINDS, StageTrace
from glassrag.stage import Decision, Entry, StageOutput, keeps_scores, listed
from glassrag.store.base import ChunkTexts

Signals = dict[str, float] | None  # None: no passage matched at all


def made(index: Any, config: Any, bm25: Any, every_signal: bool = False) -> GateStage:
    """The gate of these settings: calibrated when `gate.enabled` (else it passes every
    question), measuring the answerability signals when the calibration reads them, or when
    `every_signal` (calibration needs them all)."""
    folder = answerability.model_folder(config.gate.answerability)
    model = answerability.model_digest(folder) if folder else None
    calibration = index.extra.get("gate") if config.gate.enabled else None
    wanted = every_signal or (config.gate.enabled and answerability.read_by(index.extra.get("gate")))
    reads = answerability.Answerability(folder, config.gate.answerability_depth) if folder and wanted else None
    used, _ = chosen(config.rerank.method, index.extra.get("reranker"))
    settings = scoring_settings(config, index.extra.get("reranker"), used, model)
    return GateStage(calibration, settings, index, bm25, config.answer.k, reads, model)


class GateStage(Gate):
    """`Gate` with what it reads: the index, BM25, the answer's k and the answerability model."""

    reads_trace = True

    def __init__(self, calibration: dict[str, Any] | None, settings: dict[str, Any], index: Any, bm25: Any,
                 k: int, answerability_model: answerability.Answerability | None = None,
                 model_digest: str | None = None) -> None:
        super().__init__(calibration, settings)
        self.index = index
        self.bm25 = bm25
        self.k = k
        self.answerability = answerability_model
        self.model_digest = model_digest

    def measure_id(self) -> str:
        """What the signals depend on beyond the trace and the index: the cache's name for them."""
        reads = (self.model_digest, self.answerability.depth) if self.answerability else None
        return f"signals k={self.k} answerability={reads}"

    def measure(self, query: Query, trace: Sequence[StageTrace]) -> Signals:
        """The gate's candidate signals for one question (None when nothing matched)."""
        if not any(t.hits for t in trace if t.kind in ("retrieve", "fuse")):
            return None
        out = gate_signals.gather(trace, query.tokens, self.bm25, query.bm25_scores(self.bm25),
                                  self.index.position, self.k)
        if self.answerability is not None:
            ranking = [t for t in trace if t.kind in RANKING_KINDS][-1]
            texts = ChunkTexts(self.index)
            out.update(answerability.signals(self.answerability.scores(
                query.question, [h.chunk_id for h in ranking.hits], texts.__getitem__)))
        return out

    def decided(self, inputs: Mapping[str, StageOutput], signals: Signals) -> StageOutput:
        """The decision on `signals`; the list read passes on unless declined."""
        declined, why = self.decide(signals)
        passed = () if declined else listed(inputs).hits
        return StageOutput(passed, (("declined: " if declined else "passed: ") + why,),
                           decision=Decision(declined, why), traced={"signals": signals or {}})

    def run(self, query: Query, inputs: Mapping[str, StageOutput],
            trace: Sequence[StageTrace] = ()) -> StageOutput:
        return self.decided(inputs, self.measure(query, trace))


GATES = {"gate": Entry(made, keeps_scores("the last ranking's, passed on whole when the gate lets the question "
                                          "through (nothing when it declines)"))}
