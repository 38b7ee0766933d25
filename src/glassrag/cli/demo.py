"""`glassrag demo`: the README's first command. Builds the bundled handbook's index, trains
and calibrates on its train split, asks the showcase questions and evaluates the test split,
through the same functions the commands it prints call."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from glassrag.cli.ask import ask, print_answer
from glassrag.cli.common import out
from glassrag.cli.evaluate import evaluation, print_run, runs_folder, save_run
from glassrag.cli.ingest import ingest
from glassrag.cli.tune import calibrate_command, rerank_train_command


def add_parser(sub: Any) -> None:
    p = sub.add_parser("demo", help="build the bundled demo index and ask its example questions")
    p.add_argument("--index", default=".glassrag/demo", help="where to build the demo index "
                                                             "(default .glassrag/demo)")
    p.add_argument("--where", action="store_true",
                   help="print where the installed package keeps the demo's documents, golden set "
                        "and experiment log (for the README's commands), and build nothing")
    p.set_defaults(run=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    if args.where:
        return where()
    return demo(Path(args.index))


def where() -> int:
    """The bundled demo's paths, one `name<TAB>path` a line, so a pip user can put them in
    the README's commands (`--golden "$(glassrag demo --where | grep golden | cut -f2)"`)."""
    from glassrag.demo import DEMO, bundled_log, demo_docs, demo_golden

    rows = {"docs": demo_docs(), "golden": demo_golden(), "sources": DEMO / "sources", "log": bundled_log()}
    for name, path in rows.items():
        print(f"{name}\t{path}")
    return 0


def demo(index: Path) -> int:
    from glassrag.demo import demo_docs, demo_golden, demo_questions

    location, golden = str(index), demo_golden()
    out.rule("1. ingest the demo handbook")
    out.print(f"glassrag ingest {demo_docs()} --index {index} --prune")
    code = ingest(location, [demo_docs()], prune=True)
    if code != 0:
        return code
    out.rule("2. train the reranker, calibrate the gate and the reader (train split)")
    out.print(f"glassrag rerank-train --index {index} --golden {golden}")
    rerank_train_command(location, golden)
    out.print(f"\nglassrag calibrate --index {index} --golden {golden}\n")
    calibrate_command(location, golden)
    for question in demo_questions():
        out.rule("3. ask")
        out.print(f'glassrag ask "{question}" --index {index}\n')
        print_answer(ask(location, question))
    out.rule("4. evaluate every stage on the golden set (test split)")
    out.print(f"glassrag eval --index {index} --golden {golden} --split test\n")
    run = evaluation(location, golden, "test")
    print_run(run, brief=True)
    save_run(run, runs_folder(index) / "defaults-test.json")
    return 0
