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
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from glassrag.shard.serve import close_all, ray_module

NODE = {"node_ip_address": "127.0.0.1", "include_dashboard": False, "num_cpus": 1,
        "object_store_memory": 80 * 1024 * 1024}  # Ray's least: the shards send back short lists


@contextmanager
def local_cluster(nodes: int = 3, folder: Path | None = None) -> Iterator[Any]:
    """A connected `nodes`-node cluster of 1 CPU a node; yields the Cluster (its `address`).
    Ray's files go to a new folder in `folder` (the system's temporary folder when None), removed
    after: keep `folder` short, as Ray's socket paths below it may not pass 107 bytes."""
    ray = ray_module(loopback=True)
    from ray.cluster_utils import Cluster

    with tempfile.TemporaryDirectory(prefix="ray-", dir=folder) as tmp:
        saved = os.environ.get("RAY_TMPDIR")
        os.environ["RAY_TMPDIR"] = tmp
        cluster = Cluster(initialize_head=True, head_node_args=dict(NODE))
        try:
            for _ in range(nodes - 1):
                cluster.add_node(**NODE)
            cluster.wait_for_nodes()
            ray.init(address=cluster.address, _node_ip_address="127.0.0.1", logging_level="ERROR",
                     log_to_driver=False)
            yield cluster
        finally:
            close_all()
            ray.shutdown()
            cluster.shutdown()
            if saved is None:
                os.environ.pop("RAY_TMPDIR", None)
            else:
                os.environ["RAY_TMPDIR"] = saved
