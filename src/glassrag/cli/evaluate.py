"""`glassrag golden check`, `glassrag eval` and `glassrag compare`: check the labelled
questions, evaluate every stage on them, and compare two runs."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any, Callable

from glassrag.cli.ask import generation_flags, generation_layer
from glassrag.cli.common import CONFIG_HELP, GOLDEN_HELP, INDEX_HELP, Table, Text, err, out, progress
from glassrag.cli.shard import ray_flag, use_ray
from glassrag.cli.trec import trec_level
from glassrag.config import layered
from glassrag.errors import ConfigError
from glassrag.schema import metric_spec


def add_parser(sub: Any) -> None:
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
    p.add_argument("--no-calibrate", dest="calibrate", action="store_false",
                   help="when the index's gate calibration was made for other settings, do not calibrate "
                        "these on the golden set's train split (the gate then passes every question, and "
                        "the run says so)")
    generation_flags(p)
    ray_flag(p)
    p.set_defaults(run=cmd_eval)

    p = sub.add_parser("compare", help="compare two runs: differences, paired tests, flips")
    p.add_argument("a", help="run file A (glassrag eval --out), the baseline")
    p.add_argument("b", help="run file B, compared with A")
    p.set_defaults(run=cmd_compare)


# golden check --------------------------------------------------------------------------

def cmd_golden_check(args: argparse.Namespace) -> int:
    return golden_check(Path(args.file), args.index)


def golden_check(file: Path, location: str | None = None) -> int:
    """Validates every line of `file` (against the index at `location`, when given) and prints
    the questions by kind and split; GoldenError listing every problem's line otherwise."""
    from glassrag.errors import GoldenError
    from glassrag.evaluate.golden import KINDS, check_against, load_golden
    from glassrag.store import open_store

    documents = open_store(location).read().documents if location else None
    if file.is_dir():  # a BEIR folder (anything else: GoldenError, exit 4)
        from glassrag.evaluate.beir import load_beir_questions

        questions = load_beir_questions(file, "all")
        if not questions:
            raise GoldenError(str(file), [(0, "no qrels (qrels/train.tsv, qrels/test.tsv), so no question "
                                              "has an answer: nothing could be evaluated")])
        problems = check_against(questions, documents) if documents is not None else []
        if problems:
            raise GoldenError(str(file), problems)
    else:
        questions = load_golden(file, documents=documents)
        if not questions:
            raise GoldenError(str(file), [(0, "no questions: nothing could be evaluated")])
    table = Table(title=f"{file}: {len(questions)} questions, all valid", box=None)
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


# eval ------------------------------------------------------------------------------------

def cmd_eval(args: argparse.Namespace) -> int:
    use_ray(args)
    if args.save:
        check_run_name(args.save, runs_folder(args.index))  # before the evaluation, not after it
    run = evaluation(args.index, Path(args.golden), args.split, args.config, generation_layer(args),
                     args.calibrate)
    print_run(run)
    targets = [Path(args.out)] if args.out else []
    if args.save:
        targets.append(runs_folder(args.index) / f"{args.save}.json")
    for target in targets:
        save_run(run, target)
    if args.trec_run:
        from glassrag.evaluate.trec import write_run

        level = trec_level(run.index["chunks"], run.index["documents"])
        n = write_run(run.questions, Path(args.trec_run), level=level)
        out.print(f"TREC run ({level} level, {n} lines) written to {args.trec_run}")
    return 0


def evaluation(location: str, golden: Path, split: str, config_file: Path | None = None,
               flags: dict[str, Any] | None = None, recalibrate: bool = True) -> Any:
    """The Run of the index at `location` on a split of `golden`, with a progress bar. When the
    index's gate calibration does not fit these settings, the gate and reader are calibrated
    for them on the train split first (evaluate/fits.py), unless not `recalibrate`."""
    from glassrag.evaluate.fits import calibrated_for, mismatch
    from glassrag.evaluate.questions import load_questions
    from glassrag.evaluate.runs import evaluate
    from glassrag.pipeline import Pipeline
    from glassrag.store import open_store

    index = open_store(location).read()
    config = layered(index.config, config_file, flags or {}, built=True)
    questions = load_questions(golden, split, index.documents)
    if recalibrate and config.gate.enabled and mismatch(index, config):
        with progress("calibrating for these settings (train split)") as bar:
            task = bar.add_task("calibrate", total=None)
            train = questions if split == "train" else load_questions(golden, "train", index.documents)
            index, failed = calibrated_for(index, config, train, str(golden),
                                           progress=lambda n, t: bar.update(task, completed=n, total=t))
        if failed:
            err.print(Text.assemble(("warning ", "yellow"), failed))
    with progress("evaluating") as bar:  # the golden set's questions, then the bundled off-topic ones
        task = bar.add_task("eval", total=None)
        return evaluate(Pipeline(index, config), questions, golden_path=str(golden), split=split,
                        index_path=str(location),
                        progress=lambda n, total: bar.update(task, completed=n, total=total))


def save_run(run: Any, target: Path) -> None:
    from glassrag.evaluate.runs import write_run_file

    write_run_file(run, target)
    out.print(f"run written to {target}")


def runs_folder(location: str | Path) -> Path:
    """Where `eval --save NAME` keeps runs: DIR/runs/, beside the index's generations (a
    re-ingest does not touch it); `glassrag serve` reads its analytics from there."""
    from glassrag.store import is_postgres

    if is_postgres(str(location)):
        from glassrag.errors import ConfigError

        raise ConfigError("eval --save keeps runs beside an index folder; an index in PostgreSQL has none",
                          "write the run with --out FILE instead")
    return Path(location) / "runs"


TEMPORARY_BYTES = len(".") + len(".json") + len(".0123456789ab.tmp")  # safefile.replace_file's name around NAME


def check_run_name(name: str, folder: Path) -> None:
    """ConfigError unless `eval --save NAME` can write `folder/NAME.json`: one file name (no
    folder separator), short enough for the file system once the temporary file's
    `.NAME.json.<random>.tmp` is made of it (issue 51: a 5,000-character name was evaluated,
    then failed with a traceback)."""
    if not name or "/" in name or "\\" in name or name in (".", ".."):
        raise ConfigError(f"--save {name[:60]!r} is not a run name", "give a plain name such as 'k8-no-gate'")
    try:
        limit = os.pathconf(folder if folder.is_dir() else folder.parent, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        limit = 255
    room = limit - TEMPORARY_BYTES
    if len(name.encode("utf-8")) > room:
        raise ConfigError(f"--save: the run name is {len(name.encode('utf-8')):,} bytes long; this file system "
                          f"takes names of {limit} bytes, so a run name may have at most {room}",
                          "give a shorter name (the run file is NAME.json in " + str(folder) + ")")


def fmt(m: dict) -> str:
    """A metric with its interval: `0.800 [0.670, 0.890]`, or — without a value."""
    if m.get("value") is None:
        return "—"
    return f"{m['value']:.3f} [{m['low']:.3f}, {m['high']:.3f}]"


def lower_is_better(name: str) -> str:
    return name + ("  (lower is better)" if metric_spec(name).better == "lower" else "")


def print_run(run: Any, brief: bool = False) -> None:
    """A Run: the ranking before the gate beside the answer after it, then every stage."""
    g = run.golden
    out.print(f"[bold]{g['path']}[/bold] split={g['split']}: {g['questions']} questions "
              f"({g['answerable']} answerable, {g['unanswerable']} unanswerable); "
              f"index {run.index['path']} ({run.index['chunks']} chunks); {run.seconds:.1f} s")
    print_calibration_status(run.gate)
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
            table.add_row(lower_is_better(name), fmt(r) if r else "", fmt(a) if a else "", str(n))
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
    for section in SECTIONS:
        section(run)
    print_time(run)


def print_time(run: Any) -> None:
    """What the evaluation spent its time on, by stage (from the records' traces)."""
    from glassrag.evaluate.timing import described, stage_time

    ms = stage_time((name, st.ms) for r in run.questions for name, st in r.stages.items())
    out.print(f"time in the stages over {len(run.questions)} questions: {described(ms)}", markup=False)


def print_calibration_status(gate: dict[str, Any]) -> None:
    """The gate's calibration, loudly when the gate did not work as calibrated for these settings."""
    cal = gate.get("calibration") or {}
    status = cal.get("status")
    if status in ("stale", "none"):
        err.print(Text.assemble(("warning ", "bold red"), f"gate {status}: {cal['note']}; the answer's figures "
                                "(declined_*, answer hit, reader) are those of an uncalibrated gate"))
    elif status == "train":
        out.print(f"gate: {cal['note']}", markup=False)


def print_stages(run: Any) -> None:
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


def print_gate(run: Any) -> None:
    if not run.gate.get("signals"):
        return
    table = Table(title=f"the gate's signals on these questions: AUROC of {run.gate['found']} found "
                        f"answers against {run.gate['unanswerable']} unanswerable questions")
    for col in ("signal", "AUROC", "interval"):
        table.add_column(col)
    for r in run.gate["signals"]:
        table.add_row(r["signal"], f"{r['auroc']:.3f}", f"[{r['low']:.2f}, {r['high']:.2f}]")
    out.print(table)


def print_generation(run: Any) -> None:
    if run.generation is None:
        return
    gen = run.config.get("generate", {})
    table = Table(title=f"the generated answers ({gen.get('backend')}, labels {gen.get('labels')}, "
                        f"expand {gen.get('expand')}), scored without a judge, 95% intervals")
    for col in ("score", "value", "n"):
        table.add_column(col)
    for name, m in run.generation.metrics.items():
        table.add_row(lower_is_better(name), fmt(m), str(m["n"]))
    out.print(table)


def print_kinds(run: Any) -> None:
    if not run.by_kind:
        return
    names = list(dict.fromkeys(n for v in run.by_kind.values() for n in v))
    table = Table(title="by kind of question")
    for col in ("kind", *names):
        table.add_column(col)
    for kind, m in run.by_kind.items():
        table.add_row(kind, *(fmt(m[n]) for n in names))
    out.print(table)


def print_losses(run: Any) -> None:
    table = Table(title="where the answer was lost")
    table.add_column("cause")
    table.add_column("questions", justify="right")
    table.add_column("ids")
    for cause, ids in run.losses.items():
        table.add_row(cause, str(len(ids)), " ".join(ids[:12]) + (" …" if len(ids) > 12 else ""))
    if not run.losses:
        table.add_row("(none)", "0", "")
    out.print(table)
    print_buried(run)


def print_buried(run: Any) -> None:
    """The questions whose answer a fused retriever ranked first and the fusion put outside the
    top k (`rank1_buried@k`), when the pipeline fused two or more retrievers."""
    name = f"rank1_buried@{run.k}"
    m = run.ranking.metrics.get(name)
    if not m or not m.get("n"):
        return
    ids = [r.id for r in run.questions if r.metric("ranking", name) == 1.0]
    out.print(f"rank 1 buried by fusion: {len(ids)} of {m['n']} answerable questions had an answer first in one "
              f"retriever and none in the fused top {run.k}" + (": " + " ".join(ids[:12]) + (" …" if len(ids) > 12 else "")
                                                              if ids else ""), markup=False)


# the tables of a full `glassrag eval`, after the ranking and the answer side by side
SECTIONS: tuple[Callable[[Any], None], ...] = (print_stages, print_gate, print_generation, print_kinds,
                                                print_losses)


# compare ---------------------------------------------------------------------------------

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
    for side in ("a", "b"):
        g = result["gates"][side]
        out.print(f"{side.upper()}'s gate: {g['status']}" + (f" ({g['note']})" if g["note"] else ""), markup=False)
    if result["gate_warning"]:
        err.print(Text.assemble(("warning ", "bold red"), result["gate_warning"]))
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
        if f.get("confounded") and (f["improved"] or f["degraded"]):
            out.print(f"{metric}: not attributed to the settings ({f['confounded']}): differs on "
                      f"{' '.join(f['improved'] + f['degraded'])}", markup=False)
        elif f["improved"] or f["degraded"]:
            out.print(f"{metric}: better in B: {' '.join(f['improved']) or '—'}; "
                      f"worse in B: {' '.join(f['degraded']) or '—'}")
    return 0
