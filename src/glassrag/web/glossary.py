"""The words the pages use, each with an anchor on /glossary that the pages link to."""

from __future__ import annotations

import re

# term -> (definition, where it lives in glassrag)
TERMS: dict[str, tuple[str, str]] = {
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
    "gate": ("Declines to answer when the top score of the scoring stage is below a threshold "
             "calibrated on the train split (the threshold that best balances answerable "
             "questions kept against unanswerable ones declined). A declined answer still lists "
             "the nearest passages, as such.", "glassrag/gate/"),
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
                        "glassrag/evaluate/stats.py"),
    "McNemar": ("The exact McNemar test for two runs on the same questions: only the questions "
                "that flipped count; p is the two-sided binomial probability of a split at least "
                "this uneven. p-values are Holm-corrected across the metrics compared.",
                "glassrag/evaluate/compare.py"),
    "loss cause": ("Where an answer was lost, the first stage at which it disappeared: cut, "
                   "not retrieved, fused out, dropped as outdated, reranked out, capped out, "
                   "outside budget, ranked too low, gated, shown but not visible, answered "
                   "unanswerable.", "glassrag/evaluate/diagnose.py"),
}

CAUSES: dict[str, str] = {
    "cut": "no chunk holds the answer's text whole: the chunker cut through it",
    "not retrieved": "no retriever had an answering chunk in its top N",
    "fused out": "an answering chunk was in a retriever's top k but fusion pushed it out",
    "dropped as outdated": "the versions stage demoted or dropped the answering chunk",
    "reranked out": "the reranker (or MMR) moved the answering chunk out of the top k",
    "capped out": "the per-document cap removed the answering chunk",
    "outside budget": "the answering chunk did not fit the context budget",
    "ranked too low": "retrieved, but no stage ever put it in the top k",
    "gated": "the gate declined although an answer was found",
    "shown but not visible": "an answering chunk was shown, but its excerpt hides the answer",
    "answered unanswerable": "the documents hold no answer and the pipeline gave one anyway",
}


def anchor(term: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", term.lower()).strip("-")


def entries() -> list[dict[str, str]]:
    return [{"term": t, "anchor": anchor(t), "definition": d, "where": w} for t, (d, w) in TERMS.items()]
