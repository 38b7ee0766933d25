"""The glassrag command line: one module per group of commands, each adding its own
sub-commands to the parser. The only place that turns errors into messages and exit codes.

    ingest     ingest.py      read documents into an index
    ask        ask.py         answer a question, showing the route
    golden, eval, compare     evaluate.py
    trec       trec.py        TREC qrels and runs
    experiment experiment.py  the experiment log
    rerank-train, calibrate   tune.py
    train-cross-encoder       train.py       the cross-encoder the gate and reranker read
    serve      serve.py       the local web app
    config     settings.py    every setting and where its value came from
    sweep      sweep.py       a grid of settings
    demo       demo.py        the README's first command
    corpus     corpus.py      prepared corpora (corpora/NAME): build one as demo builds the demo
    shard      shard.py       split an index into shards searched on a Ray cluster (--ray)
"""

from __future__ import annotations

import os
import sys


def drop_current_folder(path: list[str], running_as_module: bool) -> list[str]:
    """`sys.path` without the current folder: '' always (an empty PYTHONPATH entry), and the
    folder Python puts first for `python -m glassrag.cli` (the current folder, where a planted
    `rich.py` would otherwise be imported instead of the library, issue 28.1)."""
    here = os.path.realpath(os.getcwd())
    kept = [p for p in path if p != ""]
    if running_as_module and kept and os.path.realpath(kept[0]) == here:
        kept = kept[1:]
    return kept


# before any other import: `python -m glassrag.cli` imports this package while sys.argv[0] is "-m"
sys.path[:] = drop_current_folder(sys.path, sys.argv[:1] == ["-m"] or sys.orig_argv[1:3] == ["-m", "glassrag.cli"])

import argparse  # noqa: E402
from typing import Callable, Sequence  # noqa: E402

from glassrag import __version__, threads  # noqa: E402
from glassrag.cli import ask, corpus, demo, documents, evaluate, experiment, ingest, serve, settings, shard, sweep, train, trec, tune  # noqa: E402,E501
from glassrag.cli.common import Text, err, redact  # noqa: E402
from glassrag.errors import DiskError, GlassragError, visible_lines  # noqa: E402

# in the order `glassrag --help` lists their commands
GROUPS = (ingest, documents, ask, evaluate, trec, experiment, tune, train, serve, settings, sweep, demo, corpus, shard)

DESCRIPTION = ("Transparent retrieval over your documents: ingest them into an index, ask questions "
               "and see every stage's route to the answer, evaluate each stage on a golden set, "
               "compare runs, and browse it all in a local web app.")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="glassrag", description=DESCRIPTION, epilog="glassrag COMMAND --help describes a command; "
        "glassrag config lists every setting.")
    parser.add_argument("--version", action="version", version=f"glassrag {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", help="one of:")
    for group in GROUPS:
        group.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    threads.before_numpy()
    args = build_parser().parse_args(argv)
    command: Callable[[argparse.Namespace], int] = args.run
    try:
        return command(args)
    except GlassragError as e:
        # names of files and values are shown, not obeyed; no password of a URL is ever printed
        err.print(Text.assemble(("error: ", "red"), visible_lines(redact(e.problem))))
        if e.hint:
            err.print(f"  → {visible_lines(redact(e.hint))}", markup=False)
        return e.exit_code
    except BrokenPipeError:  # what reads the output stopped (`| head`): quietly, exit 1, as rich's console did
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python's own flush at exit would fail again
        return 1
    except OSError as e:  # a write the library did not name: a full or read-only disk still gets a message
        disk = DiskError.of(e.filename or "a file", e, "the index is as it was before")
        if disk is None:
            raise
        err.print(Text.assemble(("error: ", "red"), disk.problem))
        err.print(f"  → {disk.hint}", markup=False)
        return disk.exit_code
    except Exception as e:  # noqa: BLE001 - only psycopg's, re-raised otherwise
        psycopg = sys.modules.get("psycopg")
        if psycopg is None or not isinstance(e, psycopg.Error):
            raise
        from glassrag.store.pgschema import lost, parse_location

        url = str(getattr(args, "index", None) or "postgresql://")
        stored = lost(parse_location(url if url.startswith("postgres") else "postgresql://"), e,
                      "reading or writing")
        err.print(Text.assemble(("error: ", "red"), stored.problem))
        err.print(f"  → {stored.hint}", markup=False)
        return stored.exit_code
    except KeyboardInterrupt:
        err.print("interrupted")
        return 130
