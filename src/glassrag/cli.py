"""The glassrag command line. The only place that turns errors into messages and exit codes."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from glassrag import __version__
from glassrag.config import Config, load_config
from glassrag.errors import GlassragError
from glassrag.schema import Answer

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_SOME_FILES_FAILED = 5


# ingest ----------------------------------------------------------------------------------

def cmd_ingest(args: argparse.Namespace) -> int:
    from glassrag.indexer import build_index
    from glassrag.store import EmbeddedStore

    store = EmbeddedStore(args.index)
    previous = store.read() if store.exists() else None
    base = load_config(args.config) if args.config else (previous.config if previous else Config())
    config = base.with_overrides(chunk={"chunker": args.chunker, "size": args.size,
                                        "overlap": args.overlap, "unit": args.unit})
    with Progress(TextColumn("{task.description:<8}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, transient=True,
                  disable=not err.is_terminal) as bar:
        task = bar.add_task("reading", total=None)

        def progress(step: str, done: int, total: int) -> None:
            bar.update(task, description=step, completed=done, total=total or None)

        index, report = build_index([Path(p) for p in args.paths], config, previous,
                                    prune=args.prune, max_bytes=int(args.max_mb * 1024 * 1024),
                                    progress=progress)
    for problem in report.failed:
        err.print(Text.assemble(("failed  ", "red"), str(problem)))
    for path, reason in report.skipped:
        err.print(Text.assemble(("skipped ", "yellow"), f"{path}: {reason}"))
    for warning in report.warnings:
        err.print(Text.assemble(("warning ", "yellow"), warning))
    if not index.chunks:
        err.print("[red]nothing to index[/red]: no document gave any text; no index was written")
        return EXIT_SOME_FILES_FAILED if report.failed else 1
    store.write(index)
    n_sections = sum(len(d.sections) for d in index.documents.values())
    table = Table(title=f"index {args.index}", show_header=False, box=None)
    for label, value in [
        ("documents", len(index.documents)), ("sections", n_sections), ("chunks", len(index.chunks)),
        ("terms", len(index.counts.vocab)),
        ("chunker", f"{config.chunk.chunker} size={config.chunk.size} overlap={config.chunk.overlap} "
                    f"unit={config.chunk.unit}"),
        ("added", len(report.added)), ("changed", len(report.changed)),
        ("unchanged", len(report.unchanged)), ("removed", len(report.removed)),
        ("failed", len(report.failed)), ("skipped", len(report.skipped)),
        ("warnings", len(report.warnings)),
    ]:
        table.add_row(label, str(value))
    out.print(table)
    return EXIT_SOME_FILES_FAILED if report.failed else 0


# ask ---------------------------------------------------------------------------------------

def cmd_ask(args: argparse.Namespace) -> int:
    from glassrag.pipeline import Pipeline
    from glassrag.store import EmbeddedStore

    index = EmbeddedStore(args.index).read()
    config = load_config(args.config) if args.config else index.config
    if args.k:
        config = config.with_overrides(answer={"k": args.k})
    answer = Pipeline(index, config).run(args.question)
    if args.json:
        print(json.dumps(answer.to_dict(), ensure_ascii=False, indent=2))
    else:
        print_answer(answer)
    return 0


def print_answer(answer: Answer) -> None:
    out.print(f"[bold]Q:[/bold] {answer.question}\n")
    if answer.passage is None:
        out.print(f"[yellow]No answer:[/yellow] {answer.reason}")
    else:
        p = answer.passage
        out.print(f"[bold]{p.citation}[/bold]   score {p.score:.4f}")
        out.print(p.text, markup=False)
        if answer.also_found:
            out.print("\n[bold]Also found[/bold]")
            for a in answer.also_found:
                first = " ".join(a.text.split())[:110]
                out.print(f"  {a.rank}. {a.citation}  ({a.score:.4f})  {first}…", markup=False)
    out.print("\n[bold]Route[/bold]")
    table = Table(box=None)
    for col in ("stage", "in", "out", "top hits (chunk id: score)", "ms"):
        table.add_column(col)
    for t in answer.trace:
        top = ", ".join(f"{h.chunk_id[:8]}:{h.score:.3g}" for h in t.hits[:3])
        if t.notes:
            top = (top + "  " if top else "") + "; ".join(t.notes)
        table.add_row(t.name, str(t.n_in), str(len(t.hits)), top, f"{t.ms:.1f}")
    out.print(table)


# config ------------------------------------------------------------------------------------

def cmd_config(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    table = Table(title="settings", show_lines=False)
    for col in ("setting", "value", "what it does", "why this default"):
        table.add_column(col, overflow="fold")
    for name, value, doc, source in config.describe():
        table.add_row(name, json.dumps(value), doc, source)
    out.print(table)
    return 0


# golden ------------------------------------------------------------------------------------

def cmd_golden_check(args: argparse.Namespace) -> int:
    from glassrag.errors import GoldenError
    from glassrag.evaluate.golden import KINDS, check_against, load_golden
    from glassrag.store import EmbeddedStore

    questions = load_golden(Path(args.file))
    if args.index:
        problems = check_against(questions, EmbeddedStore(args.index).read().documents)
        if problems:
            raise GoldenError(str(args.file), problems)
    table = Table(title=f"{args.file}: {len(questions)} questions, all valid", box=None)
    table.add_column("kind")
    for split in ("train", "test"):
        table.add_column(split, justify="right")
    for kind in (*KINDS, ""):
        counts = [sum(q.kind == kind and q.split == sp for q in questions) for sp in ("train", "test")]
        if any(counts):
            table.add_row(kind or "(no kind)", *map(str, counts))
    table.add_row("all", *(str(sum(q.split == sp for q in questions)) for sp in ("train", "test")))
    out.print(table)
    return 0


# demo --------------------------------------------------------------------------------------

def cmd_demo(args: argparse.Namespace) -> int:
    from glassrag.demo import demo_docs, demo_questions

    index_dir = Path(args.index)
    out.rule("glassrag demo: ingest")
    code = cmd_ingest(argparse.Namespace(paths=[str(demo_docs())], index=str(index_dir),
                                         config=None, chunker=None, size=None, overlap=None,
                                         unit=None, prune=True, max_mb=100.0))
    if code not in (0,):
        return code
    for question in demo_questions():
        out.rule("glassrag demo: ask")
        cmd_ask(argparse.Namespace(index=str(index_dir), question=question, config=None, k=None,
                                   json=False))
    return 0


# main --------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="glassrag", description=__doc__)
    parser.add_argument("--version", action="version", version=f"glassrag {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ingest", help="read documents into an index (adds and updates)")
    p.add_argument("paths", nargs="+", help="files or folders")
    p.add_argument("--index", required=True, help="index folder (created if missing)")
    p.add_argument("--config", type=Path, help="TOML settings file")
    p.add_argument("--chunker", help="fixed, sentence, heading, recursive")
    p.add_argument("--size", type=int, help="largest chunk, in units")
    p.add_argument("--overlap", type=int, help="units shared by neighbouring chunks")
    p.add_argument("--unit", help="words, tokens, chars")
    p.add_argument("--prune", action="store_true",
                   help="drop indexed documents under PATHS whose files are gone")
    p.add_argument("--max-mb", type=float, default=100.0, help="refuse files larger than this")
    p.set_defaults(run=cmd_ingest)

    p = sub.add_parser("ask", help="answer a question from an index, showing the route")
    p.add_argument("question")
    p.add_argument("--index", required=True)
    p.add_argument("--config", type=Path)
    p.add_argument("--k", type=int, help="passages to return")
    p.add_argument("--json", action="store_true", help="print the Answer with its trace as JSON")
    p.set_defaults(run=cmd_ask)

    p = sub.add_parser("golden", help="golden sets: labelled questions")
    golden = p.add_subparsers(dest="golden_command", required=True)
    g = golden.add_parser("check", help="validate every line (against an index, with --index)")
    g.add_argument("file", type=Path)
    g.add_argument("--index", help="also check documents, locators and verbatim spans")
    g.set_defaults(run=cmd_golden_check)

    p = sub.add_parser("config", help="list every setting with its doc and the source of its default")
    p.add_argument("--config", type=Path)
    p.set_defaults(run=cmd_config)

    p = sub.add_parser("demo", help="build the bundled demo index and ask its example questions")
    p.add_argument("--index", default=".glassrag/demo")
    p.set_defaults(run=cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except GlassragError as e:
        err.print(Text.assemble(("error: ", "red"), e.problem))
        if e.hint:
            err.print(f"  → {e.hint}", markup=False)
        return e.exit_code
    except KeyboardInterrupt:
        err.print("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
