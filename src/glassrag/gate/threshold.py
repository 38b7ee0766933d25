"""The gate: decline when the gate's score for a question is below a threshold calibrated
for this index and these settings.

    declined  ⇔  score(signals of the question) < threshold

The score is a signal or a combination of signals (`gate/score.py`) chosen by
`glassrag calibrate`. Signals mean different things under different settings (BM25 sums
move with k1 and b, fused scores with the weight, probabilities with the reranker), so a
calibration is valid only for the settings it was made with: it stores them, and a
pipeline whose settings differ passes every question and says which setting changed.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from glassrag.config import SCORING
from glassrag.gate.score import score_name, value
from glassrag.schema.kind import Kind


def scoring_settings(config: Any, reranker: dict[str, Any] | None, rerank_method: str,
                     answerability: str | None = None) -> dict[str, Any]:
    """The flat settings a calibration is valid for: `{"bm25.k1": 1.5, ...}`, every setting
    whose definition says it changes scores (config.py `setting(..., scores=True)`: SCORING;
    the answer's k among them, as coverage reads the top k), the reranker actually used and a
    digest of its weights, and the answerability model (its name, depth and a digest of its
    file: another model's scores are on another scale)."""
    flat = {name: config.value(name) for name in SCORING}
    flat["rerank.used"] = rerank_method
    if rerank_method == "learned" and reranker is not None:
        weights = json.dumps([reranker.get("weights"), reranker.get("bias"), reranker.get("mean")])
        flat["rerank.trained"] = hashlib.sha256(weights.encode()).hexdigest()[:12]
    flat["gate.answerability"] = answerability
    if answerability is not None:
        flat["gate.answerability_depth"] = config.gate.answerability_depth
    stored: dict[str, Any] = json.loads(json.dumps(flat, default=str))  # as stored: lists, not tuples
    return stored


def changed(was: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """`name was X, now Y` for every setting that differs."""
    out = []
    for name in sorted(set(was) | set(now)):
        if was.get(name) != now.get(name):
            out.append(f"{name} was {json.dumps(was.get(name))}, now {json.dumps(now.get(name))}")
    return out


# calibrations kept for other settings beside the index's current one (`extra["gates"]`)
KEPT = 8


def fitting(extra: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any] | None:
    """The index's calibration made for `settings`: `extra["gate"]` (the last one made) or
    one kept in `extra["gates"]` for other settings (a hybrid pipeline calibrated beside the
    default one keeps its own threshold, issue 47); else `extra["gate"]`, which the gate
    then reports as made for other settings."""
    current = extra.get("gate")
    for cal in [current, *(extra.get("gates") or [])]:
        if cal and not changed(dict(cal.get("settings", {})), settings):
            found: dict[str, Any] = cal
            return found
    last: dict[str, Any] | None = current
    return last


def kept(extra: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """`extra["gates"]` once `new` becomes the index's calibration: every calibration made
    for other settings than `new`'s (the previous current one first), the KEPT latest."""
    others = [cal for cal in [extra.get("gate"), *(extra.get("gates") or [])]
              if cal and changed(dict(cal.get("settings", {})), dict(new.get("settings", {})))]
    return others[:KEPT]


def offtopic_keep(calibration: Any) -> float:
    """The gate.offtopic_keep a stored calibration was made with (1: no second threshold)."""
    return float((calibration.get("offtopic_gate") or {}).get("keep", 1.0))


class Gate:
    name = "gate"
    kind = Kind.GATE

    def __init__(self, calibration: dict[str, Any] | None, settings: dict[str, Any]) -> None:
        self.calibration = calibration
        self.settings = settings
        self.stale = changed(calibration.get("settings", {}), settings) if calibration else []

    @property
    def active(self) -> bool:
        """Calibrated for these settings and able to separate."""
        return bool(self.calibration and not self.stale and self.calibration.get("separable")
                    and self.calibration.get("threshold") is not None)

    def params(self) -> dict[str, Any]:
        cal = self.calibration or {}
        return {"score": score_name(cal["score"]) if cal.get("score") else None,
                "threshold": cal.get("threshold") if not self.stale else None,
                "rule": cal.get("rule"), "cost": cal.get("cost"), "separable": cal.get("separable"),
                "auroc": cal.get("auroc"),
                "offtopic_threshold": (cal.get("offtopic_gate") or {}).get("threshold") if not self.stale else None}

    def decide(self, signals: dict[str, float] | None, bound: str = "") -> tuple[bool, str]:
        """(declined, why) for one question's signals (None: no passage matched at all).
        `bound` ("at least ", "at most "): the scores are bounds of the question's, not its own
        (the answerability model not read to the end, gate/stage.py), and the reason says so."""
        if signals is None:
            return True, "no passage matched the question"
        cal = self.calibration
        if cal is None:
            return False, "not calibrated: run glassrag calibrate to let the gate decline"
        if self.stale:
            return False, ("the calibration was made with other settings (" + "; ".join(self.stale[:4])
                           + (f"; and {len(self.stale) - 4} more" if len(self.stale) > 4 else "")
                           + "): the scores shifted, run glassrag calibrate again")
        declined, why = self._first(cal, signals, bound)
        if declined:
            return declined, why
        return self._offtopic(cal.get("offtopic_gate"), signals, why, bound)

    @staticmethod
    def _first(cal: dict[str, Any], signals: dict[str, float], bound: str = "") -> tuple[bool, str]:
        name = score_name(cal["score"])
        a = cal["auroc"]
        if not cal.get("separable") or cal.get("threshold") is None:
            return False, (f"declines nothing: on the train split its best score ({name}, AUROC "
                           f"{a['auroc']:.2f}) could not tell answerable from unanswerable questions: "
                           + cal.get("why", f"the interval [{a['low']:.2f}, {a['high']:.2f}] reaches 0.5"))
        score = value(cal["score"], signals)
        if score is None:
            return False, f"a signal of the gate's score ({name}) is missing: run glassrag calibrate again"
        threshold = float(cal["threshold"])
        if score < threshold:
            return True, f"gate score {name} {bound}{score:.4g} is below the calibrated threshold {threshold:.4g}"
        return False, f"gate score {name} {bound}{score:.4g} ≥ threshold {threshold:.4g}"

    @staticmethod
    def _offtopic(off: dict[str, Any] | None, signals: dict[str, float], passed: str,
                  bound: str = "") -> tuple[bool, str]:
        """The second threshold (gate.offtopic_keep, gate/calibrate.py `calibrate_offtopic`)
        after the first one passed the question (`passed`: why)."""
        if not off or off.get("threshold") is None:
            return False, passed
        score = value(off["score"], signals)
        if score is None:
            return False, passed + "; a signal of the off-topic score is missing: run glassrag calibrate again"
        if score >= off["threshold"]:
            return False, passed + f"; off-topic score {bound}{score:.4g} ≥ {off['threshold']:.4g}"
        return True, (f"off-topic: its score against the off-topic questions {bound}{score:.4g} is below the threshold "
                      f"{off['threshold']:.4g} that keeps {off['keep']:.0%} of the found train answers")


def declines(calibration: dict[str, Any], signals: dict[str, float] | None) -> bool:
    """Whether the calibration, valid for its own settings, declines these signals."""
    return Gate(calibration, dict(calibration.get("settings", {}))).decide(signals)[0]
