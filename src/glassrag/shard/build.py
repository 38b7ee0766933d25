"""Cutting an index into shards by document, each written as an ordinary index folder whose BM25
weights use the whole index's statistics, then the catalogue that names them (the layout and why
statistics stay global: glassrag/shard/__init__.py).

A document goes to shard sha256(document id) mod N, with all its chunks; within a shard the
chunks keep the catalogue's order, so a shard's row order agrees with the catalogue's and the
tie rule of `top_k` (lower row first) means the same on both. Each shard keeps the catalogue's
vocabulary (the same term ids), so the whole index's n(t) is read by term id, and each embedder's
vectors of its rows (a dense search needs no corpus statistics: a cosine is the chunk's own).
"""

from __future__ import annotations

import hashlib
import shutil
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import numpy as np

from glassrag.config import Config
from glassrag.errors import ConfigError, StoreError
from glassrag.lexical.bm25 import Columns, CorpusStats, TermCounts, bm25_weights
from glassrag.store.base import Embedded, Index, Part, Stored
from glassrag.store.embedded import EmbeddedStore

SHARD_PART = "shard"    # a shard's part: the whole index's statistics, its chunks' catalogue rows
SHARDS_PART = "shards"  # the catalogue's part: how many shards, where, and the sharding's id
SHARDS_FOLDER = "shards"
ASSIGN = "sha256(document id) mod shards"
LOCAL = "bm25"          # the in-process retriever a catalogue replaces by the sharded one
SHARDED = "ray-bm25"
RAY_PREFIX = "ray-"     # an embedder's retriever on the shards: ray-NAME (glassrag/retrieve/shards.py)


@dataclass(frozen=True)
class ShardingReport:
    """What `shard_index` wrote: the sharding's id, each shard's folder (relative to the
    sharded folder), documents, chunks and the seconds its cut and write took."""

    build: str
    folders: tuple[str, ...]
    documents: tuple[int, ...]
    chunks: tuple[int, ...]
    seconds: tuple[float, ...]


def shard_of(doc_id: str, shards: int) -> int:
    """The shard of document `doc_id`: the first 8 bytes of sha256(id) as a number, mod `shards`
    (stable across runs and machines, unlike Python's hash)."""
    return int.from_bytes(hashlib.sha256(doc_id.encode("utf-8")).digest()[:8], "big") % shards


def shard_folder(i: int) -> str:
    return f"{SHARDS_FOLDER}/{i:03d}"


def sharded_retrievers(config: Config, origin: str, embedders: tuple[str, ...] = ()) -> Config:
    """`config` with the in-process BM25 retriever replaced by the sharded one, and each
    embedder's of `embedders` by its ray-NAME, where it is fused or observed (a catalogue's
    settings: its questions are searched on the shards)."""
    r = config.retrieve
    to = {LOCAL: SHARDED, **{e: RAY_PREFIX + e for e in embedders}}
    swap = [to.get(n, n) for n in r.retrievers]
    observe = [to.get(n, n) for n in r.observe]
    return config.updated({"retrieve": {"retrievers": swap, "observe": observe}}, origin, "flag")


def unsharded(config: Config, origin: str) -> Config:
    """`config` with the sharded retrievers (ray-bm25, ray-NAME) replaced by the in-process ones
    (bm25, NAME): the settings of the whole index a catalogue was cut from (what an ingest into a
    catalogue builds)."""
    r = config.retrieve
    swap = [n.removeprefix(RAY_PREFIX) for n in r.retrievers]
    observe = [n.removeprefix(RAY_PREFIX) for n in r.observe]
    return config.updated({"retrieve": {"retrievers": swap, "observe": observe}}, origin, "flag")


def shard_index(source: Index, shards: int, out: Path,
                progress: Callable[[str, int, int], None] | None = None) -> ShardingReport:
    """Write `source` (an index read from a folder) as `shards` shards under out/shards/ and the
    catalogue at `out` (written last: its CURRENT swap is the moment the new sharding is live).
    Shards a former sharding left beyond `shards` are removed after the swap."""
    out = Path(out)
    _check(source, shards, out)
    build = uuid.uuid4().hex[:12]
    rows_of, docs_of = assign(source, shards)
    folders, seconds = [], []
    for i in range(shards):
        t0 = time.perf_counter()
        folder = shard_folder(i)
        EmbeddedStore(out / folder).write(cut_shard(source, i, shards, build, rows_of[i], docs_of[i]))
        folders.append(folder)
        seconds.append(time.perf_counter() - t0)
        if progress:
            progress("shard", i + 1, shards)
    EmbeddedStore(out).write(catalogue(source, shards, build, folders, "glassrag shard"))
    for old in sorted((out / SHARDS_FOLDER).iterdir()):
        if old.name.isdigit() and int(old.name) >= shards:
            shutil.rmtree(old, ignore_errors=True)
    return ShardingReport(build, tuple(folders), tuple(len(d) for d in docs_of),
                          tuple(len(r) for r in rows_of), tuple(seconds))


def assign(source: Index, shards: int) -> tuple[list[np.ndarray], list[list[str]]]:
    """Each shard's chunks (their rows in `source`, ascending) and documents (ids, in
    `source`'s order): a document and all its chunks on shard `shard_of(id)`."""
    rows_of: list[list[int]] = [[] for _ in range(shards)]
    seen: dict[str, int] = {}
    for row, chunk in enumerate(source.chunks):
        s = seen.get(chunk.doc_id)
        if s is None:
            s = seen[chunk.doc_id] = shard_of(chunk.doc_id, shards)
        rows_of[s].append(row)
    docs_of: list[list[str]] = [[] for _ in range(shards)]
    for doc_id in source.documents:
        docs_of[seen.get(doc_id, shard_of(doc_id, shards))].append(doc_id)
    return [np.asarray(r, dtype=np.int64) for r in rows_of], docs_of


def cut_shard(source: Index, i: int, shards: int, build: str, rows: np.ndarray, doc_ids: list[str]) -> Index:
    """Shard `i` of `shards` of `source` (sharding `build`): the chunks at `rows` and the
    documents `doc_ids` (from `assign`), with BM25 weights of the whole index's statistics."""
    stats = CorpusStats.of(source.counts)
    k1, b = source.config.bm25.k1, source.config.bm25.b
    rows = np.asarray(rows, dtype=np.int64)
    counts = TermCounts(source.counts.vocab, Columns.of(source.counts.tf.tocsr()[rows]),
                        np.asarray(source.counts.doc_len)[rows].astype(np.float32))
    part = Part({"shard": i, "shards": shards, "build": build, "n_docs": stats.n_docs,
                 "avgdl": stats.avgdl, "assign": ASSIGN},
                {"rows": rows, "doc_freq": np.asarray(stats.doc_freq, dtype=np.int64)})
    shard_config = source.config.updated({"retrieve": {"retrievers": [LOCAL], "observe": []},
                                          "neural": {"models": []}}, "glassrag shard", "flag")
    # each embedder's vectors of the shard's rows: its dense search is exact over them
    vectors = {name: Embedded(name, dict(e.params), np.asarray(e.vectors, dtype=np.float32)[rows])
               for name, e in source.embeddings.items()}
    return Index(shard_config, {d: source.documents[d] for d in doc_ids}, [source.chunks[r] for r in rows.tolist()],
                 counts, None, embeddings=vectors,
                 stored=Stored(bm25=(float(k1), float(b), bm25_weights(counts, k1, b, stats))),
                 parts={SHARD_PART: part})


def catalogue(source: Index, shards: int, build: str, folders: list[str], origin: str) -> Index:
    """`source` as the catalogue of sharding `build` (its shards at `folders`): searched with
    the sharded retrievers (ray-bm25, ray-NAME for each embedder) in place of the in-process ones."""
    return replace(source, config=sharded_retrievers(source.config, origin, tuple(source.embeddings)),
                   parts={**source.parts, SHARDS_PART: Part(
                       {"shards": shards, "build": build, "folders": folders, "assign": ASSIGN}, {})})


def _check(source: Index, shards: int, out: Path) -> None:
    if shards < 1:
        raise ConfigError(f"--shards {shards}: a sharded index needs at least one shard", "give --shards 2 or more")
    if source.stored is None or source.stored.folder is None or source.chunks.pg is not None:
        raise ConfigError("only an index in a folder can be sharded",
                          "ingest into a folder (glassrag ingest PATH --index DIR), then shard it")
    if SHARDS_PART in source.parts:
        raise ConfigError(f"{source.stored.folder.parent} is already a sharded index",
                          "shard the index it was cut from (--index the original folder)")
    if out.resolve() == source.stored.folder.parent.resolve():
        raise ConfigError(f"--out {out} is the index being sharded", "choose a new folder for --out")
    target = EmbeddedStore(out)
    if target.exists() and SHARDS_PART not in target.read().parts:
        raise StoreError(f"{out} is an index, not a sharded one; sharding into it would replace it",
                         "choose a new folder for --out; nothing was written")
