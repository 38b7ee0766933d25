"""The glossary holds the words a newcomer to RAG looks up, with the names they may know them by,
and describes the gate as it works now (issue 27: it described the old "balanced" rule)."""

from glassrag.config import GateSettings
from glassrag.web.glossary import SYNONYMS, TERMS, entries

NEWCOMER = ("RAG", "corpus", "embedding", "candidate pool", "reranking", "context expansion",
            "golden set", "adversarial case")


def test_the_newcomers_terms_are_defined_with_synonyms():
    by_term = {e["term"]: e for e in entries()}
    for term in NEWCOMER:
        assert term in by_term and len(by_term[term]["definition"]) > 40
        assert by_term[term]["also"], term
    assert set(SYNONYMS) <= set(TERMS)


def test_the_gate_entry_names_the_default_rule():
    gate = TERMS["gate"][0]
    assert "balances" not in gate
    assert f"gate.rule = {GateSettings().rule}" in gate and "gate.cost" in gate
