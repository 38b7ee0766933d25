"""A sharded index: one index split by document into N shards, each an ordinary embedded index
folder, searched side by side by Ray actors (glassrag[ray]) and merged exactly on the driver.

    DIR/CURRENT, DIR/gen-*/     the catalogue: the whole index as an ordinary folder (its
                                tables and term counts hard-linked from the index it was cut
                                from), with a part `shards` naming the shards and the sharding's
                                id; what the stages after retrieval read (fusion, rerank, gate,
                                answer run on the driver, so traces and evaluation are unchanged)
    DIR/shards/NNN/             shard NNN: an ordinary index folder holding the documents whose
                                sha256(id) mod N is NNN, with all their chunks, in the catalogue's
                                order; its part `shard` holds the whole index's BM25 statistics
                                and each chunk's row in the catalogue

BM25 on a shard uses the whole index's statistics (N, avgdl and every term's n(t)), pushed to
every shard when it is written: its stored weights are the catalogue's weights of the same
counts, bit for bit (lexical/bm25.py `bm25_weights` computes each weight alone), and its scores
add the terms in the catalogue's order (`BM25.score_all` starts from the term of largest n(t)),
so a chunk scores the same float32 on its shard as in the whole index. Each shard's top k,
merged by (score descending, catalogue row ascending), is the whole index's top k exactly, ties
included. Statistics stay global when a shard changes because a shard is never changed alone:
`glassrag shard` cuts every shard again from the catalogue (re-ingest the source index, then
shard it again) under a new sharding id, and a shard whose id differs from its catalogue's
refuses to serve (ShardError). The alternative, tf-only postings with the IDF sent with each
question, would let n(t) change without rewriting shards, but every shard's avgdl still moves
with any shard's lengths, so the tf part would be recomputed per question; not built
(docs/scaling.md).

build.py cuts and writes the shards; serve.py holds the Ray actors and the exact merge;
glassrag/retrieve/shards.py is the retriever entry (`ray-bm25`) that fans a question out.
"""

from glassrag.shard.build import SHARDS_PART, SHARD_PART, ShardingReport, shard_index, shard_of

__all__ = ["SHARDS_PART", "SHARD_PART", "ShardingReport", "shard_index", "shard_of"]
