"""Rule 2 of the experiment log (experiment/verdict.py): the verdicts on small paired outcomes
whose tests are written as arithmetic, and every evidence file of the repository's log
decided again from its own per-question figures."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from glassrag.experiment import load, redecided
from glassrag.experiment import verdict as rule
from glassrag.experiment.measure import decide_rule1, with_holm

LOG = Path(__file__).resolve().parents[2] / "experiments"
EVIDENCE = sorted((LOG / "results").glob("*.json"))


def corpus(up: int, down: int, same: int = 0, metric: str = "answer hit@5") -> dict:
    """A corpus's per-question 0/1 figures: `up` questions only the change gets right, `down`
    only the baseline, `same` both."""
    baseline = [0.0] * up + [1.0] * down + [1.0] * same
    change = [1.0] * up + [0.0] * down + [1.0] * same
    return {"per_question": {metric: {"ids": [f"q{i}" for i in range(len(baseline))],
                                      "baseline": baseline, "change": change}}}


def merged(*parts: dict) -> dict:
    out: dict = {"per_question": {}}
    for p in parts:
        out["per_question"].update(p["per_question"])
    return out


def test_the_pooled_test_is_mcnemar_on_every_corpus_s_questions():
    got = rule.pooled("answer hit@5", {"a": corpus(6, 1, 3), "b": corpus(4, 1, 5)})
    # 10 improved against 2 degraded: p = 2 · P(X ≤ 2), X ~ Binomial(12, 1/2) = 2 · (1 + 12 + 66) / 4096
    assert got["p"] == pytest.approx(2 * (1 + 12 + 66) / 4096)
    assert (got["n"], got["improved"], got["degraded"]) == (20, 10, 2)
    assert got["diff"] == pytest.approx((6 + 3 + 4 + 5) / 20 - (1 + 3 + 1 + 5) / 20)
    assert got["corpora"] == ["a", "b"]


def test_kept_needs_the_pooled_test_and_no_corpus_worse():
    # neither corpus alone: 6 against 1 gives 2 · 8/128 = 0.125; pooled 0.039 (above)
    verdict, reason, t = rule.decide("answer hit@5", [], {"a": corpus(6, 1, 3), "b": corpus(4, 1, 5)})
    assert verdict == "kept", reason
    assert t["corpora"]["a"]["answer hit@5"]["p"] == pytest.approx(2 * 8 / 128)
    assert "pooled answer hit@5 +0.400" in reason


def test_rejected_when_nothing_survives():
    assert rule.decide("answer hit@5", [], {"a": corpus(3, 2, 5), "b": corpus(2, 2, 6)})[0] == "rejected"
    # a pooled loss is rejected too
    assert rule.decide("answer hit@5", [], {"a": corpus(1, 10), "b": corpus(0, 4)})[0] == "rejected"
    assert rule.decide("answer hit@5", [], {"a": {"skipped": "not here"}})[0] == "rejected"


def test_kept_for_one_set_only():
    # a: 10 against 0, p = 2/1024, Holm over two corpora 4/1024 < 0.05; b: 4 against 8 (p 0.39);
    # pooled 14 against 8: p = 2 · P(X ≤ 8), X ~ Binomial(22, 1/2) ≈ 0.29
    verdict, reason, t = rule.decide("answer hit@5", [], {"a": corpus(10, 0), "b": corpus(4, 8)})
    assert verdict == "kept for one set only", reason
    assert t["corpora"]["a"]["answer hit@5"]["p_holm"] == pytest.approx(2 * 2 / 1024)
    assert t["pooled"]["answer hit@5"]["p"] > rule.ALPHA


def test_a_trade_pooled_better_but_a_corpus_worse():
    # pooled 30 against 10 (p ≈ 0.002), but b loses 10 against 0 (Holm p = 2 · 2/1024)
    assert rule.decide("answer hit@5", [], {"a": corpus(30, 0), "b": corpus(0, 10)})[0] == "trade"


def test_a_trade_by_an_also_metric():
    also = "answer source_recall@5"
    up, down = corpus(12, 0), corpus(0, 12, metric=also)
    verdict, reason, _ = rule.decide("answer hit@5", [also], {"a": merged(up, down)})
    assert verdict == "trade" and f"pooled {also} -1.000" in reason and "worse" in reason
    # the deciding metric down, the reported one up: the diversity cap's trade
    verdict, _, _ = rule.decide("answer hit@5", [also], {"a": merged(corpus(0, 12), corpus(12, 0, metric=also))})
    assert verdict == "trade"


def test_lower_is_better_is_an_improvement_when_it_falls():
    m = "answer declined_answerable"
    assert rule.decide(m, [], {"a": corpus(0, 12, metric=m)})[0] == "kept"
    assert rule.decide(m, [], {"a": corpus(12, 0, metric=m)})[0] == "rejected"


def test_the_boundary_is_strictly_below_alpha(monkeypatch):
    """p = alpha does not count: McNemar's p for 6 against 0 is 2/64 = 0.03125; with alpha
    set to that value the same outcomes are rejected, a hair above it kept."""
    monkeypatch.setattr(rule, "ALPHA", 2 / 64)
    assert rule.decide("answer hit@5", [], {"a": corpus(6, 0)})[0] == "rejected"
    monkeypatch.setattr(rule, "ALPHA", 2 / 64 + 1e-9)
    assert rule.decide("answer hit@5", [], {"a": corpus(6, 0)})[0] == "kept"


def test_a_graded_metric_uses_the_sign_flip_test():
    m = "ranking ndcg@10"
    got = rule.paired_test(m, [0.5] * 8, [1.0] * 8)
    # every difference +0.5: only the all-plus and all-minus signs reach |mean|, 2 of 2^8;
    # 10,000 resamples estimate it: p near (1 + 10000 · 2/256) / 10001
    assert got["test"] == "paired randomisation" and got["p"] == pytest.approx(2 / 256, abs=0.004)
    assert got["diff"] == pytest.approx(0.5)


def problems(path: Path) -> list[str]:
    """How the evidence file at `path` disagrees with its rule applied to its own figures."""
    evidence = json.loads(path.read_text(encoding="utf-8"))
    experiment = load(LOG / f"{evidence['name']}.toml")
    out = []
    if evidence["verdict"] not in (*rule.VERDICTS, *rule.RENAMED):
        out.append(f"unknown verdict {evidence['verdict']!r}")
    if evidence.get("rule") == rule.RULE:
        again = redecided(experiment, evidence)
        for key in ("verdict", "reason"):
            if again[key] != evidence[key]:
                out.append(f"{key}: the file says {evidence[key]!r}, its figures give {again[key]!r}")
        for corpus_name, c in evidence["corpora"].items():
            for m, f in c.get("per_question", {}).items():
                row, test = c["metrics"][m], rule.paired_test(m, f["baseline"], f["change"])
                for key in ("diff", "p", "improved", "degraded", "n"):
                    if row[key] != pytest.approx(test[key]):
                        out.append(f"{corpus_name} {m} {key}: {row[key]} recorded, {test[key]} from its questions")
    else:  # rule 1 (before per-question figures): from the per-corpus p-values it recorded
        per = {c: ({**v, "metrics": {m: {k: x for k, x in r.items() if k != "p_holm"}
                                     for m, r in v["metrics"].items()}} if "metrics" in v else v)
               for c, v in evidence["corpora"].items()}
        verdict, _ = decide_rule1(experiment, with_holm(experiment, per))
        if verdict != evidence["verdict"]:
            out.append(f"rule 1 gives {verdict!r}, the file says {evidence['verdict']!r}")
    if evidence["expected"] != experiment.verdict and evidence.get("rule") == rule.RULE:
        out.append(f"the log records {experiment.verdict!r}, the evidence was written for {evidence['expected']!r}")
    return out


@pytest.mark.parametrize("path", EVIDENCE, ids=[p.stem for p in EVIDENCE])
def test_every_verdict_follows_from_its_evidence(path):
    assert problems(path) == []


def test_a_tampered_verdict_is_caught(tmp_path, monkeypatch):
    """The check above fails when a file's verdict is not its figures' (so it checks something)."""
    ruled = [p for p in EVIDENCE if json.loads(p.read_text()).get("rule") == rule.RULE]
    if not ruled:
        pytest.skip("no evidence measured by rule 2 yet")
    evidence = json.loads(ruled[0].read_text())
    tampered = copy.deepcopy(evidence)
    tampered["verdict"] = next(v for v in rule.VERDICTS if v != evidence["verdict"])
    path = tmp_path / ruled[0].name
    path.write_text(json.dumps(tampered))
    assert any(p.startswith("verdict:") for p in problems(path))
    pq = next(c for c in tampered["corpora"].values() if "per_question" in c)["per_question"]
    figures = pq[evidence["metric"]]
    figures["change"] = [1.0 - x if x in (0.0, 1.0) else x for x in figures["change"]]
    tampered["verdict"] = evidence["verdict"]
    path.write_text(json.dumps(tampered))
    assert problems(path)



def test_shipped_says_whether_the_change_is_in_the_defaults():
    """`shipped = true` exactly when every setting the change makes is the default users get
    (so the flag cannot drift from config.py: a default moved to a change must be marked)."""
    from glassrag.config import Config
    from glassrag.experiment import load_all

    defaults = Config()
    for e in (x for x in load_all(LOG) if x.measured):
        _, changed = e.configs()
        in_defaults = all(changed.value(f"{section}.{key}") == defaults.value(f"{section}.{key}")
                          for section, values in e.change.items() for key in values)
        assert e.shipped == in_defaults, e.name
