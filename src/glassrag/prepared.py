"""Prepared corpora: folders of real public documents with a golden set, kept in a checkout
under `corpora/NAME/` (not in the wheel), each laid out as

    corpora/NAME/docs/          the documents glassrag ingests
    corpora/NAME/golden.jsonl   the labelled questions, split train/test once and frozen
    corpora/NAME/README.md      what the documents are (its first heading is the title)
    corpora/NAME/PROVENANCE.md  where every file came from, its licence and SHA-256

`glassrag corpus build NAME` builds one as `glassrag demo` builds the demo."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glassrag.errors import ConfigError

# where a checkout keeps them, and where `corpus build` puts their indexes (both relative to
# the folder glassrag runs in, as `glassrag demo` builds into .glassrag/demo)
CORPORA = Path("corpora")
INDEXES = Path(".glassrag") / "corpora"
# the run `corpus build` saves (DIR/runs/NAME.json), the same name `glassrag demo` saves under
RUN_NAME = "defaults-test"


@dataclass(frozen=True)
class PreparedCorpus:
    name: str
    folder: Path

    @property
    def docs(self) -> Path:
        return self.folder / "docs"

    @property
    def golden(self) -> Path:
        return self.folder / "golden.jsonl"

    @property
    def title(self) -> str:
        """The README's first heading, without its '#', or the name."""
        readme = self.folder / "README.md"
        if readme.is_file():
            for line in readme.read_text(encoding="utf-8").splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
        return self.name

    def missing(self) -> str | None:
        """What the folder lacks to be a prepared corpus, or None."""
        if not self.docs.is_dir():
            return f"{self.docs} is not a folder"
        if not self.golden.is_file():
            return f"{self.golden} is not a file"
        return None

    def default_index(self, base: Path = INDEXES) -> Path:
        return base / self.name


def prepared_corpora(root: Path = CORPORA) -> dict[str, PreparedCorpus]:
    """Every complete prepared corpus under `root`, by name, in name order."""
    if not root.is_dir():
        return {}
    found = (PreparedCorpus(p.name, p) for p in sorted(root.iterdir()) if p.is_dir())
    return {c.name: c for c in found if c.missing() is None}


def find_corpus(name_or_folder: str, root: Path = CORPORA) -> PreparedCorpus:
    """The prepared corpus named `name_or_folder` under `root`, or the folder it names (any
    folder of the layout above); ConfigError naming the valid names or what is missing."""
    folder = Path(name_or_folder)
    if folder.is_dir():
        corpus = PreparedCorpus(folder.resolve().name, folder)
    elif (root / name_or_folder).is_dir():
        corpus = PreparedCorpus(name_or_folder, root / name_or_folder)
    else:
        names = list(prepared_corpora(root))
        raise ConfigError(f"no prepared corpus {name_or_folder!r} (no folder {folder} nor {root / name_or_folder})",
                          f"choose one of: {', '.join(names)}" if names else
                          f"a prepared corpus is a folder with docs/ and golden.jsonl; {root}/ has none here "
                          "(run glassrag from the checkout's top folder)")
    problem = corpus.missing()
    if problem:
        raise ConfigError(f"{corpus.folder} is not a prepared corpus: {problem}",
                          "a prepared corpus is a folder with docs/ (the documents) and golden.jsonl "
                          "(the labelled questions)")
    return corpus


def headline(run: Any) -> list[tuple[str, dict[str, Any]]]:
    """The figures a corpus is summed up by, from a Run (`eval`'s, or a run file read back):
    (label, {value, low, high, n}) for the ranking before the gate and the answer after it,
    the share of unanswerable questions declined (all, then by kind: on the corpus's topic
    but absent, and off it), of the bundled off-topic set declined, and of answerable ones
    declined. A figure the run lacks (no question of that kind) is left out."""
    k = run.k
    rows = [(f"ranking hit@{k}", run.ranking.metrics.get(f"hit@{k}")),
            (f"answer hit@{k}", run.answer.metrics.get(f"hit@{k}")),
            (f"answer visible@{k}", run.answer.metrics.get(f"answer_visible@{k}")),
            ("declined unanswerable", run.answer.metrics.get("declined_unanswerable")),
            *((f"  of which kind {kind}", run.by_kind.get(kind, {}).get("declined"))
              for kind in ("unanswerable", "off-topic")),
            ("declined off-topic (bundled set)", run.answer.metrics.get("declined_offtopic")),
            ("answerable declined", run.answer.metrics.get("declined_answerable"))]
    return [(label, m) for label, m in rows if m and m.get("n")]
