"""Serving a sharded index on Ray: one actor per shard holds the shard open, a question goes to
every actor at once, and the driver merges their top lists exactly.

    merged top k = the k best of ⋃ shard top k, ordered by (score descending, catalogue row
                   ascending)

which is the whole index's top k (`top_k`: ties to the lower row) because a chunk scores the same
float32 on its shard as in the whole index and every chunk of the whole top k is in its shard's
top k (glassrag/shard/__init__.py). Ray is imported only here, when a sharded index is searched.

Dense search merges the same way: each shard's exact top k by cosine(q, d) = q·d / (|q| |d|)
over its rows of the embedder's vectors (ExactCosine, as the single index), with the range of
its cosines (weighted fusion normalises by the corpus-wide range: the min of the shards' lows and
the max of their highs). A cosine is the chunk's own, so no statistics are shared; but BLAS adds
a row's products in an order that depends on where the row sits in the matrix (OpenBLAS's sgemv
takes rows four at a time and the last ones apart), so a shard's cosine may differ from the whole
index's in its last bit (≤ 1.2e-7): the lists are equal where no two cosines lie that close.

A shard's actor that dies, or fails, gives ShardError naming the shard: a ranking is never made
from fewer than every shard's list. The pool is then forgotten, so the next question starts new
actors (a restarted node serves again). Ray's own settings for a cluster started here (`connect`
with no address): node address 127.0.0.1, no dashboard, nothing listening beyond loopback.
"""

from __future__ import annotations

import atexit
import os
import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from glassrag.dense.exact import ExactCosine
from glassrag.errors import GlassragError, ShardError
from glassrag.lexical.bm25 import BM25, CorpusStats, top_k
from glassrag.store.embedded import EmbeddedStore

INSTALL = "pip install 'glassrag[ray]'"
ADDRESS_VARIABLE = "GLASSRAG_RAY"  # the cluster a sharded index is searched on (`--ray` sets it)


# what needs Ray, and what to do without it (the error when Ray is absent says both)
SHARDED = ("searching a sharded index", "search the index it was cut from")

LOOPBACK_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # "0": Ray keeps 127.0.0.1 instead of the interface's address


def ray_module(loopback: bool = False, needs: tuple[str, str] = SHARDED) -> Any:
    """The `ray` package, or ShardError saying what `needs` it and how to install it. `loopback`: for a cluster
    started on this machine, Ray told to keep every address on 127.0.0.1 (its processes read the
    variable when they start; this process's Ray read it on import, so its flag is set too)."""
    if loopback:
        os.environ[LOOPBACK_ONLY] = "0"
    try:
        import ray

        ray.init  # noqa: B018  (a folder named ray on the path is not Ray)
    except (ImportError, AttributeError):
        raise ShardError(f"{needs[0]} needs Ray, which is not installed", f"{INSTALL} (or {needs[1]})") from None
    if loopback:
        from ray._private import ray_constants

        ray_constants.ENABLE_RAY_CLUSTER = False
    return ray


def connect(address: str | None = None, needs: tuple[str, str] = SHARDED) -> Any:
    """Ray, connected to the cluster at `address` (else GLASSRAG_RAY; else a one-machine cluster
    started here, on loopback, without the dashboard); nothing is done when already connected.
    `needs`: what asks for Ray and what to do without it, for the error when Ray is absent."""
    address = address or os.environ.get(ADDRESS_VARIABLE) or None
    ray = ray_module(loopback=not address or _on_loopback(address), needs=needs)
    if ray.is_initialized():
        return ray
    try:
        if address:
            _reachable(address)
            ray.init(address=address, include_dashboard=False, logging_level="ERROR",
                     log_to_driver=False)
        else:
            ray.init(include_dashboard=False, _node_ip_address="127.0.0.1", logging_level="ERROR",
                     log_to_driver=False)
            # the cluster started here ends with this process, before Python joins its threads:
            # left to Ray's own exit hook (or to atexit's, which run after that), its dashboard
            # and runtime-env agents outlived a `glassrag ask` (Ray 2.60)
            getattr(threading, "_register_atexit", atexit.register)(ray.shutdown)
    except ShardError:
        raise
    except Exception as err:  # Ray raises ConnectionError, RuntimeError or its own, by version
        where = f"the Ray cluster at {address}" if address else "a local Ray cluster"
        raise ShardError(f"cannot reach {where}: {type(err).__name__}: {err}",
                         "start it (ray start --head --node-ip-address 127.0.0.1) or give its address "
                         "with --ray HOST:PORT; " + ("without --ray a one-machine cluster is started" if needs == SHARDED
                                                     else needs[1])) from None
    return ray


def _host_port(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ShardError(f"--ray {address!r} is not HOST:PORT", "give the head node's address, e.g. 10.0.0.1:6379")
    return host.strip("[]"), int(port)


def _on_loopback(address: str) -> bool:
    """Whether the cluster at `address` is on this machine's loopback (Ray must then keep
    127.0.0.1 rather than rewrite it to the interface's address, which it does not listen on)."""
    host = _host_port(address)[0]
    return host == "localhost" or host.startswith("127.") or host == "::1"


def _reachable(address: str, seconds: float = 5.0) -> None:
    """ShardError unless something accepts a connection at `address` within `seconds`: Ray itself
    retries an unreachable head for minutes, printing a warning every 5 s."""
    import socket

    host, port = _host_port(address)
    try:
        socket.create_connection((host, port), timeout=seconds).close()
    except OSError as err:
        raise ShardError(f"cannot reach the Ray cluster at {address}: {err.strerror or err}",
                         "start it (ray start --head --port PORT), or check --ray / $GLASSRAG_RAY; "
                         "without either a one-machine cluster is started") from None


class ShardServer:
    """One shard, open: what each shard's Ray actor runs (a plain class, so it is tested without
    Ray too). `build`: the sharding id the catalogue names; a shard written by another sharding
    does not serve (its statistics may not be the catalogue's)."""

    def __init__(self, folder: str, build: str) -> None:
        self.folder, self.problem = folder, None
        try:
            index = EmbeddedStore(folder).read()
            part = index.parts.get("shard")
            if part is None or part.params.get("build") != build:
                found = part.params.get("build") if part is not None else None
                raise ShardError(f"{folder} was written by sharding {found or '(none)'}, its catalogue names "
                                 f"sharding {build}", "shard the index again (glassrag shard)")
        except GlassragError as err:
            self.problem = (err.problem, err.hint)
            return
        self.index, self.rows = index, np.asarray(part.arrays["rows"])
        self.stats = CorpusStats(int(part.params["n_docs"]), float(part.params["avgdl"]), part.arrays["doc_freq"])
        self.scorers: dict[tuple[float, float], BM25] = {}
        self.cosines: dict[str, ExactCosine] = {}

    def scorer(self, k1: float, b: float) -> BM25:
        """BM25 at k1 and b over the whole index's statistics (the stored weights when they were
        written for these)."""
        if (k1, b) not in self.scorers:
            self.scorers[(k1, b)] = BM25(self.index.counts, k1, b, self.index.bm25_weights(k1, b), self.stats)
        return self.scorers[(k1, b)]

    def where(self) -> dict[str, Any]:
        """Who serves this shard: process, Ray node (None outside Ray), chunks, and the problem
        that stops it, if any."""
        try:
            import ray

            node = ray.get_runtime_context().get_node_id() if ray.is_initialized() else None
        except ImportError:
            node = None
        return {"pid": os.getpid(), "node": node, "folder": self.folder, "problem": self.problem,
                "chunks": 0 if self.problem else int(self.rows.size)}

    def search(self, tokens: Sequence[str], k: int, k1: float, b: float) -> tuple[np.ndarray, np.ndarray]:
        """The shard's top k as (catalogue rows, scores), best first."""
        if self.problem:
            raise ShardError(*self.problem)
        idx, scores = top_k(self.scorer(k1, b).score_all(list(tokens)), k)
        return self.rows[idx], scores

    def dense(self, embedder: str, vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, float, float]:
        """The shard's top k by cosine with `vector` among its rows of `embedder`'s vectors, as
        (catalogue rows, cosines, lowest cosine, highest cosine); a zero vector (no known word)
        compares with nothing, as in the single index."""
        if self.problem:
            raise ShardError(*self.problem)
        if embedder not in self.index.embeddings:
            raise ShardError(f"{self.folder} holds no vectors of embedder {embedder!r} "
                             f"(it has: {', '.join(self.index.embeddings) or 'none'})",
                             "shard the index again (glassrag shard) from an index built with that embedder")
        if embedder not in self.cosines:
            self.cosines[embedder] = ExactCosine(self.index.embeddings[embedder].vectors)
        from glassrag.dense.neural import one_blas_thread

        search = self.cosines[embedder]
        with one_blas_thread():  # as the single index's retriever computes them
            sims = search.similarities(np.asarray(vector, dtype=np.float32))
        low, high = (float(sims.min()), float(sims.max())) if sims.size else (float("inf"), float("-inf"))
        idx, scores, _ = search.top(sims if np.asarray(vector).any() else sims[:0], k)
        return self.rows[idx], scores, low, high


def merge_tops(tops: Sequence[tuple[np.ndarray, np.ndarray]], k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best of every shard's (rows, scores), by score descending then row ascending."""
    if not tops:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
    rows = np.concatenate([np.asarray(r, dtype=np.int64) for r, _ in tops])
    scores = np.concatenate([np.asarray(s, dtype=np.float32) for _, s in tops])
    order = np.lexsort((rows, -scores))[:k]
    return rows[order], scores[order]


class ShardPool:
    """The actors serving one sharded folder, one per shard, dealt round the cluster's nodes."""

    def __init__(self, folder: Path, params: dict[str, Any]) -> None:
        ray = self.ray = connect()
        self.folder, self.folders = Path(folder), [str(Path(folder) / f) for f in params["folders"]]
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        nodes = sorted(n["NodeID"] for n in ray.nodes() if n.get("Alive"))
        remote = ray.remote(num_cpus=0, max_restarts=0)(ShardServer)
        # shard i on the i-th live node, mod their number (the nodes are listed anew when a pool
        # is started again after a failure); SPREAD, and soft affinity, put two of three shards on
        # one node of three on this loaded machine
        self.actors = [remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(
            nodes[i % len(nodes)], soft=False)).remote(f, params["build"]) for i, f in enumerate(self.folders)]
        for i, info in enumerate(self._gather([a.where.remote() for a in self.actors], "start")):
            if info["problem"]:
                raise ShardError(*info["problem"], shard=i)

    def search(self, tokens: Sequence[str], k: int, k1: float, b: float) -> tuple[np.ndarray, np.ndarray]:
        """Every shard's top k for the question, merged (ShardError when any shard fails)."""
        refs = [a.search.remote(list(tokens), k, k1, b) for a in self.actors]
        return merge_tops(self._gather(refs, "search"), k)

    def dense(self, embedder: str, vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, float, float]:
        """Every shard's top k by cosine, merged, and the corpus-wide (lowest, highest) cosine."""
        ref = self.ray.put(np.asarray(vector, dtype=np.float32))  # sent once, read by every shard
        tops = self._gather([a.dense.remote(embedder, ref, k) for a in self.actors], "search")
        rows, scores = merge_tops([(r, s) for r, s, _, _ in tops], k)
        low, high = min(t[2] for t in tops), max(t[3] for t in tops)
        return (rows, scores, low, high) if low <= high else (rows, scores, 0.0, 0.0)  # no chunk at all

    def where(self) -> list[dict[str, Any]]:
        return self._gather([a.where.remote() for a in self.actors], "ask")

    def _gather(self, refs: list[Any], what: str) -> list[Any]:
        out = []
        for i, ref in enumerate(refs):
            try:
                out.append(self.ray.get(ref))
            except self.ray.exceptions.RayError as err:  # the other shards' lists are dropped
                cause = getattr(err, "cause", None)
                if isinstance(cause, ShardError):
                    raise ShardError(cause.problem, cause.hint, shard=i) from None
                raise ShardError(f"shard {i} ({self.folders[i]}) could not {what}: {type(err).__name__}: "
                                 f"{str(err).splitlines()[0] if str(err) else ''}",
                                 "ask again: a new actor is started for every shard (no ranking was made "
                                 "from the other shards alone)", shard=i) from None
        return out


_POOLS: dict[tuple[str, str], ShardPool] = {}
_LOCK = threading.Lock()


def pool(folder: Path, params: dict[str, Any]) -> ShardPool:
    """The pool serving `folder`'s sharding `params["build"]`, started on first use."""
    key = (str(Path(folder).resolve()), str(params["build"]))
    with _LOCK:
        if key not in _POOLS:
            _POOLS[key] = ShardPool(Path(folder), params)
        return _POOLS[key]


def forget(folder: Path, params: dict[str, Any]) -> None:
    """Drop the pool of `folder` (after a shard failed: the next question starts new actors)."""
    with _LOCK:
        found = _POOLS.pop((str(Path(folder).resolve()), str(params["build"])), None)
    if found is not None:
        for actor in found.actors:
            try:
                found.ray.kill(actor)
            except Exception:  # already dead: what we wanted
                pass


def close_all() -> None:
    """Drop every pool (their actors end with them)."""
    with _LOCK:
        pools = list(_POOLS.items())
        _POOLS.clear()
    for _, p in pools:
        for actor in p.actors:
            try:
                p.ray.kill(actor)
            except Exception:
                pass
