"""The front page as data: for every index served, its size, the headline figures of its
headline run with their intervals (read from the run file on every request), the six stages
as the index's settings configure them now, and questions of the run's test split to try,
marked as the run answered or declined them.

Nothing is evaluated here: the figures are the run file's, the stages are the index's
settings and calibration (its manifest), read through the functions the pipeline decides
with (`auto_reranker`, the gate's `scoring_settings`), so no model is loaded.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence
from urllib.parse import urlencode

from glassrag.config import Config
from glassrag.errors import ConfigError, GlassragError
from glassrag.gate import answerability
from glassrag.gate.score import score_name
from glassrag.gate.threshold import Gate, scoring_settings
from glassrag.pipeline import auto_reranker, entry_of, retrievers
from glassrag.prepared import RUN_NAME, prepared_corpora
from glassrag.schema import QuestionRecord
from glassrag.stage import Entry
from glassrag.web.ask import ask_link
from glassrag.web.catalog import Catalog, RunFile, Source
from glassrag.web.glossary import CAUSES

# questions of the test split offered per corpus, by what the headline run did with them
# (in the run's order, which is the golden set's): answers shown, the gate's right declines,
# and one of each mistake when the run made it
EXAMPLES = (("answered", 3), ("declined, unanswerable", 2), ("declined, answerable", 1),
            ("answered, unanswerable", 1))


def home_view(catalog: Catalog, current: str) -> dict[str, Any]:
    """Every index of the catalog, in the order served; `current` is the picker's choice."""
    from glassrag.web.builds import LOG

    return {"index": current, "headline_rule": HEADLINE_RULE,
            "corpora": [_or_problem(source) for source in catalog.sources.values()],
            # prepared corpora still being built beside the server (serve --build), each shown once built
            "building": [{"index": name, "path": str(folder)} for name, folder in catalog.pending.items()],
            "build_log": str(LOG)}


def _or_problem(source: Source) -> dict[str, Any]:
    """The corpus's section, or what keeps its index from being read (the others are still shown)."""
    try:
        return corpus_view(source)
    except GlassragError as e:
        return {"index": source.name, "path": source.shown, "problem": e.problem, "hint": e.hint}


HEADLINE_RULE = (f"runs/{RUN_NAME}.json (what glassrag corpus build and glassrag demo save) when it can be "
                 "read and is of the test split; otherwise the run of the test split with the latest date "
                 "written in it")


def headline_run(source: Source) -> RunFile | None:
    """The run an index is summed up by (HEADLINE_RULE): None when it has no readable run of
    the test split. Ties of date go to the first name in sort order."""
    if RUN_NAME in source.run_names():
        run = source.run(RUN_NAME)
        if run.run is not None and run.run.golden.get("split") == "test":
            return run
    tests = [r for r in source.runs() if r.run is not None and r.run.golden.get("split") == "test"]
    if not tests:
        return None
    latest = max(r.run.created for r in tests)
    return next(r for r in tests if r.run.created == latest)


def corpus_view(source: Source) -> dict[str, Any]:
    index = source.index()
    golden = source.golden()
    out: dict[str, Any] = {
        "index": source.name, "path": source.shown,
        "documents": len(index.documents), "chunks": len(index.chunks),
        "golden": _golden(golden.questions, golden.path) if golden else None,
        "stages": stages(index.config, index.extra, retrievers(index)),
        "run": None, "figures": [], "examples": [], "make_run": None,
        "links": {page: f"/{page}?" + urlencode({"index": source.name})
                  for page in ("ask", "analytics", "documents")},
    }
    run = headline_run(source)
    if run is None:
        out["make_run"] = make_run_commands(source, golden.path if golden else None)
        out["unreadable"] = [{"name": r.name, "problem": r.problem} for r in source.runs() if r.problem]
        return out
    out["run"] = _run_facts(source, run)
    out["figures"] = figures(run.run)
    out["examples"] = examples(source.name, run.run.questions)
    return out


def figures(run: Any) -> list[dict[str, Any]]:
    """`prepared.headline(run)`, the figures `glassrag corpus build` prints, as plain data:
    label, value, its 95 % interval and n; `part` marks a share of the row before it."""
    from glassrag.prepared import headline

    return [{"label": label.strip(), "part": label.startswith(" "),
             **{key: m.get(key) for key in ("value", "low", "high", "n")}} for label, m in headline(run)]


def example_group(r: QuestionRecord) -> str | None:
    """Which of EXAMPLES a question belongs to by what the run did with it; None for an
    answerable question answered without its answer."""
    if r.answerable:
        return "declined, answerable" if r.declined else ("answered" if r.cause is None else None)
    return "declined, unanswerable" if r.declined else "answered, unanswerable"


def examples(index: str, records: Sequence[QuestionRecord]) -> list[dict[str, Any]]:
    """Questions of the run to try, grouped as EXAMPLES, each with what the run did with it."""
    groups: dict[str, list[QuestionRecord]] = {name: [] for name, _ in EXAMPLES}
    for r in records:
        if group := example_group(r):
            groups[group].append(r)
    return [{"id": r.id, "question": r.question, "kind": r.kind, "answerable": r.answerable,
             "declined": r.declined, "group": name, "cause": r.cause, "cause_text": CAUSES.get(r.cause or "", ""),
             "link": ask_link(index, r.question)}
            for name, wanted in EXAMPLES for r in _spread(groups[name], wanted)]


def _spread(records: list[QuestionRecord], wanted: int) -> list[QuestionRecord]:
    """`wanted` of `records`, the first of each kind before the others (an on-topic and an
    off-topic decline, say), in the records' order."""
    kinds: set[str | None] = set()
    first, rest = [], []
    for i, r in enumerate(records):
        (rest if r.kind in kinds else first).append(i)
        kinds.add(r.kind)
    return [records[i] for i in sorted((first + rest)[:wanted])]


def stages(config: Config, extra: Mapping[str, Any], offered: Mapping[str, Entry]) -> list[dict[str, Any]]:
    """The six stages as `config` and the index's calibration (`extra`) set them: each with
    its settings (name, value) and, where the index decides something, what it decides; the
    first retriever's glossary term from its entry among `offered` (the index's retrievers)."""
    c = config
    retrievers, observed = list(c.retrieve.retrievers), [n for n in c.retrieve.observe
                                                         if n not in c.retrieve.retrievers]
    used = [*retrievers, *observed]
    retrieve = [("retrieve.retrievers", ", ".join(retrievers)), ("retrieve.observe", ", ".join(observed) or "none"),
                ("retrieve.depth", c.retrieve.depth)]
    if "bm25" in used:
        retrieve += [("bm25.k1", c.bm25.k1), ("bm25.b", c.bm25.b)]
    if "lsa" in used:
        retrieve.append(("lsa.dim", c.lsa.dim))
    if c.neural.models:
        retrieve.append(("neural.models", ", ".join(c.neural.models)))
    if len(retrievers) > 1:
        fuse = [("fuse.method", c.fuse.method),
                ("fuse.k", c.fuse.k) if c.fuse.method == "rrf" else ("fuse.weight", c.fuse.weight)]
        fuse_note = ""
    else:
        fuse, fuse_note = [("fuse.method", c.fuse.method)], \
            f"not run: one retriever is fused ({retrievers[0]}), its list goes on as it is"
    method, rerank_note = c.rerank.method, ""
    if method == "auto":
        method, rerank_note = auto_reranker(extra.get("reranker"))
    rerank = [("rerank.method", c.rerank.method)]
    if c.rerank.method == "auto":
        rerank.append(("auto runs", method))
    if method != "none":
        rerank.append(("rerank.pool", c.rerank.pool))
    rerank += [("versions.mode", c.versions.mode), ("mmr.relevance", "off" if c.mmr.relevance is None
                                                     else c.mmr.relevance),
               ("cap.per_document", c.cap.per_document or "off")]
    gate, gate_note = _gate(c, extra, method)
    reader = extra.get("reader") or {}
    read = [("answer.k", c.answer.k), ("answer.excerpt_chars", c.answer.excerpt_chars),
            ("answer.budget_words", c.answer.budget_words),
            ("reader threshold", reader["threshold"] if "threshold" in reader else "0.5 (not calibrated)")]
    first = retrievers[0] if retrievers else ""
    made_by = entry_of(first, "retrieve", {}, offered) if first else None  # its glossary term, as the ask page reads it
    rows = [("chunk", "chunk", [("chunk.chunker", c.chunk.chunker), ("chunk.size", c.chunk.size),
                                ("chunk.unit", c.chunk.unit), ("chunk.overlap", c.chunk.overlap)], ""),
            ("retrieve", made_by.glossary(first, {}) if made_by else "", retrieve, ""),
            ("fuse", "fusion", fuse, fuse_note),
            ("rerank", "reranking", rerank, rerank_note),
            ("gate", "gate", gate, gate_note),
            ("read", "reader", read, "")]
    return [{"stage": name, "term": term, "settings": [{"name": k, "value": v} for k, v in settings],
             "note": note} for name, term, settings, note in rows]


def _gate(c: Config, extra: Mapping[str, Any], rerank_used: str) -> tuple[list[tuple[str, Any]], str]:
    """The gate's settings and its state: off, not calibrated, calibrated for other settings
    (it then passes every question), declining nothing, or its score and threshold."""
    settings: list[tuple[str, Any]] = [("gate.enabled", c.gate.enabled)]
    if not c.gate.enabled:
        return settings, "off: every question that matches anything is answered"
    settings.append(("gate.rule", c.gate.rule))
    if c.gate.rule == "cost":
        settings.append(("gate.cost", c.gate.cost))
    settings.append(("gate.answerability", c.gate.answerability))
    settings.append(("gate.offtopic_keep", c.gate.offtopic_keep))
    cal = extra.get("gate")
    if not cal or not cal.get("score"):
        return settings, "not calibrated: it declines only questions that match nothing (glassrag calibrate)"
    try:
        folder = answerability.model_folder(c.gate.answerability)
        digest = answerability.model_digest(folder) if folder else None
    except ConfigError as e:
        return settings, f"cannot be checked: {e.problem}"
    except OSError as e:
        return settings, f"cannot be checked: the answerability model cannot be read ({e.strerror})"
    stale = Gate(dict(cal), scoring_settings(c, extra.get("reranker"), rerank_used, digest)).stale
    settings += [("score", score_name(cal["score"])), ("threshold", cal.get("threshold"))]
    if stale:
        return settings, ("calibrated for other settings (" + "; ".join(stale[:3])
                          + (" …" if len(stale) > 3 else "") + "): it passes every question; glassrag calibrate")
    auroc = cal.get("auroc") or {}
    where = f"calibrated on the {cal.get('split', 'train')} split of {Path(str(cal.get('golden', ''))).name}"
    off = cal.get("offtopic_gate") or {}
    second = ""
    if off.get("threshold") is not None:  # applied whether or not the first threshold is (gate/threshold.py)
        settings.append(("off-topic threshold", off["threshold"]))
        second = (f"; it declines a question whose off-topic score is below the second threshold (it keeps "
                  f"{off['keep']:.0%} of the found train answers)")
    if not cal.get("separable") or cal.get("threshold") is None:
        return settings, (f"{where}: no score separated answerable from unanswerable questions, so "
                          + ("its first threshold declines nothing" + second if second else "it declines nothing"))
    return settings, (f"{where}: declines a question whose score is below the threshold "
                      f"(AUROC on train {auroc.get('auroc', float('nan')):.2f} "
                      f"[{auroc.get('low', float('nan')):.2f}, {auroc.get('high', float('nan')):.2f}])" + second)


def make_run_commands(source: Source, golden: Path | None) -> list[str]:
    """The commands that save a headline run for this index (none for an index in
    PostgreSQL: runs are kept beside an index folder)."""
    commands: list[str] = []
    path = source.folder
    if path is None:
        return commands
    for name, corpus in prepared_corpora().items():
        if path is not None and path.resolve() == corpus.default_index().resolve():
            commands.append(f"glassrag corpus build {name}")
    commands.append(f"glassrag eval --index {path} --golden {golden or 'GOLDEN.jsonl'} --split test --save {RUN_NAME}")
    return commands


def _golden(questions: Any, path: Path) -> dict[str, Any]:
    return {"path": str(path), "questions": len(questions),
            "test": sum(q.split == "test" for q in questions), "train": sum(q.split == "train" for q in questions)}


def _run_facts(source: Source, run: RunFile) -> dict[str, Any]:
    r = run.run
    try:
        modified = datetime.fromtimestamp(run.path.stat().st_mtime, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+0000")
    except OSError:  # removed since it was read
        modified = None
    g = r.golden
    return {"name": run.name, "file": f"runs/{run.name}.json", "created": r.created, "modified": modified,
            "glassrag_version": r.glassrag_version, "code_version": r.code_version,
            "page": f"/runs/{run.name}?" + urlencode({"index": source.name}),
            "json": f"/runs/{run.name}.json?" + urlencode({"index": source.name}),
            "golden": {"path": g.get("path"), "split": g.get("split"), "questions": g.get("questions"),
                       "answerable": g.get("answerable"), "unanswerable": g.get("unanswerable")},
            "k": r.k, "gate": (r.gate.get("calibration") or {}).get("status")}
