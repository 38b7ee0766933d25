"""The words the pages use, each with an anchor on /glossary that the pages link to."""

from __future__ import annotations

import re
from typing import Any

# term -> (definition, where it lives in glassrag)
TERMS: dict[str, tuple[str, str]] = {
    "RAG": ("Retrieval-augmented generation: find the passages of your documents that answer a "
            "question, then show them (or give them to a language model to answer from). glassrag "
            "is the retrieval half, made visible stage by stage.", "glassrag/pipeline/"),
    "corpus": ("The documents an index is built from: every file `glassrag ingest` read.",
               "glassrag/ingest/"),
    "embedding": ("A vector that stands for a text, so that texts of similar meaning lie close "
                  "together; dense retrievers compare the question's embedding with every "
                  "passage's by cosine.", "glassrag/dense/"),
    "candidate pool": ("The top N passages of the fused list that the reranker (or MMR) rescores "
                       "(`rerank.pool`, 20); a passage outside the pool keeps its place below it.",
                       "glassrag/rerank/"),
    "reranking": ("Reordering the first passages of the retrieved list with a slower, better "
                  "judge (a learned reranker or a cross-encoder) that reads question and passage "
                  "together.", "glassrag/rerank/"),
    "context expansion": ("Attaching the neighbouring chunks of a passage (same document, "
                          "`generate.expand` on each side) before it is given to the generator, so "
                          "a sentence cut by the chunker arrives whole.", "glassrag/generate/"),
    "golden set": ("Questions with their labelled answers (document, locator, verbatim text), split "
                   "into train and test, that every stage is measured on; see "
                   "docs/golden-format.md.", "glassrag/evaluate/golden.py"),
    "adversarial case": ("A question written to trip a stage on purpose: an identifier one "
                         "character from another product's, a paraphrase that shares no word with "
                         "its answer, a superseded version of a policy, a question the documents "
                         "cannot answer.", "glassrag/data/demo/golden.jsonl"),
    "chunk": ("A passage that is indexed and can be shown: a verbatim span of one document "
              "(its text equals the document's text between two offsets). Chunkers decide where "
              "the cuts land; the documents page shows them.", "glassrag/chunk/"),
    "locator": ("Where a chunk sits in its document, in words a reader can follow: a section "
                "heading (§ 6.2 Error codes) or a line range. With the title it forms the citation.",
                "glassrag/ingest/"),
    "BM25": ("Lexical retrieval: a passage's score is the sum over the question's words of "
             "idf(word) × tf·(k1 + 1) / (tf + k1·(1 − b + b·length/average length)). k1 sets how fast "
             "repeated words saturate, b how much long passages are penalised. Exact words only: "
             "a paraphrase scores zero.", "glassrag/lexical/bm25.py"),
    "dense": ("Retrieval by vector similarity: question and passages become vectors and passages "
              "are ranked by cosine similarity, so related words can match without being equal.",
              "glassrag/dense/"),
    "LSA": ("Latent semantic analysis: a dense retriever without a neural model. TF-IDF vectors "
            "are projected on the top singular vectors of the term × passage matrix; words that "
            "occur in similar passages end up close.", "glassrag/dense/lsa.py"),
    "vector hit": ("A dense stage's own figures: the share of questions for which it returned any "
                   "passage (a similarity cutoff can leave it empty), and its mean top similarity, the "
                   "cosine of its best passage averaged over the questions. Both move when the embedder, "
                   "its quantisation or the cutoff changes; compare shows them run against run.",
                   "stages.*.vector_hit, mean_top_similarity in a run file"),
    "observed retriever": ("A retriever that runs on every question, is drawn in the route and "
                           "measured in runs, but does not feed the answer. It shows what it would "
                           "have found at no risk to the answer.", "retrieve.observe"),
    "fusion": ("Merging the ranked lists of several retrievers into one. glassrag offers RRF and "
               "weighted fusion of min-max-normalised scores; each fused hit keeps every input's "
               "rank and score.", "glassrag/fuse/"),
    "RRF": ("Reciprocal rank fusion (Cormack et al. 2009): score(d) = Σ 1 / (k + rank of d in "
            "each list), k = 60. Uses ranks only, so scores of different scales need no "
            "normalising.", "glassrag/fuse/rrf.py"),
    "cross-encoder": ("A reranker that reads question and passage together through a transformer "
                      "and outputs a relevance score. Precise and slow, so it rescores only the "
                      "top pool of candidates.", "glassrag/rerank/cross_encoder.py"),
    "learned reranker": ("A logistic regression on ten features of each candidate (BM25 score and "
                         "its ratio to the best, question-word coverage, LSA similarity, input "
                         "rank, identifier match, heading match, age, superseded, position), "
                         "fitted on the golden set's train split. Its score is a model probability "
                         "of relevance: an estimate, not a guarantee.", "glassrag/rerank/learned.py"),
    "MMR": ("Maximal marginal relevance: reorders the top candidates by λ·relevance − (1 − λ)·"
            "(highest similarity to a passage already picked), so near-duplicates move down.",
            "glassrag/rerank/mmr.py"),
    "cap": ("At most M passages per document in the list, so one long document cannot fill "
            "every slot.", "glassrag/rerank/cap.py"),
    "gate": ("Declines to answer when its score for the question is below a threshold that "
             "`glassrag calibrate` sets on the train split: it reads the signal (or the fitted "
             "combination of signals) that best separates answerable from unanswerable questions, "
             "and by default (`gate.rule = cost`) takes the threshold of least cost, a wrongly "
             "declined answerable question counting `gate.cost` times an answered unanswerable one. "
             "A second threshold, on the same signals fitted against off-topic questions alone, "
             "declines a question about another subject while keeping `gate.offtopic_keep` of the "
             "found train answers. A declined answer still lists the nearest passages, as such. "
             "Asked here, it reads the answerability model only as far as its decision needs "
             "(`answerability_read` passages): the same decision as reading all of them.",
             "glassrag/gate/"),
    "budget": ("The context budget: the best chunks whose words fit W words, what a reader (or "
               "a language model) would be given.", "glassrag/read/budget.py"),
    "reader": ("The extractive reader: quotes the sentence of the budgeted context that covers "
               "most question words, or says not found below a calibrated coverage.",
               "glassrag/read/extractive.py"),
    "generator": ("Optional, after the budget: a language model writes an answer from the packed "
                  "passages, each named by its document title and locator, and is asked to cite "
                  "them and to say \"Not in the documents.\" when they do not hold the answer. "
                  "Its answer is scored without a judge: citations of passages not given, leaked "
                  "labels, refusals, and the share of its wording found in the passages.",
                  "glassrag/generate/, glassrag/evaluate/grade.py"),
    "any-hit": ("any-hit@k (hit@k): 1 when at least one answering chunk is among the k passages "
                "shown, else 0; its mean is the share of answerable questions with an answer "
                "shown.", "glassrag/evaluate/metrics.py"),
    "answer-visible": ("answer visible@k: the labelled answer text (or all its must-contain "
                       "words) is readable inside a shown excerpt, not only somewhere in a "
                       "returned chunk.", "glassrag/evaluate/relevance.py"),
    "source recall": ("source recall@k: the share of a question's answering documents that "
                      "appear among the top k; matters for questions whose answer spans several "
                      "documents.", "glassrag/evaluate/runs.py"),
    "MRR": ("Mean reciprocal rank: the mean over questions of 1 / rank of the first answering "
            "chunk (0 when none in the top 10 for MRR@10).", "glassrag/evaluate/metrics.py"),
    "nDCG": ("Normalised discounted cumulative gain: gains of answering chunks discounted by "
             "log2(rank + 1), divided by the best possible; 1 is a perfect order.",
             "glassrag/evaluate/metrics.py"),
    "Wilson interval": ("The 95 % interval of a share (hits out of n) by Wilson's score method, "
                        "which stays inside [0, 1] and is honest for small n. Means of graded "
                        "metrics get a percentile bootstrap (2,000 seeded resamples) instead.",
                        "glassrag/stats.py"),
    "McNemar": ("The exact McNemar test for two runs on the same questions: only the questions "
                "that flipped count; p is the two-sided binomial probability of a split at least "
                "this uneven. p-values are Holm-corrected across the metrics compared.",
                "glassrag/evaluate/compare.py"),
    "loss cause": ("Where an answer was lost, the first stage at which it disappeared: cut, "
                   "not retrieved, fused out, dropped as outdated, filtered out, reranked out, capped out, "
                   "outside budget, ranked too low, gated, shown but not visible, answered "
                   "unanswerable.", "glassrag/evaluate/diagnose.py"),
}

# other names a reader may know a term by, shown beside it
SYNONYMS: dict[str, tuple[str, ...]] = {
    "RAG": ("retrieval-augmented generation",),
    "corpus": ("collection", "document set"),
    "chunk": ("passage", "segment"),
    "embedding": ("vector", "dense representation"),
    "candidate pool": ("shortlist", "rerank depth"),
    "reranking": ("re-ranking", "second-stage ranking"),
    "context expansion": ("neighbour expansion", "small-to-big retrieval"),
    "golden set": ("gold set", "test collection", "qrels", "labelled questions"),
    "adversarial case": ("hard case", "trap", "stress test"),
    "gate": ("answerability check", "abstention", "no-answer threshold"),
    "budget": ("context window", "token budget"),
    "BM25": ("lexical search", "keyword search", "sparse retrieval"),
    "dense": ("semantic search", "vector search"),
    "fusion": ("hybrid search", "rank fusion"),
    "reader": ("extractive QA", "answer extraction"),
    "any-hit": ("hit rate", "success@k"),
}

CAUSES: dict[str, str] = {
    "cut": "no chunk holds the answer's text whole: the chunker cut through it",
    "not retrieved": "no retriever had an answering chunk in its top N",
    "fused out": "an answering chunk was in a retriever's top k but fusion pushed it out",
    "dropped as outdated": "the versions stage demoted or dropped the answering chunk",
    "filtered out": "the matter filter dropped the answering chunk as a reference list, link list or contents",
    "reranked out": "the reranker (window scoring, MMR) moved the answering chunk out of the top k",
    "capped out": "the per-document cap removed the answering chunk",
    "outside budget": "the answering chunk did not fit the context budget",
    "ranked too low": "retrieved, but no stage ever put it in the top k",
    "gated": "the gate declined although an answer was found",
    "shown but not visible": "an answering chunk was shown, but its excerpt hides the answer",
    "answered unanswerable": "the documents hold no answer and the pipeline gave one anyway",
}


def anchor(term: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", term.lower()).strip("-")


def code_parts(text: str) -> list[dict[str, Any]]:
    """`text` as the page draws it: runs of plain text and, between backticks, of code (a
    setting, a command), so no raw backtick reaches the page (issue 49, item 7)."""
    return [{"text": part, "code": i % 2 == 1} for i, part in enumerate(text.split("`")) if part]


def entries() -> list[dict[str, Any]]:
    return [{"term": t, "anchor": anchor(t), "definition": d, "parts": code_parts(d), "where": w,
             "also": list(SYNONYMS.get(t, ()))}
            for t, (d, w) in TERMS.items()]
