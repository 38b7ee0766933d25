"""`glassrag corpus build` and `glassrag corpus list`: a prepared corpus (corpora/NAME with
docs/ and golden.jsonl, see glassrag/prepared.py) built as `glassrag demo` builds the demo,
through the same functions the commands it prints call: ingest, golden check against the
index, rerank-train, calibrate (train split), eval --save (test split)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from glassrag.cli.common import Table, Text, err, out
from glassrag.cli.evaluate import evaluation, fmt, golden_check, print_run, runs_folder, save_run
from glassrag.cli.ingest import ingest
from glassrag.cli.tune import calibrate_command, events_needed, rerank_train_command
from glassrag.prepared import INDEXES, RUN_NAME, find_corpus, headline, prepared_corpora


def add_parser(sub: Any) -> None:
    p = sub.add_parser("corpus", help="prepared corpora (corpora/NAME): list them, build one")
    corpus = p.add_subparsers(dest="corpus_command", required=True, metavar="build|list", help="what to do")
    b = corpus.add_parser("build", help="ingest, check the golden set, train, calibrate and evaluate a corpus")
    b.add_argument("corpus", metavar="NAME_OR_FOLDER", nargs="+",
                   help="a prepared corpus's name (a folder under ./corpora/) or any folder with docs/ "
                        "and golden.jsonl; several are built one after another")
    b.add_argument("--index", help=f"where to build its index (default {INDEXES}/NAME; one corpus only)")
    b.set_defaults(run=cmd_build)
    ls = corpus.add_parser("list", help="the prepared corpora under ./corpora/ and whether each is built")
    ls.set_defaults(run=cmd_list)


def cmd_build(args: argparse.Namespace) -> int:
    from glassrag.errors import ConfigError

    if args.index and len(args.corpus) > 1:
        raise ConfigError(f"--index names one folder for {len(args.corpus)} corpora",
                          "build them one at a time with --index, or without it each into its default folder")
    corpora = [find_corpus(name) for name in args.corpus]  # every name checked before the first build
    for corpus in corpora:
        code = build(corpus.docs, corpus.golden, Path(args.index) if args.index else corpus.default_index(),
                     corpus.title)
        if code != 0:
            return code
    return 0


def build(docs: Path, golden: Path, index: Path, title: str) -> int:
    """Builds the index of `docs` at `index`, checks `golden` against it, fits the reranker,
    gate and reader on its train split and saves the test split's run; the exit code. The
    golden set is named by its absolute path, which the reranker, the gate and the run store:
    a server started in another folder finds it (issue 49, item 6)."""
    golden = golden.resolve()
    location = str(index)
    out.rule(f"1. ingest {title}")
    out.print(f"glassrag ingest {docs} --index {index} --prune", markup=False)
    code = ingest(location, [docs], prune=True)
    if code != 0:
        return code
    out.rule("2. check the golden set against the index")
    out.print(f"glassrag golden check {golden} --index {index}", markup=False)
    golden_check(golden, location)  # a GoldenError names every bad line and stops here (exit 4)
    out.rule("3. train the reranker, calibrate the gate and the reader (train split)")
    out.print(f"glassrag rerank-train --index {index} --golden {golden}", markup=False)
    rerank_train_command(location, golden)
    out.print(f"\nglassrag calibrate --index {index} --golden {golden}\n", markup=False)
    calibrate_command(location, golden)
    out.rule("4. evaluate every stage on the golden set (test split)")
    out.print(f"glassrag eval --index {index} --golden {golden} --split test --save {RUN_NAME}\n", markup=False)
    run = evaluation(location, golden, "test")
    print_run(run, brief=True)
    save_run(run, runs_folder(index) / f"{RUN_NAME}.json")
    print_summary(run, index)
    return 0


def print_summary(run: Any, index: Path) -> None:
    """The corpus in a few figures with their intervals, and what its reranker is worth."""
    from glassrag.store import open_store

    model = open_store(str(index)).read().extra.get("reranker")
    table = Table(title=f"{index}: {run.index['documents']} documents, {run.index['chunks']} chunks, "
                        f"{run.golden['questions']} test questions ({run.golden['answerable']} answerable), "
                        "95% intervals", box=None)
    for col in ("figure", "value and interval", "n"):
        table.add_column(col)
    for label, m in headline(run):
        table.add_row(label, fmt(m), str(m["n"]))
    out.print(table)
    method = run.config.get("rerank", {}).get("method")
    used = "rerank" in run.stages
    out.print(f"rerank.method = {method}: the evaluated pipeline "
              + ("reranks with the learned reranker" if used else "does not rerank"), markup=False)
    if model is not None and model["positives"] < events_needed(model):
        err.print(Text.assemble(("note ", "yellow"), (
            f"the learned reranker saw {model['positives']} relevant candidates, fewer than the "
            f"{events_needed(model)} its {len(model['features'])} features need: its weights are mostly noise"
            + (", and this pipeline uses them" if used else ""))))


def cmd_list(args: argparse.Namespace) -> int:
    from glassrag.evaluate.golden import load_golden

    corpora = prepared_corpora()
    if not corpora:
        out.print("no prepared corpus under ./corpora/ (a folder with docs/ and golden.jsonl); "
                  "run glassrag from the checkout's top folder", markup=False)
        return 0
    table = Table(title="prepared corpora (glassrag corpus build NAME)", box=None)
    for col in ("name", "files", "questions", "index", "title"):
        table.add_column(col)
    for name, c in corpora.items():
        files = sum(p.is_file() for p in c.docs.rglob("*"))
        run = runs_folder(c.default_index()) / f"{RUN_NAME}.json"
        state = str(c.default_index()) if run.is_file() else "not built"
        table.add_row(name, str(files), str(len(load_golden(c.golden))), state, c.title)
    out.print(table)
    return 0
