"""A neural embedding model as a retriever stage, named after the model: the top `depth`
chunks by cosine with the embedded question, exact or by an HNSW index, after the optional
similarity cutoff. The model is loaded on the first question.

`neural.query_instruction` applies at question time: `auto` keeps the instruction the index
was built with (its model family's), any other value replaces it for the questions (the
passages keep theirs: changing `passage_instruction` needs a re-ingest).

Its part of the index, every chunk's vectors, is built by `build` (the table entry's hook), from
the embedding cache where the same model embedded the same text before. An index has one such
retriever per embedder it holds vectors of, each an ordinary table entry (`entry`, listed by
retrieve/__init__.py `table`) that runs where this install can embed a question with the
embedder that made them (`refusal`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

import numpy as np

from glassrag.config import Config
from glassrag.dense.base import normalize_rows
from glassrag.dense.exact import ExactCosine
from glassrag.errors import ConfigError
from glassrag.query import Query
from glassrag.ingest.report import IngestReport, Progress
from glassrag.retrieve.base import Building, Ranks, corpus_scores, cosines, exact_top, hits_of
from glassrag.schema import Hit
from glassrag.schema.kind import Kind
from glassrag.stage import NOT_A_PROBABILITY, Entry, ScoreSource, StageOutput
from glassrag.store.base import Embedded, Index

if TYPE_CHECKING:
    from glassrag.dense.neural import SentenceEmbedder

SEARCHES = ("exact", "hnsw")


def describe_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    return "dense", (f"Cosine similarity of {name} vectors (−1 to 1): closeness of meaning to the "
                     f"question. {NOT_A_PROBABILITY}")


def retriever_name(model: str) -> str:
    """The stage name of a neural retriever: the alias, or the model folder's name."""
    return Path(model).name.lower() if ("/" in model or Path(model).is_dir()) else model.lower()


def build(name: str, index: Index, building: Building) -> Index:
    """The index with the vectors of every chunk by the embedder of `neural.models` that
    retriever `name` is named after (the last one, when two share a name)."""
    model = [m for m in index.config.neural.models if retriever_name(m) == name][-1]
    embedded = embed_chunks(model, index.config, building.texts(), building.cache_dir, building.report,
                            building.progress)
    return replace(index, embeddings={**index.embeddings, name: embedded})


def entry(name: str) -> Entry:
    """The table entry of the neural retriever named after embedder `name`: made as every
    retriever is, `(index, config, bm25)`; available where the index holds that embedder's
    vectors and this install can embed a question with it; its part is built by `build`."""
    return Entry(maker(name), describe_score, lambda index: refusal(index, name) is None, build, term="dense",
                 label=name)


def maker(name: str) -> Callable[[Index, Config, Any], "NeuralRetriever"]:
    """The entry's `make` for the retriever named `name`: the ConfigError of `refusal` where it
    cannot run."""

    def made(index: Index, config: Config, bm25: Any = None) -> NeuralRetriever:
        refused = refusal(index, name)
        if refused is not None:
            raise refused
        return NeuralRetriever(index, config, name)

    return made


def refusal(index: Index, name: str) -> ConfigError | None:
    """Why retriever `name` cannot run on `index` in this install, or None when it can: the
    index holds no vectors of an embedder by that name, or the embedder that made them cannot
    embed a question here (its weights are not installed, or its runtime: onnxruntime and
    tokenizers for the onnx backend, torch for the torch one; `SentenceEmbedder.check_runtime`,
    found without loading anything)."""
    if name not in index.embeddings:
        return ConfigError(f"retriever {name} reads the vectors of embedder {name}; this index holds "
                           f"{', '.join(index.embeddings) or 'none'}",
                           f"ingest with --embedder {name}, or drop {name} from [retrieve] retrievers and observe")
    from glassrag.dense.neural import SentenceEmbedder

    try:
        SentenceEmbedder.from_params(dict(index.embeddings[name].params)).check_runtime()
    except ConfigError as e:
        problem = e.problem.removesuffix("; nothing was read")  # check_runtime speaks to an ingest
        return ConfigError(f"retriever {name} cannot embed a question in this install: {problem}", e.hint)
    except (KeyError, TypeError, ValueError) as e:  # a record this version cannot read: not a crash
        return ConfigError(f"retriever {name}: the index's record of how embedder {name} made its vectors "
                           f"cannot be read ({type(e).__name__}: {e})",
                           f"ingest again with --embedder {name}")
    return None


def embedder_for(model: str, config: Config) -> "SentenceEmbedder":
    from glassrag.dense.neural import SentenceEmbedder

    n = config.neural
    return SentenceEmbedder(model,
                            None if n.query_instruction == "auto" else n.query_instruction,
                            None if n.passage_instruction == "auto" else n.passage_instruction,
                            n.quantize, n.batch_size, backend=n.backend)


def check_embedders(config: Config) -> None:
    """ConfigError when an embedder of `neural.models` is not installed or cannot run here
    (`SentenceEmbedder.check_runtime`): an ingest asks before it reads a document."""
    for model in dict.fromkeys(config.neural.models):
        embedder_for(model, config).check_runtime()


def embed_chunks(model: str, config: Config, texts: list[str], cache_dir: Path | None,
                 report: IngestReport, progress: Progress | None) -> Embedded:
    """Vectors for every chunk text, from the cache where the same model embedded the same
    text before; the report says how many were embedded and how many reused."""
    from glassrag.dense.cache import EmbeddingCache, text_key

    embedder = embedder_for(model, config)
    report.warnings.extend(embedder.warnings())
    cache = EmbeddingCache(cache_dir, embedder.name)
    keys = [text_key(embedder.name, t) for t in texts]
    missing = cache.split(keys)
    if missing:
        def step(done: int, total: int, rate: float) -> None:
            if progress:
                progress(f"embed {rate:.0f}/s", done, total)

        vectors = embedder.embed_passages([texts[i] for i in missing], step)
        cache.put([keys[i] for i in missing], vectors)
        cache.save()
    report.embedded[retriever_name(model)] = {"embedded": len(missing),
                                              "from cache": len(keys) - len(missing)}
    vectors = cache.get(keys) if keys else np.empty((0, 0), dtype=np.float32)
    return Embedded(retriever_name(model), embedder.params(), vectors.astype(np.float32))


class NeuralRetriever(Ranks):
    kind = Kind.RETRIEVE

    def __init__(self, index: Index, config: Config, name: str) -> None:
        if config.neural.search not in SEARCHES:
            raise ConfigError(f"unknown neural.search {config.neural.search!r}",
                              f"choose one of: {', '.join(SEARCHES)}")
        self.name, self.index = name, index
        self.embedding = index.embeddings[name]
        self.depth, self.cutoff = config.retrieve.depth, config.neural.cutoff
        self.search_kind = config.neural.search
        self.query_instruction = config.neural.query_instruction  # "auto": the index's own
        self.searched = len(index.chunks)
        self._parts: tuple[Any, Any] | None = None  # (embedder, search), built on first use

    def parts(self) -> tuple[Any, Any]:
        """The embedder and the search over the chunk vectors, made once."""
        if self._parts is None:
            from glassrag.dense.neural import SentenceEmbedder

            params = dict(self.embedding.params)
            if self.query_instruction != "auto":
                params["query_instruction"] = self.query_instruction
            embedder = SentenceEmbedder.from_params(params)
            if self.search_kind == "hnsw":
                from glassrag.dense.ann import HNSWCosine

                search: Any = HNSWCosine(self.embedding.vectors)
            else:
                search = ExactCosine(self.embedding.vectors)
            self._parts = (embedder, search)
        return self._parts

    def params(self) -> dict[str, Any]:
        embedder, _ = self.parts()
        return {**embedder.params(), "cutoff": self.cutoff, "search": self.search_kind,
                "depth": self.depth, "family": "dense"}

    def vector(self, query: Query) -> Any:
        embedder, _ = self.parts()
        return query.dense_vector(self.name, lambda: embedder.embed_query(query.question))

    def score_source(self, query: Query) -> ScoreSource:
        """Every chunk's cosine with the question when the search is exact; through HNSW, the
        exact cosines of the chunks asked about, ranged over them (HNSW never scores every chunk)."""
        _, search = self.parts()
        if isinstance(search, ExactCosine):
            return corpus_scores(self.index, cosines(query, self.name, search, self.vector(query)))
        position = self.index.position
        q = normalize_rows(self.vector(query).reshape(1, -1))[0]
        return ScoreSource(lambda ids: search.vectors[[position[c] for c in ids]] @ q, whole_corpus=False)

    def run(self, query: Query, inputs: Mapping[str, StageOutput]) -> StageOutput:
        """`Ranks.run`; on the question that loads the model, the load's time is declared as
        setup (`setup_ms`: left out of the time the trace shows, as the generator's is), and said.
        A model another retriever of this process loaded before is shared, not loaded (0 ms):
        nothing to say."""
        embedder, _ = self.parts()
        first = embedder._model is None
        output = super().run(query, inputs)
        if not first or not embedder.load_ms:
            return output
        loaded = (f"the model was loaded for this first question: {embedder.load_ms:.0f} ms (not in the time "
                  "shown; a running server loads it once)")
        return replace(output, notes=(*output.notes, loaded), setup_ms=float(embedder.load_ms))

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        embedder, search = self.parts()
        vector = self.vector(query)
        from glassrag.dense.neural import one_blas_thread

        with one_blas_thread():
            if isinstance(search, ExactCosine):
                idx, scores, removed = exact_top(query, self.name, search, vector, self.depth, self.cutoff)
            else:
                idx, scores, removed = search.search(vector, self.depth, self.cutoff)
        notes = [f"query instruction {embedder.query_instruction!r} ({embedder.family})",
                 *embedder.warnings()]
        if removed:
            notes.append(f"similarity cutoff {self.cutoff} removed {removed} hits")
        return hits_of(self.index, self.name, idx, scores), notes
