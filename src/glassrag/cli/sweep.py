"""`glassrag sweep`: the command line of glassrag/evaluate/sweep.py (its parser, its command
and its table)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from glassrag.cli.common import CONFIG_HELP, GOLDEN_HELP, INDEX_HELP, Table, out, progress
from glassrag.cli.evaluate import fmt
from glassrag.config import layered, toml_text
from glassrag.evaluate import DEFAULT_METRIC

SWEEP_HELP = "evaluate a grid of settings on a split, choose the best, test it once"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("sweep", help=SWEEP_HELP, description=(
        "Evaluate every configuration of a grid (or list) of settings on a golden split, each a run "
        "file, reusing every stage whose input and settings are unchanged; the best configuration on "
        "that split is then evaluated on the test split, once. Settings that need a re-ingest build "
        "one index per value from the same documents (kept under INDEX/sweeps/indexes/)."))
    p.add_argument("--index", required=True, help=INDEX_HELP)
    p.add_argument("--golden", required=True, help=GOLDEN_HELP)
    p.add_argument("--set", action="append", default=[], metavar="SECTION.NAME=V1,V2,…",
                   help="a setting and the values to sweep (repeatable: the grid is every combination); "
                        "a list-valued setting separates its values with ';'")
    p.add_argument("--grid", type=Path, metavar="FILE",
                   help="a TOML sweep file: [grid.SECTION] tables of value lists and/or [[configs]]")
    p.add_argument("--split", default="train", choices=["train", "test", "all"],
                   help="the split the configurations are compared on (default: train)")
    p.add_argument("--metric", default=None,
                   help=f"what chooses the best configuration (default: {DEFAULT_METRIC!r}: read before the "
                        "gate, so its calibration does not move it, and graded, so it ties less than a hit rate)")
    p.add_argument("--config", type=Path, help=CONFIG_HELP + "; every configuration starts from it")
    p.add_argument("--docs", nargs="+", type=Path, metavar="PATH",
                   help="the source documents, for settings that need a re-ingest (default: the folders "
                        "the index was read from)")
    p.add_argument("--name", help="the sweep's name (default: sweep-DATE-TIME)")
    p.add_argument("--out", type=Path, help="the sweep folder (default: INDEX/sweeps/NAME/)")
    p.add_argument("--no-test", action="store_true", help="do not evaluate the best configuration on test")
    p.add_argument("--no-calibrate", action="store_true",
                   help="keep the index's gate calibration for every configuration (by default a "
                        "configuration it was not made for is calibrated on the train split)")
    p.add_argument("--measure-uncached", action="store_true",
                   help="also evaluate every configuration again without any cache, to time the speed-up")
    p.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="measure on a Ray cluster (HOST:PORT; without it $GLASSRAG_RAY, else a one-machine "
                        "cluster started for this command), one actor per index the grid needs: the same "
                        "sweep, its stages cached as on one machine (pip install 'glassrag[ray]')")
    p.set_defaults(run=cmd_sweep)


def cmd_sweep(args: argparse.Namespace) -> int:
    from glassrag.errors import ConfigError
    from glassrag.evaluate.grid import combined, from_flags, from_toml
    from glassrag.evaluate.sweep import run_sweep, sweeps_folder, write_sweep
    from glassrag.store import EmbeddedStore

    grid = combined(*([from_toml(args.grid)] if args.grid else []), from_flags(args.set))
    base = layered(EmbeddedStore(args.index).read().config, args.config, built=True)
    name = args.name or time.strftime("sweep-%Y%m%d-%H%M%S")
    if args.ray is not None and args.measure_uncached:
        raise ConfigError("--measure-uncached times the sweep on this machine, not on a cluster",
                          "leave out --ray or --measure-uncached")
    options = dict(split=args.split, metric=args.metric or DEFAULT_METRIC, base=base, docs=args.docs,
                   test=not args.no_test, calibrate=not args.no_calibrate, name=name)
    with progress("sweeping {task.description}") as bar:  # configurations done; the one running and its step
        task = bar.add_task("", total=len(grid) + (0 if args.no_test else 1))
        now = {"config": ""}

        def begun(n: int, total: int, what: str) -> None:
            now["config"] = what
            bar.update(task, completed=n, total=total, description=what)

        def step(what: str, done: int, total: int) -> None:
            bar.update(task, description=f"{now['config']}: {what} {done}/{total}" if total else
                       f"{now['config']}: {what}")

        if args.ray is not None:  # the configurations' steps happen on the cluster's actors
            from glassrag.evaluate.on_ray import run_sweep_on_ray

            sweep = run_sweep_on_ray(args.index, Path(args.golden), grid, address=args.ray or None,
                                     progress=begun, **options)
        else:
            sweep = run_sweep(args.index, Path(args.golden), grid, measure_uncached=args.measure_uncached,
                              progress=begun, steps=step, **options)
    target = write_sweep(sweep, args.out or sweeps_folder(args.index) / name)
    print_sweep(sweep.to_dict(), target)
    return 0


def print_sweep(data: dict[str, Any], target: Path) -> None:
    """The results table (best first), the choice, the test result and the timing."""
    metric, settings = data["metric"], [a["setting"] for a in data["grid"]["axes"]]
    settings += [n for c in data["grid"]["configs"] for n in c["settings"] if n not in settings]
    best = data["best"]["name"]
    rows = sorted(data["configs"], key=lambda c: (c["name"] != best, -(c["metric"] or {}).get("value", 0.0)
                                                  * (1 if data["better"] == "higher" else -1)))
    table = Table(title=f"{data['size']} configurations on the {data['split']} split of "
                        f"{Path(data['golden']).name}, best first by {metric} (95% intervals)")
    for col in ("configuration", *settings, metric, "answer hit@5", "gate", "s"):
        table.add_column(col)
    for c in rows:
        hit = c["metrics"].get("answer hit@5")
        table.add_row(c["name"] + (" ← best" if c["name"] == best else ""),
                      *(toml_text(c["settings"].get(n)) if n in c["settings"] else "·" for n in settings),
                      fmt(c["metric"] or {}), fmt(hit) if hit else "", c["gate"], f"{c['seconds']:.2f}")
    out.print(table)
    b = data["best"]
    out.print(f"best on {data['split']}: {b['name']} ({', '.join(f'{n} = {toml_text(v)}' for n, v in b['settings'].items()) or 'the starting settings'}), "
              f"{metric} {fmt(b['metric'] or {})}" + (f"; tied with {', '.join(b['tied_with'])} (the tie "
                                                       "goes to the nearest starting settings)" if b["tied_with"] else ""),
              markup=False)
    if data["test"]:
        t = data["test"]
        out.print(f"test (evaluated once): {metric} {fmt(t['metric'] or {})} on {t['questions']} questions "
                  f"({t['run']})", markup=False)
    elif data["split"] != "train":
        out.print(f"test: not evaluated (the choice was made on the {data['split']} split, which holds the "
                  "test questions)", markup=False)
    tm, cache = data["timing"], data["timing"]["cache"]
    line = (f"time: {tm['seconds']:.1f} s (indexes {tm['indexes_seconds']:.1f} s, gate calibration "
            f"{tm['calibration_seconds']:.1f} s, evaluation {tm['evaluation_seconds']:.1f} s); stage cache: "
            f"{cache['hits']:,} stage outputs reused, {cache['misses']:,} computed")
    if tm.get("uncached_seconds"):
        line += (f"; without caching the same configurations took {tm['uncached_seconds']:.1f} s "
                 f"({tm['speedup']:.1f}× the time)")
    out.print(line, markup=False)
    for v in data["indexes"]:
        if v["settings"]:
            out.print(f"index {v['fingerprint']} ({', '.join(f'{n} = {toml_text(x)}' for n, x in v['settings'].items())}): "
                      f"{v['chunks']} chunks, {'built' if v['built'] else 'reused'} at {v['path']}", markup=False)
    out.print(f"written to {target} (sweep.json and one run file per configuration in runs/)", markup=False)
