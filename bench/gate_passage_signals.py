"""Can the words of the shown passages tell an on-topic unanswerable question from a found
answer better than the gate's signals do? Candidate signals read from the five passages the
answer shows (issue 47: the gate declines 30-50 % of on-topic unanswerable questions), each
measured against the signals the gate reads, on every corpus's two splits.

    python bench/gate_passage_signals.py                         # demo, ml-papers, economics, birds
    python bench/gate_passage_signals.py --corpus demo --no-windows

For each corpus of experiments/corpora.toml: the index with glassrag's defaults and the
learned reranker trained on train (the experiment log's bench, as bench/gate_scores.py), the
gate off, every golden question run once; found answers (answer in the top k) against the
golden set's on-topic unanswerable questions (off-topic ones are left out: the second
threshold declines nearly all of them). The candidates, each oriented so that higher means
"more likely answerable", over the passages P₁…P₅ the answer shows and the question's
distinct analysed terms q with IDF weights w (a term the index never saw: IDF(df = 0)):

| candidate | value |
|---|---|
| `best_share` | max over Pᵢ of Σ_{t ∈ q ∩ Pᵢ} w_t / Σ_{t ∈ q} w_t (`term_share` reads P₁ only) |
| `specific_held` | max over Pᵢ of the share of the question's specific words (with a digit, or capitalised after the first word: names, codes, years) that Pᵢ holds; 1 with none |
| `rare_pair` | 1 when the question's two rarest terms occur within 15 terms of each other in some Pᵢ |
| `proximity` | the terms of q that P₁ holds ÷ the shortest run of P₁'s terms holding all of them |
| `window30` | max over 30-term windows of every Pᵢ of the IDF share of q the window holds |
| `window_model` | max over every two-sentence window of every Pᵢ of the answerability model's logit (the gate reads whole passages) |

Reported per signal: AUROC (found against on-topic unanswerable) on train and on test, and the
share of on-topic test questions below the test threshold keeping 97 % of the found test answers
(issue 47's bound; what no threshold on that one signal could beat there). Writes
bench/results/gate_passage_signals.json and .md.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from bench.answerability import LOG  # noqa: E402
from bench.common import RESULTS  # noqa: E402
from glassrag.config import Config  # noqa: E402
from glassrag.evaluate.relevance import Judge  # noqa: E402
from glassrag.evaluate.tune import gate_rows  # noqa: E402
from glassrag.experiment import work_folder  # noqa: E402
from glassrag.experiment.corpora import load_corpora, workbench  # noqa: E402
from glassrag.lexical.bm25 import idf_lucene  # noqa: E402
from glassrag.pipeline import Pipeline  # noqa: E402
from glassrag.provenance import provenance  # noqa: E402
from glassrag.rerank.cross_onnx import shared, bundled_folder  # noqa: E402
from glassrag.schema import Kind  # noqa: E402
from glassrag.stats import auroc  # noqa: E402

CORPORA = ["demo", "ml-papers", "economics", "birds"]
SHIPPED = ["answerability", "term_share", "coverage", "known_share", "rarest_held", "margin", "bm25_norm"]
CANDIDATES = ["best_share", "specific_held", "rare_pair", "proximity", "window30", "window_model"]
KEEP = 0.97
PAIR_SPAN = 15
WINDOW = 30
SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])|\n+")


def specific_words(question: str) -> list[str]:
    """Words with a digit, or capitalised after the first: the names, codes and years a
    question is about."""
    words = re.findall(r"[\w'-]+", question)
    return [w for i, w in enumerate(words) if re.search(r"\d", w) or (i > 0 and w[0].isupper())]


def shortest_run(terms: list[str], wanted: set[str]) -> int:
    """The length of the shortest run of `terms` holding every term of `wanted` (a sliding
    window; len(terms) when none holds them all)."""
    best, count, have, left = len(terms), {}, 0, 0
    for right, t in enumerate(terms):
        if t in wanted:
            count[t] = count.get(t, 0) + 1
            have += count[t] == 1
        while have == len(wanted):
            best = min(best, right - left + 1)
            first = terms[left]
            if first in wanted:
                count[first] -= 1
                have -= count[first] == 0
            left += 1
    return best


def passage_signals(analyzer, idf, question: str, texts: list[str]) -> dict[str, float]:
    """The lexical candidates of one question over its shown passages (see the table above)."""
    q = list(dict.fromkeys(analyzer(question)))
    passages = [analyzer(t) for t in texts]
    sets = [set(p) for p in passages]
    w = {t: idf(t) for t in q}
    total = sum(w.values()) or 1.0
    spec = list(dict.fromkeys(t for word in specific_words(question) for t in analyzer(word)))
    rare = sorted(q, key=lambda t: -w[t])[:2]

    def near(p: list[str]) -> bool:
        a = [i for i, t in enumerate(p) if t == rare[0]]
        b = [i for i, t in enumerate(p) if t == rare[1]]
        return bool(a and b) and min(abs(i - j) for i in a for j in b) <= PAIR_SPAN

    held = {t for t in q if t in sets[0]}
    windows = [set(p[s:s + WINDOW]) for p in passages for s in range(0, max(1, len(p) - WINDOW + 1), 5)]
    return {
        "best_share": max(sum(w[t] for t in q if t in s) / total for s in sets),
        "specific_held": max(sum(t in s for t in spec) / len(spec) for s in sets) if spec else 1.0,
        "rare_pair": 1.0 if len(rare) < 2 or any(near(p) for p in passages) else 0.0,
        "proximity": len(held) / shortest_run(passages[0], held) if held else 0.0,
        "window30": max(sum(w[t] for t in q if t in s) / total for s in windows),
    }


def sentence_windows(text: str, n: int = 2) -> list[str]:
    sentences = [s.strip() for s in SENTENCE.split(text) if s and s.strip()]
    return [text] if len(sentences) <= n else [" ".join(sentences[i:i + n]) for i in range(len(sentences) - n + 1)]


def corpus_rows(corpus, work: Path, config: Config, windows: bool) -> list[dict]:
    off = replace(config, gate=replace(config.gate, enabled=False))
    index = workbench(corpus, work).fitted(off)[0]
    pipeline = Pipeline(index, off, every_signal=True)
    bm25, unseen = pipeline.bm25, float(idf_lucene(pipeline.bm25.scores.shape[0], np.zeros(1))[0])
    vocab = bm25.counts.vocab

    def idf(t: str) -> float:
        return float(bm25.idf[vocab[t]]) if t in vocab else unseen

    model = shared(bundled_folder()) if windows else None
    rows = []
    for q, answer, got, found in gate_rows(pipeline, corpus.questions(work), Judge(index.chunks)):
        group = "found" if q.answerable and found else "on-topic" if not q.answerable and q.kind != "off-topic" else None
        if group is None or not got or answer is None:
            continue
        ranking = [t for t in answer.trace if Kind(t.kind).ranks][-1]
        texts = [index.chunk(h.chunk_id).text for h in ranking.hits[:config.answer.k]]
        signals = {n: got[n] for n in SHIPPED if n in got} | passage_signals(index.analyzer, idf, q.question, texts)
        if model is not None:
            pairs = [(q.question, w) for t in texts for w in sentence_windows(t)]
            signals["window_model"] = float(np.max(model.predict(pairs)))
        rows.append({"id": q.id, "split": q.split, "group": group, "signals": signals})
    return rows


def summary(rows: list[dict], names: list[str]) -> dict:
    out = {}
    for name in names:
        entry = {}
        for split in ("train", "test"):
            pos = [r["signals"][name] for r in rows if r["split"] == split and r["group"] == "found" and name in r["signals"]]
            neg = [r["signals"][name] for r in rows if r["split"] == split and r["group"] == "on-topic" and name in r["signals"]]
            if pos and neg:
                entry[f"auroc_{split}"] = auroc(pos, neg)
            if split == "test" and pos and neg:
                t = np.sort(pos)[int(np.floor((1 - KEEP) * len(pos)))]
                entry["ceiling_test"] = float(np.mean([v < t for v in neg]))
        out[name] = entry
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", action="append", help=f"corpora of experiments/corpora.toml (default: {', '.join(CORPORA)})")
    parser.add_argument("--no-windows", action="store_true", help="leave out window_model (the model on sentence windows)")
    args = parser.parse_args()
    corpora, work, config = load_corpora(LOG), work_folder(LOG), Config()
    names = SHIPPED + [c for c in CANDIDATES if c != "window_model" or not args.no_windows]
    results: dict = {"keep": KEEP, "corpora": {}}
    for name in args.corpus or CORPORA:
        rows = corpus_rows(corpora[name], work, config, not args.no_windows)
        counts = {f"{s} {g}": sum(r["split"] == s and r["group"] == g for r in rows)
                  for s in ("train", "test") for g in ("found", "on-topic")}
        results["corpora"][name] = {"questions": counts, "signals": summary(rows, names)}
        print(f"{name}: {counts}", flush=True)
    results["provenance"] = provenance({})
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "gate_passage_signals.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    lines = ["# Signals from the shown passages' words (bench/gate_passage_signals.py)", "",
             "Found answers against the golden set's on-topic unanswerable questions, default settings, gate "
             f"off; AUROC train / test, and the on-topic test share below the threshold keeping {KEEP:.0%} of the "
             "found test answers. Shipped signals first, then the candidates.", "",
             "| signal | " + " | ".join(results["corpora"]) + " |", "|---|" + "---|" * len(results["corpora"])]
    for n in names:
        cells = []
        for c in results["corpora"].values():
            e = c["signals"][n]
            cells.append(f"{e.get('auroc_train', float('nan')):.2f} / {e.get('auroc_test', float('nan')):.2f} / "
                         f"{e.get('ceiling_test', float('nan')):.2f}")
        lines.append(f"| `{n}` | " + " | ".join(cells) + " |")
    lines += ["", "Questions: " + "; ".join(f"{c}: " + ", ".join(f"{k} {v}" for k, v in r["questions"].items())
                                           for c, r in results["corpora"].items())]
    (RESULTS / "gate_passage_signals.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
