"""`glassrag trec qrels` and `glassrag trec eval`: a golden set's labels as TREC qrels, and
glassrag's metrics over any TREC run file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from glassrag.cli.common import GOLDEN_HELP, INDEX_HELP, Table, err, out


def add_parser(sub: Any) -> None:
    p = sub.add_parser("trec", help="TREC run and qrels files")
    trec = p.add_subparsers(dest="trec_command", required=True, metavar="{qrels,eval}", help="what to do")
    t = trec.add_parser("qrels", help="export a golden set's labels as TREC qrels")
    t.add_argument("--index", "--store", dest="index", required=True, help=INDEX_HELP)
    t.add_argument("--golden", required=True, help=GOLDEN_HELP)
    t.add_argument("--split", default="test", choices=["train", "test", "all"],
                   help="which questions to export (default: test)")
    t.add_argument("--level", default=None, choices=["doc", "chunk"],
                   help="judge documents or chunks (default: the level eval --trec-run writes for this "
                        "index: doc when every document is one chunk, as in BEIR, else chunk)")
    t.add_argument("--out", required=True, help="the qrels file to write")
    t.set_defaults(run=cmd_trec_qrels)
    t = trec.add_parser("eval", help="evaluate any TREC run file with glassrag's metrics")
    t.add_argument("run_file", metavar="run", help="TREC run file")
    t.add_argument("qrels", help="TREC qrels file")
    t.add_argument("--metrics", nargs="+", default=["ndcg@10", "recall@100", "mrr@10", "hit@5"],
                   help="metrics to compute (default: ndcg@10 recall@100 mrr@10 hit@5)")
    t.set_defaults(run=cmd_trec_eval)


def trec_level(chunks: int, documents: int) -> str:
    """The level of TREC files for an index: documents when each is one chunk (BEIR), else
    chunks; eval --trec-run and trec qrels agree, so their files match by default."""
    return "doc" if chunks == documents else "chunk"


def cmd_trec_qrels(args: argparse.Namespace) -> int:
    from glassrag.evaluate.questions import load_questions
    from glassrag.evaluate.relevance import Judge
    from glassrag.evaluate.trec import write_qrels
    from glassrag.store import open_store

    index = open_store(args.index).read()
    questions = load_questions(Path(args.golden), args.split, index.documents)
    level = args.level or trec_level(len(index.chunks), len(index.documents))
    n = write_qrels(questions, Path(args.out), level, Judge(index.chunks))
    out.print(f"qrels ({level} level, {n} lines) written to {args.out}")
    return 0


def cmd_trec_eval(args: argparse.Namespace) -> int:
    from glassrag.evaluate.metrics import evaluate_run, mean_of
    from glassrag.evaluate.trec import read_qrels, read_run

    run, qrels = read_run(Path(args.run_file)), read_qrels(Path(args.qrels))
    judged = {d for docs in qrels.values() for d in docs}
    common = [q for q in run if q in qrels]
    if common and not any(d in judged for q in common for d in run[q]):
        err.print(f"[yellow]warning[/yellow]: no id ranked in {args.run_file} is judged in {args.qrels}, so "
                  "every metric is 0: were the two written at different levels (doc and chunk)? "
                  "Write the qrels with trec qrels --level matching the run", markup=True)
    elif not common:
        err.print(f"[yellow]warning[/yellow]: {args.run_file} and {args.qrels} have no query id in common")
    per_query = evaluate_run(run, qrels, args.metrics)
    table = Table(title=f"{args.run_file} against {args.qrels}")
    table.add_column("metric")
    table.add_column("mean", justify="right")
    table.add_column("queries", justify="right")
    for name, values in per_query.items():
        table.add_row(name, f"{mean_of(values):.4f}", str(len(values)))
    out.print(table)
    return 0
