"""The experiment log: one TOML file per experiment in `experiments/`, written by hand
before it is run (the hypothesis, the change, what decides), and the verdict it
expects; `glassrag experiment run NAME` measures it and says whether the verdict
reproduces.

    title = "A wider candidate pool for the reranker"
    hypothesis = "The answer is often ranked 21-50: scoring 50 candidates finds it."
    metric = "answer hit@5"                 # the one that decides
    also = ["ranking mrr@10"]               # reported, and a trade when they move the other way
    corpora = ["demo", "scifact-abstain", "real"]
    verdict = "rejected"                    # what was measured last: kept, rejected, trade, kept for one set only
    shipped = false                         # true: the change is in the defaults (a trade made on purpose)
    [baseline]                              # settings on top of the defaults (empty: the defaults)
    [change]                                # settings on top of the baseline
    rerank = { pool = 50 }

An entry without `change` is a benchmark's measurement: `command` reproduces it and
`results` is the Markdown file (optionally `#heading`) it writes; `make bench-check`
checks those.

Experiment folders are shared in repositories, so an entry is data: it cannot set what
glassrag contacts (a setting defined `user_only`, such as `generate.backend`, which would
receive every question and passage, and the generation key); only the user's own settings can.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from glassrag.config import SETTINGS, Config
from glassrag.errors import ConfigError

from glassrag.experiment.verdict import RENAMED
from glassrag.experiment.verdict import VERDICTS as RULE_VERDICTS

VERDICTS = (*RULE_VERDICTS, *RENAMED)  # rule 1's names stay readable
KEYS = {"title", "hypothesis", "metric", "also", "corpora", "verdict", "baseline", "change",
        "split", "notes", "command", "results", "order", "cites", "shipped"}


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    hypothesis: str
    verdict: str
    metric: str = ""
    also: tuple[str, ...] = ()
    corpora: tuple[str, ...] = ()
    baseline: Mapping[str, Any] = field(default_factory=dict)
    change: Mapping[str, Any] = field(default_factory=dict)
    split: str = "test"
    notes: str = ""
    command: str = ""  # a benchmark entry: how it is reproduced
    results: str = ""  # ... and the Markdown it writes, "path" or "path#heading"
    order: int = 0  # place in the log (the order changes were made)
    cites: tuple[str, ...] = ()  # the settings whose default this entry chose
    shipped: bool = False  # the change is in the defaults users get, whatever its verdict
    path: Path | None = None

    @property
    def measured(self) -> bool:
        """True for an A/B experiment `glassrag experiment run` measures."""
        return bool(self.change)

    def configs(self) -> tuple[Config, Config]:
        """(baseline, changed): the defaults with the baseline's settings, then the change's
        on top; each setting checked by its definition in config/."""
        where = str(self.path or self.name)
        base = Config().updated(dict(self.baseline), f"{where} [baseline]", "file")
        return base, base.updated(dict(self.change), f"{where} [change]", "file")


def load(path: Path) -> Experiment:
    """One log entry, or ConfigError naming the file and every problem in it."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read it: {e}", "an experiment is a UTF-8 TOML file") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}", "fix the line it names") from None
    except RecursionError:  # tomllib recurses once per level of nesting
        raise ConfigError(f"{path}: nested too deep to be an experiment", "see the format in glassrag/experiment/log.py") from None
    problems = [f"unknown key {k!r}" for k in sorted(set(data) - KEYS)]
    for key in ("title", "hypothesis", "verdict"):
        if not isinstance(data.get(key), str) or not data.get(key, "").strip():
            problems.append(f"{key!r} is required (a string)")
    if data.get("verdict") not in (*VERDICTS, None):
        problems.append(f"verdict {data['verdict']!r} is not one of: {', '.join(VERDICTS)}")
    if data.get("change"):
        if not isinstance(data.get("metric"), str):
            problems.append("'metric' (the one that decides, e.g. \"answer hit@5\") is required with [change]")
        if not data.get("corpora") or not all(isinstance(c, str) for c in data.get("corpora", [])):
            problems.append("'corpora' must list at least one corpus of experiments/corpora.toml")
    elif not data.get("command"):
        problems.append("an entry needs [change] (an experiment) or 'command' (a benchmark that "
                        "reproduces it, with 'results': the Markdown it writes)")
    for table in ("baseline", "change"):
        for name in contacted(data.get(table)):
            problems.append(f"[{table}] sets {name}: an experiment file cannot name what glassrag contacts; "
                            "only your own settings can (a --config file of yours, or --generator URL)")
    if not isinstance(data.get("shipped", False), bool):
        problems.append("'shipped' is true or false: is the change in the defaults users get")
    if not isinstance(data.get("cites", []), list):
        problems.append("'cites' lists the settings whose default this entry chose, e.g. [\"bm25.k1\"]")
    if problems:
        raise ConfigError(f"{path}: " + "; ".join(problems), "see the format in glassrag/experiment/log.py")
    experiment = Experiment(
        name=path.stem, title=data["title"].strip(), hypothesis=data["hypothesis"].strip(),
        verdict=data["verdict"], metric=data.get("metric", ""), also=tuple(data.get("also", ())),
        corpora=tuple(data.get("corpora", ())), baseline=data.get("baseline", {}),
        change=data.get("change", {}), split=data.get("split", "test"), notes=data.get("notes", "").strip(),
        command=data.get("command", ""), results=data.get("results", ""), order=int(data.get("order", 0)),
        cites=tuple(data.get("cites", ())), shipped=data.get("shipped", False), path=path)
    if experiment.measured:
        experiment.configs()  # every setting checked now, not halfway through a run
    return experiment


def contacted(table: Any) -> list[str]:
    """The settings of a [baseline] or [change] table that name what glassrag contacts
    (defined `user_only`), which an experiment file may not set."""
    if not isinstance(table, dict):
        return []
    return [f"{section}.{key}" for section, values in table.items() if isinstance(values, dict)
            for key in values if getattr(SETTINGS.get(f"{section}.{key}"), "user_only", False)]


def load_all(folder: Path) -> list[Experiment]:
    """Every entry of the log in its order (then by name)."""
    if not folder.is_dir():
        raise ConfigError(f"{folder}: no experiment log here", "give --log the experiments/ folder")
    entries = [load(p) for p in sorted(folder.glob("*.toml")) if p.name != "corpora.toml"]
    return sorted(entries, key=lambda e: (e.order, e.name))


def find(folder: Path, name: str) -> Experiment:
    path = folder / f"{name}.toml"
    if not path.is_file():
        known = sorted(p.stem for p in folder.glob("*.toml") if p.name != "corpora.toml")
        raise ConfigError(f"no experiment {name!r} in {folder}", f"the log has: {', '.join(known) or 'none'}")
    return load(path)
