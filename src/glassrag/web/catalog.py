"""The indexes a server shows, and everything read from their folders: the index itself
(re-read when a new generation goes live), pipelines per configuration, saved run files
and the golden questions that go with the index.

A request never builds a path: run files are found by name in a listing of
`INDEX/runs/*.json`, documents by id in the index, indexes by name in the catalog.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, Callable

from glassrag.config import Config
from glassrag.errors import GlassragError, GoldenError, StoreError
from glassrag.evaluate.golden import Question, load_golden, normalize_space
from glassrag.evaluate.relevance import Judge
from glassrag.pipeline import Pipeline
from glassrag.schema import Run
from glassrag.store import EmbeddedStore, Index, is_postgres, open_store
from glassrag.store.pgschema import redact
from glassrag.web.cache import AnswerCache
from glassrag.web.route import Label, short_tag

RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,120}$")
# The settings cache: pipelines kept per index, sized by memory. A pipeline holds its own
# BM25 score matrix (k1 and b are baked into it; float32 per posting, the row indices are
# the index's) and per-chunk tables; the index itself is shared. bench/pipeline_memory.py
# measured per pipeline: the demo (439 chunks, 17,220 postings) 0.22 MB, built in 0.09 s;
# 22,000 chunks (3.3 M postings) 19.9 MB, built in 12.8 s on a loaded 2-core machine. The
# cache keeps as many as fit in PIPELINE_BUDGET_MB, between 1 and PIPELINES_MAX: 32 on the
# demo, 12 at 22,000 chunks, 1 at a million.
PIPELINE_BUDGET_MB = 256
PIPELINES_MAX = 32
PER_CHUNK_BYTES = 320  # measured: (19.9 MB - 3.3 M postings × 4 B) / 22,000 chunks
PIPELINE_BASE_BYTES = 8 * 1024  # its stages, gate and reader: ~10 KB on a 4-document index
# chunk labels kept per index (about 200 bytes each): every chunk of the demo, the chunks a few
# thousand questions drew on a large index. A label read from the store costs about 0.15 ms (it
# parses the chunk's row and its document's, sections included); the route and the BM25 table
# name 40-80 chunks a page.
LABELS_KEPT = 65_536


def pipeline_bytes(index: Index) -> int:
    """Memory one pipeline keeps beyond the shared index, estimated from the index: a float32
    BM25 score per posting and PER_CHUNK_BYTES per chunk (bench/pipeline_memory.py)."""
    return PIPELINE_BASE_BYTES + index.counts.columns.nnz * 4 + len(index.chunks) * PER_CHUNK_BYTES


def pipelines_kept(index: Index, budget_mb: float | None = None) -> int:
    """How many pipelines the settings cache keeps for this index (budget: PIPELINE_BUDGET_MB)."""
    budget = PIPELINE_BUDGET_MB if budget_mb is None else budget_mb
    return max(1, min(PIPELINES_MAX, int(budget * 2**20 // max(pipeline_bytes(index), 1))))


class NotFound(GlassragError):
    """A page asked for an index, document or run that does not exist."""

    status = 404


class BadRequest(GlassragError):
    """A parameter is malformed or out of range."""

    status = 400


@dataclass(frozen=True)
class RunFile:
    """A saved run: its name (file stem), its file, and the run it holds (read through its
    whole shape) or why it is unreadable."""

    name: str
    path: Path
    run: Run | None
    problem: str = ""


@dataclass(frozen=True)
class Live:
    """One generation of an index as it is served: the index, the generation's name, and its
    chunks' labels (kept for this generation, `LABELS_KEPT` at most)."""

    index: Index
    generation: str
    label: Callable[[str], Label]


def chunk_label(index: Index, chunk_id: str) -> Label:
    """How a page names a chunk: its short tag, its citation and its document."""
    chunk = index.chunk(chunk_id)
    doc = index.documents[chunk.doc_id]
    citation = f"{doc.title}, {chunk.locator}" if chunk.locator else doc.title
    return Label(short_tag(doc.id, chunk.locator), citation, doc.id)


@dataclass(frozen=True)
class Golden:
    """The golden set that labels an index's questions, and its questions by id and by text."""

    path: Path
    questions: tuple[Question, ...]

    def find(self, question: str) -> Question | None:
        wanted = normalize_space(question).casefold()
        return next((q for q in self.questions if normalize_space(q.question).casefold() == wanted), None)


class Source:
    """One index folder, read lazily and re-read when its live generation changes."""

    def __init__(self, name: str, path: Path | str) -> None:
        self.name = name
        self.path = path
        # the one place the store's name becomes text (pages, their JSON twins, messages):
        # a folder's path, or a postgresql:// URL without its password
        self.shown = redact(str(path))
        self.store = open_store(path)  # a folder, or a PostgreSQL schema (a postgresql:// URL)
        self._lock = threading.Lock()
        self._live: Live | None = None
        self._pipelines: OrderedDict[str, Pipeline] = OrderedDict()
        self._runs: dict[str, tuple[bytes, RunFile]] = {}
        self._golden: tuple[str | None, Golden | None] | None = None
        self._judge: Judge | None = None
        # the folder beside which runs, sweeps and lab runs are kept; an index in PostgreSQL has none
        self.folder: Path | None = None if is_postgres(str(path)) else Path(path)
        self._titles: list[str] | None = None
        self.answers = AnswerCache()  # the ask page's JSON twins of the live generation

    # the index -------------------------------------------------------------------------

    @property
    def generation(self) -> str:
        return self.store.generation()  # CURRENT checked (store/embedded.py), or PostgreSQL's

    def index(self) -> Index:
        return self.live().index

    def _at(self, live: Live | None) -> Index:
        """The index of `live` while it is still the generation served (a request reads CURRENT
        once and hands its Live on), else of the generation served now."""
        return live.index if live is not None and live is self._live else self.index()

    def live(self) -> Live:
        """The index of the live generation, read again when the generation changed; with it
        everything kept for the old one (pipelines, golden set, judge, labels, answers) is dropped."""
        generation = self.generation
        with self._lock:
            if self._live is None or generation != self._live.generation:
                index = self.store.read()
                self._live = Live(index, generation, lru_cache(maxsize=LABELS_KEPT)(partial(chunk_label, index)))
                self._pipelines.clear()
                self._golden = None
                self._judge = None
                self._titles = None
                self.answers.live(generation)
            return self._live

    def pipeline(self, config: Config, live: Live | None = None) -> Pipeline:
        index = self._at(live)
        key = config.key()
        with self._lock:
            if key in self._pipelines:
                self._pipelines.move_to_end(key)
                return self._pipelines[key]
        built = Pipeline(index, config, read_to_decide=True)  # the page shows one decision: the gate reads to it
        with self._lock:
            self._pipelines[key] = built
            while len(self._pipelines) > pipelines_kept(index):
                self._pipelines.popitem(last=False)
        return built

    def warm(self) -> None:
        """Loads what the first question would: the index, its default pipeline and the
        answerability model its gate reads (ONNX Runtime's import and session: about half a
        second a process, which the first question asked of each worker had waited for)."""
        live = self.live()
        for stage in self.pipeline(live.index.config, live).stages:
            reads = getattr(stage, "answerability", None)
            if reads is not None:
                reads.model.load()

    def judge(self, live: Live | None = None) -> Judge:
        index = self._at(live)
        with self._lock:
            if self._judge is None:
                self._judge = Judge(index.chunks)
            return self._judge

    def titles(self, live: Live | None = None) -> list[str]:
        """Every document's title, read once per generation (a generated answer's citations
        are checked against them)."""
        index = self._at(live)
        with self._lock:
            if self._titles is None:
                self._titles = [d.title for d in index.documents.values()]
            return self._titles

    # run files -------------------------------------------------------------------------

    def run_names(self) -> list[str]:
        if is_postgres(str(self.path)):
            return []  # runs are kept beside an index folder; one in PostgreSQL has none
        folder = self.path / "runs"
        if not folder.is_dir():
            return []
        inside = folder.resolve()
        return sorted(p.stem for p in folder.glob("*.json")
                      if p.is_file() and RUN_NAME.match(p.stem) and _inside(p, inside))

    def run(self, name: str) -> RunFile:
        """The run file `INDEX/runs/NAME.json`, NAME looked up in the folder's listing."""
        names = self.run_names()
        if name not in names:
            listed = ", ".join(names) or "none yet"
            raise NotFound(f"index {self.name!r} has no run named {name!r}",
                           f"runs of this index: {listed}; save one with "
                           f"glassrag eval --index {self.shown} --golden FILE --save NAME")
        path = self.path / "runs" / f"{name}.json"
        try:
            body = path.read_bytes()
        except OSError as e:
            return RunFile(name, path, None, f"unreadable: {e}")
        # keyed by the content, not the modification time: a file rewritten within the clock's
        # tick (or with its time set back) is read again, and an unchanged one is parsed once
        digest = hashlib.blake2b(body, digest_size=16).digest()
        cached = self._runs.get(name)
        if cached and cached[0] == digest:
            return cached[1]
        run = _parse_run(name, path, body)
        self._runs[name] = (digest, run)
        return run

    def runs(self) -> list[RunFile]:
        return [self.run(n) for n in self.run_names()]

    # golden questions --------------------------------------------------------------------

    def golden(self, live: Live | None = None) -> Golden | None:
        """The golden set named by the index's calibration, training or runs (the demo's for
        the demo index); None when none of them can be read."""
        index = self._at(live)
        with self._lock:
            if self._golden is not None:
                return self._golden[1]
        found: Golden | None = None
        for candidate in self._golden_candidates(index):
            try:
                questions = load_golden(candidate)
            except (GoldenError, OSError):
                continue
            found = Golden(candidate, tuple(questions))
            break
        with self._lock:
            self._golden = (str(found.path) if found else None, found)
        return found

    def _golden_candidates(self, index: Index) -> list[Path]:
        named = [index.extra.get(key, {}).get("golden") for key in ("gate", "reranker")]
        for run in self.runs():
            if run.run is not None:
                named.append(run.run.golden.get("path"))
        paths = [Path(p) for p in named if isinstance(p, str) and p]
        from glassrag.demo import demo_docs, demo_golden

        demo = demo_docs().resolve()
        if any(_inside(Path(d.source), demo) for d in index.documents.values()):
            paths.append(demo_golden())
        return [p for p in dict.fromkeys(paths) if p.is_file()]


class Catalog:
    """The indexes given to `glassrag serve`, by name (the folder's name, made unique).

    `pending`: index folders still being built (`glassrag serve --build`, which runs `glassrag
    corpus build` beside the server): each is served from the first request after it is built,
    that is, once it holds an index and a saved run (`corpus build` saves its run last); until
    then the front page lists it as being built (issue 49, item 4: the demo is served first)."""

    def __init__(self, paths: list[Path | str], pending: list[Path] | tuple[Path, ...] = ()) -> None:
        if not paths:
            raise StoreError("no index given", "name one: glassrag serve --index DIR")
        self._sources: dict[str, Source] = {}
        self.pending: dict[str, Path] = {}
        self._lock = threading.Lock()
        for path in paths:
            self._add(path)
        for folder in pending:
            if built(folder):
                self._add(folder)
            else:
                self.pending[self._unique(_folder_name(folder))] = Path(folder)

    def _unique(self, base: str) -> str:
        """`base`, or `base-2`, `base-3`…: a name no index served or pending has."""
        name, n = base, 1
        while name in self._sources or name in self.pending:
            n += 1
            name = f"{base}-{n}"
        return name

    def _add(self, path: Path | str, name: str | None = None) -> None:
        if is_postgres(str(path)):
            store = open_store(str(path))
            if not store.exists():
                raise StoreError(f"{store} holds no glassrag index",
                                 "build one there: glassrag ingest PATH --store URL")
            base = store.loc.schema
            path = str(path)
        else:
            path = Path(path)
            if not EmbeddedStore(path).exists():
                raise StoreError(f"{path} is not a glassrag index (no CURRENT file)",
                                 f"build one there: glassrag ingest PATH --index {path}")
            base = _folder_name(path)
        name = name or self._unique(base)
        self._sources[name] = Source(name, path)

    @property
    def sources(self) -> dict[str, Source]:
        """The indexes served, with those of `pending` whose build has finished since."""
        if self.pending:
            with self._lock:
                for name, folder in list(self.pending.items()):
                    if built(folder):
                        del self.pending[name]
                        self._add(folder, name)
        return self._sources

    @property
    def names(self) -> list[str]:
        return list(self.sources)

    def warm(self) -> None:
        """Every index's `Source.warm`; an index that fails here is left for its first request to
        report, as it would have without the warm-up."""
        for source in self.sources.values():
            try:
                source.warm()
            except GlassragError:
                pass

    def get(self, name: str | None) -> Source:
        if not name:
            return next(iter(self.sources.values()))
        if name not in self.sources:
            raise NotFound(f"no index named {name!r}", f"indexes served: {', '.join(self.sources)}")
        return self.sources[name]


def _folder_name(path: Path) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", Path(path).resolve().name) or "index"


def built(folder: Path) -> bool:
    """Whether a folder being built holds an index and a saved run (what `corpus build` writes last)."""
    return EmbeddedStore(folder).exists() and any((Path(folder) / "runs").glob("*.json"))


def _parse_run(name: str, path: Path, body: bytes) -> RunFile:
    from glassrag.errors import RunFileError

    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as e:
        return RunFile(name, path, None, f"unreadable: {e}")
    except json.JSONDecodeError as e:
        return RunFile(name, path, None, f"not JSON ({e.msg} at line {e.lineno})")
    except RecursionError:
        return RunFile(name, path, None, "nested too deep to be a run file")
    try:
        run = Run.from_dict(data, f"runs/{name}.json")
    except RunFileError as e:
        return RunFile(name, path, None, e.problem)
    return RunFile(name, path, run)


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder)
    except OSError:
        return False
