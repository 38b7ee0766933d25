"""Building an index, one step a module:

    1. diff.py      which files are new, changed, unchanged or gone; the new and changed ones read
                    and chunked (unchanged files keep the chunks they had)
    2. chunks.py    the documents kept from the previous index join them, with their chunks;
                    every chunk in index order
    3. counts.py    every chunk's term counts, the base every index has (BM25 reads them)
    4. here         each retriever's own part (LSA's model, an embedder's vectors), built by the
                    entry of its table that needs one (`Entry.build`, glassrag/retrieve/__init__.py
                    `index_parts`): the indexer names no retriever
    5. trained.py   what is kept of the previous index's trained parts

Documents and chunks go to a spool on disk as they are read (glassrag/store/spool.py): what
stays in memory is their ids and offsets, the term counts and the retrievers' parts. Nothing is
written here: a store writes the index it returns, atomically (glassrag/store/).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from glassrag import threads
from glassrag.chunk import make_chunker
from glassrag.config import Config
from glassrag.errors import IngestError
from glassrag.indexer.chunks import in_index_order, indexed, join_kept
from glassrag.indexer.counts import count_terms
from glassrag.indexer.diff import Before, Gathered, nothing_changed, read_corpora
from glassrag.indexer.trained import kept_extra, kept_trained_parts
from glassrag.indexer.work import HERE, Work
from glassrag.ingest import walk
from glassrag.ingest.beir import is_beir
from glassrag.ingest.report import IngestReport, Progress
from glassrag.retrieve import index_parts
from glassrag.retrieve.base import Building
from glassrag.retrieve.neural import check_embedders, retriever_name
from glassrag.store.base import Index
from glassrag.store.spool import ChunkSpool

__all__ = ["ChunkSpool", "IngestReport", "Progress", "build_index", "build_parts", "kept_trained_parts",
           "retriever_name", "with_embedder"]


def build_index(paths: list[Path], config: Config, previous: Index | None = None,
                prune: bool = False, max_bytes: int | None = None,
                max_text: tuple[float, float] | None = None, progress: Progress | None = None, cache_dir: Path | None = None,
                spool_dir: Path | None = None, work: Work = HERE) -> tuple[Index, IngestReport]:
    """Ingest `paths` into a new Index, reusing what `previous` already holds. Documents and
    chunks are spooled to unlinked files in `spool_dir` (the system's temporary folder
    when None). `max_text`: (MB, ratio) that bound each file's extracted text
    (ingest.text_limit; its defaults when None). When nothing changed, `previous` itself is
    returned and the report says so (`nothing_changed`). `work`: where reading, analysing and
    embedding run (glassrag/indexer/work.py; here by default, or on a Ray cluster)."""
    threads.configure()  # LSA's QR steps on one BLAS thread (glassrag/threads.py)
    check_embedders(config)  # a missing model or runtime fails now, not after reading every file
    report = IngestReport()
    beir_paths = [p for p in paths if is_beir(p)]
    found = walk([p for p in paths if p not in beir_paths])
    report.failed.extend(found.problems)
    report.skipped.extend(found.skipped)
    chunker = make_chunker(config.chunk.chunker, size=config.chunk.size,
                           overlap=config.chunk.overlap, unit=config.chunk.unit)
    before, gathered = Before.of(previous, config), Gathered(spool_dir)
    work.read_files(found.files, chunker, before, gathered, report, max_bytes, max_text, progress)
    sources = read_corpora(beir_paths, before, prune, gathered, report)
    if previous is not None and nothing_changed(before, config, gathered, sources, prune, paths):
        report.nothing_changed = True  # nothing to analyse, fit or write
        return previous, report

    join_kept(before, gathered, prune, paths, report)
    documents, chunks = gathered.documents, in_index_order(gathered, chunker)
    text_of = indexed(documents, config)
    counts = count_terms(chunks, text_of, before, config, gathered.new, progress, work.analyse)
    if len(chunks) and not counts.columns.nnz:  # the LSA and every other retriever need one term
        raise IngestError(", ".join(map(str, paths)),
                          f"none of its {len(chunks)} chunk(s) has a word to index (every word is a stopword, "
                          "or the text is punctuation only)",
                          "nothing could ever be found in it: check the files (or [analyze] stopwords); "
                          "no index was written")
    index = Index(config, documents, chunks, counts, None, sources=sources)
    building = Building(chunks, text_of, report, cache_dir, progress)
    elsewhere = work.embed(index, building)  # vectors the cache lacked, embedded by `work` into it
    index = build_parts(index, building)
    for name, n in elsewhere.items():  # the build found them cached: they were embedded by this ingest
        counted = report.embedded.get(name, {"embedded": 0, "from cache": n})
        report.embedded[name] = {"embedded": counted["embedded"] + n, "from cache": counted["from cache"] - n}
    return replace(index, extra=kept_extra(previous, config, report, documents)), report


def build_parts(index: Index, building: Building) -> Index:
    """`index` with each retriever's own part, built by the table entry that needs it, in the
    order `index_parts` gives."""
    for name, build in index_parts(index.config):
        index = build(name, index, building)
    return index


def with_embedder(config: Config, model: str) -> Config:
    """The settings of an index built with a neural embedder (`ingest --embedder`): it
    answers from BM25 fused with the model by weighted fusion, BM25 weighing
    [fuse] neural_weight."""
    models = list(dict.fromkeys([*config.neural.models, model]))
    return config.updated({"neural": {"models": models},
                           "retrieve": {"retrievers": ["bm25", retriever_name(model)]},
                           "fuse": {"method": "weighted", "weight": config.fuse.neural_weight}},
                          "--embedder", "flag")
