"""What an ingest's Ray workers run (glassrag/shard/ingest.py): a plain class, so it is tested
without Ray too, holding the ingest's settings, its chunker, analyser and embedders, loaded once
per worker. Each method is one step of the one-machine ingest, called with the same functions:

    read         indexer/diff.py `read_file` for each file of a batch
    analyse      the [analyze] analyser over a batch of chunk texts
    embed        SentenceEmbedder.embed_passages over a batch of chunk texts (the ONNX MiniLM
                 gives every text the same vector whatever the batch: checked in tests/ray/)
    write_shard  shard/build.py `cut_shard` of the whole index, written to the shard's folder
                 (one writer per shard; its own generation swap)

Files and index folders are read by path: every node must see them at the same path (a shared
file system, or one machine).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from glassrag.chunk import make_chunker
from glassrag.config import Config
from glassrag.indexer.diff import Before, Read, read_file
from glassrag.lexical.analyze import Analyzer


class IngestWorker:
    """One worker of a cluster ingest, for the settings `config`."""

    def __init__(self, config: Config) -> None:
        c = config.chunk
        self.config = config
        self.chunker = make_chunker(c.chunker, size=c.size, overlap=c.overlap, unit=c.unit)
        a = config.analyze
        self.analyzer = Analyzer(a.stopwords, a.stem, a.identifiers)
        self.embedders: dict[str, Any] = {}

    def where(self) -> dict[str, Any]:
        """This worker's process and Ray node (None outside Ray)."""
        try:
            import ray

            node = ray.get_runtime_context().get_node_id() if ray.is_initialized() else None
        except ImportError:
            node = None
        return {"pid": os.getpid(), "node": node}

    def read(self, files: list[tuple[str, str]], before: Before, max_bytes: int | None,
             max_text: tuple[float, float] | None) -> list[Read]:
        """Each (path, document id) of the batch read as the one-machine ingest reads it;
        `before` holds the previous index's hashes of these documents (no index)."""
        return [read_file(Path(path), doc_id, self.chunker, before, max_bytes, max_text) for path, doc_id in files]

    def analyse(self, texts: list[str]) -> list[list[str]]:
        return [self.analyzer(t) for t in texts]

    def embed(self, model: str, texts: list[str]) -> np.ndarray:
        """Unit-length float32 rows of `texts` by embedder `model` with this ingest's [neural]
        settings."""
        from glassrag.retrieve.neural import embedder_for

        if model not in self.embedders:
            self.embedders[model] = embedder_for(model, self.config)
        return self.embedders[model].embed_passages(texts)

    def write_shard(self, whole: str, i: int, shards: int, build: str, rows: np.ndarray, doc_ids: list[str],
                    out: str) -> float:
        """Shard `i` of the whole index in folder `whole`, written to folder `out`; the seconds
        it took."""
        from glassrag.shard.build import cut_shard
        from glassrag.store.embedded import EmbeddedStore

        t0 = time.perf_counter()
        EmbeddedStore(out).write(cut_shard(EmbeddedStore(whole).read(), i, shards, build, rows, doc_ids))
        return time.perf_counter() - t0
