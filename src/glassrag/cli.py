"""The glassrag command line. The only place that turns errors into messages and exit codes."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Sequence

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from glassrag import __version__
from glassrag.config import SETTINGS, Config, layered, toml_text
from glassrag.errors import GlassragError
from glassrag.schema import Answer, better

# a pipe or a log gets wide tables rather than 80 columns of wrapped cells
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 140)
err = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_SOME_FILES_FAILED = 5


# ingest ----------------------------------------------------------------------------------

def cmd_ingest(args: argparse.Namespace) -> int:
    """Holds the index's writer lock from reading the previous index to writing the new one,
    so a second ingest waits (up to --wait seconds) and then adds to what the first wrote."""
    from glassrag.store import open_store

    wait = getattr(args, "wait", 60.0)
    store = open_store(args.index, wait=wait, notify=lambda holder: err.print(
        f"waiting up to {wait:g} s for another writer of {args.index} ({holder})", markup=False))
    with store.writing():
        return _ingest(args, store)


def _ingest(args: argparse.Namespace, store: Any) -> int:
    from glassrag.indexer import build_index
    from glassrag.store import is_postgres

    previous = store.read() if store.exists() else None
    # the previous index's settings < --config < flags: a file overrides only what it names
    config = layered(previous.config if previous else Config(), args.config, {
        f"--{key}": {"chunk": {key: getattr(args, key)}} for key in ("chunker", "size", "overlap", "unit")})
    if args.embedder:
        config = with_embedder(config, args.embedder)
    with Progress(TextColumn("{task.description:<8}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, transient=True,
                  disable=not err.is_terminal) as bar:
        task = bar.add_task("reading", total=None)

        def progress(step: str, done: int, total: int) -> None:
            bar.update(task, description=step, completed=done, total=total or None)

        index, report = build_index([Path(p) for p in args.paths], config, previous,
                                    prune=args.prune, max_bytes=int(args.max_mb * 1024 * 1024),
                                    progress=progress, cache_dir=cache_folder(args.index),
                                    spool_dir=None if is_postgres(args.index) else Path(args.index))
    for problem in report.failed:
        err.print(Text.assemble(("failed  ", "red"), str(problem)))
    for path, reason in report.skipped:
        err.print(Text.assemble(("skipped ", "yellow"), f"{path}: {reason}"))
    for warning in report.warnings:
        err.print(Text.assemble(("warning ", "yellow"), warning))
    if report.nothing_changed:
        out.print(f"index {args.index}: nothing changed ({report.n_unchanged()} documents unchanged, "
                  "same settings); nothing was written")
        return EXIT_SOME_FILES_FAILED if report.failed else 0
    if not index.chunks:
        err.print("[red]nothing to index[/red]: no document gave any text; no index was written")
        return EXIT_SOME_FILES_FAILED if report.failed else 1
    store.write(index)
    n_sections, all_beir = 0, True  # one pass: a spooled document is parsed each time it is read
    for d in index.documents.values():
        n_sections += len(d.sections)
        all_beir = all_beir and d.format == "beir"
    table = Table(title=f"index {args.index}", show_header=False, box=None)
    for label, value in [
        ("documents", len(index.documents)), ("sections", n_sections), ("chunks", len(index.chunks)),
        ("terms", len(index.counts.vocab)),
        ("chunker", "document (BEIR: one chunk per document)"
         if all_beir
         else f"{config.chunk.chunker} size={config.chunk.size} overlap={config.chunk.overlap} "
              f"unit={config.chunk.unit}"),
        ("added", len(report.added)), ("changed", len(report.changed)),
        ("unchanged", report.n_unchanged()), ("removed", len(report.removed)),
        ("failed", len(report.failed)), ("skipped", len(report.skipped)),
        ("warnings", len(report.warnings)),
        *[(f"embedded ({name})", f"{c['embedded']} embedded, {c['from cache']} from the cache")
          for name, c in report.embedded.items()],
        ("quality", ", ".join(f"{n} {v}" for v, n in sorted(Counter(
            q["verdict"] for q in index.extra.get("quality", {}).values()).items())) or "—"),
    ]:
        table.add_row(label, str(value))
    out.print(table)
    return EXIT_SOME_FILES_FAILED if report.failed else 0


def cache_folder(location: str) -> Path:
    """Where ingest keeps embeddings to reuse: in the index folder, or for an index in
    PostgreSQL in ~/.cache/glassrag (vectors are keyed by model and text, so indexes share it)."""
    from glassrag.store import is_postgres

    return Path.home() / ".cache" / "glassrag" if is_postgres(location) else Path(location) / "cache"


def with_embedder(config: Config, model: str) -> Config:
    """An index built with a neural embedder answers from BM25 fused with it by weighted
    fusion, BM25 weighing [fuse] neural_weight."""
    from glassrag.indexer import retriever_name

    models = list(dict.fromkeys([*config.neural.models, model]))
    return config.updated({"neural": {"models": models},
                           "retrieve": {"retrievers": ["bm25", retriever_name(model)]},
                           "fuse": {"method": "weighted", "weight": config.fuse.neural_weight}},
                          "--embedder", "flag")


# ask ---------------------------------------------------------------------------------------

def generation_layer(args: argparse.Namespace | None) -> dict[str, Any]:
    """The flags layer of --generate (switches the generator on), --generator and --labels."""
    if args is None:
        return {}
    return {"--generate": {"generate": {"enabled": True if getattr(args, "generate", False) else None}},
            "--generator": {"generate": {"backend": getattr(args, "generator", None)}},
            "--labels": {"generate": {"labels": getattr(args, "labels", None)}}}


def cmd_ask(args: argparse.Namespace) -> int:
    from glassrag.pipeline import Pipeline
    from glassrag.store import open_store

    index = open_store(args.index).read()
    config = layered(index.config, args.config, {"--k": {"answer": {"k": args.k}}, **generation_layer(args)},
                     built=True)
    answer = Pipeline(index, config).run(args.question)
    if args.json:
        print(json.dumps(answer.to_dict(), ensure_ascii=False, indent=2))
    else:
        print_answer(answer)
    return 0


def highlighted(p: Any) -> Text:
    """The shown excerpt with its answer words in bold, and … where it was cut."""
    text = Text(p.shown)
    for a, b in p.highlights:
        text.stylize("bold", a, b)
    if p.excerpt and p.excerpt_start > 0:
        text = Text("…") + text
    if p.excerpt and p.excerpt_start + len(p.excerpt) < len(p.text):
        text.append("…")
    return text


def print_answer(answer: Answer) -> None:
    out.print(Text.assemble(("Q: ", "bold"), answer.question), "\n")
    if answer.passage is None:
        out.print(Text.assemble(("No answer: ", "yellow"), answer.reason))
        if answer.also_found:
            out.print(Text("\nNearest passages (not answers)", style="bold"))
    else:
        p = answer.passage
        out.print(Text.assemble((p.citation, "bold"), f"   score {p.score:.4g}"))
        out.print(highlighted(p))
        if answer.also_found:
            out.print(Text("\nAlso found", style="bold"))
    for a in answer.also_found:
        first = " ".join(a.shown.split())[:110]
        out.print(f"  {a.rank}. {a.citation}  ({a.score:.4g})  {first}…", markup=False)
    if answer.quote is not None:
        q = answer.quote
        out.print(Text.assemble(("\nReader: ", "bold"),
                                f"«{q.text}»" if q.found else "not found",
                                f"  ({q.why})"))
    if answer.generation is not None:
        g = answer.generation
        out.print(Text.assemble(("\nGenerated ", "bold"), f"by {g.model} from {len(g.given)} passages "
                                f"({g.completion_tokens} tokens, {g.ms / 1000:.1f} s): "))
        out.print(Text(g.text))
        out.print(Text("Passages it was given: " + "; ".join(f"[{p['label']}]" for p in g.given), style="dim"))
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


# training and calibration -------------------------------------------------------------

def _train_questions(args: argparse.Namespace) -> tuple[Any, Any, Any, list]:
    from glassrag.store import open_store

    store = open_store(args.index)
    index = store.read()
    config = layered(index.config, args.config, built=True)
    questions = load_questions(Path(args.golden), "all", index.documents)
    return store, index, config, questions


def _progress(label: str) -> Progress:
    return Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=err, transient=True, disable=not err.is_terminal)


# a logistic regression wants about ten events (here: relevant candidates) per feature
# (Peduzzi et al. 1996, J Clin Epidemiol 49(12))
EVENTS_PER_FEATURE = 10


def cmd_rerank_train(args: argparse.Namespace) -> int:
    from glassrag.evaluate.tune import train_reranker

    store, index, config, questions = _train_questions(args)
    with _progress("training") as bar:
        task = bar.add_task("train", total=None)
        model = train_reranker(index, config, questions, str(args.golden),
                               progress=lambda n, t: bar.update(task, completed=n, total=t))
    index.extra["reranker"] = model
    store.write(index)
    needed = EVENTS_PER_FEATURE * len(model["features"])
    if model["positives"] < needed:
        err.print(Text.assemble(("warning ", "yellow"), (
            f"the reranker learned from {model['questions']} train questions giving {model['positives']} "
            f"relevant candidates; a logistic regression of {len(model['features'])} features needs about "
            f"{needed} ({EVENTS_PER_FEATURE} per feature, Peduzzi et al. 1996), so its weights are "
            "mostly noise: label more train questions, or keep [rerank] method = \"none\"")))
    table = Table(title=f"learned reranker: {model['rows']} candidates of {model['questions']} train "
                        f"questions, {model['positives']} relevant; L2 {model['l2']}")
    for col in ("feature", "weight (standardised)", "mean", "std"):
        table.add_column(col)
    for name, w, m, sd in zip(model["features"], model["weights"], model["mean"], model["std"]):
        table.add_row(name, f"{w:+.3f}", f"{m:.3g}", f"{sd:.3g}")
    table.add_row("(bias)", f"{model['bias']:+.3f}", "", "")
    out.print(table)
    out.print(f"saved in {args.index}; use it with [rerank] method = \"learned\" "
              "(then run glassrag calibrate: the scores the gate reads change)", markup=False)
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from glassrag.evaluate.tune import calibrate_index
    from glassrag.gate.calibrate import MIN_PER_CLASS

    store, index, config, questions = _train_questions(args)
    rule = args.rule or config.gate.rule
    with _progress("calibrating") as bar:
        task = bar.add_task("calibrate", total=None)
        gate, reader = calibrate_index(index, config, questions, rule, str(args.golden),
                                       progress=lambda n, t: bar.update(task, completed=n, total=t),
                                       cost=args.cost)
    index.extra["gate"] = gate
    index.extra["reader"] = reader
    store.write(index)
    print_calibration(gate)
    small = min(gate["n_answerable"], gate["n_unanswerable"])
    if small < MIN_PER_CLASS:
        err.print(Text.assemble(("warning ", "yellow"), (
            f"calibrated on {sum(q.split == 'train' for q in questions)} train questions "
            f"({gate['n_answerable']} answerable with their answer found, {gate['n_unanswerable']} "
            f"unanswerable); the gate needs at least {MIN_PER_CLASS} of each to set a threshold, and "
            f"the reader's threshold over {reader['questions']} questions is a guess: label more "
            "train questions")))
    out.print(f"reader: coverage threshold {reader['threshold']:.3g}, train accuracy {reader['accuracy']:.1%} "
              f"over {reader['questions']} questions")
    return 0


def print_calibration(gate: dict[str, Any]) -> None:
    """The signal table, the score chosen and what its threshold does on the train split."""
    from glassrag.gate.score import score_name

    table = Table(title=f"gate signals on the train split ({gate['n_answerable']} answerable questions "
                        f"whose answer is in the top k, {gate['n_unanswerable']} unanswerable): "
                        "AUROC, 95% bootstrap interval; kept, declined and cost at the threshold the rule picks")
    for col in ("signal", "AUROC", "interval", "kept", "declined", "cost", ""):
        table.add_column(col)
    chosen = score_name(gate["score"])
    for r in gate["signals"]:
        name = "combined (logistic regression, out of fold)" if r["signal"] == "combined" else r["signal"]
        mark = "← the gate's score" if (r["signal"] == chosen or
                                        (r["signal"] == "combined" and gate["score"]["kind"] == "combined")) else ""
        table.add_row(name, f"{r['auroc']:.3f}", f"[{r['low']:.2f}, {r['high']:.2f}]", f"{r['kept']:.2f}",
                      f"{r['declined']:.2f}", f"{r['objective']:.3f}", mark)
    out.print(table)
    a = gate["auroc"]
    if not gate["separable"]:
        out.print(f"gate: its best score ({chosen}, AUROC {a['auroc']:.2f} [{a['low']:.2f}, {a['high']:.2f}]) "
                  f"cannot tell answerable from unanswerable questions on this corpus ({gate['why']}), "
                  "so the gate will decline nothing but questions that match no passage", markup=False)
        return
    c = gate["chosen"]
    rule = f"rule cost (c = {gate['cost']:g})" if gate["rule"] == "cost" else f"rule {gate['rule']}"
    out.print(f"gate on {chosen}, {rule}: threshold {gate['threshold']:.4g} keeps "
              f"{c['answerable_kept']:.1%} of the found answers and declines "
              f"{c['unanswerable_declined']:.1%} of unanswerable train questions ({len(gate['sweep'])} thresholds swept, saved with the index)",
              markup=False)


# serve -------------------------------------------------------------------------------------

def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from glassrag.web.server import serve
    except ImportError as e:
        from glassrag.errors import ConfigError

        raise ConfigError(f"the web app needs its extra ({e.name} is missing)",
                          "pip install 'glassrag[web]'") from None
    log = args.log if args.log is not None else (Path("experiments") if Path("experiments").is_dir() else None)
    from glassrag.store import is_postgres

    return serve([i if is_postgres(i) else Path(i) for i in args.index], host=args.host, port=args.port, log=log)


# config ------------------------------------------------------------------------------------

def cmd_config(args: argparse.Namespace) -> int:
    """Every setting: its value, where the value came from (default < index < file), what
    it takes, whether changing it needs a re-ingest, its doc and the source of its default."""
    base = Config()
    if args.index:
        from glassrag.store import open_store

        base = open_store(args.index).read().config
    config = layered(base, args.config, built=args.index is not None)
    table = Table(title="settings (from: default < index < file < flag)", show_lines=False)
    for col in ("setting", "value", "from", "allowed", "re-ingest", "what it does", "why this default"):
        table.add_column(col, overflow="fold")
    for name, s in SETTINGS.items():
        layer, origin = config.origin(name)
        table.add_row(name, toml_text(config.value(name)), f"{layer} ({origin})" if layer in ("file", "flag") else layer,
                      s.allowed(), "yes" if s.reingest else "", s.doc, s.source)
    out.print(table)
    return 0


# golden ------------------------------------------------------------------------------------

def cmd_golden_check(args: argparse.Namespace) -> int:
    from glassrag.errors import GoldenError
    from glassrag.evaluate.golden import KINDS, check_against, load_golden
    from glassrag.store import open_store

    documents = open_store(args.index).read().documents if args.index else None
    if Path(args.file).is_dir():  # a BEIR folder (anything else: GoldenError, exit 4)
        from glassrag.evaluate.beir import load_beir_questions

        questions = load_beir_questions(Path(args.file), "all")
        problems = check_against(questions, documents) if documents is not None else []
        if problems:
            raise GoldenError(str(args.file), problems)
    else:
        questions = load_golden(Path(args.file), documents=documents)
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


# eval --------------------------------------------------------------------------------------

def load_questions(golden: Path, split: str, documents: Any) -> list:
    """A JSONL golden set or a BEIR folder, validated (against the index too) before use."""
    from glassrag.evaluate.beir import load_beir_questions
    from glassrag.evaluate.golden import load_golden

    if golden.is_dir():
        return load_beir_questions(golden, split)
    return load_golden(golden, split, documents)


def run_evaluation(index_dir: str, golden: Path, split: str, config_path: Path | None,
                   args: argparse.Namespace | None = None) -> dict:
    from glassrag.evaluate.runs import evaluate
    from glassrag.pipeline import Pipeline
    from glassrag.store import open_store

    index = open_store(index_dir).read()
    config = layered(index.config, config_path, generation_layer(args), built=True)
    questions = load_questions(golden, split, index.documents)
    with Progress(TextColumn("evaluating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True, disable=not err.is_terminal) as bar:
        task = bar.add_task("eval", total=len(questions))
        return evaluate(Pipeline(index, config), questions, golden_path=str(golden), split=split,
                        index_path=str(index_dir),
                        progress=lambda n, total: bar.update(task, completed=n))


def fmt(m: dict) -> str:
    if m.get("value") is None:
        return "—"
    return f"{m['value']:.3f} [{m['low']:.3f}, {m['high']:.3f}]"


def print_run(run: Any, brief: bool = False) -> None:
    """A Run: the ranking before the gate beside the answer after it, then every stage."""
    g = run.golden
    out.print(f"[bold]{g['path']}[/bold] split={g['split']}: {g['questions']} questions "
              f"({g['answerable']} answerable, {g['unanswerable']} unanswerable); "
              f"index {run.index['path']} ({run.index['chunks']} chunks); {run.seconds:.1f} s")
    table = Table(title=f"the ranking before the gate (stage '{run.ranking.stage}') and the answer after it "
                        f"(stage '{run.answer.stage}', what was shown), 95% intervals")
    table.add_column("metric")
    table.add_column(f"ranking ({run.ranking.stage})")
    table.add_column("answer")
    table.add_column("n", justify="right")
    names = list(dict.fromkeys([*run.answer.metrics, *run.ranking.metrics]))
    order = {n: i for i, n in enumerate(run.ranking.metrics)}
    names.sort(key=lambda n: (n not in run.ranking.metrics, order.get(n, 0)))
    for name in names:
        r, a = run.ranking.metrics.get(name), run.answer.metrics.get(name)
        n = (a or r)["n"]
        if n:
            table.add_row(name + ("  (lower is better)" if better(name) == "lower" else ""),
                          fmt(r) if r else "", fmt(a) if a else "", str(n))
    out.print(table)
    if brief:
        stages = [s for s in run.stages if s != "answer"]
        k = run.k
        out.print("stage by stage: " + ", ".join(
            f"{s} hit@{k} {run.stages[s][f'hit@{k}']['value']:.3f}" for s in stages))
        out.print("where the answer was lost: " + ", ".join(
            f"{c} {len(ids)}" for c, ids in run.losses.items()))
        out.print("(glassrag eval prints every stage, every kind and every lost question)")
        return
    stages = list(run.stages)
    names = list(dict.fromkeys(n for s in stages for n in run.stages[s]))
    table = Table(title="every stage, from the same run")
    table.add_column("metric")
    for s in stages:
        table.add_column(s, justify="right")
    for n in names:
        table.add_row(n, *(f"{run.stages[s][n]['value']:.3f}" if n in run.stages[s]
                           and run.stages[s][n]["value"] is not None else "" for s in stages))
    out.print(table)
    if run.gate.get("signals"):
        table = Table(title=f"the gate's signals on these questions: AUROC of {run.gate['found']} found "
                            f"answers against {run.gate['unanswerable']} unanswerable questions")
        for col in ("signal", "AUROC", "interval"):
            table.add_column(col)
        for r in run.gate["signals"]:
            table.add_row(r["signal"], f"{r['auroc']:.3f}", f"[{r['low']:.2f}, {r['high']:.2f}]")
        out.print(table)
    if run.generation is not None:
        print_generation(run)
    if run.by_kind:
        names = list(dict.fromkeys(n for v in run.by_kind.values() for n in v))
        table = Table(title="by kind of question")
        for col in ("kind", *names):
            table.add_column(col)
        for kind, m in run.by_kind.items():
            table.add_row(kind, *(fmt(m[n]) for n in names))
        out.print(table)
    table = Table(title="where the answer was lost")
    table.add_column("cause")
    table.add_column("questions", justify="right")
    table.add_column("ids")
    for cause, ids in run.losses.items():
        table.add_row(cause, str(len(ids)), " ".join(ids[:12]) + (" …" if len(ids) > 12 else ""))
    if not run.losses:
        table.add_row("(none)", "0", "")
    out.print(table)


def print_generation(run: Any) -> None:
    gen = run.config.get("generate", {})
    table = Table(title=f"the generated answers ({gen.get('backend')}, labels {gen.get('labels')}, "
                        f"expand {gen.get('expand')}), scored without a judge, 95% intervals")
    for col in ("score", "value", "n"):
        table.add_column(col)
    for name, m in run.generation.metrics.items():
        table.add_row(name + ("  (lower is better)" if better(name) == "lower" else ""), fmt(m), str(m["n"]))
    out.print(table)


def cmd_eval(args: argparse.Namespace) -> int:
    run = run_evaluation(args.index, Path(args.golden), args.split, args.config, args)
    print_run(run)
    targets = [Path(args.out)] if args.out else []
    if args.save:
        targets.append(runs_folder(args.index) / f"{args.save}.json")
    for target in targets:
        write_run_file(run, target)
        out.print(f"run written to {target}")
    if args.trec_run:
        from glassrag.evaluate.trec import write_run

        level = trec_level(run.index["chunks"], run.index["documents"])
        n = write_run(run.to_dict(), Path(args.trec_run), level=level)
        out.print(f"TREC run ({level} level, {n} lines) written to {args.trec_run}")
    return 0


def write_run_file(run: Any, target: Path) -> None:
    from glassrag.evaluate.runs import write_run_file

    write_run_file(run, target)


def runs_folder(index_dir: str | Path) -> Path:
    """Where `eval --save NAME` keeps runs: DIR/runs/, beside the index's generations (a
    re-ingest does not touch it); `glassrag serve` reads its analytics from there."""
    from glassrag.store import is_postgres

    if is_postgres(str(index_dir)):
        from glassrag.errors import ConfigError

        raise ConfigError("eval --save keeps runs beside an index folder; an index in PostgreSQL has none",
                          "write the run with --out FILE instead")
    return Path(index_dir) / "runs"


def read_run_file(path: str) -> Any:
    """A validated Run, or RunFileError saying what is wrong with the file."""
    from glassrag.errors import RunFileError
    from glassrag.schema import Run

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunFileError(f"{path}: no such run file", "make one with glassrag eval --out FILE") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as e:
        raise RunFileError(f"{path}: cannot be read as a run file ({type(e).__name__})") from None
    except json.JSONDecodeError as e:
        raise RunFileError(f"{path}: not JSON ({e.msg} at line {e.lineno})") from None
    except RecursionError:
        raise RunFileError(f"{path}: nested too deeply to be a run file") from None
    return Run.from_dict(data, path)


def cmd_compare(args: argparse.Namespace) -> int:
    from glassrag.evaluate.compare import compare_runs

    result = compare_runs(read_run_file(args.a), read_run_file(args.b), args.a, args.b)
    st = result["stages"]
    table = Table(title=f"A = {args.a}   B = {args.b}   ({result['questions']} questions in common; "
                        f"ranking from A's '{st['a']['ranking']}' and B's '{st['b']['ranking']}' stage, "
                        "answer after the gate)")
    for col in ("metric", "A", "B", "B − A", "better", "B is", "p", "p (Holm)", "test",
                "questions better", "worse"):
        table.add_column(col)
    for r in result["rows"]:
        table.add_row(r["metric"], f"{r['a']:.3f}", f"{r['b']:.3f}", f"{r['diff']:+.3f}",
                      r["better"], r["verdict"], f"{r['p']:.3g}", f"{r['p_holm']:.3g}", r["test"],
                      str(r["improved"]), str(r["degraded"]))
    out.print(table)
    if result["settings"]:
        table = Table(title="settings that differ")
        for col in ("setting", "A", "B"):
            table.add_column(col)
        for r in result["settings"]:
            table.add_row(r["setting"], json.dumps(r["a"]), json.dumps(r["b"]))
        out.print(table)
    else:
        out.print("the two runs have the same settings")
    for metric, f in result["flips"].items():
        if f["improved"] or f["degraded"]:
            out.print(f"{metric}: better in B: {' '.join(f['improved']) or '—'}; "
                      f"worse in B: {' '.join(f['degraded']) or '—'}")
    return 0


def trec_level(chunks: int, documents: int) -> str:
    """The level of TREC files for an index: documents when each is one chunk (BEIR), else
    chunks; eval --trec-run and trec qrels agree, so their files match by default."""
    return "doc" if chunks == documents else "chunk"


def cmd_trec_qrels(args: argparse.Namespace) -> int:
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


# demo --------------------------------------------------------------------------------------

def cmd_demo(args: argparse.Namespace) -> int:
    """Build the demo index, ask the showcase questions, evaluate the test split."""
    from glassrag.demo import demo_docs, demo_golden, demo_questions

    index_dir = Path(args.index)
    out.rule("1. ingest the demo handbook")
    out.print(f"glassrag ingest {demo_docs()} --index {index_dir} --prune")
    code = cmd_ingest(argparse.Namespace(paths=[str(demo_docs())], index=str(index_dir),
                                         config=None, chunker=None, size=None, overlap=None,
                                         unit=None, prune=True, max_mb=100.0, embedder=None))
    if code != 0:
        return code
    out.rule("2. train the reranker, calibrate the gate and the reader (train split)")
    out.print(f"glassrag rerank-train --index {index_dir} --golden {demo_golden()}")
    cmd_rerank_train(argparse.Namespace(index=str(index_dir), golden=str(demo_golden()), config=None))
    out.print(f"\nglassrag calibrate --index {index_dir} --golden {demo_golden()}\n")
    cmd_calibrate(argparse.Namespace(index=str(index_dir), golden=str(demo_golden()), config=None,
                                     rule=None, cost=None))
    for question in demo_questions():
        out.rule("3. ask")
        out.print(f'glassrag ask "{question}" --index {index_dir}\n')
        cmd_ask(argparse.Namespace(index=str(index_dir), question=question, config=None, k=None,
                                   json=False))
    out.rule("4. evaluate every stage on the golden set (test split)")
    out.print(f"glassrag eval --index {index_dir} --golden {demo_golden()} --split test\n")
    run = run_evaluation(str(index_dir), demo_golden(), "test", None)
    print_run(run, brief=True)
    saved = runs_folder(index_dir) / "defaults-test.json"
    write_run_file(run, saved)
    out.print(f"run saved as {saved}")
    return 0


# main --------------------------------------------------------------------------------------

def finite_number(low: float, low_allowed: bool) -> Callable[[str], float]:
    """An argparse type: a finite number above `low` (or equal to it, with `low_allowed`);
    nan and inf are refused, as argparse refuses any bad value: a message and exit 2."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value) or value < low or (value == low and not low_allowed):
            raise argparse.ArgumentTypeError(
                f"{text!r} must be a finite number {'≥' if low_allowed else '>'} {low:g}")
        return value

    return parse


def generation_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--generate", action="store_true",
                   help="also write an answer with a model from the packed passages (pip install "
                        "'glassrag[generate]' for the bundled SmolLM2, or --generator URL)")
    p.add_argument("--generator", metavar="BACKEND",
                   help="smollm2 (bundled, offline) or an OpenAI-compatible endpoint's base URL, "
                        "e.g. http://127.0.0.1:8080/v1 (default: [generate] backend)")
    p.add_argument("--labels", type=SETTINGS["generate.labels"].argtype("--labels"),
                   help=SETTINGS["generate.labels"].help())


DESCRIPTION = ("Transparent retrieval over your documents: ingest them into an index, ask questions "
               "and see every stage's route to the answer, evaluate each stage on a golden set, "
               "compare runs, and browse it all in a local web app.")
INDEX_HELP = ("the index folder (made by glassrag ingest), or with --store an index in PostgreSQL: "
              "postgresql://USER@HOST/DB?schema=NAME")
CONFIG_HELP = ("a TOML settings file; it overrides only the settings it names, over the index's own "
               "(see glassrag config)")
GOLDEN_HELP = "a golden set (JSONL, see docs/golden-format.md) or a BEIR folder"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="glassrag", description=DESCRIPTION, epilog="glassrag COMMAND --help describes a command; "
        "glassrag config lists every setting.")
    parser.add_argument("--version", action="version", version=f"glassrag {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", help="one of:")

    p = sub.add_parser("ingest", help="read documents into an index (adds and updates)")
    p.add_argument("paths", nargs="+", help="files or folders")
    p.add_argument("--index", "--store", dest="index", required=True,
                   help="index folder (created if missing), or an index in PostgreSQL with pgvector: "
                        "postgresql://USER@HOST/DB?schema=NAME (the schema is created if missing)")
    p.add_argument("--config", type=Path, help="a TOML settings file; it overrides only the settings it "
                                               "names, over those the index was built with")
    for key in ("chunker", "size", "overlap", "unit"):
        s = SETTINGS[f"chunk.{key}"]
        p.add_argument(f"--{key}", type=s.argtype(f"--{key}"), help=s.help())
    p.add_argument("--prune", action="store_true",
                   help="drop indexed documents under PATHS whose files are gone")
    p.add_argument("--max-mb", type=finite_number(0, False), default=100.0,
                   help="refuse files larger than this many MB (1024 × 1024 bytes)")
    p.add_argument("--wait", type=finite_number(0, True), default=60.0, metavar="SECONDS",
                   help="how long to wait while another glassrag writes this index (default 60)")
    p.add_argument("--embedder", help="also embed with a neural model: minilm (bundled "
                                      "all-MiniLM-L6-v2), an installed model package or a local folder")
    p.set_defaults(run=cmd_ingest)

    p = sub.add_parser("ask", help="answer a question from an index, showing the route")
    p.add_argument("question", help="the question, in quotes")
    p.add_argument("--index", "--store", dest="index", required=True, help=INDEX_HELP)
    p.add_argument("--config", type=Path, help=CONFIG_HELP)
    p.add_argument("--k", type=SETTINGS["answer.k"].argtype("--k"), help=SETTINGS["answer.k"].help())
    p.add_argument("--json", action="store_true", help="print the Answer with its trace as JSON")
    generation_flags(p)
    p.set_defaults(run=cmd_ask)

    p = sub.add_parser("golden", help="golden sets: labelled questions")
    golden = p.add_subparsers(dest="golden_command", required=True, metavar="check", help="what to do")
    g = golden.add_parser("check", help="validate every line (against an index, with --index)")
    g.add_argument("file", type=Path, help="the golden JSONL file (or a BEIR folder)")
    g.add_argument("--index", "--store", dest="index", help="also check documents, locators and verbatim spans "
                                                           "(an index folder or a postgresql:// URL)")
    g.set_defaults(run=cmd_golden_check)

    p = sub.add_parser("eval", help="evaluate every stage on a golden set or BEIR folder")
    p.add_argument("--index", "--store", dest="index", required=True, help=INDEX_HELP)
    p.add_argument("--golden", required=True, help=GOLDEN_HELP)
    p.add_argument("--split", default="test", choices=["train", "test", "all"],
                   help="which questions to evaluate (default: test)")
    p.add_argument("--config", type=Path, help=CONFIG_HELP)
    p.add_argument("--out", help="write the run (JSON) here")
    p.add_argument("--save", metavar="NAME", help="also keep the run as DIR/runs/NAME.json (what serve shows)")
    p.add_argument("--trec-run", help="also write the final ranking as a TREC run file")
    generation_flags(p)
    p.set_defaults(run=cmd_eval)

    p = sub.add_parser("compare", help="compare two runs: differences, paired tests, flips")
    p.add_argument("a", help="run file A (glassrag eval --out), the baseline")
    p.add_argument("b", help="run file B, compared with A")
    p.set_defaults(run=cmd_compare)

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

    from glassrag.experiment.commands import add_parser as add_experiment_parser

    add_experiment_parser(sub)

    p = sub.add_parser("rerank-train", help="train the learned reranker on the golden train split")
    p.add_argument("--index", "--store", dest="index", required=True, help=INDEX_HELP + "; the model is saved in it")
    p.add_argument("--golden", required=True, help=GOLDEN_HELP + " (its train split is used)")
    p.add_argument("--config", type=Path, help=CONFIG_HELP)
    p.set_defaults(run=cmd_rerank_train)

    p = sub.add_parser("calibrate", help="calibrate the gate and the reader on the golden train split")
    p.add_argument("--index", "--store", dest="index", required=True, help=INDEX_HELP + "; the calibration is saved in it")
    p.add_argument("--golden", required=True, help=GOLDEN_HELP + " (its train split is used)")
    p.add_argument("--config", type=Path, help=CONFIG_HELP)
    p.add_argument("--rule", default=None, type=SETTINGS["gate.rule"].argtype("--rule"),
                   help=SETTINGS["gate.rule"].help())
    p.add_argument("--cost", default=None, type=SETTINGS["gate.cost"].argtype("--cost"),
                   help=SETTINGS["gate.cost"].help())
    p.set_defaults(run=cmd_calibrate)

    p = sub.add_parser("serve", help="the local web app: ask, analytics, documents, the lab, glossary")
    p.add_argument("--index", "--store", dest="index", action="append", required=True,
                   help="index folder or postgresql:// URL (repeatable)")
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8765, help="port to listen on (default 8765)")
    p.add_argument("--log", type=Path, help="the experiment log the development page shows "
                                            "(default: ./experiments when there is one)")
    p.set_defaults(run=cmd_serve)

    p = sub.add_parser("config", help="list every setting: its value, where it came from, what it takes, "
                                      "whether it needs a re-ingest, its doc and the source of its default")
    p.add_argument("--config", type=Path, help="a TOML settings file, shown layered over the defaults "
                                               "(or over the index's settings, with --index)")
    p.add_argument("--index", "--store", dest="index", help="show the settings of this index (a folder or a "
                                                            "postgresql:// URL)")
    p.set_defaults(run=cmd_config)

    from glassrag import sweep_cli

    sweep_cli.add_parser(sub)

    p = sub.add_parser("demo", help="build the bundled demo index and ask its example questions")
    p.add_argument("--index", default=".glassrag/demo", help="where to build the demo index "
                                                             "(default .glassrag/demo)")
    p.set_defaults(run=cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    command: Callable[[argparse.Namespace], int] = args.run
    try:
        return command(args)
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
