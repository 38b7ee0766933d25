"""`glassrag ingest --ray [ADDRESS] [--shards N]`: an ingest whose reading, chunking, analysing
and embedding run on a Ray cluster, written as one index or as N shards, each by its own writer.

The driver runs the one-machine ingest (glassrag/indexer/) with a `RayWork` (the indexer's
`Work`, glassrag/indexer/work.py): the steps whose cost grows with the documents go to workers
(one actor a CPU of the cluster, each loading its chunker, analyser and embedders once) in
batches dealt round them, and come back in the order they were sent, so the driver assembles
exactly what one process would have:

    files     batches of files → `read_file` (hash; new or changed: load, check, chunk)
    analyse   batches of the new chunks' texts → their tokens; the driver merges the term
              counts (the same vocabulary and rows as one process: tokens arrive in order)
    embed     the texts an embedder lacks in the index's embedding cache, in batches sorted by
              length as `embed_passages` sorts them → vectors put in the cache; the build then
              reads them there (the ONNX MiniLM's vectors do not depend on the batch)

Incremental ingest is the one-machine one: content hashes decide which files are read again
(the workers get each batch's previous hashes), and only the new and changed documents' chunks
are analysed and embedded.

LSA stays global: its SVD is fitted once, on the driver, on the whole corpus's merged term
counts (above [lsa] fit_sample on a seeded sample, every passage then folded in), the same
matrix as one process, so the same model; its vectors stay in the catalogue, where the `lsa`
retriever searches them. Shards hold BM25 only (glassrag/shard/__init__.py).

Written as shards (`--shards N`, or an index that is already a catalogue), the generation swap
is kept for the whole sharded index:

    1. the whole index is written to DIR/shards/.staging-BUILD (an ordinary index folder)
    2. each shard is cut from it (`cut_shard`: the whole index's BM25 statistics) and written by
       a worker to DIR/shards/BUILD/NNN, its own folder; one writer a shard
    3. the catalogue (the whole index, its part `shards` naming BUILD's folders) is written to
       DIR: its CURRENT swap is the moment the new sharding is live
    4. the staging folder and every former sharding's folders are removed

A driver or worker killed before step 3 leaves DIR's CURRENT naming the previous catalogue,
whose shard folders were never written to: every shard is served at its previous state. The
next ingest removes what the killed one left (step 4). The shards are those `glassrag shard`
cuts from the same whole index, file for file.
"""

from __future__ import annotations

import shutil
import uuid
from collections import deque
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from glassrag.chunk.base import Chunker
from glassrag.config import Config
from glassrag.errors import ConfigError, GlassragError, ShardError
from glassrag.indexer.diff import Before, Gathered, record
from glassrag.ingest import document_ids
from glassrag.ingest.report import IngestReport, Progress
from glassrag.lexical.analyze import Analyzer
from glassrag.retrieve.base import Building
from glassrag.shard.build import SHARDS_FOLDER, SHARDS_PART, ShardingReport, assign, catalogue, unsharded
from glassrag.shard.workers import IngestWorker
from glassrag.store.base import Index
from glassrag.store.embedded import EmbeddedStore

FILES_A_BATCH = 8      # files read by one call of a worker
TEXTS_A_BATCH = 512    # chunk texts analysed or embedded by one call
STAGING = ".staging-"
ORIGIN = "glassrag ingest --shards"
# what needs Ray, and what to do without it (shard/serve.py `connect`: the error when Ray is absent)
NEEDS = ("an ingest on a Ray cluster (--ray, --shards)", "ingest without --ray and --shards")


class RayWork:
    """The indexer's `Work` on a Ray cluster: one `IngestWorker` actor a CPU of the cluster,
    spread over its nodes. `counted` says what each step sent to the workers (documents read,
    texts analysed, texts embedded per retriever)."""

    def __init__(self, ray: Any, config: Config, workers: int | None = None) -> None:
        self.ray = ray
        n = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        remote = ray.remote(num_cpus=1, max_restarts=0)(IngestWorker)
        self.actors = [remote.options(scheduling_strategy="SPREAD").remote(config) for _ in range(n)]
        self.config = config
        self.counted: dict[str, Any] = {"read": 0, "analysed": 0, "embedded": {}}

    def close(self) -> None:
        for actor in self.actors:
            try:
                self.ray.kill(actor)
            except Exception:  # already gone: what we wanted
                pass
        self.actors = []

    def where(self) -> list[dict[str, Any]]:
        return self._get_all([a.where.remote() for a in self.actors], "starting")

    # the indexer's Work -----------------------------------------------------------------

    def read_files(self, files: list[tuple[Path, Path]], chunker: Chunker, before: Before, gathered: Gathered,
                   report: IngestReport, max_bytes: int | None, max_text: tuple[float, float] | None,
                   progress: Progress | None) -> None:
        """Every walked file read by a worker (`read_file`), recorded here in walk order."""
        named = list(zip([p for p, _ in files], document_ids(files)))
        batches = [named[i:i + FILES_A_BATCH] for i in range(0, len(named), FILES_A_BATCH)]

        def calls() -> Iterator[tuple[str, tuple]]:
            for batch in batches:
                ids = [d for _, d in batch]
                known = Before(None, {d: before.hashes[d] for d in ids if d in before.hashes},
                               {d for d in ids if d in before.chunkless}, before.same_chunking)
                yield "read", ([(str(p), d) for p, d in batch], known, max_bytes, max_text)

        done = 0
        for batch, reads in zip(batches, self._ordered(calls(), "reading files")):
            for (path, doc_id), read in zip(batch, reads):
                record(read, path, doc_id, before, gathered, report)
                self.counted["read"] += read.doc is not None
            done += len(batch)
            if progress:
                progress("read", done, len(named))

    def analyse(self, texts: Iterable[str], analyzer: Analyzer) -> Iterator[list[str]]:
        """The tokens of `texts`, in order, analysed by the workers (with the analyser of the
        settings they were started with: the ingest's, as `analyzer`'s)."""
        def calls() -> Iterator[tuple[str, tuple]]:
            for batch in _batches(texts, TEXTS_A_BATCH):
                self.counted["analysed"] += len(batch)
                yield "analyse", (batch,)

        for tokens in self._ordered(calls(), "analysing"):
            yield from tokens

    def embed(self, index: Index, building: Building) -> dict[str, int]:
        """The texts each embedder's cache lacks, embedded by the workers and put in the
        index's embedding cache (the build then reads them there). Without a cache folder
        nothing is done here: the build embeds in this process."""
        from glassrag.dense.cache import EmbeddingCache, text_key
        from glassrag.retrieve.neural import embedder_for, retriever_name

        if building.cache_dir is None:
            return {}
        models = index.config.neural.models
        out: dict[str, int] = {}
        for name in dict.fromkeys(map(retriever_name, models)):
            model = [m for m in models if retriever_name(m) == name][-1]  # as retrieve/neural.py `build`
            embedder = embedder_for(model, index.config)
            cache = EmbeddingCache(building.cache_dir, embedder.name)
            texts = building.texts()
            keys = [text_key(embedder.name, t) for t in texts]
            missing = cache.split(keys)
            if not missing:
                continue
            order = [missing[j] for j in np.argsort([-len(texts[i]) for i in missing], kind="stable")]
            batches = [order[i:i + TEXTS_A_BATCH] for i in range(0, len(order), TEXTS_A_BATCH)]
            done = 0
            calls = (("embed", (model, [texts[i] for i in batch])) for batch in batches)
            for batch, vectors in zip(batches, self._ordered(calls, f"embedding with {model}")):
                cache.put([keys[i] for i in batch], vectors)
                done += len(batch)
                building.step("embed", done, len(order))
            cache.save()
            out[name] = len(missing)
        self.counted["embedded"] = {**self.counted["embedded"], **out}
        return out

    def write_shards(self, whole: Path, shards: int, build: str, rows_of: Sequence[np.ndarray],
                     docs_of: Sequence[list[str]], folders: Sequence[Path]) -> list[float]:
        """Shard i cut from the index in `whole` and written to folders[i] by worker i mod the
        workers: one writer a shard, all at once."""
        refs = [self.actors[i % len(self.actors)].write_shard.remote(
            str(whole), i, shards, build, rows_of[i], docs_of[i], str(folders[i])) for i in range(shards)]
        return self._get_all(refs, "writing the shards")

    # calls ------------------------------------------------------------------------------

    def _ordered(self, calls: Iterable[tuple[str, tuple]], what: str) -> Iterator[Any]:
        """Each call's result, in the order of `calls`: calls dealt round the workers, at most
        two a worker waiting at once."""
        pending: deque[Any] = deque()
        for n, (method, args) in enumerate(calls):
            pending.append(getattr(self.actors[n % len(self.actors)], method).remote(*args))
            if len(pending) >= 2 * len(self.actors):
                yield self._get(pending.popleft(), what)
        while pending:
            yield self._get(pending.popleft(), what)

    def _get_all(self, refs: list[Any], what: str) -> list[Any]:
        return [self._get(ref, what) for ref in refs]

    def _get(self, ref: Any, what: str) -> Any:
        try:
            return self.ray.get(ref)
        except self.ray.exceptions.RayError as err:
            cause = getattr(err, "cause", None)
            if isinstance(cause, GlassragError):
                raise cause from None
            first = str(err).splitlines()[0] if str(err) else ""
            raise ShardError(f"a worker of the cluster ingest failed while {what}: {type(err).__name__}: {first}",
                             "nothing was written (the index is as it was); run the ingest again") from None


def _batches(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def shard_count(previous: Index | None) -> int | None:
    """How many shards `previous` is cut into (None: not a catalogue)."""
    part = previous.parts.get(SHARDS_PART) if previous is not None else None
    return int(part.params["shards"]) if part is not None else None


def as_whole(previous: Index | None) -> Index | None:
    """A catalogue as the whole index it is (in-process BM25, no part `shards`): what an ingest
    into it starts from, and compares its settings with."""
    if previous is None or SHARDS_PART not in previous.parts:
        return previous
    from dataclasses import replace

    return replace(previous, config=unsharded(previous.config, ORIGIN),
                   parts={k: v for k, v in previous.parts.items() if k != SHARDS_PART})


def check_target(location: str, shards: int | None) -> None:
    """ConfigError unless a sharded ingest can write at `location` (a folder) with `shards`."""
    from glassrag.store import is_postgres

    if shards is not None and shards < 1:
        raise ConfigError(f"--shards {shards}: a sharded index needs at least one shard", "give --shards 2 or more")
    if shards is not None and is_postgres(location):
        raise ConfigError("--shards needs an index in a folder, not in PostgreSQL",
                          "give --index a folder, or leave out --shards")


def write_sharded(store: EmbeddedStore, index: Index, shards: int, work: RayWork) -> ShardingReport:
    """`index` (a whole index, built in memory or read) written as `shards` shards and their
    catalogue at `store`'s folder, in the order that keeps the previous sharding live until the
    catalogue's swap (this module's docstring); `store`'s writer lock is held throughout."""
    out = store.path
    build = uuid.uuid4().hex[:12]
    staging = out / SHARDS_FOLDER / f"{STAGING}{build}"
    EmbeddedStore(staging).write(index)
    whole = EmbeddedStore(staging).read()
    rows_of, docs_of = assign(whole, shards)
    folders = [f"{SHARDS_FOLDER}/{build}/{i:03d}" for i in range(shards)]
    seconds = work.write_shards(staging, shards, build, rows_of, docs_of, [out / f for f in folders])
    store.write(catalogue(whole, shards, build, folders, ORIGIN))
    for entry in (out / SHARDS_FOLDER).iterdir():  # the staging folder, former shardings, a killed ingest's
        if entry.name != build:
            shutil.rmtree(entry, ignore_errors=True) if entry.is_dir() and not entry.is_symlink() \
                else entry.unlink(missing_ok=True)
    return ShardingReport(build, tuple(folders), tuple(len(d) for d in docs_of), tuple(len(r) for r in rows_of),
                          tuple(seconds))


class ClusterIngest:
    """One `glassrag ingest` on a Ray cluster (`--ray`, `--shards`, or an index already
    sharded): the previous index as the whole index it is, the work, and the write. `address`:
    the cluster's (None or "": $GLASSRAG_RAY, else a one-machine cluster started here)."""

    def __init__(self, location: str, previous: Index | None, address: str | None, shards: int | None) -> None:
        check_target(location, shards)
        self.had = shard_count(previous)
        self.shards = shards if shards is not None else self.had
        self.previous = as_whole(previous)
        self.address = address or None
        self.work: RayWork | None = None

    def settings(self, config: Config) -> Config:
        """The whole index's settings (in-process BM25; the catalogue gets the sharded one)."""
        return unsharded(config, ORIGIN)

    def start(self, config: Config) -> RayWork:
        from glassrag.shard.serve import connect

        self.work = RayWork(connect(self.address, NEEDS), config)
        return self.work

    def reshard(self) -> bool:
        """Whether the shards must be written even when no document changed (another count)."""
        return self.shards is not None and self.shards != self.had

    def write(self, store: Any, index: Index) -> ShardingReport | None:
        if self.shards is None:
            store.write(index)
            return None
        assert self.work is not None
        return write_sharded(store, index, self.shards, self.work)

    def close(self) -> None:
        if self.work is not None:
            self.work.close()
