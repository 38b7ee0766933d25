"""Exhibit 6, where the answers are lost: the whole pipeline on the test split with the
user's settings (evaluate(), the function behind `glassrag eval`), the reader's accuracy
with its Wilson interval beside its bound, a diagnosis per question, and the user's runs
kept in the index folder (INDEX/lab/runs.json) with a paired test between any two.

    accuracy  = (1/n) Σ_q [the reader's quote holds a labelled answer]        (answerable q)
    bound     = (1/n) Σ_q [a labelled answer is among the passages the budget packed]
    Wilson    (p̂ + z²/2n ± z √(p̂(1 − p̂)/n + z²/4n²)) / (1 + z²/n),  z = 1.96
    McNemar   p = min(1, 2 · P(X ≤ min(b, c))),  X ~ Binomial(b + c, ½)

The reader cannot quote what the budget did not pack: accuracy ≤ bound for every run.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any, Iterator, Mapping

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

from glassrag.config import Config
from glassrag.errors import ConfigError, LockFileError, QueryError
from glassrag.lab.base import LabBench, choice, setting
from glassrag.schema import QuestionRecord
from glassrag.stage_cache import digest
from glassrag.stats import mcnemar_exact
from glassrag.store.safefile import open_lock_file, replace_file

KEPT = 50  # runs kept in INDEX/lab/runs.json, newest last


def settings(bench: LabBench, params: Mapping[str, str]) -> dict[str, Any]:
    c = bench.index.config
    return {"answer.k": setting(params, "k", "answer.k", c.answer.k, (1, 20)),
            "answer.budget_words": setting(params, "budget", "answer.budget_words", c.answer.budget_words,
                                           (c.chunk.size if c.chunk.unit == "words" else 1, 20_000)),
            "gate.enabled": choice(params, "gate", "on" if c.gate.enabled else "off", ("on", "off")) == "on",
            "rerank.method": choice(params, "rerank", c.rerank.method, ("auto", "none", "learned"))}


def config_of(bench: LabBench, chosen: dict[str, Any]) -> Config:
    sections: dict[str, dict[str, Any]] = {}
    for name, value in chosen.items():
        section, key = name.split(".")
        sections.setdefault(section, {})[key] = value
    return bench.config(**sections)


def run_with(bench: LabBench, chosen: dict[str, Any]) -> Any:
    """The evaluate() run of the test split with these settings, kept per generation (by
    the workbench, evaluate/workbench.py)."""
    with bench.lock:
        return bench.workbench.run(config_of(bench, chosen), "test")


def packing(bench: LabBench, chosen: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Per test question, what the budget packed: passages and words (the budget stage of the
    same pipeline, every stage before it looked up in the stage cache)."""
    def compute() -> dict[str, dict[str, int]]:
        pipeline = bench.pipeline(config_of(bench, chosen))
        out = {}
        for q in bench.split("test"):
            try:
                answer = pipeline.run(q.question)
            except QueryError:
                continue
            packed = next((t for t in answer.trace if t.kind == "budget"), None)
            hits = packed.hits if packed else ()
            out[q.id] = {"passages": len(hits), "words": sum(bench.index.chunk_words(h.chunk_id) for h in hits)}
        return out

    with bench.lock:
        return bench.remember(("losses-packing", chosen), compute)


def runs_file(bench: LabBench) -> Path | None:
    return None if bench.folder is None else bench.folder / "lab" / "runs.json"


def read_runs(bench: LabBench) -> list[dict[str, Any]]:
    path = runs_file(bench)
    if path is None or not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [r for r in data.get("runs", []) if isinstance(r, dict) and "id" in r] if isinstance(data, dict) else []
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return []


def keep_run(bench: LabBench, record: dict[str, Any]) -> str:
    """Adds the run to INDEX/lab/runs.json (a temporary file renamed into place) under an
    exclusive lock on INDEX/lab/.runs.lock, so two runs kept at once, by two threads or two
    `serve --workers` processes, both stay; returns what happened, for the page ("" when saved)."""
    path = runs_file(bench)
    if path is None:
        return "runs are not kept: no index folder"
    if path.parent.is_symlink():  # a shared index's link would have runs written elsewhere
        return f"runs are not kept: {path.parent} is a symbolic link"
    try:
        path.parent.mkdir(exist_ok=True)
        with _locked(path.with_name(".runs.lock")):
            runs = [r for r in read_runs(bench) if r["id"] != record["id"]] + [record]
            replace_file(path, json.dumps({"format": "glassrag-lab-runs", "runs": runs[-KEPT:]},
                                          ensure_ascii=False).encode("utf-8"))
    except OSError as e:
        return f"could not keep the run in {path}: {e.strerror}"
    except LockFileError as e:
        return f"could not keep the run: {e.problem}"
    return ""


@contextlib.contextmanager
def _locked(lock: Path) -> Iterator[None]:
    """An exclusive advisory lock (flock) held for the block; where fcntl does not exist
    (Windows) the block runs unlocked, as `serve` runs one process there. The lock file is
    never opened through a link, nor when it is not a regular file (LockFileError)."""
    with os.fdopen(open_lock_file(lock), "r+b") as handle:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(handle, fcntl.LOCK_UN)


def paired(runs: list[dict[str, Any]], a: str, b: str) -> dict[str, Any]:
    """McNemar's exact test on the questions both runs answered (reader correct or not)."""
    by_id = {r["id"]: r for r in runs}
    for name, rid in (("a", a), ("b", b)):
        if rid not in by_id:
            raise ConfigError(f"{name} = {rid[:40]!r} is not one of your runs",
                              "choose two runs from the table: " + ", ".join(by_id) if by_id else "run one first")
    x, y = by_id[a]["outcomes"], by_id[b]["outcomes"]
    common = sorted(set(x) & set(y))
    only_a = sum(1 for q in common if x[q] and not y[q])
    only_b = sum(1 for q in common if y[q] and not x[q])
    return {"a": a, "b": b, "n": len(common), "only_a": only_a, "only_b": only_b,
            "p": mcnemar_exact(only_a, only_b), "test": "McNemar exact"}


def quoted(r: QuestionRecord) -> str:
    """The sentence the reader quoted for the question, or "" when it found none."""
    return str(r.quote.get("text", "")) if r.quote and r.quote.get("found") else ""


def exhibit(bench: LabBench, params: Mapping[str, str], record: bool = False) -> dict[str, Any]:
    """The exhibit's data; with `record` (a POST of the page's form, never a GET: issue 28.3)
    the run is also kept in INDEX/lab/runs.json."""
    bench.needs_questions()
    chosen = settings(bench, params)
    run = run_with(bench, chosen)
    accuracy = dict(run.answer.metrics["reader_accuracy"])
    bound = dict(run.answer.metrics["budget_recall"])
    answerable = [r for r in run.questions if r.answerable]
    outcomes = {r.id: r.reader_correct for r in answerable}
    rid = digest("lab-run", chosen)[:8]
    kept = {"id": rid, "settings": {k: chosen[k] for k in sorted(chosen)}, "correct": sum(outcomes.values()),
              "n": len(outcomes), "accuracy": accuracy, "bound": bound, "outcomes": outcomes,
              "created": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    problem = ""
    with bench.lock:  # one writer of INDEX/lab/runs.json at a time in this process
        if record:
            problem = keep_run(bench, kept)
        runs = read_runs(bench) or ([kept] if record else [])
    a, b = params.get("a") or "", params.get("b") or ""
    test = paired(runs, a, b) if a and b else None
    packed = packing(bench, chosen)
    rows = [{"id": r.id, "question": r.question, "kind": r.kind, "in_budget": r.in_budget,
             "packed": packed.get(r.id, {"passages": 0, "words": 0}),
             "answer_rank": r.stages["budget"].first_relevant_rank if "budget" in r.stages else None,
             "answerable": r.answerable, "correct": r.reader_correct, "declined": r.declined,
             "cause": r.cause, "quote": quoted(r)}
            for r in run.questions]
    causes: dict[str, int] = {}
    for r in run.questions:
        if r.cause:
            causes[r.cause] = causes.get(r.cause, 0) + 1
    return {"settings": chosen, "run_id": rid, "split": "test", "accuracy": accuracy, "bound": bound,
            "correct": kept["correct"], "answerable": len(answerable), "questions": rows, "causes": causes,
            "runs": [{k: v for k, v in r.items() if k != "outcomes"} for r in reversed(runs)],
            "recorded": record and not problem, "paired": test, "kept_in": str(runs_file(bench) or ""), "problem": problem,
            "index_settings": {"k": bench.index.config.answer.k, "budget": bench.index.config.answer.budget_words}}
