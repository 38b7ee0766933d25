"""`glassrag ingest`: read documents into an index, then say what was added, changed,
skipped and failed."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from glassrag.cli.common import LazyHelp, Table, Text, err, finite_number, out, progress, redact, setting_help
from glassrag.config import SETTINGS, Config, layered
from glassrag.errors import visible, visible_lines

EXIT_SOME_FILES_FAILED = 5
CHUNK_FLAGS = ("chunker", "size", "overlap", "unit")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("ingest", help="read documents into an index (adds and updates)")
    p.add_argument("paths", nargs="+", help="files or folders")
    p.add_argument("--index", "--store", dest="index", required=True,
                   help="index folder (created if missing), or an index in PostgreSQL with pgvector: "
                        "postgresql://USER@HOST/DB?schema=NAME (the schema is created if missing)")
    p.add_argument("--config", type=Path, help="a TOML settings file; it overrides only the settings it "
                                               "names, over those the index was built with")
    for key in CHUNK_FLAGS:
        s = SETTINGS[f"chunk.{key}"]
        p.add_argument(f"--{key}", type=s.argtype(f"--{key}"), help=setting_help(s))
    p.add_argument("--prune", action="store_true",
                   help="drop indexed documents under PATHS whose files are gone")
    p.add_argument("--max-mb", type=finite_number(0, False), default=100.0,
                   help="refuse files larger than this many MB (1024 × 1024 bytes)")
    # the defaults live in glassrag.ingest, which imports every format's reader: read when shown or used
    p.add_argument("--max-text-mb", type=finite_number(0, False), default=None, help=LazyHelp(
        lambda: f"refuse files whose extracted text passes this many MB (default {limits()[0]:g})"))
    p.add_argument("--max-text-ratio", type=finite_number(0, False), default=None, help=LazyHelp(
        lambda: "refuse files whose text passes this many times their size, above 1 MB of text "
                f"(default {limits()[1]:g}: real documents gave up to 2.3, a DOCX bomb 125)"))
    p.add_argument("--wait", type=finite_number(0, True), default=60.0, metavar="SECONDS",
                   help="how long to wait while another glassrag writes this index (default 60)")
    p.add_argument("--embedder", help="also embed with a neural model: minilm (bundled "
                                      "all-MiniLM-L6-v2), an installed model package or a local folder")
    p.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="read, chunk, analyse and embed on a Ray cluster (HOST:PORT; without it $GLASSRAG_RAY, "
                        "else a one-machine cluster started for this command; pip install 'glassrag[ray]')")
    p.add_argument("--shards", type=int, metavar="N",
                   help="write the index as N shards searched on Ray (ingest runs on the cluster; an index "
                        "already sharded keeps its number of shards unless this is given)")
    p.set_defaults(run=cmd_ingest)


def cmd_ingest(args: argparse.Namespace) -> int:
    return ingest(args.index, args.paths, config_file=args.config,
                  chunk={key: getattr(args, key) for key in CHUNK_FLAGS}, prune=args.prune,
                  max_mb=args.max_mb, embedder=args.embedder, wait=args.wait, ray=args.ray, shards=args.shards,
                  max_text=(limits()[0] if args.max_text_mb is None else args.max_text_mb,
                            limits()[1] if args.max_text_ratio is None else args.max_text_ratio))


def limits() -> tuple[float, float]:
    """The default bounds of a file's extracted text: MB, and times the file's size."""
    from glassrag.ingest import MAX_TEXT_MB, MAX_TEXT_RATIO

    return MAX_TEXT_MB, MAX_TEXT_RATIO


def ingest(location: str, paths: Sequence[str | Path], *, config_file: Path | None = None,
           chunk: dict[str, Any] | None = None, prune: bool = False, max_mb: float = 100.0,
           embedder: str | None = None, wait: float = 60.0,
           max_text: tuple[float, float] | None = None, ray: str | None = None, shards: int | None = None) -> int:
    """Reads `paths` into the index at `location` and prints the report; the exit code.

    Holds the index's writer lock from reading the previous index to writing the new one,
    so a second ingest waits (up to `wait` seconds) and then adds to what the first wrote.
    `ray` (an address, "" for the default cluster), `shards`, or an index already sharded:
    the work runs on a Ray cluster (glassrag/shard/ingest.py); otherwise Ray is not imported."""
    from glassrag.store import open_store

    store = open_store(location, wait=wait, notify=lambda holder: err.print(
        f"waiting up to {wait:g} s for another writer of {redact(location)} ({holder})", markup=False))
    with store.writing():
        previous = store.read() if store.exists() else None
        cluster = None
        if ray is not None or shards is not None or (previous is not None and "shards" in previous.parts):
            from glassrag.shard.ingest import ClusterIngest  # Ray itself only when the work starts

            cluster = ClusterIngest(location, previous, ray, shards)
            previous = cluster.previous
        try:
            return _ingest(store, location, previous, cluster, paths, config_file, chunk, prune, max_mb, embedder,
                           max_text)
        finally:
            if cluster is not None:
                cluster.close()


def _ingest(store: Any, location: str, previous: Any, cluster: Any, paths: Sequence[str | Path],
            config_file: Path | None, chunk: dict[str, Any] | None, prune: bool, max_mb: float,
            embedder: str | None, max_text: tuple[float, float] | None) -> int:
    """`ingest` under the writer lock: build the index (on the cluster when `cluster`), write it."""
    from glassrag.indexer import build_index, with_embedder
    from glassrag.retrieve import check_retrievers, planned
    from glassrag.store import is_postgres

    # the previous index's settings < --config < flags: a file overrides only what it names
    config = layered(previous.config if previous else Config(), config_file, {
        f"--{key}": {"chunk": {key: value}} for key, value in (chunk or {}).items()})
    if embedder:
        config = with_embedder(config, embedder)
    if cluster is not None:
        config = cluster.settings(config)
    check_retrievers(config, planned(config, is_postgres(location)), "the settings of this ingest; nothing was written")
    with progress("{task.description:<8}") as bar:
        task = bar.add_task("reading", total=None)
        index, report = build_index(
            [Path(p) for p in paths], config, previous, prune=prune, max_bytes=int(max_mb * 1024 * 1024),
            max_text=max_text,
            progress=lambda step, done, total: bar.update(task, description=step, completed=done,
                                                          total=total or None),
            cache_dir=cache_folder(location), spool_dir=None if is_postgres(location) else Path(location),
            **({"work": cluster.start(config)} if cluster is not None else {}))
    # file names and what their files said are untrusted: no escape sequence reaches the terminal
    for problem in report.failed:
        err.print(Text.assemble(("failed  ", "red"), visible_lines(str(problem))))
    for path, reason in report.skipped:
        err.print(Text.assemble(("skipped ", "yellow"), visible(f"{path}: {reason}")))
    for warning in report.warnings:
        err.print(Text.assemble(("warning ", "yellow"), visible_lines(warning)))
    failed = EXIT_SOME_FILES_FAILED if report.failed else 0
    if report.nothing_changed and not (cluster is not None and cluster.reshard()):
        out.print(f"index {redact(location)}: nothing changed ({report.n_unchanged()} documents unchanged, "
                  "same settings); nothing was written")
        return failed
    if not index.chunks:
        err.print("[red]nothing to index[/red]: no document gave any text; no index was written")
        return failed or 1
    sharding = cluster.write(store, index) if cluster is not None else store.write(index)
    print_report(location, index, report)
    if sharding is not None:
        for folder, docs, chunks, seconds in zip(sharding.folders, sharding.documents, sharding.chunks,
                                                 sharding.seconds):
            out.print(f"{redact(location)}/{folder}: {docs:,} documents, {chunks:,} chunks ({seconds:.2f} s)",
                      markup=False)
        out.print(f"sharding {sharding.build}: ask with glassrag ask QUESTION --index {redact(location)} "
                  "[--ray HOST:PORT]", markup=False)
    return failed


def print_report(location: str, index: Any, report: Any) -> None:
    c = index.config.chunk
    n_sections, all_beir = 0, True  # one pass: a spooled document is parsed each time it is read
    for d in index.documents.values():
        n_sections += len(d.sections)
        all_beir = all_beir and d.format == "beir"
    table = Table(title=f"index {redact(location)}", show_header=False, box=None)
    for label, value in [
        ("documents", len(index.documents)), ("sections", n_sections),
        ("chunks", len(index.chunks)), ("terms", len(index.counts.vocab)),
        ("chunker", "document (BEIR: one chunk per document)" if all_beir
         else f"{c.chunker} size={c.size} overlap={c.overlap} unit={c.unit}"),
        ("added", len(report.added)), ("changed", len(report.changed)),
        ("unchanged", report.n_unchanged()), ("removed", len(report.removed)),
        ("failed", len(report.failed)), ("skipped", len(report.skipped)),
        ("warnings", len(report.warnings)),
        *[(f"embedded ({name})", f"{n['embedded']} embedded, {n['from cache']} from the cache")
          for name, n in report.embedded.items()],
        ("quality", ", ".join(f"{n} {v}" for v, n in sorted(Counter(
            q["verdict"] for q in index.extra.get("quality", {}).values()).items())) or "—"),
    ]:
        table.add_row(label, str(value))
    out.print(table)


def cache_folder(location: str) -> Path:
    """Where ingest keeps embeddings to reuse: in the index folder, or for an index in
    PostgreSQL in ~/.cache/glassrag (vectors are keyed by model and text, so indexes share it)."""
    from glassrag.store import is_postgres

    return Path.home() / ".cache" / "glassrag" if is_postgres(location) else Path(location) / "cache"
