"""The second threshold (gate.offtopic_keep, gate/calibrate.py `calibrate_offtopic`): fitted
on found answers against off-topic questions alone, placed to keep the asked share of found
answers out of fold; the gate declines below either threshold and says which."""

from __future__ import annotations

import numpy as np

from glassrag.gate.calibrate import COMBINED, CV_FOLDS, calibrate_offtopic
from glassrag.gate.score import combined_oof, value
from glassrag.gate.threshold import Gate, declines, offtopic_keep

NAMES = COMBINED[:2]


def questions(n: int, centre: float, seed: int) -> list[dict[str, float]]:
    rng = np.random.default_rng(seed)
    return [{NAMES[0]: float(a), NAMES[1]: float(b)} for a, b in rng.normal(centre, 1.0, (n, 2))]


FOUND, OFF = questions(60, 2.0, 0), questions(80, -2.0, 1)
FIRST = {"score": {"kind": "signal", "name": NAMES[0]}, "threshold": -10.0, "rule": "cost", "cost": 2.5,
         "separable": True, "auroc": {"auroc": 0.9, "low": 0.8, "high": 0.95}, "settings": {}}


def test_the_threshold_keeps_the_asked_share_of_found_answers_out_of_fold():
    for keep in (0.9, 0.95, 0.98):
        off = calibrate_offtopic(FOUND, OFF, keep)
        pos, neg = combined_oof(FOUND, OFF, list(NAMES))
        kept = np.mean(np.asarray(pos) >= off["threshold"])
        assert kept >= keep and off["kept"] == kept
        # the highest such threshold: past the lowest found answer it keeps, too few are kept
        lowest_kept = min(s for s in pos if s >= off["threshold"])
        assert np.mean(np.asarray(pos) > lowest_kept) < keep
        assert off["declined"] == np.mean(np.asarray(neg) < off["threshold"]) and off["declined"] > 0.9
        assert off["keep"] == keep and off["score"]["names"] == list(NAMES) and off["auroc"]["low"] > 0.5


def test_a_stricter_keep_never_declines_more():
    thresholds = [calibrate_offtopic(FOUND, OFF, k)["threshold"] for k in (0.9, 0.95, 0.98, 1.0)]
    assert thresholds == sorted(thresholds, reverse=True)


def test_not_active_with_too_few_questions_or_without_separation():
    few = calibrate_offtopic(FOUND, OFF[: CV_FOLDS - 1], 0.98)
    assert few["threshold"] is None and "needs at least" in few["why"]
    one_signal = calibrate_offtopic([{NAMES[0]: s[NAMES[0]]} for s in FOUND], [{NAMES[0]: s[NAMES[0]]} for s in OFF], 0.98)
    assert one_signal["threshold"] is None and "two of" in one_signal["why"]
    same = calibrate_offtopic(FOUND, questions(80, 2.0, 2), 0.98)  # off-topic drawn like the found ones
    assert same["threshold"] is None and "does not separate" in same["why"]


def test_the_gate_declines_below_either_threshold_and_says_which():
    off = calibrate_offtopic(FOUND, OFF, 0.98)
    cal = {**FIRST, "offtopic_gate": off}
    low = min(OFF, key=lambda s: value(off["score"], s))  # far below the second threshold
    declined, why = Gate(cal, {}).decide(low)
    assert declined and why.startswith("off-topic:") and "keeps 98%" in why
    high = max(FOUND, key=lambda s: value(off["score"], s))
    declined, why = Gate(cal, {}).decide(high)
    assert not declined and "≥ threshold" in why and f"; off-topic score " in why
    # the first threshold still declines on its own, and is named first
    assert Gate({**cal, "threshold": 100.0}, {}).decide(high)[1].startswith("gate score")
    # without the second threshold (keep 1, or an old calibration) only the first one declines
    assert not declines(FIRST, low) and declines(cal, low)
    assert offtopic_keep(FIRST) == 1.0 and offtopic_keep(cal) == 0.98
    assert Gate(cal, {}).params()["offtopic_threshold"] == off["threshold"]
    assert declines(cal, None)  # nothing matched: declined, as ever
