"""The corpora experiments are measured on (`experiments/corpora.toml`), and the workbench
of each (evaluate/workbench.py): an index per set of index-time settings (kept on disk under
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

import hashlib
import tomllib
from dataclasses import dataclass
from pathlib import Path

from glassrag import __version__
from glassrag.config import Config
from glassrag.errors import ConfigError
from glassrag.evaluate.golden import Question
from glassrag.evaluate.workbench import Workbench
from glassrag.stage_cache import digest
from glassrag.store.base import FORMAT_VERSION, Index

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
    except RecursionError:  # tomllib recurses once per level of nesting
        raise ConfigError(f"{path}: nested too deep to be a TOML file of glassrag's") from None
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


def workbench(corpus: Corpus, work: Path) -> Workbench:
    """The workbench experiments measure `corpus` on: its indexes built from its documents and
    kept under WORK/indexes/CORPUS-DIGEST/ by fingerprint (the digest of its files, glassrag's
    version and the index format: a change of any builds anew), each configuration fitted for
    itself on the train split (fitting.EXPERIMENT), its stage outputs shared by every
    configuration run on the same index."""
    from glassrag.evaluate.fitting import EXPERIMENT

    sources = corpus.sources(work)
    shelf = digest({"files": _files_digest(sources), "glassrag": __version__, "format": FORMAT_VERSION})

    def build(config: Config) -> Index:
        from glassrag.indexer import build_index

        index, report = build_index(sources, config, cache_dir=work / "embedding-cache", progress=bench.steps)
        if report.failed:
            raise ConfigError(f"{corpus.name}: {len(report.failed)} document(s) failed to ingest: "
                              f"{report.failed[0]}", "fix the corpus or its entry in corpora.toml")
        return index

    bench = Workbench(corpus.questions(work), corpus.name, label=corpus.name, build=build,
                      folder=work / "indexes" / f"{corpus.name}-{shelf[:16]}", fitting=EXPERIMENT)
    return bench


def _files_digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for root in paths:
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for p in files:
            h.update(str(p.relative_to(root) if root.is_dir() else p.name).encode())
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()[:16]
