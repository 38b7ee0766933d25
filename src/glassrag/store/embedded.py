"""The embedded store: an index is a folder on disk, no server.

    DIR/CURRENT              names the live generation (replaced atomically)
    DIR/gen-<id>/manifest.json   format version, glassrag version, settings, counts
    DIR/gen-<id>/texts.bin, documents.jsonl, chunks.jsonl and their offsets (store/tables.py)
    DIR/gen-<id>/lexical/{vocab.json, tf_*.npy, doc_len.npy, bm25.npy}
    DIR/gen-<id>/lsa/{params.json, *.npy}
    DIR/gen-<id>/neural/<name>/{params.json, vectors.npy}
    DIR/gen-<id>/parts/<name>/{params.json, *.npy}   a retriever's own part (store/base.py Part)
    DIR/cache/embeddings/...     the embedding cache (glassrag/dense/cache.py)
    DIR/runs/<name>.json         runs kept by glassrag eval --save
    DIR/shards/NNN/              a sharded index's shards, each an index folder (glassrag/shard/)

A write builds a new generation in a temporary folder, renames it into place, then
swaps CURRENT with os.replace; a crash at any point leaves the previous index readable.
Writers hold DIR/.writer.lock (glassrag/store/lock.py), so one writes at a time and the
leftovers a write removes are never another writer's; a store that read a generation
refuses to write over a newer one (another writer's documents would be lost).
No pickle anywhere: arrays are .npy read with allow_pickle=False, memory-mapped, so an
index opens without reading its arrays (docs/index-format.md). A write of an index that
was read from a generation (rerank-train, calibrate) hard-links the parts it did not
change instead of rewriting them.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Mapping

import numpy as np

from glassrag import __version__
from glassrag.config import Config
from glassrag.dense.lsa import LSA
from glassrag.errors import DiskError, StoreError
from glassrag.lexical.bm25 import Columns, TermCounts, bm25_weights
from glassrag.schema.fitted import read_extra
from glassrag.store.base import FORMAT_VERSION, Embedded, Index, Part, Stored, checked_part
from glassrag.store.lock import LOCK_FILE, WriterLock
from glassrag.store.pointer import live_generation, read_pointer
from glassrag.store.safefile import replace_file
from glassrag.store import shapes
from glassrag.store.shapes import FLOAT, INTEGER, NUMBER
from glassrag.store.tables import FolderChunks, DocumentTable, write_tables

POINTER = "CURRENT"
OWN_FOLDERS = {"cache", "runs", "shards"}  # glassrag's own, kept beside the generations (shards: glassrag/shard/)


class EmbeddedStore:
    """`wait`: seconds a writer waits for another writer's lock before it gives up;
    `notify` is told who holds it when it has to wait."""

    def __init__(self, path: Path | str, wait: float = 60.0,
                 notify: Callable[[str], None] | None = None) -> None:
        self.path = Path(path)
        self._lock = WriterLock(self.path, wait, notify)
        self._read_from: str | None = None  # the generation read() read, if it read one
        self._has_read = False

    def exists(self) -> bool:
        return (self.path / POINTER).is_file()

    # writing ---------------------------------------------------------------------------

    @contextmanager
    def writing(self) -> Iterator[None]:
        """The writer lock, for a whole read-change-write (`with store.writing(): ...`), so a
        second writer waits and then reads what the first wrote. `write` takes it too.
        A folder this creates is removed again when nothing was written to it."""
        self._check_target()
        created = not self.path.exists()
        with self._lock:
            try:
                yield
            finally:
                if created and not self.exists():
                    self._lock.remove_folder_if_unused()

    def _check_target(self) -> None:
        try:
            self._check_folder()
        except OSError as e:  # a parent folder this user may not enter
            raise StoreError(f"{self.path}: cannot be reached ({e.strerror})",
                             "check the permissions of the index folder and its parents") from None

    def _check_folder(self) -> None:
        if self.path.exists() and not self.path.is_dir():
            raise StoreError(f"{self.path} is a file, not an index folder", "choose another --index path")
        if self.path.is_dir() and not self.exists() and not all(
                _is_own(p.name) for p in self.path.iterdir()):
            raise StoreError(f"{self.path} is not empty and is not a glassrag index",
                             "choose a new or empty folder for --index; nothing was written")

    def write(self, index: Index) -> None:
        with self.writing():
            current = self._current_name()
            if self._has_read and current != self._read_from:
                raise StoreError(
                    f"{self.path} changed since this command read it (another writer made "
                    f"{current}); writing now would lose that writer's work",
                    "run the command again: it reads the new index; nothing was written")
            self._write_locked(index)

    def _write_locked(self, index: Index) -> None:
        self._remove_leftovers()
        name = f"gen-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
        tmp = self.path / f".tmp-{name}"
        tmp.mkdir()
        try:
            self._write_generation(tmp, index)
            os.rename(tmp, self.path / name)
            old = self._current_name()
            # a new temporary file, fsynced, renamed over CURRENT (safefile.py: a link planted
            # in the folder is never written through)
            replace_file(self.path / POINTER, (name + "\n").encode("utf-8"), sync=True)
        except BaseException as err:
            shutil.rmtree(tmp, ignore_errors=True)
            try:  # a generation renamed in but never made current
                if (self.path / name).exists() and self._pointer() != name:
                    shutil.rmtree(self.path / name, ignore_errors=True)
            except OSError:
                pass
            if isinstance(err, OSError) and (disk := DiskError.of(str(self.path), err,
                                                                  "the index is as it was before")):
                raise disk from None
            raise
        self._read_from, self._has_read = name, True
        if old and old != name:
            shutil.rmtree(self.path / old, ignore_errors=True)

    def _write_generation(self, folder: Path, index: Index) -> None:
        source = index.stored.folder if index.stored is not None else None
        k1, b = index.config.bm25.k1, index.config.bm25.b
        same_tables = source is not None and index.chunks.folder == source \
            and isinstance(index.documents, DocumentTable) and index.documents.folder == source
        if same_tables:
            assert source is not None
            _link(source, folder, TABLE_FILES)
            stored = index.stored
            assert stored is not None
            facts = {"superseded": stored.superseded, "newest_date": stored.newest_date}
        else:
            facts = write_tables(folder, index.documents, index.chunks)
        lex = folder / "lexical"
        lex.mkdir()
        if source is not None and index.stored is not None and index.counts is index.stored.counts:
            _link(source / "lexical", lex, LEXICAL_FILES)
        else:
            _write_json(lex / "vocab.json", sorted(index.counts.vocab, key=index.counts.vocab.get))
            tf = index.counts.columns
            np.save(lex / "tf_data.npy", np.asarray(tf.data, dtype=np.float32))
            np.save(lex / "tf_indices.npy", np.asarray(tf.indices, dtype=np.int32))
            np.save(lex / "tf_indptr.npy", np.asarray(tf.indptr, dtype=np.int64))
            np.save(lex / "doc_len.npy", np.asarray(index.counts.doc_len, dtype=np.float32))
        weights = index.bm25_weights(k1, b)
        np.save(lex / "bm25.npy", weights if weights is not None else bm25_weights(index.counts, k1, b))
        if index.lsa is not None:
            lsa = folder / "lsa"
            lsa.mkdir()
            _write_json(lsa / "params.json", index.lsa.params())
            for key, array in index.lsa.arrays().items():
                np.save(lsa / f"{key}.npy", array)
        for name, emb in index.embeddings.items():
            folder_n = folder / "neural" / name
            folder_n.mkdir(parents=True)
            _write_json(folder_n / "params.json", emb.params)
            np.save(folder_n / "vectors.npy", np.asarray(emb.vectors, dtype=np.float32))
        for name, part in index.parts.items():
            _write_part(folder / "parts" / name, checked_part(name, part))
        manifest = {
            "format_version": FORMAT_VERSION,
            "glassrag_version": __version__,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            # what was set explicitly and what needs a re-ingest; the rest follows the defaults
            "config": index.config.stored(),
            "counts": {"documents": len(index.documents), "chunks": len(index.chunks),
                       "terms": len(index.counts.vocab)},
            "stored": {**facts, "bm25": {"k1": float(k1), "b": float(b)}},
            "sources": index.sources,
            "extra": read_extra(index.extra),
        }
        # the manifest is written last: a generation without one is incomplete
        _write_json(folder / "manifest.json", manifest)

    def generation(self) -> str:
        """The live generation's name (the web app re-reads an index when it changes)."""
        name = self._current_name()
        if name is None:
            raise StoreError(f"{self.path} is no longer a glassrag index (no {POINTER} file)",
                             f"rebuild it: glassrag ingest PATH --index {self.path}")
        return name

    def _pointer(self) -> str | None:
        return read_pointer(self.path / POINTER)

    def _current_name(self) -> str | None:
        return live_generation(self.path, POINTER)

    def _remove_leftovers(self) -> None:
        """Temporary folders and files and unreferenced generations from an interrupted write
        (a link among them is removed itself, never what it points to)."""
        current = self._current_name()
        for entry in self.path.iterdir():
            if entry.name.startswith(f".{POINTER}.") and entry.name.endswith(".tmp"):
                entry.unlink(missing_ok=True)
            elif entry.name.startswith(".tmp-gen-") or (
                    entry.name.startswith("gen-") and entry.name != current):
                if entry.is_symlink():
                    entry.unlink()
                else:
                    shutil.rmtree(entry, ignore_errors=True)

    # reading ---------------------------------------------------------------------------

    def read(self) -> Index:
        if not self.path.exists():
            raise StoreError(f"index folder {self.path} does not exist",
                             f"build it first: glassrag ingest PATH --index {self.path}")
        name = self._current_name()
        if name is None:
            raise StoreError(f"{self.path} is not a glassrag index (no {POINTER} file)",
                             f"build one there: glassrag ingest PATH --index {self.path}")
        try:
            return self._read_named(name)
        except StoreError:
            # a writer may have made a new generation current and deleted this one while it was
            # opened: that is a lost race, not damage; read CURRENT again, once
            now = self._current_name()
            if now is None or now == name:
                raise
        try:
            return self._read_named(now)
        except StoreError as err:
            if self._current_name() == now:
                raise
            raise StoreError(f"{self.path} changed twice while it was being read (writers made "
                             f"{now} and then {self._current_name()})",
                             "run the command again once the writes are over; the index is not damaged") from err

    def _read_named(self, name: str) -> Index:
        """The generation `name`, or StoreError saying what is damaged."""
        folder = self.path / name
        self._read_from, self._has_read = name, True
        try:
            manifest = shapes.table(folder / "manifest.json")
        except (OSError, ValueError) as err:
            raise StoreError(f"{folder}: manifest unreadable ({err})",
                             "rebuild the index with glassrag ingest") from None
        version = manifest.get("format_version")
        if version != FORMAT_VERSION:
            raise StoreError(
                f"{self.path} was written in index format {version}; this glassrag "
                f"({__version__}) reads format {FORMAT_VERSION}",
                "rebuild it with glassrag ingest (the documents are not changed)")
        try:
            return self._read_generation(folder, manifest)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError) as err:
            raise StoreError(f"{folder}: index files damaged ({type(err).__name__}: {err})",
                             "rebuild the index with glassrag ingest") from None

    def _read_generation(self, folder: Path, manifest: dict[str, Any]) -> Index:
        config = Config.from_dict(manifest["config"], origin=str(folder / "manifest.json"), layer="index")
        documents = DocumentTable(folder)
        chunks = FolderChunks(folder)
        lex = folder / "lexical"
        # every array checked against the tables it indexes (store/shapes.py): n chunks, V terms,
        # one count and one BM25 weight per posting
        n, terms = len(chunks), shapes.strings(lex / "vocab.json")
        vocab = dict(zip(terms, range(len(terms))))
        doc_len = shapes.array(lex / "doc_len.npy", NUMBER, (n,))
        indices = shapes.array(lex / "tf_indices.npy", INTEGER, (None,))
        tf = Columns(shapes.array(lex / "tf_indptr.npy", INTEGER, (len(terms) + 1,)), indices,
                     shapes.array(lex / "tf_data.npy", NUMBER, (len(indices),)), (len(doc_len), len(terms)))
        counts = TermCounts(vocab, tf, doc_len)
        facts = manifest.get("stored", {})
        params = facts.get("bm25", {})
        doc_chunks = shapes.array(folder / "doc_chunks.npy", INTEGER, (len(documents),))
        chunkless = [bytes(documents.sorted_ids[r]).decode("utf-8")
                     for r in np.flatnonzero(np.asarray(doc_chunks) == 0).tolist()]
        stored = Stored(
            bm25=(float(params["k1"]), float(params["b"]), shapes.array(lex / "bm25.npy", FLOAT, (len(indices),)))
            if params else None,
            superseded=dict(facts.get("superseded", {})), newest_date=facts.get("newest_date"),
            doc_chunks=_DocChunks(documents, doc_chunks),
            content_hashes=documents.content_hashes(), chunkless=chunkless,
            folder=folder, counts=counts)
        lsa = None
        if (folder / "lsa").is_dir():
            params = shapes.table(folder / "lsa" / "params.json")
            at = folder / "lsa"
            term_vectors = shapes.array(at / "term_vectors.npy", FLOAT, (len(terms), None))
            dim = term_vectors.shape[1]
            arrays = {"idf": shapes.array(at / "idf.npy", NUMBER, (len(terms),)), "term_vectors": term_vectors,
                      "passage_vectors": shapes.array(at / "passage_vectors.npy", FLOAT, (n, dim)),
                      "variance_share": shapes.array(at / "variance_share.npy", NUMBER, (None,))}
            lsa = LSA.from_arrays(params, vocab, arrays)
        embeddings = {}
        if (folder / "neural").is_dir():
            for sub in sorted((folder / "neural").iterdir()):
                params = shapes.table(sub / "params.json")
                embeddings[sub.name] = Embedded(sub.name, params, shapes.array(sub / "vectors.npy", FLOAT, (n, None)))
        parts = {sub.name: _read_part(sub) for sub in sorted((folder / "parts").iterdir())} \
            if (folder / "parts").is_dir() else {}
        return Index(config, documents, chunks, counts, lsa, read_extra(manifest.get("extra", {})), embeddings,
                     stored, dict(manifest.get("sources", {})), parts)


class _DocChunks(Mapping[str, int]):
    """document id -> its number of chunks, from doc_chunks.npy (one per document row)."""

    def __init__(self, documents: DocumentTable, counts: np.ndarray) -> None:
        self.documents, self.counts = documents, counts

    def __getitem__(self, doc_id: str) -> int:
        return int(self.counts[self.documents.rows[doc_id]])

    def __iter__(self) -> Iterator[str]:
        return iter(self.documents)

    def __len__(self) -> int:
        return len(self.documents)


TABLE_FILES = ("texts.bin", "documents.jsonl", "chunks.jsonl", "doc_offsets.npy", "doc_text.npy",
               "doc_ids.npy", "doc_chunks.npy", "doc_hashes.npy", "chunk_offsets.npy", "chunk_text.npy", "chunk_words.npy", "chunk_ids.npy",
               "chunk_ids_sorted.npy", "chunk_ids_order.npy")
LEXICAL_FILES = ("vocab.json", "tf_data.npy", "tf_indices.npy", "tf_indptr.npy", "doc_len.npy")


def _write_part(folder: Path, part: Part) -> None:
    """A retriever's own part: parts/<name>/params.json and one .npy per array."""
    folder.mkdir(parents=True)
    _write_json(folder / "params.json", part.params)
    for key, array in part.arrays.items():
        np.save(folder / f"{key}.npy", np.asarray(array), allow_pickle=False)


def _read_part(folder: Path) -> Part:
    params = shapes.table(folder / "params.json")
    return Part(params, {p.stem: shapes.array(p, shapes.STORED) for p in sorted(folder.glob("*.npy"))})


def _link(source: Path, target: Path, names: Iterable[str]) -> None:
    """Hard-link unchanged files of the previous generation (a copy where links fail):
    a generation's files are never changed after it is written."""
    for name in names:
        try:
            os.link(source / name, target / name)
        except OSError:
            shutil.copyfile(source / name, target / name)


def _is_own(name: str) -> bool:
    """glassrag's own entries in an index folder, including a first write's leftovers."""
    return name in OWN_FOLDERS or name == LOCK_FILE or name.startswith((".tmp-gen-", "gen-")) or \
        (name.startswith(f".{POINTER}.") and name.endswith(".tmp"))


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")

