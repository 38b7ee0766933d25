"""A Ray cluster of several nodes on one machine (`ray.cluster_utils.Cluster`), for the tests,
the benchmark and trying a sharded index on a laptop: every node on 127.0.0.1, no dashboard,
Ray's files in a folder of its own, and the cluster shut down on leaving.

Each setting answers a pitfall met on this machine (issue 48): Ray rewrites 127.0.0.1 to the
machine's interface address unless RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 and the node address is
given; the raylet waits a fixed 15 s for the dashboard's agent, which a loaded machine misses;
`cluster_utils` writes into the shared system temporary folder unless RAY_TMPDIR is set.
"""

from __future__ import annotations

import os
import signal
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from glassrag.shard.serve import close_all, ray_module

NODE = {"node_ip_address": "127.0.0.1", "include_dashboard": False, "num_cpus": 1,
        "object_store_memory": 80 * 1024 * 1024}  # Ray's least: the shards send back short lists


@contextmanager
def local_cluster(nodes: int = 3, folder: Path | None = None, tries: int = 2) -> Iterator[Any]:
    """A connected `nodes`-node cluster of 1 CPU a node; yields the Cluster (its `address`).
    Ray's files go to a new folder in `folder` (the system's temporary folder when None), removed
    after: keep `folder` short, as Ray's socket paths below it may not pass 107 bytes.

    A node that misses Ray's fixed 30 s wait for its raylet (a loaded machine: "The current node
    timed out during startup") is tried again, the whole cluster at most `tries` times; what a
    failed try started, and whatever Ray left running after the cluster ends, is ended by its
    process id (the processes whose RAY_TMPDIR is this cluster's folder)."""
    ray = ray_module(loopback=True)
    from ray.cluster_utils import Cluster

    with tempfile.TemporaryDirectory(prefix="ray-", dir=folder) as tmp:
        saved = os.environ.get("RAY_TMPDIR")
        os.environ["RAY_TMPDIR"] = tmp
        cluster = None
        try:
            for attempt in range(1, tries + 1):
                cluster = Cluster()  # its first node is the head
                try:
                    for _ in range(nodes):
                        cluster.add_node(**NODE)
                    cluster.wait_for_nodes()
                    break
                except Exception:
                    cluster.shutdown()
                    cluster = None
                    end_leftovers(tmp)
                    if attempt == tries:
                        raise
            ray.init(address=cluster.address, _node_ip_address="127.0.0.1", logging_level="ERROR",
                     log_to_driver=False)
            yield cluster
        finally:
            close_all()
            ray.shutdown()
            if cluster is not None:
                cluster.shutdown()
            end_leftovers(tmp)
            if saved is None:
                os.environ.pop("RAY_TMPDIR", None)
            else:
                os.environ["RAY_TMPDIR"] = saved


def end_leftovers(tmp: str) -> list[int]:
    """Kill the processes Ray started with its files in `tmp` (read from Linux's /proc: their
    environment's RAY_TMPDIR; nothing elsewhere) and return their ids; this process is spared."""
    mark, ended = f"RAY_TMPDIR={tmp}".encode(), []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if int(entry.name) != os.getpid() and mark in (entry / "environ").read_bytes().split(b"\0"):
                os.kill(int(entry.name), signal.SIGKILL)
                ended.append(int(entry.name))
        except (OSError, ValueError):  # gone already, or not ours to read
            continue
    return ended
