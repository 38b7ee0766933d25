"""`glassrag experiment list | run NAME… | report`: the CLI of the experiment log."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from glassrag.cli.common import Table, err, out, progress
from glassrag.errors import ConfigError

LOG_HELP = "the experiment log folder (default: ./experiments)"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("experiment", help="the experiment log: list, run and report kept and rejected changes")
    ex = p.add_subparsers(dest="experiment_command", required=True, metavar="{list,run,decide,cause,report}",
                          help="what to do")
    e = ex.add_parser("list", help="every entry of the log with its recorded verdict")
    e.add_argument("--log", type=Path, default=Path("experiments"), help=LOG_HELP)
    e.set_defaults(run=cmd_list)
    e = ex.add_parser("run", help="measure experiments on their corpora and write their evidence")
    e.add_argument("names", nargs="*", help="experiment names (the TOML files' names)")
    e.add_argument("--all", action="store_true", help="every experiment of the log")
    e.add_argument("--moved", action="store_true",
                   help="every experiment measured against a baseline that has since moved (experiment list "
                        "shows which), measured again against today's")
    e.add_argument("--corpus", action="append", metavar="NAME",
                   help="measure only this corpus (repeatable); the others' figures are kept from the "
                        "last evidence, each with the provenance of the run that measured it")
    e.add_argument("--log", type=Path, default=Path("experiments"), help=LOG_HELP)
    e.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="measure on a Ray cluster (HOST:PORT; without it $GLASSRAG_RAY, else a one-machine "
                        "cluster started for this command), one task per corpus and index: the same evidence, "
                        "each index's stages cached as on one machine (pip install 'glassrag[ray]')")
    e.set_defaults(run=cmd_run)
    e = ex.add_parser("decide", help="decide experiments again by the current rule from the per-question "
                                     "figures of their evidence, running nothing")
    e.add_argument("names", nargs="*", help="experiment names (the TOML files' names)")
    e.add_argument("--all", action="store_true", help="every experiment whose evidence has per-question figures")
    e.add_argument("--log", type=Path, default=Path("experiments"), help=LOG_HELP)
    e.set_defaults(run=cmd_decide)
    e = ex.add_parser("cause", help="the questions no configuration answers and what they share "
                                    "(writes experiments/shared-cause.json)")
    e.add_argument("--log", type=Path, default=Path("experiments"), help=LOG_HELP)
    e.set_defaults(run=cmd_cause)
    e = ex.add_parser("report", help="generate docs/measurements.md from the log and its evidence")
    e.add_argument("--log", type=Path, default=Path("experiments"), help=LOG_HELP)
    e.add_argument("--out", type=Path, default=Path("docs/measurements.md"), help="where to write it")
    e.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 when the file differs from what the log generates")
    e.set_defaults(run=cmd_report)


def cmd_list(args: argparse.Namespace) -> int:
    from glassrag.experiment import load_all, read_evidence

    from glassrag.experiment.drift import moved, unrecorded

    table = Table("name", "kind", "recorded verdict", "last measured", "baseline", "title")
    for e in load_all(args.log):
        evidence = read_evidence(args.log, e.name) if e.measured else None
        last = (evidence["verdict"] + ("" if evidence["reproduced"] else " (differs)")) if evidence else "-"
        changes = moved(e, evidence) if evidence else {}
        baseline = ("moved: " + ", ".join(sorted({name for diffs in changes.values() for name, _, _ in diffs}))
                    if changes else "not recorded" if evidence and unrecorded(evidence) else "today's" if evidence
                    else "-")
        table.add_row(e.name, "experiment" if e.measured else "benchmark", e.verdict, last, baseline, e.title)
    out.print(table)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from glassrag.experiment import find, load_all, run_experiments
    from glassrag.experiment.corpora import load_corpora
    from glassrag.experiment.measure import metric_rows

    if (args.all + args.moved + bool(args.names)) != 1:
        raise ConfigError("name the experiments to run, or give --all or --moved (one of the three)",
                          "glassrag experiment list shows them")
    chosen = ([e for e in load_all(args.log) if e.measured] if args.all or args.moved
              else [find(args.log, n) for n in args.names])
    known = load_corpora(args.log)
    unknown = [c for c in args.corpus or () if c not in known]
    if unknown:  # else it would measure nothing and keep every figure, silently
        raise ConfigError(f"--corpus {', '.join(unknown)}: not a corpus of {args.log / 'corpora.toml'}",
                          f"it has: {', '.join(known)}")
    if args.moved:
        from glassrag.experiment import read_evidence
        from glassrag.experiment.drift import moved

        chosen = [e for e in chosen if (ev := read_evidence(args.log, e.name)) and moved(e, ev)]
        if not chosen:
            out.print("no experiment was measured against a baseline that has since moved")
            return 0
    with progress("{task.description}") as bar:  # on a terminal only: a pipe gets the results alone
        task = bar.add_task("", total=None)
        now = {"run": ""}  # the run in progress ("EXPERIMENT: CORPUS baseline"), what it does is a step of it

        def begun(message: str) -> None:
            now["run"] = message
            bar.update(task, description=message, completed=0, total=None)

        def step(what: str, done: int, total: int) -> None:
            bar.update(task, description=f"{now['run']}: {what}", completed=done, total=total or None)

        if args.ray is not None:  # the runs' steps happen on the cluster: each unit done is a message
            from glassrag.experiment.on_ray import run_experiments_on_ray

            results = run_experiments_on_ray(args.log, chosen, begun, args.corpus, args.ray or None)
        else:
            results = run_experiments(args.log, chosen, begun, args.corpus, step)
    differ = 0
    for evidence in results:
        differ += not evidence["reproduced"]
        out.print(f"[bold]{evidence['name']}[/bold]: {evidence['verdict']}"
                  + ("" if evidence["reproduced"] else f" (the log says {evidence['expected']})")
                  + f" — {evidence['reason']} [{evidence['seconds']} s]")
        for corpus, metric, m, why in metric_rows(evidence):
            if m is None:
                out.print(f"  {corpus}: {metric or ''} {why}")
                continue
            out.print(f"  {corpus}: {metric} {m['baseline']['value']:.3f} → {m['change']['value']:.3f} "
                      f"({m['diff']:+.3f}; {m['improved']} better, {m['degraded']} worse; "
                      f"p = {m['p']:.3g}, {m['test']})")
    out.print(f"evidence written to {args.log / 'results'}/")
    return 1 if differ else 0


def cmd_decide(args: argparse.Namespace) -> int:
    from glassrag.experiment import find, load_all, read_evidence, redecided, write_evidence

    if args.all == bool(args.names):
        raise ConfigError("name the experiments to decide, or give --all", "glassrag experiment list shows them")
    chosen = [e for e in load_all(args.log) if e.measured] if args.all else [find(args.log, n) for n in args.names]
    differ = 0
    for e in chosen:
        evidence = read_evidence(args.log, e.name)
        if evidence is None:
            raise ConfigError(f"{e.name} has no evidence yet", f"glassrag experiment run {e.name}")
        if args.all and evidence.get("rule") is None and not all(
                "per_question" in c for c in evidence["corpora"].values() if "skipped" not in c):
            out.print(f"[dim]{e.name}: no per-question figures (measured before rule 2); left as it is[/dim]")
            continue
        evidence = redecided(e, evidence)
        write_evidence(args.log, evidence)
        differ += not evidence["reproduced"]
        out.print(f"[bold]{e.name}[/bold]: {evidence['verdict']}"
                  + ("" if evidence["reproduced"] else f" (the log says {evidence['expected']})")
                  + f" — {evidence['reason']}")
    return 1 if differ else 0


def cmd_cause(args: argparse.Namespace) -> int:
    import json

    from glassrag.experiment.cause import measure_cause

    result = measure_cause(args.log, lambda message: err.print(f"[dim]{message}[/dim]"))
    target = args.log / "shared-cause.json"
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(target)
    out.print(f"{len(result['never'])} of {result['questions']} answerable test questions answered by no "
              f"configuration; written to {target}")
    for f in result["figures"]:
        n, a, d = f["never"], f["answered"], f["difference"]
        if n["value"] is not None and a["value"] is not None and d["low"] is not None:
            out.print(f"  {f['label']}: never {n['value']:.3f}, answered {a['value']:.3f}, "
                      f"difference {d['value']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from glassrag.experiment.report import render

    text = render(args.log)
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.is_file() else ""
        if current != text:
            err.print(f"{args.out} is not what the log generates: run glassrag experiment report")
            return 1
        out.print(f"{args.out} is up to date")
        return 0
    args.out.write_text(text, encoding="utf-8")
    out.print(f"{args.out} written from {args.log}/")
    return 0
