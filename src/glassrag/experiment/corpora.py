"""The corpora experiments are measured on (`experiments/corpora.toml`), and the bench that
prepares them: an index per set of index-time settings (kept on disk under
`.glassrag/experiments/`, by fingerprint), then for each configuration the learned
reranker trained and the gate calibrated on the train split, as `glassrag demo` does,
so that baseline and change each get the pipeline a user would get with those settings.

    [demo]
    title = "the demo handbook"
    documents = ["glassrag:demo"]        # the bundled corpus
    golden = "glassrag:demo"

    [scifact-abstain]
    title = "SciFact with abstention"
    beir = "../shared/bench/scifact"     # relative to the folder above experiments/
    abstain_seed = 0                     # evaluate/beir.py: with_abstention

Paths are relative to the project folder (the parent of `experiments/`).
"""

from __future__ import annotations

import copy
import hashlib
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glassrag import __version__
from glassrag.config import SETTINGS, Config
from glassrag.errors import ConfigError
from glassrag.evaluate.golden import Question
from glassrag.store.base import FORMAT_VERSION, Index
from glassrag.stage_cache import StageCache

DEMO = "glassrag:demo"


@dataclass(frozen=True)
class Corpus:
    name: str
    title: str
    documents: tuple[Path, ...] = ()
    golden: Path | None = None
    beir: Path | None = None
    abstain_seed: int | None = None

    def missing(self) -> str | None:
        """Why this corpus cannot be measured on this machine, or None."""
        for path in (*self.documents, *([self.golden] if self.golden else []), *([self.beir] if self.beir else [])):
            if not path.exists():
                return f"{path} is not on this machine"
        return None

    def sources(self, work: Path) -> list[Path]:
        """What ingest reads: the documents, or the BEIR folder (with abstention, made once)."""
        if self.beir is None:
            return list(self.documents)
        if self.abstain_seed is None:
            return [self.beir]
        from glassrag.evaluate.beir import with_abstention

        return [with_abstention(self.beir, work / f"{self.name}-source-{self.abstain_seed}", self.abstain_seed)]

    def questions(self, work: Path) -> list[Question]:
        """Train and test questions."""
        if self.beir is not None:
            from glassrag.evaluate.beir import load_beir_questions

            return load_beir_questions(self.sources(work)[0], "all")
        from glassrag.evaluate.golden import load_golden

        return load_golden(self.golden, "all")


def load_corpora(log: Path) -> dict[str, Corpus]:
    path = log / "corpora.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"{path}: {e}", "experiments/corpora.toml names the corpora experiments run on") from None
    root = log.resolve().parent
    from glassrag.demo import demo_docs, demo_golden

    def place(value: str) -> Path:
        return {DEMO: None}.get(value) or (root / value).resolve()

    corpora = {}
    for name, c in data.items():
        docs = tuple(demo_docs() if d == DEMO else place(d) for d in c.get("documents", ()))
        golden = demo_golden() if c.get("golden") == DEMO else place(c["golden"]) if c.get("golden") else None
        corpora[name] = Corpus(name, c.get("title", name), docs, golden,
                               place(c["beir"]) if c.get("beir") else None, c.get("abstain_seed"))
    return corpora


def index_settings(config: Config) -> dict[str, Any]:
    """The settings an index is built with (those that need a re-ingest)."""
    return {name: config.value(name) for name, s in SETTINGS.items() if s.reingest}


def digest(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _files_digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for root in paths:
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for p in files:
            h.update(str(p.relative_to(root) if root.is_dir() else p.name).encode())
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()[:16]


class Bench:
    """Prepares indexes and fitted pipelines for experiments, reusing what it already made."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self._fitted: dict[tuple[str, str], Index] = {}
        self._questions: dict[str, list[Question]] = {}
        self._files: dict[str, str] = {}
        self._caches: dict[str, StageCache] = {}

    def questions(self, corpus: Corpus) -> list[Question]:
        """The corpus's train and test questions, read once."""
        if corpus.name not in self._questions:
            self._questions[corpus.name] = corpus.questions(self.work)
        return self._questions[corpus.name]

    def _key(self, corpus: Corpus, config: Config) -> str:
        """The fingerprint of `corpus`'s index with `config`'s index-time settings."""
        if corpus.name not in self._files:  # the corpus's files hashed once per bench
            self._files[corpus.name] = _files_digest(corpus.sources(self.work))
        return f"{corpus.name}-" + digest({"settings": index_settings(config), "files": self._files[corpus.name],
                                           "glassrag": __version__, "format": FORMAT_VERSION})

    def cache(self, corpus: Corpus, config: Config) -> StageCache:
        """The stage cache of that index, shared by every configuration run on it: training,
        calibration and evaluation re-run only the stages whose settings or input changed."""
        key = self._key(corpus, config)
        return self._caches.setdefault(key, StageCache(key))

    def index(self, corpus: Corpus, config: Config) -> Index:
        """The index of `corpus` with `config`'s index-time settings: read from the work
        folder when this fingerprint was built before, else built and written there."""
        from glassrag.indexer import build_index
        from glassrag.store import EmbeddedStore

        sources = corpus.sources(self.work)
        store = EmbeddedStore(self.work / "indexes" / self._key(corpus, config))
        if store.exists():
            return store.read()
        index, report = build_index(sources, config, cache_dir=self.work / "embedding-cache")
        if report.failed:
            raise ConfigError(f"{corpus.name}: {len(report.failed)} document(s) failed to ingest: "
                              f"{report.failed[0]}", "fix the corpus or its entry in corpora.toml")
        with store.writing():
            store.write(index)
        return store.read()

    def fitted(self, corpus: Corpus, config: Config) -> Index:
        """The index with the learned reranker trained and the gate and reader calibrated on
        the train split, with `config`'s settings (a calibration is only valid for them)."""
        from glassrag.evaluate.tune import calibrate_index, train_reranker

        key = (corpus.name, digest(config.to_dict()))
        if key not in self._fitted:
            index = copy.copy(self.index(corpus, config))
            index.extra = dict(index.extra)
            questions = self.questions(corpus)
            cache = self.cache(corpus, config)
            if config.rerank.method in ("auto", "learned"):
                index.extra["reranker"] = train_reranker(index, config, questions, corpus.name, cache=cache)
            # like a user's index that was never calibrated: without unanswerable train
            # questions (plain SciFact) there is nothing to calibrate the gate on
            if config.gate.enabled and any(not q.answerable for q in questions if q.split == "train"):
                gate, reader = calibrate_index(index, config, questions, config.gate.rule, corpus.name,
                                               cache=cache)
                index.extra.update(gate=gate, reader=reader)
            self._fitted[key] = index
        return self._fitted[key]
