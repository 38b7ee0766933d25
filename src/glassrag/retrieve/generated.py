"""BM25 with words a generator writes for the question: three retrievers that ask the
configured generator (`[generate] backend`: the bundled SmolLM2-135M, or an endpoint the user
names) before searching, and search with its words beside the question's.

    bm25-hyde       a hypothetical answer: a short passage as the documents might word it
                    (HyDE, Gao et al. 2022), so an answer worded unlike the question can match
    bm25-rewrite    the question rewritten as a search query: its key terms and their synonyms
    bm25-decompose  the question split into the simpler questions it is made of, one a line

The generated text is analysed like a question and mixed with it as RM3 mixes its feedback
(retrieve/rm3.py):

    w(t) = λ · P(t|Q) + (1 − λ) · P(t|G),      P(t|X) = count(t in X) / |X|

and every chunk is scored by Σ_t w(t) · bm25(t, D) (λ is `retrieve.generated_weight`). The
generation is greedy (temperature 0 unless set), so a question's words are the same every
time; they are kept per question and settings for the process (every retriever of those
settings reads them) and shown in the trace. Each
question costs one generation: about 1 CPU s with the bundled model for 64 tokens.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from typing import Any, Mapping

from glassrag.config import Config
from glassrag.errors import ConfigError
from glassrag.lexical.bm25 import BM25, top_k
from glassrag.query import Query
from glassrag.retrieve.base import hits_of
from glassrag.retrieve.rm3 import RM3Retriever
from glassrag.schema import Hit
from glassrag.schema.kind import Kind
from glassrag.stage import NOT_A_PROBABILITY
from glassrag.store.base import Index

PROMPTS = {
    "bm25-hyde": "Write one short passage, of two or three sentences, that answers the question as a "
                 "reference document would word it. Write only the passage.",
    "bm25-rewrite": "Rewrite the question as a search query: its key terms and their common synonyms, "
                    "separated by spaces. Write only the query.",
    "bm25-decompose": "Split the question into the two or three simpler questions it is made of, one per "
                      "line. Write only the questions.",
}


# What the generator wrote, per (backend, model, prompt, max_tokens, temperature, seed, question),
# kept for the process: every retriever of these settings reads it (the pipelines a workbench
# fits and evaluates with, the web's settings cache, a question asked of several corpora, as the
# bundled off-topic questions are); the oldest out past WRITTEN_KEPT (a text is at most
# `generated_tokens` tokens: a few MB).
WRITTEN_KEPT = 16_384
_WRITTEN: dict[tuple[Any, ...], str] = {}


def generates(config: Config) -> bool:
    """Whether a question under `config` asks the generator for words (a retriever of PROMPTS
    fused or observed): about 1 CPU s a question with the bundled model, far more with many
    tokens, so a web page's link cannot switch it on (web/pages.py)."""
    return any(name in PROMPTS for name in (*config.retrieve.retrievers, *config.retrieve.observe))


def can_generate(index: Index, config: Config | None = None) -> bool:
    """Whether these retrievers can run on `index` with `config`'s generator (the index's own
    settings when None): see `unavailable`. The web's form offers them only then."""
    return not unavailable(config or index.config)


def unavailable(config: Config) -> str:
    """Why no generator can write the words with `config`, or '' when one can: an endpoint
    the user named (`--generator URL`, `[generate] backend` in their own `--config` file; never
    one an index folder names, Config.check_user_only) needs nothing installed; the bundled
    model needs llama-cpp-python and the model's package."""
    backend = config.generate.backend
    if backend.startswith(("http://", "https://")):
        layer, origin = config.origin("generate.backend")
        return "" if layer != "index" else (f"generate.backend = {backend!r} comes from the index ({origin}); "
                                            "glassrag contacts only an endpoint you name yourself")
    if _installed():
        return ""
    return (f"the bundled generator ({backend}) needs llama-cpp-python and its model's package, which are "
            "not installed")


@cache
def _installed() -> bool:
    """Asked once a process: the search of sys.path for six packages was 1 ms of every ask page."""
    from glassrag.generate.local import BUNDLED

    return all(importlib.util.find_spec(package) is not None
               for package in ("llama_cpp", *(entry[0] for entry in BUNDLED.values())))


def describe_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    return "BM25", (f"BM25 match strength of the question joined by the words a generator wrote for it "
                    f"({name.removeprefix('bm25-')}): Σ w(t) · bm25(t, passage). Unbounded, on this index's "
                    f"scale: compare it within one question, not across questions. {NOT_A_PROBABILITY}")


class GeneratedRetriever(RM3Retriever):
    """`name` is one of PROMPTS; the generator is made on the first question (the bundled model
    loads in about a second), never for an index that only lists the retriever."""

    kind = Kind.RETRIEVE

    def __init__(self, index: Index, config: Config, bm25: BM25, name: str) -> None:
        super().__init__(index, config, bm25)
        self.name = name
        self.weight = config.retrieve.generated_weight
        self.config = config
        self.max_tokens = config.retrieve.generated_tokens
        self._backend: Any = None

    def params(self) -> dict[str, Any]:
        g = self.config.generate
        return {**self.bm25.params(), "generator": g.backend, "model": g.model, "prompt": PROMPTS[self.name],
                "max_tokens": self.max_tokens, "temperature": g.temperature, "seed": g.seed,
                "question_weight": self.weight, "depth": self.depth, "family": "lexical"}

    def key(self, question: str) -> tuple[Any, ...]:
        """What the generated text depends on: the question and these settings."""
        g = self.config.generate
        return (g.backend, g.model, PROMPTS[self.name], self.max_tokens, g.temperature, g.seed, question)

    def written(self, question: str) -> str:
        """The generator's text for `question`, generated once in this process for these settings."""
        g = self.config.generate
        key = self.key(question)
        if key not in _WRITTEN:
            if self._backend is None:
                from glassrag.generate.backends import make_backend

                self.config.check_user_only()  # a URL an index names is never contacted
                self._backend = make_backend(g.backend, g.model, g.timeout)
            messages = [{"role": "system", "content": PROMPTS[self.name]}, {"role": "user", "content": question}]
            text = self._backend.complete(messages, self.max_tokens, g.temperature, g.seed).text
            while len(_WRITTEN) >= WRITTEN_KEPT:  # oldest out
                del _WRITTEN[next(iter(_WRITTEN))]
            _WRITTEN[key] = text
        return _WRITTEN[key]

    def expansion(self, query: Query) -> dict[int, float]:
        """term id -> w(t): the question's words and the generated words, mixed by λ."""
        asked = self.bm25.term_ids(query.tokens)
        wrote = self.bm25.term_ids(self.index.analyzer(self.written(query.question)))
        weights: dict[int, float] = {}
        for ids, share in ((asked, self.weight), (wrote, 1.0 - self.weight)):
            for t in ids:  # a side with no indexed word adds nothing
                weights[t] = weights.get(t, 0.0) + share / len(ids)
        return weights

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        weights = self.expansion(query)
        idx, scores = top_k(self.expanded_scores(query, weights), self.depth)
        text = " ".join(self.written(query.question).split())
        return hits_of(self.index, self.name, idx, scores), [f"generated: {text[:300]}"]


def maker(name: str) -> Any:
    """The table's `make` for the retriever called `name`."""

    def made(index: Index, config: Config, bm25: BM25) -> GeneratedRetriever:
        why = unavailable(config)
        if why:
            raise ConfigError(f"retriever {name} asks a generator for words and none can run here: {why}",
                              "pip install 'glassrag[generate]' for the bundled model, or name an "
                              "OpenAI-compatible endpoint: --generator URL (or [generate] backend in your own "
                              f"--config file); or drop {name} from [retrieve] retrievers and observe")
        return GeneratedRetriever(index, config, bm25, name)

    return made
