"""Pipeline settings: every field has a default, a one-line doc, and the source of its
default (a measurement id in docs/measurements.md, or the literature it comes from).

A TOML file overrides any of them by section and name:

    [bm25]
    k1 = 1.2

`glassrag config` prints them all with their docs and sources.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from glassrag.errors import ConfigError


def setting(default: Any, doc: str, source: str) -> Any:
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata={"doc": doc, "source": source})
    return field(default=default, metadata={"doc": doc, "source": source})


@dataclass(frozen=True)
class ChunkSettings:
    """Used when an index is built; changing them needs a new `glassrag ingest`."""

    chunker: str = setting("heading", "how documents are cut: fixed, sentence, heading, recursive, "
                           "document", "measurement M3 (docs/measurements.md)")
    size: int = setting(200, "largest chunk, in `unit`s", "measurement M3")
    overlap: int = setting(0, "units shared by neighbouring chunks (fixed, sentence)", "measurement M3")
    unit: str = setting("words", "what size counts: words, tokens, chars", "words are what a reader sees")
    context_header: bool = setting(False, "index each chunk with its document title and heading path "
                                   "in front (the shown text stays verbatim)", "measurement M2")


@dataclass(frozen=True)
class AnalyzeSettings:
    """The analyzer BM25 and LSA share; fixed when the index is built."""

    stopwords: str = setting("english", "stopword list: none, lucene (33 words, the BEIR baselines' list), "
                             "english (function and question words)", "measurement M1")
    stem: bool = setting(True, "Snowball (Porter 2) English stemming", "Pyserini/bm25s BEIR baselines")
    identifiers: bool = setting(True, "keep E-4107 / TX-2000 whole as well as their parts",
                                "design: exact identifiers must outrank near-twins")


@dataclass(frozen=True)
class LSASettings:
    dim: int = setting(64, "number of LSA dimensions (SVD rank)", "measurement M5")
    power_iterations: int = setting(4, "subspace iterations of the randomized SVD",
                                    "Halko et al. 2011 recommend 1-4 for slowly decaying spectra")
    seed: int = setting(0, "random seed of the SVD (the model is deterministic for a seed)", "fixed")
    fit_sample: int = setting(
        100_000, "above this many chunks the SVD is fitted on a seeded random sample of this many, "
        "and every chunk is folded in", "bench/scaling.py (issue 18): bounds ingest memory and time")
    cutoff: float | None = setting(None, "drop dense hits whose cosine is below this (None: keep all)",
                                   "off: no measurement supports a value (the gate declines instead)")


@dataclass(frozen=True)
class NeuralSettings:
    """Neural embedders are built when the index is built; each is a retriever named after it."""

    models: list[str] = setting([], "embedding models built at ingest: minilm (the bundled "
                                "all-MiniLM-L6-v2), an installed model package, or a local folder",
                                "none by default: the base install has no torch")
    query_instruction: str = setting("auto", "prefix for queries; auto: the model family's entry in "
                                     "glassrag/dense/instructions.py", "each family's model card")
    passage_instruction: str = setting("auto", "prefix for passages; auto: from the same table",
                                       "each family's model card")
    quantize: str = setting("none", "none or int8 (dynamic quantisation of the linear layers)",
                            "bench/scifact_neural.py: int8 encodes 1.86x faster but costs 0.020 "
                            "nDCG@10 alone; off, so vectors are the published model's")
    batch_size: int = setting(32, "passages per encoding batch", "sentence-transformers' default")
    cutoff: float | None = setting(None, "drop neural hits whose cosine is below this (None: keep all)",
                                   "off: no measurement supports a value (the gate declines instead)")
    search: str = setting("exact", "exact (matrix product) or hnsw (approximate, for large corpora)",
                          "bench/scifact_neural.py: at 5,183 vectors hnsw finds 99.9 % of exact's "
                          "top 10 and is no faster")


@dataclass(frozen=True)
class BM25Settings:
    k1: float = setting(1.5, "term-frequency saturation", "measurement M4 (SciFact train agrees: "
                        "bench/scifact_bm25.py); literature: 0.9 (Pyserini BEIR)")
    b: float = setting(0.4, "length normalisation", "measurement M4; Pyserini BEIR uses 0.4 too")


@dataclass(frozen=True)
class RetrieveSettings:
    retrievers: list[str] = setting(["bm25"], "retrievers whose lists are fused into the answer",
                                    "measurement M6: fusing LSA in lowers answer-visible@5 on the demo")
    observe: list[str] = setting(["lsa"], "retrievers run and traced beside the others but not fused: "
                                 "shown side by side and measured, without changing the answer",
                                 "measurement M6: observing costs no quality; the trace shows LSA's list")
    observe_max_chunks: int = setting(
        200_000, "observed retrievers are skipped (and the trace says so) above this many chunks",
        "issue 18: at 1M chunks LSA observed took 18.8 ms a question beside BM25's 13.8 ms; "
        "it grows with the chunks (bench/scaling.py: 1.7 ms at 50k)")
    depth: int = setting(100, "how many hits each retriever passes on (top N)",
                         "BEIR convention: R@100")


@dataclass(frozen=True)
class FuseSettings:
    method: str = setting("weighted", "how retriever lists are fused when there are several: rrf, weighted",
                          "measurement M6 (weighted 0.7 > RRF for BM25 + LSA)")
    k: int = setting(60, "RRF constant k in 1/(k + rank)", "Cormack et al. 2009")
    weight: float = setting(0.7, "weighted fusion: weight of the first retriever (the second gets 1 - w)",
                            "measurement M6")
    neural_weight: float = setting(0.35, "the weight of BM25 that `ingest --embedder` sets when it fuses "
                                   "BM25 with the neural retriever (weighted fusion)",
                                   "bench/fusion.py: the train splits of SciFact (nDCG@10) and of the "
                                   "demo (hit@5) both choose 0.35")


@dataclass(frozen=True)
class VersionSettings:
    mode: str = setting("demote", "superseded documents (metadata supersedes / superseded_by): off, "
                        "demote (below every current chunk), drop", "measurement M7")


@dataclass(frozen=True)
class RerankSettings:
    method: str = setting("auto", "second look at the top candidates: none, learned, cross-encoder, "
                          "auto (learned when this index has a trained reranker, else none)",
                          "measurement M11: its probability makes the gate's best signal "
                          "(M8: alone, it does not beat BM25's order)")
    pool: int = setting(20, "candidates the reranker scores (the latency dial of a cross-encoder)",
                        "the requirement (issue 5): top 20; M8 and M11 measured it there")
    model: str = setting("", "cross-encoder: a local folder or an installed package holding the model",
                         "none bundled")
    blend: float = setting(0.0, "cross-encoder: weight kept for the first-stage score (0: cross-encoder only)",
                           "0: the cross-encoder's own order; no cross-encoder model is on this "
                           "machine to measure a blend")


@dataclass(frozen=True)
class MMRSettings:
    relevance: float | None = setting(None, "MMR λ: weight of relevance against novelty (None: off)",
                                      "measurement M9")
    pool: int = setting(20, "MMR reorders the top N", "same pool as the reranker")


@dataclass(frozen=True)
class CapSettings:
    per_document: int = setting(0, "at most M passages per document (0: no cap)",
                                "measurement M10")


@dataclass(frozen=True)
class GateSettings:
    enabled: bool = setting(True, "decline when the gate's score is below the calibrated threshold "
                            "(inactive until glassrag calibrate has run)", "measurement M11")
    rule: str = setting("cost", "how calibrate picks the threshold: cost (least cost, with `cost`), "
                        "balanced (max balanced accuracy: cost 1), keep95 (keep ≥ 95 % of answerable)",
                        "measurement M12: balanced declined 40-47 % of answerable train questions "
                        "(cross-validated); cost keeps them")
    cost: float = setting(5.0, "how much worse a wrongly declined answerable question is than an "
                          "answered unanswerable one (rule cost)",
                          "measurement M12 (bench/gate.py): the smallest c whose cross-validated share of "
                          "answerable train questions declined is at most 5 % on the demo and SciFact-abstain")


@dataclass(frozen=True)
class AnswerSettings:
    k: int = setting(5, "passages returned (the answer and what else was found)",
                     "a screenful; any-hit@5 is the headline metric")
    excerpt_chars: int = setting(720, "longest excerpt shown of a passage", "issue 5")
    budget_words: int = setting(1000, "context budget: words of the best chunks packed for the reader",
                                "k = 5 chunks of up to 200 words")


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

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {f.name: {g.name: getattr(getattr(self, f.name), g.name)
                         for g in fields(getattr(self, f.name))} for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any], origin: str = "settings") -> "Config":
        config = cls()
        sections = {f.name: f for f in fields(cls)}
        for name, values in data.items():
            if name not in sections:
                raise ConfigError(f"{origin}: unknown section [{name}]",
                                  f"sections are: {', '.join(sections)}")
            if not isinstance(values, dict):
                raise ConfigError(f"{origin}: [{name}] must be a table of settings")
            current = getattr(config, name)
            known = {g.name: g for g in fields(current)}
            changes = {}
            for key, value in values.items():
                if key not in known:
                    raise ConfigError(f"{origin}: unknown setting {name}.{key}",
                                      f"settings in [{name}]: {', '.join(known)}")
                changes[key] = _check_type(f"{name}.{key}", getattr(current, key), value, origin)
            config = replace(config, **{name: replace(current, **changes)})
        return config

    def describe(self) -> list[tuple[str, Any, str, str]]:
        """(name, value, doc, source) for every setting."""
        rows = []
        for f in fields(self):
            section = getattr(self, f.name)
            for g in fields(section):
                rows.append((f"{f.name}.{g.name}", getattr(section, g.name),
                             g.metadata["doc"], g.metadata["source"]))
        return rows

    def with_overrides(self, **sections: dict[str, Any]) -> "Config":
        """A copy with some settings changed: with_overrides(bm25={"k1": 1.2})."""
        merged = self.to_dict()
        for name, values in sections.items():
            merged.setdefault(name, {}).update({k: v for k, v in values.items() if v is not None})
        return Config.from_dict(merged)


def _check_type(name: str, default: Any, value: Any, origin: str) -> Any:
    if value is None:
        return value
    if default is None:  # the optional settings are numbers that default to off
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok:
            raise ConfigError(f"{origin}: {name} = {value!r} should be a number", "leave it out to switch it off")
        return float(value)
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, list):
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
    else:
        ok = isinstance(value, type(default))
    if not ok:
        raise ConfigError(f"{origin}: {name} = {value!r} should be a {type(default).__name__}",
                          f"the default is {default!r}")
    return value


def load_config(path: Path | None) -> Config:
    if path is None:
        return Config()
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
    return Config.from_dict(data, origin=str(path))
