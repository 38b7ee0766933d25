"""The gate: decline when the best score is below a threshold calibrated for this index
and this scoring stage.

    declined  ⇔  top score of the scoring stage < threshold

Scores mean different things at each stage (BM25 sums, cosines, probabilities), so a
threshold is valid only for the stage and parameters it was calibrated on: the
calibration records a fingerprint of them, and a pipeline whose scoring stage differs
(another reranker, other k1 and b) does not use it and says so in the trace.
"""

from __future__ import annotations

import json
from typing import Any


def fingerprint(stage: str, params: dict[str, Any]) -> str:
    """A stable text of what produced the scores the threshold applies to."""
    return json.dumps({"stage": stage, "params": params}, sort_keys=True, default=str)


class Gate:
    name = "gate"
    kind = "gate"

    def __init__(self, calibration: dict[str, Any] | None, stage: str, params: dict[str, Any]) -> None:
        self.calibration = calibration
        self.stage = stage
        self.current = fingerprint(stage, params)

    @property
    def threshold(self) -> float | None:
        if self.calibration is None or self.calibration.get("fingerprint") != self.current:
            return None
        return float(self.calibration["threshold"])

    def params(self) -> dict[str, Any]:
        return {"stage": self.stage, "threshold": self.threshold,
                "rule": (self.calibration or {}).get("rule")}

    def decide(self, top_score: float | None) -> tuple[bool, str]:
        """(declined, why) for the best score of the scoring stage (None: nothing found)."""
        if top_score is None:
            return True, "no passage matched the question"
        if self.calibration is None:
            return False, "not calibrated: run glassrag calibrate to let the gate decline"
        if self.threshold is None:
            was = json.loads(self.calibration["fingerprint"])
            return False, (f"threshold {self.calibration['threshold']:.4g} was calibrated on "
                           f"{was['stage']} scores with {was['params']}; this pipeline scores with "
                           f"{self.stage} {json.loads(self.current)['params']}: the scores shifted, "
                           f"run glassrag calibrate again")
        if top_score < self.threshold:
            return True, (f"top {self.stage} score {top_score:.4g} is below the calibrated "
                          f"threshold {self.threshold:.4g}")
        return False, f"top {self.stage} score {top_score:.4g} ≥ threshold {self.threshold:.4g}"
