"""`glassrag shard`: cut an index into shards by document for search on a Ray cluster
(glassrag/shard/), and the `--ray` flag of the commands that search one (ask, eval, serve)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from glassrag.cli.common import err, out

RAY_HELP = ("the Ray cluster (HOST:PORT) that searches a sharded index (glassrag shard); without it, "
            "$GLASSRAG_RAY, else a one-machine cluster started for this command (pip install 'glassrag[ray]')")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("shard", help="split an index into shards searched on a Ray cluster")
    p.add_argument("--index", required=True, help="the index folder to split (glassrag ingest made it)")
    p.add_argument("--shards", type=int, required=True, help="how many shards (documents go to shards by a hash "
                                                              "of their id, each with all its chunks)")
    p.add_argument("--out", required=True, type=Path,
                   help="the sharded index folder: ask, eval and serve take it as --index")
    p.set_defaults(run=cmd_shard)


def ray_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ray", metavar="ADDRESS", help=RAY_HELP)


def use_ray(args: argparse.Namespace) -> None:
    """Where --ray was given, the cluster a sharded index is searched on (read when the first
    question reaches its shards; an index that is not sharded never starts Ray)."""
    address = getattr(args, "ray", None)
    if address:
        from glassrag.shard.serve import ADDRESS_VARIABLE

        os.environ[ADDRESS_VARIABLE] = address


def serve_processes(indexes: list[Any], processes: int) -> int:
    """The server processes for `glassrag serve`: one where a sharded index is served without a
    cluster's address (--ray or $GLASSRAG_RAY), since each forked worker would start a
    one-machine Ray cluster of its own; `processes` otherwise (with an address each worker joins
    the cluster and starts its own actor per shard)."""
    from glassrag.shard.build import SHARDS_FOLDER
    from glassrag.shard.serve import ADDRESS_VARIABLE

    sharded = [str(i) for i in indexes if isinstance(i, Path) and (i / SHARDS_FOLDER).is_dir()]
    if processes > 1 and sharded and not os.environ.get(ADDRESS_VARIABLE):
        err.print(f"{', '.join(sharded)} is sharded and no --ray address was given: serving from one process "
                  "(on a one-machine Ray cluster started for it); start a cluster and give --ray HOST:PORT "
                  "for --workers N", markup=False)
        return 1
    return processes


def cmd_shard(args: argparse.Namespace) -> int:
    from glassrag.shard import shard_index
    from glassrag.store import EmbeddedStore

    report = shard_index(EmbeddedStore(args.index).read(), args.shards, args.out)
    for folder, docs, chunks, seconds in zip(report.folders, report.documents, report.chunks, report.seconds):
        out.print(f"{args.out / folder}: {docs:,} documents, {chunks:,} chunks ({seconds:.2f} s)", markup=False)
    out.print(f"sharding {report.build}: ask with glassrag ask QUESTION --index {args.out} "
              "[--ray HOST:PORT]", markup=False)
    return 0
