"""The analytics page as data, read from the run files in INDEX/runs/ and the index's own
calibration (extra.gate, extra.reranker): metrics with intervals per run, paired tests
against the selected run, where answers were lost, which stage found each answer, the
gate's threshold sweep and the reranker's weights. Every block names the file it came from.
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

from glassrag.config import Config
from glassrag.errors import ConfigError, GlassragError, UnknownNameError
from glassrag.evaluate.compare import compare_runs
from glassrag.pipeline import auto_reranker
from glassrag.schema import QuestionRecord, Run, flat_spec
from glassrag.evaluate.diagnose import CAUSES as CAUSE_ORDER
from glassrag.web import settings
from glassrag.web.ask import ask_link
from glassrag.web.catalog import RunFile, Source
from glassrag.web.glossary import CAUSES, anchor
from glassrag.web.plots import interval_bar, signed_bars, sweep_plot
from glassrag.web.sweeps import sweeps

_compare_lock = threading.Lock()
_compared: dict[tuple[str, float, str, float], dict[str, Any]] = {}


def metric_term(name: str) -> str:
    """The glossary term that explains a metric name ("answer hit@5": any-hit)."""
    if name.startswith("generation "):
        return "generator"
    try:
        base = flat_spec(name).base
    except UnknownNameError:
        return ""
    return {"hit": "any-hit", "answer_visible": "answer-visible", "source_recall": "source recall",
            "mrr": "MRR", "ndcg": "nDCG", "declined_unanswerable": "gate", "declined_answerable": "gate",
            "reader_accuracy": "reader", "reader_declined_unanswerable": "reader",
            "budget_recall": "budget", "vector_hit": "vector hit",
            "mean_top_similarity": "vector hit"}.get(base, "")


def metric_order(k: int) -> list[str]:
    """The headline metrics: the answer after the gate beside the ranking before it."""
    return [f"answer hit@{k}", f"ranking hit@{k}", f"answer answer_visible@{k}", "ranking mrr@10",
            "ranking ndcg@10", f"answer source_recall@{k}", "answer hit@1", "ranking recall@100",
            "answer declined_unanswerable", "answer declined_answerable", "answer reader_accuracy",
            "answer budget_recall"]


def stage_kinds(records: Sequence[QuestionRecord]) -> dict[str, str]:
    """Every stage the questions passed through, in the order first met, with its kind."""
    kinds: dict[str, str] = {}
    for q in records:
        for name, st in q.stages.items():
            kinds.setdefault(name, st.kind)
    return kinds


def rank_cell(q: QuestionRecord, stage: str, k: int) -> dict[str, Any]:
    """Where `stage` put the question's first relevant chunk, and how far down that is: `top`
    (within k), `near` (within 10), `deep`, `none` (not in its list) or `absent` (not run)."""
    st = q.stages.get(stage)
    rank = st.first_relevant_rank if st else None
    level = ("absent" if st is None else "none" if rank is None else
             "top" if rank <= k else "near" if rank <= 10 else "deep")
    return {"stage": stage, "rank": rank, "level": level}


def run_json(index: str, name: str) -> str:
    return f"/runs/{name}.json?index={index}"


class AnalyticsView:
    """The analytics of an index's runs; with `only`, of that one run (the run page)."""

    def __init__(self, source: Source, selected: str | None, only: str | None = None,
                 backend: str | None = None) -> None:
        self.source = source
        self.index = source.index()
        self.available = settings.retrievers(self.index, backend)  # backend: serve --generator
        self.runs = [source.run(only)] if only else source.runs()
        self.good = [r for r in self.runs if r.run is not None]
        names = [r.name for r in self.good]
        if selected and selected not in names:
            # an unknown name is a 404 with the list; a broken file is shown, not selected
            self.source.run(selected)
        self.selected = next((r for r in self.good if r.name == selected), self.good[0] if self.good else None)

    def data(self) -> dict[str, Any]:
        sel = self.selected
        return {
            "index": self.source.name, "generation": self.source.generation,
            "runs": [self._run_summary(r) for r in self.runs],
            "selected": sel.name if sel else None,
            "selected_file": f"runs/{sel.name}.json" if sel else None,
            "selected_json": run_json(self.source.name, sel.name) if sel else None,
            "metrics": self._metrics(),
            "stage_table": self._stage_table(sel.run) if sel else None,
            "losses": self._losses(sel, sel.run) if sel else None,
            "grid": self._grid(sel, sel.run) if sel else None,
            "by_kind": self._by_kind(sel.run) if sel else None,
            "gate": self._gate(),
            "reranker": self._reranker(),
            "sweeps": sweeps(self.source.folder) if self.source.folder is not None else [],
        }

    # runs ----------------------------------------------------------------------------------

    def _run_config(self, run: RunFile) -> Config | None:
        try:
            return Config.from_dict(run.run.config, origin=f"runs/{run.name}.json")
        except ConfigError:
            return None

    def _run_params(self, run: RunFile) -> dict[str, str]:
        """The query-string settings that reproduce the run's configuration on this index."""
        config = self._run_config(run)
        return settings.changed(config, self.index.config, self.available) if config else {}

    def _run_summary(self, run: RunFile) -> dict[str, Any]:
        out: dict[str, Any] = {"name": run.name, "file": f"runs/{run.name}.json",
                               "json": run_json(self.source.name, run.name),
                               "page": f"/runs/{run.name}?index={self.source.name}", "problem": run.problem}
        if run.run is None:
            return out
        r = run.run
        out.update({"created": r.created, "golden": r.golden, "k": r.k, "seconds": r.seconds,
                    "ranking_stage": r.ranking.stage, "settings": self._run_params(run),
                    "glassrag_version": r.glassrag_version})
        return out

    def _metrics(self) -> dict[str, Any]:
        if not self.good:
            return {"names": [], "rows": []}
        ks = [r.run.k for r in self.good]
        names: list[str] = []
        for k in dict.fromkeys(ks):
            names += metric_order(k)
        headline = set(names)
        flat = {r.name: r.run.flat_metrics() for r in self.good}
        for r in self.good:
            names += list(flat[r.name])
        names = [n for n in dict.fromkeys(names) if any(n in flat[r.name] for r in self.good)]
        compared = {r.name: self._compare(self.selected, r) for r in self.good
                    if self.selected is not None and r.name != self.selected.name}
        rows = []
        for name in names:
            cells = []
            for r in self.good:
                cell = dict(flat[r.name].get(name) or {})
                if cell:
                    cell["bar"] = interval_bar(cell)
                test = compared.get(r.name, {}).get(name)
                cells.append({"run": r.name, "metric": cell or None, "versus": test})
            rows.append({"metric": name, "term": metric_term(name), "anchor": anchor(metric_term(name)),
                         "headline": name in headline, "cells": cells})
        return {"runs": [r.name for r in self.good], "baseline": self.selected.name if self.selected else None,
                "names": names, "rows": rows}

    def _compare(self, base: RunFile | None, other: RunFile) -> dict[str, Any]:
        """compare_runs(base, other) by metric, cached by the two files' modification times."""
        if base is None:
            return {}
        key = (str(base.path), base.path.stat().st_mtime, str(other.path), other.path.stat().st_mtime)
        with _compare_lock:
            if key in _compared:
                return _compared[key]
        try:
            result = compare_runs(base.run, other.run, base.name, other.name)
            rows = {r["metric"]: {k: r[k] for k in ("diff", "p", "p_holm", "test", "improved", "degraded", "n",
                                                    "verdict", "better")} | {"confounded": r.get("confounded")}
                    for r in result["rows"]}
        except GlassragError as e:  # no question in common, another format: shown without tests
            rows = {"_problem": e.problem}  # type: ignore[dict-item]
        except (KeyError, TypeError, ValueError) as e:  # a hand-edited file missing a field
            rows = {"_problem": f"cannot compare: {type(e).__name__} {e}"}  # type: ignore[dict-item]
        with _compare_lock:
            _compared[key] = rows
        return rows

    # the selected run ------------------------------------------------------------------------

    def _link(self, run: RunFile, question: str) -> str:
        return ask_link(self.source.name, question, run.name, self._run_params(run))

    def _stage_table(self, run: Run) -> dict[str, Any]:
        names = [f"hit@{run.k}", "hit@10", "mrr@10", "recall@100", f"source_recall@{run.k}"]
        if any("vector_hit" in m for m in run.stages.values()):  # a dense stage's own figures
            names += ["vector_hit", "mean_top_similarity"]
        kinds = stage_kinds(run.questions)
        rows = [{"stage": stage, "kind": kinds.get(stage, ""),
                 "cells": [dict(metrics[n], bar=interval_bar(metrics[n])) if n in metrics else None for n in names]}
                for stage, metrics in run.stages.items()]
        return {"names": names, "terms": [metric_term(n) for n in names], "rows": rows}

    def _losses(self, file: RunFile, run: Run) -> dict[str, Any]:
        by_id = {q.id: q for q in run.questions}
        causes = []
        for cause in [*CAUSE_ORDER, *[c for c in run.losses if c not in CAUSE_ORDER]]:
            ids = run.losses.get(cause) or []
            if not ids:
                continue
            causes.append({"cause": cause, "text": CAUSES.get(cause, ""), "count": len(ids),
                           "questions": [self._lost(file, i, by_id.get(i)) for i in ids]})
        answerable = [q for q in run.questions if q.answerable]
        return {"causes": causes, "answerable": len(answerable),
                "hits": sum(1 for q in answerable if q.cause is None),
                "unanswerable": len(run.questions) - len(answerable),
                "declined_right": sum(1 for q in run.questions if not q.answerable and q.cause is None)}

    def _lost(self, file: RunFile, qid: str, record: QuestionRecord | None) -> dict[str, Any]:
        """A lost question as the losses table lists it; a loss id with no record, by its id alone."""
        question = record.question if record else ""
        return {"id": qid, "question": question, "kind": record.kind if record else "",
                "link": self._link(file, question)}

    def _grid(self, file: RunFile, run: Run) -> dict[str, Any]:
        kinds = stage_kinds(run.questions)
        order = {c: i for i, c in enumerate(CAUSE_ORDER)}
        rows, unanswerable = [], []
        for q in sorted(run.questions, key=lambda q: (q.cause is None, order.get(q.cause, 99), q.id)):
            link = self._link(file, q.question)
            if not q.answerable:
                unanswerable.append({"id": q.id, "question": q.question, "link": link, "declined": q.declined,
                                     "cause": q.cause, "reason": q.reason})
                continue
            rows.append({"id": q.id, "question": q.question, "kind": q.kind, "cause": q.cause, "link": link,
                         "cells": [rank_cell(q, s, run.k) for s in kinds]})
        return {"k": run.k, "stages": [{"name": s, "kind": kind} for s, kind in kinds.items()], "rows": rows,
                "unanswerable": unanswerable}

    def _by_kind(self, run: Run) -> dict[str, Any]:
        names = list(dict.fromkeys(n for v in run.by_kind.values() for n in v))
        return {"names": names, "rows": [{"kind": kind, "cells": [dict(v[n], bar=interval_bar(v[n])) if n in v else None
                                                                   for n in names]}
                                          for kind, v in run.by_kind.items()]}

    # the index's calibration -----------------------------------------------------------------

    def _gate(self) -> dict[str, Any] | None:
        from glassrag.gate.score import score_name

        gate = self.index.extra.get("gate")
        if not gate or not gate.get("sweep") or "score" not in gate:
            return None
        chosen = gate.get("chosen", {})
        return {"threshold": gate.get("threshold"), "rule": gate.get("rule"), "cost": gate.get("cost"),
                "score": score_name(gate["score"]), "separable": gate.get("separable"), "why": gate.get("why"),
                "auroc": gate.get("auroc"), "signals": gate.get("signals", []),
                "chosen": chosen, "n_answerable": gate.get("n_answerable"),
                "n_unanswerable": gate.get("n_unanswerable"), "golden": gate.get("golden"),
                "split": gate.get("split"), "points": len(gate["sweep"]), "offtopic": gate.get("offtopic_gate"),
                "plot": sweep_plot(gate["sweep"], gate.get("threshold"))}

    def _reranker(self) -> dict[str, Any] | None:
        model = self.index.extra.get("reranker")
        if not model or "weights" not in model:
            return None
        bars = signed_bars(model["weights"])
        return {"features": [{"name": n, "weight": w, "bar": b}
                             for n, w, b in zip(model.get("features", []), model["weights"], bars)],
                "bias": model.get("bias"), "rows": model.get("rows"), "positives": model.get("positives"),
                "questions": model.get("questions"), "golden": model.get("golden"), "split": model.get("split"),
                "auto": auto_reranker(model)[1]}
