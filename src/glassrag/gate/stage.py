"""The gate as a stage (issue 29): it measures the question's signals from the trace so far
(gate/signals.py, and the answerability model's, gate/answerability.py), decides with the
calibrated threshold (gate/threshold.py `Gate.decide`), and passes the last ranking on, or
nothing when it declines.

Its signals cost most (the answerability model reads the top passages) and depend on fewer
settings than its decision, so the loop keeps them in the stage cache under `measure_id()`:
a sweep that calibrates each configuration measures a question once, decides once per
calibration.

Answering one question (`glassrag ask`, the web app) needs the decision, not the signal:
with `read_to_decide` the gate reads the model only until its decision is settled, and
takes the same decision as when it reads every passage. The score rises with the model's
logit (a positive weight; the margin, which does not, makes it read them all), the logit of
every passage lies within the model's bounds (rerank/cross_bounds.py), and the best of the
passages read so far is a floor of the best of them all. So: when any logit within the
bounds gives the same decision, no passage is read; else passages are read in rank order
until the best so far passes, or none is left. The signals then record how many were read
(`answerability_read`) and, as `answerability`, the value the decision was taken at: the
best so far when it passed, a bound when none was read.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

from glassrag.gate import answerability
from glassrag.gate import signals as gate_signals
from glassrag.gate.threshold import Gate, fitting, scoring_settings
from glassrag.query import Query
from glassrag.rerank import chosen
from glassrag.schema import Kind, StageTrace
from glassrag.stage import Decision, Entry, StageOutput, keeps_scores, listed
from glassrag.store.base import ChunkTexts

Signals = dict[str, float] | None  # None: no passage matched at all


def made(index: Any, config: Any, bm25: Any, every_signal: bool = False, read_to_decide: bool = False) -> GateStage:
    """The gate of these settings: calibrated when `gate.enabled` (else it passes every
    question), measuring the answerability signals when the calibration reads them, or when
    `every_signal` (calibration needs them all); with `read_to_decide` (and not `every_signal`),
    reading the model only as far as its decision needs."""
    folder = answerability.model_folder(config.gate.answerability)
    model = answerability.model_digest(folder) if folder else None
    used, _ = chosen(config.rerank.method, index.extra.get("reranker"))
    settings = scoring_settings(config, index.extra.get("reranker"), used, model)
    own = fitting(index.extra, settings)  # the calibration made for these settings, if kept
    calibration = own if config.gate.enabled else None
    wanted = every_signal or (config.gate.enabled and answerability.read_by(own))
    reads = answerability.Answerability(folder, config.gate.answerability_depth) if folder and wanted else None
    return GateStage(calibration, settings, index, bm25, config.answer.k, reads, model,
                     read_to_decide and not every_signal)


class GateStage(Gate):
    """`Gate` with what it reads: the index, BM25, the answer's k and the answerability model."""

    reads_trace = True

    def __init__(self, calibration: dict[str, Any] | None, settings: dict[str, Any], index: Any, bm25: Any,
                 k: int, answerability_model: answerability.Answerability | None = None,
                 model_digest: str | None = None, read_to_decide: bool = False) -> None:
        super().__init__(calibration, settings)
        self.index = index
        self.bm25 = bm25
        self.k = k
        self.answerability = answerability_model
        self.model_digest = model_digest
        self.read_to_decide = read_to_decide and self.rises_with_answerability()

    def measure_id(self) -> str:
        """What the signals depend on beyond the trace and the index: the cache's name for them."""
        reads = (self.model_digest, self.answerability.depth) if self.answerability else None
        return f"signals k={self.k} answerability={reads}"

    def measure(self, query: Query, trace: Sequence[StageTrace]) -> Signals:
        """The gate's candidate signals for one question (None when nothing matched)."""
        if not any(t.hits for t in trace if t.kind in (Kind.RETRIEVE, Kind.FUSE)):
            return None
        out = gate_signals.gather(trace, query.tokens, self.bm25, query.bm25_scores(self.bm25),
                                  self.index.position, self.k)
        model = self.answerability
        if model is not None:
            ranking = [t for t in trace if Kind(t.kind).ranks][-1]
            texts = ChunkTexts(self.index)
            ids = [h.chunk_id for h in ranking.hits][: model.depth]

            def read(chunk_id: str) -> float:
                return model.scores(query.question, [chunk_id], texts.__getitem__)[0]

            out.update(self.read_enough(out, ids, read) if self.read_to_decide
                       else answerability.signals([read(c) for c in ids]))
        return out

    def rises_with_answerability(self) -> bool:
        """Whether every score the calibration decides on rises with the model's best logit (or
        does not read it), and does not read the margin: the condition of `read_to_decide`."""
        cal = self.calibration or {}
        for score in (cal.get("score"), (cal.get("offtopic_gate") or {}).get("score")):
            if not score:
                continue
            names = [score["name"]] if score["kind"] == "signal" else list(score["names"])
            if "answerability_margin" in names:
                return False
            if score["kind"] == "combined" and "answerability" in names:
                i = names.index("answerability")
                if not score["weights"][i] / score["std"][i] >= 0:
                    return False
        return True

    def read_enough(self, cheap: dict[str, float], ids: Sequence[str],
                    read: Callable[[str], float]) -> dict[str, float]:
        """The answerability signals as far as the decision needs them (the module's docstring)."""
        assert self.answerability is not None

        def declines(best: float) -> bool:
            return self.decide({**cheap, "answerability": best})[0]

        low, high = self.answerability.bounds or (-math.inf, math.inf)
        if ids and math.isfinite(low) and math.isfinite(high) and declines(low) == declines(high):
            return {"answerability": high if declines(high) else low, "answerability_read": 0}
        scores: list[float] = []
        for chunk_id in ids:
            scores.append(read(chunk_id))
            if len(scores) < len(ids) and not declines(max(scores)):
                return {"answerability": max(scores), "answerability_read": len(scores)}
        return {**answerability.signals(scores), "answerability_read": len(scores)}

    def decided(self, inputs: Mapping[str, StageOutput], signals: Signals) -> StageOutput:
        """The decision on `signals`; the list read passes on unless declined."""
        declined, why = self.decide(signals)
        if signals is not None and self.cut_short(signals):  # declined only unread, at the highest logit; passed at a floor
            why = self.decide(signals, "at most " if declined else "at least ")[1] + self.how_far(signals, declined)
        passed = () if declined else listed(inputs).hits
        return StageOutput(passed, (("declined: " if declined else "passed: ") + why,),
                           decision=Decision(declined, why), traced={"signals": signals or {}})

    @staticmethod
    def cut_short(signals: Signals) -> bool:
        """Whether the answerability model stopped before the last passage (`read_enough`: only
        a reading to the end gives the margin): the score is then a bound of the question's."""
        return (signals is not None and bool(signals) and "answerability_read" in signals and "answerability" in signals
                and "answerability_margin" not in signals)

    def how_far(self, signals: dict[str, float], declined: bool) -> str:
        """What the answerability model read, when it stopped short."""
        assert self.answerability is not None
        read, depth = int(signals["answerability_read"]), self.answerability.depth
        if read == 0 and self.answerability.bounds:
            low, high = self.answerability.bounds
            return (f"; the answerability model read none of the top {depth} passages: any logit it can give "
                    f"({low:.3g} to {high:.3g}) {'declines' if declined else 'passes'}")
        return (f"; the answerability model read {read} of the top {depth} passages: the best so far "
                f"passes, and the others could only raise it")

    def run(self, query: Query, inputs: Mapping[str, StageOutput],
            trace: Sequence[StageTrace] = ()) -> StageOutput:
        return self.decided(inputs, self.measure(query, trace))


GATES = {"gate": Entry(made, keeps_scores("the last ranking's, passed on whole when the gate lets the question "
                                          "through (nothing when it declines)"))}
