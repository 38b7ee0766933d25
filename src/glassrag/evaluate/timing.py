"""Where an evaluation or a calibration spends its time: each stage's milliseconds, summed
over the questions from the trace (nothing is timed twice), so `eval` and `calibrate` can say
what they spend their time on (issue 47: calibrate ran 230-1,644 s without a word)."""

from __future__ import annotations

from typing import Iterable, Mapping


def stage_time(stages: Iterable[tuple[str, float]]) -> dict[str, float]:
    """stage name → total ms, in the order the stages first came."""
    out: dict[str, float] = {}
    for name, ms in stages:
        out[name] = out.get(name, 0.0) + float(ms)
    return out


def described(ms: Mapping[str, float], shown: int = 4) -> str:
    """`gate 81 % (12.3 s), bm25 5 % (0.8 s), …`: the `shown` costliest stages with their share
    of the time all stages took."""
    total = sum(ms.values())
    if total <= 0:
        return "no stage took measurable time"
    top = sorted(ms.items(), key=lambda kv: -kv[1])[:shown]
    parts = [f"{name} {value / total:.0%} ({value / 1000:.1f} s)" for name, value in top]
    rest = len(ms) - len(top)
    return ", ".join(parts) + (f", {rest} more stage(s) {1 - sum(v for _, v in top) / total:.0%}" if rest else "")
