"""`glassrag serve`: the local web app over one or more indexes."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from glassrag.cli.shard import ray_flag, serve_processes, use_ray


def add_parser(sub: Any) -> None:
    p = sub.add_parser("serve", help="the local web app: ask, analytics, documents, the lab, glossary")
    p.add_argument("--index", "--store", dest="index", action="append", required=True,
                   help="index folder or postgresql:// URL (repeatable)")
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8765, help="port to listen on (default 8765)")
    p.add_argument("--log", type=Path, help="the experiment log the development page shows "
                                            "(default: ./experiments when there is one, else the log "
                                            "bundled with glassrag)")
    p.add_argument("--generator", metavar="BACKEND",
                   help="the generator the ask page's 'Write an answer' button uses: smollm2 or an "
                        "OpenAI-compatible endpoint's base URL (default: [generate] backend's default; "
                        "a backend an index names is never called)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="server processes, so pages are built on N cores; each holds its own copy of "
                        "the models it loads (default on Linux: one per core, at most 2, as measured in "
                        "bench/results/load_workers.md; elsewhere 1)")
    p.add_argument("--build", action="append", default=[], metavar="CORPUS",
                   help="a prepared corpus (a name under ./corpora/, or a folder with docs/ and golden.jsonl) "
                        "to build with glassrag corpus build while the server serves the other indexes, "
                        "and to serve once built (repeatable: built one after another; make demo does this)")
    ray_flag(p)
    p.set_defaults(run=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from glassrag.web.server import PROCESSES, serve
    except ImportError as e:
        from glassrag.errors import ConfigError

        raise ConfigError(f"the web app needs its extra ({e.name} is missing)",
                          "pip install 'glassrag[web]'") from None
    from glassrag.demo import default_log
    from glassrag.store import is_postgres

    use_ray(args)
    log = args.log if args.log is not None else default_log()
    indexes = [i if is_postgres(i) else Path(i) for i in args.index]
    processes = serve_processes(indexes, PROCESSES if args.workers is None else args.workers)
    return serve(indexes, host=args.host, port=args.port, log=log, generator=args.generator, processes=processes,
                 build=args.build)
