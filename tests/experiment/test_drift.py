"""Has an experiment's baseline moved since it was measured (experiment/drift.py): evidence
written by hand here; tests/experiment/test_log.py measures it for real."""

from __future__ import annotations

from glassrag.config import Config
from glassrag.experiment.drift import flat, moved, said, unrecorded
from glassrag.experiment.log import Experiment

NOW = flat(Config().to_dict())
FIVE = ["answerability", "bm25_norm", "term_share", "coverage", "known_share"]


def entry(metric: str = "answer hit@5", also: tuple[str, ...] = (), baseline: dict | None = None) -> Experiment:
    return Experiment(name="x", title="t", hypothesis="h", verdict="rejected", metric=metric, also=also,
                      corpora=("demo",), baseline=baseline or {}, change={"cap": {"per_document": 1}})


def test_flat_names_every_setting_by_section_and_keeps_values_as_json_holds_them():
    assert NOW["bm25.k1"] == Config().bm25.k1 and NOW["cap.per_document"] == Config().cap.per_document
    assert len(NOW) == sum(len(v) for v in Config().to_dict().values())
    assert flat({"a": {"b": (1, 2)}}) == {"a.b": [1, 2]}


def test_today_s_baseline_recorded_has_not_moved():
    evidence = {"corpora": {"demo": {"baseline_settings": dict(NOW)}}}
    assert moved(entry(), evidence) == {} and unrecorded(evidence) == []


def test_the_entry_s_own_baseline_table_is_today_s_baseline():
    k1 = NOW["bm25.k1"] + 0.5
    evidence = {"corpora": {"demo": {"baseline_settings": NOW | {"bm25.k1": k1}}}}
    assert moved(entry(baseline={"bm25": {"k1": k1}}), evidence) == {}
    assert moved(entry(), evidence) == {"demo": [("bm25.k1", k1, NOW["bm25.k1"])]}


def test_a_setting_added_since_ran_as_its_definition_says_it_did_before():
    # absent then: bm25.k1 (no `before`: it ran as its default does) and gate.signals (its `before`:
    # the five signals the combination read before the margin); gone since: not counted
    then = {k: v for k, v in NOW.items() if k not in ("bm25.k1", "gate.signals")}
    then |= {"gone.setting": 3, "bm25.b": NOW["bm25.b"] / 2}
    evidence = {"corpora": {"demo": {"baseline_settings": then}, "scifact": {"skipped": "absent"}}}
    assert NOW["gate.signals"] == [*FIVE, "margin"]
    assert moved(entry(), evidence) == {"demo": [("bm25.b", NOW["bm25.b"] / 2, NOW["bm25.b"]),
                                                 ("gate.signals", FIVE, [*FIVE, "margin"])]}


def test_a_ranking_metric_does_not_count_the_stages_after_the_ranking():
    cost = 0.5 if NOW["gate.cost"] != 0.5 else 0.25
    evidence = {"corpora": {"demo": {"baseline_settings": NOW | {"gate.cost": cost, "answer.k": 9,
                                                                 "generate.temperature": 9.0}}}}
    assert moved(entry("ranking mrr@10", ("ranking ndcg@10",)), evidence) == {}
    assert [name for name, _, _ in moved(entry("ranking mrr@10", ("answer hit@5",)), evidence)["demo"]] == \
        ["answer.k", "gate.cost", "generate.temperature"]
    evidence["corpora"]["demo"]["baseline_settings"]["bm25.b"] = NOW["bm25.b"] / 2
    assert moved(entry("ranking mrr@10"), evidence) == {"demo": [("bm25.b", NOW["bm25.b"] / 2, NOW["bm25.b"])]}


def test_unrecorded_names_measured_corpora_without_settings():
    evidence = {"corpora": {"demo": {"baseline_settings": dict(NOW)}, "birds": {"metrics": {}},
                            "scifact": {"skipped": "absent"}}}
    assert unrecorded(evidence) == ["birds"]
    assert moved(entry(), {"corpora": {"birds": {"baseline_settings": {}}}}) == {}


def test_said_groups_the_corpora_a_setting_moved_on():
    changes = {"demo": [("bm25.k1", 1.2, 0.9), ("gate.signals", FIVE, [*FIVE, "margin"])],
               "birds": [("bm25.k1", 1.2, 0.9)]}
    assert said(changes) == ('`bm25.k1` 1.2 → 0.9 (demo, birds); `gate.signals` ["answerability", "bm25_norm", '
                             '"term_share", "coverage", "known_share"] → ["answerability", "bm25_norm", "term_share", '
                             '"coverage", "known_share", "margin"] (demo)')
    assert said({"demo": [("bm25.k1", 1.2, 0.9)]}, mark="") == "bm25.k1 1.2 → 0.9 (demo)"


def test_a_corpus_without_settings_does_not_hide_the_next_one_s():
    evidence = {"corpora": {"birds": {"metrics": {}}, "demo": {"baseline_settings": NOW | {"bm25.k1": 2.0}}}}
    assert moved(entry(), evidence) == {"demo": [("bm25.k1", 2.0, NOW["bm25.k1"])]}


def test_said_writes_text_as_it_is():
    assert said({"demo": [("chunk.unit", "mot", "word")]}) == '`chunk.unit` "mot" → "word" (demo)'
    assert said({"demo": [("x.y", "naïve", "café")]}) == '`x.y` "naïve" → "café" (demo)'
